//! Solr does only the work the change needs (issue 11): the worker's own counts of Solr's work (the
//! report's `work`) against the fake's counts on its side, and against what the change implies.

use crate::support::corpus::chain;
use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use solr_dedup::signature::near::tokens;
use solr_dedup::signature::{Scheme, Signer};

use super::harness::{assert_settled, corpus, long, n, solr_test, Target, WORKER_FIELDS};
use crate::support::fake_solr::Work;

type Docs = BTreeMap<String, Map<String, Value>>;

fn work(report: &Value) -> &Value {
    &report["work"]
}

/// The fake's counts of one run match the worker's; the fake also saw the run's one `rows=0` probe
/// before the engine starts (Solr parses `--filter` in it, and it tells `/export` apart and counts
/// the documents), which the report does not count.
fn same_counts(fake: &Work, report: &Value) {
    let w = work(report);
    assert_eq!(
        fake.text_docs,
        n(w, "text_docs") + n(w, "sample_docs"),
        "{w}"
    );
    assert_eq!(fake.export_docs, n(w, "light_export_docs"), "{w}");
    assert_eq!(fake.light_cursor_docs, n(w, "light_cursor_docs"), "{w}");
    assert_eq!(fake.lookup_docs, n(w, "lookup_docs"), "{w}");
    assert_eq!(fake.written_docs, n(w, "written_docs"), "{w}");
    assert_eq!(fake.requests, n(w, "requests") + 1, "{w}");
}

/// Documents whose text must be read on every run: a non-empty text with an empty profile (no word
/// long enough) may be blank (whitespace only), which the exact dimension leaves out. Counted from
/// the texts with the signature library (pinned by its Java vectors and the near spec's).
fn degenerate(docs: &[Value]) -> u64 {
    let signer = Signer::new(Scheme::Yacy);
    let empty = signer.profile("").signature();
    docs.iter()
        .filter(|d| {
            let text = d["text_t"].as_str().unwrap_or("");
            // An empty profile may stand for a blank text, which the exact dimension leaves out.
            // The near version says so for a blank text and for one with words (step 1's tokens);
            // only a text of neither kind, such as punctuation, is read again to tell.
            !text.is_empty()
                && signer.profile(text).signature() == empty
                && !text.chars().all(char::is_whitespace)
                && tokens(text).is_empty()
        })
        .count() as u64
}

/// The documents whose worker fields differ between two states of the core.
fn changed(before: &Docs, after: &Docs) -> u64 {
    after
        .iter()
        .filter(|(id, doc)| {
            let old = before.get(*id);
            WORKER_FIELDS.iter().any(|f| {
                doc.get(*f).filter(|v| !v.is_null())
                    != old.and_then(|o| o.get(*f)).filter(|v| !v.is_null())
            })
        })
        .count() as u64
}

#[test]
fn a_first_run_reads_each_text_once_and_writes_each_document_once() {
    let t = Target::fake("work-first");
    let dir = tempfile::tempdir().unwrap();
    let docs = corpus(300, 41);
    t.load(&docs);
    let fake = t.fake_solr();
    fake.reset_work();
    let report = t.run_ok(&["run", "--batch-size", "50"], dir.path());
    let w = work(&report);
    same_counts(&fake.work(), &report);
    assert_eq!(n(w, "text_docs"), 300, "each text once: {w}");
    assert_eq!(n(w, "sample_docs"), 0, "nothing signed yet to sample: {w}");
    assert_eq!(n(w, "written_docs"), 300, "each document once: {w}");
    assert_eq!(n(&report["documents"], "written"), 300);
    // Scans through /export; one /select row is the highest version, the run's mark.
    assert_eq!(n(w, "light_cursor_docs"), 1, "{w}");
    // The model: 300 texts at 0.28 ms, 300 updates at 0.60 ms, the light scans at 0.006 ms, a
    // light /select row at 0.079 ms and 1 ms a request, worked out from the counts by hand.
    let modelled = 300.0 * 0.28
        + 300.0 * 0.60
        + n(w, "light_export_docs") as f64 * 0.006
        + 0.079
        + n(w, "requests") as f64;
    assert_eq!(n(w, "modelled_solr_ms"), modelled.round() as u64, "{w}");
    let checked = assert_settled(&t, dir.path());
    eprintln!("checked {checked} values; work {w}");
}

#[test]
fn a_second_run_reads_no_text_writes_nothing_and_scans_once_through_export() {
    // Without a change state (`--no-change-state`): one light scan of everything.
    let t = Target::fake("work-second");
    let dir = tempfile::tempdir().unwrap();
    let docs = corpus(300, 42);
    t.load(&docs);
    t.run_ok(&["run", "--no-change-state"], dir.path());
    let fake = t.fake_solr();
    fake.reset_work();
    let report = t.run_ok(&["run", "--no-change-state"], dir.path());
    assert!(report.get("changes").is_none(), "{report}");
    let w = work(&report);
    same_counts(&fake.work(), &report);
    let odd = degenerate(&docs);
    assert_eq!(
        n(w, "text_docs"),
        odd,
        "only the texts that may be blank: {w}"
    );
    assert!(odd * 20 < 300, "a few: {odd}");
    if odd == 0 {
        assert_eq!(n(w, "sample_docs"), 0, "{w}");
    }
    assert_eq!(n(w, "written_docs"), 0, "{w}");
    assert_eq!(n(w, "light_export_docs"), 300, "one scan: {w}");
    assert_eq!(n(w, "light_cursor_docs") + n(w, "lookup_docs"), 0, "{w}");
    // One /export, and for the texts that may be blank one real-time get and the guard's sample.
    assert_eq!(n(w, "requests"), if odd == 0 { 1 } else { 3 }, "{w}");
}

#[test]
fn a_settled_second_run_reads_the_versions_of_what_changed_and_nothing_else() {
    let t = Target::fake("work-settled");
    let dir = tempfile::tempdir().unwrap();
    let docs = corpus(300, 42);
    t.load(&docs);
    let first = t.run_ok(&["run", "--change-window", "0"], dir.path());
    assert_eq!(first["changes"]["source"], "full scan", "{first}");
    assert_eq!(first["changes"]["kept"], true, "{first}");
    let fake = t.fake_solr();
    fake.reset_work();
    let report = t.run_ok(&["run", "--change-window", "0"], dir.path());
    let w = work(&report);
    same_counts(&fake.work(), &report);
    assert_eq!(report["changes"]["source"], "settled", "{report}");
    assert_eq!(n(&report["documents"], "read"), 300, "{report}");
    assert_eq!(
        n(w, "text_docs") + n(w, "sample_docs") + n(w, "written_docs"),
        0,
        "{w}"
    );
    // The versions at the mark (the run's last write), and the one row that finds the mark.
    assert!(n(w, "light_export_docs") <= 2, "{w}");
    assert_eq!(n(w, "light_cursor_docs"), 1, "{w}");
    assert_eq!(n(w, "lookup_docs") + n(w, "file_docs"), 0, "{w}");
    // The soft commit, the mark, the count, the versions above the mark and the counts per
    // version range.
    assert_eq!(n(w, "requests"), 5, "{w}");
    // The dimensions are the first run's.
    for (name, d) in first["dimensions"].as_object().unwrap() {
        for key in ["groups", "doubles", "excluded"] {
            assert_eq!(report["dimensions"][name][key], d[key], "{name}: {report}");
        }
        assert_eq!(report["dimensions"][name]["changed"], 0, "{name}: {report}");
    }
    let check = t.run_ok(&["check", "--change-window", "0"], dir.path());
    assert_eq!(check["changes"]["source"], "settled", "{check}");
}

#[test]
fn after_a_recrawl_of_one_percent_only_the_change_costs() {
    let t = Target::fake("work-incremental");
    let dir = tempfile::tempdir().unwrap();
    let docs = corpus(1000, 43);
    t.load(&docs);
    t.run_ok(&["run"], dir.path());
    // 1 % re-crawled: the crawler re-adds them whole without the worker's fields, three of them with
    // new text, one with another page's text (a new double), six unchanged.
    let mut recrawled: Vec<Value> = docs.iter().skip(7).step_by(97).take(10).cloned().collect();
    for (i, d) in recrawled.iter_mut().enumerate().take(3) {
        d["text_t"] = Value::from(format!(
            "Re-crawled page {i}, now about rivers and bridges."
        ));
    }
    recrawled[3]["text_t"] = docs[500]["text_t"].clone();
    t.load(&recrawled);
    let before = t.docs();
    let fake = t.fake_solr();
    fake.reset_work();
    let report = t.run_ok(&["run", "--change-window", "0"], dir.path());
    let counted = fake.work();
    let after = t.docs();
    let w = work(&report);
    same_counts(&counted, &report);
    let odd = degenerate(
        &after
            .values()
            .map(|d| Value::Object(d.clone()))
            .collect::<Vec<_>>(),
    );
    assert_eq!(
        n(w, "text_docs"),
        10 + odd,
        "texts read = re-crawled documents (and those that may be blank): {w}"
    );
    assert!(n(w, "sample_docs") <= 64, "{w}");
    assert_eq!(
        n(w, "written_docs"),
        changed(&before, &after),
        "only what changes: {w}"
    );
    assert!(n(w, "written_docs") >= 10, "{w}");
    // Changes found from versions: the light fields of every document come from the change state,
    // and Solr streams only versions (the ten re-crawled, and at the end the run's own writes).
    assert_eq!(report["changes"]["source"], "versions", "{report}");
    assert_eq!(report["changes"]["reindexed"], 10, "{report}");
    assert_eq!(
        n(w, "file_docs"),
        1000,
        "one light scan, from the state: {w}"
    );
    assert!(n(w, "light_export_docs") <= 2 * 30, "{w}");
    assert_eq!(n(w, "light_cursor_docs"), 1, "the mark: {w}");
    // Everything else is a targeted lookup, of far fewer documents than the core holds.
    assert!(n(w, "lookup_docs") > 0 && n(w, "lookup_docs") < 200, "{w}");
    let checked = assert_settled(&t, dir.path());
    eprintln!("checked {checked} values; work {w}");
}

solr_test!(
    seven_dimensions_after_a_one_percent_recrawl_with_near_clusters,
    |t: &Target| {
        let dir = tempfile::tempdir().unwrap();
        let mut docs = corpus(600, 45);
        let page = |id: &str, url: &str, text: &str| json!({"id": id, "sku": url, "text_t": text});
        // Planted near clusters, each page unique in the six other dimensions:
        // - a chain a1 - b1 - c1 (one cluster of three; b1 bridges);
        // - the ends of a second chain, each with an upper-case copy: {a2, a2u} and {c2, c2u};
        // - p1, p2, p3, the same words (one cluster of three; p1 has the best URL).
        let [a1, b1, c1] = chain("river");
        let [a2, b2, c2] = chain("bridge");
        let news = "Council approves the new bridge over the river; work starts in spring and \
                    ends before the winter comes to the valley";
        docs.extend([
            page("a1", "https://one.example/a", &a1),
            page("b1", "https://one.example/b", &b1),
            page("c1", "https://one.example/c", &c1),
            page("a2", "https://two.example/a", &a2),
            page("a2u", "https://two.example/au", &a2.to_uppercase()),
            page("c2", "https://two.example/c", &c2),
            page("c2u", "https://two.example/cu", &c2.to_uppercase()),
            page("p1", "https://www.news.example/s", news),
            page("p2", "http://news.example/s?ref=rss", &news.to_uppercase()),
            page("p3", "https://mirror.example/s", &format!("{news}!")),
        ]);
        t.load(&docs);
        t.run_ok(&["run"], dir.path());
        let settled = t.docs();
        let near_count = |d: &Docs, id: &str| long(&d[id], "near_copycount_i");
        assert_eq!(near_count(&settled, "b1"), Some(3));
        assert_eq!(near_count(&settled, "a2"), Some(2));
        assert_eq!(near_count(&settled, "p2"), Some(3));
        assert_eq!(settled["p2"]["near_group_s"], json!(t.id("p1")));

        // 1 % of 610 pages changes: b1 re-crawled with new text (its cluster splits into three
        // pages alone), b2 added (it merges {a2, a2u} and {c2, c2u} into one of five), p1 deleted
        // (the cluster loses its representative), and three generated pages that stand alone in
        // every dimension re-crawled unchanged.
        let alone: Vec<Value> = docs
            .iter()
            .filter(|d| {
                let s = &settled[d["id"].as_str().unwrap()];
                WORKER_FIELDS
                    .iter()
                    .all(|f| !f.ends_with("_unique_b") || s.get(*f) == Some(&json!(true)))
                    && WORKER_FIELDS
                        .iter()
                        .all(|f| !f.ends_with("_copycount_i") || s.get(*f) == Some(&json!(1)))
            })
            .skip(100)
            .step_by(150)
            .take(3)
            .cloned()
            .collect();
        assert_eq!(alone.len(), 3);
        let mut recrawl = alone.clone();
        recrawl.push(page(
            "b1",
            "https://one.example/b",
            "Re-crawled: now about the weather in spring.",
        ));
        recrawl.push(page("b2", "https://two.example/b", &b2));
        t.load(&recrawl);
        t.delete(&["p1"]);
        t.commit();
        let report = t.run_ok(&["run", "--change-window", "0"], dir.path());
        let w = work(&report);
        let decided = n(&report["documents"], "decided");
        // Decided by hand: b1 and its old cluster's a1 and c1; b2 and the four it joins; p2 and p3;
        // the three re-crawled pages, alone everywhere.
        assert_eq!(decided, 3 + 5 + 2 + 3, "{report}");
        // The near step looks up: by id the stored members of the clusters the change opened (a1,
        // c1, p2, p3) and by b2's keys the four it joins, then the keys of the opened clusters'
        // members again (a1, c1, p2, p3): at most 2 x 8. Passes B and C pack each decided page's
        // lookup values into one read, so each pass finds it once: at most 2 x decided of the
        // lookups are theirs (`documents.reread`), and the rest is the near step's.
        // The changed pages' light fields are read by id too (`changes.changed_read`).
        let changed_read = n(&report["changes"], "changed_read");
        assert_eq!(changed_read, 5, "b1, b2 and the three re-crawled: {report}");
        let (looked_up, reread) = (
            n(w, "lookup_docs") - changed_read,
            n(&report["documents"], "reread"),
        );
        eprintln!("lookups {looked_up}, of them passes B and C {reread}; work {w}");
        assert!(reread <= 2 * decided, "{reread} > 2 x {decided}: {report}");
        assert!(looked_up >= reread, "{report}");
        assert!(
            looked_up - reread <= 2 * 8,
            "near step {} > 16: {w}",
            looked_up - reread
        );
        // One light scan, served from the change state: 610 pages, b2 in and p1 out; no stored
        // key streamed.
        assert_eq!(n(w, "file_docs"), 610, "{w}");
        assert_eq!(report["changes"]["deleted"], 1, "{report}");
        let light = |w: &Value| n(w, "light_export_docs") + n(w, "light_cursor_docs");
        assert_eq!(
            report["dimensions"]["near"]["lookup_fallbacks"], 0,
            "{report}"
        );
        let state = t.docs();
        for id in ["a1", "b1", "c1"] {
            assert_eq!(near_count(&state, id), Some(1), "{id}: split");
        }
        for id in ["a2", "a2u", "b2", "c2", "c2u"] {
            assert_eq!(near_count(&state, id), Some(5), "{id}: merged");
        }
        assert_eq!(near_count(&state, "p2"), Some(2));
        assert_settled(t, dir.path());

        // Settled: `check` and a rerun read the light fields once and look nothing up; `--full`
        // writes nothing, and `check` of what it leaves costs the same.
        let check = |label: &str, source: &str| {
            let c = t.run_ok(&["check", "--no-change-state"], dir.path());
            let w = work(&c);
            assert_eq!(n(w, "lookup_docs"), 0, "{label}: {w}");
            assert_eq!(light(w), 610, "{label}: {w}");
            // From versions: nothing changed since the run, nothing to read.
            let c = t.run_ok(&["check", "--change-window", "0"], dir.path());
            assert_eq!(c["changes"]["source"], source, "{label}: {c}");
            if source == "settled" {
                assert!(light(work(&c)) <= 3, "{label}: {c}");
            }
            assert_eq!(n(&c["documents"], "decided"), 0, "{label}: {c}");
        };
        check("after the incremental run", "settled");
        let again = t.run_ok(&["run"], dir.path());
        assert_eq!(n(work(&again), "lookup_docs"), 0, "{again}");
        assert_eq!(n(&again["documents"], "written"), 0, "{again}");
        let full = t.run_ok(&["run", "--full"], dir.path());
        assert_eq!(n(&full["documents"], "written"), 0, "{full}");
        // A --full run reads everything, and keeps a change state like any other.
        check("after --full", "settled");

        // A wrong stored state only the near dimension shows: c2's count says it is alone. `check`
        // finds it (exit 1), and only in near.
        let mut wrong = t.docs()["c2"].clone();
        wrong.insert("near_copycount_i".into(), json!(1));
        wrong.insert("id".into(), json!("c2"));
        t.load(&[Value::Object(wrong)]);
        let out = t.run(&["check", "--report", "-", "--quiet"]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let c: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(n(&c["dimensions"]["near"], "changed") >= 1, "{c}");
        for (name, d) in c["dimensions"].as_object().unwrap() {
            if name != "near" {
                assert_eq!(n(d, "changed"), 0, "{name}: {c}");
            }
        }
    }
);
