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
//!   record per document (the fixed part of its rank, its version, its stored flags and counts) and
//!   its 64-bit key in each dimension (in `Keys`, which spill past their share). Documents
//!   without signatures (or all, with `--full`) have their text fetched by id, are signed, and get a
//!   signature update guarded by the version that was read. When most of a page needs its text, the
//!   next page is read with the text inline instead. Signing and building the records run on every
//!   core, a page at a time.
//! - **Groups** are built from the records alone ([`group`]).
//! - **Open groups.** From the records alone (they carry each document's stored flags and counts),
//!   the round finds the groups that no longer stand as a run left them (`Open`): a dirty member,
//!   a stored count that is not the group's size, not exactly one true flag, a representative
//!   without the best rank prefix. Under `--full` (and `check --full`) every group is open; `check`
//!   decides what an incremental run would. When none is,
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
//! Memory is bounded by the `--memory` budget ([`EngineConfig::memory`], default
//! [`DEFAULT_MEMORY`]) except for a few bytes a group. Each structure that grows with the index
//! keeps a share of the budget in memory and the rest in anonymous temporary files
//! (`crate::spill`): the records (`Recs`) and the runs that sort their id-hash index
//! (`spill::SortedPairs`) and each dimension's keys (`spill::Runs`) an eighth each; the signatures waiting for pass C, the
//! near-duplicate join, the ids and URLs pass A keeps for lookups (`open::Keep`) and the strings of
//! pass B's best members (`rank::Bests`) a 32nd each; the keys of each dimension (`Keys`) and the
//! index of the waiting signatures a 512th each. What stays in memory whatever the budget: the
//! groupings (8 bytes a member of a group, or 4 bytes a document in a dimension where most
//! documents have a double; [`group`]), pass B's slot per group (40 bytes), and a bit or two a
//! document while a round runs (which are decided, which were seen). Nothing depends on document
//! size. The report's `memory` section says the budget, the bytes spilled and the bytes of the
//! groupings (`records_bytes`).
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

pub mod clean;
mod derived;
pub(crate) mod doc;
mod error;
pub mod group;
mod guard;
mod lookup;
mod near;
mod open;
pub(crate) mod pages;
mod pending;
pub mod progress;
mod rank;
mod records;
pub mod report;
mod scan;
pub mod schema_fit;
mod sign;
pub mod url_key;
mod work;
mod write;

use std::time::Instant;

use tracing::{debug, info};

use crate::signature::chrome::ChromeSet;
use crate::signature::near::{NearParams, NearSigner};
use crate::signature::{Scheme, Signer};
use crate::spill;
use crate::store::{CommitMode, Doc, Filter, ReadQuery, Store, StoreError};

pub use crate::model::{Dimension, DimensionError, Exclusion, FieldNames};
pub use error::EngineError;
use group::Groups;
pub use guard::{SchemeMismatch, SchemeSettings};
use open::Todo;
pub use progress::{Phase, Progress, Silent};
use rank::Ranked;
use records::{Keys, Rec, Records, Recs};
pub use report::{DimensionReport, DocumentCounts, MemoryReport, Name, Report};
pub use schema_fit::{needs, FieldKind, Need};
pub use spill::DEFAULT_MEMORY;
pub use url_key::{compare_full, deciding_rule, Order, Preference, RankPrefix, Rule, UrlKeys};
pub use work::SolrWork;

/// The default of [`EngineConfig::fuzzy_min_words`] (`--fuzzy-min-words`). On the simulated crawl of
/// `tools/repr-eval` every fuzzy group that joined distinct contents had a profile of at most 3
/// words; the 1-word groups alone hid 2,560 distinct pages (2,593 on the second seed;
/// `BENCHMARKS.md`, "Which copy stays"), and no group of 4 words or more joined distinct pages.
pub const DEFAULT_FUZZY_MIN_WORDS: u32 = 4;

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
    /// The preference order's switches.
    pub preference: Preference,
    /// The URL rules the canonical order ranks by (`--rules`).
    pub url_rules: Option<std::sync::Arc<crate::urlrules::Rules>>,
    /// The order the index's flags were last decided under, as the caller kept it: an incremental
    /// run decides again the groups whose best rank prefix is shared by members whose prefix this
    /// order changed (see `open.rs`).
    pub decided_under: DecidedUnder,
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
    /// The core neither stores nor streams the text field: its pages are signed at index time
    /// (`solr-plugin`), a page that needs signing stops the run before it writes
    /// ([`EngineError::TextNotStored`]), and no signature is written (an atomic update would drop
    /// the text). Set from the schema.
    pub text_not_stored: bool,
    /// The fewest profile words a fuzzy signature needs to take part in the fuzzy dimension
    /// (`--fuzzy-min-words`, default [`DEFAULT_FUZZY_MIN_WORDS`]); below it a document is alone
    /// ([`Exclusion::WeakProfile`]). 0 groups profiles of any size, as YaCy does.
    pub fuzzy_min_words: u32,
    /// Write `fuzzy_signature_words_i` with every fuzzy signature (left out when the core has no
    /// such field and `fuzzy_min_words` is 0). With `fuzzy_min_words` above 0 the field is needed:
    /// runs that read no text learn a profile's size from it.
    pub write_fuzzy_words: bool,
    /// How many rounds to run at most when documents change under the run.
    pub max_rounds: u32,
    /// The near-duplicate parameters (`near` dimension).
    pub near: NearParams,
    /// The chrome left out of near-duplicate signatures, per host (`--chrome`).
    pub chrome: Option<std::sync::Arc<ChromeSet>>,
    /// The memory budget in bytes (`--memory`): past their share of it, the structures that spill
    /// go to temporary files (see [`Report::memory`]).
    pub memory: u64,
    /// Where the temporary files go (`--temp-dir`); the system's temporary folder when `None`.
    pub temp_dir: Option<std::path::PathBuf>,
    /// The core's schema lets Solr apply the in-place profile's updates in place (set by the open
    /// path's schema check): the report counts them apart (`work.written_in_place_docs`).
    pub in_place_writes: bool,
    /// Take the profile from the core's schema (`--profile auto`, the default): the in-place one
    /// when the core has its fields ([`schema_fit::detect_profile`]); else `fields.profile` as set.
    pub profile_auto: bool,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            fields: FieldNames::default(),
            signer: Signer::new(Scheme::Yacy),
            dimensions: Dimension::ALL.to_vec(),
            scope: Scope::Global,
            preference: Preference::default(),
            url_rules: None,
            decided_under: DecidedUnder::Unknown,
            filter: Filter::All,
            full: false,
            dry_run: false,
            batch_size: 1000,
            commit: CommitMode::Hard,
            write_fuzzy_text: true,
            text_not_stored: false,
            fuzzy_min_words: DEFAULT_FUZZY_MIN_WORDS,
            write_fuzzy_words: true,
            max_rounds: 3,
            near: NearParams::default(),
            chrome: None,
            memory: DEFAULT_MEMORY,
            temp_dir: None,
            profile_auto: true,
            in_place_writes: false,
        }
    }
}

/// The preference order (the `--prefer-*` switches and the URL rules) under which the index's flags
/// were last decided, as the caller keeps it between runs (`run` and `serve` in their state
/// folder). Members that tie on the best rank prefix are ordered by their URL; when the order has
/// changed, a representative that holds the shared best prefix may not be the one the URL picks.
#[derive(Debug, Clone, Default)]
pub enum DecidedUnder {
    /// Not known (no state kept, or kept for another `--filter`): every group whose best rank
    /// prefix is shared is decided again.
    #[default]
    Unknown,
    /// This order.
    Order {
        /// The switches.
        preference: Preference,
        /// The rules, if the order ranked by any.
        rules: Option<std::sync::Arc<crate::urlrules::Rules>>,
    },
}

impl DecidedUnder {
    /// The order `cfg` decides under.
    pub fn of(cfg: &EngineConfig) -> Self {
        DecidedUnder::Order {
            preference: cfg.preference,
            rules: cfg.url_rules.clone(),
        }
    }
}

/// `run` and `check` differ only in whether they write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Decide and write.
    Run,
    /// Decide and report what a run would change; write nothing.
    Check,
}

/// The fields a run reads light (every document, once per round; passes B and C read subsets of
/// them). A store that can stream these cheaply (Solr's `/export`, when all have docValues) serves
/// the scans that way.
pub fn light_fields(cfg: &EngineConfig) -> Vec<String> {
    Plan::new(cfg, Mode::Run, false).light_fields()
}

/// Runs the postprocessing against a store and returns the report.
pub async fn run<S: Store>(store: &S, cfg: &EngineConfig) -> Result<Report, EngineError> {
    execute(store, cfg, Mode::Run, &Silent).await
}

/// Read-only: what a full run would change. The report's [`Report::check_failed`] says whether the
/// index is out of date.
pub async fn check<S: Store>(store: &S, cfg: &EngineConfig) -> Result<Report, EngineError> {
    execute(store, cfg, Mode::Check, &Silent).await
}

/// [`run`] or [`check`], telling `progress` how far it is.
pub async fn execute<S: Store>(
    store: &S,
    cfg: &EngineConfig,
    mode: Mode,
    progress: &dyn Progress,
) -> Result<Report, EngineError> {
    execute_keeping(store, cfg, mode, progress)
        .await
        .map_err(|(e, _)| e)
}

/// [`execute`], and on failure also the report of what the run did before it failed (documents
/// read, signed and written, the store's work), so that a failed run's report says what it left
/// behind.
pub async fn execute_keeping<S: Store>(
    store: &S,
    cfg: &EngineConfig,
    mode: Mode,
    progress: &dyn Progress,
) -> Result<Report, (EngineError, Box<Report>)> {
    let requests_before = store.requests();
    let mut report = new_report(store, cfg, mode);
    match execute_into(store, cfg, mode, progress, &mut report).await {
        Ok(()) => Ok(report),
        Err(e) => {
            report.work.requests = store.requests() - requests_before;
            report.work.modelled_solr_ms =
                report.work.modelled_ms(&store.cost_model()).round() as u64;
            Err((e, Box::new(report)))
        }
    }
}

/// The report of a run that found, from versions, nothing changed since a run that left every
/// group as it decided (under the same settings): nothing decided, read again or written.
/// `documents.read` is the documents counted; `dimensions` are the ones that run reported.
pub fn settled_report<S: Store>(
    store: &S,
    cfg: &EngineConfig,
    mode: Mode,
    count: u64,
    dimensions: std::collections::BTreeMap<Name, DimensionReport>,
) -> Report {
    let mut report = new_report(store, cfg, mode);
    report.documents.read = count;
    report.dimensions = dimensions;
    report
}

fn new_report<S: Store>(store: &S, cfg: &EngineConfig, mode: Mode) -> Report {
    Report {
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
        memory: MemoryReport {
            budget_bytes: cfg.memory,
            ..MemoryReport::default()
        },
        ..Report::default()
    }
}

async fn execute_into<S: Store>(
    store: &S,
    cfg: &EngineConfig,
    mode: Mode,
    progress: &dyn Progress,
    report: &mut Report,
) -> Result<(), EngineError> {
    // One area for the run: its count adds up every round's spills, also when the run fails.
    let spill = spill::SpillArea::new(cfg.temp_dir.as_deref(), cfg.memory);
    let outcome = execute_rounds(store, cfg, mode, progress, report, &spill).await;
    report.memory.spilled_bytes = spill.written();
    match outcome {
        Err(EngineError::Cancelled(mut r)) => {
            r.memory = report.memory.clone();
            Err(EngineError::Cancelled(r))
        }
        other => other,
    }
}

async fn execute_rounds<S: Store>(
    store: &S,
    cfg: &EngineConfig,
    mode: Mode,
    progress: &dyn Progress,
    report: &mut Report,
    spill: &spill::SpillArea,
) -> Result<(), EngineError> {
    let writes = mode == Mode::Run && !cfg.dry_run;
    let requests_before = store.requests();
    // Whether the scheme guard ran (pass A runs it before the first document it signs).
    let guarded = std::cell::Cell::new(false);
    let mut full = cfg.full;
    loop {
        report.rounds += 1;
        progress.round(report.rounds);
        let round = Round {
            store,
            plan: Plan::new(cfg, mode, full),
            progress,
            guarded: &guarded,
            spill: spill.clone(),
        };
        let outcome = match round.execute(report).await {
            Ok(outcome) => outcome,
            Err(EngineError::Cancelled(_)) => {
                progress.finish();
                if writes && report.documents.written > 0 {
                    // The batches written are complete; let the next run's reads see them.
                    store.refresh().await?;
                }
                report.work.requests = store.requests() - requests_before;
                report.work.modelled_solr_ms =
                    report.work.modelled_ms(&store.cost_model()).round() as u64;
                return Err(EngineError::Cancelled(Box::new(report.clone())));
            }
            Err(e) => return Err(e),
        };
        if !writes || outcome.unsettled == 0 {
            break;
        }
        if report.rounds >= cfg.max_rounds {
            report.work.requests = store.requests() - requests_before;
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
        *report
            .phases_ms
            .entry(Phase::Commit.name().into())
            .or_default() += t.elapsed().as_millis() as u64;
    } else if writes {
        // Nothing to write still produces the (empty) output a file user asked for.
        store.commit(CommitMode::None).await?;
    }
    report.work.requests = store.requests() - requests_before;
    report.work.modelled_solr_ms = report.work.modelled_ms(&store.cost_model()).round() as u64;
    Ok(())
}

/// The signatures of one document, as stored or as computed.
#[derive(Debug, Clone, Default, PartialEq)]
struct Sigs {
    exact: Option<i64>,
    fuzzy: Option<i64>,
    title: Option<i64>,
    description: Option<i64>,
}

struct RoundOutcome {
    unsettled: u64,
}

/// What pass A hands on to the rest of the round.
struct Scanned {
    /// One record per document read, in store order.
    recs: Recs,
    /// Their keys.
    keys: Keys,
    /// How many documents were signed from their text.
    signed: u64,
    /// The ids and URLs kept for lookups in passes B and C.
    keep: open::Keep,
    /// The signatures to write with the flags in pass C.
    pending: pending::Pending,
    /// The near-duplicate keys of the documents signed in this round.
    join: near::Join,
}

/// What pass B ranks: the groups to decide, read through `reads`.
struct RankInput<'r> {
    records: Records<'r>,
    todo: &'r Todo<'r>,
    reads: &'r [Filter],
}

/// What pass C writes: the groups to decide with the best member of each, read through `reads`.
struct WriteInput<'r> {
    records: Records<'r>,
    todo: &'r Todo<'r>,
    best: &'r rank::Bests,
    reads: &'r [Filter],
    /// The documents pass B read and kept with their flags: written from, not read again.
    stash: Option<Vec<Doc>>,
}

/// Pass C's answer.
struct Written {
    /// Documents that changed under the run (conflicts, new versions, deletions): their groups are
    /// decided again in the next round.
    unsettled: u64,
}

/// What the near dimension's clusters are found from.
struct NearInput<'r> {
    records: Records<'r>,
    /// The keys of the documents signed in this round.
    join: near::Join,
    /// Ids kept for lookups; the near join adds the documents it finds.
    keep: &'r mut open::Keep,
}

/// What a round decides with, apart from the store: shared with the signing threads.
struct Plan<'a> {
    cfg: &'a EngineConfig,
    mode: Mode,
    full: bool,
    enabled: [bool; Dimension::COUNT],
    /// The near-duplicate signer, and the version its values are stored under.
    near: NearSigner,
    near_version: String,
    empty_profile: i64,
    /// The exact signature of the empty text.
    empty_exact: i64,
    /// The order the flags were decided under, when it is not this one (`Some(None)`: not known).
    earlier: Option<Option<(Preference, Option<std::sync::Arc<crate::urlrules::Rules>>)>>,
}

struct Round<'a, S: Store> {
    store: &'a S,
    plan: Plan<'a>,
    progress: &'a dyn Progress,
    guarded: &'a std::cell::Cell<bool>,
    /// Where the structures that spill put what goes past their share of the budget.
    spill: spill::SpillArea,
}

impl<'a> Plan<'a> {
    fn new(cfg: &'a EngineConfig, mode: Mode, full: bool) -> Self {
        let mut enabled = [false; Dimension::COUNT];
        for d in &cfg.dimensions {
            enabled[d.index()] = true;
        }
        Plan {
            cfg,
            mode,
            full,
            enabled,
            near: NearSigner::new(cfg.near),
            near_version: cfg.near.version(),
            empty_profile: cfg.signer.profile("").signature(),
            empty_exact: cfg.signer.exact(""),
            earlier: match &cfg.decided_under {
                DecidedUnder::Unknown => Some(None),
                DecidedUnder::Order { preference, rules }
                    if *preference == cfg.preference
                        && rules.as_deref() == cfg.url_rules.as_deref() =>
                {
                    None
                }
                DecidedUnder::Order { preference, rules } => {
                    Some(Some((*preference, rules.clone())))
                }
            },
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

    /// The fewest profile words a document needs to take part in the fuzzy dimension (0: any).
    fn min_words(&self) -> u32 {
        if self.on(Dimension::Fuzzy) {
            self.cfg.fuzzy_min_words
        } else {
            0
        }
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
        if self.min_words() > 0 {
            // A profile's size decides whether it takes part; the text is not read to learn it.
            fl.push(f.fuzzy_signature_words.clone());
        }
        if self.on(Dimension::Near) {
            fl.push(f.near_version.clone());
            fl.push(f.near_group.clone());
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

    /// What pass B reads when it looks documents up: its own fields and pass C's, which it keeps.
    fn rank_write_query(&self) -> ReadQuery {
        let mut query = self.write_query();
        query.fields.push(self.cfg.fields.url.clone());
        query
    }

    /// What pass C reads: the stored flags and counts it compares with the decision.
    fn write_query(&self) -> ReadQuery {
        let f = &self.cfg.fields;
        let mut fields = vec![f.id.clone(), f.version.clone()];
        for d in Dimension::ALL.into_iter().filter(|&d| self.on(d)) {
            fields.push(f.unique(d).to_owned());
            fields.extend(f.count(d).map(str::to_owned));
        }
        if self.on(Dimension::Near) {
            fields.push(f.near_group.clone());
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
        self.store.hint_rereads(&self.plan.query());
        let t = Instant::now();
        self.progress.phase(Phase::Scan);
        if let Some(total) = self.store.known_count(&self.plan.cfg.filter) {
            self.progress.expect(total);
        }
        let changed_before = report.documents.changed_during_run;
        let Scanned {
            recs,
            keys,
            signed: signed_docs,
            mut keep,
            pending: sigs,
            join,
        } = self.pass_a(report).await?;
        // Re-indexed between the light read and the text read: not in this round's records. The
        // round decides the rest; the next one takes them in.
        let skipped = report.documents.changed_during_run - changed_before;
        *report
            .phases_ms
            .entry(Phase::Scan.name().into())
            .or_default() += t.elapsed().as_millis() as u64;
        info!(
            documents = recs.len(),
            signed = signed_docs,
            to_write = sigs.len(),
            "scanned"
        );

        let t = Instant::now();
        // Id hashes and record indices in id-hash order, to find a record by its id's hash: sorted
        // in runs of an eighth of the budget, in a temporary file past that.
        let index_error = |e| StoreError::io("cannot keep the index of the records", e);
        let by_hash = spill::SortedPairs::sort(
            &self.spill,
            self.spill.share(Recs::SHARE),
            recs.iter().enumerate().map(|(i, r)| (r.id_hash, i as u32)),
        )
        .map_err(index_error)?;
        recs.check()?;
        let mut last = None;
        for p in by_hash.iter() {
            let (hash, _) = p.map_err(index_error)?;
            if last == Some(hash) {
                // Two ids with one 64-bit hash, or one id twice in the input: either way the
                // records cannot be told apart, so no decision would be safe.
                return Err(EngineError::DuplicateId { hash });
            }
            last = Some(hash);
        }
        let mut groups: Vec<Option<Groups>> = Vec::with_capacity(Dimension::COUNT);
        for d in Dimension::ALL {
            groups.push(if self.plan.on(d) && d != Dimension::Near {
                Some(
                    keys.groups(d, &recs, &self.spill, self.spill.share(Recs::SHARE))
                        .map_err(|e| StoreError::io("cannot read the grouping keys back", e))?,
                )
            } else {
                None
            });
        }
        if self.plan.on(Dimension::Near) {
            let t = Instant::now();
            // Its own phase: it reads documents again (all of them at most).
            self.progress.phase(Phase::Near);
            self.progress.expect(recs.len() as u64);
            let input = NearInput {
                records: Records {
                    recs: &recs,
                    by_hash: &by_hash,
                },
                join,
                keep: &mut keep,
            };
            let near = self.near_groups(report, input).await?;
            groups[Dimension::Near.index()] = Some(near);
            *report
                .phases_ms
                .entry(Phase::Near.name().into())
                .or_default() += t.elapsed().as_millis() as u64;
        }
        for d in Dimension::ALL {
            if let Some(g) = &groups[d.index()] {
                let r = report.dimensions.entry(d.name().into()).or_default();
                r.groups = g.count() as u64;
                r.doubles = g.doubles();
            }
        }
        // What stays in memory whatever the budget: the groupings.
        let held = groups.iter().flatten().map(Groups::held_bytes).sum::<u64>();
        report.memory.records_bytes = report.memory.records_bytes.max(held);
        let open = self.plan.open_groups(&recs, &groups);
        recs.check()?;
        let needed = open.docs.count_ones(..);
        info!(documents = needed, "documents in groups to decide");
        report.documents.decided += needed as u64;
        if needed == 0 {
            // Every group stands as the last run left it: nothing to rank or write.
            self.progress.finish();
            return Ok(RoundOutcome { unsettled: skipped });
        }
        let mut reads = self.lookups(&recs, &keys, &groups, &open, keep, needed);
        let todo = Todo {
            groups: &groups,
            open: &open,
            pending: &sigs,
        };
        self.progress.phase(Phase::Rank);
        // A full read goes over every document again; lookups over those of the groups to decide.
        let rereads = |reads: &[Filter]| {
            if reads.len() == 1 && reads[0] == self.plan.cfg.filter {
                recs.len() as u64
            } else {
                needed as u64
            }
        };
        self.progress.expect(rereads(&reads));
        let records = Records {
            recs: &recs,
            by_hash: &by_hash,
        };
        let mut best = self
            .pass_b(
                report,
                RankInput {
                    records,
                    todo: &todo,
                    reads: &reads,
                },
            )
            .await?;
        if let Some(missed) = best.missed.filter(|&m| m > 0) {
            // A document of a group to decide was not found by its keys: a URL stored in another
            // spelling than its normalised form. Reading everything finds it.
            debug!(missed, "lookups missed documents; ranking from a full read");
            reads = vec![self.plan.cfg.filter.clone()];
            self.progress.phase(Phase::Rank);
            self.progress.expect(rereads(&reads));
            best = self
                .pass_b(
                    report,
                    RankInput {
                        records,
                        todo: &todo,
                        reads: &reads,
                    },
                )
                .await?;
        }
        let Ranked { best, stash, .. } = best;
        best.count_deciding_rules(report);
        *report
            .phases_ms
            .entry(Phase::Rank.name().into())
            .or_default() += t.elapsed().as_millis() as u64;

        let t = Instant::now();
        self.progress.phase(Phase::Write);
        self.progress.expect(rereads(&reads));
        let Written { unsettled } = self
            .pass_c(
                report,
                WriteInput {
                    records,
                    todo: &todo,
                    best: &best,
                    reads: &reads,
                    stash,
                },
            )
            .await?;
        *report
            .phases_ms
            .entry(Phase::Write.name().into())
            .or_default() += t.elapsed().as_millis() as u64;
        self.progress.finish();
        Ok(RoundOutcome {
            unsettled: unsettled + skipped,
        })
    }
}
