//! `solr-dedup run` and `solr-dedup check` in file mode: open the store, run the engine, report.

use std::io::Write;

use anyhow::{anyhow, Context};
use tracing_subscriber::EnvFilter;

use super::{Exit, Failure};
use crate::config::{Input, JobConfig};
use crate::engine::{self, EngineError, Report};
use crate::store::file::{FileStore, Output};

/// Runs the job and maps its outcome to an exit code.
pub fn run(c: &JobConfig) -> Result<Exit, Failure> {
    init_logging(c.verbosity);
    if c.report == Some(Input::Stdin) && c.output.is_none() && !c.check && !c.engine.dry_run {
        return Err(anyhow!(
            "the updates and the report would both go to standard output; give --output FILE or --report FILE"
        )
        .into());
    }
    let output = match &c.output {
        Some(p) => Output::File(p.clone()),
        None => Output::Stdout,
    };
    let f = &c.engine.fields;
    let store = FileStore::open(&c.input, output, c.output_format, &f.id, &f.version)
        .map_err(|e| Failure::new(Exit::Usage, anyhow!(e)))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    let result = runtime.block_on(async {
        if c.check {
            engine::check(&store, &c.engine).await
        } else {
            engine::run(&store, &c.engine).await
        }
    });
    let report = match result {
        Ok(report) => report,
        Err(e @ EngineError::Unstable(_)) => return Err(Failure::new(Exit::Problems, anyhow!(e))),
        Err(e) => return Err(Failure::new(Exit::Usage, anyhow!(e))),
    };
    write_report(c, &report)?;
    if !c.quiet {
        eprint!("{}", report.summary());
    }
    let problems = if c.check {
        report.check_failed()
    } else {
        report.documents.conflicts + report.documents.changed_during_run > 0
    };
    Ok(if problems { Exit::Problems } else { Exit::Ok })
}

fn write_report(c: &JobConfig, report: &Report) -> Result<(), Failure> {
    let Some(target) = &c.report else {
        return Ok(());
    };
    let mut text = serde_json::to_string_pretty(report).context("cannot encode the report")?;
    text.push('\n');
    match target {
        Input::Stdin => std::io::stdout()
            .lock()
            .write_all(text.as_bytes())
            .context("cannot write the report to standard output")?,
        Input::File(path) => std::fs::write(path, text)
            .with_context(|| format!("cannot write the report {}", path.display()))?,
    }
    Ok(())
}

/// Logs go to standard error: warnings by default, more with -v / -vv, or as `RUST_LOG` says.
fn init_logging(verbosity: u8) {
    let default = match verbosity {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}
