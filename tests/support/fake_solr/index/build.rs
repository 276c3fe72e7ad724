//! Building a document from an update, as Solr's `DocumentBuilder` does: every input field
//! checked against the schema and converted, copy fields filled, required fields checked; and
//! for an atomic update, the old document read back through stored fields and docValues and
//! merged with the update's operations (`set`, `add`, `add-distinct`, `remove`, `inc`).

use super::super::error::SolrError;
use super::super::json::JVal;
use super::super::schema::{Kind, SField};
use super::value::{compare_vals, convert, Val};
use super::{is_op_map, Core, Doc};

impl Core {
    /// Solr's `DocumentBuilder`: every input field checked against the schema and converted.
    pub(super) fn build_fields(
        &self,
        id: &str,
        pairs: &[(String, JVal)],
    ) -> Result<Vec<(String, Vec<Val>)>, SolrError> {
        let mut out: Vec<(String, Vec<Val>)> = Vec::new();
        for (name, value) in pairs {
            if name == "_version_" {
                continue;
            }
            let inputs: Vec<&JVal> = match value {
                JVal::Arr(items) => items.iter().filter(|v| **v != JVal::Null).collect(),
                JVal::Null => Vec::new(),
                v => vec![v],
            };
            // Objects that are no atomic operation are child documents: the fake checks their
            // fields (so unknown ones fail as in Solr) but does not index nested documents.
            if let JVal::Obj(child) = value {
                let child_id = child
                    .iter()
                    .find(|(k, _)| *k == self.schema.unique_key)
                    .map(|(_, v)| v.to_java_string())
                    .unwrap_or_else(|| "null".into());
                for (k, _) in child {
                    if self.schema.field(k).is_none() {
                        return Err(SolrError::bad_request(format!(
                            "ERROR: [doc={child_id}] unknown field '{k}'"
                        )));
                    }
                }
                return Err(SolrError::bad_request(
                    "fake solr: nested child documents are not supported",
                ));
            }
            let Some(field) = self.schema.field(name) else {
                return Err(SolrError::bad_request(format!(
                    "ERROR: [doc={id}] unknown field '{name}'"
                )));
            };
            if !field.multi_valued() && inputs.len() > 1 {
                let shown: Vec<String> = inputs.iter().map(|v| v.to_java_string()).collect();
                return Err(SolrError::bad_request(format!(
                    "ERROR: [doc={id}] multiple values encountered for non multiValued field {name}: [{}]",
                    shown.join(", ")
                )));
            }
            let mut vals = Vec::new();
            for input in &inputs {
                let v = convert(&field, input).map_err(|detail| {
                    SolrError::number_format(format!(
                        "ERROR: [doc={id}] Error adding field '{name}'='{}' msg={detail}",
                        input.to_java_string()
                    ))
                })?;
                vals.push(v);
            }
            if vals.is_empty() {
                continue;
            }
            push_values(&mut out, name, vals.clone());
            for dest in self.schema.copy_dests(name) {
                if let Some(df) = self.schema.field(&dest) {
                    let converted: Vec<Val> =
                        inputs.iter().filter_map(|i| convert(&df, i).ok()).collect();
                    push_values(&mut out, &dest, converted);
                }
            }
        }
        self.check_required(id, &out)?;
        Ok(out)
    }

    fn check_required(&self, id: &str, fields: &[(String, Vec<Val>)]) -> Result<(), SolrError> {
        for def in &self.schema.fields {
            if def.name == self.schema.unique_key {
                continue;
            }
            let required = self
                .schema
                .declared(&def.name)
                .is_some_and(|f| f.has("required"));
            if required && !fields.iter().any(|(n, v)| *n == def.name && !v.is_empty()) {
                return Err(SolrError::bad_request(format!(
                    "[doc={id}] missing required field: {}",
                    def.name
                )));
            }
        }
        Ok(())
    }

    /// Copy fields are rebuilt from their sources after an atomic update (their old values were
    /// not read back).
    pub(super) fn apply_copy_fields(&self, fields: &mut Vec<(String, Vec<Val>)>) {
        let sources: Vec<(String, Vec<Val>)> = fields
            .iter()
            .filter(|(n, _)| !self.schema.is_copy_dest(n))
            .cloned()
            .collect();
        for (name, vals) in sources {
            for dest in self.schema.copy_dests(&name) {
                let Some(df) = self.schema.field(&dest) else {
                    continue;
                };
                let converted: Vec<Val> = vals
                    .iter()
                    .filter_map(|v| convert(&df, &JVal::Str(v.java_string())).ok())
                    .collect();
                push_values(fields, &dest, converted);
            }
        }
    }

    /// The checks `DocumentBuilder` makes on a merged atomic-update document.
    pub(super) fn check_built(
        &self,
        id: &str,
        fields: Vec<(String, Vec<Val>)>,
    ) -> Result<Vec<(String, Vec<Val>)>, SolrError> {
        for (name, vals) in &fields {
            if let Some(f) = self.schema.field(name) {
                if !f.multi_valued() && vals.len() > 1 {
                    let shown: Vec<String> = vals.iter().map(Val::java_string).collect();
                    return Err(SolrError::bad_request(format!(
                        "ERROR: [doc={id}] multiple values encountered for non multiValued field {name}: [{}]",
                        shown.join(", ")
                    )));
                }
            }
        }
        self.check_required(id, &fields)?;
        Ok(fields.into_iter().filter(|(_, v)| !v.is_empty()).collect())
    }

    /// What an atomic update reads back of the old document: only stored fields and docValues
    /// (multi-valued docValues come back sorted, strings without duplicates), never copy-field
    /// destinations. Everything else is lost, as in Solr.
    fn readable_fields(&self, doc: &Doc) -> Vec<(String, Vec<Val>)> {
        let mut out = Vec::new();
        for (name, vals) in &doc.fields {
            let Some(f) = self.schema.field(name) else {
                continue;
            };
            if self.schema.is_copy_dest(name) {
                continue;
            }
            if f.stored() {
                out.push((name.clone(), vals.clone()));
            } else if f.doc_values() {
                let mut vals = vals.clone();
                if f.multi_valued() {
                    vals.sort_by(compare_vals);
                    if matches!(f.kind, Kind::Str | Kind::Bool | Kind::Text) {
                        vals.dedup();
                    }
                }
                out.push((name.clone(), vals));
            }
        }
        out
    }

    pub(super) fn merge_atomic(
        &self,
        id: &str,
        old: Option<&Doc>,
        pairs: &[(String, JVal)],
    ) -> Result<Vec<(String, Vec<Val>)>, SolrError> {
        let key = &self.schema.unique_key;
        let mut fields = match old {
            Some(d) => self.readable_fields(d),
            None => vec![(key.clone(), vec![Val::Str(id.to_string())])],
        };
        for (name, value) in pairs {
            if name == key || name == "_version_" {
                continue;
            }
            let Some(field) = self.schema.field(name) else {
                return Err(SolrError::bad_request(format!(
                    "undefined field: \"{name}\""
                )));
            };
            let (op, arg) = match value {
                JVal::Obj(p) if is_op_map(value, key) => (p[0].0.as_str(), &p[0].1),
                other => ("set", other),
            };
            let inputs: Vec<&JVal> = match arg {
                JVal::Arr(items) => items.iter().filter(|v| **v != JVal::Null).collect(),
                JVal::Null => Vec::new(),
                v => vec![v],
            };
            if !matches!(
                op,
                "set" | "add" | "add-distinct" | "remove" | "removeregex" | "inc"
            ) {
                return Err(SolrError::bad_request(format!(
                    "Error:[doc={id}]  Unknown operation for the an atomic update: {op}"
                )));
            }
            let mut vals = Vec::new();
            for input in &inputs {
                let v = convert(&field, input).map_err(|detail| {
                    SolrError::number_format(format!(
                        "Error converting field '{name}'='{}' to native type, msg={detail}",
                        input.to_java_string()
                    ))
                })?;
                vals.push(v);
            }
            let pos = fields.iter().position(|(n, _)| n == name);
            let current: Vec<Val> = pos.map(|i| fields[i].1.clone()).unwrap_or_default();
            let next = match op {
                "set" => vals,
                "add" => {
                    let mut c = current;
                    c.extend(vals);
                    c
                }
                "add-distinct" => {
                    let mut c = current;
                    for v in vals {
                        if !c.contains(&v) {
                            c.push(v);
                        }
                    }
                    c
                }
                "remove" => current.into_iter().filter(|v| !vals.contains(v)).collect(),
                "inc" => {
                    let Some(delta) = vals.first() else {
                        return Err(SolrError::bad_request(format!(
                            "fake solr: inc on field {name} needs a value"
                        )));
                    };
                    let base = current.first().cloned();
                    vec![increment(&field, base, delta).ok_or_else(|| {
                        SolrError::bad_request(format!(
                            "fake solr: inc is not supported on field {name}"
                        ))
                    })?]
                }
                _ => {
                    return Err(SolrError::bad_request(
                        "fake solr: removeregex is not supported",
                    ))
                }
            };
            match pos {
                Some(i) => fields[i].1 = next,
                None => fields.push((name.clone(), next)),
            }
        }
        Ok(fields)
    }
}

fn push_values(out: &mut Vec<(String, Vec<Val>)>, name: &str, vals: Vec<Val>) {
    if let Some((_, v)) = out.iter_mut().find(|(n, _)| n == name) {
        v.extend(vals);
    } else {
        out.push((name.to_string(), vals));
    }
}

fn increment(field: &SField, base: Option<Val>, delta: &Val) -> Option<Val> {
    Some(match field.kind {
        Kind::Long => {
            let b = match base {
                Some(Val::Long(v)) => v,
                None => 0,
                _ => return None,
            };
            Val::Long(b.wrapping_add(match delta {
                Val::Long(d) => *d,
                _ => return None,
            }))
        }
        Kind::Int => {
            let b = match base {
                Some(Val::Int(v)) => v,
                None => 0,
                _ => return None,
            };
            Val::Int(b.wrapping_add(match delta {
                Val::Int(d) => *d,
                _ => return None,
            }))
        }
        Kind::Float => {
            Val::Float(base.and_then(|b| b.as_f64()).unwrap_or(0.0) as f32 + delta.as_f64()? as f32)
        }
        Kind::Double => Val::Double(base.and_then(|b| b.as_f64()).unwrap_or(0.0) + delta.as_f64()?),
        _ => return None,
    })
}
