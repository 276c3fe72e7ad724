//! `solr-dedup chrome learn`: open the index through the common path, learn the model
//! ([`crate::learn::chrome`]), write it atomically. (`run --chrome` reads a model with
//! [`super::common::load::load_chrome`].)

use super::common::failure::engine_failure;
use super::common::open::{open, Index, Purpose};
use super::common::{init_logging, runtime, Threads};
use super::progress::Spinner;
use super::{write_text, Exit, Failure};
use crate::config::{ChromeLearnConfig, Input};
use crate::learn::chrome::{learn, LearnSettings};
use crate::signature::chrome::ChromeModel;

/// Learns a model and writes it.
pub fn run(c: &ChromeLearnConfig) -> Result<Exit, Failure> {
    init_logging(c.verbosity);
    let f = &c.fields;
    let index = Index {
        source: &c.source,
        filter: c.filter.as_deref(),
        max_line_bytes: c.max_line_bytes,
        missing: "no documents to learn from",
    };
    let required = [("id", f.id.as_str()), ("sku", &f.url), ("text_t", &f.text)];
    let purpose = Purpose::Read {
        fields: f,
        required: &required,
        light: None,
        optional: None,
    };
    let (model, work) = runtime(Threads::Workers)?.block_on(async {
        let opened = open(index, purpose).await?;
        let settings = LearnSettings {
            fields: f.clone(),
            filter: opened.filter,
            sample: c.sample,
            share: c.share,
            min_pages: c.min_pages,
            shingle: c.shingle,
            batch_size: c.batch_size,
        };
        learn(&opened.store, &settings, &Spinner::new(false))
            .await
            .map_err(|e| engine_failure(e, false))
    })?;
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

fn write_model(out: &Input, model: &ChromeModel) -> Result<(), Failure> {
    write_text(out, &model.to_json(), "the model")
}
