//! solr-dedup finds the pages of a Solr core of crawled web pages that are doubles of each other, and
//! writes YaCy-compatible signatures, `*_unique_b` flags and `*_copycount_i` counts back.
//!
//! The crate is a library with a thin binary:
//! - [`signature`]: the pure, bit-exact hash code (no I/O);
//! - [`model`]: the shared vocabulary: dimensions and the one field-name table (no I/O);
//! - [`engine`]: scan (sign), group, rank and write, against any [`store::Store`];
//! - [`learn`] and [`browse`]: beside the engine, on its readers: URL rules and chrome models
//!   learned from an index, and the biggest groups a run left (serve's views);
//! - [`store`]: the seam, with the file store and the Solr store, and [`store::open`], the one
//!   place settings become an opened store;
//! - [`solr_client`]: the Solr HTTP client, its errors, retries and the Schema API;
//! - `spill`: the memory budget and the temporary files past it, under the engine and the stores;
//! - [`build`]: the version, commit and build date the binary reports;
//! - [`cli`], [`config`], [`commands`]: the command line, plain configuration (the environment read
//!   once, in [`config::env`]), and the subcommands.

pub mod browse;
pub mod build;
pub mod cli;
pub mod commands;
pub mod config;
pub mod engine;
pub mod learn;
pub mod model;
pub mod server;
pub mod signature;
pub mod solr_client;
pub(crate) mod spill;
pub mod store;
pub mod urlrules;
