//! What a run or a check found, as the JSON report of `--report` and a short human summary.
//!
//! The report also deserializes: `serve` keeps it typed in its run records and reads it back from
//! its state directory. Every struct takes defaults for missing fields, so that a record written by
//! an older version still loads.

/// A name in a report's maps (a dimension, a reason, a phase): the engine's own `&'static str`,
/// or an owned string when read back.
pub type Name = Cow<'static, str>;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::ops::AddAssign;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::work::SolrWork;

/// Counts per document.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq, ToSchema)]
#[serde(default)]
pub struct DocumentCounts {
    /// Documents read (that passed `--filter`), counted once per run.
    pub read: u64,
    /// Documents whose signatures were computed.
    pub signed: u64,
    /// Documents given at least one update (signatures or flags), counted when the store
    /// acknowledged the update: what certainly landed.
    pub written: u64,
    /// Documents of update batches that failed (the connection broke, the time ran out, the answer
    /// was not Solr's, retries ran out, Solr refused one document of the batch after applying
    /// those before it): some or all of them may have landed, so what landed is between `written`
    /// and `written + unanswered`. Left out of the JSON when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub unanswered: u64,
    /// Documents Solr gave without a `_version_`, which were not written: without the version its
    /// decision was read at, an update could leave a signature of an old text on a page re-indexed
    /// meanwhile. The core needs `_version_` (a long with docValues) and its update log. Left out
    /// of the JSON when 0; the run then ends with exit 1.
    #[serde(skip_serializing_if = "is_zero")]
    pub unversioned: u64,
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
    /// File mode: documents in which a field that holds one value (the text, title, description or
    /// URL) held an array of several, of which the first was taken. Left out of the JSON when 0, so
    /// that reports and run records of inputs without such documents read as before.
    #[serde(skip_serializing_if = "is_zero")]
    pub multi_valued_first_taken: u64,
}

/// What one dimension found.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq, ToSchema)]
#[serde(default)]
pub struct DimensionReport {
    /// Groups of two or more documents.
    pub groups: u64,
    /// Documents that double another (group members that are not the representative).
    pub doubles: u64,
    /// Documents that take no part, per reason.
    #[schema(value_type = BTreeMap<String, u64>)]
    pub excluded: BTreeMap<Name, u64>,
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
    /// Per rule of the preference order (`canonical`, `clutter`, `host`, `scheme`, `www`,
    /// `param order`, `shorter`, `smaller url`, `id`): in how many of the groups this run decided
    /// it was the first rule that separated the representative from the runner-up.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    #[schema(value_type = BTreeMap<String, u64>)]
    pub decided_by: BTreeMap<Name, u64>,
    /// Documents whose stored `*_unique_b` was (with `check` or `--dry-run`: would be) turned
    /// over, true to false or false to true (a missing flag is not counted): what a change of the
    /// preference order or of a setting does to a settled index. Absent when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub flips: u64,
    /// With `check` or `--dry-run`: up to five ids of [`DimensionReport::flips`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flip_examples: Vec<String>,
}

/// The whole report.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, ToSchema)]
#[serde(default)]
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
    #[schema(value_type = BTreeMap<String, DimensionReport>)]
    pub dimensions: BTreeMap<Name, DimensionReport>,
    /// Wall time per phase in milliseconds.
    #[schema(value_type = BTreeMap<String, u64>)]
    pub phases_ms: BTreeMap<Name, u64>,
    /// What the run asked of the store, and the Solr time it models.
    pub work: SolrWork,
    /// The memory budget and the disk the run used past it. Left out of the JSON when all zero (a
    /// record written before the budget existed), so that old run records read and save as before.
    #[serde(skip_serializing_if = "MemoryReport::is_unset")]
    pub memory: MemoryReport,
    /// Solr with a state folder: how the run found what changed (from versions, or reading every
    /// document, and why). Left out of the JSON when the run has no change state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<crate::store::changes::ChangesSummary>,
}

/// The memory budget (`--memory`) and what went past it to temporary files.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq, ToSchema)]
#[serde(default)]
pub struct MemoryReport {
    /// The budget, in bytes.
    pub budget_bytes: u64,
    /// Bytes written to temporary files (`--temp-dir`) because they were past the budget's
    /// shares, over all rounds; the files are gone when the run ends.
    pub spilled_bytes: u64,
    /// Bytes of per-document state held in memory whatever the budget (the groupings of every
    /// dimension; see the engine's module doc), at the largest round. The records and their id
    /// index spill past their share of the budget since 2026-11-26; the name stays for scripts.
    pub records_bytes: u64,
}

impl MemoryReport {
    fn is_unset(&self) -> bool {
        *self == MemoryReport::default()
    }
}

/// Sums over runs (`serve`'s metrics). Every field is named, so that a new count is a compile error
/// here until someone decides how it adds up.
impl AddAssign<&DocumentCounts> for DocumentCounts {
    fn add_assign(&mut self, o: &DocumentCounts) {
        let DocumentCounts {
            read,
            signed,
            written,
            unanswered,
            unversioned,
            conflicts,
            changed_during_run,
            missing_signatures,
            decided,
            reread,
            multi_valued_first_taken,
        } = o;
        self.read += read;
        self.signed += signed;
        self.written += written;
        self.unanswered += unanswered;
        self.unversioned += unversioned;
        self.conflicts += conflicts;
        self.changed_during_run += changed_during_run;
        self.missing_signatures += missing_signatures;
        self.decided += decided;
        self.reread += reread;
        self.multi_valued_first_taken += multi_valued_first_taken;
    }
}

impl Report {
    /// A file run that did not succeed: the file store writes its output only when a run ends, so
    /// nothing it counted as written (or sent) was.
    pub fn nothing_written(&mut self) {
        self.documents.written = 0;
        self.documents.unanswered = 0;
        self.work.written_docs = 0;
        self.work.written_in_place_docs = 0;
    }

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
            if r.flips > 0 {
                let _ = writeln!(
                    s,
                    "  {:<12} {} unique flags {} over{}",
                    "",
                    r.flips,
                    if self.mode == "check" || self.dry_run {
                        "would turn"
                    } else {
                        "turned"
                    },
                    if r.flip_examples.is_empty() {
                        String::new()
                    } else {
                        format!(", e.g. {}", r.flip_examples.join(", "))
                    }
                );
            }
        }
        if d.missing_signatures > 0 {
            let _ = writeln!(s, "  {} documents lack signatures", d.missing_signatures);
        }
        if d.unversioned > 0 {
            let _ = writeln!(
                s,
                "  {} documents not written: Solr gave them without _version_ (the core needs _version_ and its update log)",
                d.unversioned
            );
        }
        if d.unanswered > 0 {
            let _ = writeln!(
                s,
                "  {} more documents sent without an answer: between {} and {} written",
                d.unanswered,
                d.written,
                d.written + d.unanswered
            );
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
                "  Solr: {} texts, {} light ({} by /export, {} by cursor), {} looked up, {} written ({} in place), {} requests; modelled Solr time {:.1} s",
                w.text_docs + w.sample_docs,
                w.light_export_docs + w.light_cursor_docs,
                w.light_export_docs,
                w.light_cursor_docs,
                w.lookup_docs,
                w.written_docs,
                w.written_in_place_docs,
                w.requests,
                w.modelled_solr_ms as f64 / 1000.0
            );
        }
        s
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_reads_back_as_it_was_written() {
        let mut r = Report {
            mode: "check".into(),
            store: "file docs.jsonl".into(),
            rounds: 2,
            ..Report::default()
        };
        r.documents.read = 7;
        r.work.text_docs = 5;
        r.phases_ms.insert("scan".into(), 12);
        let d = r.dimensions.entry("exact".into()).or_default();
        d.groups = 1;
        d.excluded.insert("empty_text".into(), 3);
        d.examples.push("d1".into());
        r.dimensions
            .insert("near".into(), DimensionReport::default());
        let text = serde_json::to_string(&r).unwrap();
        let back: Report = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
    }
}
