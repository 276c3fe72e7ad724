//! File mode never damages what it touches: outputs written through their path (a link followed, a
//! FIFO or `/dev/null` streamed to, never replaced), an output that is the input refused, lines
//! bounded, values Solr would refuse refused with their line, and a signal that stops a run leaving
//! neither output nor temporary files. Every case runs the built binary.

use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};

use crate::support::cmd::{error_line, run, solr_dedup, solr_dedup_under, stderr};

/// Exit code 2 and one `solr-dedup: error:` line; the line.
fn usage_failure(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(2), "stderr: {}", stderr(out));
    error_line(out)
}

fn ok(out: &Output) {
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(out));
}

/// Three documents, two with one text.
fn docs() -> String {
    [
        json!({"id": "a", "sku": "http://x.org/a", "text_t": "same words here", "title": "A"}),
        json!({"id": "b", "sku": "http://x.org/b", "text_t": "same words here", "title": "B"}),
        json!({"id": "c", "sku": "http://x.org/c", "text_t": "other words there", "title": "C"}),
    ]
    .iter()
    .map(|d| format!("{d}\n"))
    .collect()
}

fn write_input(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("in.jsonl");
    std::fs::write(&p, text).unwrap();
    p
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// The updates a run writes to standard output.
fn updates_on_stdout(input: &Path) -> String {
    let out = run(&["run", "--input", s(input), "-q"]);
    ok(&out);
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_symlink_output_is_followed_and_stays_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), &docs());
    let target = dir.path().join("target.jsonl");
    std::fs::write(&target, "old\n").unwrap();
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    ok(&run(&[
        "run",
        "--input",
        s(&input),
        "--output",
        s(&link),
        "-q",
    ]));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_link(&link).unwrap(), target);
    let written = std::fs::read_to_string(&target).unwrap();
    assert_eq!(written, updates_on_stdout(&input));
    assert_eq!(lines(&written).len(), 3);
}

#[test]
fn a_fifo_output_is_streamed_and_stays_a_fifo() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), &docs());
    let fifo = dir.path().join("out.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut text = String::new();
            std::fs::File::open(&fifo)
                .unwrap()
                .read_to_string(&mut text)
                .unwrap();
            text
        })
    };
    ok(&run(&[
        "run",
        "--input",
        s(&input),
        "--output",
        s(&fifo),
        "-q",
    ]));
    let streamed = reader.join().unwrap();
    assert_eq!(streamed, updates_on_stdout(&input));
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
}

#[test]
fn dev_null_as_output_and_as_report_stays_a_device() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), &docs());
    let out = run(&[
        "run",
        "--input",
        s(&input),
        "--output",
        "/dev/null",
        "--report",
        "/dev/null",
        "-q",
    ]);
    ok(&out);
    assert!(out.stdout.is_empty());
    let null = std::fs::metadata("/dev/null").unwrap();
    assert!(null.file_type().is_char_device(), "/dev/null was replaced");
}

#[test]
fn a_dash_output_is_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), &docs());
    let out = run(&["run", "--input", s(&input), "--output", "-", "-q"]);
    ok(&out);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        updates_on_stdout(&input)
    );
    assert!(!dir.path().join("-").exists());
}

#[test]
fn an_output_or_report_that_is_the_input_is_refused_and_the_input_kept() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), &docs());
    let before = std::fs::read(&input).unwrap();
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&input, &link).unwrap();
    let hard = dir.path().join("hard.jsonl");
    std::fs::hard_link(&input, &hard).unwrap();
    for same in [&input, &link, &hard] {
        let line = usage_failure(&run(&["run", "--input", s(&input), "--output", s(same)]));
        assert!(line.contains("is the input"), "{line}");
        let line = usage_failure(&run(&[
            "run",
            "--input",
            s(&input),
            "--output",
            s(&dir.path().join("u.jsonl")),
            "--report",
            s(same),
        ]));
        assert!(line.contains("is the input"), "{line}");
        assert_eq!(std::fs::read(&input).unwrap(), before);
    }
    let both = dir.path().join("both.json");
    let line = usage_failure(&run(&[
        "run",
        "--input",
        s(&input),
        "--output",
        s(&both),
        "--report",
        s(&both),
    ]));
    assert!(line.contains("same file"), "{line}");
    assert!(!both.exists());
}

/// The binary under an address-space limit of 512 MiB.
fn limited(args: &[&str]) -> Output {
    solr_dedup_under("prlimit", &["--as=536870912", "--"])
        .args(args)
        .output()
        .expect("prlimit runs")
}

#[test]
fn a_line_longer_than_the_limit_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let long = format!(
        "{}\n{}\n",
        json!({"id": "a", "text_t": "short"}),
        json!({"id": "b", "text_t": "x".repeat(8 << 20)})
    );
    let input = write_input(dir.path(), &long);
    let line = usage_failure(&limited(&[
        "run",
        "--input",
        s(&input),
        "--max-line-bytes",
        "1M",
        "-q",
    ]));
    assert!(line.contains(&format!("{}:2:", input.display())), "{line}");
    assert!(line.contains("--max-line-bytes"), "{line}");
}

#[test]
fn dev_zero_as_input_fails_on_its_first_line() {
    let line = usage_failure(&limited(&[
        "check",
        "--input",
        "/dev/zero",
        "--max-line-bytes",
        "64K",
    ]));
    assert!(line.contains("/dev/zero:1:"), "{line}");
    assert!(line.contains("65536 bytes"), "{line}");
}

#[test]
fn numbers_and_booleans_in_text_fields_are_signed_as_their_text() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(
        dir.path(),
        &format!(
            "{}\n{}\n",
            json!({"id": "n", "text_t": 12345, "sku": 7, "title": 42}),
            json!({"id": "b", "text_t": true, "sku": "http://x.org/b", "title": "t"})
        ),
    );
    let updates = lines(&updates_on_stdout(&input));
    let signed = |id: &str, field: &str| {
        updates
            .iter()
            .find(|u| u["id"] == id)
            .unwrap_or_else(|| panic!("no update of {id}"))[field]["set"]
            .as_i64()
            .unwrap()
    };
    let exact_of = |text: &str| {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.txt");
        std::fs::write(&p, text).unwrap();
        let out = run(&["signature", s(&p)]);
        ok(&out);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["exact_l"].as_i64().unwrap()
    };
    assert_eq!(signed("n", "exact_signature_l"), exact_of("12345"));
    assert_eq!(signed("n", "title_exact_signature_l"), exact_of("42"));
    assert_eq!(signed("b", "exact_signature_l"), exact_of("true"));
}

#[test]
fn several_values_where_one_is_expected_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(
        dir.path(),
        &format!(
            "{}\n{}\n",
            json!({"id": "m", "text_t": "words", "title": ["first", "second"]}),
            json!({"id": "o", "text_t": "words", "title": ["only"]})
        ),
    );
    let report = dir.path().join("report.json");
    let out = run(&["run", "--input", s(&input), "--report", s(&report), "-q"]);
    ok(&out);
    let r: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(r["documents"]["multi_valued_first_taken"], 1);
}

#[test]
fn a_version_or_id_solr_would_refuse_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let good = json!({"id": "a", "text_t": "x", "_version_": "123"});
    for bad in [
        json!({"id": "b", "_version_": "abc"}),
        json!({"id": "b", "_version_": 1.5}),
        json!({"id": "b", "_version_": true}),
        json!({"id": 1.5}),
        json!({"id": true}),
        json!({"id": {"x": 1}}),
    ] {
        let input = write_input(dir.path(), &format!("{good}\n{bad}\n"));
        let line = usage_failure(&run(&["run", "--input", s(&input), "-q"]));
        assert!(
            line.contains(&format!("{}:2:", input.display())),
            "{bad}: {line}"
        );
    }
    // A numeric string is a version Solr's long field accepts, an integer an id.
    let input = write_input(
        dir.path(),
        &format!(
            "{good}\n{}\n",
            json!({"id": 7, "text_t": "y", "_version_": 5})
        ),
    );
    ok(&run(&["run", "--input", s(&input), "-q"]));
}

#[test]
fn a_listed_twice_id_names_the_id_and_both_lines() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "{}\n{}\n{}\n",
        json!({"id": "twice", "text_t": "x"}),
        json!({"id": "once", "text_t": "y"}),
        json!({"id": "twice", "text_t": "z"})
    );
    let input = write_input(dir.path(), &text);
    let line = usage_failure(&run(&["run", "--input", s(&input), "-q"]));
    let name = input.display().to_string();
    assert!(line.contains("\"twice\""), "{line}");
    assert!(line.contains(&format!("{name}:1")), "{line}");
    assert!(line.contains(&format!("{name}:3")), "{line}");
}

/// The names in `dir` that start with `prefix`.
fn names(dir: &Path, prefix: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(prefix))
        .collect()
}

fn many_docs(dir: &Path, n: usize) -> PathBuf {
    let mut text = String::new();
    for i in 0..n {
        let d = json!({"id": format!("d{i}"), "sku": format!("http://h{}.org/{i}", i % 100),
            "text_t": format!("word{} some text {}", i % 500, i % 77), "title": format!("t{}", i % 300)});
        text.push_str(&format!("{d}\n"));
    }
    write_input(dir, &text)
}

#[test]
fn sigterm_mid_run_leaves_no_output_and_no_temporary_files() {
    let dir = tempfile::tempdir().unwrap();
    let input = many_docs(dir.path(), 50_000);
    let output = dir.path().join("out.jsonl");
    let child = solr_dedup()
        .args(["run", "--input", s(&input), "--output", s(&output), "-q"])
        .env("TMPDIR", dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the run has begun: its temporary files appear beside the output.
    while names(dir.path(), ".out.jsonl.").is_empty() {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(143), "stderr: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(!output.exists(), "a half output");
    assert_eq!(names(dir.path(), ".out.jsonl."), Vec::<String>::new());
    assert_eq!(names(dir.path(), "solr-dedup-"), Vec::<String>::new());
}

#[test]
fn a_killed_runs_temporary_files_are_removed_by_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), &docs());
    let output = dir.path().join("out.jsonl");
    // A killed run's PID: one that no process has now.
    assert!(!Path::new("/proc/999999").exists());
    for stale in [".out.jsonl.light-999999-0", ".out.jsonl.tmp-999999-3"] {
        std::fs::write(dir.path().join(stale), "left by a killed run").unwrap();
    }
    let unrelated = dir.path().join(".out.jsonl.notes");
    std::fs::write(&unrelated, "mine").unwrap();
    let in_tmp = dir.path().join("solr-dedup-999999-0.pending");
    std::fs::write(&in_tmp, "left by a killed run").unwrap();
    let out = solr_dedup()
        .args(["run", "--input", s(&input), "--output", s(&output), "-q"])
        .env("TMPDIR", dir.path())
        .output()
        .unwrap();
    ok(&out);
    assert_eq!(names(dir.path(), ".out.jsonl."), vec![".out.jsonl.notes"]);
    assert!(!in_tmp.exists());
    assert_eq!(lines(&std::fs::read_to_string(&output).unwrap()).len(), 3);
}

#[test]
fn a_misnamed_text_field_is_an_error_not_an_empty_index() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), &docs());
    let out_path = dir.path().join("out.jsonl");
    // A first run: nothing signed yet, every document read with its content.
    let out = run(&[
        "run",
        "--input",
        s(&input),
        "--field",
        "text_t=content_t",
        "--output",
        s(&out_path),
        "-q",
    ]);
    let line = usage_failure(&out);
    assert!(
        line.contains("no document has the text field content_t") && line.contains("--field"),
        "{line}"
    );
    assert!(!out_path.exists(), "nothing written");
    // A signed index: the scheme guard's sample meets the field first and says the same, not that
    // the index was signed with other settings (which would advise --full).
    let annotated = dir.path().join("annotated.jsonl");
    ok(&run(&[
        "run",
        "--input",
        s(&input),
        "--output",
        s(&annotated),
        "--output-format",
        "docs",
        "-q",
    ]));
    let mut signed = std::fs::read_to_string(&annotated).unwrap();
    // A new page without a signature, so that the run signs and the guard samples.
    signed.push_str(
        &json!({"id": "d", "sku": "http://x.org/d", "text_t": "new words", "title": "D"})
            .to_string(),
    );
    signed.push('\n');
    std::fs::write(&annotated, signed).unwrap();
    for args in [vec!["run"], vec!["check"], vec!["run", "--full"]] {
        let mut all = args.clone();
        all.extend([
            "--input",
            s(&annotated),
            "--field",
            "text_t=content_t",
            "-q",
        ]);
        let out = run(&all);
        let line = usage_failure(&out);
        assert!(
            line.contains("no document has the text field content_t")
                && !line.contains("signed with"),
            "{args:?}: {line}"
        );
    }
    // Pages of which some have no text at all are not a misnamed field.
    let mixed = write_input(
        dir.path(),
        &format!(
            "{}{}\n",
            docs(),
            json!({"id": "e", "sku": "http://x.org/e", "title": "E"})
        ),
    );
    ok(&run(&["run", "--input", s(&mixed), "-q"]));
}

#[test]
fn a_failing_run_leaves_a_failure_report_not_the_last_one() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), &docs());
    let report = dir.path().join("report.json");
    let read =
        |p: &Path| -> Value { serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap() };
    // A run that succeeds says so.
    ok(&run(&[
        "run",
        "--input",
        s(&input),
        "--report",
        s(&report),
        "--dry-run",
        "-q",
    ]));
    let r = read(&report);
    assert_eq!(r["outcome"], "succeeded");
    assert_eq!(r["documents"]["read"], 3);
    assert!(r.get("error").is_none());
    // A run that fails in the engine replaces it with what happened and what it did before.
    let out = run(&[
        "run",
        "--input",
        s(&input),
        "--field",
        "text_t=content_t",
        "--report",
        s(&report),
        "-q",
    ]);
    let line = usage_failure(&out);
    let r = read(&report);
    assert_eq!(r["outcome"], "failed");
    assert_eq!(r["exit"], 2);
    assert_eq!(
        format!("solr-dedup: error: {}", r["error"].as_str().unwrap()),
        line
    );
    assert_eq!(r["documents"]["read"], 3, "what it read before it failed");
    assert_eq!(r["documents"]["written"], 0);
    // A run that fails before it starts (Solr not running) writes one too, with exit 3.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/solr/collection1");
    let out = run(&[
        "run",
        "--solr",
        &url,
        "--retries",
        "0",
        "--report",
        s(&report),
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let r = read(&report);
    assert_eq!(r["outcome"], "failed");
    assert_eq!(r["exit"], 3);
    assert!(
        r["error"]
            .as_str()
            .unwrap()
            .contains("could not be reached"),
        "{r}"
    );
    assert_eq!(r["documents"]["written"], 0);
    // A report that cannot be written stops the run before anything is read or written.
    let out_path = dir.path().join("out.jsonl");
    let out = run(&[
        "run",
        "--input",
        s(&input),
        "--output",
        s(&out_path),
        "--report",
        s(&dir.path().join("no/such/dir/report.json")),
        "-q",
    ]);
    let line = usage_failure(&out);
    assert!(line.contains("cannot write the report"), "{line}");
    assert!(!out_path.exists());
}

#[test]
fn a_killed_run_leaves_running_in_its_report_not_the_last_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let input = many_docs(dir.path(), 50_000);
    let output = dir.path().join("out.jsonl");
    let report = dir.path().join("report.json");
    std::fs::write(&report, "{\"outcome\": \"succeeded\"}\n").unwrap();
    let mut child = solr_dedup()
        .args(["run", "--input", s(&input), "--output", s(&output), "-q"])
        .args(["--report", s(&report)])
        .env("TMPDIR", dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the run has begun: its temporary files appear beside the output.
    let start = std::time::Instant::now();
    while names(dir.path(), ".out.jsonl.").is_empty() {
        assert!(start.elapsed() < std::time::Duration::from_secs(60));
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(r["outcome"], "running", "{r}");
}

#[test]
fn a_report_that_cannot_be_written_leaves_the_old_output() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), &docs());
    let output = dir.path().join("out.jsonl");
    std::fs::write(&output, "the old output\n").unwrap();
    let out = run(&[
        "run",
        "--input",
        s(&input),
        "--output",
        s(&output),
        "--report",
        "/dev/full",
        "-q",
    ]);
    let line = usage_failure(&out);
    assert!(line.contains("/dev/full"), "{line}");
    assert_eq!(
        std::fs::read_to_string(&output).unwrap(),
        "the old output\n"
    );
    assert_eq!(names(dir.path(), ".out.jsonl."), Vec::<String>::new());
}

#[test]
fn a_byte_order_mark_is_no_part_of_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let plain = write_input(dir.path(), &docs());
    let marked = dir.path().join("bom.jsonl");
    std::fs::write(&marked, format!("\u{feff}{}", docs())).unwrap();
    let updates = |input: &Path| {
        let out = run(&["run", "--input", s(input), "-q"]);
        ok(&out);
        String::from_utf8(out.stdout).unwrap()
    };
    let expected = updates(&plain);
    assert!(!expected.is_empty());
    assert_eq!(updates(&marked), expected);
    // A saved /select response with one too.
    let docs: Vec<Value> = docs()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let select = json!({"responseHeader": {"status": 0}, "response": {"numFound": 3, "start": 0, "docs": docs}});
    let saved = dir.path().join("select.json");
    std::fs::write(&saved, format!("\u{feff}{select}")).unwrap();
    assert_eq!(updates(&saved), expected);
}
