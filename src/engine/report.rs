//! What a run or a check found, as the JSON report of `--report` and a short human summary.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

use super::work::SolrWork;

/// Counts per document.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct DocumentCounts {
    /// Documents read (that passed `--filter`), counted once per run.
    pub read: u64,
    /// Documents whose signatures were computed.
    pub signed: u64,
    /// Documents given at least one update (signatures or flags).
    pub written: u64,
    /// Updates the store rejected because the document changed meanwhile (HTTP 409).
    pub conflicts: u64,
    /// Documents that changed between the worker's reads and were left for the next round.
    pub changed_during_run: u64,
    /// Documents that `check` found without a signature the run would compute.
    pub missing_signatures: u64,
    /// Documents in groups decided this run: all under `--full` and `check --full`; an incremental
    /// run and `check` decide only the groups that do not stand as a run left them.
    pub decided: u64,
    /// Documents that the ranking and writing passes read: about twice `decided` when they look
    /// the documents up, twice `read` when they read everything.
    pub reread: u64,
}

/// What one dimension found.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct DimensionReport {
    /// Groups of two or more documents.
    pub groups: u64,
    /// Documents that double another (group members that are not the representative).
    pub doubles: u64,
    /// Documents that take no part, per reason.
    pub excluded: BTreeMap<&'static str, u64>,
    /// Documents whose flag or count in this dimension was (or, with `check`, would be) changed.
    pub changed: u64,
    /// With `check`: a few ids whose stored flag or count is wrong.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    /// Near only: how many times a round began to look up the documents a change touches and, past
    /// its lookup budget (keys that very many documents hold), read every stored document's keys
    /// instead. Absent for the other dimensions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lookup_fallbacks: Option<u64>,
}

/// The whole report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// `full`, `incremental` or `check`.
    pub mode: String,
    /// Where the documents came from.
    pub store: String,
    /// The signature scheme.
    pub scheme: String,
    /// `global` or `host`.
    pub scope: String,
    /// True when nothing was written on purpose.
    pub dry_run: bool,
    /// How many rounds ran (a round repeats when documents changed under the run).
    pub rounds: u32,
    /// Per-document counts.
    pub documents: DocumentCounts,
    /// Per-dimension findings, by dimension name.
    pub dimensions: BTreeMap<&'static str, DimensionReport>,
    /// Wall time per phase in milliseconds.
    pub phases_ms: BTreeMap<&'static str, u64>,
    /// What the run asked of the store, and the Solr time it models.
    pub work: SolrWork,
}

impl Report {
    /// Whether `check` found the index out of date.
    pub fn check_failed(&self) -> bool {
        self.documents.missing_signatures > 0 || self.dimensions.values().any(|d| d.changed > 0)
    }

    /// A few lines for a person.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let d = &self.documents;
        let _ = writeln!(
            s,
            "{} ({}): {} documents read, {} signed, {} {}",
            self.mode,
            self.store,
            d.read,
            d.signed,
            d.written,
            if self.mode == "check" || self.dry_run {
                "would be written"
            } else {
                "written"
            }
        );
        for (name, r) in &self.dimensions {
            let excluded: u64 = r.excluded.values().sum();
            let _ = writeln!(
                s,
                "  {name:<12} {:>8} groups {:>8} doubles {:>8} excluded {:>8} {}",
                r.groups,
                r.doubles,
                excluded,
                r.changed,
                if self.mode == "check" {
                    "wrong"
                } else {
                    "changed"
                }
            );
            if !r.examples.is_empty() {
                let _ = writeln!(s, "  {:<12} e.g. {}", "", r.examples.join(", "));
            }
        }
        if d.missing_signatures > 0 {
            let _ = writeln!(s, "  {} documents lack signatures", d.missing_signatures);
        }
        if d.conflicts + d.changed_during_run > 0 {
            let _ = writeln!(
                s,
                "  {} conflicts, {} documents changed during the run",
                d.conflicts, d.changed_during_run
            );
        }
        let w = &self.work;
        if w.requests > 0 {
            let _ = writeln!(
                s,
                "  Solr: {} texts, {} light ({} by /export, {} by cursor), {} looked up, {} written, {} requests; modelled Solr time {:.1} s",
                w.text_docs + w.sample_docs,
                w.light_export_docs + w.light_cursor_docs,
                w.light_export_docs,
                w.light_cursor_docs,
                w.lookup_docs,
                w.written_docs,
                w.requests,
                w.modelled_solr_ms as f64 / 1000.0
            );
        }
        s
    }
}
