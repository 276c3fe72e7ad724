//! `bench_run`: times one whole engine run in file mode, for `BENCHMARKS.md`.
//!
//! ```text
//! cargo run --release --example bench_run -- corpus.jsonl updates.jsonl            # incremental
//! cargo run --release --example bench_run -- corpus.jsonl annotated.jsonl --docs-output --full
//! cargo run --release --example bench_run -- annotated.jsonl /dev/null --check
//! ```
//!
//! It runs the library directly (no CLI, no config file) on a current-thread tokio runtime, as the
//! binary does, with [`EngineConfig::default`] apart from `--full`. It prints the wall time of the
//! engine call (opening the store included), documents per second, the report's per-phase times and the
//! report summary. `--docs-output` writes the annotated documents instead of the updates, so that a
//! run's output is the next run's input (a settled run, or a run after a simulated crawl change).
//! Peak memory is left to `/usr/bin/time -v`.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Parser;
use solr_dedup::engine::{self, EngineConfig};
use solr_dedup::store::file::{FileStore, Output, OutputFormat};

#[derive(Parser)]
#[command(about = "Times one solr-dedup engine run on a JSON Lines file")]
struct Args {
    /// JSON Lines of Solr documents.
    input: PathBuf,
    /// Where the updates (or, with --docs-output, the annotated documents) go.
    output: PathBuf,
    /// Recompute every signature from the text.
    #[arg(long)]
    full: bool,
    /// Write every document with the updates applied (the next run's input).
    #[arg(long)]
    docs_output: bool,
    /// Read-only check instead of a run (writes nothing).
    #[arg(long)]
    check: bool,
    /// Documents per page and per update batch.
    #[arg(long, default_value_t = 1000)]
    batch_size: usize,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let cfg = EngineConfig {
        full: args.full,
        batch_size: args.batch_size,
        ..EngineConfig::default()
    };
    let format = if args.docs_output {
        OutputFormat::Docs
    } else {
        OutputFormat::Updates
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .context("tokio runtime")?;
    let start = Instant::now();
    let store = FileStore::open(
        &args.input,
        Output::File(args.output.clone()),
        format,
        "id",
        "_version_",
    )?;
    let report = if args.check {
        rt.block_on(engine::check(&store, &cfg))?
    } else {
        rt.block_on(engine::run(&store, &cfg))?
    };
    let elapsed = start.elapsed().as_secs_f64();
    let read = report.documents.read;
    println!(
        "elapsed {elapsed:.3} s, {read} documents, {:.0} docs/s",
        read as f64 / elapsed
    );
    let phases: Vec<String> = report
        .phases_ms
        .iter()
        .map(|(k, v)| format!("{k} {v} ms"))
        .collect();
    println!("phases: {}", phases.join(", "));
    print!("{}", report.summary());
    Ok(())
}
