//! The per-document state of a round: the fixed-size record ([`Rec`]) and where the records live
//! ([`Recs`], spilled past their share of the budget), each dimension's keys ([`Keys`]), and the
//! records with their id-hash index as passes B and C and the near join find them ([`Records`]).

use super::group::Groups;
use super::{pages, spill, Dimension, EngineError, Plan, RankPrefix};
use crate::store::StoreError;

/// The fixed-size state kept per document between passes.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rec {
    pub(super) id_hash: u64,
    /// The version read in pass A (0 when the store has none), which guards the document's update:
    /// its signatures were computed from the text of this version.
    pub(super) read_version: i64,
    pub(super) prefix: RankPrefix,
    /// The id hash of the stored near group id (0 when there is none).
    pub(super) near_group: u64,
    /// Bit `d`: takes part in dimension `d`.
    pub(super) mask: u8,
    /// Its near-duplicate values were computed in this round (they are in the join, not stored).
    pub(super) near_signed: bool,
    /// Has signatures waiting in [`pending::Pending`], to be written with its flags in pass C.
    pub(super) pending: bool,
    /// Bit `d`: the stored flag of dimension `d` is true.
    pub(super) stored_true: u8,
    /// Signed in this round, or missing a flag or count: its groups are decided again.
    pub(super) dirty: bool,
    /// Its rank prefix under the order the flags were last decided under ([`DecidedUnder`]) is
    /// not `prefix` (or that order is not known).
    pub(super) reordered: bool,
    /// The stored exact, fuzzy and near copy counts (0 when missing).
    pub(super) stored_counts: [u32; 3],
}

impl Rec {
    /// The record of a document with nothing known yet but its id's hash, its version and its rank
    /// prefix: in no dimension, nothing stored, nothing pending.
    pub(super) fn new(id_hash: u64, read_version: i64, prefix: RankPrefix) -> Self {
        Rec {
            id_hash,
            read_version,
            prefix,
            near_group: 0,
            mask: 0,
            near_signed: false,
            pending: false,
            stored_true: 0,
            dirty: false,
            reordered: false,
            stored_counts: [0; 3],
        }
    }
}

impl spill::Fixed for Rec {
    const SIZE: usize = 52;

    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.id_hash.to_le_bytes());
        out.extend_from_slice(&self.read_version.to_le_bytes());
        out.extend_from_slice(&self.prefix.to_bytes());
        out.extend_from_slice(&self.near_group.to_le_bytes());
        let flags = u8::from(self.near_signed)
            | u8::from(self.pending) << 1
            | u8::from(self.dirty) << 2
            | u8::from(self.reordered) << 3;
        out.extend_from_slice(&[self.mask, flags, self.stored_true, 0]);
        for c in self.stored_counts {
            out.extend_from_slice(&c.to_le_bytes());
        }
    }

    fn take(b: &[u8]) -> Self {
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let flags = b[37];
        Rec {
            id_hash: u64_at(0),
            read_version: u64_at(8) as i64,
            prefix: RankPrefix::from_bytes(&b[16..28]),
            near_group: u64_at(28),
            mask: b[36],
            near_signed: flags & 1 != 0,
            pending: flags & 2 != 0,
            dirty: flags & 4 != 0,
            reordered: flags & 8 != 0,
            stored_true: b[38],
            stored_counts: [u32_at(40), u32_at(44), u32_at(48)],
        }
    }
}

/// The records of a round, in record order: an eighth of the `--memory` budget in memory, the
/// rest in a temporary file ([`spill::Column`]), read back in order or one at a time (passes B and
/// C mostly read them in order). A read of the file that fails is kept, the record read as
/// taking part nowhere, and [`Recs::check`] turns it into the round's error before anything is
/// written.
pub(super) struct Recs {
    col: spill::Column<Rec>,
    failed: std::sync::Mutex<Option<std::io::Error>>,
}

impl Recs {
    /// The part of the budget kept in memory.
    pub(super) const SHARE: u64 = 8;

    pub(super) fn new(area: &spill::SpillArea) -> Self {
        Recs {
            col: spill::Column::new(area.clone(), area.share(Self::SHARE)),
            failed: std::sync::Mutex::new(None),
        }
    }

    pub(super) fn push(&mut self, rec: Rec) -> std::io::Result<()> {
        self.col.push(rec)
    }

    pub(super) fn flush(&mut self) -> std::io::Result<()> {
        self.col.flush()
    }

    pub(super) fn len(&self) -> usize {
        self.col.len()
    }

    pub(super) fn fail(&self, e: std::io::Error) -> Rec {
        self.failed.lock().expect("records error").get_or_insert(e);
        Rec::new(0, 0, RankPrefix::from_bytes(&[0; 12]))
    }

    /// The record at `idx`.
    pub(super) fn get(&self, idx: usize) -> Rec {
        self.col.get(idx).unwrap_or_else(|e| self.fail(e))
    }

    /// Every record, in order.
    pub(super) fn iter(&self) -> impl Iterator<Item = Rec> + '_ {
        self.col.iter().map(|r| r.unwrap_or_else(|e| self.fail(e)))
    }

    /// The error of a read that failed, if one did.
    pub(super) fn check(&self) -> Result<(), EngineError> {
        match self.failed.lock().expect("records error").take() {
            Some(e) => {
                Err(StoreError::io("cannot read the records kept in temporary files", e).into())
            }
            None => Ok(()),
        }
    }
}

/// The key of each single-key dimension (all but `near`, whose keys live in [`near::Join`]) per
/// record, in record order: read in order once per dimension to build its groups, and one at a
/// time by lookups. 8 bytes a record and dimension, each dimension's column keeping a 512th of the
/// `--memory` budget in memory and spilling the rest ([`spill::Column`]).
pub(super) struct Keys {
    cols: Vec<Option<spill::Column>>,
}

impl Keys {
    /// The part of the budget each dimension's column keeps in memory: small, as they are read in
    /// order (512 KiB each by default).
    const SHARE: u64 = 512;

    pub(super) fn new(area: &spill::SpillArea, plan: &Plan<'_>) -> Self {
        Keys {
            cols: Dimension::ALL[..6]
                .iter()
                .map(|&d| {
                    plan.on(d)
                        .then(|| spill::Column::new(area.clone(), area.share(Self::SHARE)))
                })
                .collect(),
        }
    }

    /// Appends a record's keys (0 where it takes no part).
    pub(super) fn push(&mut self, keys: &[u64; 6]) -> std::io::Result<()> {
        for (c, &k) in self.cols.iter_mut().zip(keys) {
            if let Some(c) = c {
                c.push(k)?;
            }
        }
        Ok(())
    }

    pub(super) fn flush(&mut self) -> std::io::Result<()> {
        self.cols
            .iter_mut()
            .flatten()
            .try_for_each(spill::Column::flush)
    }

    /// The key of record `idx` in dimension `d` (not `near`).
    pub(super) fn get(&self, d: Dimension, idx: usize) -> std::io::Result<u64> {
        match &self.cols[d.index()] {
            Some(c) => c.get(idx),
            None => Ok(0),
        }
    }

    /// The groups of dimension `d` (not `near`) among the records whose mask has its bit: the keys
    /// are read in order and sorted with the members' record indices in runs of `share` bytes
    /// (spilled and merged past one run), and only the documents that share a key are held.
    pub(super) fn groups(
        &self,
        d: Dimension,
        recs: &Recs,
        area: &spill::SpillArea,
        share: usize,
    ) -> std::io::Result<Groups> {
        let bit = 1u8 << d.index();
        let Some(c) = &self.cols[d.index()] else {
            return Ok(Groups::build(recs.len(), Vec::new()));
        };
        debug_assert_eq!(c.len(), recs.len());
        let pairs = c
            .iter()
            .zip(recs.iter())
            .enumerate()
            .filter_map(|(i, (k, r))| match k {
                Ok(k) => (r.mask & bit != 0).then_some(Ok((k, i as u32))),
                // A key that cannot be read fails the grouping, whoever's it is.
                Err(e) => Some(Err(e)),
            });
        let runs = spill::Runs::sort(area, share, pairs)?;
        Groups::from_runs(recs.len(), &runs)
    }
}

/// The records of a round and their id-hash index: where passes B and C and the near join find the
/// record of a document they read.
#[derive(Clone, Copy)]
pub(super) struct Records<'r> {
    pub(super) recs: &'r Recs,
    /// Id hash and record index of every record, in id-hash order.
    pub(super) by_hash: &'r spill::SortedPairs,
}

impl<'r> Records<'r> {
    pub(super) fn finder(self) -> pages::Finder<'r> {
        pages::Finder::new(self.recs, self.by_hash)
    }
}

#[cfg(test)]
mod tests {
    use super::super::spill::{Column, Fixed, SpillArea};
    use super::*;
    use crate::engine::{Preference, UrlKeys};

    #[test]
    fn a_record_comes_back_from_its_bytes_as_it_was() {
        let url = "https://www.example.org/a?b=c";
        let prefix = RankPrefix::new(
            Some(url),
            &UrlKeys::new(Some(url)),
            Preference::default(),
            None,
        );
        let mut rec = Rec::new(0xfeed_beef_0123_4567, -42, prefix);
        rec.near_group = u64::MAX - 3;
        rec.mask = 0b101_0101;
        rec.pending = true;
        rec.reordered = true;
        rec.stored_true = 0b10;
        rec.stored_counts = [1, u32::MAX, 70_000];
        let mut bytes = Vec::new();
        rec.put(&mut bytes);
        assert_eq!(bytes.len(), Rec::SIZE);
        let back = Rec::take(&bytes);
        assert_eq!(format!("{back:?}"), format!("{rec:?}"));
        assert_eq!(back.prefix.to_bytes(), prefix.to_bytes());
        // And through a column that keeps one in memory and spills the rest.
        let mut col: Column<Rec> = Column::new(SpillArea::new(None, 1 << 20), 1);
        for i in 0..3000u64 {
            col.push(Rec { id_hash: i, ..rec }).unwrap();
        }
        col.flush().unwrap();
        assert_eq!(col.get(2999).unwrap().id_hash, 2999);
        assert_eq!(col.get(1).unwrap().stored_counts, rec.stored_counts);
        let ids: Vec<u64> = col.iter().map(|r| r.unwrap().id_hash).collect();
        assert_eq!(ids, (0..3000).collect::<Vec<_>>());
    }
}
