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
//! 2. **Only the change** (Solr, global scope): the documents of the stored clusters that do not
//!    stand, the documents that hold a key of theirs or of this round's new keys, and the stored
//!    clusters of those are looked up (`{!terms}` on the key field and on the id), and their
//!    components computed from their keys; every other stored cluster stands. See [`Local`] for
//!    why that is exact and for the budget past which the round streams instead. Documents looked
//!    up grow with the change, never with the near-duplicates the index holds.
//! 3. **Streamed** (the file store, host scope, a change of more than a quarter of the records, or
//!    past the lookup budget): every stored document's keys are read once and go into the [`Join`].
//!
//! The [`Join`] keeps `(key, record)` pairs in 64 partitions by the key's top bits: in memory up to
//! a 32nd of the `--memory` budget ([`Join::SHARE`]; 8 MiB by default), in anonymous temporary files
//! ([`SpillArea`]) beyond. The pairs are read back as a stream and sorted in runs of a 32nd of
//! the budget, merged in levels ([`RunBuilder`]); [`Groups::from_sorted`] walks the merged stream
//! and keeps only the documents that share a key: the components are the clusters. Memory holds a
//! run and those documents, however many pairs there are.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, Write};

use fixedbitset::FixedBitSet;
use serde_json::Value;
use tracing::debug;
use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::doc::get_str;
use super::group::Groups;
use super::lookup::{LOCAL_ABOVE, LOOKUPS_PER_CHANGE};
use super::open::Keep;
use super::pages::{Finder, Pages};
use super::spill::{Fixed, RunBuilder, Runs, SortedPairs, SpillArea};
use super::url_key::host_name;
use super::{
    Dimension, EngineError, NearInput, Plan, Records, Recs, Report, Round, Scope, UrlKeys,
};
use crate::signature::chrome::HostSet;
use crate::store::{id_hash, Doc, ReadQuery, Store, StoreError};

/// What the stored version of a document's near values says when its text has no word.
const NO_WORDS: &str = " no-words";
/// After [`NO_WORDS`]: the text is blank (whitespace only), which the exact dimension leaves out.
/// Without it a settled run could not tell a blank text from one of short words without reading
/// it (their fuzzy profiles are both empty).
const BLANK: &str = " blank";
/// What the stored version says when its clusters were decided under `--scope host`.
const HOST: &str = " host";
/// What the stored version says before the host's chrome model version, when a chrome model left
/// shingles out.
const CHROME: &str = " chrome:";

/// The fewest new keys looked up in the store whatever the budget ([`Round::key_limit`]); beyond
/// the limit, the stored keys are streamed.
const LOOKUP_KEYS: usize = 100_000;

/// `(key, record)` pairs, partitioned by key, in bounded memory.
pub(super) struct Join {
    parts: Vec<Vec<(u64, u32)>>,
    files: Vec<Option<BufWriter<File>>>,
    in_memory: usize,
    pairs: u64,
    /// Bytes of pairs kept in memory before they go to the partition files.
    memory: usize,
    area: SpillArea,
}

impl Join {
    /// The part of the budget kept in memory: one 32nd.
    pub(super) const SHARE: u64 = 32;
    const PARTS: usize = 64;
    const PAIR: usize = <(u64, u32) as Fixed>::SIZE;

    pub(super) fn new(area: SpillArea) -> Self {
        Join {
            parts: vec![Vec::new(); Self::PARTS],
            files: (0..Self::PARTS).map(|_| None).collect(),
            in_memory: 0,
            pairs: 0,
            memory: area.share(Self::SHARE),
            area,
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
        if self.in_memory > self.memory {
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
                *file = Some(BufWriter::with_capacity(1 << 16, self.area.file()?));
            }
            self.area.wrote(part.len() * Self::PAIR);
            let w = file.as_mut().expect("created above");
            let mut bytes = Vec::with_capacity(Self::PAIR);
            for p in part.iter() {
                bytes.clear();
                p.put(&mut bytes);
                w.write_all(&bytes)?;
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
        use std::io::SeekFrom;
        for i in 0..Self::PARTS {
            let in_memory = std::mem::take(&mut self.parts[i]);
            let Some(w) = self.files[i].take() else {
                let mut pairs = in_memory;
                f(&mut pairs)?;
                self.parts[i] = pairs;
                continue;
            };
            let mut pairs = Vec::new();
            let mut file = Self::read_file(w, |p| {
                pairs.push(p);
                Ok(())
            })?;
            // Later spills append where the file ends.
            file.seek(SeekFrom::End(0))?;
            self.files[i] = Some(BufWriter::with_capacity(1 << 16, file));
            pairs.extend_from_slice(&in_memory);
            f(&mut pairs)?;
            self.parts[i] = in_memory;
        }
        Ok(())
    }

    /// Calls `f` with every pair a partition's file holds, from its start; gives the file back.
    fn read_file(
        w: BufWriter<File>,
        mut f: impl FnMut((u64, u32)) -> std::io::Result<()>,
    ) -> std::io::Result<File> {
        let mut file = w.into_inner().map_err(|e| e.into_error())?;
        file.rewind()?;
        let mut r = BufReader::with_capacity(1 << 16, file);
        let mut buf = [0u8; Self::PAIR];
        loop {
            match r.read_exact(&mut buf) {
                Ok(()) => f(<(u64, u32)>::take(&buf))?,
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
                Err(e) => return Err(e),
            }
        }
        Ok(r.into_inner())
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

    /// The clusters of `docs` records: the components of the records that share a key. The pairs
    /// are read back a partition at a time, as a stream, and sorted in runs of `share` bytes
    /// (spilled and merged past one run), so memory holds a run and the documents that share a key,
    /// however many pairs there are.
    pub(super) fn groups(mut self, docs: usize, share: usize) -> std::io::Result<Groups> {
        let mut runs = RunBuilder::new(&self.area, share);
        for i in 0..Self::PARTS {
            if let Some(w) = self.files[i].take() {
                Self::read_file(w, |p| runs.push(p))?;
            }
            for p in std::mem::take(&mut self.parts[i]) {
                runs.push(p)?;
            }
        }
        let runs = runs.finish()?;
        Groups::from_runs(docs, &runs)
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
    /// The text was blank (whitespace only); known only from versions that say so.
    pub(super) blank: bool,
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
    /// a text without words, followed by [`BLANK`] when the text is blank.
    pub(super) fn near_version_for(
        &self,
        words: bool,
        blank: bool,
        chrome: Option<&HostSet>,
    ) -> String {
        let mut v = self.values_version(chrome);
        if self.cfg.scope == Scope::Host {
            v.push_str(HOST);
        }
        if !words {
            v.push_str(NO_WORDS);
            if blank {
                v.push_str(BLANK);
            }
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
        let (stored, blank) = match stored.strip_suffix(BLANK) {
            Some(rest) => (rest, true),
            None => (stored, false),
        };
        let (rest, words) = match stored.strip_suffix(NO_WORDS) {
            Some(rest) => (rest, false),
            None => (stored, true),
        };
        let (rest, host) = match rest.strip_suffix(HOST) {
            Some(rest) => (rest, true),
            None => (rest, false),
        };
        (rest == self.values_version(chrome) && !(words && blank)).then_some(StoredNear {
            words,
            blank,
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
                Value::String(self.near_version_for(stored.words, stored.blank, chrome)),
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
    /// Sorted in runs of an eighth of the budget, spilled past one run.
    fn stored_near_groups(&self, recs: &Recs, area: &SpillArea) -> std::io::Result<Groups> {
        let pairs = recs
            .iter()
            .enumerate()
            .filter(|(_, r)| r.near_group != 0)
            .map(|(i, r)| (r.near_group, i as u32));
        let runs = Runs::sort(area, area.share(Recs::SHARE), pairs.map(Ok))?;
        Groups::from_runs(recs.len(), &runs)
    }
}

impl<S: Store> Round<'_, S> {
    /// The near-duplicate clusters of this round's records.
    pub(super) async fn near_groups(
        &self,
        report: &mut Report,
        input: NearInput<'_>,
    ) -> Result<Groups, EngineError> {
        let NearInput {
            records,
            mut join,
            keep,
        } = input;
        let Records { recs, by_hash } = records;
        let d = Dimension::Near;
        let bit = 1u8 << d.index();
        report
            .dimensions
            .entry(d.name().into())
            .or_default()
            .lookup_fallbacks
            .get_or_insert(0);
        // Documents with stored keys of this run's version, not signed again in this round.
        let stored_members = recs
            .iter()
            .filter(|r| r.mask & bit != 0 && !r.near_signed)
            .count();
        if stored_members > 0 && !self.plan.full {
            let stored = self
                .plan
                .stored_near_groups(recs, &self.spill)
                .map_err(join_error)?;
            let (_, seeds) = self.plan.open_in(d, recs, &stored);
            if seeds.is_clear() {
                debug!("near: every stored cluster stands");
                return Ok(stored);
            }
            match self
                .near_local(report, recs, by_hash, &mut join, keep, &stored, seeds)
                .await?
            {
                Local::Groups(g) => return Ok(g),
                Local::OverBudget => {
                    let r = report.dimensions.entry(d.name().into()).or_default();
                    *r.lookup_fallbacks.get_or_insert(0) += 1;
                }
                Local::NotHere => {}
            }
        }
        if stored_members > 0 {
            self.near_streamed(report, recs, by_hash, &mut join, keep)
                .await?;
        }
        debug!(pairs = join.len(), "near: joining");
        join.groups(recs.len(), self.spill.share(Join::SHARE))
            .map_err(join_error)
    }

    /// Reads every stored document's keys into the join: the path that is always right, for the
    /// file store, host scope, a large change, or past the lookup budget. A stored document that
    /// shares a key with a document signed in this round has its id kept (up to [`Keep::CAP`]
    /// of them, while the round's keys fit a 64th of the budget): it may leave the place it had
    /// (alone, as a run leaves a document alone, and so not kept by pass A), and passes B and C
    /// find it by id instead of reading everything again.
    async fn near_streamed(
        &self,
        report: &mut Report,
        recs: &Recs,
        by_hash: &SortedPairs,
        join: &mut Join,
        keep: &mut Keep,
    ) -> Result<(), EngineError> {
        let signed = if keep.everything {
            None
        } else {
            join.distinct_keys(self.key_limit())
                .map_err(join_error)?
                .map(SignedKeys::new)
        };
        let f = &self.plan.cfg.fields;
        let mut fields = vec![f.id.clone(), f.version.clone(), f.near_keys.clone()];
        if self.plan.cfg.scope != Scope::Global {
            fields.push(f.url.clone());
        }
        let query = ReadQuery {
            filter: self.plan.cfg.filter.clone(),
            fields,
            rows: self.plan.cfg.batch_size.max(1),
        };
        let mut find = Finder::new(recs, by_hash);
        let mut pages = Pages::new(self.progress);
        // Past as many as lookups carry, none more are kept: the documents pass B does not find
        // then make it read everything, as before.
        let mut noted = 0usize;
        while let Some(page) = pages.next(self.store, &query).await? {
            report.work.light(page.via, page.docs.len());
            for doc in &page.docs {
                let Some(idx) = self.near_holder(doc, recs, &mut find) else {
                    continue;
                };
                let host = if self.plan.cfg.scope == Scope::Host {
                    self.plan.near_host(&UrlKeys::new(get_str(doc, &f.url)))
                } else {
                    None
                };
                let keys = self.near_keys_of(doc, host);
                let shares = signed
                    .as_ref()
                    .is_some_and(|s| keys.iter().any(|&k| s.holds(k)));
                if shares && noted < Keep::CAP {
                    if let Some(id) = self.plan.id_of(doc) {
                        keep.note_id(idx, &id);
                        noted += 1;
                    }
                }
                join.add(idx as u32, keys).map_err(join_error)?;
            }
        }
        Ok(())
    }

    /// The most distinct keys of this round's signed documents held to look up or to test stored
    /// keys against: a 64th of the budget at 8 bytes a key, at least [`LOOKUP_KEYS`].
    fn key_limit(&self) -> usize {
        usize::try_from(self.plan.cfg.memory / 512)
            .unwrap_or(usize::MAX)
            .max(LOOKUP_KEYS)
    }

    /// The clusters when only what changed is looked up (see [`Local`]); `seeds` are the documents
    /// of the stored clusters that do not stand and the documents alone that do not.
    #[allow(clippy::too_many_arguments)]
    async fn near_local(
        &self,
        report: &mut Report,
        recs: &Recs,
        by_hash: &SortedPairs,
        join: &mut Join,
        keep: &mut Keep,
        stored: &Groups,
        seeds: FixedBitSet,
    ) -> Result<Local, EngineError> {
        let f = &self.plan.cfg.fields;
        let bit = 1u8 << Dimension::Near.index();
        let max = self.store.max_lookup_values();
        if self.plan.cfg.scope != Scope::Global || max == 0 || keep.everything {
            return Ok(Local::NotHere);
        }
        let n = recs.len();
        let members = Members::new(stored);
        let mut affected = seeds;
        // A stored cluster that holds a document taking no part any more is decided as a whole.
        for ((i, r), g) in recs.iter().enumerate().zip(stored.each()) {
            if r.mask & bit == 0 && g != Groups::ALONE && !affected[i] {
                for &m in members.of(g) {
                    affected.insert(m as usize);
                }
            }
        }
        let seeds = affected.count_ones(..);
        if seeds * 4 > n {
            // A first run over stored keys, or a large change: one read of every key costs less.
            debug!(seeds, "near: a large change; reading every stored key");
            return Ok(Local::NotHere);
        }
        // With every key served from the store's own copy (the change state), Solr is asked for
        // little: a change that reaches more documents reads them from the copy instead, so that
        // Solr's part does not grow with the clusters a change touches (issue 46).
        let local = self.store.serves_locally(&ReadQuery {
            filter: self.plan.cfg.filter.clone(),
            fields: vec![f.id.clone(), f.version.clone(), f.near_keys.clone()],
            rows: 1,
        });
        // Passes B and C may look up two documents per change; the near step, whose key lookups
        // reach near-duplicates and their clusters, as many, so that a page re-indexed into or
        // out of a small cluster is looked up instead of every stored key being read again. A
        // deleted page opens up to two seeds here, each looked up by id and again by its keys:
        // four lookups (six with passes B and C).
        let deleted = usize::try_from(self.store.deleted_since()).unwrap_or(usize::MAX);
        let dirty = keep.dirty_noted();
        let bound =
            LOCAL_ABOVE.max(LOOKUPS_PER_CHANGE.saturating_mul(deleted.saturating_add(dirty)));
        if local && seeds > bound {
            debug!(
                seeds,
                bound, "near: reading every key from the store's copy"
            );
            return Ok(Local::NotHere);
        }
        let budget = if local {
            // A deleted page's cluster members are looked up by id and again by their keys.
            LOCAL_ABOVE.max(
                LOOKUPS_PER_CHANGE.saturating_mul(deleted.saturating_mul(2).saturating_add(dirty)),
            )
        } else {
            LOOKUP_FLOOR.max((LOOKUP_PER_SEED * seeds).min(n / 8))
        };
        let rows = if local {
            (bound + 1).min(self.plan.cfg.batch_size.max(1))
        } else {
            self.plan.cfg.batch_size.max(1)
        };
        // What this round signed: its keys are in the join.
        let Some(mut frontier) = join.distinct_keys(self.key_limit()).map_err(join_error)? else {
            debug!("near: the round's keys are past a 64th of the budget; reading every key");
            return Ok(Local::NotHere);
        };
        let mut pairs: Vec<(u64, u32)> = Vec::new();
        join.each_part(|p| {
            pairs.extend_from_slice(p);
            Ok(())
        })
        .map_err(join_error)?;
        let mut have_keys = FixedBitSet::with_capacity(n);
        for &(_, r) in &pairs {
            have_keys.insert(r as usize);
        }
        // Pass A kept the ids of dirty documents and of every stored cluster's members
        // ([`Keep::id_of`]); `known` remembers which documents it kept one of.
        let mut known: HashMap<u32, bool> = HashMap::new();
        let mut noted: Vec<(usize, String)> = Vec::new();
        // Whose keys are looked up once known: the seeds. A stored cluster that stands is a whole
        // component of the last run's graph, so its members' keys meet only each other and the
        // changed documents' keys, which are looked up.
        let expand = affected.clone();
        let mut fetch: Vec<u32> = (0..n as u32)
            .filter(|&i| {
                let i = i as usize;
                affected[i] && recs.get(i).mask & bit != 0 && !have_keys[i]
            })
            .collect();
        let mut looked: HashSet<u64> = HashSet::new();
        let mut looked_up = 0usize;
        let fields = vec![f.id.clone(), f.version.clone(), f.near_keys.clone()];
        let mut find = Finder::new(recs, by_hash);
        let mut steps = 0;
        loop {
            frontier.retain(|k| looked.insert(*k));
            fetch.retain(|&i| !have_keys[i as usize]);
            if frontier.is_empty() && fetch.is_empty() {
                break;
            }
            steps += 1;
            let mut by_id = Vec::with_capacity(fetch.len());
            for i in fetch.drain(..) {
                let id = keep.id_of(i);
                known.insert(i, id.is_some());
                match id {
                    Some(id) => by_id.push(id.into_string()),
                    None => {
                        debug!("near: a stored cluster's member was not kept; reading every key");
                        return Ok(Local::NotHere);
                    }
                }
            }
            let by_key = frontier.drain(..).map(|k| (k as i64).to_string()).collect();
            let reads = self.lookup_reads(
                vec![(f.id.clone(), by_id), (f.near_keys.clone(), by_key)],
                max,
            );
            for filter in reads {
                let query = ReadQuery {
                    filter,
                    fields: fields.clone(),
                    rows,
                };
                let mut pages = Pages::new(self.progress);
                while let Some(page) = pages.next(self.store, &query).await? {
                    report.work.lookup(page.via, page.docs.len());
                    looked_up += page.docs.len();
                    for doc in &page.docs {
                        let Some(idx) = self.near_holder(doc, recs, &mut find) else {
                            continue;
                        };
                        if !have_keys[idx] {
                            have_keys.insert(idx);
                            let keys = self.near_keys_of(doc, None);
                            if expand[idx] {
                                frontier.extend_from_slice(&keys);
                            }
                            pairs.extend(keys.into_iter().map(|k| (k, idx as u32)));
                        }
                        if affected[idx] {
                            continue;
                        }
                        // Shares a key with a changed document: it and its stored cluster.
                        affected.insert(idx);
                        let kept = *known
                            .entry(idx as u32)
                            .or_insert_with(|| keep.id_of(idx as u32).is_some());
                        if !kept {
                            if let Some(id) = self.plan.id_of(doc) {
                                noted.push((idx, id.into_owned()));
                            }
                        }
                        let g = stored.group_of(idx);
                        if g != Groups::ALONE {
                            for &m in members.of(g) {
                                let m = m as usize;
                                if !affected[m] {
                                    affected.insert(m);
                                    if recs.get(m).mask & bit != 0 && !have_keys[m] {
                                        fetch.push(m as u32);
                                    }
                                }
                            }
                        }
                    }
                    if looked_up > budget {
                        debug!(looked_up, budget, "near: past the lookup budget");
                        // With the store's copy, reading it is the plan, not a fallback.
                        return Ok(if local {
                            Local::NotHere
                        } else {
                            Local::OverBudget
                        });
                    }
                }
            }
        }
        for (idx, id) in noted {
            // Passes B and C find it by id.
            keep.note_id(idx, &id);
        }
        let decided = affected.count_ones(..);
        debug!(
            seeds,
            decided, looked_up, steps, "near: the change's clusters looked up"
        );
        let local = Groups::build(n, pairs);
        Ok(Local::Groups(combine(stored, &affected, &local)))
    }

    /// The record of a stored document whose keys count: in the records, taking part, with the
    /// version pass A read, and not signed again in this round (its keys are in the join).
    fn near_holder(&self, doc: &Doc, recs: &Recs, find: &mut Finder<'_>) -> Option<usize> {
        let id = self.plan.id_of(doc)?;
        // `None`: added after pass A; the next run takes it in.
        let idx = find.index(id_hash(&id))?;
        let rec = recs.get(idx);
        (!rec.near_signed
            && rec.mask & (1 << Dimension::Near.index()) != 0
            && self.plan.same_version(doc, &rec))
        .then_some(idx)
    }

    /// A stored document's keys, as the join sees them.
    fn near_keys_of(&self, doc: &Doc, host: Option<u64>) -> Vec<u64> {
        match doc.get(&self.plan.cfg.fields.near_keys) {
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(Value::as_i64)
                .map(|k| join_key(k, host))
                .collect(),
            Some(v) => v.as_i64().map(|k| join_key(k, host)).into_iter().collect(),
            None => Vec::new(),
        }
    }
}

/// The keys of the documents signed in a round, to tell a stored document that shares one: a
/// bitmap of their low bits first (keys are hashes), then the sorted keys.
struct SignedKeys {
    bits: FixedBitSet,
    keys: Vec<u64>,
}

impl SignedKeys {
    const BITS: u32 = 22;

    fn new(mut keys: Vec<u64>) -> Self {
        keys.sort_unstable();
        keys.dedup();
        let mut bits = FixedBitSet::with_capacity(1 << Self::BITS);
        for &k in &keys {
            bits.insert(Self::slot(k));
        }
        SignedKeys { bits, keys }
    }

    fn slot(k: u64) -> usize {
        (k & ((1 << Self::BITS) - 1)) as usize
    }

    fn holds(&self, k: u64) -> bool {
        self.bits[Self::slot(k)] && self.keys.binary_search(&k).is_ok()
    }
}

/// What looking up only the change gave.
///
/// The stored clusters are the connected components of the "shares a key" graph as the last run
/// left it. Between runs the graph changes only at documents that are new, re-indexed (signed in
/// this round) or deleted, and each of those leaves its stored cluster open (a dirty member, counts
/// that are not the size, no true flag). So the round decides again only the *affected* documents:
///
/// 1. the seeds: every document of an open stored cluster and every document alone that does not
///    stand (these include everything this round signed);
/// 2. every stored document that holds a key of a seed (this round's keys of the signed ones,
///    the stored keys of the others), found by `{!terms}` on the key field, with its stored cluster
///    (its members by id);
/// 3. repeated for the keys of seeds found in step 2, until no new key comes up.
///
/// Their components are computed from their keys; every other stored cluster stands as stored.
/// A cluster that splits (its bridging member re-indexed with new text, or deleted) is open, so
/// all its remaining members are seeds and their keys, which link only within the old cluster,
/// decide the split. A stored cluster that stands links only within itself and to changed
/// documents, so its members' keys are read but not looked up.
///
/// Keys held by very many documents (boilerplate pages, texts of one word) could make the
/// lookups cost more than reading every key once: past a budget of
/// `max(LOOKUP_FLOOR, min(LOOKUP_PER_SEED × seeds, documents / 8))` documents looked up, the round
/// reads every stored key instead ([`Round::near_streamed`]), and the report counts it in
/// `dimensions.near.lookup_fallbacks`.
enum Local {
    /// The clusters of every record.
    Groups(Groups),
    /// Past the budget: every key is read instead.
    OverBudget,
    /// Not for this store, scope or change (the file store, host scope, more seeds than a quarter
    /// of the records, a member whose id pass A did not keep): every key is read.
    NotHere,
}

/// The fewest documents the near step may look up before it reads every key instead: a few
/// thousand lookups cost less than a streamed read of a large index's keys.
const LOOKUP_FLOOR: usize = 1_000;

/// Documents the near step may look up per seed: a changed page's matches, its old and new
/// clusters' members, each found by id and again by its keys.
const LOOKUP_PER_SEED: usize = 64;

/// The members of each stored group, in one list.
struct Members {
    order: Vec<u32>,
    start: Vec<usize>,
}

impl Members {
    fn new(g: &Groups) -> Self {
        let mut order: Vec<(u32, u32)> = g.members().map(|(i, gi)| (gi, i as u32)).collect();
        order.sort_unstable();
        let order: Vec<u32> = order.into_iter().map(|(_, i)| i).collect();
        let mut start = Vec::with_capacity(g.count() + 1);
        start.push(0);
        for &s in &g.sizes {
            start.push(start.last().copied().unwrap_or(0) + s as usize);
        }
        Members { order, start }
    }

    fn of(&self, g: u32) -> &[u32] {
        &self.order[self.start[g as usize]..self.start[g as usize + 1]]
    }
}

/// The stored groups of the records not affected, and the new groups of those affected (which
/// hold whole stored groups, never part of one).
fn combine(stored: &Groups, affected: &FixedBitSet, local: &Groups) -> Groups {
    let mut sizes: Vec<u32> = Vec::new();
    let mut members = Vec::new();
    let mut from_stored = vec![Groups::ALONE; stored.count()];
    let mut from_local = vec![Groups::ALONE; local.count()];
    let both = local.each().zip(stored.each());
    for (i, (in_local, in_stored)) in both.enumerate() {
        let (g, map) = if affected[i] {
            (in_local, &mut from_local)
        } else {
            (in_stored, &mut from_stored)
        };
        if g == Groups::ALONE {
            continue;
        }
        let slot = &mut map[g as usize];
        if *slot == Groups::ALONE {
            *slot = sizes.len() as u32;
            sizes.push(0);
        }
        members.push((i as u32, *slot));
        sizes[*slot as usize] += 1;
    }
    debug_assert!(sizes.iter().all(|&s| s >= 2));
    Groups::from_members(affected.len(), members.into_iter(), sizes)
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
        let area = SpillArea::new(None, 256 << 20);
        let mut join = Join::new(area.clone());
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
            "past its share: in files"
        );
        assert!(area.written() > 0, "the spilled bytes are counted");
        assert_eq!(join.len(), 2 * 400_000 + 8 + 2);
        // A first pass leaves the partitions as they were.
        let keys = join.distinct_keys(usize::MAX).unwrap().unwrap();
        assert_eq!(keys.len(), 2 * 400_000 + 2);
        assert!(join.distinct_keys(10).unwrap().is_none());
        // Sorted in runs of 1 MiB: the 800,010 pairs spill again and are merged.
        let groups = join.groups(400_000, 1 << 20).unwrap();
        assert_eq!(groups.count(), 2);
        let members: Vec<(usize, u32)> = groups.members().collect();
        let mut want: Vec<(usize, u32)> = (0..8).map(|i| (i * 50_000, 0)).collect();
        want.insert(1, (7, 1));
        want.insert(2, (8, 1));
        assert_eq!(members, want);
    }
}
