//! `solr-dedup serve`: load the prediction index, check the listening rules, serve the router of
//! [`crate::server`] until SIGINT or SIGTERM.

use std::sync::Arc;

use anyhow::{anyhow, Context};
use tracing::info;

use super::job::init_logging;
use super::progress::Spinner;
use super::urls::{index_of, load_rules, runtime};
use super::{Exit, Failure};
use crate::config::{ServeConfig, Source};
use crate::server::{router, AppState, Metrics};

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
    if rules.is_some() && matches!(c.source, Source::Missing) {
        return Err(anyhow!(
            "no index: give --solr URL (or set SOLR_URL) for a Solr core, or --input FILE for a file"
        )
        .into());
    }
    runtime()?.block_on(async {
        let index = match rules {
            Some(rules) => Some(
                index_of(
                    &c.source,
                    &c.filter,
                    &c.fields,
                    c.batch_size,
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
            index,
            token,
            metrics: Metrics::default(),
        });
        let listener = tokio::net::TcpListener::bind(c.listen)
            .await
            .with_context(|| format!("cannot listen on {}", c.listen))?;
        let addr = listener
            .local_addr()
            .context("cannot read the listening address")?;
        // One line a script (or a test) can read the port from.
        eprintln!("serving on http://{addr}");
        axum::serve(listener, router(state))
            .with_graceful_shutdown(stopped())
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
