//! What a run needs of a core's schema, and whether a schema fits it: the one schema-fit module.
//!
//! - [`needs`]: the fields a run reads and writes, and what each must hold ([`FieldKind`]), from
//!   the engine's configuration alone;
//! - [`inspect`]: a core's [`SchemaInfo`] against those needs: every field exists with a type that
//!   holds its values (signatures `plong`, flags `boolean`, counts `pint`; any type of the same
//!   Solr class will do), the unique key is the id field, and no atomic update would empty a field;
//!   what is wrong comes back one line each with what to do ([`SchemaReport::problems`]);
//! - [`prepare`]: the check a run makes before it starts (through the commands' open path), which
//!   adapts the configuration to the core (near left out when it is optional and missing, the fuzzy
//!   text and word count not written without their fields);
//! - [`add_commands`]: the Schema API commands `schema apply` sends for the missing output fields;
//! - [`detect_profile`] and [`in_place_blockers`] (`in_place.rs`): the profile a core's schema holds,
//!   and the conditions of Solr's in-place updates a field fails;
//! - [`chain_problems`] (`chain.rs`): what in the update chain would change what the worker writes.
//!
//! The schema itself is read by the store layer ([`crate::store::open`]); the classes and rules
//! of Solr's schema are [`crate::solr_client::schema`]'s.

use std::collections::HashSet;

use serde_json::{json, Value};
use tracing::{info, warn};

use super::{Dimension, EngineConfig};
use crate::model::{FieldNames, Profile};
use crate::solr_client::schema::SchemaInfo;

mod chain;
mod in_place;

pub use chain::chain_problems;
pub use in_place::{detect_profile, in_place_blockers};

/// What a field must hold, whatever the store calls its types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// A 64-bit integer (signatures).
    Long,
    /// Several 64-bit integers (the near-duplicate trial values and keys): a multi-valued field.
    Longs,
    /// A 32-bit integer (copy counts).
    Int,
    /// A string (the near-duplicate version and group id).
    Str,
    /// A boolean (flags).
    Bool,
    /// Analysed text (`fuzzy_signature_text_t`).
    Text,
    /// Anything (fields that are only read).
    Any,
}

/// A field the run needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Need {
    /// The field name (after `--field` renames).
    pub name: String,
    /// What it holds.
    pub kind: FieldKind,
    /// Written by the worker (as opposed to only read).
    pub written: bool,
    /// The run works without it (`fuzzy_signature_text_t`, and `fuzzy_signature_words_i` when
    /// `--fuzzy-min-words` is 0).
    pub optional: bool,
    /// A field of the in-place profile: Solr should update it in place (single-valued numeric
    /// docValues, neither indexed nor stored).
    pub in_place: bool,
}

/// The fields a run with `cfg` reads and writes.
pub fn needs(cfg: &EngineConfig) -> Vec<Need> {
    let f = &cfg.fields;
    let on = |d: Dimension| cfg.dimensions.contains(&d);
    let read = |name: &str| Need {
        name: name.to_owned(),
        kind: FieldKind::Any,
        written: false,
        optional: false,
        in_place: false,
    };
    let write = |name: &str, kind: FieldKind| Need {
        name: name.to_owned(),
        kind,
        written: true,
        optional: false,
        in_place: false,
    };
    let in_place = f.profile == Profile::InPlace;
    // What the in-place profile writes after signing: numbers Solr updates in place.
    let after = |name: &str, kind: FieldKind| Need {
        in_place,
        ..write(name, kind)
    };
    let mut out = vec![read(&f.id), read(&f.url)];
    let content = on(Dimension::Exact) || on(Dimension::Fuzzy);
    if content {
        out.push(read(&f.text));
        out.push(write(&f.exact_signature, FieldKind::Long));
        out.push(write(&f.fuzzy_signature, FieldKind::Long));
        if cfg.write_fuzzy_text {
            out.push(Need {
                optional: true,
                ..write(&f.fuzzy_signature_text, FieldKind::Text)
            });
        }
        if cfg.write_fuzzy_words || (on(Dimension::Fuzzy) && cfg.fuzzy_min_words > 0) {
            // Needed when profiles below a size sit out (runs that read no text learn the size from
            // it); else written when the core has it.
            out.push(Need {
                optional: !(on(Dimension::Fuzzy) && cfg.fuzzy_min_words > 0),
                ..write(&f.fuzzy_signature_words, FieldKind::Int)
            });
        }
    }
    if on(Dimension::Title) {
        out.push(read(&f.title));
        out.push(write(&f.title_signature, FieldKind::Long));
    }
    if on(Dimension::Description) {
        out.push(read(&f.description));
        out.push(write(&f.description_signature, FieldKind::Long));
    }
    if on(Dimension::Near) {
        out.push(read(&f.text));
        out.push(write(&f.near_trials, FieldKind::Longs));
        out.push(write(&f.near_keys, FieldKind::Longs));
        out.push(write(&f.near_version, FieldKind::Str));
        if in_place {
            out.push(after(&f.near_group, FieldKind::Long));
        } else {
            out.push(write(&f.near_group, FieldKind::Str));
        }
    }
    for d in &cfg.dimensions {
        if in_place {
            out.push(after(f.unique(*d), FieldKind::Int));
        } else {
            out.push(write(f.unique(*d), FieldKind::Bool));
        }
        if let Some(c) = f.count(*d) {
            out.push(after(c, FieldKind::Int));
        }
    }
    let mut seen = HashSet::new();
    out.retain(|n| seen.insert(n.name.clone()));
    out
}

/// The Solr classes that hold a kind of value.
fn classes(kind: FieldKind) -> &'static [&'static str] {
    match kind {
        FieldKind::Long | FieldKind::Longs => &["solr.LongPointField", "solr.TrieLongField"],
        FieldKind::Str => &["solr.StrField"],
        FieldKind::Int => &["solr.IntPointField", "solr.TrieIntField"],
        FieldKind::Bool => &["solr.BoolField"],
        FieldKind::Text => &["solr.TextField"],
        FieldKind::Any => &[],
    }
}

/// The conventional type name of a kind (YaCy's and Solr's default configset's).
fn type_name(kind: FieldKind) -> &'static str {
    match kind {
        FieldKind::Long => "plong",
        FieldKind::Longs => "plongs",
        FieldKind::Str => "string",
        FieldKind::Int => "pint",
        FieldKind::Bool => "boolean",
        FieldKind::Text => "text_general",
        FieldKind::Any => "string",
    }
}

/// What is wrong with a schema for a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SchemaReport {
    /// Needed fields that do not exist.
    pub missing: Vec<Need>,
    /// Needed fields whose type holds something else: the field, and its type.
    pub wrong_type: Vec<(Need, String)>,
    /// Fields an atomic update would empty.
    pub lossy: Vec<String>,
    /// The unique key differs from the configured id field: (configured, schema's).
    pub unique_key: Option<(String, String)>,
    /// `fuzzy_signature_text_t` (or its rename) exists, so it can be written.
    pub has_fuzzy_text: bool,
    /// `fuzzy_signature_words_i` (or its rename) exists, so it can be written.
    pub has_fuzzy_words: bool,
    /// The word-count field when the run needs it (`--fuzzy-min-words` above 0): its absence gets
    /// the advice to turn the minimum off.
    pub words_needed: Option<String>,
    /// Why Solr would not update the in-place profile's fields in place, one line each (empty:
    /// it would, as far as the schema tells; see [`in_place_blockers`]).
    pub not_in_place: Vec<String>,
}

impl SchemaReport {
    /// Required fields that are missing (optional ones are left out).
    pub fn missing_required(&self) -> Vec<&Need> {
        self.missing.iter().filter(|n| !n.optional).collect()
    }

    /// What stops a run, one line each, with what to do; `core_url` (without credentials) goes into
    /// the `schema apply` command. Lossy fields count only when `lossy` is set: they matter to a run
    /// that writes and has not accepted the loss.
    pub fn problems(&self, core_url: &str, lossy: bool) -> Vec<String> {
        let mut out = Vec::new();
        if let Some((ours, theirs)) = &self.unique_key {
            out.push(format!(
                "the unique key is '{theirs}', not '{ours}': run with --field id={theirs}"
            ));
        }
        for n in self.missing_required() {
            if n.written && self.words_needed.as_deref() == Some(n.name.as_str()) {
                out.push(format!(
                    "missing output field {} ({:?}), which --fuzzy-min-words needs on runs that read no text: \
                     add it with solr-dedup schema apply --solr {core_url}, or group fuzzy profiles of any size \
                     with --fuzzy-min-words 0 (or --compat yacy)",
                    n.name, n.kind
                ));
            } else if n.written {
                out.push(format!(
                    "missing output field {} ({:?}): add it with solr-dedup schema apply --solr {core_url}",
                    n.name, n.kind
                ));
            } else {
                out.push(format!(
                    "missing field {}: if yours has another name, map it with --field NAME=FIELD",
                    n.name
                ));
            }
        }
        for (n, type_name) in &self.wrong_type {
            out.push(format!(
                "field {} has type {type_name}, which cannot hold {:?} values: give the worker another field with --field",
                n.name, n.kind
            ));
        }
        if lossy && !self.lossy.is_empty() {
            out.push(format!(
                "atomic updates would empty {}: neither stored nor docValues, and no copyField fills them; \
                 make them stored or docValues (and reindex), or accept the loss with --allow-lossy-atomic-updates",
                self.lossy.join(", ")
            ));
        }
        out
    }
}

/// Checks the schema against what a run with `cfg` reads and writes.
pub fn inspect(schema: &SchemaInfo, cfg: &EngineConfig) -> SchemaReport {
    let mut report = SchemaReport {
        lossy: schema.lossy_fields(),
        ..SchemaReport::default()
    };
    if schema.unique_key != cfg.fields.id {
        report.unique_key = Some((cfg.fields.id.clone(), schema.unique_key.clone()));
    }
    report.has_fuzzy_text = schema.find(&cfg.fields.fuzzy_signature_text).is_some();
    report.has_fuzzy_words = schema.find(&cfg.fields.fuzzy_signature_words).is_some();
    report.words_needed = needs(cfg)
        .into_iter()
        .find(|n| n.name == cfg.fields.fuzzy_signature_words && !n.optional)
        .map(|n| n.name);
    if cfg.fields.profile == Profile::InPlace {
        // Solr checks its own version field by name, whatever --field calls it.
        report.not_in_place.extend(
            in_place_blockers(schema, "_version_")
                .into_iter()
                .map(|why| format!("_version_ (Solr's version field) {why}")),
        );
    }
    for need in needs(cfg) {
        let own = schema.fields.iter().any(|f| f.name == need.name);
        if need.in_place && !own && !in_place_blockers(schema, &need.name).is_empty() {
            // Only a dynamic rule covers it (`*_i`, indexed and stored): a field of its own,
            // which takes precedence, makes it one Solr updates in place.
            report.missing.push(need);
            continue;
        }
        if need.in_place && schema.find(&need.name).is_some() {
            report.not_in_place.extend(
                in_place_blockers(schema, &need.name)
                    .into_iter()
                    .map(|why| format!("{} {why}", need.name)),
            );
        }
        match schema.find(&need.name) {
            None => report.missing.push(need),
            Some(f) => {
                let fits = need.kind == FieldKind::Any
                    || schema
                        .class_of(f)
                        .is_none_or(|c| classes(need.kind).contains(&c));
                let shape = match need.kind {
                    FieldKind::Longs => f.multi_valued,
                    FieldKind::Text => true,
                    _ => !need.written || !f.multi_valued,
                };
                if !fits || !shape {
                    report.wrong_type.push((need, f.type_name.clone()));
                }
            }
        }
    }
    // A text the core neither stores nor streams: its pages are signed at index time
    // (solr-plugin). With every write in place the text survives them, since a run never writes a
    // signature there (it stops first, `EngineError::TextNotStored`).
    if text_not_stored(schema, cfg)
        && cfg.fields.profile == Profile::InPlace
        && report.not_in_place.is_empty()
    {
        report.lossy.retain(|f| *f != cfg.fields.text);
    }
    report
}

/// The Schema API commands that add the written fields among `missing` (one `add-field` list; all
/// or nothing), with the schema's own type for each kind. Fields that are only read are the
/// crawler's, under some other name: `--field` maps them, adding them would not help.
pub fn add_commands(schema: &SchemaInfo, missing: &[&Need]) -> Value {
    let fields: Vec<Value> = missing
        .iter()
        .filter(|n| n.written)
        .map(|n| {
            if n.in_place {
                // What Solr updates in place: docValues alone, read back as if stored.
                return json!({
                    "name": n.name,
                    "type": type_for(schema, n.kind),
                    "indexed": false,
                    "stored": false,
                    "docValues": true,
                    "useDocValuesAsStored": true,
                    "multiValued": false,
                });
            }
            let mut f = json!({
                "name": n.name,
                "type": type_for(schema, n.kind),
                "indexed": true,
                "stored": true,
                "multiValued": n.kind == FieldKind::Longs,
            });
            if n.kind != FieldKind::Text {
                f["docValues"] = json!(true);
            }
            f
        })
        .collect();
    json!({ "add-field": fields })
}

/// A type of the schema for a kind.
fn type_for(schema: &SchemaInfo, kind: FieldKind) -> String {
    schema.type_with_class(type_name(kind), classes(kind))
}

/// A schema a run cannot start on: each problem one line with what to do.
#[derive(Debug, thiserror::Error)]
#[error("the schema is not ready for this run: {}", .0.join("; "))]
pub struct NotReady(pub Vec<String>);

/// Whether the core neither stores nor streams the text field (its pages are signed at index time).
fn text_not_stored(schema: &SchemaInfo, cfg: &EngineConfig) -> bool {
    schema
        .find(&cfg.fields.text)
        .is_some_and(|f| !f.stored && !f.doc_values)
}

/// Checks the schema for the run and adapts the configuration to it: refuses missing fields and, when
/// the run writes, a schema on which atomic updates lose data. `core_url` is the client's, without
/// credentials.
pub fn prepare(
    schema: &SchemaInfo,
    engine: &mut EngineConfig,
    writes: bool,
    allow_lossy: bool,
    near_optional: bool,
    core_url: &str,
) -> Result<(), NotReady> {
    if engine.profile_auto && detect_profile(schema, engine) == Profile::InPlace {
        info!("the core has the in-place profile's fields: writing them");
        engine.fields.set_profile(Profile::InPlace);
    }
    let mut report = inspect(schema, engine);
    if near_optional && engine.dimensions.contains(&Dimension::Near) {
        let near = near_fields(&engine.fields);
        let absent: Vec<&str> = report
            .missing
            .iter()
            .filter(|n| near.contains(&n.name.as_str()))
            .map(|n| n.name.as_str())
            .collect();
        if !absent.is_empty() {
            // The seventh dimension is on by default, not asked for: run the six the core can hold.
            let absent = absent.join(", ");
            engine.dimensions.retain(|&d| d != Dimension::Near);
            report = inspect(schema, engine);
            if report.problems(core_url, false).is_empty() {
                warn!(
                    "near-duplicates left out: the core has no {absent}; add them with `solr-dedup schema apply --solr {core_url}`"
                );
            }
        }
    }
    engine.text_not_stored = text_not_stored(schema, engine);
    let problems = report.problems(core_url, writes && !allow_lossy);
    if !problems.is_empty() {
        return Err(NotReady(problems));
    }
    engine.in_place_writes =
        engine.fields.profile == Profile::InPlace && report.not_in_place.is_empty();
    if writes && !report.not_in_place.is_empty() {
        warn!(
            "the in-place profile's fields cannot be updated in place, so Solr re-indexes whole documents: {}",
            report.not_in_place.join("; ")
        );
    }
    if writes && !report.lossy.is_empty() {
        warn!(fields = %report.lossy.join(", "), "atomic updates will empty these fields (--allow-lossy-atomic-updates)");
    }
    if engine.write_fuzzy_text && !report.has_fuzzy_text {
        info!(
            field = %engine.fields.fuzzy_signature_text,
            "the core has no such field; it is not written"
        );
        engine.write_fuzzy_text = false;
    }
    if engine.write_fuzzy_words && !report.has_fuzzy_words {
        // Only when the run can do without it (--fuzzy-min-words 0): else a problem above.
        info!(
            field = %engine.fields.fuzzy_signature_words,
            "the core has no such field; it is not written"
        );
        engine.write_fuzzy_words = false;
    }
    Ok(())
}

/// The fields only the near dimension writes.
fn near_fields(f: &FieldNames) -> [&str; 6] {
    [
        &f.near_trials,
        &f.near_keys,
        &f.near_version,
        &f.near_group,
        f.unique(Dimension::Near),
        &f.near_count,
    ]
}

#[cfg(test)]
mod tests;
