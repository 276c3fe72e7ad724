//! URL rules (seed 002, `urlrules.md`): which parts of a site's URLs do not change the page, learned
//! from the pages an index holds, and what that says about a URL not fetched yet. Pure code, no I/O:
//! [`crate::learn::urls`] feeds it the index.
//!
//! - [`induce`]: the evidence for each candidate rule, counted by grouping: pairs of indexed URLs
//!   that differ only in what the rule covers, with the same content (support) or not (against).
//! - [`canonical`]: a URL rewritten by the rules that the evidence supports.
//! - [`predict`]: an index of the canonical forms of the indexed URLs, and for a new URL the indexed
//!   page it would duplicate, with a probability.
//! - [`nutch`]: the rules as Apache Nutch's `regex-normalize.xml`.
//! - [`clean`]: how clean a URL is for a searcher without rules (session and tracking parameters,
//!   print views, default values, default documents, host case), for choosing representatives.
//!
//! # The canonical form
//!
//! In this order; each step is keyed by the *site*, the host without a leading `www.`, so that a URL
//! and its canonical form look up the same rules and the form is idempotent:
//!
//! 1. WHATWG parsing (`url` crate): scheme and host lower-cased (host case never matters: DNS names
//!    are case-insensitive), IDN hosts in punycode, the default port and the fragment dropped. Only
//!    `http` and `https` URLs have a canonical form.
//! 2. the scheme rule: `https` for both schemes; the `www` rule: the bare host;
//! 3. path parameters the site ignores (`;jsessionid=…`) removed from every segment;
//! 4. a trailing default document (`index.html`) removed, leaving the directory;
//! 5. query parameters the site ignores (on every path, under a first directory, or on one script at
//!    the top such as `/viewtopic.php`), and parameters at
//!    a value that does not matter (a default such as `sort=asc`), removed; empty pairs dropped;
//! 6. the parameter-order rule: the remaining pairs sorted (by name, then value, as written).
//!
//! A rule applies when its estimate is at least the file's `min_estimate`. A site's own rules come
//! first; for a candidate the site has no evidence on, the rules pooled over all sites (`"*"`) stand
//! in. For a query parameter, the most specific path prefix with any rule for that name decides.
//!
//! ```
//! use solr_dedup::urlrules::{canonical, Evidence, ParamRule, Rules, SiteRules};
//!
//! let mut site = SiteRules::default();
//! site.www = Some(Evidence::new(40, 0));
//! site.params.push(ParamRule::irrelevant("utm_source", "/", Evidence::new(120, 1)));
//! let mut rules = Rules::default();
//! rules.sites.insert("shop.example".into(), site);
//! let c = canonical("http://WWW.Shop.Example/a?utm_source=x&id=7#top", &rules).unwrap();
//! assert_eq!(c.url, "http://shop.example/a?id=7");
//! assert_eq!(c.applied, ["host case", "www", "param utm_source"]);
//! ```

pub mod calibrate;
pub mod clean;
pub mod induce;
pub mod nutch;
mod parts;
pub mod predict;
pub mod rank;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use parts::{host_has_upper_case, parse, Parts};

/// The rules file's format.
pub const FORMAT: u32 = 1;

/// The key of the rules pooled over all sites.
pub const ALL_SITES: &str = "*";

/// The default [`Rules::min_estimate`].
pub const MIN_ESTIMATE: f64 = 0.5;

/// Rules per site.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rules {
    /// [`FORMAT`].
    pub url_rules: u32,
    /// A rule applies when its estimate is at least this; the others are evidence that the part
    /// matters (and keep the pooled rules off that site).
    pub min_estimate: f64,
    /// Per site (the host without a leading `www.`), and [`ALL_SITES`].
    pub sites: BTreeMap<String, SiteRules>,
    /// How a rule's counts become the probability a prediction gives ([`calibrate`]), chosen by
    /// cross-validation when the rules were learnt; none (a file from before, or made by hand):
    /// predictions give the estimates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<calibrate::Calibration>,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            url_rules: FORMAT,
            min_estimate: MIN_ESTIMATE,
            sites: BTreeMap::new(),
            calibration: None,
        }
    }
}

impl Rules {
    /// Each rule's estimate computed again from its counts (a file edited by hand cannot claim
    /// more than its evidence says), and the site keys lower-cased as hosts are.
    pub fn recompute(&mut self) {
        let sites = std::mem::take(&mut self.sites);
        for (site, mut r) in sites {
            let fix = |e: &mut Evidence| *e = Evidence::new(e.support, e.against);
            for e in [&mut r.scheme, &mut r.www, &mut r.param_order]
                .into_iter()
                .flatten()
            {
                fix(e);
            }
            r.path_params.values_mut().for_each(fix);
            r.default_documents.values_mut().for_each(fix);
            r.params.iter_mut().for_each(|p| fix(&mut p.evidence));
            self.sites.insert(site.to_ascii_lowercase(), r);
        }
    }
}

/// One site's rules, each with its evidence.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SiteRules {
    /// Indexed pages of the site (not used by the rules; the representative's order prefers the
    /// site with more pages, [`rank`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pages: u64,
    /// How the site's pages are spelled (scheme, `www.`, parameter order), for the
    /// representative's order ([`rank`]); its `origins` also decide where pooled scheme and `www`
    /// rules take the site's URLs ([`canonical`]).
    #[serde(default, skip_serializing_if = "rank::Spelling::is_empty")]
    pub spelling: rank::Spelling,
    /// `http` and `https` serve the same pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheme: Option<Evidence>,
    /// `www.host` and `host` serve the same pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub www: Option<Evidence>,
    /// The order of query parameters does not matter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param_order: Option<Evidence>,
    /// Path parameters (`;name=value`) that do not matter, by lower-case name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub path_params: BTreeMap<String, Evidence>,
    /// Last path segments that serve their directory (`index.html`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub default_documents: BTreeMap<String, Evidence>,
    /// Query parameters that do not matter, or not at one value.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<ParamRule>,
}

impl SiteRules {
    /// Whether it holds any rule (an entry may hold only its pages and spelling).
    pub fn has_rules(&self) -> bool {
        self.scheme.is_some()
            || self.www.is_some()
            || self.param_order.is_some()
            || !self.path_params.is_empty()
            || !self.default_documents.is_empty()
            || !self.params.is_empty()
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A query parameter that does not change the page: with any value (`value: None`), or only at one
/// value (a default), under a path prefix (`/` for the whole site).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParamRule {
    /// The parameter's name, as written in URLs.
    pub param: String,
    /// The one value that does not matter; `None`: no value matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The rule holds for paths starting with this when it ends in `/` (`/` itself: the whole
    /// site), else on this path only (a script at the top, such as `/viewtopic.php`).
    pub path_prefix: String,
    /// Its evidence.
    pub evidence: Evidence,
}

impl ParamRule {
    /// A parameter whose value never matters under `path_prefix`.
    pub fn irrelevant(param: &str, path_prefix: &str, evidence: Evidence) -> Self {
        ParamRule {
            param: param.to_owned(),
            value: None,
            path_prefix: path_prefix.to_owned(),
            evidence,
        }
    }

    /// A parameter that does not matter at `value` under `path_prefix`.
    pub fn default_value(param: &str, value: &str, path_prefix: &str, evidence: Evidence) -> Self {
        ParamRule {
            param: param.to_owned(),
            value: Some(value.to_owned()),
            path_prefix: path_prefix.to_owned(),
            evidence,
        }
    }

    /// Whether the rule holds on `path`: under a directory prefix (ending in `/`), or on exactly
    /// that path (a script at the top, such as `/viewtopic.php`).
    pub fn holds_on(&self, path: &str) -> bool {
        if self.path_prefix.ends_with('/') {
            path.starts_with(&self.path_prefix)
        } else {
            path == self.path_prefix
        }
    }

    /// A short description (`param sid`, `param sort=asc under /list/`).
    pub fn describe(&self) -> String {
        let mut s = format!("param {}", self.param);
        if let Some(v) = &self.value {
            s.push('=');
            s.push_str(v);
        }
        if self.path_prefix != "/" {
            s.push_str(" under ");
            s.push_str(&self.path_prefix);
        }
        s
    }
}

/// What the index says about a rule: pairs of URLs that differ only in what it covers, with the same
/// content (`support`) and with different content (`against`), and the pessimistic estimate of the
/// chance that applying it keeps the content.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Evidence {
    /// Pairs with the same content.
    pub support: u64,
    /// Pairs with different content.
    pub against: u64,
    /// [`pessimistic`] of the two.
    pub estimate: f64,
}

impl Evidence {
    /// Evidence with its estimate.
    pub fn new(support: u64, against: u64) -> Self {
        Evidence {
            support,
            against,
            estimate: pessimistic(support, against),
        }
    }
}

/// Fewer observations than this give an estimate of 0 (as in MaybeDont).
pub const MIN_OBSERVATIONS: u64 = 5;

/// The lower end of the 95 % Wilson score interval of `support / (support + against)`, 0 under
/// [`MIN_OBSERVATIONS`] (as MaybeDont, which uses a normal interval after Laplace smoothing;
/// Wilson's stays inside [0, 1] and is not too sure at the extremes, where rules live).
pub fn pessimistic(support: u64, against: u64) -> f64 {
    let n = (support + against) as f64;
    if support + against < MIN_OBSERVATIONS || support == 0 {
        return 0.0;
    }
    let z = 1.959_963_984_540_054_f64;
    let p = support as f64 / n;
    let z2 = z * z;
    let centre = p + z2 / (2.0 * n);
    let margin = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - margin) / (1.0 + z2 / n)).max(0.0)
}

/// Why a URL has no canonical form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// Not a URL.
    #[error("not a URL: {0:?}")]
    Unparseable(String),
    /// Not http or https.
    #[error("not an http(s) URL: {0:?}")]
    NotHttp(String),
}

/// A URL's canonical form and what made it.
#[derive(Debug, Clone, PartialEq)]
pub struct Canonical {
    /// The canonical form.
    pub url: String,
    /// The site whose rules applied.
    pub site: String,
    /// What changed the URL, as short descriptions (`host case`, `www`, `param utm_source`; a rule
    /// pooled over all sites ends in ` (all sites)`).
    pub applied: Vec<String>,
    /// The estimate of each of `applied` (1 for host case and user info).
    pub estimates: Vec<f64>,
    /// The probability each of `applied` keeps the page: calibrated from its counts under the
    /// file's [`Rules::calibration`], else its estimate (1 for host case and user info).
    pub probabilities: Vec<f64>,
    /// The product of the applied rules' estimates: the chance, by the evidence, that the canonical
    /// form serves the same page (1 when nothing but the parser's normalisation applied).
    pub keeps: f64,
}

/// Whether `raw` has a canonical form at all (an http(s) URL with a host).
pub fn is_http_url(raw: &str) -> bool {
    parse(raw).is_ok()
}

/// The site of a host: the host without its leading `www.`.
pub fn site_of(host: &str) -> &str {
    // Every leading `www.` (`www.www.example` too, so that the form stays idempotent), as long as a
    // name with a dot is left (`www.com` is a site of its own).
    let mut site = host;
    while let Some(rest) = site.strip_prefix("www.") {
        if !rest.contains('.') {
            break;
        }
        site = rest;
    }
    site
}

/// A site's own rules and the pooled ones.
#[derive(Clone, Copy)]
struct Lookup<'r> {
    own: Option<&'r SiteRules>,
    all: Option<&'r SiteRules>,
    min: f64,
}

impl<'r> Lookup<'r> {
    fn new(rules: &'r Rules, site: &str) -> Self {
        Lookup {
            own: rules.sites.get(site),
            all: rules.sites.get(ALL_SITES),
            min: rules.min_estimate,
        }
    }

    /// A rule applies when its estimate reaches the file's minimum, and is above 0 whatever the
    /// minimum (an estimate of 0 is too little evidence, or evidence against).
    fn applies(&self, e: &Evidence) -> bool {
        e.estimate >= self.min && e.estimate > 0.0
    }

    /// The evidence that decides a candidate: the site's own when it has any, else the pooled;
    /// `Some` when that applies, with whether it is the pooled one.
    fn decide<F>(&self, get: F) -> Option<(&'r Evidence, bool)>
    where
        F: Fn(&'r SiteRules) -> Option<&'r Evidence>,
    {
        match self.own.and_then(&get) {
            Some(e) => self.applies(e).then_some((e, false)),
            None => self
                .all
                .and_then(&get)
                .filter(|e| self.applies(e))
                .map(|e| (e, true)),
        }
    }

    /// The rule that removes query pair `name=value` on `path`: at the most specific path prefix
    /// with any rule for `name`, of the site's own and then the pooled rules.
    fn param(&self, path: &str, name: &str, value: Option<&str>) -> Option<(&'r ParamRule, bool)> {
        for (rules, pooled) in [(self.own, false), (self.all, true)] {
            let Some(r) = rules else { continue };
            let level = r
                .params
                .iter()
                .filter(|p| p.param == name && p.holds_on(path))
                .map(|p| p.path_prefix.len())
                .max();
            if let Some(len) = level {
                return r
                    .params
                    .iter()
                    .find(|p| {
                        p.path_prefix.len() == len
                            && p.param == name
                            && p.holds_on(path)
                            && self.applies(&p.evidence)
                            && p.value.as_deref().is_none_or(|v| value.unwrap_or("") == v)
                    })
                    .map(|p| (p, pooled));
            }
        }
        None
    }
}

/// The canonical form of `raw` under `rules` (see the module docs).
pub fn canonical(raw: &str, rules: &Rules) -> Result<Canonical, UrlError> {
    let url = parse(raw)?;
    // The `www.` host of the site, for a pooled rule that takes a URL there (see below).
    let www_host = format!("www.{}", site_of(url.host_str().unwrap_or("")));
    let mut p = Parts::of(&url);
    let site = p.site();
    let look = Lookup::new(rules, site);
    let mut applied = Vec::new();
    let mut estimates = Vec::new();
    let mut probabilities = Vec::new();
    if host_has_upper_case(raw) {
        applied.push("host case".to_owned());
        estimates.push(1.0);
        probabilities.push(1.0);
    }
    if !url.username().is_empty() || url.password().is_some() {
        // Credentials never choose the page; they are left out of the form (and of every answer).
        applied.push("user info".to_owned());
        estimates.push(1.0);
        probabilities.push(1.0);
    }
    let mut keeps = 1.0;
    let mut apply = |what: &str, (e, pooled): (&Evidence, bool)| {
        applied.push(if pooled {
            format!("{what} (all sites)")
        } else {
            what.to_owned()
        });
        estimates.push(e.estimate);
        probabilities.push(
            rules
                .calibration
                .map_or(e.estimate, |c| c.probability(e.support, e.against)),
        );
        keeps *= e.estimate;
    };
    // The scheme and host spelling. A site's own scheme and www rules take every URL to https and
    // the bare host: their pairs show it serves pages under both. A rule pooled over all sites never
    // takes a URL to a scheme and host the site has no indexed page under (an http-only site is not
    // rewritten to https): among the spellings the pooled rules reach from this URL (both ways: they
    // say the two serve the same pages), the one with the most of the site's pages, https and the
    // bare host first on a tie; none with pages, no pooled rewrite. The same from every spelling
    // the rules connect, so the form stays idempotent. A site whose spellings are not counted (an
    // older file, too few pages) takes the pooled rules as its own.
    let scheme_rule = look.decide(|r| r.scheme.as_ref());
    let www_rule = look.decide(|r| r.www.as_ref());
    let origins = look
        .own
        .map(|r| r.spelling.origins)
        .filter(|o| !o.is_empty());
    let (is_https, is_www) = (p.scheme == "https", p.host != site);
    let (to_https, to_www) = match origins {
        Some(origins) if scheme_rule.is_some_and(|d| d.1) || www_rule.is_some_and(|d| d.1) => {
            // Own rules fix their side; pooled ones leave both open.
            let schemes: &[bool] = match scheme_rule {
                Some((_, false)) => &[true],
                Some((_, true)) => &[true, false],
                None => std::slice::from_ref(&is_https),
            };
            let hosts: &[bool] = match www_rule {
                Some((_, false)) => &[false],
                Some((_, true)) => &[false, true],
                None => std::slice::from_ref(&is_www),
            };
            let mut best: Option<(u64, bool, bool)> = None;
            for &h in schemes {
                for &w in hosts {
                    let mut o = origins;
                    let n = *o.slot(h, w);
                    // Listed https first, bare first: a later one wins only with more pages.
                    if n > 0 && best.is_none_or(|(m, _, _)| n > m) {
                        best = Some((n, h, w));
                    }
                }
            }
            match best {
                Some((_, h, w)) => (h, w),
                // Nowhere with pages: own rules as they say, pooled ones not.
                None => (
                    matches!(scheme_rule, Some((_, false))) || is_https,
                    !matches!(www_rule, Some((_, false))) && is_www,
                ),
            }
        }
        _ => (
            scheme_rule.is_some() || is_https,
            www_rule.is_none() && is_www,
        ),
    };
    if to_https != is_https {
        if let Some(d) = scheme_rule {
            p.scheme = if to_https { "https" } else { "http" };
            apply("scheme", d);
        }
    }
    if to_www != is_www {
        if let Some(d) = www_rule {
            p.host = if to_www { &www_host } else { site };
            apply("www", d);
        }
    }
    for segment in &mut p.segments {
        segment.params.retain(|param| {
            let name = param.split('=').next().unwrap_or("").to_ascii_lowercase();
            match look.decide(|r| r.path_params.get(&name)) {
                Some(d) => {
                    apply(&format!("path parameter {name}"), d);
                    false
                }
                None => true,
            }
        });
    }
    if let Some(last) = p.segments.last_mut() {
        if !last.name.is_empty() && last.params.is_empty() {
            let name = last.name;
            if let Some(d) = look.decide(|r| r.default_documents.get(name)) {
                apply(&format!("default document {name}"), d);
                last.name = "";
            }
        }
    }
    let path = p.plain_path();
    p.pairs
        .retain(|&(name, value)| match look.param(&path, name, value) {
            Some((rule, pooled)) => {
                apply(&rule.describe(), (&rule.evidence, pooled));
                false
            }
            None => true,
        });
    if !p.pairs_sorted() {
        if let Some(d) = look.decide(|r| r.param_order.as_ref()) {
            p.pairs.sort();
            apply("param order", d);
        }
    }
    Ok(Canonical {
        url: p.to_url(),
        site: site.to_owned(),
        applied,
        estimates,
        probabilities,
        keeps,
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn every_kind() -> Rules {
        let e = Evidence::new(99, 0);
        let mut site = SiteRules {
            scheme: Some(e),
            www: Some(e),
            param_order: Some(e),
            ..SiteRules::default()
        };
        site.path_params.insert("jsessionid".into(), e);
        site.default_documents.insert("index.html".into(), e);
        site.params.push(ParamRule::irrelevant("sid", "/", e));
        site.params.push(ParamRule::irrelevant("ref", "/blog/", e));
        site.params
            .push(ParamRule::default_value("sort", "asc", "/", e));
        let mut rules = Rules::default();
        rules.sites.insert("shop.example".into(), site);
        rules
    }

    #[test]
    fn each_rule_kind_rewrites_its_part() {
        let r = every_kind();
        let c = canonical(
            "HTTP://WWW.SHOP.example:80/blog/index.html;JSESSIONID=AB12?sort=asc&z=1&ref=x&&a=2&sid=9#f",
            &r,
        )
        .unwrap();
        assert_eq!(c.url, "https://shop.example/blog/?a=2&z=1");
        assert_eq!(
            c.applied,
            [
                "host case",
                "scheme",
                "www",
                "path parameter jsessionid",
                "default document index.html",
                "param sort=asc",
                "param ref under /blog/",
                "param sid",
                "param order"
            ]
        );
        // The scheme rule on https's port: the form the parser would write, and stays so.
        let c = canonical("http://shop.example:443/p", &r).unwrap();
        assert_eq!(c.url, "https://shop.example/p");
        assert_eq!(canonical(&c.url, &r).unwrap().url, c.url);
        // A value that matters stays, and `ref` outside /blog/ too.
        let c = canonical("https://shop.example/p?sort=desc&ref=x", &r).unwrap();
        assert_eq!(c.url, "https://shop.example/p?ref=x&sort=desc");
        // Another site: only the parser's normalisation.
        let c = canonical("http://Other.example/index.html?b=1&a=2", &r).unwrap();
        assert_eq!(c.url, "http://other.example/index.html?b=1&a=2");
        assert_eq!(c.applied, ["host case"]);
        assert_eq!(c.keeps, 1.0);
    }

    #[test]
    fn urls_without_a_canonical_form_say_why() {
        let r = Rules::default();
        assert!(matches!(
            canonical("not a url", &r),
            Err(UrlError::Unparseable(_))
        ));
        assert!(matches!(
            canonical("ftp://files.example/a", &r),
            Err(UrlError::NotHttp(_))
        ));
    }

    #[test]
    fn the_estimate_is_pessimistic_and_zero_on_little_evidence() {
        assert_eq!(pessimistic(4, 0), 0.0);
        // Wilson, z = 1.96: 20 of 20 gives n / (n + z²) = 0.8389; 95 of 100, 0.8882 (by hand in
        // Python from the textbook formula).
        assert!((pessimistic(20, 0) - 0.8389).abs() < 1e-4);
        assert!((pessimistic(95, 5) - 0.8882).abs() < 1e-4);
        assert!(pessimistic(1000, 0) > pessimistic(100, 0));
        assert_eq!(pessimistic(0, 50), 0.0);
    }

    /// [`every_kind`], plus rules pooled over all sites, rules that do not apply (and keep the
    /// pooled ones off), and a rule for one top-level script.
    fn every_level() -> Rules {
        let mut r = every_kind();
        let yes = Evidence::new(99, 0);
        let no = Evidence::new(0, 99);
        let shop = r.sites.get_mut("shop.example").unwrap();
        shop.params.push(ParamRule::irrelevant("f", "/", no));
        shop.params
            .push(ParamRule::irrelevant("f", "/view.php", yes));
        shop.params
            .push(ParamRule::irrelevant("utm_source", "/", no));
        let mut all = SiteRules {
            www: Some(yes),
            scheme: Some(no),
            ..SiteRules::default()
        };
        all.default_documents.insert("index.htm".into(), yes);
        all.path_params.insert("sid".into(), yes);
        all.params
            .push(ParamRule::irrelevant("utm_source", "/", yes));
        all.params
            .push(ParamRule::default_value("sort", "asc", "/", yes));
        r.sites.insert(ALL_SITES.into(), all);
        r
    }

    #[test]
    fn the_site_decides_before_the_pooled_rules_and_the_most_specific_prefix_first() {
        let r = every_level();
        // A site without rules of its own: the pooled ones that apply (not the scheme).
        let c = canonical(
            "http://www.other.example/a/index.htm;SID=1?utm_source=x&sort=asc&f=2",
            &r,
        )
        .unwrap();
        assert_eq!(c.url, "http://other.example/a/?f=2");
        assert_eq!(
            c.applied,
            [
                "www (all sites)",
                "path parameter sid (all sites)",
                "default document index.htm (all sites)",
                "param utm_source (all sites)",
                "param sort=asc (all sites)"
            ]
        );
        // The shop's own evidence against utm_source keeps the pooled rule off; f goes on
        // /view.php only.
        let c = canonical("https://shop.example/view.php?f=1&utm_source=x", &r).unwrap();
        assert_eq!(c.url, "https://shop.example/view.php?utm_source=x");
        let c = canonical("https://shop.example/list.php?f=1", &r).unwrap();
        assert_eq!(c.url, "https://shop.example/list.php?f=1");
    }

    proptest! {
        #[test]
        fn the_canonical_form_is_idempotent(
            www in any::<bool>(),
            https in any::<bool>(),
            shop in any::<bool>(),
            port in "(|:80|:443|:8080)",
            host in "(shop\\.example|Other\\.Example|www\\.shop\\.example|www\\.www\\.shop\\.example|www\\.com)",
            segs in proptest::collection::vec("([a-zA-Z0-9.]{0,6}|view.php|index.htm|index.html)(;[a-zA-Z]{1,10}=[0-9]{0,3})?", 0..4),
            pairs in proptest::collection::vec(("(sid|ref|sort|a|b|z|f|utm_source)", proptest::option::of("(asc|desc|x|)")), 0..6),
        ) {
            let r = every_level();
            let mut u = format!(
                "{}://{}{}{}/{}",
                if https { "https" } else { "http" },
                if www { "www." } else { "" },
                if shop { "shop.example" } else { host.as_str() },
                port,
                segs.join("/")
            );
            for (i, (k, v)) in pairs.iter().enumerate() {
                u.push(if i == 0 { '?' } else { '&' });
                u.push_str(k);
                if let Some(v) = v {
                    u.push('=');
                    u.push_str(v);
                }
            }
            let once = canonical(&u, &r).unwrap();
            let twice = canonical(&once.url, &r).unwrap();
            prop_assert_eq!(&twice.url, &once.url);
            prop_assert!(twice.applied.is_empty(), "{:?} on {}", twice.applied, once.url);
        }

        /// Rules pooled over all sites never take a URL of a site whose spellings are counted to a
        /// scheme and host it has no indexed page under; with its own rules for both, the rules
        /// apply as they say.
        #[test]
        fn a_pooled_rule_never_leads_where_the_site_has_no_page(
            counts in proptest::array::uniform4(0u64..3),
            own in any::<bool>(),
            https in any::<bool>(),
            www in any::<bool>(),
            path in "/[a-z]{0,5}",
        ) {
            let pooled = SiteRules {
                scheme: Some(Evidence::new(50, 0)),
                www: Some(Evidence::new(50, 0)),
                ..SiteRules::default()
            };
            let mut site = SiteRules::default();
            site.spelling.origins = crate::urlrules::rank::Origins {
                https_www: counts[0],
                https_bare: counts[1],
                http_www: counts[2],
                http_bare: counts[3],
            };
            if own {
                site.scheme = Some(Evidence::new(20, 0));
                site.www = Some(Evidence::new(20, 0));
            }
            let mut r = Rules::default();
            r.sites.insert(ALL_SITES.into(), pooled);
            r.sites.insert("a.example".into(), site.clone());
            let url = format!(
                "{}://{}a.example{path}",
                if https { "https" } else { "http" },
                if www { "www." } else { "" },
            );
            let c = canonical(&url, &r).unwrap();
            let again = canonical(&c.url, &r).unwrap();
            prop_assert_eq!(&again.url, &c.url, "idempotent");
            let to_https = c.url.starts_with("https://");
            let to_www = c.url.contains("://www.");
            let moved = (to_https, to_www) != (https, www);
            let known = !site.spelling.origins.is_empty();
            if own {
                // Its own rules: https and the bare host, always.
                prop_assert!(to_https && !to_www, "{} -> {}", url, c.url);
            } else if moved && known {
                prop_assert!(
                    site.spelling.origins.has(to_https, to_www),
                    "{} -> {} under {:?}",
                    url,
                    c.url,
                    site.spelling.origins
                );
            } else if !known {
                // Nothing counted (an older file): the pooled rules apply as before.
                prop_assert!(to_https && !to_www, "{} -> {}", url, c.url);
            }
        }
    }

    /// The bundled corpus's case: a scheme rule pooled over all sites does not rewrite an http-only
    /// site to https; its www rule, where the site has bare-host pages, still applies; the pooled
    /// rules take a URL to the spelling where the site's pages are.
    #[test]
    fn an_http_only_site_keeps_http_under_a_pooled_scheme_rule() {
        let mut r = Rules::default();
        r.sites.insert(
            ALL_SITES.into(),
            SiteRules {
                scheme: Some(Evidence::new(24, 0)),
                www: Some(Evidence::new(24, 0)),
                ..SiteRules::default()
            },
        );
        let mut site = SiteRules::default();
        site.spelling.origins.http_bare = 30;
        site.spelling.origins.http_www = 6;
        r.sites.insert("old.example".into(), site);
        let c = canonical("http://www.old.example/a", &r).unwrap();
        assert_eq!(c.url, "http://old.example/a");
        assert_eq!(c.applied, ["www (all sites)"]);
        // Both ways: an https URL of the site is taken to http, where its pages are, so that it
        // meets them.
        let c = canonical("https://old.example/b", &r).unwrap();
        assert_eq!(c.url, "http://old.example/b");
        assert_eq!(c.applied, ["scheme (all sites)"]);
        // A site with pages only under www.: the bare host goes there.
        let mut site = SiteRules::default();
        site.spelling.origins.https_www = 12;
        r.sites.insert("w.example".into(), site);
        let c = canonical("http://w.example/x", &r).unwrap();
        assert_eq!(c.url, "https://www.w.example/x");
        assert_eq!(c.applied, ["scheme (all sites)", "www (all sites)"]);
        // Another site, nothing counted: the pooled rules apply.
        let c = canonical("http://www.new.example/a", &r).unwrap();
        assert_eq!(c.url, "https://new.example/a");
    }
}
