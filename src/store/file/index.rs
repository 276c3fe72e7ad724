//! The index from a 64-bit hash of each id to its line's byte offset, which serves real-time gets
//! and places updates: pairs appended in input order while the first read goes through the file,
//! sorted by hash once it reached the end. 16 bytes a document (a hash map took about 36).

/// Id hash → byte offset of the line, for every line of the input once complete.
#[derive(Debug, Default)]
pub(super) struct IdIndex {
    /// (id hash, offset): in input order while building, in hash order once complete.
    pairs: Vec<(u64, u64)>,
    /// The offset of the first line not indexed yet: lines are indexed once each, in order, so a
    /// read that starts past it (or goes over lines already indexed) adds nothing.
    next: u64,
    complete: bool,
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

    /// Whether every line of the input is in it.
    pub(super) fn complete(&self) -> bool {
        self.complete
    }

    /// Notes the line at byte offset `at` (its id's hash, `None` for a line without a document),
    /// which the next line follows at `next`.
    pub(super) fn note(&mut self, hash: Option<u64>, at: u64, next: u64) {
        if self.complete || at != self.next {
            return;
        }
        if let Some(h) = hash {
            self.pairs.push((h, at));
        }
        self.next = next;
    }

    /// A read reached the end of the input at byte offset `end`: if every line before it was noted,
    /// the index is complete. Two lines with one id hash are an error of the input.
    pub(super) fn reached_end(&mut self, end: u64) -> Result<(), Twice> {
        if self.complete || end != self.next || end == 0 {
            return Ok(());
        }
        self.pairs.sort_unstable();
        self.pairs.shrink_to_fit();
        if let Some(w) = self.pairs.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(Twice {
                first: w[0].1,
                second: w[1].1,
            });
        }
        self.complete = true;
        Ok(())
    }

    /// The byte offset of the line whose id has `hash`. Before the index is complete, found only
    /// among the first [`IdIndex::EARLY`] lines: a get of the first page's documents, before any
    /// read went through the file, finds them without reading the whole file to index it.
    pub(super) fn get(&self, hash: u64) -> Option<u64> {
        if !self.complete {
            return (self.pairs.len() <= Self::EARLY)
                .then(|| self.pairs.iter().find(|p| p.0 == hash).map(|p| p.1))
                .flatten();
        }
        self.pairs
            .binary_search_by_key(&hash, |p| p.0)
            .ok()
            .map(|i| self.pairs[i].1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_found_once_the_end_is_reached() {
        let mut ix = IdIndex::default();
        ix.note(Some(30), 0, 10);
        ix.note(None, 10, 11);
        ix.note(Some(10), 11, 25);
        assert_eq!(ix.get(30), Some(0), "among the first lines");
        ix.reached_end(25).unwrap();
        assert!(ix.complete());
        assert_eq!(ix.get(30), Some(0));
        assert_eq!(ix.get(10), Some(11));
        assert_eq!(ix.get(20), None);
    }

    #[test]
    fn lines_read_again_or_past_a_gap_are_not_indexed() {
        let mut ix = IdIndex::default();
        ix.note(Some(1), 0, 10);
        // A read that starts again from the top: already indexed.
        ix.note(Some(1), 0, 10);
        // A read that starts past a line not indexed: a gap, nothing is added.
        ix.note(Some(3), 20, 30);
        ix.reached_end(30).unwrap();
        assert!(!ix.complete(), "line 10..20 was never noted");
        ix.note(Some(2), 10, 20);
        ix.note(Some(3), 20, 30);
        ix.reached_end(30).unwrap();
        assert_eq!(
            (ix.get(1), ix.get(2), ix.get(3)),
            (Some(0), Some(10), Some(20))
        );
    }

    #[test]
    fn two_lines_with_one_hash_are_named_by_their_offsets() {
        let mut ix = IdIndex::default();
        ix.note(Some(7), 0, 5);
        ix.note(Some(8), 5, 9);
        ix.note(Some(7), 9, 14);
        assert_eq!(
            ix.reached_end(14),
            Err(Twice {
                first: 0,
                second: 9
            })
        );
        assert!(!ix.complete());
    }
}
