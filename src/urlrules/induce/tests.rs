//! The learner on hand-made indexes, with the evidence counted by hand.

use super::*;
use crate::urlrules::{canonical, Evidence, ALL_SITES};

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
            .find(|p| p.param == "sort" && p.value.as_deref() == value && p.path_prefix == prefix)
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
    // Their entries (five pages each) hold their spelling only.
    assert!(!rules.sites["e.example"].has_rules(), "{rules:?}");
    assert!(!rules.sites["d.example"].has_rules(), "{rules:?}");
    assert_eq!(rules.sites["e.example"].spelling.https, 5);
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

#[test]
fn each_site_gets_its_spelling() {
    let mut pages: Vec<(String, u64)> = Vec::new();
    for i in 0..8u64 {
        pages.push((format!("http://f.example/v?t={i}&p=2&sid=x{i}"), i));
    }
    // Two the other way round, one under www. and https: the usual order and spelling stay.
    pages.push(("https://www.f.example/v?p=2&t=1".into(), 1));
    pages.push(("http://f.example/v?sid=y&p=2&t=2".into(), 2));
    // Too few pages for a spelling of its own.
    pages.push(("https://small.example/a?b=1&a=2".into(), 50));
    let refs: Vec<(&str, u64)> = pages.iter().map(|(u, c)| (u.as_str(), *c)).collect();
    let (rules, _) = learn(&refs);
    let s = &rules.sites["f.example"].spelling;
    assert_eq!((s.http, s.https, s.bare, s.www), (9, 1, 9, 1));
    assert_eq!(s.params, ["t", "p", "sid"]);
    assert_eq!((s.https(), s.www()), (Some(false), Some(false)));
    assert_eq!(rules.sites["f.example"].pages, 10);
    assert!(!rules.sites.contains_key("small.example"));
}
