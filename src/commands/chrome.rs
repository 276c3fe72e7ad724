//! `solr-dedup chrome learn`: open the index through the common path, learn the model
//! ([`crate::learn::chrome`]), write it atomically. (`run --chrome` reads a model with
//! `super::common::load::load_chrome`.)

use super::common::failure::engine_failure;
use super::common::open::{open, Index, Purpose};
use super::common::{init_logging, runtime, Threads};
use super::progress::Spinner;
use super::{write_json, write_text, Exit, Failure};
use crate::config::{ChromeLearnConfig, Input};
use crate::learn::chrome::{learn, LearnSettings};
use crate::signature::chrome::{ChromeModel, WARN_REMOVED};

/// Learns a model and writes it.
pub fn run(c: &ChromeLearnConfig) -> Result<Exit, Failure> {
    init_logging(&c.log);
    let f = &c.fields;
    let index = Index {
        config: &c.index,
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
            batch_size: c.batch_size,
        };
        learn(&opened.store, &settings, &Spinner::new(c.quiet))
            .await
            .map_err(|e| engine_failure(e, false))
    })?;
    write_model(&c.out, &model)?;
    let chrome_hosts = model.hosts.values().filter(|h| !h.lines.is_empty()).count();
    let where_to = c.out.output_name();
    if let Some(report) = &c.report {
        let summary = serde_json::json!({
            "outcome": "succeeded",
            "hosts": model.hosts.len(),
            "chrome_hosts": chrome_hosts,
            "skipped": {"hosts": model.skipped.hosts, "pages": model.skipped.pages},
            "min_pages": c.min_pages,
            "work": {"light_docs": work.light_docs, "text_docs": work.text_docs},
            "no_host": work.no_host,
            "model": where_to,
        });
        write_json(report, &summary, "the report")?;
    }
    if c.quiet {
        return Ok(Exit::Ok);
    }
    for line in site_lines(&model) {
        eprintln!("{line}");
    }
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

/// One line per site with template lines: its names, pages, lines and the share of an average
/// sampled page's words they take, with a warning above [`WARN_REMOVED`].
fn site_lines(model: &ChromeModel) -> Vec<String> {
    model
        .hosts
        .iter()
        .filter(|(_, h)| !h.lines.is_empty())
        .map(|(site, h)| {
            let names = if h.names.len() > 1 {
                format!(" ({})", h.names.join(", "))
            } else {
                String::new()
            };
            let warn = if h.removed > WARN_REMOVED {
                format!(
                    "; warning: more than {:.0} % of a page, check that these lines are not content",
                    WARN_REMOVED * 100.0
                )
            } else {
                String::new()
            };
            format!(
                "  {site}{names}: {} pages, {} sampled, {} template lines, removes {:.1} % of an average page's words{warn}",
                h.pages,
                h.sample,
                h.lines.len(),
                h.removed * 100.0
            )
        })
        .collect()
}
