//! After a run: the last light read ⊕ the run's writes become the new state, and the mark moves
//! past the run's own writes when it can.

use serde_json::Value;
use tracing::{debug, warn};

use std::sync::Arc;

use super::body;
use super::state::{self, Dir, Ids, Meta, Raw, RecordReader, RecordWriter};
use super::view::Merged;
use super::{window_versions, ChangeStore, DeltaFields, View, BUCKETS};
use crate::spill::Strings;
use crate::store::{CommitMode, Doc, Fingerprint, StoreError};

/// The next state's files as [`ChangeStore::merge`] left them, before the mark moves and the
/// state's `meta.json` names them.
pub(super) struct Merge {
    docs_name: String,
    ids_name: String,
    /// Every document's `(id hash, version)`, sorted by hash.
    pairs: Vec<(u64, i64)>,
    delta: Option<state::DeltaMeta>,
    /// Records kept with a derived part, and the tag they were derived under.
    with_derived: u64,
    tag: u64,
    /// The documents file's sync to disk.
    docs_synced: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Merge {
    /// Removes the files of a state that is not kept (a run that failed after them) from the
    /// state's folder `dir`.
    pub(super) fn discard(self, dir: &std::path::Path) {
        let delta = self.delta.map(|d| d.file);
        for name in [Some(self.docs_name), Some(self.ids_name), delta]
            .into_iter()
            .flatten()
        {
            let _ = std::fs::remove_file(dir.join(name));
        }
    }
}

/// Which of a set of id hashes may be in it, by one bit per slot of the hash's top bits: a record
/// the run did not write (most of them) is passed over without a search of the run's writes.
struct HashFilter {
    bits: Vec<u64>,
    shift: u32,
}

impl HashFilter {
    /// `n` hashes, 16 slots each (at least 4,096): one record in 16 or fewer searched in vain.
    fn of(n: usize, hashes: impl IntoIterator<Item = u64>) -> Self {
        let slots = (n * 16).max(4096).next_power_of_two();
        let mut f = HashFilter {
            bits: vec![0; slots / 64],
            shift: 64 - slots.trailing_zeros(),
        };
        for h in hashes {
            let i = (h >> f.shift) as usize;
            f.bits[i / 64] |= 1 << (i % 64);
        }
        f
    }

    fn may_hold(&self, h: u64) -> bool {
        let i = (h >> self.shift) as usize;
        self.bits[i / 64] & (1 << (i % 64)) != 0
    }
}

/// The next state's documents, in id order: the last light read as the run kept it, or the view
/// the whole of it was served from.
enum Records<'v> {
    File(RecordReader),
    View(Box<Merged<'v>>),
}

impl Records<'_> {
    /// The next record, and whether it is a changed document's rather than the old state's.
    fn next_raw(&mut self) -> std::io::Result<Option<(Raw, bool)>> {
        match self {
            Records::File(r) => Ok(r.next_raw()?.map(|raw| (raw, false))),
            Records::View(m) => m.next_raw_from(),
        }
    }
}

/// The documents a run changed against the state before it, written as the next state is (see
/// [`state::DeltaMeta`]): the old copies to the delta file, the new ones to a file beside it,
/// appended at the end. Given up past [`Delta::MAX`] documents.
struct Delta {
    /// What it keeps of each page (`None`: every field).
    keeps: Option<DeltaFields>,
    path: std::path::PathBuf,
    old: std::io::BufWriter<std::fs::File>,
    new_path: std::path::PathBuf,
    new: std::io::BufWriter<std::fs::File>,
    docs: usize,
}

impl Delta {
    /// The most documents a delta holds (old and new copies, so about 100,000 changed pages):
    /// past them, serve builds its prediction index again, which then costs less than applying
    /// the change.
    const MAX: usize = 200_000;

    fn new(path: std::path::PathBuf, keeps: Option<DeltaFields>) -> std::io::Result<Self> {
        let new_path = path.with_extension("new");
        Ok(Delta {
            keeps,
            old: std::io::BufWriter::new(std::fs::File::create(&path)?),
            // Read back at the end.
            new: std::io::BufWriter::new(
                std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(&new_path)?,
            ),
            path,
            new_path,
            docs: 0,
        })
    }

    fn push(&mut self, old: bool, doc: &Doc) -> std::io::Result<()> {
        use std::io::Write;
        self.docs += 1;
        let (key, out) = match old {
            true => ("old", &mut self.old),
            false => ("new", &mut self.new),
        };
        let kept = self.keeps.as_ref().map(|k| k.project(doc));
        let doc = kept.as_ref().unwrap_or(doc);
        serde_json::to_writer(&mut *out, &serde_json::json!({ key: doc }))?;
        out.write_all(b"\n")
    }

    /// The old copies, then the new ones, in one file; on an error, neither.
    fn finish(self) -> std::io::Result<()> {
        use std::io::Seek;
        let joined = (|| {
            let mut new = self.new.into_inner().map_err(|e| e.into_error())?;
            let mut old = self.old.into_inner().map_err(|e| e.into_error())?;
            new.rewind()?;
            std::io::copy(&mut new, &mut old)?;
            old.sync_all()
        })();
        let _ = std::fs::remove_file(&self.new_path);
        if joined.is_err() {
            let _ = std::fs::remove_file(&self.path);
        }
        joined
    }

    /// Removes its files: no delta.
    fn discard(self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = std::fs::remove_file(&self.new_path);
    }
}

impl ChangeStore {
    /// The highest of `pairs`' versions when the index's versions are exactly theirs (by Solr's
    /// index fingerprint: how many, the sum of a hash of each, the highest); `None` when they
    /// differ or the store cannot say.
    async fn fingerprinted(&self, pairs: &[(u64, i64)]) -> Option<i64> {
        let ours = Fingerprint::of(pairs.iter().map(|p| p.1));
        match self.inner.fingerprint(i64::MAX).await {
            Ok(Some(theirs)) if theirs == ours => Some(ours.max_seen),
            Ok(Some(theirs)) => {
                debug!(?theirs, ?ours, "the index's fingerprint is not the state's");
                None
            }
            Ok(None) => None,
            Err(e) => {
                debug!("no index fingerprint: {e}");
                None
            }
        }
    }

    /// Solr's commit at the end of a run, with the next state's files merged beside it ([`merge`]
    /// needs nothing from the index): the worker's last step overlaps Solr's. Only for a commit
    /// Solr makes then (`hard`, `soft`) on a runtime with workers; otherwise (a run that wrote
    /// nothing, `--commit none` or `within:MS`, a runtime of one thread) [`finish`] merges.
    ///
    /// [`merge`]: ChangeStore::merge
    /// [`finish`]: ChangeStore::finish
    pub(super) async fn commit_beside(&self, mode: CommitMode) -> Result<(), StoreError> {
        let settled = self.settled();
        let threads = tokio::runtime::Handle::current().runtime_flavor()
            == tokio::runtime::RuntimeFlavor::MultiThread;
        let commits = matches!(mode, CommitMode::Hard | CommitMode::Soft);
        if !self.cfg.writes || settled || !threads || !commits {
            return self.inner.commit(mode).await;
        }
        let inner = self.inner.clone();
        let commit = tokio::spawn(async move { inner.commit(mode).await });
        let t = std::time::Instant::now();
        // This thread merges (out of the runtime's hands meanwhile); a worker takes the commit.
        let merged = tokio::task::block_in_place(|| self.merge());
        self.summary.lock().expect("summary").merge_ms = Some(t.elapsed().as_millis() as u64);
        *self.premerged.lock().expect("premerged") = Some(merged);
        match commit.await {
            Ok(done) => done,
            Err(e) => match e.try_into_panic() {
                Ok(panic) => std::panic::resume_unwind(panic),
                Err(e) => Err(StoreError::io(
                    "the commit did not finish",
                    std::io::Error::other(e),
                )),
            },
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
            if let Some(Ok(Some(m))) = self.premerged.lock().expect("premerged").take() {
                m.discard(&self.dir.path);
            }
            return Ok(false);
        }
        let c = &self.cfg;
        if self.settled() {
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
                if m > meta.mark && meta.below_mark.is_some_and(|b| b.versions != meta.count) {
                    // The state holds versions above the old mark (the writes of a run whose
                    // mark stayed), which come below the new one: the index holds the state's
                    // versions (nothing changed), so the fingerprint is the state's at the new mark.
                    meta.below_mark = Ids::open(&self.dir.path.join(&meta.ids))
                        .and_then(|ids| ids.all())
                        .ok()
                        .map(|pairs| state::BelowMark::of(&pairs, m));
                }
                meta.mark = meta.mark.max(m);
            }
            self.dir.commit(&meta).map_err(|e| e.to_string())?;
            return Ok(true);
        }
        let premerged = self.premerged.lock().expect("premerged").take();
        let Some(Merge {
            docs_name,
            ids_name,
            mut pairs,
            delta,
            with_derived,
            tag,
            docs_synced,
        }) = premerged.unwrap_or_else(|| self.merge())?
        else {
            return Ok(false);
        };
        let err = |e: std::io::Error| e.to_string();
        let mark0 = *self.mark0.lock().expect("mark");
        let old_mark = self.meta.lock().expect("meta").as_ref().map(|m| m.mark);
        // Never back: the newest pages may have gone since the old mark.
        let mut mark = match (mark0, old_mark) {
            (Some(a), Some(b)) => a.max(b),
            (a, b) => a.or(b).unwrap_or(i64::MIN),
        };
        // When the whole index holds exactly the new state's versions (Solr's index fingerprint,
        // one request), nothing but the run's own writes is above the old mark: the mark moves
        // past them without reading them (a run that refreshes the counts of big groups writes
        // tens of thousands).
        let whole = match written > 0 && c.visible_after_commit && self.fingerprints() {
            true => self.fingerprinted(&pairs).await,
            false => None,
        };
        if let Some(max) = whole {
            mark = mark.max(max);
            self.summary.lock().expect("summary").fingerprint = true;
        } else if written > 0 && c.visible_after_commit {
            // Move the mark past the run's own writes when they are all that is above it.
            let lo = mark.saturating_sub(window_versions(c.window_ms));
            let above = self.versions_within(lo, None);
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
            let mut summary = self.summary.lock().expect("summary");
            summary.versions_read += read;
            summary.versions_verified += read;
        }
        // Only where the next run can ask the index for its own.
        let below_mark = self
            .fingerprints()
            .then(|| state::BelowMark::of(&pairs, mark));
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
            derived: if with_derived > 0 { tag } else { 0 },
            delta,
            below_mark,
        };
        docs_synced
            .await
            .map_err(|e| format!("syncing the state's documents: {e}"))?
            .map_err(err)?;
        self.dir.commit(&meta).map_err(err)?;
        Ok(true)
    }

    /// The next state's files, from the last light read and the run's writes: everything of the
    /// state that needs no answer from the index (`None`: no state can be kept). Done while Solr
    /// commits ([`ChangeStore::commit_beside`]) or else when the run finishes; the files are
    /// named by the state only once its `meta.json` is put in place.
    pub(super) fn merge(&self) -> Result<Option<Merge>, String> {
        let c = &self.cfg;
        let cap = std::mem::take(&mut *self.capture.lock().expect("capture"));
        let err = |e: std::io::Error| e.to_string();
        // The last light read: kept as it went by, or served whole from the view (which the merge
        // borrows).
        let merged_view: Arc<View>;
        let mut reader = match (cap.done, cap.view, cap.view_done, cap.failed, cap.sorted) {
            (Some(file), None, _, false, true) => {
                Records::File(RecordReader::new(file, 0).map_err(err)?)
            }
            (None, Some(view), true, false, true) => {
                merged_view = view;
                let mut merged = Merged::new(self, &merged_view).map_err(err)?;
                merged.dropped = Some(Vec::new());
                Records::View(Box::new(merged))
            }
            _ => {
                if !cap.sorted {
                    warn!("the light read was not in id order; no change state is kept");
                }
                return Ok(None);
            }
        };
        // What the reader derived from the documents it was served, when the read was the view.
        let sink = std::mem::take(&mut *self.sink.lock().expect("sink"));
        // The tag the run derives under; the state's parts under it stay with the records that
        // stay as they were.
        let tag = self
            .derived_wanted
            .lock()
            .expect("derived")
            .as_ref()
            .map_or(0, |w| w.0);
        let reused =
            tag != 0 && self.meta.lock().expect("meta").as_ref().map(|m| m.derived) == Some(tag);
        // The id at the front of every record the merge writes, and next to it the field a run
        // that found its changes from versions is served with each page's derived part (the
        // URL; a `--full` run asks for none): see `body::led`. A state of an older build is put
        // so by its first such merge; records in order already are copied as they are.
        let url = self
            .derived_wanted
            .lock()
            .expect("derived")
            .as_ref()
            .map(|w| w.1.clone());
        let lead: Vec<usize> = std::iter::once(c.id_field.as_str())
            .chain(url.as_deref().filter(|u| *u != c.id_field))
            .filter_map(|name| self.fields.binary_search_by(|f| f.as_str().cmp(name)).ok())
            .collect();
        let mut derived = match &reader {
            Records::View(_) if sink.tag == 0 || sink.tag == tag => sink.finish().map_err(err)?,
            _ => None,
        };
        let mut with_derived = 0u64;
        let (mut patches, bytes) = {
            let mut j = self.journal.lock().expect("journal");
            if !j.complete {
                return Err("some writes came back without their new version".to_owned());
            }
            let bytes = std::mem::replace(&mut j.bytes, Strings::new(self.area.clone(), 0));
            (std::mem::take(&mut j.patches), bytes)
        };
        patches.sort_unstable();
        let patched = HashFilter::of(patches.len(), patches.iter().map(|p| p.0));
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
        let out = std::fs::File::create(&docs_path).map_err(err)?;
        let mut writer = RecordWriter::new(out);
        let mut pairs: Vec<(u64, i64)> = Vec::new();
        // What changed, when the old state is what the run read: its delta.
        let delta_file = format!("delta-{token}.jsonl");
        let mut delta = match reader {
            Records::View(_) => Delta::new(self.dir.path.join(&delta_file), self.cfg.delta.clone())
                .inspect_err(|e| warn!("the state's delta is not kept: {e}"))
                .ok(),
            Records::File(_) => None,
        };
        let delta_push = |delta: &mut Option<Delta>, old: bool, doc: &Doc| {
            let Some(d) = delta else {
                return;
            };
            if d.docs >= Delta::MAX || d.push(old, doc).is_err() {
                if let Some(d) = delta.take() {
                    d.discard();
                }
            }
        };
        while let Some((raw, changed)) = reader.next_raw().map_err(err)? {
            if let Records::View(m) = &mut reader {
                for doc in m.dropped.as_mut().map(std::mem::take).unwrap_or_default() {
                    delta_push(&mut delta, true, &doc);
                }
                if m.dropped_lost {
                    // Old copies missed: no delta.
                    if let Some(d) = delta.take() {
                        d.discard();
                    }
                }
                if delta.is_none() {
                    // No delta (any more): the left-out records need not be decoded.
                    m.dropped = None;
                }
            }
            let h = raw.hash;
            let newer: Vec<(i64, u64)> = if patched.may_hold(h) {
                let from = patches.partition_point(|p| p.0 < h);
                patches[from..]
                    .iter()
                    .take_while(|p| p.0 == h)
                    .filter(|p| p.1 > raw.version)
                    .map(|p| (p.1, p.2))
                    .collect()
            } else {
                Vec::new()
            };
            let kept = match derived.as_mut() {
                Some(d) => d.take(h, raw.version, newer.is_empty()).map_err(err)?,
                None => None,
            };
            let raw = if newer.is_empty() {
                let part = match (&kept, &derived) {
                    (Some(k), _) => Some(k.as_slice()),
                    // Served with its part, as it still is.
                    (None, Some(_)) if reused => raw.derived(),
                    _ => None,
                };
                with_derived += u64::from(part.is_some());
                if delta.is_some() && changed {
                    delta_push(&mut delta, false, &raw.doc(&self.fields).map_err(err)?);
                }
                let body = raw.fields_body();
                let led = body::led(body, &self.fields, &lead);
                writer
                    .push_parts(h, raw.version, part, led.as_deref().unwrap_or(body))
                    .map_err(err)?;
                pairs.push((raw.hash, raw.version));
                continue;
            } else {
                let mut doc = raw.doc(&self.fields).map_err(err)?;
                // Written by the run: the old state's copy (a page changed since came with the
                // ones left out, and goes with them).
                let before = (!changed && delta.is_some()).then(|| match &self.cfg.delta {
                    Some(k) => k.project(&doc),
                    None => doc.clone(),
                });
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
                match (&before, &self.cfg.delta) {
                    // A write its reader does not see (a count of a group that stays a group):
                    // neither copy.
                    (Some(b), Some(k)) if k.alike(b, &doc) => {}
                    (Some(b), _) => {
                        delta_push(&mut delta, true, b);
                        delta_push(&mut delta, false, &doc);
                    }
                    (None, _) => delta_push(&mut delta, false, &doc),
                }
                Raw::of(
                    &doc,
                    &self.fields,
                    &c.id_field,
                    &c.version_field,
                    self.seed(),
                )
                .map_err(err)?
            };
            match body::led(&raw.body, &self.fields, &lead) {
                Some(body) => writer.push_parts(raw.hash, raw.version, None, &body),
                None => writer.push(&raw),
            }
            .map_err(err)?;
            pairs.push((raw.hash, raw.version));
        }
        if let Records::View(m) = &reader {
            // The whole state was read, or it was not the state the run began from.
            let count = self.meta.lock().expect("meta").as_ref().map(|m| m.count);
            if count != Some(m.base_read) {
                let _ = std::fs::remove_file(&docs_path);
                return Err(format!(
                    "the state held {} documents, {count:?} expected",
                    m.base_read
                ));
            }
        }
        let out = writer.finish().map_err(err)?;
        // On disk before the state is committed; meanwhile the delta is finished and the mark
        // moved (a read of Solr).
        let docs_synced = tokio::task::spawn_blocking(move || out.sync_all());
        // The delta against the state the run began from, unless it grew too large.
        if let Records::View(m) = &mut reader {
            for doc in m.dropped.as_mut().map(std::mem::take).unwrap_or_default() {
                delta_push(&mut delta, true, &doc);
            }
            if m.dropped_lost {
                if let Some(d) = delta.take() {
                    d.discard();
                }
            }
        }
        let from = self
            .meta
            .lock()
            .expect("meta")
            .as_ref()
            .map(|m| m.docs.clone());
        let delta = match (delta, from) {
            (Some(d), Some(from)) => match d.finish() {
                Ok(()) => Some(state::DeltaMeta {
                    file: delta_file,
                    from,
                    fields: self.cfg.delta.as_ref().map(|k| sorted(&k.fields)),
                    above_one: self
                        .cfg
                        .delta
                        .as_ref()
                        .map(|k| sorted(&k.above_one))
                        .unwrap_or_default(),
                }),
                Err(e) => {
                    warn!("the state's delta is not kept: {e}");
                    None
                }
            },
            (Some(d), None) => {
                d.discard();
                None
            }
            (None, _) => None,
        };
        pairs.sort_unstable();
        if pairs.windows(2).any(|w| w[0].0 == w[1].0) {
            // Two ids with one hash: the state could not tell them apart.
            let _ = std::fs::remove_file(&docs_path);
            return Ok(None);
        }
        Ids::write(&self.dir.path.join(&ids_name), &pairs).map_err(err)?;
        Ok(Some(Merge {
            docs_name,
            ids_name,
            pairs,
            delta,
            with_derived,
            tag,
            docs_synced,
        }))
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
        fields: meta.fields,
        docs: meta.docs,
    })
}

/// The documents the run that kept the state in `dir` changed against the state whose documents
/// file was `from` (see [`kept_docs`]'s `docs`), when that run wrote its delta: first the old
/// copies (`true`), then the new ones. `None`: another state, or no delta.
pub fn kept_delta(
    dir: &std::path::Path,
    target: &str,
    filter: Option<&str>,
    needed: &DeltaFields,
    from: &str,
) -> Option<KeptDelta> {
    let d = Dir {
        path: dir.to_path_buf(),
    };
    let meta = d.load().ok().flatten()?;
    let fields = &needed.fields;
    let fits = meta.target == target
        && meta.filter.as_deref() == filter
        && fields.iter().all(|f| meta.fields.binary_search(f).is_ok());
    let delta = meta.delta.filter(|d| {
        fits && d.from == from
            && d.fields
                .as_ref()
                .is_none_or(|kept| fields.iter().all(|f| kept.binary_search(f).is_ok()))
            // A field the run compared only as "more than one" is one the reader reads so.
            && d
                .above_one
                .iter()
                .all(|f| !fields.contains(f) || needed.above_one.contains(f))
    })?;
    let file = std::fs::File::open(dir.join(&delta.file)).ok()?;
    Some(KeptDelta {
        lines: std::io::BufRead::lines(std::io::BufReader::new(file)),
        mark: meta.mark,
        count: meta.count,
        docs: meta.docs,
    })
}

/// A kept state's delta ([`kept_delta`]).
pub struct KeptDelta {
    lines: std::io::Lines<std::io::BufReader<std::fs::File>>,
    /// As [`KeptDocs::mark`].
    pub mark: i64,
    /// As [`KeptDocs::count`].
    pub count: u64,
    /// As [`KeptDocs::docs`].
    pub docs: String,
}

impl Iterator for KeptDelta {
    /// A document, and whether it is an old copy (else a new one).
    type Item = std::io::Result<(bool, Doc)>;

    fn next(&mut self) -> Option<Self::Item> {
        let line = match self.lines.next()? {
            Ok(line) => line,
            Err(e) => return Some(Err(e)),
        };
        let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, "a damaged delta line");
        let entry: serde_json::Map<String, Value> = match serde_json::from_str(&line) {
            Ok(e) => e,
            Err(_) => return Some(Err(bad())),
        };
        Some(match entry.into_iter().next() {
            Some((key, Value::Object(doc))) if key == "old" || key == "new" => {
                Ok((key == "old", doc))
            }
            _ => Err(bad()),
        })
    }
}

/// The documents of a kept change state ([`kept_docs`]), in id order.
pub struct KeptDocs {
    reader: RecordReader,
    /// The state's mark: an index whose highest version is at most this, with `count` documents,
    /// is as the state has it (within the change window).
    pub mark: i64,
    /// The documents in the state.
    pub count: u64,
    /// The fields its records hold.
    fields: Vec<String>,
    /// Its documents file's name: what a later state's delta goes from ([`kept_delta`]).
    pub docs: String,
}

impl Iterator for KeptDocs {
    type Item = std::io::Result<Doc>;

    fn next(&mut self) -> Option<Self::Item> {
        self.reader
            .next_raw()
            .and_then(|r| r.map(|r| r.doc(&self.fields)).transpose())
            .transpose()
    }
}

fn sorted(names: &[String]) -> Vec<String> {
    let mut names = names.to_vec();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::HashFilter;

    fn hash(i: u64) -> u64 {
        xxhash_rust::xxh3::xxh3_64(&i.to_le_bytes())
    }

    #[test]
    fn the_hash_filter_holds_every_hash_it_was_given_and_few_others() {
        for n in [0u64, 1, 255, 10_000] {
            let f = HashFilter::of(n as usize, (0..n).map(hash));
            assert!((0..n).all(|i| f.may_hold(hash(i))), "{n} hashes");
            // Of 100,000 others, about one in 16 (with at least 4,096 slots, fewer) searched.
            let vain = (n..n + 100_000).filter(|&i| f.may_hold(hash(i))).count();
            assert!(
                vain < 100_000 / 10,
                "{n} hashes: {vain} of 100,000 others held"
            );
        }
        // The lowest and highest hashes land in the first and last slots.
        let f = HashFilter::of(2, [0, u64::MAX]);
        assert!(f.may_hold(0) && f.may_hold(u64::MAX) && !f.may_hold(1 << 63));
    }
}
