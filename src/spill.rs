//! The memory budget (`--memory`) and the temporary files that take what goes past it.
//!
//! The structures that grow with the index (the engine's records, keys, id-hash index, waiting
//! signatures, near-duplicate keys and best members; the file store's id index and pending
//! updates) each keep a share of the budget in memory and put the rest in anonymous temporary
//! files in a temporary folder (`--temp-dir`, else the system's). The files have no name from the
//! start, so they are gone when the run ends, fails, is interrupted or is killed. What they took on
//! disk is counted for the report (`memory.spilled_bytes`). No I/O but those files: below the
//! engine and the stores, which both use it.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The default `--memory` budget: 256 MiB.
pub const DEFAULT_MEMORY: u64 = 256 << 20;

/// Where a round's spilled structures go, and what they wrote there. Cloned into each structure
/// that spills; the count is shared.
#[derive(Clone, Debug)]
pub(crate) struct SpillArea {
    dir: PathBuf,
    budget: u64,
    written: Arc<AtomicU64>,
}

impl SpillArea {
    /// An area in `dir` (the system's temporary folder when `None`) for a run with `budget` bytes.
    pub(crate) fn new(dir: Option<&Path>, budget: u64) -> Self {
        SpillArea {
            dir: dir.map_or_else(std::env::temp_dir, Path::to_path_buf),
            budget,
            written: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The bytes a structure keeps in memory before it spills: `1 / parts` of the budget, at least
    /// one byte (so that a budget of a few bytes spills everything, as tests want).
    pub(crate) fn share(&self, parts: u64) -> usize {
        usize::try_from(self.budget / parts.max(1))
            .unwrap_or(usize::MAX)
            .max(1)
    }

    /// A new anonymous temporary file; the error names the folder.
    pub(crate) fn file(&self) -> std::io::Result<File> {
        tempfile::tempfile_in(&self.dir).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!(
                    "cannot write temporary files in {} (set --temp-dir, or TMPDIR, to a writable folder): {e}",
                    self.dir.display()
                ),
            )
        })
    }

    /// Counts `bytes` written to a spill file.
    pub(crate) fn wrote(&self, bytes: usize) {
        self.written.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// Bytes written to spill files so far.
    pub(crate) fn written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }
}

/// A value of fixed size that a [`Column`] can keep in its file.
pub(crate) trait Fixed: Copy {
    /// Bytes a value takes in the file.
    const SIZE: usize;
    /// Appends its bytes (exactly [`Fixed::SIZE`]).
    fn put(&self, out: &mut Vec<u8>);
    /// The value of `SIZE` bytes.
    fn take(bytes: &[u8]) -> Self;
}

impl Fixed for u64 {
    const SIZE: usize = 8;
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn take(bytes: &[u8]) -> Self {
        u64::from_le_bytes(bytes.try_into().expect("8 bytes"))
    }
}

/// A column of fixed-size values, one per record, appended in record order: the first ones (up
/// to the share it was given) in memory, the rest in an anonymous temporary file. Read back in
/// order ([`Column::iter`]) or one at a time ([`Column::get`]; the block read last is kept, so
/// reads in increasing order read each block of the file once).
pub(crate) struct Column<T: Fixed = u64> {
    mem: Vec<T>,
    /// Values kept in memory before the rest go to the file.
    cap: usize,
    /// Values past `cap` not yet written.
    buf: Vec<T>,
    file: Option<File>,
    /// Values in the file.
    flushed: usize,
    /// The block of the file [`Column::get`] read last: its first value's place in the file, and
    /// its values.
    last: std::sync::Mutex<(usize, Vec<T>)>,
    area: SpillArea,
}

impl<T: Fixed> Column<T> {
    /// Values per write and per read of the file.
    const BLOCK: usize = 1024;

    /// An empty column that keeps `share` bytes in memory.
    pub(crate) fn new(area: SpillArea, share: usize) -> Self {
        Column {
            mem: Vec::new(),
            cap: (share / std::mem::size_of::<T>().max(1)).max(1),
            buf: Vec::new(),
            file: None,
            flushed: 0,
            last: std::sync::Mutex::new((0, Vec::new())),
            area,
        }
    }

    /// A column of `values`, all in memory (what it holds is its share).
    pub(crate) fn in_memory(area: SpillArea, values: Vec<T>) -> Self {
        Column {
            cap: values.len().max(1),
            mem: values,
            ..Column::new(area, 1)
        }
    }

    /// Its values, taken out, when all are in memory (it is empty then); else `None`.
    pub(crate) fn take_vec(&mut self) -> Option<Vec<T>> {
        (self.file.is_none() && self.buf.is_empty()).then(|| std::mem::take(&mut self.mem))
    }

    /// How many values it holds.
    pub(crate) fn len(&self) -> usize {
        self.mem.len() + self.flushed + self.buf.len()
    }

    /// Appends a value.
    pub(crate) fn push(&mut self, v: T) -> std::io::Result<()> {
        if self.mem.len() < self.cap && self.file.is_none() && self.buf.is_empty() {
            self.mem.push(v);
            return Ok(());
        }
        self.buf.push(v);
        if self.buf.len() >= Self::BLOCK {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes what waits to the file and lets go of the buffer: nothing more comes.
    pub(crate) fn seal(&mut self) -> std::io::Result<()> {
        self.flush()?;
        self.buf = Vec::new();
        Ok(())
    }

    /// Writes what waits to the file.
    pub(crate) fn flush(&mut self) -> std::io::Result<()> {
        use std::io::Write;
        if self.buf.is_empty() {
            return Ok(());
        }
        if self.file.is_none() {
            self.file = Some(self.area.file()?);
        }
        let mut bytes = Vec::with_capacity(self.buf.len() * T::SIZE);
        for v in &self.buf {
            v.put(&mut bytes);
        }
        self.file
            .as_mut()
            .expect("created above")
            .write_all(&bytes)?;
        self.area.wrote(bytes.len());
        self.flushed += self.buf.len();
        self.buf.clear();
        Ok(())
    }

    /// The value at `i`.
    pub(crate) fn get(&self, i: usize) -> std::io::Result<T> {
        if let Some(&v) = self.mem.get(i) {
            return Ok(v);
        }
        let at = i - self.mem.len();
        if at >= self.flushed {
            return Ok(self.buf[at - self.flushed]);
        }
        let start = at - at % Self::BLOCK;
        let mut last = self.last.lock().expect("column cache");
        // A block read while it was the file's last, short one, is read again once it grew.
        if last.0 != start || at - start >= last.1.len() {
            *last = (start, self.read_block(start)?);
        }
        Ok(last.1[at - start])
    }

    /// The values of the file from `start` on, a block at most.
    fn read_block(&self, start: usize) -> std::io::Result<Vec<T>> {
        use std::os::unix::fs::FileExt;
        let n = Self::BLOCK.min(self.flushed - start);
        let mut bytes = vec![0u8; n * T::SIZE];
        let file = self
            .file
            .as_ref()
            .expect("values past memory are in the file");
        file.read_exact_at(&mut bytes, (start * T::SIZE) as u64)?;
        Ok(bytes.chunks_exact(T::SIZE).map(T::take).collect())
    }

    /// Every value in order, read from the file a block at a time. After an error, nothing more.
    pub(crate) fn iter(&self) -> impl Iterator<Item = std::io::Result<T>> + '_ {
        self.iter_from(0)
    }

    /// The values from `start` on, in order (see [`Column::iter`]).
    pub(crate) fn iter_from(&self, start: usize) -> impl Iterator<Item = std::io::Result<T>> + '_ {
        let mut block: Vec<T> = Vec::new();
        // The next value's place: in memory, then in the file, then in the buffer.
        let mut i = start;
        let mut failed = false;
        // The block holding the first value read from the file, when that is not a block's first.
        let mut loaded = false;
        std::iter::from_fn(move || {
            if failed {
                return None;
            }
            let v = if i < self.mem.len() {
                self.mem[i]
            } else if i - self.mem.len() < self.flushed {
                let at = i - self.mem.len();
                let start = at - at % Self::BLOCK;
                if at == start || !loaded {
                    match self.read_block(start) {
                        Ok(b) => block = b,
                        Err(e) => {
                            failed = true;
                            return Some(Err(e));
                        }
                    }
                    loaded = true;
                }
                block[at - start]
            } else {
                *self.buf.get(i - self.mem.len() - self.flushed)?
            };
            i += 1;
            Some(Ok(v))
        })
    }
}

impl Fixed for u32 {
    const SIZE: usize = 4;
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn take(bytes: &[u8]) -> Self {
        u32::from_le_bytes(bytes.try_into().expect("4 bytes"))
    }
}

impl<V: Fixed> Fixed for (u64, V) {
    const SIZE: usize = 8 + V::SIZE;
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0.to_le_bytes());
        self.1.put(out);
    }
    fn take(bytes: &[u8]) -> Self {
        (
            u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")),
            V::take(&bytes[8..]),
        )
    }
}

/// `(key, value)` pairs sorted by key, then value, with the first key of every block of the file
/// in memory: a lookup reads one block at most. Built by an external sort: runs of a share of the
/// budget each, sorted in memory, written, and merged.
pub(crate) struct SortedPairs<V: Fixed + Ord = u32> {
    col: Column<(u64, V)>,
    /// The first key of each block of [`Column::BLOCK`] pairs.
    fences: Vec<u64>,
}

impl<V: Fixed + Ord> SortedPairs<V> {
    /// Sorts `pairs` keeping about `share` bytes in memory at a time; the sorted pairs stay in
    /// memory when they fit in one run, else keep nothing there but their fences.
    pub(crate) fn sort(
        area: &SpillArea,
        share: usize,
        pairs: impl Iterator<Item = (u64, V)>,
    ) -> std::io::Result<Self> {
        Self::sort_keeping(area, share, 1, pairs.map(Ok))
    }

    /// [`SortedPairs::sort`] of pairs read back from somewhere that may fail (the first error is
    /// the sort's), keeping the first `keep` bytes of the sorted pairs in memory when they did not
    /// fit in one run (a lookup of those reads nothing).
    pub(crate) fn sort_keeping(
        area: &SpillArea,
        share: usize,
        keep: usize,
        pairs: impl Iterator<Item = std::io::Result<(u64, V)>>,
    ) -> std::io::Result<Self> {
        match Runs::sort(area, share, pairs)? {
            // Pairs that fit in one run stay in memory, in the share the run took.
            Runs::Memory(chunk) => Ok(Self::in_memory(area, chunk)),
            spilled => {
                // Merged, the output keeps `keep` bytes in memory, its fences and the block read
                // last.
                let mut out = SortedPairs {
                    col: Column::new(area.clone(), keep),
                    fences: Vec::new(),
                };
                spilled.merge(|p| out.push(p))?;
                out.col.flush()?;
                Ok(out)
            }
        }
    }

    /// Its pairs, taken out, when all are in memory (it is empty then); else `None`.
    pub(crate) fn take_vec(&mut self) -> Option<Vec<(u64, V)>> {
        let pairs = self.col.take_vec()?;
        self.fences.clear();
        Some(pairs)
    }

    /// Pairs already sorted, kept in memory as they are.
    pub(crate) fn in_memory(area: &SpillArea, mut sorted: Vec<(u64, V)>) -> Self {
        debug_assert!(sorted.is_sorted());
        let fences = sorted
            .iter()
            .step_by(Column::<(u64, V)>::BLOCK)
            .map(|p| p.0)
            .collect();
        sorted.shrink_to_fit();
        SortedPairs {
            col: Column::in_memory(area.clone(), sorted),
            fences,
        }
    }

    fn push(&mut self, p: (u64, V)) -> std::io::Result<()> {
        if self.col.len().is_multiple_of(Column::<(u64, V)>::BLOCK) {
            self.fences.push(p.0);
        }
        self.col.push(p)
    }

    /// How many pairs it holds.
    pub(crate) fn len(&self) -> usize {
        self.col.len()
    }

    /// Every pair, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = std::io::Result<(u64, V)>> + '_ {
        self.col.iter()
    }

    /// The value of the first pair with `key`.
    pub(crate) fn find(&self, key: u64) -> std::io::Result<Option<V>> {
        // The last block whose first key is below `key` may hold it, or the next one's first pair.
        let block = self.fences.partition_point(|&f| f < key).saturating_sub(1);
        let start = block * Column::<(u64, V)>::BLOCK;
        let end = (start + 2 * Column::<(u64, V)>::BLOCK).min(self.len());
        let (mut lo, mut hi) = (start, end);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.col.get(mid)?.0 < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok((lo < end)
            .then(|| self.col.get(lo))
            .transpose()?
            .filter(|p| p.0 == key)
            .map(|p| p.1))
    }
}

/// The first half of an external sort: `(key, value)` pairs pushed in any order, sorted in runs of
/// a share of the budget; once there is more than one, each is written to an anonymous temporary
/// file.
pub(crate) struct RunBuilder<V: Fixed + Ord> {
    area: SpillArea,
    per_run: usize,
    chunk: Vec<(u64, V)>,
    /// The runs written, each with its level: a run of level `l + 1` merged [`FAN_IN`] of level
    /// `l`, so that however many pairs come, there are a few dozen runs at most to merge at the
    /// end (a block of each in memory), and each pair is written once a level.
    runs: Vec<(u32, Column<(u64, V)>)>,
}

/// How many runs of one level are merged into one of the next.
const FAN_IN: usize = 32;

/// Sorted runs ([`RunBuilder::finish`]): one in memory, or several in files, to be merged.
pub(crate) enum Runs<V: Fixed + Ord> {
    /// Everything fitted in one run.
    Memory(Vec<(u64, V)>),
    /// Runs in files (the merge reads a block of each at a time).
    Spilled(Vec<Column<(u64, V)>>),
}

impl<V: Fixed + Ord> RunBuilder<V> {
    /// Runs of about `share` bytes each.
    pub(crate) fn new(area: &SpillArea, share: usize) -> Self {
        RunBuilder {
            area: area.clone(),
            per_run: (share / std::mem::size_of::<(u64, V)>()).max(Column::<(u64, V)>::BLOCK),
            chunk: Vec::new(),
            runs: Vec::new(),
        }
    }

    /// Adds a pair.
    pub(crate) fn push(&mut self, p: (u64, V)) -> std::io::Result<()> {
        if self.chunk.len() >= self.per_run {
            self.write_run()?;
        }
        if self.chunk.capacity() == 0 {
            // Exactly a run, not the next power of two: only what is written in it is resident.
            self.chunk.reserve_exact(self.per_run);
        }
        self.chunk.push(p);
        Ok(())
    }

    fn write_run(&mut self) -> std::io::Result<()> {
        self.chunk.sort_unstable();
        let mut run = Column::new(self.area.clone(), 1);
        for &p in &self.chunk {
            run.push(p)?;
        }
        run.seal()?;
        self.runs.push((0, run));
        self.chunk.clear();
        // The last FAN_IN runs of one level become one of the next.
        while self.runs.len() >= FAN_IN {
            let tail = &self.runs[self.runs.len() - FAN_IN..];
            let level = tail[0].0;
            if tail.iter().any(|r| r.0 != level) {
                break;
            }
            let tail: Vec<Column<(u64, V)>> = self
                .runs
                .split_off(self.runs.len() - FAN_IN)
                .into_iter()
                .map(|r| r.1)
                .collect();
            let mut merged = Column::new(self.area.clone(), 1);
            merge_columns(&tail, |p| merged.push(p))?;
            merged.seal()?;
            self.runs.push((level + 1, merged));
        }
        Ok(())
    }

    /// The sorted runs.
    pub(crate) fn finish(mut self) -> std::io::Result<Runs<V>> {
        if self.runs.is_empty() {
            self.chunk.sort_unstable();
            return Ok(Runs::Memory(self.chunk));
        }
        if !self.chunk.is_empty() {
            self.write_run()?;
        }
        Ok(Runs::Spilled(self.runs.into_iter().map(|r| r.1).collect()))
    }
}

impl<V: Fixed + Ord> Runs<V> {
    /// Sorts `pairs` in runs of about `share` bytes; the first error among them is the sort's.
    pub(crate) fn sort(
        area: &SpillArea,
        share: usize,
        pairs: impl Iterator<Item = std::io::Result<(u64, V)>>,
    ) -> std::io::Result<Self> {
        let mut runs = RunBuilder::new(area, share);
        for p in pairs {
            runs.push(p?)?;
        }
        runs.finish()
    }

    /// Calls `f` with every pair in order, merging the runs (a block of each in memory).
    pub(crate) fn merge(
        &self,
        mut f: impl FnMut((u64, V)) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        match self {
            Runs::Memory(pairs) => pairs.iter().try_for_each(|&p| f(p)),
            Runs::Spilled(runs) if runs.len() == 1 => runs[0].iter().try_for_each(|p| f(p?)),
            Runs::Spilled(runs) => merge_columns(runs, f),
        }
    }
}

/// Calls `f` with the values of sorted `runs` in order (a block of each in memory).
fn merge_columns<T: Fixed + Ord>(
    runs: &[Column<T>],
    mut f: impl FnMut(T) -> std::io::Result<()>,
) -> std::io::Result<()> {
    use std::cmp::Reverse;
    let mut iters: Vec<_> = runs.iter().map(Column::iter).collect();
    let mut heap = std::collections::BinaryHeap::new();
    for (r, it) in iters.iter_mut().enumerate() {
        if let Some(p) = it.next() {
            heap.push(Reverse((p?, r)));
        }
    }
    while let Some(Reverse((p, r))) = heap.pop() {
        f(p)?;
        if let Some(next) = iters[r].next() {
            heap.push(Reverse((next?, r)));
        }
    }
    Ok(())
}

/// Byte strings of any length appended one after another, each found again by the offset
/// [`Strings::push`] gave: the first ones (up to the share it was given) in memory, the rest in an
/// anonymous temporary file. For what is written often and read back now and then, in any order
/// (pass B's best members, read again when another member ties with one on its rank prefix).
pub(crate) struct Strings {
    mem: Vec<u8>,
    /// Bytes kept in memory before the rest go to the file.
    cap: usize,
    /// Bytes past `mem` not yet written.
    buf: Vec<u8>,
    file: Option<File>,
    /// Bytes in the file.
    flushed: u64,
    area: SpillArea,
}

impl Strings {
    /// Bytes written to the file at a time.
    const BLOCK: usize = 64 << 10;

    /// An empty one that keeps `share` bytes in memory.
    pub(crate) fn new(area: SpillArea, share: usize) -> Self {
        Strings {
            mem: Vec::new(),
            cap: share,
            buf: Vec::new(),
            file: None,
            flushed: 0,
            area,
        }
    }

    /// Appends `bytes`; the offset finds them again.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> std::io::Result<u64> {
        let len = u32::try_from(bytes.len())
            .map_err(|_| std::io::Error::other("a string of 4 GiB or more"))?;
        let at = self.mem.len() as u64 + self.flushed + self.buf.len() as u64;
        // Each string is whole in one place: memory until the first that does not fit, then the
        // file (and the buffer in front of it).
        let out = if self.file.is_none()
            && self.buf.is_empty()
            && self.mem.len() + 4 + bytes.len() <= self.cap
        {
            &mut self.mem
        } else {
            &mut self.buf
        };
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(bytes);
        if self.buf.len() >= Self::BLOCK {
            self.flush()?;
        }
        Ok(at)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        use std::io::Write;
        if self.buf.is_empty() {
            return Ok(());
        }
        if self.file.is_none() {
            self.file = Some(self.area.file()?);
        }
        self.file
            .as_mut()
            .expect("created above")
            .write_all(&self.buf)?;
        self.area.wrote(self.buf.len());
        self.flushed += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// The bytes pushed at `at`.
    pub(crate) fn get(&self, at: u64) -> std::io::Result<Vec<u8>> {
        let whole = |from: &[u8], i: usize| {
            let len = u32::from_le_bytes(from[i..i + 4].try_into().expect("4 bytes")) as usize;
            from[i + 4..i + 4 + len].to_vec()
        };
        let mem = self.mem.len() as u64;
        if at < mem {
            return Ok(whole(&self.mem, at as usize));
        }
        let at = at - mem;
        if at >= self.flushed {
            return Ok(whole(&self.buf, (at - self.flushed) as usize));
        }
        use std::os::unix::fs::FileExt;
        let file = self
            .file
            .as_ref()
            .expect("strings past memory are in the file");
        let mut len = [0u8; 4];
        file.read_exact_at(&mut len, at)?;
        let mut bytes = vec![0u8; u32::from_le_bytes(len) as usize];
        file.read_exact_at(&mut bytes, at + 4)?;
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_folder_is_named_in_the_error() {
        let area = SpillArea::new(Some(Path::new("/nonexistent/solr-dedup-spill")), 1 << 20);
        let e = area.file().unwrap_err().to_string();
        assert!(e.contains("/nonexistent/solr-dedup-spill"), "{e}");
        assert!(e.contains("--temp-dir"), "{e}");
    }

    #[test]
    fn a_column_past_its_share_reads_back_from_the_file() {
        let area = SpillArea::new(None, 1 << 20);
        // 3 values in memory, the rest in the file, some of it waiting in the buffer.
        let mut c: Column = Column::new(area.clone(), 24);
        let n = Column::<u64>::BLOCK * 2 + 5;
        for i in 0..n as u64 {
            c.push(i * 7 + 1).unwrap();
        }
        c.flush().unwrap();
        assert_eq!(c.len(), n);
        assert_eq!(area.written(), (n as u64 - 3) * 8);
        for i in [0, 2, 3, 4, Column::<u64>::BLOCK, n - 1, 5, 4] {
            assert_eq!(c.get(i).unwrap(), i as u64 * 7 + 1);
        }
        let all: Vec<u64> = c.iter().map(Result::unwrap).collect();
        assert_eq!(all, (0..n as u64).map(|i| i * 7 + 1).collect::<Vec<_>>());
        // A block read while it was the file's last and short is read again once it grew.
        let mut growing: Column = Column::new(area.clone(), 8);
        for i in 0..(Column::<u64>::BLOCK + 10) as u64 {
            growing.push(i).unwrap();
        }
        growing.flush().unwrap();
        let short = Column::<u64>::BLOCK + 5;
        assert_eq!(growing.get(short).unwrap(), short as u64);
        for i in (Column::<u64>::BLOCK + 10) as u64..(Column::<u64>::BLOCK + 20) as u64 {
            growing.push(i).unwrap();
        }
        growing.flush().unwrap();
        let last = Column::<u64>::BLOCK + 15;
        assert_eq!(growing.get(last).unwrap(), last as u64);
        let mut small: Column = Column::new(area, 1 << 20);
        small.push(5).unwrap();
        small.flush().unwrap();
        assert_eq!(
            small.iter().map(Result::unwrap).collect::<Vec<_>>(),
            vec![5]
        );
    }

    #[test]
    fn pairs_sorted_in_runs_are_found_by_key() {
        let area = SpillArea::new(None, 1 << 20);
        // 5,000 pairs in runs of 1,024: five runs merged; keys repeat, odd ones are missing.
        let pairs: Vec<(u64, u32)> = (0..5000u32)
            .map(|i| (u64::from((i * 7919) % 2500) * 2, i))
            .collect();
        let sorted = SortedPairs::sort(&area, 16, pairs.iter().copied()).unwrap();
        assert!(
            area.written() > 5000 * 12,
            "runs and the merged output spilled"
        );
        let roomy = SpillArea::new(None, 1 << 20);
        let fits = SortedPairs::sort(&roomy, 1 << 20, pairs.iter().copied()).unwrap();
        assert_eq!(roomy.written(), 0, "one run in memory");
        assert_eq!(
            fits.iter().map(Result::unwrap).collect::<Vec<_>>().len(),
            5000
        );
        assert_eq!(fits.find(2).unwrap(), sorted.find(2).unwrap());
        let mut expect = pairs.clone();
        expect.sort_unstable();
        let got: Vec<(u64, u32)> = sorted.iter().map(Result::unwrap).collect();
        assert_eq!(got, expect);
        for key in [0u64, 2, 1000, 4998, 1, 777, 5001] {
            let first = expect.iter().find(|p| p.0 == key).map(|p| p.1);
            assert_eq!(sorted.find(key).unwrap(), first, "key {key}");
        }
        let empty: SortedPairs = SortedPairs::sort(&area, 16, std::iter::empty()).unwrap();
        assert_eq!(empty.find(3).unwrap(), None);
    }

    #[test]
    fn shares_split_the_budget_and_never_reach_zero() {
        let area = SpillArea::new(None, 256 << 20);
        assert_eq!(area.share(32), 8 << 20);
        assert_eq!(SpillArea::new(None, 4).share(32), 1);
    }

    #[test]
    fn strings_past_their_share_are_found_by_offset() {
        let area = SpillArea::new(None, 1 << 20);
        let mut s = Strings::new(area.clone(), 40);
        let words: Vec<String> = (0..20_000)
            .map(|i| format!("w{i}-{}", "x".repeat(i % 17)))
            .collect();
        let at: Vec<u64> = words
            .iter()
            .map(|w| s.push(w.as_bytes()).unwrap())
            .collect();
        assert!(area.written() > 0, "most went to the file");
        // Memory, file and buffer, in any order; the empty string too.
        let empty = s.push(b"").unwrap();
        for i in [0usize, 1, 2, 5, 19_999, 7_000, 3, 12_345, 19_998] {
            assert_eq!(s.get(at[i]).unwrap(), words[i].as_bytes(), "string {i}");
        }
        assert_eq!(s.get(empty).unwrap(), b"");
    }

    #[test]
    fn many_runs_merge_in_levels_and_come_out_sorted() {
        let area = SpillArea::new(None, 1 << 20);
        // Runs of 1,024 pairs: 1,200 runs, merged 32 at a time into two levels above the first.
        let n = 1024 * 1200u32;
        let mut runs = RunBuilder::new(&area, 16);
        for i in 0..n {
            runs.push((u64::from(i.wrapping_mul(2_654_435_761) % 100_003), i))
                .unwrap();
        }
        assert!(runs.runs.iter().any(|r| r.0 == 2), "a second level");
        assert!(runs.runs.len() < 3 * FAN_IN, "{} runs", runs.runs.len());
        let runs = runs.finish().unwrap();
        let mut last = None;
        let (mut count, mut sum) = (0u32, 0u64);
        runs.merge(|p| {
            assert!(last.is_none_or(|l| l <= p), "{last:?} then {p:?}");
            last = Some(p);
            count += 1;
            sum += u64::from(p.1);
            Ok(())
        })
        .unwrap();
        assert_eq!(count, n);
        assert_eq!(sum, u64::from(n) * u64::from(n - 1) / 2, "every value once");
    }
}
