//! After a run: the last light read ⊕ the run's writes become the new state, and the mark moves
//! past the run's own writes when it can.

use serde_json::Value;
use tracing::{debug, warn};

use std::sync::Arc;

use super::state::{self, Dir, Ids, Meta, Raw, RecordReader, RecordWriter};
use super::view::Merged;
use super::{window_versions, ChangeStore, View, BUCKETS};
use crate::spill::Strings;
use crate::store::Doc;

/// The next state's documents, in id order: the last light read as the run kept it, or the view
/// the whole of it was served from.
enum Records<'v> {
    File(RecordReader),
    View(Box<Merged<'v>>),
}

impl Records<'_> {
    fn next_raw(&mut self) -> std::io::Result<Option<Raw>> {
        match self {
            Records::File(r) => r.next_raw(),
            Records::View(m) => m.next_raw(),
        }
    }
}

impl ChangeStore {
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
                Records::View(Box::new(Merged::new(self, &merged_view).map_err(err)?))
            }
            _ => {
                if !cap.sorted {
                    warn!("the light read was not in id order; no change state is kept");
                }
                return Ok(false);
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
        while let Some(raw) = reader.next_raw().map_err(err)? {
            let h = raw.hash;
            let from = patches.partition_point(|p| p.0 < h);
            let newer: Vec<(i64, u64)> = patches[from..]
                .iter()
                .take_while(|p| p.0 == h)
                .filter(|p| p.1 > raw.version)
                .map(|p| (p.1, p.2))
                .collect();
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
                writer
                    .push_parts(h, raw.version, part, raw.fields_body())
                    .map_err(err)?;
                pairs.push((raw.hash, raw.version));
                continue;
            } else {
                let mut doc = raw.doc(&self.fields).map_err(err)?;
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
                Raw::of(
                    &doc,
                    &self.fields,
                    &c.id_field,
                    &c.version_field,
                    self.seed(),
                )
                .map_err(err)?
            };
            writer.push(&raw).map_err(err)?;
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
        fields: meta.fields,
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
    /// The fields its records hold.
    fields: Vec<String>,
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
