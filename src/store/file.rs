//! The embedded store: documents in a file, updates to a file. No Solr needed.
//!
//! Input is JSON Lines of Solr documents, or a Solr `/select` JSON response (converted once into a
//! temporary JSON Lines file beside the system's temp dir). Reads stream the file; the only
//! whole-file structure kept in memory is an index from a 64-bit hash of each id to its byte offset,
//! which serves real-time gets. Facets and bucket statistics are counting passes.
//!
//! Updates go to a temporary file next to the output and only become the output at [`Store::commit`],
//! by rename: a run that fails half-way leaves no half-written output. The output holds the atomic
//! updates as JSON Lines ready to POST to `/update`, or, with [`OutputFormat::Docs`], every input
//! document with the updates applied (the next run's input).
//!
//! The file never changes under the worker, so version conflicts cannot happen here; updates still
//! carry the version that was read, so the output is safe to POST to a live core later.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::Value;

use super::{
    AtomicUpdate, Bucket, CommitMode, Doc, FacetQuery, Page, ReadQuery, StatsBucket, StatsQuery,
    Store, StoreError, UpdateOutcome,
};

/// What the output file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    /// Atomic-update documents, one per changed document.
    #[default]
    Updates,
    /// Every input document with the updates applied.
    Docs,
}

/// Where the output goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// A file, written atomically at commit.
    File(PathBuf),
    /// Standard output, written at commit.
    Stdout,
}

/// A store over a file of Solr documents.
pub struct FileStore {
    /// The file the user named (for messages).
    input: PathBuf,
    /// The JSON Lines file actually read (the input, or its conversion).
    lines: PathBuf,
    /// Keeps a converted input alive until the store is dropped.
    _converted: Option<TempFile>,
    output: Output,
    format: OutputFormat,
    id_field: String,
    version_field: String,
    state: Mutex<State>,
}

struct State {
    /// id hash → byte offset of the line, for every line read so far.
    index: HashMap<u64, u64>,
    /// True once a read reached the end of the file, so the index is complete.
    index_complete: bool,
    /// A reader left where the last page ended, so sequential pages do not seek.
    reader: Option<(u64, u64, BufReader<File>)>,
    pending: Option<(TempFile, BufWriter<File>)>,
    /// Per pending update: (byte offset of its document in the input, sequence, byte offset of the
    /// update in the pending file). Sorting it yields the updates in input order, merged per document.
    pending_order: Vec<(u64, u32, u64)>,
    pending_bytes: u64,
}

/// A file removed on drop.
struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

impl FileStore {
    /// Opens `input` for reading; fails early (before any work) when the output cannot be written.
    pub fn open(
        input: &Path,
        output: Output,
        format: OutputFormat,
        id_field: &str,
        version_field: &str,
    ) -> Result<Self, StoreError> {
        let mut file = File::open(input)
            .map_err(|e| StoreError::io(format!("cannot read {}", input.display()), e))?;
        let (lines, converted) = if looks_like_select_response(&mut file, input)? {
            let tmp = convert_select_response(input)?;
            (tmp.0.clone(), Some(tmp))
        } else {
            (input.to_path_buf(), None)
        };
        if let Output::File(path) = &output {
            // Prove now that the output can be written, not after an hour of work.
            let probe = temp_beside(path);
            File::create(&probe).map_err(|e| {
                StoreError::io(
                    format!(
                        "cannot write the output {} (check the directory and permissions)",
                        path.display()
                    ),
                    e,
                )
            })?;
            let _ = std::fs::remove_file(&probe);
        }
        Ok(FileStore {
            input: input.to_path_buf(),
            lines,
            _converted: converted,
            output,
            format,
            id_field: id_field.to_owned(),
            version_field: version_field.to_owned(),
            state: Mutex::new(State {
                index: HashMap::new(),
                index_complete: false,
                reader: None,
                pending: None,
                pending_order: Vec::new(),
                pending_bytes: 0,
            }),
        })
    }

    fn location(&self, line: u64) -> String {
        format!("{}:{}", self.input.display(), line)
    }

    /// Parses one line into a document; `None` for a blank line.
    fn parse_line(&self, text: &str, line: u64) -> Result<Option<(Doc, String)>, StoreError> {
        self.parse_line_fields(text, line, None)
    }

    /// Parses one line, keeping only `keep` (plus the id) when given: the other values are checked
    /// but never allocated, which is most of the cost of a 5 KB page.
    fn parse_line_fields(
        &self,
        text: &str,
        line: u64,
        keep: Option<&[String]>,
    ) -> Result<Option<(Doc, String)>, StoreError> {
        if text.trim().is_empty() {
            return Ok(None);
        }
        let seed = Projection {
            keep,
            id_field: &self.id_field,
        };
        let mut de = serde_json::Deserializer::from_str(text);
        let parsed = serde::de::DeserializeSeed::deserialize(seed, &mut de)
            .and_then(|doc| de.end().map(|()| doc));
        let doc = match parsed {
            Ok(Some(doc)) => doc,
            Ok(None) => {
                return Err(StoreError::Input {
                    location: self.location(line),
                    message: "expected a JSON object (one Solr document per line)".to_owned(),
                })
            }
            Err(e) => {
                return Err(StoreError::Input {
                    location: self.location(line),
                    message: format!("broken JSON ({e}); fix or remove the line"),
                })
            }
        };
        let id = match doc.get(&self.id_field) {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => {
                return Err(StoreError::Input {
                    location: self.location(line),
                    message: format!(
                        "document has no '{}' (the unique key); every document needs one",
                        self.id_field
                    ),
                })
            }
        };
        Ok(Some((doc, id)))
    }

    /// Streams every document from `start` (byte offset, line number), calling `f` until it says stop.
    fn scan<F>(
        &self,
        start: (u64, u64),
        keep: Option<&[String]>,
        mut f: F,
    ) -> Result<(u64, u64, bool), StoreError>
    where
        F: FnMut(Doc, &str) -> bool,
    {
        let mut state = self.state.lock().expect("file store lock");
        let mut reader = match state.reader.take() {
            Some((off, line, r)) if (off, line) == start => r,
            _ => {
                let mut file = File::open(&self.lines).map_err(|e| {
                    StoreError::io(format!("cannot read {}", self.input.display()), e)
                })?;
                file.seek(SeekFrom::Start(start.0)).map_err(|e| {
                    StoreError::io(format!("cannot read {}", self.input.display()), e)
                })?;
                BufReader::with_capacity(1 << 20, file)
            }
        };
        let (mut offset, mut line) = start;
        let mut buf = String::new();
        loop {
            buf.clear();
            let n = reader.read_line(&mut buf).map_err(|e| {
                StoreError::io(format!("cannot read {}", self.location(line + 1)), e)
            })?;
            if n == 0 {
                if offset > 0 || line > 0 {
                    state.index_complete = true;
                }
                return Ok((offset, line, true));
            }
            let line_offset = offset;
            offset += n as u64;
            line += 1;
            if let Some((doc, id)) = self.parse_line_fields(&buf, line, keep)? {
                state.index.insert(id_hash(&id), line_offset);
                if !f(doc, &id) {
                    state.reader = Some((offset, line, reader));
                    return Ok((offset, line, false));
                }
            }
        }
    }

    fn scan_all<F: FnMut(Doc, &str)>(
        &self,
        keep: Option<&[String]>,
        mut f: F,
    ) -> Result<(), StoreError> {
        self.scan((0, 0), keep, |doc, id| {
            f(doc, id);
            true
        })
        .map(|_| ())
    }

    fn read_at(&self, offset: u64, fields: &[String]) -> Result<Option<(Doc, String)>, StoreError> {
        let mut file = File::open(&self.lines)
            .map_err(|e| StoreError::io(format!("cannot read {}", self.input.display()), e))?;
        file.seek(SeekFrom::Start(offset))
            .map_err(|e| StoreError::io(format!("cannot read {}", self.input.display()), e))?;
        let mut buf = String::new();
        BufReader::new(file)
            .read_line(&mut buf)
            .map_err(|e| StoreError::io(format!("cannot read {}", self.input.display()), e))?;
        let keep = (!fields.iter().any(|f| f == "*")).then_some(fields);
        self.parse_line_fields(&buf, 0, keep)
    }

    fn write_output(&self, mut merged: Merged) -> Result<(), StoreError> {
        let (target, tmp) = match &self.output {
            Output::File(path) => (Some(path.clone()), Some(TempFile(temp_beside(path)))),
            Output::Stdout => (None, None),
        };
        let sink: Box<dyn Write> = match &tmp {
            Some(t) => Box::new(
                File::create(&t.0).map_err(|e| StoreError::io("cannot write the output", e))?,
            ),
            None => Box::new(std::io::stdout().lock()),
        };
        let mut out = BufWriter::with_capacity(1 << 20, sink);
        let werr = |e| StoreError::io("cannot write the output", e);
        match self.format {
            OutputFormat::Updates => {
                while let Some((_, update)) = merged.next_update()? {
                    serde_json::to_writer(&mut out, &update)
                        .map_err(|e| StoreError::Unsupported(e.to_string()))?;
                    out.write_all(b"\n").map_err(werr)?;
                }
            }
            OutputFormat::Docs => self.write_docs(&mut merged, &mut out)?,
        }
        out.flush().map_err(werr)?;
        drop(out);
        if let (Some(target), Some(tmp)) = (target, tmp) {
            std::fs::rename(&tmp.0, &target).map_err(|e| {
                StoreError::io(format!("cannot write the output {}", target.display()), e)
            })?;
            std::mem::forget(tmp);
        }
        Ok(())
    }

    /// Every input document with its merged update applied, in input order.
    fn write_docs(&self, merged: &mut Merged, out: &mut impl Write) -> Result<(), StoreError> {
        let mut next = merged.next_update()?;
        let mut result = Ok(());
        let mut offset = 0u64;
        let mut file = BufReader::with_capacity(
            1 << 20,
            File::open(&self.lines)
                .map_err(|e| StoreError::io(format!("cannot read {}", self.input.display()), e))?,
        );
        let mut buf = String::new();
        let mut line = 0u64;
        loop {
            buf.clear();
            let n = file
                .read_line(&mut buf)
                .map_err(|e| StoreError::io(format!("cannot read {}", self.input.display()), e))?;
            if n == 0 {
                break;
            }
            let at = offset;
            offset += n as u64;
            line += 1;
            let Some((mut doc, _)) = self.parse_line(&buf, line)? else {
                continue;
            };
            if let Some((doc_offset, update)) = &next {
                if *doc_offset == at {
                    apply(&mut doc, update, &self.id_field, &self.version_field);
                    next = merged.next_update()?;
                }
            }
            let text = serde_json::to_string(&doc).expect("a JSON object serialises");
            if let Err(e) = writeln!(out, "{text}") {
                result = Err(StoreError::io("cannot write the output", e));
                break;
            }
        }
        result
    }
}

/// Applies an atomic update's `set` operations to a document.
fn apply(doc: &mut Doc, update: &Value, id_field: &str, version_field: &str) {
    let Value::Object(u) = update else { return };
    for (field, op) in u {
        if field == id_field || field == version_field {
            continue;
        }
        match op.get("set") {
            Some(Value::Null) | None => {
                doc.remove(field);
            }
            Some(v) => {
                doc.insert(field.clone(), v.clone());
            }
        }
    }
}

/// Pending updates in input order, merged per document: later `set`s win, the first version stays
/// (it is the one the document had when the worker first read it).
///
/// The engine writes while it reads, so the pending file is a few runs each already in input order
/// (one per pass that wrote). Each run is read sequentially and the runs are merged by input offset.
struct Merged {
    runs: Vec<Run>,
}

struct Run {
    /// Input offsets of this run's documents, in order.
    offsets: std::vec::IntoIter<u64>,
    head: Option<u64>,
    reader: Option<BufReader<File>>,
}

impl Run {
    fn read(&mut self) -> Result<Value, StoreError> {
        let err = |e| StoreError::io("cannot read pending updates", e);
        let mut line = String::new();
        self.reader
            .as_mut()
            .ok_or_else(|| StoreError::Unsupported("no pending file".into()))?
            .read_line(&mut line)
            .map_err(err)?;
        self.head = self.offsets.next();
        serde_json::from_str(&line)
            .map_err(|e| StoreError::Unsupported(format!("pending update: {e}")))
    }
}

impl Merged {
    /// `order` holds (input offset, sequence, pending-file offset) in sequence order.
    fn new(path: Option<&Path>, order: Vec<(u64, u32, u64)>) -> Result<Self, StoreError> {
        let mut runs = Vec::new();
        let mut start = 0;
        for i in 1..=order.len() {
            if i == order.len() || order[i].0 < order[i - 1].0 {
                if let Some(p) = path {
                    let mut f = File::open(p)
                        .map_err(|e| StoreError::io("cannot read pending updates", e))?;
                    f.seek(SeekFrom::Start(order[start].2))
                        .map_err(|e| StoreError::io("cannot read pending updates", e))?;
                    let mut offsets: std::vec::IntoIter<u64> = order[start..i]
                        .iter()
                        .map(|o| o.0)
                        .collect::<Vec<_>>()
                        .into_iter();
                    let head = offsets.next();
                    runs.push(Run {
                        offsets,
                        head,
                        reader: Some(BufReader::with_capacity(1 << 20, f)),
                    });
                }
                start = i;
            }
        }
        Ok(Merged { runs })
    }

    /// The next document's merged update, with the document's input offset.
    fn next_update(&mut self) -> Result<Option<(u64, Value)>, StoreError> {
        let Some(offset) = self.runs.iter().filter_map(|r| r.head).min() else {
            return Ok(None);
        };
        let mut merged: Option<Value> = None;
        // Runs in write order, and within a run in order: later operations win.
        for run in &mut self.runs {
            while run.head == Some(offset) {
                let later = run.read()?;
                match (&mut merged, later) {
                    (None, l) => merged = Some(l),
                    (Some(Value::Object(m)), Value::Object(l)) => {
                        for (k, v) in l {
                            // Field operations: the later one wins. id and _version_: the first stays.
                            if v.get("set").is_some() || !m.contains_key(&k) {
                                m.insert(k, v);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        Ok(merged.map(|m| (offset, m)))
    }
}

/// Deserialises a JSON object keeping only some fields; `None` when the value is not an object.
struct Projection<'a> {
    keep: Option<&'a [String]>,
    id_field: &'a str,
}

impl<'de> serde::de::DeserializeSeed<'de> for Projection<'_> {
    type Value = Option<Doc>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Projection<'_> {
    type Value = Option<Doc>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut doc = Doc::new();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let wanted =
                key == self.id_field || self.keep.is_none_or(|k| k.iter().any(|f| *f == key));
            if wanted {
                let v: Value = map.next_value()?;
                doc.insert(key.into_owned(), v);
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(Some(doc))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

/// A stable 64-bit hash of an id (FNV-1a): in-memory only, never persisted.
pub fn id_hash(id: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn temp_beside(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".to_owned());
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

fn looks_like_select_response(file: &mut File, input: &Path) -> Result<bool, StoreError> {
    let mut head = [0u8; 4096];
    let n = file
        .read(&mut head)
        .map_err(|e| StoreError::io(format!("cannot read {}", input.display()), e))?;
    let text = String::from_utf8_lossy(&head[..n]);
    let trimmed = text.trim_start();
    Ok(trimmed.starts_with('{')
        && (trimmed.contains("\"responseHeader\"") || trimmed.contains("\"response\""))
        && !trimmed.lines().next().is_some_and(|l| {
            serde_json::from_str::<Value>(l)
                .ok()
                .is_some_and(|v| v.get("response").is_none())
        }))
}

fn convert_select_response(input: &Path) -> Result<TempFile, StoreError> {
    let loc = |m: String| StoreError::Input {
        location: input.display().to_string(),
        message: m,
    };
    let text = std::fs::read_to_string(input)
        .map_err(|e| StoreError::io(format!("cannot read {}", input.display()), e))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| loc(format!("broken JSON in the /select response ({e})")))?;
    let docs = value
        .pointer("/response/docs")
        .and_then(Value::as_array)
        .ok_or_else(|| loc("a /select response needs response.docs".to_owned()))?;
    let tmp = TempFile(std::env::temp_dir().join(format!(
        "solr-dedup-{}-{}.jsonl",
        std::process::id(),
        id_hash(&input.display().to_string())
    )));
    let mut w = BufWriter::new(
        File::create(&tmp.0).map_err(|e| StoreError::io("cannot create a temporary file", e))?,
    );
    for d in docs {
        serde_json::to_writer(&mut w, d).map_err(|e| StoreError::Unsupported(e.to_string()))?;
        w.write_all(b"\n")
            .map_err(|e| StoreError::io("cannot write a temporary file", e))?;
    }
    w.flush()
        .map_err(|e| StoreError::io("cannot write a temporary file", e))?;
    Ok(tmp)
}

fn project(mut doc: Doc, fields: &[String]) -> Doc {
    if fields.iter().any(|f| f == "*") {
        return doc;
    }
    doc.retain(|k, _| fields.iter().any(|f| f == k));
    doc
}

fn parse_cursor(cursor: Option<&str>) -> Result<(u64, u64), StoreError> {
    let Some(c) = cursor else { return Ok((0, 0)) };
    let bad = || StoreError::Unsupported(format!("invalid file cursor {c:?}"));
    let (a, b) = c.split_once(':').ok_or_else(bad)?;
    Ok((a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?))
}

fn as_i64(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

impl Store for FileStore {
    async fn read_page(&self, query: &ReadQuery, cursor: Option<&str>) -> Result<Page, StoreError> {
        let start = parse_cursor(cursor)?;
        let mut docs = Vec::with_capacity(query.rows.min(4096));
        let rows = query.rows.max(1);
        let mut keep = query.fields.clone();
        query.filter.fields(&mut keep);
        let keep = (!query.fields.iter().any(|f| f == "*")).then_some(keep);
        let (offset, line, done) = self.scan(start, keep.as_deref(), |doc, _| {
            if query.filter.matches(&doc) {
                docs.push(project(doc, &query.fields));
            }
            docs.len() < rows
        })?;
        Ok(Page {
            docs,
            next: (!done).then(|| format!("{offset}:{line}")),
        })
    }

    async fn facet(&self, query: &FacetQuery) -> Result<Vec<Bucket>, StoreError> {
        let mut counts: HashMap<String, (Value, u64)> = HashMap::new();
        let mut keep = vec![query.field.clone()];
        query.filter.fields(&mut keep);
        self.scan_all(Some(&keep), |doc, _| {
            if !query.filter.matches(&doc) {
                return;
            }
            let vals: Vec<Value> = match doc.get(&query.field) {
                Some(Value::Array(a)) => a.clone(),
                Some(Value::Null) | None => Vec::new(),
                Some(v) => vec![v.clone()],
            };
            for v in vals {
                counts.entry(v.to_string()).or_insert((v, 0)).1 += 1;
            }
        })?;
        let mut out: Vec<Bucket> = counts
            .into_values()
            .filter(|(_, c)| *c >= query.mincount.max(1))
            .map(|(value, count)| Bucket { value, count })
            .collect();
        // Solr's order: count descending, then index order (numeric for numbers).
        out.sort_by(|a, b| {
            b.count
                .cmp(&a.count)
                .then_with(|| value_order(&a.value, &b.value))
        });
        Ok(out)
    }

    async fn bucket_stats(&self, query: &StatsQuery) -> Result<Vec<StatsBucket>, StoreError> {
        let mut stats: HashMap<String, StatsBucket> = HashMap::new();
        let mut keep = vec![query.field.clone(), query.stat_field.clone()];
        query.filter.fields(&mut keep);
        self.scan_all(Some(&keep), |doc, _| {
            if !query.filter.matches(&doc) {
                return;
            }
            let Some(v) = doc.get(&query.field).filter(|v| !v.is_null()) else {
                return;
            };
            let stat = doc.get(&query.stat_field).and_then(as_i64);
            let e = stats.entry(v.to_string()).or_insert_with(|| StatsBucket {
                bucket: Bucket {
                    value: v.clone(),
                    count: 0,
                },
                min: None,
                max: None,
            });
            e.bucket.count += 1;
            if let Some(s) = stat {
                e.min = Some(e.min.map_or(s, |m| m.min(s)));
                e.max = Some(e.max.map_or(s, |m| m.max(s)));
            }
        })?;
        let mut out: Vec<StatsBucket> = stats
            .into_values()
            .filter(|s| s.bucket.count >= query.mincount.max(1))
            .collect();
        out.sort_by(|a, b| {
            b.bucket
                .count
                .cmp(&a.bucket.count)
                .then_with(|| value_order(&a.bucket.value, &b.bucket.value))
        });
        Ok(out)
    }

    async fn get(&self, ids: &[String], fields: &[String]) -> Result<Vec<Doc>, StoreError> {
        let complete = self.state.lock().expect("file store lock").index_complete;
        if !complete {
            self.scan_all(Some(&[]), |_, _| {})?;
        }
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let offset = self
                .state
                .lock()
                .expect("file store lock")
                .index
                .get(&id_hash(id))
                .copied();
            if let Some(off) = offset {
                if let Some((doc, found)) = self.read_at(off, fields)? {
                    if &found == id {
                        out.push(project(doc, fields));
                    }
                }
            }
        }
        Ok(out)
    }

    async fn update(&self, batch: &[AtomicUpdate]) -> Result<UpdateOutcome, StoreError> {
        let mut state = self.state.lock().expect("file store lock");
        if state.pending.is_none() {
            let path = match &self.output {
                Output::File(p) => temp_beside(p).with_extension("pending"),
                Output::Stdout => {
                    std::env::temp_dir().join(format!("solr-dedup-{}.pending", std::process::id()))
                }
            };
            let f = File::create(&path)
                .map_err(|e| StoreError::io("cannot write pending updates", e))?;
            state.pending = Some((TempFile(path), BufWriter::with_capacity(1 << 20, f)));
        }
        for u in batch {
            let Some(&doc_offset) = state.index.get(&id_hash(&u.id)) else {
                // Real Solr answers 409 to a versioned update of a document that does not exist.
                return Err(StoreError::Unsupported(format!(
                    "update of unknown document '{}'",
                    u.id
                )));
            };
            let mut line = serde_json::to_vec(&u.to_json(&self.id_field, &self.version_field))
                .map_err(|e| StoreError::Unsupported(e.to_string()))?;
            line.push(b'\n');
            let at = state.pending_bytes;
            let seq = state.pending_order.len() as u32;
            state.pending_order.push((doc_offset, seq, at));
            state.pending_bytes += line.len() as u64;
            let (_, w) = state.pending.as_mut().expect("just created");
            w.write_all(&line)
                .map_err(|e| StoreError::io("cannot write pending updates", e))?;
        }
        Ok(UpdateOutcome {
            applied: batch.len(),
            ..UpdateOutcome::default()
        })
    }

    async fn commit(&self, _mode: CommitMode) -> Result<(), StoreError> {
        let (pending, order) = {
            let mut state = self.state.lock().expect("file store lock");
            let order = std::mem::take(&mut state.pending_order);
            state.pending_bytes = 0;
            match state.pending.take() {
                Some((tmp, mut w)) => {
                    w.flush()
                        .map_err(|e| StoreError::io("cannot write pending updates", e))?;
                    (Some(tmp), order)
                }
                None => (None, order),
            }
        };
        let merged = Merged::new(pending.as_ref().map(|t| t.0.as_path()), order)?;
        self.write_output(merged)
    }

    fn describe(&self) -> String {
        format!("file {}", self.input.display())
    }
}

fn value_order(a: &Value, b: &Value) -> std::cmp::Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => x
                .as_f64()
                .partial_cmp(&y.as_f64())
                .unwrap_or(std::cmp::Ordering::Equal),
        },
        _ => a.to_string().cmp(&b.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::store::Filter;

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    /// The transcripts' main fixture in miniature: signatures 1000007 ×3, 1000003 ×2, one singleton,
    /// one document without a signature.
    fn store(dir: &Path) -> FileStore {
        let docs = [
            json!({"id":"c","exact_signature_l":1000007,"exact_signature_copycount_i":3}),
            json!({"id":"a","exact_signature_l":1000003,"exact_signature_copycount_i":2}),
            json!({"id":"d","exact_signature_l":1000007,"exact_signature_copycount_i":3}),
            json!({"id":"b","exact_signature_l":1000003,"exact_signature_copycount_i":1}),
            json!({"id":"e","exact_signature_l":1000007,"exact_signature_copycount_i":3}),
            json!({"id":"j","exact_signature_l":-2401053093171183889i64}),
            json!({"id":"m","text_t":"no signature"}),
        ];
        let input = dir.join("in.jsonl");
        std::fs::write(
            &input,
            docs.iter().map(|d| format!("{d}\n")).collect::<String>(),
        )
        .unwrap();
        FileStore::open(
            &input,
            Output::File(dir.join("out.jsonl")),
            OutputFormat::Updates,
            "id",
            "_version_",
        )
        .unwrap()
    }

    #[test]
    fn facet_counts_with_mincount_in_solr_order() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path());
        let q = |mincount| FacetQuery {
            field: "exact_signature_l".into(),
            filter: Filter::All,
            mincount,
        };
        let buckets = block_on(s.facet(&q(2))).unwrap();
        assert_eq!(
            buckets,
            vec![
                Bucket {
                    value: json!(1000007),
                    count: 3
                },
                Bucket {
                    value: json!(1000003),
                    count: 2
                },
            ]
        );
        // mincount 0 acts as 1 on a Points field; ties in count go by value (numeric order).
        let all = block_on(s.facet(&q(0))).unwrap();
        assert_eq!(all.len(), 3);
        assert_eq!(all[2].value, json!(-2401053093171183889i64));
    }

    #[test]
    fn bucket_stats_give_size_min_and_max_per_bucket() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path());
        let stats = block_on(s.bucket_stats(&StatsQuery {
            field: "exact_signature_l".into(),
            filter: Filter::Present("exact_signature_copycount_i".into()),
            mincount: 2,
            stat_field: "exact_signature_copycount_i".into(),
        }))
        .unwrap();
        assert_eq!(stats.len(), 2);
        // The 1000003 group holds a stale count (1 where 2 is right): min and max disagree with size.
        let stale = stats
            .iter()
            .find(|b| b.bucket.value == json!(1000003))
            .unwrap();
        assert_eq!(
            (stale.bucket.count, stale.min, stale.max),
            (2, Some(1), Some(2))
        );
        let fine = stats
            .iter()
            .find(|b| b.bucket.value == json!(1000007))
            .unwrap();
        assert_eq!(
            (fine.bucket.count, fine.min, fine.max),
            (3, Some(3), Some(3))
        );
    }

    #[test]
    fn get_returns_requested_ids_in_order_and_skips_missing_ones() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path());
        let ids: Vec<String> = ["e", "zz", "a"].iter().map(|s| s.to_string()).collect();
        let fl = ["id".to_string(), "exact_signature_l".to_string()];
        let docs = block_on(s.get(&ids, &fl)).unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0]["id"], json!("e"));
        assert_eq!(docs[1]["id"], json!("a"));
        assert_eq!(docs[1]["exact_signature_l"], json!(1000003));
        assert!(
            docs[1].get("exact_signature_copycount_i").is_none(),
            "fl is honoured"
        );
    }

    #[test]
    fn pages_cover_every_match_once_whatever_the_page_size() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path());
        for rows in [1, 2, 3, 100] {
            let q = ReadQuery {
                filter: Filter::Present("exact_signature_l".into()),
                fields: vec!["id".into()],
                rows,
            };
            let mut ids = Vec::new();
            let mut cursor: Option<String> = None;
            loop {
                let page = block_on(s.read_page(&q, cursor.as_deref())).unwrap();
                ids.extend(
                    page.docs
                        .iter()
                        .map(|d| d["id"].as_str().unwrap().to_owned()),
                );
                match page.next {
                    Some(n) => cursor = Some(n),
                    None => break,
                }
            }
            assert_eq!(ids, ["c", "a", "d", "b", "e", "j"], "rows {rows}");
        }
    }

    #[test]
    fn updates_to_one_document_merge_and_keep_the_first_version() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path());
        let q = ReadQuery {
            filter: Filter::All,
            fields: vec!["id".into()],
            rows: 100,
        };
        block_on(s.read_page(&q, None)).unwrap();
        let up = |id: &str, version, field: &str, v: Value| AtomicUpdate {
            id: id.into(),
            version: Some(version),
            set: vec![(field.into(), v)],
        };
        block_on(s.update(&[
            up("d", 7, "exact_signature_l", json!(1)),
            up("a", 5, "x_b", json!(true)),
        ]))
        .unwrap();
        block_on(s.update(&[up("a", 6, "x_b", json!(false)), up("d", 8, "y_i", json!(2))]))
            .unwrap();
        block_on(s.commit(CommitMode::Hard)).unwrap();
        let out = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
        let lines: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        // Input order (a before d), one line each, later sets win, the first version stays.
        assert_eq!(
            lines,
            vec![
                json!({"id":"a","x_b":{"set":false},"_version_":5}),
                json!({"id":"d","exact_signature_l":{"set":1},"y_i":{"set":2},"_version_":7}),
            ]
        );
    }
}
