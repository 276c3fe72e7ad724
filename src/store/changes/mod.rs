//! Everyday runs from versions: a store over a Solr store that serves the light reads of a run
//! from what an earlier run left in the state folder, with what changed since read from Solr.
//!
//! # Motivation
//!
//! A run reads the light fields of every document to find what changed: on a settled index of
//! 1M pages that read is most of the run, and it grows with the index. Solr gives every document a
//! `_version_` when it is added (higher than every version before it on its shard, give or take a
//! window for updates in flight), so what changed since a run is the documents with a version
//! above that run's mark, and what was deleted is what the counts no longer hold.
//!
//! # Design
//!
//! ```text
//! prepare:  max version, count ─▶ (id, version) above mark − window ─▶ new, re-indexed
//!           (no filter, standalone: above mark, and the window only when Solr's fingerprint
//!           up to the mark is not the state's)
//!           deleted = state + new − now  ─▶ > 0: counts per version range (one json.facet)
//!                                            ─▶ ranges short of documents: (id, version) read there
//!           changed documents read light by id ─▶ overlay
//! the run:  light reads of the run's filter ─▶ state file ⊕ overlay (no Solr work)
//!           everything else (texts, lookups, updates) ─▶ Solr; updates' (id, version) journalled
//! finish:   the last light read ⊕ the journal ─▶ the new state; the mark moves past the run's own
//!           writes when a read of the versions above the old mark finds only them
//! ```
//!
//! The state is a cache each run checks against the index, never the truth: without one, with
//! `--full`, another filter, fields or format, a store that cannot count, more documents than the
//! state and the new ones account for (a restore, a rollback, another core at the same URL), a
//! version lower than the state's for the same document, or more changes than the overlay holds,
//! the run reads everything as before and the report's `changes` says which and why. A run that
//! fails or cannot account for its writes removes the state; a run that is killed leaves the one
//! it started from, which the next run checks like any other. A settled state (the run that
//! wrote it ended with every group as it decided) with no change since and the same deciding
//! settings needs no run at all.

mod body;
mod derived;
mod finish;
mod prepare;
pub(crate) mod state;
mod view;

use view::project;

pub use finish::{kept_delta, kept_docs, KeptDelta, KeptDocs};

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tracing::warn;
use utoipa::ToSchema;

use self::state::{Dir, Meta, Raw, RecordWriter};
use super::{
    AtomicUpdate, Bucket, CostModel, Doc, FacetQuery, Filter, Page, ReadQuery, Store, StoreError,
    UpdateOutcome,
};
use crate::spill::{SpillArea, Strings};

/// Version ranges kept for finding deletions.
const BUCKETS: usize = 64;

/// What the store needs to know of the run.
#[derive(Debug, Clone)]
pub struct ChangesConfig {
    /// `STATE_DIR/changes/NAME` for this index and filter.
    pub dir: PathBuf,
    /// The index (its URL without user info).
    pub target: String,
    /// `--filter` as given.
    pub filter_text: Option<String>,
    /// The run's filter.
    pub filter: Filter,
    /// The unique key.
    pub id_field: String,
    /// `_version_`.
    pub version_field: String,
    /// The fields of the run's light read.
    pub light_fields: Vec<String>,
    /// Fields read besides them into the state (the near keys), so that reads of them are served
    /// too.
    pub extra_fields: Vec<String>,
    /// The deciding settings, as one digest.
    pub digest: String,
    /// The window for updates in flight, in milliseconds (versions are milliseconds shifted left by
    /// 20 bits): a version given before a commit and visible after it is found this much later.
    pub window_ms: u64,
    /// Rows per read page.
    pub batch: usize,
    /// The most changed documents read into memory; more, and the run reads everything.
    pub max_changed: usize,
    /// The run writes (`run`, not `check` or `--dry-run`): only such a run keeps a state, and it
    /// makes what was indexed visible before it takes its mark.
    pub writes: bool,
    /// The run's commit makes its writes visible (a hard or soft commit).
    pub visible_after_commit: bool,
    /// Read everything (`--full`).
    pub full: bool,
    /// Where temporary files go.
    pub temp_dir: Option<PathBuf>,
    /// `--memory`.
    pub memory: u64,
    /// What the state's delta holds (`None`: every light field of every page the run changed).
    pub delta: Option<DeltaFields>,
}

/// What the state's delta holds for its reader (serve's prediction index): these fields of each
/// page, and a page the run wrote only when one of them changed. Of the copy counts in
/// `above_one`, only whether a page has a double counts (a group of 11,000 that loses a member
/// changes no page's entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeltaFields {
    /// The fields kept (the unique key among them).
    pub fields: Vec<String>,
    /// Those of them read only as "more than one".
    pub above_one: Vec<String>,
}

impl DeltaFields {
    /// `doc` as the delta keeps it.
    fn project(&self, doc: &Doc) -> Doc {
        self.fields
            .iter()
            .filter_map(|f| doc.get(f).map(|v| (f.clone(), v.clone())))
            .collect()
    }

    /// Whether the delta's reader sees `a` and `b` (one page before and after a write) alike.
    fn alike(&self, a: &Doc, b: &Doc) -> bool {
        self.fields.iter().all(|f| {
            if self.above_one.contains(f) {
                // Read as the prediction index reads it: a number, a numeric string, or the
                // first of an array.
                let count = |v: &Value| match v {
                    Value::Array(a) => a.first().and_then(|x| {
                        x.as_i64()
                            .or_else(|| x.as_str().and_then(|t| t.parse().ok()))
                    }),
                    Value::String(t) => t.parse().ok(),
                    other => other.as_i64(),
                };
                let many = |d: &Doc| d.get(f).and_then(count).is_some_and(|n: i64| n > 1);
                many(a) == many(b)
            } else {
                a.get(f) == b.get(f)
            }
        })
    }
}

/// How a run found what changed: the report's `changes`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq, ToSchema)]
#[serde(default)]
pub struct ChangesSummary {
    /// `versions` (changes found from versions, the rest from the state), `settled` (no change
    /// since a settled state: nothing to do) or `full scan` (everything read, see `reason`).
    pub source: String,
    /// Why everything was read, when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Documents new since the state.
    pub new: u64,
    /// Documents re-indexed since the state.
    pub reindexed: u64,
    /// Documents deleted since the state.
    pub deleted: u64,
    /// `(id, version)` pairs read to find them (light: two docValues fields), and at the end to
    /// move the mark past the run's own writes.
    pub versions_read: u64,
    /// Of `versions_read`, the pairs read at the end to move the mark: the run's own writes (and
    /// what changed meanwhile), so they grow with the documents written, not with the index.
    pub versions_verified: u64,
    /// The mark moved past the run's own writes by Solr's index fingerprint (one request: the
    /// index holds exactly the new state's versions) instead of a read of their versions.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub fingerprint: bool,
    /// Solr's index fingerprint up to the state's mark was the state's (one request): nothing at or
    /// below the mark changed, so only the versions above it were read (not the change window
    /// below it) and no version range was counted.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unchanged_below_mark: bool,
    /// Documents read light by id (the changed ones).
    pub changed_read: u64,
    /// Documents the run's light reads were served from the state.
    pub served: u64,
    /// Of `served`, documents served with what the run before derived from them (their grouping
    /// keys and record), their fields not decoded again.
    pub served_derived: u64,
    /// Requests to find the changes (and, at the end, to move the mark).
    pub requests: u64,
    /// Documents read light by a `/select` page: the one with the highest version, for the mark.
    pub cursor_docs: u64,
    /// Whether the run left a state for the next one.
    pub kept: bool,
    /// Milliseconds spent finding the changes, before the run.
    pub prepare_ms: u64,
    /// Milliseconds spent keeping the state, after the run.
    pub finish_ms: u64,
    /// Milliseconds spent writing the next state's files while Solr committed the run's writes
    /// (in the run's `commit` phase, not in `finish_ms`); absent when they were written after it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merge_ms: Option<u64>,
}

/// The documents of the state and what changed since.
struct View {
    /// The state's documents, open from the start: another process may replace the state meanwhile.
    docs: std::fs::File,
    /// The changed documents, by id.
    overlay: BTreeMap<String, Doc>,
    /// The id hashes of the overlay's documents: their records in the state are left out.
    replaced: HashSet<u64>,
    /// The id hashes of the deleted documents.
    deleted: HashSet<u64>,
}

/// The last light read of the run: kept as it went by when it came from Solr, or the view it was
/// served from.
#[derive(Default)]
struct Capture {
    writer: Option<RecordWriter>,
    done: Option<std::fs::File>,
    /// The read was served from this view (the next state is the view, merged at the end).
    view: Option<Arc<View>>,
    /// ... and to its last page.
    view_done: bool,
    last: Option<String>,
    sorted: bool,
    failed: bool,
}

/// The run's own writes: `(id hash, new version, offset of the id and fields set)`.
struct Journal {
    patches: Vec<(u64, i64, u64)>,
    bytes: Strings,
    complete: bool,
}

/// The store (see the module doc).
pub struct ChangeStore {
    inner: Arc<dyn Store>,
    cfg: ChangesConfig,
    dir: Dir,
    /// The state's fields: the light ones and the extra ones, sorted.
    fields: Vec<String>,
    view: Mutex<Option<Arc<View>>>,
    capture: Mutex<Capture>,
    journal: Mutex<Journal>,
    /// What the reader asked to be served beside the light read: its tag and the field whose text
    /// then comes with a document's id ([`Store::serve_derived`]).
    derived_wanted: Mutex<Option<(u64, String)>>,
    /// What the reader derived from the last light read, for the next state.
    sink: Mutex<derived::Sink>,
    summary: Mutex<ChangesSummary>,
    /// The highest version when the run began.
    mark0: Mutex<Option<i64>>,
    meta: Mutex<Option<Meta>>,
    /// The id hash's seed ([`state::hash`]): the kept state's, or a new one.
    seed: std::sync::atomic::AtomicU64,
    area: SpillArea,
    /// The next state's files, merged while Solr committed ([`ChangeStore::commit_beside`]).
    premerged: Mutex<Option<Result<Option<finish::Merge>, String>>>,
}

/// What `prepare` found.
#[derive(Debug, Clone, PartialEq)]
pub enum Prepared {
    /// Nothing changed since a settled state under the same settings: the run has nothing to do.
    /// The documents counted, and the dimensions the state's run reported.
    Settled {
        /// Documents of the filter.
        count: u64,
        /// The report's `dimensions` of the run that left the state.
        dimensions: Value,
    },
    /// The run goes on (from versions or reading everything; the summary says which).
    Run,
}

fn window_versions(ms: u64) -> i64 {
    (ms as i64).saturating_mul(1 << 20)
}

impl ChangeStore {
    /// A store over `inner` for the run `cfg` describes.
    pub fn new(inner: Arc<dyn Store>, cfg: ChangesConfig) -> Self {
        let mut fields: Vec<String> = cfg
            .light_fields
            .iter()
            .chain(&cfg.extra_fields)
            .cloned()
            .collect();
        fields.sort();
        fields.dedup();
        let area = SpillArea::new(cfg.temp_dir.as_deref(), cfg.memory);
        let journal = Journal {
            patches: Vec::new(),
            bytes: Strings::new(area.clone(), area.share(16)),
            complete: true,
        };
        ChangeStore {
            inner,
            dir: Dir {
                path: cfg.dir.clone(),
            },
            cfg,
            fields,
            view: Mutex::new(None),
            capture: Mutex::new(Capture::default()),
            journal: Mutex::new(journal),
            derived_wanted: Mutex::new(None),
            sink: Mutex::new(derived::Sink::default()),
            summary: Mutex::new(ChangesSummary::default()),
            premerged: Mutex::new(None),
            mark0: Mutex::new(None),
            meta: Mutex::new(None),
            seed: std::sync::atomic::AtomicU64::new(state::new_seed()),
            area,
        }
    }

    /// The hash of `id` in this run's state.
    fn hash(&self, id: &str) -> u64 {
        state::hash(self.seed.load(std::sync::atomic::Ordering::Relaxed), id)
    }

    /// Whether the store gives Solr's index fingerprint of the run's documents: the whole index
    /// (no filter) on a store that has one.
    fn fingerprints(&self) -> bool {
        self.cfg.filter == Filter::All && self.inner.fingerprints()
    }

    /// Whether `prepare` found nothing changed since a settled state: the run has nothing to do.
    fn settled(&self) -> bool {
        self.summary.lock().expect("summary").source == "settled"
    }

    /// The run's documents with a version from `lo` up to `hi` (inclusive; open without `hi`).
    fn versions_within(&self, lo: i64, hi: Option<i64>) -> Filter {
        self.cfg.filter.clone().and(Filter::Range {
            field: self.cfg.version_field.clone(),
            lo: Some(lo.to_string()),
            hi: hi.map(|h| h.to_string()),
        })
    }

    fn seed(&self) -> u64 {
        self.seed.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How the run found what changed (the report's `changes`).
    pub fn summary(&self) -> ChangesSummary {
        self.summary.lock().expect("summary").clone()
    }
}

#[async_trait]
impl Store for ChangeStore {
    async fn read_page(&self, query: &ReadQuery, cursor: Option<&str>) -> Result<Page, StoreError> {
        let view = self.view.lock().expect("view").clone();
        let light = self.is_light_read(query);
        if let Some(view) = view.filter(|_| self.servable(query)) {
            let page = self
                .serve(&view, query, cursor)
                .map_err(|e| StoreError::io("cannot read the change state", e))?;
            let mut summary = self.summary.lock().expect("summary");
            summary.served += page.docs.len() as u64;
            summary.served_derived += page.derived.count() as u64;
            drop(summary);
            if light {
                self.capture_view(cursor.is_none(), &view, page.next.is_none());
            }
            return Ok(page);
        }
        if !light {
            return self.inner.read_page(query, cursor).await;
        }
        // The light read from Solr, with the extra fields the state keeps.
        let mut wide = query.clone();
        for f in &self.fields {
            if !wide.fields.contains(f) {
                wide.fields.push(f.clone());
            }
        }
        let mut page = self.inner.read_page(&wide, cursor).await?;
        let c = &self.cfg;
        let kept: std::io::Result<Vec<(String, Raw)>> = page
            .docs
            .iter()
            .map(|d| {
                let id = d.get(&c.id_field).and_then(Value::as_str).unwrap_or("");
                let doc = project(d.clone(), &self.fields, &c.id_field);
                let raw = Raw::of(
                    &doc,
                    &self.fields,
                    &c.id_field,
                    &c.version_field,
                    self.seed(),
                )?;
                Ok((id.to_owned(), raw))
            })
            .collect();
        match kept {
            Ok(kept) => self.capture(cursor.is_none(), kept, page.next.is_none()),
            Err(e) => {
                warn!("cannot keep the light read for the change state: {e}");
                self.capture.lock().expect("capture").failed = true;
            }
        }
        for doc in &mut page.docs {
            doc.retain(|k, _| k == &self.cfg.id_field || query.fields.iter().any(|f| f == k));
        }
        Ok(page)
    }

    async fn sample(&self, query: &ReadQuery) -> Result<Vec<Doc>, StoreError> {
        self.inner.sample(query).await
    }

    fn hint_rereads(&self, query: &ReadQuery) {
        self.inner.hint_rereads(query)
    }

    fn serves_locally(&self, query: &ReadQuery) -> bool {
        self.view.lock().expect("view").is_some() && self.servable(query)
    }

    fn deleted_since(&self) -> u64 {
        let view = self.view.lock().expect("view");
        view.as_ref().map_or(0, |v| v.deleted.len() as u64)
    }

    fn serve_derived(&self, tag: u64, field: &str) {
        *self.derived_wanted.lock().expect("derived") = Some((tag, field.to_owned()));
    }

    fn keep_derived(&self, tag: u64, derived: Vec<(String, i64, Vec<u8>)>) {
        let seed = self.seed();
        let mut sink = self.sink.lock().expect("sink");
        sink.push(&self.area, tag, derived, |id| state::hash(seed, id));
    }

    fn max_lookup_values(&self) -> usize {
        self.inner.max_lookup_values()
    }

    fn known_count(&self, filter: &Filter) -> Option<u64> {
        self.inner.known_count(filter)
    }

    async fn facet(&self, query: &FacetQuery) -> Result<Vec<Bucket>, StoreError> {
        self.inner.facet(query).await
    }

    async fn get(&self, ids: &[String], fields: &[String]) -> Result<Vec<Doc>, StoreError> {
        self.inner.get(ids, fields).await
    }

    async fn update(&self, batch: &[AtomicUpdate]) -> Result<UpdateOutcome, StoreError> {
        let out = self.inner.update(batch).await?;
        let mut j = self.journal.lock().expect("journal");
        if out.versions.len() < out.applied {
            j.complete = false;
        }
        let by_id: HashMap<&str, &AtomicUpdate> =
            batch.iter().map(|u| (u.id.as_str(), u)).collect();
        for (id, v) in &out.versions {
            let Some(u) = by_id.get(id.as_str()) else {
                j.complete = false;
                continue;
            };
            let bytes = serde_json::to_vec(&(id, &u.set)).expect("a patch serialises");
            match j.bytes.push(&bytes) {
                Ok(at) => j.patches.push((self.hash(id), *v, at)),
                Err(e) => {
                    warn!("cannot keep a write for the change state: {e}");
                    j.complete = false;
                }
            }
        }
        Ok(out)
    }

    async fn refresh(&self) -> Result<(), StoreError> {
        // Later rounds read what changed under the run from Solr itself.
        *self.view.lock().expect("view") = None;
        self.inner.refresh().await
    }

    async fn commit(&self, mode: super::CommitMode) -> Result<(), StoreError> {
        self.commit_beside(mode).await
    }

    async fn publish(&self) -> Result<(), StoreError> {
        self.inner.publish().await
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }

    async fn change_mark(&self, filter: &Filter) -> Result<String, StoreError> {
        self.inner.change_mark(filter).await
    }

    fn requests(&self) -> u64 {
        self.inner.requests()
    }

    fn needs_versions(&self) -> bool {
        self.inner.needs_versions()
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.inner.ping().await
    }

    async fn count(&self, filter: &Filter) -> Result<Option<u64>, StoreError> {
        self.inner.count(filter).await
    }

    async fn max_version(
        &self,
        filter: &Filter,
        version_field: &str,
    ) -> Result<Option<i64>, StoreError> {
        self.inner.max_version(filter, version_field).await
    }

    async fn count_ranges(
        &self,
        filter: &Filter,
        field: &str,
        ranges: &[(i64, i64)],
    ) -> Result<Option<Vec<u64>>, StoreError> {
        self.inner.count_ranges(filter, field, ranges).await
    }

    fn multi_valued_first_taken(&self) -> u64 {
        self.inner.multi_valued_first_taken()
    }

    fn spilled_bytes(&self) -> u64 {
        self.inner.spilled_bytes() + self.area.written()
    }

    fn cost_model(&self) -> CostModel {
        self.inner.cost_model()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::{DeltaFields, Doc};

    fn doc(v: Value) -> Doc {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    /// A delta whose counts were compared only as "more than one" serves a reader that reads them
    /// so, or does not read them, and no reader that needs their value; a delta of an older build
    /// (every field, nothing compared so) serves any reader.
    #[test]
    fn a_delta_serves_only_readers_of_what_it_compared() {
        use super::state::{DeltaMeta, Dir, Meta, FORMAT};
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("delta-1.jsonl"), "").unwrap();
        let commit = |delta: DeltaMeta| {
            let meta = Meta {
                format: FORMAT,
                target: "http://solr/c".into(),
                filter: None,
                fields: names(&["count_i", "id", "title_s", "url_s"]),
                digest: String::new(),
                mark: 1,
                count: 0,
                settled: true,
                buckets: Vec::new(),
                docs: "docs-1".into(),
                ids: "ids-1".into(),
                seed: 1,
                dimensions: Value::Null,
                derived: 0,
                delta: Some(delta),
                below_mark: None,
            };
            Dir {
                path: dir.path().to_path_buf(),
            }
            .commit(&meta)
            .unwrap();
        };
        let serves = |fields: &[&str], above_one: &[&str]| {
            let reader = DeltaFields {
                fields: names(fields),
                above_one: names(above_one),
            };
            super::kept_delta(dir.path(), "http://solr/c", None, &reader, "docs-0").is_some()
        };
        commit(DeltaMeta {
            file: "delta-1.jsonl".into(),
            from: "docs-0".into(),
            fields: Some(names(&["count_i", "id", "url_s"])),
            above_one: names(&["count_i"]),
        });
        assert!(serves(&["id", "url_s", "count_i"], &["count_i"]));
        assert!(serves(&["id", "url_s"], &[]));
        assert!(!serves(&["id", "url_s", "count_i"], &[]));
        // A field the delta does not keep, though the state does.
        assert!(!serves(&["id", "title_s"], &[]));
        commit(DeltaMeta {
            file: "delta-1.jsonl".into(),
            from: "docs-0".into(),
            fields: None,
            above_one: Vec::new(),
        });
        assert!(serves(&["id", "url_s", "count_i"], &[]));
        assert!(serves(&["id", "title_s"], &[]));
    }

    /// A write the prediction index does not see (a count of a group that stays a group, a field
    /// it does not read) leaves a page out of the delta; a flag, a URL, or a group that becomes
    /// or stops being one does not.
    #[test]
    fn the_delta_sees_what_its_reader_reads() {
        let keeps = DeltaFields {
            fields: ["id", "url_s", "unique_b", "count_i"]
                .map(String::from)
                .to_vec(),
            above_one: vec!["count_i".into()],
        };
        let before = doc(json!({"id": "a", "url_s": "http://x/", "unique_b": false,
                                "count_i": 11000, "title_count_i": 5}));
        let alike = |after: Value| keeps.alike(&before, &doc(after));
        assert!(alike(
            json!({"id": "a", "url_s": "http://x/", "unique_b": false,
                             "count_i": 10999, "title_count_i": 4})
        ));
        assert!(!alike(
            json!({"id": "a", "url_s": "http://x/", "unique_b": true,
                              "count_i": 10999})
        ));
        assert!(!alike(
            json!({"id": "a", "url_s": "http://y/", "unique_b": false,
                              "count_i": 11000})
        ));
        assert!(!alike(
            json!({"id": "a", "url_s": "http://x/", "unique_b": false,
                              "count_i": 1})
        ));
        assert!(!alike(
            json!({"id": "a", "url_s": "http://x/", "unique_b": false})
        ));
        // A count held as a string or in an array is read as the index reads it.
        assert!(!alike(
            json!({"id": "a", "url_s": "http://x/", "unique_b": false,
                              "count_i": "1"})
        ));
        let listed = doc(json!({"id": "a", "url_s": "http://x/", "unique_b": false,
                                "count_i": ["2"]}));
        assert!(!keeps.alike(
            &listed,
            &doc(json!({"id": "a", "url_s": "http://x/",
                                                   "unique_b": false, "count_i": [1]}))
        ));
        let lone = doc(json!({"id": "b", "count_i": 1}));
        assert!(keeps.alike(&lone, &doc(json!({"id": "b"}))));
        assert_eq!(
            Value::Object(keeps.project(&before)),
            json!({"id": "a", "url_s": "http://x/", "unique_b": false, "count_i": 11000})
        );
    }
}
