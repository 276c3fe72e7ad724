//! `solr-dedup run` and `solr-dedup check`: read `--chrome` and check the `--near-*` parameters
//! ([`ready`]), open the index through the common path (a file, or a Solr core with its schema
//! checked), run the engine, report.

use std::path::Path;

use anyhow::{anyhow, Context};

use super::common::failure::engine_failure;
use super::common::load::load_chrome;
use super::common::open::{open, Index, Purpose};
use super::common::{init_logging, runtime, Threads};
use super::interrupt::{Interrupt, Stoppable};
use super::progress::Spinner;
use super::{Exit, Failure};
use crate::config::{Input, JobConfig, Source};
use crate::engine::{self, Dimension, EngineError, Mode, Progress, Report};
use crate::store::file::target::{is_char_device, same_file, write_whole};
use crate::store::file::Output;

/// Runs the job and maps its outcome to an exit code.
pub fn run(c: &JobConfig) -> Result<Exit, Failure> {
    init_logging(c.verbosity);
    let c = &ready(c)?;
    // In file mode a signal stops the run cleanly (see `interrupt`); against Solr the default stays.
    let interrupt = matches!(c.source, Source::File(_))
        .then(Interrupt::install)
        .flatten();
    let progress = Stoppable {
        inner: Spinner::new(c.quiet),
        interrupt: interrupt.as_ref(),
    };
    let result = perform(c, &progress)?;
    if let (Err(EngineError::Cancelled(_)), Some(i)) = (&result, &interrupt) {
        if let Some(exit) = i.exit() {
            return Err(Failure::new(
                exit,
                anyhow!(
                    "interrupted by {}; nothing was written, the output is as it was",
                    i.name()
                ),
            ));
        }
    }
    finish(c, result)
}

/// The job as it runs: the `--near-*` parameters checked and the `--chrome` model read into the
/// engine's configuration, once, before any run (`serve` starts many runs from one).
pub(crate) fn ready(c: &JobConfig) -> Result<JobConfig, Failure> {
    c.engine
        .near
        .validate()
        .map_err(|e| anyhow!("--near-*: {e}"))?;
    let mut ready = c.clone();
    if let Some(path) = &c.chrome {
        if !c.engine.dimensions.contains(&Dimension::Near) {
            return Err(anyhow!(
                "--chrome is for the near dimension, which --dimensions leaves out; add near or drop --chrome"
            )
            .into());
        }
        ready.engine.chrome = Some(load_chrome(path, c.engine.near.shingle)?);
    }
    Ok(ready)
}

/// Opens the index, checks the schema and runs the engine, telling `progress` how far it is (and
/// stopping when it says so). `c` is [`ready`]. The outer error is a failure before the engine
/// started (configuration, the schema, Solr unreachable); the inner result is the engine's. Builds
/// its own runtime: call it from a thread that is not a runtime's worker (`serve` runs each job on a
/// thread of its own).
pub fn perform(
    c: &JobConfig,
    progress: &dyn Progress,
) -> Result<Result<Report, EngineError>, Failure> {
    let output = match &c.source {
        Source::File(path) => file_output(c, path)?,
        _ => {
            refuse_output(c)?;
            Output::Stdout
        }
    };
    let mut engine = c.engine.clone();
    let index = Index {
        source: &c.source,
        filter: c.filter.as_deref(),
        max_line_bytes: c.max_line_bytes,
        missing: "no documents to work on",
    };
    // Against Solr, signing runs on the calling thread's pool; the runtime's workers read ahead.
    let threads = match c.source {
        Source::Solr(_) => Threads::Workers,
        _ => Threads::Caller,
    };
    runtime(threads)?.block_on(async {
        let purpose = Purpose::Job {
            engine: &mut engine,
            writes: !c.check && !c.engine.dry_run,
            allow_lossy: c.allow_lossy,
            near_optional: c.near_optional,
            output,
            format: c.output_format,
        };
        let store = open(index, purpose).await?.store;
        let mode = if c.check { Mode::Check } else { Mode::Run };
        let result = engine::execute(&store, &engine, mode, progress).await;
        Ok(result.map(|mut report| {
            report.documents.multi_valued_first_taken = store.multi_valued_first_taken();
            report
        }))
    })
}

/// Against Solr the updates go to the core: `--output` is refused (`run` and `serve`).
pub(crate) fn refuse_output(c: &JobConfig) -> Result<(), Failure> {
    if matches!(c.source, Source::Solr(_)) && c.output.is_some() {
        return Err(anyhow!(
            "--output is for file mode; against Solr the updates go to the core (use --dry-run to write nothing)"
        )
        .into());
    }
    Ok(())
}

/// File mode: where the updates go, refused before anything is read when an output would
/// overwrite the input or the other output.
fn file_output(c: &JobConfig, path: &Path) -> Result<Output, Failure> {
    // `--output -` is standard output, as leaving it out is.
    let output_path = c.output.as_ref().filter(|p| p.as_os_str() != "-");
    if c.report == Some(Input::Stdin) && output_path.is_none() && !c.check && !c.engine.dry_run {
        return Err(anyhow!(
            "the updates and the report would both go to standard output; give --output FILE or --report FILE"
        )
        .into());
    }
    // Before anything is read: no output may overwrite the input or the other output.
    if let Some(Input::File(report)) = &c.report {
        if same_file(path, report) {
            return Err(anyhow!(
                "the report {} is the input {}; write it to another file",
                report.display(),
                path.display()
            )
            .into());
        }
        if let Some(out) = output_path {
            if same_file(out, report) && !is_char_device(out) {
                return Err(anyhow!(
                    "--output and --report are the same file ({}); give each its own",
                    out.display()
                )
                .into());
            }
        }
    }
    Ok(match output_path {
        Some(p) => Output::File(p.clone()),
        None => Output::Stdout,
    })
}

fn finish(c: &JobConfig, result: Result<Report, EngineError>) -> Result<Exit, Failure> {
    let report = result.map_err(|e| engine_failure(e, true))?;
    write_report(c, &report)?;
    if !c.quiet {
        eprint!("{}", report.summary());
    }
    // A run that returns has settled every document (conflicts were read again in later rounds; one
    // that cannot settle ends in `Unstable`, exit 1).
    let problems = c.check && report.check_failed();
    Ok(if problems { Exit::Problems } else { Exit::Ok })
}

fn write_report(c: &JobConfig, report: &Report) -> Result<(), Failure> {
    let Some(target) = &c.report else {
        return Ok(());
    };
    let mut text = serde_json::to_string_pretty(report).context("cannot encode the report")?;
    text.push('\n');
    // A regular file is replaced atomically, a link followed, a special file streamed to.
    let path = match target {
        Input::Stdin => Path::new("-"),
        Input::File(path) => path.as_path(),
    };
    write_whole(path, text.as_bytes()).with_context(|| match target {
        Input::Stdin => "cannot write the report to standard output".to_owned(),
        Input::File(path) => format!("cannot write the report {}", path.display()),
    })?;
    Ok(())
}
