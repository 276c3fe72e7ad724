//! End to end: full run, incremental run after a crawl changed the core, idempotence, `check`.

use serde_json::{json, Map, Value};

use super::harness::{assert_settled, corpus, long, solr_test, Target};

/// A crawl's changes: new pages, re-crawled pages with new text (the crawler re-adds them whole,
/// without the worker's fields), deleted pages. Returns what it did, for the message.
fn crawl_changes(t: &Target, docs: &[Value]) -> (usize, usize, usize) {
    let mut added: Vec<Value> = corpus(40, 99)
        .into_iter()
        .map(|mut d| {
            let id = format!("new-{}", d["id"].as_str().unwrap());
            d["id"] = json!(id);
            d
        })
        .collect();
    // One new page is an exact copy of an old one: an old group grows.
    let mut copy = docs[3].clone();
    copy["id"] = json!("new-copy-of-3");
    copy["sku"] = json!("https://mirror.example.net/copy-of-3");
    added.push(copy);
    // Re-crawled: new text for some, the text of another page for one (a new double).
    let mut replaced = Vec::new();
    for (i, d) in docs.iter().enumerate().skip(10).step_by(37).take(5) {
        let mut d = d.clone();
        d["text_t"] = json!(format!(
            "Re-crawled page {i} with entirely new words about gardens."
        ));
        replaced.push(d);
    }
    let mut twin = docs[20].clone();
    twin["text_t"] = docs[21]["text_t"].clone();
    replaced.push(twin);
    t.load(&added);
    t.load(&replaced);
    // Deleted: among them a member of a planted group, so a group shrinks.
    let deleted: Vec<&str> = docs
        .iter()
        .skip(5)
        .step_by(53)
        .take(5)
        .map(|d| d["id"].as_str().unwrap())
        .collect();
    t.delete(&deleted);
    t.commit();
    (added.len(), replaced.len(), deleted.len())
}

solr_test!(
    full_then_incremental_equals_a_fresh_full_run,
    |t: &Target| {
        let dir = tempfile::tempdir().unwrap();
        let docs = corpus(300, 7);
        t.load(&docs);
        let first = t.run_ok(&["run"], dir.path());
        assert_eq!(first["documents"]["read"], 300);
        let checked_first = assert_settled(t, dir.path());

        let (added, replaced, deleted) = crawl_changes(t, &docs);
        let inc = t.run_ok(&["run"], dir.path());
        assert_eq!(inc["mode"], "incremental");
        // Only the new and re-crawled pages are signed again.
        assert_eq!(inc["documents"]["signed"], json!(added + replaced));
        let checked_inc = assert_settled(t, dir.path());

        // A fresh full run over the same documents changes nothing.
        let full = t.run_ok(&["run", "--full"], dir.path());
        assert_eq!(full["documents"]["written"], 0, "{full}");
        let final_docs = t.docs();
        assert_eq!(final_docs.len(), 300 + added - deleted);
        eprintln!(
        "checked {checked_first} values after the first run, {checked_inc} after the incremental run \
         ({added} added, {replaced} re-crawled, {deleted} deleted)"
    );
    }
);

solr_test!(a_small_change_is_looked_up_not_read_again, |t: &Target| {
    let dir = tempfile::tempdir().unwrap();
    let docs = corpus(600, 19);
    t.load(&docs);
    t.run_ok(&["run"], dir.path());
    // Three pages re-crawled (the crawler sends them without the worker's fields); deleted: the
    // representative of an exact group and a www double.
    t.load(&docs[10..13]);
    let stored = t.docs();
    let recrawled = |id: &str| docs[10..13].iter().any(|x| x["id"] == id);
    let pick = |what: &dyn Fn(&Map<String, Value>) -> bool| -> String {
        stored
            .iter()
            .find(|(id, d)| what(d) && !recrawled(id))
            .map(|(id, _)| id.clone())
            .expect("the corpus plants one")
    };
    let exact_rep = pick(&|d| {
        d.get("exact_signature_unique_b") == Some(&json!(true))
            && long(d, "exact_signature_copycount_i") >= Some(2)
    });
    let www_double = pick(&|d| d.get("www_unique_b") == Some(&json!(false)));
    let gone = [exact_rep.as_str(), www_double.as_str()];
    t.delete(&gone);
    t.commit();
    let present = t.docs().len() as u64;
    let inc = t.run_ok(&["run"], dir.path());
    let d = &inc["documents"];
    let (read, decided, reread) = (
        d["read"].as_u64().unwrap(),
        d["decided"].as_u64().unwrap(),
        d["reread"].as_u64().unwrap(),
    );
    assert_eq!(read, present, "{inc}");
    assert!(decided >= 3 && decided * 4 < read, "{inc}");
    assert!(reread <= 2 * decided, "looked up, not read again: {inc}");
    let checked = assert_settled(t, dir.path());
    eprintln!("checked {checked} values; {decided} documents decided, {reread} read again");
});

solr_test!(a_second_run_writes_nothing, |t: &Target| {
    let dir = tempfile::tempdir().unwrap();
    t.load(&corpus(200, 11));
    let first = t.run_ok(&["run"], dir.path());
    assert!(
        first["documents"]["written"].as_u64().unwrap() >= 200,
        "{first}"
    );
    let second = t.run_ok(&["run"], dir.path());
    assert_eq!(second["documents"]["written"], 0, "{second}");
    assert_eq!(second["documents"]["signed"], 0, "{second}");
    let checked = assert_settled(t, dir.path());
    eprintln!("checked {checked} values; the second run wrote 0 documents");
});

solr_test!(check_exits_0_1_and_2, |t: &Target| {
    let dir = tempfile::tempdir().unwrap();
    let docs = corpus(120, 3);
    t.load(&docs);
    let code = |args: &[&str]| t.run(args).status.code();
    // Nothing signed yet.
    assert_eq!(code(&["check", "--quiet"]), Some(1));
    t.run_ok(&["run"], dir.path());
    assert_eq!(code(&["check", "--quiet"]), Some(0));
    assert_eq!(code(&["check", "--full", "--quiet"]), Some(0));
    // A crawler re-adds one page: its signatures are gone, the index is out of date again.
    t.load(&docs[..1]);
    assert_eq!(code(&["check", "--quiet"]), Some(1));
    // A field the core does not have: check cannot tell.
    let out = t.run(&["check", "--field", "www_unique_b=no_such_flag_x", "--quiet"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stored = t.docs();
    assert!(long(
        &stored[docs[1]["id"].as_str().unwrap()],
        "exact_signature_l"
    )
    .is_some());
    eprintln!("checked 5 exit codes");
});
