//! The postprocessing engine: sign what is unsigned, group doubles in every dimension, pick one
//! representative per group, and write back only what differs.
//!
//! # Motivation
//!
//! A crawl leaves a core where the same page sits under several URLs and the same text under several
//! pages. Ranking rules can drop or push down doubles if each document carries `*_unique_b` flags and
//! `*_copycount_i` counts that are exactly right, with the same document winning in every dimension.
//!
//! # Design
//!
//! ```text
//!             ┌──────────── pass A: scan ─────────────┐   ┌── pass B: rank ──┐   ┌─ pass C: write ─┐
//! store ──▶ light fields ─▶ unsigned? ─get text─▶ sign ─┼─▶ compact records ─┼─▶ groups ─▶ best of ─┼─▶ flags/counts ─▶ store
//!             (id, url, version,       └─▶ sign updates ─┘   (hashes only)     each group (strings  │   that differ,
//!              signatures, flags)                                              for the best only)   │   one update each
//! ```
//!
//! - **Pass A** streams the light fields of every document (never the text) and keeps a fixed-size
//!   record per document: 64-bit keys per dimension, the fixed part of its rank, its version. Documents
//!   without signatures (or all, with `--full`) have their text fetched by id, are signed, and get a
//!   signature update guarded by the version that was read. When most of a page needs its text, the
//!   next page is read with the text inline instead. Signing and building the records run on every
//!   core, a page at a time.
//! - **Groups** are built from the records alone ([`group`]).
//! - **Open groups.** From the records alone (they carry each document's stored flags and counts),
//!   the round finds the groups that no longer stand as a run left them (`Open`): a dirty member,
//!   a stored count that is not the group's size, not exactly one true flag, a representative
//!   without the best rank prefix. Under `--full` and in `check` every group is open. When none is,
//!   the round ends here: a settled index is read once.
//! - **Pass B** reads id, URL and version of the documents in open groups and keeps, for each open
//!   group, only the best member so far under the one preference order shared by all dimensions
//!   (rank prefix, URL, id).
//! - **Pass C** reads their stored flags and counts, computes each document's own in its open
//!   groups, and writes those that differ, guarded by the version the decision was based on.
//!
//! Passes B and C find the documents of open groups by lookups when few are open: by id (the dirty
//! documents, whose ids pass A keeps), by content signature, and by the spellings of the URLs pass A
//! kept (dirty documents and stored www/http doubles). If a lookup misses one (a URL stored in a
//! spelling other than its normalised form), pass B reads everything instead. With many open
//! documents (a first run, `--full`, a large change) both passes read everything, as lookups would
//! cost more.
//!
//! Before pass A the engine tells the store ([`Store::hint_rereads`]) that the light fields may be
//! read again, so a store that can keep them apart (the file store does) serves passes B and C
//! without reading the documents again.
//!
//! Memory is about 140 bytes per document (the 96-byte record, an id-hash index of the records, one
//! group number per dimension), plus, while groups are built, 16 bytes per document of the dimension
//! at hand, plus the best member's strings per open group, plus at most 100,000 kept ids and URLs.
//! It does not grow with document size.
//!
//! # Consequences
//!
//! - The outcome depends only on the documents: not on paging, batch sizes or run history. An
//!   incremental run differs from `--full` only in which signatures it recomputes and which groups
//!   it decides again; a group it leaves alone already holds what `--full` would write (see
//!   `Open` for the one change it cannot see: a URL edited in place without re-indexing).
//! - A run killed at any point leaves every written document consistent on its own (each update is
//!   complete for that document); the next run recomputes the rest and converges.
//! - A document that changes during a run (HTTP 409 or a new version between passes) is never written
//!   with stale data; the run repeats (up to `max_rounds`) so that its groups are decided again.

pub mod dimension;
pub mod fields;
pub mod group;
pub mod report;
pub mod url_key;

use std::borrow::Cow;
use std::collections::HashMap;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;
use tracing::{debug, info, warn};

use crate::signature::{md5_long, Scheme, Signer};
use crate::store::file::id_hash;
use crate::store::{
    par_map, AtomicUpdate, CommitMode, Doc, Filter, Page, ReadQuery, Store, StoreError,
};

pub use dimension::{Dimension, Exclusion};
pub use fields::FieldNames;
use group::Groups;
pub use report::{DimensionReport, DocumentCounts, Report};
pub use url_key::{compare_full, Preference, RankPrefix, UrlKeys};

/// Where a content group may span.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    /// All documents (the seed's "complete set of all known documents").
    #[default]
    Global,
    /// One protocol + host + port, as YaCy groups.
    Host,
}

impl Scope {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Scope::Global => "global",
            Scope::Host => "host",
        }
    }
}

/// Everything that decides what a run does.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Field names.
    pub fields: FieldNames,
    /// Signature scheme and profile parameters.
    pub signer: Signer,
    /// The dimensions to decide, in [`Dimension::ALL`] order.
    pub dimensions: Vec<Dimension>,
    /// Global or per-host content groups.
    pub scope: Scope,
    /// The preference order's two switches.
    pub preference: Preference,
    /// Which documents take part at all.
    pub filter: Filter,
    /// Recompute every signature from the text, not only the missing ones.
    pub full: bool,
    /// Decide everything, write nothing.
    pub dry_run: bool,
    /// Documents per read page and per update batch.
    pub batch_size: usize,
    /// How to make the updates visible at the end.
    pub commit: CommitMode,
    /// Write `fuzzy_signature_text_t` (`yacy` scheme only).
    pub write_fuzzy_text: bool,
    /// How many rounds to run at most when documents change under the run.
    pub max_rounds: u32,
    /// Show a progress bar on a terminal.
    pub progress: bool,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            fields: FieldNames::default(),
            signer: Signer::new(Scheme::Yacy),
            dimensions: Dimension::ALL.to_vec(),
            scope: Scope::Global,
            preference: Preference::default(),
            filter: Filter::All,
            full: false,
            dry_run: false,
            batch_size: 1000,
            commit: CommitMode::Hard,
            write_fuzzy_text: true,
            max_rounds: 3,
            progress: false,
        }
    }
}

/// Errors of a run.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Documents kept changing under the run.
    #[error("documents kept changing during {0} rounds; run again when the index is quieter")]
    Unstable(u32),
}

/// `run` and `check` differ only in whether they write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Run,
    Check,
}

/// Runs the postprocessing against a store and returns the report.
pub async fn run<S: Store>(store: &S, cfg: &EngineConfig) -> Result<Report, EngineError> {
    execute(store, cfg, Mode::Run).await
}

/// Read-only: what a full run would change. The report's [`Report::check_failed`] says whether the
/// index is out of date.
pub async fn check<S: Store>(store: &S, cfg: &EngineConfig) -> Result<Report, EngineError> {
    execute(store, cfg, Mode::Check).await
}

async fn execute<S: Store>(
    store: &S,
    cfg: &EngineConfig,
    mode: Mode,
) -> Result<Report, EngineError> {
    let mut report = Report {
        mode: match (mode, cfg.full) {
            (Mode::Check, _) => "check",
            (Mode::Run, true) => "full",
            (Mode::Run, false) => "incremental",
        }
        .to_owned(),
        store: store.describe(),
        scheme: cfg.signer.scheme.name().to_owned(),
        scope: cfg.scope.name().to_owned(),
        dry_run: cfg.dry_run || mode == Mode::Check,
        ..Report::default()
    };
    let writes = mode == Mode::Run && !cfg.dry_run;
    let mut full = cfg.full;
    loop {
        report.rounds += 1;
        let round = Round::new(store, cfg, mode, full);
        let outcome = round.execute(&mut report).await?;
        if !writes || outcome.unsettled == 0 {
            break;
        }
        if report.rounds >= cfg.max_rounds {
            return Err(EngineError::Unstable(report.rounds));
        }
        info!(
            unsettled = outcome.unsettled,
            "documents changed during the run; running another round"
        );
        // Later rounds only need what changed; the signatures written so far are current, and the
        // next round must see them.
        full = false;
        store.refresh().await?;
    }
    if writes && report.documents.written > 0 {
        let t = Instant::now();
        store.commit(cfg.commit).await?;
        *report.phases_ms.entry("commit").or_default() += t.elapsed().as_millis() as u64;
    } else if writes {
        // Nothing to write still produces the (empty) output a file user asked for.
        store.commit(CommitMode::None).await?;
    }
    Ok(report)
}

/// The fixed-size state kept per document between passes.
#[derive(Debug, Clone)]
struct Rec {
    id_hash: u64,
    /// The version read in pass A (0 when the store has none).
    read_version: i64,
    /// The version to guard updates with: the one read, or the one our signature update produced.
    version: i64,
    prefix: RankPrefix,
    keys: [u64; 6],
    /// Bit `d`: takes part in dimension `d`.
    mask: u8,
    /// Already counted as written (its signatures were updated in pass A).
    counted: bool,
    /// Bit `d`: the stored flag of dimension `d` is true.
    stored_true: u8,
    /// Signed in this round, or missing a flag or count: its groups are decided again.
    dirty: bool,
    /// The stored exact and fuzzy copy counts (0 when missing).
    stored_counts: [u32; 2],
}

// The module doc's memory figure.
const _: () = assert!(std::mem::size_of::<Rec>() == 96);

/// The signatures of one document, as stored or as computed.
#[derive(Debug, Clone, Default, PartialEq)]
struct Sigs {
    exact: Option<i64>,
    fuzzy: Option<i64>,
    title: Option<i64>,
    description: Option<i64>,
}

struct Best {
    prefix: RankPrefix,
    url: Option<Box<str>>,
    id: Box<str>,
    /// The exact key material of the group, to prove that no two keys shared a hash.
    check: Box<str>,
}

struct RoundOutcome {
    unsettled: u64,
}

/// What a round decides with, apart from the store: shared with the signing threads.
struct Plan<'a> {
    cfg: &'a EngineConfig,
    mode: Mode,
    full: bool,
    enabled: [bool; 6],
    empty_profile: i64,
}

struct Round<'a, S: Store> {
    store: &'a S,
    plan: Plan<'a>,
    progress: ProgressBar,
}

impl<'a, S: Store> std::ops::Deref for Round<'a, S> {
    type Target = Plan<'a>;

    fn deref(&self) -> &Plan<'a> {
        &self.plan
    }
}

impl<'a, S: Store> Round<'a, S> {
    fn new(store: &'a S, cfg: &'a EngineConfig, mode: Mode, full: bool) -> Self {
        let mut enabled = [false; 6];
        for d in &cfg.dimensions {
            enabled[d.index()] = true;
        }
        let progress = if cfg.progress {
            let pb = ProgressBar::new_spinner();
            pb.set_style(
                ProgressStyle::with_template(
                    "{spinner} {prefix:>6} {human_pos} documents {per_sec} {msg}",
                )
                .expect("valid template"),
            );
            pb
        } else {
            ProgressBar::hidden()
        };
        Round {
            store,
            plan: Plan {
                cfg,
                mode,
                full,
                enabled,
                empty_profile: cfg.signer.profile("").signature(),
            },
            progress,
        }
    }
}

impl Plan<'_> {
    fn on(&self, d: Dimension) -> bool {
        self.enabled[d.index()]
    }

    fn writes(&self) -> bool {
        self.mode == Mode::Run && !self.cfg.dry_run
    }

    /// The fields pass A reads: never the text. Passes B and C read subsets of them.
    fn light_fields(&self) -> Vec<String> {
        let f = &self.cfg.fields;
        let mut fl = vec![f.id.clone(), f.url.clone(), f.version.clone()];
        for d in Dimension::ALL {
            if !self.on(d) {
                continue;
            }
            if let Some(s) = f.signature(d) {
                fl.push(s.to_owned());
            }
            fl.push(f.unique(d).to_owned());
            if let Some(c) = f.count(d) {
                fl.push(c.to_owned());
            }
        }
        if self.on(Dimension::Exact) && !fl.contains(&f.fuzzy_signature) {
            fl.push(f.fuzzy_signature.clone());
        }
        fl
    }

    fn query(&self) -> ReadQuery {
        ReadQuery {
            filter: self.cfg.filter.clone(),
            fields: self.light_fields(),
            rows: self.cfg.batch_size.max(1),
        }
    }

    /// What pass B reads: a subset of the light fields (and of the store's light copy), as the rank
    /// needs only the URL besides the record.
    fn rank_query(&self) -> ReadQuery {
        let f = &self.cfg.fields;
        ReadQuery {
            fields: vec![f.id.clone(), f.url.clone(), f.version.clone()],
            ..self.query()
        }
    }

    /// What pass C reads: the stored flags and counts it compares with the decision.
    fn write_query(&self) -> ReadQuery {
        let f = &self.cfg.fields;
        let mut fields = vec![f.id.clone(), f.version.clone()];
        for d in Dimension::ALL.into_iter().filter(|&d| self.on(d)) {
            fields.push(f.unique(d).to_owned());
            fields.extend(f.count(d).map(str::to_owned));
        }
        ReadQuery {
            fields,
            ..self.query()
        }
    }
}

impl<S: Store> Round<'_, S> {
    async fn execute(self, report: &mut Report) -> Result<RoundOutcome, EngineError> {
        // Passes B and C may read the light fields again.
        self.store.hint_rereads(&self.query());
        let t = Instant::now();
        self.progress.set_prefix("scan");
        let (recs, signed_docs, conflicts, keep) = self.pass_a(report).await?;
        *report.phases_ms.entry("scan").or_default() += t.elapsed().as_millis() as u64;
        info!(documents = recs.len(), signed = signed_docs, "scanned");
        if conflicts > 0 && self.writes() {
            // Documents whose signature update conflicted are missing from the records, so this
            // round's groups may be short of them: deciding flags now would only write values the
            // next round corrects. The next round reads them again.
            self.progress.finish_and_clear();
            return Ok(RoundOutcome {
                unsettled: conflicts,
            });
        }

        let t = Instant::now();
        let mut by_hash: Vec<(u64, u32)> = recs
            .iter()
            .enumerate()
            .map(|(i, r)| (r.id_hash, i as u32))
            .collect();
        by_hash.sort_unstable();
        if let Some(w) = by_hash.windows(2).find(|w| w[0].0 == w[1].0) {
            // Two ids with one 64-bit hash, or one id twice in the input: either way the records
            // cannot be told apart, so no decision would be safe.
            return Err(EngineError::Store(StoreError::Unsupported(format!(
                "two documents share an id hash ({:016x}); is an id listed twice in the input?",
                w[0].0
            ))));
        }
        let groups: Vec<Option<Groups>> = Dimension::ALL
            .iter()
            .map(|&d| {
                self.on(d).then(|| {
                    let bit = 1u8 << d.index();
                    let pairs: Vec<(u64, u32)> = recs
                        .iter()
                        .enumerate()
                        .filter(|(_, r)| r.mask & bit != 0)
                        .map(|(i, r)| (r.keys[d.index()], i as u32))
                        .collect();
                    Groups::build(recs.len(), pairs)
                })
            })
            .collect();
        for d in Dimension::ALL {
            if let Some(g) = &groups[d.index()] {
                let r = report.dimensions.entry(d.name()).or_default();
                r.groups = g.count() as u64;
                r.doubles = g.doubles();
            }
        }
        let open = self.open_groups(&recs, &groups);
        let needed = open.docs.iter().filter(|n| **n).count();
        info!(documents = needed, "documents in groups to decide");
        report.documents.decided += needed as u64;
        if needed == 0 {
            // Every group stands as the last run left it: nothing to rank or write.
            self.progress.finish_and_clear();
            return Ok(RoundOutcome { unsettled: 0 });
        }
        let mut reads = self.lookups(&recs, &groups, &open, keep, needed);
        let todo = Todo {
            groups: &groups,
            open: &open,
        };
        self.progress.set_prefix("rank");
        self.progress.set_position(0);
        let mut best = self.pass_b(report, &recs, &by_hash, &todo, &reads).await?;
        if let Some(missed) = best.missed.filter(|&m| m > 0) {
            // A document of a group to decide was not found by its keys: a URL stored in another
            // spelling than its normalised form. Reading everything finds it.
            debug!(missed, "lookups missed documents; ranking from a full read");
            reads = vec![self.cfg.filter.clone()];
            best = self.pass_b(report, &recs, &by_hash, &todo, &reads).await?;
        }
        let best = best.best;
        *report.phases_ms.entry("rank").or_default() += t.elapsed().as_millis() as u64;

        let t = Instant::now();
        self.progress.set_prefix("write");
        self.progress.set_position(0);
        let unsettled = self
            .pass_c(report, &recs, &by_hash, &todo, &best, &reads)
            .await?;
        *report.phases_ms.entry("write").or_default() += t.elapsed().as_millis() as u64;
        self.progress.finish_and_clear();
        Ok(RoundOutcome { unsettled })
    }

    // ---------------------------------------------------------------- pass A

    /// Returns the records, how many documents were signed, and how many signature updates met a
    /// version conflict.
    async fn pass_a(&self, report: &mut Report) -> Result<(Vec<Rec>, u64, u64, Keep), EngineError> {
        let mut keep = Keep {
            everything: self.full || self.mode == Mode::Check,
            ..Keep::default()
        };
        let light = self.query();
        // When most documents need their text (a first run, --full), reading it inline is cheaper
        // than a real-time get per document; the run switches on what the last page needed.
        let mut wide = self.query();
        for f in self.content_fields() {
            if !wide.fields.contains(&f) {
                wide.fields.push(f);
            }
        }
        let mut inline = self.full;
        let mut recs = Vec::new();
        let mut pages = Pages::new(&self.progress);
        let mut signed_total = 0;
        let mut conflicts = 0u64;
        let count_reads = report.rounds == 1;
        while let Some(page) = pages
            .next(self.store, if inline { &wide } else { &light })
            .await?
        {
            let need: Vec<bool> = page.docs.iter().map(|d| self.needs_content(d)).collect();
            let needed = need.iter().filter(|n| **n).count();
            let was_inline = inline;
            inline = needed * 2 > page.docs.len();
            // The text to sign each document from: the document itself when it was read inline,
            // else its real-time copy (`None`: deleted since the page was read).
            let mut fetched: HashMap<String, Doc> = HashMap::new();
            if !was_inline && needed > 0 {
                let ids: Vec<String> = page
                    .docs
                    .iter()
                    .zip(&need)
                    .filter(|(_, n)| **n)
                    .filter_map(|(d, _)| self.id_of(d).map(Cow::into_owned))
                    .collect();
                for doc in self.store.get(&ids, &self.content_fields()).await? {
                    if let Some(id) = self.id_of(&doc) {
                        let id = id.into_owned();
                        fetched.insert(id, doc);
                    }
                }
            }
            let content: Vec<Option<&Doc>> = page
                .docs
                .iter()
                .zip(&need)
                .map(|(d, &n)| match (n, was_inline) {
                    (false, _) => None,
                    (true, true) => Some(d),
                    (true, false) => self.id_of(d).and_then(|id| fetched.get(id.as_ref())),
                })
                .collect();
            let mut updates = Vec::new();
            let mut pending: Vec<(Cow<'_, str>, Rec, Option<&str>)> =
                Vec::with_capacity(page.docs.len());
            // Sign and build the records in parallel: the profile is the CPU-heavy part of a run,
            // URL parsing and key hashing the next.
            let plan = &self.plan;
            let signed = par_map(page.docs.len(), |i| {
                let doc = &page.docs[i];
                let signed = sign_one(plan, doc, need[i].then_some(content[i]))?;
                let id = plan.id_of(doc)?;
                let (mut rec, excluded) = plan.record(
                    doc,
                    id_hash(&id),
                    &signed.sigs,
                    signed.blank,
                    signed.version,
                );
                rec.dirty |= signed.computed || signed.update.is_some();
                Some((signed, rec, excluded))
            });
            for (doc, outcome) in page.docs.iter().zip(signed) {
                let Some(id) = self.id_of(doc) else { continue };
                let Some((outcome, rec, excluded)) = outcome else {
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
                if let Some(u) = outcome.update {
                    if self.mode == Mode::Check {
                        report.documents.missing_signatures += 1;
                    } else {
                        updates.push(u);
                    }
                }
                if count_reads {
                    for d in Dimension::ALL {
                        if let Some(reason) = excluded[d.index()] {
                            *report
                                .dimensions
                                .entry(d.name())
                                .or_default()
                                .excluded
                                .entry(reason.name())
                                .or_default() += 1;
                        }
                    }
                }
                pending.push((id, rec, get_str(doc, &self.cfg.fields.url)));
            }
            let mut new_versions: HashMap<String, i64> = HashMap::new();
            let signed_ids: std::collections::HashSet<String> =
                updates.iter().map(|u| u.id.clone()).collect();
            if self.writes() && !updates.is_empty() {
                let written = updates.len();
                let outcome = self.store.update(&updates).await?;
                for id in &outcome.conflicts {
                    // Changed or deleted since it was read: leave it to the next round, unsigned.
                    warn!(id = %id, "document changed while it was being signed; it will be signed again");
                    new_versions.insert(id.clone(), i64::MIN);
                }
                report.documents.conflicts += outcome.conflicts.len() as u64;
                conflicts += outcome.conflicts.len() as u64;
                report.documents.written += (written - outcome.conflicts.len()) as u64;
                for (id, v) in outcome.versions {
                    new_versions.entry(id).or_insert(v);
                }
            }
            for (id, mut rec, url) in pending {
                match new_versions.get(id.as_ref()) {
                    Some(&i64::MIN) => continue,
                    Some(&v) => rec.version = v,
                    None => {}
                }
                rec.counted = signed_ids.contains(id.as_ref());
                keep.note(self, recs.len(), &rec, &id, url);
                recs.push(rec);
            }
        }
        Ok((recs, signed_total, conflicts, keep))
    }
}

impl Plan<'_> {
    /// The unique key; borrowed, as most documents are only looked up by it.
    fn id_of<'d>(&self, doc: &'d Doc) -> Option<Cow<'d, str>> {
        match doc.get(&self.cfg.fields.id)? {
            Value::String(s) => Some(Cow::Borrowed(s)),
            Value::Number(n) => Some(Cow::Owned(n.to_string())),
            _ => None,
        }
    }

    fn content_fields(&self) -> Vec<String> {
        let f = &self.cfg.fields;
        let mut fl = vec![
            f.id.clone(),
            f.version.clone(),
            f.text.clone(),
            f.title.clone(),
            f.description.clone(),
            f.exact_signature.clone(),
            f.fuzzy_signature.clone(),
            f.title_signature.clone(),
            f.description_signature.clone(),
        ];
        if self.full && self.cfg.write_fuzzy_text {
            fl.push(f.fuzzy_signature_text.clone());
        }
        fl
    }

    fn stored_sigs(&self, doc: &Doc) -> Sigs {
        let f = &self.cfg.fields;
        Sigs {
            exact: get_i64(doc, &f.exact_signature),
            fuzzy: get_i64(doc, &f.fuzzy_signature),
            title: get_i64(doc, &f.title_signature),
            description: get_i64(doc, &f.description_signature),
        }
    }

    /// Whether a document's text, title or description must be read: to sign it, or to tell whether a
    /// stored signature stands for an empty text.
    fn needs_content(&self, doc: &Doc) -> bool {
        if self.full {
            return self.enabled[..4].iter().any(|&e| e);
        }
        let s = self.stored_sigs(doc);
        let content = self.on(Dimension::Exact) || self.on(Dimension::Fuzzy);
        if content && (s.exact.is_none() || s.fuzzy.is_none()) {
            return true;
        }
        if self.on(Dimension::Exact) && s.fuzzy == Some(self.empty_profile) {
            // An empty profile may mean an empty text, which the exact dimension leaves out.
            return true;
        }
        let dirty = self.cfg.dimensions.iter().any(|&d| {
            !has(doc, self.cfg.fields.unique(d))
                || self.cfg.fields.count(d).is_some_and(|c| !has(doc, c))
        });
        dirty
            && ((self.on(Dimension::Title) && s.title.is_none())
                || (self.on(Dimension::Description) && s.description.is_none()))
    }

    /// Builds the compact record of a document from its light fields and final signatures, with the
    /// reason it takes no part in each dimension where it takes none.
    fn record(
        &self,
        doc: &Doc,
        id_hash: u64,
        sigs: &Sigs,
        blank: bool,
        version: i64,
    ) -> (Rec, [Option<Exclusion>; 6]) {
        let mut excluded = [None; 6];
        let f = &self.cfg.fields;
        let url = UrlKeys::new(get_str(doc, &f.url));
        let read_version = get_i64(doc, &f.version).unwrap_or(0);
        let mut rec = Rec {
            id_hash,
            read_version,
            version: if version != 0 { version } else { read_version },
            prefix: RankPrefix::new(&url, self.cfg.preference),
            keys: [0; 6],
            mask: 0,
            counted: false,
            stored_true: 0,
            dirty: false,
            stored_counts: [0; 2],
        };
        for d in Dimension::ALL.into_iter().filter(|&d| self.on(d)) {
            match get_bool(doc, f.unique(d)) {
                Some(true) => rec.stored_true |= 1 << d.index(),
                Some(false) => {}
                None => rec.dirty = true,
            }
            if let Some(c) = f.count(d) {
                match get_i64(doc, c).and_then(|n| u32::try_from(n).ok()) {
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
            if !self.on(d) {
                continue;
            }
            let key: Result<u64, Exclusion> = match d {
                Dimension::Exact => match sigs.exact {
                    Some(s) if !blank => Ok(s as u64),
                    _ => Err(Exclusion::EmptyText),
                },
                Dimension::Fuzzy => match sigs.fuzzy {
                    Some(s) if s != self.empty_profile => Ok(s as u64),
                    _ => Err(Exclusion::EmptyProfile),
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
                    rec.keys[d.index()] = k;
                    rec.mask |= 1 << d.index();
                }
                Err(reason) => excluded[d.index()] = Some(reason),
            }
        }
        (rec, excluded)
    }
}

/// The groups a round decides, and the documents it must read again to do so.
///
/// Under `--full` and in `check` that is everything. An incremental run decides only the groups that
/// are not as a run leaves them: a group stands when none of its members is dirty (signed in this
/// round, or missing a flag or count), every member's stored count equals the group's size, exactly
/// one member's stored flag is true, and that member's rank prefix is the group's best. A document
/// alone stands when it is not dirty, its flag is true and its count 1.
///
/// Every way the index changes between runs breaks one of these for each group whose outcome it
/// changes: an added or re-indexed document is dirty (a crawler's new document carries none of the
/// worker's fields); a deleted member shrinks its group below the stored counts, or takes the only
/// true flag with it; a run killed half-way leaves a dirty member, two true flags or mixed counts; a
/// changed `--prefer-*` moves the best prefix (members that tie on it keep their old order), and a
/// changed `--scope` splits or merges groups into ones with no or several true flags. Not seen: a
/// member's URL edited in place without re-indexing (an atomic update of the URL field by someone
/// else), and a changed `--filter`, which can join members decided in different runs into a group
/// whose flags and counts look settled; `--full` and `check` decide everything.
struct Open {
    /// Everything is decided again.
    all: bool,
    /// Per dimension, per group: decided again.
    groups: Vec<Vec<bool>>,
    /// Per record: takes part in some group decided again, or is alone and does not stand.
    docs: Vec<bool>,
}

impl Open {
    /// Whether the record's group in `d` (`gi`, or alone) is decided in this round.
    fn decides(&self, plan: &Plan<'_>, d: Dimension, gi: u32, rec: &Rec) -> bool {
        if self.all {
            return true;
        }
        if gi == Groups::ALONE {
            !plan.alone_stands(d, rec)
        } else {
            self.groups[d.index()][gi as usize]
        }
    }
}

/// What pass A keeps so that passes B and C can look up the documents of the groups to decide
/// instead of reading everything again: the ids of dirty documents, and the URLs of documents that
/// are dirty or stored as a www or http double (so that a group that lost its representative is
/// found by its other members' URLs). Bounded: past [`Keep::CAP`] entries (a first run, a large
/// change) the round reads everything instead.
#[derive(Default)]
struct Keep {
    /// Record index and id.
    ids: Vec<(u32, Box<str>)>,
    /// Record index and URL as stored.
    urls: Vec<(u32, Box<str>)>,
    /// Gave up keeping: passes B and C read everything.
    everything: bool,
}

impl Keep {
    const CAP: usize = 100_000;

    fn note(&mut self, plan: &Plan<'_>, idx: usize, rec: &Rec, id: &str, url: Option<&str>) {
        if self.everything {
            return;
        }
        let url_dims = [Dimension::Www, Dimension::Http]
            .into_iter()
            .filter(|&d| plan.on(d));
        let url_double = url_dims
            .clone()
            .any(|d| rec.stored_true & (1 << d.index()) == 0);
        if rec.dirty {
            self.ids.push((idx as u32, id.into()));
        }
        if (rec.dirty || url_double) && url_dims.count() > 0 {
            if let Some(url) = url {
                self.urls.push((idx as u32, url.into()));
            }
        }
        if self.ids.len() + self.urls.len() > Self::CAP {
            *self = Keep {
                everything: true,
                ..Keep::default()
            };
        }
    }
}

/// Pass B's answer: the best member of each group, and how many documents to decide its lookups
/// did not find (`None` when it read everything).
struct Ranked {
    best: Vec<Vec<Option<Best>>>,
    missed: Option<usize>,
}

/// The URL as stored and the normalised spellings of every URL that shares its www or http key:
/// with and without one leading `www.`, under `http:` and `https:`.
fn spellings(raw: &str, out: &mut Vec<String>) {
    out.push(raw.to_owned());
    let Some(normalized) = UrlKeys::new(Some(raw)).normalized else {
        return;
    };
    let Ok(url) = url::Url::parse(&normalized) else {
        return;
    };
    let Some(host) = url.host_str() else {
        out.push(normalized);
        return;
    };
    let bare = host.strip_prefix("www.").unwrap_or(host).to_owned();
    let schemes: Vec<&str> = match url.scheme() {
        "http" | "https" => vec!["http", "https"],
        other => vec![other],
    };
    for scheme in schemes {
        for host in [bare.clone(), format!("www.{bare}")] {
            let mut u = url.clone();
            if u.set_scheme(scheme).is_ok() && u.set_host(Some(&host)).is_ok() {
                out.push(u.to_string());
            }
        }
    }
}

/// The groups of a round and which of them it decides: what passes B and C work through.
struct Todo<'r> {
    groups: &'r [Option<Groups>],
    open: &'r Open,
}

/// Where a dimension's stored count sits in [`Rec::stored_counts`].
fn counted_slot(d: Dimension) -> usize {
    usize::from(d == Dimension::Fuzzy)
}

impl Plan<'_> {
    fn alone_stands(&self, d: Dimension, rec: &Rec) -> bool {
        !rec.dirty
            && rec.stored_true & (1 << d.index()) != 0
            && (self.cfg.fields.count(d).is_none() || rec.stored_counts[counted_slot(d)] == 1)
    }

    fn open_groups(&self, recs: &[Rec], groups: &[Option<Groups>]) -> Open {
        let all = self.full || self.mode == Mode::Check;
        let mut open = Open {
            all,
            groups: vec![Vec::new(); 6],
            docs: vec![all; recs.len()],
        };
        if all {
            return open;
        }
        for d in Dimension::ALL {
            let Some(g) = &groups[d.index()] else {
                continue;
            };
            let bit = 1u8 << d.index();
            let counted = self.cfg.fields.count(d).is_some();
            let n = g.count();
            let mut broken = vec![false; n];
            let mut trues = vec![0u32; n];
            let mut best: Vec<Option<RankPrefix>> = vec![None; n];
            let mut rep: Vec<Option<RankPrefix>> = vec![None; n];
            for (i, r) in recs.iter().enumerate() {
                let gi = g.group_of[i];
                if gi == Groups::ALONE {
                    open.docs[i] |= !self.alone_stands(d, r);
                    continue;
                }
                let gi = gi as usize;
                broken[gi] |=
                    r.dirty || (counted && r.stored_counts[counted_slot(d)] != g.sizes[gi]);
                if r.stored_true & bit != 0 {
                    trues[gi] += 1;
                    rep[gi] = Some(r.prefix);
                }
                best[gi] = Some(best[gi].map_or(r.prefix, |b| b.min(r.prefix)));
            }
            let decide: Vec<bool> = (0..n)
                .map(|gi| broken[gi] || trues[gi] != 1 || rep[gi] != best[gi])
                .collect();
            for (i, &gi) in g.group_of.iter().enumerate() {
                if gi != Groups::ALONE && decide[gi as usize] {
                    open.docs[i] = true;
                }
            }
            open.groups[d.index()] = decide;
        }
        open
    }
}

impl<S: Store> Round<'_, S> {
    /// The reads that passes B and C make: the user's filter alone (everything), or that filter
    /// with lookups of the documents to decide by id, content signature and URL, split to the
    /// store's limit. Lookups are used when they are likely cheaper than reading everything.
    fn lookups(
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
        let mut reads = Vec::new();
        let mut chunk: Vec<Filter> = Vec::new();
        let mut size = 0;
        for (field, mut values) in lookups {
            values.sort_unstable();
            values.dedup();
            for part in values.chunks(max) {
                if size + part.len() > max {
                    reads.push(
                        self.cfg
                            .filter
                            .clone()
                            .and(Filter::Or(std::mem::take(&mut chunk))),
                    );
                    size = 0;
                }
                chunk.push(Filter::any_of(field.clone(), part.to_vec()));
                size += part.len();
            }
        }
        if !chunk.is_empty() {
            reads.push(self.cfg.filter.clone().and(Filter::Or(chunk)));
        }
        debug!(reads = reads.len(), "documents to decide are looked up");
        reads
    }

    // ---------------------------------------------------------------- pass B

    async fn pass_b(
        &self,
        report: &mut Report,
        recs: &[Rec],
        by_hash: &[(u64, u32)],
        todo: &Todo<'_>,
        reads: &[Filter],
    ) -> Result<Ranked, EngineError> {
        let Todo { groups, open } = *todo;
        let mut best: Vec<Vec<Option<Best>>> = groups
            .iter()
            .map(|g| {
                g.as_ref()
                    .map_or_else(Vec::new, |g| (0..g.count()).map(|_| None).collect())
            })
            .collect();
        // Only lookups can miss a document; a full read that does not see one saw it deleted.
        let lookups = reads.len() != 1 || reads[0] != self.cfg.filter;
        if best.iter().all(Vec::is_empty) && !lookups {
            return Ok(Ranked { best, missed: None });
        }
        let mut find = Finder::new(recs, by_hash);
        let mut seen = vec![false; recs.len()];
        let mut pages = Rereads::new(self.rank_query(), reads, &self.progress);
        while let Some(page) = pages.next(self.store, report).await? {
            for doc in &page.docs {
                let Some(id) = self.id_of(doc) else { continue };
                let Some(idx) = find.index(id_hash(&id)) else {
                    continue;
                };
                let rec = &recs[idx];
                if !open.docs[idx] {
                    continue;
                }
                seen[idx] = true;
                if !self.same_version(doc, rec) {
                    continue;
                }
                // Most documents are alone in every dimension and need no URL parsing here.
                let grouped = groups.iter().zip(&open.groups).any(|(g, decide)| {
                    g.as_ref().is_some_and(|g| {
                        let gi = g.group_of[idx];
                        gi != Groups::ALONE && (open.all || decide[gi as usize])
                    })
                });
                if !grouped {
                    continue;
                }
                let url = UrlKeys::new(get_str(doc, &self.cfg.fields.url));
                for d in Dimension::ALL {
                    let Some(g) = &groups[d.index()] else {
                        continue;
                    };
                    let gi = g.group_of[idx];
                    if gi == Groups::ALONE || !open.decides(self, d, gi, rec) {
                        continue;
                    }
                    let check = self.key_material(d, &url);
                    let slot = &mut best[d.index()][gi as usize];
                    let better = match slot {
                        None => true,
                        Some(b) => {
                            if *b.check != *check {
                                return Err(EngineError::Store(StoreError::Unsupported(format!(
                            "two different {d} keys share a 64-bit hash ({:?} and {:?}); please report this",
                            b.check, check
                        ))));
                            }
                            compare_full(
                                (rec.prefix, url.normalized.as_deref(), &id),
                                (b.prefix, b.url.as_deref(), &b.id),
                            )
                            .is_lt()
                        }
                    };
                    if better {
                        *slot = Some(Best {
                            prefix: rec.prefix,
                            url: url.normalized.as_deref().map(Into::into),
                            id: id.as_ref().into(),
                            check: check.into(),
                        });
                    }
                }
            }
        }
        let missed = lookups.then(|| {
            open.docs
                .iter()
                .zip(&seen)
                .filter(|(n, s)| **n && !**s)
                .count()
        });
        Ok(Ranked { best, missed })
    }
}

impl Plan<'_> {
    /// What must be equal across a group besides its 64-bit key: the URL key for the URL dimensions,
    /// the host for content dimensions under host scope. Content signatures are their own keys.
    fn key_material(&self, d: Dimension, url: &UrlKeys) -> String {
        match d {
            Dimension::Www => url.www_key.clone().unwrap_or_default(),
            Dimension::Http => url.http_key.clone().unwrap_or_default(),
            _ if self.cfg.scope == Scope::Host => url.host_key.clone().unwrap_or_default(),
            _ => String::new(),
        }
    }

    fn same_version(&self, doc: &Doc, rec: &Rec) -> bool {
        let v = get_i64(doc, &self.cfg.fields.version).unwrap_or(0);
        v == rec.read_version || v == rec.version
    }
}

impl<S: Store> Round<'_, S> {
    // ---------------------------------------------------------------- pass C

    async fn pass_c(
        &self,
        report: &mut Report,
        recs: &[Rec],
        by_hash: &[(u64, u32)],
        todo: &Todo<'_>,
        best: &[Vec<Option<Best>>],
        reads: &[Filter],
    ) -> Result<u64, EngineError> {
        let Todo { groups, open } = *todo;
        let f = &self.cfg.fields;
        let mut unsettled = 0u64;
        let mut batch: Vec<AtomicUpdate> = Vec::new();
        let mut seen = vec![false; recs.len()];
        let mut find = Finder::new(recs, by_hash);
        // Documents whose signature update already counted them as written.
        let mut already: std::collections::HashSet<String> = std::collections::HashSet::new();
        let mut pages = Rereads::new(self.write_query(), reads, &self.progress);
        while let Some(page) = pages.next(self.store, report).await? {
            for doc in &page.docs {
                let Some(id) = self.id_of(doc) else { continue };
                let Some(idx) = find.index(id_hash(&id)) else {
                    // Added after pass A: the next run takes it in.
                    continue;
                };
                let rec = &recs[idx];
                // Lookups may find a document twice; it is decided once.
                if !open.docs[idx] || seen[idx] {
                    continue;
                }
                seen[idx] = true;
                if !self.same_version(doc, rec) {
                    report.documents.changed_during_run += 1;
                    unsettled += 1;
                    continue;
                }
                let mut set = Vec::new();
                for d in Dimension::ALL {
                    let Some(g) = &groups[d.index()] else {
                        continue;
                    };
                    let gi = g.group_of[idx];
                    if !open.decides(self, d, gi, rec) {
                        continue;
                    }
                    let (unique, count) = if gi == Groups::ALONE {
                        (true, 1)
                    } else {
                        let winner = best[d.index()][gi as usize].as_ref();
                        (winner.is_some_and(|b| *b.id == *id), g.sizes[gi as usize])
                    };
                    let mut changed = false;
                    if get_bool(doc, f.unique(d)) != Some(unique) {
                        set.push((f.unique(d).to_owned(), Value::Bool(unique)));
                        changed = true;
                    }
                    if let Some(cf) = f.count(d) {
                        if get_i64(doc, cf) != Some(i64::from(count)) {
                            set.push((cf.to_owned(), Value::from(count)));
                            changed = true;
                        }
                    }
                    if changed {
                        let r = report.dimensions.entry(d.name()).or_default();
                        r.changed += 1;
                        if self.mode == Mode::Check && r.examples.len() < 5 {
                            r.examples.push(id.clone().into_owned());
                        }
                    }
                }
                if set.is_empty() {
                    continue;
                }
                if !self.writes() {
                    if !rec.counted {
                        report.documents.written += 1;
                    }
                    continue;
                }
                if rec.counted {
                    already.insert(id.clone().into_owned());
                }
                batch.push(AtomicUpdate {
                    id: id.into_owned(),
                    version: Some(if rec.version != 0 { rec.version } else { 1 }),
                    set,
                });
                if batch.len() >= self.cfg.batch_size.max(1) {
                    unsettled += self.flush(&mut batch, &mut already, report).await?;
                }
            }
        }
        unsettled += self.flush(&mut batch, &mut already, report).await?;
        let gone = seen
            .iter()
            .zip(&open.docs)
            .filter(|(s, n)| **n && !**s)
            .count() as u64;
        if gone > 0 {
            // Deleted (or moved out of the filter) during the run: their groups shrank.
            debug!(gone, "documents disappeared during the run");
            report.documents.changed_during_run += gone;
            unsettled += gone;
        }
        Ok(unsettled)
    }

    async fn flush(
        &self,
        batch: &mut Vec<AtomicUpdate>,
        already: &mut std::collections::HashSet<String>,
        report: &mut Report,
    ) -> Result<u64, EngineError> {
        if batch.is_empty() {
            return Ok(0);
        }
        let outcome = self.store.update(batch).await?;
        let conflicts = outcome.conflicts.len() as u64;
        report.documents.conflicts += conflicts;
        let rejected: std::collections::HashSet<&String> = outcome.conflicts.iter().collect();
        report.documents.written += batch
            .iter()
            .filter(|u| !rejected.contains(&u.id) && !already.contains(&u.id))
            .count() as u64;
        already.clear();
        batch.clear();
        Ok(conflicts)
    }
}

/// The result of signing one document in pass A.
struct Signed {
    sigs: Sigs,
    blank: bool,
    computed: bool,
    version: i64,
    update: Option<AtomicUpdate>,
}

/// Signs one document from `content` (`Some(None)`: its content vanished), or, given `None`, keeps the
/// signatures it has.
fn sign_one(round: &Plan<'_>, doc: &Doc, content: Option<Option<&Doc>>) -> Option<Signed> {
    let cfg = round.cfg;
    let f = &cfg.fields;
    let id = round.id_of(doc)?;
    let stored = round.stored_sigs(doc);
    let read_version = get_i64(doc, &f.version).unwrap_or(0);
    let Some(content) = content else {
        return Some(Signed {
            sigs: stored,
            blank: false,
            computed: false,
            version: read_version,
            update: None,
        });
    };
    // Sign from the real-time copy: it is the current text, and its version guards the update.
    let content = content?;
    let version = get_i64(content, &f.version).unwrap_or(read_version);
    let current = round.stored_sigs(content);
    let text = get_str(content, &f.text).unwrap_or("");
    let blank = text.chars().all(char::is_whitespace);
    let titles = get_strings(content, &f.title);
    let descriptions = get_strings(content, &f.description);
    let signer = &cfg.signer;
    let mut sigs = current.clone();
    let mut set: Vec<(String, Value)> = Vec::new();
    let recompute = |have: Option<i64>| round.full || have.is_none();
    let mut computed = false;
    let content_dims = round.on(Dimension::Exact) || round.on(Dimension::Fuzzy);
    if content_dims && recompute(current.exact) {
        sigs.exact = Some(signer.exact(text));
        computed = true;
    }
    if content_dims && recompute(current.fuzzy) {
        let profile = signer.profile(text);
        sigs.fuzzy = Some(profile.signature());
        computed = true;
        if cfg.write_fuzzy_text && signer.scheme == Scheme::Yacy {
            let text_t = profile.text_t();
            let value = if text_t.is_empty() {
                Value::Null
            } else {
                Value::String(text_t)
            };
            let stored_text = content
                .get(&f.fuzzy_signature_text)
                .cloned()
                .unwrap_or(Value::Null);
            if value != stored_text {
                set.push((f.fuzzy_signature_text.clone(), value));
            }
        }
    }
    // A title counts when its first value is not empty; a description when any value is not.
    let has_title = titles.first().is_some_and(|t| !t.is_empty());
    let has_description = descriptions.iter().any(|d| !d.is_empty());
    if round.on(Dimension::Title) && (round.full || current.title.is_none()) {
        sigs.title = if has_title {
            signer.title(&titles[..1])
        } else {
            None
        };
        computed |= has_title;
    }
    if round.on(Dimension::Description) && (round.full || current.description.is_none()) {
        sigs.description = if has_description {
            signer.description(&descriptions)
        } else {
            None
        };
        computed |= has_description;
    }
    for (field, new, old) in [
        (&f.exact_signature, sigs.exact, current.exact),
        (&f.fuzzy_signature, sigs.fuzzy, current.fuzzy),
        (&f.title_signature, sigs.title, current.title),
        (
            &f.description_signature,
            sigs.description,
            current.description,
        ),
    ] {
        if new != old {
            set.push((field.clone(), new.map_or(Value::Null, Value::from)));
        }
    }
    let update = (!set.is_empty()).then(|| AtomicUpdate {
        id: id.into_owned(),
        version: Some(if version != 0 { version } else { 1 }),
        set,
    });
    Some(Signed {
        sigs,
        blank,
        computed,
        version,
        update,
    })
}

/// Walks a read page by page: the cursor handling and progress of every pass.
struct Pages<'p> {
    cursor: Option<String>,
    done: bool,
    progress: &'p ProgressBar,
}

impl<'p> Pages<'p> {
    fn new(progress: &'p ProgressBar) -> Self {
        Pages {
            cursor: None,
            done: false,
            progress,
        }
    }

    /// The next page of `query` (which may change between pages, over the same documents), or
    /// `None` once the store said the read is complete.
    async fn next<S: Store>(
        &mut self,
        store: &S,
        query: &ReadQuery,
    ) -> Result<Option<Page>, StoreError> {
        if self.done {
            return Ok(None);
        }
        let page = store.read_page(query, self.cursor.as_deref()).await?;
        self.progress.inc(page.docs.len() as u64);
        match &page.next {
            Some(next) => self.cursor = Some(next.clone()),
            None => self.done = true,
        }
        Ok(Some(page))
    }
}

/// Walks the reads of passes B and C one after the other (the user's filter alone, or its lookups),
/// counting the documents read again.
struct Rereads<'p> {
    queries: Vec<ReadQuery>,
    at: usize,
    pages: Pages<'p>,
}

impl<'p> Rereads<'p> {
    fn new(base: ReadQuery, reads: &[Filter], progress: &'p ProgressBar) -> Self {
        let queries = reads
            .iter()
            .map(|filter| ReadQuery {
                filter: filter.clone(),
                ..base.clone()
            })
            .collect();
        Rereads {
            queries,
            at: 0,
            pages: Pages::new(progress),
        }
    }

    async fn next<S: Store>(
        &mut self,
        store: &S,
        report: &mut Report,
    ) -> Result<Option<Page>, StoreError> {
        while let Some(query) = self.queries.get(self.at) {
            if let Some(page) = self.pages.next(store, query).await? {
                report.documents.reread += page.docs.len() as u64;
                return Ok(Some(page));
            }
            self.at += 1;
            self.pages = Pages::new(self.pages.progress);
        }
        Ok(None)
    }
}

/// Finds a document's record by id hash. A store normally returns the documents in the same order
/// in every pass, so the record after the last one found is tried first; any other order falls back to
/// a binary search and gives the same answers.
struct Finder<'r> {
    recs: &'r [Rec],
    by_hash: &'r [(u64, u32)],
    next: usize,
}

impl<'r> Finder<'r> {
    fn new(recs: &'r [Rec], by_hash: &'r [(u64, u32)]) -> Self {
        Finder {
            recs,
            by_hash,
            next: 0,
        }
    }

    fn index(&mut self, h: u64) -> Option<usize> {
        let idx = match self.recs.get(self.next) {
            // Id hashes are unique (checked after pass A), so an equal hash is the record.
            Some(r) if r.id_hash == h => self.next,
            _ => self
                .by_hash
                .binary_search_by(|(k, _)| k.cmp(&h))
                .ok()
                .map(|i| self.by_hash[i].1 as usize)?,
        };
        self.next = idx + 1;
        Some(idx)
    }
}

/// A 64-bit key for a string: the first 8 bytes of its MD5. Never persisted; collisions are detected
/// in pass B.
fn key_hash(s: &str) -> u64 {
    md5_long(s.as_bytes()) as u64
}

fn has(doc: &Doc, field: &str) -> bool {
    !matches!(doc.get(field), None | Some(Value::Null))
}

fn get_i64(doc: &Doc, field: &str) -> Option<i64> {
    match doc.get(field)? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.parse().ok(),
        Value::Array(a) => a.first().and_then(|v| v.as_i64()),
        _ => None,
    }
}

fn get_bool(doc: &Doc, field: &str) -> Option<bool> {
    match doc.get(field)? {
        Value::Bool(b) => Some(*b),
        Value::String(s) => Some(s.starts_with(['t', 'T', '1'])),
        _ => None,
    }
}

fn get_str<'d>(doc: &'d Doc, field: &str) -> Option<&'d str> {
    match doc.get(field)? {
        Value::String(s) => Some(s),
        Value::Array(a) => a.first().and_then(Value::as_str),
        _ => None,
    }
}

fn get_strings<'d>(doc: &'d Doc, field: &str) -> Vec<&'d str> {
    match doc.get(field) {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}
