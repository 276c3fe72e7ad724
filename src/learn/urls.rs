//! URL rules over a store: learning them from the index's URLs and content groups, and loading the
//! index of canonical forms that predictions look pages up in. The rules themselves are pure code
//! ([`crate::urlrules`]).
//!
//! Learning reads the store twice, light (id, URL and the content fields; then the URL alone, which
//! the file store serves from its light copy and Solr from docValues), and never writes. A page's
//! content is its near-duplicate cluster (`near_group_s`, written by a run with the `near`
//! dimension) when it has one, else its exact signature; a page with neither has its text read by
//! id (real-time get, a page of them at a time) and its exact signature computed in memory, as a
//! run would. A page without a cluster (indexed since the last run) takes the cluster of a page with
//! the same exact signature, found by one more light read, so that it meets its copies; without one
//! it stands for itself. Running `solr-dedup run` first saves that work and lets print views and other
//! near-duplicates count as the same content.

use std::collections::{HashMap, HashSet};

use tracing::{debug, info};
use xxhash_rust::xxh3::xxh3_64;

use crate::engine::doc::{get_bool, get_i64, get_str, get_text};
use crate::engine::pages::Pages;
use crate::engine::{EngineError, Phase, Progress, Silent};
use crate::model::{Dimension, FieldNames};
use crate::signature::Signer;
use crate::store::{Filter, ReadQuery, Store};
use crate::urlrules::induce::{Learner, Summary};
use crate::urlrules::predict::{ExactGroup, Index};
use crate::urlrules::Rules;

/// What `urls learn` learns with.
#[derive(Debug, Clone)]
pub struct LearnSettings {
    /// Field names (`id`, `sku`, `exact_signature_l`, `near_group_s`, `text_t`).
    pub fields: FieldNames,
    /// Which documents take part.
    pub filter: Filter,
    /// Documents per read page.
    pub batch_size: usize,
    /// Signs pages without a stored signature (the index's scheme).
    pub signer: Signer,
    /// Use near-duplicate clusters as content where pages have them.
    pub near: bool,
    /// A rule applies when its estimate reaches this.
    pub min_estimate: f64,
}

/// What reading the store cost and found, for the summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LearnWork {
    /// Documents read light (both passes).
    pub light_docs: u64,
    /// Documents whose text was read to sign them.
    pub text_docs: u64,
    /// Documents without a URL.
    pub no_url: u64,
    /// Pages whose content was a near cluster (their own, or their exact copies').
    pub by_near: u64,
    /// Pages whose content was their exact signature (stored, or computed now).
    pub by_exact: u64,
}

/// Texts per real-time get.
const TEXTS_PER_REQUEST: usize = 250;

/// A content key in its own space: near clusters and exact signatures never meet.
fn near_key(group: &str) -> u64 {
    xxh3_64(group.as_bytes()) | (1 << 63)
}

fn exact_key(sig: i64) -> u64 {
    (sig as u64) & !(1 << 63)
}

/// Learns rules from the URLs and contents of `store` (see the module docs).
pub async fn learn<S: Store>(
    store: &S,
    s: &LearnSettings,
    progress: &dyn Progress,
) -> Result<(Rules, Summary, LearnWork), EngineError> {
    let f = &s.fields;
    let mut work = LearnWork::default();
    let mut learner = Learner::new();
    let mut fields = vec![f.id.clone(), f.url.clone(), f.exact_signature.clone()];
    if s.near {
        fields.push(f.near_group.clone());
    }
    let query = ReadQuery {
        filter: s.filter.clone(),
        fields,
        rows: s.batch_size.max(1),
    };
    store.hint_rereads(&query);
    progress.phase(Phase::Read);
    let text_fields = vec![f.id.clone(), f.url.clone(), f.text.clone()];
    // With near clusters as content, a page without one (added since the last run) is keyed by its
    // exact signature's cluster where another page with that signature has one: its URL and
    // signature wait here until pass 1 has seen every cluster.
    let mut waiting: Vec<(String, i64)> = Vec::new();
    let mut pages = Pages::new(progress);
    while let Some(page) = pages.next(store, &query).await? {
        work.light_docs += page.docs.len() as u64;
        let mut unsigned: Vec<String> = Vec::new();
        for doc in &page.docs {
            let Some(url) = get_str(doc, &f.url) else {
                work.no_url += 1;
                continue;
            };
            let content = match (
                s.near.then(|| get_text(doc, &f.near_group)).flatten(),
                get_i64(doc, &f.exact_signature),
            ) {
                (Some(group), _) => {
                    work.by_near += 1;
                    near_key(&group)
                }
                (None, Some(sig)) if s.near => {
                    waiting.push((url.to_owned(), sig));
                    continue;
                }
                (None, Some(sig)) => {
                    work.by_exact += 1;
                    exact_key(sig)
                }
                (None, None) => {
                    if !crate::urlrules::is_http_url(url) {
                        // Counted by the learner; no text read for it.
                        let _ = learner.add_page(url, 0);
                        continue;
                    }
                    if let Some(id) = get_str(doc, &f.id) {
                        unsigned.push(id.to_owned());
                    }
                    continue;
                }
            };
            // A URL without a canonical form is counted by the learner.
            let _ = learner.add_page(url, content);
        }
        for chunk in unsigned.chunks(TEXTS_PER_REQUEST) {
            // Deleted since the light read: left out.
            let docs = store.get(chunk, &text_fields).await?;
            work.text_docs += docs.len() as u64;
            for doc in &docs {
                let Some(url) = get_str(doc, &f.url) else {
                    continue;
                };
                let sig = s.signer.exact(get_str(doc, &f.text).unwrap_or(""));
                if s.near {
                    waiting.push((url.to_owned(), sig));
                } else {
                    work.by_exact += 1;
                    let _ = learner.add_page(url, exact_key(sig));
                }
            }
        }
    }
    if !waiting.is_empty() {
        // One more light read: the cluster of each waiting signature, where a page has one.
        let wanted: HashSet<i64> = waiting.iter().map(|w| w.1).collect();
        let mut clusters: HashMap<i64, u64> = HashMap::new();
        let mut pages = Pages::new(&Silent);
        while let Some(page) = pages.next(store, &query).await? {
            work.light_docs += page.docs.len() as u64;
            for doc in &page.docs {
                if let (Some(group), Some(sig)) = (
                    get_text(doc, &f.near_group),
                    get_i64(doc, &f.exact_signature),
                ) {
                    if wanted.contains(&sig) {
                        clusters.entry(sig).or_insert_with(|| near_key(&group));
                    }
                }
            }
        }
        for (url, sig) in waiting {
            let content = match clusters.get(&sig) {
                Some(&k) => {
                    work.by_near += 1;
                    k
                }
                None => {
                    work.by_exact += 1;
                    exact_key(sig)
                }
            };
            let _ = learner.add_page(&url, content);
        }
    }
    progress.phase(Phase::Pairs);
    let query = ReadQuery {
        filter: s.filter.clone(),
        fields: vec![f.url.clone()],
        rows: s.batch_size.max(1),
    };
    let mut pages = Pages::new(progress);
    while let Some(page) = pages.next(store, &query).await? {
        work.light_docs += page.docs.len() as u64;
        for doc in &page.docs {
            if let Some(url) = get_str(doc, &f.url) {
                learner.observe(url);
            }
        }
    }
    progress.phase(Phase::Rules);
    let (rules, summary) = learner.finish(s.min_estimate);
    progress.finish();
    debug!(?work, ?summary, "learned URL rules");
    info!(
        sites = rules.sites.len(),
        pages = summary.pages,
        pairs = summary.pairs,
        "learned URL rules"
    );
    Ok((rules, summary, work))
}

/// The fields a prediction index reads of each document: id and URL, and with `exact` the exact
/// signature, flag and copy count.
pub fn index_fields(fields: &FieldNames, exact: bool) -> Vec<String> {
    let mut read = vec![fields.id.clone(), fields.url.clone()];
    if exact {
        read.push(fields.exact_signature.clone());
        read.push(fields.unique(Dimension::Exact).to_owned());
        read.extend(fields.count(Dimension::Exact).map(str::to_owned));
    }
    read
}

/// Adds one document (with [`index_fields`]) to a prediction index.
pub fn add_doc(index: &mut Index, doc: &crate::store::Doc, fields: &FieldNames, exact: bool) {
    let (Some(id), Some(url)) = (get_str(doc, &fields.id), get_str(doc, &fields.url)) else {
        return;
    };
    let _ = index.add_page(id, url, exact_group(doc, fields, exact));
}

/// Removes a page [`add_doc`] added from `doc` (the same document, as it was then).
pub fn remove_doc(index: &mut Index, doc: &crate::store::Doc, fields: &FieldNames, exact: bool) {
    let (Some(id), Some(url)) = (get_str(doc, &fields.id), get_str(doc, &fields.url)) else {
        return;
    };
    index.remove_page(id, url, exact_group(doc, fields, exact));
}

/// What `doc` holds about its exact group (nothing without `exact`).
fn exact_group(doc: &crate::store::Doc, fields: &FieldNames, exact: bool) -> ExactGroup {
    if exact {
        ExactGroup {
            signature: get_i64(doc, &fields.exact_signature),
            unique: get_bool(doc, fields.unique(Dimension::Exact)),
            copies: fields
                .count(Dimension::Exact)
                .and_then(|c| get_i64(doc, c))
                .and_then(|n| u64::try_from(n).ok()),
        }
    } else {
        ExactGroup::default()
    }
}

/// Loads the canonical forms of the indexed URLs under `rules`: one light read of ids and URLs, and
/// with `exact` (the index has the exact flags) each page's exact signature, flag and copy count, so
/// that an answer names the representative of the matched page's exact group.
pub async fn load_index<S: Store>(
    store: &S,
    fields: &FieldNames,
    filter: &Filter,
    batch_size: usize,
    rules: Rules,
    exact: bool,
    progress: &dyn Progress,
) -> Result<Index, EngineError> {
    let mut index = Index::new(rules);
    let query = ReadQuery {
        filter: filter.clone(),
        fields: index_fields(fields, exact),
        rows: batch_size.max(1),
    };
    progress.phase(Phase::Index);
    let mut pages = Pages::new(progress);
    while let Some(page) = pages.next(store, &query).await? {
        for doc in &page.docs {
            add_doc(&mut index, doc, fields, exact);
        }
    }
    progress.finish();
    Ok(index)
}
