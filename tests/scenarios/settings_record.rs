//! The settings a core was decided under travel with it (a user property of its configuration):
//! the first run records its own; a run with other deciding settings stops with exit 2 naming each difference and writes nothing,
//! until `--reconfigure` decides the core under the new ones and records them (issue 42).

use super::harness::{corpus, solr_test, Target};
use crate::support::fake_solr::{Fault, FaultRule};

solr_test!(
    a_run_under_other_settings_stops_until_reconfigured,
    |t: &Target| {
        let dir = tempfile::tempdir().unwrap();
        let docs = corpus(120, 71);
        t.load(&docs);
        // No record yet: a check records nothing, the first run records its settings.
        assert_eq!(
            t.run(&["check"]).status.code(),
            Some(1),
            "a check finds work"
        );
        t.run_ok(&["run", "--prefer", "yacy", "--dry-run"], dir.path());
        t.run_ok(&["run"], dir.path());
        // --reconfigure under the same settings: nothing to record, nothing left to write.
        let r = t.run_ok(&["run", "--reconfigure"], dir.path());
        assert_eq!(r["documents"]["written"], 0, "{r}");
        // Another order: exit 2 before anything is written, naming the difference.
        let before = t.versions_of(&docs);
        let out = t.run(&["run", "--prefer", "yacy"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(err.contains("--prefer yacy (recorded: canonical)"), "{err}");
        assert!(err.contains("--reconfigure"), "{err}");
        assert_eq!(t.versions_of(&docs), before, "nothing written");
        // A check previews them: it says so and goes on.
        let out = t.run(&["check", "--prefer", "yacy"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("decided under other settings"), "{err}");
        // With the switch the run decides under them, and the record follows.
        t.run_ok(&["run", "--prefer", "yacy", "--reconfigure"], dir.path());
        let out = t.run(&["run"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("--prefer canonical (recorded: yacy)"), "{err}");
        let r = t.run_ok(&["run", "--prefer", "yacy"], dir.path());
        assert_eq!(r["documents"]["written"], 0, "{r}");
        // serve under other settings does not start: every run it started would stop.
        let out = t
            .command(&["serve", "--listen", "127.0.0.1:0"])
            .arg("--state-dir")
            .arg(dir.path().join("serve-state"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("--prefer canonical (recorded: yacy)"), "{err}");
        // --reconfigure writes: a dry run with it is refused.
        let out = t.run(&["run", "--dry-run", "--reconfigure"]);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
    }
);

/// A Solr that refuses the Config API's write (a user without `config-edit`): the first run goes on
/// with one warning, leaves no record, and so holds no later run. (A refusal on demand: the fake.)
#[test]
fn a_core_that_refuses_the_record_is_run_unheld_with_a_warning() {
    let t = Target::fake("record-refused");
    let dir = tempfile::tempdir().unwrap();
    let docs = corpus(80, 72);
    t.load(&docs);
    let refused = t.fake_solr().fault(FaultRule {
        path: "POST /config".into(),
        skip: 0,
        times: usize::MAX,
        fault: Fault::Status(403),
    });
    let out = t.command(&["run"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(refused.hits() >= 1, "the run tried to record its settings");
    assert!(
        err.lines()
            .any(|l| l.contains("are not recorded with the core") && l.contains("config-edit")),
        "{err}"
    );
    // Nothing recorded: another order is not held back, and decides the core under it.
    let r = t.run_ok(&["run", "--prefer", "yacy"], dir.path());
    assert_eq!(r["outcome"], "succeeded", "{r}");
}

/// serve whose runs write nothing (`--dry-run`) records nothing at its start: a later run under other
/// settings is not held by it.
#[test]
fn serve_in_dry_run_records_no_settings() {
    let t = Target::fake("record-serve-dry");
    let dir = tempfile::tempdir().unwrap();
    t.load(&corpus(40, 73));
    let mut cmd = t.command(&["serve", "--dry-run"]);
    cmd.arg("--state-dir").arg(dir.path().join("state"));
    let server = crate::support::serve::Served::spawn(cmd);
    drop(server);
    let r = t.run_ok(&["run", "--prefer", "yacy"], dir.path());
    assert_eq!(r["outcome"], "succeeded", "{r}");
}
