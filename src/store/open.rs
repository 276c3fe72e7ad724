//! From settings to an opened store: the one place that names the store types, as quickwit's
//! storage resolver turns a URI into an `Arc<dyn Storage>`. Callers hand over where the documents
//! are ([`Target`]) and get a [`Connection`], whose schema they may fit their work to, then an
//! `Arc<dyn Store>`; probing, the client, credentials (already resolved by the configuration) and
//! the choice between `/export`, cursors and SolrCloud shards never leave this layer.
//!
//! ```text
//! Target ──▶ connect() ─┬─ file: parse --filter (the file store's subset)
//!                       └─ Solr: build the client, read the schema
//!        ──▶ Connection { filter, schema } ── caller checks its fields against the schema
//!        ──▶ open(Options) ─┬─ file: open the file, its output, its memory budget
//!                           └─ Solr: one rows=0 probe (Solr parses --filter in it, its header
//!                              tells a SolrCloud collection, its numFound is the scan's total),
//!                              /export for the light fields with docValues
//!        ──▶ Arc<dyn Store>
//! ```
//!
//! [`open_light`] opens the same targets for a few light reads (serve's page: health, counts,
//! change marks, groups) without the checks.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tracing::{debug, info, warn};

use super::file::{FileStore, Output, OutputFormat};
use super::solr::SolrStore;
use super::{error_line, CommitMode, Filter, FilterError, Store, StoreError, StoreErrorKind};
use crate::solr_client::config::UpdateChain;
use crate::solr_client::schema::SchemaInfo;
use crate::solr_client::{Client, ClientConfig, Credentials, SolrError};

/// How to reach a Solr core, every setting resolved (credentials included).
#[derive(Debug, Clone, PartialEq)]
pub struct SolrConfig {
    /// The core URL as given (it may hold user info, which the client moves out of it).
    pub url: String,
    /// Basic-auth credentials from `--auth-file` (one line `user:password`), else `SOLR_USER` and
    /// `SOLR_PASSWORD`; `None`: the URL's user info, if any. Resolved with the configuration; when
    /// they could not be (an unreadable auth file, one of the two variables without the other), the
    /// line that says so, met when the core is opened (so that a run's report records it).
    pub credentials: Result<Option<Credentials>, CredentialsError>,
    /// The time limit of one request.
    pub timeout: Duration,
    /// Retries after 5xx, timeouts and connection errors.
    pub retries: usize,
    /// Requests in flight.
    pub concurrency: usize,
    /// `--max-response-bytes`: the largest Solr answer read (for `/export`, the largest document).
    pub max_response_bytes: usize,
}

impl SolrConfig {
    /// A client for the core.
    fn client(&self) -> Result<Client, OpenError> {
        let mut cfg = ClientConfig::new(&self.url).map_err(OpenError::invalid)?;
        cfg.timeout = self.timeout;
        cfg.retries = self.retries;
        cfg.concurrency = self.concurrency;
        cfg.max_response_bytes = self.max_response_bytes;
        // Resolved credentials take the place of the URL's user info, which `ClientConfig::new`
        // moved out of it.
        match &self.credentials {
            Ok(Some(credentials)) => cfg.credentials = Some(credentials.clone()),
            Ok(None) => {}
            Err(e) => return Err(OpenError::invalid(e.clone())),
        }
        Client::new(&cfg).map_err(OpenError::invalid)
    }
}

impl SolrConfig {
    /// A client for a check rather than the work (the health probe, the update chain): tried once,
    /// within the health probe's limit (or `--timeout`, when shorter); with that limit.
    fn quick_client(&self) -> Result<(Client, Duration), OpenError> {
        let mut quick = self.clone();
        quick.retries = 0;
        quick.timeout = quick.timeout.min(QUICK);
        Ok((quick.client()?, quick.timeout))
    }
}

/// Credentials the configuration could not resolve: the one line that says why and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CredentialsError(pub String);

/// Where the documents are.
#[derive(Debug, Clone, Copy)]
pub enum Location<'a> {
    /// A file of Solr documents (`--input`).
    File(&'a Path),
    /// A Solr core or SolrCloud collection (`--solr`).
    Solr(&'a SolrConfig),
}

/// Where the documents are and which of them count.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The file or the core.
    pub location: Location<'a>,
    /// `--filter` as given.
    pub filter: Option<&'a str>,
    /// File mode: `--max-line-bytes`.
    pub max_line_bytes: usize,
    /// The unique key field.
    pub id_field: &'a str,
    /// The version field (`_version_`).
    pub version_field: &'a str,
}

/// Why a store could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// A setting the store cannot use (a filter file mode cannot read, a URL that is not one, a
    /// file that cannot be opened), or one Solr refused (`--filter`): fix it and run again.
    #[error(transparent)]
    Invalid(Box<dyn std::error::Error + Send + Sync>),
    /// The store failed while `doing` something before any work: unreachable (run again later) or
    /// refusing (a wrong core, credentials); the caller decides on the error's kind.
    #[error("{doing}")]
    Store {
        /// What was being done (`cannot read the schema`).
        doing: &'static str,
        /// The store's error (Solr's, with its kind).
        #[source]
        source: StoreError,
    },
}

impl OpenError {
    fn store(doing: &'static str, e: SolrError) -> Self {
        OpenError::Store {
            doing,
            source: StoreError::from(e),
        }
    }

    fn invalid(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        OpenError::Invalid(e.into())
    }
}

/// `--filter` for a location: the file store evaluates a subset of Solr's syntax itself, parsed
/// here; Solr gets it as an `fq`.
pub fn parse_filter(location: Location<'_>, text: Option<&str>) -> Result<Filter, OpenError> {
    let Some(text) = text else {
        return Ok(Filter::All);
    };
    if matches!(location, Location::Solr(_)) {
        return Ok(Filter::Solr(text.to_owned()));
    }
    Filter::parse(text).map_err(|e| {
        OpenError::invalid(match e {
            FilterError::TooDeep { .. } => format!("--filter: {e}"),
            _ => format!(
                "--filter: {e} (file mode understands a subset of Solr's syntax; see --help)"
            ),
        })
    })
}

/// A target reached, not yet opened: for Solr, its client and schema.
pub struct Connection<'a> {
    target: Target<'a>,
    filter: Filter,
    solr: Option<(Client, SchemaInfo)>,
}

/// Reaches the target: parses `--filter`; for Solr, builds the client and reads the schema.
pub async fn connect(target: Target<'_>) -> Result<Connection<'_>, OpenError> {
    let filter = parse_filter(target.location, target.filter)?;
    let solr = match target.location {
        Location::File(_) => None,
        Location::Solr(solr) => {
            let client = solr.client()?;
            let schema = SchemaInfo::fetch(&client)
                .await
                .map_err(|e| OpenError::store("cannot read the schema", e))?;
            Some((client, schema))
        }
    };
    Ok(Connection {
        target,
        filter,
        solr,
    })
}

/// What the store is opened for.
#[derive(Debug, Default)]
pub struct Options {
    /// How updates are made visible (Solr's `commitWithin` rides on each update).
    pub commit: CommitMode,
    /// Fields read light that may go through Solr's `/export` (those with docValues);
    /// `None`: never.
    pub light: Option<Vec<String>>,
    /// File mode: where updates go, and in which form.
    pub output: Output,
    /// File mode: updates or annotated documents.
    pub format: OutputFormat,
    /// File mode: the text fields whose long values are read again from the file, not kept.
    pub text_fields: Vec<String>,
    /// File mode: the memory budget and the folder past it (`--memory`, `--temp-dir`).
    pub memory: Option<(u64, Option<PathBuf>)>,
    /// File mode: the output is put in place by [`Store::publish`], not by the commit
    /// ([`FileStore::with_deferred_output`]).
    pub defer_output: bool,
}

impl Connection<'_> {
    /// `--filter` as the store understands it ([`Filter::All`] without one).
    pub fn filter(&self) -> &Filter {
        &self.filter
    }

    /// The core's schema (none for a file).
    pub fn schema(&self) -> Option<&SchemaInfo> {
        self.solr.as_ref().map(|(_, schema)| schema)
    }

    /// The core's URL without credentials (none for a file).
    pub fn core_url(&self) -> Option<&str> {
        self.solr.as_ref().map(|(client, _)| client.core_url())
    }

    /// The update chain the core's `/update` runs, when it is not Solr's implicit one and the
    /// Config API told it (none for a file). Asked once, quickly (see [`update_chain`]): runs that
    /// write ask, readers do not.
    pub async fn update_chain(&self) -> Option<UpdateChain> {
        match self.target.location {
            Location::Solr(solr) => update_chain(solr).await.unwrap_or_else(|why| {
                info!("{why}");
                None
            }),
            Location::File(_) => None,
        }
    }

    /// Opens the store.
    pub async fn open(self, options: Options) -> Result<Arc<dyn Store>, OpenError> {
        let t = self.target;
        match (t.location, self.solr) {
            (Location::File(path), _) => {
                let mut store = open_file(path, options.output, options.format, &t)?;
                if !options.text_fields.is_empty() {
                    let fields: Vec<&str> =
                        options.text_fields.iter().map(String::as_str).collect();
                    store = store.with_text_fields(&fields);
                }
                if let Some((budget, dir)) = &options.memory {
                    store = store.with_memory(*budget, dir.as_deref());
                }
                if options.defer_output {
                    store = store.with_deferred_output();
                }
                Ok(Arc::new(store))
            }
            (Location::Solr(solr), Some((client, schema))) => Ok(Arc::new(
                open_solr(&t, solr, client, &schema, &self.filter, options).await?,
            )),
            (Location::Solr(_), None) => unreachable!("a Solr connection holds its client"),
        }
    }
}

fn open_file(
    path: &Path,
    output: Output,
    format: OutputFormat,
    t: &Target<'_>,
) -> Result<FileStore, OpenError> {
    FileStore::open_with(
        path,
        output,
        format,
        t.id_field,
        t.version_field,
        t.max_line_bytes,
    )
    .map_err(OpenError::invalid)
}

async fn open_solr(
    t: &Target<'_>,
    solr: &SolrConfig,
    client: Client,
    schema: &SchemaInfo,
    filter: &Filter,
    options: Options,
) -> Result<SolrStore, OpenError> {
    let light = options.light.filter(|light| streamable(schema, light));
    // One `rows=0` probe serves three ends: Solr parses --filter in it, its header tells a SolrCloud
    // collection (read shard by shard), and its numFound is the scan's total for the progress.
    let probe = match (t.filter, &light) {
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
        t.id_field,
        t.version_field,
        options.commit,
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
    } else if probe.is_some() {
        store = store.with_standalone();
    }
    Ok(store)
}

/// The update chain `/update` runs (`None`: Solr's implicit chain), asked once with the health
/// probe's short time limit and no retries: a check, not the work. When the Config API cannot tell
/// (an account without `config-read`, a proxy), the line that says so; the caller logs it or
/// prints it, and does not refuse.
pub async fn update_chain(solr: &SolrConfig) -> Result<Option<UpdateChain>, String> {
    let (client, _) = solr.quick_client().map_err(|e| error_line(&e))?;
    UpdateChain::fetch(&client)
        .await
        .map_err(|e| format!("the update chain could not be read ({e}); it is not checked"))
}

/// Whether `/export` can stream `fields` from this core: every one has docValues (on SolrCloud,
/// from each shard's core, see [`is_cloud`]). Then the scans go through `/export`, which streams
/// docValues at a small fraction of a `cursorMark` page's cost.
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

/// A `rows=0` select of `--filter` (as the `fq`), or of everything. A filter Solr refuses is an
/// [`OpenError::Invalid`] naming it; without a filter a failed probe is only logged by the caller,
/// and the light reads use `cursorMark` pages.
async fn probe(client: &Client, filter: Option<&str>) -> Result<serde_json::Value, OpenError> {
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
            Some(text) => Err(filter_error(e, text)),
            None => {
                debug!(error = %e, "light reads use cursorMark pages");
                Err(OpenError::store("cannot probe the core", e))
            }
        },
    }
}

/// What a failed check of `--filter` means: Solr refusing the filter (a 4xx, or a 5xx that says it
/// could not parse it) is [`OpenError::Invalid`], naming the filter; anything else is Solr failing.
fn filter_error(e: SolrError, filter: &str) -> OpenError {
    match e.refusal() {
        Some((status, message)) => {
            const MAX: usize = 80;
            let shown: String = filter.chars().take(MAX).collect();
            let cut = if filter.chars().count() > MAX {
                format!("{shown:?}… ({} characters)", filter.chars().count())
            } else {
                format!("{shown:?}")
            };
            OpenError::invalid(format!(
                "--filter {cut}: Solr refused it (HTTP {}): {message}",
                status.as_u16()
            ))
        }
        None => OpenError::store("cannot check --filter", e),
    }
}

/// The health probe's time limit at most.
const QUICK: Duration = Duration::from_secs(5);

/// An index opened for a few light reads, without any check and without read-ahead: serve keeps one
/// for its life. A Solr core's store and client are kept (the same connections for every read); a
/// file is opened at each read, since it may have changed (opening it sends no request).
pub enum LightIndex {
    /// A Solr core.
    Solr {
        /// The store light reads go through (no read-ahead, no `/export`).
        store: Arc<dyn Store>,
        /// The core's URL without credentials.
        core_url: String,
    },
    /// A file.
    File {
        /// The file.
        path: PathBuf,
        /// `--max-line-bytes`.
        max_line_bytes: usize,
        /// The unique key field.
        id_field: String,
        /// The version field.
        version_field: String,
    },
}

/// Opens `target` for light reads ([`LightIndex`]). A `--filter` Solr refuses is an error (it would
/// fail every run); Solr being down is only a warning: the health probe and the runs report it.
pub async fn open_light(target: Target<'_>) -> Result<LightIndex, OpenError> {
    parse_filter(target.location, target.filter)?;
    match target.location {
        Location::File(path) => Ok(LightIndex::File {
            path: path.to_owned(),
            max_line_bytes: target.max_line_bytes,
            id_field: target.id_field.to_owned(),
            version_field: target.version_field.to_owned(),
        }),
        Location::Solr(solr) => {
            let client = solr.client()?;
            if let Some(text) = target.filter {
                match probe(&client, Some(text)).await {
                    Err(e @ OpenError::Invalid(_)) => return Err(e),
                    // Reached, and refused: wrong credentials, a wrong core, not Solr.
                    Err(OpenError::Store { doing, source }) if !source.is_unreachable() => {
                        return Err(OpenError::Store { doing, source })
                    }
                    Err(e) => warn!(
                        "{}: Solr could not be reached; check that it runs and that --solr is right",
                        error_line(&e)
                    ),
                    Ok(_) => {}
                }
            }
            let (quick, quick_timeout) = solr.quick_client()?;
            let core_url = client.core_url().to_owned();
            let store = SolrStore::new(
                client,
                target.id_field,
                target.version_field,
                CommitMode::None,
                false,
            )
            .with_ping(quick, quick_timeout);
            Ok(LightIndex::Solr {
                store: Arc::new(store),
                core_url,
            })
        }
    }
}

impl LightIndex {
    /// The store for a few light reads: the kept one, or the file opened now.
    pub fn store(&self) -> Result<Arc<dyn Store>, StoreError> {
        match self {
            LightIndex::Solr { store, .. } => Ok(store.clone()),
            LightIndex::File {
                path,
                max_line_bytes,
                id_field,
                version_field,
            } => Ok(Arc::new(FileStore::open_with(
                path,
                Output::Stdout,
                OutputFormat::Updates,
                id_field,
                version_field,
                *max_line_bytes,
            )?)),
        }
    }

    /// Whether the index answers now: the file is there; the core answers a `rows=0` select within
    /// 5 s (or `--timeout`, when shorter), asked once. The error says so in one line
    /// (`Solr at URL is unreachable: connection refused`).
    pub async fn ping(&self) -> Result<(), StoreError> {
        match self {
            LightIndex::File { path, .. } => std::fs::metadata(path).map(|_| ()).map_err(|e| {
                StoreError::new(
                    StoreErrorKind::Io,
                    format!("cannot read {}: {e}", path.display()),
                )
            }),
            LightIndex::Solr { store, .. } => store.ping().await,
        }
    }

    /// The core's URL without credentials (none for a file).
    pub fn core_url(&self) -> Option<&str> {
        match self {
            LightIndex::Solr { core_url, .. } => Some(core_url),
            LightIndex::File { .. } => None,
        }
    }

    /// The file (none for a core).
    pub fn file(&self) -> Option<&Path> {
        match self {
            LightIndex::File { path, .. } => Some(path),
            LightIndex::Solr { .. } => None,
        }
    }
}

/// A user property of the core's configuration (`GET <core>/config/overlay`, `userProps`): the
/// settings record of `commands::common::settings`. `Ok(None)` when it is not set; the line that
/// says why when the Config API cannot be read.
pub async fn read_user_property(solr: &SolrConfig, name: &str) -> Result<Option<String>, String> {
    let client = solr.client().map_err(|e| error_line(&e))?;
    let overlay = client
        .get("config/overlay", Vec::new())
        .await
        .map_err(|e| format!("cannot read the core's configuration overlay: {e}"))?;
    Ok(overlay
        .pointer("/overlay/userProps")
        .and_then(|p| p.get(name))
        .and_then(|v| v.as_str())
        .map(str::to_owned))
}

/// Sets a user property of the core's configuration (`set-user-property`; Solr reloads the core,
/// and needs the `config-edit` permission).
pub async fn write_user_property(solr: &SolrConfig, name: &str, value: &str) -> Result<(), String> {
    let client = solr.client().map_err(|e| error_line(&e))?;
    client
        .config_post(&serde_json::json!({ "set-user-property": { name: value } }))
        .await
        .map(|_| ())
        .map_err(|e| format!("cannot record the settings in the core's configuration (it needs the config-edit permission): {e}"))
}

/// Removes a user property of the core's configuration (`unset-user-property`; Solr reloads the
/// core, and needs the `config-edit` permission).
pub async fn delete_user_property(solr: &SolrConfig, name: &str) -> Result<(), String> {
    let client = solr.client().map_err(|e| error_line(&e))?;
    client
        .config_post(&serde_json::json!({ "unset-user-property": name }))
        .await
        .map(|_| ())
        .map_err(|e| format!("cannot remove the settings record from the core's configuration (it needs the config-edit permission): {e}"))
}

/// A core's Schema API, for `schema check|apply`: read the schema, add fields.
pub struct SchemaApi {
    client: Client,
    solr: SolrConfig,
}

impl SchemaApi {
    /// The Schema API of the core.
    pub fn connect(solr: &SolrConfig) -> Result<SchemaApi, OpenError> {
        Ok(SchemaApi {
            client: solr.client()?,
            solr: solr.clone(),
        })
    }

    /// The core's schema; `doing` names the step in the error.
    pub async fn read(&self, doing: &'static str) -> Result<SchemaInfo, OpenError> {
        SchemaInfo::fetch(&self.client)
            .await
            .map_err(|e| OpenError::store(doing, e))
    }

    /// Sends Schema API commands (`{"add-field": …}`).
    pub async fn post(&self, commands: &serde_json::Value) -> Result<(), OpenError> {
        self.client
            .schema_post(commands)
            .await
            .map(|_| ())
            .map_err(|e| OpenError::store("the Schema API refused to add the fields", e))
    }

    /// The core's URL without credentials.
    pub fn core_url(&self) -> &str {
        self.client.core_url()
    }

    /// How many documents hold a value in `field` (`field:[* TO *]`, no rows).
    pub async fn holders(&self, field: &str) -> Result<u64, String> {
        let params = vec![
            ("q".to_owned(), "*:*".to_owned()),
            (
                "fq".to_owned(),
                crate::store::solr::filter::fq(&crate::store::Filter::Present(field.to_owned())),
            ),
            ("rows".to_owned(), "0".to_owned()),
            ("wt".to_owned(), "json".to_owned()),
        ];
        let answer = self
            .client
            .select(params)
            .await
            .map_err(|e| format!("cannot count the documents holding {field}: {e}"))?;
        answer
            .pointer("/response/numFound")
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| format!("no numFound in the answer counting {field}"))
    }

    /// The update chain `/update` runs (see [`update_chain`]).
    pub async fn read_chain(&self) -> Result<Option<UpdateChain>, String> {
        update_chain(&self.solr).await
    }
}
