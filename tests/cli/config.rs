//! The configuration file (issue 42): where it is found, what beats it, what it refuses, and that a
//! setting in it decides as the same flag does.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::cmd::{error_line, solr_dedup, stderr, stdout};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/corpus.jsonl");

/// A fresh folder of this test's own under cargo's scratch directory.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("config")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(path: &Path, text: &str) -> PathBuf {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    path.to_owned()
}

fn output(mut cmd: Command, args: &[&str]) -> Output {
    cmd.args(args).output().expect("the binary starts")
}

/// `config show`'s line for `key` (the first one that sets it), asserting the command succeeded.
fn shown(out: &Output, key: &str) -> String {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    stdout(out)
        .lines()
        .find(|l| l.starts_with(&format!("{key} = ")))
        .unwrap_or_else(|| panic!("no {key} in:\n{}", stdout(out)))
        .to_owned()
}

#[test]
fn the_solr_url_comes_from_the_flag_then_the_environment_then_the_file() {
    let dir = scratch("solr-precedence");
    let file = write(
        &dir.join("config.toml"),
        "[index]\nsolr = \"http://file.example:8983/solr/c\"\n",
    );
    let config = file.to_str().unwrap();
    let line = shown(
        &output(solr_dedup(), &["--config", config, "config", "show"]),
        "solr",
    );
    assert_eq!(
        line,
        format!("solr = \"http://file.example:8983/solr/c\"  # from {config}")
    );
    let mut with_env = solr_dedup();
    with_env.env("SOLR_URL", "http://env.example:8983/solr/c");
    let line = shown(
        &output(with_env, &["--config", config, "config", "show"]),
        "solr",
    );
    assert_eq!(
        line,
        "solr = \"http://env.example:8983/solr/c\"  # from SOLR_URL"
    );
    let mut with_both = solr_dedup();
    with_both.env("SOLR_URL", "http://env.example:8983/solr/c");
    let out = output(
        with_both,
        &[
            "config",
            "show",
            "--config",
            config,
            "--solr",
            "http://flag.example:8983/solr/c",
        ],
    );
    assert_eq!(
        shown(&out, "solr"),
        "solr = \"http://flag.example:8983/solr/c\"  # from --solr"
    );
    // A command that reads the file's core tries it: unreachable is exit 3, not "no core given" (2).
    let unreachable = write(
        &dir.join("closed.toml"),
        "[index]\nsolr = \"http://127.0.0.1:9/solr/c\"\n[solr]\nretries = 0\ntimeout = 2\n",
    );
    let out = output(
        solr_dedup(),
        &["--config", unreachable.to_str().unwrap(), "check"],
    );
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
}

#[test]
fn a_deciding_setting_in_the_file_yields_to_the_flag() {
    let dir = scratch("prefer-precedence");
    let file = write(
        &dir.join("c.toml"),
        "[decide]\nprefer = \"yacy\"\nnear-hashes = 12\n",
    );
    let config = file.to_str().unwrap();
    let out = output(solr_dedup(), &["config", "show", "--config", config]);
    assert_eq!(
        shown(&out, "prefer"),
        format!("prefer = \"yacy\"  # from {config}")
    );
    assert_eq!(
        shown(&out, "near-hashes"),
        format!("near-hashes = 12  # from {config}")
    );
    assert_eq!(shown(&out, "near-trials"), "near-trials = 6  # default");
    let out = output(
        solr_dedup(),
        &[
            "config",
            "show",
            "--config",
            config,
            "--prefer",
            "canonical",
        ],
    );
    assert_eq!(
        shown(&out, "prefer"),
        "prefer = \"canonical\"  # from --prefer"
    );
    // --compat yacy overrides the file's prefer and fuzzy minimum together.
    let out = output(
        solr_dedup(),
        &["config", "show", "--config", config, "--compat", "yacy"],
    );
    assert_eq!(shown(&out, "prefer"), "prefer = \"yacy\"  # from --compat");
    assert_eq!(
        shown(&out, "fuzzy-min-words"),
        "fuzzy-min-words = 0  # from --compat"
    );
}

#[test]
fn an_unknown_key_is_refused_naming_it() {
    let dir = scratch("unknown-key");
    let file = write(
        &dir.join("c.toml"),
        "[decide]\nscheme = \"yacy\"\nprefr = \"yacy\"\n",
    );
    for command in [
        &["run", "--input", CORPUS][..],
        &["signature", "-"],
        &["config", "show"],
    ] {
        let mut args = vec!["--config", file.to_str().unwrap()];
        args.extend_from_slice(command);
        let out = output(solr_dedup(), &args);
        assert_eq!(out.status.code(), Some(2), "{command:?}: {}", stderr(&out));
        let line = error_line(&out);
        assert!(
            line.contains(&format!(
                "{}:3: decide.prefr: unknown field `prefr`",
                file.display()
            )),
            "{line}"
        );
        assert!(stdout(&out).is_empty(), "{command:?}");
    }
}

#[test]
fn a_missing_explicit_file_is_a_one_line_error() {
    let missing = scratch("missing").join("nope.toml");
    let out = output(
        solr_dedup(),
        &["signature", "--config", missing.to_str().unwrap(), "-"],
    );
    assert_eq!(out.status.code(), Some(2));
    let line = error_line(&out);
    assert!(
        line.contains("nope.toml") && line.contains("--config"),
        "{line}"
    );
    let mut cmd = solr_dedup();
    cmd.env("SOLR_DEDUP_CONFIG", &missing);
    let out = output(cmd, &["signature", "-"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        error_line(&out).contains("SOLR_DEDUP_CONFIG"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn config_show_prints_a_file_that_reads_back() {
    let dir = scratch("show");
    let file = write(
        &dir.join("c.toml"),
        concat!(
            "[index]\ninput = \"docs.jsonl\"\nmax-line-bytes = \"1M\"\n[index.field]\nsku = \"url_s\"\n",
            "[solr]\nauth-file = \"/etc/solr-dedup/auth\"\n",
            "[decide]\nscheme = \"md5\"\nrules = \"/var/lib/solr-dedup/rules.json\"\n",
            "[run]\ncommit = \"within:10000\"\nmemory = \"1G\"\n",
            "[serve]\nevery = \"6h\"\ntoken-file = \"/etc/solr-dedup/token\"\n",
        ),
    );
    let config = file.to_str().unwrap();
    let out = output(solr_dedup(), &["--config", config, "config", "show"]);
    let text = stdout(&out).to_owned();
    assert!(
        text.contains(&format!("# configuration file: {config} (from --config)")),
        "{text}"
    );
    for (key, line) in [
        ("input", "input = \"docs.jsonl\""),
        ("max-line-bytes", "max-line-bytes = 1048576"),
        ("sku", "sku = \"url_s\""),
        ("auth-file", "auth-file = \"/etc/solr-dedup/auth\""),
        ("scheme", "scheme = \"md5\""),
        ("min-token-len", "min-token-len = 2  # default"),
        ("quant-rate", "quant-rate = 0.01  # default"),
        ("commit", "commit = \"within:10000\""),
        ("memory", "memory = 1073741824"),
        ("every", "every = \"6h\""),
        ("token-file", "token-file = \"/etc/solr-dedup/token\""),
    ] {
        assert!(shown(&out, key).starts_with(line), "{key}: {text}");
    }
    // No secret shows: the URL's user info, SOLR_PASSWORD, the token.
    let mut cmd = solr_dedup();
    cmd.env("SOLR_URL", "http://dedup:s3cret-pw@h:8983/solr/c")
        .env("SOLR_USER", "dedup")
        .env("SOLR_PASSWORD", "s3cret-pw")
        .env("SOLR_DEDUP_TOKEN", "t0ken-t0ken-t0ken-t0ken");
    let out = output(cmd, &["config", "show"]);
    let secret_free = stdout(&out);
    for secret in ["s3cret-pw", "t0ken"] {
        assert!(!secret_free.contains(secret), "{secret_free}");
    }
    assert!(
        secret_free.contains("# credentials: from SOLR_USER and SOLR_PASSWORD (not shown)"),
        "{secret_free}"
    );
    assert!(
        secret_free.contains("# bearer token: from SOLR_DEDUP_TOKEN (not shown)"),
        "{secret_free}"
    );
    // What it prints is a configuration file: read back, every value comes from it.
    let again = write(&dir.join("again.toml"), &text);
    let out = output(
        solr_dedup(),
        &["--config", again.to_str().unwrap(), "config", "show"],
    );
    let from_again = format!("# from {}", again.display());
    for line in stdout(&out)
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains(" = "))
    {
        assert!(line.ends_with(&from_again), "{line}");
    }
}

#[test]
fn a_run_with_prefer_yacy_in_the_file_decides_as_with_the_flag() {
    let dir = scratch("prefer-run");
    let file = write(&dir.join("c.toml"), "[decide]\nprefer = \"yacy\"\n");
    let run = |extra: &[&str], out_name: &str| -> String {
        let target = dir.join(out_name);
        let mut args = vec![
            "run",
            "--input",
            CORPUS,
            "--output",
            target.to_str().unwrap(),
            "-q",
        ];
        args.extend_from_slice(extra);
        let out = output(solr_dedup(), &args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        std::fs::read_to_string(target).unwrap()
    };
    let by_flag = run(&["--prefer", "yacy"], "flag.jsonl");
    let by_file = run(&["--config", file.to_str().unwrap()], "file.jsonl");
    let canonical = run(&[], "canonical.jsonl");
    assert_eq!(by_file, by_flag);
    // The setting matters on this corpus, so the equality above says something.
    assert_ne!(by_file, canonical);
}

#[test]
fn the_file_is_found_through_the_environment_and_the_default_paths() {
    let dir = scratch("found");
    let named = write(&dir.join("named.toml"), "[decide]\nnear-hashes = 11\n");
    let mut cmd = solr_dedup();
    cmd.env("SOLR_DEDUP_CONFIG", &named);
    let out = output(cmd, &["config", "show"]);
    assert!(
        stdout(&out).contains(&format!("{} (from SOLR_DEDUP_CONFIG)", named.display())),
        "{}",
        stdout(&out)
    );
    assert!(shown(&out, "near-hashes").starts_with("near-hashes = 11"));

    // XDG_CONFIG_HOME, then HOME, then systemd's CONFIGURATION_DIRECTORY first of all.
    write(
        &dir.join("xdg/solr-dedup/config.toml"),
        "[decide]\nnear-hashes = 12\n",
    );
    write(
        &dir.join("home/.config/solr-dedup/config.toml"),
        "[decide]\nnear-hashes = 13\n",
    );
    write(&dir.join("etc/config.toml"), "[decide]\nnear-hashes = 14\n");
    let mut xdg = solr_dedup();
    xdg.env("XDG_CONFIG_HOME", dir.join("xdg"))
        .env("HOME", dir.join("home"));
    let out = output(xdg, &["config", "show"]);
    assert!(shown(&out, "near-hashes").starts_with("near-hashes = 12"));
    assert!(
        stdout(&out).contains("(from the default path)"),
        "{}",
        stdout(&out)
    );
    let mut home = solr_dedup();
    home.env_remove("XDG_CONFIG_HOME")
        .env("HOME", dir.join("home"));
    let out = output(home, &["config", "show"]);
    assert!(shown(&out, "near-hashes").starts_with("near-hashes = 13"));
    let mut systemd = solr_dedup();
    systemd
        .env("CONFIGURATION_DIRECTORY", dir.join("etc"))
        .env("HOME", dir.join("home"));
    let out = output(systemd, &["config", "show"]);
    assert!(shown(&out, "near-hashes").starts_with("near-hashes = 14"));
    // --config beats SOLR_DEDUP_CONFIG, which beats the default path.
    let mut both = solr_dedup();
    both.env("SOLR_DEDUP_CONFIG", &named)
        .env("CONFIGURATION_DIRECTORY", dir.join("etc"));
    let etc = dir.join("etc/config.toml");
    let out = output(both, &["config", "show", "--config", etc.to_str().unwrap()]);
    assert!(shown(&out, "near-hashes").starts_with("near-hashes = 14"));
    let mut env_only = solr_dedup();
    env_only
        .env("SOLR_DEDUP_CONFIG", &named)
        .env("CONFIGURATION_DIRECTORY", dir.join("etc"));
    let out = output(env_only, &["config", "show"]);
    assert!(shown(&out, "near-hashes").starts_with("near-hashes = 11"));
    // A default path with nothing there is no error.
    let mut empty = solr_dedup();
    empty
        .env("HOME", dir.join("nobody"))
        .env_remove("XDG_CONFIG_HOME");
    let out = output(empty, &["config", "show"]);
    assert!(shown(&out, "near-hashes").starts_with("near-hashes = 14  # default"));
}

#[test]
fn the_urls_commands_take_their_rules_from_the_file() {
    let (_, rules) = super::shop_rules("config-rules");
    let dir = scratch("urls-rules");
    let file = write(
        &dir.join("c.toml"),
        &format!("[decide]\nrules = {:?}\n", rules.to_str().unwrap()),
    );
    let url = "https://www.shop.example/item/3?sid=zz";
    let by_flag = output(
        solr_dedup(),
        &["urls", "canonical", "--rules", rules.to_str().unwrap(), url],
    );
    let by_file = output(
        solr_dedup(),
        &["--config", file.to_str().unwrap(), "urls", "canonical", url],
    );
    assert_eq!(by_flag.status.code(), Some(0), "{}", stderr(&by_flag));
    assert_eq!(stdout(&by_file), stdout(&by_flag));
    // Neither: one line that says where a rules file may come from.
    let out = output(solr_dedup(), &["urls", "canonical", url]);
    assert_eq!(out.status.code(), Some(2));
    assert!(error_line(&out).contains("--rules"), "{}", stderr(&out));
}
