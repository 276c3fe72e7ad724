//! Answers that do not come back: an update Solr applied whose answer is not Solr's (a proxy's page)
//! is sent again, as a 5xx is; when no answer comes back for good, the run ends with exit 3 and its
//! report gives what landed as a range, acknowledged to acknowledged plus unanswered, that holds
//! what the core has. (Faults on demand: the fake only.)

use serde_json::Value;

use super::harness::{assert_settled, corpus, Target};
use crate::support::fake_solr::{Fault, FaultRule};

#[test]
fn a_malformed_answer_to_an_update_is_sent_again() {
    let t = Target::fake("garbled-once");
    let dir = tempfile::tempdir().unwrap();
    t.load(&corpus(100, 33));
    // The first update lands, and its answer is a proxy's page (the run's first /update is the
    // soft commit before it takes its mark).
    let fault = t.fake_solr().fault(FaultRule {
        path: "/update".into(),
        skip: 1,
        times: 1,
        fault: Fault::GarbledAfterApply,
    });
    let report = t.run_ok(&["run", "--batch-size", "30"], dir.path());
    assert_eq!(fault.hits(), 1);
    assert_eq!(report["outcome"], "succeeded", "{report}");
    // Sent again, the landed batch's documents are conflicts (their versions moved), read again in
    // the next round: nothing written twice, nothing lost.
    assert!(
        report["documents"]["conflicts"].as_u64().unwrap() > 0,
        "{report}"
    );
    let checked = assert_settled(&t, dir.path());
    eprintln!("checked {checked} values after a garbled answer");
}

#[test]
fn updates_answered_with_a_proxys_page_are_a_range_that_holds_what_landed() {
    // Every later update lands and comes back as a proxy's page.
    lost_for_good("garbled-for-good", Fault::GarbledAfterApply, "not JSON");
}

#[test]
fn updates_whose_connection_drops_are_a_range_that_holds_what_landed() {
    // Every later update lands and its connection is closed before the answer.
    lost_for_good(
        "dropped-for-good",
        Fault::DropAfterApply,
        "could not be reached",
    );
}

/// The first update is answered, every later one lands and its answer is lost (`fault`): the run
/// ends with exit 3 and one line (saying `says`), its report's range holds what the core has, and
/// the next run converges.
fn lost_for_good(name: &str, fault: Fault, says: &str) {
    let t = Target::fake(name);
    let dir = tempfile::tempdir().unwrap();
    let docs = corpus(100, 34);
    t.load(&docs);
    let before = t.versions_of(&docs);
    t.fake_solr().fault(FaultRule {
        path: "/update".into(),
        skip: 1,
        times: usize::MAX,
        fault,
    });
    let path = dir.path().join("report.json");
    let out = t.run(&[
        "run",
        "--batch-size",
        "30",
        "--retries",
        "1",
        "--report",
        path.to_str().unwrap(),
        "--quiet",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.contains(says), "{err}");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(r["outcome"], "failed", "{r}");
    let written = r["documents"]["written"].as_u64().unwrap();
    let unanswered = r["documents"]["unanswered"].as_u64().expect("a count");
    assert!(unanswered > 0, "{r}");
    let after = t.versions_of(&docs);
    let landed = before
        .iter()
        .filter(|(id, v)| after.get(*id) != Some(v))
        .count() as u64;
    assert!(
        written <= landed && landed <= written + unanswered,
        "acknowledged {written}, unanswered {unanswered}, landed {landed}"
    );
    // The next run converges.
    t.fake_solr().clear_faults();
    t.run_ok(&["run"], dir.path());
    let checked = assert_settled(&t, dir.path());
    eprintln!(
        "checked {checked} values; landed {landed} of {written}..{}",
        written + unanswered
    );
}
