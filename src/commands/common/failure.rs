//! How the errors of the layers below become a [`Failure`] with its exit code, written once: Solr
//! could not be reached (or answered more than `--max-response-bytes`) is exit 3, a run that could
//! not settle is exit 1, anything else is exit 2.
//!
//! [`trouble`] is the one place that looks inside a [`StoreError`] to classify it; the commands
//! see no Solr type.

use anyhow::anyhow;

use super::super::{Exit, Failure};
use crate::engine::EngineError;
use crate::store::{StoreError, StoreErrorKind};

/// What an error of Solr or of a store means for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trouble {
    /// Solr answered more than `--max-response-bytes`: exit 3, and the error says what to change.
    TooLarge,
    /// Solr could not be reached or kept failing: exit 3, nothing is lost, run again later.
    Unreachable,
    /// Anything else: a refused request, bad input, an I/O error (exit 2).
    Other,
}

/// The kind of a store error: the one place that looks inside a [`StoreError`].
pub(crate) fn trouble(e: &StoreError) -> Trouble {
    match e.kind() {
        StoreErrorKind::TooLarge => Trouble::TooLarge,
        StoreErrorKind::Unreachable | StoreErrorKind::Timeout => Trouble::Unreachable,
        _ => Trouble::Other,
    }
}

/// A store's error met before the work started (reading the schema, say), with what was being
/// done: exit 3 when Solr could not be reached, else 2.
pub(crate) fn open_store_failure(e: StoreError, doing: &str) -> Failure {
    match trouble(&e) {
        // Exit 3 too, but Solr was reached: the error says what to change.
        Trouble::TooLarge => Failure::new(Exit::SolrUnreachable, anyhow!(e).context(doing.to_owned())),
        Trouble::Unreachable => Failure::new(
            Exit::SolrUnreachable,
            anyhow!(e).context(format!(
                "{doing}: Solr could not be reached; check that it runs and that --solr is right, then run again"
            )),
        ),
        Trouble::Other => Failure::new(Exit::Usage, anyhow!(e).context(doing.to_owned())),
    }
}

/// What the engine (or a reader on its page walkers) ended with. `writes`: the command writes to
/// the index, so the advice when Solr is down says that nothing is lost.
pub(crate) fn engine_failure(e: EngineError, writes: bool) -> Failure {
    match e {
        e @ EngineError::Unstable(_) => Failure::new(Exit::Problems, anyhow!(e)),
        EngineError::Store(e) => match trouble(&e) {
            Trouble::TooLarge => Failure::new(Exit::SolrUnreachable, anyhow!(e)),
            Trouble::Unreachable => Failure::new(
                Exit::SolrUnreachable,
                anyhow!(e).context(if writes {
                    "Solr could not be reached; nothing is lost, run again when it is up"
                } else {
                    "Solr could not be reached; run again when it is up"
                }),
            ),
            Trouble::Other => Failure::new(Exit::Usage, anyhow!(e)),
        },
        e => Failure::new(Exit::Usage, anyhow!(e)),
    }
}
