//! The integration scenarios run against the fake Solr always, and against a real Solr (a standalone
//! core and a two-shard SolrCloud collection, `tests/support/real_solr.rs`) when one can be had: a
//! core given by a test-only URL, or Java and Maven to start one from Solr's test framework. This turns
//! that into `cfg(real_solr)`, so that without them the real variants show as ignored, not as passed.
//!
//! - `SOLR_DEDUP_TEST_NO_SOLR=1`: no real Solr even where Java and Maven are installed.
//! - `SOLR_DEDUP_TEST_REQUIRE_SOLR=1`: fail the build when there is none (`.ci/run` sets it, so that
//!   CI cannot pass with the real variants ignored).
//!
//! The tool's own `SOLR_URL` is never read: a user who exported it for the tool must not have
//! `cargo test` load test documents into that core.

use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

fn set(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0")
}

/// Whether `program args` runs and exits 0.
fn runs(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `--version`'s build facts: the commit (`git rev-parse --short HEAD`, `unknown` outside a git
/// checkout) and the build date (`SOURCE_DATE_EPOCH` when set, for reproducible builds, else now),
/// as `SOLR_DEDUP_COMMIT` and `SOLR_DEDUP_BUILD_DATE`. The script runs again when HEAD moves.
fn build_facts() {
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_owned());
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        });
    println!("cargo::rustc-env=SOLR_DEDUP_COMMIT={commit}");
    println!(
        "cargo::rustc-env=SOLR_DEDUP_BUILD_DATE={}",
        civil_date(secs / 86_400)
    );
    println!("cargo::rerun-if-env-changed=SOURCE_DATE_EPOCH");
    for git in [".git/HEAD", ".git/packed-refs"] {
        if std::path::Path::new(git).exists() {
            println!("cargo::rerun-if-changed={git}");
        }
    }
    // The branch HEAD names, whose file moves with every commit.
    if let Ok(head) = std::fs::read_to_string(".git/HEAD") {
        if let Some(r) = head.trim().strip_prefix("ref: ") {
            let path = format!(".git/{r}");
            if std::path::Path::new(&path).exists() {
                println!("cargo::rerun-if-changed={path}");
            }
        }
    }
    // The build script's own inputs: without these lines cargo would run it again only for the
    // files named above.
    println!("cargo::rerun-if-changed=build.rs");
}

/// `YYYY-MM-DD` of a day counted from 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_date(days: u64) -> String {
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

fn main() {
    build_facts();
    for var in [
        "SOLR_DEDUP_TEST_SOLR_URL",
        "SOLR_DEDUP_TEST_SOLRCLOUD_URL",
        "SOLR_DEDUP_TEST_NO_SOLR",
        "SOLR_DEDUP_TEST_REQUIRE_SOLR",
        "JAVA_HOME",
        "PATH",
    ] {
        println!("cargo::rerun-if-env-changed={var}");
    }
    println!("cargo::rustc-check-cfg=cfg(real_solr)");
    let given = set("SOLR_DEDUP_TEST_SOLR_URL") && set("SOLR_DEDUP_TEST_SOLRCLOUD_URL");
    let java = match std::env::var_os("JAVA_HOME") {
        Some(home) => {
            std::path::Path::new(&home).join("bin/java").exists() || runs("java", &["-version"])
        }
        None => runs("java", &["-version"]),
    };
    let launchable = java && runs("mvn", &["-v"]);
    let real = !set("SOLR_DEDUP_TEST_NO_SOLR") && (given || launchable);
    if real {
        println!("cargo::rustc-cfg=real_solr");
    } else if set("SOLR_DEDUP_TEST_REQUIRE_SOLR") {
        panic!(
            "SOLR_DEDUP_TEST_REQUIRE_SOLR is set, but there is no real Solr for the tests: install Java 17 \
             and Maven (found java: {java}), or set SOLR_DEDUP_TEST_SOLR_URL and SOLR_DEDUP_TEST_SOLRCLOUD_URL"
        );
    }
}
