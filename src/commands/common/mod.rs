//! What every command shares, written once: the index opened from its settings ([`open`]), the
//! files read before the work starts ([`load`]), how errors become exit codes ([`failure`]), the
//! logs and the async runtime.
//!
//! Each command turns its configuration into these resources here and then does only its own work,
//! as ripgrep's `HiArgs` turns flags into a searcher and a printer once. The commands import this
//! module and never each other for it.

pub(crate) mod decided;
pub(crate) mod failure;
pub(crate) mod load;
pub(crate) mod open;

use anyhow::Context;
use tracing_subscriber::EnvFilter;

use super::Failure;

/// Logs go to standard error: warnings by default, more with -v / -vv, or as `RUST_LOG` says.
pub(crate) fn init_logging(verbosity: u8) {
    let default = match verbosity {
        0 => "warn",
        1 => "info",
        _ => "debug,hyper_util=info,reqwest=info",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    // Colours only for a person at a terminal: a log file, a pipe or journald gets plain text, and
    // NO_COLOR (no-color.org) turns them off anywhere.
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(colour)
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
