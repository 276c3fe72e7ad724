//! `chrome learn` over a store: a sample of each site's pages (a host and its `www.` alias are one
//! site), and the whole lines that stand in their header or footer on more than a share of them
//! (the model itself is pure code, [`crate::signature::chrome`]).
//!
//! Two reads, so that the store does only the work the sample needs:
//!
//! 1. a light read of every document's id and URL: per site, the `sample` ids with the smallest
//!    hashes are kept (a uniform sample that depends only on the ids, so the same index gives the
//!    same model), and the site's pages are counted;
//! 2. the texts of the sampled ids only, site by site (real-time get, a few hundred a request),
//!    learned from by [`SiteCounter`], one site in memory at a time.
//!
//! Memory holds at most `sample` ids per site, and one site's sampled lines.

use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap};

use tracing::{debug, info};
use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::engine::doc::get_str;
use crate::engine::pages::Pages;
use crate::engine::url_key::host_name;
use crate::engine::{EngineError, Phase, Progress};
use crate::model::FieldNames;
use crate::signature::chrome::{site_key, ChromeModel, SiteCounter, Skipped, FORMAT};
use crate::signature::near;
use crate::store::{Filter, ReadQuery, Store};

/// What `chrome learn` learns with.
#[derive(Debug, Clone)]
pub struct LearnSettings {
    /// Field names (`id`, `sku`, `text_t`).
    pub fields: FieldNames,
    /// Which documents take part.
    pub filter: Filter,
    /// Pages sampled per site at most.
    pub sample: usize,
    /// A line in the header or footer run of more than this share of a site's sample is chrome.
    pub share: f64,
    /// Sites with fewer pages get no model.
    pub min_pages: usize,
    /// Documents per read page.
    pub batch_size: usize,
}

/// What reading the store cost, for the summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LearnWork {
    /// Documents read light (id and URL).
    pub light_docs: u64,
    /// Documents read with their text.
    pub text_docs: u64,
    /// Documents without a URL host (not in any host's sample).
    pub no_host: u64,
}

/// Texts per real-time get.
const TEXTS_PER_REQUEST: usize = 250;

struct HostSample {
    pages: u64,
    /// The host names seen (the site and its `www.` alias).
    names: BTreeSet<String>,
    /// The smallest id hashes seen, largest on top.
    ids: BinaryHeap<(u64, Box<str>)>,
}

/// Learns a chrome model from the documents of `store`.
pub async fn learn<S: Store>(
    store: &S,
    s: &LearnSettings,
    progress: &dyn Progress,
) -> Result<(ChromeModel, LearnWork), EngineError> {
    let f = &s.fields;
    let mut work = LearnWork::default();
    let mut hosts: HashMap<String, HostSample> = HashMap::new();
    let query = ReadQuery {
        filter: s.filter.clone(),
        fields: vec![f.id.clone(), f.url.clone()],
        rows: s.batch_size.max(1),
    };
    progress.phase(Phase::Scan);
    let mut pages = Pages::new(progress);
    while let Some(page) = pages.next(store, &query).await? {
        work.light_docs += page.docs.len() as u64;
        for doc in &page.docs {
            let Some(id) = get_str(doc, &f.id) else {
                continue;
            };
            let Some(host) = host_name(get_str(doc, &f.url)) else {
                work.no_host += 1;
                continue;
            };
            let h = hosts
                .entry(site_key(&host).to_owned())
                .or_insert_with(|| HostSample {
                    pages: 0,
                    names: BTreeSet::new(),
                    ids: BinaryHeap::new(),
                });
            h.pages += 1;
            if !h.names.contains(&host) {
                h.names.insert(host);
            }
            let key = (xxh3_64_with_seed(id.as_bytes(), near::SEED), id.into());
            if h.ids.len() < s.sample {
                h.ids.push(key);
            } else if h.ids.peek().is_some_and(|top| key < *top) {
                h.ids.pop();
                h.ids.push(key);
            }
        }
    }
    let mut hosts: Vec<(String, HostSample)> = hosts.into_iter().collect();
    hosts.sort_by(|a, b| a.0.cmp(&b.0));
    let mut model = ChromeModel {
        chrome_model: FORMAT,
        near_definition: near::VERSION,
        share: s.share,
        sample: s.sample,
        min_pages: s.min_pages,
        hosts: BTreeMap::new(),
        skipped: Skipped::default(),
    };
    progress.phase(Phase::Sample);
    let text_fields = vec![f.id.clone(), f.text.clone()];
    for (name, h) in hosts {
        if h.pages < s.min_pages as u64 {
            model.skipped.hosts += 1;
            model.skipped.pages += h.pages;
            continue;
        }
        let mut ids: Vec<(u64, Box<str>)> = h.ids.into_vec();
        ids.sort();
        let ids: Vec<String> = ids.into_iter().map(|(_, id)| id.into()).collect();
        let mut counter = SiteCounter::new();
        for chunk in ids.chunks(TEXTS_PER_REQUEST) {
            // Deleted since the light read: left out of the sample.
            let docs = store.get(chunk, &text_fields).await?;
            work.text_docs += docs.len() as u64;
            progress.advance(docs.len() as u64);
            for doc in &docs {
                counter.add_page(get_str(doc, &f.text).unwrap_or(""));
            }
        }
        let mut chrome = counter.finish(s.share);
        chrome.pages = h.pages;
        chrome.names = h.names.into_iter().collect();
        debug!(
            host = %name,
            pages = h.pages,
            sample = chrome.sample,
            lines = chrome.lines.len(),
            removed = chrome.removed,
            "host learned"
        );
        model.hosts.insert(name, chrome);
    }
    progress.finish();
    info!(
        hosts = model.hosts.len(),
        skipped = model.skipped.hosts,
        "chrome model learned"
    );
    Ok((model, work))
}
