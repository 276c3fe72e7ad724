//! The one integration-test binary: every scenario module hangs off this file.

mod cli;
mod engine;
mod signatures;
mod support;
mod transcripts;
mod truth;
