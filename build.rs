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

fn main() {
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
