//! Index-time signing (issue 47): the update processor of `solr-plugin/` on real cores, loaded from
//! the core's `lib/` folder (a single node) and from the nodes' shared lib folder (SolrCloud), as
//! the launcher installs it (`tests/solr`). Pages loaded through its chain carry, before the worker
//! has run, exactly the signatures and near values the worker computes; the worker then decides
//! them without reading a text and ends where a worker-only `--full` run does, document by
//! document. A run under other settings than the chain's stops with exit 2; a core that does not
//! store the text is decided in place and its text stays searchable.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::harness::{assert_settled, corpus, expected, n, Target, WORKER_FIELDS};
use super::in_place::{assert_in_place, schema};
use crate::support::cmd::stderr;

/// What the chain writes when it signs a page: the worker's fields less its decisions.
fn signed_fields() -> impl Iterator<Item = &'static str> {
    WORKER_FIELDS.into_iter().filter(|f| {
        !(f.ends_with("_unique_b") || f.ends_with("_copycount_i") || *f == "near_group_s")
    })
}

/// A generated corpus with doubles, some pages without a description or a title.
fn pages(count: u64) -> Vec<Value> {
    let mut docs = corpus(count, 47);
    for (i, d) in docs.iter_mut().enumerate() {
        let d = d.as_object_mut().unwrap();
        if i % 7 == 0 {
            d.remove("description_txt");
        }
        if i % 11 == 3 {
            d.remove("title");
        }
    }
    docs
}

fn value<'a>(doc: &'a Map<String, Value>, field: &str) -> Option<&'a Value> {
    doc.get(field).filter(|v| !v.is_null())
}

/// Every signed field of every loaded page is the worker's (its file store's `--full` answer on
/// the same pages), and no page is decided yet. Returns how many values were compared.
fn assert_signed_as_the_worker(t: &Target, dir: &std::path::Path) -> usize {
    let loaded = t.docs();
    let want = expected(t, &loaded, dir);
    let mut checked = 0;
    for (id, w) in &want {
        let got = &loaded[id];
        for f in signed_fields() {
            assert_eq!(value(got, f), value(w, f), "{id}: {f}");
            checked += 1;
        }
        assert!(
            value(got, "exact_signature_unique_b").is_none(),
            "{id}: decided before the worker ran"
        );
    }
    checked
}

/// Loads pages through the chain, then runs the worker: it reads no text and ends where a
/// worker-only run does; a partial update that sets a page's text takes its signatures away, so
/// that the worker signs it again from the new text.
fn signed_pages_end_where_the_worker_does(t: &Target) {
    let dir = tempfile::tempdir().unwrap();
    t.load(&pages(240));
    let mut checked = assert_signed_as_the_worker(t, dir.path());

    let first = t.run_ok(&["run"], dir.path());
    assert_eq!(n(&first["work"], "text_docs"), 0, "{first}");
    assert_eq!(n(&first["documents"], "signed"), 0, "{first}");
    checked += assert_settled(t, dir.path());

    // A crawler's partial update of one page's text: its signatures go with the old text.
    let id = t.id(t.docs().keys().next().unwrap());
    t.update(
        json!([{"id": id, "text_t": {"set": "A page rewritten from scratch, all new words."}}]),
    );
    t.commit();
    let page = &t.docs()[t.short(&id)];
    assert!(value(page, "exact_signature_l").is_none(), "{page:?}");
    assert!(value(page, "near_keys_ls").is_none(), "{page:?}");
    let second = t.run_ok(&["run"], dir.path());
    assert_eq!(n(&second["work"], "text_docs"), 1, "{second}");
    checked += assert_settled(t, dir.path());
    eprintln!("signed pages: {checked} values checked");
}

#[test]
#[cfg_attr(
    not(real_solr),
    ignore = "needs Java 17 and Maven for a real Solr (tests/solr)"
)]
fn signed_pages_end_where_the_worker_does_on_a_core() {
    signed_pages_end_where_the_worker_does(&Target::signed("signed-core"));
}

#[test]
#[cfg_attr(
    not(real_solr),
    ignore = "needs Java 17 and Maven for a real Solr (tests/solr)"
)]
fn signed_pages_end_where_the_worker_does_on_a_collection() {
    signed_pages_end_where_the_worker_does(&Target::signed_cloud("signed-cloud"));
}

/// The chain signs under the worker's defaults (its arguments; the core has no record of its
/// own): a run under another scheme or other near parameters stops before it writes, naming
/// each difference.
#[test]
#[cfg_attr(
    not(real_solr),
    ignore = "needs Java 17 and Maven for a real Solr (tests/solr)"
)]
fn a_run_under_other_settings_than_the_chains_stops() {
    let t = Target::signed("signed-other");
    t.load(&pages(20));
    let out = t.run(&["run", "--scheme", "md5", "--near-hashes", "10"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("--scheme md5 (the chain signs under: yacy)"),
        "{err}"
    );
    assert!(
        err.contains(
            "--near-shingle/hashes/trials/agree 2/10/6/2 (the chain signs under: 2/14/6/2)"
        ),
        "{err}"
    );
    // Nothing was written.
    for (id, d) in t.docs() {
        assert!(value(&d, "exact_signature_unique_b").is_none(), "{id}");
    }
    // The chain's own settings run.
    let dir = tempfile::tempdir().unwrap();
    let report = t.run_ok(&["run"], dir.path());
    assert_eq!(n(&report["work"], "text_docs"), 0, "{report}");
}

/// A core that does not store the text: pages signed at index time are decided in place (no
/// write re-indexes a page, so the text is kept), searchable afterwards; a page whose signatures
/// a partial update took away stops the next run with exit 2 and the count.
#[test]
#[cfg_attr(
    not(real_solr),
    ignore = "needs Java 17 and Maven for a real Solr (tests/solr)"
)]
fn a_core_without_stored_text_is_decided_in_place() {
    let t = Target::unstored("unstored");
    let dir = tempfile::tempdir().unwrap();
    let (code, applied) = schema(&t, "apply", &["--profile", "in-place"]);
    assert_eq!(code, Some(0), "{applied}");
    let docs = pages(150);
    t.load(&docs);
    assert!(
        t.docs().values().all(|d| d.get("text_t").is_none()),
        "the text is not stored"
    );

    let report = t.run_ok(&["run"], dir.path());
    assert_eq!(n(&report["work"], "text_docs"), 0, "{report}");
    // Every write in place (the chain gave each page the profile's first values).
    assert_eq!(
        n(&report["work"], "written_in_place_docs"),
        n(&report["work"], "written_docs"),
        "{report}"
    );
    // The oracle signs the pages as loaded, text and all.
    let crawled: BTreeMap<String, Map<String, Value>> = docs
        .iter()
        .map(|d| {
            let mut d = d.as_object().unwrap().clone();
            d.insert("id".into(), json!(t.id(d["id"].as_str().unwrap())));
            (t.short(d["id"].as_str().unwrap()).to_owned(), d)
        })
        .collect();
    let want = expected(&t, &crawled, dir.path());
    let mut checked = assert_in_place(&t.docs(), &want);

    // Every page's text is still searchable: the flags were written in place.
    for (id, d) in crawled.iter().take(30) {
        let text = d["text_t"].as_str().unwrap();
        let Some(word) = text
            .split(|c: char| !c.is_ascii_alphabetic())
            .find(|w| w.len() >= 6)
        else {
            continue;
        };
        let found = t.get_json(
            &format!("{}/select", t.core_url),
            &[
                ("q", &format!("text_t:{word}")),
                ("fq", &format!("id:\"{}\"", t.id(id))),
                ("rows", "0"),
            ],
        );
        assert_eq!(found["response"]["numFound"], 1, "{id}: {word}");
        checked += 1;
    }

    // Other signing settings would need every page signed again: refused, with the count.
    let out = t.run(&["run", "--reconfigure", "--scheme", "md5"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("150 pages can only be signed again by re-indexing them"),
        "{}",
        stderr(&out)
    );

    // A partial update of one page's text: the chain takes its signatures away, and the page can
    // only be signed by re-indexing it whole.
    let id = t.id(crawled.keys().next().unwrap());
    t.update(json!([{"id": id, "text_t": {"set": "Rewritten, and not stored."}}]));
    t.commit();
    let out = t.run(&["run"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "1 pages need signing from their text, which the core does not store (text_t)"
        ),
        "{}",
        stderr(&out)
    );
    eprintln!("text not stored: {checked} values checked");
}
