//! The Solr HTTP client: requests, typed errors, retry decisions and the Schema API.
//!
//! Kept apart from the engine: the engine sees Solr only through [`crate::store::solr::SolrStore`],
//! which translates the store seam into the requests here.
//!
//! - [`client`]: one core URL, basic auth (never logged), rustls, timeouts, a cap on requests in
//!   flight, and retries with jittered exponential backoff ([`backon`]) on 5xx, timeouts and
//!   connection errors; never on a 4xx.
//! - [`error`]: what went wrong, whether a retry can help ([`SolrError::is_retryable`]) and whether it
//!   means "unreachable" (exit code 3).
//! - [`export`]: the documents of an `/export` answer, cut out of the stream as it arrives.
//! - [`route`]: the `compositeId` router's hash, as Solr computes it, and the shard that holds an id.
//! - [`schema`]: a core's fields as the Schema API gives them, and the `add-field` commands.
//! - [`config`]: the update chain `/update` runs, as the Config API gives it.

pub mod client;
pub mod cloud;
pub mod config;
pub mod error;
pub mod export;
pub mod route;
pub mod schema;

pub use client::{install_crypto_provider, Client, ClientConfig, ConfigError, Credentials};
pub use error::SolrError;
