//! SIGTERM against Solr, as systemd stops a service: the run stops between batches, says so in one
//! line, exits 143, and its report says `interrupted` with what Solr acknowledged; the next run
//! converges.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::harness::{assert_settled, corpus, solr_test, Backend, Target};
use crate::support::fake_solr::{Fault, FaultRule};

/// The report file's outcome, when it holds a JSON object.
fn outcome(path: &std::path::Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    v["outcome"].as_str().map(str::to_owned)
}

solr_test!(
    sigterm_stops_a_run_between_batches_with_what_landed,
    |t: &Target| {
        let dir = tempfile::tempdir().unwrap();
        let fake = matches!(t.backend, Backend::Fake(_));
        // Against the fake the second update is held long enough for the signal to come while it
        // is in flight; a real core gets enough documents that the run is still going when the
        // signal comes (it is sent as soon as the report says the run started).
        let docs = corpus(if fake { 160 } else { 1500 }, 47);
        t.load(&docs);
        let held = fake.then(|| {
            t.fake_solr().fault(FaultRule {
                path: "/update".into(),
                skip: 1,
                times: 1,
                fault: Fault::Delay(Duration::from_secs(2)),
            })
        });
        let report = dir.path().join("report.json");
        // The previous run's report: it must not survive a run that started.
        std::fs::write(&report, "{\"outcome\": \"succeeded\"}\n").unwrap();
        let child = t
            .command(&[
                "run",
                "--batch-size",
                "40",
                "--quiet",
                "--report",
                report.to_str().unwrap(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        match &held {
            Some(h) => assert!(
                h.wait_hit(Duration::from_secs(60)),
                "the run never reached its second update"
            ),
            None => {
                let start = Instant::now();
                while outcome(&report).as_deref() != Some("running") {
                    assert!(
                        start.elapsed() < Duration::from_secs(60),
                        "the run never started"
                    );
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        }
        let killed = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(143), "stderr: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(err.contains("interrupted by SIGTERM"), "{err}");
        assert!(err.contains("the batches written are complete"), "{err}");
        let r: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        assert_eq!(r["outcome"], "interrupted", "{r}");
        assert_eq!(r["exit"], 143, "{r}");
        let written = r["documents"]["written"].as_u64().expect("a count");
        if fake {
            // The first update was answered before the signal, and the held one after it: both
            // landed, and the report counts at least their documents.
            assert!(written >= 2, "{r}");
        }
        assert!(written <= docs.len() as u64, "{r}");
        // Nothing lost: the next run takes up the rest.
        t.run_ok(&["run"], dir.path());
        let checked = assert_settled(t, dir.path());
        eprintln!("checked {checked} values after a run stopped by SIGTERM ({written} written)");
    }
);
