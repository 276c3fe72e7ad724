//! Integration scenarios against Solr: every one runs against the fake Solr (`tests/support`), and the
//! ones declared with `solr_test!` also against a real core when `SOLR_URL` is set.
//!
//! Each scenario prints how many values it checked (`cargo test -- --nocapture` shows them).

pub mod harness;

mod bad_input;
mod e2e;
mod reliability;
