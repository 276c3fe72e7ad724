//! During a run: the light reads served from the state ⊕ the changed documents, and the last
//! light read kept for the next state.

use std::collections::btree_map;
use std::ops::Bound;
use std::os::fd::AsRawFd;
use std::sync::Arc;

use serde_json::Value;
use tracing::warn;

use super::state::{Raw, RecordReader, RecordWriter};
use super::{Capture, ChangeStore, View};
use crate::store::{Doc, Page, ReadQuery, Via};

impl ChangeStore {
    /// Whether `query` is the run's light read, or that read with the texts besides (a first run
    /// on a core without `/export`, `--full`): it is kept for the next state, and served from the
    /// state when it is the light read.
    pub(super) fn is_light_read(&self, query: &ReadQuery) -> bool {
        query.filter == self.cfg.filter
            && self
                .cfg
                .light_fields
                .iter()
                .all(|f| query.fields.contains(f))
    }

    /// Whether the state can serve `query`.
    pub(super) fn servable(&self, query: &ReadQuery) -> bool {
        query.filter == self.cfg.filter
            && query
                .fields
                .iter()
                .all(|f| self.fields.binary_search(f).is_ok())
    }

    /// One page of the state ⊕ the changes, from `cursor` (`OFFSET:LAST_ID`).
    pub(super) fn serve(
        &self,
        view: &View,
        query: &ReadQuery,
        cursor: Option<&str>,
    ) -> std::io::Result<Page> {
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
        // The state's fields the query reads (and the id).
        let wanted: Vec<bool> = self
            .fields
            .iter()
            .map(|f| *f == c.id_field || query.fields.contains(f))
            .collect();
        let rows = query.rows.max(1);
        let mut docs = Vec::with_capacity(rows);
        let mut last_id = last.unwrap_or_default();
        // The next base document neither deleted nor replaced: its offset, id and document.
        let mut pending: Option<(u64, String, Doc)> = None;
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
                        let doc = raw.doc_with(&self.fields, &wanted)?;
                        let id = doc
                            .get(&c.id_field)
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned();
                        // Replaced by its changed copy (the hash only says where to look).
                        if view.replaced.contains(&raw.hash) && view.overlay.contains_key(&id) {
                            continue;
                        }
                        pending = Some((at, id, doc));
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
                return Ok(page);
            }
            let take_over = match (&pending, over.peek()) {
                (None, None) => break,
                (Some(_), None) => false,
                (None, Some(_)) => true,
                (Some((_, b, _)), Some((o, _))) => o.as_str() < b.as_str(),
            };
            let (id, doc) = if take_over {
                let (id, d) = over.next().expect("peeked");
                (id.clone(), project(d.clone(), &query.fields, &c.id_field))
            } else {
                // Decoded with the query's fields only.
                let (_, id, doc) = pending.take().expect("a base document");
                (id, doc)
            };
            last_id = id;
            docs.push(doc);
        }
        Ok(Page {
            docs,
            next: None,
            via: Via::State,
        })
    }

    /// Notes that a page of the light read was served from `view`: when the whole read was, the
    /// next state is the view itself ([`Merged`]), not a copy written as the run goes.
    pub(super) fn capture_view(&self, first: bool, view: &Arc<View>, last_page: bool) {
        let mut cap = self.capture.lock().expect("capture");
        if first {
            *cap = Capture {
                sorted: true,
                view: Some(view.clone()),
                ..Capture::default()
            };
        }
        if cap.view.is_none() {
            // A read that began from Solr: not the view's.
            cap.failed = true;
        }
        if last_page {
            cap.view_done = true;
        }
    }

    /// Keeps a page of the light read for the next state.
    pub(super) fn capture(&self, first: bool, records: Vec<(String, Raw)>, last_page: bool) {
        let mut cap = self.capture.lock().expect("capture");
        if !first && cap.view.is_some() {
            // A read that began from the view: not this one's.
            cap.failed = true;
            return;
        }
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
}

/// `doc` with only `fields` (and the id).
pub(super) fn project(mut doc: Doc, fields: &[String], id_field: &str) -> Doc {
    doc.retain(|k, _| k == id_field || fields.iter().any(|f| f == k));
    doc
}

/// The documents of a view in id order, as records: the state's, less the deleted and the
/// replaced, with the changed ones in their places. The next state when the run's last light read
/// was served whole from the view, read without writing a copy first.
pub(super) struct Merged<'v> {
    store: &'v ChangeStore,
    view: &'v View,
    reader: RecordReader,
    over: std::iter::Peekable<btree_map::Iter<'v, String, Doc>>,
    /// The next base record neither deleted nor replaced, with its id.
    pending: Option<(String, Raw)>,
    /// The id's place among the state's fields.
    id_only: Vec<bool>,
    /// The last base record's id: the state is in id order.
    last_base: Option<String>,
    /// Base records read: at the end, the state's count.
    pub(super) base_read: u64,
    base_done: bool,
}

impl<'v> Merged<'v> {
    pub(super) fn new(store: &'v ChangeStore, view: &'v View) -> std::io::Result<Self> {
        let file = std::fs::File::open(format!("/proc/self/fd/{}", view.docs.as_raw_fd()))?;
        Ok(Merged {
            store,
            view,
            reader: RecordReader::new(file, 0)?,
            over: view.overlay.iter().peekable(),
            pending: None,
            base_done: false,
            id_only: store
                .fields
                .iter()
                .map(|f| *f == store.cfg.id_field)
                .collect(),
            last_base: None,
            base_read: 0,
        })
    }

    /// The next record, `None` at the end.
    pub(super) fn next_raw(&mut self) -> std::io::Result<Option<Raw>> {
        let c = &self.store.cfg;
        while self.pending.is_none() && !self.base_done {
            let Some(raw) = self.reader.next_raw()? else {
                self.base_done = true;
                break;
            };
            self.base_read += 1;
            let doc = raw.doc_with(&self.store.fields, &self.id_only)?;
            let id = doc
                .get(&c.id_field)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            if self.last_base.as_deref().is_some_and(|l| l >= id.as_str()) {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "the state's documents are not in id order",
                ));
            }
            self.last_base = Some(id.clone());
            if self.view.deleted.contains(&raw.hash) {
                continue;
            }
            if self.view.replaced.contains(&raw.hash) && self.view.overlay.contains_key(&id) {
                continue;
            }
            self.pending = Some((id, raw));
        }
        let take_over = match (&self.pending, self.over.peek()) {
            (None, None) => return Ok(None),
            (Some(_), None) => false,
            (None, Some(_)) => true,
            (Some((b, _)), Some((o, _))) => o.as_str() < b.as_str(),
        };
        if take_over {
            let (_, d) = self.over.next().expect("peeked");
            let s = self.store;
            return Ok(Some(Raw::of(
                d,
                &s.fields,
                &c.id_field,
                &c.version_field,
                s.seed(),
            )));
        }
        Ok(self.pending.take().map(|(_, raw)| raw))
    }
}
