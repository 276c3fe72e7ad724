//! The embedded store: documents in a file, updates to a file. No Solr needed.
//!
//! Input is JSON Lines of Solr documents, or a Solr `/select` JSON response (converted once into a
//! temporary JSON Lines file beside the system's temp dir). Reads stream the file; the only
//! whole-file structures are an index from a 64-bit hash of each id to its byte offset, which serves
//! real-time gets (16 bytes per document, `index`), the input offset of each pending update
//! (8 bytes) and the id hashes of documents with several values in a one-value field: each keeps a
//! share of the `--memory` budget in memory ([`FileStore::with_memory`]) and the rest in anonymous
//! temporary files. Facets and bucket statistics are counting passes.
//!
//! Updates go to a temporary file and only become the output at [`Store::commit`]. A regular output
//! file is replaced by rename (a run that fails half-way leaves no half-written output), a symbolic
//! link is followed to its target, and a special file (`/dev/null`, a FIFO) or standard output is
//! streamed to, never replaced (see [`target`]). The output holds the atomic updates as JSON Lines
//! ready to POST to `/update`, or, with [`OutputFormat::Docs`], every input document with the updates
//! applied (the next run's input).
//!
//! # Input that Solr would refuse
//!
//! Lines are read with a bound (`FileStore::with_max_line_bytes`, `--max-line-bytes`): a longer
//! line is an error naming `file:line`, and no more than the bound is ever held for one line. Values
//! are read as Solr would store them: a number or boolean in a text or string field is its string form
//! (`12345` is the text `"12345"`); an array where one value is expected gives its first value
//! (counted, see [`FileStore::multi_valued_first_taken`]); a `_version_` that is not a whole number
//! (or a string of one), and an id that is neither a string nor an integer, are errors naming
//! `file:line`, as is an id listed twice (with both lines).
//!
//! # Temporary files
//!
//! The pending updates, the light copy and the output's own temporary file sit beside the output
//! (the disk the user chose, and the rename must stay in one folder), named `.NAME.KIND-PID-SEQ`;
//! when the output is streamed (standard output, a special file) they go to the temp dir
//! (`$TMPDIR`, else `/tmp`) as `solr-dedup-PID-SEQ.KIND`, as does a converted `/select` response.
//! They are removed when the store is dropped. A killed run (SIGKILL, a crash) cannot remove them,
//! so opening a store removes, in those two places, the files so named whose process no longer runs
//! (told by `/proc/PID`; on a system without `/proc` nothing is removed). A process of another PID
//! namespace writing beside the same output would look dead: do not share an output folder between
//! containers.
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

mod index;
mod input;
mod journal;
mod light_copy;
mod operations;
mod parse;
mod readahead;
pub mod target;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Mutex};

use rayon::prelude::*;
use serde_json::Value;
use tracing::{debug, info};

use crate::spill::{Column, SpillArea};
use index::{IdIndex, Twice};
use input::{convert_select_response, looks_like_select_response};
use journal::{apply, merge_updates, Merged};
use light_copy::{record_line, Leftover, Light};
use parse::{project, Projection};
pub use readahead::remove_all_temp_files;
use readahead::{
    read_line_bounded, remove_stale_temp_files, temp_name, too_long, Batch, ReadAhead, TempFile,
};
use target::Target;

use super::{
    id_hash, AtomicUpdate, Bucket, CommitMode, CostModel, Doc, FacetQuery, Filter, Page, ReadQuery,
    Store, StoreError, UpdateOutcome, Via,
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
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Output {
    /// A file, written atomically at commit.
    File(PathBuf),
    /// Standard output, written at commit.
    #[default]
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
    /// Where the output goes, links followed.
    target: Target,
    /// The output's temporary file, made at open (a replaced target only).
    out_temp: Mutex<Option<TempFile>>,
    /// [`FileStore::with_deferred_output`]: commit writes the output whole but leaves it for
    /// [`Store::publish`] to put in place; this holds it (`Some(None)`: written, nothing to move).
    deferred: Option<Mutex<Option<Option<TempFile>>>>,
    /// Where the other temporary files go, and the name they are made beside (`None`: the temp dir).
    temp_dir: (PathBuf, Option<String>),
    format: OutputFormat,
    id_field: String,
    version_field: String,
    /// The longest line read, in bytes (without its newline).
    max_line: usize,
    /// Fields read as one text or string value (see [`FileStore::with_text_fields`]).
    text_fields: Vec<String>,
    /// Id hashes of the documents where a field holding one value held several.
    multi_valued: Mutex<MultiValued>,
    /// Where the id index and the pending updates' offsets spill (see [`FileStore::with_memory`]).
    spill: SpillArea,
    state: Mutex<State>,
}

/// The default of `--max-line-bytes`: 64 MiB. A crawled page's document is a few KB to a few MB
/// (crawlers cap what they parse well below this), so 64 MiB admits any real page with room to spare,
/// while what one line costs (the line, then its parse, on each parsing thread) stays a small part of
/// a small machine's memory, and a file that is not JSON Lines (one endless line) fails fast.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 << 20;

/// The documents in which a field holding one value held several: their id hashes, noted each time
/// such a document is read (a 128th of the budget in memory, the rest spilled), and counted once
/// each when asked.
#[derive(Default)]
struct MultiValued {
    hashes: Option<Column<u64>>,
    /// The first few, told in the log.
    told: Vec<u64>,
    /// A hash could not be kept: the count is a lower bound.
    failed: bool,
}

impl MultiValued {
    const SHARE: u64 = 128;
    const TOLD: usize = 10;

    /// Notes a document; whether to tell it in the log (one of the first few).
    fn note(&mut self, hash: u64, area: &SpillArea) -> bool {
        let hashes = self
            .hashes
            .get_or_insert_with(|| Column::new(area.clone(), area.share(Self::SHARE)));
        // After a failed write nothing more is kept: the count is a lower bound then.
        self.failed = self.failed || hashes.push(hash).is_err();
        let tell = self.told.len() < Self::TOLD && !self.told.contains(&hash);
        if tell {
            self.told.push(hash);
        }
        tell
    }

    /// How many distinct documents were noted.
    fn distinct(&self, area: &SpillArea) -> u64 {
        let Some(hashes) = &self.hashes else {
            return 0;
        };
        let count = || -> io::Result<u64> {
            let pairs = hashes.iter().map(|h| h.map(|h| (h, 0u32)));
            let runs = crate::spill::Runs::sort(area, area.share(Self::SHARE), pairs)?;
            let (mut n, mut last) = (0u64, None);
            runs.merge(|(h, _)| {
                if last != Some(h) {
                    n += 1;
                    last = Some(h);
                }
                Ok(())
            })?;
            Ok(n)
        };
        match count() {
            Ok(n) if !self.failed => n,
            outcome => {
                tracing::warn!(
                    error = outcome.err().map(|e| e.to_string()),
                    "the documents with several values in a one-value field could not all be \
                     counted; the report's figure is a lower bound"
                );
                self.told.len() as u64
            }
        }
    }
}

/// The error of a failed read or write of the id index's temporary files.
fn index_error(e: io::Error) -> StoreError {
    StoreError::io("cannot keep the index of the input's ids", e)
}

/// A place in the input: byte offset and number of lines before it.
type Pos = (u64, u64);

struct State {
    /// id hash → byte offset of the line, once a read went through the whole file.
    index: IdIndex,
    /// A reader left where the last page ended, so sequential pages do not seek.
    reader: Option<(Pos, ReadAhead)>,
    light: Light,
    pending: Option<(TempFile, BufWriter<File>)>,
    /// The input offset of each pending update's document, in the order written (a 64th of the
    /// budget in memory, the rest spilled), once an update came.
    pending_docs: Option<Column<u64>>,
    /// Where each run of pending updates in input order starts: index into `pending_docs`, byte
    /// offset in the pending file.
    pending_runs: Vec<(usize, u64)>,
    pending_bytes: u64,
    /// The input offset of the last pending update (a smaller one starts a new run).
    pending_last: Option<u64>,
}

/// A parsed line: the document, its id, its input offset and the input position after it.
type Parsed = (Doc, String, u64, Pos);

/// Lines per batch when the caller takes every document.
const BATCH_LINES: usize = 1024;

impl FileStore {
    /// Opens `input` for reading; fails early (before any work) when the output cannot be written,
    /// or is the input itself. Removes the temporary files a killed run left (see the module doc).
    pub fn open(
        input: &Path,
        output: Output,
        format: OutputFormat,
        id_field: &str,
        version_field: &str,
    ) -> Result<Self, StoreError> {
        Self::open_with(
            input,
            output,
            format,
            id_field,
            version_field,
            DEFAULT_MAX_LINE_BYTES,
        )
    }

    /// [`FileStore::open`] with lines of at most `max_line` bytes (`--max-line-bytes`), which also
    /// bounds the conversion of a `/select` response.
    pub fn open_with(
        input: &Path,
        output: Output,
        format: OutputFormat,
        id_field: &str,
        version_field: &str,
        max_line: usize,
    ) -> Result<Self, StoreError> {
        let cannot_write = |path: &Path, e| {
            StoreError::io(
                format!(
                    "cannot write the output {} (check the directory and permissions)",
                    path.display()
                ),
                e,
            )
        };
        let target = match &output {
            Output::File(path) => Target::resolve(path).map_err(|e| cannot_write(path, e))?,
            Output::Stdout => Target::Stdout,
        };
        if let (Output::File(path), Target::Replace(_) | Target::Stream(_)) = (&output, &target) {
            if target::same_file(input, path) {
                return Err(StoreError::unsupported(format!(
                    "the output {} is the input {}; write the output to another file",
                    path.display(),
                    input.display()
                )));
            }
        }
        let temp_dir = match target.beside() {
            Some((dir, name)) => (dir, Some(name)),
            None => (std::env::temp_dir(), None),
        };
        remove_stale_temp_files(&std::env::temp_dir(), None);
        // Prove now that the output can be written, not after an hour of work.
        let out_temp = match &output {
            Output::File(path) => target.create_temp().map_err(|e| cannot_write(path, e))?,
            Output::Stdout => None,
        };
        let mut file = File::open(input)
            .map_err(|e| StoreError::io(format!("cannot read {}", input.display()), e))?;
        let (lines, converted) = if looks_like_select_response(&mut file, input)? {
            let tmp = convert_select_response(input, max_line)?;
            (tmp.0.clone(), Some(tmp))
        } else {
            (input.to_path_buf(), None)
        };
        Ok(FileStore {
            input: input.to_path_buf(),
            lines,
            _converted: converted,
            target,
            out_temp: Mutex::new(out_temp),
            deferred: None,
            temp_dir,
            format,
            id_field: id_field.to_owned(),
            version_field: version_field.to_owned(),
            max_line,
            text_fields: Vec::new(),
            multi_valued: Mutex::default(),
            spill: SpillArea::new(None, crate::spill::DEFAULT_MEMORY),
            state: Mutex::new(State {
                index: IdIndex::new(SpillArea::new(None, crate::spill::DEFAULT_MEMORY)),
                reader: None,
                light: Light::default(),
                pending: None,
                pending_docs: None,
                pending_runs: Vec::new(),
                pending_bytes: 0,
                pending_last: None,
            }),
        })
    }

    /// The fields read as one text or string value (the text, title, description, URL): in them a
    /// number or boolean is read as its string form, as Solr indexes it into a text or string field,
    /// and an array of several values gives its first (counted). Other fields are left as they are.
    pub fn with_text_fields(mut self, fields: &[&str]) -> Self {
        self.text_fields = fields.iter().map(|f| (*f).to_owned()).collect();
        self
    }

    /// The output is written whole at commit but put in place only by [`Store::publish`], so that
    /// the caller records the run first: a run whose report cannot be written leaves the output as
    /// it was. Dropped unpublished, the written output is removed with the store's temporary files.
    pub fn with_deferred_output(mut self) -> Self {
        self.deferred = Some(Mutex::new(None));
        self
    }

    /// Puts the output a deferred commit wrote in place (see [`FileStore::with_deferred_output`]).
    pub(crate) fn publish_output(&self) -> Result<(), StoreError> {
        let Some(deferred) = &self.deferred else {
            return Ok(());
        };
        let written = deferred.lock().expect("output lock").take();
        match written {
            Some(tmp) => self.put_in_place(tmp),
            None => Ok(()),
        }
    }

    /// The memory budget (`--memory`) and the folder past it (`--temp-dir`; the system's temporary
    /// folder when `None`): the id index keeps a 16th of the budget in memory and the input offsets
    /// of the pending updates a 64th, the rest goes to anonymous temporary files. Without this, the
    /// default budget in the system's temporary folder.
    pub fn with_memory(mut self, budget: u64, temp_dir: Option<&Path>) -> Self {
        self.spill = SpillArea::new(temp_dir, budget);
        let state = self.state.get_mut().expect("file store lock");
        state.index = IdIndex::new(self.spill.clone());
        self
    }

    /// The bytes its id index, pending updates' offsets and multi-valued ids wrote to temporary
    /// files past their share of the budget (see [`FileStore::with_memory`]).
    pub fn spilled_bytes(&self) -> u64 {
        self.spill.written()
    }

    /// Documents in which a field holding one value held several, of which the first was taken.
    pub fn multi_valued_first_taken(&self) -> u64 {
        self.multi_valued
            .lock()
            .map_or(0, |m| m.distinct(&self.spill))
    }

    fn location(&self, line: u64) -> String {
        format!("{}:{}", self.input.display(), line)
    }

    /// A temporary file of this store: next to the output (the user chose that disk), or in the
    /// system's temp dir when the output is streamed. Unique per store, so that stores in one process
    /// never share one; named so that a later run recognises it (see the module doc).
    fn temp_path(&self, kind: &str) -> PathBuf {
        temp_name(&self.temp_dir.0, self.temp_dir.1.as_deref(), kind)
    }

    /// The error for a failed read of line `line`: a too long line names it and the limit.
    fn read_error(&self, line: u64, e: io::Error) -> StoreError {
        match too_long(&e) {
            Some(_) => StoreError::input(self.location(line), e.to_string()),
            None => StoreError::io(format!("cannot read {}", self.location(line)), e),
        }
    }

    /// A document as the engine reads it: values in text fields as Solr would store them (see
    /// [`FileStore::with_text_fields`]).
    fn as_solr_stores(&self, doc: &mut Doc, id: &str) {
        for field in &self.text_fields {
            let Some(v) = doc.get_mut(field) else {
                continue;
            };
            match v {
                Value::Number(_) | Value::Bool(_) => *v = Value::String(scalar_text(v)),
                Value::Array(a) => {
                    for x in a.iter_mut() {
                        if matches!(x, Value::Number(_) | Value::Bool(_)) {
                            *x = Value::String(scalar_text(x));
                        }
                    }
                    if a.len() > 1 {
                        let mut seen = self.multi_valued.lock().expect("multi-valued lock");
                        if seen.note(id_hash(id), &self.spill) {
                            info!(
                                id,
                                field = %field,
                                values = a.len(),
                                "several values where one is expected; the first is taken"
                            );
                        }
                    }
                }
                _ => {}
            }
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
        // A UTF-8 byte order mark (an editor's, at the start of the file, or of each file that was
        // concatenated) is no part of the document.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        if text.trim().is_empty() {
            return Ok(None);
        }
        let seed = Projection {
            keep,
            id_field: &self.id_field,
            version_field: &self.version_field,
        };
        let mut de = serde_json::Deserializer::from_str(text);
        let parsed = serde::de::DeserializeSeed::deserialize(seed, &mut de)
            .and_then(|doc| de.end().map(|()| doc));
        let doc = match parsed {
            Ok(Some(doc)) => doc,
            Ok(None) => {
                return Err(StoreError::input(
                    self.location(line),
                    "expected a JSON object (one Solr document per line)".to_owned(),
                ))
            }
            Err(e) => {
                return Err(StoreError::input(
                    self.location(line),
                    format!("broken JSON ({e}); fix or remove the line"),
                ))
            }
        };
        let refuse = |message: String| StoreError::input(self.location(line), message);
        let id = match doc.get(&self.id_field) {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            // An integer id is the string of its digits to Solr (a string unique key).
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => n.to_string(),
            None | Some(Value::Null) | Some(Value::String(_)) => {
                return Err(refuse(format!(
                    "document has no '{}' (the unique key); every document needs one",
                    self.id_field
                )))
            }
            Some(other) => {
                return Err(refuse(format!(
                    "'{}' (the unique key) is {other}; Solr takes a string or an integer",
                    self.id_field
                )))
            }
        };
        match doc.get(&self.version_field) {
            None | Some(Value::Null) => {}
            Some(Value::Number(n)) if n.is_i64() => {}
            // Solr's long field parses a numeric string.
            Some(Value::String(s)) if s.trim().parse::<i64>().is_ok() => {}
            Some(other) => {
                return Err(refuse(format!(
                    "'{}' is {other}; Solr refuses a version that is not a whole number",
                    self.version_field
                )))
            }
        }
        Ok(Some((doc, id)))
    }

    /// Parses one record of the light copy (see [`Light`]).
    fn parse_light(&self, bytes: &[u8], keep: Option<&[String]>) -> Result<Parsed, StoreError> {
        let broken = || StoreError::unsupported("the light copy of the input is damaged");
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
        let read_err = |line: u64, e| self.read_error(line, e);
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
                    // A record is its input line's fields plus three numbers.
                    eof = batch
                        .read(
                            &mut reader,
                            &mut unused,
                            room.min(BATCH_LINES),
                            self.max_line.saturating_add(64),
                        )
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
                .read(&mut reader, &mut pos, room.min(BATCH_LINES), self.max_line)
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
                let p = p?;
                let (line_at, line_after, _) = batch.lines[i];
                let hash = p.as_ref().map(|(_, id, ..)| id_hash(id));
                state
                    .index
                    .note(hash, line_at, line_after.0)
                    .map_err(index_error)?;
                let Some((doc, id, _, after, record)) = p else {
                    continue;
                };
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
                if let Err(twice) = state.index.reached_end(pos.0).map_err(index_error)? {
                    return Err(self.duplicate_line(twice));
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
        let tmp = self.out_temp.lock().expect("output lock").take();
        let sink = self
            .target
            .sink(tmp.as_ref())
            .map_err(|e| StoreError::io("cannot write the output", e))?;
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
                    .map(|i| match &docs[i].1[..] {
                        // One update (a first run's usual case): its line is already what
                        // merging and printing would give (`AtomicUpdate::json_bytes` prints
                        // `to_json`'s map, keys sorted, compact), so it goes out as it is.
                        [one] => Ok(one.strip_suffix('\n').unwrap_or(one).as_bytes().to_vec()),
                        several => serde_json::to_vec(&merge_updates(several)?)
                            .map_err(|e| StoreError::unsupported(e.to_string())),
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
        if let Some(deferred) = &self.deferred {
            *deferred.lock().expect("output lock") = Some(tmp);
            return Ok(());
        }
        self.put_in_place(tmp)
    }

    /// Moves the written output over the target (a replaced file; nothing for a streamed one).
    fn put_in_place(&self, tmp: Option<TempFile>) -> Result<(), StoreError> {
        let werr = |e| StoreError::io("cannot write the output", e);
        self.target.finish(tmp).map_err(|e| match &self.target {
            Target::Replace(p) => {
                StoreError::io(format!("cannot write the output {}", p.display()), e)
            }
            _ => werr(e),
        })
    }

    /// The error for an id read twice, at input offset `first` and on line `line`.
    /// The error of two lines whose ids share a hash (one id listed twice, or two with one hash).
    fn duplicate_line(&self, twice: Twice) -> StoreError {
        let id = File::open(&self.lines)
            .ok()
            .and_then(|mut f| self.read_at(&mut f, twice.second, Some(&[])).ok())
            .flatten()
            .map_or_else(String::new, |(_, id)| id);
        let line = line_of(&self.lines, twice.second).unwrap_or(0);
        self.duplicate_id(&id, twice.first, line)
    }

    fn duplicate_id(&self, id: &str, first: u64, line: u64) -> StoreError {
        let mut earlier = self.location(line_of(&self.lines, first).unwrap_or(0));
        if let Ok(mut f) = File::open(&self.lines) {
            if let Ok(Some((_, other))) = self.read_at(&mut f, first, Some(&[])) {
                if other != id {
                    earlier = format!("{earlier} (id {other:?}, the same 64-bit hash)");
                }
            }
        }
        StoreError::input(
            self.location(line),
            format!(
                "the id {id:?} is listed twice, here and at {earlier}; Solr keeps one document per id, remove one of the lines"
            ),
        )
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
                .read(&mut reader, &mut pos, BATCH_LINES, self.max_line)
                .map_err(|e| self.read_error(pos.1 + 1, e))?;
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
        read_line_bounded(&mut BufReader::new(&mut *file), &mut buf, self.max_line + 1)
            .map_err(err)?;
        self.parse_line(&buf, 0, keep)
    }
}

/// The line number (from 1) of the line at byte `offset` of `path`: one counting pass, for messages.
fn line_of(path: &Path, offset: u64) -> Option<u64> {
    let mut r = BufReader::with_capacity(1 << 20, File::open(path).ok()?.take(offset));
    let mut lines = 1;
    loop {
        let buf = r.fill_buf().ok()?;
        if buf.is_empty() {
            return Some(lines);
        }
        lines += buf.iter().filter(|&&b| b == b'\n').count() as u64;
        let n = buf.len();
        r.consume(n);
    }
}

/// A number or boolean as Solr stores it in a text or string field: its string form (`12345`,
/// `1.5`, `true`).
fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn parse_cursor(cursor: Option<&str>) -> Result<(u64, u64), StoreError> {
    let Some(c) = cursor else { return Ok((0, 0)) };
    let bad = || StoreError::unsupported(format!("invalid file cursor {c:?}"));
    let (a, b) = c.split_once(':').ok_or_else(bad)?;
    Ok((a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?))
}
