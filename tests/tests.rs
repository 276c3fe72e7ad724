//! The one integration-test binary: every scenario module hangs off this file.

mod bad_input;
mod browser;
mod cli;
mod configset;
mod engine;
mod fuzzy_words;
mod preference;
mod scenarios;
mod signatures;
mod store;
mod support;
mod transcripts;
mod truth;
