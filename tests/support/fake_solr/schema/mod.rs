//! The managed schema: field types, fields, dynamic-field rules and copy fields, read from a
//! `managed-schema.xml`, resolved into effective properties the way Solr resolves them (type
//! defaults, then the field's own attributes), and served and changed through the Schema API.
//!
//! Tests change it directly through [`crate::support::fake_solr::FakeSolr::edit_schema`], for
//! instance to make a field `stored=false docValues=false` and see an atomic update lose it.
//! The Schema API's reads and writes are in [`api`].

mod api;

/// What a field type stores and how it compares, reduced from its Java class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Str,
    Bool,
    Int,
    Long,
    Float,
    Double,
    Date,
    Text,
    LatLon,
    Other,
}

impl Kind {
    fn from_class(class: &str) -> Kind {
        let short = class.rsplit('.').next().unwrap_or(class);
        match short {
            "StrField" | "SortableTextField" | "UUIDField" => Kind::Str,
            "BoolField" => Kind::Bool,
            "IntPointField" | "TrieIntField" => Kind::Int,
            "LongPointField" | "TrieLongField" => Kind::Long,
            "FloatPointField" | "TrieFloatField" => Kind::Float,
            "DoublePointField" | "TrieDoubleField" => Kind::Double,
            "DatePointField" | "TrieDateField" => Kind::Date,
            "TextField" => Kind::Text,
            "LatLonPointSpatialField" => Kind::LatLon,
            _ => Kind::Other,
        }
    }

    /// Point fields: numbers and dates.
    pub fn is_point(self) -> bool {
        matches!(
            self,
            Kind::Int | Kind::Long | Kind::Float | Kind::Double | Kind::Date
        )
    }
}

/// Solr's field property names, in the order of `FieldProperties` (bit i is `1 << i`).
pub const PROP_NAMES: [&str; 20] = [
    "indexed",
    "tokenized",
    "stored",
    "binary",
    "omitNorms",
    "omitTermFreqAndPositions",
    "termVectors",
    "termPositions",
    "termOffsets",
    "multiValued",
    "sortMissingFirst",
    "sortMissingLast",
    "required",
    "omitPositions",
    "storeOffsetsWithPositions",
    "docValues",
    "termPayloads",
    "useDocValuesAsStored",
    "large",
    "uninvertible",
];

fn prop_bit(name: &str) -> Option<u32> {
    PROP_NAMES
        .iter()
        .position(|p| *p == name)
        .map(|i| 1u32 << i)
}

fn bit(name: &str) -> u32 {
    prop_bit(name).expect("known property")
}

/// An analyzer chain as declared (only for showing it; the fake always tokenizes text with a
/// standard tokenizer and a lowercase filter).
#[derive(Clone, Debug, PartialEq)]
pub struct Analyzer {
    pub tokenizer: Vec<(String, String)>,
    pub filters: Vec<Vec<(String, String)>>,
}

/// A `<fieldType>`.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldType {
    pub name: String,
    pub class: String,
    /// Declared attributes other than `name` and `class`, as written.
    pub attrs: Vec<(String, String)>,
    /// `(type, analyzer)` with type `index`, `query` or `` for a single `<analyzer>`.
    pub analyzers: Vec<(String, Analyzer)>,
}

/// A `<field>` or `<dynamicField>` declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldDef {
    pub name: String,
    pub type_name: String,
    /// Declared attributes other than `name` and `type`, as written (`"true"`, `"false"`, …).
    pub attrs: Vec<(String, String)>,
}

impl FieldDef {
    pub fn new(name: &str, type_name: &str, attrs: &[(&str, &str)]) -> FieldDef {
        FieldDef {
            name: name.into(),
            type_name: type_name.into(),
            attrs: attrs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    /// Sets (or adds) a declared attribute, e.g. `set("stored", "false")`.
    pub fn set(&mut self, key: &str, value: &str) {
        if let Some(slot) = self.attrs.iter_mut().find(|(k, _)| k == key) {
            slot.1 = value.into();
        } else {
            self.attrs.push((key.into(), value.into()));
        }
    }

    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// A `<copyField>`.
#[derive(Clone, Debug, PartialEq)]
pub struct CopyField {
    pub source: String,
    pub dest: String,
}

/// A field as Solr sees it once its type and rule are resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct SField {
    pub name: String,
    pub type_name: String,
    pub kind: Kind,
    /// Effective properties, bits as in [`PROP_NAMES`].
    pub props: u32,
    /// The dynamic rule that matched, when the field is not declared.
    pub dynamic_base: Option<String>,
}

impl SField {
    pub fn has(&self, prop: &str) -> bool {
        self.props & bit(prop) != 0
    }
    pub fn stored(&self) -> bool {
        self.has("stored")
    }
    pub fn doc_values(&self) -> bool {
        self.has("docValues")
    }
    pub fn multi_valued(&self) -> bool {
        self.has("multiValued")
    }
    pub fn sort_missing_last(&self) -> bool {
        self.has("sortMissingLast")
    }
    pub fn sort_missing_first(&self) -> bool {
        self.has("sortMissingFirst")
    }
    /// Returned by `fl=*` and `/get`: stored, or docValues used as stored.
    pub fn returned(&self) -> bool {
        self.stored() || (self.doc_values() && self.has("useDocValuesAsStored"))
    }

    /// `SchemaField.toString()`: `text_t{type=text_general,properties=indexed,tokenized,…}`.
    pub fn java_string(&self) -> String {
        let props: Vec<&str> = PROP_NAMES
            .iter()
            .enumerate()
            .filter(|(i, _)| self.props & (1 << i) != 0)
            .map(|(_, n)| *n)
            .collect();
        format!(
            "{}{{type={},properties={}}}",
            self.name,
            self.type_name,
            props.join(",")
        )
    }
}

/// The schema of the fake core.
#[derive(Clone, Debug, PartialEq)]
pub struct Schema {
    pub name: String,
    pub version: String,
    pub unique_key: String,
    pub field_types: Vec<FieldType>,
    pub fields: Vec<FieldDef>,
    pub dynamic_fields: Vec<FieldDef>,
    pub copy_fields: Vec<CopyField>,
}

const TRANSCRIPT_SCHEMA: &str =
    include_str!("../../../fixtures/solr-transcripts/managed-schema.xml");

impl Schema {
    /// The schema of the core the transcripts were recorded on.
    pub fn transcripts() -> Schema {
        Schema::from_xml(TRANSCRIPT_SCHEMA).expect("the transcripts' schema parses")
    }

    /// Reads a `managed-schema.xml` / `schema.xml`.
    pub fn from_xml(xml: &str) -> Result<Schema, String> {
        let doc = roxmltree::Document::parse(xml).map_err(|e| e.to_string())?;
        let root = doc.root_element();
        if root.tag_name().name() != "schema" {
            return Err("root element is not <schema>".into());
        }
        let mut schema = Schema {
            name: root.attribute("name").unwrap_or("").into(),
            version: root.attribute("version").unwrap_or("1.6").into(),
            unique_key: String::new(),
            field_types: Vec::new(),
            fields: Vec::new(),
            dynamic_fields: Vec::new(),
            copy_fields: Vec::new(),
        };
        let mut nodes: Vec<roxmltree::Node> = root.children().filter(|n| n.is_element()).collect();
        // Old schemas wrap declarations in <types> and <fields>.
        let mut i = 0;
        while i < nodes.len() {
            let n = nodes[i];
            if matches!(n.tag_name().name(), "types" | "fields") {
                let inner: Vec<roxmltree::Node> = n.children().filter(|c| c.is_element()).collect();
                nodes.splice(i..=i, inner);
                continue;
            }
            i += 1;
        }
        for n in nodes {
            let attrs_except = |skip: &[&str]| -> Vec<(String, String)> {
                n.attributes()
                    .filter(|a| !skip.contains(&a.name()))
                    .map(|a| (a.name().to_string(), a.value().to_string()))
                    .collect()
            };
            match n.tag_name().name() {
                "uniqueKey" => schema.unique_key = n.text().unwrap_or("").trim().into(),
                "fieldType" | "fieldtype" => {
                    let mut analyzers = Vec::new();
                    for a in n.children().filter(|c| c.has_tag_name("analyzer")) {
                        let mut an = Analyzer {
                            tokenizer: Vec::new(),
                            filters: Vec::new(),
                        };
                        for part in a.children().filter(|c| c.is_element()) {
                            let kv: Vec<(String, String)> = part
                                .attributes()
                                .map(|x| (x.name().to_string(), x.value().to_string()))
                                .collect();
                            match part.tag_name().name() {
                                "tokenizer" => an.tokenizer = kv,
                                "filter" => an.filters.push(kv),
                                _ => {}
                            }
                        }
                        analyzers.push((a.attribute("type").unwrap_or("").to_string(), an));
                    }
                    schema.field_types.push(FieldType {
                        name: n.attribute("name").unwrap_or("").into(),
                        class: n.attribute("class").unwrap_or("").into(),
                        attrs: attrs_except(&["name", "class"]),
                        analyzers,
                    });
                }
                "field" | "dynamicField" => {
                    let def = FieldDef {
                        name: n.attribute("name").unwrap_or("").into(),
                        type_name: n.attribute("type").unwrap_or("").into(),
                        attrs: attrs_except(&["name", "type"]),
                    };
                    if n.tag_name().name() == "field" {
                        schema.fields.push(def);
                    } else {
                        schema.dynamic_fields.push(def);
                    }
                }
                "copyField" => schema.copy_fields.push(CopyField {
                    source: n.attribute("source").unwrap_or("").into(),
                    dest: n.attribute("dest").unwrap_or("").into(),
                }),
                _ => {}
            }
        }
        Ok(schema)
    }

    pub fn field_type(&self, name: &str) -> Option<&FieldType> {
        self.field_types.iter().find(|t| t.name == name)
    }

    /// The declared (not dynamic) field `name`, for changing it.
    pub fn field_mut(&mut self, name: &str) -> Option<&mut FieldDef> {
        self.fields.iter_mut().find(|f| f.name == name)
    }

    /// Adds or replaces a declared field.
    pub fn put_field(&mut self, def: FieldDef) {
        if let Some(slot) = self.fields.iter_mut().find(|f| f.name == def.name) {
            *slot = def;
        } else {
            self.fields.push(def);
        }
    }

    /// Removes a declared field; true when it was there.
    pub fn remove_field(&mut self, name: &str) -> bool {
        let before = self.fields.len();
        self.fields.retain(|f| f.name != name);
        before != self.fields.len()
    }

    /// Dynamic rules in Solr's order: longer patterns first, ties in declaration order.
    pub fn dynamic_in_order(&self) -> Vec<&FieldDef> {
        let mut v: Vec<&FieldDef> = self.dynamic_fields.iter().collect();
        v.sort_by_key(|d| std::cmp::Reverse(d.name.len()));
        v
    }

    fn dynamic_rule(&self, name: &str) -> Option<&FieldDef> {
        self.dynamic_in_order()
            .into_iter()
            .find(|d| glob_matches(&d.name, name))
    }

    /// The field `name`, declared or matched by a dynamic rule.
    pub fn field(&self, name: &str) -> Option<SField> {
        if let Some(def) = self.fields.iter().find(|f| f.name == name) {
            return self.resolve(def, name, None);
        }
        let rule = self.dynamic_rule(name)?;
        self.resolve(rule, name, Some(rule.name.clone()))
    }

    /// The declared field only (no dynamic rule).
    pub fn declared(&self, name: &str) -> Option<SField> {
        let def = self.fields.iter().find(|f| f.name == name)?;
        self.resolve(def, name, None)
    }

    fn type_props(&self, t: &FieldType) -> u32 {
        let kind = Kind::from_class(&t.class);
        let mut p =
            bit("indexed") | bit("stored") | bit("uninvertible") | bit("useDocValuesAsStored");
        if kind == Kind::Text {
            p |= bit("tokenized");
        } else {
            p |= bit("omitNorms") | bit("omitTermFreqAndPositions");
        }
        apply_attrs(p, &t.attrs)
    }

    fn resolve(&self, def: &FieldDef, name: &str, dynamic_base: Option<String>) -> Option<SField> {
        let t = self.field_type(&def.type_name)?;
        let mut p = apply_attrs(self.type_props(t), &def.attrs);
        if def.attr("sortMissingFirst") == Some("true") {
            p &= !bit("sortMissingLast");
        }
        if def.attr("sortMissingLast") == Some("true") {
            p &= !bit("sortMissingFirst");
        }
        if p & bit("indexed") == 0 {
            p &= !(bit("termVectors")
                | bit("termPositions")
                | bit("termOffsets")
                | bit("termPayloads")
                | bit("uninvertible")
                | bit("omitNorms")
                | bit("omitTermFreqAndPositions")
                | bit("omitPositions"));
        }
        Some(SField {
            name: name.into(),
            type_name: def.type_name.clone(),
            kind: Kind::from_class(&t.class),
            props: p,
            dynamic_base,
        })
    }

    /// Destinations of copy fields whose source matches `field`.
    pub fn copy_dests(&self, field: &str) -> Vec<String> {
        self.copy_fields
            .iter()
            .filter(|c| glob_matches(&c.source, field))
            .map(|c| {
                if c.dest.contains('*') && c.source.contains('*') {
                    // `*_t` → `*_s`: the part the star matched carries over.
                    let matched = star_part(&c.source, field);
                    c.dest.replace('*', &matched)
                } else {
                    c.dest.clone()
                }
            })
            .collect()
    }

    pub fn is_copy_dest(&self, field: &str) -> bool {
        self.copy_fields
            .iter()
            .any(|c| glob_matches(&c.dest, field))
    }
}

fn apply_attrs(mut p: u32, attrs: &[(String, String)]) -> u32 {
    for (k, v) in attrs {
        if let Some(b) = prop_bit(k) {
            if v == "true" {
                p |= b;
            } else if v == "false" {
                p &= !b;
            }
        }
    }
    p
}

/// Solr's dynamic-field patterns: `*_s`, `attr_*` or `*`.
pub fn glob_matches(pattern: &str, name: &str) -> bool {
    if pattern == "*" {
        return true;
    }
    if let Some(suffix) = pattern.strip_prefix('*') {
        return name.len() > suffix.len() && name.ends_with(suffix);
    }
    if let Some(prefix) = pattern.strip_suffix('*') {
        return name.len() > prefix.len() && name.starts_with(prefix);
    }
    pattern == name
}

fn star_part(pattern: &str, name: &str) -> String {
    if let Some(suffix) = pattern.strip_prefix('*') {
        return name[..name.len() - suffix.len()].to_string();
    }
    if let Some(prefix) = pattern.strip_suffix('*') {
        return name[prefix.len()..].to_string();
    }
    String::new()
}
