//! The rules as Apache Nutch's `regex-normalize.xml` (the `urlnormalizer-regex` plugin): Java
//! regular expressions applied in order to every URL, each with `replaceAll`.
//!
//! Only rules that apply (estimate at least the file's `min_estimate`, or the `min` given) are
//! exported, the site's own and, for a site without evidence of its own, none of the pooled ones:
//! a regex cannot say "any site without evidence". Parameter order cannot be written as a regex
//! and is listed in a comment. Nutch's basic normaliser lower-cases the host before these run.
//!
//! Per site, in the order of the canonical form: scheme, `www`, path parameters, default
//! documents, query parameters, and at the end two clean-ups of a query left empty or ending in
//! `&`.

use std::fmt::Write;

use super::{ParamRule, Rules, ALL_SITES};

/// `s` with every regex metacharacter escaped (Java syntax).
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if "\\.[]{}()*+?^$|".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `s` escaped for XML text.
fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The `regex-normalize.xml` of the rules that apply at `min` (the file's `min_estimate` when
/// `None`), as (pattern, substitution) pairs with a comment each.
pub fn patterns(rules: &Rules, min: Option<f64>) -> Vec<(String, String, String)> {
    let min = min.unwrap_or(rules.min_estimate);
    let mut out = Vec::new();
    let mut cleanup = false;
    for (site, r) in &rules.sites {
        if site == ALL_SITES {
            continue;
        }
        let s = quote(site);
        // Scheme, www, host: the authority of a URL of this site (and its www. form, unless the
        // www rule applies, after which only the bare form is left).
        let host = format!("(?:www\\.)?{s}(?::\\d+)?");
        let ok = |e: &super::Evidence| e.estimate >= min;
        if let Some(e) = r.scheme.filter(ok) {
            // https's default port goes with the change, as the canonical form writes it.
            out.push((
                format!("^http://((?:www\\.)?{s})(?::443)?((?::\\d+)?)(?=[/?#]|$)"),
                "https://$1$2".to_owned(),
                format!(
                    "{site}: scheme ({} of {})",
                    e.support,
                    e.support + e.against
                ),
            ));
        }
        if let Some(e) = r.www.filter(ok) {
            out.push((
                format!("^(https?://)www\\.({s}(?::\\d+)?)(?=[/?#]|$)"),
                "$1$2".to_owned(),
                format!("{site}: www ({} of {})", e.support, e.support + e.against),
            ));
        }
        for (name, e) in r.path_params.iter().filter(|(_, e)| ok(e)) {
            out.push((
                format!(
                    "(?i)^(https?://{host}/[^?#]*?);{}(?:=[^/;?#]*)?(?=[/;?#]|$)",
                    quote(name)
                ),
                "$1".to_owned(),
                format!(
                    "{site}: path parameter {name} ({} of {})",
                    e.support,
                    e.support + e.against
                ),
            ));
        }
        for (name, e) in r.default_documents.iter().filter(|(_, e)| ok(e)) {
            out.push((
                format!("^(https?://{host}/(?:[^?#]*/)?){}(?=[?#]|$)", quote(name)),
                "$1".to_owned(),
                format!(
                    "{site}: default document {name} ({} of {})",
                    e.support,
                    e.support + e.against
                ),
            ));
        }
        for p in r.params.iter().filter(|p| ok(&p.evidence)) {
            // Under a prefix with a rule of its own for the parameter, that rule decides: the
            // site's pattern leaves those paths alone.
            let exceptions: Vec<&str> = if p.path_prefix == "/" {
                r.params
                    .iter()
                    .filter(|o| o.param == p.param && o.path_prefix != "/")
                    .map(|o| o.path_prefix.as_str())
                    .collect()
            } else {
                Vec::new()
            };
            out.push(param_pattern(site, &host, p, &exceptions));
            cleanup = true;
        }
        if r.param_order.is_some_and(|e| ok(&e)) {
            out.push((
                String::new(),
                String::new(),
                format!("{site}: parameter order does not matter (not expressible as a regex; sort the query yourself)"),
            ));
        }
    }
    if cleanup {
        out.push((
            "\\?&+".to_owned(),
            "?".to_owned(),
            "clean-up: a query starting with &".to_owned(),
        ));
        out.push((
            "[?&]+(?=#|$)".to_owned(),
            String::new(),
            "clean-up: a query left empty or ending in &".to_owned(),
        ));
    }
    out
}

fn param_pattern(
    site: &str,
    host: &str,
    p: &ParamRule,
    exceptions: &[&str],
) -> (String, String, String) {
    let path = if p.path_prefix == "/" {
        let mut not = String::new();
        for (i, e) in exceptions.iter().enumerate() {
            not.push(if i == 0 { '(' } else { '|' });
            let e = e.trim_start_matches('/');
            not.push_str(&quote(e));
            if !e.ends_with('/') {
                // A script: that path exactly.
                not.push_str("(?:[?#]|$)");
            }
        }
        if exceptions.is_empty() {
            "/[^?#]*".to_owned()
        } else {
            format!("/(?!{not}))[^?#]*", not = &not[..])
        }
    } else if p.path_prefix.ends_with('/') {
        format!("{}[^?#]*", quote(&p.path_prefix))
    } else {
        quote(&p.path_prefix)
    };
    let value = match &p.value {
        Some(v) => format!("={}", quote(v)),
        None => "(?:=[^&#]*)?".to_owned(),
    };
    (
        format!(
            "^(https?://{host}{path}\\?(?:[^#]*?&)?){}{value}(?=[&#]|$)&?",
            quote(&p.param)
        ),
        "$1".to_owned(),
        format!(
            "{site}: {} ({} of {})",
            p.describe(),
            p.evidence.support,
            p.evidence.support + p.evidence.against
        ),
    )
}

/// The whole `regex-normalize.xml`.
pub fn regex_normalize_xml(rules: &Rules, min: Option<f64>) -> String {
    let mut out = String::from(
        "<?xml version=\"1.0\"?>\n<!-- URL rules learned by solr-dedup (urls export, format nutch): \
         one regex per rule that applies, with its evidence (same-content pairs of all pairs). -->\n\
         <regex-normalize>\n",
    );
    for (pattern, substitution, comment) in patterns(rules, min) {
        let _ = writeln!(out, "<!-- {} -->", xml(&comment).replace("--", "- -"));
        if pattern.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "<regex>\n  <pattern>{}</pattern>\n  <substitution>{}</substitution>\n</regex>",
            xml(&pattern),
            xml(&substitution)
        );
    }
    out.push_str("</regex-normalize>\n");
    out
}

#[cfg(test)]
mod tests {
    use fancy_regex::Regex;

    use super::*;
    use crate::urlrules::{canonical, Evidence, SiteRules};

    /// Applies the exported patterns in order, as Nutch's regex normaliser does (`replaceAll`).
    fn apply(rules: &Rules, url: &str) -> String {
        let mut u = url.to_owned();
        for (pattern, substitution, _) in patterns(rules, None) {
            if pattern.is_empty() {
                continue;
            }
            let re = Regex::new(&pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"));
            u = re.replace_all(&u, substitution.as_str()).into_owned();
        }
        u
    }

    #[test]
    fn the_exported_regexes_rewrite_as_the_canonical_form_does() {
        let e = Evidence::new(50, 0);
        let mut site = SiteRules {
            scheme: Some(e),
            www: Some(e),
            ..SiteRules::default()
        };
        site.path_params.insert("jsessionid".into(), e);
        site.default_documents.insert("index.html".into(), e);
        site.params.push(ParamRule::irrelevant("sid", "/", e));
        site.params.push(ParamRule::irrelevant("ref", "/blog/", e));
        site.params
            .push(ParamRule::irrelevant("f", "/viewtopic.php", e));
        // Irrelevant on the site, but it matters under /item/ and on /search.php.
        site.params.push(ParamRule::irrelevant("p", "/", e));
        site.params
            .push(ParamRule::irrelevant("p", "/item/", Evidence::new(0, 50)));
        site.params.push(ParamRule::irrelevant(
            "p",
            "/search.php",
            Evidence::new(0, 50),
        ));
        site.params
            .push(ParamRule::default_value("sort", "asc", "/", e));
        // Evidence against: not exported.
        site.params
            .push(ParamRule::irrelevant("id", "/", Evidence::new(0, 50)));
        let mut rules = Rules::default();
        rules.sites.insert("shop.example".into(), site);
        // Another site's URLs are left alone.
        for url in [
            "http://www.shop.example/a/index.html;jsessionid=AB12?sid=1",
            "http://shop.example:8080/a;JSESSIONID=x/b?id=7&sid=9&sort=asc",
            "https://shop.example/blog/x?ref=feed&id=2",
            "https://shop.example/shop/x?ref=feed&id=2",
            "https://shop.example/list?sort=desc&id=3",
            "https://shop.example/list?sort=ascending",
            "https://shop.example/p?sidx=1&sid=2",
            "https://shop.example/",
            "https://shop.example/viewtopic.php?f=1&t=2",
            "https://shop.example/viewtopic.phpx?f=1&t=2",
            "https://shop.example/viewforum.php?f=1",
            "https://shop.example/item/3?p=1&q=2",
            "https://shop.example/items/3?p=1&q=2",
            "https://shop.example/search.php?p=1",
            "https://shop.example/search.phpx?p=1",
            "https://shop.example/search.php/x?p=1",
            "http://shop.example:443/a?p=1",
            "http://www.shop.example:8080/a?p=1",
            "http://www.other.example/index.html?sid=1",
            "http://shop.example.org/index.html?sid=1",
        ] {
            let want = canonical(url, &rules).unwrap().url;
            assert_eq!(apply(&rules, url), want, "{url}");
        }
        let xml = regex_normalize_xml(&rules, None);
        assert!(xml.starts_with("<?xml"));
        assert!(xml.contains("<regex-normalize>") && xml.ends_with("</regex-normalize>\n"));
        // scheme, www, jsessionid, index.html, sid, ref, f, p, sort=asc, and the two clean-ups.
        assert_eq!(xml.matches("<regex>").count(), 11, "{xml}");
        assert!(!xml.contains("param id"), "{xml}");
    }
}
