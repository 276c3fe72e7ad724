//! What the reader derived from the documents of a light read served from the view
//! ([`crate::store::Store::keep_derived`]), kept until the next state is written beside the
//! records it was derived from.
//!
//! The engine derives a fixed record and its grouping keys from every document's light fields;
//! for a document that stays as it was, the next run would derive the same again under the same
//! settings. So the next state keeps the bytes at the head of the document's record, and the next
//! run's light read hands them back with the id and URL alone instead of decoding every field
//! ([`super::view`]). The bytes stay only with a record that is exactly what the reader was served:
//! a document the run wrote (its flags changed) or that changed since loses them, and a later
//! round's read from Solr keeps none. A record served with its bytes under the tag the run derives
//! under keeps them without the reader giving them again: only what is new to the state passes
//! through the sink.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};

use crate::spill::SpillArea;

/// The bytes a light read was given, in its order: `[u64 id hash][i64 version][u16 length]
/// [bytes]` each, in a temporary file.
#[derive(Default)]
pub(super) struct Sink {
    /// What they were derived under (0: nothing given yet).
    pub(super) tag: u64,
    /// Given for a read served from the view, in id order, all written.
    ok: bool,
    writer: Option<BufWriter<File>>,
    last: Option<String>,
}

impl Sink {
    /// An empty sink for a light read; `ok`: the read is served from the view.
    pub(super) fn new(ok: bool) -> Self {
        Sink {
            ok,
            ..Sink::default()
        }
    }

    /// Keeps what was derived from documents of the read, `hash` giving an id's hash in the state.
    pub(super) fn push(
        &mut self,
        area: &SpillArea,
        tag: u64,
        derived: Vec<(String, i64, Vec<u8>)>,
        hash: impl Fn(&str) -> u64,
    ) {
        if !self.ok || derived.is_empty() {
            return;
        }
        if self.tag != 0 && self.tag != tag {
            self.ok = false;
            return;
        }
        self.tag = tag;
        if let Err(e) = self.write(area, derived, hash) {
            tracing::warn!("what the run derived is not kept for the next run: {e}");
            self.ok = false;
        }
    }

    fn write(
        &mut self,
        area: &SpillArea,
        derived: Vec<(String, i64, Vec<u8>)>,
        hash: impl Fn(&str) -> u64,
    ) -> std::io::Result<()> {
        if self.writer.is_none() {
            self.writer = Some(BufWriter::with_capacity(1 << 20, area.file()?));
        }
        let w = self.writer.as_mut().expect("a writer");
        for (id, version, bytes) in derived {
            if self.last.as_deref().is_some_and(|l| l >= id.as_str()) {
                return Err(std::io::Error::other("not in id order"));
            }
            let n = u16::try_from(bytes.len()).map_err(|_| std::io::Error::other("too long"))?;
            w.write_all(&hash(&id).to_le_bytes())?;
            w.write_all(&version.to_le_bytes())?;
            w.write_all(&n.to_le_bytes())?;
            w.write_all(&bytes)?;
            self.last = Some(id);
        }
        Ok(())
    }

    /// The bytes kept, to be read back in order: `None` when the read was not the view's, or
    /// not all of them could be kept.
    pub(super) fn finish(self) -> std::io::Result<Option<SinkReader>> {
        if !self.ok {
            return Ok(None);
        }
        let input = match self.writer {
            Some(w) => {
                let mut f = w.into_inner().map_err(|e| e.into_error())?;
                f.seek(SeekFrom::Start(0))?;
                Some(BufReader::with_capacity(1 << 20, f))
            }
            None => None,
        };
        let mut r = SinkReader { input, next: None };
        r.advance()?;
        Ok(Some(r))
    }
}

/// The kept bytes, read back in the read's order.
pub(super) struct SinkReader {
    input: Option<BufReader<File>>,
    next: Option<(u64, i64, Vec<u8>)>,
}

impl SinkReader {
    fn advance(&mut self) -> std::io::Result<()> {
        self.next = None;
        let Some(input) = self.input.as_mut() else {
            return Ok(());
        };
        if input.fill_buf()?.is_empty() {
            return Ok(());
        }
        let mut head = [0u8; 18];
        input.read_exact(&mut head)?;
        let n = u16::from_le_bytes([head[16], head[17]]) as usize;
        let mut bytes = vec![0u8; n];
        input.read_exact(&mut bytes)?;
        self.next = Some((
            u64::from_le_bytes(head[..8].try_into().expect("8")),
            i64::from_le_bytes(head[8..16].try_into().expect("8")),
            bytes,
        ));
        Ok(())
    }

    /// The bytes derived from the record of `hash` at `version`, if the read gave some: the
    /// records come in the read's order, so an entry is taken when its record comes (and dropped
    /// when that record is not as it was read).
    pub(super) fn take(
        &mut self,
        hash: u64,
        version: i64,
        unchanged: bool,
    ) -> std::io::Result<Option<Vec<u8>>> {
        match &self.next {
            Some((h, _, _)) if *h == hash => {}
            _ => return Ok(None),
        }
        let (_, v, bytes) = self.next.take().expect("peeked");
        self.advance()?;
        if unchanged && v == version {
            Ok(Some(bytes))
        } else {
            Ok(None)
        }
    }
}
