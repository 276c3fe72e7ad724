//! The in-place profile's part of the schema fit: which conditions of Solr's in-place updates a
//! field fails, and which profile a core's schema holds.

use super::{Dimension, EngineConfig};
use crate::model::Profile;
use crate::solr_client::schema::SchemaInfo;

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
