//! Groups: connected components of documents that share a key.
//!
//! Input is a list of `(key, document)` pairs, any number per document. Sorting the pairs puts equal
//! keys side by side; a union-find joins each run. With one key per document (all six dimensions today)
//! this is plain grouping by key; with several (MinHash bands) it is the transitive closure.
//!
//! Memory: 12 bytes per pair plus 8 per document, all compact; nothing depends on document size.

/// Group membership of every document in one dimension.
#[derive(Debug, Clone, Default)]
pub struct Groups {
    /// `group_of[doc]`: index into `sizes`, or [`Groups::ALONE`] for a document in no group of two or
    /// more (alone, or excluded).
    pub group_of: Vec<u32>,
    /// Size of each group (always 2 or more).
    pub sizes: Vec<u32>,
}

impl Groups {
    /// Marks a document that shares its key with no other.
    pub const ALONE: u32 = u32::MAX;

    /// Builds the groups of `docs` documents from `(key, doc)` pairs; a document may have several
    /// keys (the near-duplicate dimension's combination keys will), which join their groups.
    pub fn build(docs: usize, mut pairs: Vec<(u64, u32)>) -> Groups {
        pairs.sort_unstable();
        Groups::build_sorted(docs, pairs.into_iter())
    }

    /// Builds the groups of `docs` documents from the documents that take part (`members`), one key
    /// each: 4 bytes a member besides the keys the caller already holds.
    pub fn build_by_key(docs: usize, mut members: Vec<u32>, key: impl Fn(u32) -> u64) -> Groups {
        members.sort_unstable_by_key(|&d| (key(d), d));
        Groups::build_sorted(docs, members.into_iter().map(|d| (key(d), d)))
    }

    /// `pairs` in key order.
    fn build_sorted(docs: usize, pairs: impl Iterator<Item = (u64, u32)>) -> Groups {
        let mut parent: Vec<u32> = (0..docs as u32).collect();
        let mut touched = vec![false; docs];
        // The current run of equal keys: its key and its first member, to which the others join.
        let mut run: Option<(u64, u32)> = None;
        for (k, d) in pairs {
            match run {
                Some((rk, first)) if rk == k => {
                    touched[first as usize] = true;
                    touched[d as usize] = true;
                    union(&mut parent, first, d);
                }
                _ => run = Some((k, d)),
            }
        }
        let mut group_of = vec![Groups::ALONE; docs];
        let mut root_group: Vec<u32> = vec![Groups::ALONE; docs];
        let mut sizes = Vec::new();
        for d in 0..docs {
            if !touched[d] {
                continue;
            }
            let r = find(&mut parent, d as u32) as usize;
            if root_group[r] == Groups::ALONE {
                root_group[r] = sizes.len() as u32;
                sizes.push(0);
            }
            let g = root_group[r];
            group_of[d] = g;
            sizes[g as usize] += 1;
        }
        Groups { group_of, sizes }
    }

    /// Number of groups of two or more.
    pub fn count(&self) -> usize {
        self.sizes.len()
    }

    /// Number of documents that are doubles of another (every member but the representative).
    pub fn doubles(&self) -> u64 {
        self.sizes.iter().map(|&s| u64::from(s) - 1).sum()
    }
}

fn find(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        let p = parent[x as usize];
        parent[x as usize] = parent[p as usize];
        x = p;
    }
    x
}

fn union(parent: &mut [u32], a: u32, b: u32) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra != rb {
        let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
        parent[hi as usize] = lo;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_keys_form_groups_and_singletons_stay_alone() {
        let g = Groups::build(5, vec![(7, 0), (9, 1), (7, 2), (7, 4), (3, 3)]);
        assert_eq!(g.count(), 1);
        assert_eq!(g.sizes, vec![3]);
        assert_eq!(g.group_of[0], g.group_of[2]);
        assert_eq!(g.group_of[1], Groups::ALONE);
        assert_eq!(g.group_of[3], Groups::ALONE);
        assert_eq!(g.doubles(), 2);
    }

    #[test]
    fn several_keys_per_document_join_transitively() {
        // 0-1 share key 1, 1-2 share key 2, 3-4 share key 3: two components.
        let g = Groups::build(5, vec![(1, 0), (1, 1), (2, 1), (2, 2), (3, 3), (3, 4)]);
        assert_eq!(g.count(), 2);
        assert_eq!(g.group_of[0], g.group_of[2]);
        assert_ne!(g.group_of[0], g.group_of[3]);
    }
}
