//! `solr-dedup run` and `solr-dedup check`: read `--chrome` and check the `--near-*` parameters
//! (`ready`), open the index through the common path (a file, or a Solr core with its schema
//! checked), run the engine, report.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{anyhow, Context};

use super::common::changes;
use super::common::decided::Decided;
use super::common::failure::engine_failure;
use super::common::load::{load_chrome, load_rules};
use super::common::open::{open, Index, Purpose};
use super::common::settings::{Deciding, Record as SettingsRecord};
use super::common::{init_logging, runtime, Threads};
use super::interrupt::{Interrupt, Stoppable};
use super::progress::Spinner;
use super::{Exit, Failure};
use crate::config::{Input, JobConfig, Source};
use crate::engine::{self, Dimension, EngineConfig, EngineError, Mode, Order, Progress, Report};
use crate::store::changes::{ChangeStore, Prepared};
use crate::store::file::target::{is_char_device, same_file, write_whole, Target};
use crate::store::file::Output;
use crate::store::Store;

/// Runs the job and maps its outcome to an exit code. With `--report`, the report is written
/// whatever the outcome: a failed run's says so (`outcome`, `error`, `exit`) with what the run did
/// before it failed, so that it is never the previous run's file.
pub fn run(c: &JobConfig) -> Result<Exit, Failure> {
    init_logging(&c.log);
    probe_report(c)?;
    // A signal stops the run cleanly (see `interrupt`): in file mode before anything is written,
    // against Solr between batches (what was written is complete). A second one stops at once:
    // its report says so, with no counts (the engine's are not at hand), unless the run's own
    // report was already written.
    let recorded = Arc::new(AtomicBool::new(false));
    let aborted = {
        let c = c.clone();
        let recorded = recorded.clone();
        move |number: i32| {
            let exit = match number {
                2 => Exit::Interrupted,
                _ => Exit::Terminated,
            };
            let failure = Failure::new(exit, anyhow!("stopped at once; {}", stopped_what(&c)));
            if !recorded.load(Ordering::SeqCst) {
                aborted_report(&c, &failure);
            }
            failure.to_string()
        }
    };
    let interrupt = Interrupt::install(Box::new(aborted));
    // From here the report file speaks of this run: a run killed before it ends leaves `running`,
    // never the previous run's outcome.
    started_report(c)?;
    let c = &ready(c).inspect_err(|f| failure_report(c, None, f, "failed"))?;
    let file = matches!(c.index.source, Source::File(_));
    let progress = Stoppable {
        inner: Spinner::new(c.quiet),
        interrupt: interrupt.as_ref(),
    };
    // The report is written before a file run's output appears: one that cannot be written leaves
    // the output as it was.
    let unwritable = AtomicBool::new(false);
    let record = |report: &Report| {
        // Set first: a second signal from here on leaves the run's own report alone.
        recorded.store(true, Ordering::SeqCst);
        write_report(c, &report_json(report, "succeeded", None))
            .inspect_err(|_| unwritable.store(true, Ordering::Relaxed))
    };
    let result = match perform_keeping(c, &progress, &record) {
        Ok(result) => result,
        Err(failure) => {
            // A report that could not be written is not tried again: its error is the one line.
            if !unwritable.load(Ordering::Relaxed) {
                failure_report(c, None, &failure, "failed");
            }
            return Err(failure);
        }
    };
    let (error, mut partial) = match result {
        Ok(report) => return finish(c, report),
        Err(failed) => failed,
    };
    if file {
        // The file store writes its output only when a run ends: nothing was written.
        partial.nothing_written();
    }
    if let (EngineError::Cancelled(_), Some(i)) = (&error, &interrupt) {
        if let Some(exit) = i.exit() {
            let failure = Failure::new(
                exit,
                anyhow!("interrupted by {}; {}", i.name(), stopped_what(c)),
            );
            failure_report(c, Some(&partial), &failure, "interrupted");
            return Err(failure);
        }
    }
    let mut failure = engine_failure(error, true);
    let d = &partial.documents;
    if d.unanswered > 0 {
        // The range goes into the one line too: without --report it is the only record.
        failure.error = failure.error.context(format!(
            "{} documents written, {} more sent without an answer (they may have landed)",
            d.written, d.unanswered
        ));
    }
    failure_report(c, Some(&partial), &failure, "failed");
    Err(failure)
}

/// The report of a run a second signal stopped at once: `interrupted`, with its error line and exit
/// code, and `documents` and `work` null: what it did is not counted (the engine's counts are not
/// at hand on the signal's thread), so no number in it can be mistaken for what landed.
fn aborted_report(c: &JobConfig, failure: &Failure) {
    if !report_writable(c) {
        return;
    }
    let mut json = report_json(&Report::default(), "interrupted", Some(failure));
    if let Some(map) = json.as_object_mut() {
        map.insert("documents".into(), serde_json::Value::Null);
        map.insert("work".into(), serde_json::Value::Null);
    }
    if let Err(e) = write_report(c, &json) {
        tracing::warn!("{:#}", e.error);
    }
}

/// What a run stopped by a signal leaves: in file mode nothing (the output is written when a run
/// ends); against Solr the batches written, each complete.
fn stopped_what(c: &JobConfig) -> &'static str {
    match c.index.source {
        Source::File(_) => "nothing was written, the output is as it was",
        _ if c.check || c.engine.dry_run => "nothing was written",
        _ => "the batches written are complete, and the next run takes up the rest",
    }
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
        ready.engine.chrome = Some(load_chrome(path)?);
    }
    // The rules rank representatives under the canonical order only (YaCy's ignores them).
    if let Some(path) = &c.rules {
        if c.engine.preference.order == Order::Canonical {
            let mut rules = load_rules(path)?;
            rules.recompute();
            tracing::info!(
                sites = rules.sites.len(),
                "URL rules read for the representatives"
            );
            ready.engine.url_rules = Some(std::sync::Arc::new(rules));
        }
    }
    Ok(ready)
}

/// Opens the index, checks the schema and runs the engine, telling `progress` how far it is (and
/// stopping when it says so). `c` is [`ready`]. The outer error is a failure before the engine
/// started (configuration, the schema, Solr unreachable); the inner result is the engine's. Runs on
/// the caller's runtime (`serve` drives it on the server's, from a thread of the run's own, which
/// does the signing while the runtime's workers read ahead).
pub(crate) async fn perform(
    c: &JobConfig,
    progress: &dyn Progress,
) -> Result<Result<Report, (EngineError, Box<Report>)>, Failure> {
    execute(c, progress, &|_| Ok(())).await
}

/// How a run is recorded before what it wrote becomes visible (a file run's output put in place):
/// `run` writes its report; `serve` keeps its records itself.
type Record<'a> = &'a (dyn Fn(&Report) -> Result<(), Failure> + Sync);

/// [`execute`] on a runtime of the command's own.
fn perform_keeping(
    c: &JobConfig,
    progress: &dyn Progress,
    record: Record<'_>,
) -> Result<Result<Report, (EngineError, Box<Report>)>, Failure> {
    // Against Solr, signing runs on the calling thread's pool; the runtime's workers read ahead.
    let threads = match c.index.source {
        Source::Solr(_) => Threads::Workers,
        _ => Threads::Caller,
    };
    runtime(threads)?.block_on(execute(c, progress, record))
}

/// [`perform`], with the report of what a failed run did before it failed; a run that succeeded
/// is recorded (`record`) before the store publishes what it wrote.
async fn execute(
    c: &JobConfig,
    progress: &dyn Progress,
    record: Record<'_>,
) -> Result<Result<Report, (EngineError, Box<Report>)>, Failure> {
    let output = match &c.index.source {
        Source::File(path) => file_output(c, path)?,
        _ => {
            refuse_output(c)?;
            Output::Stdout
        }
    };
    let mut engine = c.engine.clone();
    let index = Index {
        config: &c.index,
        missing: "no documents to work on",
    };
    let purpose = Purpose::Job {
        engine: &mut engine,
        writes: !c.check && !c.engine.dry_run,
        allow_lossy: c.allow_lossy,
        near_optional: c.near_optional,
        output,
        format: c.output_format,
    };
    let opened = open(index, purpose).await?;
    let writes = !c.check && !c.engine.dry_run;
    held_to_signing(c, &engine, &opened, writes).await?;
    // The settings the core was decided under, before anything is written.
    held_to_record(c, &engine, writes).await?;
    let mode = if c.check { Mode::Check } else { Mode::Run };
    let decided = Decided::of(c);
    if let Some(d) = &decided {
        engine.decided_under = d.read();
        if writes {
            d.before_writing(&engine.decided_under, &engine);
        }
    }
    let changes = changes::store_for(c, &engine, opened.store.clone(), opened.extra_light, writes);
    let store: Arc<dyn Store> = match &changes {
        Some(cs) => cs.clone(),
        None => opened.store,
    };
    let taken = |mut report: Report| {
        report.documents.multi_valued_first_taken = store.multi_valued_first_taken();
        // The engine counted its own spills; the file store's go to the same folder.
        report.memory.spilled_bytes += store.spilled_bytes();
        report
    };
    let prepared = match &changes {
        Some(cs) => cs.prepare().await,
        None => Ok(Prepared::Run),
    };
    let result = match prepared {
        Err(e) => Err((
            EngineError::Store(e),
            Box::new(engine::settled_report(
                &store,
                &engine,
                mode,
                0,
                Default::default(),
            )),
        )),
        Ok(Prepared::Settled { count, dimensions }) => Ok(engine::settled_report(
            &store,
            &engine,
            mode,
            count,
            changes::settled_dimensions(dimensions),
        )),
        Ok(Prepared::Run) => engine::execute_keeping(&store, &engine, mode, progress).await,
    };
    if let (Some(d), true, Ok(_)) = (&decided, writes, &result) {
        d.after_success(&engine.decided_under, &engine);
    }
    let result = match &changes {
        Some(cs) => with_changes(cs, result).await,
        None => result,
    };
    let result = result
        .map(taken)
        .map_err(|(e, partial)| (e, Box::new(taken(*partial))));
    Ok(match result {
        Ok(report) => {
            record(&report)?;
            // What it did stays in the failed run's report when the output cannot be put in place.
            match store.publish().await {
                Ok(()) => Ok(report),
                Err(e) => Err((EngineError::Store(e), Box::new(report))),
            }
        }
        failed => failed,
    })
}

/// Keeps (or removes) the change state after the run, and puts how the run found its changes in
/// its report, with the work that took in `work.*`.
async fn with_changes(
    cs: &ChangeStore,
    result: Result<Report, (EngineError, Box<Report>)>,
) -> Result<Report, (EngineError, Box<Report>)> {
    let (ok, written, dims) = match &result {
        Ok(r) => (
            true,
            r.documents.written,
            serde_json::to_value(&r.dimensions).unwrap_or_default(),
        ),
        Err((_, r)) => (false, r.documents.written, serde_json::Value::Null),
    };
    cs.finish(ok, written, dims).await;
    let summary = cs.summary();
    let add = |r: &mut Report| {
        r.work.requests += summary.requests;
        r.work.light_export_docs += summary.versions_read;
        r.work.lookup_docs += summary.changed_read;
        r.work.light_cursor_docs += summary.cursor_docs;
        r.work.modelled_solr_ms = r.work.modelled_ms(&cs.cost_model()).round() as u64;
        r.phases_ms.insert("changes".into(), summary.prepare_ms);
        r.phases_ms.insert("keep_state".into(), summary.finish_ms);
        r.changes = Some(summary.clone());
    };
    match result {
        Ok(mut r) => {
            add(&mut r);
            Ok(r)
        }
        Err((e, mut r)) => {
            add(&mut r);
            Err((e, r))
        }
    }
}

/// Holds a writing run to the pages signed at index time, before its settings are recorded: a run
/// whose settings sign otherwise than the core's signing chain (`solr-plugin/`) stops with exit 2
/// naming each difference (unless `--reconfigure`, whose new record the chain then follows); and on
/// a core that does not store the text, `--reconfigure` to settings that sign otherwise stops with
/// the count of pages that only re-indexing can sign again.
async fn held_to_signing(
    c: &JobConfig,
    engine: &EngineConfig,
    opened: &super::common::open::Opened,
    writes: bool,
) -> Result<(), Failure> {
    // Before the first run records its settings: pages the chain signed under its own arguments
    // would not match them. --reconfigure changes the record, which the chain then follows.
    if let (Some(processor), true, false) = (&opened.signing, writes, c.reconfigure) {
        let differences =
            crate::commands::common::settings::chain_differences(c, engine, processor)
                .await
                .map_err(|why| anyhow!("{why}"))?;
        if !differences.is_empty() {
            return Err(Failure::new(
                Exit::Usage,
                anyhow!(
                    "the core's update chain signs pages at index time under other settings than this run's: {}; \
                     run with the chain's settings, or change them for both with run --reconfigure (the chain \
                     follows the core's settings record) and re-index the pages the chain signed",
                    differences.join("; ")
                ),
            ));
        }
    }
    // A core that does not store the text cannot sign its pages again under other settings.
    if c.reconfigure && writes && engine.text_not_stored {
        let differences = crate::commands::common::settings::resigning_differences(c, engine)
            .await
            .map_err(|why| anyhow!("{why}"))?;
        if !differences.is_empty() {
            let pages = opened
                .store
                .count(&opened.filter)
                .await
                .ok()
                .flatten()
                .map_or_else(|| "the".to_owned(), |n| n.to_string());
            return Err(Failure::new(
                Exit::Usage,
                anyhow!(
                    "{pages} pages can only be signed again by re-indexing them: the core does not store \
                     {}, and these settings sign otherwise ({}); keep the recorded settings, or empty the \
                     core, record these and index the pages again through the signing chain",
                    engine.fields.text,
                    differences.join("; ")
                ),
            ));
        }
    }
    Ok(())
}

/// Holds a run to the settings recorded with its core (see `common::settings`), before anything
/// is written: a writing run with other deciding settings (as `engine`, fitted to the core, decides)
/// stops with exit 2 naming each difference; a check or dry run says so and goes on. With
/// `--reconfigure` the run's settings are recorded now, before it writes, so that every other
/// process is held to them from this moment (a run that then fails leaves the core to be finished
/// under them); the first writing run on a core with no record records its own the same way. A
/// core whose Config API cannot be read is not held (a warning for a writing run).
pub(crate) async fn held_to_record(
    c: &JobConfig,
    engine: &EngineConfig,
    writes: bool,
) -> Result<(), Failure> {
    let Some(record) = SettingsRecord::of(c) else {
        if c.reconfigure {
            return Err(anyhow!(
                "--reconfigure records settings with a Solr core; a file has none"
            )
            .into());
        }
        return Ok(());
    };
    if c.reconfigure && !writes {
        return Err(anyhow!(
            "--reconfigure records the settings a run decides the core under; drop --dry-run"
        )
        .into());
    }
    let ours = Deciding::of(c, engine);
    let recorded = match record.read().await {
        Ok(recorded) => recorded,
        Err(why) if c.reconfigure => return Err(anyhow!("{why}").into()),
        Err(why) if writes => {
            tracing::warn!("{why}; the run is not held to the settings recorded with the core");
            return Ok(());
        }
        Err(why) => {
            tracing::info!("{why}");
            return Ok(());
        }
    };
    if c.reconfigure {
        if recorded.as_ref().and_then(|r| r.as_ref().ok()) != Some(&ours) {
            // Each write reloads the core: only when the record changes.
            record.write(&ours).await.map_err(|e| anyhow!("{e}"))?;
        }
        return Ok(());
    }
    let recorded = match recorded {
        // The first writing run records its settings: from now on every process pointed at the
        // core is held to them. A Solr that refuses the write (no `config-edit`) leaves the core
        // unrecorded, as before, with a warning.
        None if writes => {
            match record.write(&ours).await {
                Ok(()) => tracing::info!(
                    "recorded this run's settings with the core: later runs, serve and other machines are held to them"
                ),
                Err(why) => tracing::warn!(
                    "{why}; the settings this run decides under are not recorded with the core (give the worker config-edit, or pin them later with run --reconfigure)"
                ),
            }
            return Ok(());
        }
        None => return Ok(()),
        Some(Ok(recorded)) => recorded,
        Some(Err(why)) if writes => {
            return Err(anyhow!(
                "{why}; run with --reconfigure to record this run's settings in its place"
            )
            .into())
        }
        Some(Err(why)) => {
            tracing::warn!("{why}");
            return Ok(());
        }
    };
    let differences = ours.differences(&recorded);
    if differences.is_empty() {
        return Ok(());
    }
    if !writes {
        tracing::warn!(
            "the core was decided under other settings ({}); this {} judges by its own",
            differences.join("; "),
            if c.check { "check" } else { "dry run" }
        );
        return Ok(());
    }
    Err(anyhow!(
        "the core's flags were decided under other settings: {}; run with the recorded ones, or add --reconfigure to decide the core under these",
        differences.join("; ")
    )
    .into())
}

/// Against Solr the updates go to the core: `--output` is refused (`run` and `serve`).
pub(crate) fn refuse_output(c: &JobConfig) -> Result<(), Failure> {
    if matches!(c.index.source, Source::Solr(_)) && c.output.is_some() {
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

/// A run that succeeded (its report already written, see [`execute`]): the summary and the exit
/// code.
fn finish(c: &JobConfig, report: Report) -> Result<Exit, Failure> {
    if !c.quiet {
        eprint!("{}", report.summary());
    }
    // A run that returns has settled every document (conflicts were read again in later rounds; one
    // that cannot settle ends in `Unstable`, exit 1).
    let problems = (c.check && report.check_failed()) || report.documents.unversioned > 0;
    Ok(if problems { Exit::Problems } else { Exit::Ok })
}

/// The report as written: the engine's report with the run's `outcome` (`succeeded`, `failed`,
/// `interrupted`) and, for a run that did not succeed, its `error` line and `exit` code.
fn report_json(report: &Report, outcome: &str, failure: Option<&Failure>) -> serde_json::Value {
    let mut v = serde_json::to_value(report).unwrap_or_else(|_| serde_json::json!({}));
    if let Some(map) = v.as_object_mut() {
        map.insert("outcome".into(), outcome.into());
        if let Some(f) = failure {
            map.insert("error".into(), f.to_string().into());
            map.insert("exit".into(), f.exit.code().into());
        }
    }
    v
}

/// Writes the report of a run that failed (`partial`: what it did before; none when it failed
/// before the engine started). A report that cannot be written is logged: the run's own error is
/// the one that counts.
fn failure_report(c: &JobConfig, partial: Option<&Report>, failure: &Failure, outcome: &str) {
    if !report_writable(c) {
        return;
    }
    let empty = Report::default();
    let json = report_json(partial.unwrap_or(&empty), outcome, Some(failure));
    if let Err(e) = write_report(c, &json) {
        tracing::warn!("{:#}", e.error);
    }
}

/// Whether a failed run's report may be written: never over the input or the output (the refusal
/// of exactly that may be the failure).
fn report_writable(c: &JobConfig) -> bool {
    match &c.report {
        None => false,
        Some(Input::Stdin) => true,
        // Never over the input or the output (the refusal of exactly that may be the failure).
        Some(Input::File(path)) => {
            !matches!(&c.index.source, Source::File(input) if same_file(input, path))
                && !c
                    .output
                    .as_ref()
                    .is_some_and(|out| same_file(out, path) && !is_char_device(out))
        }
    }
}

/// Before anything is read or written: the report's folder takes files (a regular file is replaced
/// atomically through a temporary file beside it). A special file is not opened here: a FIFO would
/// wait for its reader.
fn probe_report(c: &JobConfig) -> Result<(), Failure> {
    let Some(Input::File(path)) = &c.report else {
        return Ok(());
    };
    let fail = |e: std::io::Error| {
        Failure::from(anyhow!(e).context(format!(
            "cannot write the report {} (check the folder and its permissions)",
            path.display()
        )))
    };
    // Never over a file the run reads: the report is written at its start (`running`).
    for (what, read) in [("rules", &c.rules), ("chrome model", &c.chrome)] {
        if read.as_ref().is_some_and(|r| same_file(r, path)) {
            return Err(anyhow!(
                "the report {} is the {what} file; write it to another file",
                path.display()
            )
            .into());
        }
    }
    let target = Target::resolve(path).map_err(fail)?;
    target.create_temp().map_err(fail)?;
    Ok(())
}

/// Replaces a regular report file with `{"outcome": "running"}` as the run starts, so that a run
/// killed before it ends (SIGKILL, a power cut) never leaves the previous run's outcome there. A
/// special file (`/dev/stdout`, a FIFO) and standard output get only the final report.
fn started_report(c: &JobConfig) -> Result<(), Failure> {
    let Some(Input::File(path)) = &c.report else {
        return Ok(());
    };
    let fail = |e: std::io::Error| {
        Failure::from(anyhow!(e).context(format!(
            "cannot write the report {} (check the folder and its permissions)",
            path.display()
        )))
    };
    if !matches!(Target::resolve(path).map_err(fail)?, Target::Replace(_)) {
        return Ok(());
    }
    // Never over the input or the output (the refusal of exactly that comes later).
    let clash = matches!(&c.index.source, Source::File(input) if same_file(input, path))
        || c.output.as_ref().is_some_and(|out| same_file(out, path));
    if clash {
        return Ok(());
    }
    write_report(c, &serde_json::json!({"outcome": "running"}))
}

fn write_report(c: &JobConfig, report: &serde_json::Value) -> Result<(), Failure> {
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
