//! The errors a run ends with ([`EngineError`]): the store's, a cancellation with what was done,
//! and the refusals that stop a run before it writes.

use super::{Dimension, Report, SchemeMismatch};
use crate::store::StoreError;
#[cfg(doc)]
use {super::Progress, crate::store::Store};

/// Errors of a run.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The run was cancelled ([`Progress::cancelled`]): every batch written before is complete (and
    /// made visible with [`Store::refresh`]); what was done so far is in the report. The next run
    /// converges.
    #[error(
        "the run was cancelled; what it wrote is complete, and the next run takes up the rest"
    )]
    Cancelled(Box<Report>),
    /// Documents kept changing under the run.
    #[error("documents kept changing during {0} rounds; run again when the index is quieter")]
    Unstable(u32),
    /// The index was signed with another scheme or other profile parameters (the scheme guard).
    #[error("{0}")]
    SchemeMismatch(SchemeMismatch),
    /// Two records share an id hash: an id listed twice in the input, or (never seen) two ids with
    /// one 64-bit hash. No decision would be safe.
    #[error("two documents share an id hash ({hash:016x}); is an id listed twice in the input?")]
    DuplicateId {
        /// The hash.
        hash: u64,
    },
    /// The documents to sign have no text field at all, and no document the run reads has one: the
    /// field is misnamed (`--field text_t=…` naming a field nothing fills), and signing would treat
    /// every page as empty.
    #[error(
        "no document has the text field {field}; name the field the pages' text is in with \
         --field text_t=FIELD (nothing was written)"
    )]
    NoTextField {
        /// The text field the run was given.
        field: String,
    },
    /// The core neither stores nor streams the text field (pages signed at index time, by the
    /// `solr-plugin` chain), and pages need signing: only re-indexing them signs them.
    #[error(
        "{pages} pages need signing from their text, which the core does not store ({field}): \
         re-index them through the signing update chain (solr-plugin), or store the field; \
         nothing was written"
    )]
    TextNotStored {
        /// The text field.
        field: String,
        /// The pages that need signing.
        pages: u64,
    },
    /// Two different keys of a dimension share a 64-bit hash (never seen; it would merge groups).
    #[error("two different {dimension} keys share a 64-bit hash ({first:?} and {second:?}); please report this")]
    KeyCollision {
        /// The dimension.
        dimension: Dimension,
        /// One key.
        first: String,
        /// The other.
        second: String,
    },
}
