//! `solr-dedup chrome learn`: open the store, learn the model ([`crate::learn::chrome`]), write it
//! atomically; and [`load`], which `run --chrome` reads a model with.

use std::path::Path;
use std::sync::Arc;

use anyhow::{anyhow, Context};

use super::job::{check_filter, connect, init_logging, solr_failure};
use super::progress::Spinner;
use super::{write_text, Exit, Failure};
use crate::config::{ChromeLearnConfig, Input, Source};
use crate::engine::EngineError;
use crate::learn::chrome::{learn, LearnSettings, LearnWork};
use crate::signature::chrome::{ChromeModel, ChromeSet};
use crate::solr::schema::SchemaInfo;
use crate::store::file::{FileStore, Output, OutputFormat};
use crate::store::solr::SolrStore;
use crate::store::CommitMode;
use crate::store::{Filter, Store};

/// Learns a model and writes it.
pub fn run(c: &ChromeLearnConfig) -> Result<Exit, Failure> {
    init_logging(c.verbosity);
    let mut settings = LearnSettings {
        fields: c.fields.clone(),
        filter: Filter::All,
        sample: c.sample,
        share: c.share,
        min_pages: c.min_pages,
        shingle: c.shingle,
        batch_size: c.batch_size,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    let (model, work) = match &c.source {
        Source::File(path) => {
            if let Some(text) = &c.filter {
                settings.filter =
                    Filter::parse(text).map_err(|e| anyhow!("--filter: {e} (see run --help)"))?;
            }
            let f = &settings.fields;
            let store = FileStore::open(path, Output::Stdout, OutputFormat::Updates, &f.id, &f.version)
                .map_err(|e| Failure::new(Exit::Usage, anyhow!(e)))?;
            runtime.block_on(learn_from(&store, &settings))?
        }
        Source::Solr(solr) => {
            if let Some(text) = &c.filter {
                settings.filter = Filter::Solr(text.clone());
            }
            let client = connect(solr)?;
            runtime.block_on(async {
                let schema = SchemaInfo::fetch(&client)
                    .await
                    .map_err(|e| solr_failure(e, "cannot read the schema"))?;
                let f = &settings.fields;
                for (name, field) in [("id", &f.id), ("sku", &f.url), ("text_t", &f.text)] {
                    if schema.find(field).is_none() {
                        return Err(anyhow!(
                            "the core has no field {field}; if yours is called otherwise, say so with --field {name}=YOURS"
                        )
                        .into());
                    }
                }
                if let Some(text) = &c.filter {
                    check_filter(&client, text).await?;
                }
                let store = SolrStore::new(client, &f.id, &f.version, CommitMode::None, true);
                learn_from(&store, &settings).await
            })?
        }
        Source::Missing => {
            return Err(anyhow!(
                "no documents to learn from: give --solr URL (or set SOLR_URL) for a Solr core, or --input FILE for a file"
            )
            .into())
        }
    };
    write_model(&c.out, &model)?;
    let chrome_hosts = model
        .hosts
        .values()
        .filter(|h| !h.chrome.is_empty())
        .count();
    let where_to = match &c.out {
        Input::Stdin => "standard output".to_owned(),
        Input::File(p) => p.display().to_string(),
    };
    eprintln!(
        "chrome model: {chrome_hosts} of {} hosts with chrome, {} hosts ({} pages) under --min-pages {}; \
         read {} documents light, {} texts; {} without a URL host; written to {where_to}",
        model.hosts.len(),
        model.skipped.hosts,
        model.skipped.pages,
        c.min_pages,
        work.light_docs,
        work.text_docs,
        work.no_host,
    );
    Ok(Exit::Ok)
}

async fn learn_from<S: Store>(
    store: &S,
    settings: &LearnSettings,
) -> Result<(ChromeModel, LearnWork), Failure> {
    learn(store, settings, &Spinner::new(false))
        .await
        .map_err(|e| match e {
            EngineError::Store(e) if e.is_unreachable() => Failure::new(
                Exit::SolrUnreachable,
                anyhow!(e).context("Solr could not be reached; run again when it is up"),
            ),
            e => Failure::new(Exit::Usage, anyhow!(e)),
        })
}

fn write_model(out: &Input, model: &ChromeModel) -> Result<(), Failure> {
    write_text(out, &model.to_json(), "the model")
}

/// Reads the model of `run --chrome`, for runs with `shingle` words per shingle.
pub fn load(path: &Path, shingle: usize) -> Result<Arc<ChromeSet>, Failure> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the chrome model {}", path.display()))?;
    let model = ChromeModel::from_json(&text)
        .map_err(|e| anyhow!("chrome model {}: {e}", path.display()))?;
    if model.shingle != shingle {
        return Err(anyhow!(
            "chrome model {}: learned with --near-shingle {}, this run uses {shingle}; run with --near-shingle {} or learn the model again",
            path.display(),
            model.shingle,
            model.shingle
        )
        .into());
    }
    let set = model
        .to_set()
        .map_err(|e| anyhow!("chrome model {}: {e}", path.display()))?;
    tracing::info!(hosts = set.len(), "chrome model read");
    Ok(Arc::new(set))
}
