//! Solr does only the work the change needs (issue 11): the worker's own counts of Solr's work (the
//! report's `work`) against the fake's counts on its side, and against what the change implies.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use solr_dedup::signature::{Scheme, Signer};

use super::harness::{assert_settled, corpus, Target, WORKER_FIELDS};
use crate::support::fake_solr::Work;

type Docs = BTreeMap<String, Map<String, Value>>;

fn work(report: &Value) -> &Value {
    &report["work"]
}

fn n(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("no {key} in {v}"))
}

/// The fake's counts of one run match the worker's; the fake also saw the run's two `rows=0` probes
/// before the engine starts (the `--filter` check and the `/export` probe), which the report does not
/// count.
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
    assert_eq!(fake.requests, n(w, "requests") + 2, "{w}");
}

/// Documents whose text must be read on every run: a non-empty text with an empty profile (no word
/// long enough) may be blank (whitespace only), which the exact dimension leaves out, and only the
/// text tells. Counted from the texts with the signature library (pinned by its Java vectors).
fn degenerate(docs: &[Value]) -> u64 {
    let signer = Signer::new(Scheme::Yacy);
    let empty = signer.profile("").signature();
    docs.iter()
        .filter(|d| {
            let text = d["text_t"].as_str().unwrap_or("");
            !text.is_empty() && signer.profile(text).signature() == empty
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
    assert_eq!(n(w, "light_cursor_docs"), 0, "scans through /export: {w}");
    // The model: 300 texts at 0.28 ms, 300 updates at 0.60 ms, the light scans at 0.006 ms, and
    // 1 ms a request, worked out from the counts by hand.
    let modelled = 300.0 * 0.28
        + 300.0 * 0.60
        + n(w, "light_export_docs") as f64 * 0.006
        + n(w, "requests") as f64;
    assert_eq!(n(w, "modelled_solr_ms"), modelled.round() as u64, "{w}");
    let checked = assert_settled(&t, dir.path());
    eprintln!("checked {checked} values; work {w}");
}

#[test]
fn a_second_run_reads_no_text_writes_nothing_and_scans_once_through_export() {
    let t = Target::fake("work-second");
    let dir = tempfile::tempdir().unwrap();
    let docs = corpus(300, 42);
    t.load(&docs);
    t.run_ok(&["run"], dir.path());
    let fake = t.fake_solr();
    fake.reset_work();
    let report = t.run_ok(&["run"], dir.path());
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
    let report = t.run_ok(&["run"], dir.path());
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
    assert_eq!(n(w, "light_export_docs"), 1000, "one light scan: {w}");
    assert_eq!(n(w, "light_cursor_docs"), 0, "{w}");
    // Everything else is a targeted lookup, of far fewer documents than the core holds.
    assert!(n(w, "lookup_docs") > 0 && n(w, "lookup_docs") < 200, "{w}");
    let checked = assert_settled(&t, dir.path());
    eprintln!("checked {checked} values; work {w}");
}
