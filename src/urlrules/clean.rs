//! How clean a URL is for a searcher, without learned rules: what in it a person would not want to
//! see or share, counted. The first step of the preference order that picks a group's
//! representative when no rules file is given (issue 27). Pure: a function of the URL as written.
//!
//! Counted, one each:
//! - a session parameter ([`SESSION`], by name, case-insensitive), in the query or as a path
//!   parameter (`;jsessionid=…`);
//! - a tracking parameter ([`TRACKING`], or a name starting `utm_`);
//! - a print view: a parameter of [`PRINT`] at a value that turns it on (`1`, `yes`, `true`, `on`,
//!   `print`), or a path segment `print`/`printable`;
//! - a parameter at a common default value ([`DEFAULTS`]: `start=0`, `page=1`, `sort=asc`, ...);
//! - a trailing default document ([`DEFAULT_DOCUMENTS`]: `index.html`, `index.php`, ...) with no
//!   query after it;
//! - upper-case letters in the host as written.
//!
//! Then, apart from those: the number of query parameters (more rather than fewer).
//!
//! [`Clutter::key`] orders URLs by the first sum, then by the second: a URL with a session id loses
//! to one with an extra plain parameter, and of two URLs with equal clutter the one with fewer
//! parameters wins. A URL that does not parse has the worst key.

use super::parts::{host_has_upper_case, parse, Parts};

/// Session parameter names (compared case-insensitively).
pub const SESSION: &[&str] = &[
    "jsessionid",
    "phpsessid",
    "aspsessionid",
    "sid",
    "sessionid",
    "session_id",
    "sessid",
    "session",
    "sess",
    "cfid",
    "cftoken",
    "zenid",
    "oscsid",
    "s_id",
];

/// Tracking parameter names (compared case-insensitively); any name starting `utm_` is one too.
pub const TRACKING: &[&str] = &[
    "gclid", "gclsrc", "dclid", "fbclid", "msclkid", "yclid", "twclid", "igshid", "mc_cid",
    "mc_eid", "_ga", "_gl", "_hsenc", "_hsmi", "mkt_tok", "ref", "ref_src", "referrer", "trk",
    "campaign", "cmpid", "wt_mc", "spm",
];

/// Parameters that ask for a print view when set ([`ON`]), or, for `format`/`view`/`action`/
/// `output`/`mode`, when their value is `print` or `printable`.
pub const PRINT: &[&str] = &[
    "print",
    "printable",
    "printer",
    "printview",
    "printer_friendly",
];

/// Values that turn a [`PRINT`] parameter on.
pub const ON: &[&str] = &["1", "yes", "true", "on", "y", "print"];

/// Parameters whose value `print` (or `printable`) asks for a print view.
pub const PRINT_VALUED: &[&str] = &["format", "view", "action", "output", "mode", "layout"];

/// Parameters at a common default value: the first page, the first offset, ascending order,
/// English.
pub const DEFAULTS: &[(&str, &str)] = &[
    ("start", "0"),
    ("offset", "0"),
    ("skip", "0"),
    ("from", "0"),
    ("page", "1"),
    ("pagenum", "1"),
    ("pg", "1"),
    ("p", "1"),
    ("sort", "asc"),
    ("order", "asc"),
    ("dir", "asc"),
    ("sortdir", "asc"),
    ("sortorder", "asc"),
    ("lang", "en"),
    ("language", "en"),
    ("hl", "en"),
    ("locale", "en"),
];

/// Default documents a server serves for a directory.
pub const DEFAULT_DOCUMENTS: &[&str] = &[
    "index.html",
    "index.htm",
    "index.shtml",
    "index.php",
    "index.asp",
    "index.aspx",
    "index.jsp",
    "index.cgi",
    "default.asp",
    "default.aspx",
    "default.htm",
    "default.html",
];

/// What a URL carries that a searcher should not see.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Clutter {
    /// Session parameters (query or path).
    pub session: u8,
    /// Tracking parameters.
    pub tracking: u8,
    /// Print-view parameters or segments.
    pub print: u8,
    /// Parameters at a common default value.
    pub defaults: u8,
    /// A trailing default document (0 or 1).
    pub default_document: u8,
    /// Upper-case letters in the host (0 or 1).
    pub host_case: u8,
    /// Query parameters in all.
    pub params: u8,
}

impl Clutter {
    /// The sum of what a searcher should not see.
    pub fn unwanted(&self) -> u16 {
        [
            self.session,
            self.tracking,
            self.print,
            self.defaults,
            self.default_document,
            self.host_case,
        ]
        .iter()
        .map(|&c| u16::from(c))
        .sum()
    }

    /// The order key: smaller is cleaner. The unwanted sum in the high byte, the parameter count in
    /// the low byte (each capped at 255).
    pub fn key(&self) -> u16 {
        (self.unwanted().min(255) << 8) | u16::from(self.params)
    }
}

/// The key of a URL that does not parse, or is not http(s): after every other.
pub const WORST: u16 = u16::MAX;

/// What `raw` carries that a searcher should not see; `None` when it does not parse as an http(s)
/// URL.
pub fn clutter(raw: &str) -> Option<Clutter> {
    let url = parse(raw).ok()?;
    let parts = Parts::of(&url);
    let mut c = Clutter {
        host_case: u8::from(host_has_upper_case(raw)),
        ..Clutter::default()
    };
    let add = |n: &mut u8| *n = n.saturating_add(1);
    for segment in &parts.segments {
        let name = segment.name.to_ascii_lowercase();
        if name == "print" || name == "printable" {
            add(&mut c.print);
        }
        for p in &segment.params {
            let key = p.split_once('=').map_or(*p, |(k, _)| k);
            if is_session(key) {
                add(&mut c.session);
            }
        }
    }
    if url.query().is_none_or(str::is_empty) {
        let last = parts.segments.last().map_or("", |s| s.name);
        if DEFAULT_DOCUMENTS
            .iter()
            .any(|d| d.eq_ignore_ascii_case(last))
        {
            c.default_document = 1;
        }
    }
    for (name, value) in &parts.pairs {
        add(&mut c.params);
        let name = name.to_ascii_lowercase();
        let value = value.unwrap_or("").to_ascii_lowercase();
        if is_session(&name) {
            add(&mut c.session);
        } else if name.starts_with("utm_") || TRACKING.contains(&name.as_str()) {
            add(&mut c.tracking);
        } else if (PRINT.contains(&name.as_str()) && ON.contains(&value.as_str()))
            || (PRINT_VALUED.contains(&name.as_str()) && (value == "print" || value == "printable"))
        {
            add(&mut c.print);
        } else if DEFAULTS.iter().any(|&(n, v)| n == name && v == value) {
            add(&mut c.defaults);
        }
    }
    Some(c)
}

/// The order key of `raw` ([`Clutter::key`], or [`WORST`]).
pub fn key(raw: &str) -> u16 {
    clutter(raw).map_or(WORST, |c| c.key())
}

fn is_session(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    SESSION.contains(&name.as_str()) || name.starts_with("aspsessionid")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(raw: &str) -> Clutter {
        clutter(raw).unwrap()
    }

    #[test]
    fn a_plain_url_is_clean() {
        assert_eq!(
            c("https://shop.example/item?id=7"),
            Clutter {
                params: 1,
                ..Clutter::default()
            }
        );
        assert_eq!(c("https://shop.example/").key(), 0);
    }

    #[test]
    fn each_kind_is_counted() {
        assert_eq!(c("https://f.example/t?id=2&sid=ab12").session, 1);
        assert_eq!(c("https://f.example/a;jsessionid=XYZ?x=1").session, 1);
        assert_eq!(c("https://f.example/a?PHPSESSID=1").session, 1);
        assert_eq!(c("https://f.example/a?ASPSESSIONIDQQ=1").session, 1);
        let t = c("https://n.example/s?id=1&utm_source=feed&utm_medium=rss&fbclid=x");
        assert_eq!((t.tracking, t.params), (3, 4));
        assert_eq!(
            c("https://w.example/index.php?title=A&printable=yes").print,
            1
        );
        assert_eq!(c("https://w.example/a?print=1").print, 1);
        assert_eq!(c("https://w.example/a?print=0").print, 0);
        assert_eq!(c("https://w.example/a?format=print").print, 1);
        assert_eq!(c("https://w.example/print/a").print, 1);
        let d = c("https://s.example/list?cat=3&page=1&sort=asc&start=0&lang=en");
        assert_eq!((d.defaults, d.params), (4, 5));
        assert_eq!(c("https://s.example/list?page=2&sort=desc").defaults, 0);
        assert_eq!(c("https://s.example/news/index.html").default_document, 1);
        assert_eq!(c("https://s.example/news/Index.PHP").default_document, 1);
        assert_eq!(
            c("https://s.example/news/index.php?id=1").default_document,
            0
        );
        assert_eq!(c("https://s.example/news/").default_document, 0);
        assert_eq!(c("https://FORUM.Example.org/t?id=1").host_case, 1);
        assert_eq!(c("https://forum.example.org/T?ID=1").host_case, 0);
    }

    #[test]
    fn the_key_puts_unwanted_parts_before_the_parameter_count() {
        let plain = key("https://wiki.example/index.php?title=Main&oldid=1&action=view");
        let print = key("https://wiki.example/index.php?title=Main&printable=yes");
        assert!(
            plain < print,
            "three plain parameters beat two with a print view"
        );
        assert!(key("https://HERALD.example.net/a") > key("https://herald.example.net/a"));
        assert!(key("https://s.example/a?x=1") < key("https://s.example/a?x=1&y=2"));
        assert!(key("https://s.example/") < key("https://s.example/index.html"));
        assert_eq!(key("not a url"), WORST);
        assert_eq!(key("ftp://s.example/a"), WORST);
    }
}
