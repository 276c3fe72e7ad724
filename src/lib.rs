//! solr-dedup finds the pages of a Solr core of crawled web pages that are doubles of each other, and
//! writes YaCy-compatible signatures, `*_unique_b` flags and `*_copycount_i` counts back.
//!
//! The crate is a library with a thin binary. [`signature`] holds the pure, bit-exact hash code.

pub mod cli;
pub mod commands;
pub mod config;
pub mod engine;
pub mod signature;
pub mod store;
