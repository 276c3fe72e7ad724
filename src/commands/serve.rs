//! `solr-dedup serve`: load the prediction index, check the listening rules, open the state
//! directory, start the schedule, serve the router of [`crate::server`] until SIGINT or SIGTERM (then
//! cancel the run going on after its batch in flight, and stop).
//!
//! The server reaches the index through [`IndexBackend`], the [`Backend`] built here over the stores
//! and the `run` command's job ([`super::job::perform`]).

use std::sync::Arc;

use anyhow::{anyhow, Context};
use tracing::{info, warn};

use super::common::load::load_rules;
use super::common::open::{check_filter, connect, open_unchecked, parse_filter, Index};
use super::common::{init_logging, runtime, Threads};
use super::job::{perform, ready, refuse_output};
use super::progress::Spinner;
use super::urls::index_of;
use super::{Exit, Failure};
use crate::config::{JobConfig, ServeConfig, Source};
use crate::engine::{Dimension, EngineError, Progress};
use crate::groups::{biggest_groups, GroupView};
use crate::server::predictions::{self, Loader, Predictions};
use crate::server::runs::{Ended, RunOptions, Runs, State};
use crate::server::schedule;
use crate::server::{router, AppState, Backend, Metrics};
use crate::store::{Filter, Store};

/// The index as the server sees it: the `run` command's job, and light reads for the page.
pub struct IndexBackend {
    job: JobConfig,
    filter: Filter,
    /// The core's URL without credentials (Solr only), checked once.
    core_url: Option<String>,
}

/// Runs `f` to its end on a runtime of its own: the backend's callers are blocking threads.
fn block_on<F: std::future::Future>(f: F) -> Result<F::Output, String> {
    let rt = runtime(Threads::Caller).map_err(|e| format!("{:#}", e.error))?;
    Ok(rt.block_on(f))
}

impl IndexBackend {
    /// A backend for the job's source ([`ready`]); fails as `run` would on a filter or a core URL
    /// it refuses.
    pub fn new(job: JobConfig) -> Result<Self, Failure> {
        let filter = parse_filter(&job.source, job.filter.as_deref())?;
        let core_url = match &job.source {
            Source::Solr(solr) => {
                let client = connect(solr)?;
                if let Some(text) = &job.filter {
                    // A filter Solr refuses would fail every run: refuse it now. Solr being down
                    // is not a reason not to serve; the runs report it.
                    match block_on(check_filter(&client, text)).map_err(|e| anyhow!(e))? {
                        Err(f) if f.exit == Exit::Usage => return Err(f),
                        Err(f) => warn!("{:#}", f.error),
                        Ok(()) => {}
                    }
                }
                Some(client.core_url().to_owned())
            }
            _ => None,
        };
        Ok(IndexBackend {
            job,
            filter,
            core_url,
        })
    }

    /// The index for a few light reads of the page (opened per request: the file may have changed).
    fn index(&self) -> Index<'_> {
        Index {
            source: &self.job.source,
            filter: self.job.filter.as_deref(),
            max_line_bytes: self.job.max_line_bytes,
            missing: "no index",
        }
    }
}

impl Backend for IndexBackend {
    fn describe(&self) -> String {
        match &self.job.source {
            Source::File(path) => format!("file {}", path.display()),
            Source::Solr(_) => format!("solr {}", self.core_url.as_deref().unwrap_or("")),
            Source::Missing => "none".to_owned(),
        }
    }

    fn document_link(&self, id: &str) -> Option<String> {
        let core_url = self.core_url.as_deref()?;
        let q = format!("{{!term f={}}}{id}", self.job.engine.fields.id);
        let q: String = url::form_urlencoded::byte_serialize(q.as_bytes()).collect();
        Some(format!("{core_url}/select?q={q}"))
    }

    fn health(&self) -> Result<(), String> {
        match &self.job.source {
            Source::File(path) => std::fs::metadata(path)
                .map(|_| ())
                .map_err(|e| format!("cannot read {}: {e}", path.display())),
            Source::Solr(solr) => {
                // One try with a short time limit: a page or a probe waits seconds, not minutes.
                let mut quick = solr.clone();
                quick.retries = 0;
                quick.timeout = quick.timeout.min(std::time::Duration::from_secs(5));
                let client = connect(&quick).map_err(|e| format!("{:#}", e.error))?;
                let ping = vec![
                    ("q".to_owned(), "*:*".to_owned()),
                    ("rows".to_owned(), "0".to_owned()),
                ];
                block_on(client.select(ping))?
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            }
            Source::Missing => Err("no index".to_owned()),
        }
    }

    fn effective(&self, options: RunOptions) -> RunOptions {
        let file_without_output =
            matches!(self.job.source, Source::File(_)) && self.job.output.is_none();
        RunOptions {
            check: options.check,
            full: options.full || self.job.engine.full,
            dry_run: options.dry_run || self.job.engine.dry_run || file_without_output,
        }
    }

    fn run(&self, options: RunOptions, progress: &dyn Progress) -> Ended {
        let mut job = self.job.clone();
        job.check = options.check;
        job.engine.full = options.full;
        job.engine.dry_run = options.dry_run;
        job.report = None;
        job.quiet = true;
        match perform(&job, progress) {
            Ok(Ok(report)) => Ended {
                state: State::Succeeded,
                report: Some(report),
                error: None,
            },
            Ok(Err(EngineError::Cancelled(mut report))) => {
                let error = if matches!(job.source, Source::File(_)) {
                    // The file store writes --output only when a run ends: nothing was written.
                    report.documents.written = 0;
                    report.work.written_docs = 0;
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
            Ok(Err(e)) => Ended {
                state: State::Failed,
                report: None,
                error: Some(e.to_string()),
            },
            Err(failure) => Ended {
                state: State::Failed,
                report: None,
                error: Some(format!("{:#}", failure.error)),
            },
        }
    }

    fn count(&self) -> Option<u64> {
        let Source::Solr(solr) = &self.job.source else {
            return None;
        };
        let client = connect(solr).ok()?;
        let mut params = vec![
            ("q".to_owned(), "*:*".to_owned()),
            ("rows".to_owned(), "0".to_owned()),
        ];
        for fq in crate::store::solr::filter::fqs(&self.filter) {
            params.push(("fq".to_owned(), fq));
        }
        let answer = block_on(client.select(params)).ok()?.ok()?;
        answer.pointer("/response/numFound")?.as_u64()
    }

    fn change_mark(&self) -> Result<String, String> {
        let store = open_unchecked(self.index(), &self.job.engine.fields)?;
        block_on(store.change_mark(&self.filter))?.map_err(|e| e.to_string())
    }

    fn groups(
        &self,
        dimension: Dimension,
        limit: usize,
        members: usize,
    ) -> Result<Option<Vec<GroupView>>, String> {
        let fields = &self.job.engine.fields;
        let store = open_unchecked(self.index(), fields)?;
        block_on(biggest_groups(
            &store,
            fields,
            &self.filter,
            dimension,
            limit,
            members,
        ))?
        .map_err(|e| e.to_string())
    }
}

/// The bearer token: the first line of `--token-file`, else `SOLR_DEDUP_TOKEN`.
fn token(c: &ServeConfig) -> Result<Option<String>, Failure> {
    let token = match &c.token_file {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the token file {}", path.display()))?;
            Some(text.lines().next().unwrap_or("").trim().to_owned())
        }
        None => std::env::var("SOLR_DEDUP_TOKEN")
            .ok()
            .map(|t| t.trim().to_owned()),
    };
    match token {
        Some(t) if t.is_empty() => Err(anyhow!(
            "the bearer token is empty; put at least 16 characters in --token-file or SOLR_DEDUP_TOKEN"
        )
        .into()),
        Some(t) if t.len() < 16 => Err(anyhow!(
            "the bearer token is too short ({} characters); use at least 16 (e.g. `openssl rand -hex 24`)",
            t.len()
        )
        .into()),
        t => Ok(t),
    }
}

/// Serves until stopped.
pub fn run(c: &ServeConfig) -> Result<Exit, Failure> {
    init_logging(c.verbosity.max(1));
    let token = token(c)?;
    if !c.listen.ip().is_loopback() && token.is_none() {
        return Err(anyhow!(
            "listening on {} (not loopback) needs a bearer token: --token-file FILE or SOLR_DEDUP_TOKEN",
            c.listen
        )
        .into());
    }
    let rules = c.rules.as_deref().map(load_rules).transpose()?;
    if (rules.is_some() || c.every.is_some() || c.after_quiet.is_some())
        && matches!(c.job.source, Source::Missing)
    {
        return Err(anyhow!(
            "no index: give --solr URL (or set SOLR_URL) for a Solr core, or --input FILE for a file"
        )
        .into());
    }
    if c.job.report.is_some() {
        return Err(anyhow!(
            "--report is for `run`; serve keeps every run's report in --state-dir (GET /api/runs)"
        )
        .into());
    }
    // Read now, not at every run: the --near-* parameters and the --chrome model.
    let job = ready(&c.job)?;
    // What would make every run fail is refused now, with the line `run` would print (the core's
    // URL and credentials: `IndexBackend::new`).
    refuse_output(&job)?;
    if let Source::File(path) = &job.source {
        std::fs::metadata(path)
            .with_context(|| format!("cannot read the input {}", path.display()))?;
    }
    let backend: Option<Arc<dyn Backend>> = match job.source {
        Source::Missing => None,
        _ => Some(Arc::new(IndexBackend::new(job.clone())?)),
    };
    let runs = Arc::new(Runs::open(&c.state_dir).map_err(|e| anyhow!(e))?);
    let plan = schedule::Schedule {
        every: c.every,
        after_quiet: c.after_quiet,
    };
    runtime(Threads::Workers)?.block_on(async {
        let index = match rules {
            Some(rules) => Some(
                prediction_index(&job, rules.clone()).await?,
            )
            .map(|ix| Arc::new(Predictions::new(ix, Some(reloader(&c.job, rules))))),
            None => None,
        };
        if let Some(p) = &index {
            info!(pages = p.status().urls, "prediction index loaded");
        }
        let state = Arc::new(AppState {
            backend,
            runs: runs.clone(),
            index,
            token,
            frame_ancestors: c.frame_ancestors.clone(),
            schedule: plan.describe(),
            metrics: Metrics::default(),
        });
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        if let Some(p) = &state.index {
            predictions::follow(p.clone(), runs.clone(), stop_rx.clone());
        }
        schedule::spawn(state.clone(), plan, stop_rx);
        let listener = tokio::net::TcpListener::bind(c.listen)
            .await
            .with_context(|| format!("cannot listen on {}", c.listen))?;
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
        axum::serve(listener, router(state))
            .with_graceful_shutdown(shutdown)
            .await
            .context("the server failed")?;
        Ok::<_, Failure>(())
    })?;
    Ok(Exit::Ok)
}

/// The prediction index of the job's index under `rules` (one light read).
async fn prediction_index(
    job: &JobConfig,
    rules: crate::urlrules::Rules,
) -> Result<crate::urlrules::predict::Index, Failure> {
    let index = Index {
        source: &job.source,
        filter: job.filter.as_deref(),
        max_line_bytes: job.max_line_bytes,
        missing: "no index",
    };
    let (fields, batch) = (&job.engine.fields, job.engine.batch_size);
    index_of(index, fields, batch, rules, &Spinner::new(true)).await
}

/// Builds the prediction index again as at start (the same source, filter and rules), for the
/// rebuild after a run.
fn reloader(job: &JobConfig, rules: crate::urlrules::Rules) -> Loader {
    let job = job.clone();
    Box::new(move || {
        block_on(prediction_index(&job, rules.clone()))?.map_err(|f| format!("{:#}", f.error))
    })
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
