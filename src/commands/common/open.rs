//! One place that turns a command's index settings into an opened store: `--input` or `--solr`,
//! `--filter`, `--field`, `--max-line-bytes`, and what the command needs of the index ([`Purpose`]).
//!
//! ```text
//! Index + Purpose ──▶ open() ─┬─ file: parse --filter (the file store's subset), open the file
//!                             └─ Solr: connect, read the schema, check the purpose's fields,
//!                                      one rows=0 probe: Solr parses --filter, tells /export
//!                                      and the cloud apart, counts the documents
//!                             ──▶ Opened { store, filter, has_optional }
//! ```
//!
//! Every command that reads documents opens them here (`run`/`check`, `urls learn|predict`,
//! `chrome learn`, `serve`), so a filter, a missing field or an unreachable core fails the same way
//! everywhere, before anything is read or written. The store type lives in [`OpenedStore`] alone.

use std::sync::Arc;

use anyhow::{anyhow, Context};
use tracing::{debug, info};

use super::super::schema_fit::prepare;
use super::super::{Exit, Failure};
use super::failure::solr_failure;
use crate::config::{SolrConfig, Source};
use crate::engine::{self, EngineConfig};
use crate::model::FieldNames;
use crate::solr::schema::SchemaInfo;
use crate::solr::{Client, ClientConfig, Credentials, SolrError};
use crate::store::file::{FileStore, Output, OutputFormat};
use crate::store::solr::SolrStore;
use crate::store::{
    AtomicUpdate, Bucket, CommitMode, Doc, FacetQuery, Filter, FilterError, Page, ReadQuery, Store,
    StoreError, UpdateOutcome,
};

/// Where the documents are and which of them count: the settings every reading command has.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Index<'a> {
    /// `--input` or `--solr`.
    pub(crate) source: &'a Source,
    /// `--filter` as given.
    pub(crate) filter: Option<&'a str>,
    /// File mode: `--max-line-bytes`.
    pub(crate) max_line_bytes: usize,
    /// How the "no index given" line begins, in the command's words (`no documents to work on`).
    pub(crate) missing: &'a str,
}

/// What a command opens the index for: what it must find there, and what it reads light.
pub(crate) enum Purpose<'a> {
    /// `run` and `check`: the core's schema must fit the engine's configuration, which is adapted
    /// to it (near left out when it is optional and the core lacks it, the fuzzy text not written
    /// when there is no field for it); the engine's light fields go through `/export` when they can.
    /// In file mode the store writes `output` in `format`.
    Job {
        /// The run's configuration; its filter is set from `--filter`.
        engine: &'a mut EngineConfig,
        /// The run writes (not `check`, not `--dry-run`).
        writes: bool,
        /// `--allow-lossy-atomic-updates`.
        allow_lossy: bool,
        /// `near` is on by default, not asked for.
        near_optional: bool,
        /// File mode: where the updates go.
        output: Output,
        /// File mode: updates or annotated documents.
        format: OutputFormat,
    },
    /// A command that only reads (`urls`, `chrome learn`, `serve`'s prediction index).
    Read {
        /// Field names.
        fields: &'a FieldNames,
        /// Fields the core must have, each with the name `--field` knows its role by.
        required: &'a [(&'static str, &'a str)],
        /// Fields read light that may go through `/export` (those the core has); `None`: never.
        light: Option<Vec<String>>,
        /// A field the command uses when the core has it ([`Opened::has_optional`]).
        optional: Option<&'a str>,
    },
}

/// The opened index.
pub(crate) struct Opened {
    /// The store.
    pub(crate) store: OpenedStore,
    /// `--filter` as the store understands it ([`Filter::All`] without one).
    pub(crate) filter: Filter,
    /// Whether the core has the purpose's optional field (a file always may).
    pub(crate) has_optional: bool,
}

/// `--filter` for `source`: the file store evaluates a subset of Solr's syntax itself, parsed here;
/// Solr gets it as an `fq` (see [`check_filter`] for asking Solr whether it parses).
pub(crate) fn parse_filter(source: &Source, text: Option<&str>) -> Result<Filter, Failure> {
    let Some(text) = text else {
        return Ok(Filter::All);
    };
    if !matches!(source, Source::File(_)) {
        return Ok(Filter::Solr(text.to_owned()));
    }
    Ok(Filter::parse(text).map_err(|e| match e {
        FilterError::TooDeep { .. } => anyhow!("--filter: {e}"),
        _ => anyhow!("--filter: {e} (file mode understands a subset of Solr's syntax; see --help)"),
    })?)
}

/// Opens the index for `purpose`, checking everything that would make the work fail before any
/// of it is done (see the module doc). Runs on the command's runtime.
pub(crate) async fn open(index: Index<'_>, purpose: Purpose<'_>) -> Result<Opened, Failure> {
    let path = match index.source {
        Source::File(path) => path,
        Source::Solr(solr) => return open_solr(index, solr, purpose).await,
        Source::Missing => {
            return Err(anyhow!(
                "{}: give --solr URL (or set SOLR_URL) for a Solr core, or --input FILE for a file",
                index.missing
            )
            .into())
        }
    };
    let filter = parse_filter(index.source, index.filter)?;
    let store = match purpose {
        Purpose::Job {
            engine,
            output,
            format,
            ..
        } => {
            if index.filter.is_some() {
                engine.filter = filter.clone();
            }
            let f = &engine.fields;
            open_file(path, output, format, f, index.max_line_bytes)?
                .with_text_fields(&[&f.text, &f.title, &f.description, &f.url])
                .with_memory(engine.memory, engine.temp_dir.as_deref())
        }
        Purpose::Read { fields, .. } => open_file(
            path,
            Output::Stdout,
            OutputFormat::Updates,
            fields,
            index.max_line_bytes,
        )?,
    };
    Ok(Opened {
        store: OpenedStore::File(store),
        filter,
        has_optional: true,
    })
}

fn open_file(
    path: &std::path::Path,
    output: Output,
    format: OutputFormat,
    fields: &FieldNames,
    max_line_bytes: usize,
) -> Result<FileStore, Failure> {
    FileStore::open_with(
        path,
        output,
        format,
        &fields.id,
        &fields.version,
        max_line_bytes,
    )
    .map_err(|e| Failure::new(Exit::Usage, anyhow!(e)))
}

async fn open_solr(
    index: Index<'_>,
    solr: &SolrConfig,
    purpose: Purpose<'_>,
) -> Result<Opened, Failure> {
    let filter = parse_filter(index.source, index.filter)?;
    let client = connect(solr)?;
    let schema = SchemaInfo::fetch(&client)
        .await
        .map_err(|e| solr_failure(e, "cannot read the schema"))?;
    let (fields, commit, light, has_optional) = match purpose {
        Purpose::Job {
            engine,
            writes,
            allow_lossy,
            near_optional,
            ..
        } => {
            if index.filter.is_some() {
                engine.filter = filter.clone();
            }
            prepare(
                &schema,
                engine,
                writes,
                allow_lossy,
                near_optional,
                client.core_url(),
            )?;
            let light = Some(engine::light_fields(engine));
            (engine.fields.clone(), engine.commit, light, true)
        }
        Purpose::Read {
            fields,
            required,
            light,
            optional,
        } => {
            for &(name, field) in required {
                if schema.find(field).is_none() {
                    return Err(anyhow!(
                        "the core has no field {field}; if yours is called otherwise, say so with --field {name}=YOURS"
                    )
                    .into());
                }
            }
            let light = light.map(|l| l.into_iter().filter(|f| schema.find(f).is_some()).collect());
            let has_optional = optional.is_none_or(|f| schema.find(f).is_some());
            (fields.clone(), CommitMode::None, light, has_optional)
        }
    };
    let light = light.filter(|light| streamable(&schema, light));
    // One `rows=0` probe serves three ends: Solr parses --filter in it, its header tells a SolrCloud
    // collection (read shard by shard), and its numFound is the scan's total for the progress.
    let probe = match (index.filter, &light) {
        (Some(text), _) => Some(probe(&client, Some(text)).await?),
        (None, Some(_)) => probe(&client, None).await.ok(),
        (None, None) => None,
    };
    let count = probe
        .as_ref()
        .and_then(|a| a.pointer("/response/numFound"))
        .and_then(|n| n.as_u64());
    let cloud = probe.as_ref().is_some_and(is_cloud);
    // Without an answer to the probe, the light reads use cursorMark pages.
    let export = light.filter(|_| probe.is_some());
    let mut store = SolrStore::new(
        client,
        &fields.id,
        &fields.version,
        commit,
        solr.concurrency > 1,
    );
    if let Some(fields) = export {
        store = store.with_export(fields);
    }
    if let Some(n) = count {
        store = store.with_count(filter.clone(), n);
    }
    if cloud {
        store = store.with_cloud().await;
    }
    Ok(Opened {
        store: OpenedStore::Solr(store),
        filter,
        has_optional,
    })
}

/// A store of the core behind `client` for a few light reads (`serve`'s page, counts and change
/// marks), opened without any check and without read-ahead. `serve` opens one at start and keeps
/// it, with its client, for its life.
pub(crate) fn light_solr(client: Client, fields: &FieldNames) -> Arc<dyn Store> {
    Arc::new(SolrStore::new(
        client,
        &fields.id,
        &fields.version,
        CommitMode::None,
        false,
    ))
}

/// A store of the file at `path` for a few light reads, opened without any check: `serve` opens
/// one at each read, since the file may have changed (opening a file sends no request).
pub(crate) fn light_file(
    path: &std::path::Path,
    fields: &FieldNames,
    max_line_bytes: usize,
) -> Result<Arc<dyn Store>, StoreError> {
    let store = FileStore::open_with(
        path,
        Output::Stdout,
        OutputFormat::Updates,
        &fields.id,
        &fields.version,
        max_line_bytes,
    )?;
    Ok(Arc::new(store))
}

/// Whether `/export` can stream `fields` from this core: every one has docValues (on SolrCloud,
/// from each shard's core, see [`is_cloud`]). Then the scans go through `/export`, which streams docValues at
/// a small fraction of a `cursorMark` page's cost.
fn streamable(schema: &SchemaInfo, fields: &[String]) -> bool {
    let missing: Vec<&String> = fields
        .iter()
        .filter(|f| !schema.find(f).is_some_and(|i| i.doc_values))
        .collect();
    if !missing.is_empty() {
        info!(fields = ?missing, "no docValues: light reads use cursorMark pages instead of /export");
    }
    missing.is_empty()
}

/// Whether a probe's answer comes from a SolrCloud collection (Solr marks its answers
/// `zkConnected`). There `/export` answers one shard's documents, so the store reads a collection
/// shard by shard ([`SolrStore::with_cloud`]).
fn is_cloud(answer: &serde_json::Value) -> bool {
    answer.pointer("/responseHeader/zkConnected").is_some()
}

/// A `rows=0` select of `--filter` (as the `fq`), or of everything. A filter Solr refuses is exit 2
/// naming it (see [`check_filter`]); without a filter a failed probe is only logged by the caller,
/// and the light reads use `cursorMark` pages.
async fn probe(client: &Client, filter: Option<&str>) -> Result<serde_json::Value, Failure> {
    let mut params = vec![
        ("q".to_owned(), "*:*".to_owned()),
        ("rows".to_owned(), "0".to_owned()),
    ];
    if let Some(text) = filter {
        params.push(("fq".to_owned(), text.to_owned()));
    }
    match client.select(params).await {
        Ok(answer) => Ok(answer),
        Err(e) => match filter {
            Some(text) => Err(filter_failure(e, text)),
            None => {
                debug!(error = %e, "light reads use cursorMark pages");
                Err(solr_failure(e, "cannot probe the core"))
            }
        },
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
fn filter_failure(e: SolrError, filter: &str) -> Failure {
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

/// The store a command opened: the one place that names the store types, so that a seam of
/// `Box<dyn Store>` replaces this enum here and nowhere else.
#[allow(clippy::large_enum_variant)] // one per command, on the stack of its runtime
pub(crate) enum OpenedStore {
    /// `--input FILE`.
    File(FileStore),
    /// `--solr URL`.
    Solr(SolrStore),
}

impl OpenedStore {
    /// File mode: documents in which a field holding one value held several, of which the first
    /// was taken (0 for Solr, which refuses such a document when it is indexed).
    pub(crate) fn multi_valued_first_taken(&self) -> u64 {
        match self {
            OpenedStore::File(s) => s.multi_valued_first_taken(),
            OpenedStore::Solr(_) => 0,
        }
    }

    /// File mode: the bytes the store's own structures (the id index, the pending updates'
    /// offsets) wrote to temporary files past their share of `--memory` (0 for Solr).
    pub(crate) fn spilled_bytes(&self) -> u64 {
        match self {
            OpenedStore::File(s) => s.spilled_bytes(),
            OpenedStore::Solr(_) => 0,
        }
    }
}

/// Calls the same method on whichever store is open.
macro_rules! each {
    ($self:ident, $s:ident => $call:expr) => {
        match $self {
            OpenedStore::File($s) => $call,
            OpenedStore::Solr($s) => $call,
        }
    };
}

#[async_trait::async_trait]
impl Store for OpenedStore {
    async fn read_page(&self, query: &ReadQuery, cursor: Option<&str>) -> Result<Page, StoreError> {
        each!(self, s => s.read_page(query, cursor).await)
    }

    async fn sample(&self, query: &ReadQuery) -> Result<Vec<Doc>, StoreError> {
        each!(self, s => s.sample(query).await)
    }

    fn hint_rereads(&self, query: &ReadQuery) {
        each!(self, s => s.hint_rereads(query))
    }

    fn max_lookup_values(&self) -> usize {
        each!(self, s => s.max_lookup_values())
    }

    fn known_count(&self, filter: &Filter) -> Option<u64> {
        each!(self, s => s.known_count(filter))
    }

    async fn facet(&self, query: &FacetQuery) -> Result<Vec<Bucket>, StoreError> {
        each!(self, s => s.facet(query).await)
    }

    async fn get(&self, ids: &[String], fields: &[String]) -> Result<Vec<Doc>, StoreError> {
        each!(self, s => s.get(ids, fields).await)
    }

    async fn update(&self, batch: &[AtomicUpdate]) -> Result<UpdateOutcome, StoreError> {
        each!(self, s => s.update(batch).await)
    }

    async fn refresh(&self) -> Result<(), StoreError> {
        each!(self, s => s.refresh().await)
    }

    async fn commit(&self, mode: CommitMode) -> Result<(), StoreError> {
        each!(self, s => s.commit(mode).await)
    }

    fn describe(&self) -> String {
        each!(self, s => s.describe())
    }

    async fn change_mark(&self, filter: &Filter) -> Result<String, StoreError> {
        each!(self, s => s.change_mark(filter).await)
    }

    fn requests(&self) -> u64 {
        each!(self, s => s.requests())
    }

    fn cost_model(&self) -> crate::store::CostModel {
        each!(self, s => s.cost_model())
    }
}
