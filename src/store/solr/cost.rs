//! What the Solr store's work costs Solr: per-document and per-request times measured on a real Solr,
//! which the engine multiplies its counts by for the report's `work.modelled_solr_ms`.
//!
//! Against Solr the worker's own CPU hardly matters: Solr is the bottleneck. So the model prices the
//! work Solr does, not the worker's: a document handed out with its text, handed out light (through
//! `/export`, a `cursorMark` page or a targeted lookup), re-indexed by an atomic update, and a request.
//! The file store prices its work with the same model ([`crate::store::file`]), so that a file run's
//! report says what the same run would cost a Solr core.

use crate::store::CostModel;

/// Solr's wall time per document handed out with its text (`cursorMark`, rows 1000), in ms.
///
/// Measured on a real Solr 9.3 core of 100,000 generated 5 KB pages, one JVM on a 2-core machine
/// like this one, nothing else running (issue 11's table: 0.28 ms wall, 0.30 ms Solr CPU). A
/// real-time `/get` of the same fields is modelled at the same cost.
pub const TEXT_MS: f64 = 0.28;

/// Solr's wall time per atomic update (Solr re-indexes the whole stored document), batches of 1000
/// with two connections, in ms (same measurement: 0.60 ms with 2 connections, 0.69 ms with one).
pub const UPDATE_MS: f64 = 0.60;

/// Solr's wall time per atomic update it applies in place (single-valued numeric docValues-only
/// fields: the in-place profile's count refreshes), in ms. Measured side by side with the atomic
/// updates of YaCy's fields on one node of the test framework's Solr (9.10.1), a group of 11,000
/// generated 5 KB pages refreshed (`tools/bench/solr-inplace.sh`; BENCHMARKS.md, "Big groups and
/// the in-place profile"): the write phase and the commit took 3.03 s and 2.67 s with YaCy's
/// fields, 0.52 s and 0.39 s in place (5.8 and 6.8 times less); this is [`UPDATE_MS`] over the
/// smaller of the two ratios, rounded.
pub const IN_PLACE_MS: f64 = 0.10;

/// Solr's wall time per document streamed by `/export` (id, version and two longs), in ms (same
/// measurement: 0.004–0.008 ms; the middle is taken).
pub const EXPORT_MS: f64 = 0.006;

/// Solr's wall time per document of a light `cursorMark` page (id, URL, version, signatures, flags
/// and counts), in ms. From the same measurement: a settled run, which reads every document's light
/// fields once through `cursorMark` and nothing else, took 7.9 s for 100,000 documents. That includes
/// the worker's own time, so it is an upper bound.
pub const CURSOR_LIGHT_MS: f64 = 0.079;

/// Solr's wall time per document found by a targeted lookup (`{!terms}` or `/get`, light fields):
/// the documents are loaded as a cursor page's are, so the same cost per document.
pub const LOOKUP_MS: f64 = CURSOR_LIGHT_MS;

/// Solr's fixed cost of one request, in ms: parsing, a searcher lookup, the answer's framing. Not in
/// the measurement above; taken as the difference between a 1000-row page's cost and 1000 documents'
/// at the costs above, which is within its noise, so this is an estimate (1 ms) that only matters
/// for runs of few documents and many requests.
pub const REQUEST_MS: f64 = 1.0;

/// The model above, as the store gives it to the engine ([`crate::store::Store::cost_model`]).
pub const SOLR_COSTS: CostModel = CostModel {
    text_ms: TEXT_MS,
    update_ms: UPDATE_MS,
    in_place_ms: IN_PLACE_MS,
    export_ms: EXPORT_MS,
    cursor_light_ms: CURSOR_LIGHT_MS,
    lookup_ms: LOOKUP_MS,
    request_ms: REQUEST_MS,
};
