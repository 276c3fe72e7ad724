//! Reading typed values out of a stored document, and the 64-bit key hash.

use serde_json::Value;

use crate::store::Doc;

/// A 64-bit key for a string (XXH3). Never persisted; collisions are detected in pass B.
pub(super) fn key_hash(s: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(s.as_bytes())
}

pub(super) fn has(doc: &Doc, field: &str) -> bool {
    !matches!(doc.get(field), None | Some(Value::Null))
}

pub(crate) fn get_i64(doc: &Doc, field: &str) -> Option<i64> {
    match doc.get(field)? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.parse().ok(),
        Value::Array(a) => a.first().and_then(|v| v.as_i64()),
        _ => None,
    }
}

pub(crate) fn get_bool(doc: &Doc, field: &str) -> Option<bool> {
    match doc.get(field)? {
        Value::Bool(b) => Some(*b),
        Value::String(s) => Some(s.starts_with(['t', 'T', '1'])),
        // The in-place profile's flags: 1 or 0; any other value (-1, what the index-time signing
        // chain writes first) is no decision yet.
        Value::Number(n) => match n.as_i64() {
            Some(1) => Some(true),
            Some(0) => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// A value as text: a string as it is, a number written out (the in-place profile's near group
/// is a number where YaCy's is the representative's id).
pub(crate) fn get_text(doc: &Doc, field: &str) -> Option<String> {
    match doc.get(field)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Array(a) => a.first().and_then(|v| match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }),
        _ => None,
    }
}

pub(crate) fn get_str<'d>(doc: &'d Doc, field: &str) -> Option<&'d str> {
    match doc.get(field)? {
        Value::String(s) => Some(s),
        Value::Array(a) => a.first().and_then(Value::as_str),
        _ => None,
    }
}

pub(crate) fn get_strings<'d>(doc: &'d Doc, field: &str) -> Vec<&'d str> {
    match doc.get(field) {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_flag_is_decided_only_as_true_false_1_or_0() {
        let doc: Doc = json!({"b": true, "one": 1, "zero": 0, "first": -1, "two": 2})
            .as_object()
            .unwrap()
            .clone();
        assert_eq!(get_bool(&doc, "b"), Some(true));
        assert_eq!(get_bool(&doc, "one"), Some(true));
        assert_eq!(get_bool(&doc, "zero"), Some(false));
        // What the signing chain writes first (solr-plugin), and anything else: no decision.
        assert_eq!(get_bool(&doc, "first"), None);
        assert_eq!(get_bool(&doc, "two"), None);
        assert_eq!(get_bool(&doc, "missing"), None);
    }
}
