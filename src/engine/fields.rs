//! Field names. YaCy's by default; every one can be renamed, as YaCy installations can.

use super::Dimension;

/// The names of every field the worker reads or writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldNames {
    /// The unique key.
    pub id: String,
    /// The URL.
    pub url: String,
    /// The page text.
    pub text: String,
    /// The title (multi-valued; the first value counts).
    pub title: String,
    /// The description (multi-valued; all values count, in order).
    pub description: String,
    /// Solr's optimistic-concurrency version.
    pub version: String,
    /// `exact_signature_l`.
    pub exact_signature: String,
    /// `fuzzy_signature_l`.
    pub fuzzy_signature: String,
    /// `fuzzy_signature_text_t` (the `yacy` profile with raw and quantised counts).
    pub fuzzy_signature_text: String,
    /// `title_exact_signature_l`.
    pub title_signature: String,
    /// `description_exact_signature_l`.
    pub description_signature: String,
    /// `*_unique_b` per dimension, in [`Dimension::ALL`] order.
    pub unique: [String; 6],
    /// `exact_signature_copycount_i`.
    pub exact_count: String,
    /// `fuzzy_signature_copycount_i`.
    pub fuzzy_count: String,
}

impl Default for FieldNames {
    fn default() -> Self {
        FieldNames {
            id: "id".into(),
            url: "sku".into(),
            text: "text_t".into(),
            title: "title".into(),
            description: "description_txt".into(),
            version: "_version_".into(),
            exact_signature: "exact_signature_l".into(),
            fuzzy_signature: "fuzzy_signature_l".into(),
            fuzzy_signature_text: "fuzzy_signature_text_t".into(),
            title_signature: "title_exact_signature_l".into(),
            description_signature: "description_exact_signature_l".into(),
            unique: [
                "exact_signature_unique_b".into(),
                "fuzzy_signature_unique_b".into(),
                "title_unique_b".into(),
                "description_unique_b".into(),
                "www_unique_b".into(),
                "http_unique_b".into(),
            ],
            exact_count: "exact_signature_copycount_i".into(),
            fuzzy_count: "fuzzy_signature_copycount_i".into(),
        }
    }
}

impl FieldNames {
    /// The flag field of a dimension.
    pub fn unique(&self, d: Dimension) -> &str {
        &self.unique[d.index()]
    }

    /// The copy-count field of a dimension, for exact and fuzzy.
    pub fn count(&self, d: Dimension) -> Option<&str> {
        match d {
            Dimension::Exact => Some(&self.exact_count),
            Dimension::Fuzzy => Some(&self.fuzzy_count),
            _ => None,
        }
    }

    /// The stored signature a content dimension groups by.
    pub fn signature(&self, d: Dimension) -> Option<&str> {
        match d {
            Dimension::Exact => Some(&self.exact_signature),
            Dimension::Fuzzy => Some(&self.fuzzy_signature),
            Dimension::Title => Some(&self.title_signature),
            Dimension::Description => Some(&self.description_signature),
            Dimension::Www | Dimension::Http => None,
        }
    }
}
