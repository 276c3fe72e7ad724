//! `solr-dedup clean`: take the worker's values off a core ([`crate::engine::clean`]), remove the
//! settings record of the core and filter, and forget the order kept in the state folder.

use anyhow::anyhow;

use super::common::changes;
use super::common::decided::Decided;
use super::common::failure::engine_failure;
use super::common::open::{open_failure, target};
use super::common::settings::Record;
use super::common::{init_logging, runtime, Threads};
use super::progress::Spinner;
use super::{write_json, Exit, Failure};
use crate::config::{CleanConfig, Source};
use crate::engine::clean::{clean, CleanReport, CleanSettings};
use crate::engine::schema_fit::needs;
use crate::engine::{EngineConfig, EngineError};
use crate::model::{Dimension, FieldNames};
use crate::store::open::Options;

/// The fields the worker writes under `f`, whatever a run's settings: the signatures last, so that
/// `--keep-signatures` drops them.
pub(crate) fn written_fields(f: &FieldNames, keep_signatures: bool) -> Vec<String> {
    let every = EngineConfig {
        fields: f.clone(),
        dimensions: Dimension::ALL.to_vec(),
        write_fuzzy_text: true,
        write_fuzzy_words: true,
        ..EngineConfig::default()
    };
    // A YaCy core has its signatures, and the fuzzy profile's text, from YaCy.
    let signatures = [
        &f.exact_signature,
        &f.fuzzy_signature,
        &f.fuzzy_signature_text,
        &f.title_signature,
        &f.description_signature,
    ];
    // Both profiles' flags and counts: a core may hold either, or both after a switch (the
    // caller keeps those the core has fields of their own for).
    let mut other = every.clone();
    other.fields.set_profile(match f.profile {
        crate::model::Profile::Yacy => crate::model::Profile::InPlace,
        crate::model::Profile::InPlace => crate::model::Profile::Yacy,
    });
    let mut out: Vec<String> = Vec::new();
    for n in needs(&every).into_iter().chain(needs(&other)) {
        if n.written
            && !(keep_signatures && signatures.contains(&&n.name))
            && !out.contains(&n.name)
        {
            out.push(n.name);
        }
    }
    out
}

/// Cleans the core.
pub fn run(c: &CleanConfig) -> Result<Exit, Failure> {
    init_logging(&c.log);
    if let Source::File(_) = c.index.source {
        return Err(anyhow!(
            "clean works on a Solr core; a file's documents are yours to rewrite (drop the worker's fields, e.g. with jq's del())"
        )
        .into());
    }
    let (report, record, kept) = runtime(Threads::Workers)?.block_on(async {
        let target = target(&c.index, &c.fields, "no core to clean")?;
        let connection = crate::store::connect(target).await.map_err(open_failure)?;
        let schema = connection
            .schema()
            .expect("a Solr core has a schema")
            .clone();
        if schema.unique_key != c.fields.id {
            return Err(anyhow!(
                "the unique key is '{}', not '{}': run with --field id={}",
                schema.unique_key,
                c.fields.id,
                schema.unique_key
            )
            .into());
        }
        let lossy = schema.lossy_fields();
        if !lossy.is_empty() && !c.dry_run && !c.allow_lossy {
            return Err(anyhow!(
                "atomic updates would empty {}: neither stored nor docValues, and no copyField fills them; \
                 make them stored or docValues (and reindex), or accept the loss with --allow-lossy-atomic-updates",
                lossy.join(", ")
            )
            .into());
        }
        // The other profile's names count only as fields of their own: a dynamic rule (`*_i`)
        // covers them on every core.
        let current: Vec<String> = c.fields.profile_fields().into_iter().map(|(_, n)| n).collect();
        let other = |f: &str| {
            crate::model::IN_PLACE_NAMES
                .iter()
                .any(|(a, b)| *a == f || *b == f)
                && !current.iter().any(|n| n == f)
        };
        let fields: Vec<String> = written_fields(&c.fields, c.keep_signatures)
            .into_iter()
            .filter(|f| {
                if other(f) {
                    schema.fields.iter().any(|s| &s.name == f)
                } else {
                    schema.find(f).is_some()
                }
            })
            .collect();
        let settings = CleanSettings {
            fields,
            id_field: c.fields.id.clone(),
            version_field: c.fields.version.clone(),
            filter: connection.filter().clone(),
            batch_size: c.batch_size,
            dry_run: c.dry_run,
            commit: c.commit,
        };
        let store = connection
            .open(Options {
                commit: c.commit,
                light: Some(settings.read_fields()),
                ..Options::default()
            })
            .await
            .map_err(open_failure)?;
        let report = clean(store.as_ref(), &settings, &Spinner::new(c.quiet))
            .await
            .map_err(|e| engine_failure(EngineError::Store(e), false))?;
        // The record and the kept order go once the documents are clean: a clean-up that failed
        // half-way leaves the core held to the settings its remaining flags were decided under.
        let record = match Record::of_index(&c.index) {
            Some(record) => match record.read().await {
                Ok(None) => RecordState::None,
                Ok(Some(_)) if c.dry_run || report.left > 0 => RecordState::Kept(record.name().to_owned()),
                Ok(Some(_)) => match record.remove().await {
                    Ok(()) => RecordState::Removed(record.name().to_owned()),
                    Err(why) => RecordState::Failed(why),
                },
                Err(why) => RecordState::Failed(why),
            },
            None => RecordState::None,
        };
        let kept = match Decided::of_index(&c.index, c.state_dir.as_deref()) {
            Some(_) if c.dry_run || report.left > 0 => None,
            Some(decided) => Some(decided.forget().map_err(|e| e.to_string())),
            None => None,
        };
        if !c.dry_run {
            // The change state describes the fields just removed: the next run reads everything.
            if let Err(e) = changes::forget(&c.index, c.state_dir.as_deref()) {
                tracing::warn!("cannot remove the change state in the state folder ({e}); remove its changes/ folder by hand");
            }
        }
        Ok::<_, Failure>((report, record, kept))
    })?;
    // A record that could not be removed holds the core to the settings its flags no longer have:
    // the clean-up is not done (exit 1). In a dry run nothing was to be removed.
    let record_failed = matches!(record, RecordState::Failed(_)) && !c.dry_run;
    if let RecordState::Failed(why) = &record {
        if c.dry_run {
            tracing::warn!("{why}");
        } else {
            tracing::warn!("{why}; remove the settings record by hand (see the guide, Settings recorded with the core)");
        }
    }
    if let Some(Err(why)) = &kept {
        tracing::warn!("cannot remove the order kept in the state folder ({why}); remove its decided/ file by hand");
    }
    if let Some(out) = &c.report {
        let mut json = serde_json::json!({
            "outcome": if report.left > 0 || record_failed { "problems" } else { "succeeded" },
            "dry_run": c.dry_run,
            "documents": report.documents,
            "fields": report.fields,
            "cleaned": report.cleaned,
            "reread": report.reread,
            "gone": report.gone,
            "left": report.left,
            "requests": report.requests,
            "settings_record": record.name(),
        });
        if let Some(Ok(forgot)) = &kept {
            json["kept_order_removed"] = serde_json::Value::Bool(*forgot);
        }
        write_json(out, &json, "the report")?;
    }
    if !c.quiet {
        eprintln!("{}", summary(&report, c.dry_run, &record));
    }
    Ok(if report.left > 0 || record_failed {
        Exit::Problems
    } else {
        Exit::Ok
    })
}

/// What happened to the settings record.
enum RecordState {
    /// There was none.
    None,
    /// There is one, left (a dry run, or documents left).
    Kept(String),
    /// It was removed.
    Removed(String),
    /// It could not be read or removed: why.
    Failed(String),
}

impl RecordState {
    /// The report's `settings_record`.
    fn name(&self) -> serde_json::Value {
        match self {
            RecordState::None => serde_json::Value::Null,
            RecordState::Kept(name) => serde_json::json!({"name": name, "removed": false}),
            RecordState::Removed(name) => serde_json::json!({"name": name, "removed": true}),
            RecordState::Failed(why) => serde_json::json!({"error": why}),
        }
    }
}

/// The summary line.
fn summary(r: &CleanReport, dry_run: bool, record: &RecordState) -> String {
    let per_field: Vec<String> = r.fields.iter().map(|(f, n)| format!("{f} {n}")).collect();
    let fields = if per_field.is_empty() {
        "none".to_owned()
    } else {
        per_field.join(", ")
    };
    let record = match record {
        RecordState::None => "no settings record",
        RecordState::Kept(_) => "the settings record stays",
        RecordState::Removed(_) => "settings record removed",
        RecordState::Failed(_) => "the settings record could not be removed",
    };
    if dry_run {
        return format!(
            "clean (dry run): {} documents hold the worker's fields ({fields}); nothing written; {record}",
            r.documents
        );
    }
    let mut line = format!(
        "clean: {} documents held the worker's fields ({fields}); {} cleaned, {} read again, {} deleted meanwhile; {record}",
        r.documents, r.cleaned, r.reread, r.gone
    );
    if r.left > 0 {
        line.push_str(&format!(
            "; {} kept changing and still hold a field: run clean again",
            r.left
        ));
    }
    line
}
