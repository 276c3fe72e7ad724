//! Signatures computed in pass A and written in pass C, in the same atomic update as the document's
//! flags and counts: one write per document per run.
//!
//! Pass A signs a document long before pass C decides its flags (the groups need every signature
//! first), so the fields to set wait here, keyed by record. They are kept as compact JSON, in memory
//! up to [`Pending::MEMORY`] bytes and in a temporary file beyond that (a first run over a million
//! pages holds about a million `fuzzy_signature_text_t` values), so that memory stays bounded as the
//! index grows. The file is removed when the round ends, also on an error.
//!
//! A run killed before pass C has written nothing: the index holds what it held before, and the next
//! run signs those documents again from their (then current) text.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;

use serde_json::Value;

/// The fields to set on documents, by record index.
pub(super) struct Pending {
    /// Per record: offset (low 40 bits) and length (high 24 bits) of its entry, or [`Pending::NONE`].
    slots: Vec<u64>,
    /// Entries from `flushed` on, not yet in the file.
    buf: Vec<u8>,
    /// Bytes already in the file.
    flushed: u64,
    file: Option<Spill>,
    count: usize,
}

struct Spill {
    file: File,
    path: PathBuf,
}

impl Drop for Spill {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Pending {
    /// Bytes kept in memory before entries go to the temporary file.
    pub(super) const MEMORY: usize = 8 << 20;
    const NONE: u64 = u64::MAX;
    /// Offsets up to 1 TiB, entries up to 16 MiB (a profile text is far smaller).
    const OFFSET_BITS: u32 = 40;

    pub(super) fn new() -> Self {
        Pending {
            slots: Vec::new(),
            buf: Vec::new(),
            flushed: 0,
            file: None,
            count: 0,
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
    /// threads do it in parallel.
    pub(super) fn encode(set: &[(String, Value)]) -> std::io::Result<Vec<u8>> {
        serde_json::to_vec(set).map_err(std::io::Error::other)
    }

    /// Keeps an entry made by [`Pending::encode`] for record `idx` (records are added in order; at
    /// most one entry each).
    pub(super) fn put_encoded(&mut self, idx: usize, entry: &[u8]) -> std::io::Result<()> {
        if self.slots.len() <= idx {
            self.slots.resize(idx + 1, Self::NONE);
        }
        let offset = self.flushed + self.buf.len() as u64;
        self.buf.extend_from_slice(entry);
        let len = entry.len() as u64;
        if len >= 1 << (64 - Self::OFFSET_BITS) || offset >= 1 << Self::OFFSET_BITS {
            return Err(std::io::Error::other("a signature entry too large to keep"));
        }
        self.slots[idx] = offset | len << Self::OFFSET_BITS;
        self.count += 1;
        if self.buf.len() > Self::MEMORY {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> std::io::Result<()> {
        if self.file.is_none() {
            let path = std::env::temp_dir().join(format!(
                "solr-dedup-pending-{}-{:x}.json",
                std::process::id(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos())
                    .unwrap_or(0)
            ));
            let file = std::fs::OpenOptions::new()
                .create_new(true)
                .read(true)
                .append(true)
                .open(&path)?;
            self.file = Some(Spill { file, path });
        }
        let spill = self.file.as_mut().expect("created above");
        spill.file.write_all(&self.buf)?;
        self.flushed += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// The fields waiting for record `idx`, if any.
    pub(super) fn get(&self, idx: usize) -> std::io::Result<Option<Vec<(String, Value)>>> {
        let Some(&slot) = self.slots.get(idx) else {
            return Ok(None);
        };
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
            let spill = self.file.as_ref().expect("flushed entries are in the file");
            spill.file.read_exact_at(&mut bytes, offset)?;
        }
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(std::io::Error::other)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn entries_come_back_from_memory_and_from_the_file() {
        let mut p = Pending::new();
        let big = "x".repeat(1 << 20);
        let n = 12; // 12 MiB: past MEMORY, so the first entries are in the file
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
        assert!(p.file.is_some() && p.flushed > 0 && !p.buf.is_empty());
        let path = p.file.as_ref().unwrap().path.clone();
        assert_eq!(p.len(), n);
        for i in 0..n {
            let set = p.get(i * 2).unwrap().expect("kept");
            assert_eq!(set[0], ("exact_signature_l".to_owned(), json!(-(i as i64))));
            assert!(set[1].1.as_str().unwrap().starts_with(&format!("{i} x")));
            assert!(p.get(i * 2 + 1).unwrap().is_none());
        }
        assert!(p.get(10_000).unwrap().is_none());
        drop(p);
        assert!(!path.exists(), "the spill file is removed");
    }
}
