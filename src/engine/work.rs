//! What a run asked of the store, counted per kind of work, and the Solr time that work costs under a
//! model measured on a real Solr.
//!
//! Against Solr the worker's own CPU hardly matters: Solr is the bottleneck. So every run counts the
//! documents it had Solr hand out with their text, hand out light (through `/export`, a `cursorMark`
//! page or a targeted lookup), and re-index through atomic updates, and the requests it made; the
//! report gives them with a *modelled Solr time* (`modelled_solr_ms`), the sum of each count times
//! its measured cost below. The fake Solr of the tests counts the same things on its side.

use std::ops::AddAssign;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::store::Via;

/// Solr's wall time per document handed out with its text (`cursorMark`, rows 1000), in ms.
///
/// Measured on a real Solr 9.3 core of 100,000 generated 5 KB pages, one JVM on a 2-core machine
/// like this one, nothing else running (issue 11's table: 0.28 ms wall, 0.30 ms Solr CPU). A
/// real-time `/get` of the same fields is modelled at the same cost.
pub const TEXT_MS: f64 = 0.28;

/// Solr's wall time per atomic update (Solr re-indexes the whole stored document), batches of 1000
/// with two connections, in ms (same measurement: 0.60 ms with 2 connections, 0.69 ms with one).
pub const UPDATE_MS: f64 = 0.60;

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

/// What a run asked of the store.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, ToSchema)]
#[serde(default)]
pub struct SolrWork {
    /// Documents handed out with their text to be signed.
    pub text_docs: u64,
    /// Signed documents handed out with their text for the scheme guard's sample (at most 64, once
    /// per run that signs anything).
    pub sample_docs: u64,
    /// Documents handed out light through `/export`.
    pub light_export_docs: u64,
    /// Documents handed out light through `cursorMark` pages.
    pub light_cursor_docs: u64,
    /// Documents handed out light by targeted lookups (`{!terms}` filters).
    pub lookup_docs: u64,
    /// Documents read from a file (the file store; no Solr cost).
    pub file_docs: u64,
    /// Documents sent in atomic updates (each one Solr re-indexes).
    pub written_docs: u64,
    /// Requests sent, retries included.
    pub requests: u64,
    /// The Solr time this work costs under the model above, in ms.
    pub modelled_solr_ms: u64,
}

/// Sums over runs (`serve`'s metrics); every field named, as for
/// [`DocumentCounts`](super::report::DocumentCounts).
impl AddAssign<&SolrWork> for SolrWork {
    fn add_assign(&mut self, o: &SolrWork) {
        let SolrWork {
            text_docs,
            sample_docs,
            light_export_docs,
            light_cursor_docs,
            lookup_docs,
            file_docs,
            written_docs,
            requests,
            modelled_solr_ms,
        } = o;
        self.text_docs += text_docs;
        self.sample_docs += sample_docs;
        self.light_export_docs += light_export_docs;
        self.light_cursor_docs += light_cursor_docs;
        self.lookup_docs += lookup_docs;
        self.file_docs += file_docs;
        self.written_docs += written_docs;
        self.requests += requests;
        self.modelled_solr_ms += modelled_solr_ms;
    }
}

impl SolrWork {
    /// Counts a light page by how it was read.
    pub(super) fn light(&mut self, via: Via, docs: usize) {
        let docs = docs as u64;
        match via {
            Via::Export => self.light_export_docs += docs,
            Via::Cursor => self.light_cursor_docs += docs,
            Via::File => self.file_docs += docs,
        }
    }

    /// Counts a page of lookups.
    pub(super) fn lookup(&mut self, via: Via, docs: usize) {
        match via {
            Via::File => self.file_docs += docs as u64,
            _ => self.lookup_docs += docs as u64,
        }
    }

    /// Solr's time for this work under the model, in ms.
    pub fn modelled_ms(&self) -> f64 {
        (self.text_docs + self.sample_docs) as f64 * TEXT_MS
            + self.written_docs as f64 * UPDATE_MS
            + self.light_export_docs as f64 * EXPORT_MS
            + self.light_cursor_docs as f64 * CURSOR_LIGHT_MS
            + self.lookup_docs as f64 * LOOKUP_MS
            + self.requests as f64 * REQUEST_MS
    }

    /// The least Solr time any run that signs `signed` documents and writes `written` can take:
    /// each text read once and each document updated once.
    pub fn minimum_ms(signed: u64, written: u64) -> f64 {
        signed as f64 * TEXT_MS + written as f64 * UPDATE_MS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_adds_each_count_times_its_cost() {
        let w = SolrWork {
            text_docs: 990,
            sample_docs: 10,
            written_docs: 1000,
            light_export_docs: 1000,
            light_cursor_docs: 1000,
            lookup_docs: 1000,
            file_docs: 5,
            requests: 10,
            modelled_solr_ms: 0,
        };
        // 280 + 600 + 6 + 79 + 79 + 10, worked out by hand.
        assert!((w.modelled_ms() - 1054.0).abs() < 1e-9);
        assert!((SolrWork::minimum_ms(100_000, 100_000) - 88_000.0).abs() < 1e-6);
    }
}
