//! The fake core's index: documents in index order, a real-time view (what `/get` sees, updated by
//! every add and delete at once) and a committed view (what `/select` sees, replaced by a commit),
//! `_version_` values from a clock like Solr's, and the update rules of a Solr 9 core with the
//! update log on: optimistic concurrency, atomic updates (including the partial document an
//! atomic update creates when no version is given, and the loss of fields that are neither stored
//! nor docValues), and type coercion on add.
//!
//! Index order matters: ties in a sort, and the order of an unsorted `*:*`, follow it. A document
//! that is replaced (by an add or an atomic update) moves to the end, as it gets a new Lucene doc id.
//!
//! Values and their Java conversions are in [`value`], building a document from an update in
//! [`build`].

mod build;
mod value;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use super::error::SolrError;
use super::json::JVal;
use super::schema::{SField, Schema};
pub use value::{compare_vals, parse_bool, parse_java_int, parse_java_long, Val};

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

    /// Gives the document `id` (real-time and committed) `version`, as when Solr took the version
    /// from its clock well before the update was applied (an update in flight across a commit);
    /// for tests. False when there is no such document.
    pub fn backdate(&mut self, id: &str, version: i64) -> bool {
        let Some(&seq) = self.live_ids.get(id).and_then(|s| s.last()) else {
            return false;
        };
        let Some(doc) = self.live.get(&seq) else {
            return false;
        };
        let doc = Arc::new(Doc {
            version,
            ..(**doc).clone()
        });
        self.live.insert(seq, doc.clone());
        if self.committed.contains_key(&seq) {
            Arc::make_mut(&mut self.committed).insert(seq, doc);
        }
        true
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
