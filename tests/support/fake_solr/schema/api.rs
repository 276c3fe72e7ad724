//! The Schema API on the fake's schema: `GET /schema…` answered with Solr's JSON shapes (with
//! or without `showDefaults`), and `POST /schema` commands applied all or nothing, with the
//! error messages Solr 9.3 prints.

use serde_json::{json, Map, Value};

use super::super::error::SolrError;
use super::super::json::JVal;
use super::{bit, prop_bit, CopyField, FieldDef, FieldType, Schema};

impl Schema {
    // ----- Schema API: reads -----

    fn def_json(&self, def: &FieldDef, show_defaults: bool, dynamic: bool) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), json!(def.name));
        m.insert("type".into(), json!(def.type_name));
        if show_defaults {
            let f = if dynamic {
                self.dynamic_fields
                    .iter()
                    .find(|d| d.name == def.name)
                    .and_then(|d| self.resolve(d, &d.name, None))
            } else {
                self.resolve(def, &def.name, None)
            };
            if let Some(f) = f {
                for key in [
                    "indexed",
                    "stored",
                    "docValues",
                    "termVectors",
                    "termPositions",
                    "termOffsets",
                    "termPayloads",
                    "omitNorms",
                    "omitTermFreqAndPositions",
                    "omitPositions",
                    "storeOffsetsWithPositions",
                    "multiValued",
                    "large",
                    "uninvertible",
                ] {
                    m.insert(key.into(), json!(f.has(key)));
                }
                for key in ["sortMissingFirst", "sortMissingLast"] {
                    if f.has(key) {
                        m.insert(key.into(), json!(true));
                    }
                }
                for key in ["required", "tokenized", "useDocValuesAsStored"] {
                    m.insert(key.into(), json!(f.has(key)));
                }
            }
            for (k, v) in &def.attrs {
                if prop_bit(k).is_none() {
                    m.insert(k.clone(), json!(v));
                }
            }
        } else {
            for (k, v) in &def.attrs {
                m.insert(k.clone(), attr_value(k, v));
            }
        }
        Value::Object(m)
    }

    fn type_json(&self, t: &FieldType, show_defaults: bool) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), json!(t.name));
        m.insert("class".into(), json!(t.class));
        if show_defaults {
            let p = self.type_props(t);
            for key in [
                "indexed",
                "stored",
                "docValues",
                "termVectors",
                "termPositions",
                "termOffsets",
                "omitNorms",
                "omitTermFreqAndPositions",
                "omitPositions",
                "storeOffsetsWithPositions",
                "multiValued",
                "large",
                "uninvertible",
                "tokenized",
            ] {
                m.insert(key.into(), json!(p & bit(key) != 0));
            }
            for key in ["sortMissingFirst", "sortMissingLast"] {
                if p & bit(key) != 0 {
                    m.insert(key.into(), json!(true));
                }
            }
            for (k, v) in &t.attrs {
                if prop_bit(k).is_none() {
                    m.insert(k.clone(), json!(v));
                }
            }
        } else {
            for (k, v) in &t.attrs {
                m.insert(k.clone(), attr_value(k, v));
            }
        }
        for (kind, an) in &t.analyzers {
            let key = match kind.as_str() {
                "index" => "indexAnalyzer",
                "query" => "queryAnalyzer",
                _ => "analyzer",
            };
            let pairs = |kv: &Vec<(String, String)>| {
                Value::Object(kv.iter().map(|(k, v)| (k.clone(), json!(v))).collect())
            };
            let mut a = Map::new();
            a.insert("tokenizer".into(), pairs(&an.tokenizer));
            if !an.filters.is_empty() {
                a.insert(
                    "filters".into(),
                    Value::Array(an.filters.iter().map(pairs).collect()),
                );
            }
            m.insert(key.into(), Value::Object(a));
        }
        Value::Object(m)
    }

    fn copy_json(&self) -> Value {
        Value::Array(
            self.copy_fields
                .iter()
                .map(|c| json!({"source": c.source, "dest": c.dest}))
                .collect(),
        )
    }

    /// `GET /schema…`; `sub` is the path after `/schema` (`""`, `/fields`, `/fields/x`, …).
    /// Returns the body without `responseHeader`.
    pub fn api_get(
        &self,
        sub: &str,
        params: &[(String, String)],
    ) -> Result<Map<String, Value>, SolrError> {
        let param = |k: &str| {
            params
                .iter()
                .rev()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.as_str())
        };
        let show_defaults = param("showDefaults") == Some("true");
        let include_dynamic = param("includeDynamic") == Some("true");
        let fl: Option<Vec<String>> = param("fl").map(|f| {
            f.split([',', ' '])
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect()
        });
        let mut out = Map::new();
        let parts: Vec<&str> = sub
            .trim_matches('/')
            .split('/')
            .filter(|s| !s.is_empty())
            .collect();
        match parts.as_slice() {
            [] => {
                let mut s = Map::new();
                s.insert("name".into(), json!(self.name));
                s.insert("version".into(), version_json(&self.version));
                s.insert("uniqueKey".into(), json!(self.unique_key));
                s.insert(
                    "fieldTypes".into(),
                    Value::Array(
                        self.sorted_types()
                            .into_iter()
                            .map(|t| self.type_json(t, show_defaults))
                            .collect(),
                    ),
                );
                s.insert(
                    "fields".into(),
                    Value::Array(
                        self.sorted_fields()
                            .into_iter()
                            .map(|f| self.def_json(f, show_defaults, false))
                            .collect(),
                    ),
                );
                s.insert(
                    "dynamicFields".into(),
                    Value::Array(
                        self.dynamic_in_order()
                            .into_iter()
                            .map(|f| self.def_json(f, show_defaults, true))
                            .collect(),
                    ),
                );
                s.insert("copyFields".into(), self.copy_json());
                out.insert("schema".into(), Value::Object(s));
            }
            ["fields"] => {
                let list: Vec<Value> = match &fl {
                    Some(names) => names
                        .iter()
                        .filter_map(|n| self.field_entry(n, show_defaults, include_dynamic))
                        .collect(),
                    None => self
                        .sorted_fields()
                        .into_iter()
                        .map(|f| self.def_json(f, show_defaults, false))
                        .collect(),
                };
                out.insert("fields".into(), Value::Array(list));
            }
            ["fields", name] => match self.field_entry(name, show_defaults, include_dynamic) {
                Some(v) => {
                    out.insert("field".into(), v);
                }
                None => return Err(SolrError::not_found(format!("No such field [{name}]"))),
            },
            ["dynamicfields"] => {
                let list = self
                    .dynamic_in_order()
                    .into_iter()
                    .filter(|d| fl.as_ref().is_none_or(|names| names.contains(&d.name)))
                    .map(|d| self.def_json(d, show_defaults, true))
                    .collect();
                out.insert("dynamicFields".into(), Value::Array(list));
            }
            ["dynamicfields", name] => match self.dynamic_fields.iter().find(|d| d.name == *name) {
                Some(d) => {
                    out.insert("dynamicField".into(), self.def_json(d, show_defaults, true));
                }
                None => {
                    return Err(SolrError::not_found(format!(
                        "No such dynamic field [{name}]"
                    )))
                }
            },
            ["copyfields"] => {
                out.insert("copyFields".into(), self.copy_json());
            }
            ["uniquekey"] => {
                out.insert("uniqueKey".into(), json!(self.unique_key));
            }
            ["version"] => {
                out.insert("version".into(), version_json(&self.version));
            }
            ["name"] => {
                out.insert("name".into(), json!(self.name));
            }
            ["fieldtypes"] => {
                out.insert(
                    "fieldTypes".into(),
                    Value::Array(
                        self.sorted_types()
                            .into_iter()
                            .map(|t| self.type_json(t, show_defaults))
                            .collect(),
                    ),
                );
            }
            ["fieldtypes", name] => match self.field_type(name) {
                Some(t) => {
                    out.insert("fieldType".into(), self.type_json(t, show_defaults));
                }
                None => return Err(SolrError::not_found(format!("No such field type [{name}]"))),
            },
            _ => return Err(SolrError::not_found("fake solr: no such schema resource")),
        }
        Ok(out)
    }

    fn field_entry(&self, name: &str, show_defaults: bool, include_dynamic: bool) -> Option<Value> {
        if let Some(def) = self.fields.iter().find(|f| f.name == name) {
            return Some(self.def_json(def, show_defaults, false));
        }
        if !include_dynamic {
            return None;
        }
        let rule = self.dynamic_rule(name)?;
        let mut v = self.def_json(rule, show_defaults, true);
        v["name"] = json!(name);
        v["dynamicBase"] = json!(rule.name);
        Some(v)
    }

    fn sorted_fields(&self) -> Vec<&FieldDef> {
        let mut v: Vec<&FieldDef> = self.fields.iter().collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }

    fn sorted_types(&self) -> Vec<&FieldType> {
        let mut v: Vec<&FieldType> = self.field_types.iter().collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }

    // ----- Schema API: writes -----

    /// `POST /schema` with a JSON command object. All or nothing: the commands run in order on a
    /// copy, and the copy replaces the schema only when every command succeeded.
    pub fn api_post(&mut self, body: &JVal) -> Result<(), SolrError> {
        let JVal::Obj(commands) = body else {
            return Err(SolrError::bad_request(
                "fake solr: the schema API expects a JSON object",
            ));
        };
        let mut work = self.clone();
        let mut errors: Vec<(String, JVal, String)> = Vec::new();
        for (op, arg) in commands {
            let items: Vec<&JVal> = match arg {
                JVal::Arr(a) => a.iter().collect(),
                other => vec![other],
            };
            let known = matches!(
                op.as_str(),
                "add-field"
                    | "replace-field"
                    | "delete-field"
                    | "add-dynamic-field"
                    | "replace-dynamic-field"
                    | "delete-dynamic-field"
                    | "add-copy-field"
                    | "delete-copy-field"
                    | "add-field-type"
                    | "replace-field-type"
                    | "delete-field-type"
            );
            if !known {
                errors.push((op.clone(), arg.clone(), format!("No such operation : {op}")));
                continue;
            }
            for item in items {
                if let Err(msg) = work.apply_command(op, item) {
                    errors.push((op.clone(), item.clone(), format!("{msg}\n")));
                }
            }
        }
        if errors.is_empty() {
            *self = work;
            return Ok(());
        }
        let mut details = Vec::new();
        let mut java = Vec::new();
        for (op, arg, msg) in &errors {
            // Solr builds these maps in an order that differs by command; the message string
            // shows it, so the fake follows what Solr 9.3 printed.
            let err_first = op.starts_with("replace-");
            let mut m = Map::new();
            let cmd_java = format!("{op}={}", arg.to_java_string());
            let err_java = format!("errorMessages=[{msg}]");
            m.insert(op.clone(), arg.to_serde());
            m.insert("errorMessages".into(), json!([msg]));
            details.push(Value::Object(m));
            if err_first {
                java.push(format!("{{{err_java}, {cmd_java}}}"));
            } else {
                java.push(format!("{{{cmd_java}, {err_java}}}"));
            }
        }
        Err(SolrError::bad_request(format!(
            "error processing commands, errors: [{}], ",
            java.join(", ")
        ))
        .class("org.apache.solr.api.ApiBag$ExceptionWithErrObject")
        .root("org.apache.solr.api.ApiBag$ExceptionWithErrObject")
        .with_details(Value::Array(details)))
    }

    fn apply_command(&mut self, op: &str, arg: &JVal) -> Result<(), String> {
        let JVal::Obj(pairs) = arg else {
            return Err(format!("Invalid argument for {op}"));
        };
        let get = |k: &str| arg.get(k).map(jval_text);
        let def_from = |pairs: &[(String, JVal)]| -> Result<FieldDef, String> {
            let name = get("name").ok_or("Missing field 'name'")?;
            let type_name =
                get("type").ok_or_else(|| format!("Field '{name}': Missing field 'type'"))?;
            Ok(FieldDef {
                name,
                type_name,
                attrs: pairs
                    .iter()
                    .filter(|(k, _)| k != "name" && k != "type")
                    .map(|(k, v)| (k.clone(), jval_text(v)))
                    .collect(),
            })
        };
        match op {
            "add-field" | "replace-field" | "add-dynamic-field" | "replace-dynamic-field" => {
                let def = def_from(pairs)?;
                let dynamic = op.contains("dynamic");
                let list = if dynamic {
                    &mut self.dynamic_fields
                } else {
                    &mut self.fields
                };
                let exists = list.iter().any(|f| f.name == def.name);
                let what = if dynamic { "Dynamic field" } else { "Field" };
                if op.starts_with("add") && exists {
                    return Err(format!("{what} '{}' already exists.", def.name));
                }
                if op.starts_with("replace") && !exists {
                    let noun = if dynamic { "dynamic field" } else { "field" };
                    return Err(format!(
                        "The {noun} '{}' is not present in this schema, and so cannot be replaced.",
                        def.name
                    ));
                }
                if !self.field_types.iter().any(|t| t.name == def.type_name) {
                    return Err(format!(
                        "{what} '{}': Field type '{}' not found.",
                        def.name, def.type_name
                    ));
                }
                let list = if dynamic {
                    &mut self.dynamic_fields
                } else {
                    &mut self.fields
                };
                if let Some(slot) = list.iter_mut().find(|f| f.name == def.name) {
                    *slot = def;
                } else {
                    list.push(def);
                }
                Ok(())
            }
            "delete-field" | "delete-dynamic-field" => {
                let name = get("name").ok_or("Missing field 'name'")?;
                if op == "delete-field" {
                    if self.remove_field(&name) {
                        return Ok(());
                    }
                    // Solr 9.3 lets this pass when a dynamic rule covers the name.
                    if self.dynamic_rule(&name).is_some() {
                        return Ok(());
                    }
                    return Err(format!(
                        "The field '{name}' is not present in this schema, and so cannot be deleted."
                    ));
                }
                let before = self.dynamic_fields.len();
                self.dynamic_fields.retain(|d| d.name != name);
                if before == self.dynamic_fields.len() {
                    return Err(format!(
                        "The dynamic field '{name}' is not present in this schema, and so cannot be deleted."
                    ));
                }
                Ok(())
            }
            "add-copy-field" => {
                let source = get("source").ok_or("Missing field 'source'")?;
                let dests: Vec<String> = match arg.get("dest") {
                    Some(JVal::Arr(a)) => a.iter().map(jval_text).collect(),
                    Some(v) => vec![jval_text(v)],
                    None => return Err("Missing field 'dest'".into()),
                };
                for dest in dests {
                    self.copy_fields.push(CopyField {
                        source: source.clone(),
                        dest,
                    });
                }
                Ok(())
            }
            "delete-copy-field" => {
                let source = get("source").ok_or("Missing field 'source'")?;
                let dest = get("dest").ok_or("Missing field 'dest'")?;
                let before = self.copy_fields.len();
                self.copy_fields
                    .retain(|c| !(c.source == source && c.dest == dest));
                if before == self.copy_fields.len() {
                    return Err(format!(
                        "Copy field directive not found: '{source}' -> '{dest}'"
                    ));
                }
                Ok(())
            }
            "add-field-type" | "replace-field-type" => {
                let name = get("name").ok_or("Missing field 'name'")?;
                let class = get("class").ok_or("Missing field 'class'")?;
                let exists = self.field_types.iter().any(|t| t.name == name);
                if op.starts_with("add") && exists {
                    return Err(format!("Field type '{name}' already exists."));
                }
                if op.starts_with("replace") && !exists {
                    return Err(format!(
                        "The field type '{name}' is not present in this schema, and so cannot be replaced."
                    ));
                }
                let t = FieldType {
                    name: name.clone(),
                    class,
                    attrs: pairs
                        .iter()
                        .filter(|(k, v)| k != "name" && k != "class" && !matches!(v, JVal::Obj(_)))
                        .map(|(k, v)| (k.clone(), jval_text(v)))
                        .collect(),
                    analyzers: Vec::new(),
                };
                if let Some(slot) = self.field_types.iter_mut().find(|x| x.name == name) {
                    *slot = t;
                } else {
                    self.field_types.push(t);
                }
                Ok(())
            }
            "delete-field-type" => {
                let name = get("name").ok_or("Missing field 'name'")?;
                let before = self.field_types.len();
                self.field_types.retain(|t| t.name != name);
                if before == self.field_types.len() {
                    return Err(format!(
                        "The field type '{name}' is not present in this schema, and so cannot be deleted."
                    ));
                }
                Ok(())
            }
            _ => Err(format!("No such operation : {op}")),
        }
    }
}

fn attr_value(key: &str, v: &str) -> Value {
    if prop_bit(key).is_some() && (v == "true" || v == "false") {
        json!(v == "true")
    } else {
        json!(v)
    }
}

fn version_json(v: &str) -> Value {
    v.parse::<f64>()
        .map(|f| json!(f))
        .unwrap_or_else(|_| json!(v))
}

fn jval_text(v: &JVal) -> String {
    match v {
        JVal::Str(s) => s.clone(),
        JVal::Num(n) => n.clone(),
        JVal::Bool(b) => b.to_string(),
        JVal::Null => "null".into(),
        other => other.to_compact(),
    }
}
