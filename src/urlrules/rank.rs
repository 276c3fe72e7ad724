//! How a URL ranks as a group's representative under learned rules (issue 27). Pure: a function of
//! the URL as written and the rules file.
//!
//! - [`UrlRank::rewrites`]: how many rules other than the spelling ones (scheme, `www`, parameter
//!   order) the canonical form ([`super::canonical`]) applies: 0 when the URL is its canonical form up
//!   to its spelling. Host case and user info count.
//! - [`UrlRank::host`]: the site's indexed pages as the rules file counts them (`pages`), so that of
//!   two hosts serving the same page the one the crawl found more pages under wins (an alias host
//!   loses to the site's own name). A site the file does not list has none.
//! - [`UrlRank::https`], [`UrlRank::www`]: the spelling most of the site's indexed pages use
//!   ([`Spelling`]); `None` on a tie or when the file does not say.
//! - [`UrlRank::order`]: query pairs out of the site's usual parameter order ([`Spelling::params`]),
//!   counted as inversions.

use super::parts::{parse, Parts};
use super::{site_of, Rules};

/// How a site's indexed URLs are spelled, counted by `urls learn`: what the representative's
/// preference follows where the site's pages agree.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spelling {
    /// Pages under `https`.
    #[serde(default)]
    pub https: u64,
    /// Pages under `http`.
    #[serde(default)]
    pub http: u64,
    /// Pages under the `www.` host.
    #[serde(default)]
    pub www: u64,
    /// Pages under the bare host.
    #[serde(default)]
    pub bare: u64,
    /// Query parameter names in the order the site's URLs usually write them (by their mean
    /// relative position; names seen at least twice in URLs with two or more pairs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<String>,
    /// Pages per scheme and host together: where the site serves pages at all, so that a rule
    /// pooled over all sites never rewrites its URLs to a scheme and host it has no page under
    /// ([`super::canonical`]). Empty in files written before it was counted: then it says nothing.
    #[serde(default, skip_serializing_if = "Origins::is_empty")]
    pub origins: Origins,
}

/// A site's indexed pages per scheme and host spelling.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Origins {
    /// Under `https://www.`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub https_www: u64,
    /// Under `https://` and the bare host.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub https_bare: u64,
    /// Under `http://www.`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub http_www: u64,
    /// Under `http://` and the bare host.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub http_bare: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Origins {
    /// Nothing counted (an older file): it says nothing about where the site serves pages.
    pub fn is_empty(&self) -> bool {
        *self == Origins::default()
    }

    /// The count of one spelling.
    pub fn slot(&mut self, https: bool, www: bool) -> &mut u64 {
        match (https, www) {
            (true, true) => &mut self.https_www,
            (true, false) => &mut self.https_bare,
            (false, true) => &mut self.http_www,
            (false, false) => &mut self.http_bare,
        }
    }

    /// Whether the site has indexed pages under that scheme and host spelling.
    pub fn has(&self, https: bool, www: bool) -> bool {
        let mut c = *self;
        *c.slot(https, www) > 0
    }
}

impl Spelling {
    /// Nothing counted.
    pub fn is_empty(&self) -> bool {
        *self == Spelling::default()
    }

    /// `Some(true)` when more pages use https, `Some(false)` when more use http, `None` on a tie.
    pub fn https(&self) -> Option<bool> {
        majority(self.https, self.http)
    }

    /// `Some(true)` when more pages use the `www.` host, `Some(false)` for the bare host.
    pub fn www(&self) -> Option<bool> {
        majority(self.www, self.bare)
    }
}

fn majority(yes: u64, no: u64) -> Option<bool> {
    match yes.cmp(&no) {
        std::cmp::Ordering::Greater => Some(true),
        std::cmp::Ordering::Less => Some(false),
        std::cmp::Ordering::Equal => None,
    }
}

/// A URL's rank under rules; see the module docs. Smaller `rewrites`, `host` and `order` are
/// better.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UrlRank {
    /// Non-spelling rules between the URL and its canonical form (capped at 255).
    pub rewrites: u8,
    /// [`u16::MAX`] minus a monotone 16-bit code of the site's indexed pages ([`pages_code`]).
    pub host: u16,
    /// The site's majority scheme is https (`Some(true)`) or http.
    pub https: Option<bool>,
    /// The site's majority host is the `www.` host (`Some(true)`) or the bare one.
    pub www: Option<bool>,
    /// Query pairs out of the site's usual order (inversions, capped at 255).
    pub order: u8,
}

/// The worst rank: for a URL without a canonical form.
pub const WORST: UrlRank = UrlRank {
    rewrites: u8::MAX,
    host: u16::MAX,
    https: None,
    www: None,
    order: u8::MAX,
};

/// A monotone 16-bit code of a count: 6 bits of binary exponent, 10 of mantissa (0 for 0).
pub fn pages_code(n: u64) -> u16 {
    if n == 0 {
        return 0;
    }
    let e = 63 - n.leading_zeros(); // 0..=63
    if e >= 63 {
        return u16::MAX;
    }
    let mantissa = if e >= 10 {
        (n >> (e - 10)) & 0x3ff
    } else {
        (n << (10 - e)) & 0x3ff
    };
    ((e as u16 + 1) << 10) | mantissa as u16
}

/// The rank of `raw` under `rules` ([`WORST`] when it has no canonical form).
pub fn rank(raw: &str, rules: &Rules) -> UrlRank {
    let Ok(c) = super::canonical(raw, rules) else {
        return WORST;
    };
    let rewrites = c
        .applied
        .iter()
        .filter(|a| {
            let what = a.strip_suffix(" (all sites)").unwrap_or(a);
            !matches!(what, "scheme" | "www" | "param order")
        })
        .count();
    let site = rules.sites.get(&c.site);
    let spelling = site.map(|s| &s.spelling);
    let order = match (spelling, parse(raw)) {
        (Some(s), Ok(url)) if !s.params.is_empty() => {
            let parts = Parts::of(&url);
            inversions(&s.params, parts.pairs.iter().map(|(n, _)| *n))
        }
        _ => 0,
    };
    UrlRank {
        rewrites: u8::try_from(rewrites).unwrap_or(u8::MAX),
        host: u16::MAX - pages_code(site.map_or(0, |s| s.pages)),
        https: spelling.and_then(Spelling::https),
        www: spelling.and_then(Spelling::www),
        order: u8::try_from(order).unwrap_or(u8::MAX),
    }
}

/// Pairs of names that stand in the other order than in `usual` (names not in it are left out).
fn inversions<'a>(usual: &[String], names: impl Iterator<Item = &'a str>) -> usize {
    let at: Vec<usize> = names
        .filter_map(|n| usual.iter().position(|u| u == n))
        .collect();
    let mut n = 0;
    for (i, a) in at.iter().enumerate() {
        n += at[i + 1..].iter().filter(|b| *b < a).count();
    }
    n
}

/// The site a URL's rank is looked up under (the host without its leading `www.`), `None` when it
/// has no canonical form.
pub fn site(raw: &str) -> Option<String> {
    let url = parse(raw).ok()?;
    Some(site_of(url.host_str()?).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::urlrules::{Evidence, ParamRule, SiteRules};

    fn rules() -> Rules {
        let e = Evidence::new(50, 0);
        let mut site = SiteRules {
            pages: 900,
            www: Some(e),
            scheme: Some(e),
            param_order: Some(e),
            spelling: Spelling {
                https: 10,
                http: 800,
                www: 5,
                bare: 805,
                params: vec!["t".into(), "p".into()],
                ..Spelling::default()
            },
            ..SiteRules::default()
        };
        site.params.push(ParamRule::irrelevant("sid", "/", e));
        let alias = SiteRules {
            pages: 40,
            ..SiteRules::default()
        };
        let mut r = Rules::default();
        r.sites.insert("forum.example".into(), site);
        r.sites.insert("forum-alias.example".into(), alias);
        r
    }

    #[test]
    fn canonical_up_to_spelling_has_no_rewrites() {
        let r = rules();
        let plain = rank("http://forum.example/v?t=1&p=2", &r);
        assert_eq!(plain.rewrites, 0);
        // www, scheme and order are spelling: not rewrites.
        assert_eq!(rank("https://www.forum.example/v?p=2&t=1", &r).rewrites, 0);
        assert_eq!(rank("http://forum.example/v?t=1&p=2&sid=9", &r).rewrites, 1);
        assert_eq!(rank("http://FORUM.example/v?t=1&sid=9", &r).rewrites, 2);
        assert_eq!(plain.https, Some(false));
        assert_eq!(plain.www, Some(false));
        assert_eq!(plain.order, 0);
        assert_eq!(rank("http://forum.example/v?p=2&x=0&t=1", &r).order, 1);
        assert_eq!(rank("not a url", &r), WORST);
    }

    #[test]
    fn the_site_with_more_pages_ranks_first() {
        let r = rules();
        let own = rank("http://forum.example/v?t=1", &r);
        let alias = rank("http://forum-alias.example/v?t=1", &r);
        let unknown = rank("http://elsewhere.example/v?t=1", &r);
        assert!(own.host < alias.host && alias.host < unknown.host);
        assert_eq!(alias.https, None);
    }

    #[test]
    fn pages_code_is_monotone() {
        let mut last = 0;
        for n in (0..5000).chain([1 << 20, (1 << 20) + 1024, u64::MAX]) {
            let c = pages_code(n);
            assert!(c >= last, "{n}");
            last = c;
        }
        assert!(pages_code(1000) > pages_code(999));
        assert!(pages_code(40) < pages_code(900));
    }
}
