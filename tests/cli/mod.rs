//! The `solr-dedup` binary as a user runs it: output, exit codes and one-line errors.
//!
//! Expected signatures are the vectors of `signatures.md`, never values produced by this code.

use std::path::PathBuf;
use std::process::{Output, Stdio};

use serde_json::Value;

// `run(args, stdin)`: the binary fed `stdin`.
use crate::support::cmd::{error_line, run_with_stdin as run, solr_dedup, stderr, stdout};

mod config;
mod monitoring;
mod run;
mod serve;
mod serve_conns;
mod urls;

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

// ------------------------------------------------------------------ urls: the shop corpus and its rules

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
/// The probabilities predictions give for those, under the calibration a learn from this few pairs
/// keeps (pi 0.5, epsilon 0.01; fewer than 50 pairs to choose from), by hand: P(holds) =
/// 0.99^n / (0.99^n + 1/(n+1)), then P(holds) · 0.99 + (1 − P(holds)) · (n+1)/(n+2). 5 of 5:
/// 0.950990 / (0.950990 + 0.166667) = 0.850878, 0.842370 + 0.127818; 10 of 10: 0.904382 /
/// (0.904382 + 0.090909) = 0.908661, 0.899574 + 0.083728.
const P_ALL_OF_5: f64 = 0.970188;
const P_ALL_OF_10: f64 = 0.983302;

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
fn version_names_the_commit_and_the_build_date() {
    let out = run(&["--version"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let line = stdout(&out);
    let re = fancy_regex::Regex::new(concat!(
        r"^solr-dedup ",
        env!("CARGO_PKG_VERSION"),
        r" \(([0-9a-f]{12}|unknown) [0-9]{4}-[0-9]{2}-[0-9]{2}\)\n$"
    ))
    .unwrap();
    assert!(re.is_match(line).unwrap(), "{line:?}");
}

#[test]
fn completions_and_the_man_page_come_from_the_same_definitions() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = run(&["completions", shell], b"");
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", stderr(&out));
        let script = stdout(&out);
        // Every subcommand is offered.
        for sub in [
            "run",
            "check",
            "schema",
            "serve",
            "urls",
            "completions",
            "man",
        ] {
            assert!(script.contains(sub), "{shell} lacks {sub}");
        }
    }
    let out = run(&["completions", "tcsh"], b"");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = run(&["man"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let page = stdout(&out);
    assert!(page.starts_with(".ie"), "{page}");
    assert!(page.contains(".TH solr-dedup 1"), "{page}");
    assert!(page.contains(".SH SUBCOMMANDS"), "{page}");
    // A broken configuration file does not stand in the way.
    let broken = temp_file("completions-broken.toml", b"[decide\n");
    let out = solr_dedup()
        .args(["completions", "bash"])
        .env("SOLR_DEDUP_CONFIG", &broken)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// The commands that learn from an index take the common flags: `-q` (nothing on standard error
/// when it goes well), `--report` (a JSON summary), `-v`, `--config`.
#[test]
fn the_learn_commands_take_quiet_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/corpus.jsonl");
    let out = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    for (command, file) in [("chrome", "chrome.json"), ("urls", "rules.json")] {
        let target = out(file);
        let report = out(&format!("{command}-report.json"));
        let o = run(
            &[
                command, "learn", "--input", corpus, "--out", &target, "-q", "--report", &report,
            ],
            b"",
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(stderr(&o), "", "-q: nothing on standard error");
        assert!(std::fs::metadata(&target).unwrap().len() > 0);
        let summary: Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        assert_eq!(summary["outcome"], "succeeded", "{summary}");
        // Without -q the summary line is there.
        let o = run(
            &[command, "learn", "--input", corpus, "--out", &target],
            b"",
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(!stderr(&o).is_empty());
        // Both on standard output: refused with one line, nothing written.
        let o = run(
            &[
                command, "learn", "--input", corpus, "--out", "-", "--report", "-",
            ],
            b"",
        );
        assert_eq!(o.status.code(), Some(2));
        assert!(
            error_line(&o).contains("--report - would share standard output"),
            "{}",
            stderr(&o)
        );
        assert_eq!(stdout(&o), "");
    }
    // urls predict --report: how many answers met a page, and at which probability.
    let rules = out("rules.json");
    let report = out("predict-report.json");
    let o = run(
        &[
            "urls",
            "predict",
            "--rules",
            &rules,
            "--input",
            corpus,
            "-q",
            "--report",
            &report,
            "https://forum.example.org/viewtopic.php?t=1003&sid=0badcafe",
            "https://forum.example.org/viewtopic.php?t=2000",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 2);
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(summary["answered"], 2, "{summary}");
    assert_eq!(summary["indexed_page_met"], 1, "{summary}");
    assert_eq!(summary["errors"], 0, "{summary}");
    // Its answers hold standard output: a report there is refused.
    let o = run(
        &[
            "urls", "predict", "--rules", &rules, "--input", corpus, "--report", "-", "-q",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // The bundled corpus: the chrome of its forum and wiki, and rules for their URLs.
    let chrome: Value =
        serde_json::from_str(&std::fs::read_to_string(out("chrome-report.json")).unwrap()).unwrap();
    assert_eq!(chrome["chrome_hosts"], 2, "{chrome}");
    let urls: Value =
        serde_json::from_str(&std::fs::read_to_string(out("urls-report.json")).unwrap()).unwrap();
    assert_eq!(urls["pages"], 555, "{urls}");
}

/// Every command's `--help` says its exit codes in one place: the last paragraph of its description,
/// before the usage line; the top level lists every code a command can end with.
#[test]
fn every_help_says_its_exit_codes_before_the_usage() {
    use clap::CommandFactory;
    fn leaves(cmd: &clap::Command, path: Vec<String>, out: &mut Vec<Vec<String>>) {
        let subs: Vec<&clap::Command> = cmd
            .get_subcommands()
            .filter(|c| c.get_name() != "help")
            .collect();
        if subs.is_empty() {
            out.push(path);
            return;
        }
        for sub in subs {
            let mut p = path.clone();
            p.push(sub.get_name().to_owned());
            leaves(sub, p, out);
        }
    }
    let mut all = Vec::new();
    leaves(&solr_dedup::cli::Cli::command(), Vec::new(), &mut all);
    assert!(all.len() >= 14, "{all:?}");
    all.push(Vec::new());
    for path in all {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let o = run(&args, b"");
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        let help = stdout(&o);
        let exit = help.find("Exit codes: 0 ");
        let usage = help.find("Usage: ");
        assert!(
            exit.is_some() && exit < usage,
            "{args:?}: no exit codes before the usage:\n{help}"
        );
    }
    let top = stdout(&run(&["--help"], b"")).replace('\n', " ");
    for code in ["0 done", "1 finished", "2 usage", "3 Solr", "130 or 143"] {
        assert!(top.contains(code), "{code}: {top}");
    }
}
