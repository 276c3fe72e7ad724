//! `solr-dedup serve` against Solr: runs and checks started over HTTP, watched, refused while one
//! goes, cancelled (with the kill-style check that nothing is lost and the next run converges), kept
//! across a restart; metrics that equal the reports; the biggest groups against the documents read
//! back over plain HTTP; `--after-quiet` against a simulated crawl.
//!
//! What the worker leaves in the core is checked as everywhere else: against the file store's
//! `--full` run on the same documents, and every signature against the stored text
//! ([`super::harness::assert_settled`]).

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use super::harness::{
    assert_fresh, assert_settled, corpus, expected, solr_test, Target, WORKER_FIELDS,
};
use crate::support::cmd::solr_dedup;
use crate::support::fake_solr::{Fault, FaultRule};
use crate::support::serve::Served;

/// `serve ARGS` on the target's documents.
pub(super) fn serve(t: &Target, args: &[&str]) -> Served {
    let mut all = vec!["serve"];
    all.extend_from_slice(args);
    Served::spawn(t.command(&all))
}

pub(super) const LONG: Duration = Duration::from_secs(300);

/// The sum of a report field over records.
fn sum(records: &[&Value], pointer: &str) -> f64 {
    records
        .iter()
        .map(|r| {
            r["report"]
                .pointer(pointer)
                .and_then(Value::as_f64)
                .unwrap_or(0.0)
        })
        .sum()
}

solr_test!(
    serve_runs_checks_keeps_history_and_counts_in_metrics,
    |t: &Target| {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let state_arg = state.to_str().unwrap().to_owned();
        let docs = corpus(120, 41);
        t.load(&docs);
        let server = serve(t, &["--state-dir", &state_arg, "--batch-size", "25"]);

        // Nothing yet.
        assert_eq!(server.json("/api/runs"), json!({ "runs": [] }));
        assert_eq!(server.json("/api/runs/current"), json!({ "run": null }));

        let run = server.start_run(json!({}));
        let ran = server.wait_run(run, LONG);
        assert_eq!(ran["state"], "succeeded", "{ran}");
        assert_eq!(ran["kind"], "run");
        assert_eq!(ran["trigger"], "api");
        assert_eq!(ran["report"]["documents"]["read"], 120);
        assert_eq!(ran["report"]["documents"]["signed"], 120);
        assert!(ran["report"]["documents"]["written"].as_u64().unwrap() > 0);
        // Exactly what a full run leaves, with fresh signatures.
        let checked = assert_settled(t, dir.path());

        let check = server.start_run(json!({ "check": true }));
        let checked_run = server.wait_run(check, LONG);
        assert_eq!(checked_run["state"], "succeeded", "{checked_run}");
        assert_eq!(checked_run["kind"], "check");
        let report = &checked_run["report"];
        assert_eq!(report["documents"]["missing_signatures"], 0);
        for (d, r) in report["dimensions"].as_object().unwrap() {
            assert_eq!(r["changed"], 0, "{d}: the check finds the run's work right");
        }

        // The metrics are the reports' sums.
        let m = server.metrics();
        let records = [&ran, &checked_run];
        assert_eq!(
            m[r#"solr_dedup_runs_total{kind="run",outcome="succeeded"}"#],
            1.0
        );
        assert_eq!(
            m[r#"solr_dedup_runs_total{kind="check",outcome="succeeded"}"#],
            1.0
        );
        assert_eq!(
            m[r#"solr_dedup_runs_total{kind="run",outcome="cancelled"}"#],
            0.0
        );
        assert_eq!(m["solr_dedup_documents_read_total"], 240.0);
        for (metric, pointer) in [
            ("solr_dedup_documents_signed_total", "/documents/signed"),
            ("solr_dedup_documents_written_total", "/documents/written"),
            ("solr_dedup_conflicts_total", "/documents/conflicts"),
            ("solr_dedup_solr_requests_total", "/work/requests"),
            (
                "solr_dedup_solr_written_documents_total",
                "/work/written_docs",
            ),
            (
                r#"solr_dedup_solr_read_documents_total{read="text"}"#,
                "/work/text_docs",
            ),
            (
                r#"solr_dedup_solr_read_documents_total{read="lookup"}"#,
                "/work/lookup_docs",
            ),
        ] {
            assert_eq!(m[metric], sum(&records, pointer), "{metric}");
        }
        assert!(m["solr_dedup_solr_requests_total"] > 0.0);
        for (d, r) in report["dimensions"].as_object().unwrap() {
            let key = format!(r#"solr_dedup_groups{{dimension="{d}"}}"#);
            assert_eq!(m[&key], r["groups"].as_f64().unwrap(), "{key}");
            let key = format!(r#"solr_dedup_doubles{{dimension="{d}"}}"#);
            assert_eq!(m[&key], r["doubles"].as_f64().unwrap(), "{key}");
        }
        assert_eq!(
            m[r#"solr_dedup_last_success_timestamp_seconds{kind="check"}"#],
            checked_run["ended"].as_f64().unwrap()
        );
        assert_eq!(m["solr_dedup_run_in_progress"], 0.0);

        // The biggest exact groups, against the documents read back over plain HTTP.
        let stored = t.docs();
        let mut by_sig: BTreeMap<i64, Vec<&serde_json::Map<String, Value>>> = BTreeMap::new();
        for d in stored.values() {
            by_sig
                .entry(d["exact_signature_l"].as_i64().unwrap())
                .or_default()
                .push(d);
        }
        // A group has a member flagged as a double (documents without text share a signature but
        // take no part, and keep a true flag).
        let mut sizes: Vec<u64> = by_sig
            .values()
            .filter(|g| {
                g.iter()
                    .any(|d| d["exact_signature_unique_b"] == json!(false))
            })
            .map(|g| g.len() as u64)
            .collect();
        sizes.sort_unstable_by(|a, b| b.cmp(a));
        let listed = server.json("/api/groups/exact?limit=5&members=3");
        let groups = listed["groups"].as_array().unwrap();
        assert_eq!(groups.len(), sizes.len().min(5));
        assert!(!groups.is_empty(), "the corpus plants exact doubles");
        for (g, want) in groups.iter().zip(&sizes) {
            assert_eq!(g["size"].as_u64().unwrap(), *want, "{g}");
            let members = &by_sig[&g["key"].as_str().unwrap().parse::<i64>().unwrap()];
            assert_eq!(members.len() as u64, *want);
            let rep = &g["representative"];
            let flagged: Vec<&str> = members
                .iter()
                .filter(|d| d["exact_signature_unique_b"] == json!(true))
                .map(|d| d["id"].as_str().unwrap())
                .collect();
            assert_eq!(flagged, vec![rep["id"].as_str().unwrap()], "{g}");
            let listed_members = g["members"].as_array().unwrap();
            assert_eq!(listed_members.len() as u64, (*want).min(3));
            assert_eq!(
                listed_members[0]["id"], rep["id"],
                "the representative first"
            );
            // Issue 27: each member's rank under the order the run decided with, and the rule that
            // put the representative first; a run just decided, so no member ranks before it.
            let rank = |m: &Value| -> Vec<u64> {
                m["rank"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_u64().unwrap())
                    .collect()
            };
            assert!(rep.get("separated_by").is_none(), "{rep}");
            for m in &listed_members[1..] {
                assert_eq!(rank(m).len(), 7, "{m}");
                assert!(rank(rep) <= rank(m), "{rep} {m}");
                let rule = m["separated_by"].as_str().unwrap();
                assert!(
                    [
                        "canonical",
                        "clutter",
                        "host",
                        "scheme",
                        "www",
                        "param order",
                        "shorter",
                        "smaller url",
                        "id"
                    ]
                    .contains(&rule),
                    "{m}"
                );
            }
            for m in listed_members {
                assert!(members.iter().any(|d| d["id"] == m["id"]), "{m}");
                assert!(
                    m["link"]
                        .as_str()
                        .unwrap()
                        .contains("/select?q=%7B%21term+f%3Did%7D"),
                    "{m}"
                );
            }
        }
        let (status, text) = server.get("/api/groups/www", &[]);
        assert_eq!(status, 400, "{text}");
        assert_eq!(server.get("/api/groups/nope", &[]).0, 404);

        // Killed and started again on the same state directory: the same history.
        let before = server.json("/api/runs");
        server.kill();
        let again = serve(t, &["--state-dir", &state_arg]);
        let after = again.json("/api/runs");
        assert_eq!(after, before);
        assert_eq!(after["runs"].as_array().unwrap().len(), 2);
        assert_eq!(after["runs"][0]["id"], check, "newest first");
        // Ids go on from the kept ones.
        let next = again.start_run(json!({ "check": true }));
        assert_eq!(next, check + 1);
        again.wait_run(next, LONG);
        println!("serve history: {checked} values checked");
    }
);

/// Every request to the fake waits `ms` first, so that a run takes long enough to be watched.
fn slow(t: &Target, ms: u64) {
    t.fake_solr().fault(FaultRule {
        path: String::new(),
        skip: 0,
        times: usize::MAX,
        fault: Fault::Delay(Duration::from_millis(ms)),
    });
}

#[test]
fn serve_shows_progress_refuses_a_second_start_and_cancels_cleanly() {
    let t = Target::fake("serve-cancel");
    let dir = tempfile::tempdir().unwrap();
    let docs = corpus(300, 43);
    t.load(&docs);
    let loaded = t.docs();
    let server = serve(&t, &["--batch-size", "10"]);
    slow(&t, 40);

    let id = server.start_run(json!({}));
    // A second start while it goes: 409 with its id.
    let (status, answer) = server.post("/api/runs", &json!({ "check": true }), &[]);
    assert_eq!(status, 409, "{answer}");
    assert_eq!(answer["running"], id);

    // Progress moves: the documents done grow within the scan, out of the total.
    let mut seen: Vec<u64> = Vec::new();
    let deadline = Instant::now() + LONG;
    while seen.len() < 3 {
        let current = server.json("/api/runs/current");
        let p = &current["run"]["progress"];
        assert_eq!(current["run"]["id"], id, "{current}");
        if p["phase"] == "scan" && p["done"].as_u64().unwrap() > seen.last().copied().unwrap_or(0) {
            assert_eq!(p["total"], 300, "{p}");
            assert_eq!(p["round"], 1, "{p}");
            assert!(p["done"].as_u64().unwrap() <= 300);
            seen.push(p["done"].as_u64().unwrap());
        }
        assert!(Instant::now() < deadline, "no progress: {current}");
        std::thread::sleep(Duration::from_millis(20));
    }

    // Cancel once it writes.
    let deadline = Instant::now() + LONG;
    loop {
        let p = server.json("/api/runs/current")["run"]["progress"].clone();
        if p["phase"] == "write" && p["done"].as_u64().unwrap() >= 20 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never reached the write phase: {p}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // No body needed (curl -XPOST …/cancel sends none, and no Content-Type).
    let resp = crate::support::serve::http()
        .post(format!("{}/api/runs/{id}/cancel", server.base))
        .send()
        .unwrap();
    assert_eq!(resp.status().as_u16(), 202, "{:?}", resp.text());
    let ended = server.wait_run(id, LONG);
    assert_eq!(ended["state"], "cancelled", "{ended}");
    let written = ended["report"]["documents"]["written"].as_u64().unwrap();
    assert!(written > 0 && written < 300, "part of the work: {written}");
    assert_eq!(
        server
            .post(&format!("/api/runs/{id}/cancel"), &json!({}), &[])
            .0,
        409
    );
    assert_eq!(server.post("/api/runs/999/cancel", &json!({}), &[]).0, 404);
    t.fake_solr().clear_faults();

    // Nothing lost: every document keeps what the crawler wrote, and a document the run wrote holds
    // exactly what a full run decides (the decision was whole; only the writing stopped), with
    // signatures from its own text.
    let after = t.docs();
    assert_eq!(after.len(), loaded.len());
    let want = expected(&t, &after, dir.path());
    let mut touched = 0;
    for (id, doc) in &after {
        for (k, v) in &loaded[id] {
            if k != "_version_" && !WORKER_FIELDS.contains(&k.as_str()) {
                assert_eq!(doc.get(k), Some(v), "{id}: {k}");
            }
        }
        if WORKER_FIELDS.iter().any(|f| doc.contains_key(*f)) {
            touched += 1;
            assert_fresh(id, doc);
            for f in WORKER_FIELDS {
                assert_eq!(
                    doc.get(f).filter(|v| !v.is_null()),
                    want[id].get(f).filter(|v| !v.is_null()),
                    "{id}: {f}"
                );
            }
        }
    }
    assert_eq!(
        touched as u64, written,
        "the report counts what was written"
    );

    // The next run converges.
    let next = server.start_run(json!({}));
    assert_eq!(server.wait_run(next, LONG)["state"], "succeeded");
    let checked = assert_settled(&t, dir.path());
    let m = server.metrics();
    assert_eq!(
        m[r#"solr_dedup_runs_total{kind="run",outcome="cancelled"}"#],
        1.0
    );
    assert_eq!(
        m[r#"solr_dedup_runs_total{kind="run",outcome="succeeded"}"#],
        1.0
    );
    println!(
        "serve cancel: {checked} values checked, {written} documents written before the cancel"
    );
}

pub(super) fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

solr_test!(
    after_quiet_starts_one_run_once_the_crawl_stops_writing,
    |t: &Target| {
        let docs = corpus(80, 47);
        t.load(&docs[..40]);
        // Each load below commits; on a loaded machine (CI's two cores running the whole suite) one
        // can take well over a second, so the quiet period is long enough that the crawl's writes
        // always come closer together than it (1.5 s was not: a run started between two writes).
        let quiet = 4.0;
        let server = serve(t, &["--after-quiet", "4s", "--batch-size", "20"]);

        // The crawl: a page every 0.3 s, each committed, for about 4 s.
        // When the last write was sent: its change can be seen from then on (on SolrCloud a shard
        // may show it before the distributed commit returns), so the quiet period starts no earlier.
        let mut last_write = 0.0;
        for chunk in docs[40..].chunks(3) {
            last_write = unix_now();
            t.load(chunk);
            assert_eq!(
                server.json("/api/runs")["runs"],
                json!([]),
                "no run while the crawl writes"
            );
            std::thread::sleep(Duration::from_millis(300));
        }

        // Exactly one run, after the quiet period.
        let deadline = Instant::now() + LONG;
        let run = loop {
            let runs = server.json("/api/runs")["runs"].as_array().unwrap().clone();
            if let Some(r) = runs.first() {
                break r.clone();
            }
            assert!(Instant::now() < deadline, "no run after the crawl");
            std::thread::sleep(Duration::from_millis(100));
        };
        assert_eq!(run["trigger"], "after-quiet");
        assert!(
            run["started"].as_f64().unwrap() >= last_write + quiet,
            "started {} before the quiet period after the last write at {last_write}",
            run["started"]
        );
        let ran = server.wait_run(run["id"].as_u64().unwrap(), LONG);
        assert_eq!(ran["state"], "succeeded", "{ran}");
        assert_eq!(ran["report"]["documents"]["read"], 80);
        // Its own writes do not count as a change: a quiet period and more, and no second run.
        std::thread::sleep(Duration::from_secs_f64(quiet + 2.0));
        assert_eq!(
            server.json("/api/runs")["runs"].as_array().unwrap().len(),
            1
        );

        // A new change starts one more.
        t.load(&[json!({"id": "late", "sku": "http://late.example/", "text_t": "a late page"})]);
        let deadline = Instant::now() + LONG;
        while server.json("/api/runs")["runs"].as_array().unwrap().len() < 2 {
            assert!(Instant::now() < deadline, "no run after a later change");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
);

#[test]
fn serve_guards_its_runs_and_page() {
    let t = Target::fake("serve-guard");
    t.load(&corpus(10, 5));
    let token = "0123456789abcdef-token";
    let mut cmd = t.command(&["serve", "--listen", "127.0.0.1:0"]);
    cmd.env("SOLR_DEDUP_TOKEN", token);
    let server = Served::spawn(cmd);
    let auth = format!("Bearer {token}");
    let with = [("Authorization", auth.as_str())];

    // The page's shell loads without the token and holds no index data.
    let (status, page) = server.get("/", &[]);
    assert_eq!(status, 200);
    assert!(page.contains("const needsToken = true"));
    assert!(
        !page.contains(&t.core_url) && !page.contains("127.0.0.1:"),
        "no data in the shell"
    );
    // Everything else needs it.
    for path in [
        "/ui/overview",
        "/api/runs",
        "/api/runs/current",
        "/api/status",
        "/metrics",
        "/api/groups/exact",
        "/api/lookup?q=x",
        "/ui/lookup?q=x",
    ] {
        assert_eq!(server.get(path, &[]).0, 401, "{path}");
    }
    assert_eq!(server.post("/api/runs", &json!({}), &[]).0, 401);
    let (status, overview) = server.get("/ui/overview", &with);
    assert_eq!(status, 200);
    assert!(overview.contains(&t.core_url), "{overview}");
    // No cross-site start, no form post, no unknown option.
    let cross = [
        ("Authorization", auth.as_str()),
        ("Sec-Fetch-Site", "cross-site"),
    ];
    assert_eq!(server.post("/api/runs", &json!({}), &cross).0, 403);
    let other = [
        ("Authorization", auth.as_str()),
        ("Origin", "http://evil.example"),
    ];
    assert_eq!(server.post("/api/runs", &json!({}), &other).0, 403);
    let resp = crate::support::serve::http()
        .post(format!("{}/api/runs", server.base))
        .header("Authorization", &auth)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body("check=true")
        .send()
        .unwrap();
    assert_eq!(resp.status().as_u16(), 415);
    // A bodiless POST from another site is still refused, by its Origin.
    let resp = crate::support::serve::http()
        .post(format!("{}/api/runs", server.base))
        .header("Authorization", &auth)
        .header("Origin", "http://evil.example")
        .send()
        .unwrap();
    assert_eq!(resp.status().as_u16(), 403);
    let (status, answer) = server.post("/api/runs", &json!({ "fulll": true }), &with);
    assert_eq!(status, 422, "{answer}");
    assert!(
        answer["error"].as_str().unwrap().contains("fulll"),
        "{answer}"
    );
    assert_eq!(
        server.json_with("/api/runs", &with)["runs"],
        json!([]),
        "nothing started"
    );
    // The page may be framed by itself only.
    let resp = crate::support::serve::http()
        .get(format!("{}/", server.base))
        .send()
        .unwrap();
    let csp = resp.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(csp.contains("frame-ancestors 'self'"), "{csp}");
}

#[test]
fn serve_never_shows_the_solr_credentials() {
    const USER: &str = "dedup-admin";
    const SECRET: &str = "S3cr3t-serve-never-shows-4c1d";
    let t = Target::fake_with(
        "serve-secret",
        crate::support::fake_solr::FakeOptions {
            basic_auth: Some((USER.into(), SECRET.into())),
            ..Default::default()
        },
    );
    t.load(&corpus(60, 53));
    let state = tempfile::tempdir().unwrap();
    // The credentials in the URL's user info, the most exposed place.
    let with_userinfo = t
        .core_url
        .replacen("http://", &format!("http://{USER}:{SECRET}@"), 1);
    let mut cmd = solr_dedup();
    cmd.args(["serve", "-vv", "--solr", &with_userinfo, "--state-dir"])
        .arg(state.path());
    let server = Served::spawn(cmd);
    let id = server.start_run(json!({}));
    assert_eq!(server.wait_run(id, LONG)["state"], "succeeded");
    let mut seen = String::new();
    for path in [
        "/",
        "/ui/overview",
        "/ui/groups?dimension=exact",
        "/api/status",
        "/api/runs",
        "/api/runs/current",
        "/api/groups/exact?members=20",
        "/api/lookup?q=x",
        "/ui/lookup?q=x",
        "/metrics",
        "/openapi.json",
    ] {
        let (status, text) = server.get(path, &[]);
        assert_eq!(status, 200, "{path}: {text}");
        seen.push_str(&text);
    }
    assert!(
        seen.contains(&t.core_url),
        "the core is shown, without credentials"
    );
    for entry in std::fs::read_dir(state.path().join("runs")).unwrap() {
        seen.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    seen.push_str(&server.log());
    assert!(server.log().contains("run ended"), "the log was read");
    assert!(!seen.contains(SECRET), "the password showed");
    assert!(!seen.contains(&format!("{USER}:")), "the user info showed");
}

#[test]
fn serve_keeps_its_own_options_refuses_what_would_fail_and_other_host_names() {
    let t = Target::fake("serve-options");
    t.load(&corpus(30, 57));
    let state = tempfile::tempdir().unwrap();
    let state_arg = state.path().to_str().unwrap().to_owned();

    // `serve --dry-run`: every run it starts is a dry run, and says so.
    let server = serve(&t, &["--dry-run", "--state-dir", &state_arg]);
    let id = server.start_run(json!({}));
    let ran = server.wait_run(id, LONG);
    assert_eq!(ran["state"], "succeeded", "{ran}");
    assert_eq!(ran["options"]["dry_run"], true);
    assert_eq!(ran["report"]["dry_run"], true);
    assert_eq!(ran["report"]["work"]["written_docs"], 0);
    assert!(
        t.docs()
            .values()
            .all(|d| WORKER_FIELDS.iter().all(|f| !d.contains_key(*f))),
        "a dry run wrote"
    );

    // Without a token, only loopback host names are served (no DNS rebinding).
    let rebound = [("Host", "attacker.example")];
    let (status, text) = server.get("/api/runs", &rebound);
    assert_eq!(status, 403, "{text}");
    assert_eq!(server.post("/api/runs", &json!({}), &rebound).0, 403);
    assert_eq!(server.get("/api/runs", &[("Host", "localhost:1")]).0, 200);

    // A second server on the same state directory is refused, with what to do.
    let out = t
        .command(&[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--state-dir",
            &state_arg,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("another solr-dedup serve uses the state directory"),
        "{err}"
    );
    drop(server);

    // What would make every run fail is refused at the start.
    let out = t
        .command(&["serve", "--output", "x.jsonl", "--state-dir", &state_arg])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--output is for file mode"));
    let out = solr_dedup()
        .args([
            "serve",
            "--input",
            "/nonexistent/docs.jsonl",
            "--state-dir",
            &state_arg,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read the input"));
}

solr_test!(
    serve_predictions_follow_the_index_after_a_run,
    |t: &Target| {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let rules_path = dir.path().join("rules.json");
        // One rule: the tracking parameter `utm_source` never changes a page of shop.example.
        let rules = json!({
            "url_rules": 1,
            "min_estimate": 0.5,
            "sites": {"shop.example": {"params": [{
                "param": "utm_source",
                "path_prefix": "/",
                "evidence": {"support": 60, "against": 0, "estimate": 0.95}
            }]}}
        });
        std::fs::write(&rules_path, rules.to_string()).unwrap();
        t.load(&[
            json!({"id": "old", "sku": "https://shop.example/item/1", "text_t": "an older page"}),
        ]);
        let server = serve(
            t,
            &[
                "--state-dir",
                state.to_str().unwrap(),
                "--rules",
                rules_path.to_str().unwrap(),
            ],
        );
        let variant = "https://shop.example/item/2?utm_source=mail";
        let predict = |url: &str| {
            let (status, answer) = server.post("/api/urls/predict", &json!({ "urls": [url] }), &[]);
            assert_eq!(status, 200, "{answer}");
            answer["answers"][0].clone()
        };
        let status = server.json("/api/status");
        let before = status["prediction_index"].clone();
        assert_eq!(before["urls"], 1, "{status}");
        assert!(before["loaded_at"].as_f64().unwrap() > 0.0, "{status}");
        assert_eq!(status["rules"], true, "the old fields stay: {status}");
        let m = server.metrics();
        assert_eq!(m["solr_dedup_prediction_index_urls"], 1.0);
        assert_eq!(m["solr_dedup_indexed_pages"], 1.0);

        // Indexed after the start: not known yet.
        t.load(&[
            json!({"id": "new", "sku": "https://shop.example/item/2", "text_t": "a page indexed later"}),
        ]);
        let answer = predict(variant);
        assert!(answer["duplicate_of"].is_null(), "{answer}");

        // A run, then (once the index is rebuilt in the background) the page is the original.
        let run = server.start_run(json!({}));
        let ran = server.wait_run(run, LONG);
        assert_eq!(ran["state"], "succeeded", "{ran}");
        let deadline = Instant::now() + LONG;
        let after = loop {
            let s = server.json("/api/status");
            let p = s["prediction_index"].clone();
            if p["urls"] == 2 && p["reloading"] == false {
                break p;
            }
            assert!(Instant::now() < deadline, "the index was not reloaded: {s}");
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(after["loaded_at"].as_f64() > before["loaded_at"].as_f64());
        assert!(after.get("reload_error").is_none(), "{after}");
        let answer = predict(variant);
        // The target prefixes ids with the test's tag.
        let original = answer["duplicate_of"]["id"].as_str().unwrap_or("");
        assert!(original.ends_with("new"), "{answer}");
        assert_eq!(
            answer["duplicate_of"]["url"], "https://shop.example/item/2",
            "{answer}"
        );
        let m = server.metrics();
        assert_eq!(m["solr_dedup_prediction_index_urls"], 2.0);
        assert_eq!(
            m["solr_dedup_prediction_index_loaded_timestamp_seconds"],
            after["loaded_at"].as_f64().unwrap()
        );
        let (_, page) = server.get("/ui/overview", &[]);
        assert!(page.contains("2 URLs"), "{page}");
    }
);

/// A core that does not answer: the status says so in one line that names the core and the cause
/// (not the HTTP stack's chain), the page shows that line, and a run fails naming Solr, the server
/// answering all along.
#[test]
fn serve_says_in_one_line_that_solr_is_unreachable() {
    // A port nothing listens on: bound, then let go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let core = format!("http://127.0.0.1:{port}/solr/none");
    let server = Served::start(&["--solr", &core, "--retries", "0"], &[]);
    let status = server.json("/api/status");
    assert_eq!(status["store"], format!("solr {core}"), "{status}");
    assert_eq!(status["healthy"], false, "{status}");
    assert_eq!(
        status["health_error"],
        format!("Solr at {core} is unreachable: connection refused"),
        "{status}"
    );
    let (code, page) = server.get("/ui/overview", &[]);
    assert_eq!(code, 200);
    assert!(
        page.contains(&format!(
            "Solr at {core} is unreachable: connection refused"
        )),
        "{page}"
    );
    let run = server.wait_run(server.start_run(json!({})), LONG);
    assert_eq!(run["state"], "failed", "{run}");
    let error = run["error"].as_str().unwrap();
    assert!(error.contains("Solr could not be reached"), "{error}");
    // The server still answers, and tells the same.
    assert_eq!(server.json("/api/status")["healthy"], false);
}
