//! `solr-dedup urls learn|predict|canonical|export`: the URL rules ([`crate::urlrules`]) on the
//! command line. Learning and the index of canonical forms go through the engine
//! ([`crate::engine::urls`]), over a file or a Solr core.

use std::io::{BufRead, BufWriter, Write};
use std::path::Path;

use anyhow::{anyhow, Context};

use super::job::{check_filter, connect, exportable, init_logging, solr_failure};
use super::progress::Spinner;
use super::{write_text, Exit, Failure};
use crate::config::{
    Input, Source, UrlsCanonicalConfig, UrlsExportConfig, UrlsLearnConfig, UrlsPredictConfig,
};
use crate::engine::urls::{learn as learn_rules, load_index, LearnSettings};
use crate::engine::EngineError;
use crate::model::FieldNames;
use crate::solr::schema::SchemaInfo;
use crate::store::file::{FileStore, Output, OutputFormat};
use crate::store::solr::SolrStore;
use crate::store::{CommitMode, Filter, Store};
use crate::urlrules::{canonical as canonical_of, nutch, Rules, FORMAT};

/// Opens the store a `urls` command reads, for `fields`; on Solr, checks that the id and URL fields exist and lets light reads of
/// `light` go through `/export` when it can. Returns the filter and whether the core has `optional`.
async fn open(
    source: &Source,
    filter: &Option<String>,
    fields: &FieldNames,
    light: Vec<String>,
    optional: &str,
) -> Result<(Box<dyn Store>, Filter, bool), Failure> {
    match source {
        Source::File(path) => {
            let filter = match filter {
                Some(text) => Filter::parse(text).map_err(|e| anyhow!("--filter: {e} (see run --help)"))?,
                None => Filter::All,
            };
            let store = FileStore::open(path, Output::Stdout, OutputFormat::Updates, &fields.id, &fields.version)
                .map_err(|e| Failure::new(Exit::Usage, anyhow!(e)))?;
            Ok((Box::new(store), filter, true))
        }
        Source::Solr(solr) => {
            let client = connect(solr)?;
            let schema = SchemaInfo::fetch(&client)
                .await
                .map_err(|e| solr_failure(e, "cannot read the schema"))?;
            for (name, field) in [("id", &fields.id), ("sku", &fields.url)] {
                if schema.find(field).is_none() {
                    return Err(anyhow!(
                        "the core has no field {field}; if yours is called otherwise, say so with --field {name}=YOURS"
                    )
                    .into());
                }
            }
            if let Some(text) = filter {
                check_filter(&client, text).await?;
            }
            let has_optional = schema.find(optional).is_some();
            let light: Vec<String> = light.into_iter().filter(|f| schema.find(f).is_some()).collect();
            let export = exportable(&schema, light, &client).await;
            let mut store = SolrStore::new(client, &fields.id, &fields.version, CommitMode::None, solr.concurrency > 1);
            if let Some(fields) = export {
                store = store.with_export(fields);
            }
            let filter = filter.clone().map_or(Filter::All, Filter::Solr);
            Ok((Box::new(store), filter, has_optional))
        }
        Source::Missing => Err(anyhow!(
            "no index: give --solr URL (or set SOLR_URL) for a Solr core, or --input FILE for a file"
        )
        .into()),
    }
}

fn engine_failure(e: EngineError) -> Failure {
    match e {
        EngineError::Store(e) if e.is_unreachable() => Failure::new(
            Exit::SolrUnreachable,
            anyhow!(e).context("Solr could not be reached; run again when it is up"),
        ),
        e => Failure::new(Exit::Usage, anyhow!(e)),
    }
}

/// The runtime of the `urls` commands and `serve`: two workers.
pub(super) fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the runtime")?)
}

/// `urls learn`.
pub fn learn(c: &UrlsLearnConfig) -> Result<Exit, Failure> {
    init_logging(c.verbosity);
    let f = &c.fields;
    let light = vec![
        f.id.clone(),
        f.url.clone(),
        f.exact_signature.clone(),
        f.near_group.clone(),
    ];
    let progress = Spinner::new(c.quiet);
    let (rules, summary, work) = runtime()?.block_on(async {
        let (store, filter, has_near) = open(&c.source, &c.filter, f, light, &f.near_group).await?;
        let settings = LearnSettings {
            fields: f.clone(),
            filter,
            batch_size: c.batch_size,
            signer: c.signer,
            near: c.near && has_near,
            min_estimate: c.min_estimate,
        };
        learn_rules(&store, &settings, &progress)
            .await
            .map_err(engine_failure)
    })?;
    if summary.pages == 0 {
        eprintln!(
            "nothing to learn: the index holds no page with an http(s) URL ({} documents read, {} without a URL, {} with another kind of URL); no rules written",
            work.light_docs / 2,
            work.no_url,
            summary.bad_urls
        );
        return Ok(Exit::Problems);
    }
    let mut text = serde_json::to_string_pretty(&rules).context("cannot write the rules")?;
    text.push('\n');
    write_text(&c.out, &text, "the rules")?;
    let kinds: Vec<String> = summary
        .rules
        .iter()
        .map(|(kind, (written, apply))| format!("{kind} {apply}/{written}"))
        .collect();
    let where_to = match &c.out {
        Input::Stdin => "standard output".to_owned(),
        Input::File(p) => p.display().to_string(),
    };
    eprintln!(
        "url rules: {} pages of {} sites, {} pairs compared, {} candidates; rules that apply / written: {}; \
         content by near cluster {}, by exact signature {}, signed now {}; {} URLs left out (not http(s)); written to {where_to}",
        summary.pages,
        rules.sites.keys().filter(|s| *s != "*").count(),
        summary.pairs,
        summary.candidates,
        if kinds.is_empty() { "none".to_owned() } else { kinds.join(", ") },
        work.by_near,
        work.by_exact,
        work.text_docs,
        summary.bad_urls,
    );
    Ok(Exit::Ok)
}

/// Reads a rules file: one line on what is wrong with it otherwise.
pub fn load_rules(path: &Path) -> Result<Rules, Failure> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "cannot read the rules {} (make them with `solr-dedup urls learn --out {}`)",
            path.display(),
            path.display()
        )
    })?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        anyhow!(
            "rules {}: not JSON ({e}); write it again with `solr-dedup urls learn`",
            path.display()
        )
    })?;
    match value.get("url_rules").and_then(serde_json::Value::as_u64) {
        Some(v) if v == u64::from(FORMAT) => {}
        Some(v) => {
            return Err(anyhow!(
                "rules {}: format {v}, this solr-dedup reads format {FORMAT}; learn them again with `solr-dedup urls learn`",
                path.display()
            )
            .into())
        }
        None if value.get("url_rules").is_some() => {
            return Err(anyhow!(
                "rules {}: \"url_rules\" must be a format number ({FORMAT}); learn them again with `solr-dedup urls learn`",
                path.display()
            )
            .into())
        }
        None => {
            return Err(anyhow!(
                "rules {}: not a rules file (no \"url_rules\" format number); make one with `solr-dedup urls learn`",
                path.display()
            )
            .into())
        }
    }
    let rules: Rules = serde_json::from_value(value).map_err(|e| {
        anyhow!(
            "rules {}: {e}; fix it or learn the rules again",
            path.display()
        )
    })?;
    if !(0.0..=1.0).contains(&rules.min_estimate) {
        return Err(anyhow!("rules {}: min_estimate must be from 0 to 1", path.display()).into());
    }
    Ok(rules)
}

/// The URLs to answer for: the arguments, else standard input (one per line, blank lines skipped).
fn for_each_url(
    urls: &[String],
    mut each: impl FnMut(&str) -> Result<(), Failure>,
) -> Result<(), Failure> {
    if !urls.is_empty() {
        for u in urls {
            each(u)?;
        }
        return Ok(());
    }
    let stdin = std::io::stdin();
    let mut lock = stdin.lock();
    let mut line = String::new();
    loop {
        line.clear();
        if lock
            .read_line(&mut line)
            .context("cannot read URLs from standard input")?
            == 0
        {
            return Ok(());
        }
        let u = line.trim();
        if !u.is_empty() {
            each(u)?;
        }
    }
}

fn stdout_failed(e: std::io::Error) -> Failure {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        // The reader went away (`| head`): not an error of ours.
        Failure::new(Exit::Ok, anyhow!("standard output closed"))
    } else {
        Failure::new(
            Exit::Usage,
            anyhow!(e).context("cannot write to standard output"),
        )
    }
}

/// The index of canonical forms of the pages in `source` under `rules` (one light read).
pub(super) async fn index_of(
    source: &Source,
    filter: &Option<String>,
    f: &FieldNames,
    batch_size: usize,
    rules: Rules,
    progress: &dyn crate::engine::Progress,
) -> Result<crate::urlrules::predict::Index, Failure> {
    let light = vec![f.id.clone(), f.url.clone()];
    let (store, filter, _) = open(source, filter, f, light, &f.url).await?;
    load_index(&store, f, &filter, batch_size, rules, progress)
        .await
        .map_err(engine_failure)
}

/// `urls predict`.
pub fn predict(c: &UrlsPredictConfig) -> Result<Exit, Failure> {
    init_logging(c.verbosity);
    let rules = load_rules(&c.rules)?;
    let f = &c.fields;
    let progress = Spinner::new(c.quiet);
    let index = runtime()?.block_on(index_of(
        &c.source,
        &c.filter,
        f,
        c.batch_size,
        rules,
        &progress,
    ))?;
    let mut problems = false;
    if index.is_empty() {
        eprintln!("warning: the index holds no page with an http(s) URL: every URL is new (check --input/--solr and --filter)");
        problems = true;
    }
    let out = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, out.lock());
    let mut errors = 0u64;
    let mut line = Vec::with_capacity(256);
    for_each_url(&c.urls, |u| {
        line.clear();
        match index.predict(u) {
            Ok(p) => serde_json::to_writer(&mut line, &p).context("cannot write JSON")?,
            Err(e) => {
                errors += 1;
                serde_json::to_writer(
                    &mut line,
                    &serde_json::json!({"url": u, "error": e.to_string()}),
                )
                .context("cannot write JSON")?;
            }
        }
        line.push(b'\n');
        out.write_all(&line).map_err(stdout_failed)
    })?;
    out.flush().map_err(stdout_failed)?;
    if errors > 0 {
        eprintln!(
            "{errors} URLs had no canonical form (not a URL, or not http(s)); their lines say why"
        );
        problems = true;
    }
    Ok(if problems { Exit::Problems } else { Exit::Ok })
}

/// `urls canonical`.
pub fn canonical(c: &UrlsCanonicalConfig) -> Result<Exit, Failure> {
    let rules = load_rules(&c.rules)?;
    let out = std::io::stdout();
    let mut out = BufWriter::new(out.lock());
    let mut errors = 0u64;
    for_each_url(&c.urls, |u| {
        match canonical_of(u, &rules) {
            Ok(cf) => writeln!(out, "{}", cf.url),
            Err(e) => {
                errors += 1;
                eprintln!("{e}");
                // An empty line keeps the output aligned with the input.
                writeln!(out)
            }
        }
        .map_err(stdout_failed)
    })?;
    out.flush().map_err(stdout_failed)?;
    Ok(if errors > 0 { Exit::Problems } else { Exit::Ok })
}

/// `urls export`.
pub fn export(c: &UrlsExportConfig) -> Result<Exit, Failure> {
    let rules = load_rules(&c.rules)?;
    let xml = nutch::regex_normalize_xml(&rules, c.min_estimate);
    write_text(&c.out, &xml, "the export")?;
    Ok(Exit::Ok)
}
