//! What a run asked of the store, counted per kind of work, and the time that work costs the store
//! under the store's own model ([`Store::cost_model`](crate::store::Store::cost_model)).
//!
//! Against Solr the worker's own CPU hardly matters: Solr is the bottleneck. So every run counts the
//! documents it had Solr hand out with their text, hand out light (through `/export`, a `cursorMark`
//! page or a targeted lookup), and re-index through atomic updates, and the requests it made; the
//! report gives them with a *modelled Solr time* (`modelled_solr_ms`), the sum of each count times
//! its cost in the store's model (the Solr store's is measured on a real Solr:
//! `src/store/solr/cost.rs`; the file store gives the same). The fake Solr of the tests counts the
//! same things on its side.

use std::ops::AddAssign;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::store::{CostModel, Via};

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
    /// Documents sent in atomic updates (each one Solr re-indexes, unless it updates it in place).
    pub written_docs: u64,
    /// Of `written_docs`, those whose update set only the in-place profile's fields on a schema
    /// that lets Solr update them in place (docValues only, no re-index). Left out of the JSON
    /// when 0, so that reports and records of YaCy's profile stay as they were.
    #[serde(skip_serializing_if = "is_zero")]
    pub written_in_place_docs: u64,
    /// Requests sent, retries included.
    pub requests: u64,
    /// The time this work costs the store under its model, in ms.
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
            written_in_place_docs,
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
        self.written_in_place_docs += written_in_place_docs;
        self.requests += requests;
        self.modelled_solr_ms += modelled_solr_ms;
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl SolrWork {
    /// Counts a light page by how it was read.
    pub(super) fn light(&mut self, via: Via, docs: usize) {
        let docs = docs as u64;
        match via {
            Via::Export => self.light_export_docs += docs,
            Via::Cursor => self.light_cursor_docs += docs,
            Via::File | Via::State => self.file_docs += docs,
        }
    }

    /// Counts a page of lookups.
    pub(super) fn lookup(&mut self, via: Via, docs: usize) {
        match via {
            Via::File | Via::State => self.file_docs += docs as u64,
            _ => self.lookup_docs += docs as u64,
        }
    }

    /// The store's time for this work under `model`, in ms.
    pub fn modelled_ms(&self, model: &CostModel) -> f64 {
        (self.text_docs + self.sample_docs) as f64 * model.text_ms
            + self.written_docs.saturating_sub(self.written_in_place_docs) as f64 * model.update_ms
            + self.written_in_place_docs as f64 * model.in_place_ms
            + self.light_export_docs as f64 * model.export_ms
            + self.light_cursor_docs as f64 * model.cursor_light_ms
            + self.lookup_docs as f64 * model.lookup_ms
            + self.requests as f64 * model.request_ms
    }

    /// The least time under `model` any run that signs `signed` documents and writes `written` can
    /// take: each text read once and each document updated once.
    pub fn minimum_ms(model: &CostModel, signed: u64, written: u64) -> f64 {
        signed as f64 * model.text_ms + written as f64 * model.update_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::solr::SOLR_COSTS;

    #[test]
    fn the_model_adds_each_count_times_its_cost() {
        let w = SolrWork {
            text_docs: 990,
            sample_docs: 10,
            written_docs: 1000,
            written_in_place_docs: 0,
            light_export_docs: 1000,
            light_cursor_docs: 1000,
            lookup_docs: 1000,
            file_docs: 5,
            requests: 10,
            modelled_solr_ms: 0,
        };
        // 280 + 600 + 6 + 79 + 79 + 10, worked out by hand.
        assert!((w.modelled_ms(&SOLR_COSTS) - 1054.0).abs() < 1e-9);
        assert!((SolrWork::minimum_ms(&SOLR_COSTS, 100_000, 100_000) - 88_000.0).abs() < 1e-6);
        // 400 of the 1,000 updates in place: 600 × 0.6 + 400 × 0.1 instead of 1000 × 0.6.
        let in_place = SolrWork {
            written_in_place_docs: 400,
            ..w
        };
        assert!((in_place.modelled_ms(&SOLR_COSTS) - 854.0).abs() < 1e-9);
    }
}
