//! `solr-dedup serve`: load the prediction index, check the listening rules, open the state
//! directory, start the schedule, serve the router of [`crate::server`] (its connections under the
//! deadlines and the cap of [`crate::server::listen`]) until SIGINT or SIGTERM (then cancel the run
//! going on after its batch in flight, and stop).
//!
//! The server reaches the index through [`IndexBackend`], the [`Backend`] built here over the stores
//! and the `run` command's job (`super::job::perform`). Everything runs on one runtime, built
//! once: the requests, the schedule, and the runs and prediction rebuilds, which drive their futures
//! on it from threads of their own (they do their CPU work there). A Solr core's light reads (the
//! page's health, counts, change marks, groups) go through one store and client opened at start
//! and kept; a run opens the index as `run` does (the schema read and fitted again, its own
//! client, so that its report counts its own requests).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Context};
use async_trait::async_trait;
use tokio::runtime::Handle;
use tracing::{info, warn};

use super::common::changes;
use super::common::load::{load_chrome, load_rules};
use super::common::open::{core_profile, open_failure, target, Index};
use super::common::open::{open, Purpose};
use super::common::{init_logging, runtime, Threads};
use super::job::{held_to_record, perform, ready, refuse_output};
use super::progress::Spinner;
use super::urls::index_of;
use super::{Exit, Failure};
use crate::browse::{biggest_groups, explain, lookup, on_host, Found, GroupView};
use crate::config::{JobConfig, ServeConfig, Source};
use crate::engine::{Dimension, EngineError, Order, Progress};
use crate::server::listen::{self, Limits};
use crate::server::predictions::{self, LoadError, Loader, Predictions, Reload};
use crate::server::runs::{Ended, RunOptions, Runs, State};
use crate::server::schedule;
use crate::server::{AppState, Backend, BackendError, Metrics, Settings};
use crate::store::open::parse_filter;
use crate::store::{error_line, open_light, Filter, LightIndex, Store};

/// The index as the server sees it: the `run` command's job, and light reads for the page.
pub struct IndexBackend {
    job: JobConfig,
    filter: Filter,
    /// The server's runtime: a run drives its job on it from its own thread.
    rt: Handle,
    /// How light reads reach the index: a Solr core's store kept for the server's life, or the
    /// file opened at each read.
    reads: LightIndex,
}

impl IndexBackend {
    /// A backend for the job's source (`ready`), on the current runtime, which it keeps; fails as
    /// `run` would on a filter or a core URL it refuses. Solr being down is not a reason not to
    /// serve: the runs and the health report it.
    pub async fn open(mut job: JobConfig) -> Result<Self, Failure> {
        if job.engine.profile_auto {
            // The views and the prediction index read the flags under the core's profile.
            if let Err(e) = core_profile(&job.index, &mut job.engine.fields).await {
                tracing::warn!(
                    "the views read YaCy's fields (*_unique_b) until serve starts again: the core's profile could not be read: {e}"
                );
            }
        }
        let target = target(&job.index, &job.engine.fields, "no index")?;
        let filter = parse_filter(target.location, target.filter).map_err(open_failure)?;
        let reads = open_light(target).await.map_err(open_failure)?;
        Ok(IndexBackend {
            job,
            filter,
            rt: Handle::current(),
            reads,
        })
    }

    /// The store for a few light reads: the kept one, or the file opened now.
    fn store(&self) -> Result<Arc<dyn Store>, BackendError> {
        self.reads
            .store()
            .map_err(|e| BackendError::new(e.kind(), error_line(&e)))
    }
}

/// Solr's admin UI for the core at `core_url` (`http://h:8983/solr/core` has its overview at
/// `http://h:8983/solr/#/core/core-overview`); none when the URL has no core after a path.
fn solr_admin_link(core_url: &str) -> Option<String> {
    let trimmed = core_url.trim_end_matches('/');
    let (base, core) = trimmed.rsplit_once('/')?;
    if core.is_empty() || base.ends_with('/') || !base.contains("://") {
        return None;
    }
    Some(format!("{base}/#/{core}/core-overview"))
}

/// The time (Unix seconds) in a Solr `_version_`: its milliseconds shifted left by 20 bits. None
/// when it is not a number or not a time between 2000 and 2200 (a core's own versions).
fn version_time(version: &str) -> Option<f64> {
    let v: f64 = version.trim().parse().ok()?;
    let secs = v / f64::from(1u32 << 20) / 1000.0;
    (946_684_800.0..7_258_118_400.0)
        .contains(&secs)
        .then_some(secs)
}

#[async_trait]
impl Backend for IndexBackend {
    fn describe(&self) -> String {
        match (&self.reads.file(), &self.reads.core_url()) {
            (Some(path), _) => format!("file {}", path.display()),
            (None, Some(core_url)) => format!("solr {core_url}"),
            (None, None) => "no index".to_owned(),
        }
    }

    fn document_link(&self, id: &str) -> Option<String> {
        let core_url = self.reads.core_url()?;
        let q = format!("{{!term f={}}}{id}", self.job.engine.fields.id);
        let q: String = url::form_urlencoded::byte_serialize(q.as_bytes()).collect();
        Some(format!("{core_url}/select?q={q}"))
    }

    fn admin_link(&self) -> Option<String> {
        solr_admin_link(self.reads.core_url()?)
    }

    fn settings(&self) -> Option<Settings> {
        let e = &self.job.engine;
        Some(Settings {
            scheme: e.signer.scheme.name().to_owned(),
            dimensions: e.dimensions.iter().map(|d| d.name().to_owned()).collect(),
            scope: e.scope.name().to_owned(),
            filter: self.job.index.filter.clone(),
            chrome_model: self.job.chrome.as_ref().map(|p| p.display().to_string()),
        })
    }

    async fn health(&self) -> Result<(), BackendError> {
        self.reads
            .ping()
            .await
            .map_err(|e| BackendError::new(e.kind(), e.to_string()))
    }

    fn effective(&self, options: RunOptions) -> RunOptions {
        let file_without_output =
            matches!(self.job.index.source, Source::File(_)) && self.job.output.is_none();
        RunOptions {
            check: options.check,
            full: options.full || self.job.engine.full,
            dry_run: options.dry_run || self.job.engine.dry_run || file_without_output,
        }
    }

    fn run(&self, options: RunOptions, progress: &dyn Progress) -> Ended {
        let mut job = self.job.clone();
        reread_rules(&mut job);
        reread_chrome(&mut job);
        job.check = options.check;
        job.engine.full = options.full;
        job.engine.dry_run = options.dry_run;
        job.report = None;
        job.quiet = true;
        match self.rt.block_on(perform(&job, progress)) {
            Ok(Ok(report)) => Ended {
                state: State::Succeeded,
                report: Some(report),
                error: None,
            },
            Ok(Err((EngineError::Cancelled(mut report), _))) => {
                let error = if matches!(job.index.source, Source::File(_)) {
                    // The file store writes --output only when a run ends: nothing was written.
                    report.nothing_written();
                    "cancelled: nothing was written (in file mode the output is written when a run ends)"
                } else {
                    "cancelled: what it wrote is complete, and the next run takes up the rest"
                };
                Ended {
                    state: State::Cancelled,
                    report: Some(*report),
                    error: Some(error.to_owned()),
                }
            }
            Ok(Err((e, mut partial))) => {
                // What it did before it failed stays in its record (and in /metrics).
                if matches!(job.index.source, Source::File(_)) {
                    partial.nothing_written();
                }
                let d = &partial.documents;
                let error = match d.unanswered {
                    0 => e.to_string(),
                    n => format!(
                        "{e} ({} documents written, {n} more sent without an answer: they may have landed)",
                        d.written
                    ),
                };
                Ended {
                    state: State::Failed,
                    report: Some(*partial),
                    error: Some(error),
                }
            }
            Err(failure) => Ended {
                state: State::Failed,
                report: None,
                error: Some(format!("{:#}", failure.error)),
            },
        }
    }

    async fn count(&self) -> Option<u64> {
        self.reads.core_url()?;
        self.store().ok()?.count(&self.filter).await.ok()?
    }

    async fn change_mark(&self) -> Result<String, BackendError> {
        let mut mark = self.store()?.change_mark(&self.filter).await?;
        // Rules learnt again change the order representatives are ranked by: a change too, so
        // that the flags follow them without waiting for the crawl (each run reads them again).
        if let Some(path) = &self.job.rules {
            if self.job.engine.preference.order == Order::Canonical {
                if let Ok(m) = std::fs::metadata(path) {
                    let modified = m
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map_or(0, |d| d.as_nanos());
                    mark.push_str(&format!(" rules {modified} {}", m.len()));
                }
            }
        }
        Ok(mark)
    }

    async fn last_change(&self) -> Option<f64> {
        match self.reads.file() {
            Some(path) => std::fs::metadata(path)
                .ok()?
                .modified()
                .ok()?
                .duration_since(std::time::UNIX_EPOCH)
                .ok()
                .map(|d| d.as_secs_f64()),
            None => {
                // The mark is `COUNT/MAX_VERSION`; Solr makes a `_version_` from the time it
                // was given, in milliseconds, shifted left by 20 bits.
                let mark = self.store().ok()?.change_mark(&self.filter).await.ok()?;
                version_time(mark.rsplit_once('/')?.1)
            }
        }
    }

    async fn lookup(&self, q: &str, members: usize) -> Result<Vec<Found>, BackendError> {
        let store = self.store()?;
        Ok(lookup(&store, &self.job.engine.fields, &self.filter, q, members).await?)
    }

    async fn groups(
        &self,
        dimension: Dimension,
        limit: usize,
        members: usize,
        host: Option<&str>,
    ) -> Result<Option<Vec<GroupView>>, BackendError> {
        let store = self.store()?;
        let fields = &self.job.engine.fields;
        let within = host.map(|h| on_host(&fields.url, h));
        let mut groups = biggest_groups(
            &store,
            fields,
            &self.filter,
            dimension,
            limit,
            members,
            within.as_ref(),
        )
        .await?;
        // Each member's rank and the rule that put the representative first, as runs decide.
        for g in groups.iter_mut().flatten() {
            explain(
                g,
                self.job.engine.preference,
                self.job.engine.url_rules.as_deref(),
            );
        }
        Ok(groups)
    }
}

/// Reads the chrome model again for a run, so that a model learnt again while serve runs signs
/// its pages (a page signed under another model version of its site is signed again). A file that
/// is not there or cannot be read leaves the model read before, with a warning.
fn reread_chrome(job: &mut JobConfig) {
    let Some(path) = &job.chrome else {
        return;
    };
    match load_chrome(path) {
        Ok(set) => job.engine.chrome = Some(set),
        Err(f) => warn!(
            "{:#}; this run signs by the chrome model read before",
            f.error
        ),
    }
}

/// Reads the rules file again for a run, so that rules learnt while serve runs rank its
/// representatives (the kept order, `common::decided`, tells the run which groups that moved). A
/// file that is not there or cannot be read leaves the rules read before, with a warning.
fn reread_rules(job: &mut JobConfig) {
    let Some(path) = &job.rules else {
        return;
    };
    if job.engine.preference.order != Order::Canonical || !path.exists() {
        return;
    }
    match load_rules(path) {
        Ok(mut rules) => {
            rules.recompute();
            job.engine.url_rules = Some(Arc::new(rules));
        }
        Err(f) => warn!(
            "{:#}; this run ranks representatives by the rules read before",
            f.error
        ),
    }
}

/// Serves until stopped.
pub fn run(c: &ServeConfig) -> Result<Exit, Failure> {
    init_logging(&c.log.at_least(1));
    let token = c.token.as_ref().map(|t| t.expose().to_owned());
    if !c.listen.ip().is_loopback() && token.is_none() {
        return Err(anyhow!(
            "listening on {} (not loopback) needs a bearer token: --token-file FILE or SOLR_DEDUP_TOKEN",
            c.listen
        )
        .into());
    }
    // A rules file that is not there yet is waited for (the URL endpoints answer 503 until it
    // is); one that is there must parse.
    let rules = match c.rules.as_deref() {
        Some(path) if !path.exists() => Some(None),
        Some(path) => Some(Some(load_rules(path)?)),
        None => None,
    };
    if (rules.is_some() || c.every.is_some() || c.after_quiet.is_some())
        && matches!(c.job.index.source, Source::Missing)
    {
        return Err(anyhow!(
            "no index: give --solr URL (or set SOLR_URL) for a Solr core, or --input FILE for a file"
        )
        .into());
    }
    if c.job.reconfigure {
        return Err(anyhow!(
            "--reconfigure is for `run`: record the settings with `solr-dedup run --reconfigure` (serve's runs are then held to them)"
        )
        .into());
    }
    if c.job.report.is_some() {
        return Err(anyhow!(
            "--report is for `run`; serve keeps every run's report in --state-dir (GET /api/runs)"
        )
        .into());
    }
    // Read now, not at every run: the --near-* parameters and the --chrome model, and the rules
    // the representatives are ranked by when they are there (each run reads them again: see
    // `IndexBackend::run`).
    let mut job = match &c.job.rules {
        Some(path) if !path.exists() => {
            warn!(rules = %path.display(), "no rules yet: runs rank representatives without them");
            ready(&JobConfig {
                rules: None,
                ..c.job.clone()
            })?
        }
        _ => ready(&c.job)?,
    };
    job.rules.clone_from(&c.job.rules);
    // What would make every run fail is refused now, with the line `run` would print (the core's
    // URL and credentials: `IndexBackend::open`).
    refuse_output(&job)?;
    if let Source::File(path) = &job.index.source {
        std::fs::metadata(path)
            .with_context(|| format!("cannot read the input {}", path.display()))?;
    }
    let plan = schedule::Schedule {
        every: c.every,
        after_quiet: c.after_quiet,
    };
    // The server's one runtime: requests, the schedule, and the futures of runs and rebuilds.
    runtime(Threads::Workers)?.block_on(async {
        held_at_start(&job).await?;
        let backend: Option<Arc<dyn Backend>> = match job.index.source {
            Source::Missing => None,
            _ => Some(Arc::new(IndexBackend::open(job.clone()).await?)),
        };
        let runs = Arc::new(Runs::open(&c.state_dir).map_err(anyhow::Error::new)?);
        let index = match (rules, c.rules.as_deref()) {
            (Some(Some(rules)), Some(path)) => {
                let ix = prediction_index(&job, rules).await?;
                info!(pages = ix.len(), "prediction index loaded");
                let loader = reloader(&c.job, path, Handle::current());
                Some(Arc::new(Predictions::new(ix, Some(loader))))
            }
            (Some(None), Some(path)) => {
                let why = format!(
                    "no rules yet: {} is not there; make it with `solr-dedup urls learn --out {}` (serve loads it within {} s)",
                    path.display(),
                    path.display(),
                    RULES_POLL.as_secs()
                );
                warn!("{why}");
                let loader = reloader(&c.job, path, Handle::current());
                Some(Arc::new(Predictions::waiting(loader, why)))
            }
            _ => None,
        };
        let state = Arc::new(AppState {
            backend,
            runs: runs.clone(),
            index,
            token,
            frame_ancestors: c.frame_ancestors.clone(),
            schedule: plan.describe(),
            metrics: Metrics::default(),
            next_run: Default::default(),
        });
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        if let Some(p) = &state.index {
            predictions::follow(p.clone(), runs.clone(), stop_rx.clone());
            if let Some(path) = &c.rules {
                follow_rules(p.clone(), path.clone(), stop_rx.clone());
            }
        }
        schedule::spawn(state.clone(), plan, stop_rx);
        let listener =
            listen::bind(c.listen).with_context(|| format!("cannot listen on {}", c.listen))?;
        let addr = listener
            .local_addr()
            .context("cannot read the listening address")?;
        // One line a script (or a test) can read the port from.
        eprintln!("serving on http://{addr}");
        let shutdown = async move {
            stopped().await;
            info!("stopping: the run going on ends after its batch in flight (a second signal stops at once)");
            stop_tx.send_replace(true);
            tokio::spawn(async {
                stopped().await;
                // The run's record reads `interrupted` at the next start; nothing is lost.
                eprintln!("stopped at once: the run going on is interrupted; the next run converges");
                std::process::exit(130);
            });
            // The run going on finishes its batch in flight and ends cancelled.
            runs.stop().await;
        };
        listen::serve(listener, state, Limits::for_this_process(), shutdown).await;
        Ok::<_, Failure>(())
    })?;
    Ok(Exit::Ok)
}

/// Refuses to serve a core whose recorded settings (see `common::settings`) differ from serve's
/// own, with the line a run would print: every run it started would stop on them. A core that
/// cannot be opened now is not checked here (its runs are, and the health probe reports it).
async fn held_at_start(job: &JobConfig) -> Result<(), Failure> {
    if !matches!(job.index.source, Source::Solr(_)) {
        return Ok(());
    }
    let mut engine = job.engine.clone();
    let index = Index {
        config: &job.index,
        missing: "no index",
    };
    let purpose = Purpose::Job {
        engine: &mut engine,
        writes: false,
        allow_lossy: job.allow_lossy,
        near_optional: job.near_optional,
        output: crate::store::file::Output::Stdout,
        format: job.output_format,
    };
    match open(index, purpose).await {
        // A serve whose runs write nothing (`--dry-run`) records nothing either.
        Ok(_) => held_to_record(job, &engine, !job.engine.dry_run).await,
        Err(f) => {
            warn!(
                "{:#}; the settings recorded with the core are checked at each run",
                f.error
            );
            Ok(())
        }
    }
}

/// The prediction index of the job's index under `rules` (one light read).
async fn prediction_index(
    job: &JobConfig,
    rules: crate::urlrules::Rules,
) -> Result<crate::urlrules::predict::Index, Failure> {
    let index = Index {
        config: &job.index,
        missing: "no index",
    };
    let (fields, batch) = (&job.engine.fields, job.engine.batch_size);
    index_of(index, fields, batch, rules, &Spinner::new(true)).await
}

/// Builds the prediction index again (the same source and filter, the rules file read again, so
/// that rules learnt meanwhile take effect), for the rebuild after a run: on the server's runtime
/// `rt`, from the rebuild's own thread.
fn reloader(job: &JobConfig, rules: &Path, rt: Handle) -> Loader {
    let job = job.clone();
    let rules = rules.to_path_buf();
    Box::new(move |current| {
        let rules = load_rules(&rules).map_err(|f| LoadError(f.error.into()))?;
        // The change state the last run kept holds every document's id, URL and exact flags as
        // the run left them: no read of the index. (Runs that write nothing keep none: a state
        // there would be an older run's.)
        let f = &job.engine.fields;
        let needed = crate::learn::urls::index_fields(f, true);
        let use_state = !job.engine.dry_run && job.changes;
        // The index in use reflects the state before the last run's, under the same rules: the
        // pages that run changed are removed and added again, and nothing else is touched.
        let delta = match (&current.from_state, use_state) {
            (Some(from), true) if *current.index.rules() == rules => {
                changes::kept_delta(&job.index, job.state_dir.as_deref(), f, from)
            }
            _ => None,
        };
        // Only while the index is as the state has it: nothing newer, nothing deleted.
        let delta = delta.filter(|k| rt.block_on(unchanged_since(&job, k.mark, k.count)));
        if let Some(delta) = delta {
            let docs = delta.docs.clone();
            let mut index = current.index.clone();
            let (mut removed, mut added) = (0u64, 0u64);
            let applied: std::io::Result<()> = delta.into_iter().try_for_each(|entry| {
                match entry? {
                    (true, doc) => {
                        crate::learn::urls::remove_doc(&mut index, &doc, f, true);
                        removed += 1;
                    }
                    (false, doc) => {
                        crate::learn::urls::add_doc(&mut index, &doc, f, true);
                        added += 1;
                    }
                }
                Ok(())
            });
            match applied {
                Ok(()) => {
                    info!(
                        pages = index.len(),
                        removed, added, "prediction index updated from the change"
                    );
                    return Ok(Reload {
                        index,
                        from_state: Some(docs),
                        loaded_from: "delta",
                    });
                }
                Err(e) => warn!("the change state's delta cannot be read ({e}); building again"),
            }
        }
        let kept = match use_state {
            false => None,
            true => changes::kept_docs(&job.index, job.state_dir.as_deref(), &needed),
        };
        let kept = kept.filter(|k| rt.block_on(unchanged_since(&job, k.mark, k.count)));
        if let Some(docs) = kept {
            let name = docs.docs.clone();
            let mut index = crate::urlrules::predict::Index::new(rules.clone());
            let built: std::io::Result<()> = docs.into_iter().try_for_each(|doc| {
                crate::learn::urls::add_doc(&mut index, &doc?, f, true);
                Ok(())
            });
            match built {
                Ok(()) => {
                    info!(
                        pages = index.len(),
                        "prediction index built from the change state"
                    );
                    return Ok(Reload {
                        index,
                        from_state: Some(name),
                        loaded_from: "state",
                    });
                }
                Err(e) => warn!("the change state cannot be read ({e}); reading the index"),
            }
        }
        rt.block_on(prediction_index(&job, rules))
            .map(Reload::from)
            .map_err(|f| LoadError(f.error.into()))
    })
}

/// Whether the job's index has no version above `mark` and `count` documents: as the change state
/// with that mark has it (two small requests; `false` when the index cannot tell).
async fn unchanged_since(job: &JobConfig, mark: i64, count: u64) -> bool {
    let index = Index {
        config: &job.index,
        missing: "no index",
    };
    let f = &job.engine.fields;
    let required = [("id", f.id.as_str())];
    let purpose = Purpose::Read {
        fields: f,
        required: &required,
        light: None,
        optional: None,
    };
    let Ok(opened) = open(index, purpose).await else {
        return false;
    };
    let (store, filter) = (&opened.store, &opened.filter);
    let max = store.max_version(filter, &f.version).await;
    let now = store.count(filter).await;
    matches!((max, now), (Ok(Some(v)), Ok(Some(n))) if v <= mark && n == count)
}

/// How often serve looks at its rules file: a file written anew (`urls learn --out`) is loaded
/// within this, without waiting for a run.
const RULES_POLL: Duration = Duration::from_secs(2);

/// What tells one version of a file from the next: its modification time and size (`None` when
/// it is not there).
fn file_mark(path: &Path) -> Option<(std::time::SystemTime, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

/// Follows the rules file at `path` for `predictions`: loads it once it is there (while there is
/// none yet), and loads it again whenever it is written anew, so that predictions follow new
/// rules within seconds and not only after the next run. A file that is gone or cannot be read
/// leaves the index loaded before (the rebuild says why in `/api/status`).
fn follow_rules(
    predictions: Arc<Predictions>,
    path: PathBuf,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    tokio::spawn(async move {
        let mut seen = file_mark(&path);
        loop {
            tokio::select! {
                _ = tokio::time::sleep(RULES_POLL) => {}
                _ = stop.changed() => return,
            }
            let now = file_mark(&path);
            let waiting = predictions.waiting_for().is_some();
            if now.is_some() && (now != seen || waiting) {
                if !waiting {
                    info!(rules = %path.display(), "the rules file changed: the prediction index is built again");
                }
                predictions.reload();
            }
            seen = now;
        }
    });
}

/// SIGINT or SIGTERM.
async fn stopped() {
    let int = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    let _ = int.await;
                    return;
                }
            };
        tokio::select! {
            _ = int => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = int.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_holds_its_time() {
        // 2026-11-24 00:00:00 UTC in milliseconds, shifted as Solr does.
        let v = (1_795_478_400_000u64 << 20) + 7;
        assert_eq!(
            version_time(&v.to_string()).map(f64::round),
            Some(1_795_478_400.0)
        );
        assert_eq!(
            version_time("1.8826593075036816E18").map(|s| s > 1.7e9),
            Some(true)
        );
        assert_eq!(version_time("null"), None);
        assert_eq!(version_time("12"), None);
    }

    #[test]
    fn a_core_url_has_its_admin_overview() {
        assert_eq!(
            solr_admin_link("http://127.0.0.1:8983/solr/crawl").as_deref(),
            Some("http://127.0.0.1:8983/solr/#/crawl/core-overview")
        );
        assert_eq!(
            solr_admin_link("https://h/x/solr/c/").as_deref(),
            Some("https://h/x/solr/#/c/core-overview")
        );
        assert_eq!(solr_admin_link("core"), None);
    }
}
