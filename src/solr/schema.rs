//! What the worker needs of a core's schema, read through the Schema API, and how to add what is
//! missing.
//!
//! Two things are checked before a run writes:
//! - **The fields it reads and writes exist**, with a fitting type: signatures `plong`, flags
//!   `boolean`, counts `pint` (any type of the same Solr class will do). Missing ones are named with
//!   the `schema apply` command that adds them.
//! - **No atomic update loses data.** Solr rebuilds a document from its stored fields and docValues
//!   on every atomic update; a field that is neither (and is not filled by a `copyField`) is silently
//!   emptied. Such a schema is refused unless the user accepts the loss.

use std::collections::{BTreeMap, HashSet};

use serde_json::{json, Value};

use super::client::Client;
use super::error::SolrError;
use crate::engine::{Dimension, EngineConfig};

/// One field or dynamic-field rule, with its properties resolved (`showDefaults=true`).
#[derive(Debug, Clone, PartialEq)]
pub struct FieldInfo {
    /// The name, or the pattern of a dynamic field (`*_l`).
    pub name: String,
    /// The field type's name.
    pub type_name: String,
    /// Indexed.
    pub indexed: bool,
    /// Stored.
    pub stored: bool,
    /// Has docValues.
    pub doc_values: bool,
    /// Multi-valued.
    pub multi_valued: bool,
}

/// The parts of a schema the worker looks at.
#[derive(Debug, Clone, Default)]
pub struct SchemaInfo {
    /// The unique key field.
    pub unique_key: String,
    /// Static fields.
    pub fields: Vec<FieldInfo>,
    /// Dynamic-field rules.
    pub dynamic: Vec<FieldInfo>,
    /// The destinations of copyField rules (names or patterns).
    pub copy_dests: Vec<String>,
    /// Field type name to its class (`solr.LongPointField`).
    pub types: BTreeMap<String, String>,
}

/// What a field must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A 64-bit integer (signatures).
    Long,
    /// A 32-bit integer (copy counts).
    Int,
    /// A boolean (flags).
    Bool,
    /// Analysed text (`fuzzy_signature_text_t`).
    Text,
    /// Anything (fields that are only read).
    Any,
}

impl Kind {
    fn classes(self) -> &'static [&'static str] {
        match self {
            Kind::Long => &["solr.LongPointField", "solr.TrieLongField"],
            Kind::Int => &["solr.IntPointField", "solr.TrieIntField"],
            Kind::Bool => &["solr.BoolField"],
            Kind::Text => &["solr.TextField"],
            Kind::Any => &[],
        }
    }

    /// The conventional type name (YaCy's and Solr's default configset's).
    fn type_name(self) -> &'static str {
        match self {
            Kind::Long => "plong",
            Kind::Int => "pint",
            Kind::Bool => "boolean",
            Kind::Text => "text_general",
            Kind::Any => "string",
        }
    }
}

/// A field the run needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Need {
    /// The field name (after `--field` renames).
    pub name: String,
    /// What it holds.
    pub kind: Kind,
    /// Written by the worker (as opposed to only read).
    pub written: bool,
    /// The run works without it (`fuzzy_signature_text_t`).
    pub optional: bool,
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
            if n.written {
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

impl SchemaInfo {
    /// Reads the schema: fields and dynamic fields with their defaults, copy fields, field types and
    /// the unique key.
    pub async fn fetch(client: &Client) -> Result<SchemaInfo, SolrError> {
        let defaults = || vec![("showDefaults".to_owned(), "true".to_owned())];
        let fields = client.schema_get("fields", defaults()).await?;
        let dynamic = client.schema_get("dynamicfields", defaults()).await?;
        let copies = client.schema_get("copyfields", Vec::new()).await?;
        let types = client.schema_get("fieldtypes", Vec::new()).await?;
        let key = client.schema_get("uniquekey", Vec::new()).await?;
        let bad = |what: &str| SolrError::BadResponse {
            url: format!("{}/schema", client.core_url()),
            reason: format!("no {what} in the Schema API answer"),
        };
        let types: BTreeMap<String, String> = types
            .get("fieldTypes")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("fieldTypes"))?
            .iter()
            .filter_map(|t| Some((str_of(t, "name")?, str_of(t, "class")?)))
            .collect();
        let parse = |list: &Value, key: &str| -> Result<Vec<FieldInfo>, SolrError> {
            Ok(list
                .get(key)
                .and_then(Value::as_array)
                .ok_or_else(|| bad(key))?
                .iter()
                .filter_map(field_info)
                .collect())
        };
        Ok(SchemaInfo {
            unique_key: key
                .get("uniqueKey")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("uniqueKey"))?
                .to_owned(),
            fields: parse(&fields, "fields")?,
            dynamic: parse(&dynamic, "dynamicFields")?,
            copy_dests: copies
                .get("copyFields")
                .and_then(Value::as_array)
                .ok_or_else(|| bad("copyFields"))?
                .iter()
                .filter_map(|c| str_of(c, "dest"))
                .collect(),
            types,
        })
    }

    /// The field or dynamic rule that covers `name`: a static field first, else the longest matching
    /// pattern, as Solr picks.
    pub fn find(&self, name: &str) -> Option<&FieldInfo> {
        if let Some(f) = self.fields.iter().find(|f| f.name == name) {
            return Some(f);
        }
        self.dynamic
            .iter()
            .filter(|d| glob(&d.name, name))
            .max_by_key(|d| d.name.len())
    }

    /// Fields and dynamic rules whose values an atomic update would lose: indexed, but neither stored
    /// nor docValues, and not the destination of a copyField. Solr's internal `_root_`, `_nest_path_`
    /// and `_nest_parent_` are rebuilt by Solr itself and left out.
    pub fn lossy_fields(&self) -> Vec<String> {
        const INTERNAL: [&str; 3] = ["_root_", "_nest_path_", "_nest_parent_"];
        self.fields
            .iter()
            .chain(&self.dynamic)
            .filter(|f| f.indexed && !f.stored && !f.doc_values)
            .filter(|f| !INTERNAL.contains(&f.name.as_str()))
            .filter(|f| {
                !self
                    .copy_dests
                    .iter()
                    .any(|d| *d == f.name || glob(d, &f.name))
            })
            .map(|f| f.name.clone())
            .collect()
    }

    /// Checks the schema against what a run with `cfg` reads and writes.
    pub fn inspect(&self, cfg: &EngineConfig) -> SchemaReport {
        let mut report = SchemaReport {
            lossy: self.lossy_fields(),
            ..SchemaReport::default()
        };
        if self.unique_key != cfg.fields.id {
            report.unique_key = Some((cfg.fields.id.clone(), self.unique_key.clone()));
        }
        report.has_fuzzy_text = self.find(&cfg.fields.fuzzy_signature_text).is_some();
        for need in needs(cfg) {
            match self.find(&need.name) {
                None => report.missing.push(need),
                Some(f) => {
                    let class = self.types.get(&f.type_name).map(String::as_str);
                    let fits = need.kind == Kind::Any
                        || class.is_none_or(|c| need.kind.classes().contains(&c));
                    if !fits || (need.written && f.multi_valued && need.kind != Kind::Text) {
                        report.wrong_type.push((need, f.type_name.clone()));
                    }
                }
            }
        }
        report
    }

    /// The Schema API commands that add the written fields among `missing` (one `add-field` list; all
    /// or nothing), with the schema's own type for each kind. Fields that are only read are the
    /// crawler's, under some other name: `--field` maps them, adding them would not help.
    pub fn add_commands(&self, missing: &[&Need]) -> Value {
        let fields: Vec<Value> = missing
            .iter()
            .filter(|n| n.written)
            .map(|n| {
                let type_name = self.type_for(n.kind);
                let mut f = json!({
                    "name": n.name,
                    "type": type_name,
                    "indexed": true,
                    "stored": true,
                    "multiValued": false,
                });
                if n.kind != Kind::Text {
                    f["docValues"] = json!(true);
                }
                f
            })
            .collect();
        json!({ "add-field": fields })
    }

    /// A type of the schema for a kind: the conventional name when it has the right class, else the
    /// first type of that class, else the conventional name (Solr will say if it is missing).
    fn type_for(&self, kind: Kind) -> String {
        let conventional = kind.type_name();
        let classes = kind.classes();
        if self
            .types
            .get(conventional)
            .is_some_and(|c| classes.is_empty() || classes.contains(&c.as_str()))
        {
            return conventional.to_owned();
        }
        self.types
            .iter()
            .find(|(_, c)| classes.contains(&c.as_str()))
            .map(|(n, _)| n.clone())
            .unwrap_or_else(|| conventional.to_owned())
    }
}

/// The fields a run with `cfg` reads and writes.
pub fn needs(cfg: &EngineConfig) -> Vec<Need> {
    let f = &cfg.fields;
    let on = |d: Dimension| cfg.dimensions.contains(&d);
    let read = |name: &str| Need {
        name: name.to_owned(),
        kind: Kind::Any,
        written: false,
        optional: false,
    };
    let write = |name: &str, kind: Kind| Need {
        name: name.to_owned(),
        kind,
        written: true,
        optional: false,
    };
    let mut out = vec![read(&f.id), read(&f.url)];
    let content = on(Dimension::Exact) || on(Dimension::Fuzzy);
    if content {
        out.push(read(&f.text));
        out.push(write(&f.exact_signature, Kind::Long));
        out.push(write(&f.fuzzy_signature, Kind::Long));
        if cfg.write_fuzzy_text {
            out.push(Need {
                optional: true,
                ..write(&f.fuzzy_signature_text, Kind::Text)
            });
        }
    }
    if on(Dimension::Title) {
        out.push(read(&f.title));
        out.push(write(&f.title_signature, Kind::Long));
    }
    if on(Dimension::Description) {
        out.push(read(&f.description));
        out.push(write(&f.description_signature, Kind::Long));
    }
    for d in &cfg.dimensions {
        out.push(write(f.unique(*d), Kind::Bool));
        if let Some(c) = f.count(*d) {
            out.push(write(c, Kind::Int));
        }
    }
    let mut seen = HashSet::new();
    out.retain(|n| seen.insert(n.name.clone()));
    out
}

fn str_of(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn field_info(f: &Value) -> Option<FieldInfo> {
    let flag = |k: &str| f.get(k).and_then(Value::as_bool).unwrap_or(false);
    Some(FieldInfo {
        name: str_of(f, "name")?,
        type_name: str_of(f, "type")?,
        indexed: flag("indexed"),
        stored: flag("stored"),
        doc_values: flag("docValues"),
        multi_valued: flag("multiValued"),
    })
}

/// Solr's dynamic-field patterns: one `*` at the start or the end.
fn glob(pattern: &str, name: &str) -> bool {
    if let Some(suffix) = pattern.strip_prefix('*') {
        name.ends_with(suffix)
    } else if let Some(prefix) = pattern.strip_suffix('*') {
        name.starts_with(prefix)
    } else {
        pattern == name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: &str, type_name: &str, stored: bool, dv: bool) -> FieldInfo {
        FieldInfo {
            name: name.into(),
            type_name: type_name.into(),
            indexed: true,
            stored,
            doc_values: dv,
            multi_valued: false,
        }
    }

    fn yacy_like() -> SchemaInfo {
        SchemaInfo {
            unique_key: "id".into(),
            fields: vec![
                field("id", "string", true, true),
                field("sku", "string", true, true),
                field("text_t", "text_general", true, false),
                field("_root_", "string", false, false),
                field("exact_signature_l", "plong", true, true),
            ],
            dynamic: vec![
                field("*_l", "plong", true, true),
                field("*_b", "boolean", true, true),
                field("*_i", "pint", true, true),
                field("*_t", "text_general", true, false),
                FieldInfo {
                    multi_valued: true,
                    ..field("*_txt", "text_general", true, false)
                },
            ],
            copy_dests: vec![],
            types: [
                ("string", "solr.StrField"),
                ("plong", "solr.LongPointField"),
                ("pint", "solr.IntPointField"),
                ("boolean", "solr.BoolField"),
                ("text_general", "solr.TextField"),
            ]
            .into_iter()
            .map(|(a, b)| (a.to_owned(), b.to_owned()))
            .collect(),
        }
    }

    #[test]
    fn dynamic_rules_cover_fields_and_the_longest_pattern_wins() {
        let mut s = yacy_like();
        assert_eq!(s.find("title_exact_signature_l").unwrap().name, "*_l");
        assert_eq!(
            s.find("exact_signature_l").unwrap().name,
            "exact_signature_l"
        );
        s.dynamic.push(field("*signature_l", "pint", true, true));
        assert_eq!(
            s.find("title_exact_signature_l").unwrap().name,
            "*signature_l"
        );
        assert!(s.find("nothing").is_none());
    }

    #[test]
    fn a_core_without_a_title_field_misses_it() {
        let s = yacy_like();
        let report = s.inspect(&EngineConfig::default());
        let missing: Vec<&str> = report.missing.iter().map(|n| n.name.as_str()).collect();
        // description_txt is covered by the *_txt rule.
        assert_eq!(missing, ["title"]);
        assert!(report.wrong_type.is_empty());
        assert!(report.lossy.is_empty(), "{:?}", report.lossy);
        assert!(report.has_fuzzy_text);
        // The crawler's own fields are not the worker's to add.
        let cmds = s.add_commands(&report.missing_required());
        assert_eq!(cmds["add-field"], json!([]));
    }

    #[test]
    fn missing_output_fields_are_added_with_the_right_types() {
        let mut s = yacy_like();
        s.dynamic.retain(|d| d.name != "*_b" && d.name != "*_l");
        let report = s.inspect(&EngineConfig::default());
        let cmds = s.add_commands(&report.missing_required());
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
    fn an_indexed_only_field_is_lossy_unless_a_copy_field_fills_it() {
        let mut s = yacy_like();
        s.fields
            .push(field("content_idx", "text_general", false, false));
        s.dynamic.push(field("*_idx", "text_general", false, false));
        assert_eq!(s.lossy_fields(), ["content_idx", "*_idx"]);
        s.copy_dests.push("*_idx".into());
        assert!(s.lossy_fields().is_empty());
    }

    #[test]
    fn a_flag_with_the_wrong_type_is_reported() {
        let mut s = yacy_like();
        s.fields.push(field("www_unique_b", "pint", true, true));
        let report = s.inspect(&EngineConfig::default());
        assert_eq!(report.wrong_type.len(), 1);
        assert_eq!(report.wrong_type[0].0.name, "www_unique_b");
    }

    #[test]
    fn types_follow_the_schema_when_names_differ() {
        let mut s = yacy_like();
        s.types.remove("plong");
        s.types.insert("long".into(), "solr.TrieLongField".into());
        assert_eq!(s.type_for(Kind::Long), "long");
        assert_eq!(s.type_for(Kind::Bool), "boolean");
    }
}
