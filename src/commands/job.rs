//! `solr-dedup run` and `solr-dedup check`: open the store (a file or a Solr core), check a core's
//! schema, run the engine, report.

use anyhow::{anyhow, Context};
use tracing::{debug, info, warn};
use tracing_subscriber::EnvFilter;

use super::interrupt::{Interrupt, Stoppable};
use super::progress::Spinner;
use super::schema_fit::inspect;
use super::{Exit, Failure};
use crate::config::{Input, JobConfig, SolrConfig, Source};
use crate::engine::{self, Dimension, EngineConfig, EngineError, Mode, Progress, Report};
use crate::solr::schema::SchemaInfo;
use crate::solr::{Client, ClientConfig, Credentials, SolrError};
use crate::store::file::target::{is_char_device, same_file, write_whole};
use crate::store::file::{FileStore, Output};
use crate::store::solr::SolrStore;
use crate::store::{Filter, FilterError, Store, StoreError, StoreErrorKind};

/// Runs the job and maps its outcome to an exit code.
pub fn run(c: &JobConfig) -> Result<Exit, Failure> {
    init_logging(c.verbosity);
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

/// Opens the store, checks the schema and runs the engine, telling `progress` how far it is (and
/// stopping when it says so). The outer error is a failure before the engine started (configuration,
/// the schema, Solr unreachable); the inner result is the engine's. Builds its own runtime: call it
/// from a thread that is not a runtime's worker (`serve` runs each job on a thread of its own).
pub fn perform(
    c: &JobConfig,
    progress: &dyn Progress,
) -> Result<Result<Report, EngineError>, Failure> {
    c.engine
        .near
        .validate()
        .map_err(|e| anyhow!("--near-*: {e}"))?;
    let mut loaded;
    let c = match &c.chrome {
        None => c,
        Some(path) => {
            if !c.engine.dimensions.contains(&Dimension::Near) {
                return Err(anyhow!(
                    "--chrome is for the near dimension, which --dimensions leaves out; add near or drop --chrome"
                )
                .into());
            }
            loaded = c.clone();
            loaded.engine.chrome = Some(super::chrome::load(path, c.engine.near.shingle)?);
            &loaded
        }
    };
    match &c.source {
        Source::File(path) => run_file(c, path, progress),
        Source::Solr(solr) => run_solr(c, solr, progress),
        Source::Missing => Err(anyhow!(
            "no documents to work on: give --solr URL (or set SOLR_URL) for a Solr core, or --input FILE for a file"
        )
        .into()),
    }
}

fn run_file(
    c: &JobConfig,
    path: &std::path::Path,
    progress: &dyn Progress,
) -> Result<Result<Report, EngineError>, Failure> {
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
    let mut engine = c.engine.clone();
    if let Some(text) = &c.filter {
        engine.filter = file_filter(text)?;
    }
    let output = match output_path {
        Some(p) => Output::File(p.clone()),
        None => Output::Stdout,
    };
    let f = &engine.fields;
    let store = FileStore::open_with(
        path,
        output,
        c.output_format,
        &f.id,
        &f.version,
        c.max_line_bytes,
    )
    .map_err(|e| Failure::new(Exit::Usage, anyhow!(e)))?
    .with_text_fields(&[&f.text, &f.title, &f.description, &f.url]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    let result = runtime.block_on(execute(&store, c, &engine, progress));
    Ok(result.map(|mut report| {
        report.documents.multi_valued_first_taken = store.multi_valued_first_taken();
        report
    }))
}

/// `--filter` for the file store, which evaluates a subset of Solr's syntax itself.
pub(crate) fn file_filter(text: &str) -> Result<Filter, Failure> {
    Ok(Filter::parse(text).map_err(|e| match e {
        FilterError::TooDeep { .. } => anyhow!("--filter: {e}"),
        _ => anyhow!("--filter: {e} (file mode understands a subset of Solr's syntax; see --help)"),
    })?)
}

fn run_solr(
    c: &JobConfig,
    solr: &SolrConfig,
    progress: &dyn Progress,
) -> Result<Result<Report, EngineError>, Failure> {
    if c.output.is_some() {
        return Err(anyhow!(
            "--output is for file mode; against Solr the updates go to the core (use --dry-run to write nothing)"
        )
        .into());
    }
    let mut engine = c.engine.clone();
    if let Some(text) = &c.filter {
        engine.filter = Filter::Solr(text.clone());
    }
    let client = connect(solr)?;
    // Signing runs on the calling thread's pool; the runtime's own workers keep reading ahead.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    let result = runtime.block_on(async {
        let schema = SchemaInfo::fetch(&client)
            .await
            .map_err(|e| solr_failure(e, "cannot read the schema"))?;
        let writes = !c.check && !engine.dry_run;
        prepare(
            &schema,
            &mut engine,
            writes,
            c.allow_lossy,
            c.near_optional,
            client.core_url(),
        )?;
        if let Some(text) = &c.filter {
            check_filter(&client, text).await?;
        }
        let export = export_fields(&schema, &engine, &client).await;
        let mut store = SolrStore::new(
            client,
            &engine.fields.id,
            &engine.fields.version,
            engine.commit,
            solr.concurrency > 1,
        );
        if let Some(fields) = export {
            store = store.with_export(fields);
        }
        Ok::<_, Failure>(execute(&store, c, &engine, progress).await)
    })?;
    Ok(result)
}

/// The light fields when every one has docValues and the core is standalone: then the scans go
/// through `/export`, which streams docValues at a small fraction of a `cursorMark` page's cost. On a
/// SolrCloud collection (Solr marks its answers `zkConnected`) `/export` answers one shard's
/// documents, so the scans stay on `cursorMark` there.
async fn export_fields(
    schema: &SchemaInfo,
    engine: &EngineConfig,
    client: &Client,
) -> Option<Vec<String>> {
    exportable(schema, engine::light_fields(engine), client).await
}

/// `fields`, when `/export` can stream them all from this core (see [`export_fields`]).
pub(crate) async fn exportable(
    schema: &SchemaInfo,
    fields: Vec<String>,
    client: &Client,
) -> Option<Vec<String>> {
    let missing: Vec<&String> = fields
        .iter()
        .filter(|f| !schema.find(f).is_some_and(|i| i.doc_values))
        .collect();
    if !missing.is_empty() {
        info!(fields = ?missing, "no docValues: light reads use cursorMark pages instead of /export");
        return None;
    }
    let probe = vec![
        ("q".to_owned(), "*:*".to_owned()),
        ("rows".to_owned(), "0".to_owned()),
    ];
    match client.select(probe).await {
        Ok(answer) if answer.pointer("/responseHeader/zkConnected").is_none() => Some(fields),
        Ok(_) => {
            debug!("SolrCloud: light reads use cursorMark pages (/export answers one shard)");
            None
        }
        Err(e) => {
            debug!(error = %e, "light reads use cursorMark pages");
            None
        }
    }
}

/// A client for the core, with credentials from `--auth-file`, else `SOLR_USER`/`SOLR_PASSWORD`, else
/// the URL's user info.
pub(crate) fn connect(solr: &SolrConfig) -> Result<Client, Failure> {
    let mut cfg = ClientConfig::new(&solr.url).map_err(|e| anyhow!(e))?;
    cfg.timeout = solr.timeout;
    cfg.retries = solr.retries;
    cfg.concurrency = solr.concurrency;
    cfg.max_response_bytes = solr.max_response_bytes;
    if let Some(path) = &solr.auth_file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the auth file {}", path.display()))?;
        cfg.credentials = Some(
            Credentials::parse_line(&text)
                .map_err(|e| anyhow!("auth file {}: {e}", path.display()))?,
        );
    } else {
        let user = std::env::var("SOLR_USER").ok().filter(|u| !u.is_empty());
        let password = std::env::var("SOLR_PASSWORD")
            .ok()
            .filter(|p| !p.is_empty());
        match (user, password) {
            (Some(user), Some(password)) => {
                cfg.credentials = Some(Credentials::new(user, password))
            }
            (Some(_), None) => {
                return Err(anyhow!(
                    "SOLR_USER is set but SOLR_PASSWORD is not; set both, or use --auth-file"
                )
                .into())
            }
            (None, Some(_)) => {
                return Err(anyhow!(
                    "SOLR_PASSWORD is set but SOLR_USER is not; set both, or use --auth-file"
                )
                .into())
            }
            (None, None) => {}
        }
    }
    Ok(Client::new(&cfg).map_err(|e| anyhow!(e))?)
}

/// Exit 3 when Solr could not be reached, else 2, with what was being done.
pub(crate) fn solr_failure(e: SolrError, doing: &str) -> Failure {
    let e = StoreError::from(e);
    if e.kind() == StoreErrorKind::TooLarge {
        // Exit 3 too, but Solr was reached: the error says what to change.
        Failure::new(Exit::SolrUnreachable, anyhow!(e).context(doing.to_owned()))
    } else if e.is_unreachable() {
        Failure::new(
            Exit::SolrUnreachable,
            anyhow!(e).context(format!(
                "{doing}: Solr could not be reached; check that it runs and that --solr is right, then run again"
            )),
        )
    } else {
        Failure::new(Exit::Usage, anyhow!(e).context(doing.to_owned()))
    }
}

/// Asks Solr once whether it can parse `--filter` (a `rows=0` select with it as the `fq`), so that a
/// filter Solr refuses ends a command with exit 2 and a line naming it, before anything is read or
/// written, instead of failing the first read (and, for a 500, being retried as if Solr were down).
pub(crate) async fn check_filter(client: &Client, filter: &str) -> Result<(), Failure> {
    let params = vec![
        ("q".to_owned(), "*:*".to_owned()),
        ("fq".to_owned(), filter.to_owned()),
        ("rows".to_owned(), "0".to_owned()),
    ];
    match client.select(params).await {
        Ok(_) => Ok(()),
        Err(e) => Err(filter_failure(e, filter)),
    }
}

/// What a failed [`check_filter`] means: Solr refusing the filter (a 4xx, or a 5xx that says it could
/// not parse it) is exit 2, naming the filter; anything else is [`solr_failure`].
pub(crate) fn filter_failure(e: SolrError, filter: &str) -> Failure {
    match e.refusal() {
        Some((status, message)) => {
            const MAX: usize = 80;
            let shown: String = filter.chars().take(MAX).collect();
            let cut = if filter.chars().count() > MAX {
                format!("{shown:?}… ({} characters)", filter.chars().count())
            } else {
                format!("{shown:?}")
            };
            Failure::new(
                Exit::Usage,
                anyhow!(
                    "--filter {cut}: Solr refused it (HTTP {}): {message}",
                    status.as_u16()
                ),
            )
        }
        None => solr_failure(e, "cannot check --filter"),
    }
}

/// Checks the schema for the run and adapts the configuration to it: refuses missing fields and, when
/// the run writes, a schema on which atomic updates lose data. `core_url` is the client's, without
/// credentials.
fn prepare(
    schema: &SchemaInfo,
    engine: &mut EngineConfig,
    writes: bool,
    allow_lossy: bool,
    near_optional: bool,
    core_url: &str,
) -> Result<(), Failure> {
    let mut report = inspect(schema, engine);
    if near_optional && engine.dimensions.contains(&Dimension::Near) {
        let near = near_fields(&engine.fields);
        let absent: Vec<&str> = report
            .missing
            .iter()
            .filter(|n| near.contains(&n.name.as_str()))
            .map(|n| n.name.as_str())
            .collect();
        if !absent.is_empty() {
            // The seventh dimension is on by default, not asked for: run the six the core can hold.
            let absent = absent.join(", ");
            engine.dimensions.retain(|&d| d != Dimension::Near);
            report = inspect(schema, engine);
            if report.problems(core_url, false).is_empty() {
                warn!(
                    "near-duplicates left out: the core has no {absent}; add them with `solr-dedup schema apply --solr {core_url}`"
                );
            }
        }
    }
    let problems = report.problems(core_url, writes && !allow_lossy);
    if !problems.is_empty() {
        return Err(anyhow!(
            "the schema is not ready for this run: {}",
            problems.join("; ")
        )
        .into());
    }
    if writes && !report.lossy.is_empty() {
        warn!(fields = %report.lossy.join(", "), "atomic updates will empty these fields (--allow-lossy-atomic-updates)");
    }
    if engine.write_fuzzy_text && !report.has_fuzzy_text {
        info!(
            field = %engine.fields.fuzzy_signature_text,
            "the core has no such field; it is not written"
        );
        engine.write_fuzzy_text = false;
    }
    Ok(())
}

/// The fields only the near dimension writes.
fn near_fields(f: &crate::model::FieldNames) -> [&str; 6] {
    [
        &f.near_trials,
        &f.near_keys,
        &f.near_version,
        &f.near_group,
        f.unique(Dimension::Near),
        &f.near_count,
    ]
}

async fn execute<S: Store>(
    store: &S,
    c: &JobConfig,
    engine: &EngineConfig,
    progress: &dyn Progress,
) -> Result<Report, EngineError> {
    let mode = if c.check { Mode::Check } else { Mode::Run };
    engine::execute(store, engine, mode, progress).await
}

fn finish(c: &JobConfig, result: Result<Report, EngineError>) -> Result<Exit, Failure> {
    let report = match result {
        Ok(report) => report,
        Err(e @ EngineError::Unstable(_)) => return Err(Failure::new(Exit::Problems, anyhow!(e))),
        Err(EngineError::Store(e)) if e.kind() == StoreErrorKind::TooLarge => {
            return Err(Failure::new(Exit::SolrUnreachable, anyhow!(e)))
        }
        Err(EngineError::Store(e)) if e.is_unreachable() => {
            return Err(Failure::new(
                Exit::SolrUnreachable,
                anyhow!(e)
                    .context("Solr could not be reached; nothing is lost, run again when it is up"),
            ))
        }
        Err(e) => return Err(Failure::new(Exit::Usage, anyhow!(e))),
    };
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
        Input::Stdin => std::path::Path::new("-"),
        Input::File(path) => path.as_path(),
    };
    write_whole(path, text.as_bytes()).with_context(|| match target {
        Input::Stdin => "cannot write the report to standard output".to_owned(),
        Input::File(path) => format!("cannot write the report {}", path.display()),
    })?;
    Ok(())
}

/// Logs go to standard error: warnings by default, more with -v / -vv, or as `RUST_LOG` says.
pub(crate) fn init_logging(verbosity: u8) {
    let default = match verbosity {
        0 => "warn",
        1 => "info",
        _ => "debug,hyper_util=info,reqwest=info",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}
