//! Reading and scratch files: temporary files removed on drop (and, when a killed run left them, by the next run),
//! the read-ahead thread that copies the input out of the kernel while earlier lines are parsed, and
//! the batch of lines read but not parsed yet, each line bounded by `--max-line-bytes`.

use super::*;

/// A file removed on drop. Every live one is also listed in a process-wide registry, so that a
/// second SIGINT/SIGTERM, which ends the process at once, can still remove them
/// ([`remove_all_temp_files`]).
pub(crate) struct TempFile(pub(crate) PathBuf);

static LIVE_TEMPS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

impl TempFile {
    /// A temporary file at `path` (not created here), registered for removal.
    pub(crate) fn new(path: PathBuf) -> Self {
        if let Ok(mut live) = LIVE_TEMPS.lock() {
            live.push(path.clone());
        }
        TempFile(path)
    }

    /// The file became something else (renamed over the output): no longer removed.
    pub(crate) fn keep(self) {
        forget_temp(&self.0);
        std::mem::forget(self);
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        forget_temp(&self.0);
    }
}

fn forget_temp(path: &Path) {
    if let Ok(mut live) = LIVE_TEMPS.lock() {
        if let Some(i) = live.iter().position(|p| p == path) {
            live.swap_remove(i);
        }
    }
}

/// Removes every temporary file this process holds; for a process about to exit without unwinding.
pub fn remove_all_temp_files() {
    // `try_lock`: the signal thread must never wait on a lock the interrupted thread holds.
    if let Ok(live) = LIVE_TEMPS.try_lock() {
        for p in live.iter() {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// The kinds of temporary files the store makes: the output being written (`tmp`), the light copy,
/// the pending updates, a converted `/select` response. Stale-file cleanup touches no other name.
const TEMP_KINDS: [&str; 4] = ["tmp", "light", "pending", "select"];

/// A temporary file name that the next run can recognise and, once its process is gone, remove:
/// `.NAME.KIND-PID-SEQ` beside a file named NAME, or `solr-dedup-PID-SEQ.KIND` in the temp dir.
pub(crate) fn temp_name(dir: &Path, beside: Option<&str>, kind: &str) -> PathBuf {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    let pid = std::process::id();
    match beside {
        Some(name) => dir.join(format!(".{name}.{kind}-{pid}-{seq}")),
        None => dir.join(format!("solr-dedup-{pid}-{seq}.{kind}")),
    }
}

/// The process that made the temporary file `file_name` (see [`temp_name`]), when the name is one
/// of ours (beside a file named `beside`, or in the temp dir when `None`).
pub(crate) fn temp_owner(file_name: &str, beside: Option<&str>) -> Option<u32> {
    let (pid, kind) = match beside {
        Some(name) => {
            let rest = file_name.strip_prefix(&format!(".{name}."))?;
            let (kind, numbers) = rest.split_once('-')?;
            let (pid, seq) = numbers.split_once('-')?;
            seq.parse::<u64>().ok()?;
            (pid, kind)
        }
        None => {
            let rest = file_name.strip_prefix("solr-dedup-")?;
            let (pid, rest) = rest.split_once('-')?;
            let (seq, kind) = rest.split_once('.')?;
            seq.parse::<u64>().ok()?;
            (pid, kind)
        }
    };
    TEMP_KINDS.contains(&kind).then_some(())?;
    pid.parse().ok()
}

/// Whether process `pid` is alive, when that can be told: `/proc/PID` exists (Linux). `None` on a
/// system without `/proc`, where no stale file is ever removed.
fn alive(pid: u32) -> Option<bool> {
    Path::new("/proc/self")
        .exists()
        .then(|| Path::new("/proc").join(pid.to_string()).exists())
}

/// Removes the temporary files a killed run left in `dir` (beside a file named `beside`, or the
/// temp dir's when `None`): ours by name, made by a process that no longer runs. Best effort.
pub(crate) fn remove_stale_temp_files(dir: &Path, beside: Option<&str>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let me = std::process::id();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| temp_owner(n, beside)) else {
            continue;
        };
        if pid != me && alive(pid) == Some(false) {
            let path = entry.path();
            match std::fs::remove_file(&path) {
                Ok(()) => debug!(path = %path.display(), pid, "removed a stale temporary file"),
                Err(e) => {
                    debug!(path = %path.display(), error = %e, "cannot remove a stale temporary file")
                }
            }
        }
    }
}

/// A file read ahead by a thread of its own, so that copying it out of the kernel overlaps with
/// parsing what came before (the copy alone is a good part of a pass over 5 KB pages). At most a few
/// chunks are read ahead; dropping the reader stops the thread.
pub(super) struct ReadAhead {
    pub(super) chunks: mpsc::Receiver<io::Result<Vec<u8>>>,
    /// Chunks read out go back to the thread, which fills them again: fresh memory for every chunk
    /// would cost a page fault per 4 KB.
    pub(super) spent: mpsc::Sender<Vec<u8>>,
    pub(super) chunk: Vec<u8>,
    pub(super) at: usize,
    pub(super) done: bool,
}

impl ReadAhead {
    const CHUNK: u64 = 1 << 20;

    /// Reads `path` from byte `offset`.
    pub(super) fn open(path: &Path, offset: u64) -> io::Result<Self> {
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
pub(super) struct Batch {
    pub(super) buf: Vec<u8>,
    pub(super) lines: Vec<(u64, Pos, Range<usize>)>,
}

impl Batch {
    pub(super) fn clear(&mut self) {
        self.buf.clear();
        self.lines.clear();
    }

    /// Reads up to `max` more lines from `reader`, which stands at `pos`; true at the end of the file.
    /// A line longer than `max_line` bytes is an error ([`LineTooLong`] inside the `io::Error`), with
    /// `pos` left at its start; no more than `max_line` bytes of it are ever held. The batch stops
    /// early once it holds [`Batch::BYTES`], so it never holds much more than that plus one line.
    pub(super) fn read(
        &mut self,
        reader: &mut impl BufRead,
        pos: &mut Pos,
        max: usize,
        max_line: usize,
    ) -> io::Result<bool> {
        for _ in 0..max {
            if self.buf.len() >= Self::BYTES {
                return Ok(false);
            }
            let from = self.buf.len();
            let n = read_line_bounded(reader, &mut self.buf, max_line)?;
            if n == 0 {
                return Ok(true);
            }
            let start = pos.0;
            *pos = (pos.0 + n as u64, pos.1 + 1);
            self.lines.push((start, *pos, from..self.buf.len()));
        }
        Ok(false)
    }

    /// Bytes a batch gathers before it stops taking lines (it may take one line more).
    const BYTES: usize = 16 << 20;

    pub(super) fn line(&self, i: usize) -> &[u8] {
        &self.buf[self.lines[i].2.clone()]
    }
}

/// A line longer than the limit (`--max-line-bytes`), the payload of the `io::Error` a bounded read
/// returns.
#[derive(Debug)]
pub(crate) struct LineTooLong(pub(crate) usize);

impl std::fmt::Display for LineTooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the line is longer than {} bytes (--max-line-bytes); is this a JSON Lines file?",
            self.0
        )
    }
}

impl std::error::Error for LineTooLong {}

/// The limit when a bounded read failed on a too long line.
pub(crate) fn too_long(e: &io::Error) -> Option<usize> {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<LineTooLong>())
        .map(|l| l.0)
}

/// `read_until(b'\n')` that appends at most `max` bytes (the newline included) to `buf`, and fails
/// with [`LineTooLong`] on a longer line instead of growing without bound. Returns the bytes read.
pub(crate) fn read_line_bounded(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> io::Result<usize> {
    let mut total = 0;
    loop {
        let (done, used) = {
            let available = match reader.fill_buf() {
                Ok(a) => a,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                return Ok(total);
            }
            let (done, used) = match available.iter().position(|&b| b == b'\n') {
                Some(i) => (true, i + 1),
                None => (false, available.len()),
            };
            // The newline does not count against the limit.
            if total + used > max + usize::from(done) {
                return Err(io::Error::new(io::ErrorKind::InvalidData, LineTooLong(max)));
            }
            buf.extend_from_slice(&available[..used]);
            (done, used)
        };
        reader.consume(used);
        total += used;
        if done {
            return Ok(total);
        }
    }
}
