//! `fake_solr`: the test suite's fake Solr as a server on 127.0.0.1, loaded with a file of documents,
//! for benchmarks and for trying the worker without a Solr.
//!
//! ```text
//! cargo run --release --example fake_solr -- --load c100k.jsonl --schema schema/conf/managed-schema.xml
//! # prints the core URL, e.g. http://127.0.0.1:40123/solr/collection1, and serves until stdin closes
//! target/release/solr-dedup run --solr http://127.0.0.1:40123/solr/collection1 --report -
//! ```
//!
//! It is the same strict fake as in `tests/support/fake_solr` (one core, answers as Solr 9.3), with
//! the documents added and committed directly, not over HTTP. It binds to the loopback interface only.

// The example serves the fake and loads it; the fault injection and request log that only the
// tests use would warn here.
#[path = "../tests/support/fake_solr/mod.rs"]
#[allow(dead_code)]
mod fake_solr;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{anyhow, Context, Result};
use clap::Parser;
use fake_solr::schema::Schema;
use fake_solr::{FakeOptions, FakeSolr};

#[derive(Parser)]
#[command(about = "Serves the fake Solr on 127.0.0.1, loaded with JSON Lines of documents")]
struct Args {
    /// JSON Lines of Solr documents to add and commit before serving.
    #[arg(long)]
    load: Option<PathBuf>,
    /// The schema (managed-schema.xml); the transcripts' schema when left out.
    #[arg(long)]
    schema: Option<PathBuf>,
    /// The core name.
    #[arg(long, default_value = "collection1")]
    core: String,
}

/// Adds the documents of a JSON Lines file (their `_version_` dropped, as a crawler sends them) and
/// commits.
fn load(fake: &FakeSolr, path: &std::path::Path) -> Result<()> {
    let started = Instant::now();
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut n = 0u64;
    fake.with_core(|core| -> Result<()> {
        for (i, line) in BufReader::with_capacity(1 << 20, file).lines().enumerate() {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            let mut doc: serde_json::Value = serde_json::from_str(&line)
                .with_context(|| format!("{}:{}", path.display(), i + 1))?;
            if let Some(o) = doc.as_object_mut() {
                o.remove("_version_");
            }
            core.add(doc)
                .map_err(|e| anyhow!("{}:{}: {e:?}", path.display(), i + 1))?;
            n += 1;
        }
        core.commit();
        Ok(())
    })?;
    eprintln!(
        "loaded {n} documents in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn main() -> Result<()> {
    let args = Args::parse();
    let schema = match &args.schema {
        Some(p) => Schema::from_xml(
            &std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?,
        )
        .map_err(|e| anyhow!("{}: {e}", p.display()))?,
        None => Schema::transcripts(),
    };
    let fake = FakeSolr::start_with(FakeOptions {
        core: args.core.clone(),
        schema,
        ..FakeOptions::default()
    });
    if let Some(path) = &args.load {
        load(&fake, path)?;
    }
    println!("{}", fake.core_url());
    // Serve until standard input closes (Ctrl-D, or the parent process goes away). Lines on it are
    // commands for benchmarks: `work` prints what the fake was asked to do since the last `reset`
    // (one JSON line on standard output), `reset` starts counting again, `load FILE` adds and commits
    // more documents as a crawler would (without the worker's fields).
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let line = line?;
        let line = line.trim();
        if line == "work" {
            let w = fake.work();
            println!(
                "{}",
                serde_json::json!({
                    "requests": w.requests,
                    "text_docs": w.text_docs,
                    "light_cursor_docs": w.light_cursor_docs,
                    "lookup_docs": w.lookup_docs,
                    "light_get_docs": w.light_get_docs,
                    "export_docs": w.export_docs,
                    "written_docs": w.written_docs,
                })
            );
        } else if line == "reset" {
            fake.reset_work();
        } else if let Some(path) = line.strip_prefix("load ") {
            load(&fake, std::path::Path::new(path.trim()))?;
        } else if !line.is_empty() {
            eprintln!("unknown command {line:?} (work, reset, load FILE)");
        }
    }
    Ok(())
}
