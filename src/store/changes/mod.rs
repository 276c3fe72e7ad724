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

pub(crate) mod state;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Bound;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tracing::{debug, info, warn};
use utoipa::ToSchema;

use self::state::{Dir, Ids, Meta, Raw, RecordReader, RecordWriter};
use super::{
    AtomicUpdate, Bucket, CostModel, Doc, FacetQuery, Filter, Page, ReadQuery, Store, StoreError,
    UpdateOutcome, Via,
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
    /// `(id, version)` pairs read to find them (light: two docValues fields).
    pub versions_read: u64,
    /// Documents read light by id (the changed ones).
    pub changed_read: u64,
    /// Documents the run's light reads were served from the state.
    pub served: u64,
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

/// The last light read of the run, as it went by.
#[derive(Default)]
struct Capture {
    writer: Option<RecordWriter>,
    done: Option<std::fs::File>,
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
    summary: Mutex<ChangesSummary>,
    /// The highest version when the run began.
    mark0: Mutex<Option<i64>>,
    meta: Mutex<Option<Meta>>,
    /// The id hash's seed ([`state::hash`]): the kept state's, or a new one.
    seed: std::sync::atomic::AtomicU64,
    area: SpillArea,
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
            summary: Mutex::new(ChangesSummary::default()),
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

    fn seed(&self) -> u64 {
        self.seed.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How the run found what changed (the report's `changes`).
    pub fn summary(&self) -> ChangesSummary {
        self.summary.lock().expect("summary").clone()
    }

    fn full_scan(&self, reason: impl Into<String>) -> Prepared {
        let reason = reason.into();
        info!("reading every document: {reason}");
        let mut s = self.summary.lock().expect("summary");
        s.source = "full scan".to_owned();
        s.reason = Some(reason);
        Prepared::Run
    }

    /// Finds what changed since the state, before the run reads anything (see the module doc).
    pub async fn prepare(&self) -> Result<Prepared, StoreError> {
        let (before, t) = (self.inner.requests(), std::time::Instant::now());
        let out = self.prepare_inner().await;
        let mut s = self.summary.lock().expect("summary");
        s.requests += self.inner.requests() - before;
        s.prepare_ms = t.elapsed().as_millis() as u64;
        out
    }

    async fn prepare_inner(&self) -> Result<Prepared, StoreError> {
        let c = &self.cfg;
        if c.writes {
            // What was indexed becomes visible, so that the mark is taken after a commit.
            self.inner.refresh().await?;
        }
        let mark0 = self.inner.max_version(&c.filter, &c.version_field).await?;
        *self.mark0.lock().expect("mark") = mark0;
        self.summary.lock().expect("summary").cursor_docs += u64::from(mark0.is_some());
        let Some(now) = self.inner.count(&c.filter).await? else {
            return Ok(self.full_scan("the store cannot count its documents"));
        };
        if c.full {
            return Ok(self.full_scan("--full"));
        }
        let meta = match self.dir.load() {
            Ok(Some(m)) => m,
            Ok(None) => return Ok(self.full_scan("no state from an earlier run")),
            Err(e) => return Ok(self.full_scan(format!("the state cannot be read ({e})"))),
        };
        if meta.target != c.target {
            return Ok(self.full_scan("the state is of another index"));
        }
        if meta.filter != c.filter_text {
            return Ok(self.full_scan("the state is of another --filter"));
        }
        if meta.fields != self.fields {
            return Ok(
                self.full_scan("the state holds other fields (other dimensions or field names)")
            );
        }
        if mark0.is_none() && now > 0 {
            return Ok(self.full_scan("the documents carry no version"));
        }
        // (A highest version below the state's mark is no sign of a restore: the newest pages may
        // have been deleted. The counts per version range tell.)
        // The state's hashes are of its seed; a state kept at the end is too.
        self.seed
            .store(meta.seed, std::sync::atomic::Ordering::Relaxed);
        let ids = match Ids::open(&self.dir.path.join(&meta.ids)) {
            Ok(ids) => ids,
            Err(e) => return Ok(self.full_scan(format!("the state cannot be read ({e})"))),
        };
        let io = |e: std::io::Error| StoreError::io("cannot read the change state", e);

        // New and re-indexed: the versions above the mark, less the window.
        let lo = meta.mark.saturating_sub(window_versions(c.window_ms));
        let mut changed: Vec<String> = Vec::new();
        // Re-indexed: id hash → the version the state holds.
        let mut moved: HashMap<u64, i64> = HashMap::new();
        // The version each changed document has now.
        let mut now_versions: Vec<i64> = Vec::new();
        let mut new = 0u64;
        let above = c.filter.clone().and(Filter::Range {
            field: c.version_field.clone(),
            lo: Some(lo.to_string()),
            hi: None,
        });
        let mut read = 0u64;
        let mut stop: Option<String> = None;
        let mut failed: Option<std::io::Error> = None;
        let max_changed = c.max_changed;
        self.for_versions(above, &mut read, |id, v| {
            let h = self.hash(id);
            match ids.find(h) {
                Err(e) => {
                    failed = Some(e);
                    return false;
                }
                Ok(Some(sv)) if sv == v => {}
                Ok(Some(sv)) if v < sv => {
                    stop = Some(format!(
                        "document {id} has an older version than the state's (restored or rolled back)"
                    ));
                    return false;
                }
                Ok(Some(sv)) => {
                    moved.insert(h, sv);
                    now_versions.push(v);
                    changed.push(id.to_owned());
                }
                Ok(None) => {
                    new += 1;
                    now_versions.push(v);
                    changed.push(id.to_owned());
                }
            }
            if changed.len() > max_changed {
                stop = Some(format!(
                    "more than {max_changed} documents changed since the last run"
                ));
                return false;
            }
            true
        })
        .await?;
        if let Some(e) = failed {
            return Err(io(e));
        }
        if let Some(why) = stop {
            self.summary.lock().expect("summary").versions_read += read;
            return Ok(self.full_scan(why));
        }
        let deleted = meta.count as i64 + new as i64 - now as i64;
        if deleted < 0 {
            self.summary.lock().expect("summary").versions_read += read;
            return Ok(self.full_scan(format!(
                "{} documents more than the state and the new ones account for (restored, rolled back or replaced)",
                -deleted
            )));
        }
        // Every run compares the counts per version range with the state's (one request), so
        // that changes that cancel out in the totals (a restore, a page with an old version and a
        // deletion) are found too; the ranges short of documents are read when pages were deleted.
        let mut gone = match self
            .find_deleted(
                &meta,
                &ids,
                &moved,
                &now_versions,
                deleted as u64,
                &mut read,
            )
            .await?
        {
            Ok(found) => found,
            Err(why) => {
                self.summary.lock().expect("summary").versions_read += read;
                return Ok(self.full_scan(why));
            }
        };
        self.summary.lock().expect("summary").versions_read += read;

        // The changed documents, light, by id.
        let mut overlay = BTreeMap::new();
        let max = self.inner.max_lookup_values().max(1);
        let mut changed_read = 0u64;
        for chunk in changed.chunks(max) {
            let query = ReadQuery {
                filter: c
                    .filter
                    .clone()
                    .and(Filter::any_of(c.id_field.clone(), chunk.to_vec())),
                fields: self.fields.clone(),
                rows: c.batch.max(1),
            };
            let mut cursor: Option<String> = None;
            loop {
                let page = self.inner.read_page(&query, cursor.as_deref()).await?;
                changed_read += page.docs.len() as u64;
                for doc in page.docs {
                    if let Some(id) = doc.get(&c.id_field).and_then(Value::as_str) {
                        overlay.insert(id.to_owned(), doc);
                    }
                }
                match page.next {
                    Some(n) => cursor = Some(n),
                    None => break,
                }
            }
        }
        // Re-indexed and then deleted before this read.
        for id in &changed {
            let h = self.hash(id);
            if !overlay.contains_key(id) && moved.contains_key(&h) {
                gone.insert(h);
            }
        }
        let reindexed = moved.len() as u64;
        {
            let mut s = self.summary.lock().expect("summary");
            s.source = "versions".to_owned();
            s.new = new;
            s.reindexed = reindexed;
            s.deleted = gone.len() as u64;
            s.changed_read = changed_read;
        }
        info!(
            new,
            reindexed,
            deleted = gone.len(),
            "changes found from versions"
        );
        let nothing = changed.is_empty() && gone.is_empty();
        let settled = nothing && meta.settled && meta.digest == c.digest;
        let dims = meta.dimensions.clone();
        let replaced = overlay.keys().map(|id| self.hash(id)).collect();
        let docs = match std::fs::File::open(self.dir.path.join(&meta.docs)) {
            Ok(f) => f,
            Err(e) => return Ok(self.full_scan(format!("the state cannot be read ({e})"))),
        };
        *self.view.lock().expect("view") = Some(Arc::new(View {
            docs,
            overlay,
            replaced,
            deleted: gone,
        }));
        *self.meta.lock().expect("meta") = Some(meta);
        if settled {
            self.summary.lock().expect("summary").source = "settled".to_owned();
            return Ok(Prepared::Settled {
                count: now,
                dimensions: dims,
            });
        }
        Ok(Prepared::Run)
    }

    /// Calls `each` with the `(id, version)` of every document of `filter`, read light, page by
    /// page (nothing is collected: a read of every version stays within memory); `each` returns
    /// `false` to stop reading.
    async fn for_versions(
        &self,
        filter: Filter,
        read: &mut u64,
        mut each: impl FnMut(&str, i64) -> bool,
    ) -> Result<(), StoreError> {
        let c = &self.cfg;
        let query = ReadQuery {
            filter,
            fields: vec![c.id_field.clone(), c.version_field.clone()],
            rows: c.batch.max(1),
        };
        let mut cursor: Option<String> = None;
        loop {
            let page = self.inner.read_page(&query, cursor.as_deref()).await?;
            *read += page.docs.len() as u64;
            for doc in &page.docs {
                let id = doc.get(&c.id_field).and_then(Value::as_str);
                let v = doc.get(&c.version_field).and_then(Value::as_i64);
                if let (Some(id), Some(v)) = (id, v) {
                    if !each(id, v) {
                        return Ok(());
                    }
                }
            }
            match page.next {
                Some(n) => cursor = Some(n),
                None => return Ok(()),
            }
        }
    }

    /// The id hashes of the `deleted` documents: the version ranges whose count fell short are
    /// read, `(id, version)` only. `Err` says why the state cannot be trusted.
    async fn find_deleted(
        &self,
        meta: &Meta,
        ids: &Ids,
        moved: &HashMap<u64, i64>,
        now_versions: &[i64],
        deleted: u64,
        read: &mut u64,
    ) -> Result<Result<HashSet<u64>, String>, StoreError> {
        let c = &self.cfg;
        let io = |e: std::io::Error| StoreError::io("cannot read the change state", e);
        let ranges: Vec<(i64, i64)> = meta.buckets.iter().map(|b| (b.0, b.1)).collect();
        let counts = self
            .inner
            .count_ranges(&c.filter, &c.version_field, &ranges)
            .await?;
        let bucket_of = |v: i64| {
            let i = meta.buckets.partition_point(|b| b.1 < v);
            (i < meta.buckets.len() && meta.buckets[i].0 <= v).then_some(i)
        };
        let mut short = vec![true; ranges.len()];
        if let Some(counts) = counts {
            let mut expected: Vec<i64> = meta.buckets.iter().map(|b| b.2 as i64).collect();
            for &sv in moved.values() {
                if let Some(i) = bucket_of(sv) {
                    expected[i] -= 1;
                }
            }
            for &v in now_versions {
                if let Some(i) = bucket_of(v) {
                    expected[i] += 1;
                }
            }
            let mut missing = 0i64;
            for (i, (&e, &n)) in expected.iter().zip(&counts).enumerate() {
                if (n as i64) > e {
                    return Ok(Err(format!(
                        "{} documents with old versions the state does not hold (restored, rolled back or replaced)",
                        n as i64 - e
                    )));
                }
                short[i] = (n as i64) < e;
                missing += e - n as i64;
            }
            if missing != deleted as i64 {
                return Ok(Err(format!(
                    "the counts per version range miss {missing} documents, the totals {deleted}"
                )));
            }
        }
        if deleted == 0 {
            // The counts agree range by range (or the store cannot count ranges): nothing deleted.
            return Ok(Ok(HashSet::new()));
        }
        let wanted: Vec<usize> = (0..ranges.len()).filter(|&i| short[i]).collect();
        debug!(
            ranges = wanted.len(),
            "reading the versions where documents were deleted"
        );
        let all = ids.all().map_err(io)?;
        let mut gone = HashSet::new();
        for i in wanted {
            let (lo, hi) = ranges[i];
            let range = c.filter.clone().and(Filter::Range {
                field: c.version_field.clone(),
                lo: Some(lo.to_string()),
                hi: Some(hi.to_string()),
            });
            let mut present: HashSet<u64> = HashSet::new();
            self.for_versions(range, read, |id, _| {
                present.insert(self.hash(id));
                true
            })
            .await?;
            for &(h, v) in &all {
                if v >= lo && v <= hi && !present.contains(&h) && !moved.contains_key(&h) {
                    gone.insert(h);
                }
            }
        }
        if gone.len() as u64 != deleted {
            return Ok(Err(format!(
                "{} documents found deleted where the counts say {deleted}",
                gone.len()
            )));
        }
        Ok(Ok(gone))
    }

    /// Whether `query` is the run's light read, or that read with the texts besides (a first run
    /// on a core without `/export`, `--full`): it is kept for the next state, and served from the
    /// state when it is the light read.
    fn is_light_read(&self, query: &ReadQuery) -> bool {
        query.filter == self.cfg.filter
            && self
                .cfg
                .light_fields
                .iter()
                .all(|f| query.fields.contains(f))
    }

    /// Whether the state can serve `query`.
    fn servable(&self, query: &ReadQuery) -> bool {
        query.filter == self.cfg.filter
            && query
                .fields
                .iter()
                .all(|f| self.fields.binary_search(f).is_ok())
    }

    /// One page of the state ⊕ the changes, from `cursor` (`OFFSET:LAST_ID`); with `keep`, the
    /// page's documents as kept too (the whole records, for the next state).
    fn serve(
        &self,
        view: &View,
        query: &ReadQuery,
        cursor: Option<&str>,
        keep: bool,
    ) -> std::io::Result<(Page, Vec<(String, Raw)>)> {
        let (offset, last) = match cursor {
            None => (0u64, None),
            Some(c) => {
                let (o, id) = c.split_once(':').unwrap_or((c, ""));
                (o.parse().unwrap_or(0), Some(id.to_owned()))
            }
        };
        // A reader of its own on the file opened at the start (which may be unlinked by now).
        let file = std::fs::File::open(format!("/proc/self/fd/{}", view.docs.as_raw_fd()))?;
        let mut reader = RecordReader::new(file, offset)?;
        let mut over = match &last {
            Some(l) => view
                .overlay
                .range::<String, _>((Bound::Excluded(l.clone()), Bound::Unbounded)),
            None => view
                .overlay
                .range::<String, _>((Bound::<String>::Unbounded, Bound::<String>::Unbounded)),
        }
        .peekable();
        let c = &self.cfg;
        let rows = query.rows.max(1);
        let mut docs = Vec::with_capacity(rows);
        let mut kept = Vec::new();
        let mut last_id = last.unwrap_or_default();
        // The next base document neither deleted nor replaced: its offset, id, record, document.
        let mut pending: Option<(u64, String, Raw, Doc)> = None;
        let mut base_done = false;
        loop {
            while pending.is_none() && !base_done {
                let at = reader.at;
                match reader.next_raw()? {
                    None => base_done = true,
                    Some(raw) => {
                        if view.deleted.contains(&raw.hash) {
                            continue;
                        }
                        let doc = raw.doc()?;
                        let id = doc
                            .get(&c.id_field)
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned();
                        // Replaced by its changed copy (the hash only says where to look).
                        if view.replaced.contains(&raw.hash) && view.overlay.contains_key(&id) {
                            continue;
                        }
                        pending = Some((at, id, raw, doc));
                    }
                }
            }
            if docs.len() == rows {
                let at = pending.as_ref().map_or(reader.at, |p| p.0);
                let more = pending.is_some() || over.peek().is_some();
                let page = Page {
                    docs,
                    next: more.then(|| format!("{at}:{last_id}")),
                    via: Via::State,
                };
                return Ok((page, kept));
            }
            let take_over = match (&pending, over.peek()) {
                (None, None) => break,
                (Some(_), None) => false,
                (None, Some(_)) => true,
                (Some((_, b, _, _)), Some((o, _))) => o.as_str() < b.as_str(),
            };
            let (id, raw, doc) = if take_over {
                let (id, d) = over.next().expect("peeked");
                let raw = keep.then(|| Raw::of(d, &c.id_field, &c.version_field, self.seed()));
                (id.clone(), raw, d.clone())
            } else {
                let (_, id, raw, doc) = pending.take().expect("a base document");
                (id, Some(raw), doc)
            };
            if keep {
                kept.push((id.clone(), raw.expect("kept")));
            }
            last_id = id;
            docs.push(project(doc, &query.fields, &c.id_field));
        }
        let page = Page {
            docs,
            next: None,
            via: Via::State,
        };
        Ok((page, kept))
    }

    /// Keeps a page of the light read for the next state.
    fn capture(&self, first: bool, records: Vec<(String, Raw)>, last_page: bool) {
        let mut cap = self.capture.lock().expect("capture");
        if first {
            *cap = Capture {
                sorted: true,
                ..Capture::default()
            };
            match self.area.file() {
                Ok(f) => cap.writer = Some(RecordWriter::new(f)),
                Err(e) => {
                    warn!("cannot keep the light read for the change state: {e}");
                    cap.failed = true;
                }
            }
        }
        if cap.failed {
            return;
        }
        for (id, raw) in records {
            if cap.last.as_deref().is_some_and(|l| l >= id.as_str()) {
                cap.sorted = false;
            }
            let Some(w) = cap.writer.as_mut() else {
                cap.failed = true;
                return;
            };
            if let Err(e) = w.push(&raw) {
                warn!("cannot keep the light read for the change state: {e}");
                cap.failed = true;
                return;
            }
            cap.last = Some(id);
        }
        if last_page {
            match cap.writer.take().map(RecordWriter::finish) {
                Some(Ok(f)) => cap.done = Some(f),
                Some(Err(e)) => {
                    warn!("cannot keep the light read for the change state: {e}");
                    cap.failed = true;
                }
                None => cap.failed = true,
            }
        }
    }

    /// After the run: keeps the state for the next one, or removes it. `ok`: the run succeeded
    /// (its last round found nothing changed under it); `written`: documents it wrote;
    /// `dimensions`: its report's.
    pub async fn finish(&self, ok: bool, written: u64, dimensions: Value) {
        if !self.cfg.writes {
            return;
        }
        let (before, t) = (self.inner.requests(), std::time::Instant::now());
        let kept = match self.finish_inner(ok, written, dimensions).await {
            Ok(kept) => kept,
            Err(e) => {
                warn!("the change state is not kept: {e}; the next run reads everything");
                false
            }
        };
        if !kept {
            self.dir.forget();
        }
        let mut s = self.summary.lock().expect("summary");
        s.kept = kept;
        s.requests += self.inner.requests() - before;
        s.finish_ms = t.elapsed().as_millis() as u64;
    }

    async fn finish_inner(
        &self,
        ok: bool,
        written: u64,
        dimensions: Value,
    ) -> Result<bool, String> {
        if !ok {
            return Ok(false);
        }
        let c = &self.cfg;
        if self.summary.lock().expect("summary").source == "settled" {
            // Nothing changed up to the highest version now: the same state, a later mark;
            // unless another process put a state of its own in place meanwhile.
            let ours = self.meta.lock().expect("meta").clone().ok_or("no state")?;
            let Ok(Some(mut meta)) = self.dir.load() else {
                return Ok(false);
            };
            if (&meta.docs, &meta.ids) != (&ours.docs, &ours.ids) {
                return Ok(true);
            }
            if let Some(m) = *self.mark0.lock().expect("mark") {
                meta.mark = meta.mark.max(m);
            }
            self.dir.commit(&meta).map_err(|e| e.to_string())?;
            return Ok(true);
        }
        let cap = std::mem::take(&mut *self.capture.lock().expect("capture"));
        let (Some(file), false, true) = (cap.done, cap.failed, cap.sorted) else {
            if !cap.sorted {
                warn!("the light read was not in id order; no change state is kept");
            }
            return Ok(false);
        };
        let (mut patches, bytes) = {
            let mut j = self.journal.lock().expect("journal");
            if !j.complete {
                return Err("some writes came back without their new version".to_owned());
            }
            let bytes = std::mem::replace(&mut j.bytes, Strings::new(self.area.clone(), 0));
            (std::mem::take(&mut j.patches), bytes)
        };
        patches.sort_unstable();
        std::fs::create_dir_all(&self.dir.path)
            .map_err(|e| format!("{}: {e}", self.dir.path.display()))?;
        let token = format!(
            "{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        );
        let docs_name = format!("docs-{token}.bin");
        let ids_name = format!("ids-{token}.bin");
        let docs_path = self.dir.path.join(&docs_name);
        let err = |e: std::io::Error| e.to_string();
        let out = std::fs::File::create(&docs_path).map_err(err)?;
        let mut writer = RecordWriter::new(out);
        let mut reader = RecordReader::new(file, 0).map_err(err)?;
        let mut pairs: Vec<(u64, i64)> = Vec::new();
        while let Some(raw) = reader.next_raw().map_err(err)? {
            let h = raw.hash;
            let from = patches.partition_point(|p| p.0 < h);
            let newer: Vec<(i64, u64)> = patches[from..]
                .iter()
                .take_while(|p| p.0 == h)
                .filter(|p| p.1 > raw.version)
                .map(|p| (p.1, p.2))
                .collect();
            let raw = if newer.is_empty() {
                raw
            } else {
                let mut doc = raw.doc().map_err(err)?;
                let id = doc
                    .get(&c.id_field)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                for (pv, at) in newer {
                    let patch: (String, Vec<(String, Value)>) =
                        serde_json::from_slice(&bytes.get(at).map_err(err)?)
                            .map_err(|e| e.to_string())?;
                    if patch.0 != id {
                        continue;
                    }
                    for (f, val) in patch.1 {
                        if self.fields.binary_search(&f).is_err() {
                            continue;
                        }
                        if val.is_null() {
                            doc.remove(&f);
                        } else {
                            doc.insert(f, val);
                        }
                    }
                    doc.insert(c.version_field.clone(), Value::from(pv));
                }
                Raw::of(&doc, &c.id_field, &c.version_field, self.seed())
            };
            writer.push(&raw).map_err(err)?;
            pairs.push((raw.hash, raw.version));
        }
        let out = writer.finish().map_err(err)?;
        out.sync_all().map_err(err)?;
        pairs.sort_unstable();
        if pairs.windows(2).any(|w| w[0].0 == w[1].0) {
            // Two ids with one hash: the state could not tell them apart.
            let _ = std::fs::remove_file(&docs_path);
            return Ok(false);
        }
        Ids::write(&self.dir.path.join(&ids_name), &pairs).map_err(err)?;
        let mark0 = *self.mark0.lock().expect("mark");
        let old_mark = self.meta.lock().expect("meta").as_ref().map(|m| m.mark);
        // Never back: the newest pages may have gone since the old mark.
        let mut mark = match (mark0, old_mark) {
            (Some(a), Some(b)) => a.max(b),
            (a, b) => a.or(b).unwrap_or(i64::MIN),
        };
        if written > 0 && c.visible_after_commit {
            // Move the mark past the run's own writes when they are all that is above it.
            let lo = mark.saturating_sub(window_versions(c.window_ms));
            let above = c.filter.clone().and(Filter::Range {
                field: c.version_field.clone(),
                lo: Some(lo.to_string()),
                hi: None,
            });
            let mut read = 0;
            let expected = pairs.iter().filter(|p| p.1 >= lo).count();
            let (mut seen, mut same, mut max) = (0usize, true, None::<i64>);
            let looked = self
                .for_versions(above, &mut read, |id, v| {
                    let h = self.hash(id);
                    seen += 1;
                    max = max.max(Some(v));
                    same = pairs
                        .binary_search_by(|p| p.0.cmp(&h))
                        .is_ok_and(|i| pairs[i].1 == v);
                    same
                })
                .await;
            match looked {
                Ok(()) if same && seen == expected => {
                    if let Some(max) = max {
                        mark = mark.max(max);
                    }
                }
                Ok(()) => debug!("documents changed during the run; the mark stays"),
                Err(e) => debug!("the mark stays: {e}"),
            }
            self.summary.lock().expect("summary").versions_read += read;
        }
        // The ranges where deletions are looked for, from the versions in order.
        let count = pairs.len() as u64;
        pairs.sort_unstable_by_key(|p| p.1);
        let buckets = state::buckets_by(pairs.len(), |i| pairs[i].1, BUCKETS);
        drop(pairs);
        let meta = Meta {
            format: state::FORMAT,
            target: c.target.clone(),
            filter: c.filter_text.clone(),
            fields: self.fields.clone(),
            digest: c.digest.clone(),
            mark,
            count,
            settled: true,
            buckets,
            seed: self.seed(),
            docs: docs_name,
            ids: ids_name,
            dimensions,
        };
        self.dir.commit(&meta).map_err(err)?;
        Ok(true)
    }
}

/// The documents of a kept change state, as the run that kept it left them, when the state in
/// `dir` is of `target` and `filter` and holds every one of `needed`: serve builds its prediction
/// index again from them after a run instead of reading the index.
pub fn kept_docs(
    dir: &std::path::Path,
    target: &str,
    filter: Option<&str>,
    needed: &[String],
) -> Option<KeptDocs> {
    let d = Dir {
        path: dir.to_path_buf(),
    };
    let meta = d.load().ok().flatten()?;
    let fits = meta.target == target
        && meta.filter.as_deref() == filter
        && needed.iter().all(|f| meta.fields.binary_search(f).is_ok());
    if !fits {
        return None;
    }
    let file = std::fs::File::open(dir.join(&meta.docs)).ok()?;
    Some(KeptDocs {
        reader: RecordReader::new(file, 0).ok()?,
        mark: meta.mark,
        count: meta.count,
    })
}

/// The documents of a kept change state ([`kept_docs`]), in id order.
pub struct KeptDocs {
    reader: RecordReader,
    /// The state's mark: an index whose highest version is at most this, with `count` documents,
    /// is as the state has it (within the change window).
    pub mark: i64,
    /// The documents in the state.
    pub count: u64,
}

impl Iterator for KeptDocs {
    type Item = std::io::Result<Doc>;

    fn next(&mut self) -> Option<Self::Item> {
        self.reader
            .next_raw()
            .and_then(|r| r.map(|r| r.doc()).transpose())
            .transpose()
    }
}

/// `doc` with only `fields` (and the id).
fn project(mut doc: Doc, fields: &[String], id_field: &str) -> Doc {
    doc.retain(|k, _| k == id_field || fields.iter().any(|f| f == k));
    doc
}

#[async_trait]
impl Store for ChangeStore {
    async fn read_page(&self, query: &ReadQuery, cursor: Option<&str>) -> Result<Page, StoreError> {
        let view = self.view.lock().expect("view").clone();
        let light = self.is_light_read(query);
        if let Some(view) = view.filter(|_| self.servable(query)) {
            let (page, kept) = self
                .serve(&view, query, cursor, light)
                .map_err(|e| StoreError::io("cannot read the change state", e))?;
            self.summary.lock().expect("summary").served += page.docs.len() as u64;
            if light {
                self.capture(cursor.is_none(), kept, page.next.is_none());
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
        let kept: Vec<(String, Raw)> = page
            .docs
            .iter()
            .map(|d| {
                let id = d.get(&c.id_field).and_then(Value::as_str).unwrap_or("");
                let doc = project(d.clone(), &self.fields, &c.id_field);
                (
                    id.to_owned(),
                    Raw::of(&doc, &c.id_field, &c.version_field, self.seed()),
                )
            })
            .collect();
        self.capture(cursor.is_none(), kept, page.next.is_none());
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
        self.inner.commit(mode).await
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
