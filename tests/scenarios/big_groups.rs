//! A change costs the same in a group of ten and a group of ten thousand (issue 46): a group of
//! 1,000 members (one text, one title, one description) gains, loses and re-indexes members and
//! loses its representative; what each run reads of Solr stays bounded by the pages that changed,
//! not the group's size, and every run ends where `--full` does (`assert_settled`).

use std::path::Path;

use serde_json::{json, Value};

use super::harness::{assert_settled, corpus, n, shop_member, solr_test, Target};

/// Members of the big group.
const MEMBERS: usize = 1_000;

/// Documents Solr handed out in a run to decide it: with text, light (versions, pages) and looked
/// up; not the versions read at the end to move the mark past the run's own writes, which grow
/// with the documents written (asserted apart).
fn reads(report: &Value) -> u64 {
    let w = &report["work"];
    n(w, "text_docs")
        + n(w, "sample_docs")
        + n(w, "light_export_docs")
        + n(w, "light_cursor_docs")
        + n(w, "lookup_docs")
        - report["changes"]["versions_verified"].as_u64().unwrap_or(0)
}

/// `solr-dedup run` with the change state in `DIR/state` and no window.
fn run(t: &Target, dir: &Path) -> Value {
    let state = dir.join("state");
    t.run_ok(
        &[
            "run",
            "--state-dir",
            state.to_str().unwrap(),
            "--change-window",
            "0",
        ],
        dir,
    )
}

/// The short id of the big group's representative in the exact dimension.
fn representative(t: &Target) -> String {
    let docs = t.docs();
    let reps: Vec<&String> = docs
        .iter()
        .filter(|(id, d)| {
            id.starts_with("member-") && d.get("exact_signature_unique_b") == Some(&json!(true))
        })
        .map(|(id, _)| id)
        .collect();
    assert_eq!(reps.len(), 1, "one representative: {reps:?}");
    reps[0].clone()
}

solr_test!(
    a_change_in_a_group_of_a_thousand_reads_what_changed,
    |t: &Target| {
        let dir = tempfile::tempdir().unwrap();
        let mut docs: Vec<Value> = (0..MEMBERS).map(shop_member).collect();
        docs.extend(corpus(100, 76));
        t.load(&docs);
        let first = run(t, dir.path());
        assert!(reads(&first) >= MEMBERS as u64, "{first}");
        eprintln!("first: {}", first["changes"]);
        assert_settled(t, dir.path());
        // Bound on Solr's reads for a run after `changed` pages changed: each changed page read
        // light and with its text a few times, the scheme guard's sample (64), the near step's
        // lookups up to where it reads the state instead (65 a page, two at most), the mark;
        // never the group.
        let bounded = |report: &Value, changed: u64, what: &str| {
            let r = reads(report);
            eprintln!("{what}: {r} documents read, work {}", report["work"]);
            let verified = n(&report["changes"], "versions_verified");
            let written = n(&report["documents"], "written");
            assert!(verified <= written + changed + 8, "{what}: {report}");
            assert!(
                r <= 4 * changed + 200,
                "{what}: {r} documents read for {changed} changed pages in a group of {MEMBERS}: {report}"
            );
        };

        // Gains two members: every member's count changes (written), nothing is read whole.
        t.load(&[shop_member(MEMBERS), shop_member(MEMBERS + 1)]);
        let gained = run(t, dir.path());
        bounded(&gained, 2, "gained");
        assert_eq!(n(&gained["work"], "text_docs"), 2, "{gained}");
        assert_settled(t, dir.path());

        // Loses two members (not the representative).
        let rep = representative(t);
        let losing: Vec<String> = (10..12)
            .map(|i| format!("member-{i:05}"))
            .filter(|id| *id != rep)
            .collect();
        t.delete(&losing.iter().map(String::as_str).collect::<Vec<_>>());
        t.commit();
        let lost = run(t, dir.path());
        bounded(&lost, 2, "lost");
        assert_settled(t, dir.path());

        // Two members re-indexed as they were (a crawler's re-fetch: the worker's fields gone).
        t.load(&[shop_member(20), shop_member(21)]);
        let reindexed = run(t, dir.path());
        bounded(&reindexed, 2, "re-indexed");
        assert_eq!(n(&reindexed["work"], "text_docs"), 2, "{reindexed}");
        // Only the two re-indexed pages need writing: the group's counts did not change.
        assert!(n(&reindexed["documents"], "written") <= 2, "{reindexed}");
        assert_settled(t, dir.path());

        // Loses its representative: the best remaining member takes over.
        let rep = representative(t);
        t.delete(&[&rep]);
        t.commit();
        let headless = run(t, dir.path());
        bounded(&headless, 1, "lost its representative");
        let next = representative(t);
        assert_ne!(next, rep);
        assert_settled(t, dir.path());
    }
);

/// Triples of pages sharing a text, each with its own title, description and URL.
fn triple_member(t: usize, k: usize) -> Value {
    let text: Vec<String> = (0..40).map(|w| format!("tri{t}word{w}")).collect();
    json!({
        "id": format!("triple-{t:03}-{k}"),
        "sku": format!("https://triples.example/{t}/{k}"),
        "title": [format!("Triple {t} page {k}")],
        "description_txt": [format!("The description of page {k} of triple {t}.")],
        "text_t": text.join(" "),
    })
}

solr_test!(
    deletions_across_many_groups_are_looked_up_not_read_whole,
    |t: &Target| {
        // Pages deleted from many small groups open more documents than the copy's floor (64),
        // but no more than two per deleted page: those are looked up in Solr, and the change
        // state is read once (pass A), not again by passes B and C and the near step.
        const TRIPLES: usize = 45;
        let dir = tempfile::tempdir().unwrap();
        let mut docs: Vec<Value> = (0..TRIPLES)
            .flat_map(|i| (0..3).map(move |k| triple_member(i, k)))
            .collect();
        docs.extend(corpus(400, 7));
        t.load(&docs);
        run(t, dir.path());
        assert_settled(t, dir.path());
        let before = t.docs().len() as u64;
        let gone: Vec<String> = (0..TRIPLES).map(|i| format!("triple-{i:03}-1")).collect();
        t.delete(&gone.iter().map(String::as_str).collect::<Vec<_>>());
        t.commit();
        let report = run(t, dir.path());
        eprintln!("deleted: {} {}", report["changes"], report["work"]);
        let changes = &report["changes"];
        assert_eq!(changes["source"], "versions", "{report}");
        assert_eq!(n(changes, "deleted"), TRIPLES as u64, "{report}");
        // Decided: the two members left in each triple.
        assert_eq!(
            n(&report["documents"], "decided"),
            2 * TRIPLES as u64,
            "{report}"
        );
        // One pass over the state (pass A); the rest looked up.
        let left = before - TRIPLES as u64;
        assert_eq!(n(changes, "served"), left, "{report}");
        // Pass B looks up the 90 members once (pass C writes from what it read), the near step
        // by id and again by their keys.
        let looked = n(&report["work"], "lookup_docs");
        assert!(
            looked > 0 && looked <= 6 * TRIPLES as u64,
            "{looked} looked up for {TRIPLES} deleted pages: {report}"
        );
        assert_settled(t, dir.path());
    }
);
