//! Bad input gets one clear line and a non-zero exit: a wrong core URL, wrong credentials, Solr not
//! running, a schema without the output fields, a lossy schema. Credentials never reach the logs.

use std::process::Output;

use serde_json::Value;

use super::harness::{assert_settled, corpus, solr_test, Target};
use crate::support::cmd::{error_line, solr_dedup, stderr};
use crate::support::fake_solr::FakeOptions;

/// Exit code and the one error line.
fn failed(out: &Output) -> (Option<i32>, String) {
    (out.status.code(), error_line(out))
}

solr_test!(a_wrong_core_url, |t: &Target| {
    let wrong = format!("{}-nosuchcore", t.core_url);
    let out = solr_dedup()
        .args(["run", "--solr", &wrong, "--retries", "0"])
        .output()
        .unwrap();
    let (code, line) = failed(&out);
    assert_eq!(code, Some(2));
    assert!(
        line.contains("does not exist") && line.contains("core URL"),
        "{line}"
    );
});

#[test]
fn solr_not_running() {
    // A port nothing listens on: bind, note it, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = solr_dedup()
        .args([
            "run",
            "--solr",
            &format!("http://127.0.0.1:{port}/solr/collection1"),
            "--retries",
            "1",
        ])
        .output()
        .unwrap();
    let (code, line) = failed(&out);
    assert_eq!(code, Some(3));
    assert!(line.contains("could not be reached"), "{line}");
}

const USER: &str = "dedup-admin";
const SECRET: &str = "S3cr3t-never-logged-9f27";

fn with_auth(name: &str) -> Target {
    Target::fake_with(
        name,
        FakeOptions {
            basic_auth: Some((USER.into(), SECRET.into())),
            ..FakeOptions::default()
        },
    )
}

#[test]
fn wrong_credentials() {
    let t = with_auth("wrong-credentials");
    let out = solr_dedup()
        .args(["run", "--solr", &t.core_url, "--retries", "0"])
        .env("SOLR_USER", USER)
        .env("SOLR_PASSWORD", "not-the-password")
        .output()
        .unwrap();
    let (code, line) = failed(&out);
    assert_eq!(code, Some(2));
    assert!(
        line.contains("credentials") && line.contains("SOLR_USER"),
        "{line}"
    );
    assert!(!line.contains("not-the-password"), "{line}");
    // And none at all.
    let out = solr_dedup()
        .args(["check", "--solr", &t.core_url, "--retries", "0"])
        .output()
        .unwrap();
    assert_eq!(failed(&out).0, Some(2));
}

#[test]
fn credentials_never_appear_in_the_logs() {
    let t = with_auth("secret-logs");
    let dir = tempfile::tempdir().unwrap();
    t.load(&corpus(60, 51));
    let auth_file = dir.path().join("auth");
    std::fs::write(&auth_file, format!("{USER}:{SECRET}\n")).unwrap();
    let b64 = {
        // What a basic-auth header would carry.
        const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let raw = format!("{USER}:{SECRET}");
        let mut out = String::new();
        for c in raw.as_bytes().chunks(3) {
            let n = c.iter().fold(0u32, |n, &b| n << 8 | b as u32) << (8 * (3 - c.len()));
            for i in 0..=c.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            }
        }
        out
    };
    let runs = [
        t.command(&["run", "-vv"]).output().unwrap(),
        t.command(&["check", "-vv", "--full"]).output().unwrap(),
        t.command(&["run", "-vv", "--auth-file", auth_file.to_str().unwrap()])
            .env_remove("SOLR_USER")
            .env_remove("SOLR_PASSWORD")
            .output()
            .unwrap(),
        t.command(&["run", "-vv", "--retries", "0"])
            .env("SOLR_PASSWORD", format!("{SECRET}-wrong"))
            .output()
            .unwrap(),
    ];
    let mut scanned = 0;
    for (i, out) in runs.iter().enumerate() {
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.len() > 100, "run {i} logged little: {text}");
        assert!(!text.contains(SECRET), "run {i} leaked the password");
        assert!(!text.contains(&b64), "run {i} leaked the auth header");
        scanned += text.len();
    }
    assert_eq!(runs[0].status.code(), Some(0), "{}", stderr(&runs[0]));
    assert_eq!(runs[3].status.code(), Some(2));
    eprintln!("scanned {scanned} bytes of -vv logs from 4 runs: no password, no auth header");
}

#[test]
fn a_schema_without_the_output_fields() {
    let t = Target::fake("no-output-fields");
    t.load(&corpus(20, 52));
    t.fake_solr().edit_schema(|s| {
        s.remove_field("www_unique_b");
        s.remove_field("http_unique_b");
        s.dynamic_fields.retain(|d| d.name != "*_b");
    });
    let out = t.run(&["run"]);
    let (code, line) = failed(&out);
    assert_eq!(code, Some(2));
    for needle in [
        "www_unique_b",
        "http_unique_b",
        "solr-dedup schema apply --solr",
    ] {
        assert!(line.contains(needle), "{needle} not in: {line}");
    }
    // What the message says to do works.
    let apply = solr_dedup()
        .args(["schema", "apply", "--solr", &t.core_url])
        .output()
        .unwrap();
    assert_eq!(apply.status.code(), Some(0), "{}", stderr(&apply));
    let stdout = String::from_utf8_lossy(&apply.stdout);
    assert!(
        stdout.contains("added") && stdout.contains("www_unique_b"),
        "{stdout}"
    );
    let dir = tempfile::tempdir().unwrap();
    t.run_ok(&["run"], dir.path());
    assert_settled(&t, dir.path());
}

#[test]
fn a_lossy_schema() {
    let t = Target::fake("lossy");
    let dir = tempfile::tempdir().unwrap();
    t.load(&corpus(20, 53));
    t.fake_solr().edit_schema(|s| {
        let f = s
            .field_mut("host_s")
            .expect("the transcripts' schema has host_s");
        f.set("stored", "false");
        f.set("docValues", "false");
    });
    let out = t.run(&["run"]);
    let (code, line) = failed(&out);
    assert_eq!(code, Some(2));
    assert!(
        line.contains("host_s") && line.contains("--allow-lossy-atomic-updates"),
        "{line}"
    );
    // Nothing was written.
    assert!(t
        .docs()
        .values()
        .all(|d| !d.contains_key("exact_signature_l")));
    // A dry run and check write nothing, so they may go ahead.
    assert_eq!(t.run(&["check", "--quiet"]).status.code(), Some(1));
    t.run_ok(&["run", "--allow-lossy-atomic-updates"], dir.path());
    assert!(t
        .docs()
        .values()
        .all(|d| d.contains_key("exact_signature_l")));
}

#[test]
fn schema_check_says_what_is_wrong() {
    let t = Target::fake("schema-check");
    let out = solr_dedup()
        .args(["schema", "check", "--solr", &t.core_url])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // -q: nothing when the schema is ready; --report -: the verdict as JSON alone.
    let out = solr_dedup()
        .args(["schema", "check", "-q", "--solr", &t.core_url])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    let out = solr_dedup()
        .args(["schema", "check", "--report", "-", "--solr", &t.core_url])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], true, "{v}");
    t.fake_solr().edit_schema(|s| {
        s.remove_field("exact_signature_copycount_i");
        s.dynamic_fields.retain(|d| d.name != "*_i");
    });
    let out = solr_dedup()
        .args(["schema", "check", "--solr", &t.core_url])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("missing output field exact_signature_copycount_i"),
        "{stdout}"
    );
}

solr_test!(
    an_index_signed_with_another_scheme_is_refused,
    |t: &Target| {
        // A core a Solr or Nutch crawler signed with TextProfileSignature's defaults (md5, 2, 0.01).
        let signer = solr_dedup::signature::Signer::new(solr_dedup::signature::Scheme::Md5);
        let docs: Vec<serde_json::Value> = corpus(60, 51)
            .into_iter()
            .map(|mut d| {
                let text = d["text_t"].as_str().unwrap_or("").to_owned();
                d["exact_signature_l"] = serde_json::json!(signer.exact(&text));
                d["fuzzy_signature_l"] = serde_json::json!(signer.profile(&text).signature());
                d
            })
            .collect();
        t.load(&docs);
        let before = t.docs();
        for args in [&["run"][..], &["check"][..]] {
            let (code, line) = failed(&t.run(args));
            assert_eq!(code, Some(2), "{args:?}: {line}");
            assert!(
                line.contains("signed with --scheme md5 --min-token-len 2 --quant-rate 0.01"),
                "{line}"
            );
        }
        assert_eq!(t.docs(), before, "nothing was written");
        // --full signs everything again with this run's scheme.
        let dir = tempfile::tempdir().unwrap();
        t.run_ok(&["run", "--full"], dir.path());
        let checked = assert_settled(t, dir.path());
        eprintln!("refused twice with exit 2, then checked {checked} values after --full");
    }
);

/// `solr-dedup ARGS --solr <core> --filter=<filter>` with the target's credentials, but without
/// the tag filter `Target::command` adds.
fn with_filter(t: &Target, args: &[&str], filter: &str) -> Output {
    let mut cmd = crate::support::cmd::solr_dedup();
    cmd.args(args)
        .args(["--solr", &t.core_url])
        .arg(format!("--filter={filter}"));
    if let Some((u, p)) = t.credentials() {
        cmd.env("SOLR_USER", u).env("SOLR_PASSWORD", p);
    }
    cmd.output().unwrap()
}

solr_test!(a_filter_solr_refuses_is_a_usage_error, |t: &Target| {
    t.load(&corpus(20, 23));
    let before = t.docs();
    let tag = format!("test_s:\"{}\"", t.tag);
    // Solr 9 answers 400 SyntaxError to the first two, and 500 java.lang.StackOverflowError to the
    // third, whose parser recursion overflows; none of them is Solr being unreachable (exit 3).
    let unbalanced = format!("({tag}");
    let twice_negated = format!("--{tag}");
    let deep = format!("{}{tag}{}", "(".repeat(10_000), ")".repeat(10_000));
    let cases = [
        (
            &unbalanced,
            r#"--filter "(test_s:\""#,
            "HTTP 400",
            "Cannot parse",
        ),
        (
            &twice_negated,
            r#"--filter "--test_s:\""#,
            "HTTP 400",
            "Cannot parse",
        ),
        (
            &deep,
            r#"--filter "((((((((((("#,
            "HTTP 500",
            "java.lang.StackOverflowError",
        ),
    ];
    for (filter, shown, status, message) in cases {
        for args in [&["run"][..], &["check"][..]] {
            let (code, line) = failed(&with_filter(t, args, filter));
            assert_eq!(code, Some(2), "{args:?}: {line}");
            assert!(line.contains(shown), "{line}");
            assert!(
                line.contains(&format!("Solr refused it ({status})")),
                "{line}"
            );
            assert!(line.contains(message), "{line}");
            assert!(line.len() < 1000, "one short line: {}", line.len());
        }
    }
    assert_eq!(t.docs(), before, "nothing was written");
    if let crate::scenarios::harness::Backend::Fake(fake) = &t.backend {
        // Asked once per command: a refusal is not retried.
        let asked = fake
            .requests()
            .iter()
            .filter(|r| r.param("fq") == Some(deep.as_str()))
            .count();
        assert_eq!(asked, 2);
    }
});

#[test]
fn an_answer_over_the_cap_ends_the_run() {
    let t = Target::fake("answer-cap");
    t.load(&corpus(40, 7));
    let before = t.docs();
    // A schema answer and a page of 40 documents with their texts are each far over 2 KiB.
    for args in [&["run"][..], &["check"][..]] {
        let mut args = args.to_vec();
        args.extend(["--max-response-bytes", "2048", "--retries", "0"]);
        let (code, line) = failed(&t.run(&args));
        assert_eq!(code, Some(3), "{line}");
        assert!(
            line.contains("sent an answer larger than --max-response-bytes 2048; lower --batch-size, or raise --max-response-bytes"),
            "{line}"
        );
        assert!(!line.contains("could not be reached"), "{line}");
    }
    assert_eq!(t.docs(), before, "nothing was written");
    // The default cap takes the same answers.
    let dir = tempfile::tempdir().unwrap();
    t.run_ok(&["run"], dir.path());
}

/// Credentials the configuration cannot resolve fail the run as Solr refusing them would: exit 2,
/// one line, and the run's report says so (not the previous run's outcome).
#[test]
fn credentials_that_cannot_be_resolved_are_in_the_runs_report() {
    let t = Target::fake("half-credentials");
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    /// The environment, the arguments, what the line says.
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a [&'a str], &'a str);
    let cases: [Case; 2] = [
        (
            &[("SOLR_USER", "u")],
            &[],
            "SOLR_USER is set but SOLR_PASSWORD is not",
        ),
        (
            &[],
            &["--auth-file", "/nonexistent/auth"],
            "cannot read the auth file /nonexistent/auth",
        ),
    ];
    for (env, args, says) in cases {
        std::fs::write(&report, "{\"outcome\": \"succeeded\"}\n").unwrap();
        let mut cmd = t.command(&["run", "--quiet", "--report", report.to_str().unwrap()]);
        cmd.args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(err.contains(says), "{err}");
        let r: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        assert_eq!(r["outcome"], "failed", "{r}");
        assert!(r["error"].as_str().unwrap().contains(says), "{r}");
    }
}
