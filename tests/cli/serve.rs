//! `serve` from the command line: predictions as the CLI gives them, its rules file, state files, refusals, tokens.

use super::*;

/// A plain-HTTP client (reqwest needs a TLS provider installed even for http://).
use crate::support::serve::{http, prometheus, Served as Server};

#[test]
fn serve_answers_predictions_as_the_command_line_does() {
    let (input, rules) = shop_rules("serve-predict");
    let urls = [
        "http://www.shop.example/item/2?sid=zz",
        "https://shop.example/item/99",
        "mailto:a@shop.example",
    ];
    let server = Server::start(
        &[
            "--input",
            input.to_str().unwrap(),
            "--rules",
            rules.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ],
        &[],
    );
    let (status, body) = server.post(
        "/api/urls/predict",
        &serde_json::json!({ "urls": urls }),
        &[],
    );
    assert_eq!(status, 200, "{body}");
    let mut args = vec![
        "urls",
        "predict",
        "--rules",
        rules.to_str().unwrap(),
        "--input",
        input.to_str().unwrap(),
    ];
    args.extend(urls);
    let cli = json_lines(&run(&args, b""));
    assert_eq!(body["answers"].as_array().unwrap(), &cli);
    // By hand: scheme, www and sid rewrite the first to p2's URL; the second is new; the third has
    // no canonical form.
    assert_eq!(body["answers"][0]["duplicate_of"]["id"], "p2");
    assert_eq!(body["answers"][1]["duplicate_of"], Value::Null);
    assert!(body["answers"][2]["error"]
        .as_str()
        .unwrap()
        .contains("not an http(s) URL"));

    let (status, body) = server.post(
        "/api/urls/canonical",
        &serde_json::json!({ "urls": [urls[0]] }),
        &[],
    );
    assert_eq!(status, 200);
    assert_eq!(
        body["answers"][0]["canonical"],
        "https://shop.example/item/2"
    );

    let (status, text) = server.get("/metrics", &[]);
    assert_eq!(status, 200);
    let m = prometheus(&text);
    assert_eq!(m["solr_dedup_predict_requests_total"], 1.0);
    assert_eq!(m["solr_dedup_predicted_urls_total"], 3.0);
    assert_eq!(m["solr_dedup_predicted_duplicates_total"], 1.0);
    assert_eq!(m["solr_dedup_url_errors_total"], 1.0);
    assert_eq!(m["solr_dedup_canonical_requests_total"], 1.0);
    assert_eq!(m["solr_dedup_indexed_pages"], 30.0);
    assert_eq!(server.get("/healthz", &[]), (200, "ok\n".to_owned()));

    // The OpenAPI document lists every endpoint this test used, and each answers as documented.
    let (status, text) = server.get("/openapi.json", &[]);
    assert_eq!(status, 200);
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    let paths: Vec<&String> = doc["paths"].as_object().unwrap().keys().collect();
    assert_eq!(
        paths,
        [
            "/api/groups/{dimension}",
            "/api/lookup",
            "/api/runs",
            "/api/runs/current",
            "/api/runs/{id}",
            "/api/runs/{id}/cancel",
            "/api/status",
            "/api/urls/canonical",
            "/api/urls/predict",
            "/healthz",
            "/metrics",
            "/openapi.json"
        ]
    );
    assert!(doc["paths"]["/api/urls/predict"]["post"]["responses"]["200"].is_object());
}

/// The state directory written by the server before its records were typed (issue 24): copied from
/// what it wrote (records 1 to 3: a dry run, a check, a full dry run over a small file) and one
/// record written by hand in the same format (4: a failed check).
const STATE_FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/serve-state");

#[test]
fn serve_starts_without_its_rules_file_and_loads_it_when_it_appears() {
    let (input, learnt) = shop_rules("serve-waits-for-rules");
    let rules = input.with_file_name("serve-waits-for-rules-later.json");
    let _ = std::fs::remove_file(&rules);
    let server = Server::start(
        &[
            "--input",
            input.to_str().unwrap(),
            "--rules",
            rules.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ],
        &[],
    );
    let ask = || {
        server.post(
            "/api/urls/predict",
            &serde_json::json!({ "urls": ["http://www.shop.example/item/2?sid=zz"] }),
            &[],
        )
    };
    let (status, body) = ask();
    assert_eq!(status, 503, "{body}");
    let error = body["error"].as_str().unwrap();
    assert!(
        error.contains("no rules yet") && error.contains("urls learn --out"),
        "{error}"
    );
    assert_eq!(server.json("/api/status")["rules"], false);
    // `urls learn` writes it (here: a copy, renamed into place as learn does).
    let part = rules.with_extension("part");
    std::fs::copy(&learnt, &part).unwrap();
    std::fs::rename(&part, &rules).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while server.json("/api/status")["rules"] != true {
        assert!(
            std::time::Instant::now() < deadline,
            "the rules were never loaded"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let (status, body) = ask();
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["answers"][0]["duplicate_of"]["id"], "p2");
}

#[test]
fn serve_reads_old_state_files_and_answers_them_byte_for_byte_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    for entry in std::fs::read_dir(format!("{STATE_FIXTURE}/runs")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), runs.join(entry.file_name())).unwrap();
    }
    let server = Server::start(&["--state-dir", dir.path().to_str().unwrap()], &[]);
    // The answers the untyped records gave, saved from that server.
    for (path, answer) in [
        ("/api/runs", "api-runs.json"),
        ("/api/runs/2", "api-runs-2.json"),
    ] {
        let (status, text) = server.get(path, &[]);
        assert_eq!(status, 200, "{path}: {text}");
        let want = std::fs::read_to_string(format!("{STATE_FIXTURE}/{answer}")).unwrap();
        assert_eq!(text, want, "{path}");
    }
    // Nothing was rewritten on the way.
    for id in 1..=4 {
        let name = format!("{id:08}.json");
        let want = std::fs::read(format!("{STATE_FIXTURE}/runs/{name}")).unwrap();
        assert_eq!(std::fs::read(runs.join(&name)).unwrap(), want, "{name}");
    }
}

#[test]
fn serve_refuses_what_it_should() {
    let (input, rules) = shop_rules("serve-refuse");
    let server = Server::start(
        &[
            "--input",
            input.to_str().unwrap(),
            "--rules",
            rules.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ],
        &[],
    );
    // A cross-site form cannot send JSON: anything else is refused.
    let client = http();
    let form = client
        .post(format!("{}/api/urls/predict", server.base))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body("urls=http://a.example/")
        .send()
        .unwrap();
    assert_eq!(form.status().as_u16(), 415);
    let (status, body) = server.post(
        "/api/urls/predict",
        &serde_json::json!({ "urls": [] }),
        &[("Origin", "http://evil.example")],
    );
    assert_eq!(
        (status, body["error"].as_str()),
        (403, Some("cross-site requests are refused"))
    );
    let many: Vec<String> = (0..10_001)
        .map(|i| format!("http://a.example/{i}"))
        .collect();
    let (status, body) = server.post(
        "/api/urls/predict",
        &serde_json::json!({ "urls": many }),
        &[],
    );
    assert_eq!(status, 413, "{body}");
    let (status, body) = server.post("/api/urls/predict", &serde_json::json!({ "url": "x" }), &[]);
    assert_eq!(status, 422, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("send {\"urls\""),
        "{body}"
    );
    assert_eq!(server.get("/nothing", &[]).0, 404);
    drop(server);

    // Without rules the URL endpoints say how to get them.
    let server = Server::start(&["--listen", "127.0.0.1:0"], &[]);
    let (status, body) = server.post("/api/urls/predict", &serde_json::json!({ "urls": [] }), &[]);
    assert_eq!(status, 503);
    assert!(
        body["error"].as_str().unwrap().contains("--rules"),
        "{body}"
    );
}

#[test]
fn serve_needs_a_token_off_loopback_and_checks_it_everywhere_it_is_set() {
    // Off loopback without a token: refused before listening, one line, exit 2.
    let out = run_without_solr_url(&["serve", "--listen", "0.0.0.0:0"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("needs a bearer token"), "{err}");
    // A short token is refused too.
    let short = temp_file("serve-short-token", b"abc\n");
    let out = run_without_solr_url(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--token-file",
        short.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("too short"), "{}", stderr(&out));

    let token = "0123456789abcdef0123";
    let server = Server::start(&["--listen", "127.0.0.1:0"], &[("SOLR_DEDUP_TOKEN", token)]);
    let body = serde_json::json!({ "urls": [] });
    assert_eq!(server.post("/api/urls/canonical", &body, &[]).0, 401);
    assert_eq!(
        server
            .post(
                "/api/urls/canonical",
                &body,
                &[("Authorization", "Bearer 0123456789abcdef0124")]
            )
            .0,
        401
    );
    let bearer = format!("Bearer {token}");
    // Authorised: past the guard (503: no rules loaded).
    assert_eq!(
        server
            .post("/api/urls/canonical", &body, &[("Authorization", &bearer)])
            .0,
        503
    );
    assert_eq!(server.get("/metrics", &[]).0, 401);
    let (status, text) = server.get("/metrics", &[("Authorization", &bearer)]);
    assert_eq!(status, 200);
    assert_eq!(prometheus(&text)["solr_dedup_unauthorized_total"], 3.0);
    // The token never appears in an answer.
    assert!(!text.contains(token));
    assert_eq!(server.get("/healthz", &[]).0, 200);
}

#[test]
fn serve_follows_its_rules_file_when_it_is_written_anew_without_a_run() {
    let (input, learnt) = shop_rules("serve-follows-rules");
    let rules = input.with_file_name("serve-follows-rules-live.json");
    std::fs::copy(&learnt, &rules).unwrap();
    let server = Server::start(
        &[
            "--input",
            input.to_str().unwrap(),
            "--rules",
            rules.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ],
        &[],
    );
    let ask = || {
        let (status, body) = server.post(
            "/api/urls/predict",
            &serde_json::json!({ "urls": ["http://www.shop.example/item/2?sid=zz"] }),
            &[],
        );
        assert_eq!(status, 200, "{body}");
        body["answers"][0]["duplicate_of"]["id"].clone()
    };
    assert_eq!(ask(), "p2");
    let runs_before = server.json("/api/runs");
    // `urls learn` writes rules that know no site (here: the learnt file emptied of its sites,
    // renamed into place as learn does): the URL is new to them.
    let mut none: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&learnt).unwrap()).unwrap();
    none["sites"] = serde_json::json!({});
    let part = rules.with_extension("part");
    std::fs::write(&part, none.to_string()).unwrap();
    std::fs::rename(&part, &rules).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while ask() == "p2" {
        assert!(
            std::time::Instant::now() < deadline,
            "the predictions never followed the new rules"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(ask(), serde_json::Value::Null);
    // No run was needed for it.
    assert_eq!(server.json("/api/runs"), runs_before);
}
