//! The Solr configset in `schema/`: the core that `docker compose up` (or `solr-precreate`) makes
//! from it must serve solr-dedup without losing data.
//!
//! Checked here, on the XML files themselves (no Solr needed):
//! - the layout `solr-precreate CORE DIR` expects (`DIR/conf/solrconfig.xml`, the managed schema it
//!   names, and every word list the schema refers to);
//! - every field the worker reads or writes exists as a static field with YaCy's name, type and
//!   multi-valuedness; the names come from [`FieldNames::default`], so a field added to the worker
//!   without a place in the configset fails to compile here;
//! - no static or dynamic field is neither stored nor docValues (an atomic update would drop it),
//!   except Solr's `_root_`, which Solr fills itself;
//! - `solrconfig.xml` has the update log, an autoCommit that opens no searcher, a mutable managed
//!   schema and `/select` searching `text_t`;
//! - the worker's fields resolve in the schema of the real Solr 9.3 core the transcripts were recorded
//!   on (`tests/fixtures/solr-transcripts/managed-schema.xml`, the checkout's copy of
//!   `shared/solr-transcripts`) to the same types, and every field and dynamic rule of that core
//!   exists here with the same type.
//!
//! Every file is read from this checkout, never from beside it; a missing one fails the test that
//! needs it, naming the path.
//!
//! The checks are functions that return the problems they find, so the tests at the end can show
//! that each one does fail on a broken configset.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use solr_dedup::engine::FieldNames;

mod plugin;

// ---------------------------------------------------------------------------------------------
// A small model of a Solr schema file
// ---------------------------------------------------------------------------------------------

/// A `<fieldType>`: only what decides storage and shape.
#[derive(Debug, Clone)]
struct FieldType {
    class: String,
    multi_valued: Option<bool>,
    stored: Option<bool>,
    doc_values: Option<bool>,
}

/// A `<field>` or `<dynamicField>` as written, before defaults are applied.
#[derive(Debug, Clone)]
struct FieldDef {
    name: String,
    type_name: String,
    multi_valued: Option<bool>,
    stored: Option<bool>,
    doc_values: Option<bool>,
}

/// A field with the type's settings and the schema defaults applied.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Effective {
    type_name: String,
    class: String,
    multi_valued: bool,
    stored: bool,
    doc_values: bool,
    /// The dynamic rule the name matched, `None` for a static field.
    dynamic_base: Option<String>,
}

#[derive(Debug, Clone)]
struct Schema {
    version: String,
    unique_key: String,
    types: BTreeMap<String, FieldType>,
    fields: BTreeMap<String, FieldDef>,
    dynamic: Vec<FieldDef>,
    copy_field_dests: Vec<String>,
    /// Values of attributes that name a resource file (`words`, `synonyms`, …).
    resources: Vec<String>,
}

fn bool_attr(node: roxmltree::Node, name: &str) -> Result<Option<bool>, String> {
    match node.attribute(name) {
        None => Ok(None),
        Some("true") => Ok(Some(true)),
        Some("false") => Ok(Some(false)),
        Some(other) => Err(format!("{name}=\"{other}\" is not true or false")),
    }
}

fn field_def(node: roxmltree::Node) -> Result<FieldDef, String> {
    let name = node.attribute("name").ok_or("a field without a name")?;
    let type_name = node
        .attribute("type")
        .ok_or_else(|| format!("field {name} has no type"))?;
    Ok(FieldDef {
        name: name.to_owned(),
        type_name: type_name.to_owned(),
        multi_valued: bool_attr(node, "multiValued")?,
        stored: bool_attr(node, "stored")?,
        doc_values: bool_attr(node, "docValues")?,
    })
}

/// Attributes of analysis factories that name a file in `conf/`.
const RESOURCE_ATTRIBUTES: &[&str] = &[
    "words",
    "synonyms",
    "protected",
    "dictionary",
    "mapping",
    "types",
];

impl Schema {
    fn parse(xml: &str) -> Result<Schema, String> {
        let doc = roxmltree::Document::parse(xml).map_err(|e| format!("not well-formed: {e}"))?;
        let root = doc.root_element();
        if root.tag_name().name() != "schema" {
            return Err(format!("root element is <{}>", root.tag_name().name()));
        }
        let mut schema = Schema {
            version: root.attribute("version").unwrap_or("").to_owned(),
            unique_key: String::new(),
            types: BTreeMap::new(),
            fields: BTreeMap::new(),
            dynamic: Vec::new(),
            copy_field_dests: Vec::new(),
            resources: Vec::new(),
        };
        // Solr 9 accepts fields and types both at the top level and inside <fields>/<types>.
        for node in root.descendants().filter(|n| n.is_element()) {
            match node.tag_name().name() {
                "uniqueKey" => schema.unique_key = node.text().unwrap_or("").trim().to_owned(),
                "fieldType" => {
                    let name = node.attribute("name").ok_or("a fieldType without a name")?;
                    let class = node
                        .attribute("class")
                        .ok_or_else(|| format!("fieldType {name} has no class"))?;
                    let ty = FieldType {
                        class: class.to_owned(),
                        multi_valued: bool_attr(node, "multiValued")?,
                        stored: bool_attr(node, "stored")?,
                        doc_values: bool_attr(node, "docValues")?,
                    };
                    if schema.types.insert(name.to_owned(), ty).is_some() {
                        return Err(format!("fieldType {name} is declared twice"));
                    }
                }
                "field" => {
                    let def = field_def(node)?;
                    if schema.fields.contains_key(&def.name) {
                        return Err(format!("field {} is declared twice", def.name));
                    }
                    schema.fields.insert(def.name.clone(), def);
                }
                "dynamicField" => schema.dynamic.push(field_def(node)?),
                "copyField" => {
                    let dest = node.attribute("dest").ok_or("a copyField without dest")?;
                    schema.copy_field_dests.push(dest.to_owned());
                }
                _ => {}
            }
            for attr in RESOURCE_ATTRIBUTES {
                if let Some(files) = node.attribute(*attr) {
                    // A factory may list several files, comma-separated.
                    schema
                        .resources
                        .extend(files.split(',').map(|f| f.trim().to_owned()));
                }
            }
        }
        Ok(schema)
    }

    /// The field's settings with its type's and the schema defaults applied. Defaults are those of
    /// schema version 1.6 (indexed, stored, single-valued, docValues only when asked for); the
    /// tests pin the version so these stay right.
    fn effective(&self, def: &FieldDef, dynamic_base: Option<&str>) -> Result<Effective, String> {
        let ty = self
            .types
            .get(&def.type_name)
            .ok_or_else(|| format!("field {} has the unknown type {}", def.name, def.type_name))?;
        Ok(Effective {
            type_name: def.type_name.clone(),
            class: ty.class.clone(),
            multi_valued: def.multi_valued.or(ty.multi_valued).unwrap_or(false),
            stored: def.stored.or(ty.stored).unwrap_or(true),
            doc_values: def.doc_values.or(ty.doc_values).unwrap_or(false),
            dynamic_base: dynamic_base.map(str::to_owned),
        })
    }

    /// How Solr resolves a field name: a static field, else the longest matching dynamic rule.
    fn resolve(&self, name: &str) -> Result<Option<Effective>, String> {
        if let Some(def) = self.fields.get(name) {
            return self.effective(def, None).map(Some);
        }
        let mut rules: Vec<&FieldDef> = self.dynamic.iter().collect();
        rules.sort_by_key(|d| std::cmp::Reverse(d.name.len()));
        for rule in rules {
            if glob_matches(&rule.name, name) {
                return self.effective(rule, Some(&rule.name)).map(Some);
            }
        }
        Ok(None)
    }
}

/// Solr's dynamic-field patterns: one `*` at the start or at the end.
fn glob_matches(pattern: &str, name: &str) -> bool {
    if let Some(suffix) = pattern.strip_prefix('*') {
        name.len() > suffix.len() && name.ends_with(suffix)
    } else if let Some(prefix) = pattern.strip_suffix('*') {
        name.len() > prefix.len() && name.starts_with(prefix)
    } else {
        pattern == name
    }
}

// ---------------------------------------------------------------------------------------------
// What the worker needs
// ---------------------------------------------------------------------------------------------

/// One field the configset must declare statically: name, type, multi-valued, and why.
#[derive(Debug, Clone)]
struct Required {
    name: String,
    type_name: &'static str,
    multi_valued: bool,
    role: &'static str,
}

/// The worker's fields (YaCy's default names, from the library) with the types the spec gives them,
/// plus `host_s`, which the crawler writes and ranking rules use.
fn required_fields() -> Vec<Required> {
    // Destructured field by field: a field added to FieldNames must be added here, with its type.
    // The configset is YaCy's profile; the in-place one is added by `schema apply --profile`.
    let FieldNames {
        profile: _,
        id,
        url,
        text,
        title,
        description,
        version,
        exact_signature,
        fuzzy_signature,
        fuzzy_signature_text,
        fuzzy_signature_words,
        title_signature,
        description_signature,
        unique,
        exact_count,
        fuzzy_count,
        near_trials,
        near_keys,
        near_version,
        near_count,
        near_group,
    } = FieldNames::default();
    let req = |name: String, type_name, multi_valued, role| Required {
        name,
        type_name,
        multi_valued,
        role,
    };
    let mut out = vec![
        req(id, "string", false, "unique key"),
        req(url, "string", false, "the URL"),
        req("host_s".to_owned(), "string", false, "the host (crawler)"),
        req(text, "text_general", false, "the page text"),
        req(title, "text_general", true, "the title"),
        req(description, "text_general", true, "the description"),
        req(version, "plong", false, "optimistic concurrency"),
        req(exact_signature, "plong", false, "exact signature"),
        req(fuzzy_signature, "plong", false, "fuzzy signature"),
        req(
            fuzzy_signature_text,
            "text_general",
            false,
            "fuzzy profile text",
        ),
        req(fuzzy_signature_words, "pint", false, "fuzzy profile words"),
        req(title_signature, "plong", false, "title signature"),
        req(
            description_signature,
            "plong",
            false,
            "description signature",
        ),
        req(exact_count, "pint", false, "exact copy count"),
        req(fuzzy_count, "pint", false, "fuzzy copy count"),
        req(near_trials, "plongs", true, "near-duplicate trial values"),
        req(near_keys, "plongs", true, "near-duplicate combination keys"),
        req(near_version, "string", false, "near-duplicate version"),
        req(near_count, "pint", false, "near copy count"),
        req(
            near_group,
            "string",
            false,
            "near cluster's representative (collapse)",
        ),
    ];
    out.extend(
        unique
            .into_iter()
            .map(|name| req(name, "boolean", false, "a dimension's unique flag")),
    );
    out
}

/// The internal fields allowed to be neither stored nor docValues, with the reason.
const UNSTORED_INTERNALS: &[(&str, &str)] = &[(
    "_root_",
    "Solr's nested-document field, filled by Solr from the unique key on every add, atomic \
     re-adds included; no one reads it back",
)];

// ---------------------------------------------------------------------------------------------
// The checks; each returns the problems it found
// ---------------------------------------------------------------------------------------------

/// The worker's fields exist as static fields with the right type and shape, and keep their values.
fn worker_field_problems(schema: &Schema) -> Vec<String> {
    let mut problems = Vec::new();
    for req in required_fields() {
        let Some(def) = schema.fields.get(&req.name) else {
            problems.push(format!(
                "{} ({}) is not declared as a field",
                req.name, req.role
            ));
            continue;
        };
        let eff = match schema.effective(def, None) {
            Ok(eff) => eff,
            Err(e) => {
                problems.push(e);
                continue;
            }
        };
        if eff.type_name != req.type_name {
            problems.push(format!(
                "{} has type {}, expected {}",
                req.name, eff.type_name, req.type_name
            ));
        }
        if eff.multi_valued != req.multi_valued {
            problems.push(format!(
                "{} is {}multi-valued, expected {}multi-valued",
                req.name,
                if eff.multi_valued { "" } else { "not " },
                if req.multi_valued { "" } else { "not " },
            ));
        }
        if !eff.stored && !eff.doc_values {
            problems.push(format!("{} is neither stored nor docValues", req.name));
        }
    }
    if schema.unique_key != "id" {
        problems.push(format!("uniqueKey is {:?}, expected id", schema.unique_key));
    }
    // The defaults `effective` applies are those of 1.6; a newer version changes docValues defaults.
    if schema.version != "1.6" {
        problems.push(format!(
            "schema version is {:?}, expected 1.6",
            schema.version
        ));
    }
    problems
}

/// No field or dynamic rule would be lost on an atomic update.
fn lossy_field_problems(schema: &Schema) -> Vec<String> {
    let mut problems = Vec::new();
    let statics = schema.fields.values().map(|d| (d, "field"));
    let dynamics = schema.dynamic.iter().map(|d| (d, "dynamic field"));
    for (def, kind) in statics.chain(dynamics) {
        let eff = match schema.effective(def, None) {
            Ok(eff) => eff,
            Err(e) => {
                problems.push(e);
                continue;
            }
        };
        let allowed = UNSTORED_INTERNALS.iter().any(|(name, _)| *name == def.name);
        let copy_target = schema.copy_field_dests.contains(&def.name);
        if !eff.stored && !eff.doc_values && !allowed && !copy_target {
            problems.push(format!(
                "{kind} {} is neither stored nor docValues: an atomic update would lose it",
                def.name
            ));
        }
    }
    problems
}

/// The first child element with this tag.
fn child<'a, 'i>(node: roxmltree::Node<'a, 'i>, tag: &str) -> Option<roxmltree::Node<'a, 'i>> {
    node.children()
        .find(|n| n.is_element() && n.tag_name().name() == tag)
}

/// The trimmed text of an element.
fn text(node: Option<roxmltree::Node>) -> Option<String> {
    node.and_then(|n| n.text()).map(|t| t.trim().to_owned())
}

/// The text of a child such as `<str name="df">`, looked up by its name attribute.
fn named(node: roxmltree::Node, name: &str) -> Option<String> {
    text(
        node.children()
            .find(|n| n.is_element() && n.attribute("name") == Some(name)),
    )
}

/// What solr-dedup needs from solrconfig.xml, and that it names the schema file that exists.
fn solrconfig_problems(xml: &str, conf_dir: Option<&Path>) -> Vec<String> {
    let doc = match roxmltree::Document::parse(xml) {
        Ok(doc) => doc,
        Err(e) => return vec![format!("solrconfig.xml is not well-formed: {e}")],
    };
    let mut problems = Vec::new();
    let root = doc.root_element();
    match child(root, "updateHandler") {
        None => problems.push("no <updateHandler>".to_owned()),
        Some(handler) => {
            if child(handler, "updateLog").is_none() {
                problems.push(
                    "no <updateLog> in <updateHandler>: atomic updates and _version_ need it"
                        .to_owned(),
                );
            }
            match child(handler, "autoCommit") {
                None => problems.push("no <autoCommit>".to_owned()),
                Some(auto) => {
                    if text(child(auto, "openSearcher")).as_deref() != Some("false") {
                        problems.push("<autoCommit> must have openSearcher=false".to_owned());
                    }
                }
            }
            if let Some(soft) = child(handler, "autoSoftCommit") {
                let max = text(child(soft, "maxTime")).unwrap_or_default();
                if !(max == "-1" || max.ends_with(":-1}")) {
                    problems.push(format!("autoSoftCommit is on (maxTime {max})"));
                }
            }
        }
    }

    match child(root, "schemaFactory") {
        None => problems.push("no <schemaFactory>".to_owned()),
        Some(factory) => {
            if factory.attribute("class") != Some("ManagedIndexSchemaFactory") {
                problems.push("the schema is not a ManagedIndexSchemaFactory schema".to_owned());
            }
            if named(factory, "mutable").as_deref() != Some("true") {
                problems
                    .push("the managed schema is not mutable (schema apply needs it)".to_owned());
            }
            match named(factory, "managedSchemaResourceName") {
                None => problems.push("managedSchemaResourceName is not set".to_owned()),
                Some(file) => {
                    if let Some(dir) = conf_dir {
                        if !dir.join(&file).is_file() {
                            problems.push(format!("the managed schema {file} is not in conf/"));
                        }
                    }
                }
            }
        }
    }

    let select = root.children().find(|n| {
        n.is_element()
            && n.tag_name().name() == "requestHandler"
            && n.attribute("name") == Some("/select")
    });
    match select {
        None => problems.push("no /select request handler".to_owned()),
        Some(select) => {
            let df = child(select, "lst")
                .filter(|l| l.attribute("name") == Some("defaults"))
                .and_then(|defaults| named(defaults, "df"));
            if df.as_deref() != Some("text_t") {
                problems.push(format!("/select has df {df:?}, expected text_t"));
            }
        }
    }

    // Schemaless mode would accept unknown fields instead of the 400 the worker relies on.
    if xml.contains("add-unknown-fields-to-the-schema") {
        problems.push("schemaless field guessing is configured".to_owned());
    }
    problems
}

/// The worker's fields resolve in the transcripts' schema to the same type and shape, and every
/// field, dynamic rule and type of that core exists here alike.
fn transcript_problems(ours: &Schema, theirs: &Schema) -> Vec<String> {
    let mut problems = Vec::new();
    for req in required_fields() {
        let (o, t) = match (ours.resolve(&req.name), theirs.resolve(&req.name)) {
            (Ok(o), Ok(t)) => (o, t),
            (Err(e), _) | (_, Err(e)) => {
                problems.push(e);
                continue;
            }
        };
        match (o, t) {
            (None, _) => problems.push(format!("{} is missing from the configset", req.name)),
            (_, None) => problems.push(format!(
                "{} does not resolve in the transcripts' schema",
                req.name
            )),
            (Some(o), Some(t)) => {
                if (&o.type_name, &o.class, o.multi_valued)
                    != (&t.type_name, &t.class, t.multi_valued)
                {
                    problems.push(format!(
                        "{}: configset has {} ({}, multiValued={}), transcripts' core has {} ({}, \
                         multiValued={})",
                        req.name,
                        o.type_name,
                        o.class,
                        o.multi_valued,
                        t.type_name,
                        t.class,
                        t.multi_valued
                    ));
                }
                if (o.stored, o.doc_values) != (t.stored, t.doc_values) {
                    problems.push(format!(
                        "{}: configset stored={} docValues={}, transcripts' core stored={} \
                         docValues={}",
                        req.name, o.stored, o.doc_values, t.stored, t.doc_values
                    ));
                }
            }
        }
    }
    for (name, theirs_ty) in &theirs.types {
        match ours.types.get(name) {
            None => problems.push(format!(
                "field type {name} of the transcripts' core is missing"
            )),
            Some(ty) => {
                let shape =
                    |t: &FieldType| (t.class.clone(), t.multi_valued, t.doc_values, t.stored);
                if shape(ty) != shape(theirs_ty) {
                    problems.push(format!(
                        "field type {name} differs: {ty:?} here, {theirs_ty:?} on the transcripts' core"
                    ));
                }
            }
        }
    }
    for def in theirs.fields.values() {
        match ours.fields.get(&def.name) {
            None => problems.push(format!(
                "field {} of the transcripts' core is missing",
                def.name
            )),
            Some(o) => {
                let shape = |s: &Schema, d: &FieldDef| s.effective(d, None).ok();
                if shape(ours, o) != shape(theirs, def) {
                    problems.push(format!(
                        "field {} differs from the transcripts' core",
                        def.name
                    ));
                }
            }
        }
    }
    for def in &theirs.dynamic {
        match ours.dynamic.iter().find(|o| o.name == def.name) {
            None => problems.push(format!(
                "dynamic field {} of the transcripts' core is missing",
                def.name
            )),
            Some(o) => {
                if ours.effective(o, None).ok() != theirs.effective(def, None).ok() {
                    problems.push(format!(
                        "dynamic field {} differs from the transcripts' core",
                        def.name
                    ));
                }
            }
        }
    }
    problems
}

// ---------------------------------------------------------------------------------------------
// Files
// ---------------------------------------------------------------------------------------------

fn configset_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schema")
}

/// A file of this checkout, by its path from the checkout's root; panics, naming the path, when it
/// is missing.
fn checkout_file(relative: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    assert!(
        path.is_file(),
        "{} is missing: the configset tests read the checkout's own copy",
        path.display()
    );
    path
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn our_schema_xml() -> String {
    read(&checkout_file("schema/conf/managed-schema.xml"))
}

fn our_solrconfig_xml() -> String {
    read(&checkout_file("schema/conf/solrconfig.xml"))
}

fn our_schema() -> Schema {
    Schema::parse(&our_schema_xml())
        .unwrap_or_else(|e| panic!("schema/conf/managed-schema.xml: {e}"))
}

/// The schema of the core the transcripts were recorded on: the checkout's copy under
/// `tests/fixtures/solr-transcripts` (the one the transcript tests replay too), never a directory
/// outside the checkout.
fn transcripts_schema_path() -> PathBuf {
    checkout_file("tests/fixtures/solr-transcripts/managed-schema.xml")
}

fn assert_none(what: &str, problems: Vec<String>) {
    assert!(problems.is_empty(), "{what}:\n  {}", problems.join("\n  "));
}

// ---------------------------------------------------------------------------------------------
// Tests on the real files
// ---------------------------------------------------------------------------------------------

#[test]
fn layout_is_what_solr_precreate_copies() {
    // precreate-core copies DIR to /var/solr/data/CORE and adds core.properties: the configuration
    // must be in DIR/conf, and no core.properties may come along (it would name another core).
    let dir = configset_dir();
    for file in ["conf/solrconfig.xml", "conf/managed-schema.xml"] {
        let path = dir.join(file);
        assert!(path.is_file(), "{} is missing", path.display());
    }
    assert!(!dir.join("core.properties").exists());
    assert!(
        !dir.join("conf/schema.xml").exists(),
        "a schema.xml beside a managed schema is ignored"
    );
    let schema = our_schema();
    for file in &schema.resources {
        assert!(
            dir.join("conf").join(file).is_file(),
            "the schema refers to {file}, which is not in schema/conf"
        );
    }
}

#[test]
fn worker_fields_are_declared_with_their_types() {
    assert_none("worker fields", worker_field_problems(&our_schema()));
}

#[test]
fn no_field_is_lost_on_an_atomic_update() {
    assert_none("lossy fields", lossy_field_problems(&our_schema()));
    // The allowed exceptions really are neither stored nor docValues (else the list is stale).
    let schema = our_schema();
    for (name, reason) in UNSTORED_INTERNALS {
        let eff = schema.resolve(name).unwrap().expect(name);
        assert!(
            !eff.stored && !eff.doc_values,
            "{name} ({reason}) is kept now"
        );
    }
}

#[test]
fn version_is_not_stored_but_has_doc_values() {
    // Solr requires _version_ to be indexed or docValues; the recorded core has docValues only.
    let eff = our_schema().resolve("_version_").unwrap().unwrap();
    assert_eq!(eff.type_name, "plong");
    assert!(eff.doc_values && !eff.stored);
}

#[test]
fn solrconfig_has_what_solr_dedup_needs() {
    let conf = configset_dir().join("conf");
    assert_none(
        "solrconfig.xml",
        solrconfig_problems(&our_solrconfig_xml(), Some(&conf)),
    );
}

#[test]
fn fields_agree_with_the_transcripts_core() {
    let path = transcripts_schema_path();
    let theirs = Schema::parse(&read(&path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_none(
        "configset against the transcripts' core",
        transcript_problems(&our_schema(), &theirs),
    );
    // The three fields the recorded core only had through dynamic rules resolve as expected there.
    for (name, rule) in [
        ("title_exact_signature_l", "*_l"),
        ("description_exact_signature_l", "*_l"),
        ("description_unique_b", "*_b"),
    ] {
        let eff = theirs.resolve(name).unwrap().unwrap();
        assert_eq!(eff.dynamic_base.as_deref(), Some(rule), "{name}");
    }
}

#[test]
fn the_transcripts_schema_is_the_checkouts_own_copy() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    assert_eq!(
        transcripts_schema_path(),
        manifest.join("tests/fixtures/solr-transcripts/managed-schema.xml")
    );
}

#[test]
#[should_panic(expected = "tests/fixtures/solr-transcripts/no-such-schema.xml is missing")]
fn a_missing_file_fails_naming_its_path() {
    checkout_file("tests/fixtures/solr-transcripts/no-such-schema.xml");
}

// ---------------------------------------------------------------------------------------------
// The checks fail on broken configsets
// ---------------------------------------------------------------------------------------------

/// The real schema with one edit, which must apply.
fn edited_schema(from: &str, to: &str) -> Schema {
    let xml = our_schema_xml();
    assert!(
        xml.contains(from),
        "the edit's anchor {from:?} is not in the schema"
    );
    Schema::parse(&xml.replacen(from, to, 1)).unwrap()
}

fn assert_flags(problems: Vec<String>, needle: &str) {
    assert!(
        problems.iter().any(|p| p.contains(needle)),
        "expected a problem mentioning {needle:?}, got {problems:?}"
    );
}

#[test]
fn a_missing_worker_field_is_caught() {
    let schema = edited_schema(
        r#"<field name="www_unique_b""#,
        r#"<field name="www_unique_x""#,
    );
    assert_flags(worker_field_problems(&schema), "www_unique_b");
}

#[test]
fn a_wrong_type_or_shape_is_caught() {
    let schema = edited_schema(
        r#"name="exact_signature_copycount_i" type="pint""#,
        r#"name="exact_signature_copycount_i" type="plong""#,
    );
    assert_flags(
        worker_field_problems(&schema),
        "exact_signature_copycount_i",
    );
    let schema = edited_schema(
        r#"<field name="title"           type="text_general" indexed="true" stored="true" multiValued="true"/>"#,
        r#"<field name="title"           type="text_general" indexed="true" stored="true"/>"#,
    );
    assert_flags(worker_field_problems(&schema), "title is not multi-valued");
}

#[test]
fn an_unstored_field_or_rule_is_caught() {
    // A text field cannot have docValues, so stored=false loses it.
    let schema = edited_schema(
        r#"<field name="text_t"          type="text_general" indexed="true" stored="true"/>"#,
        r#"<field name="text_t"          type="text_general" indexed="true" stored="false"/>"#,
    );
    assert_flags(lossy_field_problems(&schema), "text_t");
    assert_flags(worker_field_problems(&schema), "text_t");
    // A dynamic rule whose type has no docValues.
    let schema = edited_schema(
        r#"<dynamicField name="*_s"   type="string"       indexed="true" stored="true"/>"#,
        r#"<dynamicField name="*_s"   type="string"       indexed="true" stored="false" docValues="false"/>"#,
    );
    assert_flags(lossy_field_problems(&schema), "*_s");
    // stored=false is fine where docValues keep the value (Solr returns it as if stored).
    let schema = edited_schema(
        r#"<field name="host_s"          type="string"       indexed="true" stored="true"/>"#,
        r#"<field name="host_s"          type="string"       indexed="true" stored="false"/>"#,
    );
    assert_none("docValues-only field", lossy_field_problems(&schema));
}

#[test]
fn a_copy_field_target_may_be_unstored() {
    let schema = edited_schema(
        r#"<field name="host_s"          type="string"       indexed="true" stored="true"/>"#,
        r#"<field name="host_s"          type="string"       indexed="true" stored="false" docValues="false"/>
  <copyField source="sku" dest="host_s"/>"#,
    );
    assert_none("copy-field target", lossy_field_problems(&schema));
}

#[test]
fn a_solrconfig_without_update_log_is_caught() {
    let xml = our_solrconfig_xml();
    let start = xml.find("<updateLog>").unwrap();
    let end = xml.find("</updateLog>").unwrap() + "</updateLog>".len();
    let broken = format!("{}{}", &xml[..start], &xml[end..]);
    assert_flags(solrconfig_problems(&broken, None), "updateLog");

    let broken = xml.replacen(
        "<openSearcher>false</openSearcher>",
        "<openSearcher>true</openSearcher>",
        1,
    );
    assert_flags(solrconfig_problems(&broken, None), "openSearcher");
    let broken = xml.replacen(
        r#"<str name="df">text_t</str>"#,
        r#"<str name="df">text</str>"#,
        1,
    );
    assert_flags(solrconfig_problems(&broken, None), "df");
    let broken = xml.replacen(
        r#"<bool name="mutable">true</bool>"#,
        r#"<bool name="mutable">false</bool>"#,
        1,
    );
    assert_flags(solrconfig_problems(&broken, None), "mutable");
}

#[test]
fn a_disagreement_with_the_transcripts_core_is_caught() {
    let theirs = Schema::parse(&our_schema_xml()).unwrap();
    // A worker field with another type here than there.
    let ours = edited_schema(
        r#"name="fuzzy_signature_l"             type="plong""#,
        r#"name="fuzzy_signature_l"             type="pint""#,
    );
    assert_flags(transcript_problems(&ours, &theirs), "fuzzy_signature_l");
    // A dynamic rule of that core missing here.
    let ours = edited_schema(
        r#"<dynamicField name="*_val""#,
        r#"<dynamicField name="*_vals""#,
    );
    assert_flags(transcript_problems(&ours, &theirs), "*_val");
}

#[test]
fn dynamic_rules_resolve_like_solr() {
    assert!(glob_matches("*_l", "title_exact_signature_l"));
    assert!(!glob_matches("*_l", "_l"));
    assert!(glob_matches("attr_*", "attr_x"));
    // A worker field the schema did not declare falls back to its suffix rule, with the rule's shape.
    let schema = edited_schema(
        r#"<field name="description_txt""#,
        r#"<field name="description_other""#,
    );
    let eff = schema.resolve("description_txt").unwrap().unwrap();
    assert_eq!(eff.dynamic_base.as_deref(), Some("*_txt"));
    assert!(eff.multi_valued);
}
