//! `run` and `check` in file mode: updates, reports, filters, field maps, `near table`, `chrome learn`.

use super::*;

const PAGE: &str = "The same article text, served at two addresses of one site.";

fn corpus(name: &str) -> PathBuf {
    let docs = [
        serde_json::json!({"id":"a","sku":"http://example.org/x","text_t":PAGE,"_version_":1}),
        serde_json::json!({"id":"b","sku":"https://www.example.org/x","text_t":PAGE,"_version_":2}),
        serde_json::json!({"id":"c","sku":"https://example.org/other","text_t":"another text entirely","_version_":3}),
    ];
    let text: String = docs.iter().map(|d| format!("{d}\n")).collect();
    temp_file(name, text.as_bytes())
}

#[test]
fn run_writes_updates_and_the_report_and_check_agrees_afterwards() {
    let input = corpus("run-in.jsonl");
    let dir = input.parent().unwrap().to_path_buf();
    let docs_out = dir.join("run-docs.jsonl");
    let _ = std::fs::remove_file(&docs_out);
    let out = run(
        &[
            "run",
            "--input",
            input.to_str().unwrap(),
            "--output",
            docs_out.to_str().unwrap(),
            "--output-format",
            "docs",
            "--report",
            "-",
            "--quiet",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert_eq!(stderr(&out), "", "--quiet prints nothing");
    let report: Value = serde_json::from_str(stdout(&out)).expect("the report is JSON");
    assert_eq!(report["documents"]["read"], 3);
    assert_eq!(report["documents"]["written"], 3);
    assert_eq!(report["dimensions"]["exact"]["groups"], 1);
    assert_eq!(report["dimensions"]["exact"]["doubles"], 1);
    assert!(report["phases_ms"]["scan"].is_number());

    // Before: check fails (exit 1) and names examples; after: it passes (exit 0).
    let before = run(&["check", "--input", input.to_str().unwrap()], b"");
    assert_eq!(before.status.code(), Some(1), "stderr: {}", stderr(&before));
    assert!(stderr(&before).contains("wrong"), "{}", stderr(&before));
    let after = run(&["check", "--input", docs_out.to_str().unwrap()], b"");
    assert_eq!(after.status.code(), Some(0), "stderr: {}", stderr(&after));

    // A second run over the annotated documents writes nothing.
    let updates = dir.join("run-again.jsonl");
    let again = run(
        &[
            "run",
            "--input",
            docs_out.to_str().unwrap(),
            "--output",
            updates.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(again.status.code(), Some(0), "stderr: {}", stderr(&again));
    assert_eq!(std::fs::read_to_string(&updates).unwrap(), "");
}

#[test]
fn run_updates_go_to_stdout_without_output() {
    let input = corpus("run-stdout.jsonl");
    let out = run(&["run", "--input", input.to_str().unwrap(), "--quiet"], b"");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    let b = lines.iter().find(|u| u["id"] == "b").unwrap();
    assert_eq!(
        b["exact_signature_unique_b"]["set"], true,
        "https://www. wins"
    );
    assert_eq!(b["_version_"], 2, "the version read guards the update");
}

#[test]
fn run_and_check_refuse_bad_input_in_one_line() {
    let broken = temp_file(
        "run-broken.jsonl",
        b"{\"id\":\"a\",\"text_t\":\"x\"}\n{\"id\":\n",
    );
    let dir = broken.parent().unwrap().to_path_buf();
    let out_path = dir.join("run-broken-out.jsonl");
    let _ = std::fs::remove_file(&out_path);
    let err = usage_failure(&run(
        &[
            "run",
            "--input",
            broken.to_str().unwrap(),
            "--output",
            out_path.to_str().unwrap(),
        ],
        b"",
    ));
    assert!(err.contains("run-broken.jsonl:2: broken JSON"), "{err}");
    assert!(!out_path.exists(), "nothing written half-way");

    let no_id = temp_file("run-noid.jsonl", b"{\"text_t\":\"x\"}\n");
    let err = usage_failure(&run(&["check", "--input", no_id.to_str().unwrap()], b""));
    assert!(
        err.contains("run-noid.jsonl:1: document has no 'id'"),
        "{err}"
    );

    let input = corpus("run-bad-args.jsonl");
    let err = usage_failure(&run(
        &[
            "run",
            "--input",
            input.to_str().unwrap(),
            "--dimensions",
            "exact,fuzy",
        ],
        b"",
    ));
    assert!(err.contains("unknown dimension 'fuzy'"), "{err}");

    let err = usage_failure(&run(
        &[
            "run",
            "--input",
            input.to_str().unwrap(),
            "--output",
            "/no/such/dir/out.jsonl",
        ],
        b"",
    ));
    assert!(
        err.contains("cannot write the output /no/such/dir/out.jsonl"),
        "{err}"
    );

    let err = usage_failure(&run(
        &["run", "--input", input.to_str().unwrap(), "--report", "-"],
        b"",
    ));
    assert!(err.contains("both go to standard output"), "{err}");

    let err = usage_failure(&run(&["check", "--input", "/no/such/file.jsonl"], b""));
    assert!(err.contains("cannot read /no/such/file.jsonl"), "{err}");
}

#[test]
fn a_filter_nested_too_deeply_is_a_one_line_error() {
    // The parser recursed once per level and overflowed the stack on input like this (exit 134).
    // An argument may be 128 KiB at most on Linux, hence 30,000 negated groups rather than 50,000.
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/corpus.jsonl");
    let parens = format!("{}host_s:x{}", "(".repeat(50_000), ")".repeat(50_000));
    let nots = format!("{}host_s:x{}", "NOT (".repeat(20_000), ")".repeat(20_000));
    for deep in [parens, nots] {
        let err = usage_failure(&run(&["run", "--input", corpus, "--filter", &deep], b""));
        assert!(err.contains("--filter: filter nests too deeply"), "{err}");
    }
}

#[test]
fn file_mode_filters_are_read_as_solr_reads_them() {
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/corpus.jsonl");
    let read = |filter: &str| -> u64 {
        let out = run(
            &[
                "run",
                "--input",
                corpus,
                "--dry-run",
                "--report",
                "-",
                "--filter",
                filter,
            ],
            b"",
        );
        assert_eq!(out.status.code(), Some(0), "{filter}: {}", stderr(&out));
        let report: Value = serde_json::from_slice(&out.stdout).expect("the report is JSON");
        report["documents"]["read"].as_u64().unwrap()
    };
    // The corpus holds 560 documents, doc-000000151 and doc-000000168 among them.
    assert_eq!(read("*:*"), 560);
    assert_eq!(read("-id:doc-000000168"), 559);
    assert_eq!(read("-(id:doc-000000168 OR id:doc-000000151)"), 558);
    assert_eq!(read("id:doc-000000168 OR -id:doc-000000168"), 0);

    // Solr answers 400 to each of these; the first two selected every document before.
    let dashes = format!("{}id:x", "-".repeat(100_000));
    let refused: [(&str, &str); 5] = [
        (
            "--id:x",
            "--filter: unexpected '-' at column 1 of filter \"--id:x\"",
        ),
        (
            &dashes,
            "--filter: unexpected '-' at column 1 of filter \"-----",
        ),
        (
            "(id:doc-000000168",
            "--filter: missing ')' in filter \"(id:doc-000000168\"",
        ),
        (
            "id:doc-000000168)",
            "--filter: unmatched ')' in filter \"id:doc-000000168)\"",
        ),
        (
            "NOT NOT id:x",
            "--filter: unexpected 'NOT' at column 4 of filter \"NOT NOT id:x\"",
        ),
    ];
    for (filter, want) in refused {
        let arg = format!("--filter={filter}");
        let err = usage_failure(&run(&["run", "--input", corpus, "--dry-run", &arg], b""));
        assert!(err.contains(want), "{err}");
        assert!(err.len() < 300, "one short line: {err}");
    }
}

#[test]
fn field_maps_that_give_two_roles_one_field_are_refused() {
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/corpus.jsonl");
    let cases: [(&[&str], &str); 4] = [
        (
            &["run", "--input", corpus, "--field", "exact_signature_l=fuzzy_signature_l"],
            "--field maps exact_signature_l and fuzzy_signature_l to the same field fuzzy_signature_l; each needs a field of its own",
        ),
        (
            &["check", "--input", corpus, "--field", "title=t_s", "--field", "description_txt=t_s"],
            "--field maps title and description_txt to the same field t_s; each needs a field of its own",
        ),
        (
            &["schema", "check", "--solr", "http://127.0.0.1:9/solr/c", "--field", "sku=id"],
            "--field maps id and sku to the same field id; each needs a field of its own",
        ),
        (
            &["urls", "learn", "--input", corpus, "--out", "-", "--field", "near_group_s=id"],
            "--field maps id and near_group_s to the same field id; each needs a field of its own",
        ),
    ];
    for (args, want) in cases {
        let err = usage_failure(&run(args, b""));
        assert_eq!(
            err.trim_end(),
            format!("solr-dedup: error: {want}"),
            "{args:?}"
        );
    }
    // Two roles swapping their fields each keep one of their own.
    let out = run(
        &[
            "run",
            "--input",
            corpus,
            "--dry-run",
            "--field",
            "title=description_txt",
            "--field",
            "description_txt=title",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn near_table_prints_the_formula_and_refuses_impossible_parameters() {
    // T = 6, A = 2, H = 14, J = 0.9: 1 - (1-p)^6 - 6p(1-p)^5 with p = 0.9^14 = 0.2288 is 41.5 %.
    let out = run(
        &["near", "table", "--hashes", "14", "--overlap", "0.9", "1"],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("| 90 % | 41.5 % |"), "{text}");
    assert!(text.contains("| 100 % | 100.0 % |"), "{text}");
    let out = run(&["near", "table", "--agree", "7"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert!(stderr(&out).contains("--agree 7 is more than --trials 6"));
}

#[test]
fn chrome_learn_writes_a_model_in_file_mode_and_bad_models_are_refused_in_one_line() {
    let input = corpus("chrome-corpus.jsonl");
    let input = input.to_str().unwrap();
    // example.org has two pages and www.example.org one: one site of three pages. Two are the same
    // text (PAGE), whose lines are on two of three pages but never beside other lines: copies, not
    // a template. So no line is chrome.
    let out = run(
        &[
            "chrome",
            "learn",
            "--input",
            input,
            "--out",
            "-",
            "--min-pages",
            "2",
            "--share",
            "0.5",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let model: Value = serde_json::from_str(stdout(&out)).unwrap();
    assert_eq!(model["hosts"]["example.org"]["sample"], 3, "{model}");
    assert_eq!(
        model["hosts"]["example.org"]["names"],
        serde_json::json!(["example.org", "www.example.org"])
    );
    assert_eq!(
        model["hosts"]["example.org"]["lines"],
        serde_json::json!([])
    );
    assert_eq!(model["hosts"]["example.org"]["model"], "none");
    assert_eq!(
        model["skipped"],
        serde_json::json!({"hosts": 0, "pages": 0})
    );
    assert!(
        stderr(&out).contains("chrome model: 0 of 1 hosts with chrome"),
        "{}",
        stderr(&out)
    );

    // A run with it signs as without one (no host has chrome).
    let path = temp_file("chrome-model.json", stdout(&out).as_bytes());
    let path = path.to_str().unwrap();
    let with = run(&["run", "--input", input, "--chrome", path], b"");
    let without = run(&["run", "--input", input], b"");
    assert_eq!(with.status.code(), Some(0), "{}", stderr(&with));
    assert_eq!(stdout(&with), stdout(&without));

    let broken = temp_file("chrome-broken.json", b"{\"hosts\": ");
    let err = usage_failure(&run(
        &[
            "run",
            "--input",
            input,
            "--chrome",
            broken.to_str().unwrap(),
        ],
        b"",
    ));
    assert!(
        err.contains("not a chrome model") && err.contains("chrome learn"),
        "{err}"
    );
    // Template lines do not depend on the shingle length: any --near-shingle can use a model.
    let other = run(
        &[
            "run",
            "--input",
            input,
            "--chrome",
            path,
            "--near-shingle",
            "3",
        ],
        b"",
    );
    assert_eq!(other.status.code(), Some(0), "{}", stderr(&other));
    // A model of format 1 (shingles, before issue 29): refused in one line that says what to do.
    let old = temp_file(
        "chrome-format-1.json",
        br#"{"chrome_model": 1, "near_definition": 1, "shingle": 2, "share": 0.05, "sample": 200,
            "min_pages": 50, "hosts": {}, "skipped": {"hosts": 0, "pages": 0}}"#,
    );
    let err = usage_failure(&run(
        &["run", "--input", input, "--chrome", old.to_str().unwrap()],
        b"",
    ));
    assert!(
        err.contains("chrome model format 1") && err.contains("learn the model again"),
        "{err}"
    );
    let err = usage_failure(&run(
        &[
            "run",
            "--input",
            input,
            "--chrome",
            path,
            "--dimensions",
            "exact",
        ],
        b"",
    ));
    assert!(err.contains("--chrome is for the near dimension"), "{err}");
    let err = usage_failure(&run(
        &["run", "--input", input, "--chrome", "/nonexistent/c.json"],
        b"",
    ));
    assert!(err.contains("cannot read the chrome model"), "{err}");
    let err = usage_failure(&run(&["chrome", "learn", "--out", "-"], b""));
    assert!(err.contains("no documents to learn from"), "{err}");
}
