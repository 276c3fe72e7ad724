//! What a command opens the index for, checked before anything is read or written: the command's
//! side of [`crate::store::open`], which owns the step from settings to an `Arc<dyn Store>`.
//!
//! ```text
//! IndexConfig + Purpose ──▶ open() ── store::connect ──▶ Connection { filter, schema }
//!                                  ── the purpose's fields checked against the schema
//!                                     (a run's: schema_fit::prepare; a reader's: its required fields)
//!                                  ── Connection::open ──▶ Opened { store, filter, has_optional }
//! ```
//!
//! Every command that reads documents opens them here (`run`/`check`, `urls learn|predict`,
//! `chrome learn`, `serve`'s prediction index), so a filter, a missing field or an unreachable core
//! fails the same way everywhere, before anything is read or written.

use std::sync::Arc;

use anyhow::anyhow;

use super::super::{Exit, Failure};
use super::failure::open_store_failure;
use crate::config::{IndexConfig, Source};
use crate::engine::schema_fit::{chain_problems, prepare};
use crate::engine::{self, EngineConfig};
use crate::model::FieldNames;
use crate::store::file::{Output, OutputFormat};
use crate::store::open::Options;
use crate::store::{CommitMode, Filter, Location, OpenError, Store, Target};

/// Where the documents are and which of them count, with how the "no index given" line begins in
/// the command's words (`no documents to work on`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Index<'a> {
    /// `--input` or `--solr`, `--filter`, `--max-line-bytes`.
    pub(crate) config: &'a IndexConfig,
    /// How the "no index given" line begins.
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
    pub(crate) store: Arc<dyn Store>,
    /// `--filter` as the store understands it ([`Filter::All`] without one).
    pub(crate) filter: Filter,
    /// Whether the core has the purpose's optional field (a file always may).
    pub(crate) has_optional: bool,
    /// `run`/`check`: fields a light read may ask for besides the engine's (the near keys, when the
    /// core streams them), which the change state keeps.
    pub(crate) extra_light: Vec<String>,
    /// A writing run's: the index-time signing processor (`solr-plugin/`) of the core's update
    /// chain, when it has one, for [`super::settings::chain_differences`].
    pub(crate) signing: Option<crate::solr_client::config::Processor>,
}

/// The store layer's target for `index`, or the "no index given" line.
pub(crate) fn target<'a>(
    index: &'a IndexConfig,
    fields: &'a FieldNames,
    missing: &str,
) -> Result<Target<'a>, Failure> {
    let location = match &index.source {
        Source::File(path) => Location::File(path),
        Source::Solr(solr) => Location::Solr(solr),
        Source::Missing => {
            return Err(anyhow!(
                "{missing}: give --solr URL (or set SOLR_URL) for a Solr core, or --input FILE for a file"
            )
            .into())
        }
    };
    Ok(Target {
        location,
        filter: index.filter.as_deref(),
        max_line_bytes: index.max_line_bytes,
        id_field: &fields.id,
        version_field: &fields.version,
    })
}

/// `fields` under the core's profile, for a command that reads the worker's flags or near groups
/// without a run's schema check (`serve`'s views and prediction index, `urls learn|predict`): the
/// in-place profile's names when the core's schema has its fields (see
/// [`crate::engine::schema_fit::detect_profile`]). A file keeps YaCy's; a core whose schema cannot
/// be read too, and the error says why (the command's own open says it again if the core is down).
pub(crate) async fn core_profile(
    index: &IndexConfig,
    fields: &mut FieldNames,
) -> Result<(), String> {
    let Source::Solr(solr) = &index.source else {
        return Ok(());
    };
    let api = crate::store::open::SchemaApi::connect(solr).map_err(|e| e.to_string())?;
    let schema = api
        .read("cannot read the schema")
        .await
        .map_err(|e| e.to_string())?;
    // Every dimension, as a run's default: the same answer its schema check gives.
    let probe = EngineConfig {
        fields: fields.clone(),
        ..EngineConfig::default()
    };
    fields.set_profile(crate::engine::schema_fit::detect_profile(&schema, &probe));
    Ok(())
}

/// What a store that could not be opened means: Solr failing is exit 3 when it could not be
/// reached, else 2; a setting it cannot use is exit 2.
pub(crate) fn open_failure(e: OpenError) -> Failure {
    match e {
        OpenError::Store { doing, source } => open_store_failure(source, doing),
        other => Failure::new(Exit::Usage, anyhow::Error::new(other)),
    }
}

/// Opens the index for `purpose`, checking everything that would make the work fail before any
/// of it is done (see the module doc). Runs on the command's runtime.
pub(crate) async fn open(index: Index<'_>, purpose: Purpose<'_>) -> Result<Opened, Failure> {
    let fields = match &purpose {
        Purpose::Job { engine, .. } => engine.fields.clone(),
        Purpose::Read { fields, .. } => (*fields).clone(),
    };
    let target = target(index.config, &fields, index.missing)?;
    let connection = crate::store::connect(target).await.map_err(open_failure)?;
    let filter = connection.filter().clone();
    let mut extra_light = Vec::new();
    let mut signing = None;
    let (options, has_optional) = match purpose {
        Purpose::Job {
            engine,
            writes,
            allow_lossy,
            near_optional,
            output,
            format,
        } => {
            if index.config.filter.is_some() {
                engine.filter = filter.clone();
            }
            if let (Some(schema), Some(core_url)) = (connection.schema(), connection.core_url()) {
                prepare(schema, engine, writes, allow_lossy, near_optional, core_url)
                    .map_err(|e| Failure::new(Exit::Usage, anyhow::Error::new(e)))?;
            }
            let chain = match writes {
                true => connection.update_chain().await,
                false => None,
            };
            if let Some(chain) = chain {
                signing = chain
                    .processors
                    .iter()
                    .find(|p| p.simple_name() == super::settings::SIGNING_PROCESSOR)
                    .cloned();
                let problems = chain_problems(&chain, engine);
                if !problems.is_empty() {
                    return Err(anyhow!(
                        "the core's update chain would change what this run writes: {}",
                        problems.join("; ")
                    )
                    .into());
                }
            }
            let f = &engine.fields;
            let mut light = engine::light_fields(engine);
            // The change state keeps the near keys too when the core streams them (docValues),
            // so that the near step's reads of every key are served from it.
            let streams = |name: &str| {
                connection
                    .schema()
                    .and_then(|s| s.find(name))
                    .is_some_and(|i| i.doc_values)
            };
            if engine.dimensions.contains(&crate::engine::Dimension::Near)
                && streams(&f.near_keys)
                && !light.contains(&f.near_keys)
            {
                extra_light.push(f.near_keys.clone());
                light.push(f.near_keys.clone());
            }
            let options = Options {
                commit: engine.commit,
                light: Some(light),
                output,
                format,
                text_fields: [&f.text, &f.title, &f.description, &f.url]
                    .map(String::clone)
                    .to_vec(),
                memory: Some((engine.memory, engine.temp_dir.clone())),
                // The run is recorded (its report written) before its output appears.
                defer_output: true,
            };
            (options, true)
        }
        Purpose::Read {
            required,
            light,
            optional,
            ..
        } => {
            let mut light = light;
            let mut has_optional = true;
            if let Some(schema) = connection.schema() {
                for &(name, field) in required {
                    if schema.find(field).is_none() {
                        return Err(anyhow!(
                            "the core has no field {field}; if yours is called otherwise, say so with --field {name}=YOURS"
                        )
                        .into());
                    }
                }
                light = light.map(|l| l.into_iter().filter(|f| schema.find(f).is_some()).collect());
                has_optional = optional.is_none_or(|f| schema.find(f).is_some());
            }
            let options = Options {
                commit: CommitMode::None,
                light,
                ..Options::default()
            };
            (options, has_optional)
        }
    };
    let store = connection.open(options).await.map_err(open_failure)?;
    Ok(Opened {
        store,
        filter,
        has_optional,
        extra_light,
        signing,
    })
}
