//! Issue 27: which copy stays. The canonical-first preference order, worked out by hand from
//! `src/engine/url_key.rs`, against YaCy's, with and without rules; `check`'s preview of the flags a
//! new order turns over; incremental runs after the order changed end where `--full` does.

use std::sync::Arc;

use serde_json::{json, Value};
use solr_dedup::engine::{DecidedUnder, EngineConfig, Order, Preference};
use solr_dedup::urlrules::rank::Spelling;
use solr_dedup::urlrules::{Evidence, ParamRule, Rules, SiteRules};

use super::engine::{check, outputs, page, run, run_with, Docs, TEXT};

/// Issue 27: the copy that stays is the one a searcher should see. Worked out by hand from the
/// order (`src/engine/url_key.rs`): YaCy's is https, www., shorter; canonical first counts session,
/// tracking and host case as clutter; with rules, the site's majority spelling picks the scheme and
/// www. An incremental run after the order changed ends where a full run does.
#[test]
fn the_canonical_order_keeps_the_clean_url_and_incremental_runs_follow_it() {
    let a = page("a", "https://www.example.org/x?sid=abc", TEXT);
    let b = page("b", "http://example.org/x", TEXT);
    let c = page("c", "https://EXAMPLE.org/x", TEXT);
    let d = page("d", "https://www.example.org/x?utm_source=feed", TEXT);
    let e = page("e", "https://www.example.org/x", TEXT);
    let yacy = EngineConfig {
        preference: Preference {
            order: Order::Yacy,
            ..Preference::default()
        },
        ..EngineConfig::default()
    };
    let rules = EngineConfig {
        url_rules: Some(Arc::new(site_rules("example.org"))),
        ..EngineConfig::default()
    };
    let four = [a.clone(), b.clone(), c.clone(), d.clone()];
    // YaCy: https (a, c, d), then www. (a, d), then the shorter URL: a.
    let (_, by_yacy) = run_with(&four, &yacy);
    assert_eq!(rep(&by_yacy), ["a"]);
    // Canonical: a has a session id, c an upper-case host, d a tracking parameter: b.
    let (_, by_canonical) = run(&four);
    assert_eq!(rep(&by_canonical), ["b"]);
    assert_eq!(by_canonical["b"]["exact_signature_copycount_i"], json!(4));
    // From the index YaCy's order left, `check` previews the flips before anything is written:
    // a and b turn over in exact, fuzzy and near (one group of all four each), and in http
    // ({b, c}: YaCy kept c for https, canonical keeps b, c's host being upper case).
    let settled: Vec<Value> = by_yacy.values().cloned().collect();
    let preview = check(&settled);
    assert!(preview.check_failed());
    for (dim, ids) in [
        ("exact", ["a", "b"]),
        ("fuzzy", ["a", "b"]),
        ("near", ["a", "b"]),
        ("http", ["b", "c"]),
    ] {
        let r = &preview.dimensions[dim];
        assert_eq!(r.flips, 2, "{dim}: {r:?}");
        let mut got = r.flip_examples.clone();
        got.sort();
        assert_eq!(got, ids, "{dim}");
    }
    assert_eq!(preview.dimensions["www"].flips, 0);
    assert!(preview.summary().contains("2 unique flags would turn over"));
    // From there, an incremental run ends where a full one does.
    let (r, incremental) = run_with(&settled, &EngineConfig::default());
    assert!(r.documents.written > 0);
    let (_, full) = run_with(
        &settled,
        &EngineConfig {
            full: true,
            ..EngineConfig::default()
        },
    );
    assert_eq!(outputs(&incremental), outputs(&full));
    assert_eq!(rep(&incremental), ["b"]);

    // e is as clean as b: without rules --prefer-https picks e; with rules saying most of the
    // site's pages are under http and the bare host, b.
    let five = [a, b, c, d, e];
    let (_, no_rules) = run(&five);
    assert_eq!(rep(&no_rules), ["e"]);
    let (_, with_rules) = run_with(&five, &rules);
    assert_eq!(rep(&with_rules), ["b"]);
    let settled: Vec<Value> = no_rules.values().cloned().collect();
    let (_, incremental) = run_with(&settled, &rules);
    let (_, full) = run_with(
        &settled,
        &EngineConfig {
            full: true,
            ..rules.clone()
        },
    );
    assert_eq!(outputs(&incremental), outputs(&full));
    assert_eq!(rep(&incremental), ["b"]);
}

/// Rules learnt again can turn a win into a tie, which the URL then breaks: the representative a
/// run kept under the old rules holds the shared best rank, and only the order the flags were
/// decided under ([`DecidedUnder`]) tells an incremental run to decide the group again. Seen in the
/// long soak of issue 30: two sites' home pages with one text, the larger site winning while it
/// was larger.
#[test]
fn rules_that_turn_a_win_into_a_tie_decide_the_group_again() {
    let home0 = page("h0", "https://www.site0.example/", TEXT);
    let home1 = page("h1", "https://www.site1.example/", TEXT);
    let sized = |p0: u64, p1: u64| {
        let mut rules = Rules::default();
        for (name, pages) in [("site0.example", p0), ("site1.example", p1)] {
            let site = SiteRules {
                pages,
                ..SiteRules::default()
            };
            rules.sites.insert(name.into(), site);
        }
        Arc::new(rules)
    };
    let under = |rules: &Arc<Rules>, decided_under: DecidedUnder| EngineConfig {
        url_rules: Some(rules.clone()),
        decided_under,
        ..EngineConfig::default()
    };
    // site1 has more pages: its home page stays.
    let old = sized(4000, 8000);
    let (_, first) = run_with(
        &[home0.clone(), home1.clone()],
        &under(&old, DecidedUnder::Unknown),
    );
    assert_eq!(rep(&first), ["h1"]);
    let settled: Vec<Value> = first.values().cloned().collect();
    // Learnt again, the sites have the same number of pages: a tie on the rank, which the smaller
    // URL breaks (https://www.site0… < https://www.site1…).
    let new = sized(8000, 8000);
    let (_, full) = run_with(
        &settled,
        &EngineConfig {
            full: true,
            ..under(&new, DecidedUnder::Unknown)
        },
    );
    assert_eq!(rep(&full), ["h0"]);
    let decided_old = DecidedUnder::Order {
        preference: Preference::default(),
        rules: Some(old.clone()),
    };
    let (r, incremental) = run_with(&settled, &under(&new, decided_old));
    assert_eq!(r.documents.decided, 2);
    assert_eq!(outputs(&incremental), outputs(&full));
    // Not knowing the order decides every tied group again, with the same outcome.
    let (_, unknown) = run_with(&settled, &under(&new, DecidedUnder::Unknown));
    assert_eq!(outputs(&unknown), outputs(&full));
    // Told (wrongly) that the flags were decided under the new rules, a run has no way to see it:
    // the group looks settled, and h1 keeps its flag.
    let decided_new = DecidedUnder::Order {
        preference: Preference::default(),
        rules: Some(new.clone()),
    };
    let (r, stale) = run_with(&settled, &under(&new, decided_new.clone()));
    assert_eq!(
        (r.documents.decided, rep(&stale)),
        (0, vec!["h1".to_owned()])
    );
    // Rules learnt again under which site1 still has more pages leave no tie: the settled index
    // costs no decision, though both ranks moved.
    let grown = sized(4100, 8200);
    let decided_old = DecidedUnder::Order {
        preference: Preference::default(),
        rules: Some(old),
    };
    let (r, _) = run_with(&settled, &under(&grown, decided_old));
    assert_eq!(r.documents.decided, 0);
    // Neither does the order it was decided under, once the run is settled under the new rules.
    let converged: Vec<Value> = incremental.values().cloned().collect();
    let (r, again) = run_with(&converged, &under(&new, decided_new));
    assert_eq!((r.documents.decided, r.documents.written), (0, 0));
    assert_eq!(rep(&again), ["h0"]);
}

/// The ids that hold the exact dimension's `true` flag.
fn rep(out: &Docs) -> Vec<String> {
    out.iter()
        .filter(|(_, d)| d["exact_signature_unique_b"] == json!(true))
        .map(|(id, _)| id.clone())
        .collect()
}

/// Rules for `name`: `sid` does not matter, most pages are under http and the bare host (the
/// proptest of `engine.rs` uses them for `a.org`).
pub(crate) fn site_rules(name: &str) -> Rules {
    let mut site = SiteRules {
        pages: 50,
        spelling: Spelling {
            http: 40,
            https: 10,
            bare: 30,
            www: 20,
            params: vec![],
            ..Spelling::default()
        },
        ..SiteRules::default()
    };
    site.params
        .push(ParamRule::irrelevant("sid", "/", Evidence::new(30, 0)));
    let mut rules = Rules::default();
    rules.sites.insert(name.into(), site);
    rules
}
