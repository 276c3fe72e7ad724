//! Pass A: stream the light fields of every document, sign the unsigned ones from their text, write
//! their signature updates, and build one fixed-size record per document.

use std::borrow::Cow;
use std::collections::HashMap;

use rayon::prelude::*;
use serde_json::Value;

use super::derived;
use super::doc::{get_bool, get_i64, get_str, has, key_hash};
use super::guard;
use super::near::{self, Join};
use super::open::{counted_slot, Keep};
use super::pages::Pages;
use super::pending::Pending;
use super::sign::{sign_one, NearState, Need, Signed};
use super::{
    Dimension, EngineError, Exclusion, Keys, Mode, Plan, RankPrefix, Rec, Recs, Report, Round,
    Scanned, Scope, Sigs, UrlKeys,
};
use crate::store::{id_hash, Doc, ReadQuery, Store, StoreError, Via};

/// The most pages pass A gathers for one real-time get (see [`Round::gather`]): a get for every
/// eighth page at most when pages need a few texts each. Pass A gathers the next pages while the
/// get of the ones before is answered, so it holds twice that at most: a few MB of light documents.
const HELD_PAGES: usize = 8;

/// A page pass A has read, with what each of its documents needs.
struct Held {
    page: crate::store::Page,
    /// Beside each document, what an earlier run derived from it (see [`derived`]), decoded.
    derived: Vec<Option<Derived>>,
    needs: Vec<Need>,
    /// Needs signing where the core does not store the text (`text_not_stored`).
    unsigned: Vec<bool>,
    /// Documents that need something read.
    needed: usize,
    /// Documents that need their text.
    texts_needed: usize,
}

/// The error of a change state whose derived parts cannot be used.
fn damaged(what: &str) -> StoreError {
    StoreError::io(
        "cannot read the change state",
        std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned()),
    )
}

/// A document's record, keys and exclusions as an earlier run derived them.
type Derived = (Rec, [u64; 6], [Option<Exclusion>; Dimension::COUNT]);

impl<S: Store> Round<'_, S> {
    /// What the documents of `page` need.
    fn held(&self, page: crate::store::Page) -> Result<Held, EngineError> {
        let served = &page.derived;
        let derived = (0..served.len())
            .map(|i| {
                served
                    .get(i)
                    .map(|s| {
                        derived::decode(s.derived)
                            .ok_or_else(|| damaged("a derived part is damaged"))
                    })
                    .transpose()
            })
            .collect::<Result<Vec<_>, _>>()?;
        // Each part must be the page's own: beside it, derived from its id.
        let misplaced = (!served.is_empty() && served.len() != page.docs.len())
            || derived.iter().enumerate().any(|(i, d)| {
                d.as_ref().is_some_and(|(rec, _, _)| {
                    served.get(i).map(|s| id_hash(s.id)) != Some(rec.id_hash)
                })
            });
        if misplaced {
            return Err(damaged("a derived part is not its document's").into());
        }
        let mut needs: Vec<Need> = page
            .docs
            .iter()
            .enumerate()
            .map(|(i, d)| match derived.get(i) {
                // Derived from as it is: it needed nothing then, under these settings.
                Some(Some(_)) => Need::Nothing,
                _ => self.plan.need(d),
            })
            .collect();
        let mut unsigned = vec![false; needs.len()];
        if self.plan.cfg.text_not_stored {
            // Nothing to read the text from: counted, and the run stops before writing.
            for (n, u) in needs.iter_mut().zip(&mut unsigned) {
                if *n == Need::Text {
                    *u = true;
                    *n = Need::Nothing;
                }
            }
        }
        Ok(Held {
            needed: needs.iter().filter(|n| **n != Need::Nothing).count(),
            texts_needed: needs.iter().filter(|n| **n == Need::Text).count(),
            page,
            derived,
            needs,
            unsigned,
        })
    }

    /// The next pages pass A takes together (`None` at the end): one page read with the texts
    /// (`inline`), or light pages whose texts come by real-time get (an `/export` page or one
    /// from the change state: their cursor cannot go on as a `cursorMark` read, and the light scan
    /// costs Solr almost nothing), gathered until they need a get's worth, so that a few changed
    /// pages among many settled ones cost a request per batch, not per page. The texts held at
    /// once stay under two batches' worth (under one before the last page read).
    async fn gather(
        &self,
        pages: &mut Pages<'_>,
        inline: bool,
        light: &ReadQuery,
        wide: &ReadQuery,
    ) -> Result<Option<Vec<Held>>, EngineError> {
        let Some(first) = pages
            .next(self.store, if inline { wide } else { light })
            .await?
        else {
            return Ok(None);
        };
        let mut held = vec![self.held(first)?];
        while !inline
            && !pages.done
            && held
                .iter()
                .all(|h| matches!(h.page.via, Via::Export | Via::State))
            && held.iter().map(|h| h.needed).sum::<usize>() < self.plan.cfg.batch_size
            && held.len() < HELD_PAGES
        {
            let Some(page) = pages.next(self.store, light).await? else {
                break;
            };
            held.push(self.held(page)?);
        }
        Ok(Some(held))
    }

    /// Reads every document's light fields, signs what needs it, and returns the records with what
    /// the rest of the round needs from this pass.
    pub(super) async fn pass_a(&self, report: &mut Report) -> Result<Scanned, EngineError> {
        let expected = self.store.known_count(&self.plan.cfg.filter);
        let mut keep = Keep::new(&self.spill, self.plan.full, expected);
        let light = self.plan.query();
        // When most documents need their text (a first run, --full), reading it inline is cheaper
        // than a real-time get per document; the run switches on what the last page needed.
        let mut wide = self.plan.query();
        for f in self.plan.content_fields() {
            if !wide.fields.contains(&f) {
                wide.fields.push(f);
            }
        }
        let mut inline = self.plan.full;
        let mut recs = Recs::new(&self.spill);
        let mut pages = Pages::new(self.progress);
        let mut signed_total = 0;
        let mut sigs = Pending::new(self.spill.clone());
        let mut join = Join::new(self.spill.clone());
        let mut keys = Keys::new(&self.spill, &self.plan);
        let count_reads = report.rounds == 1;
        // What the run before derived from the documents that did not change, and what this one
        // derives, for the next (a store that keeps no copy of the index drops it).
        let tag = (!self.plan.full).then(|| derived::tag(&self.plan));
        if let Some(tag) = tag {
            self.store.serve_derived(tag, &self.plan.cfg.fields.url);
        }
        // Documents read with their content, and how many of them have the text field at all.
        let (mut with_content, mut with_text) = (0u64, 0u64);
        // Pages that need signing where the core does not store the text (`text_not_stored`).
        let mut unsignable = 0u64;
        // The next pages, gathered while the texts of the pages before them come (see below).
        let mut ahead: Option<(Vec<Held>, bool)> = None;
        loop {
            let (held, was_inline) = match ahead.take() {
                Some(next) => next,
                None => match self.gather(&mut pages, inline, &light, &wide).await? {
                    Some(held) => (held, inline),
                    None => break,
                },
            };
            if held.iter().any(|h| h.needed > 0) && !self.guarded.replace(true) {
                // Before the first signature: is the index signed as this run would sign it?
                let sampled = guard::check_scheme(self.store, self.plan.cfg).await?;
                report.work.sample_docs += sampled as u64;
            }
            for h in &held {
                if was_inline {
                    report.work.text_docs += h.page.docs.len() as u64;
                } else {
                    report.work.light(h.page.via, h.page.docs.len());
                }
            }
            let last = held.last().expect("a page");
            let last_via = last.page.via;
            // Inline texts when most of the last page needed them; never after an `/export` page
            // or one from the change state (see above).
            inline = last.texts_needed * 2 > last.page.docs.len()
                && !matches!(last.page.via, Via::Export | Via::State);
            // The texts, and apart the titles and descriptions of pages that need nothing else,
            // by real-time get.
            let mut gets: Vec<(Need, Vec<String>, Vec<String>)> = Vec::new();
            if !was_inline && held.iter().any(|h| h.needed > 0) {
                for (kind, fields) in [
                    (Need::Text, self.plan.content_fields()),
                    (Need::Titles, self.plan.title_fields()),
                ] {
                    let ids: Vec<String> = held
                        .iter()
                        .flat_map(|h| h.page.docs.iter().zip(&h.needs))
                        .filter(|(_, n)| **n == kind)
                        .filter_map(|(d, _)| self.plan.id_of(d).map(Cow::into_owned))
                        .collect();
                    if !ids.is_empty() {
                        gets.push((kind, ids, fields));
                    }
                }
            }
            let fetch = async {
                let mut got = Vec::with_capacity(gets.len());
                for (kind, ids, fields) in &gets {
                    got.push((*kind, self.store.get(ids, fields).await?));
                }
                Ok::<_, EngineError>(got)
            };
            // While Solr reads the texts, the next pages are read (from the change state, the
            // worker's own work): pass A waits for the slower of the two, not for both.
            let (got, next) = if gets.is_empty() {
                (Ok(Vec::new()), Ok(None))
            } else {
                let next_inline = inline;
                let gather = async {
                    if pages.done {
                        return Ok(None);
                    }
                    self.gather(&mut pages, next_inline, &light, &wide)
                        .await
                        .map(|g| g.map(|held| (held, next_inline)))
                };
                tokio::join!(fetch, gather)
            };
            ahead = next?;
            // The text to sign each document from: the document itself when it was read inline,
            // else its real-time copy (`None`: deleted since the page was read).
            let mut fetched: HashMap<String, Doc> = HashMap::new();
            for (kind, docs) in got? {
                match kind {
                    Need::Text => report.work.text_docs += docs.len() as u64,
                    _ => report.work.lookup(last_via, docs.len()),
                }
                for doc in docs {
                    if let Some(id) = self.plan.id_of(&doc) {
                        let id = id.into_owned();
                        fetched.insert(id, doc);
                    }
                }
            }
            for Held {
                page,
                derived,
                needs,
                unsigned,
                ..
            } in held
            {
                let keeps = tag.is_some() && page.via == Via::State;
                let mut kept: Vec<(String, i64, Vec<u8>)> = Vec::new();
                let content: Vec<Option<&Doc>> = page
                    .docs
                    .iter()
                    .zip(&needs)
                    .map(|(d, n)| match (n, was_inline) {
                        (Need::Nothing, _) => None,
                        (_, true) => Some(d),
                        (_, false) => self.plan.id_of(d).and_then(|id| fetched.get(id.as_ref())),
                    })
                    .collect();
                for (doc, n) in content.iter().zip(&needs) {
                    if let (Some(doc), Need::Text) = (doc, n) {
                        with_content += 1;
                        with_text += u64::from(doc.contains_key(&self.plan.cfg.fields.text));
                    }
                }
                type Entry<'d> = (
                    Cow<'d, str>,
                    Rec,
                    [u64; 6],
                    Option<&'d str>,
                    Option<std::io::Result<Vec<u8>>>,
                    Vec<u64>,
                );
                let mut entries: Vec<Entry<'_>> = Vec::with_capacity(page.docs.len());
                // Sign and build the records in parallel: the profile is the CPU-heavy part of a run,
                // URL parsing and key hashing the next.
                let plan = &self.plan;
                let signed = (0..page.docs.len())
                    .into_par_iter()
                    .with_min_len(32)
                    .map(|i| {
                        let doc = &page.docs[i];
                        if let Some(Some((rec, keys, excluded))) = derived.get(i) {
                            let signed = Signed::as_derived(rec.read_version);
                            return Some((signed, *rec, *keys, *excluded, Vec::new(), None));
                        }
                        let signed = sign_one(plan, doc, needs[i], content[i])?;
                        let id = plan.id_of(doc)?;
                        let (mut rec, keys, excluded, near_keys) =
                            plan.record(doc, id_hash(&id), &signed);
                        rec.dirty |= signed.computed || signed.update.is_some();
                        // What pass C writes with the flags, encoded here, in parallel.
                        let entry = match &signed.update {
                            Some(u) if plan.mode != Mode::Check => Some(Pending::encode(u)),
                            _ => None,
                        };
                        Some((signed, rec, keys, excluded, near_keys, entry))
                    })
                    .collect::<Vec<_>>();
                for (i, (((doc, outcome), unsigned), need)) in page
                    .docs
                    .iter()
                    .zip(signed)
                    .zip(unsigned)
                    .zip(&needs)
                    .enumerate()
                {
                    // A document served with what was derived comes with its id and URL alone.
                    let served = page.derived.get(i);
                    let id = match served {
                        Some(s) => Cow::Borrowed(s.id),
                        None => match self.plan.id_of(doc) {
                            Some(id) => id,
                            None => continue,
                        },
                    };
                    let Some((outcome, mut rec, keys, excluded, near_keys, entry)) = outcome else {
                        // Deleted between the page and the get: it takes no part.
                        continue;
                    };
                    if count_reads {
                        report.documents.read += 1;
                    }
                    if outcome.computed {
                        signed_total += 1;
                        report.documents.signed += 1;
                    }
                    if unsigned || (outcome.update.is_some() && self.plan.cfg.text_not_stored) {
                        // Not signed, or a signature field written by an atomic update, which would
                        // drop the text: once each.
                        unsignable += 1;
                    }
                    if outcome.update.is_some() && self.plan.mode == Mode::Check {
                        report.documents.missing_signatures += 1;
                    }
                    let set = entry;
                    if count_reads {
                        for d in Dimension::ALL {
                            if let Some(reason) = excluded[d.index()] {
                                *report
                                    .dimensions
                                    .entry(d.name().into())
                                    .or_default()
                                    .excluded
                                    .entry(reason.name().into())
                                    .or_default() += 1;
                            }
                        }
                    }
                    if outcome.version != rec.read_version && rec.read_version != 0 {
                        // Re-indexed between the page and the get: the page's URL and flags are not
                        // the text's. Left to the next round, which reads it again.
                        report.documents.changed_during_run += 1;
                        continue;
                    }
                    // A check keeps no signatures, but counts the documents a run would sign (and so
                    // write) as a run's pending ones.
                    rec.pending = set.is_some()
                        || (self.plan.mode == Mode::Check && outcome.update.is_some());
                    // Served with what the run before derived: the store keeps that.
                    let served_derived = matches!(derived.get(i), Some(Some(_)));
                    if keeps
                        && !served_derived
                        && *need == Need::Nothing
                        && !unsigned
                        && !outcome.computed
                        && outcome.update.is_none()
                        && near_keys.is_empty()
                    {
                        // Nothing read, nothing to write: the next run derives the same from it.
                        let bytes = derived::encode(&rec, &keys, &excluded);
                        kept.push((id.clone().into_owned(), rec.read_version, bytes));
                    }
                    entries.push((
                        id,
                        rec,
                        keys,
                        served.map_or_else(|| get_str(doc, &self.plan.cfg.fields.url), |s| s.value),
                        set,
                        near_keys,
                    ));
                }
                if !kept.is_empty() {
                    self.store.keep_derived(tag.unwrap_or(0), kept);
                }
                for (id, rec, rec_keys, url, set, near_keys) in entries {
                    keys.push(&rec_keys)
                        .map_err(|e| StoreError::io("cannot keep the grouping keys", e))?;
                    if let Some(entry) = set {
                        entry
                            .and_then(|e| sigs.put_encoded(recs.len(), &e))
                            .map_err(|e| {
                                StoreError::io("cannot keep the signatures until pass C", e)
                            })?;
                    }
                    if !near_keys.is_empty() {
                        join.add(recs.len() as u32, near_keys).map_err(|e| {
                            StoreError::io("cannot keep the near-duplicate keys", e)
                        })?;
                    }
                    keep.note(&self.plan, recs.len(), &rec, &id, url);
                    recs.push(rec)
                        .map_err(|e| StoreError::io("cannot keep the records", e))?;
                }
            }
        }
        if with_content > 0
            && with_text == 0
            && self.plan.needs_text()
            && guard::text_field_missing(self.store, self.plan.cfg).await?
        {
            // Before pass C writes anything: every page would be signed as an empty text.
            return Err(EngineError::NoTextField {
                field: self.plan.cfg.fields.text.clone(),
            });
        }
        if unsignable > 0 {
            return Err(EngineError::TextNotStored {
                field: self.plan.cfg.fields.text.clone(),
                pages: unsignable,
            });
        }
        recs.flush()
            .map_err(|e| StoreError::io("cannot keep the records", e))?;
        keep.finish();
        keys.flush()
            .map_err(|e| StoreError::io("cannot keep the grouping keys", e))?;
        Ok(Scanned {
            recs,
            keys,
            signed: signed_total,
            keep,
            pending: sigs,
            join,
        })
    }
}

impl Plan<'_> {
    /// The unique key; borrowed, as most documents are only looked up by it.
    pub(super) fn id_of<'d>(&self, doc: &'d Doc) -> Option<Cow<'d, str>> {
        match doc.get(&self.cfg.fields.id)? {
            Value::String(s) => Some(Cow::Borrowed(s)),
            Value::Number(n) => Some(Cow::Owned(n.to_string())),
            _ => None,
        }
    }

    /// Whether a dimension of the run signs the text (exact, fuzzy, near).
    fn needs_text(&self) -> bool {
        self.on(Dimension::Exact) || self.on(Dimension::Fuzzy) || self.on(Dimension::Near)
    }

    pub(super) fn content_fields(&self) -> Vec<String> {
        let f = &self.cfg.fields;
        let mut fl = self.title_fields();
        fl.extend([
            f.text.clone(),
            f.exact_signature.clone(),
            f.fuzzy_signature.clone(),
        ]);
        if self.full && self.cfg.write_fuzzy_text {
            fl.push(f.fuzzy_signature_text.clone());
        }
        if self.cfg.write_fuzzy_words || self.min_words() > 0 {
            // To write the word count only when it differs, and to know it when it is not signed.
            fl.push(f.fuzzy_signature_words.clone());
        }
        if self.on(Dimension::Near) {
            fl.push(f.near_version.clone());
            if self.full {
                // To write only the values that differ.
                fl.push(f.near_trials.clone());
                fl.push(f.near_keys.clone());
            }
        }
        fl
    }

    pub(super) fn stored_sigs(&self, doc: &Doc) -> Sigs {
        let f = &self.cfg.fields;
        Sigs {
            exact: get_i64(doc, &f.exact_signature),
            fuzzy: get_i64(doc, &f.fuzzy_signature),
            title: get_i64(doc, &f.title_signature),
            description: get_i64(doc, &f.description_signature),
        }
    }

    /// The fields read to sign a document's title and description alone ([`Need::Titles`]).
    pub(super) fn title_fields(&self) -> Vec<String> {
        let f = &self.cfg.fields;
        vec![
            f.id.clone(),
            f.version.clone(),
            f.title.clone(),
            f.description.clone(),
            f.title_signature.clone(),
            f.description_signature.clone(),
        ]
    }

    /// What of a document must be read besides its light fields.
    pub(super) fn need(&self, doc: &Doc) -> Need {
        if self.must_read_text(doc) {
            Need::Text
        } else if self.must_read_titles(doc) {
            Need::Titles
        } else {
            Need::Nothing
        }
    }

    /// Whether a document's text must be read: to sign it, or to tell whether a stored signature
    /// stands for an empty text.
    fn must_read_text(&self, doc: &Doc) -> bool {
        if self.full {
            return self.enabled[..4].iter().any(|&e| e) || self.on(Dimension::Near);
        }
        if self.on(Dimension::Near)
            && self
                .near_stored(
                    get_str(doc, &self.cfg.fields.near_version),
                    self.near_chrome(doc),
                )
                .is_none()
        {
            return true;
        }
        let s = self.stored_sigs(doc);
        let content = self.on(Dimension::Exact) || self.on(Dimension::Fuzzy);
        if content && (s.exact.is_none() || s.fuzzy.is_none()) {
            return true;
        }
        if self.words_missing(s.fuzzy, doc) {
            // Signed before the word count was stored: the text is read once to count it.
            return true;
        }
        if self.on(Dimension::Exact)
            && s.fuzzy == Some(self.empty_profile)
            && s.exact != Some(self.empty_exact)
            && !self.stored_near_tells_blank(doc)
        {
            // An empty profile may mean a blank text (whitespace only), which the exact dimension
            // leaves out; only the text tells. An empty text's own signature says so without it,
            // and so does this run's near version (it says whether the text had words and whether
            // it was blank): pages of short words and blank pages (0.7 % of generated pages) were
            // read again on every run before.
            return true;
        }
        false
    }

    /// Whether a document not yet decided lacks a title or description signature, which only its
    /// title or description tells apart: not signed, or none to sign. Those two fields are read
    /// then, not the text: a page signed at index time (`solr-plugin/`) without a description is
    /// new to the worker and costs it no text.
    fn must_read_titles(&self, doc: &Doc) -> bool {
        if self.full {
            return false;
        }
        let s = self.stored_sigs(doc);
        let dirty = self.cfg.dimensions.iter().any(|&d| {
            get_bool(doc, self.cfg.fields.unique(d)).is_none()
                || self
                    .cfg
                    .fields
                    .count(d)
                    .is_some_and(|c| get_i64(doc, c).is_none_or(|n| n < 1))
        });
        dirty
            && ((self.on(Dimension::Title) && s.title.is_none())
                || (self.on(Dimension::Description) && s.description.is_none()))
    }

    /// Whether the run needs a document's profile word count and the document has a fuzzy signature
    /// but no stored count (signed before counts were stored). The empty profile's signature says 0
    /// without it.
    pub(super) fn words_missing(&self, fuzzy: Option<i64>, doc: &Doc) -> bool {
        self.min_words() > 0
            && fuzzy.is_some_and(|s| s != self.empty_profile)
            && !has(doc, &self.cfg.fields.fuzzy_signature_words)
    }

    /// Whether the document's stored near values are this run's and say whether its text is blank
    /// (whitespace only): a text with words is not, and a blank one is marked so.
    fn stored_near_tells_blank(&self, doc: &Doc) -> bool {
        self.on(Dimension::Near)
            && self
                .near_stored(
                    get_str(doc, &self.cfg.fields.near_version),
                    self.near_chrome(doc),
                )
                .is_some_and(|s| s.words || s.blank)
    }

    /// Builds the compact record of a document from its light fields and final signatures, with the
    /// reason it takes no part in each dimension where it takes none.
    /// Also returns the near-duplicate keys computed in this round, as the join sees them.
    pub(super) fn record(
        &self,
        doc: &Doc,
        id_hash: u64,
        signed: &Signed,
    ) -> (
        Rec,
        [u64; 6],
        [Option<Exclusion>; Dimension::COUNT],
        Vec<u64>,
    ) {
        let (sigs, blank) = (&signed.sigs, signed.blank);
        let mut excluded = [None; Dimension::COUNT];
        let f = &self.cfg.fields;
        let url = UrlKeys::new(get_str(doc, &f.url));
        let read_version = get_i64(doc, &f.version).unwrap_or(0);
        let mut rec = Rec::new(
            id_hash,
            read_version,
            RankPrefix::new(
                get_str(doc, &f.url),
                &url,
                self.cfg.preference,
                self.cfg.url_rules.as_deref(),
            ),
        );
        rec.reordered = match &self.earlier {
            None => false,
            Some(None) => true,
            Some(Some((preference, rules))) => {
                RankPrefix::new(get_str(doc, &f.url), &url, *preference, rules.as_deref())
                    != rec.prefix
            }
        };
        let mut keys = [0u64; 6];
        let mut near_keys = Vec::new();
        if self.on(Dimension::Near) {
            // The representative's id (YaCy's profile), or its hash (the in-place profile).
            // 0: what the signing chain writes first, no decision.
            let group = if f.numeric_flags() {
                get_i64(doc, &f.near_group)
                    .filter(|&h| h != 0)
                    .map(|h| h as u64)
            } else {
                get_str(doc, &f.near_group).map(crate::store::id_hash)
            };
            match group {
                Some(g) => rec.near_group = g,
                None => rec.dirty = true,
            }
            let host = self.near_host(&url);
            let words = match &signed.near {
                NearState::Computed(Some(sig)) => {
                    near_keys = sig.keys.iter().map(|&k| near::join_key(k, host)).collect();
                    rec.near_signed = true;
                    true
                }
                NearState::Computed(None) => false,
                NearState::Stored(words) => *words,
            };
            let reason = if !words {
                Some(Exclusion::NoWords)
            } else if self.cfg.scope == Scope::Host && host.is_none() {
                Some(Exclusion::NoUrl)
            } else {
                None
            };
            match reason {
                None => rec.mask |= 1 << Dimension::Near.index(),
                Some(r) => {
                    excluded[Dimension::Near.index()] = Some(r);
                    near_keys.clear();
                    rec.near_signed = false;
                }
            }
        }
        for d in Dimension::ALL.into_iter().filter(|&d| self.on(d)) {
            match get_bool(doc, f.unique(d)) {
                Some(true) => rec.stored_true |= 1 << d.index(),
                Some(false) => {}
                None => rec.dirty = true,
            }
            if let Some(c) = f.count(d) {
                // A group has a member: 0 (what the signing chain writes first) is no decision.
                match get_i64(doc, c)
                    .and_then(|n| u32::try_from(n).ok())
                    .filter(|&n| n > 0)
                {
                    Some(n) => rec.stored_counts[counted_slot(d)] = n,
                    None => rec.dirty = true,
                }
            }
        }
        let host = if self.cfg.scope == Scope::Host {
            url.host_key.as_deref()
        } else {
            None
        };
        for d in Dimension::ALL {
            if !self.on(d) || d == Dimension::Near {
                continue;
            }
            let key: Result<u64, Exclusion> = match d {
                Dimension::Exact => match sigs.exact {
                    Some(s) if !blank => Ok(s as u64),
                    _ => Err(Exclusion::EmptyText),
                },
                Dimension::Fuzzy => match sigs.fuzzy {
                    Some(s) if s == self.empty_profile => Err(Exclusion::EmptyProfile),
                    // A count not known (a stored signature without one) takes part, as it did.
                    Some(_) if signed.words.is_some_and(|w| w < self.min_words()) => {
                        Err(Exclusion::WeakProfile)
                    }
                    Some(s) => Ok(s as u64),
                    None => Err(Exclusion::EmptyProfile),
                },
                Dimension::Title => sigs.title.map(|s| s as u64).ok_or(Exclusion::NoTitle),
                Dimension::Description => sigs
                    .description
                    .map(|s| s as u64)
                    .ok_or(Exclusion::NoDescription),
                Dimension::Www => url.www_key.as_deref().map(key_hash).ok_or(Exclusion::NoUrl),
                Dimension::Http => match (&url.normalized, &url.http_key) {
                    (None, _) => Err(Exclusion::NoUrl),
                    (Some(_), None) => Err(Exclusion::NotHttp),
                    (Some(_), Some(k)) => Ok(key_hash(k)),
                },
                Dimension::Near => unreachable!("near has no single key"),
            };
            let key = key.and_then(|k| {
                if d.is_content() && self.cfg.scope == Scope::Host {
                    let host = host.ok_or(Exclusion::NoUrl)?;
                    Ok(key_hash(&format!("{host} {k}")))
                } else {
                    Ok(k)
                }
            });
            match key {
                Ok(k) => {
                    keys[d.index()] = k;
                    rec.mask |= 1 << d.index();
                }
                Err(reason) => excluded[d.index()] = Some(reason),
            }
        }
        (rec, keys, excluded, near_keys)
    }
}
