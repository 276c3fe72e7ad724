//! Everything the engine decides from a URL: its normalised form, the `www` and `http` keys, the host
//! scope key and the URL part of the preference order.
//!
//! The URL is first normalised by the WHATWG parser (`url` crate): scheme and host lower-cased, IDN hosts
//! in punycode, the default port dropped, the fragment dropped, path and query kept as they are. An `sku`
//! that does not parse counts as no URL.
//!
//! | sku                                   | normalised                   | www key                  | http key            |
//! |---------------------------------------|------------------------------|--------------------------|---------------------|
//! | `HTTP://WWW.Example.ORG:80/Path#top`  | `http://www.example.org/Path`| `http://example.org/Path`| `//www.example.org/Path` |
//! | `https://example.org/Path`            | `https://example.org/Path`   | same                     | `//example.org/Path`|
//! | `ftp://www.files.org/a`               | `ftp://www.files.org/a`      | `ftp://files.org/a`      | none (not http)     |
//! | `not a url`                           | none                         | none                     | none                |

use std::cmp::Ordering;

use url::{Position, Url};

/// How a URL's scheme ranks in the preference order, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SchemeRank {
    /// The preferred one of http/https (`--prefer-https`).
    Preferred = 0,
    /// The other one of http/https.
    OtherHttp = 1,
    /// Any other scheme.
    OtherScheme = 2,
    /// No URL, or one that does not parse.
    NoUrl = 3,
}

/// A parsed, normalised URL with the keys derived from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlKeys {
    /// The normalised URL, `None` when there is no usable URL.
    pub normalized: Option<String>,
    /// Whether the host starts with `www.`.
    pub has_www: bool,
    /// Whether the scheme is http or https.
    pub is_http: bool,
    /// `https` for https, `http` for http.
    pub is_https: bool,
    /// The normalised URL with one leading `www.` removed from the host.
    pub www_key: Option<String>,
    /// The normalised URL without `http:`/`https:`, for http(s) URLs only.
    pub http_key: Option<String>,
    /// scheme + host + port, for URLs that have a host.
    pub host_key: Option<String>,
}

/// The host name of a URL as the WHATWG parser normalises it (lower-case, IDN in punycode), without
/// scheme or port: what a chrome model is keyed by. `None` without a parseable URL or host.
pub fn host_name(sku: Option<&str>) -> Option<String> {
    let url = Url::parse(sku?.trim()).ok()?;
    url.host_str().filter(|h| !h.is_empty()).map(str::to_owned)
}

impl UrlKeys {
    /// Parses and normalises `sku`.
    pub fn new(sku: Option<&str>) -> Self {
        let Some(url) = sku.and_then(|s| Url::parse(s.trim()).ok()) else {
            return UrlKeys::none();
        };
        let mut url = url;
        url.set_fragment(None);
        let normalized = url.as_str().to_owned();
        let host = url.host_str().unwrap_or("");
        let scheme = url.scheme();
        let is_http = scheme == "http" || scheme == "https";
        let has_www = host.len() > 4 && host.starts_with("www.");
        let www_key = if has_www {
            let mut key = String::with_capacity(normalized.len() - 4);
            key.push_str(&url[..Position::BeforeHost]);
            key.push_str(&host[4..]);
            key.push_str(&url[Position::AfterHost..]);
            key
        } else {
            normalized.clone()
        };
        let http_key = is_http.then(|| normalized[scheme.len() + 1..].to_owned());
        let host_key = (!host.is_empty()).then(|| {
            let mut k = format!("{scheme}://{host}");
            if let Some(port) = url.port() {
                k.push(':');
                k.push_str(&port.to_string());
            }
            k
        });
        UrlKeys {
            is_https: scheme == "https",
            normalized: Some(normalized),
            has_www,
            is_http,
            www_key: Some(www_key),
            http_key,
            host_key,
        }
    }

    fn none() -> Self {
        UrlKeys {
            normalized: None,
            has_www: false,
            is_http: false,
            is_https: false,
            www_key: None,
            http_key: None,
            host_key: None,
        }
    }

    /// The scheme's rank under `prefer_https`.
    pub fn scheme_rank(&self, prefer_https: bool) -> SchemeRank {
        match (&self.normalized, self.is_http) {
            (None, _) => SchemeRank::NoUrl,
            (Some(_), false) => SchemeRank::OtherScheme,
            (Some(_), true) if self.is_https == prefer_https => SchemeRank::Preferred,
            (Some(_), true) => SchemeRank::OtherHttp,
        }
    }
}

/// Which preference order picks a group's representative (`--prefer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Order {
    /// Canonical first (issue 27): with rules, the URL that is its canonical form (up to its
    /// spelling); then the fewest built-in clutter ([`crate::urlrules::clean`]); with rules, the
    /// site with more indexed pages; then the scheme and `www.` (with rules, as most of the site's
    /// pages spell them); with rules, the site's usual parameter order; then as YaCy.
    #[default]
    Canonical,
    /// YaCy's order: https, `www.`, the shorter normalised URL, the smaller URL, the smaller id.
    Yacy,
}

impl Order {
    /// The option's value.
    pub fn name(self) -> &'static str {
        match self {
            Order::Canonical => "canonical",
            Order::Yacy => "yacy",
        }
    }
}

/// The switches of the preference order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preference {
    /// https before http (YaCy's `preferhttps`); with rules, only where the site's pages are split
    /// evenly.
    pub prefer_https: bool,
    /// `www.` host before bare host (YaCy's `preferwwwprefix`); with rules, the same.
    pub prefer_www: bool,
    /// Canonical first, or YaCy's order.
    pub order: Order,
}

impl Default for Preference {
    fn default() -> Self {
        Preference {
            prefer_https: true,
            prefer_www: true,
            order: Order::Canonical,
        }
    }
}

/// The fixed-size part of a document's rank (12 bytes), in the order's sequence: rewrites to the
/// canonical form, clutter, the site's pages, scheme, `www.`, parameter order, URL length. Smaller
/// is better. Under [`Order::Yacy`] (and without rules for the rule-based parts) the added parts are
/// 0. Ties on it are broken by [`compare_full`], which needs the URL and id strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RankPrefix {
    rewrites: u8,
    clutter: u16,
    host: u16,
    scheme: SchemeRank,
    www_penalty: bool,
    order: u8,
    url_len: u32,
}

impl RankPrefix {
    /// Its 12 bytes, as a spilled record keeps them ([`RankPrefix::from_bytes`] reads them back).
    pub(crate) fn to_bytes(self) -> [u8; 12] {
        let mut b = [0u8; 12];
        b[0] = self.rewrites;
        b[1..3].copy_from_slice(&self.clutter.to_le_bytes());
        b[3..5].copy_from_slice(&self.host.to_le_bytes());
        b[5] = self.scheme as u8;
        b[6] = u8::from(self.www_penalty);
        b[7] = self.order;
        b[8..12].copy_from_slice(&self.url_len.to_le_bytes());
        b
    }

    /// The prefix [`RankPrefix::to_bytes`] gave.
    pub(crate) fn from_bytes(b: &[u8]) -> Self {
        RankPrefix {
            rewrites: b[0],
            clutter: u16::from_le_bytes([b[1], b[2]]),
            host: u16::from_le_bytes([b[3], b[4]]),
            scheme: match b[5] {
                0 => SchemeRank::Preferred,
                1 => SchemeRank::OtherHttp,
                2 => SchemeRank::OtherScheme,
                _ => SchemeRank::NoUrl,
            },
            www_penalty: b[6] != 0,
            order: b[7],
            url_len: u32::from_le_bytes([b[8], b[9], b[10], b[11]]),
        }
    }
}

/// A rule of the preference order: the one that separated two members ([`deciding_rule`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    /// The URL is its canonical form under the rules (up to its spelling).
    Canonical,
    /// Less built-in clutter.
    Clutter,
    /// The site with more indexed pages (rules).
    Host,
    /// The preferred scheme.
    Scheme,
    /// The preferred `www.` or bare host.
    Www,
    /// The site's usual parameter order (rules).
    ParamOrder,
    /// The shorter normalised URL.
    Shorter,
    /// The smaller normalised URL.
    SmallerUrl,
    /// The smaller id.
    Id,
    /// Nothing: the same member.
    Same,
}

impl Rule {
    /// Its name in reports and views.
    pub fn name(self) -> &'static str {
        match self {
            Rule::Canonical => "canonical",
            Rule::Clutter => "clutter",
            Rule::Host => "host",
            Rule::Scheme => "scheme",
            Rule::Www => "www",
            Rule::ParamOrder => "param order",
            Rule::Shorter => "shorter",
            Rule::SmallerUrl => "smaller url",
            Rule::Id => "id",
            Rule::Same => "same",
        }
    }
}

impl RankPrefix {
    /// The rank prefix of a URL (`raw` as stored, `keys` its parsed form) under a preference and,
    /// for [`Order::Canonical`], the rules if any.
    pub fn new(
        raw: Option<&str>,
        keys: &UrlKeys,
        pref: Preference,
        rules: Option<&crate::urlrules::Rules>,
    ) -> Self {
        let (mut prefer_https, mut prefer_www) = (pref.prefer_https, pref.prefer_www);
        let (mut rewrites, mut clutter, mut host, mut order) = (0, 0, 0, 0);
        if pref.order == Order::Canonical {
            let raw = raw.unwrap_or("");
            clutter = crate::urlrules::clean::key(raw);
            if let Some(rules) = rules {
                let r = crate::urlrules::rank::rank(raw, rules);
                rewrites = r.rewrites;
                host = r.host;
                order = r.order;
                prefer_https = r.https.unwrap_or(prefer_https);
                prefer_www = r.www.unwrap_or(prefer_www);
            }
        }
        let www_penalty = match keys.normalized {
            None => false,
            Some(_) => keys.has_www != prefer_www,
        };
        RankPrefix {
            rewrites,
            clutter,
            host,
            scheme: keys.scheme_rank(prefer_https),
            www_penalty,
            order,
            url_len: keys
                .normalized
                .as_ref()
                .map_or(0, |u| u32::try_from(u.len()).unwrap_or(u32::MAX)),
        }
    }

    /// The parts as numbers, in the order's sequence (for views): rewrites, clutter, host,
    /// scheme, www, parameter order, URL length.
    pub fn parts(&self) -> [u32; 7] {
        [
            u32::from(self.rewrites),
            u32::from(self.clutter),
            u32::from(self.host),
            self.scheme as u32,
            u32::from(self.www_penalty),
            u32::from(self.order),
            self.url_len,
        ]
    }
}

/// The whole preference order: rank prefix, then the smaller normalised URL, then the smaller id.
/// `Ordering::Less` means `a` is preferred.
pub fn compare_full(
    a: (RankPrefix, Option<&str>, &str),
    b: (RankPrefix, Option<&str>, &str),
) -> Ordering {
    a.0.cmp(&b.0)
        .then_with(|| a.1.unwrap_or("").cmp(b.1.unwrap_or("")))
        .then_with(|| a.2.cmp(b.2))
}

/// The first rule of the order on which `a` and `b` differ (the one [`compare_full`] decides by).
pub fn deciding_rule(
    a: (RankPrefix, Option<&str>, &str),
    b: (RankPrefix, Option<&str>, &str),
) -> Rule {
    let (x, y) = (a.0, b.0);
    if x.rewrites != y.rewrites {
        Rule::Canonical
    } else if x.clutter != y.clutter {
        Rule::Clutter
    } else if x.host != y.host {
        Rule::Host
    } else if x.scheme != y.scheme {
        Rule::Scheme
    } else if x.www_penalty != y.www_penalty {
        Rule::Www
    } else if x.order != y.order {
        Rule::ParamOrder
    } else if x.url_len != y.url_len {
        Rule::Shorter
    } else if a.1.unwrap_or("") != b.1.unwrap_or("") {
        // As [`compare_full`] compares them: no URL is the empty one.
        Rule::SmallerUrl
    } else if a.2 != b.2 {
        Rule::Id
    } else {
        Rule::Same
    }
}

/// The URL as stored and the normalised spellings of every URL that shares its www or http key:
/// with and without one leading `www.`, under `http:` and `https:`.
pub fn spellings(raw: &str, out: &mut Vec<String>) {
    out.push(raw.to_owned());
    let Some(normalized) = UrlKeys::new(Some(raw)).normalized else {
        return;
    };
    let Ok(url) = Url::parse(&normalized) else {
        return;
    };
    let Some(host) = url.host_str() else {
        out.push(normalized);
        return;
    };
    let bare = host.strip_prefix("www.").unwrap_or(host).to_owned();
    let schemes: Vec<&str> = match url.scheme() {
        "http" | "https" => vec!["http", "https"],
        other => vec![other],
    };
    for scheme in schemes {
        for host in [bare.clone(), format!("www.{bare}")] {
            let mut u = url.clone();
            if u.set_scheme(scheme).is_ok() && u.set_host(Some(&host)).is_ok() {
                out.push(u.to_string());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation_follows_whatwg() {
        let k = UrlKeys::new(Some("HTTP://WWW.Example.ORG:80/Path?q=A#top"));
        assert_eq!(
            k.normalized.as_deref(),
            Some("http://www.example.org/Path?q=A")
        );
        assert_eq!(k.www_key.as_deref(), Some("http://example.org/Path?q=A"));
        assert_eq!(k.http_key.as_deref(), Some("//www.example.org/Path?q=A"));
        assert_eq!(k.host_key.as_deref(), Some("http://www.example.org"));
        assert!(k.has_www);
        let idn = UrlKeys::new(Some("http://bücher.example/x"));
        assert_eq!(
            idn.normalized.as_deref(),
            Some("http://xn--bcher-kva.example/x")
        );
        let port = UrlKeys::new(Some("https://example.org:8443/"));
        assert_eq!(port.host_key.as_deref(), Some("https://example.org:8443"));
        assert_eq!(
            UrlKeys::new(Some("https://example.org:443/"))
                .normalized
                .as_deref(),
            Some("https://example.org/")
        );
    }

    #[test]
    fn non_http_and_broken_urls() {
        let ftp = UrlKeys::new(Some("ftp://www.files.org/a"));
        assert_eq!(ftp.www_key.as_deref(), Some("ftp://files.org/a"));
        assert_eq!(ftp.http_key, None);
        assert_eq!(ftp.scheme_rank(true), SchemeRank::OtherScheme);
        for bad in [None, Some("not a url"), Some(""), Some("http://")] {
            let k = UrlKeys::new(bad);
            assert_eq!(k.normalized, None, "{bad:?}");
            assert_eq!(k.scheme_rank(true), SchemeRank::NoUrl);
        }
        // A host that is just "www." keeps it: stripping would leave no host.
        assert!(!UrlKeys::new(Some("http://www./")).has_www);
    }

    #[test]
    fn four_variants_rank_in_the_documented_order() {
        let urls = [
            "http://example.org/p",
            "https://example.org/p",
            "http://www.example.org/p",
            "https://www.example.org/p",
        ];
        let rank = |pref: Preference| {
            let mut v: Vec<&str> = urls.to_vec();
            v.sort_by(|a, b| {
                let (ka, kb) = (UrlKeys::new(Some(a)), UrlKeys::new(Some(b)));
                compare_full(
                    (
                        RankPrefix::new(Some(a), &ka, pref, None),
                        ka.normalized.as_deref(),
                        a,
                    ),
                    (
                        RankPrefix::new(Some(b), &kb, pref, None),
                        kb.normalized.as_deref(),
                        b,
                    ),
                )
            });
            v
        };
        assert_eq!(
            rank(Preference::default()),
            [
                "https://www.example.org/p",
                "https://example.org/p",
                "http://www.example.org/p",
                "http://example.org/p"
            ]
        );
        let opposite = Preference {
            prefer_https: false,
            prefer_www: false,
            order: Order::Yacy,
        };
        assert_eq!(rank(opposite)[0], "http://example.org/p");
    }
}
