//! Test support shared by the scenario modules: the in-process fake Solr, a real Solr (standalone
//! and SolrCloud) from Solr's own test framework, and a WebDriver client for the browser tests.

pub mod cmd;
pub mod corpus;
pub mod fake_solr;
pub mod real_solr;
pub mod serve;
pub mod webdriver;
