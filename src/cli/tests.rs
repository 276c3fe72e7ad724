//! Parsing tests of the command line.

use clap::error::ErrorKind;
use clap::CommandFactory;

use super::*;

fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
    Cli::try_parse_from(std::iter::once("solr-dedup").chain(args.iter().copied()))
}

fn signature(args: &[&str]) -> SignatureArgs {
    match parse(args).expect("parses").command {
        Command::Signature(a) => a,
        other => panic!("not signature: {other:?}"),
    }
}

#[test]
fn the_command_definition_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn signature_defaults_leave_the_tunables_to_the_scheme() {
    let a = signature(&["signature", "page.txt"]);
    assert_eq!(a.options.scheme, SchemeArg::Yacy);
    assert_eq!(a.options.min_token_len, None);
    assert_eq!(a.options.quant_rate, None);
    assert!(!a.batch);
    assert_eq!(a.input, PathBuf::from("page.txt"));
}

#[test]
fn signature_takes_every_option() {
    let a = signature(&[
        "signature",
        "--scheme",
        "md5",
        "--min-token-len",
        "4",
        "--quant-rate",
        "0.25",
        "--batch",
        "-",
    ]);
    assert_eq!(a.options.scheme, SchemeArg::Md5);
    assert_eq!(a.options.min_token_len, Some(4));
    assert_eq!(a.options.quant_rate, Some(0.25));
    assert!(a.batch);
    assert_eq!(a.input, PathBuf::from("-"));
}

#[test]
fn signature_requires_an_input() {
    let err = parse(&["signature"]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::MissingRequiredArgument);
}

#[test]
fn bad_quant_rates_are_refused() {
    for bad in ["-0.5", "nan", "inf", "1e40", "half"] {
        let err = parse(&["signature", "--quant-rate", bad, "x"]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ValueValidation, "{bad}");
    }
    assert_eq!(
        signature(&["signature", "--quant-rate", "0", "x"])
            .options
            .quant_rate,
        Some(0.0)
    );
}

fn run_args(args: &[&str]) -> RunArgs {
    match parse(args).expect("parses").command {
        Command::Run(a) => a.run,
        other => panic!("not run: {other:?}"),
    }
}

#[test]
fn run_defaults_and_every_option() {
    let a = run_args(&["run", "--input", "d.jsonl"]);
    assert_eq!(a.job.dimensions, None);
    assert!(a.job.prefer_https && a.job.prefer_www);
    assert_eq!(a.job.scope, ScopeArg::Global);
    assert_eq!(a.job.batch_size, 1000);
    assert_eq!(a.job.memory, crate::engine::DEFAULT_MEMORY);
    assert_eq!(a.job.memory, 256 << 20);
    assert_eq!(a.job.temp_dir, None);
    assert!(!a.full && !a.dry_run);
    let a = run_args(&[
        "run",
        "--input",
        "d.jsonl",
        "--memory",
        "1G",
        "--temp-dir",
        "/var/tmp",
    ]);
    assert_eq!(a.job.memory, 1 << 30);
    assert_eq!(
        a.job.temp_dir.as_deref(),
        Some(std::path::Path::new("/var/tmp"))
    );
    assert!(parse(&["check", "--input", "d.jsonl", "--memory", "lots"]).is_err());
    let a = run_args(&[
        "run",
        "--input",
        "d.jsonl",
        "--output",
        "u.jsonl",
        "--output-format",
        "docs",
        "--full",
        "--dry-run",
        "--scope",
        "host",
        "--dimensions",
        "www,exact",
        "--prefer-https=false",
        "--prefer-www",
        "false",
        "--filter",
        "httpstatus_i:200",
        "--batch-size",
        "50",
        "--field",
        "sku=url_s",
        "--report",
        "-",
        "-vv",
        "--scheme",
        "md5",
    ]);
    assert_eq!(
        a.job.dimensions.unwrap().0,
        vec![Dimension::Exact, Dimension::Www]
    );
    assert!(!a.job.prefer_https && !a.job.prefer_www);
    assert_eq!(a.job.fields, vec![("sku".to_string(), "url_s".to_string())]);
    assert_eq!(a.job.verbose, 2);
    assert_eq!(a.output_format, OutputFormatArg::Docs);
    assert!(a.job.filter.is_some());
}

#[test]
fn run_refuses_what_it_cannot_mean() {
    for bad in [
        &["run", "--input", "d", "--dimensions", "exact,fuzy"][..],
        &["run", "--input", "d", "--field", "nosuch=x"],
        &["run", "--input", "d", "--solr", "http://x/solr/c"][..],
        &["run", "--input", "d", "--commit", "later"],
        &["run", "--input", "d", "--commit", "within:0"],
        &["run", "--input", "d", "--concurrency", "0"],
        &["schema", "fix", "--solr", "http://x/solr/c"],
        &["run", "--input", "d", "--batch-size", "0"],
        &["run", "--input", "d", "--prefer-https", "maybe"],
    ] {
        assert!(parse(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn solr_options() {
    let a = run_args(&[
        "run",
        "--solr",
        "http://127.0.0.1:8983/solr/c",
        "--commit",
        "within:5000",
        "--allow-lossy-atomic-updates",
        "--concurrency",
        "8",
        "--timeout",
        "5",
        "--retries",
        "0",
        "--auth-file",
        "auth.txt",
    ]);
    assert_eq!(a.commit, CommitArg::Within(5000));
    assert!(a.allow_lossy_atomic_updates);
    assert_eq!(a.job.concurrency, 8);
    assert_eq!(a.job.solr.timeout, 5);
    assert_eq!(a.job.solr.retries, 0);
    assert_eq!(
        a.job.solr.solr.as_deref(),
        Some("http://127.0.0.1:8983/solr/c")
    );
    assert_eq!(run_args(&["run", "--input", "d"]).commit, CommitArg::Hard);
    match parse(&["schema", "apply", "--solr", "http://x/solr/c", "--dry-run"])
        .unwrap()
        .command
    {
        Command::Schema(s) => assert!(s.action == SchemaAction::Apply && s.dry_run),
        other => panic!("not schema: {other:?}"),
    }
}

#[test]
fn unknown_schemes_are_refused() {
    let err = parse(&["signature", "--scheme", "sha1", "x"]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidValue);
}

#[test]
fn the_preference_order_and_yacy_compatibility() {
    let order = |args: &[&str]| {
        let mut all = vec!["run", "--input", "d.jsonl"];
        all.extend_from_slice(args);
        job_config(&all).engine.preference.order
    };
    use crate::engine::Order;
    assert_eq!(order(&[]), Order::Canonical);
    assert_eq!(order(&["--prefer", "canonical"]), Order::Canonical);
    assert_eq!(order(&["--prefer", "yacy"]), Order::Yacy);
    assert_eq!(order(&["--compat", "yacy"]), Order::Yacy);
    let a = run_args(&["run", "--input", "d.jsonl", "--rules", "r.json"]);
    assert_eq!(a.job.rules, Some(PathBuf::from("r.json")));
    // One or the other: --compat decides the order itself.
    let err = parse(&[
        "run",
        "--input",
        "d",
        "--compat",
        "yacy",
        "--prefer",
        "canonical",
    ])
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ArgumentConflict);
    let err = parse(&["run", "--input", "d", "--compat", "solr"]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidValue);
}

#[test]
fn the_fewest_fuzzy_profile_words() {
    let min = |args: &[&str]| {
        let mut all = vec!["run", "--input", "d.jsonl"];
        all.extend_from_slice(args);
        job_config(&all).engine.fuzzy_min_words
    };
    // The default the repr-eval measurements support; YaCy's semantics group profiles of any size.
    assert_eq!(min(&[]), 4);
    assert_eq!(min(&["--fuzzy-min-words", "0"]), 0);
    assert_eq!(min(&["--fuzzy-min-words", "7"]), 7);
    assert_eq!(min(&["--compat", "yacy"]), 0);
    // --prefer yacy is only the order: the minimum stays.
    assert_eq!(min(&["--prefer", "yacy"]), 4);
    let check = |args: &[&str]| {
        let mut all = vec!["check", "--input", "d.jsonl"];
        all.extend_from_slice(args);
        job_config(&all).engine.fuzzy_min_words
    };
    assert_eq!(check(&[]), 4);
    assert_eq!(check(&["--compat", "yacy"]), 0);
    assert_eq!(check(&["--fuzzy-min-words", "2"]), 2);
    // --compat yacy decides the minimum itself.
    let err = parse(&[
        "run",
        "--input",
        "d",
        "--compat",
        "yacy",
        "--fuzzy-min-words",
        "4",
    ])
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ArgumentConflict);
    for bad in ["four", "", "1000001"] {
        let err = parse(&["run", "--input", "d", "--fuzzy-min-words", bad]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ValueValidation, "{bad:?}");
    }
    // A negative number is no value: clap takes it for an option.
    assert!(parse(&["run", "--input", "d", "--fuzzy-min-words", "-1"]).is_err());
}

/// The configuration `args` resolve to (against an empty environment), for `run` and `check`.
fn job_config(args: &[&str]) -> crate::config::JobConfig {
    let parsed = super::parse_from(std::iter::once("solr-dedup").chain(args.iter().copied()))
        .expect("parses");
    match super::resolve(parsed, &crate::config::Environment::default()).expect("resolves") {
        crate::config::Config::Job(c) => *c,
        other => panic!("not a job: {other:?}"),
    }
}
