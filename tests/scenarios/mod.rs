//! Integration scenarios against Solr: every one runs against the fake Solr (`tests/support`), and the
//! ones declared with `solr_test!` also against a real standalone core and a real two-shard SolrCloud
//! collection (`tests/support/real_solr.rs`). Faults and kills need the fake's hooks and run only there.
//!
//! Each scenario prints how many values it checked (`cargo test -- --nocapture` shows them).

pub mod harness;

mod bad_input;
mod big_groups;
mod changes;
mod chrome;
mod clean;
mod crawl_loop;
mod deployment;
mod e2e;
mod fuzzy_words;
mod hand_worked;
mod in_place;
mod lost_answers;
mod near;
mod plugin;
mod predictions;
mod reliability;
mod scale;
mod serve;
mod serve_views;
mod settings_record;
mod shards;
mod signals;
pub(crate) mod solr_work;
mod update_chain;
mod urls;
