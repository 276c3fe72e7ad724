//! The `solr-dedup` binary as a user runs it: output, exit codes and one-line errors.
//!
//! Expected signatures are the vectors of `signatures.md`, never values produced by this code.

use std::path::PathBuf;
use std::process::{Output, Stdio};

use serde_json::Value;

// `run(args, stdin)`: the binary fed `stdin`.
use crate::support::cmd::{error_line, run_with_stdin as run, solr_dedup, stderr, stdout};

const LOREM: &str = "Lorem ipsum dolor sit amet, lorem ipsum dolor sit amet. Lorem ipsum! Dolor dolor dolor, amet amet.";
const APPLE: &str =
    "Apple banana apple cherry banana apple. APPLE Banana cherry! date date date date elderberry";
const CAT: &str = "The cat sat on the mat. The cat ate the rat. The dog chased the cat; the cat ran away from the dog.";

/// lookup3ycs64 of the empty string, `0xdeadbeeedeadbeef`.
const EMPTY_YACY: i64 = -2401053093171183889;

/// A file under cargo's scratch directory for integration tests; every test uses its own name, and a
/// later run overwrites it rather than piling up copies.
fn temp_file(name: &str, contents: &[u8]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

/// The one JSON object a successful single-text run prints.
fn json(output: &Output) -> Value {
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(output));
    let out = stdout(output);
    assert_eq!(out.lines().count(), 1, "one line: {out:?}");
    serde_json::from_str(out).expect("stdout is JSON")
}

/// Checks a failed run: exit code 2, one `solr-dedup: error:` line on stderr and no backtrace.
fn usage_failure(output: &Output) -> String {
    let err = usage_failure_allowing_stdout(output);
    assert!(!err.contains("backtrace"), "{err:?}");
    err
}

#[test]
fn hello_world_from_a_file() {
    let path = temp_file("hello.txt", b"hello world");
    let v = json(&run(&["signature", path.to_str().unwrap()], b""));
    assert_eq!(v["exact_l"], -6533976092579615214i64);
    assert_eq!(v["title_l"], -6533976092579615214i64);
    assert_eq!(v["scheme"], "yacy");
}

#[test]
fn hello_world_from_stdin() {
    let v = json(&run(&["signature", "-"], b"hello world"));
    assert_eq!(v["exact_l"], -6533976092579615214i64);
}

#[test]
fn the_output_has_every_field_with_integers() {
    let v = json(&run(&["signature", "-"], b"hello world"));
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "exact_l",
            "fuzzy_l",
            "near_keys_l",
            "near_trials_l",
            "near_version",
            "profile",
            "scheme",
            "text_t",
            "title_l"
        ]
    );
    assert!(v["exact_l"].is_i64() && v["fuzzy_l"].is_i64() && v["title_l"].is_i64());
}

#[test]
fn the_near_values_are_the_independent_vectors() {
    // tests/fixtures/near-v1.jsonl, first line: from the Python implementation of the definition.
    let v = json(&run(
        &["signature", "-"],
        b"The quick brown fox jumps over the lazy dog.",
    ));
    assert_eq!(v["near_version"], "near1-n2-h14-t6-a2");
    assert_eq!(
        v["near_trials_l"],
        serde_json::json!([
            5511663540329050835i64,
            2393099931158783288i64,
            -8399254934424994340i64,
            -7987970893214048801i64,
            -3536812267951670493i64,
            -93841171739931518i64
        ])
    );
    assert_eq!(v["near_keys_l"].as_array().map(Vec::len), Some(15));
    let blank = json(&run(&["signature", "-"], b" -- "));
    assert!(blank["near_trials_l"].is_null() && blank["near_keys_l"].is_null());
}

#[test]
fn yacy_fuzzy_vectors() {
    let v = json(&run(&["signature", "-"], LOREM.as_bytes()));
    assert_eq!(v["fuzzy_l"], 895551812756359877i64);
    assert_eq!(v["profile"], "(dolor-3) (amet-3) (lorem-3) (ipsum-3)");
    assert_eq!(
        v["text_t"],
        "(dolor-5-3) (amet-4-3) (lorem-3-3) (ipsum-3-3)"
    );

    let v = json(&run(
        &["signature", "--scheme", "yacy", "-"],
        APPLE.as_bytes(),
    ));
    assert_eq!(v["profile"], "(date-4) (apple-4) (banana-2) (cherry-2)");
    assert_eq!(v["fuzzy_l"], 4761585746979352620i64);
}

#[test]
fn non_ascii_text_from_a_file() {
    let path = temp_file("koeln.txt", "Grüße aus Köln".as_bytes());
    let v = json(&run(&["signature", path.to_str().unwrap()], b""));
    assert_eq!(v["exact_l"], 4742056712392629552i64);
}

#[test]
fn md5_scheme_uses_solrs_profile_and_its_defaults() {
    let v = json(&run(&["signature", "--scheme", "md5", "-"], CAT.as_bytes()));
    assert_eq!(v["scheme"], "md5");
    assert_eq!(v["profile"], "the 8\ncat 4\ndog 2");
    // MD5 hex 9f84dda4092864e7e421444a9e405efc: the first 8 bytes as a signed long.
    assert_eq!(v["fuzzy_l"], 0x9f84_dda4_0928_64e7_u64 as i64);
    assert_eq!(v["text_t"], Value::Null);
}

#[test]
fn md5_of_an_empty_text() {
    let v = json(&run(&["signature", "--scheme", "md5", "-"], b""));
    // MD5("") = d41d8cd98f00b204e9800998ecf8427e.
    let empty = 0xd41d_8cd9_8f00_b204_u64 as i64;
    assert_eq!(v["exact_l"], empty);
    assert_eq!(v["fuzzy_l"], empty);
    assert_eq!(v["title_l"], empty);
    assert_eq!(v["profile"], "");
}

#[test]
fn tunables_change_the_profile() {
    // With min_token_len 2, "sit" (3 units) counts: `sit` appears twice, like md5's vector shows.
    let v = json(&run(
        &[
            "signature",
            "--min-token-len",
            "2",
            "--quant-rate",
            "0.01",
            "-",
        ],
        LOREM.as_bytes(),
    ));
    assert_eq!(
        v["profile"],
        "(dolor-4) (amet-4) (lorem-2) (ipsum-2) (sit-2)"
    );
}

#[test]
fn an_empty_profile_has_no_text_t() {
    let v = json(&run(&["signature", "-"], b""));
    assert_eq!(v["exact_l"], EMPTY_YACY);
    assert_eq!(v["fuzzy_l"], EMPTY_YACY);
    assert_eq!(v["profile"], "");
    assert_eq!(v["text_t"], Value::Null);
}

#[test]
fn the_title_is_the_first_line_without_crlf() {
    let text = b"hello world\r\nThe quick brown fox jumps over the lazy dog";
    let v = json(&run(&["signature", "-"], text));
    assert_eq!(v["title_l"], -6533976092579615214i64);
    assert_ne!(v["exact_l"], v["title_l"]);
    let v = json(&run(
        &["signature", "-"],
        b"The quick brown fox jumps over the lazy dog\nhello",
    ));
    assert_eq!(v["title_l"], 4976671508721419908i64);
}

#[test]
fn batch_signs_each_line_and_echoes_ids() {
    let input = format!(
        "{}\n{}\n\n{}\n",
        r#"{"id":"doc-1","text":"hello world"}"#,
        serde_json::json!({"id": 2, "text": LOREM}),
        r#"{"id":"doc-3","text":"","url":"http://example.org/"}"#,
    );
    let path = temp_file("docs.jsonl", input.as_bytes());
    for args in [
        vec!["signature", "--batch", path.to_str().unwrap()],
        vec!["signature", "--batch", "-"],
    ] {
        let output = run(&args, input.as_bytes());
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let lines: Vec<Value> = stdout(&output)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0]["id"], "doc-1");
        assert_eq!(lines[0]["exact_l"], -6533976092579615214i64);
        assert_eq!(lines[1]["id"], 2);
        assert_eq!(lines[1]["fuzzy_l"], 895551812756359877i64);
        assert_eq!(lines[2]["id"], "doc-3");
        assert_eq!(lines[2]["exact_l"], EMPTY_YACY);
        assert_eq!(lines[2]["text_t"], Value::Null);
        assert!(stdout(&output).starts_with(r#"{"id":"doc-1","exact_l":"#));
    }
}

#[test]
fn a_broken_batch_line_names_its_line_and_keeps_earlier_output() {
    let input = concat!(
        r#"{"id":"doc-1","text":"hello world"}"#,
        "\n",
        r#"{"id":"doc-2","txt":"typo"}"#,
        "\n",
        r#"{"id":"doc-3","text":"never signed"}"#,
        "\n",
    );
    let path = temp_file("broken.jsonl", input.as_bytes());
    let output = run(&["signature", "--batch", path.to_str().unwrap()], b"");
    let err = usage_failure_allowing_stdout(&output);
    assert!(err.contains("broken.jsonl:2: "), "{err:?}");
    assert!(err.contains("text"), "{err:?}");
    let out = stdout(&output);
    assert_eq!(out.lines().count(), 1, "{out:?}");
    assert!(out.starts_with(r#"{"id":"doc-1","#), "{out:?}");
}

/// Like [`usage_failure`], for batch runs that may have written earlier lines.
fn usage_failure_allowing_stdout(output: &Output) -> String {
    assert_eq!(output.status.code(), Some(2), "stderr: {}", stderr(output));
    error_line(output);
    stderr(output).to_owned()
}

#[test]
fn a_missing_file_is_a_one_line_error() {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-such-file.txt");
    let output = run(&["signature", path.to_str().unwrap()], b"");
    let err = usage_failure(&output);
    assert!(err.contains("cannot read"), "{err:?}");
    assert!(err.contains("no-such-file.txt"), "{err:?}");
    assert!(stdout(&output).is_empty());
}

#[test]
fn text_that_is_not_utf8_is_refused_naming_the_file() {
    let path = temp_file("latin1.txt", b"Gr\xfc\xdfe aus K\xf6ln");
    let output = run(&["signature", path.to_str().unwrap()], b"");
    let err = usage_failure(&output);
    assert!(err.contains("latin1.txt"), "{err:?}");
    assert!(err.contains("UTF-8"), "{err:?}");
    assert!(stdout(&output).is_empty());
}

#[test]
fn usage_errors_exit_2_on_one_line() {
    for args in [
        &["signature", "--scheme", "sha1", "-"][..],
        &["signature", "--quant-rate", "nan", "-"],
        &["signature", "--quant-rate", "-0.5", "-"],
        &["signature"],
        &["no-such-command"],
        &[],
    ] {
        let output = run(args, b"hello");
        usage_failure(&output);
        assert!(stdout(&output).is_empty(), "{args:?}");
    }
    let err = usage_failure(&run(&["signature", "--scheme", "sha1", "-"], b""));
    assert!(err.contains("sha1") && err.contains("yacy"), "{err:?}");
}

#[test]
fn help_teaches_with_examples() {
    for args in [&["--help"][..], &["signature", "--help"]] {
        let output = run(args, b"");
        assert_eq!(output.status.code(), Some(0));
        let help = stdout(&output);
        assert!(help.contains("Examples:"), "{help}");
        assert!(help.contains("solr-dedup signature page.txt"), "{help}");
    }
}

#[test]
fn every_command_help_lists_its_exit_codes() {
    for command in [
        &["run"][..],
        &["check"],
        &["serve"],
        &["signature"],
        &["schema", "check"],
        &["schema", "apply"],
        &["near", "table"],
        &["urls", "learn"],
        &["urls", "predict"],
        &["urls", "canonical"],
        &["urls", "export"],
        &["chrome", "learn"],
    ] {
        let args: Vec<&str> = command.iter().copied().chain(["--help"]).collect();
        let output = run(&args, b"");
        assert_eq!(output.status.code(), Some(0), "{args:?}");
        // clap wraps the text to the terminal's width: compare it as words.
        let help = stdout(&output)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let codes = help
            .split("Exit codes: ")
            .nth(1)
            .unwrap_or_else(|| panic!("{args:?} --help lists no exit codes:\n{help}"));
        assert!(codes.starts_with("0 "), "{args:?}: {codes}");
        assert!(codes.contains("; 2 "), "{args:?}: {codes}");
    }
    // run and check can also be unreachable and interrupted.
    for command in ["run", "check"] {
        let help = stdout(&run(&[command, "--help"], b""))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            help.contains("3 Solr unreachable") && help.contains("130 or 143"),
            "{command}: {help}"
        );
    }
}

#[test]
fn logs_carry_no_colour_codes_when_stderr_is_not_a_terminal() {
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/corpus.jsonl");
    // -v: the corpus has documents with two descriptions, which the reader notes at INFO.
    let output = run(&["run", "--input", corpus, "--dry-run", "-v"], b"");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(err.contains(" INFO "), "{err}");
    assert!(
        !err.contains('\u{1b}'),
        "ANSI codes in a piped log: {err:?}"
    );
}

#[test]
fn serve_help_lists_only_what_serve_takes() {
    let output = run(&["serve", "--help"], b"");
    let help = stdout(&output);
    for absent in ["--report", "--quiet", "-q,"] {
        assert!(
            !help.contains(absent),
            "serve --help lists {absent}:\n{help}"
        );
    }
    for present in ["--output", "--rules", "--listen", "--verbose"] {
        assert!(help.contains(present), "serve --help lacks {present}");
    }
    // And refuses them as clap refuses any unknown option.
    let output = run(&["serve", "--input", "x.jsonl", "--report", "r.json"], b"");
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--report"), "{}", stderr(&output));
    // run and check still take them.
    for command in ["run", "check"] {
        let help = stdout(&run(&[command, "--help"], b"")).to_owned();
        assert!(
            help.contains("--report") && help.contains("--quiet"),
            "{command}"
        );
    }
}

#[test]
fn a_closed_stdout_is_not_an_error() {
    // Far more output than a pipe buffers, so the binary is still writing when the reader goes away.
    let mut input = String::new();
    for i in 0..20_000 {
        input.push_str(&serde_json::json!({"id": i, "text": LOREM}).to_string());
        input.push('\n');
    }
    let path = temp_file("many.jsonl", input.as_bytes());
    let mut child = solr_dedup()
        .args(["signature", "--batch", path.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(output.stderr.is_empty(), "{}", stderr(&output));
}

// ------------------------------------------------------------------ run and check

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

// ------------------------------------------------------------------ urls learn|predict|canonical|export

/// Five products of one shop, each text on a subject of its own (no two share a word run).
const ITEMS: [&str; 5] = [
    "Handmade oak chair with a woven seat and tapered legs for dining rooms",
    "Stainless kettle boiling water quickly on gas, induction and electric hobs",
    "Wool blanket knitted in the highlands keeps sleepers warm through winter nights",
    "Ceramic teapot glazed deep blue, holding six cups of loose leaf tea",
    "Cast iron skillet seasoned and ready for searing steaks and baking cornbread",
];

/// The second page of each product's reviews: other text than the product page.
const REVIEWS: [&str; 5] = [
    "Second page of chair reviews: sturdy joints, comfortable after long dinners",
    "More kettle reviews praise the whistle but complain about a hot handle",
    "Further blanket reviews note that the itchiness fades after the first wash",
    "Later teapot reviews describe drips from the spout when pouring fast",
    "Other skillet reviews warn that soap strips the seasoning layer away",
];

/// The shop corpus, 30 documents. For each product `i` of 0..5:
///
/// | id          | URL                                     | text         |
/// |-------------|-----------------------------------------|--------------|
/// | `pI`        | `https://shop.example/item/I`           | `ITEMS[i]`   |
/// | `pI-http`   | `http://shop.example/item/I`            | `ITEMS[i]`   |
/// | `pI-www`    | `https://www.shop.example/item/I`       | `ITEMS[i]`   |
/// | `pI-sa`     | `https://shop.example/item/I?sid=aI`    | `ITEMS[i]`   |
/// | `pI-sb`     | `https://shop.example/item/I?sid=bI`    | `ITEMS[i]`   |
/// | `pI-page2`  | `https://shop.example/item/I?page=2`    | `REVIEWS[i]` |
fn shop_corpus(name: &str) -> PathBuf {
    let mut text = String::new();
    for i in 0..5 {
        for (id, url, body) in [
            (
                format!("p{i}"),
                format!("https://shop.example/item/{i}"),
                ITEMS[i],
            ),
            (
                format!("p{i}-http"),
                format!("http://shop.example/item/{i}"),
                ITEMS[i],
            ),
            (
                format!("p{i}-www"),
                format!("https://www.shop.example/item/{i}"),
                ITEMS[i],
            ),
            (
                format!("p{i}-sa"),
                format!("https://shop.example/item/{i}?sid=a{i}"),
                ITEMS[i],
            ),
            (
                format!("p{i}-sb"),
                format!("https://shop.example/item/{i}?sid=b{i}"),
                ITEMS[i],
            ),
            (
                format!("p{i}-page2"),
                format!("https://shop.example/item/{i}?page=2"),
                REVIEWS[i],
            ),
        ] {
            text.push_str(&serde_json::json!({"id": id, "sku": url, "text_t": body}).to_string());
            text.push('\n');
        }
    }
    temp_file(name, text.as_bytes())
}

/// Wilson's lower bound at 95 % when every pair agrees is n / (n + z²), z² = 1.96² = 3.8415 (by hand):
/// 5 pairs give 5 / 8.8415 = 0.56552, 10 pairs 10 / 13.8415 = 0.72247.
const ALL_OF_5: f64 = 0.56552;
const ALL_OF_10: f64 = 0.72247;

fn close(got: &Value, want: f64) -> bool {
    got.as_f64().is_some_and(|g| (g - want).abs() < 1e-4)
}

/// `urls learn --input CORPUS --out RULES` on the shop corpus; returns the corpus and the rules file.
fn shop_rules(name: &str) -> (PathBuf, PathBuf) {
    let input = shop_corpus(&format!("{name}-corpus.jsonl"));
    let rules = input.with_file_name(format!("{name}-rules.json"));
    let _ = std::fs::remove_file(&rules);
    let out = run(
        &[
            "urls",
            "learn",
            "--input",
            input.to_str().unwrap(),
            "--out",
            rules.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    (input, rules)
}

/// Standard output as JSON lines.
fn json_lines(output: &Output) -> Vec<Value> {
    stdout(output)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
        .collect()
}

/// Like [`run`], with standard input closed (the helper never passes `SOLR_URL` on, so "no index
/// given" is what it says).
fn run_without_solr_url(args: &[&str]) -> Output {
    crate::support::cmd::run(args)
}
#[test]
fn urls_learn_counts_the_evidence_of_a_hand_made_corpus() {
    let (input, rules_path) = shop_rules("urls-learn");
    let text = std::fs::read_to_string(&rules_path).unwrap();
    let rules: Value = serde_json::from_str(&text).unwrap();
    // Counted by hand, per product (5 products), each URL against the URL without one part:
    // - pI-http → https://shop.example/item/I = pI, same text: 1 scheme pair, support; 5 in all.
    // - pI-www → the bare host = pI, same text: 1 www pair, support; 5 in all.
    // - pI-sa, pI-sb → without sid = pI, same text: 2 sid pairs, support; 10 in all.
    // - pI-page2 → without page = pI, other text: 1 page pair, against; 5 in all.
    // - dropping the last segment (`/item/`) never gives an indexed URL: no default document.
    // The rules under /item/ hold the same pairs as the site's (page 0 of 5, sid 10 of 10: left
    // out), `page=2` never applies (left out), each sid value has one pair (under 5: no rule). One
    // site: nothing pooled over sites.
    assert_eq!(rules["url_rules"], 1, "{text}");
    assert_eq!(rules["min_estimate"], 0.5, "{text}");
    let sites: Vec<&String> = rules["sites"].as_object().unwrap().keys().collect();
    assert_eq!(sites, ["shop.example"], "{text}");
    let shop = rules["sites"]["shop.example"].as_object().unwrap();
    let mut keys: Vec<&str> = shop.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["pages", "params", "scheme", "spelling", "www"],
        "{text}"
    );
    assert_eq!(shop["pages"], 30);
    // Per product: https for all but pI-http, the bare host for all but pI-www; one pair at most
    // in a query, so no parameter order.
    assert_eq!(
        shop["spelling"],
        serde_json::json!({"https": 25, "http": 5, "www": 5, "bare": 25}),
        "{text}"
    );
    for part in ["scheme", "www"] {
        assert_eq!(shop[part]["support"], 5, "{part}: {text}");
        assert_eq!(shop[part]["against"], 0, "{part}: {text}");
        assert!(close(&shop[part]["estimate"], ALL_OF_5), "{part}: {text}");
    }
    let params = shop["params"].as_array().unwrap();
    assert_eq!(params.len(), 2, "{text}");
    let param = |name: &str| {
        params
            .iter()
            .find(|p| p["param"] == name)
            .unwrap_or_else(|| panic!("no {name} rule: {text}"))
    };
    let sid = param("sid");
    assert_eq!(sid["path_prefix"], "/");
    assert!(sid.get("value").is_none(), "any value: {sid}");
    assert_eq!(
        (&sid["evidence"]["support"], &sid["evidence"]["against"]),
        (&serde_json::json!(10), &serde_json::json!(0))
    );
    assert!(close(&sid["evidence"]["estimate"], ALL_OF_10), "{sid}");
    let page = param("page");
    assert_eq!(page["path_prefix"], "/");
    assert_eq!(
        page["evidence"],
        serde_json::json!({"support": 0, "against": 5, "estimate": 0.0})
    );

    // The summary: 30 pages; 5 + 5 + 10 + 5 = 25 pairs; candidates met: scheme, www, sid and page
    // on the site and under /item/ (4), sid at each of its 10 values on the site and under /item/
    // (20), page=2 on the site and under /item/ (2): 28.
    let out = run(
        &[
            "urls",
            "learn",
            "--input",
            input.to_str().unwrap(),
            "--out",
            "-",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        text,
        "the same rules on stdout as in the file"
    );
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "one line: {err:?}");
    assert!(
        err.contains("30 pages of 1 sites, 25 pairs compared, 28 candidates"),
        "{err}"
    );
    assert!(err.contains("signed now 30"), "{err}");
    assert!(err.contains("written to standard output"), "{err}");

    // --min-estimate 0.6: the same evidence, written with the other threshold.
    let out = run(
        &[
            "urls",
            "learn",
            "--input",
            input.to_str().unwrap(),
            "--out",
            "-",
            "--min-estimate",
            "0.6",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let strict: Value = serde_json::from_str(stdout(&out)).unwrap();
    assert_eq!(strict["min_estimate"], 0.6);
    assert_eq!(strict["sites"], rules["sites"]);
}

#[test]
fn urls_predict_names_the_indexed_page_a_url_duplicates() {
    let (input, rules) = shop_rules("urls-predict");
    let out = run(
        &[
            "urls",
            "predict",
            "--rules",
            rules.to_str().unwrap(),
            "--input",
            input.to_str().unwrap(),
            "http://www.shop.example/item/2?sid=zz",
            "https://www.shop.example/item/3?page=2",
            "https://shop.example/item/3?page=3",
            "https://shop.example/item/99",
            "https://shop.example/item/0",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 5, "{}", stdout(&out));
    let page = |id: &str, url: &str| serde_json::json!({"id": id, "url": url});

    // scheme, www and sid rewrite it to p2's URL, which no rule rewrites: 0.5655 × 0.5655 × 0.7225.
    let p = &lines[0];
    assert_eq!(p["url"], "http://www.shop.example/item/2?sid=zz");
    assert_eq!(p["canonical"], "https://shop.example/item/2");
    assert_eq!(
        p["rules"],
        serde_json::json!(["scheme", "www", "param sid"])
    );
    assert_eq!(
        p["duplicate_of"],
        page("p2", "https://shop.example/item/2"),
        "the page with the URL no rule had to rewrite, not its http/www/sid copies"
    );
    assert!(
        close(&p["probability"], ALL_OF_5 * ALL_OF_5 * ALL_OF_10),
        "{p}"
    );

    // page matters (0 of 5): kept; www rewrites the host; the indexed page=2 page is named.
    let p = &lines[1];
    assert_eq!(p["canonical"], "https://shop.example/item/3?page=2");
    assert_eq!(p["rules"], serde_json::json!(["www"]));
    assert_eq!(
        p["duplicate_of"],
        page("p3-page2", "https://shop.example/item/3?page=2")
    );
    assert!(close(&p["probability"], ALL_OF_5), "{p}");

    // No indexed page has these forms: new, probability 0.
    for (p, canonical) in [
        (&lines[2], "https://shop.example/item/3?page=3"),
        (&lines[3], "https://shop.example/item/99"),
    ] {
        assert_eq!(p["canonical"], canonical);
        assert_eq!(p["probability"], 0.0, "{p}");
        assert_eq!(p["duplicate_of"], Value::Null, "{p}");
        assert_eq!(p["rules"], serde_json::json!([]), "{p}");
    }

    // An indexed URL itself: certain, no rule.
    let p = &lines[4];
    assert_eq!(p["duplicate_of"], page("p0", "https://shop.example/item/0"));
    assert_eq!(p["probability"], 1.0);
    assert_eq!(
        p.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["canonical", "duplicate_of", "probability", "rules", "url"]
    );
}

#[test]
fn urls_predict_answers_the_rest_of_a_batch_around_bad_urls() {
    let (input, rules) = shop_rules("urls-predict-bad");
    let batch = "http://www.shop.example/item/2?sid=zz\n\
                 not a url\n\
                 mailto:orders@shop.example\n\
                 \n\
                 ftp://shop.example/item/1\n\
                 http://\n\
                 https://shop.example/item/99\n";
    let out = run(
        &[
            "urls",
            "predict",
            "--rules",
            rules.to_str().unwrap(),
            "--input",
            input.to_str().unwrap(),
            "-",
        ],
        batch.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "one line: {err:?}");
    assert!(err.contains("4 URLs had no canonical form"), "{err}");
    // One line per URL, in order; the blank line is skipped.
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 6, "{}", stdout(&out));
    assert_eq!(lines[0]["duplicate_of"]["id"], "p2", "{}", lines[0]);
    for (line, url, why) in [
        (&lines[1], "not a url", "not a URL"),
        (
            &lines[2],
            "mailto:orders@shop.example",
            "not an http(s) URL",
        ),
        (&lines[3], "ftp://shop.example/item/1", "not an http(s) URL"),
        (&lines[4], "http://", "not a URL"),
    ] {
        assert_eq!(line["url"], url, "{line}");
        assert!(
            line["error"].as_str().is_some_and(|e| e.contains(why)),
            "{line}"
        );
        assert_eq!(line.as_object().unwrap().len(), 2, "url and error: {line}");
    }
    assert_eq!(lines[5]["url"], "https://shop.example/item/99");
    assert_eq!(lines[5]["duplicate_of"], Value::Null);
}

#[test]
fn urls_predict_against_an_empty_index_answers_every_url_as_new() {
    let (_, rules) = shop_rules("urls-predict-empty");
    let empty = temp_file("urls-empty-index.jsonl", b"");
    let out = run(
        &[
            "urls",
            "predict",
            "--rules",
            rules.to_str().unwrap(),
            "--input",
            empty.to_str().unwrap(),
            "http://www.shop.example/item/2?sid=zz",
            "https://shop.example/item/0",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "one line: {err:?}");
    assert!(err.contains("the index holds no page"), "{err}");
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 2, "{}", stdout(&out));
    // The rules still rewrite the URL; with no page of that form it is new.
    assert_eq!(lines[0]["canonical"], "https://shop.example/item/2");
    assert_eq!(
        lines[0]["rules"],
        serde_json::json!(["scheme", "www", "param sid"])
    );
    for line in &lines {
        assert_eq!(line["probability"], 0.0, "{line}");
        assert_eq!(line["duplicate_of"], Value::Null, "{line}");
    }
}

#[test]
fn urls_canonical_prints_one_line_per_url() {
    let (_, rules) = shop_rules("urls-canonical");
    let rules = rules.to_str().unwrap();
    // With the rules learned above (scheme, www, sid apply; page does not): host case and scheme
    // and www and sid; another site has no rules (nothing pooled); page stays.
    let batch = "HTTP://WWW.Shop.Example/item/7?sid=q&x=1\n\
                 not a url\n\
                 \n\
                 https://other.example/a?sid=1\n\
                 mailto:orders@shop.example\n\
                 https://shop.example/item/1?page=2&sid=x#reviews\n";
    let out = run(
        &["urls", "canonical", "--rules", rules, "-"],
        batch.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "https://shop.example/item/7?x=1\n\
         \n\
         https://other.example/a?sid=1\n\
         \n\
         https://shop.example/item/1?page=2\n",
        "one line per URL (the blank input line skipped), an empty one for each bad URL"
    );
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 2, "one line per bad URL: {err:?}");
    assert!(err.lines().next().unwrap().contains("not a URL"), "{err}");
    assert!(err.contains("not an http(s) URL"), "{err}");

    let out = run(
        &[
            "urls",
            "canonical",
            "--rules",
            rules,
            "http://shop.example/item/4",
            "https://www.shop.example/",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "https://shop.example/item/4\nhttps://shop.example/\n"
    );
    assert_eq!(stderr(&out), "");
}

/// The `(pattern, substitution)` of each `<regex>` of a `regex-normalize.xml`, after checking that
/// it has the shape Nutch reads. Comments are left out before parsing: whether they are well-formed
/// is [`urls_export_is_well_formed_xml`]'s business.
fn nutch_regexes(xml: &str) -> Vec<(String, String)> {
    let mut plain = String::new();
    let mut rest = xml;
    while let Some(start) = rest.find("<!--") {
        plain.push_str(&rest[..start]);
        let end = rest[start..].find("-->").expect("comments end") + start + 3;
        rest = &rest[end..];
    }
    plain.push_str(rest);
    let doc = roxmltree::Document::parse(&plain).unwrap_or_else(|e| panic!("{e}: {xml}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "regex-normalize", "{xml}");
    root.children()
        .filter(|n| n.is_element())
        .map(|n| {
            assert_eq!(n.tag_name().name(), "regex", "{xml}");
            let text = |tag: &str| {
                n.children()
                    .find(|c| c.has_tag_name(tag))
                    .unwrap_or_else(|| panic!("no {tag}: {xml}"))
                    .text()
                    .unwrap_or("")
                    .to_owned()
            };
            (text("pattern"), text("substitution"))
        })
        .collect()
}

#[test]
fn urls_export_writes_nutch_regexes_for_the_rules_that_apply() {
    let (_, rules) = shop_rules("urls-export");
    let rules = rules.to_str().unwrap();
    let out = run(
        &["urls", "export", "--rules", rules, "--format", "nutch"],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let xml = stdout(&out).to_owned();
    assert!(xml.starts_with("<?xml"), "{xml}");
    // nutch is the default format.
    let default = run(&["urls", "export", "--rules", rules], b"");
    assert_eq!(default.status.code(), Some(0), "{}", stderr(&default));
    assert_eq!(stdout(&default), xml);
    let regexes = nutch_regexes(&xml);
    // scheme, www and sid apply (page does not): three rules and the two clean-ups of the query.
    assert_eq!(regexes.len(), 5, "{xml}");
    assert!(
        regexes
            .iter()
            .any(|(p, s)| p.contains("www\\.") && p.contains("shop\\.example") && s == "$1$2"),
        "a regex for the www rule: {xml}"
    );
    // The evidence in comments; the page rule (0 of 5) is not exported.
    assert!(xml.contains("shop.example: scheme (5 of 5)"), "{xml}");
    assert!(xml.contains("shop.example: www (5 of 5)"), "{xml}");
    assert!(xml.contains("shop.example: param sid (10 of 10)"), "{xml}");
    assert!(!xml.contains("param page"), "{xml}");

    // Applied in order with replaceAll, as Nutch does, they rewrite as the canonical form does
    // (the host is lower-case already: Nutch's basic normaliser does that before).
    let apply = |url: &str| {
        regexes.iter().fold(url.to_owned(), |u, (p, s)| {
            let re = fancy_regex::Regex::new(p).unwrap_or_else(|e| panic!("{p}: {e}"));
            re.replace_all(&u, s.as_str()).into_owned()
        })
    };
    for (url, want) in [
        (
            "http://www.shop.example/item/2?sid=zz",
            "https://shop.example/item/2",
        ),
        (
            "http://www.shop.example/item/2?sid=zz&x=1",
            "https://shop.example/item/2?x=1",
        ),
        (
            "https://shop.example/item/1?page=2&sid=x",
            "https://shop.example/item/1?page=2",
        ),
        (
            "https://www.shop.example/item/3?page=2",
            "https://shop.example/item/3?page=2",
        ),
        (
            "https://other.example/a?sid=1",
            "https://other.example/a?sid=1",
        ),
    ] {
        assert_eq!(apply(url), want, "{url}");
        let c = run(&["urls", "canonical", "--rules", rules, url], b"");
        assert_eq!(stdout(&c), format!("{want}\n"), "{url}");
    }

    // --out writes the same file; --min-estimate 0.7 keeps only sid (0.7225; scheme and www 0.5655).
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("cli")
        .join("urls-export.xml");
    let _ = std::fs::remove_file(&path);
    let out = run(
        &[
            "urls",
            "export",
            "--rules",
            rules,
            "--format",
            "nutch",
            "--out",
            path.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).is_empty());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), xml);
    let out = run(
        &[
            "urls",
            "export",
            "--rules",
            rules,
            "--format",
            "nutch",
            "--min-estimate",
            "0.7",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let strict = stdout(&out);
    assert_eq!(nutch_regexes(strict).len(), 3, "{strict}");
    assert!(strict.contains("param sid (10 of 10)"), "{strict}");
    assert!(!strict.contains("www (5 of 5)"), "{strict}");
}

#[test]
fn urls_bad_rules_files_are_refused_in_one_line() {
    let input = shop_corpus("urls-bad-rules-corpus.jsonl");
    let input = input.to_str().unwrap();
    let missing = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-such-rules.json");
    let cases: Vec<(PathBuf, &[&str])> = vec![
        (
            temp_file(
                "urls-format-2.json",
                br#"{"url_rules": 2, "min_estimate": 0.5, "sites": {}}"#,
            ),
            &["format 2, this solr-dedup reads format 1", "urls learn"],
        ),
        (
            temp_file("urls-broken.json", br#"{"url_rules": 1, "sites": {"#),
            &["not JSON", "urls learn"],
        ),
        (
            // A chrome model: JSON, but not rules.
            temp_file("urls-chrome-model.json", br#"{"hosts": {}, "skipped": {}}"#),
            &["not a rules file", "urls learn"],
        ),
        (
            temp_file("urls-array.json", b"[1, 2, 3]"),
            &["not a rules file", "urls learn"],
        ),
        (
            temp_file("urls-no-min.json", br#"{"url_rules": 1, "sites": {}}"#),
            &["missing field `min_estimate`", "learn the rules again"],
        ),
        (
            temp_file(
                "urls-min-range.json",
                br#"{"url_rules": 1, "min_estimate": 1.5, "sites": {}}"#,
            ),
            &["min_estimate must be from 0 to 1"],
        ),
        (missing, &["cannot read the rules"]),
    ];
    for (path, wanted) in &cases {
        let rules = path.to_str().unwrap();
        let name = path.file_name().unwrap().to_str().unwrap();
        for args in [
            &[
                "urls",
                "predict",
                "--rules",
                rules,
                "--input",
                input,
                "https://shop.example/item/1",
            ][..],
            &["urls", "predict", "--rules", rules, "--input", input, "-"],
            &[
                "urls",
                "canonical",
                "--rules",
                rules,
                "https://shop.example/item/1",
            ],
            &["urls", "export", "--rules", rules, "--format", "nutch"],
        ] {
            let out = run(args, b"https://shop.example/item/1\n");
            let err = usage_failure(&out);
            assert!(stdout(&out).is_empty(), "{args:?}: {}", stdout(&out));
            assert!(err.contains(name), "names the file: {err}");
            for w in *wanted {
                assert!(err.contains(w), "{args:?}: {w:?} in {err}");
            }
        }
    }
}

#[test]
fn urls_learn_with_nothing_to_learn_writes_no_file() {
    let empty = temp_file("urls-learn-empty.jsonl", b"");
    let out_path = empty.with_file_name("urls-learn-empty-rules.json");
    let _ = std::fs::remove_file(&out_path);
    let out = run(
        &[
            "urls",
            "learn",
            "--input",
            empty.to_str().unwrap(),
            "--out",
            out_path.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "one line: {err:?}");
    assert!(err.contains("nothing to learn"), "{err}");
    assert!(err.contains("(0 documents read"), "{err}");
    assert!(!out_path.exists(), "no rules file");
    assert!(stdout(&out).is_empty());

    // Three documents: one without a URL, two with URLs that are not http(s).
    let no_http = temp_file(
        "urls-learn-no-http.jsonl",
        concat!(
            r#"{"id":"1","text_t":"no URL at all"}"#,
            "\n",
            r#"{"id":"2","sku":"ftp://files.example/a.txt","text_t":"a file"}"#,
            "\n",
            r#"{"id":"3","sku":"mailto:someone@mail.example","text_t":"a mailbox"}"#,
            "\n",
        )
        .as_bytes(),
    );
    let out = run(
        &[
            "urls",
            "learn",
            "--input",
            no_http.to_str().unwrap(),
            "--out",
            "-",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "one line: {err:?}");
    assert!(
        err.contains("(3 documents read, 1 without a URL, 2 with another kind of URL)"),
        "{err}"
    );
}

#[test]
fn urls_without_an_index_exit_2_and_with_solr_down_exit_3() {
    let (input, rules) = shop_rules("urls-no-index");
    let rules = rules.to_str().unwrap();
    let out_path = input.with_file_name("urls-no-index-out.json");
    let _ = std::fs::remove_file(&out_path);
    let out_arg = out_path.to_str().unwrap();

    let err = usage_failure(&run_without_solr_url(&["urls", "learn", "--out", out_arg]));
    assert!(err.contains("no index: give --solr URL"), "{err}");
    assert!(err.contains("--input FILE"), "{err}");
    assert!(!out_path.exists());
    let err = usage_failure(&run_without_solr_url(&[
        "urls",
        "predict",
        "--rules",
        rules,
        "https://shop.example/item/1",
    ]));
    assert!(err.contains("no index"), "{err}");

    // Usage errors: clap's, one line.
    for args in [
        &["urls", "predict", "--input", input.to_str().unwrap(), "x"][..],
        &["urls", "learn", "--input", input.to_str().unwrap()],
        &["urls", "export", "--rules", rules, "--format", "csv"],
        &[
            "urls",
            "learn",
            "--input",
            "/no/such/corpus.jsonl",
            "--out",
            out_arg,
        ],
        &[
            "urls",
            "learn",
            "--input",
            input.to_str().unwrap(),
            "--out",
            out_arg,
            "--min-estimate",
            "2",
        ],
    ] {
        let out = run_without_solr_url(args);
        usage_failure(&out);
        assert!(stdout(&out).is_empty(), "{args:?}");
        assert!(!out_path.exists(), "{args:?}");
    }

    // Solr not running: a port nothing listens on (bound, noted, closed).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let solr = format!("http://127.0.0.1:{port}/solr/collection1");
    for args in [
        &[
            "urls",
            "learn",
            "--solr",
            &solr,
            "--retries",
            "0",
            "--out",
            out_arg,
        ][..],
        &[
            "urls",
            "predict",
            "--rules",
            rules,
            "--solr",
            &solr,
            "--retries",
            "0",
            "https://shop.example/",
        ],
    ] {
        let out = run_without_solr_url(args);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", stderr(&out));
        let err = error_line(&out);
        assert!(err.contains("could not be reached"), "{err}");
        assert!(stdout(&out).is_empty(), "{args:?}");
        assert!(!out_path.exists(), "{args:?}");
    }
}

#[test]
fn urls_export_is_well_formed_xml() {
    // Nutch reads regex-normalize.xml with a DOM parser, which refuses the whole file when it is not
    // well-formed: `--` inside a comment, say.
    let (_, rules) = shop_rules("urls-export-xml");
    let out = run(
        &[
            "urls",
            "export",
            "--rules",
            rules.to_str().unwrap(),
            "--format",
            "nutch",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let xml = stdout(&out);
    let doc = roxmltree::Document::parse(xml).unwrap_or_else(|e| panic!("{e}: {xml}"));
    assert_eq!(doc.root_element().tag_name().name(), "regex-normalize");
    let comments: Vec<&str> = doc
        .descendants()
        .filter(|n| n.is_comment())
        .filter_map(|n| n.text())
        .collect();
    assert!(
        comments.iter().any(|c| c.contains("www (5 of 5)")),
        "{comments:?}"
    );
}

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
fn urls_learn_gives_a_page_without_a_cluster_the_cluster_of_its_exact_copies() {
    // Five pages with a near cluster and an exact signature; their http:// copies were indexed
    // after the last run: same signature, no cluster yet. By hand: 5 scheme pairs, all the same
    // content once the copies take their originals' clusters. A sixth http:// page whose signature
    // no clustered page has stands for itself (its https page has another signature): 1 against.
    let mut lines = String::new();
    for i in 0..5 {
        lines.push_str(&format!(
            "{{\"id\":\"a{i}\",\"sku\":\"https://m.example/p{i}\",\"exact_signature_l\":{},\"near_group_s\":\"a{i}\"}}\n",
            1000 + i
        ));
        lines.push_str(&format!(
            "{{\"id\":\"b{i}\",\"sku\":\"http://m.example/p{i}\",\"exact_signature_l\":{}}}\n",
            1000 + i
        ));
    }
    lines.push_str("{\"id\":\"a9\",\"sku\":\"https://m.example/p9\",\"exact_signature_l\":9,\"near_group_s\":\"a9\"}\n");
    lines.push_str("{\"id\":\"b9\",\"sku\":\"http://m.example/p9\",\"exact_signature_l\":99}\n");
    let input = temp_file("urls-waiting.jsonl", lines.as_bytes());
    let out = run(
        &[
            "urls",
            "learn",
            "--input",
            input.to_str().unwrap(),
            "--out",
            "-",
            "-q",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rules: Value = serde_json::from_str(stdout(&out)).unwrap();
    let scheme = &rules["sites"]["m.example"]["scheme"];
    assert_eq!(
        (scheme["support"].as_u64(), scheme["against"].as_u64()),
        (Some(5), Some(1)),
        "{rules}"
    );
    assert!(
        stderr(&out).contains("content by near cluster 11, by exact signature 1"),
        "{}",
        stderr(&out)
    );
}
