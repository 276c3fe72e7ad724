//! `solr-dedup schema check|apply`: what a run needs of a core's schema, and adding what is missing.

use std::io::Write;

use anyhow::{anyhow, Context};

use super::common::open::open_failure;
use super::common::{init_logging, runtime, Threads};
use super::{Exit, Failure};
use crate::config::SchemaConfig;
use crate::engine::schema_fit::{add_commands, chain_problems, inspect, SchemaReport};
use crate::store::open::SchemaApi;

/// Runs `schema check` or `schema apply`.
pub fn run(c: &SchemaConfig) -> Result<Exit, Failure> {
    init_logging(&c.log);
    let solr = c.solr.as_ref().ok_or_else(|| {
        anyhow!("no core given: use --solr URL (or set SOLR_URL), e.g. http://127.0.0.1:8983/solr/collection1")
    })?;
    let api = SchemaApi::connect(solr).map_err(open_failure)?;
    runtime(Threads::Caller)?.block_on(async {
        let schema = api
            .read("cannot read the schema")
            .await
            .map_err(open_failure)?;
        let report = inspect(&schema, &c.engine);
        let mut out = std::io::stdout().lock();
        let chain = match api.read_chain().await {
            Ok(chain) => chain
                .map(|chain| chain_problems(&chain, &c.engine))
                .unwrap_or_default(),
            Err(why) => {
                writeln!(out, "note: {why}").context("cannot write to standard output")?;
                Vec::new()
            }
        };
        let missing = report.missing_required();
        let to_add: Vec<_> = missing.iter().copied().filter(|n| n.written).collect();
        if c.apply && !to_add.is_empty() {
            let commands = add_commands(&schema, &to_add);
            if c.dry_run {
                writeln!(
                    out,
                    "{}",
                    serde_json::to_string_pretty(&commands).expect("JSON")
                )
                .context("cannot write to standard output")?;
                return Ok(Exit::Ok);
            }
            api.post(&commands).await.map_err(open_failure)?;
            let names: Vec<&str> = to_add.iter().map(|n| n.name.as_str()).collect();
            writeln!(out, "added {}", names.join(", "))
                .context("cannot write to standard output")?;
            // What is left is what apply cannot fix.
            let schema = api
                .read("cannot read the schema again")
                .await
                .map_err(open_failure)?;
            let report = inspect(&schema, &c.engine);
            return verdict(&report, &chain, &mut out, api.core_url());
        }
        if c.apply {
            writeln!(out, "nothing to add").context("cannot write to standard output")?;
        }
        verdict(&report, &chain, &mut out, api.core_url())
    })
}

/// Prints every problem, one line each, and says whether a run may write.
/// `chain`: what the update chain `/update` runs would change (see `chain_problems`).
fn verdict(
    report: &SchemaReport,
    chain: &[String],
    out: &mut impl Write,
    core_url: &str,
) -> Result<Exit, Failure> {
    let mut problems = report.problems(core_url, true);
    problems.extend(chain.iter().cloned());
    let mut w = |line: &str| writeln!(out, "{line}").context("cannot write to standard output");
    if problems.is_empty() {
        w("ok: every field the worker reads and writes is there, and atomic updates lose nothing")?;
        if !report.has_fuzzy_text {
            w("note: no fuzzy_signature_text_t field; it will not be written")?;
        }
        return Ok(Exit::Ok);
    }
    for p in &problems {
        w(p)?;
    }
    Err(Failure::new(
        Exit::Usage,
        anyhow!(
            "the schema is not ready for a run ({} problems above)",
            problems.len()
        ),
    ))
}
