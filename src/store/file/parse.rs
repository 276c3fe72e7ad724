//! Projected parsing: a line becomes a document holding only the requested fields; the others are
//! checked but never allocated.

use super::*;

/// Deserialises a JSON object keeping only some fields; `None` when the value is not an object.
pub(super) struct Projection<'a> {
    pub(super) keep: Option<&'a [String]>,
    pub(super) id_field: &'a str,
    /// Kept whatever `keep` says, to be checked the way Solr would.
    pub(super) version_field: &'a str,
}

impl<'de> serde::de::DeserializeSeed<'de> for Projection<'_> {
    type Value = Option<Doc>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Projection<'_> {
    type Value = Option<Doc>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut doc = Doc::new();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let wanted = key == self.id_field
                || key == self.version_field
                || self.keep.is_none_or(|k| k.iter().any(|f| *f == key));
            if wanted {
                let v: Value = map.next_value()?;
                doc.insert(key.into_owned(), v);
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(Some(doc))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

pub(super) fn project(mut doc: Doc, fields: &[String], id_field: &str) -> Doc {
    if fields.iter().any(|f| f == "*") {
        return doc;
    }
    // The unique key comes with every document, asked for or not (the Solr store adds it to `fl`).
    doc.retain(|k, _| k == id_field || fields.iter().any(|f| f == k));
    doc
}
