//! I/O plumbing: temporary files removed on drop, the read-ahead thread that copies the input out of
//! the kernel while earlier lines are parsed, and the batch of lines read but not parsed yet.

use super::*;

/// A file removed on drop.
pub(super) struct TempFile(pub(super) PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
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
    pub(super) fn read(
        &mut self,
        reader: &mut impl BufRead,
        pos: &mut Pos,
        max: usize,
    ) -> io::Result<bool> {
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

    pub(super) fn line(&self, i: usize) -> &[u8] {
        &self.buf[self.lines[i].2.clone()]
    }
}

pub(super) fn temp_beside(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".to_owned());
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}
