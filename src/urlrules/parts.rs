//! A parsed http(s) URL taken apart into what the rules rewrite, and put back together. Learning and
//! the canonical form share it, so that a URL rewritten by a rule and the indexed URL it should meet
//! are spelled the same way.

use url::Url;

use super::UrlError;

/// Parses `raw` (WHATWG: scheme and host lower-cased, IDN hosts in punycode, default port and
/// fragment dropped); only http(s) URLs with a host pass.
pub(crate) fn parse(raw: &str) -> Result<Url, UrlError> {
    let url = Url::parse(raw.trim()).map_err(|_| UrlError::Unparseable(raw.to_owned()))?;
    if url.scheme() != "http" && url.scheme() != "https" {
        return Err(UrlError::NotHttp(raw.to_owned()));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(UrlError::Unparseable(raw.to_owned()));
    }
    Ok(url)
}

/// Whether the host as written in `raw` has upper-case letters (the parser lower-cases it).
pub(crate) fn host_has_upper_case(raw: &str) -> bool {
    let rest = raw.trim().split_once("://").map_or("", |(_, r)| r);
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    host.bytes().any(|b| b.is_ascii_uppercase())
}

/// One path segment: its name and its path parameters (`name=value`, as written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Segment<'a> {
    pub name: &'a str,
    pub params: Vec<&'a str>,
}

/// A URL's parts, borrowed from the parsed URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Parts<'a> {
    pub scheme: &'a str,
    pub host: &'a str,
    pub port: Option<u16>,
    pub segments: Vec<Segment<'a>>,
    /// Query pairs as written, without empty ones.
    pub pairs: Vec<(&'a str, Option<&'a str>)>,
}

impl<'a> Parts<'a> {
    /// The parts of a URL from [`parse`].
    pub fn of(url: &'a Url) -> Self {
        let segments = url
            .path()
            .split('/')
            .skip(1)
            .map(|s| {
                let mut it = s.split(';');
                Segment {
                    name: it.next().unwrap_or(""),
                    params: it.collect(),
                }
            })
            .collect();
        let pairs = url
            .query()
            .unwrap_or("")
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| match p.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (p, None),
            })
            .collect();
        Parts {
            scheme: url.scheme(),
            host: url.host_str().unwrap_or(""),
            port: url.port(),
            segments,
            pairs,
        }
    }

    /// The host without a leading `www.`.
    pub fn site(&self) -> &'a str {
        super::site_of(self.host)
    }

    /// The path without path parameters (what path prefixes are matched against).
    pub fn plain_path(&self) -> String {
        let mut out = String::new();
        for s in &self.segments {
            out.push('/');
            out.push_str(s.name);
        }
        if out.is_empty() {
            out.push('/');
        }
        out
    }

    /// Where a query-parameter rule may hold apart from the whole site: the first directory of the
    /// path (`/forum/` for `/forum/view`), or a path of one segment itself (`/viewtopic.php`: a
    /// script at the top, where parameters often mean different things than in its neighbours).
    pub fn prefix(&self) -> Option<String> {
        let first = self.segments.first().map_or("", |s| s.name);
        match self.segments.len() {
            0 => None,
            _ if first.is_empty() => None,
            1 => Some(format!("/{first}")),
            _ => Some(format!("/{first}/")),
        }
    }

    /// The URL, written back.
    pub fn write(&self, out: &mut String) {
        out.clear();
        out.push_str(self.scheme);
        out.push_str("://");
        out.push_str(self.host);
        // A port is written unless it is the scheme's default (a rule may have changed the scheme:
        // `http://h:443/` becomes `https://h/`, as the parser writes it).
        if let Some(port) = self.port {
            let default = matches!((self.scheme, port), ("http", 80) | ("https", 443));
            if !default {
                out.push(':');
                out.push_str(&port.to_string());
            }
        }
        if self.segments.is_empty() {
            out.push('/');
        }
        for s in &self.segments {
            out.push('/');
            out.push_str(s.name);
            for p in &s.params {
                out.push(';');
                out.push_str(p);
            }
        }
        for (i, (name, value)) in self.pairs.iter().enumerate() {
            out.push(if i == 0 { '?' } else { '&' });
            out.push_str(name);
            if let Some(v) = value {
                out.push('=');
                out.push_str(v);
            }
        }
    }

    /// [`Parts::write`] into a new string.
    pub fn to_url(&self) -> String {
        let mut s = String::with_capacity(64);
        self.write(&mut s);
        s
    }

    /// Whether the query pairs are sorted (by name, then value, as written).
    pub fn pairs_sorted(&self) -> bool {
        self.pairs.windows(2).all(|w| w[0] <= w[1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_comes_apart_and_back_together() {
        let url =
            parse("HTTP://WWW.Example.COM:8080/a;jsessionid=1;x/b/index.html?b=2&&a&c=#f").unwrap();
        let p = Parts::of(&url);
        assert_eq!(p.host, "www.example.com");
        assert_eq!(p.site(), "example.com");
        assert_eq!(p.port, Some(8080));
        assert_eq!(p.segments[0].params, ["jsessionid=1", "x"]);
        assert_eq!(p.pairs, [("b", Some("2")), ("a", None), ("c", Some(""))]);
        assert_eq!(p.plain_path(), "/a/b/index.html");
        assert_eq!(p.prefix().as_deref(), Some("/a/"));
        assert_eq!(
            p.to_url(),
            "http://www.example.com:8080/a;jsessionid=1;x/b/index.html?b=2&a&c="
        );
        assert!(!p.pairs_sorted());
        assert!(host_has_upper_case("HTTP://WWW.Example.COM:8080/A"));
        assert!(!host_has_upper_case("http://example.com/A?B"));
        assert!(!host_has_upper_case("http://User:PW@example.com/"));
        let top = parse("http://example.com").unwrap();
        let p = Parts::of(&top);
        assert_eq!(p.to_url(), "http://example.com/");
        assert_eq!(p.prefix(), None);
        let script = parse("http://example.com/viewtopic.php?t=1").unwrap();
        assert_eq!(
            Parts::of(&script).prefix().as_deref(),
            Some("/viewtopic.php")
        );
    }
}
