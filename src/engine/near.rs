//! The near-duplicate dimension: which documents share a combination key, found with memory that
//! grows with the near-duplicates, not with the index.
//!
//! A document signed in this round has its keys in the [`Join`] (they reach the store only in pass C,
//! with its flags). The keys of documents signed in earlier runs stay in the store; the round asks
//! for them only when the near dimension has something to decide:
//!
//! 1. **Settled?** The stored group ids (one hash per record) form the groups the last runs left. When
//!    none is open by the rules every dimension shares (no dirty member, counts equal to the size,
//!    one true flag on the best member) and every member names that member as its group, nothing
//!    changed and the store is not asked at all.
//! 2. **In the store** (Solr, global scope): a facet with `mincount=2` on the key field gives the keys
//!    two stored documents share; `{!terms}` lookups of those keys and of this round's new keys give
//!    the documents that hold them, with their keys. Only near-duplicates (and the documents sharing
//!    a key with a new one) come back.
//! 3. **Streamed** (the file store, host scope, or more new keys than lookups would carry): every
//!    stored document's keys are read once and go into the [`Join`].
//!
//! The [`Join`] keeps `(key, record)` pairs in 64 partitions by the key's top bits: in memory up to
//! [`Join::MEMORY`] bytes, in anonymous temporary files beyond. Each partition is then sorted on its
//! own, and only the pairs of keys held by two documents or more are kept: the input of
//! [`Groups::build`], whose components are the clusters.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};

use serde_json::Value;
use tracing::debug;
use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::doc::get_str;
use super::group::Groups;
use super::open::Keep;
use super::pages::{Finder, Pages};
use super::url_key::host_name;
use super::{Dimension, EngineError, Filter, Mode, Plan, Rec, Report, Round, Scope, UrlKeys};
use crate::signature::chrome::HostSet;
use crate::store::{id_hash, Doc, FacetQuery, ReadQuery, Store, StoreError};

/// What the stored version of a document's near values says when its text has no word.
const NO_WORDS: &str = " no-words";
/// What the stored version says when its clusters were decided under `--scope host`.
const HOST: &str = " host";
/// What the stored version says before the host's chrome model version, when a chrome model left
/// shingles out.
const CHROME: &str = " chrome:";

/// The most new keys looked up in the store; beyond, the stored keys are streamed.
const LOOKUP_KEYS: usize = 100_000;

/// `(key, record)` pairs, partitioned by key, in bounded memory.
pub(super) struct Join {
    parts: Vec<Vec<(u64, u32)>>,
    files: Vec<Option<BufWriter<File>>>,
    in_memory: usize,
    pairs: u64,
}

impl Join {
    /// Bytes of pairs kept in memory before they go to the partition files.
    pub(super) const MEMORY: usize = 8 << 20;
    const PARTS: usize = 64;
    const PAIR: usize = 12;

    pub(super) fn new() -> Self {
        Join {
            parts: vec![Vec::new(); Self::PARTS],
            files: (0..Self::PARTS).map(|_| None).collect(),
            in_memory: 0,
            pairs: 0,
        }
    }

    fn part(key: u64) -> usize {
        (key >> 58) as usize
    }

    /// How many pairs were added.
    pub(super) fn len(&self) -> u64 {
        self.pairs
    }

    pub(super) fn add(
        &mut self,
        rec: u32,
        keys: impl IntoIterator<Item = u64>,
    ) -> std::io::Result<()> {
        for k in keys {
            self.parts[Self::part(k)].push((k, rec));
            self.in_memory += Self::PAIR;
            self.pairs += 1;
        }
        if self.in_memory > Self::MEMORY {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> std::io::Result<()> {
        for (part, file) in self.parts.iter_mut().zip(&mut self.files) {
            if part.is_empty() {
                continue;
            }
            if file.is_none() {
                *file = Some(BufWriter::with_capacity(1 << 16, tempfile::tempfile()?));
            }
            let w = file.as_mut().expect("created above");
            for &(k, r) in part.iter() {
                w.write_all(&k.to_le_bytes())?;
                w.write_all(&r.to_le_bytes())?;
            }
            part.clear();
            part.shrink_to_fit();
        }
        self.in_memory = 0;
        Ok(())
    }

    /// Calls `f` with every partition in turn (all its pairs, unsorted), loading one at a time. The
    /// partitions stay as they were, for a later pass.
    fn each_part(
        &mut self,
        mut f: impl FnMut(&mut Vec<(u64, u32)>) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        use std::io::{Seek, SeekFrom};
        for i in 0..Self::PARTS {
            let in_memory = std::mem::take(&mut self.parts[i]);
            let Some(w) = self.files[i].take() else {
                let mut pairs = in_memory;
                f(&mut pairs)?;
                self.parts[i] = pairs;
                continue;
            };
            let mut file = w.into_inner().map_err(|e| e.into_error())?;
            file.rewind()?;
            let mut r = BufReader::with_capacity(1 << 16, file);
            let mut pairs = Vec::new();
            let mut buf = [0u8; Self::PAIR];
            loop {
                match r.read_exact(&mut buf) {
                    Ok(()) => pairs.push((
                        u64::from_le_bytes(buf[..8].try_into().expect("8 bytes")),
                        u32::from_le_bytes(buf[8..].try_into().expect("4 bytes")),
                    )),
                    Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
                    Err(e) => return Err(e),
                }
            }
            // Later spills append where the file ends.
            let mut file = r.into_inner();
            file.seek(SeekFrom::End(0))?;
            self.files[i] = Some(BufWriter::with_capacity(1 << 16, file));
            pairs.extend_from_slice(&in_memory);
            f(&mut pairs)?;
            self.parts[i] = in_memory;
        }
        Ok(())
    }

    /// The distinct keys, or `None` when there are more than `limit`.
    fn distinct_keys(&mut self, limit: usize) -> std::io::Result<Option<Vec<u64>>> {
        let mut out = Vec::new();
        let mut over = false;
        self.each_part(|pairs| {
            if over {
                return Ok(());
            }
            let mut keys: Vec<u64> = pairs.iter().map(|p| p.0).collect();
            keys.sort_unstable();
            keys.dedup();
            out.extend(keys);
            over = out.len() > limit;
            Ok(())
        })?;
        Ok((!over).then_some(out))
    }

    /// The pairs of keys that two records or more hold, ready for [`Groups::build`].
    pub(super) fn shared(mut self) -> std::io::Result<Vec<(u64, u32)>> {
        let mut out = Vec::new();
        self.each_part(|pairs| {
            pairs.sort_unstable();
            pairs.dedup();
            let mut i = 0;
            while i < pairs.len() {
                let k = pairs[i].0;
                let end = i + pairs[i..].iter().take_while(|p| p.0 == k).count();
                if end - i > 1 {
                    out.extend_from_slice(&pairs[i..end]);
                }
                i = end;
            }
            Ok(())
        })?;
        Ok(out)
    }
}

/// A combination key as the join sees it: under `--scope host`, mixed with the host, so that only
/// pages of one host meet.
pub(super) fn join_key(key: i64, host: Option<u64>) -> u64 {
    match host {
        Some(h) => xxh3_64_with_seed(&key.to_le_bytes(), h),
        None => key as u64,
    }
}

fn join_error(e: std::io::Error) -> EngineError {
    StoreError::io("cannot keep the near-duplicate keys", e).into()
}

/// A document's stored near version, as far as this run is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct StoredNear {
    /// The text had words (so the document has keys).
    pub(super) words: bool,
    /// Decided under this run's scope; if not, the values stand but the clusters are decided again.
    pub(super) same_scope: bool,
}

impl Plan<'_> {
    /// The chrome of the host of a document's URL (`doc` holds the URL field), when the run has a
    /// chrome model that knows the host.
    pub(super) fn near_chrome(&self, doc: &Doc) -> Option<&HostSet> {
        let set = self.cfg.chrome.as_deref()?;
        set.host(&host_name(get_str(doc, &self.cfg.fields.url))?)
    }

    /// The version a document's near values are stored under in this run: the definition and
    /// parameters, [`CHROME`] and the host's model version when its chrome was left out, ` host`
    /// under `--scope host` (the values do not depend on it, the clusters do), and [`NO_WORDS`] for
    /// a text without words.
    pub(super) fn near_version_for(&self, words: bool, chrome: Option<&HostSet>) -> String {
        let mut v = self.values_version(chrome);
        if self.cfg.scope == Scope::Host {
            v.push_str(HOST);
        }
        if !words {
            v.push_str(NO_WORDS);
        }
        v
    }

    /// The part of the version the values depend on.
    fn values_version(&self, chrome: Option<&HostSet>) -> String {
        let mut v = self.near_version.clone();
        if let Some(c) = chrome {
            v.push_str(CHROME);
            v.push_str(&c.version);
        }
        v
    }

    /// Whether a stored near version's values are this run's (for a document of a host with
    /// `chrome`): `None` when the document must be signed again.
    pub(super) fn near_stored(
        &self,
        stored: Option<&str>,
        chrome: Option<&HostSet>,
    ) -> Option<StoredNear> {
        let stored = stored?;
        let (rest, words) = match stored.strip_suffix(NO_WORDS) {
            Some(rest) => (rest, false),
            None => (stored, true),
        };
        let (rest, host) = match rest.strip_suffix(HOST) {
            Some(rest) => (rest, true),
            None => (rest, false),
        };
        (rest == self.values_version(chrome)).then_some(StoredNear {
            words,
            same_scope: host == (self.cfg.scope == Scope::Host),
        })
    }

    /// The new version of values that stand but whose clusters were decided under another scope.
    pub(super) fn near_scope_update(
        &self,
        stored: StoredNear,
        chrome: Option<&HostSet>,
    ) -> Option<(String, Value)> {
        (!stored.same_scope).then(|| {
            (
                self.cfg.fields.near_version.clone(),
                Value::String(self.near_version_for(stored.words, chrome)),
            )
        })
    }

    /// The host hash a document's near keys are mixed with, under host scope.
    pub(super) fn near_host(&self, url: &UrlKeys) -> Option<u64> {
        if self.cfg.scope == Scope::Host {
            url.host_key
                .as_deref()
                .map(|h| xxh3_64_with_seed(h.as_bytes(), 0))
        } else {
            None
        }
    }

    /// The groups the stored group ids describe: what the last runs decided.
    fn stored_near_groups(&self, recs: &[Rec]) -> Groups {
        let members: Vec<u32> = (0..recs.len() as u32)
            .filter(|&i| recs[i as usize].near_group != 0)
            .collect();
        Groups::build_by_key(recs.len(), members, |i| recs[i as usize].near_group)
    }
}

impl<S: Store> Round<'_, S> {
    /// The near-duplicate clusters of this round's records.
    pub(super) async fn near_groups(
        &self,
        report: &mut Report,
        recs: &[Rec],
        by_hash: &[u32],
        mut join: Join,
        keep: &mut Keep,
    ) -> Result<Groups, EngineError> {
        let d = Dimension::Near;
        let bit = 1u8 << d.index();
        if !self.full && self.mode != Mode::Check {
            let stored = self.stored_near_groups(recs);
            let open = self.open_in(d, recs, &stored);
            if !open.0.iter().any(|o| *o) && !open.1.iter().any(|o| *o) {
                debug!("near: every stored cluster stands");
                return Ok(stored);
            }
        }
        // Documents with stored keys of this run's version, not signed again in this round.
        let stored_members = recs
            .iter()
            .filter(|r| r.mask & bit != 0 && !r.near_signed)
            .count();
        if stored_members > 0 {
            let f = &self.cfg.fields;
            let global = self.cfg.scope == Scope::Global;
            let max = self.store.max_lookup_values();
            let new_keys = if global && max > 0 {
                join.distinct_keys(LOOKUP_KEYS).map_err(join_error)?
            } else {
                None
            };
            let mut fields = vec![f.id.clone(), f.version.clone(), f.near_keys.clone()];
            if !global {
                fields.push(f.url.clone());
            }
            let reads = match new_keys {
                Some(new_keys) => {
                    let shared = self
                        .store
                        .facet(&FacetQuery {
                            field: f.near_keys.clone(),
                            filter: self.cfg.filter.clone(),
                            mincount: 2,
                            limit: None,
                        })
                        .await?;
                    let mut values: Vec<String> = shared
                        .iter()
                        .filter_map(|b| b.value.as_i64())
                        .chain(new_keys.into_iter().map(|k| k as i64))
                        .map(|k| k.to_string())
                        .collect();
                    values.sort_unstable();
                    values.dedup();
                    debug!(
                        shared = shared.len(),
                        lookups = values.len(),
                        "near: keys looked up"
                    );
                    values
                        .chunks(max)
                        .map(|c| {
                            self.cfg
                                .filter
                                .clone()
                                .and(Filter::any_of(f.near_keys.clone(), c.to_vec()))
                        })
                        .collect()
                }
                None => vec![self.cfg.filter.clone()],
            };
            let lookups = reads.len() != 1 || reads[0] != self.cfg.filter;
            let mut find = Finder::new(recs, by_hash);
            for filter in reads {
                let query = ReadQuery {
                    filter,
                    fields: fields.clone(),
                    rows: self.cfg.batch_size.max(1),
                };
                let mut pages = Pages::new(self.progress);
                while let Some(page) = pages.next(self.store, &query).await? {
                    if lookups {
                        report.work.lookup(page.via, page.docs.len());
                    } else {
                        report.work.light(page.via, page.docs.len());
                    }
                    for doc in &page.docs {
                        self.near_holder(doc, recs, &mut find, &mut join, keep, lookups)?;
                    }
                }
            }
        }
        debug!(pairs = join.len(), "near: joining");
        let shared = join.shared().map_err(join_error)?;
        Ok(Groups::build(recs.len(), shared))
    }

    /// Adds a stored document's keys to the join, unless this round signed it again.
    fn near_holder(
        &self,
        doc: &Doc,
        recs: &[Rec],
        find: &mut Finder<'_>,
        join: &mut Join,
        keep: &mut Keep,
        lookups: bool,
    ) -> Result<(), EngineError> {
        let f = &self.cfg.fields;
        let Some(id) = self.id_of(doc) else {
            return Ok(());
        };
        let Some(idx) = find.index(id_hash(&id)) else {
            // Added after pass A: the next run takes it in.
            return Ok(());
        };
        let rec = &recs[idx];
        if rec.near_signed
            || rec.mask & (1 << Dimension::Near.index()) == 0
            || !self.same_version(doc, rec)
        {
            return Ok(());
        }
        let host = if self.cfg.scope == Scope::Host {
            self.near_host(&UrlKeys::new(get_str(doc, &f.url)))
        } else {
            None
        };
        let keys: Vec<u64> = match doc.get(&f.near_keys) {
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(Value::as_i64)
                .map(|k| join_key(k, host))
                .collect(),
            Some(v) => v.as_i64().map(|k| join_key(k, host)).into_iter().collect(),
            None => Vec::new(),
        };
        join.add(idx as u32, keys).map_err(join_error)?;
        if lookups {
            // Passes B and C find it by id.
            keep.note_id(idx, &id);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys spread over every partition: `i` times an odd constant (a bijection of `u64`).
    fn spread(i: u64) -> u64 {
        i.wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }

    #[test]
    fn the_join_keeps_exactly_the_shared_keys_past_its_memory() {
        let mut join = Join::new();
        let records = 400_000u32;
        // Every record has two keys of its own; every 50,000th also holds key `spread(1 << 40)`,
        // and records 7 and 8 share `spread(1 << 41)`.
        let (shared_a, shared_b) = (spread(1 << 40), spread(1 << 41));
        for r in 0..records {
            let mut keys = vec![spread(2 * u64::from(r) + 1), spread(2 * u64::from(r) + 2)];
            if r % 50_000 == 0 {
                keys.push(shared_a);
            }
            if r == 7 || r == 8 {
                keys.push(shared_b);
            }
            join.add(r, keys).unwrap();
        }
        assert!(
            join.files.iter().any(Option::is_some),
            "past MEMORY: in files"
        );
        assert_eq!(join.len(), 2 * 400_000 + 8 + 2);
        // A first pass leaves the partitions as they were.
        let keys = join.distinct_keys(usize::MAX).unwrap().unwrap();
        assert_eq!(keys.len(), 2 * 400_000 + 2);
        assert!(join.distinct_keys(10).unwrap().is_none());
        let mut shared = join.shared().unwrap();
        shared.sort_unstable();
        let mut want: Vec<(u64, u32)> = (0..8).map(|i| (shared_a, i * 50_000)).collect();
        want.extend([(shared_b, 7), (shared_b, 8)]);
        want.sort_unstable();
        assert_eq!(shared, want);
    }
}
