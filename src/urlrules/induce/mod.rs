//! Learning the rules: evidence counted by grouping, in two passes over the index's URLs.
//!
//! 1. [`Learner::add_page`]: every indexed URL with its content (a 64-bit content key: the near
//!    cluster or the exact signature; equal keys mean the same content). The learner keeps a map
//!    from a 64-bit hash of each URL (as `Parts` writes it) to its content: 16 bytes a page.
//! 2. [`Learner::observe`]: every URL again. For each part a rule could cover, the URL is rewritten
//!    without it (`http` → `https`, `www.` dropped, one path parameter dropped, the last segment
//!    dropped, one query pair dropped, the pairs sorted), and looked up in the map. When that URL is
//!    indexed, the two are a pair that differs only in that part: the same content is support for
//!    the rule, different content is against it. A URL with a path parameter or a query pair whose
//!    rewritten form is not indexed (every URL of a forum carries a session id) is kept as a
//!    *sibling* record (32 bytes), for step 3.
//! 3. [`Learner::finish`]: sibling records are sorted by their rewritten form; in each group of
//!    URLs that differ only in one parameter, every member is compared with the first (star pairs,
//!    linear in the group, never all pairs). Then each candidate with at least
//!    [`MIN_OBSERVATIONS`] pairs becomes a rule with its `Evidence`, per site and pooled over all
//!    sites (`ALL_SITES`, from at least two sites).
//!
//! Memory: the URL map, the sibling records, and the candidates (one per site and rule kind, name,
//! value and path prefix met in a pair), each with its name. It grows with the index, not with the
//! number of pairs.

use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasherDefault;

use rustc_hash::FxHasher;
use xxhash_rust::xxh3::xxh3_64;

mod rules;
#[cfg(test)]
mod tests;

use super::parts::{parse, Parts, Segment};
use super::rank::Spelling;
use super::{Rules, UrlError, MIN_OBSERVATIONS};

type FxHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// Up to this many query pairs, every set of two or more is tried without; beyond, the tails.
const MAX_SET_PARAMS: usize = 5;

/// URLs with more query pairs than this take no part in the parameter rules.
const MAX_PAIRS: usize = 64;

/// A site's usual parameter order names at most this many parameters (the first by position).
const MAX_SPELLED_PARAMS: usize = 64;

/// What a candidate rule rewrites.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Kind {
    Scheme,
    Www,
    ParamOrder,
    PathParam,
    DefaultDocument,
    /// A query parameter, any value.
    Param,
    /// A query parameter at one value.
    ParamValue,
}

/// A candidate, by hashes: site, kind, name, value, path prefix (0: the whole site).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    site: u32,
    kind: Kind,
    name: u64,
    value: u64,
    prefix: u64,
}

/// A candidate's names and counts.
#[derive(Debug, Clone, Default)]
struct Counts {
    name: Box<str>,
    value: Option<Box<str>>,
    prefix: Option<Box<str>>,
    support: u64,
    against: u64,
}

/// A URL whose rewritten form is not indexed: compared with the others of the same form in
/// [`Learner::finish`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Sibling {
    /// The hash of the rewritten URL.
    form: u64,
    /// Which part was dropped: an index into `Learner::sibling_kinds`.
    what: u32,
    /// The hash of the dropped part's value.
    variant: u64,
    content: u64,
}

/// Per query parameter name: the sum of its relative positions (0 first, 1 last) and the URLs.
type Positions = FxHashMap<Box<str>, (f64, u64)>;

/// What a learn saw, for the summary.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// URLs added.
    pub pages: u64,
    /// URLs without a canonical form (not http(s), unparseable), left out.
    pub bad_urls: u64,
    /// URLs listed twice (the first one's content counts).
    pub repeated_urls: u64,
    /// Pairs compared.
    pub pairs: u64,
    /// URLs with more than 64 query pairs, left out of the parameter rules.
    pub long_queries: u64,
    /// Candidates met in at least one pair.
    pub candidates: u64,
    /// Rules written (with enough evidence to say yes or no), and of them the ones that apply, by
    /// kind.
    pub rules: BTreeMap<&'static str, (u64, u64)>,
    /// The calibration chosen by cross-validation on the site-level candidates' pairs, and how it
    /// did on them.
    pub calibration: Option<crate::urlrules::calibrate::Fit>,
}

/// Learns rules from an index's URLs and contents (see the module docs).
#[derive(Default)]
pub struct Learner {
    urls: FxHashMap<u64, u64>,
    /// URL forms observed in pass 2: a URL listed twice is paired once.
    observed: std::collections::HashSet<u64, BuildHasherDefault<FxHasher>>,
    site_ids: FxHashMap<Box<str>, u32>,
    sites: Vec<(Box<str>, u64)>,
    candidates: FxHashMap<Key, Counts>,
    siblings: Vec<Sibling>,
    sibling_kinds: Vec<(Key, Key)>,
    sibling_ids: FxHashMap<(Key, Key), u32>,
    summary: Summary,
    buf: String,
    /// Per site id: how its pages are spelled, and per query parameter name the sum of its relative
    /// positions and the URLs it was seen in (URLs with two or more pairs).
    spelling: Vec<(Spelling, Positions)>,
}

fn hash_str(s: &str) -> u64 {
    // 0 stands for "none" in keys.
    xxh3_64(s.as_bytes()) | 1
}

impl Learner {
    /// A learner with nothing seen.
    pub fn new() -> Self {
        Learner::default()
    }

    /// Pass 1: an indexed URL and its content key.
    pub fn add_page(&mut self, raw: &str, content: u64) -> Result<(), UrlError> {
        let url = parse(raw).inspect_err(|_| self.summary.bad_urls += 1)?;
        let p = Parts::of(&url);
        let key = self.form(&p);
        match self.urls.entry(key) {
            std::collections::hash_map::Entry::Occupied(_) => self.summary.repeated_urls += 1,
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(content);
                let site = self.site(p.site()) as usize;
                self.spell(site, &p);
            }
        }
        self.summary.pages += 1;
        let site = self.site(p.site());
        self.sites[site as usize].1 += 1;
        Ok(())
    }

    /// Pass 2: an indexed URL again (after every [`Learner::add_page`]).
    pub fn observe(&mut self, raw: &str) {
        let Ok(url) = parse(raw) else { return };
        let p = Parts::of(&url);
        let own = self.form(&p);
        let Some(&content) = self.urls.get(&own) else {
            return;
        };
        if !self.observed.insert(own) {
            return;
        }
        let site = self.site(p.site());
        let key = |kind| Key {
            site,
            kind,
            name: 0,
            value: 0,
            prefix: 0,
        };
        if p.scheme == "http" {
            let q = Parts {
                scheme: "https",
                ..p.clone()
            };
            self.pair(&q, content, key(Kind::Scheme), "scheme", None, None);
        }
        if p.host != p.site() {
            let q = Parts {
                host: p.site(),
                ..p.clone()
            };
            self.pair(&q, content, key(Kind::Www), "www", None, None);
        }
        if !p.pairs_sorted() {
            let mut q = p.clone();
            q.pairs.sort();
            self.pair(
                &q,
                content,
                key(Kind::ParamOrder),
                "param order",
                None,
                None,
            );
        }
        if let Some(last) = p.segments.last() {
            if !last.name.is_empty() && last.params.is_empty() {
                let mut q = p.clone();
                let n = q.segments.len();
                q.segments[n - 1] = Segment {
                    name: "",
                    params: Vec::new(),
                };
                let k = Key {
                    name: hash_str(last.name),
                    ..key(Kind::DefaultDocument)
                };
                self.pair(&q, content, k, last.name, None, None);
            }
        }
        for (i, segment) in p.segments.iter().enumerate() {
            for (j, param) in segment.params.iter().enumerate() {
                if segment.params[..j].contains(param) {
                    // The same parameter twice: dropping either gives the same URL.
                    continue;
                }
                let (name, value) = param.split_once('=').unwrap_or((param, ""));
                let name = name.to_ascii_lowercase();
                let mut q = p.clone();
                q.segments[i].params.remove(j);
                let k = Key {
                    name: hash_str(&name),
                    ..key(Kind::PathParam)
                };
                if !self.pair(&q, content, k, &name, None, None) {
                    self.sibling(&q, k, None, &name, None, value, content);
                }
            }
        }
        let prefix = p.prefix();
        if p.pairs.len() > MAX_PAIRS {
            // Not a page's URL that a rule is learned from (and pairs of it would cost k² here).
            self.summary.long_queries += 1;
            return;
        }
        for (j, &(name, value)) in p.pairs.iter().enumerate() {
            if p.pairs[..j].contains(&(name, value)) {
                continue;
            }
            let mut q = p.clone();
            q.pairs.remove(j);
            let value = value.unwrap_or("");
            match self.base(&q) {
                Some(base) => {
                    self.summary.pairs += 1;
                    self.param_evidence(site, name, value, prefix.as_deref(), base == content);
                }
                None => {
                    let k = Key {
                        name: hash_str(name),
                        ..key(Kind::Param)
                    };
                    let kp = prefix.as_deref().map(|pre| Key {
                        prefix: hash_str(pre),
                        ..k
                    });
                    self.sibling(&q, k, kp, name, prefix.as_deref(), value, content);
                }
            }
        }
        // Several parameters at once (tracking parameters come in threes): the URL without a
        // set of them, when that is indexed with the same content, is support for each. Different
        // content says only that one of them matters, not which: not counted.
        let k = p.pairs.len();
        if k >= 2 {
            // Which pairs each set drops: every set of two or more for a few pairs, the tails
            // (pairs i.. for each i) beyond.
            let sets: Vec<Vec<bool>> = if k <= MAX_SET_PARAMS {
                (1u32..1 << k)
                    .filter(|m| m.count_ones() >= 2)
                    .map(|m| (0..k).map(|j| m & (1 << j) != 0).collect())
                    .collect()
            } else {
                (0..k - 1)
                    .map(|i| (0..k).map(|j| j >= i).collect())
                    .collect()
            };
            let mut tried: Vec<u64> = Vec::new();
            for drop in sets {
                let mut q = p.clone();
                let mut it = drop.iter();
                q.pairs.retain(|_| !*it.next().unwrap_or(&false));
                let form = self.form(&q);
                if tried.contains(&form) || form == own {
                    continue;
                }
                tried.push(form);
                if self.urls.get(&form) != Some(&content) {
                    continue;
                }
                self.summary.pairs += 1;
                for (j, &(name, value)) in p.pairs.iter().enumerate() {
                    if drop[j] && !p.pairs[..j].contains(&(name, value)) {
                        self.param_evidence(
                            site,
                            name,
                            value.unwrap_or(""),
                            prefix.as_deref(),
                            true,
                        );
                    }
                }
            }
        }
    }

    /// The content of the indexed URL `q`, if it is indexed.
    fn base(&mut self, q: &Parts) -> Option<u64> {
        let form = self.form(q);
        self.urls.get(&form).copied()
    }

    /// One pair that differs in query pair `name=value` (under `prefix`): evidence for the
    /// parameter and for the parameter at that value, on the whole site and under the prefix.
    fn param_evidence(
        &mut self,
        site: u32,
        name: &str,
        value: &str,
        prefix: Option<&str>,
        same: bool,
    ) {
        let k = Key {
            site,
            kind: Kind::Param,
            name: hash_str(name),
            value: 0,
            prefix: 0,
        };
        let kv = Key {
            kind: Kind::ParamValue,
            value: hash_str(value),
            ..k
        };
        let mut keys = vec![(k, None, None), (kv, Some(value), None)];
        if let Some(pre) = prefix {
            let h = hash_str(pre);
            keys.push((Key { prefix: h, ..k }, None, Some(pre)));
            keys.push((Key { prefix: h, ..kv }, Some(value), Some(pre)));
        }
        for (key, value, prefix) in keys {
            self.count(key, same, || Counts {
                name: name.into(),
                value: value.map(Into::into),
                prefix: prefix.map(Into::into),
                ..Counts::default()
            });
        }
    }

    /// Counts the pair (`q`, the URL it came from) when `q` is indexed; false when it is not.
    fn pair(
        &mut self,
        q: &Parts,
        content: u64,
        key: Key,
        name: &str,
        value: Option<&str>,
        prefix: Option<&str>,
    ) -> bool {
        let form = self.form(q);
        let Some(&base) = self.urls.get(&form) else {
            return false;
        };
        self.summary.pairs += 1;
        self.count(key, base == content, || Counts {
            name: name.into(),
            value: value.map(Into::into),
            prefix: prefix.map(Into::into),
            ..Counts::default()
        });
        true
    }

    #[allow(clippy::too_many_arguments)]
    fn sibling(
        &mut self,
        q: &Parts,
        key: Key,
        prefixed: Option<Key>,
        name: &str,
        prefix: Option<&str>,
        value: &str,
        content: u64,
    ) {
        let prefixed = prefixed.unwrap_or(key);
        let next = self.sibling_kinds.len() as u32;
        let what = *self.sibling_ids.entry((key, prefixed)).or_insert(next);
        if what == next {
            self.sibling_kinds.push((key, prefixed));
            // Name the candidates now, while the strings are at hand.
            for (k, pre) in [(key, None), (prefixed, prefix)] {
                self.candidates.entry(k).or_insert_with(|| Counts {
                    name: name.into(),
                    prefix: pre.map(Into::into),
                    ..Counts::default()
                });
            }
        }
        let form = self.form(q);
        self.siblings.push(Sibling {
            form,
            what,
            variant: hash_str(value),
            content,
        });
    }

    fn count(&mut self, key: Key, same: bool, names: impl FnOnce() -> Counts) {
        let c = self.candidates.entry(key).or_insert_with(names);
        if same {
            c.support += 1;
        } else {
            c.against += 1;
        }
    }

    /// Counts how a page of site `site` is spelled (scheme, `www.`, where its parameters stand).
    fn spell(&mut self, site: usize, p: &Parts) {
        let (s, positions) = &mut self.spelling[site];
        *s.origins.slot(p.scheme == "https", p.host != p.site()) += 1;
        *if p.scheme == "https" {
            &mut s.https
        } else {
            &mut s.http
        } += 1;
        *if p.host != p.site() {
            &mut s.www
        } else {
            &mut s.bare
        } += 1;
        let n = p.pairs.len();
        if (2..=MAX_PAIRS).contains(&n) {
            for (i, (name, _)) in p.pairs.iter().enumerate() {
                let at = i as f64 / (n - 1) as f64;
                match positions.get_mut(*name) {
                    Some(e) => {
                        e.0 += at;
                        e.1 += 1;
                    }
                    None => {
                        positions.insert((*name).into(), (at, 1));
                    }
                }
            }
        }
    }

    fn form(&mut self, p: &Parts) -> u64 {
        p.write(&mut self.buf);
        xxh3_64(self.buf.as_bytes())
    }

    fn site(&mut self, site: &str) -> u32 {
        if let Some(&id) = self.site_ids.get(site) {
            return id;
        }
        let id = self.sites.len() as u32;
        self.sites.push((site.into(), 0));
        self.spelling.push(Default::default());
        self.site_ids.insert(site.into(), id);
        id
    }

    /// Step 3: the sibling groups, then the rules; `min_estimate` goes into the file (a rule applies
    /// when its estimate reaches it).
    pub fn finish(mut self, min_estimate: f64) -> (Rules, Summary) {
        let mut siblings = std::mem::take(&mut self.siblings);
        siblings.sort_unstable();
        for group in siblings.chunk_by(|a, b| a.form == b.form && a.what == b.what) {
            let first = group[0];
            let (key, prefixed) = self.sibling_kinds[first.what as usize];
            // Members with the first's value differ from it in something else (the order of the
            // other pairs): not a pair for this parameter.
            for s in group[1..].iter().filter(|s| s.variant != first.variant) {
                self.summary.pairs += 1;
                let same = s.content == first.content;
                self.count(key, same, Counts::default);
                if prefixed != key {
                    self.count(prefixed, same, Counts::default);
                }
            }
        }
        drop(siblings);
        // Candidates named for sibling records that never formed a pair have no evidence.
        self.candidates.retain(|_, c| c.support + c.against > 0);
        self.summary.candidates = self.candidates.len() as u64;
        // The probabilities predictions give, calibrated on every site's own part candidates (a
        // prefix or value candidate repeats pairs of its part).
        let counts: Vec<(u64, u64)> = self
            .candidates
            .values()
            .filter(|c| c.prefix.is_none() && c.value.is_none())
            .map(|c| (c.support, c.against))
            .collect();
        let fit = crate::urlrules::calibrate::fit(&counts);
        self.summary.calibration = Some(fit);

        let mut rules = rules::choose(
            self.candidates,
            &self.sites,
            &mut self.summary,
            min_estimate,
        );
        // Every site with enough pages gets its spelling (and its page count), rules or not.
        for ((site, pages), (mut spelling, positions)) in self.sites.iter().zip(self.spelling) {
            if *pages < MIN_OBSERVATIONS {
                continue;
            }
            let mut names: Vec<(f64, Box<str>)> = positions
                .into_iter()
                .filter(|(_, (_, n))| *n >= 2)
                .map(|(name, (sum, n))| (sum / n as f64, name))
                .collect();
            names.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
            spelling.params = names
                .into_iter()
                .take(MAX_SPELLED_PARAMS)
                .map(|(_, n)| n.into())
                .collect();
            let r = rules.sites.entry(site.to_string()).or_default();
            r.pages = *pages;
            r.spelling = spelling;
        }
        rules.calibration = Some(fit.calibration);
        (rules, self.summary)
    }
}
