//! What every command shares, written once: the index opened from its settings ([`open`]), the
//! files read before the work starts ([`load`]), how errors become exit codes ([`failure`]), the
//! logs and the async runtime.
//!
//! Each command turns its configuration into these resources here and then does only its own work,
//! as ripgrep's `HiArgs` turns flags into a searcher and a printer once. The commands import this
//! module and never each other for it.

pub(crate) mod changes;
pub(crate) mod decided;
pub(crate) mod failure;
pub(crate) mod load;
pub(crate) mod open;
pub(crate) mod settings;

use anyhow::Context;
use tracing_subscriber::EnvFilter;

use super::Failure;
use crate::config::Logging;

/// Logs go to standard error: warnings by default, more with -v / -vv, or as `RUST_LOG` says;
/// colours only for a person at a terminal (a log file, a pipe or journald gets plain text, and
/// NO_COLOR turns them off anywhere), as the configuration settled ([`Logging`]).
pub(crate) fn init_logging(log: &Logging) {
    let default = match log.verbosity {
        0 => "warn",
        1 => "info",
        _ => "debug,hyper_util=info,reqwest=info",
    };
    let filter = log
        .directives
        .as_deref()
        .and_then(|d| EnvFilter::try_new(d).ok())
        .unwrap_or_else(|| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(log.colour)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}

/// Where a command's runtime runs its tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Threads {
    /// On the calling thread alone: a file, the Schema API.
    Caller,
    /// Two workers beside the calling thread, so that a Solr store's read-ahead goes on while the
    /// caller signs, and `serve` answers while a run goes on (its one runtime, for its life).
    Workers,
}

/// The async runtime of a command (the one place one is built).
pub(crate) fn runtime(threads: Threads) -> Result<tokio::runtime::Runtime, Failure> {
    let mut builder = match threads {
        Threads::Caller => tokio::runtime::Builder::new_current_thread(),
        Threads::Workers => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(2);
            b
        }
    };
    Ok(builder
        .enable_all()
        .build()
        .context("cannot start the runtime")?)
}
