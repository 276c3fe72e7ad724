//! `solr-dedup schema check|apply`: what a run needs of a core's schema, and adding what is missing.

use std::io::Write;

use anyhow::{anyhow, Context};

use super::common::open::open_failure;
use super::common::{init_logging, runtime, Threads};
use super::{Exit, Failure};
use crate::config::SchemaConfig;
use crate::engine::schema_fit::{
    add_commands, chain_problems, detect_profile, in_place_blockers, inspect, needs,
};
use crate::model::Profile;
use crate::store::open::SchemaApi;

/// What `schema check|apply` found and did, printed as lines (or, with `--json`, one object).
#[derive(Debug, Default, serde::Serialize)]
struct Verdict {
    /// The core, without credentials.
    core: String,
    /// Whether a run can go ahead.
    ok: bool,
    /// What stands in a run's way, one line each with what to do.
    problems: Vec<String>,
    /// Fields `apply` added.
    added: Vec<String>,
    /// What the check could not look at, and what a run will leave out.
    notes: Vec<String>,
    /// The profile the checked fields follow: `yacy` or `in-place` (`--profile`, or the core's).
    profile: String,
    /// In the in-place profile: why Solr would re-index whole documents instead of updating a
    /// field in place, one line each (empty: every write after signing is in place).
    not_in_place: Vec<String>,
}

/// Runs `schema check` or `schema apply`.
pub fn run(c: &SchemaConfig) -> Result<Exit, Failure> {
    init_logging(&c.log);
    let solr = c.solr.as_ref().ok_or_else(|| {
        anyhow!("no core given: use --solr URL (or set SOLR_URL), e.g. http://127.0.0.1:8983/solr/collection1")
    })?;
    let api = SchemaApi::connect(solr).map_err(open_failure)?;
    let mut v = Verdict {
        core: api.core_url().to_owned(),
        ..Verdict::default()
    };
    let mut lines: Vec<String> = Vec::new();
    runtime(Threads::Caller)?.block_on(async {
        let mut schema = api
            .read("cannot read the schema")
            .await
            .map_err(open_failure)?;
        let chain = match api.read_chain().await {
            Ok(chain) => chain
                .map(|chain| chain_problems(&chain, &c.engine))
                .unwrap_or_default(),
            Err(why) => {
                v.notes.push(why.clone());
                lines.push(format!("note: {why}"));
                Vec::new()
            }
        };
        let mut engine = c.engine.clone();
        if engine.profile_auto {
            engine.fields.set_profile(detect_profile(&schema, &engine));
        }
        v.profile = engine.fields.profile.name().to_owned();
        lines.push(format!("profile: {}", v.profile));
        let report = inspect(&schema, &engine);
        let missing = report.missing_required();
        let to_add: Vec<_> = missing.iter().copied().filter(|n| n.written).collect();
        // Solr updates nothing in place while its version field is indexed or stored: the
        // profile's fields would only be slower YaCy fields, so apply adds none of them.
        let version_blocks = in_place_blockers(&schema, "_version_");
        let refused = (c.apply
            && engine.fields.profile == Profile::InPlace
            && !version_blocks.is_empty())
        .then(|| {
            format!(
                "not applied: the in-place profile needs a _version_ that is neither indexed nor stored, with docValues \
                 (Solr updates nothing in place otherwise): _version_ {}; change it in the configset and reindex, then apply again",
                version_blocks.join(", ")
            )
        });
        if c.apply && refused.is_none() && !to_add.is_empty() {
            let commands = add_commands(&schema, &to_add);
            if c.dry_run {
                let mut out = std::io::stdout().lock();
                writeln!(
                    out,
                    "{}",
                    serde_json::to_string_pretty(&commands).expect("JSON")
                )
                .context("cannot write to standard output")?;
                return Ok::<_, Failure>(None);
            }
            api.post(&commands).await.map_err(open_failure)?;
            v.added = to_add.iter().map(|n| n.name.clone()).collect();
            lines.push(format!("added {}", v.added.join(", ")));
            // What is left is what apply cannot fix.
            schema = api
                .read("cannot read the schema again")
                .await
                .map_err(open_failure)?;
        } else if c.apply && refused.is_none() {
            lines.push("nothing to add".to_owned());
        }
        let report = inspect(&schema, &engine);
        v.not_in_place = report.not_in_place.clone();
        if engine.fields.profile == Profile::InPlace && v.not_in_place.is_empty() {
            // The schema allows it; Solr also needs the field in the index already.
            for need in needs(&engine).iter().filter(|n| n.in_place) {
                if report.missing.iter().any(|m| m.name == need.name) {
                    continue;
                }
                match api.holders(&need.name).await {
                    Ok(0) => v.not_in_place.push(format!(
                        "{} is held by no document yet: Solr updates a field in place only once the index has it, \
                         so its first write re-indexes the whole document (a page signed at index time \
                         with the field's first value is updated in place from the start)",
                        need.name
                    )),
                    Ok(_) => {}
                    Err(why) => {
                        v.notes.push(why.clone());
                        lines.push(format!("note: {why}"));
                    }
                }
            }
        }
        lines.extend(v.not_in_place.iter().map(|l| format!("not in place: {l}")));
        let mut problems = report.problems(api.core_url(), true);
        problems.extend(chain);
        problems.extend(refused);
        v.ok = problems.is_empty();
        if v.ok {
            lines.push(
                "ok: every field the worker reads and writes is there, and atomic updates lose nothing"
                    .to_owned(),
            );
            if !report.not_in_place.is_empty() {
                lines.push(
                    "note: the in-place profile's writes are not in place (above): Solr re-indexes the whole page for each"
                        .to_owned(),
                );
            }
            if !report.has_fuzzy_text {
                let note = "no fuzzy_signature_text_t field; it will not be written";
                v.notes.push(note.to_owned());
                lines.push(format!("note: {note}"));
            }
        } else {
            lines.extend(problems.iter().cloned());
        }
        v.problems = problems;
        Ok(Some(()))
    })?
    .map_or(Ok(Exit::Ok), |()| {
        if let Some(out) = &c.report {
            super::write_json(out, &v, "the report")?;
        }
        // `--report -` is the output on standard output: no lines beside it.
        let print = !(c.quiet && v.ok) && c.report != Some(crate::config::Input::Stdin);
        verdict(&v, &lines, c.json, print)
    })
}

/// Prints the verdict (its lines, or with `--json` one JSON object) unless told not to (`-q` and
/// all well, or `--report -`), and says whether a run may write: exit 2 when something stands in
/// its way.
fn verdict(v: &Verdict, lines: &[String], json: bool, print: bool) -> Result<Exit, Failure> {
    let mut out = std::io::stdout().lock();
    let text = if json {
        serde_json::to_string_pretty(v).expect("JSON")
    } else {
        lines.join("\n")
    };
    // Quiet: nothing when all is well; the problems still show.
    if print {
        writeln!(out, "{text}").context("cannot write to standard output")?;
    }
    if v.ok {
        return Ok(Exit::Ok);
    }
    Err(Failure::new(
        Exit::Usage,
        anyhow!(
            "the schema is not ready for a run ({} problems {})",
            v.problems.len(),
            if json { "in the JSON" } else { "above" }
        ),
    ))
}
