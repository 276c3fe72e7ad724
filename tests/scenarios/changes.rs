//! Everyday runs find what changed from versions (issue 45): the change state in `--state-dir`
//! serves the light reads, Solr is asked for the versions above the last run's mark, deletions are
//! found by count; whatever happened between runs, a run ends where `--full` does (the expectation
//! comes from the file store's `--full` run on the documents the core holds, `assert_settled`).

use std::path::Path;

use serde_json::{json, Value};

use super::harness::{assert_settled, corpus, n, solr_test, Target};
use crate::support::fake_solr::{Fault, FaultRule};

/// Solr's light reads of a run (versions streamed, the mark's row): what a settled run costs.
fn light(report: &Value) -> u64 {
    n(&report["work"], "light_export_docs") + n(&report["work"], "light_cursor_docs")
}

/// `run EXTRA…` with the change state in `STATE` and no window (only the versions above the mark
/// are read).
fn from_versions<'a>(state: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--state-dir",
        state.to_str().unwrap(),
        "--change-window",
        "0",
    ];
    args.extend_from_slice(extra);
    args
}

/// `solr-dedup run EXTRA…` with the change state in `DIR/state` and no window, to the end; its
/// report.
fn run_from_versions(t: &Target, dir: &Path, extra: &[&str]) -> Value {
    let state = dir.join("state");
    t.run_ok(&from_versions(&state, extra), dir)
}

/// Takes `less` documents off the count of the change state in `DIR/state`: the index then holds
/// documents the state cannot account for, as after a restore.
fn miscount_state(dir: &Path, less: u64) {
    let meta_path = state_meta_path(dir);
    let mut meta = state_meta(dir);
    meta["count"] = json!(n(&meta, "count") - less);
    std::fs::write(&meta_path, meta.to_string()).unwrap();
}

/// A page of `docs` with a new text, as a crawler re-indexes it (without the worker's fields).
fn recrawled(doc: &Value, text: &str) -> Value {
    json!({
        "id": doc["id"].clone(),
        "sku": doc["sku"].clone(),
        "title": doc.get("title").cloned().unwrap_or(json!(["Re-crawled"])),
        "text_t": text,
    })
}

solr_test!(
    changes_between_runs_are_found_from_versions_and_end_where_full_does,
    |t: &Target| {
        let dir = tempfile::tempdir().unwrap();
        let state_arg = dir.path().join("state").to_str().unwrap().to_owned();
        let run = |extra: &[&str]| run_from_versions(t, dir.path(), extra);
        let docs = corpus(400, 71);
        t.load(&docs);
        let first = run(&[]);
        assert_eq!(first["changes"]["source"], "full scan", "{first}");
        assert_eq!(first["changes"]["reason"], "no state from an earlier run");
        assert_eq!(first["changes"]["kept"], true, "{first}");

        // Settled: the versions above the mark and the mark itself, nothing else.
        let settled = run(&[]);
        assert_eq!(settled["changes"]["source"], "settled", "{settled}");
        assert!(light(&settled) <= 3, "{settled}");
        assert_eq!(n(&settled["work"], "text_docs"), 0, "{settled}");
        assert_eq!(n(&settled["work"], "lookup_docs"), 0, "{settled}");
        assert_eq!(n(&settled["documents"], "written"), 0, "{settled}");
        assert_settled(t, dir.path());

        // Between runs: two pages re-indexed twice, two deleted, one deleted and added again with
        // the same id and another page's text, two new pages (one a double of an old one).
        let short = |d: &Value| t.short(d["id"].as_str().unwrap()).to_owned();
        let twice = [&docs[10], &docs[20]];
        for round in 0..2 {
            let again: Vec<Value> = twice
                .iter()
                .map(|d| recrawled(d, &format!("Round {round}: a new text about ferries.")))
                .collect();
            t.load(&again);
        }
        let gone = [short(&docs[30]), short(&docs[40])];
        t.delete(&[&gone[0], &gone[1]]);
        let back = short(&docs[50]);
        t.delete(&[&back]);
        t.commit();
        t.load(&[recrawled(
            &docs[50],
            docs[60]["text_t"].as_str().unwrap_or(""),
        )]);
        t.load(&[
            json!({"id": "new-1", "sku": "https://new.example/a", "text_t": "A new page about owls."}),
            json!({"id": "new-2", "sku": "https://new.example/b",
                   "text_t": docs[70]["text_t"].clone()}),
        ]);
        t.commit();
        let after = run(&[]);
        let c = &after["changes"];
        assert_eq!(c["source"], "versions", "{after}");
        assert_eq!(
            (n(c, "new"), n(c, "reindexed"), n(c, "deleted")),
            (2, 3, 2),
            "{after}"
        );
        assert_eq!(n(&after["work"], "text_docs"), 5, "{after}");
        // The light fields of the 403 other documents came from the state.
        assert!(n(&after["work"], "file_docs") >= 400, "{after}");
        assert!(light(&after) < 100, "{after}");
        let checked = assert_settled(t, dir.path());

        // Settled again; `check` agrees, and a full dry run would write nothing.
        let again = run(&[]);
        assert_eq!(again["changes"]["source"], "settled", "{again}");
        let check = t.run(&["check", "--state-dir", &state_arg, "--quiet"]);
        assert_eq!(check.status.code(), Some(0), "{check:?}");
        let full = run(&["--full", "--dry-run"]);
        assert_eq!(n(&full["documents"], "written"), 0, "{full}");

        // Every page of the filter deleted and loaded again (as a core replaced under the same
        // URL): every version is new; the run finds them all and ends where --full does.
        let all: Vec<String> = docs.iter().map(short).collect();
        t.delete(&all.iter().map(String::as_str).collect::<Vec<_>>());
        t.commit();
        t.load(&docs);
        let replaced = run(&[]);
        let c = &replaced["changes"];
        assert!(
            c["source"] == "full scan" || n(c, "reindexed") + n(c, "new") >= 390,
            "{replaced}"
        );
        let more = assert_settled(t, dir.path());
        eprintln!("checked {checked} + {more} values");
    }
);

solr_test!(
    what_a_run_derived_from_unchanged_pages_serves_the_next_run,
    |t: &Target| {
        let dir = tempfile::tempdir().unwrap();
        let run = |extra: &[&str]| run_from_versions(t, dir.path(), extra);
        let docs = corpus(300, 77);
        t.load(&docs);
        run(&[]);
        let text = |i: usize| docs[i]["text_t"].as_str().unwrap_or("").to_owned();
        // The first run wrote every page: the state it kept holds nothing derived.
        t.load(&[
            recrawled(&docs[5], "A page about lighthouses, re-crawled."),
            recrawled(&docs[6], &text(7)),
        ]);
        let a = run(&[]);
        assert_eq!(a["changes"]["source"], "versions", "{a}");
        assert_eq!(n(&a["changes"], "served_derived"), 0, "{a}");
        assert_settled(t, dir.path());
        // The pages the run before neither wrote nor saw change come with what it derived.
        t.load(&[
            recrawled(&docs[15], "A page about ferries, re-crawled."),
            recrawled(&docs[16], &text(17)),
            recrawled(&docs[7], "Its double is gone."),
        ]);
        let b = run(&[]);
        assert_eq!(b["changes"]["source"], "versions", "{b}");
        let (served, derived) = (
            n(&b["changes"], "served"),
            n(&b["changes"], "served_derived"),
        );
        let before = n(&a["documents"], "written");
        assert!(
            derived + before + 3 >= 300 && derived + 3 <= served,
            "{derived} of {served} served derived, {before} written before: {b}"
        );
        assert_settled(t, dir.path());
        // Deleted pages, and pages whose groups the deletions open, the same.
        t.delete(&[t.short(docs[17]["id"].as_str().unwrap())]);
        t.commit();
        let c = run(&[]);
        assert_eq!(c["changes"]["source"], "versions", "{c}");
        assert!(n(&c["changes"], "served_derived") > 200, "{c}");
        assert_settled(t, dir.path());
    }
);

solr_test!(
    a_url_double_served_from_the_state_is_looked_up_by_its_url,
    |t: &Target| {
        let dir = tempfile::tempdir().unwrap();
        let run = |extra: &[&str]| run_from_versions(t, dir.path(), extra);
        let docs = corpus(300, 79);
        t.load(&docs);
        // One page under the www. host and its double on the bare host, doubles by their URLs
        // alone (texts and titles of their own).
        t.load(&[
            json!({"id": "pair-www", "sku": "https://www.pair.example/p", "title": ["Ferries"],
                   "text_t": "Ferries leave the harbour every hour in the summer months."}),
            json!({"id": "pair-bare", "sku": "https://pair.example/p", "title": ["Lighthouses"],
                   "text_t": "The lighthouse on the point was built of granite in 1850."}),
        ]);
        t.commit();
        run(&[]);
        // A run that writes neither of them: the next one is served what it derived from both.
        t.load(&[recrawled(&docs[5], "A page about harbours, re-crawled.")]);
        run(&[]);
        let flag = |short: &str| t.docs()[short]["www_unique_b"].clone();
        let (rep, double) = if flag("pair-www") == json!(true) {
            ("pair-www", "pair-bare")
        } else {
            ("pair-bare", "pair-www")
        };
        assert_eq!(flag(double), json!(false));
        // The representative deleted: its double, served from the state with its id and URL
        // alone, now stands alone and is found by its URL, not by reading every page again.
        t.delete(&[rep]);
        t.commit();
        let after = run(&[]);
        assert_eq!(after["changes"]["source"], "versions", "{after}");
        assert!(n(&after["changes"], "served_derived") > 250, "{after}");
        assert!(n(&after["documents"], "reread") < 100, "{after}");
        assert_eq!(flag(double), json!(true));
        assert_settled(t, dir.path());
    }
);

solr_test!(
    a_page_that_becomes_a_near_double_of_a_changed_one_is_looked_up_not_read_whole,
    |t: &Target| {
        let dir = tempfile::tempdir().unwrap();
        let run = |extra: &[&str]| run_from_versions(t, dir.path(), extra);
        let docs = corpus(1000, 78);
        t.load(&docs);
        run(&[]);
        // Eighty pages re-crawled with texts of their own, one of them a near copy of a page that
        // was alone: that page leaves its place, and passes B and C must find it. The near step
        // looks up the changed pages' keys instead of reading every stored key again.
        let words = |i: usize| -> String {
            (0..60)
                .map(|w| format!("w{i}x{w}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let alone = "A page alone until now: ".to_owned() + &words(1000);
        t.load(&[json!({"id": "alone-1", "sku": "https://alone.example/a", "text_t": alone})]);
        t.commit();
        run(&[]);
        let mut again: Vec<Value> = (100..180)
            .map(|i| recrawled(&docs[i], &format!("Re-crawled page {i}: {}", words(i))))
            .collect();
        again[0] = recrawled(&docs[100], &alone.replace("w1000x59", "changed"));
        t.load(&again);
        let after = run(&[]);
        assert_eq!(after["changes"]["source"], "versions", "{after}");
        assert!(n(&after["dimensions"]["near"], "doubles") >= 1, "{after}");
        // Looked up: not the whole index again for passes B and C, nor for the near step (pass
        // A's read of the state is the only one).
        assert!(n(&after["documents"], "reread") < 1001, "{after}");
        assert!(n(&after["changes"], "served") <= 1001, "{after}");
        assert_settled(t, dir.path());

        // A change that reaches a cluster of a hundred near copies: more than the near step
        // looks up for two changed pages, so it reads every stored key from the state (and
        // passes B and C, deciding the hundred, read the state too); a page alone until now
        // becomes a near copy of the other changed page. Both end where `--full` does.
        let shop = "A shop page, the same on every one of its pages: ".to_owned() + &words(2000);
        let copies: Vec<Value> = (0..100)
            .map(|i| {
                json!({"id": format!("shop-{i}"), "sku": format!("https://shop.example/{i}"),
                            "text_t": shop.clone()})
            })
            .collect();
        let alone = "Another page alone until now: ".to_owned() + &words(3000);
        t.load(&copies);
        t.load(&[json!({"id": "alone-2", "sku": "https://alone.example/b", "text_t": alone})]);
        t.commit();
        let loaded = run(&[]);
        assert!(
            n(&loaded["dimensions"]["near"], "doubles") >= 100,
            "{loaded}"
        );
        assert_settled(t, dir.path());
        t.load(&[
            json!({"id": "shop-7", "sku": "https://shop.example/7",
                   "text_t": "A shop page re-crawled with a text of its own: ".to_owned()
                       + &words(4000)}),
            recrawled(&docs[300], &alone.replace("w3000x59", "changed")),
        ]);
        let streamed = run(&[]);
        assert_eq!(streamed["changes"]["source"], "versions", "{streamed}");
        assert!(n(&streamed["changes"], "served") > 1102, "{streamed}");
        assert!(
            n(&streamed["dimensions"]["near"], "doubles") >= 101,
            "{streamed}"
        );
        assert_settled(t, dir.path());
    }
);

/// A page re-indexed while a run goes (after the run's mark, before its first write): the run does
/// not see it, and the next run finds it from its version.
#[test]
fn a_page_reindexed_during_a_run_is_found_by_the_next() {
    let t = Target::fake("changes-during-run");
    let dir = tempfile::tempdir().unwrap();
    let run = || run_from_versions(&t, dir.path(), &[]);
    let docs = corpus(200, 72);
    t.load(&docs);
    run();
    // A change to start the next run's writes, and during them a page re-indexed with another
    // page's text.
    t.load(&[recrawled(&docs[5], "A page about lighthouses, re-crawled.")]);
    let mut during = recrawled(&docs[9], docs[11]["text_t"].as_str().unwrap_or(""));
    during["id"] = json!(t.id(docs[9]["id"].as_str().unwrap()));
    during["test_s"] = json!(t.tag);
    t.fake_solr().fault(FaultRule {
        path: "/update".into(),
        skip: 1,
        times: 1,
        fault: Fault::Hook(Box::new(move |core| {
            core.add(during).expect("the fake takes the page");
            core.commit();
        })),
    });
    let second = run();
    assert_eq!(second["changes"]["source"], "versions", "{second}");
    let third = run();
    assert_eq!(third["changes"]["source"], "versions", "{third}");
    assert!(n(&third["changes"], "reindexed") >= 1, "{third}");
    assert_settled(&t, dir.path());
}

/// The state is a cache: a wrong one (here, a state of another index put in its place) is found
/// out and the run reads everything, saying why.
#[test]
fn a_state_that_does_not_match_the_index_is_not_trusted() {
    let t = Target::fake("changes-mismatch");
    let dir = tempfile::tempdir().unwrap();
    let run = || run_from_versions(&t, dir.path(), &[]);
    let docs = corpus(150, 73);
    t.load(&docs);
    run();
    // The state's count three short: the index holds documents the state cannot account for, as
    // after a restore from a backup.
    miscount_state(dir.path(), 3);
    let next = run();
    assert_eq!(next["changes"]["source"], "full scan", "{next}");
    assert!(
        next["changes"]["reason"]
            .as_str()
            .unwrap()
            .contains("restored, rolled back or replaced"),
        "{next}"
    );
    assert_settled(&t, dir.path());
}

/// What happens to the core between two runs, in the property test below.
#[derive(Debug, Clone)]
enum Op {
    /// A page re-indexed with another page's text (a new double) or a text of its own.
    Reindex(usize, bool),
    /// A page deleted.
    Delete(usize),
    /// A page deleted and added again under the same id, with another page's text.
    DeleteReadd(usize),
    /// A new page with another page's text.
    Add(usize),
    /// The state's count made wrong, as a restored index shows.
    Restore,
}

fn op() -> impl proptest::strategy::Strategy<Value = Op> {
    use proptest::prelude::*;
    prop_oneof![
        (0..80usize, any::<bool>()).prop_map(|(i, b)| Op::Reindex(i, b)),
        (0..80usize).prop_map(Op::Delete),
        (0..80usize).prop_map(Op::DeleteReadd),
        (0..80usize).prop_map(Op::Add),
        Just(Op::Restore),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 12,
        max_shrink_iters: 0,
        failure_persistence: None,
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// Any sequence of changes between runs ends where `--full` does, with the changes found from
    /// versions where the state allows (all but a restore).
    #[test]
    fn any_sequence_of_changes_ends_where_full_does(ops in proptest::collection::vec(op(), 1..6)) {
        let t = Target::fake("changes-property");
        let dir = tempfile::tempdir().unwrap();
        let run = || run_from_versions(&t, dir.path(), &[]);
        let docs = corpus(80, 74);
        t.load(&docs);
        run();
        let text = |i: usize| docs[i]["text_t"].as_str().unwrap_or("").to_owned();
        let short = |i: usize| docs[i]["id"].as_str().unwrap().to_owned();
        for (step, op) in ops.iter().enumerate() {
            let mut from_versions = true;
            match op {
                Op::Reindex(i, double) => {
                    let body = if *double { text((i + 1) % 80) } else { format!("Step {step}: owls.") };
                    t.load(&[recrawled(&docs[*i], &body)]);
                }
                Op::Delete(i) => {
                    t.delete(&[&short(*i)]);
                    t.commit();
                }
                Op::DeleteReadd(i) => {
                    t.delete(&[&short(*i)]);
                    t.commit();
                    t.load(&[recrawled(&docs[*i], &text((i + 2) % 80))]);
                }
                Op::Add(i) => {
                    t.load(&[json!({"id": format!("new-{step}"), "sku": format!("https://new.example/{step}"),
                                    "text_t": text(*i)})]);
                }
                Op::Restore => {
                    miscount_state(dir.path(), 1);
                    from_versions = false;
                }
            }
            let report = run();
            let source = report["changes"]["source"].as_str().unwrap().to_owned();
            if from_versions {
                // `settled` when the step changed nothing (a page deleted twice).
                proptest::prop_assert_ne!(source, "full scan", "{:?}: {}", op, report);
            } else {
                proptest::prop_assert_eq!(source, "full scan", "{:?}: {}", op, report);
            }
            assert_settled(&t, dir.path());
        }
    }
}

/// With the default window (10 s of versions), a rerun right after a run reads the versions of the
/// pages written within it again, finds them as the state has them, and is settled.
#[test]
fn with_the_default_window_a_rerun_reads_the_recent_versions_and_is_settled() {
    let t = Target::fake("changes-window");
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let state_arg = state.to_str().unwrap().to_owned();
    t.load(&corpus(120, 75));
    let first = t.run_ok(&["run", "--state-dir", &state_arg], dir.path());
    let written = n(&first["documents"], "written");
    assert_eq!(written, 120, "{first}");
    let again = t.run_ok(&["run", "--state-dir", &state_arg], dir.path());
    assert_eq!(again["changes"]["source"], "settled", "{again}");
    // Every page was written within the last 10 s: its version is read again, and matches.
    assert_eq!(n(&again["changes"], "versions_read"), 120, "{again}");
    assert_eq!(
        n(&again["work"], "text_docs") + n(&again["work"], "written_docs"),
        0
    );
}

/// `solr-dedup run EXTRA…` on the whole index (no `--filter`, unlike the harness's runs: the test's
/// fake holds nothing else) with the change state in `DIR/state`, to the end; its report.
fn run_unfiltered(t: &Target, dir: &Path, extra: &[&str]) -> Value {
    let state = dir.join("state");
    let mut args = vec!["run", "--state-dir", state.to_str().unwrap()];
    args.extend_from_slice(extra);
    t.run_ok_unfiltered(&args, dir)
}

/// The path of the change state's `meta.json` in `DIR/state`.
fn state_meta_path(dir: &Path) -> std::path::PathBuf {
    std::fs::read_dir(dir.join("state").join("changes"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("meta.json")
}

/// The change state's `meta.json` in `DIR/state`.
fn state_meta(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(state_meta_path(dir)).unwrap()).unwrap()
}

/// Without a filter a run's change state is the whole index: after a run that wrote, the mark moves
/// past its writes by Solr's index fingerprint (one request, none of the written versions read
/// again), and the runs after it still find a re-indexed page and a deleted one and end where
/// `--full` does. On the fake alone: the real core is shared by the tests, each under a filter of
/// its own (Solr's answer, recorded from 9.10.1, is what the fake gives: `fake_solr/search.rs`).
#[test]
fn the_mark_moves_by_the_index_fingerprint_when_the_state_is_the_whole_index() {
    let t = Target::fake("fingerprint");
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["--change-window", "0"];
        args.extend_from_slice(extra);
        run_unfiltered(&t, dir.path(), &args)
    };
    let docs = corpus(200, 5);
    t.load(&docs);
    let first = run(&[]);
    assert!(n(&first["documents"], "written") > 0, "{first}");
    assert_eq!(first["changes"]["fingerprint"], true, "{first}");
    assert_eq!(n(&first["changes"], "versions_verified"), 0, "{first}");

    let settled = run(&[]);
    assert_eq!(settled["changes"]["source"], "settled", "{settled}");
    assert!(light(&settled) <= 3, "{settled}");

    let short = |d: &Value| t.short(d["id"].as_str().unwrap()).to_owned();
    t.load(&[recrawled(
        &docs[3],
        "A new text about herons and their nests.",
    )]);
    t.delete(&[&short(&docs[7])]);
    t.commit();
    let after = run(&[]);
    let c = &after["changes"];
    assert_eq!(c["source"], "versions", "{after}");
    assert_eq!((n(c, "reindexed"), n(c, "deleted")), (1, 1), "{after}");
    assert_eq!(c["fingerprint"], true, "{after}");
    let full = run(&["--full", "--dry-run"]);
    assert_eq!(n(&full["documents"], "written"), 0, "{full}");
    let again = run(&[]);
    assert_eq!(again["changes"]["source"], "settled", "{again}");
}

/// Without a filter, a run asks Solr's index fingerprint up to the state's mark beside its read of
/// the versions above it: when it is the state's, the change window below the mark (where the last
/// run's own writes are) is not read. Changes below the mark that the state has not seen (here made
/// on the fake by giving a page a version from before the mark, as when Solr took it from its clock
/// before the mark and applied the update after the state was kept) make the fingerprint differ:
/// a new page, a re-indexed one (as many versions as before, not the same ones), and a new page
/// beside a deleted one (the totals cancel out); the window is read and finds each.
#[test]
fn a_fingerprint_up_to_the_mark_spares_the_window_and_late_changes_are_found() {
    let t = Target::fake("fingerprint-window");
    let dir = tempfile::tempdir().unwrap();
    // The default change window (10 s of versions): every page the first run wrote is in it.
    let run = |extra: &[&str]| run_unfiltered(&t, dir.path(), extra);
    let docs = corpus(150, 6);
    t.load(&docs);
    let first = run(&[]);
    assert_eq!(n(&first["documents"], "written"), 150, "{first}");

    let settled = run(&[]);
    let c = &settled["changes"];
    assert_eq!(c["source"], "settled", "{settled}");
    assert_eq!(c["unchanged_below_mark"], true, "{settled}");
    assert_eq!(n(c, "versions_read"), 0, "{settled}");
    assert!(light(&settled) <= 3, "{settled}");

    // A version just below the state's mark that no page holds, and a page given it, as when Solr
    // took the version from its clock before the mark and applied the update after the state was
    // kept.
    let below_mark = || {
        let mark = state_meta(dir.path())["mark"].as_i64().unwrap();
        let used: std::collections::HashSet<i64> = t
            .fake_solr()
            .docs()
            .iter()
            .filter_map(|d| d["_version_"].as_i64())
            .collect();
        (1..).map(|k| mark - k).find(|v| !used.contains(v)).unwrap()
    };
    let backdate = |short: &str, version: i64| {
        let id = t.id(short);
        assert!(t.fake_solr().with_core(|core| core.backdate(&id, version)));
    };
    let settles = |after: &Value| {
        let full = run(&["--full", "--dry-run"]);
        assert_eq!(n(&full["documents"], "written"), 0, "{after}\n{full}");
        let again = run(&[]);
        assert_eq!(again["changes"]["source"], "settled", "{again}");
        assert_eq!(again["changes"]["unchanged_below_mark"], true, "{again}");
    };
    let short = |i: usize| docs[i]["id"].as_str().unwrap().to_owned();

    // A new page applied late.
    let version = below_mark();
    t.load(&[json!({"id": "late-1", "sku": "https://late.example/1",
                    "text_t": docs[4]["text_t"].clone()})]);
    backdate("late-1", version);
    let after = run(&[]);
    let c = &after["changes"];
    assert_eq!(c["source"], "versions", "{after}");
    assert_eq!(c.get("unchanged_below_mark"), None, "{after}");
    assert_eq!(n(c, "new"), 1, "{after}");
    settles(&after);

    // A page re-indexed late: as many versions at or below the mark as the state holds, but not
    // the same ones (the fingerprint's hash tells, not its count).
    let version = below_mark();
    t.load(&[recrawled(&docs[9], "A new text about kites and the wind.")]);
    backdate(&short(9), version);
    let after = run(&[]);
    let c = &after["changes"];
    assert_eq!(c["source"], "versions", "{after}");
    assert_eq!((n(c, "new"), n(c, "reindexed")), (0, 1), "{after}");
    settles(&after);

    // A page added late and another deleted: the totals cancel out.
    let version = below_mark();
    t.load(&[json!({"id": "late-2", "sku": "https://late.example/2",
                    "text_t": docs[6]["text_t"].clone()})]);
    backdate("late-2", version);
    t.delete(&[&short(11)]);
    t.commit();
    let after = run(&[]);
    let c = &after["changes"];
    assert_eq!(c["source"], "versions", "{after}");
    assert_eq!((n(c, "new"), n(c, "deleted")), (1, 1), "{after}");
    settles(&after);
}

/// A run that only refreshes the counts of a group that stays a group leaves those pages out of the
/// delta it keeps for serve's prediction index (which reads a count only as "has a double"); the
/// re-indexed pages, and a page whose flag changed or whose group stopped being one, are in it.
#[test]
fn the_delta_leaves_out_count_refreshes_of_a_group_that_stays_one() {
    let t = Target::fake("delta-counts");
    let dir = tempfile::tempdir().unwrap();
    let run = || run_from_versions(&t, dir.path(), &[]);
    let page = |id: String, text: &str| json!({"id": id.clone(), "sku": format!("https://{id}.example/"), "text_t": text});
    let mut docs: Vec<Value> = (0..5)
        .map(|i| {
            page(
                format!("heron{i}"),
                "The same page about herons, word for word.",
            )
        })
        .collect();
    docs.extend((0..2).map(|i| page(format!("owl{i}"), "Two pages about owls that agree.")));
    docs.extend(corpus(20, 9));
    t.load(&docs);
    run();
    let before = t.docs();
    // A heron leaves its group of five (the four others' counts go to four); an owl leaves its
    // pair (the other owl's group stops being one).
    t.load(&[
        recrawled(&docs[4], "A page of its own about herons."),
        recrawled(&docs[6], "A page of its own about owls."),
    ]);
    let report = run();
    assert_eq!(report["changes"]["source"], "versions", "{report}");
    assert_eq!(n(&report["changes"], "reindexed"), 2, "{report}");
    let after = t.docs();

    let meta = state_meta(dir.path());
    let file = meta["delta"]["file"].as_str().expect("a delta").to_owned();
    let delta = std::fs::read_to_string(state_meta_path(dir.path()).with_file_name(file)).unwrap();
    let in_delta: std::collections::BTreeSet<String> = delta
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter_map(|e| {
            e.get("new")
                .map(|d| t.short(d["id"].as_str().unwrap()).to_owned())
        })
        .collect();
    let flag = |d: &serde_json::Map<String, Value>| d.get("exact_signature_unique_b").cloned();
    let count = |d: &serde_json::Map<String, Value>| {
        d.get("exact_signature_copycount_i")
            .and_then(Value::as_i64)
            .unwrap_or(1)
    };
    // (`t.docs()` and the short ids name pages alike.)
    let recrawled_ids = ["heron4", "owl1"];
    let mut count_only = 0;
    for (id, now) in &after {
        let was = &before[id];
        let seen = recrawled_ids.contains(&id.as_str())
            || flag(was) != flag(now)
            || (count(was) > 1) != (count(now) > 1);
        assert_eq!(in_delta.contains(id), seen, "{id}: {was:?} -> {now:?}");
        count_only += usize::from(!seen && count(was) != count(now));
    }
    assert!(count_only >= 3, "{count_only} pages with only a new count");
    assert!(in_delta.contains("owl0"), "{in_delta:?}");
}

/// One record of a change state's documents file: its head (length, id hash, version), its derived
/// part (empty when it has none), and each field's name with its entry's bytes, in the file's order.
struct Record {
    head: Vec<u8>,
    derived: Vec<u8>,
    fields: Vec<(String, Vec<u8>)>,
}

/// The records of the change state in `DIR/state`, read as `src/store/changes/state.rs` writes its
/// format down: `[u32 length][u64 id hash][i64 version][body]`, the body maybe led by a derived part
/// (`[254][u16 length][bytes]`), then per field its place in the state's fields (or `[255][u16
/// length][name]`) and its value (`src/store/codec.rs`: a tag, then nothing, 8 bytes, a `u32`
/// length and bytes, or a `u32` count and 8 bytes each).
fn state_records(dir: &Path) -> (std::path::PathBuf, Vec<Record>) {
    let meta = state_meta(dir);
    let names: Vec<String> = serde_json::from_value(meta["fields"].clone()).unwrap();
    let file = state_meta_path(dir).with_file_name(meta["docs"].as_str().unwrap());
    let bytes = std::fs::read(&file).unwrap();
    let u16_at = |b: &[u8], i: usize| u16::from_le_bytes([b[i], b[i + 1]]) as usize;
    let u32_at = |b: &[u8], i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap()) as usize;
    let (mut at, mut records) = (0, Vec::new());
    while at < bytes.len() {
        let body = &bytes[at + 20..at + 20 + u32_at(&bytes, at)];
        let derived = match body {
            [254, ..] => 3 + u16_at(body, 1),
            _ => 0,
        };
        let (mut i, mut fields) = (derived, Vec::new());
        while i < body.len() {
            let start = i;
            let name = match body[i] {
                255 => {
                    let n = u16_at(body, i + 1);
                    i += 3 + n;
                    String::from_utf8(body[i - n..i].to_vec()).unwrap()
                }
                place => {
                    i += 1;
                    names[place as usize].clone()
                }
            };
            i += 1 + match body[i] {
                3 => 8,
                4 | 6 => 4 + u32_at(body, i + 1),
                5 => 4 + 8 * u32_at(body, i + 1),
                _ => 0,
            };
            fields.push((name, body[start..i].to_vec()));
        }
        records.push(Record {
            head: bytes[at..at + 20].to_vec(),
            derived: body[..derived].to_vec(),
            fields,
        });
        at += 20 + body.len();
    }
    (file, records)
}

/// Every record of the change state begins with its page's id, then its URL: each pass over the
/// state finds the two at once instead of after the fields before them by name. A state an older
/// release kept (its fields in the order of their names) is put so by the next run that merges it,
/// derived parts and all.
#[test]
fn the_state_keeps_each_pages_id_and_url_first() {
    let t = Target::fake("changes-led");
    let dir = tempfile::tempdir().unwrap();
    let docs = corpus(60, 31);
    t.load(&docs);
    let urls = docs.iter().filter(|d| d["sku"].is_string()).count();
    assert!(
        urls > docs.len() / 2 && urls < docs.len(),
        "{urls} pages with a URL"
    );
    let in_order = |records: &[Record]| {
        for (i, r) in records.iter().enumerate() {
            let names: Vec<&str> = r.fields.iter().map(|f| f.0.as_str()).collect();
            assert_eq!(names[0], "id", "record {i}: {names:?}");
            if names.contains(&"sku") {
                assert_eq!(names[1], "sku", "record {i}: {names:?}");
            }
        }
        let with_url = records
            .iter()
            .filter(|r| r.fields.iter().any(|f| f.0 == "sku"))
            .count();
        assert_eq!((records.len(), with_url), (docs.len(), urls));
    };
    // Decided without a state, then a state kept of the settled index: no page written, so every
    // record the merge keeps is one the light read captured (its fields in the order of their
    // names), copied.
    t.run_ok(&["run"], dir.path());
    let settled = run_from_versions(&t, dir.path(), &[]);
    assert_eq!(n(&settled["documents"], "written"), 0, "{settled}");
    let (_, records) = state_records(dir.path());
    in_order(&records);
    // In the order of their names neither would be first.
    let names = state_meta(dir.path())["fields"].clone();
    let place = |name: &str| names.as_array().unwrap().iter().position(|f| f == name);
    assert!(
        place("id") > Some(0) && place("sku") > place("id").map(|p| p + 1),
        "{names}"
    );

    // A page re-crawled with a text of its own, and a run from versions: the state it keeps, in
    // order, and how many of its records hold a derived part.
    let recrawl = |page: &Value, text: &str| {
        t.load(&[recrawled(page, text)]);
        let report = run_from_versions(&t, dir.path(), &[]);
        assert_eq!(report["changes"]["source"], "versions", "{report}");
        assert_eq!(n(&report["changes"], "reindexed"), 1, "{report}");
        let (file, records) = state_records(dir.path());
        in_order(&records);
        let derived = records.iter().filter(|r| !r.derived.is_empty()).count();
        (file, records, derived)
    };
    let (file, records, derived) = recrawl(&docs[3], "A page of its own about herons.");
    assert!(
        derived > docs.len() / 2,
        "{derived} records with a derived part"
    );

    // As an older release kept it: each record's fields in the order of their names.
    let mut old = Vec::new();
    for r in &records {
        let mut fields = r.fields.clone();
        fields.sort();
        old.extend(&r.head);
        old.extend(&r.derived);
        old.extend(fields.iter().flat_map(|f| f.1.iter()));
    }
    std::fs::write(&file, old).unwrap();
    assert_eq!(state_records(dir.path()).1[0].fields[0].0, "_version_");
    let (_, _, kept) = recrawl(&docs[5], "Another page of its own, about owls.");
    assert!(
        kept + 2 >= derived,
        "{kept} records with a derived part, {derived} before"
    );
}

/// The next state is merged while Solr commits the run's writes (`changes.merge_ms`). When the
/// commit fails, the run fails, keeps no state and leaves none of the files it merged; the next run
/// reads everything and ends where `--full` does.
#[test]
fn a_state_merged_beside_a_commit_that_fails_is_not_kept() {
    let t = Target::fake("changes-commit-fails");
    let dir = tempfile::tempdir().unwrap();
    let docs = corpus(150, 74);
    t.load(&docs);
    let first = run_from_versions(&t, dir.path(), &[]);
    assert!(first["changes"]["merge_ms"].is_u64(), "{first}");
    // The state's files: its documents, ids and delta.
    let files = || {
        let folder = state_meta_path(dir.path()).parent().unwrap().to_owned();
        let mut names: Vec<String> = std::fs::read_dir(folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "meta.json")
            .collect();
        names.sort();
        names
    };
    let kept = files();
    assert!(kept.iter().any(|n| n.starts_with("docs-")), "{kept:?}");

    t.load(&[recrawled(&docs[5], "A page about lighthouses, re-crawled.")]);
    // The run's writes land; its commit fails.
    t.fake_solr().fault(FaultRule {
        path: "/update?commit=true".into(),
        skip: 0,
        times: 1,
        fault: Fault::Status(500),
    });
    let state = dir.path().join("state");
    let report = dir.path().join("failed.json");
    let out = t.run(&from_versions(
        &state,
        &["--retries", "0", "--report", report.to_str().unwrap()],
    ));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("commit"), "{err}");
    // It merged beside the commit, so there were files to remove.
    let failed: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert!(failed["changes"]["merge_ms"].is_u64(), "{failed}");
    assert!(!state_meta_path(dir.path()).exists(), "{err}");
    assert_eq!(files(), kept, "the merged files are left behind");

    let after = run_from_versions(&t, dir.path(), &[]);
    assert_eq!(after["changes"]["source"], "full scan", "{after}");
    assert_settled(&t, dir.path());
}
