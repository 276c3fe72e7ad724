//! The one way the tests start the built binary, and read what it said.
//!
//! Every spawn goes through [`solr_dedup`] (or [`solr_dedup_under`] for a wrapper such as
//! `prlimit`), so none inherits the developer's `SOLR_URL`, `SOLR_USER`, `SOLR_PASSWORD`, state folder,
//! configuration file or `RUST_LOG`: a test that wants one sets it on the returned command. Standard input is closed
//! unless the test sets it.
//!
//! A plain [`Command`] rather than the `assert_cmd` crate: the tests also spawn the binary as a
//! long-lived child (`serve`), signal it mid-run, feed its standard input from a thread and run it
//! under `prlimit`, which all need the `Command` itself; the assertions they share are the two
//! helpers below, so a dependency would add a second style without removing code.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// The prefix of the one line a failed run prints.
pub const ERROR_PREFIX: &str = "solr-dedup: error: ";

/// `solr-dedup` with a cleared environment for Solr and logging, standard input closed.
pub fn solr_dedup() -> Command {
    hermetic(Command::new(env!("CARGO_BIN_EXE_solr-dedup")))
}

/// `PROGRAM ARGS… solr-dedup`, for a wrapper that runs the binary (`prlimit --as=N --`); the
/// binary's own arguments follow on the returned command.
pub fn solr_dedup_under(program: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(args).arg(env!("CARGO_BIN_EXE_solr-dedup"));
    hermetic(cmd)
}

fn hermetic(mut cmd: Command) -> Command {
    // Runs keep the order a core was decided under in the state folder: this process's own, not
    // the developer's (a test that wants another passes --state-dir).
    let state = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("state-{}", std::process::id()));
    cmd.env("STATE_DIRECTORY", state)
        .env_remove("XDG_STATE_HOME")
        .env_remove("SOLR_URL")
        .env_remove("SOLR_USER")
        .env_remove("SOLR_PASSWORD")
        .env_remove("RUST_LOG")
        // No configuration file but the one a test writes: the default path's folder is empty.
        .env_remove("SOLR_DEDUP_CONFIG")
        .env_remove("CONFIGURATION_DIRECTORY")
        .env("XDG_CONFIG_HOME", no_config_home())
        .stdin(Stdio::null());
    cmd
}

/// An empty folder for `XDG_CONFIG_HOME`, so that a developer's `~/.config/solr-dedup/config.toml`
/// never reaches a test.
pub fn no_config_home() -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-config-home");
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

/// Runs `solr-dedup ARGS` to the end.
pub fn run(args: &[&str]) -> Output {
    solr_dedup().args(args).output().expect("the binary starts")
}

/// Runs `solr-dedup ARGS` to the end, feeding `stdin`.
pub fn run_with_stdin(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = solr_dedup()
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

/// Standard output; it must be UTF-8.
pub fn stdout(out: &Output) -> &str {
    std::str::from_utf8(&out.stdout).expect("stdout is UTF-8")
}

/// Standard error; it must be UTF-8.
pub fn stderr(out: &Output) -> &str {
    std::str::from_utf8(&out.stderr).expect("stderr is UTF-8")
}

/// Asserts that standard error is exactly one line starting with [`ERROR_PREFIX`]; the line.
pub fn error_line(out: &Output) -> String {
    let err = stderr(out);
    assert_eq!(err.lines().count(), 1, "one line: {err:?}");
    assert!(err.starts_with(ERROR_PREFIX), "{err:?}");
    err.trim_end().to_owned()
}
