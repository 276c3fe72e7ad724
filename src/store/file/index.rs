//! The index from a 64-bit hash of each id to its line's byte offset, which serves real-time gets
//! and places updates: pairs appended in input order while the first read goes through the file,
//! sorted by hash once it reached the end. 16 bytes a document, of which a 16th of the `--memory`
//! budget stays in memory (a million lines at the default) and the rest goes to temporary files
//! ([`crate::spill`]): the input-order pairs, the sorted runs and the merged index.

use crate::spill::{Column, SortedPairs, SpillArea};

/// Id hash → byte offset of the line, for every line of the input once complete.
pub(super) struct IdIndex {
    area: SpillArea,
    /// (id hash, offset) in input order while building.
    building: Column<(u64, u64)>,
    /// The same pairs in hash order, once the end was reached.
    sorted: Option<SortedPairs<u64>>,
    /// The offset of the first line not indexed yet: lines are indexed once each, in order, so a
    /// read that starts past it (or goes over lines already indexed) adds nothing.
    next: u64,
}

/// Two lines whose ids share a hash: the byte offsets of both, the earlier first.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Twice {
    pub(super) first: u64,
    pub(super) second: u64,
}

impl IdIndex {
    /// Up to how many lines an incomplete index is searched.
    const EARLY: usize = 1 << 14;
    /// Of the memory budget, the part each of its stages keeps in memory.
    const SHARE: u64 = 16;

    /// An empty index that spills to `area`.
    pub(super) fn new(area: SpillArea) -> Self {
        IdIndex {
            building: Column::new(area.clone(), area.share(Self::SHARE)),
            area,
            sorted: None,
            next: 0,
        }
    }

    /// Whether every line of the input is in it.
    pub(super) fn complete(&self) -> bool {
        self.sorted.is_some()
    }

    /// Notes the line at byte offset `at` (its id's hash, `None` for a line without a document),
    /// which the next line follows at `next`.
    pub(super) fn note(&mut self, hash: Option<u64>, at: u64, next: u64) -> std::io::Result<()> {
        if self.complete() || at != self.next {
            return Ok(());
        }
        if let Some(h) = hash {
            self.building.push((h, at))?;
        }
        self.next = next;
        Ok(())
    }

    /// A read reached the end of the input at byte offset `end`: if every line before it was noted,
    /// the index is complete. Two lines with one id hash are an error of the input.
    pub(super) fn reached_end(&mut self, end: u64) -> std::io::Result<Result<(), Twice>> {
        if self.complete() || end != self.next || end == 0 {
            return Ok(Ok(()));
        }
        let mut sorted = match self.building.take_vec() {
            // All in memory: sorted where it is.
            Some(mut pairs) => {
                pairs.sort_unstable();
                SortedPairs::in_memory(&self.area, pairs)
            }
            None => self.sort_spilled()?,
        };
        let mut last: Option<(u64, u64)> = None;
        let mut twice = None;
        for p in sorted.iter() {
            let p = p?;
            if let Some(l) = last.filter(|l| l.0 == p.0) {
                twice = Some(Twice {
                    first: l.1,
                    second: p.1,
                });
                break;
            }
            last = Some(p);
        }
        if let Some(twice) = twice {
            // Kept for a read that comes again (and fails again): the index is not complete.
            if let Some(pairs) = sorted.take_vec() {
                self.building = Column::in_memory(self.area.clone(), pairs);
            }
            return Ok(Err(twice));
        }
        self.sorted = Some(sorted);
        self.building = Column::new(self.area.clone(), 1);
        Ok(Ok(()))
    }

    /// The pairs noted, past memory, sorted in runs and merged.
    fn sort_spilled(&mut self) -> std::io::Result<SortedPairs<u64>> {
        self.building.flush()?;
        let share = self.area.share(Self::SHARE);
        SortedPairs::sort_keeping(&self.area, share, share, self.building.iter())
    }

    /// The byte offset of the line whose id has `hash`. Before the index is complete, found only
    /// among the first [`IdIndex::EARLY`] lines: a get of the first page's documents, before any
    /// read went through the file, finds them without reading the whole file to index it.
    pub(super) fn get(&self, hash: u64) -> std::io::Result<Option<u64>> {
        match &self.sorted {
            Some(sorted) => sorted.find(hash),
            None if self.building.len() <= Self::EARLY => {
                for p in self.building.iter() {
                    let (h, at) = p?;
                    if h == hash {
                        return Ok(Some(at));
                    }
                }
                Ok(None)
            }
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl IdIndex {
        fn note_ok(&mut self, hash: Option<u64>, at: u64, next: u64) {
            self.note(hash, at, next).unwrap();
        }
        fn get_ok(&self, hash: u64) -> Option<u64> {
            self.get(hash).unwrap()
        }
    }

    #[test]
    fn lines_are_found_once_the_end_is_reached() {
        let mut ix = IdIndex::new(SpillArea::new(None, 1 << 20));
        ix.note_ok(Some(30), 0, 10);
        ix.note_ok(None, 10, 11);
        ix.note_ok(Some(10), 11, 25);
        assert_eq!(ix.get_ok(30), Some(0), "among the first lines");
        ix.reached_end(25).unwrap().unwrap();
        assert!(ix.complete());
        assert_eq!(ix.get_ok(30), Some(0));
        assert_eq!(ix.get_ok(10), Some(11));
        assert_eq!(ix.get_ok(20), None);
    }

    #[test]
    fn lines_read_again_or_past_a_gap_are_not_indexed() {
        let mut ix = IdIndex::new(SpillArea::new(None, 1 << 20));
        ix.note_ok(Some(1), 0, 10);
        // A read that starts again from the top: already indexed.
        ix.note_ok(Some(1), 0, 10);
        // A read that starts past a line not indexed: a gap, nothing is added.
        ix.note_ok(Some(3), 20, 30);
        ix.reached_end(30).unwrap().unwrap();
        assert!(!ix.complete(), "line 10..20 was never noted");
        ix.note_ok(Some(2), 10, 20);
        ix.note_ok(Some(3), 20, 30);
        ix.reached_end(30).unwrap().unwrap();
        assert_eq!(
            (ix.get_ok(1), ix.get_ok(2), ix.get_ok(3)),
            (Some(0), Some(10), Some(20))
        );
    }

    #[test]
    fn two_lines_with_one_hash_are_named_by_their_offsets() {
        let mut ix = IdIndex::new(SpillArea::new(None, 1 << 20));
        ix.note_ok(Some(7), 0, 5);
        ix.note_ok(Some(8), 5, 9);
        ix.note_ok(Some(7), 9, 14);
        assert_eq!(
            ix.reached_end(14).unwrap(),
            Err(Twice {
                first: 0,
                second: 9
            })
        );
        assert!(!ix.complete());
    }

    #[test]
    fn an_index_past_its_share_spills_and_finds_every_line() {
        // A budget of 16 KiB keeps 1 KiB (64 pairs) of each stage in memory.
        let area = SpillArea::new(None, 16 << 10);
        let mut ix = IdIndex::new(area.clone());
        let n = 5_000u64;
        let hash = |i: u64| i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        for i in 0..n {
            ix.note_ok(Some(hash(i)), i * 10, i * 10 + 10);
        }
        ix.reached_end(n * 10).unwrap().unwrap();
        assert!(area.written() > 0, "spilled");
        for i in [0, 1, 63, 64, 1_023, 1_024, 2_500, n - 1] {
            assert_eq!(ix.get_ok(hash(i)), Some(i * 10), "line {i}");
        }
        assert_eq!(ix.get_ok(12_345), None);
        // A hash twice is found past memory too.
        let mut twice = IdIndex::new(area);
        for i in 0..n {
            twice.note_ok(Some(hash(i % 4_000)), i * 10, i * 10 + 10);
        }
        let t = twice.reached_end(n * 10).unwrap().unwrap_err();
        assert_eq!(t.second - t.first, 40_000);
    }
}
