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
//! - [`add_commands`]: the Schema API commands `schema apply` sends for the missing output fields.
//!
//! The schema itself is read by the store layer ([`crate::store::open`]); the classes and rules
//! of Solr's schema are [`crate::solr_client::schema`]'s.

use std::collections::HashSet;

use serde_json::{json, Value};
use tracing::{info, warn};

use super::{Dimension, EngineConfig};
use crate::model::{FieldNames, Profile};
use crate::solr_client::config::UpdateChain;
use crate::solr_client::schema::SchemaInfo;

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
    report
}

/// Why Solr would re-index the whole document instead of updating `name` in place, one reason
/// each (empty: the schema allows an in-place update). Solr's conditions
/// (`AtomicUpdateDocumentMerger.isSupportedFieldForInPlaceUpdate`, applied to the field, to every
/// copyField destination of it and to `_version_`): neither indexed nor stored, docValues,
/// single-valued, a numeric type. Two more are not the schema's: the update sets only such fields
/// (the worker's count refreshes do; a page's first write carries its signatures and is not in
/// place), and some document of the index already holds the field (`schema check` asks).
pub fn in_place_blockers(schema: &SchemaInfo, name: &str) -> Vec<String> {
    const NUMERIC: [&str; 8] = [
        "solr.IntPointField",
        "solr.LongPointField",
        "solr.FloatPointField",
        "solr.DoublePointField",
        "solr.TrieIntField",
        "solr.TrieLongField",
        "solr.TrieFloatField",
        "solr.TrieDoubleField",
    ];
    let Some(f) = schema.find(name) else {
        return vec!["does not exist".to_owned()];
    };
    let mut why = Vec::new();
    if f.indexed {
        why.push("is indexed (in place needs indexed=false)".to_owned());
    }
    if f.stored {
        why.push("is stored (in place needs stored=false)".to_owned());
    }
    if !f.doc_values {
        why.push("has no docValues (in place needs docValues=true)".to_owned());
    }
    if f.multi_valued {
        why.push("is multi-valued (in place needs a single value)".to_owned());
    }
    if schema.class_of(f).is_some_and(|c| !NUMERIC.contains(&c)) {
        why.push(format!(
            "has type {} (in place needs a numeric type: pint, plong, pfloat, pdouble)",
            f.type_name
        ));
    }
    if schema.unique_key == name {
        why.push("is the unique key".to_owned());
    }
    for dest in schema.copies_of(name) {
        if !in_place_blockers(schema, dest).is_empty() {
            why.push(format!(
                "is copied to {dest}, which Solr cannot update in place"
            ));
        }
    }
    why
}

/// The profile the core's schema holds: in-place when it has a field of its own (not a dynamic
/// rule) under the in-place profile's name for every flag of the run's dimensions but `near`
/// (optional: left out on a core without its fields), and YaCy's otherwise. A flag renamed with
/// `--field` says nothing either way; with every flag renamed the profile is YaCy's.
pub fn detect_profile(schema: &SchemaInfo, cfg: &EngineConfig) -> Profile {
    let own = |name: &str| schema.fields.iter().any(|f| f.name == name);
    let mut evidence = 0;
    for &d in cfg.dimensions.iter().filter(|&&d| d != Dimension::Near) {
        let (yacy, in_place) = crate::model::IN_PLACE_NAMES[d.index()];
        let name = cfg.fields.unique(d);
        if name != yacy && name != in_place {
            continue;
        }
        if !own(in_place) {
            return Profile::Yacy;
        }
        evidence += 1;
    }
    if evidence > 0 {
        Profile::InPlace
    } else {
        Profile::Yacy
    }
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

/// Processors that replace, cut or drop the values of the fields they select (by `fieldName`):
/// on the worker's fields they would change what its atomic updates write.
const REWRITING: [&str; 15] = [
    "IgnoreFieldUpdateProcessorFactory",
    "RegexReplaceProcessorFactory",
    "TruncateFieldUpdateProcessorFactory",
    "HTMLStripFieldUpdateProcessorFactory",
    "TrimFieldUpdateProcessorFactory",
    "RemoveBlankFieldUpdateProcessorFactory",
    "FieldLengthUpdateProcessorFactory",
    "CountFieldValuesUpdateProcessorFactory",
    "ConcatFieldUpdateProcessorFactory",
    "FirstFieldValueUpdateProcessorFactory",
    "LastFieldValueUpdateProcessorFactory",
    "MaxFieldValueUpdateProcessorFactory",
    "MinFieldValueUpdateProcessorFactory",
    "UniqFieldsUpdateProcessorFactory",
    "FieldNameMutatingUpdateProcessorFactory",
];

/// What in the update chain `/update` runs would change what the worker's atomic updates keep,
/// one line each with what to do (empty: nothing). Solr's `SignatureUpdateProcessorFactory`
/// refuses an atomic update when it signs all fields or one the update sets, and otherwise sets
/// its signature field from the fields the partial document holds; a processor that rewrites or
/// drops fields (`REWRITING`) on a field the worker writes changes what lands. A selector by
/// pattern or type is not judged (logged at info, so that `-v` shows it).
pub fn chain_problems(chain: &UpdateChain, cfg: &EngineConfig) -> Vec<String> {
    let written: HashSet<String> = needs(cfg)
        .into_iter()
        .filter(|n| n.written)
        .map(|n| n.name)
        .collect();
    let name = chain.name.as_deref().map_or_else(
        || "the unnamed update chain".to_owned(),
        |n| format!("the update chain '{n}'"),
    );
    let fix = "give /update a chain without it (move the processor to a chain the crawler names with update.chain)";
    let mut out = Vec::new();
    for p in &chain.processors {
        let simple = p.simple_name();
        if simple == "SignatureUpdateProcessorFactory" {
            // Off as Solr's getBool reads it: false, or a string "false" in any case.
            let off = match p.params.get("enabled") {
                Some(Value::Bool(b)) => !b,
                Some(Value::String(s)) => s.eq_ignore_ascii_case("false"),
                _ => false,
            };
            if off {
                continue;
            }
            let fields = p.strings("fields");
            let target = p
                .params
                .get("signatureField")
                .and_then(Value::as_str)
                .unwrap_or("signatureField");
            let what = if fields.is_empty() {
                "over all fields, so Solr refuses every atomic update".to_owned()
            } else if let Some(f) = fields.iter().find(|f| written.contains(*f)) {
                format!("over {f}, which the worker writes, so Solr refuses those atomic updates")
            } else {
                format!(
                    "over {}, and sets {target} from the fields each atomic update holds",
                    fields.join(",")
                )
            };
            out.push(format!(
                "{name}, which /update runs, has {} {what}: {fix}",
                p.class
            ));
            continue;
        }
        if REWRITING.contains(&simple) {
            let mut selected = p.strings("fieldName");
            selected.retain(|f| written.contains(f));
            if let Some(f) = selected.first() {
                out.push(format!(
                    "{name}, which /update runs, has {} on {f}, which the worker writes: {fix}",
                    p.class
                ));
            } else if p.params.contains_key("fieldRegex") || p.params.contains_key("typeClass") {
                info!(processor = %p.class, "the update chain selects fields by pattern or type; check that none the worker writes is among them");
            }
        }
        if simple == "CloneFieldUpdateProcessorFactory" {
            if let Some(f) = p.strings("dest").iter().find(|f| written.contains(*f)) {
                out.push(format!(
                    "{name}, which /update runs, has {} writing into {f}, which the worker writes: {fix}",
                    p.class
                ));
            }
        }
    }
    out
}

/// A schema a run cannot start on: each problem one line with what to do.
#[derive(Debug, thiserror::Error)]
#[error("the schema is not ready for this run: {}", .0.join("; "))]
pub struct NotReady(pub Vec<String>);

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
mod tests {
    use super::*;
    use crate::solr_client::schema::fixtures::{field, yacy_like};
    use crate::solr_client::schema::FieldInfo;

    /// The six dimensions YaCy's schema has fields for.
    fn six() -> EngineConfig {
        EngineConfig {
            dimensions: Dimension::ALL[..6].to_vec(),
            ..EngineConfig::default()
        }
    }

    #[test]
    fn a_core_without_a_title_field_misses_it() {
        let s = yacy_like();
        let report = inspect(&s, &six());
        let missing: Vec<&str> = report.missing.iter().map(|n| n.name.as_str()).collect();
        // description_txt is covered by the *_txt rule.
        assert_eq!(missing, ["title"]);
        assert!(report.wrong_type.is_empty());
        assert!(report.lossy.is_empty(), "{:?}", report.lossy);
        assert!(report.has_fuzzy_text);
        // The crawler's own fields are not the worker's to add.
        let cmds = add_commands(&s, &report.missing_required());
        assert_eq!(cmds["add-field"], json!([]));
    }

    #[test]
    fn the_word_count_field_is_needed_only_with_a_minimum() {
        // A core with the six dimensions' fields but nothing that holds fuzzy_signature_words_i.
        let mut s = yacy_like();
        s.dynamic.retain(|d| d.name != "*_i");
        s.fields.push(field("title", "text_general", true, false));
        for count in ["exact_signature_copycount_i", "fuzzy_signature_copycount_i"] {
            s.fields.push(field(count, "pint", true, true));
        }
        // The default minimum (4) needs it: the run stops, saying how to add it or do without.
        let mut cfg = six();
        assert_eq!(cfg.fuzzy_min_words, 4);
        let report = inspect(&s, &cfg);
        assert!(!report.has_fuzzy_words);
        let problems = report.problems("http://solr/core", false);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].contains("missing output field fuzzy_signature_words_i")
                && problems[0].contains("schema apply --solr http://solr/core")
                && problems[0].contains("--fuzzy-min-words 0 (or --compat yacy)"),
            "{problems:?}"
        );
        let err = prepare(&s, &mut cfg, true, false, false, "http://solr/core").unwrap_err();
        assert!(
            format!("{err:?}").contains("--fuzzy-min-words 0"),
            "{err:?}"
        );
        // `schema apply` adds it, as a pint with docValues (the light scan reads it).
        let cmds = add_commands(&s, &report.missing_required());
        assert_eq!(
            cmds["add-field"],
            json!([{"name": "fuzzy_signature_words_i", "type": "pint", "indexed": true,
                    "stored": true, "multiValued": false, "docValues": true}])
        );
        // Without a minimum (YaCy's semantics) the run goes on and leaves the field out.
        let mut cfg = EngineConfig {
            fuzzy_min_words: 0,
            ..six()
        };
        assert!(inspect(&s, &cfg)
            .problems("http://solr/core", false)
            .is_empty());
        prepare(&s, &mut cfg, true, false, false, "http://solr/core").unwrap();
        assert!(!cfg.write_fuzzy_words);
        // Where the core has it, it is written either way.
        let mut cfg = EngineConfig {
            fuzzy_min_words: 0,
            ..six()
        };
        prepare(&yacy_like_with_title(), &mut cfg, true, false, false, "u").unwrap();
        assert!(cfg.write_fuzzy_words);
    }

    fn yacy_like_with_title() -> SchemaInfo {
        let mut s = yacy_like();
        s.fields.push(field("title", "text_general", true, false));
        s
    }

    #[test]
    fn missing_output_fields_are_added_with_the_right_types() {
        let mut s = yacy_like();
        s.dynamic.retain(|d| d.name != "*_b" && d.name != "*_l");
        let report = inspect(&s, &six());
        let cmds = add_commands(&s, &report.missing_required());
        let added: Vec<(&str, &str)> = cmds["add-field"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["name"].as_str().unwrap(), f["type"].as_str().unwrap()))
            .collect();
        assert_eq!(
            added,
            [
                ("fuzzy_signature_l", "plong"),
                ("title_exact_signature_l", "plong"),
                ("description_exact_signature_l", "plong"),
                ("exact_signature_unique_b", "boolean"),
                ("fuzzy_signature_unique_b", "boolean"),
                ("title_unique_b", "boolean"),
                ("description_unique_b", "boolean"),
                ("www_unique_b", "boolean"),
                ("http_unique_b", "boolean"),
            ]
        );
        assert!(cmds["add-field"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["docValues"] == true && f["stored"] == true));
    }

    #[test]
    fn the_near_fields_are_added_multi_valued_where_they_hold_several_longs() {
        let mut s = yacy_like();
        s.dynamic
            .retain(|d| !["*_b", "*_ls", "*_s", "*_i"].contains(&d.name.as_str()));
        s.fields.push(field("title", "text_general", true, false));
        let report = inspect(&s, &EngineConfig::default());
        let cmds = add_commands(&s, &report.missing_required());
        let near: Vec<(&str, bool)> = cmds["add-field"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["name"].as_str().unwrap().starts_with("near_"))
            .map(|f| {
                (
                    f["name"].as_str().unwrap(),
                    f["multiValued"].as_bool().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            near,
            [
                ("near_trials_ls", true),
                ("near_keys_ls", true),
                ("near_version_s", false),
                ("near_group_s", false),
                ("near_unique_b", false),
                ("near_copycount_i", false),
            ]
        );
    }

    #[test]
    fn a_flag_with_the_wrong_type_is_reported() {
        let mut s = yacy_like();
        s.fields.push(field("www_unique_b", "pint", true, true));
        let report = inspect(&s, &EngineConfig::default());
        assert_eq!(report.wrong_type.len(), 1);
        assert_eq!(report.wrong_type[0].0.name, "www_unique_b");
    }

    #[test]
    fn types_follow_the_schema_when_names_differ() {
        let mut s = yacy_like();
        s.types.remove("plong");
        s.types.insert("long".into(), "solr.TrieLongField".into());
        assert_eq!(type_for(&s, FieldKind::Long), "long");
        assert_eq!(type_for(&s, FieldKind::Bool), "boolean");
    }

    /// A field as the in-place profile adds it.
    fn dv_only(name: &str, type_name: &str) -> FieldInfo {
        FieldInfo {
            indexed: false,
            ..field(name, type_name, false, true)
        }
    }

    #[test]
    fn in_place_fields_are_added_docvalues_only_and_their_blockers_named() {
        let mut cfg = six();
        cfg.fields.set_profile(Profile::InPlace);
        let mut s = yacy_like();
        let report = inspect(&s, &cfg);
        let missing: Vec<&Need> = report.missing_required();
        let flag = missing
            .iter()
            .find(|n| n.name == "exact_signature_unique_i")
            .expect("a missing flag");
        assert!(flag.in_place && flag.kind == FieldKind::Int);
        let commands = add_commands(&s, &missing);
        let added = commands["add-field"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == "exact_signature_copies_i")
            .unwrap()
            .clone();
        assert_eq!(
            added,
            json!({"name": "exact_signature_copies_i", "type": "pint", "indexed": false,
                   "stored": false, "docValues": true, "useDocValuesAsStored": true,
                   "multiValued": false})
        );
        // The signatures stay indexed and stored: only the profile's own fields are in place.
        for f in commands["add-field"].as_array().unwrap() {
            let name = f["name"].as_str().unwrap();
            let own = crate::model::IN_PLACE_NAMES.iter().any(|(_, n)| *n == name);
            assert_eq!(f["indexed"] == json!(false), own, "{f}");
        }

        // Every condition, one line each; the version field's too.
        s.fields.push(dv_only("_version_", "plong"));
        s.fields.push(dv_only("exact_signature_unique_i", "pint"));
        s.fields.push(FieldInfo {
            multi_valued: true,
            ..dv_only("fuzzy_signature_unique_i", "pint")
        });
        s.fields.push(field("title_unique_i", "pint", true, true));
        s.fields.push(dv_only("www_unique_i", "string"));
        s.types.insert("string".into(), "solr.StrField".into());
        s.fields.push(dv_only("http_unique_i", "pint"));
        s.fields.push(field("copy_i", "pint", true, true));
        s.copy_fields
            .push(("http_unique_i".into(), "copy_i".into()));
        let report = inspect(&s, &cfg);
        let lines = report.not_in_place.join("\n");
        assert!(!lines.contains("exact_signature_unique_i"), "{lines}");
        assert!(!lines.contains("_version_"), "{lines}");
        assert!(
            lines.contains("fuzzy_signature_unique_i is multi-valued"),
            "{lines}"
        );
        assert!(
            lines.contains("title_unique_i is indexed")
                && lines.contains("title_unique_i is stored"),
            "{lines}"
        );
        assert!(lines.contains("www_unique_i has type string"), "{lines}");
        assert!(
            lines.contains("http_unique_i is copied to copy_i"),
            "{lines}"
        );
        // An indexed version field stops every in-place update.
        let mut v = s.clone();
        v.fields.retain(|f| f.name != "_version_");
        v.fields.push(field("_version_", "plong", true, true));
        let report = inspect(&v, &cfg);
        assert!(
            report
                .not_in_place
                .iter()
                .any(|l| l.starts_with("_version_ (Solr's version field) is indexed")),
            "{:?}",
            report.not_in_place
        );
    }

    #[test]
    fn the_profile_is_found_from_fields_of_their_own() {
        let cfg = six();
        let mut s = yacy_like();
        // The dynamic *_i rule covers the names, but is no profile.
        assert_eq!(detect_profile(&s, &cfg), Profile::Yacy);
        for (_, name) in crate::model::IN_PLACE_NAMES {
            s.fields.push(dv_only(name, "pint"));
        }
        assert_eq!(detect_profile(&s, &cfg), Profile::InPlace);
        // A renamed flag says nothing; one missing in-place flag keeps YaCy's profile; near does
        // not count (it is optional).
        let mut renamed = six();
        renamed.fields.rename("exact_signature_unique_b", "dedup_b");
        assert_eq!(detect_profile(&s, &renamed), Profile::InPlace);
        let only = EngineConfig {
            dimensions: vec![Dimension::Exact],
            ..renamed.clone()
        };
        assert_eq!(detect_profile(&s, &only), Profile::Yacy);
        let mut no_near = s.clone();
        no_near.fields.retain(|f| f.name != "near_unique_i");
        let all = EngineConfig::default();
        assert_eq!(detect_profile(&no_near, &all), Profile::InPlace);
        let mut no_www = s.clone();
        no_www.fields.retain(|f| f.name != "www_unique_i");
        assert_eq!(detect_profile(&no_www, &all), Profile::Yacy);
        // prepare() switches an automatic profile, and leaves a chosen one.
        let mut auto = six();
        let _ = prepare(&s, &mut auto, false, true, true, "http://core");
        assert_eq!(auto.fields.profile, Profile::InPlace);
        assert_eq!(auto.fields.unique(Dimension::Www), "www_unique_i");
        let mut chosen = EngineConfig {
            profile_auto: false,
            ..six()
        };
        let _ = prepare(&s, &mut chosen, false, true, true, "http://core");
        assert_eq!(chosen.fields.profile, Profile::Yacy);
    }
}
