//! The embedded store: documents in a file, updates to a file. No Solr needed.
//!
//! Input is JSON Lines of Solr documents, or a Solr `/select` JSON response (converted once into a
//! temporary JSON Lines file beside the system's temp dir). Reads stream the file; the only
//! whole-file structures kept in memory are an index from a 64-bit hash of each id to its byte offset,
//! which serves real-time gets (about 36 bytes per document), and the input offset of each pending
//! update (8 bytes). Facets and bucket statistics are counting passes.
//!
//! Updates go to a temporary file next to the output and only become the output at [`Store::commit`],
//! by rename: a run that fails half-way leaves no half-written output. The output holds the atomic
//! updates as JSON Lines ready to POST to `/update`, or, with [`OutputFormat::Docs`], every input
//! document with the updates applied (the next run's input).
//!
//! The file never changes under the worker, so version conflicts cannot happen here; updates still
//! carry the version that was read, so the output is safe to POST to a live core later.
//!
//! # Reading fast
//!
//! A run streams every document three times but needs its text at most once, and a crawled page is
//! mostly text. Three things keep the streaming cheap:
//!
//! - **Projection.** A line is parsed keeping only the requested fields; the others are checked but
//!   never allocated, which is most of the cost of a 5 KB page.
//! - **Parallel batches.** A read-ahead thread copies the file out of the kernel while the lines
//!   read before are parsed, a batch at a time, on every core. A batch never holds more lines than the
//!   caller can still take, so a page ends exactly where the next one starts.
//! - **The light copy.** A caller that will stream the same few fields again and again says so with
//!   [`Store::hint_rereads`]. The first complete sequential read that parses those fields anyway also
//!   writes them, one small line per document, to a temporary file next to the output; later reads
//!   whose fields (and filter fields) it covers stream that file instead of the input: a few hundred
//!   bytes per document instead of several KB. It plays the part docValues play in Solr. The input never
//!   changes under the store, so the copy cannot go stale; a read it does not cover, or one that does
//!   not start where the copy's last read stopped, reads the input as before. Nothing depends on it
//!   but speed.

use std::collections::HashMap;
use std::fs::File;
use std::hash::BuildHasherDefault;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Mutex};

use rayon::prelude::*;
use rustc_hash::FxHasher;
use serde_json::Value;
use tracing::debug;

use super::{
    id_hash, AtomicUpdate, Bucket, CommitMode, Doc, FacetQuery, Filter, Page, ReadQuery,
    StatsBucket, StatsQuery, Store, StoreError, UpdateOutcome,
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

/// A place in the input: byte offset and number of lines before it.
type Pos = (u64, u64);

type FxHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

struct State {
    /// id hash → byte offset of the line, for every line read so far.
    index: FxHashMap<u64, u64>,
    /// True once a read reached the end of the file, so the index is complete.
    index_complete: bool,
    /// A reader left where the last page ended, so sequential pages do not seek.
    reader: Option<(Pos, ReadAhead)>,
    light: Light,
    pending: Option<(TempFile, BufWriter<File>)>,
    /// The input offset of each pending update's document, in the order written.
    pending_docs: Vec<u64>,
    /// Where each run of pending updates in input order starts: index into `pending_docs`, byte
    /// offset in the pending file.
    pending_runs: Vec<(usize, u64)>,
    pending_bytes: u64,
}

/// The light copy (see the module doc): its state across reads.
///
/// A record is one line, `START END_OFFSET END_LINE JSON`: the document's byte offset in the input
/// (for the id index), the input position after its line (for cursors), and the document reduced to
/// the copy's fields.
#[derive(Default)]
struct Light {
    /// The fields the caller announced (sorted, with the id): what the next copy will hold.
    wanted: Option<Vec<String>>,
    /// A copy being written by a sequential read of the input, and where that read has got to.
    building: Option<(Vec<String>, TempFile, BufWriter<File>, Pos)>,
    /// A complete copy: its fields, its file, and the input position at its end.
    ready: Option<(Vec<String>, TempFile, Pos)>,
    /// A reader of the complete copy left where the last page ended, at that input position: the
    /// records of its last batch that the page had no room for (parsed for the fields kept then),
    /// then the reader.
    reader: Option<(Pos, Leftover, ReadAhead)>,
}

/// Records read from the light copy but not yet handed out: a filtered page fills up in the middle
/// of a batch, and the next page starts with them.
#[derive(Default)]
struct Leftover {
    keep: Option<Vec<String>>,
    records: std::collections::VecDeque<Parsed>,
    /// The reader has nothing more after these.
    eof: bool,
}

impl Light {
    /// Whether a read keeping `keep` (`None`: every field) can be served by the complete copy.
    fn covers(&self, keep: Option<&[String]>) -> bool {
        match (&self.ready, keep) {
            (Some((fields, _, _)), Some(keep)) => keep.iter().all(|k| fields.contains(k)),
            _ => false,
        }
    }

    /// Whether a read of the input from `start` keeping `keep` writes the next copy; starts one when it
    /// reads from the beginning with every announced field.
    fn builds(
        &mut self,
        start: Pos,
        keep: Option<&[String]>,
        path: impl FnOnce() -> PathBuf,
    ) -> bool {
        let Some(wanted) = &self.wanted else {
            return false;
        };
        let has_all = keep.is_none_or(|k| wanted.iter().all(|w| k.contains(w)));
        if !has_all {
            return false;
        }
        if matches!(&self.building, Some((_, _, _, next)) if *next == start) {
            return true;
        }
        let already = matches!(&self.ready, Some((fields, _, _)) if fields == wanted);
        if start != (0, 0) || already {
            return false;
        }
        let tmp = TempFile(path());
        match File::create(&tmp.0) {
            Ok(f) => {
                self.building = Some((
                    wanted.clone(),
                    tmp,
                    BufWriter::with_capacity(1 << 20, f),
                    start,
                ));
                true
            }
            Err(e) => {
                debug!(error = %e, "no light copy: cannot create its temporary file");
                false
            }
        }
    }

    /// The fields of the copy being built.
    fn building_fields(&self) -> Option<&[String]> {
        self.building.as_ref().map(|(fields, ..)| fields.as_slice())
    }

    /// Appends one document's record (see [`record_line`]) to the copy being built; a failure only
    /// abandons the copy.
    fn record(&mut self, line: &[u8], end: Pos) {
        let Some((_, _, w, next)) = &mut self.building else {
            return;
        };
        match w.write_all(line) {
            Ok(()) => *next = end,
            Err(e) => {
                debug!(error = %e, "light copy abandoned");
                self.building = None;
            }
        }
    }

    /// The read that built the copy reached the end of the input at `end`.
    fn finish(&mut self, end: Pos) {
        let Some((fields, tmp, mut w, _)) = self.building.take() else {
            return;
        };
        match w.flush() {
            Ok(()) => {
                self.ready = Some((fields, tmp, end));
                self.reader = None;
            }
            Err(e) => debug!(error = %e, "light copy abandoned"),
        }
    }
}

/// A document's record in the light copy (see [`Light`]), with its newline.
fn record_line(doc: &Doc, fields: &[String], start: u64, end: Pos) -> Vec<u8> {
    let mut line = format!("{start} {} {} ", end.0, end.1).into_bytes();
    serde_json::to_writer(&mut line, &Reduced { doc, fields }).expect("a JSON object serialises");
    line.push(b'\n');
    line
}

/// A document reduced to some fields (sorted), serialised without copying it.
struct Reduced<'a> {
    doc: &'a Doc,
    fields: &'a [String],
}

impl serde::Serialize for Reduced<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(
            self.doc
                .iter()
                .filter(|(k, _)| self.fields.binary_search(k).is_ok()),
        )
    }
}

/// A file removed on drop.
struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A file read ahead by a thread of its own, so that copying it out of the kernel overlaps with
/// parsing what came before (the copy alone is a good part of a pass over 5 KB pages). At most a few
/// chunks are read ahead; dropping the reader stops the thread.
struct ReadAhead {
    chunks: mpsc::Receiver<io::Result<Vec<u8>>>,
    /// Chunks read out go back to the thread, which fills them again: fresh memory for every chunk
    /// would cost a page fault per 4 KB.
    spent: mpsc::Sender<Vec<u8>>,
    chunk: Vec<u8>,
    at: usize,
    done: bool,
}

impl ReadAhead {
    const CHUNK: u64 = 1 << 20;

    /// Reads `path` from byte `offset`.
    fn open(path: &Path, offset: u64) -> io::Result<Self> {
        let mut file = File::open(path)?;
        file.seek(SeekFrom::Start(offset))?;
        let (tx, rx) = mpsc::sync_channel(4);
        let (spent, recycled) = mpsc::channel::<Vec<u8>>();
        std::thread::Builder::new()
            .name("solr-dedup-read".into())
            .spawn(move || loop {
                let mut chunk = recycled
                    .try_recv()
                    .unwrap_or_else(|_| Vec::with_capacity(Self::CHUNK as usize));
                chunk.clear();
                match (&mut file).take(Self::CHUNK).read_to_end(&mut chunk) {
                    // The end of the file; dropping the sender tells the reader.
                    Ok(0) => break,
                    Ok(_) => {
                        if tx.send(Ok(chunk)).is_err() {
                            break; // the reader is gone
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        break;
                    }
                }
            })?;
        Ok(ReadAhead {
            chunks: rx,
            spent,
            chunk: Vec::new(),
            at: 0,
            done: false,
        })
    }
}

impl Read for ReadAhead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = {
            let avail = self.fill_buf()?;
            let n = avail.len().min(buf.len());
            buf[..n].copy_from_slice(&avail[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for ReadAhead {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.at == self.chunk.len() && !self.done {
            match self.chunks.recv() {
                Ok(Ok(chunk)) => {
                    let _ = self.spent.send(std::mem::replace(&mut self.chunk, chunk));
                    self.at = 0;
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                Err(mpsc::RecvError) => self.done = true,
            }
        }
        Ok(&self.chunk[self.at..])
    }

    fn consume(&mut self, n: usize) {
        self.at = (self.at + n).min(self.chunk.len());
    }
}

/// Lines read but not parsed yet: one buffer, and per line its input offset, the input position after
/// it, and its bytes in the buffer.
#[derive(Default)]
struct Batch {
    buf: Vec<u8>,
    lines: Vec<(u64, Pos, Range<usize>)>,
}

impl Batch {
    fn clear(&mut self) {
        self.buf.clear();
        self.lines.clear();
    }

    /// Reads up to `max` more lines from `reader`, which stands at `pos`; true at the end of the file.
    fn read(&mut self, reader: &mut impl BufRead, pos: &mut Pos, max: usize) -> io::Result<bool> {
        for _ in 0..max {
            let from = self.buf.len();
            let n = reader.read_until(b'\n', &mut self.buf)?;
            if n == 0 {
                return Ok(true);
            }
            let start = pos.0;
            *pos = (pos.0 + n as u64, pos.1 + 1);
            self.lines.push((start, *pos, from..self.buf.len()));
        }
        Ok(false)
    }

    fn line(&self, i: usize) -> &[u8] {
        &self.buf[self.lines[i].2.clone()]
    }
}

/// A parsed line: the document, its id, its input offset and the input position after it.
type Parsed = (Doc, String, u64, Pos);

/// Lines per batch when the caller takes every document.
const BATCH_LINES: usize = 1024;

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
                index: FxHashMap::default(),
                index_complete: false,
                reader: None,
                light: Light::default(),
                pending: None,
                pending_docs: Vec::new(),
                pending_runs: Vec::new(),
                pending_bytes: 0,
            }),
        })
    }

    fn location(&self, line: u64) -> String {
        format!("{}:{}", self.input.display(), line)
    }

    /// A temporary file of this store: next to the output (the user chose that disk), or in the
    /// system's temp dir when the output is stdout. Unique per store, so that stores in one process
    /// never share one.
    fn temp_path(&self, kind: &str) -> PathBuf {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        match &self.output {
            Output::File(p) => {
                let name = p
                    .file_name()
                    .map_or("output".into(), |n| n.to_string_lossy());
                p.with_file_name(format!(".{name}.{kind}-{pid}-{seq}"))
            }
            Output::Stdout => std::env::temp_dir().join(format!("solr-dedup-{pid}-{seq}.{kind}")),
        }
    }

    /// Parses one input line, keeping only `keep` (plus the id) when given: the other values are
    /// checked but never allocated. `None` for a blank line.
    fn parse_line(
        &self,
        bytes: &[u8],
        line: u64,
        keep: Option<&[String]>,
    ) -> Result<Option<(Doc, String)>, StoreError> {
        let text = std::str::from_utf8(bytes).map_err(|_| {
            StoreError::io(
                format!("cannot read {}", self.location(line)),
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    "stream did not contain valid UTF-8",
                ),
            )
        })?;
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

    /// Parses one record of the light copy (see [`Light`]).
    fn parse_light(&self, bytes: &[u8], keep: Option<&[String]>) -> Result<Parsed, StoreError> {
        let broken = || StoreError::Unsupported("the light copy of the input is damaged".into());
        let mut parts = bytes.splitn(4, |&b| b == b' ');
        let mut number = || -> Result<u64, StoreError> {
            let p = parts.next().ok_or_else(broken)?;
            std::str::from_utf8(p)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(broken)
        };
        let (start, end) = (number()?, (number()?, number()?));
        let json = parts.next().ok_or_else(broken)?;
        match self.parse_line(json, end.1, keep)? {
            Some((doc, id)) => Ok((doc, id, start, end)),
            None => Err(broken()),
        }
    }

    /// Streams documents from `start`, calling `f` with each; `f` returns how many more it can take
    /// (0: stop), and `room` says how many it can take at first. A batch never holds more lines than
    /// that, so the read stops right after the last document taken, and the next read can continue
    /// there without seeking. Returns the position after the last line read and whether it is the end.
    fn scan<F>(
        &self,
        start: Pos,
        keep: Option<&[String]>,
        room: usize,
        mut f: F,
    ) -> Result<(Pos, bool), StoreError>
    where
        F: FnMut(Doc, &str) -> usize,
    {
        let mut guard = self.state.lock().expect("file store lock");
        let state = &mut *guard;
        let read_err =
            |line: u64, e| StoreError::io(format!("cannot read {}", self.location(line)), e);
        let open_err = |e| StoreError::io(format!("cannot read {}", self.input.display()), e);
        let mut batch = Batch::default();
        let mut room = room;

        let resumes = |r: &Option<(Pos, Leftover, ReadAhead)>| {
            matches!(r, Some((p, left, _)) if *p == start
                && (left.records.is_empty() || left.keep.as_deref() == keep))
        };
        if state.light.covers(keep) && (start == (0, 0) || resumes(&state.light.reader)) {
            let (_, copy, end) = state.light.ready.as_ref().expect("covers() saw it");
            let end = *end;
            let (mut left, mut eof, mut reader) = match state.light.reader.take() {
                Some((p, left, r)) if p == start => (left.records, left.eof, r),
                _ => (
                    Default::default(),
                    false,
                    ReadAhead::open(&copy.0, 0).map_err(open_err)?,
                ),
            };
            let mut pos = start;
            loop {
                if left.is_empty() {
                    if eof {
                        return Ok((end, true));
                    }
                    batch.clear();
                    let mut unused = (0, 0);
                    eof = batch
                        .read(&mut reader, &mut unused, room.min(BATCH_LINES))
                        .map_err(|e| read_err(pos.1 + 1, e))?;
                    let parsed = (0..batch.lines.len())
                        .into_par_iter()
                        .with_min_len(32)
                        .map(|i| self.parse_light(batch.line(i), keep))
                        .collect::<Vec<_>>();
                    left = parsed.into_iter().collect::<Result<_, _>>()?;
                }
                while let Some((doc, id, _, after)) = left.pop_front() {
                    pos = after;
                    room = f(doc, &id);
                    if room == 0 {
                        if left.is_empty() && eof {
                            return Ok((end, true));
                        }
                        let keep = keep.map(<[String]>::to_vec);
                        let rest = Leftover {
                            keep,
                            records: left,
                            eof,
                        };
                        state.light.reader = Some((pos, rest, reader));
                        return Ok((pos, false));
                    }
                }
            }
        }

        let mut reader = match state.reader.take() {
            Some((p, r)) if p == start => r,
            other => {
                state.reader = other;
                ReadAhead::open(&self.lines, start.0).map_err(open_err)?
            }
        };
        let builds = state.light.builds(start, keep, || self.temp_path("light"));
        let mut pos = start;
        loop {
            batch.clear();
            let eof = batch
                .read(&mut reader, &mut pos, room.min(BATCH_LINES))
                .map_err(|e| read_err(pos.1 + 1, e))?;
            let light_fields = state.light.building_fields().filter(|_| builds);
            let parsed = (0..batch.lines.len())
                .into_par_iter()
                .with_min_len(32)
                .map(|i| {
                    let (at, after, _) = batch.lines[i];
                    let parsed = self.parse_line(batch.line(i), after.1, keep)?;
                    Ok::<_, StoreError>(parsed.map(|(doc, id)| {
                        let record = light_fields.map(|f| record_line(&doc, f, at, after));
                        (doc, id, at, after, record)
                    }))
                })
                .collect::<Vec<_>>();
            let taken = parsed.len();
            for (i, p) in parsed.into_iter().enumerate() {
                let Some((doc, id, at, after, record)) = p? else {
                    continue;
                };
                if !state.index_complete {
                    state.index.insert(id_hash(&id), at);
                }
                if let Some(line) = record {
                    state.light.record(&line, after);
                }
                room = f(doc, &id);
                if room == 0 {
                    let after_line = after;
                    if i + 1 == taken {
                        state.reader = Some((after_line, reader));
                    }
                    return Ok((after_line, false));
                }
            }
            if eof {
                if pos != (0, 0) {
                    state.index_complete = true;
                }
                if builds {
                    state.light.finish(pos);
                }
                return Ok((pos, true));
            }
        }
    }

    fn scan_all<F: FnMut(Doc, &str)>(
        &self,
        keep: Option<&[String]>,
        mut f: F,
    ) -> Result<(), StoreError> {
        self.scan((0, 0), keep, usize::MAX, |doc, id| {
            f(doc, id);
            usize::MAX
        })
        .map(|_| ())
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
            OutputFormat::Updates => loop {
                let docs = merged.next_documents(BATCH_LINES)?;
                if docs.is_empty() {
                    break;
                }
                let texts = (0..docs.len())
                    .into_par_iter()
                    .with_min_len(32)
                    .map(|i| {
                        serde_json::to_vec(&merge_updates(&docs[i].1)?)
                            .map_err(|e| StoreError::Unsupported(e.to_string()))
                    })
                    .collect::<Vec<_>>();
                for text in texts {
                    out.write_all(&text?).map_err(werr)?;
                    out.write_all(b"\n").map_err(werr)?;
                }
            },
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

    /// Every input document with its merged update applied, in input order. Parsing and printing a
    /// whole document is the expensive part, so it runs in parallel batches; the pending updates are a
    /// sequential stream, so each batch takes its documents' updates from it first.
    fn write_docs(&self, merged: &mut Merged, out: &mut impl Write) -> Result<(), StoreError> {
        let mut next = merged.next_document()?;
        let mut reader = ReadAhead::open(&self.lines, 0)
            .map_err(|e| StoreError::io(format!("cannot read {}", self.input.display()), e))?;
        let mut batch = Batch::default();
        let mut pos = (0, 0);
        loop {
            batch.clear();
            let eof = batch
                .read(&mut reader, &mut pos, BATCH_LINES)
                .map_err(|e| StoreError::io(format!("cannot read {}", self.input.display()), e))?;
            let mut updates = Vec::with_capacity(batch.lines.len());
            for &(at, _, _) in &batch.lines {
                match next.take() {
                    Some((doc_offset, update)) if doc_offset == at => {
                        updates.push(Some(update));
                        next = merged.next_document()?;
                    }
                    other => {
                        next = other;
                        updates.push(None);
                    }
                }
            }
            let texts = (0..batch.lines.len())
                .into_par_iter()
                .with_min_len(32)
                .map(|i| {
                    let (_, after, _) = batch.lines[i];
                    let Some((mut doc, _)) = self.parse_line(batch.line(i), after.1, None)? else {
                        return Ok::<_, StoreError>(None);
                    };
                    if let Some(lines) = &updates[i] {
                        let update = merge_updates(lines)?;
                        apply(&mut doc, &update, &self.id_field, &self.version_field);
                    }
                    Ok(Some(
                        serde_json::to_string(&doc).expect("a JSON object serialises"),
                    ))
                })
                .collect::<Vec<_>>();
            for text in texts {
                let Some(text) = text? else { continue };
                writeln!(out, "{text}")
                    .map_err(|e| StoreError::io("cannot write the output", e))?;
            }
            if eof {
                return Ok(());
            }
        }
    }

    /// The document at `offset` through an open handle of the input.
    fn read_at(
        &self,
        file: &mut File,
        offset: u64,
        keep: Option<&[String]>,
    ) -> Result<Option<(Doc, String)>, StoreError> {
        let err = |e| StoreError::io(format!("cannot read {}", self.input.display()), e);
        file.seek(SeekFrom::Start(offset)).map_err(err)?;
        let mut buf = Vec::new();
        BufReader::new(&mut *file)
            .read_until(b'\n', &mut buf)
            .map_err(err)?;
        self.parse_line(&buf, 0, keep)
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
    /// The input offset of each pending update's document, in the order written.
    docs: Vec<u64>,
    runs: Vec<Run>,
}

/// A run of pending updates in input order: `docs[next..end]`, read from `reader`.
struct Run {
    next: usize,
    end: usize,
    reader: BufReader<File>,
}

impl Run {
    /// The next pending update of this run, as written.
    fn read(&mut self) -> Result<String, StoreError> {
        let mut line = String::new();
        self.reader
            .read_line(&mut line)
            .map_err(|e| StoreError::io("cannot read pending updates", e))?;
        self.next += 1;
        Ok(line)
    }
}

impl Merged {
    /// `runs` holds where each run starts: index into `docs`, byte offset in the pending file.
    fn new(
        path: Option<&Path>,
        docs: Vec<u64>,
        runs: Vec<(usize, u64)>,
    ) -> Result<Self, StoreError> {
        let mut readers = Vec::new();
        if let Some(p) = path {
            for (i, &(next, at)) in runs.iter().enumerate() {
                let mut f =
                    File::open(p).map_err(|e| StoreError::io("cannot read pending updates", e))?;
                f.seek(SeekFrom::Start(at))
                    .map_err(|e| StoreError::io("cannot read pending updates", e))?;
                readers.push(Run {
                    next,
                    end: runs.get(i + 1).map_or(docs.len(), |r| r.0),
                    reader: BufReader::with_capacity(1 << 20, f),
                });
            }
        }
        Ok(Merged {
            docs,
            runs: readers,
        })
    }

    fn head(&self, run: &Run) -> Option<u64> {
        (run.next < run.end).then(|| self.docs[run.next])
    }

    /// The pending updates of the next document, unparsed and in the order they were written, with
    /// the document's input offset. Reading is sequential; parsing and merging ([`merge_updates`])
    /// can then run in parallel.
    fn next_document(&mut self) -> Result<Option<(u64, Vec<String>)>, StoreError> {
        let Some(offset) = self.runs.iter().filter_map(|r| self.head(r)).min() else {
            return Ok(None);
        };
        let mut lines = Vec::new();
        // Runs in write order, and within a run in order.
        for i in 0..self.runs.len() {
            while self.head(&self.runs[i]) == Some(offset) {
                lines.push(self.runs[i].read()?);
            }
        }
        Ok(Some((offset, lines)))
    }

    /// Up to `max` documents' pending updates (see [`Merged::next_document`]).
    fn next_documents(&mut self, max: usize) -> Result<Vec<(u64, Vec<String>)>, StoreError> {
        let mut out = Vec::new();
        while out.len() < max {
            match self.next_document()? {
                Some(d) => out.push(d),
                None => break,
            }
        }
        Ok(out)
    }
}

/// One document's pending updates, oldest first, merged into one: later operations on a field win,
/// the id and the first version stay.
fn merge_updates(lines: &[String]) -> Result<Value, StoreError> {
    let mut merged: Option<Value> = None;
    for line in lines {
        let later: Value = serde_json::from_str(line)
            .map_err(|e| StoreError::Unsupported(format!("pending update: {e}")))?;
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
    Ok(merged.unwrap_or(Value::Null))
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
        evaluable(&query.filter)?;
        let start = parse_cursor(cursor)?;
        let rows = query.rows.max(1);
        let mut docs = Vec::with_capacity(rows.min(4096));
        let mut keep = query.fields.clone();
        query.filter.fields(&mut keep);
        let keep = (!query.fields.iter().any(|f| f == "*")).then_some(keep);
        let (end, done) = self.scan(start, keep.as_deref(), rows, |doc, _| {
            if query.filter.matches(&doc) {
                docs.push(project(doc, &query.fields));
            }
            rows - docs.len()
        })?;
        Ok(Page {
            docs,
            next: (!done).then(|| format!("{}:{}", end.0, end.1)),
        })
    }

    fn hint_rereads(&self, query: &ReadQuery) {
        if query.fields.iter().any(|f| f == "*") {
            return;
        }
        let mut fields = query.fields.clone();
        query.filter.fields(&mut fields);
        fields.push(self.id_field.clone());
        fields.sort_unstable();
        fields.dedup();
        let mut state = self.state.lock().expect("file store lock");
        if state.light.wanted.as_ref() != Some(&fields) {
            state.light.wanted = Some(fields);
            state.light.building = None;
        }
    }

    async fn facet(&self, query: &FacetQuery) -> Result<Vec<Bucket>, StoreError> {
        evaluable(&query.filter)?;
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
        evaluable(&query.filter)?;
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
        let keep = (!fields.iter().any(|f| f == "*")).then_some(fields);
        let mut file = File::open(&self.lines)
            .map_err(|e| StoreError::io(format!("cannot read {}", self.input.display()), e))?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let find = || {
                let state = self.state.lock().expect("file store lock");
                (state.index.get(&id_hash(id)).copied(), state.index_complete)
            };
            let mut offset = find();
            if let (None, false) = offset {
                // Not read yet (a get before the first full read): index the whole file once.
                self.scan_all(Some(&[]), |_, _| {})?;
                offset = find();
            }
            if let (Some(off), _) = offset {
                if let Some((doc, found)) = self.read_at(&mut file, off, keep)? {
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
            let path = self.temp_path("pending");
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
            let mut line = u.json_bytes(&self.id_field, &self.version_field);
            line.push(b'\n');
            if state
                .pending_docs
                .last()
                .is_none_or(|&last| doc_offset < last)
            {
                let run = (state.pending_docs.len(), state.pending_bytes);
                state.pending_runs.push(run);
            }
            state.pending_docs.push(doc_offset);
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
        let (pending, docs, runs) = {
            let mut state = self.state.lock().expect("file store lock");
            let docs = std::mem::take(&mut state.pending_docs);
            let runs = std::mem::take(&mut state.pending_runs);
            state.pending_bytes = 0;
            match state.pending.take() {
                Some((tmp, mut w)) => {
                    w.flush()
                        .map_err(|e| StoreError::io("cannot write pending updates", e))?;
                    (Some(tmp), docs, runs)
                }
                None => (None, docs, runs),
            }
        };
        let merged = Merged::new(pending.as_ref().map(|t| t.0.as_path()), docs, runs)?;
        self.write_output(merged)
    }

    fn describe(&self) -> String {
        format!("file {}", self.input.display())
    }
}

/// The file store evaluates filters itself; a raw Solr `fq` would match nothing, silently.
fn evaluable(filter: &Filter) -> Result<(), StoreError> {
    if filter.is_solr_only() {
        return Err(StoreError::Unsupported(format!(
            "the file store cannot evaluate the Solr query {:?}; write the filter in the subset file mode understands (see --help)",
            filter.to_solr()
        )));
    }
    Ok(())
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
        open_lines(
            dir,
            &docs.iter().map(|d| format!("{d}\n")).collect::<String>(),
        )
    }

    #[test]
    fn a_raw_solr_query_is_refused_not_matched_against_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path());
        let raw = Filter::Solr("{!term f=id}a".into());
        let read = ReadQuery {
            filter: Filter::All.and(Filter::Not(Box::new(raw.clone()))),
            fields: vec!["id".into()],
            rows: 10,
        };
        assert!(matches!(
            block_on(s.read_page(&read, None)),
            Err(StoreError::Unsupported(_))
        ));
        let facet = FacetQuery {
            field: "exact_signature_l".into(),
            filter: raw,
            mincount: 1,
        };
        assert!(matches!(
            block_on(s.facet(&facet)),
            Err(StoreError::Unsupported(_))
        ));
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

    fn read_all(s: &FileStore, q: &ReadQuery) -> Vec<Doc> {
        let mut docs = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = block_on(s.read_page(q, cursor.as_deref())).unwrap();
            docs.extend(page.docs);
            match page.next {
                Some(n) => cursor = Some(n),
                None => return docs,
            }
        }
    }

    fn open_lines(dir: &Path, text: &str) -> FileStore {
        let input = dir.join("in.jsonl");
        std::fs::write(&input, text).unwrap();
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
    fn rereads_come_from_the_light_copy_and_equal_reads_of_the_input() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = String::new();
        for i in 0..40 {
            let d = json!({"id": format!("d{i:02}"), "sku": format!("http://x.org/{i}"),
                "n_i": i % 7, "text_t": "long text ".repeat(50), "odd_b": i % 2 == 1});
            text.push_str(&format!("{d}\n"));
            if i % 9 == 0 {
                text.push_str("  \n\n");
            }
        }
        let light = ReadQuery {
            filter: Filter::Present("odd_b".into()),
            fields: vec!["id".into(), "sku".into(), "n_i".into()],
            rows: 3,
        };
        let s = open_lines(dir.path(), &text);
        s.hint_rereads(&light);
        let first = read_all(&s, &light);
        assert_eq!(first.len(), 40);
        assert!(
            first[0].get("odd_b").is_none(),
            "filter fields are not returned"
        );
        let copy = s
            .state
            .lock()
            .unwrap()
            .light
            .ready
            .as_ref()
            .map(|r| r.0.clone());
        assert_eq!(
            copy,
            Some(vec![
                "id".into(),
                "n_i".into(),
                "odd_b".into(),
                "sku".into()
            ])
        );
        // Every later read equals the same read on a store that never made a copy.
        let other_dir = tempfile::tempdir().unwrap();
        let plain = open_lines(other_dir.path(), &text);
        let narrower = ReadQuery {
            filter: Filter::Term {
                field: "odd_b".into(),
                value: "true".into(),
            },
            fields: vec!["id".into(), "n_i".into()],
            rows: 4,
        };
        let uncovered = ReadQuery {
            fields: vec!["id".into(), "text_t".into()],
            ..light.clone()
        };
        let other_filter = ReadQuery {
            filter: Filter::Term {
                field: "n_i".into(),
                value: "3".into(),
            },
            ..light.clone()
        };
        for q in [&light, &narrower, &uncovered, &other_filter] {
            assert_eq!(read_all(&s, q), read_all(&plain, q), "{q:?}");
        }
        assert_eq!(read_all(&s, &narrower).len(), 20);
        // A page read from the copy leaves its reader where the page ended...
        let page = block_on(s.read_page(&light, None)).unwrap();
        let next = page.next.unwrap();
        assert!(s.state.lock().unwrap().light.reader.is_some());
        // ...and any cursor, from the copy or from the input, continues at the same document.
        let rest = block_on(s.read_page(&light, Some(&next))).unwrap();
        let rest_plain = block_on(plain.read_page(&light, Some(&next))).unwrap();
        assert_eq!(rest, rest_plain);
        assert_eq!(rest.docs[0]["id"], json!("d03"));
    }

    #[test]
    fn a_get_finds_documents_not_read_yet() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path());
        let q = ReadQuery {
            filter: Filter::All,
            fields: vec!["id".into()],
            rows: 2,
        };
        let page = block_on(s.read_page(&q, None)).unwrap();
        assert_eq!(page.docs.len(), 2);
        let ids: Vec<String> = ["a", "m", "j"].iter().map(|s| s.to_string()).collect();
        let docs = block_on(s.get(&ids, &["*".to_string()])).unwrap();
        let got: Vec<&str> = docs.iter().map(|d| d["id"].as_str().unwrap()).collect();
        assert_eq!(got, ["a", "m", "j"]);
        assert_eq!(docs[1]["text_t"], json!("no signature"));
        // The page read goes on where it stopped.
        let next = block_on(s.read_page(&q, page.next.as_deref())).unwrap();
        assert_eq!(next.docs[0]["id"], json!("d"));
    }

    #[test]
    fn a_line_that_is_not_utf8_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.jsonl");
        std::fs::write(&input, b"{\"id\":\"a\"}\n{\"id\":\"b\xff\"}\n").unwrap();
        let s = FileStore::open(
            &input,
            Output::Stdout,
            OutputFormat::Updates,
            "id",
            "_version_",
        )
        .unwrap();
        let q = ReadQuery {
            filter: Filter::All,
            fields: vec!["id".into()],
            rows: 10,
        };
        let err = block_on(s.read_page(&q, None)).unwrap_err().to_string();
        assert!(err.ends_with("in.jsonl:2"), "{err}");
    }
}
