//! Learning from an index: the URL rules ([`urls`]) and the chrome models ([`chrome`]), each read
//! out of any [`crate::store::Store`] with the engine's page walkers.
//!
//! They sit beside the engine, not in it: they use its readers (`crate::engine::pages`, the typed
//! values of `crate::engine::doc`, URL keys) and its error type, and the commands use them, but
//! the engine imports nothing from here. What they learn is pure code elsewhere: the rules in
//! [`crate::urlrules`], the models in [`crate::signature::chrome`]. Both only read; neither writes
//! to the store.

pub mod chrome;
pub mod urls;
