//! URL rules (seed 002, `urlrules.md`): which parts of a site's URLs do not change the page, and the
//! canonical form of a URL under them. Pure code, no I/O: learning them from an index (through the
//! engine) and predicting for crawlers build on this.
//!
//! **Work in progress (issue 13):** this module holds the rule model, the pessimistic estimate and
//! the canonical form; `urls learn`, `urls predict`, `urls canonical`, `urls export` and the
//! evaluation against MaybeDont are not built yet.
//!
//! A URL's canonical form, in this order (each step keyed by the *site*, the host without a leading
//! `www.`, so that a URL and its canonical form look up the same rules and the form is idempotent):
//!
//! 1. WHATWG parsing (`url` crate): scheme and host lower-cased, IDN hosts in punycode, the default
//!    port and the fragment dropped. Only `http` and `https` URLs have one.
//! 2. the scheme rule: `https` for both schemes; the `www` rule: the bare host;
//! 3. path parameters the site ignores (`;jsessionid=…`) removed from every segment;
//! 4. a trailing default document (`index.html`) removed, leaving the directory;
//! 5. query parameters the site ignores (on every path, or under a path prefix), and parameters at
//!    their default value, removed; empty pairs (`a=1&&b=2`) dropped;
//! 6. the parameter-order rule: the remaining pairs sorted (by name, then value, as written).
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
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use url::Url;

/// The rules file's format.
pub const FORMAT: u32 = 1;

/// Rules per site.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rules {
    /// [`FORMAT`].
    pub url_rules: u32,
    /// Per site: the host without a leading `www.`.
    pub sites: BTreeMap<String, SiteRules>,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            url_rules: FORMAT,
            sites: BTreeMap::new(),
        }
    }
}

/// One site's rules, each with its evidence.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SiteRules {
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

/// A query parameter that does not change the page: with any value (`value: None`), or only at one
/// value (its default), under a path prefix (`/` for the whole site).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParamRule {
    /// The parameter's name, as written in URLs.
    pub param: String,
    /// The one value that does not matter; `None`: no value matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The rule holds for paths starting with this.
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

    /// A parameter that does not matter at its default `value` under `path_prefix`.
    pub fn default_value(param: &str, value: &str, path_prefix: &str, evidence: Evidence) -> Self {
        ParamRule {
            param: param.to_owned(),
            value: Some(value.to_owned()),
            path_prefix: path_prefix.to_owned(),
            evidence,
        }
    }

    fn removes(&self, path: &str, name: &str, value: Option<&str>) -> bool {
        name == self.param
            && path.starts_with(&self.path_prefix)
            && self
                .value
                .as_deref()
                .is_none_or(|v| value.unwrap_or("") == v)
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

/// The lower end of the 95 % Wilson score interval of `support / (support + against)`, 0 under five
/// observations (as MaybeDont, which uses a normal interval after Laplace smoothing; Wilson's stays
/// inside [0, 1] and is not too sure at the extremes, where rules live).
pub fn pessimistic(support: u64, against: u64) -> f64 {
    let n = (support + against) as f64;
    if n < 5.0 || support == 0 {
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
    /// The rules that changed something, as short descriptions (`www`, `param utm_source`, …).
    pub applied: Vec<String>,
    /// The product of their estimates: the chance, by the evidence, that the canonical form serves
    /// the same page (1 when nothing was applied).
    pub keeps: f64,
}

/// The site of a host: the host without one leading `www.`.
pub fn site_of(host: &str) -> &str {
    host.strip_prefix("www.")
        .filter(|s| !s.is_empty())
        .unwrap_or(host)
}

/// The canonical form of `raw` under `rules` (see the module docs).
pub fn canonical(raw: &str, rules: &Rules) -> Result<Canonical, UrlError> {
    let url = Url::parse(raw.trim()).map_err(|_| UrlError::Unparseable(raw.to_owned()))?;
    let scheme = url.scheme();
    if scheme != "http" && scheme != "https" {
        return Err(UrlError::NotHttp(raw.to_owned()));
    }
    let host = url
        .host_str()
        .filter(|h| !h.is_empty())
        .ok_or_else(|| UrlError::Unparseable(raw.to_owned()))?;
    let site = site_of(host).to_owned();
    let none = SiteRules::default();
    let r = rules.sites.get(&site).unwrap_or(&none);
    let mut applied = Vec::new();
    let mut keeps = 1.0;
    let mut apply = |what: String, e: &Evidence| {
        applied.push(what);
        keeps *= e.estimate;
    };
    let mut scheme = scheme.to_owned();
    if let Some(e) = &r.scheme {
        if scheme != "https" {
            scheme = "https".to_owned();
            apply("scheme".to_owned(), e);
        }
    }
    let mut host = host.to_owned();
    if let Some(e) = &r.www {
        if host != site {
            host = site.clone();
            apply("www".to_owned(), e);
        }
    }
    // Path: segments, each without the ignored path parameters.
    let mut segments: Vec<String> = Vec::new();
    for segment in url.path().split('/').skip(1) {
        let mut parts = segment.split(';');
        let mut kept = parts.next().unwrap_or("").to_owned();
        for param in parts {
            let name = param.split('=').next().unwrap_or("").to_ascii_lowercase();
            match r.path_params.get(&name) {
                Some(e) => apply(format!("path parameter {name}"), e),
                None => {
                    kept.push(';');
                    kept.push_str(param);
                }
            }
        }
        segments.push(kept);
    }
    if let Some(last) = segments.last_mut() {
        if let Some(e) = r.default_documents.get(last.as_str()) {
            apply(format!("default document {last}"), e);
            last.clear();
        }
    }
    let path = format!("/{}", segments.join("/"));
    // Query: the pairs as written, without empty ones and the ones the rules remove.
    let mut pairs: Vec<(&str, Option<&str>)> = Vec::new();
    for pair in url.query().unwrap_or("").split('&') {
        if pair.is_empty() {
            continue;
        }
        let (name, value) = match pair.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (pair, None),
        };
        match r.params.iter().find(|p| p.removes(&path, name, value)) {
            Some(rule) => {
                let what = match &rule.value {
                    None => format!("param {name}"),
                    Some(v) => format!("param {name}={v}"),
                };
                apply(what, &rule.evidence);
            }
            None => pairs.push((name, value)),
        }
    }
    if let Some(e) = &r.param_order {
        if pairs.windows(2).any(|w| w[0] > w[1]) {
            pairs.sort();
            apply("param order".to_owned(), e);
        }
    }
    let mut out = format!("{scheme}://{host}");
    if let Some(port) = url.port() {
        out.push_str(&format!(":{port}"));
    }
    out.push_str(&path);
    for (i, (name, value)) in pairs.iter().enumerate() {
        out.push(if i == 0 { '?' } else { '&' });
        out.push_str(name);
        if let Some(v) = value {
            out.push('=');
            out.push_str(v);
        }
    }
    Ok(Canonical {
        url: out,
        site,
        applied,
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
                "scheme",
                "www",
                "path parameter jsessionid",
                "default document index.html",
                "param sort=asc",
                "param ref",
                "param sid",
                "param order"
            ]
        );
        // A value that matters stays, and `ref` outside /blog/ too.
        let c = canonical("https://shop.example/p?sort=desc&ref=x", &r).unwrap();
        assert_eq!(c.url, "https://shop.example/p?ref=x&sort=desc");
        // Another site: only the parser's normalisation.
        let c = canonical("http://Other.example/index.html?b=1&a=2", &r).unwrap();
        assert_eq!(c.url, "http://other.example/index.html?b=1&a=2");
        assert!(c.applied.is_empty());
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

    proptest! {
        #[test]
        fn the_canonical_form_is_idempotent(
            www in any::<bool>(),
            https in any::<bool>(),
            segs in proptest::collection::vec("[a-zA-Z0-9.]{0,6}(;[a-zA-Z]{1,10}=[0-9]{0,3})?", 0..4),
            pairs in proptest::collection::vec(("(sid|ref|sort|a|b|z)", proptest::option::of("(asc|desc|x|)")), 0..6),
        ) {
            let r = every_kind();
            let mut u = format!(
                "{}://{}shop.example/{}",
                if https { "https" } else { "http" },
                if www { "www." } else { "" },
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
    }
}
