//! The change state on disk: what an earlier run read light of every document, as the run left it
//! (its own writes applied), so that the next run reads from the index only what differs.
//!
//! Three files per index in `STATE_DIR/changes/NAME/`: `meta.json` (what the state is of, and the
//! mark), `docs-TOKEN.bin` (each document's id hash, version and light fields in the state's
//! encoding, in id order) and `ids-TOKEN.bin` (`(id hash, version)` pairs sorted by hash, 16 bytes a
//! document, searched in place). `meta.json` is replaced last and names the other two, so a run
//! killed while writing leaves the old state or none, never half of one.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::body::{decode, derived_len, encode, fields_of, DERIVED};
use crate::store::Doc;

/// The format of the files; another one is not read. (5: a record may begin with what the run
/// derived from it, [`Raw::derived`].)
pub(crate) const FORMAT: u32 = 5;

/// What `meta.json` holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Meta {
    /// [`FORMAT`].
    pub(crate) format: u32,
    /// The index (its URL without user info).
    pub(crate) target: String,
    /// The run's filter, as text (`None`: every document).
    pub(crate) filter: Option<String>,
    /// The fields each document's record holds, sorted.
    pub(crate) fields: Vec<String>,
    /// The settings the state's flags were decided under (a digest); a settled state is trusted to
    /// need nothing only under the same.
    pub(crate) digest: String,
    /// Every change with a version at or below `mark - window` is in the state: the next run reads
    /// the versions above it.
    pub(crate) mark: i64,
    /// Documents in the state.
    pub(crate) count: u64,
    /// The run that wrote it left every group as it decided: with no change since, a run has
    /// nothing to do.
    pub(crate) settled: bool,
    /// Version ranges (inclusive) of about equal counts and the state's count in each: where
    /// deletions are looked for.
    pub(crate) buckets: Vec<(i64, i64, u64)>,
    /// The documents file's name.
    pub(crate) docs: String,
    /// The id file's name.
    pub(crate) ids: String,
    /// The seed of the id hash ([`hash`]): drawn for each new state, so that ids cannot be
    /// chosen to collide.
    pub(crate) seed: u64,
    /// The report's dimensions of the run that wrote it, as a settled run repeats them.
    #[serde(default)]
    pub(crate) dimensions: serde_json::Value,
    /// What the records' derived parts ([`Raw::derived`]) were derived under, as the reader that
    /// gave them named it (0: no record has one).
    #[serde(default)]
    pub(crate) derived: u64,
    /// The documents the run that wrote it changed, against the state before it (`None`: not
    /// written, e.g. after a run that read everything): serve updates its prediction index
    /// from them instead of building it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) delta: Option<DeltaMeta>,
    /// Solr's index fingerprint of the state's versions at or below `mark`: an index whose
    /// fingerprint up to `mark` is the same changed nothing at or below it (`None`: kept by an
    /// older build).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) below_mark: Option<BelowMark>,
}

/// How many of a state's versions are at or below its mark, and the wrapping sum of Solr's hash
/// of each ([`crate::store::Fingerprint`]'s `versions` and `hash`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct BelowMark {
    pub(crate) versions: u64,
    pub(crate) hash: i64,
}

impl BelowMark {
    /// Of the versions of `pairs` at or below `mark`.
    pub(crate) fn of(pairs: &[(u64, i64)], mark: i64) -> Self {
        let print = crate::store::Fingerprint::of(pairs.iter().map(|p| p.1).filter(|&v| v <= mark));
        BelowMark {
            versions: print.versions,
            hash: print.hash,
        }
    }
}

/// A state's delta file ([`Meta::delta`]): JSON Lines, first `{"old": doc}` for every document
/// of the state before that is deleted, replaced or written, then `{"new": doc}` for every one
/// the new state holds in their place; every light field the state keeps, or the fields its reader
/// asked for ([`DeltaMeta::fields`]).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct DeltaMeta {
    /// The file's name.
    pub(crate) file: String,
    /// The documents file of the state it goes from.
    pub(crate) from: String,
    /// The fields its documents hold, in order (`None`: every light field the state keeps). A
    /// page the run wrote is in it only when one of them changed (see
    /// [`super::DeltaFields`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) fields: Option<Vec<String>>,
    /// Of `fields`, those compared only as "more than one" when the run chose which pages it
    /// wrote to leave out (a copy count), sorted: a reader that needs their value cannot use it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) above_one: Vec<String>,
}

/// The folder of one index's state.
pub(crate) struct Dir {
    pub(crate) path: PathBuf,
}

impl Dir {
    pub(crate) fn meta_path(&self) -> PathBuf {
        self.path.join("meta.json")
    }

    /// The state, when there is one this build can read.
    pub(crate) fn load(&self) -> Result<Option<Meta>, String> {
        let bytes = match std::fs::read(self.meta_path()) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("{}: {e}", self.meta_path().display())),
        };
        let meta: Meta = serde_json::from_slice(&bytes)
            .map_err(|e| format!("{}: {e}", self.meta_path().display()))?;
        if meta.format != FORMAT {
            return Err(format!(
                "state format {} (this build reads {FORMAT})",
                meta.format
            ));
        }
        Ok(Some(meta))
    }

    /// Removes the state (the next run reads everything): after a run that could not keep it.
    pub(crate) fn forget(&self) {
        if let Err(e) = std::fs::remove_file(self.meta_path()) {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!("cannot remove {}: {e}", self.meta_path().display());
            }
        }
    }

    /// Puts `meta` in place (atomically) and removes the files of earlier states.
    pub(crate) fn commit(&self, meta: &Meta) -> std::io::Result<()> {
        let tmp = self.path.join(format!("meta.json.{:x}", new_seed()));
        std::fs::write(
            &tmp,
            serde_json::to_vec_pretty(meta).expect("meta serialises"),
        )?;
        File::open(&tmp)?.sync_all()?;
        std::fs::rename(&tmp, self.meta_path())?;
        if let Ok(entries) = std::fs::read_dir(&self.path) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let ours = name == meta.docs
                    || name == meta.ids
                    || name == "meta.json"
                    || meta.delta.as_ref().is_some_and(|d| d.file == name);
                let stale = name.starts_with("docs-")
                    || name.starts_with("ids-")
                    || name.starts_with("delta-");
                // Files younger than ten minutes may be another process's, being written or
                // served (a run holds its files open; these are left for a later commit).
                let young = e
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age.as_secs() < 600);
                if stale && !ours && !young {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        Ok(())
    }
}

/// The hash of an id in a state with `seed` (XXH3, seeded).
pub(crate) fn hash(seed: u64, id: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64_with_seed(id.as_bytes(), seed)
}

/// A seed for a new state: the time and the process, mixed.
pub(crate) fn new_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    xxhash_rust::xxh3::xxh3_64(format!("{nanos}/{}", std::process::id()).as_bytes())
}

/// One document of a state as it is kept: its id's hash and version beside its light fields in
/// the state's own encoding ([`encode`]), so that a document that did not change is copied without
/// being decoded, and a read decodes only the fields it asks for.
#[derive(Debug, Clone)]
pub(crate) struct Raw {
    pub(crate) hash: u64,
    pub(crate) version: i64,
    pub(crate) body: Vec<u8>,
}

impl Raw {
    /// `doc` as kept in a state with `seed` whose records hold `fields` (sorted).
    pub(crate) fn of(
        doc: &Doc,
        fields: &[String],
        id_field: &str,
        version_field: &str,
        seed: u64,
    ) -> std::io::Result<Raw> {
        let id = doc.get(id_field).and_then(|v| v.as_str()).unwrap_or("");
        Ok(Raw {
            hash: hash(seed, id),
            version: doc
                .get(version_field)
                .and_then(serde_json::Value::as_i64)
                .unwrap_or(0),
            body: encode(doc, fields)?,
        })
    }

    /// The document, with every field.
    pub(crate) fn doc(&self, fields: &[String]) -> std::io::Result<Doc> {
        decode(&self.body, fields, None)
    }

    /// The document with only the fields whose place in `fields` is set in `wanted`.
    pub(crate) fn doc_with(&self, fields: &[String], wanted: &[bool]) -> std::io::Result<Doc> {
        decode(&self.body, fields, Some(wanted))
    }

    /// What a reader derived from this document in the run that kept it (see
    /// [`crate::store::Store::keep_derived`]), when it did.
    pub(crate) fn derived(&self) -> Option<&[u8]> {
        derived_len(&self.body).map(|n| &self.body[3..3 + n])
    }

    /// The fields alone, without the derived part.
    pub(crate) fn fields_body(&self) -> &[u8] {
        fields_of(&self.body)
    }
}

/// Writes records: `[u32 length][u64 id hash][i64 version][body]` (the body: [`encode`]).
pub(crate) struct RecordWriter {
    out: Behind,
    pub(crate) written: u64,
}

/// A buffered writer whose full buffers are written by a thread of its own: the next state is
/// hundreds of MB (481 MB at 1M pages), and copying them into the kernel took a third of the
/// time the records took to be merged.
struct Behind {
    buf: Vec<u8>,
    to: Option<std::sync::mpsc::SyncSender<Vec<u8>>>,
    thread: Option<std::thread::JoinHandle<std::io::Result<File>>>,
    /// Why there is no thread, when it could not be started.
    unstarted: Option<std::io::Error>,
}

impl Behind {
    const BUF: usize = 1 << 20;

    fn new(mut file: File) -> Self {
        // Two buffers on their way at most: a few MB.
        let (to, from) = std::sync::mpsc::sync_channel::<Vec<u8>>(2);
        let thread = std::thread::Builder::new()
            .name("state-writer".to_owned())
            .spawn(move || {
                for buf in from {
                    file.write_all(&buf)?;
                }
                Ok(file)
            });
        match thread {
            Ok(thread) => Behind {
                buf: Vec::with_capacity(Self::BUF),
                to: Some(to),
                thread: Some(thread),
                unstarted: None,
            },
            // No thread: its error at the first buffer.
            Err(e) => Behind {
                buf: Vec::new(),
                to: None,
                thread: None,
                unstarted: Some(e),
            },
        }
    }

    /// The writer's error, once it stopped.
    fn stopped(&mut self) -> std::io::Error {
        self.to = None;
        if let Some(e) = self.unstarted.take() {
            return std::io::Error::new(e.kind(), format!("cannot start the state's writer: {e}"));
        }
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(Err(e))) => e,
            _ => std::io::Error::other("the state's writer thread stopped"),
        }
    }

    fn send(&mut self) -> std::io::Result<()> {
        let full = std::mem::replace(&mut self.buf, Vec::with_capacity(Self::BUF));
        let sent = self.to.as_ref().map(|to| to.send(full));
        match sent {
            Some(Ok(())) => Ok(()),
            _ => Err(self.stopped()),
        }
    }

    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= Self::BUF {
            self.send()?;
        }
        Ok(())
    }

    /// The file, every byte written.
    fn into_inner(mut self) -> std::io::Result<File> {
        if !self.buf.is_empty() {
            self.send()?;
        }
        if self.thread.is_none() {
            return Err(self.stopped());
        }
        self.to = None;
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(done)) => done,
            _ => Err(std::io::Error::other("the state's writer thread stopped")),
        }
    }
}

impl RecordWriter {
    pub(crate) fn new(file: File) -> Self {
        RecordWriter {
            out: Behind::new(file),
            written: 0,
        }
    }

    pub(crate) fn push(&mut self, raw: &Raw) -> std::io::Result<()> {
        self.push_parts(raw.hash, raw.version, None, &raw.body)
    }

    /// A record of `fields` (a body without a derived part) with `derived` before them.
    pub(crate) fn push_parts(
        &mut self,
        hash: u64,
        version: i64,
        derived: Option<&[u8]>,
        fields: &[u8],
    ) -> std::io::Result<()> {
        let head = match derived {
            Some(d) => {
                let n = u16::try_from(d.len())
                    .map_err(|_| std::io::Error::other("a derived part of 64 KiB"))?;
                3 + n as usize
            }
            None => 0,
        };
        let len = u32::try_from(head + fields.len())
            .map_err(|_| std::io::Error::other("record of 4 GiB"))?;
        self.out.write_all(&len.to_le_bytes())?;
        self.out.write_all(&hash.to_le_bytes())?;
        self.out.write_all(&version.to_le_bytes())?;
        if let Some(d) = derived {
            self.out.write_all(&[DERIVED])?;
            self.out.write_all(&(d.len() as u16).to_le_bytes())?;
            self.out.write_all(d)?;
        }
        self.out.write_all(fields)?;
        self.written += 1;
        Ok(())
    }

    /// The file, flushed and at its start.
    pub(crate) fn finish(self) -> std::io::Result<File> {
        let mut f = self.out.into_inner()?;
        f.seek(SeekFrom::Start(0))?;
        Ok(f)
    }
}

/// The longest record a reader takes: a document's light fields are a few hundred bytes; a length
/// past this is a damaged file.
const MAX_RECORD: usize = 64 << 20;

/// Reads records from an offset.
pub(crate) struct RecordReader {
    input: BufReader<File>,
    /// The offset of the next record.
    pub(crate) at: u64,
}

impl RecordReader {
    pub(crate) fn new(mut file: File, at: u64) -> std::io::Result<Self> {
        file.seek(SeekFrom::Start(at))?;
        Ok(RecordReader {
            input: BufReader::with_capacity(1 << 20, file),
            at,
        })
    }

    /// The next record, `None` at the end.
    pub(crate) fn next_raw(&mut self) -> std::io::Result<Option<Raw>> {
        let mut head = [0u8; 20];
        // The end of the file only between records; a record cut short is an error.
        if self.input.fill_buf()?.is_empty() {
            return Ok(None);
        }
        self.input.read_exact(&mut head)?;
        let len = u32::from_le_bytes(head[..4].try_into().expect("4")) as usize;
        if len > MAX_RECORD {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("a state record of {len} bytes"),
            ));
        }
        let mut body = vec![0u8; len];
        self.input.read_exact(&mut body)?;
        self.at += 20 + len as u64;
        Ok(Some(Raw {
            hash: u64::from_le_bytes(head[4..12].try_into().expect("8")),
            version: i64::from_le_bytes(head[12..20].try_into().expect("8")),
            body,
        }))
    }
}

/// The `(id hash, version)` pairs of a state, sorted by hash, searched in the file: the hash of
/// every [`Ids::STRIDE`]th pair is held (8 bytes for 256 pages: 30 KB at 1M), so that a search
/// reads one block of the file instead of one pair per step of a binary search (20 reads at 1M;
/// a settled run looks up the tens of thousands of versions of the change window).
pub(crate) struct Ids {
    file: File,
    len: u64,
    /// The hash of pair `i * STRIDE`, for each block.
    firsts: Vec<u64>,
}

impl Ids {
    /// Pairs a block: 4 KB of the file.
    const STRIDE: u64 = 256;

    pub(crate) fn open(path: &Path) -> std::io::Result<Self> {
        let file = File::open(path)?;
        let len = file.metadata()?.len() / 16;
        let mut firsts = Vec::with_capacity(len.div_ceil(Self::STRIDE) as usize);
        let mut reader = BufReader::with_capacity(1 << 20, &file);
        let mut block = vec![0u8; (Self::STRIDE * 16) as usize];
        let mut left = len;
        while left > 0 {
            let n = left.min(Self::STRIDE);
            reader.read_exact(&mut block[..(n * 16) as usize])?;
            firsts.push(u64::from_le_bytes(block[..8].try_into().expect("8")));
            left -= n;
        }
        drop(reader);
        Ok(Ids { file, len, firsts })
    }

    pub(crate) fn write(path: &Path, pairs: &[(u64, i64)]) -> std::io::Result<()> {
        let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
        for (h, v) in pairs {
            out.write_all(&h.to_le_bytes())?;
            out.write_all(&v.to_le_bytes())?;
        }
        out.into_inner().map_err(|e| e.into_error())?.sync_all()
    }

    /// The version the state holds for the document whose id hashes to `hash`.
    pub(crate) fn find(&self, hash: u64) -> std::io::Result<Option<i64>> {
        // The block whose first hash is the last at or below `hash`.
        let Some(b) = self.firsts.partition_point(|&h| h <= hash).checked_sub(1) else {
            return Ok(None);
        };
        let from = b as u64 * Self::STRIDE;
        let n = (self.len - from).min(Self::STRIDE);
        let mut block = vec![0u8; (n * 16) as usize];
        self.file.read_exact_at(&mut block, from * 16)?;
        let pair = |i: usize| {
            let b = &block[i * 16..i * 16 + 16];
            (
                u64::from_le_bytes(b[..8].try_into().expect("8")),
                i64::from_le_bytes(b[8..].try_into().expect("8")),
            )
        };
        let (mut lo, mut hi) = (0usize, n as usize);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let (h, v) = pair(mid);
            match h.cmp(&hash) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(Some(v)),
            }
        }
        Ok(None)
    }

    /// Every pair, in hash order.
    pub(crate) fn all(&self) -> std::io::Result<Vec<(u64, i64)>> {
        let mut bytes = Vec::new();
        (&self.file).seek(SeekFrom::Start(0))?;
        (&self.file).read_to_end(&mut bytes)?;
        Ok(bytes
            .chunks_exact(16)
            .map(|b| {
                (
                    u64::from_le_bytes(b[..8].try_into().expect("8")),
                    i64::from_le_bytes(b[8..].try_into().expect("8")),
                )
            })
            .collect())
    }
}

/// About `k` inclusive version ranges of equal counts over `versions` (sorted), with their counts.
#[cfg(test)]
pub(crate) fn buckets(versions: &[i64], k: usize) -> Vec<(i64, i64, u64)> {
    buckets_by(versions.len(), |i| versions[i], k)
}

/// [`buckets`] over `len` versions in order, the `i`th given by `at`.
pub(crate) fn buckets_by(len: usize, at: impl Fn(usize) -> i64, k: usize) -> Vec<(i64, i64, u64)> {
    if len == 0 {
        return Vec::new();
    }
    let per = len.div_ceil(k.max(1)).max(1);
    let mut out: Vec<(i64, i64, u64)> = Vec::new();
    let mut i = 0;
    while i < len {
        let mut j = (i + per).min(len);
        // A version never straddles two ranges.
        while j < len && at(j) == at(j - 1) {
            j += 1;
        }
        out.push((at(i), at(j - 1), (j - i) as u64));
        i = j;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_version_once() {
        let v = vec![1, 2, 2, 2, 3, 4, 5, 6, 7, 9];
        let b = buckets(&v, 3);
        assert_eq!(b.iter().map(|x| x.2).sum::<u64>(), 10);
        assert_eq!(b[0], (1, 2, 4));
        for w in b.windows(2) {
            assert!(w[0].1 < w[1].0);
        }
    }

    #[test]
    fn a_records_file_cut_short_is_an_error_not_an_end() {
        let fields = vec!["id".to_owned()];
        let doc: Doc = serde_json::from_str(r#"{"id": "a"}"#).unwrap();
        let raw = Raw::of(&doc, &fields, "id", "_version_", 1).unwrap();
        let mut w = RecordWriter::new(tempfile::tempfile().unwrap());
        w.push(&raw).unwrap();
        w.push(&raw).unwrap();
        let mut f = w.finish().unwrap();
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).unwrap();
        let whole = bytes.len() / 2;
        // Whole records, then a cut in the second one's header and in its body.
        for (cut, second) in [
            (2 * whole, true),
            (whole + 3, false),
            (2 * whole - 1, false),
        ] {
            let mut t = tempfile::tempfile().unwrap();
            t.write_all(&bytes[..cut]).unwrap();
            let mut r = RecordReader::new(t, 0).unwrap();
            assert!(r.next_raw().unwrap().is_some());
            match r.next_raw() {
                Ok(Some(_)) if second => assert!(r.next_raw().unwrap().is_none()),
                Err(_) if !second => {}
                other => panic!("cut at {cut}: {other:?}"),
            }
        }
    }

    #[test]
    fn records_past_the_writers_buffers_come_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("docs");
        let mut w = RecordWriter::new(File::create(&p).unwrap());
        // 30,000 records of 200 bytes: six buffers and a part.
        for i in 0..30_000u64 {
            let body = vec![(i % 251) as u8; 200];
            w.push_parts(i, i as i64 * 2, None, &body).unwrap();
        }
        assert_eq!(w.written, 30_000);
        let file = w.finish().unwrap();
        assert_eq!(file.metadata().unwrap().len(), 30_000 * 220);
        let mut r = RecordReader::new(File::open(&p).unwrap(), 0).unwrap();
        for i in 0..30_000u64 {
            let raw = r.next_raw().unwrap().expect("a record");
            assert_eq!((raw.hash, raw.version), (i, i as i64 * 2));
            assert_eq!(raw.body, vec![(i % 251) as u8; 200]);
        }
        assert!(r.next_raw().unwrap().is_none());
    }

    #[test]
    fn a_write_the_writers_thread_cannot_make_comes_back_as_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("docs");
        File::create(&p).unwrap();
        // Opened for reading only: every write fails.
        let mut w = RecordWriter::new(File::open(&p).unwrap());
        let body = vec![1u8; 1000];
        let mut failed = None;
        for i in 0..5_000u64 {
            if let Err(e) = w.push_parts(i, 0, None, &body) {
                failed = Some(e);
                break;
            }
        }
        let e = match failed {
            Some(e) => e,
            None => w.finish().expect_err("a read-only file"),
        };
        assert_ne!(e.to_string(), "the state's writer thread stopped", "{e}");
    }

    #[test]
    fn ids_are_found_by_hash() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("ids");
        let pairs: Vec<(u64, i64)> = (0..1000u64).map(|i| (i * 7, i as i64 * 3)).collect();
        Ids::write(&p, &pairs).unwrap();
        let ids = Ids::open(&p).unwrap();
        assert_eq!(ids.find(700).unwrap(), Some(300));
        assert_eq!(ids.find(701).unwrap(), None);
        assert_eq!(ids.all().unwrap().len(), 1000);
        // Every pair, past the last, and at the edges of the blocks (1000 pairs: three whole
        // blocks and one of 232); below the first in the one-pair file.
        for (h, v) in &pairs {
            assert_eq!(ids.find(*h).unwrap(), Some(*v), "hash {h}");
            assert_eq!(ids.find(h + 1).unwrap(), None, "hash {}", h + 1);
        }
        assert_eq!(ids.find(7 * 999 + 7).unwrap(), None);
        let empty = dir.path().join("empty");
        Ids::write(&empty, &[]).unwrap();
        assert_eq!(Ids::open(&empty).unwrap().find(0).unwrap(), None);
        let one = dir.path().join("one");
        Ids::write(&one, &[(5, 9)]).unwrap();
        let one = Ids::open(&one).unwrap();
        assert_eq!(
            (
                one.find(4).unwrap(),
                one.find(5).unwrap(),
                one.find(6).unwrap()
            ),
            (None, Some(9), None)
        );
    }
}
