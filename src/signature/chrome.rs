//! Chrome (site boilerplate) removal for near-duplicate signatures: which shingles a host repeats on
//! so many of its pages that they say nothing about one page (`neardup.md`, "Chrome removal").
//!
//! Pure code: [`HostCounter`] counts, from a sample of one host's pages, on how many pages each
//! shingle occurs; [`ChromeModel`] is the JSON file `solr-dedup chrome learn` writes, with the
//! evidence (sample size, pages and share per shingle); [`ChromeSet`] is what a run signs with: per
//! host, the shingle hashes to leave out and the model version that goes into `near_version_s`.
//!
//! A shingle is chrome when it occurs on **more than** `share` of the sampled pages (seed 002: 5 %).
//! The shingle hashes are those of [`near::shingle_hashes`]; the text of
//! each shingle is kept in the file as evidence for a reader. A host's model version is a hash of the
//! shingle length and its sorted chrome hashes, so learning again with the same outcome changes
//! nothing, and any other outcome signs exactly that host's documents again.
//!
//! ```
//! use solr_dedup::signature::chrome::HostCounter;
//!
//! let mut host = HostCounter::new(2);
//! for page in ["Home | News one two", "Home | News three four", "Home | News five six"] {
//!     host.add_page(page);
//! }
//! let chrome = host.finish(0.5);
//! assert_eq!(chrome.chrome[0].shingle, "home news");
//! assert_eq!(chrome.chrome[0].pages, 3);
//! ```

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::near;

/// The format of the model file; a file of another format is refused.
pub const FORMAT: u32 = 1;

/// A chrome model: what `solr-dedup chrome learn` writes and `run --chrome` reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChromeModel {
    /// [`FORMAT`].
    pub chrome_model: u32,
    /// The near-duplicate definition the hashes belong to ([`near::VERSION`]).
    pub near_definition: u32,
    /// Words per shingle (`--near-shingle`); a run with another value cannot use the model.
    pub shingle: usize,
    /// A shingle on more than this share of a host's sampled pages is chrome.
    pub share: f64,
    /// Pages sampled per host at most.
    pub sample: usize,
    /// Hosts with fewer pages than this got no model.
    pub min_pages: usize,
    /// Per host (the URL's host name, lower-case, IDN in punycode, no port): its evidence.
    pub hosts: BTreeMap<String, HostChrome>,
    /// Hosts left out for having fewer than `min_pages` pages, and their pages.
    pub skipped: Skipped,
}

/// What was left out of a model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Skipped {
    /// Hosts.
    pub hosts: u64,
    /// Their pages.
    pub pages: u64,
}

/// One host's chrome, with the evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostChrome {
    /// The host's model version (`c1-` and 16 hex digits), for the reader: a run computes it again
    /// from the hashes, so a hand-edited list takes effect with a version of its own.
    pub model: String,
    /// The host's pages that took part.
    pub pages: u64,
    /// The pages sampled (the texts read).
    pub sample: u64,
    /// The chrome shingles, most frequent first.
    pub chrome: Vec<ChromeShingle>,
}

/// One chrome shingle and its evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChromeShingle {
    /// The shingle's words, lower-cased, joined by one space.
    pub shingle: String,
    /// Its hash, 16 hex digits: what a run leaves out.
    pub hash: String,
    /// Sampled pages it occurs on.
    pub pages: u64,
    /// `pages` over the sample.
    pub share: f64,
}

/// Errors of a model file.
#[derive(Debug, thiserror::Error)]
pub enum ChromeError {
    /// Not JSON of the model's shape.
    #[error("not a chrome model ({0}); make one with `solr-dedup chrome learn`")]
    Parse(#[from] serde_json::Error),
    /// Another file format.
    #[error("chrome model format {found}, this version reads format {FORMAT}; learn the model again with this version")]
    Format {
        /// What the file says.
        found: u32,
    },
    /// Another near-duplicate definition.
    #[error("the chrome model belongs to near-duplicate definition {found}, this version signs with {}; learn the model again", near::VERSION)]
    Definition {
        /// What the file says.
        found: u32,
    },
    /// A hash that is not 16 hex digits.
    #[error("host {host}: shingle {shingle:?} has the hash {hash:?}, expected 16 hex digits")]
    Hash {
        /// The host.
        host: String,
        /// The shingle.
        shingle: String,
        /// The hash as written.
        hash: String,
    },
}

impl ChromeModel {
    /// Reads a model from its JSON text, checking format and definition.
    pub fn from_json(text: &str) -> Result<Self, ChromeError> {
        let model: ChromeModel = serde_json::from_str(text)?;
        if model.chrome_model != FORMAT {
            return Err(ChromeError::Format {
                found: model.chrome_model,
            });
        }
        if model.near_definition != near::VERSION {
            return Err(ChromeError::Definition {
                found: model.near_definition,
            });
        }
        Ok(model)
    }

    /// The model as pretty JSON, with a final newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a model serialises");
        s.push('\n');
        s
    }

    /// What a run signs with.
    pub fn to_set(&self) -> Result<ChromeSet, ChromeError> {
        let mut hosts = HashMap::new();
        for (host, h) in &self.hosts {
            let mut hashes = Vec::with_capacity(h.chrome.len());
            for s in &h.chrome {
                let hash = parse_hash(&s.hash).ok_or_else(|| ChromeError::Hash {
                    host: host.clone(),
                    shingle: s.shingle.clone(),
                    hash: s.hash.clone(),
                })?;
                hashes.push(hash);
            }
            if hashes.is_empty() {
                // Nothing to leave out: signed as a host the model does not know.
                continue;
            }
            let version = model_version(self.shingle, &hashes);
            hosts.insert(
                host.clone(),
                HostSet {
                    version,
                    hashes: hashes.into_iter().collect(),
                },
            );
        }
        Ok(ChromeSet {
            shingle: self.shingle,
            hosts,
        })
    }
}

fn parse_hash(s: &str) -> Option<u64> {
    (s.len() == 16)
        .then(|| u64::from_str_radix(s, 16).ok())
        .flatten()
}

/// The version of a host's model: `c1-` and the hash of the shingle length and the sorted hashes.
pub fn model_version(shingle: usize, hashes: &[u64]) -> String {
    let mut sorted = hashes.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut bytes = Vec::with_capacity(8 + 8 * sorted.len());
    bytes.extend((shingle as u64).to_le_bytes());
    for h in sorted {
        bytes.extend(h.to_le_bytes());
    }
    format!("c1-{:016x}", xxh3_64_with_seed(&bytes, near::SEED))
}

/// The chrome a run leaves out, per host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChromeSet {
    /// Words per shingle the hashes were made with.
    pub shingle: usize,
    hosts: HashMap<String, HostSet>,
}

/// One host's chrome hashes and model version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostSet {
    /// Goes into `near_version_s`.
    pub version: String,
    /// The shingle hashes to leave out.
    pub hashes: HashSet<u64>,
}

impl ChromeSet {
    /// The chrome of a host (its URL's host name), if the model has any.
    pub fn host(&self, host: &str) -> Option<&HostSet> {
        self.hosts.get(host)
    }

    /// Hosts with chrome.
    pub fn len(&self) -> usize {
        self.hosts.len()
    }

    /// No host has chrome.
    pub fn is_empty(&self) -> bool {
        self.hosts.is_empty()
    }
}

/// The distinct shingles of a text with their hashes, in first-seen order: the hashes of
/// [`near::shingle_hashes`], paired with the words they stand for.
pub fn shingles_with_hashes(text: &str, n: usize) -> Vec<(String, u64)> {
    let mut hashes = Vec::new();
    near::shingle_hashes(text, n, &mut hashes);
    // Both in first-seen order without repeats: distinct words, distinct hashes.
    let mut seen = HashSet::new();
    hashes.retain(|&h| seen.insert(h));
    let texts = near::shingles(&near::tokens(text), n);
    debug_assert_eq!(texts.len(), hashes.len());
    texts.into_iter().zip(hashes).collect()
}

/// Counts, over a sample of one host's pages, on how many pages each shingle occurs.
#[derive(Debug, Clone)]
pub struct HostCounter {
    shingle: usize,
    pages: u64,
    counts: HashMap<u64, (u64, String)>,
}

impl HostCounter {
    /// A counter for shingles of `shingle` words.
    pub fn new(shingle: usize) -> Self {
        HostCounter {
            shingle,
            pages: 0,
            counts: HashMap::new(),
        }
    }

    /// Counts one sampled page (a page without words counts too: it is part of the sample).
    pub fn add_page(&mut self, text: &str) {
        self.pages += 1;
        for (s, h) in shingles_with_hashes(text, self.shingle) {
            self.counts.entry(h).or_insert((0, s)).0 += 1;
        }
    }

    /// Pages counted.
    pub fn pages(&self) -> u64 {
        self.pages
    }

    /// The host's chrome: the shingles on more than `share` of the pages, most frequent first (then
    /// by words), with `pages` set to the sample size (the caller knows the host's full count).
    pub fn finish(self, share: f64) -> HostChrome {
        let sample = self.pages;
        let mut chrome: Vec<(u64, u64, String)> = self
            .counts
            .into_iter()
            .filter(|(_, (pages, _))| sample > 0 && *pages as f64 > share * sample as f64)
            .map(|(hash, (pages, shingle))| (hash, pages, shingle))
            .collect();
        chrome.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.2.cmp(&b.2)));
        let hashes: Vec<u64> = chrome.iter().map(|c| c.0).collect();
        HostChrome {
            model: if hashes.is_empty() {
                "none".to_owned()
            } else {
                model_version(self.shingle, &hashes)
            },
            pages: sample,
            sample,
            chrome: chrome
                .into_iter()
                .map(|(hash, pages, shingle)| ChromeShingle {
                    shingle,
                    hash: format!("{hash:016x}"),
                    pages,
                    share: round4(pages as f64 / sample as f64),
                })
                .collect(),
        }
    }
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shingles_pair_each_hash_with_its_words() {
        let got = shingles_with_hashes("Home about, home ABOUT us", 2);
        let words: Vec<&str> = got.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(words, ["home about", "about home", "about us"]);
        let mut one = Vec::new();
        near::shingle_hashes("home about", 2, &mut one);
        assert_eq!(got[0].1, one[0]);
        assert_eq!(shingles_with_hashes("  ,, ", 2), []);
        let short = shingles_with_hashes("Alone", 3);
        assert_eq!(short[0].0, "alone");
    }

    #[test]
    fn chrome_is_more_than_the_share_of_the_sample() {
        let mut c = HostCounter::new(2);
        // "menu home" on 3 of 4 pages (75 %), "footer text" on 2 (50 %), the rest on 1.
        c.add_page("menu home alpha beta footer text");
        c.add_page("menu home gamma delta footer text");
        c.add_page("menu home epsilon zeta");
        c.add_page("eta theta");
        let h = c.finish(0.5);
        let words: Vec<(&str, u64, f64)> = h
            .chrome
            .iter()
            .map(|s| (s.shingle.as_str(), s.pages, s.share))
            .collect();
        // 50 % is not more than 50 %.
        assert_eq!(words, [("menu home", 3, 0.75)]);
        assert_eq!(h.sample, 4);
        assert!(h.model.starts_with("c1-"));
    }

    #[test]
    fn a_model_round_trips_and_its_version_depends_only_on_the_hashes() {
        let mut c = HostCounter::new(2);
        for p in ["a b c", "a b d", "a b e"] {
            c.add_page(p);
        }
        let host = c.finish(0.05);
        let model = ChromeModel {
            chrome_model: FORMAT,
            near_definition: near::VERSION,
            shingle: 2,
            share: 0.05,
            sample: 200,
            min_pages: 3,
            hosts: BTreeMap::from([("example.org".to_owned(), host.clone())]),
            skipped: Skipped::default(),
        };
        let back = ChromeModel::from_json(&model.to_json()).unwrap();
        assert_eq!(back, model);
        let set = back.to_set().unwrap();
        let h = set.host("example.org").unwrap();
        assert_eq!(h.version, host.model);
        assert_eq!(h.hashes.len(), host.chrome.len());
        // The same hashes in another order, or with other evidence: the same version.
        let mut edited = model.clone();
        let e = edited.hosts.get_mut("example.org").unwrap();
        e.chrome.reverse();
        e.chrome[0].pages = 1;
        assert_eq!(
            edited
                .to_set()
                .unwrap()
                .host("example.org")
                .unwrap()
                .version,
            h.version
        );
        // One shingle less: another version.
        edited.hosts.get_mut("example.org").unwrap().chrome.pop();
        assert_ne!(
            edited
                .to_set()
                .unwrap()
                .host("example.org")
                .unwrap()
                .version,
            h.version
        );
    }

    #[test]
    fn broken_models_say_what_is_wrong() {
        assert!(matches!(
            ChromeModel::from_json("{"),
            Err(ChromeError::Parse(_))
        ));
        let ok = ChromeModel {
            chrome_model: FORMAT,
            near_definition: near::VERSION,
            shingle: 2,
            share: 0.05,
            sample: 200,
            min_pages: 20,
            hosts: BTreeMap::new(),
            skipped: Skipped::default(),
        };
        let mut v: serde_json::Value = serde_json::from_str(&ok.to_json()).unwrap();
        v["chrome_model"] = 9.into();
        assert!(matches!(
            ChromeModel::from_json(&v.to_string()),
            Err(ChromeError::Format { found: 9 })
        ));
        let mut bad = ok.clone();
        bad.hosts.insert(
            "h".into(),
            HostChrome {
                model: "x".into(),
                pages: 1,
                sample: 1,
                chrome: vec![ChromeShingle {
                    shingle: "a b".into(),
                    hash: "xyz".into(),
                    pages: 1,
                    share: 1.0,
                }],
            },
        );
        let e = bad.to_set().unwrap_err().to_string();
        assert!(e.contains("16 hex digits"), "{e}");
    }
}
