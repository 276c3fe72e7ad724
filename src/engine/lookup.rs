//! The reads of passes B and C: everything, or lookups of the documents to decide by id, content
//! signature and URL spelling, split to the store's limit.
//!
//! A lookup read ORs `{!terms}` sets of several fields, and Solr hands out every document that holds
//! one of the read's values once per read. A document holds values in several fields (its id, its
//! content signatures, its URL's spellings), so when the values fill more than one read the split
//! decides how often a document comes back: filled field after field, a document decided in a large
//! change came back about once per read that held one of its values (twice per pass at 100,000 pages,
//! see BENCHMARKS.md). So the values are packed by document: the values of one document, and of the
//! documents linked to it by a value they both contribute (the members of one group), form a unit
//! that goes whole into one read whenever it fits into one. Which reads hold a value never changes
//! what is found, only how often a document is handed out.

use std::collections::HashMap;

use tracing::debug;

use super::group::Groups;
use super::open::{Keep, Kind, Open};
use super::url_key::spellings;
use super::{Dimension, Filter, Keys, Recs, Round, Scope};
use crate::store::Store;

/// The most bytes of values one lookup read carries.
const LOOKUP_BYTES: usize = 1 << 20;

/// When the store serves a read of everything without Solr ([`Store::serves_locally`]), the
/// documents to decide are looked up in Solr only while they are at most this many, or at most
/// [`LOOKUPS_PER_CHANGE`] per changed document (dirty record, or document deleted since the copy:
/// [`Store::deleted_since`]); past that, passes B and C read the
/// store's own copy (the near step past this many alone), so that Solr's part of a change does not
/// grow with the size of the groups it touches (issue 46). A change in small groups is looked up as before (a
/// lookup of a few documents costs less than a pass over a large copy); the copy's passes cost the
/// worker time in proportion to the index, not Solr's, as pass A's one pass over it does on every
/// run (at 100,000 pages about a second each; BENCHMARKS.md, "Big groups and the in-place
/// profile").
pub(super) const LOCAL_ABOVE: usize = 64;

/// See [`LOCAL_ABOVE`].
pub(super) const LOOKUPS_PER_CHANGE: usize = 2;

impl<S: Store> Round<'_, S> {
    /// The reads that passes B and C make: the user's filter alone (everything), or that filter
    /// with lookups of the documents to decide by id, content signature and URL, split to the
    /// store's limit with each document's values in one read where they fit (see the module doc).
    /// Lookups are used when they are likely cheaper than reading everything.
    pub(super) fn lookups(
        &self,
        recs: &Recs,
        keys: &Keys,
        groups: &[Option<Groups>],
        open: &Open,
        keep: Keep,
        needed: usize,
    ) -> Vec<Filter> {
        let everything = vec![self.plan.cfg.filter.clone()];
        // Under host scope content keys are hashes of host and signature: no stored value to look up.
        let max = self.store.max_lookup_values();
        if max == 0
            || open.all
            || keep.everything
            || self.plan.cfg.scope == Scope::Host
            || needed * 4 > recs.len()
        {
            return everything;
        }
        // The dirty records pass A noted and the documents deleted since the store's copy: the
        // change.
        let changes = keep
            .dirty_noted()
            .saturating_add(usize::try_from(self.store.deleted_since()).unwrap_or(usize::MAX));
        let bound = LOCAL_ABOVE.max(LOOKUPS_PER_CHANGE.saturating_mul(changes));
        if needed > bound
            && self.store.serves_locally(&self.plan.rank_write_query())
            && self.store.serves_locally(&self.plan.rank_query())
            && self.store.serves_locally(&self.plan.write_query())
        {
            debug!(
                documents = needed,
                "documents to decide are read from the store's copy, not looked up"
            );
            return everything;
        }
        let f = &self.plan.cfg.fields;
        // Field 0 is the id, 1 the URL, then the signature field of each dimension looked up by one.
        let mut fields = vec![f.id.clone(), f.url.clone()];
        let mut by_signature: Vec<(Dimension, &Groups)> = Vec::new();
        for d in Dimension::ALL {
            if let (Some(g), Some(field)) = (&groups[d.index()], f.signature(d)) {
                by_signature.push((d, g));
                fields.push(field.to_owned());
            }
        }
        // What pass A kept (in memory, or spilled), of the documents to decide only.
        let mut ids: HashMap<u32, Box<str>> = HashMap::new();
        let mut urls: HashMap<u32, Vec<Box<str>>> = HashMap::new();
        let read = keep.each(|kind, i, value| {
            if open.docs[i as usize] {
                match kind {
                    Kind::Id => {
                        ids.insert(i, value.into());
                    }
                    Kind::Url => urls.entry(i).or_default().push(value.into()),
                }
            }
        });
        if read.is_none() {
            return everything;
        }
        let mut units = Units::default();
        let mut spelled = Vec::new();
        for (i, r) in recs.iter().enumerate() {
            if !open.docs[i] {
                continue;
            }
            let mut doc = Vec::new();
            if let Some(id) = ids.remove(&(i as u32)) {
                doc.push((0, id.into_string()));
            }
            for raw in urls.remove(&(i as u32)).unwrap_or_default() {
                spellings(&raw, &mut spelled);
                doc.extend(spelled.drain(..).map(|u| (1, u)));
            }
            for (k, &(d, g)) in by_signature.iter().enumerate() {
                let bit = 1u8 << d.index();
                if r.mask & bit != 0 && open.decides(&self.plan, d, g.group_of(i), &r) {
                    let Ok(key) = keys.get(d, i) else {
                        // The spilled keys cannot be read back: reading everything needs none.
                        return everything;
                    };
                    doc.push((k as u8 + 2, (key as i64).to_string()));
                }
            }
            units.document(doc);
        }
        if units.values.len() > Keep::CAP {
            // Hundreds of lookup reads would cost more than one read of everything.
            return everything;
        }
        let reads = self.reads_of(&fields, pack(units.units(), max, LOOKUP_BYTES));
        debug!(reads = reads.len(), "documents to decide are looked up");
        reads
    }

    /// The reads that look up `lookups` (field and values), at most `max` values and about a
    /// megabyte per read (Solr takes forms of up to 2 MB); each read ORs the lookups of several
    /// fields, so that a document found by several keys in one read is handed out once.
    pub(super) fn lookup_reads(
        &self,
        lookups: Vec<(String, Vec<String>)>,
        max: usize,
    ) -> Vec<Filter> {
        let mut fields = Vec::new();
        let mut units = Vec::new();
        for (k, (field, mut values)) in lookups.into_iter().enumerate() {
            values.sort_unstable();
            values.dedup();
            fields.push(field);
            units.extend(values.into_iter().map(|v| vec![(k as u8, v)]));
        }
        self.reads_of(&fields, pack(units, max, LOOKUP_BYTES))
    }

    /// The user's filter with each read's values, ORed per field.
    fn reads_of(&self, fields: &[String], reads: Vec<Vec<(u8, String)>>) -> Vec<Filter> {
        reads
            .into_iter()
            .map(|read| {
                let mut per_field: Vec<Vec<String>> = vec![Vec::new(); fields.len()];
                for (k, v) in read {
                    per_field[k as usize].push(v);
                }
                let any = per_field
                    .into_iter()
                    .zip(fields)
                    .filter(|(values, _)| !values.is_empty())
                    .map(|(values, field)| Filter::any_of(field.clone(), values))
                    .collect();
                self.plan.cfg.filter.clone().and(Filter::Or(any))
            })
            .collect()
    }
}

/// The lookup values of the documents to decide, each value once (a field index and the value),
/// joined into units: the values one document contributes, and transitively those of the
/// documents that contribute one of them too.
#[derive(Default)]
struct Units {
    index: HashMap<(u8, String), u32>,
    values: Vec<(u8, String)>,
    /// Union-find over the values.
    parent: Vec<u32>,
}

impl Units {
    /// Adds one document's values and joins them into one unit.
    fn document(&mut self, values: Vec<(u8, String)>) {
        let mut first = None;
        for v in values {
            let next = self.values.len() as u32;
            let node = *self.index.entry(v.clone()).or_insert_with(|| {
                self.values.push(v);
                self.parent.push(next);
                next
            });
            match first {
                None => first = Some(node),
                Some(f) => self.join(f, node),
            }
        }
    }

    fn root(&mut self, mut n: u32) -> u32 {
        while self.parent[n as usize] != n {
            let up = self.parent[self.parent[n as usize] as usize];
            self.parent[n as usize] = up;
            n = up;
        }
        n
    }

    fn join(&mut self, a: u32, b: u32) {
        let (a, b) = (self.root(a), self.root(b));
        // The smaller index is the root: units come out in the order of their first value.
        if a < b {
            self.parent[b as usize] = a;
        } else if b < a {
            self.parent[a as usize] = b;
        }
    }

    /// The units, in the order of their first value, each in the order its values were added (so
    /// a unit split over reads keeps each document's values together as far as it can).
    fn units(mut self) -> Vec<Vec<(u8, String)>> {
        let mut slot: Vec<u32> = vec![u32::MAX; self.values.len()];
        let mut units: Vec<Vec<(u8, String)>> = Vec::new();
        let roots: Vec<u32> = (0..self.values.len() as u32)
            .map(|n| self.root(n))
            .collect();
        for (value, root) in std::mem::take(&mut self.values).into_iter().zip(roots) {
            if slot[root as usize] == u32::MAX {
                slot[root as usize] = units.len() as u32;
                units.push(Vec::new());
            }
            units[slot[root as usize] as usize].push(value);
        }
        units
    }
}

/// Packs units of values into reads of at most `max` values and `max_bytes` bytes (a value counts
/// its length and a separator): a unit that fits into one read goes whole into one, starting a new
/// read when the current one has no room for it; a larger unit fills reads in order.
fn pack(units: Vec<Vec<(u8, String)>>, max: usize, max_bytes: usize) -> Vec<Vec<(u8, String)>> {
    let max = max.max(1);
    let mut reads = Vec::new();
    let mut read: Vec<(u8, String)> = Vec::new();
    let mut bytes = 0;
    for unit in units {
        let unit_bytes: usize = unit.iter().map(|(_, v)| v.len() + 1).sum();
        let fits_alone = unit.len() <= max && unit_bytes <= max_bytes;
        if !read.is_empty()
            && fits_alone
            && (read.len() + unit.len() > max || bytes + unit_bytes > max_bytes)
        {
            reads.push(std::mem::take(&mut read));
            bytes = 0;
        }
        for v in unit {
            if !read.is_empty() && (read.len() == max || bytes + v.1.len() > max_bytes) {
                reads.push(std::mem::take(&mut read));
                bytes = 0;
            }
            bytes += v.1.len() + 1;
            read.push(v);
        }
    }
    if !read.is_empty() {
        reads.push(read);
    }
    reads
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(items: &[(u8, &str)]) -> Vec<(u8, String)> {
        items.iter().map(|&(k, v)| (k, v.to_owned())).collect()
    }

    #[test]
    fn each_document_s_values_go_into_one_read() {
        // Three documents with an id (field 0) and two signatures (fields 2, 3): filled field after
        // field into reads of four, `a` would be in the first read and its signatures in the second.
        let mut units = Units::default();
        units.document(vals(&[(0, "a"), (2, "1"), (3, "2")]));
        units.document(vals(&[(0, "b"), (2, "3"), (3, "4")]));
        units.document(vals(&[(0, "c"), (2, "5"), (3, "6")]));
        assert_eq!(
            pack(units.units(), 4, LOOKUP_BYTES),
            [
                vals(&[(0, "a"), (2, "1"), (3, "2")]),
                vals(&[(0, "b"), (2, "3"), (3, "4")]),
                vals(&[(0, "c"), (2, "5"), (3, "6")]),
            ]
        );
    }

    #[test]
    fn documents_sharing_a_value_form_one_unit_and_each_value_is_kept_once() {
        // `c` shares `k` with `a` and `t` with `b`: one unit of the three; `d` is one of its own.
        let mut units = Units::default();
        units.document(vals(&[(0, "a"), (2, "k")]));
        units.document(vals(&[(0, "b"), (3, "t")]));
        units.document(vals(&[(0, "d")]));
        units.document(vals(&[(0, "c"), (2, "k"), (3, "t")]));
        assert_eq!(
            units.units(),
            [
                vals(&[(0, "a"), (2, "k"), (0, "b"), (3, "t"), (0, "c")]),
                vals(&[(0, "d")]),
            ]
        );
    }

    #[test]
    fn a_unit_larger_than_a_read_fills_reads_in_order() {
        let units = vec![
            vals(&[(0, "x1")]),
            vals(&[(0, "y1"), (0, "y2"), (0, "y3"), (0, "y4"), (0, "y5")]),
            vals(&[(0, "z1")]),
        ];
        assert_eq!(
            pack(units, 3, LOOKUP_BYTES),
            [
                vals(&[(0, "x1"), (0, "y1"), (0, "y2")]),
                vals(&[(0, "y3"), (0, "y4"), (0, "y5")]),
                vals(&[(0, "z1")]),
            ]
        );
    }

    #[test]
    fn reads_keep_to_the_byte_limit() {
        // A value counts its length and a separator: 5 + 5 bytes fit into 10, 3 more do not.
        let units = vec![
            vals(&[(1, "aaaa")]),
            vals(&[(1, "bbbb")]),
            vals(&[(1, "cc")]),
        ];
        assert_eq!(
            pack(units, 100, 10),
            [vals(&[(1, "aaaa"), (1, "bbbb")]), vals(&[(1, "cc")])]
        );
    }
}
