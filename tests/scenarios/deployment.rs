//! The guide's deployment (docs/src/scheduling.md), one configuration file for serve and the nightly timer's `run`: the two
//! never undo each other's flags, from one machine (one state folder) or from two (issue 42).

use std::time::Duration;

use serde_json::Value;

use super::harness::{corpus, solr_test, Target};
use crate::support::serve::Served;

/// What a run wrote, from its report.
fn written(report: &Value) -> u64 {
    report["documents"]["written"].as_u64().expect("a count")
}

solr_test!(
    the_documented_serve_and_timer_pair_never_undo_each_other,
    |t: &Target| {
        let dir = tempfile::tempdir().unwrap();
        t.load(&corpus(300, 61));
        // The rules, learnt from the core as the guide says to before the units start.
        let rules = dir.path().join("rules.json");
        let out = t
            .command(&["urls", "learn", "--out", rules.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        // One file for both: the settings that decide flags.
        let config = dir.path().join("config.toml");
        std::fs::write(
            &config,
            format!(
                "[decide]\nrules = {:?}\nfuzzy-min-words = 4\nprefer = \"canonical\"\n",
                rules.to_str().unwrap()
            ),
        )
        .unwrap();
        let config = config.to_str().unwrap();
        let machine_a = dir.path().join("state-a");
        let machine_b = dir.path().join("state-b");
        let mut cmd = t.command(&["serve", "--config", config, "--listen", "127.0.0.1:0"]);
        cmd.arg("--state-dir").arg(&machine_a);
        let server = Served::spawn(cmd);
        let serve_run = || {
            let id = server.start_run(serde_json::json!({}));
            let record = server.wait_run(id, Duration::from_secs(300));
            assert_eq!(record["state"], "succeeded", "{record}");
            written(&record["report"])
        };
        let timer_run = |state: &std::path::Path| {
            let state = state.to_str().unwrap();
            written(&t.run_ok(
                &["run", "--config", config, "--state-dir", state],
                dir.path(),
            ))
        };
        // serve's start recorded the file's settings with the core; its first run decides it.
        let first = serve_run();
        assert!(first > 0, "the first run decides the core");
        // Alternated five times from one machine, then from two: nothing written after the first.
        for machine in [&machine_a, &machine_b] {
            for round in 0..5 {
                assert_eq!(timer_run(machine), 0, "the timer's run, round {round}");
                assert_eq!(serve_run(), 0, "serve's run, round {round}");
            }
        }
        // A process that forgot the file (another machine, a hand-run): it stops, naming what
        // differs, instead of deciding the core under other settings.
        let out = t.run(&["run", "--state-dir", machine_b.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("--rules none (recorded: "), "{err}");
        assert_eq!(serve_run(), 0, "serve's run after it");
    }
);
