//! Before a run: what changed since the state, from versions and counts (see the module doc of
//! [`super`]).

use std::cell::{Cell, OnceCell};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use serde_json::Value;
use tracing::{debug, info};

use super::state::{Ids, Meta};
use std::sync::Arc;

use super::{window_versions, ChangeStore, Prepared, View};
use crate::store::{Filter, ReadQuery, StoreError};

impl ChangeStore {
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
        // The id file is read when a version must be looked up in it: a settled index whose
        // fingerprint agrees needs none, so a damaged id file goes unnoticed until a document
        // changes (then the run reads everything, as before).
        let ids_path = self.dir.path.join(&meta.ids);
        let ids_cell: OnceCell<Ids> = OnceCell::new();
        let io = |e: std::io::Error| StoreError::io("cannot read the change state", e);

        // New and re-indexed: the versions above the mark, and those of the change window below
        // it unless Solr's index fingerprint up to the mark (asked beside the read above it) is
        // the state's: then nothing at or below the mark changed, neither a version applied late
        // nor a deletion, and the window (where the last run's own writes are) is not read.
        let lo = meta.mark.saturating_sub(window_versions(c.window_ms));
        let mut changed: Vec<String> = Vec::new();
        // Re-indexed: id hash → the version the state holds.
        let mut moved: HashMap<u64, i64> = HashMap::new();
        // The version each changed document has now.
        let mut now_versions: Vec<i64> = Vec::new();
        let mut new = 0u64;
        let mut read = 0u64;
        let mut stop: Option<String> = None;
        let mut failed: Option<std::io::Error> = None;
        let max_changed = c.max_changed;
        // Set when `each` stopped the read for good (`stop` or `failed` says why).
        let halted = Cell::new(false);
        let mut each = |id: &str, v: i64| {
            if halted.get() {
                return false;
            }
            let h = self.hash(id);
            let ids = match lazy_ids(&ids_cell, &ids_path) {
                Ok(ids) => ids,
                Err(e) => {
                    stop = Some(format!("the state cannot be read ({e})"));
                    halted.set(true);
                    return false;
                }
            };
            match ids.find(h) {
                Err(e) => {
                    failed = Some(e);
                    halted.set(true);
                    return false;
                }
                Ok(Some(sv)) if sv == v => {}
                Ok(Some(sv)) if v < sv => {
                    stop = Some(format!(
                        "document {id} has an older version than the state's (restored or rolled back)"
                    ));
                    halted.set(true);
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
                halted.set(true);
                return false;
            }
            true
        };
        let same_below_mark = match meta.below_mark.filter(|_| self.fingerprints()) {
            Some(ours) => {
                let above = self.versions_within(meta.mark.saturating_add(1), None);
                let (print, looked) = tokio::join!(
                    self.inner.fingerprint(meta.mark),
                    self.for_versions(above, &mut read, &mut each)
                );
                looked?;
                // Solr's fingerprint counts what is indexed and not yet committed too: a change
                // that searches do not see yet makes it differ, and the window is read.
                let same = match print {
                    Ok(Some(theirs)) => {
                        let same = theirs.versions == ours.versions && theirs.hash == ours.hash;
                        if !same {
                            debug!(
                                ?theirs,
                                ?ours,
                                "the index's fingerprint up to the mark is not the state's"
                            );
                        }
                        same
                    }
                    Ok(None) => false,
                    Err(e) => {
                        debug!("no index fingerprint: {e}");
                        false
                    }
                };
                if !same && !halted.get() {
                    let window = self.versions_within(lo, Some(meta.mark));
                    self.for_versions(window, &mut read, &mut each).await?;
                }
                same
            }
            None => {
                let above = self.versions_within(lo, None);
                self.for_versions(above, &mut read, &mut each).await?;
                false
            }
        };
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
        // Meanwhile the changed documents are read, light, by id (two requests in flight: Solr
        // reads the stored fields of one while the other comes in).
        let max = self.inner.max_lookup_values().max(1);
        let chunks: Vec<&[String]> = changed.chunks(max).collect();
        let overlay_read = async {
            let mut overlay = BTreeMap::new();
            let mut changed_read = 0u64;
            for pair in chunks.chunks(2) {
                let (a, b) = tokio::join!(self.read_changed(pair[0]), async {
                    match pair.get(1) {
                        Some(chunk) => self.read_changed(chunk).await,
                        None => Ok(Vec::new()),
                    }
                });
                for doc in a?.into_iter().chain(b?) {
                    changed_read += 1;
                    if let Some(id) = doc.get(&c.id_field).and_then(Value::as_str) {
                        overlay.insert(id.to_owned(), doc);
                    }
                }
            }
            Ok::<_, StoreError>((overlay, changed_read))
        };
        // Either side that ends the run's use of the state stops the other (`try_join!`): a
        // full scan needs neither the changed documents nor the rest of the deletions.
        enum Stop {
            Full(String),
            Store(StoreError),
        }
        let deleted_read = async {
            if same_below_mark && deleted == 0 {
                // Every document at or below the mark is there, and the totals agree above it.
                return Ok(HashSet::new());
            }
            let ids = lazy_ids(&ids_cell, &ids_path)
                .map_err(|e| Stop::Full(format!("the state cannot be read ({e})")))?;
            match self
                .find_deleted(&meta, ids, &moved, &now_versions, deleted as u64, &mut read)
                .await
            {
                Ok(Ok(found)) => Ok(found),
                Ok(Err(why)) => Err(Stop::Full(why)),
                Err(e) => Err(Stop::Store(e)),
            }
        };
        let joined = tokio::try_join!(deleted_read, async {
            overlay_read.await.map_err(Stop::Store)
        });
        self.summary.lock().expect("summary").versions_read += read;
        let (mut gone, (overlay, changed_read)) = match joined {
            Ok(both) => both,
            Err(Stop::Full(why)) => return Ok(self.full_scan(why)),
            Err(Stop::Store(e)) => return Err(e),
        };
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
            s.unchanged_below_mark = same_below_mark;
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

    /// The light fields of the documents of `ids` (of the run's filter) that are there.
    async fn read_changed(&self, ids: &[String]) -> Result<Vec<crate::store::Doc>, StoreError> {
        let c = &self.cfg;
        let query = ReadQuery {
            filter: c
                .filter
                .clone()
                .and(Filter::any_of(c.id_field.clone(), ids.to_vec())),
            fields: self.fields.clone(),
            rows: c.batch.max(1),
        };
        let mut docs = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = self.inner.read_page(&query, cursor.as_deref()).await?;
            docs.extend(page.docs);
            match page.next {
                Some(n) => cursor = Some(n),
                None => return Ok(docs),
            }
        }
    }

    /// Calls `each` with the `(id, version)` of every document of `filter`, read light, page by
    /// page (nothing is collected: a read of every version stays within memory); `each` returns
    /// `false` to stop reading.
    pub(super) async fn for_versions(
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
            let range = self.versions_within(lo, Some(hi));
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
}

/// The state's id file, opened (its block index read) on first use.
fn lazy_ids<'a>(cell: &'a OnceCell<Ids>, path: &Path) -> std::io::Result<&'a Ids> {
    if let Some(ids) = cell.get() {
        return Ok(ids);
    }
    let ids = Ids::open(path)?;
    Ok(cell.get_or_init(|| ids))
}
