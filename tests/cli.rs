//! The `solr-dedup` binary as a user runs it: output, exit codes and one-line errors.
//!
//! Expected signatures are the vectors of `signatures.md`, never values produced by this code.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

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

/// Runs the binary with `args`, feeding `stdin`.
fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_solr-dedup"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        // The binary may exit without reading (a usage error); a broken pipe here is expected then.
        let _ = input.write_all(&stdin);
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    output
}

fn stdout(output: &Output) -> &str {
    std::str::from_utf8(&output.stdout).expect("stdout is UTF-8")
}

fn stderr(output: &Output) -> &str {
    std::str::from_utf8(&output.stderr).expect("stderr is UTF-8")
}

/// The one JSON object a successful single-text run prints.
fn json(output: &Output) -> Value {
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(output));
    let out = stdout(output);
    assert_eq!(out.lines().count(), 1, "one line: {out:?}");
    serde_json::from_str(out).expect("stdout is JSON")
}

/// Checks a failed run: exit code 2, nothing on stdout, one `solr-dedup: error:` line on stderr.
fn usage_failure(output: &Output) -> String {
    assert_eq!(output.status.code(), Some(2), "stderr: {}", stderr(output));
    let err = stderr(output);
    assert_eq!(err.lines().count(), 1, "one line: {err:?}");
    assert!(err.starts_with("solr-dedup: error: "), "{err:?}");
    assert!(!err.contains("backtrace"), "{err:?}");
    err.to_string()
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
    let err = stderr(output);
    assert_eq!(err.lines().count(), 1, "one line: {err:?}");
    assert!(err.starts_with("solr-dedup: error: "), "{err:?}");
    err.to_string()
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
fn a_closed_stdout_is_not_an_error() {
    // Far more output than a pipe buffers, so the binary is still writing when the reader goes away.
    let mut input = String::new();
    for i in 0..20_000 {
        input.push_str(&serde_json::json!({"id": i, "text": LOREM}).to_string());
        input.push('\n');
    }
    let path = temp_file("many.jsonl", input.as_bytes());
    let mut child = Command::new(env!("CARGO_BIN_EXE_solr-dedup"))
        .args(["signature", "--batch", path.to_str().unwrap()])
        .stdin(Stdio::null())
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
    // An argument may be 128 KiB at most on Linux, hence 30,000 NOTs rather than 50,000.
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/corpus.jsonl");
    let parens = format!("{}host_s:x{}", "(".repeat(50_000), ")".repeat(50_000));
    let nots = format!("{}host_s:x", "NOT ".repeat(30_000));
    for deep in [parens, nots] {
        let err = usage_failure(&run(&["run", "--input", corpus, "--filter", &deep], b""));
        assert!(err.contains("--filter: filter nests too deeply"), "{err}");
    }
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
    // example.org has two pages, www.example.org one: with --min-pages 2 only the first gets a
    // model. Its pages (PAGE and "another text entirely") share no shingle, so none is on more
    // than half of them.
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
    assert_eq!(model["hosts"]["example.org"]["sample"], 2, "{model}");
    assert_eq!(
        model["hosts"]["example.org"]["chrome"],
        serde_json::json!([])
    );
    assert_eq!(model["hosts"]["example.org"]["model"], "none");
    assert_eq!(
        model["skipped"],
        serde_json::json!({"hosts": 1, "pages": 1})
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
    let err = usage_failure(&run(
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
    ));
    assert!(err.contains("learned with --near-shingle 2"), "{err}");
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
