//! During a run: the light reads served from the state ⊕ the changed documents, and the last
//! light read kept for the next state.

use std::collections::btree_map;
use std::ops::Bound;
use std::os::fd::AsRawFd;
use std::sync::Arc;

use tracing::warn;

use super::body::{self, Field};
use super::state::{Raw, RecordReader, RecordWriter};
use super::{Capture, ChangeStore, View};
use crate::store::{Doc, Page, ReadQuery, Served, ServedDoc, Via};

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
        let c = &self.cfg;
        // The state's fields the query reads (and the id).
        let wanted: Vec<bool> = self
            .fields
            .iter()
            .map(|f| *f == c.id_field || query.fields.contains(f))
            .collect();
        let mut merged = Merged::at(self, view, offset, last.as_deref(), Some(wanted))?;
        // A document the reader derived something from in the run before, under what it derives
        // under now, comes with that, its id and the field it asked for, and no map.
        if self.is_light_read(query) {
            let tag = self
                .meta
                .lock()
                .expect("meta")
                .as_ref()
                .map_or(0, |m| m.derived);
            if let Some((t, field)) = self.derived_wanted.lock().expect("derived").as_ref() {
                if *t == tag && tag != 0 {
                    // A state without the field serves every record decoded, as it holds it.
                    merged.lean = self.fields.binary_search(field).ok();
                }
            }
        }
        let mut derived = Served::default();
        let rows = query.rows.max(1);
        let mut docs = Vec::with_capacity(rows);
        // The last document's id, in one buffer (the cursor names it).
        let mut last_id = last.unwrap_or_default();
        while docs.len() < rows {
            let Some(entry) = merged.next()? else {
                break;
            };
            last_id.clear();
            last_id.push_str(entry.id());
            match entry {
                // Served with what was derived: its id and the field, where they lie in the record.
                Entry::Base {
                    raw,
                    lean: Some(value),
                    ..
                } => {
                    let served = ServedDoc {
                        derived: raw.derived().unwrap_or_default(),
                        // Its id, as copied above.
                        id: &last_id,
                        value: value
                            .map(|at| {
                                std::str::from_utf8(&raw.body[at]).map_err(|e| {
                                    std::io::Error::new(std::io::ErrorKind::InvalidData, e)
                                })
                            })
                            .transpose()?,
                    };
                    derived.push(Some(served));
                    docs.push(Doc::new());
                }
                // Decoded with the query's fields only.
                Entry::Base { doc, .. } => {
                    derived.push(None);
                    docs.push(doc);
                }
                Entry::Over(_, d) => {
                    derived.push(None);
                    docs.push(project(d.clone(), &query.fields, &c.id_field));
                }
            }
        }
        if derived.count() == 0 {
            derived.clear();
        }
        let next = if docs.len() == rows && merged.more()? {
            Some(format!("{}:{last_id}", merged.resume_at()))
        } else {
            None
        };
        Ok(Page {
            docs,
            next,
            via: Via::State,
            derived,
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
            *self.sink.lock().expect("sink") = super::derived::Sink::new(true);
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
            *self.sink.lock().expect("sink") = super::derived::Sink::new(false);
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

/// Where `text`, a slice of `body`, lies in it.
fn span_in(body: &[u8], text: &str) -> std::ops::Range<usize> {
    let start = text.as_ptr() as usize - body.as_ptr() as usize;
    start..start + text.len()
}

/// One document of a view: the state's (its record, where its id lies in the record, and the
/// fields asked for), or a changed one (its id and copy).
pub(super) enum Entry<'v> {
    Base {
        raw: Raw,
        id: std::ops::Range<usize>,
        doc: Doc,
        /// Served with its derived part (`doc` is empty, see [`Merged::lean`]): where the text of
        /// the field served with it lies in the record (`None`: the record has no such field).
        lean: Option<Option<std::ops::Range<usize>>>,
    },
    Over(&'v String, &'v Doc),
}

impl Entry<'_> {
    /// The document's id.
    pub(super) fn id(&self) -> &str {
        match self {
            // Checked to be UTF-8 when the record was read.
            Entry::Base { raw, id, .. } => std::str::from_utf8(&raw.body[id.clone()]).unwrap_or(""),
            Entry::Over(id, _) => id,
        }
    }
}

/// The documents of a view in id order: the state's, less the deleted and the replaced, with the
/// changed ones in their places. A page of a read served from the view, and the next state when
/// the run's last light read was served whole from it (read without writing a copy first).
pub(super) struct Merged<'v> {
    store: &'v ChangeStore,
    view: &'v View,
    reader: RecordReader,
    over: std::iter::Peekable<btree_map::Range<'v, String, Doc>>,
    /// The next base record neither deleted nor replaced: its offset and entry.
    pending: Option<(u64, Entry<'v>)>,
    /// The places among the state's fields of those decoded (the id always); `None`: no document
    /// is decoded (the next state's merge copies records).
    wanted: Option<Vec<bool>>,
    /// The id's place among the state's fields.
    id_place: usize,
    /// When records with a derived part are served with it: the place among the state's fields of
    /// the one field that comes with it. Such a record is not decoded when its id is a text and the
    /// field a text or absent (a list or a number is read from the decoded document, as before).
    pub(super) lean: Option<usize>,
    /// The last base record's id: the state is in id order.
    last_base: Option<String>,
    /// Base records read: at the end of a whole read, the state's count.
    pub(super) base_read: u64,
    base_done: bool,
    /// When kept: the base records left out (deleted, or replaced by their changed copy),
    /// decoded whole, for the state's delta (see [`super::state::DeltaMeta`]); taken as they come,
    /// and given up (`None`, [`Merged::dropped_lost`]) past [`Merged::DROPPED_MAX`] in a row.
    pub(super) dropped: Option<Vec<Doc>>,
    /// Whether [`Merged::dropped`] was given up: the delta would miss old copies.
    pub(super) dropped_lost: bool,
}

impl<'v> Merged<'v> {
    /// The most left-out records held at once for the delta: the ones that follow each other in
    /// id order (the pages of a host deleted together), decoded whole (some tens of MB). Past them the
    /// delta is given up and serve builds its prediction index again.
    pub(super) const DROPPED_MAX: usize = 20_000;

    /// The whole view, as records: no document is decoded.
    pub(super) fn new(store: &'v ChangeStore, view: &'v View) -> std::io::Result<Self> {
        Merged::at(store, view, 0, None, None)
    }

    /// The view from the base record at `offset` and the changed documents after `after`,
    /// decoding the fields whose places are set in `wanted`.
    fn at(
        store: &'v ChangeStore,
        view: &'v View,
        offset: u64,
        after: Option<&str>,
        wanted: Option<Vec<bool>>,
    ) -> std::io::Result<Self> {
        // A reader of its own on the file opened at the start (which may be unlinked by now).
        let file = std::fs::File::open(format!("/proc/self/fd/{}", view.docs.as_raw_fd()))?;
        let from = match after {
            Some(l) => Bound::Excluded(l.to_owned()),
            None => Bound::Unbounded,
        };
        Ok(Merged {
            store,
            view,
            reader: RecordReader::new(file, offset)?,
            over: view
                .overlay
                .range::<String, _>((from, Bound::Unbounded))
                .peekable(),
            pending: None,
            wanted,
            // Past the fields when the state holds no id (no record has one then).
            id_place: store
                .fields
                .binary_search(&store.cfg.id_field)
                .unwrap_or(usize::MAX),
            lean: None,
            last_base: None,
            base_read: 0,
            base_done: false,
            dropped: None,
            dropped_lost: false,
        })
    }

    /// Reads the next base record that is neither deleted nor replaced, if none is waiting.
    fn fill(&mut self) -> std::io::Result<()> {
        let fields = &self.store.fields;
        while self.pending.is_none() && !self.base_done {
            let at = self.reader.at;
            let Some(raw) = self.reader.next_raw()? else {
                self.base_done = true;
                break;
            };
            self.base_read += 1;
            // The id where it lies in the record: nothing decoded, nothing allocated (none: "").
            let found = body::text_at(&raw.body, fields, self.id_place)?;
            let id_is_text = found.is_some();
            let (id, span) = match found {
                Some(id) => (id, span_in(&raw.body, id)),
                None => ("", 0..0),
            };
            match &mut self.last_base {
                Some(l) if l.as_str() >= id => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        "the state's documents are not in id order",
                    ));
                }
                // The same buffer each time.
                Some(l) => {
                    l.clear();
                    l.push_str(id);
                }
                None => self.last_base = Some(id.to_owned()),
            }
            let left_out = self.view.deleted.contains(&raw.hash)
                // Replaced by its changed copy (the hash only says where to look).
                || (self.view.replaced.contains(&raw.hash) && self.view.overlay.contains_key(id));
            if left_out {
                if let Some(dropped) = &mut self.dropped {
                    if dropped.len() < Self::DROPPED_MAX {
                        dropped.push(raw.doc(&self.store.fields)?);
                    } else {
                        self.dropped = None;
                        self.dropped_lost = true;
                    }
                }
                continue;
            }
            // Served with its derived part, without decoding, when its id is a text and the field
            // asked for a text or absent; else the decoded document says what it holds.
            let lean = match (self.lean, raw.derived()) {
                (Some(place), Some(_)) if id_is_text => {
                    match body::field_at(&raw.body, fields, place)? {
                        Field::Absent => Some(None),
                        Field::Text(text) => Some(Some(span_in(&raw.body, text))),
                        Field::Other => None,
                    }
                }
                _ => None,
            };
            let doc = match &self.wanted {
                Some(wanted) if lean.is_none() => raw.doc_with(fields, wanted)?,
                _ => Doc::new(),
            };
            self.pending = Some((
                at,
                Entry::Base {
                    raw,
                    id: span,
                    doc,
                    lean,
                },
            ));
        }
        Ok(())
    }

    /// The next document, `None` at the end.
    pub(super) fn next(&mut self) -> std::io::Result<Option<Entry<'v>>> {
        self.fill()?;
        let take_over = match (&self.pending, self.over.peek()) {
            (None, None) => return Ok(None),
            (Some(_), None) => false,
            (None, Some(_)) => true,
            (Some((_, b)), Some((o, _))) => o.as_str() < b.id(),
        };
        if take_over {
            let (id, d) = self.over.next().expect("peeked");
            return Ok(Some(Entry::Over(id, d)));
        }
        let (_, entry) = self.pending.take().expect("a base document");
        Ok(Some(entry))
    }

    /// Whether a document follows.
    fn more(&mut self) -> std::io::Result<bool> {
        self.fill()?;
        Ok(self.pending.is_some() || self.over.peek().is_some())
    }

    /// The offset a later read goes on from: the waiting base record's, or the reader's.
    fn resume_at(&self) -> u64 {
        self.pending.as_ref().map_or(self.reader.at, |p| p.0)
    }

    /// The next record, `None` at the end.
    #[cfg(test)]
    pub(super) fn next_raw(&mut self) -> std::io::Result<Option<Raw>> {
        Ok(self.next_raw_from()?.map(|(raw, _)| raw))
    }

    /// The next record and whether it is a changed document's (not the base state's).
    pub(super) fn next_raw_from(&mut self) -> std::io::Result<Option<(Raw, bool)>> {
        let s = self.store;
        match self.next()? {
            None => Ok(None),
            Some(Entry::Base { raw, .. }) => Ok(Some((raw, false))),
            Some(Entry::Over(_, d)) => Raw::of(
                d,
                &s.fields,
                &s.cfg.id_field,
                &s.cfg.version_field,
                s.seed(),
            )
            .map(|raw| Some((raw, true))),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashSet};
    use std::sync::Arc;

    use serde_json::{json, Value};

    use super::super::state::{Raw, RecordWriter};
    use super::super::{ChangeStore, ChangesConfig, View};
    use super::Merged;
    use crate::store::file::{FileStore, Output, OutputFormat};
    use crate::store::{Doc, Filter, ReadQuery};

    fn doc(id: &str, version: i64, n: i64) -> Doc {
        match json!({"id": id, "_version_": version, "url_s": format!("http://x/{id}"),
                     "n_i": n, "keys_ls": [n, -n]})
        {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    /// A change store over an empty file, its state in `dir`.
    fn store_in(dir: &std::path::Path) -> ChangeStore {
        let input = dir.join("in.jsonl");
        std::fs::write(&input, "").unwrap();
        let inner = FileStore::open(
            &input,
            Output::File(dir.join("out.jsonl")),
            OutputFormat::Updates,
            "id",
            "_version_",
        )
        .unwrap();
        let light: Vec<String> = ["id", "_version_", "url_s", "n_i"]
            .map(String::from)
            .to_vec();
        ChangeStore::new(
            Arc::new(inner),
            ChangesConfig {
                dir: dir.join("state"),
                target: "test".into(),
                filter_text: None,
                filter: Filter::All,
                id_field: "id".into(),
                version_field: "_version_".into(),
                light_fields: light,
                extra_fields: vec!["keys_ls".into()],
                digest: String::new(),
                window_ms: 0,
                batch: 3,
                max_changed: 100,
                writes: true,
                visible_after_commit: true,
                full: false,
                temp_dir: None,
                memory: 1 << 24,
                delta: None,
            },
        )
    }

    /// A state file of `docs`.
    fn records(store: &ChangeStore, docs: &[Doc]) -> std::fs::File {
        let mut w = RecordWriter::new(tempfile::tempfile().unwrap());
        for d in docs {
            w.push(&Raw::of(d, &store.fields, "id", "_version_", store.seed()).unwrap())
                .unwrap();
        }
        w.finish().unwrap()
    }

    /// The merged next state and a read of every field through `serve`, page by page, both give
    /// the state's documents less the deleted ones, with the changed ones in their places.
    #[test]
    fn the_merged_state_is_what_serve_reads() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path());
        let base: Vec<Doc> = ["a", "b", "c", "d", "e", "f", "g"]
            .iter()
            .enumerate()
            .map(|(i, id)| doc(id, 10 + i as i64, i as i64))
            .collect();
        let docs = records(&store, &base);
        // "c" re-indexed, "cc", "0" and "z" new, "e" deleted.
        let overlay: BTreeMap<String, Doc> = [
            doc("0", 30, 100),
            doc("c", 31, 102),
            doc("cc", 32, 103),
            doc("z", 33, 104),
        ]
        .into_iter()
        .map(|d| (d["id"].as_str().unwrap().to_owned(), d))
        .collect();
        let replaced = overlay.keys().map(|id| store.hash(id)).collect();
        let deleted: HashSet<u64> = [store.hash("e")].into_iter().collect();
        let view = Arc::new(View {
            docs,
            overlay,
            replaced,
            deleted,
        });
        let expected: Vec<Doc> = ["0", "a", "b", "c", "cc", "d", "f", "g", "z"]
            .iter()
            .map(|id| match *id {
                "0" => doc("0", 30, 100),
                "c" => doc("c", 31, 102),
                "cc" => doc("cc", 32, 103),
                "z" => doc("z", 33, 104),
                other => base.iter().find(|d| d["id"] == *other).unwrap().clone(),
            })
            .collect();

        let mut merged = Merged::new(&store, &view).unwrap();
        let mut got = Vec::new();
        while let Some(raw) = merged.next_raw().unwrap() {
            got.push(raw.doc(&store.fields).unwrap());
        }
        assert_eq!(got, expected);
        assert_eq!(merged.base_read, 7);

        let query = ReadQuery {
            filter: Filter::All,
            fields: store.fields.clone(),
            rows: 2,
        };
        let (mut served, mut cursor) = (Vec::new(), None::<String>);
        loop {
            let page = store.serve(&view, &query, cursor.as_deref()).unwrap();
            served.extend(page.docs);
            match page.next {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        assert_eq!(served, expected);
        // A light read of some fields: only those (and the id).
        let some = ReadQuery {
            fields: vec!["n_i".into()],
            ..query
        };
        let page = store.serve(&view, &some, None).unwrap();
        assert_eq!(
            Value::Array(page.docs.into_iter().map(Value::Object).collect()),
            json!([{"id": "0", "n_i": 100}, {"id": "a", "n_i": 0}])
        );
    }

    /// A record whose id is not a text (a number, or none) is served and merged under the id ""
    /// (first in id order), as when ids were decoded: never a panic, and a second one is an
    /// order error.
    #[test]
    fn a_record_without_a_text_id_is_served_under_an_empty_one() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path());
        let mut numbered = doc("x", 1, 7);
        numbered.insert("id".into(), json!(42));
        let base = vec![numbered.clone(), doc("a", 2, 1)];
        let view = |base: &[Doc]| View {
            docs: records(&store, base),
            overlay: BTreeMap::from([("b".to_owned(), doc("b", 3, 2))]),
            replaced: HashSet::new(),
            deleted: HashSet::new(),
        };
        let one = view(&base);
        let mut merged = Merged::new(&store, &one).unwrap();
        let mut ids = Vec::new();
        while let Some(raw) = merged.next_raw().unwrap() {
            ids.push(raw.doc(&store.fields).unwrap()["id"].clone());
        }
        assert_eq!(ids, vec![json!(42), json!("a"), json!("b")]);
        let query = ReadQuery {
            filter: Filter::All,
            fields: store.fields.clone(),
            rows: 1,
        };
        let page = store.serve(&one, &query, None).unwrap();
        assert_eq!(page.docs, vec![numbered.clone()]);
        assert_eq!(
            page.next
                .as_deref()
                .and_then(|c| c.split_once(':'))
                .map(|c| c.1),
            Some("")
        );
        let rest = store.serve(&one, &query, page.next.as_deref()).unwrap();
        assert_eq!(rest.docs, vec![doc("a", 2, 1)]);
        // Two records without a text id are out of order.
        let two = view(&[numbered.clone(), numbered]);
        let mut merged = Merged::new(&store, &two).unwrap();
        assert!(merged.next_raw().is_ok());
        assert!(merged.next_raw().is_err());
    }

    /// The left-out records the delta needs are held while they follow each other: up to
    /// `DROPPED_MAX` in a row the delta keeps them all, one more and it is given up (and the
    /// merged state is the same either way).
    #[test]
    fn the_delta_gives_up_past_its_left_out_records_in_a_row() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path());
        let max = Merged::DROPPED_MAX;
        // Ids in order: "k0", then max + 1 deleted ones, then "z0", "z1".
        let mut base = vec![doc("k0", 1, 0)];
        base.extend((0..=max).map(|i| doc(&format!("m{i:06}"), 2, i as i64)));
        base.push(doc("z0", 3, -1));
        base.push(doc("z1", 3, -2));
        for (gone, lost) in [(max, false), (max + 1, true)] {
            let deleted: HashSet<u64> = (0..gone)
                .map(|i| store.hash(&format!("m{i:06}")))
                .chain((gone <= max).then(|| store.hash("z0")))
                .collect();
            let view = View {
                docs: records(&store, &base),
                overlay: BTreeMap::new(),
                replaced: HashSet::new(),
                deleted,
            };
            let mut merged = Merged::new(&store, &view).unwrap();
            merged.dropped = Some(Vec::new());
            let (mut kept, mut dropped) = (Vec::new(), 0);
            while let Some(raw) = merged.next_raw().unwrap() {
                kept.push(raw.doc(&store.fields).unwrap()["id"].clone());
                // As the next state's merge takes them, record by record.
                dropped += merged
                    .dropped
                    .as_mut()
                    .map_or(0, |d| std::mem::take(d).len());
            }
            dropped += merged.dropped.as_ref().map_or(0, Vec::len);
            assert_eq!(merged.dropped_lost, lost, "{gone} in a row");
            let expected: Vec<Value> = if gone <= max {
                // "z0" deleted too: one more left out, but not in the same row as the others.
                vec![json!("k0"), json!(format!("m{max:06}")), json!("z1")]
            } else {
                vec![json!("k0"), json!("z0"), json!("z1")]
            };
            assert_eq!(kept, expected, "{gone} in a row");
            if !lost {
                assert_eq!(dropped, gone + 1);
            }
        }
    }
}
