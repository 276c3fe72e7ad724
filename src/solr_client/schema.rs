//! A core's schema as the Schema API gives it: its fields and dynamic-field rules with their types'
//! classes, copyField destinations and the unique key; which field a name resolves to, and which
//! fields an atomic update would empty.
//!
//! **No atomic update loses data** is the one rule that is Solr's own: Solr rebuilds a document from
//! its stored fields and docValues on every atomic update, so a field that is neither (and is not
//! filled by a `copyField`) is silently emptied. What a run needs of the schema, and the advice when
//! it is not met, is `engine::schema_fit`'s.

use std::collections::BTreeMap;

use serde_json::Value;

use super::client::Client;
use super::error::SolrError;

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
    /// The copyField rules as `(source, destination)`, names or patterns.
    pub copy_fields: Vec<(String, String)>,
    /// Field type name to its class (`solr.LongPointField`).
    pub types: BTreeMap<String, String>,
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
            copy_fields: copies
                .get("copyFields")
                .and_then(Value::as_array)
                .ok_or_else(|| bad("copyFields"))?
                .iter()
                .filter_map(|c| Some((str_of(c, "source")?, str_of(c, "dest")?)))
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

    /// The destinations of the copyField rules whose source covers `name`.
    pub fn copies_of(&self, name: &str) -> Vec<&str> {
        self.copy_fields
            .iter()
            .filter(|(src, _)| glob(src, name))
            .map(|(_, dest)| dest.as_str())
            .collect()
    }

    /// The class of a field's type (`solr.LongPointField`), when the schema declares the type.
    pub fn class_of(&self, field: &FieldInfo) -> Option<&str> {
        self.types.get(&field.type_name).map(String::as_str)
    }

    /// A type of the schema of one of `classes`: `conventional` when it has such a class, else the
    /// first type that does, else `conventional` (Solr says so if it is missing).
    pub fn type_with_class(&self, conventional: &str, classes: &[&str]) -> String {
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

/// Schemas for the tests of this module and of `engine::schema_fit`.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;

    pub(crate) fn field(name: &str, type_name: &str, stored: bool, dv: bool) -> FieldInfo {
        FieldInfo {
            name: name.into(),
            type_name: type_name.into(),
            indexed: true,
            stored,
            doc_values: dv,
            multi_valued: false,
        }
    }

    pub(crate) fn yacy_like() -> SchemaInfo {
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
            copy_fields: vec![],
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
}

#[cfg(test)]
mod tests {
    use super::fixtures::{field, yacy_like};

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
    fn an_indexed_only_field_is_lossy_unless_a_copy_field_fills_it() {
        let mut s = yacy_like();
        s.fields
            .push(field("content_idx", "text_general", false, false));
        s.dynamic.push(field("*_idx", "text_general", false, false));
        assert_eq!(s.lossy_fields(), ["content_idx", "*_idx"]);
        s.copy_dests.push("*_idx".into());
        assert!(s.lossy_fields().is_empty());
    }
}
