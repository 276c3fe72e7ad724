//! Test support shared by the scenario modules: the in-process fake Solr, a real Solr (standalone
//! and SolrCloud) from Solr's own test framework, a WebDriver client for the browser tests, and
//! [`hooked::Hooked`], the one store wrapper that records, overrides and hooks a store's calls,
//! and [`page::page`], a crawled page built by its fields' roles.

pub mod cmd;
pub mod corpus;
pub mod fake_solr;
pub mod hooked;
pub mod page;
pub mod real_solr;
pub mod serve;
pub mod webdriver;
