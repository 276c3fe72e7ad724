//! Learning the rules: evidence counted by grouping, in two passes over the index's URLs.
//!
//! 1. [`Learner::add_page`]: every indexed URL with its content (a 64-bit content key: the near
//!    cluster or the exact signature; equal keys mean the same content). The learner keeps a map
//!    from a 64-bit hash of each URL (as [`Parts`] writes it) to its content: 16 bytes a page.
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
//!    [`MIN_OBSERVATIONS`] pairs becomes a rule with its [`Evidence`], per site and pooled over all
//!    sites ([`ALL_SITES`], from at least two sites).
//!
//! Memory: the URL map, the sibling records, and the candidates (one per site and rule kind, name,
//! value and path prefix met in a pair), each with its name. It grows with the index, not with the
//! number of pairs.

use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasherDefault;

use rustc_hash::FxHasher;
use xxhash_rust::xxh3::xxh3_64;

use super::parts::{parse, Parts, Segment};
use super::{Evidence, ParamRule, Rules, SiteRules, UrlError, ALL_SITES, FORMAT, MIN_OBSERVATIONS};

type FxHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// Up to this many query pairs, every set of two or more is tried without; beyond, the tails.
const MAX_SET_PARAMS: usize = 5;

/// URLs with more query pairs than this take no part in the parameter rules.
const MAX_PAIRS: usize = 64;

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

/// What a learn saw, for the summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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

        let mut rules = Rules {
            url_rules: FORMAT,
            min_estimate,
            sites: BTreeMap::new(),
        };
        // Pooled over all sites: site-level evidence only, from at least two sites.
        let mut pooled: FxHashMap<Key, (Counts, u32)> = FxHashMap::default();
        // Sorted, so that the file is the same for the same index.
        let mut all: Vec<(Key, Counts)> = self.candidates.into_iter().collect();
        all.sort_by(|a, b| {
            let (ka, kb) = (&a.0, &b.0);
            (ka.site, ka.kind, &a.1.name, &a.1.value, &a.1.prefix).cmp(&(
                kb.site,
                kb.kind,
                &b.1.name,
                &b.1.value,
                &b.1.prefix,
            ))
        });
        // Whether the site-level irrelevant rule applies, per site and parameter name hash, so that
        // prefix rules and value rules it covers are left out.
        let mut param_applies: FxHashMap<(u32, u64, u64), bool> = FxHashMap::default();
        let mut prefix_params: std::collections::HashSet<(u32, u64, u64)> =
            std::collections::HashSet::new();
        let site_level: FxHashMap<Key, (u64, u64)> = all
            .iter()
            .filter(|(k, _)| k.prefix == 0)
            .map(|(k, c)| (*k, (c.support, c.against)))
            .collect();
        for (k, c) in &all {
            if k.kind == Kind::Param {
                let e = Evidence::new(c.support, c.against);
                let enough = c.support + c.against >= MIN_OBSERVATIONS;
                param_applies.insert(
                    (k.site, k.name, k.prefix),
                    enough && e.estimate >= min_estimate,
                );
            }
        }
        for (k, c) in all {
            if k.prefix == 0 {
                let p = pooled.entry(Key { site: 0, ..k }).or_insert_with(|| {
                    (
                        Counts {
                            name: c.name.clone(),
                            value: c.value.clone(),
                            ..Counts::default()
                        },
                        0,
                    )
                });
                p.0.support += c.support;
                p.0.against += c.against;
                p.1 += 1;
            }
            if c.support + c.against < MIN_OBSERVATIONS {
                continue;
            }
            // Where the parameter's rule applies at a level, a value rule at that level adds
            // nothing.
            let covered = param_applies
                .get(&(k.site, k.name, k.prefix))
                .copied()
                .unwrap_or(false);
            if covered && k.kind == Kind::ParamValue {
                continue;
            }
            // A value that does not apply says nothing its parameter's rule does not say.
            if k.kind == Kind::ParamValue
                && Evidence::new(c.support, c.against).estimate < min_estimate
            {
                continue;
            }
            // A prefix rule is kept where it decides otherwise than the site's rule, or applies
            // with a higher estimate; else it would only say the same on less evidence. A value
            // rule under a prefix is kept where the prefix has a parameter rule of its own (that
            // level decides there, and the value rule is what lets that value go). Parameter
            // rules sort before value rules, so the set is complete when values come.
            if k.prefix != 0 && k.kind == Kind::ParamValue {
                if !prefix_params.contains(&(k.site, k.name, k.prefix)) {
                    continue;
                }
            } else if k.prefix != 0 {
                let site = site_level
                    .get(&Key { prefix: 0, ..k })
                    .map_or(0.0, |&(s, a)| Evidence::new(s, a).estimate);
                let here = Evidence::new(c.support, c.against).estimate;
                let differs = (here >= min_estimate) != (site >= min_estimate);
                let better = here >= min_estimate && here > site;
                if !(differs || better) {
                    continue;
                }
                if k.kind == Kind::Param {
                    prefix_params.insert((k.site, k.name, k.prefix));
                }
            }
            let (site, pages) = &self.sites[k.site as usize];
            let r = rules.sites.entry(site.to_string()).or_default();
            r.pages = *pages;
            put(r, k.kind, &c, &mut self.summary, min_estimate);
        }
        let mut pooled: Vec<(Key, (Counts, u32))> = pooled.into_iter().collect();
        pooled.sort_by(|a, b| {
            (a.0.kind, &a.1 .0.name, &a.1 .0.value).cmp(&(b.0.kind, &b.1 .0.name, &b.1 .0.value))
        });
        let mut any = SiteRules::default();
        let mut pooled_params = std::collections::HashSet::new();
        for (k, (c, sites)) in pooled {
            let e = Evidence::new(c.support, c.against);
            if k.kind == Kind::ParamValue && pooled_params.contains(&k.name) {
                continue;
            }
            if sites >= 2 && e.estimate >= min_estimate {
                if k.kind == Kind::Param {
                    pooled_params.insert(k.name);
                }
                put(&mut any, k.kind, &c, &mut self.summary, min_estimate);
            }
        }
        if any != SiteRules::default() {
            any.pages = self.summary.pages;
            rules.sites.insert(ALL_SITES.to_owned(), any);
        }
        (rules, self.summary)
    }
}

/// Adds a candidate's rule to a site's rules.
fn put(r: &mut SiteRules, kind: Kind, c: &Counts, summary: &mut Summary, min: f64) {
    let e = Evidence::new(c.support, c.against);
    let name = c.name.to_string();
    let prefix = c.prefix.as_deref().unwrap_or("/");
    let label = match kind {
        Kind::Scheme => {
            r.scheme = Some(e);
            "scheme"
        }
        Kind::Www => {
            r.www = Some(e);
            "www"
        }
        Kind::ParamOrder => {
            r.param_order = Some(e);
            "param order"
        }
        Kind::PathParam => {
            r.path_params.insert(name, e);
            "path parameter"
        }
        Kind::DefaultDocument => {
            r.default_documents.insert(name, e);
            "default document"
        }
        Kind::Param => {
            r.params.push(ParamRule::irrelevant(&name, prefix, e));
            "irrelevant parameter"
        }
        Kind::ParamValue => {
            let value = c.value.as_deref().unwrap_or("");
            r.params
                .push(ParamRule::default_value(&name, value, prefix, e));
            "parameter value"
        }
    };
    let n = summary.rules.entry(label).or_default();
    n.0 += 1;
    if e.estimate >= min {
        n.1 += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::urlrules::canonical;

    /// Learns from `(url, content)` pages.
    fn learn(pages: &[(&str, u64)]) -> (Rules, Summary) {
        let mut l = Learner::new();
        for (u, c) in pages {
            l.add_page(u, *c).unwrap();
        }
        for (u, _) in pages {
            l.observe(u);
        }
        l.finish(0.5)
    }

    fn ev(s: u64, a: u64) -> Evidence {
        Evidence::new(s, a)
    }

    #[test]
    fn scheme_and_www_count_one_pair_per_variant() {
        // Six pages, each also under http and under www: 6 scheme pairs and 6 www pairs, all
        // with the same content; a seventh page whose http variant is another page: 1 against.
        let mut pages = Vec::new();
        let urls: Vec<String> = (0..6)
            .flat_map(|i| {
                [
                    format!("https://a.example/p{i}"),
                    format!("http://a.example/p{i}"),
                    format!("https://www.a.example/p{i}"),
                ]
            })
            .collect();
        for (n, u) in urls.iter().enumerate() {
            pages.push((u.as_str(), (n / 3) as u64));
        }
        pages.push(("https://a.example/x", 100));
        pages.push(("http://a.example/x", 101));
        let (rules, summary) = learn(&pages);
        let a = &rules.sites["a.example"];
        assert_eq!(a.scheme, Some(ev(6, 1)));
        assert_eq!(a.www, Some(ev(6, 0)));
        assert_eq!(a.pages, 20);
        assert_eq!(summary.pairs, 13);
        // Only one site: nothing pooled.
        assert!(!rules.sites.contains_key(ALL_SITES));
    }

    #[test]
    fn a_default_value_is_learned_apart_from_the_values_that_matter() {
        // Five lists, each under /list/N, ?sort=asc (same content) and ?sort=desc (other content):
        // sort: 5 support + 5 against; sort=asc: 5 of 5; sort=desc: 0 of 5.
        let mut pages: Vec<(String, u64)> = Vec::new();
        for i in 0..5u64 {
            pages.push((format!("https://s.example/list/{i}"), i));
            pages.push((format!("https://s.example/list/{i}?sort=asc"), i));
            pages.push((format!("https://s.example/list/{i}?sort=desc"), 100 + i));
        }
        let refs: Vec<(&str, u64)> = pages.iter().map(|(u, c)| (u.as_str(), *c)).collect();
        let (rules, _) = learn(&refs);
        let s = &rules.sites["s.example"];
        let find = |value: Option<&str>, prefix: &str| {
            s.params
                .iter()
                .find(|p| {
                    p.param == "sort" && p.value.as_deref() == value && p.path_prefix == prefix
                })
                .map(|p| p.evidence)
        };
        assert_eq!(find(None, "/"), Some(ev(5, 5)));
        assert_eq!(find(Some("asc"), "/"), Some(ev(5, 0)));
        // sort=desc (0 of 5) never applies, and says no more than `sort` does: not written; nor
        // is the /list/ rule, which holds the same pairs as the site's.
        assert_eq!(find(Some("desc"), "/"), None);
        assert_eq!(find(None, "/list/"), None);
        let c = canonical("https://s.example/list/9?sort=asc", &rules).unwrap();
        assert_eq!(c.url, "https://s.example/list/9");
        let c = canonical("https://s.example/list/9?sort=desc", &rules).unwrap();
        assert_eq!(c.url, "https://s.example/list/9?sort=desc");
    }

    #[test]
    fn session_ids_without_a_base_page_are_compared_as_siblings() {
        // Every URL carries a session id; no page is indexed without one. Three topics, each under
        // three session ids: each group of three gives 2 star pairs, all support; topic pages
        // differ by `t`, never a sibling group of `sid`. Path parameters the same way.
        let mut pages: Vec<(String, u64)> = Vec::new();
        for t in 0..3u64 {
            for s in 0..3 {
                pages.push((format!("http://f.example/view?t={t}&sid=s{s}x"), t));
                pages.push((
                    format!("http://f.example/show;jsessionid=S{s}?t={t}"),
                    10 + t,
                ));
            }
        }
        let refs: Vec<(&str, u64)> = pages.iter().map(|(u, c)| (u.as_str(), *c)).collect();
        let (rules, summary) = learn(&refs);
        let f = &rules.sites["f.example"];
        let sid = f.params.iter().find(|p| p.param == "sid").unwrap();
        assert_eq!(sid.evidence, ev(6, 0));
        assert_eq!(sid.path_prefix, "/");
        assert_eq!(f.path_params["jsessionid"], ev(6, 0));
        // `t` differs between siblings of the same session: 3 topics per session, 2 star pairs
        // against each, 3 sessions, in each of the two paths: 12 against.
        let t = f.params.iter().find(|p| p.param == "t").unwrap();
        assert_eq!(t.evidence, ev(0, 12));
        assert_eq!(summary.pairs, 24);
        let c = canonical("http://f.example/view?t=7&sid=zz", &rules).unwrap();
        assert_eq!(c.url, "http://f.example/view?t=7");
    }

    #[test]
    fn default_documents_and_parameter_order() {
        // Five directories with index.html (same content) and five pages with their parameters
        // in two orders (same content); one directory whose index.html differs.
        let mut pages: Vec<(String, u64)> = Vec::new();
        for i in 0..5u64 {
            pages.push((format!("https://d.example/d{i}/"), i));
            pages.push((format!("https://d.example/d{i}/index.html"), i));
            pages.push((format!("https://d.example/p?a={i}&b=1"), 10 + i));
            pages.push((format!("https://d.example/p?b=1&a={i}"), 10 + i));
        }
        pages.push(("https://d.example/x/".into(), 20));
        pages.push(("https://d.example/x/index.html".into(), 21));
        let refs: Vec<(&str, u64)> = pages.iter().map(|(u, c)| (u.as_str(), *c)).collect();
        let (rules, _) = learn(&refs);
        let d = &rules.sites["d.example"];
        assert_eq!(d.default_documents["index.html"], ev(5, 1));
        assert_eq!(d.param_order, Some(ev(5, 0)));
        // `/p` itself is not indexed and no page is one pair away from it: no default document.
        assert!(!d.default_documents.contains_key("p"));
    }

    #[test]
    fn a_parameter_can_matter_on_one_path_and_not_under_another() {
        // `ref` is tracking under /blog/ (5 of 5 the same) and an id under /shop/ (5 of 5 other):
        // the site-level rule does not apply, the prefix rules decide.
        let mut pages: Vec<(String, u64)> = Vec::new();
        for i in 0..5u64 {
            pages.push((format!("https://m.example/blog/{i}"), i));
            pages.push((format!("https://m.example/blog/{i}?ref=feed"), i));
            pages.push((format!("https://m.example/shop/{i}"), 10 + i));
            pages.push((format!("https://m.example/shop/{i}?ref=r{i}"), 20 + i));
        }
        let refs: Vec<(&str, u64)> = pages.iter().map(|(u, c)| (u.as_str(), *c)).collect();
        let (rules, _) = learn(&refs);
        let m = &rules.sites["m.example"];
        let get = |prefix: &str| {
            m.params
                .iter()
                .find(|p| p.param == "ref" && p.value.is_none() && p.path_prefix == prefix)
                .map(|p| p.evidence)
        };
        assert_eq!(get("/"), Some(ev(5, 5)));
        assert_eq!(get("/blog/"), Some(ev(5, 0)));
        // Under /shop/ the rule does not apply, as on the whole site: nothing more to say there.
        assert_eq!(get("/shop/"), None);
        assert_eq!(
            canonical("https://m.example/blog/9?ref=x", &rules)
                .unwrap()
                .url,
            "https://m.example/blog/9"
        );
        assert_eq!(
            canonical("https://m.example/shop/9?ref=x", &rules)
                .unwrap()
                .url,
            "https://m.example/shop/9?ref=x"
        );
    }

    #[test]
    fn rules_are_pooled_over_sites_and_a_site_of_its_own_keeps_out() {
        // utm_source: 5 support on each of three sites, 5 against on a fourth. Pooled: 15 of 20,
        // Wilson lower bound 0.53, applies to a site without evidence; the fourth site's own
        // evidence (0 of 5) keeps it off there.
        let mut pages: Vec<(String, u64)> = Vec::new();
        for (n, site) in ["a.example", "b.example", "c.example"].iter().enumerate() {
            for i in 0..5u64 {
                let c = n as u64 * 10 + i;
                pages.push((format!("https://{site}/{i}"), c));
                pages.push((format!("https://{site}/{i}?utm_source=x"), c));
            }
        }
        for i in 0..5u64 {
            pages.push((format!("https://odd.example/{i}"), 50 + i));
            pages.push((format!("https://odd.example/{i}?utm_source=x"), 60 + i));
        }
        let refs: Vec<(&str, u64)> = pages.iter().map(|(u, c)| (u.as_str(), *c)).collect();
        let (rules, _) = learn(&refs);
        let all = &rules.sites[ALL_SITES];
        let pooled = all
            .params
            .iter()
            .find(|p| p.param == "utm_source" && p.value.is_none())
            .unwrap();
        assert_eq!(pooled.evidence, ev(15, 5));
        assert!((pooled.evidence.estimate - 0.5313).abs() < 1e-3);
        let c = canonical("https://new.example/1?utm_source=y", &rules).unwrap();
        assert_eq!(c.url, "https://new.example/1");
        assert_eq!(c.applied, ["param utm_source (all sites)"]);
        let c = canonical("https://odd.example/9?utm_source=y", &rules).unwrap();
        assert_eq!(c.url, "https://odd.example/9?utm_source=y");
    }

    #[test]
    fn pooled_rules_stand_in_for_sites_without_evidence() {
        let mut pages: Vec<(String, u64)> = Vec::new();
        for (n, site) in ["a.example", "b.example"].iter().enumerate() {
            for i in 0..4u64 {
                let c = n as u64 * 10 + i;
                pages.push((format!("https://{site}/{i}"), c));
                pages.push((format!("https://www.{site}/{i}"), c));
            }
        }
        let refs: Vec<(&str, u64)> = pages.iter().map(|(u, c)| (u.as_str(), *c)).collect();
        let (rules, _) = learn(&refs);
        assert_eq!(rules.sites[ALL_SITES].www, Some(ev(8, 0)));
        let c = canonical("https://www.new.example/a", &rules).unwrap();
        assert_eq!(c.url, "https://new.example/a");
        assert_eq!(c.applied, ["www (all sites)"]);
        assert!((c.keeps - pessimistic_of(8, 0)).abs() < 1e-12);
    }

    fn pessimistic_of(s: u64, a: u64) -> f64 {
        crate::urlrules::pessimistic(s, a)
    }

    #[test]
    fn a_value_that_does_not_matter_under_a_prefix_where_the_parameter_does() {
        // Under /a/, x=0 is the page and x=1 another (5 each); under /b/, x never matters (60).
        // The site's rule for x applies (60+5 of 70), /a/'s does not (5 of 10), so /a/ decides
        // there, and its value rule x=0 (5 of 5) must be written to let x=0 go.
        let mut pages: Vec<(String, u64)> = Vec::new();
        for i in 0..5u64 {
            pages.push((format!("https://s.example/a/{i}"), i));
            pages.push((format!("https://s.example/a/{i}?x=0"), i));
            pages.push((format!("https://s.example/a/{i}?x=1"), 100 + i));
        }
        for i in 0..60u64 {
            pages.push((format!("https://s.example/b/{i}"), 200 + i));
            pages.push((format!("https://s.example/b/{i}?x={i}"), 200 + i));
        }
        let refs: Vec<(&str, u64)> = pages.iter().map(|(u, c)| (u.as_str(), *c)).collect();
        let (rules, _) = learn(&refs);
        let s = &rules.sites["s.example"];
        let get = |value: Option<&str>, prefix: &str| {
            s.params
                .iter()
                .find(|p| p.param == "x" && p.value.as_deref() == value && p.path_prefix == prefix)
                .map(|p| p.evidence)
        };
        assert_eq!(get(None, "/"), Some(ev(65, 5)));
        assert_eq!(get(None, "/a/"), Some(ev(5, 5)));
        assert_eq!(get(Some("0"), "/a/"), Some(ev(5, 0)));
        let c = |u: &str| canonical(u, &rules).unwrap().url;
        assert_eq!(c("https://s.example/a/9?x=0"), "https://s.example/a/9");
        assert_eq!(c("https://s.example/a/9?x=1"), "https://s.example/a/9?x=1");
        assert_eq!(c("https://s.example/b/9?x=7"), "https://s.example/b/9");
    }

    #[test]
    fn a_url_is_never_paired_with_itself() {
        let mut pages: Vec<(String, u64)> = Vec::new();
        for i in 0..5u64 {
            // Listed twice (the fragment goes in parsing): one URL, no pair.
            pages.push((format!("https://e.example/v?t={i}&id={i}#a"), i));
            pages.push((format!("https://e.example/v?t={i}&id={i}#b"), i));
            // A parameter repeated: dropping either copy gives the same URL, not another one.
            pages.push((format!("https://d.example/p{i}?a=1&a=1"), 10 + i));
            // Two orders of the same pairs: they differ in order, not in `sid`.
            pages.push((format!("https://g.example/v?sid=1&t={i}"), 20 + i));
            pages.push((format!("https://g.example/v?t={i}&sid=1"), 20 + i));
        }
        let refs: Vec<(&str, u64)> = pages.iter().map(|(u, c)| (u.as_str(), *c)).collect();
        let (rules, summary) = learn(&refs);
        assert!(!rules.sites.contains_key("e.example"), "{rules:?}");
        assert!(!rules.sites.contains_key("d.example"), "{rules:?}");
        let g = &rules.sites["g.example"];
        assert!(!g.params.iter().any(|p| p.param == "sid"), "{g:?}");
        assert_eq!(g.param_order, Some(ev(5, 0)));
        // `t` does matter: without it both orders of each page fall in the group of `?sid=1`,
        // whose first member is t=0; the 8 members with another t are against (those with t=0
        // too are no pair).
        let t = g.params.iter().find(|p| p.param == "t").unwrap();
        assert_eq!(t.evidence, ev(0, 8));
        assert_eq!(summary.pairs, 5 + 8);
        assert_eq!(summary.repeated_urls, 5);
    }

    #[test]
    fn a_pooled_rule_needs_evidence_from_two_sites() {
        let mut pages: Vec<(String, u64)> = Vec::new();
        for i in 0..5u64 {
            pages.push((format!("https://a.example/{i}"), i));
            pages.push((format!("https://a.example/{i}?utm_source=x"), i));
        }
        // b.example has a URL with the parameter, but no pair.
        pages.push(("https://b.example/?utm_source=x".into(), 99));
        let refs: Vec<(&str, u64)> = pages.iter().map(|(u, c)| (u.as_str(), *c)).collect();
        let (rules, _) = learn(&refs);
        assert!(!rules.sites.contains_key(ALL_SITES), "{rules:?}");
    }

    #[test]
    fn a_url_with_many_pairs_neither_panics_nor_counts() {
        let long: String = (0..40).map(|i| format!("p{i}={i}&")).collect();
        let mut l = Learner::new();
        for i in 0..5 {
            l.add_page(&format!("https://l.example/{i}?{long}"), i)
                .unwrap();
            l.add_page(&format!("https://l.example/{i}"), i).unwrap();
        }
        for i in 0..5 {
            l.observe(&format!("https://l.example/{i}?{long}"));
        }
        let (rules, summary) = l.finish(0.5);
        assert_eq!(summary.long_queries, 0, "40 pairs are under the limit");
        // The tails: dropping all 40 gives the indexed page, support for each of them.
        let p0 = rules.sites["l.example"]
            .params
            .iter()
            .find(|p| p.param == "p0" && p.value.is_none())
            .unwrap();
        assert_eq!(p0.evidence, ev(5, 0));
        let longer: String = (0..70).map(|i| format!("q{i}=1&")).collect();
        let mut l = Learner::new();
        l.add_page(&format!("https://l.example/?{longer}"), 1)
            .unwrap();
        l.observe(&format!("https://l.example/?{longer}"));
        assert_eq!(l.finish(0.5).1.long_queries, 1);
    }

    #[test]
    fn bad_urls_are_counted_and_left_out() {
        let mut l = Learner::new();
        assert!(l.add_page("mailto:x@y.example", 1).is_err());
        assert!(l.add_page("not a url", 1).is_err());
        l.add_page("https://a.example/", 1).unwrap();
        l.add_page("https://a.example/", 2).unwrap();
        l.observe("mailto:x@y.example");
        let (rules, summary) = l.finish(0.5);
        assert_eq!(summary.bad_urls, 2);
        assert_eq!(summary.repeated_urls, 1);
        assert_eq!(summary.pages, 2);
        assert!(rules.sites.is_empty());
    }
}
