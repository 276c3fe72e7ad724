//! `solr-dedup serve`: load the prediction index, check the listening rules, open the state
//! directory, start the schedule, serve the router of [`crate::server`] until SIGINT or SIGTERM (then
//! cancel the run going on after its batch in flight, and stop).
//!
//! The server reaches the index through [`IndexBackend`], the [`Backend`] built here over the stores
//! and the `run` command's job ([`super::job::perform`]).

use std::sync::Arc;

use anyhow::{anyhow, Context};
use tracing::{info, warn};

use super::job::{check_filter, connect, file_filter, init_logging, perform};
use super::progress::Spinner;
use super::urls::{index_of, load_rules, runtime};
use super::{Exit, Failure};
use crate::config::{JobConfig, ServeConfig, Source};
use crate::engine::biggest::{biggest_groups, GroupView};
use crate::engine::{Dimension, EngineError, Progress};
use crate::server::runs::{Ended, RunOptions, Runs, State};
use crate::server::schedule;
use crate::server::{router, AppState, Backend, Metrics};
use crate::store::file::{FileStore, Output, OutputFormat};
use crate::store::solr::filter::fqs;
use crate::store::solr::SolrStore;
use crate::store::{CommitMode, Filter, Store};

/// The index as the server sees it: the `run` command's job, and light reads for the page.
pub struct IndexBackend {
    job: JobConfig,
    filter: Filter,
    /// The core's URL without credentials (Solr only), checked once.
    core_url: Option<String>,
}

/// Runs `f` to its end on a runtime of its own: the backend's callers are blocking threads.
fn block_on<F: std::future::Future>(f: F) -> Result<F::Output, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a runtime: {e}"))?;
    Ok(rt.block_on(f))
}

impl IndexBackend {
    /// A backend for the job's source; fails as `run` would on a filter or a core URL it refuses.
    pub fn new(job: JobConfig) -> Result<Self, Failure> {
        let filter = match (&job.source, &job.filter) {
            (_, None) => Filter::All,
            (Source::File(_), Some(text)) => file_filter(text)?,
            (_, Some(text)) => Filter::Solr(text.clone()),
        };
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

    /// The store, opened for one call: the backend's callers are blocking threads, each call runs on
    /// a runtime of its own (see [`block_on`]), and a file is read afresh.
    fn open_store(&self) -> Result<Box<dyn Store>, String> {
        let fields = &self.job.engine.fields;
        match &self.job.source {
            Source::File(path) => {
                let store = FileStore::open_with(
                    path,
                    Output::Stdout,
                    OutputFormat::Updates,
                    &fields.id,
                    &fields.version,
                    self.job.max_line_bytes,
                )
                .map_err(|e| e.to_string())?;
                Ok(Box::new(store))
            }
            Source::Solr(solr) => {
                let client = connect(solr).map_err(|e| format!("{:#}", e.error))?;
                Ok(Box::new(SolrStore::new(
                    client,
                    &fields.id,
                    &fields.version,
                    CommitMode::None,
                    false,
                )))
            }
            Source::Missing => Err("no index".to_owned()),
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
        for fq in fqs(&self.filter) {
            params.push(("fq".to_owned(), fq));
        }
        let answer = block_on(client.select(params)).ok()?.ok()?;
        answer.pointer("/response/numFound")?.as_u64()
    }

    fn change_mark(&self) -> Result<String, String> {
        let store = self.open_store()?;
        block_on(store.change_mark(&self.filter))?.map_err(|e| e.to_string())
    }

    fn groups(
        &self,
        dimension: Dimension,
        limit: usize,
        members: usize,
    ) -> Result<Option<Vec<GroupView>>, String> {
        let store = self.open_store()?;
        let fields = &self.job.engine.fields;
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
    if let Some(path) = &c.job.chrome {
        // Checked now, not at the first run.
        super::chrome::load(path, c.job.engine.near.shingle)?;
    }
    // What would make every run fail is refused now, with the line `run` would print (the core's
    // URL and credentials: `IndexBackend::new`).
    match &c.job.source {
        Source::Solr(_) => {
            if c.job.output.is_some() {
                return Err(anyhow!(
                    "--output is for file mode; against Solr the updates go to the core (use --dry-run to write nothing)"
                )
                .into());
            }
        }
        Source::File(path) => {
            std::fs::metadata(path)
                .with_context(|| format!("cannot read the input {}", path.display()))?;
        }
        Source::Missing => {}
    }
    let backend: Option<Arc<dyn Backend>> = match c.job.source {
        Source::Missing => None,
        _ => Some(Arc::new(IndexBackend::new(c.job.clone())?)),
    };
    let runs = Arc::new(Runs::open(&c.state_dir).map_err(|e| anyhow!(e))?);
    let plan = schedule::Schedule {
        every: c.every,
        after_quiet: c.after_quiet,
    };
    runtime()?.block_on(async {
        let index = match rules {
            Some(rules) => Some(
                index_of(
                    &c.job.source,
                    &c.job.filter,
                    &c.job.engine.fields,
                    c.job.engine.batch_size,
                    rules,
                    &Spinner::new(true),
                )
                .await?,
            ),
            None => None,
        };
        if let Some(ix) = &index {
            info!(pages = ix.len(), "prediction index loaded");
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
