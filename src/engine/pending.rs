//! Signatures computed in pass A and written in pass C, in the same atomic update as the document's
//! flags and counts: one write per document per run.
//!
//! Pass A signs a document long before pass C decides its flags (the groups need every signature
//! first), so the fields to set wait here, keyed by record. They are kept in a compact binary form, in memory
//! up to a 32nd of the `--memory` budget ([`Pending::SHARE`]; 8 MiB by default) and in an anonymous
//! temporary file beyond that ([`SpillArea`]; a first run over a million pages holds about a
//! million `fuzzy_signature_text_t` values), so that they do not grow memory with the index. The
//! file has no name, so it is gone when the round ends, also on an error.
//!
//! A run killed before pass C has written nothing: the index holds what it held before, and the next
//! run signs those documents again from their (then current) text.

use std::fs::File;
use std::io::Write;

use serde_json::Value;

use super::spill::{Column, SpillArea};

/// The fields to set on documents, by record index.
pub(super) struct Pending {
    /// Per record up to the last with an entry: offset (low 40 bits) and length (high 24 bits) of
    /// its entry, or [`Pending::NONE`]. A 512th of the budget in memory, the rest spilled.
    slots: Column,
    /// Entries from `flushed` on, not yet in the file.
    buf: Vec<u8>,
    /// Bytes already in the file.
    flushed: u64,
    file: Option<File>,
    count: usize,
    /// Bytes kept in memory before entries go to the temporary file.
    memory: usize,
    area: SpillArea,
}

impl Pending {
    /// The part of the budget kept in memory: one 32nd.
    pub(super) const SHARE: u64 = 32;
    /// The part of the budget the slots keep in memory (read in record order, mostly).
    const SLOTS_SHARE: u64 = 512;
    const NONE: u64 = u64::MAX;
    /// Offsets up to 1 TiB, entries up to 16 MiB (a profile text is far smaller).
    const OFFSET_BITS: u32 = 40;

    pub(super) fn new(area: SpillArea) -> Self {
        Pending {
            slots: Column::new(area.clone(), area.share(Self::SLOTS_SHARE)),
            buf: Vec::new(),
            flushed: 0,
            file: None,
            count: 0,
            memory: area.share(Self::SHARE),
            area,
        }
    }

    /// How many records have fields waiting.
    pub(super) fn len(&self) -> usize {
        self.count
    }

    /// Keeps `set` for record `idx` (records are added in order; at most one entry each).
    #[cfg(test)]
    pub(super) fn put(&mut self, idx: usize, set: &[(String, Value)]) -> std::io::Result<()> {
        self.put_encoded(idx, &Self::encode(set)?)
    }

    /// The entry of `set`, as [`Pending::put_encoded`] takes it: encoded apart, so that the signing
    /// threads do it in parallel. A compact binary form ([`codec`]): integers and arrays of them
    /// (the near-duplicate values) as 8 bytes each, so that pass C reads them back without parsing
    /// text.
    pub(super) fn encode(set: &[(String, Value)]) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::with_capacity(64 + 8 * set.len());
        for (field, value) in set {
            codec::put(&mut out, field, value)?;
        }
        Ok(out)
    }

    /// Keeps an entry made by [`Pending::encode`] for record `idx` (records are added in order; at
    /// most one entry each).
    pub(super) fn put_encoded(&mut self, idx: usize, entry: &[u8]) -> std::io::Result<()> {
        assert!(idx >= self.slots.len(), "entries are kept in record order");
        while self.slots.len() < idx {
            self.slots.push(Self::NONE)?;
        }
        let offset = self.flushed + self.buf.len() as u64;
        self.buf.extend_from_slice(entry);
        let len = entry.len() as u64;
        if len >= 1 << (64 - Self::OFFSET_BITS) || offset >= 1 << Self::OFFSET_BITS {
            return Err(std::io::Error::other("a signature entry too large to keep"));
        }
        self.slots.push(offset | len << Self::OFFSET_BITS)?;
        self.count += 1;
        if self.buf.len() > self.memory {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> std::io::Result<()> {
        if self.file.is_none() {
            self.file = Some(self.area.file()?);
        }
        let file = self.file.as_mut().expect("created above");
        file.write_all(&self.buf)?;
        self.area.wrote(self.buf.len());
        self.flushed += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// The fields waiting for record `idx`, if any.
    pub(super) fn get(&self, idx: usize) -> std::io::Result<Option<Vec<(String, Value)>>> {
        if idx >= self.slots.len() {
            return Ok(None);
        }
        let slot = self.slots.get(idx)?;
        if slot == Self::NONE {
            return Ok(None);
        }
        let offset = slot & ((1 << Self::OFFSET_BITS) - 1);
        let len = slot >> Self::OFFSET_BITS;
        let mut bytes = vec![0u8; len as usize];
        if offset >= self.flushed {
            let start = (offset - self.flushed) as usize;
            bytes.copy_from_slice(&self.buf[start..start + len as usize]);
        } else {
            use std::os::unix::fs::FileExt;
            let file = self.file.as_ref().expect("flushed entries are in the file");
            file.read_exact_at(&mut bytes, offset)?;
        }
        codec::get_all(&bytes).map(Some)
    }
}

/// The entry format: per field, its name's length (u16) and bytes, then the value
/// ([`crate::store::codec`]).
mod codec {
    use std::io::{Error, Result};

    use serde_json::Value;

    use crate::store::codec::{put_value, Reader};

    pub(super) fn put(out: &mut Vec<u8>, field: &str, value: &Value) -> Result<()> {
        let name = u16::try_from(field.len()).map_err(|_| Error::other("a field name too long"))?;
        out.extend(name.to_le_bytes());
        out.extend(field.as_bytes());
        put_value(out, value)
    }

    pub(super) fn get_all(bytes: &[u8]) -> Result<Vec<(String, Value)>> {
        let mut r = Reader(bytes);
        let mut out = Vec::new();
        while !r.is_empty() {
            let n = r.u16()?;
            let field = r.text(n)?.to_owned();
            let value = r.value(true)?.expect("kept");
            out.push((field, value));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn entries_come_back_from_memory_and_from_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let area = SpillArea::new(Some(dir.path()), 256 << 20);
        let mut p = Pending::new(area.clone());
        let big = "x".repeat(1 << 20);
        let n = 12; // 12 MiB: past the 8 MiB share, so the first entries are in the file
        for i in 0..n {
            let set = vec![
                ("exact_signature_l".to_owned(), json!(-(i as i64))),
                (
                    "fuzzy_signature_text_t".to_owned(),
                    json!(format!("{i} {big}")),
                ),
            ];
            p.put(i * 2, &set).unwrap();
        }
        let every_kind = vec![
            ("a".to_owned(), json!(null)),
            ("b".to_owned(), json!(true)),
            ("c".to_owned(), json!(false)),
            ("d".to_owned(), json!(i64::MIN)),
            ("e".to_owned(), json!("Straße – 日本語")),
            ("f".to_owned(), json!([1, -2, i64::MAX])),
            ("g".to_owned(), json!([])),
            ("h".to_owned(), json!(["x", 1])),
            ("i".to_owned(), json!(1.5)),
            ("j".to_owned(), json!(u64::MAX)),
            ("k".to_owned(), json!({"set": [1]})),
        ];
        p.put(n * 2, &every_kind).unwrap();
        assert_eq!(p.get(n * 2).unwrap().unwrap(), every_kind);
        assert!(codec::get_all(&[1, 0, b'a', 9]).is_err(), "an unknown tag");
        assert!(codec::get_all(&[1, 0, b'a', 3, 1]).is_err(), "cut short");
        assert!(p.file.is_some() && p.flushed > 0 && !p.buf.is_empty());
        assert_eq!(area.written(), p.flushed, "the spilled bytes are counted");
        // The file has no name: nothing to leave behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        assert_eq!(p.len(), n + 1);
        for i in 0..n {
            let set = p.get(i * 2).unwrap().expect("kept");
            assert_eq!(set[0], ("exact_signature_l".to_owned(), json!(-(i as i64))));
            assert!(set[1].1.as_str().unwrap().starts_with(&format!("{i} x")));
            assert!(p.get(i * 2 + 1).unwrap().is_none());
        }
        assert!(p.get(10_000).unwrap().is_none());
        drop(p);
    }
}
