//! Groups: connected components of documents that share a key.
//!
//! Input is a list of `(key, document)` pairs, any number per document. Sorting the pairs puts equal
//! keys side by side; a union-find joins each run. With one key per document (all six dimensions today)
//! this is plain grouping by key; with several (MinHash bands) it is the transitive closure.
//!
//! Memory: the pairs come in sorted (from a sort that spills past its share of the budget, or a
//! vector [`Groups::build`] sorts), and only the documents that share a key are held while a
//! dimension is built: about 24 bytes each, plus the edges between them. Kept, 4 bytes a
//! document, or 8 a member when fewer than half the documents are in a group.
//! Nothing depends on document size.

/// Group membership of every document in one dimension.
#[derive(Debug, Clone, Default)]
pub struct Groups {
    /// Which group each document is in.
    of: Of,
    /// Size of each group (always 2 or more).
    pub sizes: Vec<u32>,
}

/// The group of each document: listed for every document when most are in a group (4 bytes a
/// document), for the members alone when few are (8 bytes a member; a crawl's dimensions hold a
/// few per cent of its pages each).
#[derive(Debug, Clone)]
enum Of {
    /// `group[doc]`, [`Groups::ALONE`] for a document in no group.
    Every(Vec<u32>),
    /// The members in document order, and the group of each; `docs` documents in all.
    Members {
        docs: usize,
        doc: Vec<u32>,
        group: Vec<u32>,
    },
}

impl Default for Of {
    fn default() -> Self {
        Of::Every(Vec::new())
    }
}

impl Groups {
    /// Marks a document that shares its key with no other.
    pub const ALONE: u32 = u32::MAX;

    /// Builds the groups of `docs` documents from `(key, doc)` pairs; a document may have several
    /// keys (the near-duplicate dimension's combination keys will), which join their groups.
    /// Memory: the pairs, and about 24 bytes for each document that shares a key.
    pub fn build(docs: usize, mut pairs: Vec<(u64, u32)>) -> Groups {
        pairs.sort_unstable();
        let all = |add: &mut dyn FnMut((u64, u32))| {
            pairs.iter().for_each(|&p| add(p));
            Ok::<_, std::convert::Infallible>(())
        };
        match Groups::from_sorted(docs, all) {
            Ok(g) => g,
            Err(never) => match never {},
        }
    }

    /// [`Groups::build`] from pairs sorted by key, which `pairs` hands to the function it is given
    /// in order (merged from a sort that spilled, say): only the documents that share a key are
    /// held, about 24 bytes each while the groups are built.
    pub fn from_sorted<E>(
        docs: usize,
        pairs: impl FnOnce(&mut dyn FnMut((u64, u32))) -> Result<(), E>,
    ) -> Result<Groups, E> {
        // Each document of a shared key joined to the first of that key. Two documents that share
        // many keys (near-duplicates share most of theirs) give one edge many times: the edges are
        // sorted and deduplicated whenever they doubled, so they stay about as many as the pairs
        // of documents that share a key.
        const COMPACT: usize = 1 << 20;
        let mut edges: Vec<(u32, u32)> = Vec::new();
        let mut compact_at = COMPACT;
        let mut run: Option<(u64, u32)> = None;
        pairs(&mut |(key, doc)| match run {
            Some((k, first)) if k == key => {
                if doc != first {
                    edges.push((first, doc));
                    if edges.len() >= compact_at {
                        edges.sort_unstable();
                        edges.dedup();
                        compact_at = (2 * edges.len()).max(COMPACT);
                    }
                }
            }
            _ => run = Some((key, doc)),
        })?;
        edges.sort_unstable();
        edges.dedup();
        edges.shrink_to_fit();
        // The documents that share a key, numbered densely for the union-find.
        let mut shared: Vec<u32> = edges.iter().flat_map(|&(a, b)| [a, b]).collect();
        shared.sort_unstable();
        shared.dedup();
        shared.shrink_to_fit();
        let dense = |d: u32| shared.binary_search(&d).expect("a shared document") as u32;
        let mut parent: Vec<u32> = (0..shared.len() as u32).collect();
        for &(a, b) in &edges {
            union(&mut parent, dense(a), dense(b));
        }
        drop(edges);
        // Groups numbered in the order of their first member.
        let mut root_group: Vec<u32> = vec![Groups::ALONE; shared.len()];
        let mut sizes = Vec::new();
        let mut members = Vec::with_capacity(shared.len());
        for (k, &d) in shared.iter().enumerate() {
            let r = find(&mut parent, k as u32) as usize;
            if root_group[r] == Groups::ALONE {
                root_group[r] = sizes.len() as u32;
                sizes.push(0);
            }
            let g = root_group[r];
            members.push((d, g));
            sizes[g as usize] += 1;
        }
        Ok(Groups::from_members(docs, members.into_iter(), sizes))
    }

    /// [`Groups::from_sorted`] of the merged runs of a sort that spilled.
    pub(crate) fn from_runs(
        docs: usize,
        runs: &crate::spill::Runs<u32>,
    ) -> std::io::Result<Groups> {
        Groups::from_sorted(docs, |add| {
            runs.merge(|p| {
                add(p);
                Ok(())
            })
        })
    }

    /// The groups of `docs` documents from the group of each member (in document order) and the
    /// size of each group.
    pub fn from_members(
        docs: usize,
        members: impl Iterator<Item = (u32, u32)>,
        sizes: Vec<u32>,
    ) -> Groups {
        let count: usize = sizes.iter().map(|&s| s as usize).sum();
        let of = if count * 2 > docs {
            let mut every = vec![Groups::ALONE; docs];
            for (d, g) in members {
                every[d as usize] = g;
            }
            Of::Every(every)
        } else {
            let (mut doc, mut group) = (Vec::with_capacity(count), Vec::with_capacity(count));
            for (d, g) in members {
                debug_assert!(
                    doc.last().is_none_or(|&l| l < d),
                    "members in document order"
                );
                doc.push(d);
                group.push(g);
            }
            Of::Members { docs, doc, group }
        };
        Groups { of, sizes }
    }

    /// The bytes it holds.
    pub fn held_bytes(&self) -> u64 {
        let of = match &self.of {
            Of::Every(v) => 4 * v.len(),
            Of::Members { doc, .. } => 8 * doc.len(),
        };
        (of + 4 * self.sizes.len()) as u64
    }

    /// How many documents it covers (members or not).
    pub fn docs(&self) -> usize {
        match &self.of {
            Of::Every(v) => v.len(),
            Of::Members { docs, .. } => *docs,
        }
    }

    /// The group of document `d`, or [`Groups::ALONE`].
    pub fn group_of(&self, d: usize) -> u32 {
        match &self.of {
            Of::Every(v) => v[d],
            Of::Members { doc, group, .. } => doc
                .binary_search(&(d as u32))
                .map_or(Groups::ALONE, |i| group[i]),
        }
    }

    /// The group of every document, in document order ([`Groups::ALONE`] for those in none).
    pub fn each(&self) -> impl Iterator<Item = u32> + '_ {
        let n = self.docs();
        let mut next = 0usize;
        (0..n).map(move |d| match &self.of {
            Of::Every(v) => v[d],
            Of::Members { doc, group, .. } => {
                if doc.get(next) == Some(&(d as u32)) {
                    next += 1;
                    group[next - 1]
                } else {
                    Groups::ALONE
                }
            }
        })
    }

    /// The members (document, group), in document order.
    pub fn members(&self) -> Box<dyn Iterator<Item = (usize, u32)> + '_> {
        match &self.of {
            Of::Every(v) => Box::new(
                v.iter()
                    .enumerate()
                    .filter(|(_, &g)| g != Groups::ALONE)
                    .map(|(d, &g)| (d, g)),
            ),
            Of::Members { doc, group, .. } => {
                Box::new(doc.iter().zip(group).map(|(&d, &g)| (d as usize, g)))
            }
        }
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
        assert_eq!(g.group_of(0), g.group_of(2));
        assert_eq!(g.group_of(1), Groups::ALONE);
        assert_eq!(g.group_of(3), Groups::ALONE);
        assert_eq!(g.doubles(), 2);
    }

    #[test]
    fn few_members_and_many_answer_alike() {
        // 3 of 10 documents in a group: listed as members; 8 of 10: listed for every document.
        for (docs, pairs) in [
            (10, vec![(5, 1), (5, 7), (5, 9)]),
            (
                10,
                vec![
                    (1, 0),
                    (1, 1),
                    (2, 2),
                    (2, 3),
                    (2, 4),
                    (3, 6),
                    (3, 8),
                    (3, 9),
                ],
            ),
        ] {
            let g = Groups::build(docs, pairs.clone());
            let expect: Vec<u32> = (0..docs)
                .map(|d| {
                    let key = pairs.iter().find(|p| p.1 as usize == d).map(|p| p.0);
                    key.map_or(Groups::ALONE, |k| {
                        // Groups are numbered by their first member.
                        let firsts: Vec<u64> = pairs.iter().fold(Vec::new(), |mut v, p| {
                            if !v.contains(&p.0) {
                                v.push(p.0);
                            }
                            v
                        });
                        firsts.iter().position(|&f| f == k).unwrap() as u32
                    })
                })
                .collect();
            let got: Vec<u32> = (0..docs).map(|d| g.group_of(d)).collect();
            assert_eq!(got, expect);
            assert_eq!(g.each().collect::<Vec<_>>(), expect);
            let members: Vec<(usize, u32)> = g.members().collect();
            let listed: Vec<(usize, u32)> = expect
                .iter()
                .enumerate()
                .filter(|(_, &e)| e != Groups::ALONE)
                .map(|(d, &e)| (d, e))
                .collect();
            assert_eq!(members, listed);
            assert_eq!(g.docs(), docs);
        }
    }

    #[test]
    fn several_keys_per_document_join_transitively() {
        // 0-1 share key 1, 1-2 share key 2, 3-4 share key 3: two components.
        let g = Groups::build(5, vec![(1, 0), (1, 1), (2, 1), (2, 2), (3, 3), (3, 4)]);
        assert_eq!(g.count(), 2);
        assert_eq!(g.group_of(0), g.group_of(2));
        assert_ne!(g.group_of(0), g.group_of(3));
    }
}
