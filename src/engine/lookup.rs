//! The reads of passes B and C: everything, or lookups of the documents to decide by id, content
//! signature and URL spelling, split to the store's limit.

use tracing::debug;

use super::group::Groups;
use super::open::{Keep, Open};
use super::url_key::spellings;
use super::{Dimension, Filter, Rec, Round, Scope};
use crate::store::Store;

/// The most bytes of values one lookup read carries.
const LOOKUP_BYTES: usize = 1 << 20;

impl<S: Store> Round<'_, S> {
    /// The reads that passes B and C make: the user's filter alone (everything), or that filter
    /// with lookups of the documents to decide by id, content signature and URL, split to the
    /// store's limit. Lookups are used when they are likely cheaper than reading everything.
    pub(super) fn lookups(
        &self,
        recs: &[Rec],
        groups: &[Option<Groups>],
        open: &Open,
        keep: Keep,
        needed: usize,
    ) -> Vec<Filter> {
        let everything = vec![self.cfg.filter.clone()];
        // Under host scope content keys are hashes of host and signature: no stored value to look up.
        let max = self.store.max_lookup_values();
        if max == 0
            || open.all
            || keep.everything
            || self.cfg.scope == Scope::Host
            || needed * 4 > recs.len()
        {
            return everything;
        }
        let f = &self.cfg.fields;
        let mut lookups: Vec<(String, Vec<String>)> = Vec::new();
        let ids = keep.ids.into_iter().filter(|(i, _)| open.docs[*i as usize]);
        lookups.push((f.id.clone(), ids.map(|(_, id)| id.into()).collect()));
        for d in Dimension::ALL {
            let (Some(g), Some(field)) = (&groups[d.index()], f.signature(d)) else {
                continue;
            };
            let bit = 1u8 << d.index();
            let values = recs
                .iter()
                .enumerate()
                .filter(|&(i, r)| {
                    open.docs[i] && r.mask & bit != 0 && open.decides(self, d, g.group_of[i], r)
                })
                .map(|(_, r)| (r.keys[d.index()] as i64).to_string())
                .collect();
            lookups.push((field.to_owned(), values));
        }
        let mut urls = Vec::new();
        for (i, raw) in keep.urls {
            if open.docs[i as usize] {
                spellings(&raw, &mut urls);
            }
        }
        lookups.push((f.url.clone(), urls));

        let values: usize = lookups.iter().map(|(_, v)| v.len()).sum();
        if values > Keep::CAP {
            // Hundreds of lookup reads would cost more than one read of everything.
            return everything;
        }
        let reads = self.lookup_reads(lookups, max);
        debug!(reads = reads.len(), "documents to decide are looked up");
        reads
    }

    /// The reads that look up `lookups` (field and values): each read ORs the lookups of several
    /// fields, so that a document found by several keys is handed out once, with at most `max`
    /// values and about a megabyte per read (Solr takes forms of up to 2 MB).
    pub(super) fn lookup_reads(
        &self,
        lookups: Vec<(String, Vec<String>)>,
        max: usize,
    ) -> Vec<Filter> {
        let mut reads = Vec::new();
        let mut chunk: Vec<Filter> = Vec::new();
        let (mut size, mut bytes) = (0, 0);
        for (field, mut values) in lookups {
            values.sort_unstable();
            values.dedup();
            let mut part: Vec<String> = Vec::new();
            for v in values {
                if size > 0 && (size == max || bytes + v.len() > LOOKUP_BYTES) {
                    if !part.is_empty() {
                        chunk.push(Filter::any_of(field.clone(), std::mem::take(&mut part)));
                    }
                    let read = Filter::Or(std::mem::take(&mut chunk));
                    reads.push(self.cfg.filter.clone().and(read));
                    (size, bytes) = (0, 0);
                }
                size += 1;
                bytes += v.len() + 1;
                part.push(v);
            }
            if !part.is_empty() {
                chunk.push(Filter::any_of(field.clone(), part));
            }
        }
        if !chunk.is_empty() {
            reads.push(self.cfg.filter.clone().and(Filter::Or(chunk)));
        }
        reads
    }
}
