//! The fake core's index: documents in index order, a real-time view (what `/get` sees, updated by
//! every add and delete at once) and a committed view (what `/select` sees, replaced by a commit),
//! `_version_` values from a clock like Solr's, and the update rules of a Solr 9 core with the
//! update log on: optimistic concurrency, atomic updates (including the partial document an
//! atomic update creates when no version is given, and the loss of fields that are neither stored
//! nor docValues), and type coercion on add.
//!
//! Index order matters: ties in a sort, and the order of an unsorted `*:*`, follow it. A document
//! that is replaced (by an add or an atomic update) moves to the end, as it gets a new Lucene doc id.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use super::error::SolrError;
use super::json::{is_integer_text, JVal};
use super::schema::{Kind, SField, Schema};

/// One stored value, typed by its field.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    Str(String),
    Long(i64),
    Int(i32),
    Bool(bool),
    Float(f32),
    Double(f64),
}

impl Val {
    /// The value in a JSON response.
    pub fn to_json(&self) -> Value {
        match self {
            Val::Str(s) => Value::String(s.clone()),
            Val::Long(v) => Value::from(*v),
            Val::Int(v) => Value::from(*v),
            Val::Bool(b) => Value::Bool(*b),
            Val::Float(f) => float_json(*f),
            Val::Double(d) => serde_json::Number::from_f64(*d)
                .map(Value::Number)
                .unwrap_or(Value::Null),
        }
    }

    /// The value as Java's `toString` prints it (facet values, error messages, sort marks).
    pub fn java_string(&self) -> String {
        match self {
            Val::Str(s) => s.clone(),
            Val::Long(v) => v.to_string(),
            Val::Int(v) => v.to_string(),
            Val::Bool(b) => b.to_string(),
            Val::Float(f) => java_float(*f as f64, format!("{f}")),
            Val::Double(d) => java_float(*d, format!("{d}")),
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Val::Long(v) => Some(*v as f64),
            Val::Int(v) => Some(*v as f64),
            Val::Float(f) => Some(*f as f64),
            Val::Double(d) => Some(*d),
            _ => None,
        }
    }
}

/// A float as Java prints it: always with a fraction.
fn java_float(v: f64, shortest: String) -> String {
    if v.is_finite() && v.fract() == 0.0 && !shortest.contains(['e', 'E', '.']) {
        format!("{shortest}.0")
    } else {
        shortest
    }
}

/// A Java `float` in JSON: the shortest text that reads back as the same float, as Java prints it.
pub fn float_json(f: f32) -> Value {
    let text = format!("{f}");
    let d: f64 = text.parse().unwrap_or(f as f64);
    serde_json::Number::from_f64(d)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

/// One document as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Doc {
    pub id: String,
    /// Fields in the order they were added (the unique key included).
    pub fields: Vec<(String, Vec<Val>)>,
    pub version: i64,
    /// Index order: a new sequence number for every add.
    pub seq: u64,
}

impl Doc {
    pub fn values(&self, field: &str) -> Option<&[Val]> {
        self.fields
            .iter()
            .find(|(n, _)| n == field)
            .map(|(_, v)| v.as_slice())
    }
}

/// The values of `field` in `doc`, `_version_` included.
pub fn doc_values(doc: &Doc, field: &str) -> Vec<Val> {
    if field == "_version_" {
        return vec![Val::Long(doc.version)];
    }
    doc.values(field).map(|v| v.to_vec()).unwrap_or_default()
}

/// Documents by index order.
pub type DocMap = BTreeMap<u64, Arc<Doc>>;

/// Options of an `/update` request that shape each command.
#[derive(Clone, Debug)]
pub struct UpdateOpts {
    pub overwrite: bool,
    pub fail_on_version_conflicts: bool,
    pub commit_within: Option<Duration>,
}

impl Default for UpdateOpts {
    fn default() -> Self {
        UpdateOpts {
            overwrite: true,
            fail_on_version_conflicts: true,
            commit_within: None,
        }
    }
}

/// When a `commitWithin` fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommitWithin {
    /// After the requested number of milliseconds (checked whenever the core is used).
    Timer,
    /// Only when a test calls [`Core::fire_commit_within`]; for deterministic tests.
    Manual,
}

/// The fake core: schema, documents, versions.
pub struct Core {
    schema: Schema,
    live: DocMap,
    live_ids: HashMap<String, Vec<u64>>,
    tombstones: HashMap<String, i64>,
    committed: Arc<DocMap>,
    next_seq: u64,
    clock: i64,
    commit_within_mode: CommitWithin,
    commit_within_due: Option<Instant>,
    commit_within_pending: bool,
}

pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl Core {
    pub fn new(schema: Schema, commit_within_mode: CommitWithin) -> Core {
        Core {
            schema,
            live: DocMap::new(),
            live_ids: HashMap::new(),
            tombstones: HashMap::new(),
            committed: Arc::new(DocMap::new()),
            next_seq: 0,
            clock: 0,
            commit_within_mode,
            commit_within_due: None,
            commit_within_pending: false,
        }
    }

    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    pub fn schema_mut(&mut self) -> &mut Schema {
        &mut self.schema
    }

    /// The next `_version_`: Solr's clock is the wall time in milliseconds shifted left by 20
    /// bits (about 1.8e18 to 1.9e18 these years), bumped by one whenever two come in the same tick.
    pub fn next_version(&mut self) -> i64 {
        let now = now_ms() << 20;
        self.clock = (self.clock + 1).max(now);
        self.clock
    }

    /// The real-time view.
    pub fn live(&self) -> &DocMap {
        &self.live
    }

    /// The committed view (what searches see).
    pub fn committed(&self) -> Arc<DocMap> {
        self.committed.clone()
    }

    /// The latest real-time document with this id.
    pub fn live_doc(&self, id: &str) -> Option<&Arc<Doc>> {
        let seqs = self.live_ids.get(id)?;
        seqs.last().and_then(|s| self.live.get(s))
    }

    /// The real-time `_version_` of `id`, if it exists.
    pub fn version(&self, id: &str) -> Option<i64> {
        self.live_doc(id).map(|d| d.version)
    }

    /// Makes every change visible to searches (a hard commit that opens a searcher).
    pub fn commit(&mut self) {
        self.committed = Arc::new(self.live.clone());
        self.tombstones.clear();
        self.commit_within_due = None;
        self.commit_within_pending = false;
        // A commit takes a version from the clock, so the versions after it are those Solr gives.
        self.next_version();
    }

    /// Fires a pending `commitWithin` now; true when one was pending.
    pub fn fire_commit_within(&mut self) -> bool {
        if self.commit_within_pending {
            self.commit();
            true
        } else {
            false
        }
    }

    /// Runs a due `commitWithin`; called before every request and state access.
    pub fn tick(&mut self) {
        if self.commit_within_mode == CommitWithin::Timer {
            if let Some(due) = self.commit_within_due {
                if Instant::now() >= due {
                    self.commit();
                }
            }
        }
    }

    fn schedule_commit_within(&mut self, within: Option<Duration>) {
        let Some(within) = within else { return };
        self.commit_within_pending = true;
        let due = Instant::now() + within;
        self.commit_within_due = Some(match self.commit_within_due {
            Some(d) if d < due => d,
            _ => due,
        });
    }

    // ----- convenience for tests -----

    /// Indexes one document as one element of an `/update` JSON array would be (a plain add, or
    /// an atomic update when a field holds an `{op: value}` object; a `_version_` field is checked
    /// as Solr checks it). Returns the new `_version_`.
    pub fn add(&mut self, doc: Value) -> Result<i64, SolrError> {
        let jdoc = JVal::from_serde(&doc);
        match self.add_jdoc(&jdoc, &UpdateOpts::default())? {
            Some((_, v)) => Ok(v),
            None => Err(SolrError::conflict("skipped")),
        }
    }

    /// Deletes `id` (no version check); returns the delete's (negative) version.
    pub fn delete(&mut self, id: &str) -> i64 {
        self.delete_id(id, None, &UpdateOpts::default())
            .ok()
            .flatten()
            .map(|(_, v)| v)
            .unwrap_or(0)
    }

    // ----- update commands -----

    fn found_version(&self, id: &str) -> i64 {
        if let Some(v) = self.version(id) {
            return v;
        }
        self.tombstones.get(id).copied().unwrap_or(-1)
    }

    /// Solr's optimistic-concurrency rule; `Ok(false)` means "skip in silence".
    fn version_ok(&self, id: &str, on_update: i64, opts: &UpdateOpts) -> Result<bool, SolrError> {
        if on_update == 0 {
            return Ok(true);
        }
        let found = self.found_version(id);
        if on_update == found || (on_update < 0 && found < 0) || (on_update == 1 && found > 0) {
            return Ok(true);
        }
        if !opts.fail_on_version_conflicts {
            return Ok(false);
        }
        Err(SolrError::conflict(format!(
            "version conflict for {id} expected={on_update} actual={found}"
        )))
    }

    /// One document of an add: a plain add or an atomic update. `Ok(None)` when skipped.
    pub fn add_jdoc(
        &mut self,
        doc: &JVal,
        opts: &UpdateOpts,
    ) -> Result<Option<(String, i64)>, SolrError> {
        let JVal::Obj(pairs) = doc else {
            return Err(SolrError::bad_request(
                "fake solr: a document must be a JSON object",
            ));
        };
        let key = self.schema.unique_key.clone();
        let id = match pairs.iter().find(|(k, _)| *k == key) {
            Some((_, JVal::Str(s))) => s.clone(),
            Some((_, JVal::Num(n))) => n.clone(),
            Some((_, JVal::Bool(b))) => b.to_string(),
            _ => {
                return Err(SolrError::bad_request(format!(
                    "Document is missing mandatory uniqueKey field: {key}"
                )))
            }
        };
        let on_update = match pairs.iter().find(|(k, _)| k == "_version_") {
            Some((_, v)) => v.as_i64().unwrap_or(0),
            None => 0,
        };
        let atomic = pairs.iter().any(|(k, v)| *k != key && is_op_map(v, &key));
        let fields = if atomic {
            let old = self.live_doc(&id).cloned();
            if old.is_none() && on_update > 0 {
                if !opts.fail_on_version_conflicts {
                    return Ok(None);
                }
                return Err(SolrError::conflict(format!(
                    "Document not found for update.  id={id}"
                )));
            }
            let mut merged = self.merge_atomic(&id, old.as_deref(), pairs)?;
            self.apply_copy_fields(&mut merged);
            if !self.version_ok(&id, on_update, opts)? {
                return Ok(None);
            }
            self.check_built(&id, merged)?
        } else {
            if !self.version_ok(&id, on_update, opts)? {
                return Ok(None);
            }
            self.build_fields(&id, pairs)?
        };
        let version = self.store(&id, fields, opts.overwrite);
        self.schedule_commit_within(opts.commit_within);
        Ok(Some((id, version)))
    }

    fn store(&mut self, id: &str, fields: Vec<(String, Vec<Val>)>, overwrite: bool) -> i64 {
        let version = self.next_version();
        let seq = self.next_seq;
        self.next_seq += 1;
        if overwrite {
            for s in self.live_ids.remove(id).unwrap_or_default() {
                self.live.remove(&s);
            }
        }
        self.live_ids.entry(id.to_string()).or_default().push(seq);
        self.tombstones.remove(id);
        self.live.insert(
            seq,
            Arc::new(Doc {
                id: id.to_string(),
                fields,
                version,
                seq,
            }),
        );
        version
    }

    /// Delete by id, with an optional optimistic-concurrency version. `Ok(None)` when skipped.
    pub fn delete_id(
        &mut self,
        id: &str,
        on_update: Option<i64>,
        opts: &UpdateOpts,
    ) -> Result<Option<(String, i64)>, SolrError> {
        if !self.version_ok(id, on_update.unwrap_or(0), opts)? {
            return Ok(None);
        }
        let version = -self.next_version();
        for s in self.live_ids.remove(id).unwrap_or_default() {
            self.live.remove(&s);
        }
        self.tombstones.insert(id.to_string(), version);
        self.schedule_commit_within(opts.commit_within);
        Ok(Some((id.to_string(), version)))
    }

    /// Removes the real-time documents matched by `matches`; returns the delete's version.
    pub fn delete_where(&mut self, matches: impl Fn(&Doc) -> bool, opts: &UpdateOpts) -> i64 {
        let version = -self.next_version();
        let gone: Vec<(u64, String)> = self
            .live
            .values()
            .filter(|d| matches(d))
            .map(|d| (d.seq, d.id.clone()))
            .collect();
        for (seq, id) in gone {
            self.live.remove(&seq);
            if let Some(seqs) = self.live_ids.get_mut(&id) {
                seqs.retain(|s| *s != seq);
                if seqs.is_empty() {
                    self.live_ids.remove(&id);
                    self.tombstones.insert(id, version);
                }
            }
        }
        self.schedule_commit_within(opts.commit_within);
        version
    }

    // ----- building documents -----

    /// Solr's `DocumentBuilder`: every input field checked against the schema and converted.
    fn build_fields(
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
    fn apply_copy_fields(&self, fields: &mut Vec<(String, Vec<Val>)>) {
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
    fn check_built(
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

    fn merge_atomic(
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

    // ----- rendering -----

    /// A document as `/select`, `/get` and the test API show it.
    pub fn render(&self, doc: &Doc, fl: &FieldList) -> Map<String, Value> {
        let mut out = Map::new();
        for (name, vals) in &doc.fields {
            let Some(f) = self.schema.field(name) else {
                continue;
            };
            if !fl.wants(&f) || vals.is_empty() {
                continue;
            }
            out.insert(name.clone(), render_values(&f, vals));
        }
        if let Some(f) = self.schema.field("_version_") {
            if fl.wants(&f) {
                out.insert("_version_".into(), Value::from(doc.version));
            }
        }
        out
    }
}

fn push_values(out: &mut Vec<(String, Vec<Val>)>, name: &str, vals: Vec<Val>) {
    if let Some((_, v)) = out.iter_mut().find(|(n, _)| n == name) {
        v.extend(vals);
    } else {
        out.push((name.to_string(), vals));
    }
}

/// JSON for a field's values: a list for multi-valued fields, else the one value.
pub fn render_values(f: &SField, vals: &[Val]) -> Value {
    if f.multi_valued() {
        Value::Array(vals.iter().map(Val::to_json).collect())
    } else {
        vals[0].to_json()
    }
}

/// An object value that is an atomic operation: exactly one key, and not the unique key (an
/// object with the unique key or with several keys is a child document to Solr's JSON loader).
fn is_op_map(v: &JVal, unique_key: &str) -> bool {
    matches!(v, JVal::Obj(p) if p.len() == 1 && p[0].0 != unique_key)
}

/// Order of values of one field.
pub fn compare_vals(a: &Val, b: &Val) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (a, b) {
        (Val::Str(x), Val::Str(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Val::Long(x), Val::Long(y)) => x.cmp(y),
        (Val::Int(x), Val::Int(y)) => x.cmp(y),
        (Val::Bool(x), Val::Bool(y)) => x.cmp(y),
        _ => a
            .as_f64()
            .zip(b.as_f64())
            .and_then(|(x, y)| x.partial_cmp(&y))
            .unwrap_or(Ordering::Equal),
    }
}

/// Java's `Long.parseLong`: optional sign, digits, nothing else.
pub fn parse_java_long(s: &str) -> Result<i64, String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("For input string: \"{s}\""));
    }
    s.parse::<i64>()
        .map_err(|_| format!("For input string: \"{s}\""))
}

/// Java's `Integer.parseInt`.
pub fn parse_java_int(s: &str) -> Result<i32, String> {
    let v = parse_java_long(s)?;
    i32::try_from(v).map_err(|_| format!("For input string: \"{s}\""))
}

fn parse_java_double(s: &str) -> Result<f64, String> {
    let t = s.trim().trim_end_matches(['d', 'D', 'f', 'F']);
    match t {
        "NaN" => Ok(f64::NAN),
        "Infinity" | "+Infinity" => Ok(f64::INFINITY),
        "-Infinity" => Ok(f64::NEG_INFINITY),
        _ => t
            .parse::<f64>()
            .map_err(|_| format!("For input string: \"{s}\"")),
    }
}

/// Converts one input value to the field's type, with Solr's coercions: numbers from strings,
/// floats truncated into integer fields, longs wrapped into `int` fields, and booleans true only
/// for text starting with `t`, `T` or `1`. Integers too big for a Java `long` arrive as text
/// (noggit's BIGNUMBER), so they fail like a bad string. Errors are the Java exception message.
pub fn convert(field: &SField, input: &JVal) -> Result<Val, String> {
    // What the JSON loader hands on: a Long, a Double, a String or a Boolean.
    enum In<'a> {
        Long(i64),
        Double(f64),
        Text(&'a str),
        Bool(bool),
    }
    let raw = match input {
        JVal::Num(n) if is_integer_text(n) => match n.parse::<i64>() {
            Ok(v) => In::Long(v),
            Err(_) => In::Text(n),
        },
        JVal::Num(n) => In::Double(n.parse::<f64>().unwrap_or(f64::NAN)),
        JVal::Str(s) => In::Text(s),
        JVal::Bool(b) => In::Bool(*b),
        JVal::Null => return Err("null value".into()),
        other => return Err(format!("unsupported value {}", other.to_compact())),
    };
    let text = |r: &In| -> String {
        match r {
            In::Long(v) => v.to_string(),
            In::Double(d) => java_float(*d, format!("{d}")),
            In::Text(s) => s.to_string(),
            In::Bool(b) => b.to_string(),
        }
    };
    Ok(match field.kind {
        Kind::Long => Val::Long(match raw {
            In::Long(v) => v,
            In::Double(d) => d as i64,
            ref r => parse_java_long(&text(r))?,
        }),
        Kind::Int => Val::Int(match raw {
            In::Long(v) => v as i32,
            In::Double(d) => d as i32,
            ref r => parse_java_int(&text(r))?,
        }),
        Kind::Float => Val::Float(match raw {
            In::Long(v) => v as f32,
            In::Double(d) => d as f32,
            ref r => parse_java_double(&text(r))? as f32,
        }),
        Kind::Double => Val::Double(match raw {
            In::Long(v) => v as f64,
            In::Double(d) => d,
            ref r => parse_java_double(&text(r))?,
        }),
        Kind::Bool => Val::Bool(match raw {
            In::Bool(b) => b,
            ref r => parse_bool(&text(r)),
        }),
        _ => Val::Str(text(&raw)),
    })
}

/// `BoolField`: true when the text starts with `t`, `T` or `1`.
pub fn parse_bool(s: &str) -> bool {
    matches!(s.chars().next(), Some('t') | Some('T') | Some('1'))
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

/// An `fl` list: `*`, names, globs such as `*_b`, and `score`. Unknown names are ignored.
#[derive(Clone, Debug, Default)]
pub struct FieldList {
    pub all: bool,
    pub names: Vec<String>,
    pub globs: Vec<String>,
    pub score: bool,
}

impl FieldList {
    pub fn all() -> FieldList {
        FieldList {
            all: true,
            ..FieldList::default()
        }
    }

    /// Parses one or more `fl` parameters (comma or space separated); none means `*`.
    pub fn parse(values: &[String]) -> FieldList {
        let mut fl = FieldList::default();
        let mut any = false;
        for v in values {
            for part in v.split([',', ' ']).map(str::trim).filter(|s| !s.is_empty()) {
                any = true;
                if part == "*" {
                    fl.all = true;
                } else if part == "score" {
                    fl.score = true;
                } else if part.contains('*') {
                    fl.globs.push(part.to_string());
                } else if !part.starts_with('[') {
                    fl.names.push(part.to_string());
                }
            }
        }
        if !any {
            fl.all = true;
        }
        fl
    }

    /// Whether a field is returned under this list.
    pub fn wants(&self, f: &SField) -> bool {
        if self.names.contains(&f.name) {
            return f.stored() || f.doc_values();
        }
        if (self.all
            || self
                .globs
                .iter()
                .any(|g| super::schema::glob_matches(g, &f.name)))
            && f.returned()
        {
            return true;
        }
        false
    }
}
