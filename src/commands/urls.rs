//! `solr-dedup urls learn|predict|canonical|export`: the URL rules ([`crate::urlrules`]) on the
//! command line. Learning and the index of canonical forms go through [`crate::learn::urls`], over
//! the index opened through the common path (a file or a Solr core).

use std::io::{BufRead, BufWriter, Write};

use anyhow::{anyhow, Context};

use super::common::failure::engine_failure;
use super::common::load::load_rules;
use super::common::open::{core_profile, open, Index, Purpose};
use super::common::{init_logging, runtime, Threads};
use super::progress::Spinner;
use super::{write_json, write_text, Exit, Failure};
use crate::config::{UrlsCanonicalConfig, UrlsExportConfig, UrlsLearnConfig, UrlsPredictConfig};
use crate::learn::urls::{learn as learn_rules, load_index, LearnSettings};
use crate::model::FieldNames;
use crate::urlrules::{canonical as canonical_of, nutch, Rules};

/// How the `urls` commands (and `serve --rules`) say that no index was given.
const NO_INDEX: &str = "no index";

/// `fields` under the core's profile ([`core_profile`]); a core that cannot be read is named by
/// the command's own open, which follows.
fn fields_of(
    rt: &tokio::runtime::Runtime,
    index: &crate::config::IndexConfig,
    fields: &crate::model::FieldNames,
) -> crate::model::FieldNames {
    let mut fields = fields.clone();
    let _ = rt.block_on(core_profile(index, &mut fields));
    fields
}

/// `urls learn`.
pub fn learn(c: &UrlsLearnConfig) -> Result<Exit, Failure> {
    init_logging(&c.log);
    let rt = runtime(Threads::Workers)?;
    let fields = fields_of(&rt, &c.index, &c.fields);
    let f = &fields;
    let light = vec![
        f.id.clone(),
        f.url.clone(),
        f.exact_signature.clone(),
        f.near_group.clone(),
    ];
    let progress = Spinner::new(c.quiet);
    let index = Index {
        config: &c.index,
        missing: NO_INDEX,
    };
    let required = [("id", f.id.as_str()), ("sku", &f.url)];
    let purpose = Purpose::Read {
        fields: f,
        required: &required,
        light: Some(light),
        optional: Some(&f.near_group),
    };
    let (rules, summary, work) = rt.block_on(async {
        let opened = open(index, purpose).await?;
        let settings = LearnSettings {
            fields: f.clone(),
            filter: opened.filter,
            batch_size: c.batch_size,
            signer: c.signer,
            near: c.near && opened.has_optional,
            min_estimate: c.min_estimate,
        };
        learn_rules(&opened.store, &settings, &progress)
            .await
            .map_err(|e| engine_failure(e, false))
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
    write_json(&c.out, &rules, "the rules")?;
    let kinds: Vec<String> = summary
        .rules
        .iter()
        .map(|(kind, (written, apply))| format!("{kind} {apply}/{written}"))
        .collect();
    let where_to = c.out.output_name();
    let sites = rules
        .sites
        .iter()
        .filter(|(s, r)| *s != "*" && r.has_rules())
        .count();
    if let Some(report) = &c.report {
        let by_kind: serde_json::Map<String, serde_json::Value> = summary
            .rules
            .iter()
            .map(|(kind, (written, apply))| {
                (
                    kind.to_string(),
                    serde_json::json!({"written": written, "apply": apply}),
                )
            })
            .collect();
        let report_json = serde_json::json!({
            "outcome": "succeeded",
            "pages": summary.pages,
            "sites": sites,
            "pairs": summary.pairs,
            "candidates": summary.candidates,
            "rules": by_kind,
            "content": {"by_near": work.by_near, "by_exact": work.by_exact, "signed_now": work.text_docs},
            "bad_urls": summary.bad_urls,
            "rules_file": where_to,
            "calibration": summary.calibration,
        });
        write_json(report, &report_json, "the report")?;
    }
    if c.quiet {
        return Ok(Exit::Ok);
    }
    let calibrated = summary.calibration.map_or(String::new(), |f| {
        if f.pairs < crate::urlrules::calibrate::MIN_PAIRS {
            format!(
                "; probabilities under the default calibration (pi {}, epsilon {}: {} pairs, fewer than {} to choose from)",
                f.calibration.pi,
                f.calibration.epsilon,
                f.pairs,
                crate::urlrules::calibrate::MIN_PAIRS
            )
        } else {
            format!(
                "; probabilities calibrated on {} pairs left out one at a time (pi {}, epsilon {}; Brier score {:.4}, the estimates' {:.4})",
                f.pairs, f.calibration.pi, f.calibration.epsilon, f.brier, f.brier_pessimistic
            )
        }
    });
    eprintln!(
        "url rules: {} pages of {} sites, {} pairs compared, {} candidates; rules that apply / written: {}; \
         content by near cluster {}, by exact signature {}, signed now {}; {} URLs left out (not http(s)); written to {where_to}{calibrated}",
        summary.pages,
        sites,
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

/// The index of canonical forms of the pages in `index` under `rules` (one light read).
pub(super) async fn index_of(
    index: Index<'_>,
    f: &FieldNames,
    batch_size: usize,
    rules: Rules,
    progress: &dyn crate::engine::Progress,
) -> Result<crate::urlrules::predict::Index, Failure> {
    let required = [("id", f.id.as_str()), ("sku", &f.url)];
    let unique = f.unique(crate::model::Dimension::Exact);
    let mut light = vec![
        f.id.clone(),
        f.url.clone(),
        f.exact_signature.clone(),
        unique.to_owned(),
    ];
    light.extend(f.count(crate::model::Dimension::Exact).map(str::to_owned));
    // The exact flags, when the core has them: answers then name the copy search shows.
    let purpose = Purpose::Read {
        fields: f,
        required: &required,
        light: Some(light),
        optional: Some(unique),
    };
    let opened = open(index, purpose).await?;
    load_index(
        &opened.store,
        f,
        &opened.filter,
        batch_size,
        rules,
        opened.has_optional,
        progress,
    )
    .await
    .map_err(|e| engine_failure(e, false))
}

/// `urls predict`.
pub fn predict(c: &UrlsPredictConfig) -> Result<Exit, Failure> {
    init_logging(&c.log);
    let rules = load_rules(&c.rules)?;
    let rt = runtime(Threads::Workers)?;
    let fields = fields_of(&rt, &c.index, &c.fields);
    let f = &fields;
    let progress = Spinner::new(c.quiet);
    let index = Index {
        config: &c.index,
        missing: NO_INDEX,
    };
    let index = rt.block_on(index_of(index, f, c.batch_size, rules, &progress))?;
    let mut problems = false;
    if index.is_empty() {
        eprintln!("warning: the index holds no page with an http(s) URL: every URL is new (check --input/--solr and --filter)");
        problems = true;
    }
    let out = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, out.lock());
    let mut errors = 0u64;
    let (mut answered, mut met, mut hidden) = (0u64, 0u64, 0u64);
    // Answers at or above each threshold (the Scrapy middleware's default is 0.98).
    const THRESHOLDS: [f64; 4] = [0.5, 0.9, 0.95, 0.98];
    let mut at = [0u64; 4];
    let mut line = Vec::with_capacity(256);
    for_each_url(&c.urls, |u| {
        line.clear();
        match index.predict(u) {
            Ok(p) => {
                answered += 1;
                if p.duplicate_of.is_some() {
                    met += 1;
                    hidden += u64::from(p.matched.is_some());
                    for (n, t) in at.iter_mut().zip(THRESHOLDS) {
                        *n += u64::from(p.probability >= t);
                    }
                }
                serde_json::to_writer(&mut line, &p).context("cannot write JSON")?
            }
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
    if let Some(report) = &c.report {
        let at: serde_json::Map<String, serde_json::Value> = THRESHOLDS
            .iter()
            .zip(at)
            .map(|(t, n)| (t.to_string(), serde_json::json!(n)))
            .collect();
        let summary = serde_json::json!({
            "outcome": if problems || errors > 0 { "problems" } else { "succeeded" },
            "answered": answered,
            "errors": errors,
            "indexed_page_met": met,
            "hidden_doubles_met": hidden,
            "at_threshold": at,
            "index_pages": index.len(),
        });
        write_json(report, &summary, "the report")?;
    }
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
