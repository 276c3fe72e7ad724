//! A crawled page as a Solr document, built by the roles of its fields rather than their names:
//! `page("a").url("https://a.org/").text(TEXT).version(V).build()`. The names are the worker's
//! (YaCy's by default, [`FieldNames::default`]); [`Page::under`] builds the same page for a core
//! whose fields are renamed (`--field NAME=FIELD`). Multi-valued fields (the title, the
//! description) are written as arrays, as Solr stores them.

use serde_json::{json, Map, Value};
use solr_dedup::engine::FieldNames;

/// The `_version_` tests give a page that a core would have indexed once.
pub const VERSION: i64 = 1_800_000_000_000_000_000;

/// A document being built.
#[derive(Debug, Clone)]
pub struct Page {
    names: FieldNames,
    doc: Map<String, Value>,
}

/// A page with this id and nothing else yet.
pub fn page(id: &str) -> Page {
    Page::under(FieldNames::default(), id)
}

impl Page {
    /// A page with this id, under these field names.
    pub fn under(names: FieldNames, id: &str) -> Page {
        let mut doc = Map::new();
        doc.insert(names.id.clone(), json!(id));
        Page { names, doc }
    }

    fn set(mut self, name: String, value: Value) -> Page {
        self.doc.insert(name, value);
        self
    }

    /// The URL.
    pub fn url(self, url: &str) -> Page {
        let name = self.names.url.clone();
        self.set(name, json!(url))
    }

    /// The page text.
    pub fn text(self, text: &str) -> Page {
        let name = self.names.text.clone();
        self.set(name, json!(text))
    }

    /// The title (one value).
    pub fn title(self, title: &str) -> Page {
        let name = self.names.title.clone();
        self.set(name, json!([title]))
    }

    /// The description (one value).
    pub fn description(self, description: &str) -> Page {
        let name = self.names.description.clone();
        self.set(name, json!([description]))
    }

    /// The `_version_`.
    pub fn version(self, version: i64) -> Page {
        let name = self.names.version.clone();
        self.set(name, json!(version))
    }

    /// Any other field, by name (`host_s`, a stored flag, a signature).
    pub fn field(self, name: &str, value: impl Into<Value>) -> Page {
        self.set(name.to_owned(), value.into())
    }

    /// The document.
    pub fn build(self) -> Value {
        Value::Object(self.doc)
    }
}

impl From<Page> for Value {
    fn from(page: Page) -> Value {
        page.build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_by_roles_is_the_document_by_yacy_names() {
        let built = page("a")
            .url("https://a.org/x")
            .text("some text")
            .title("A title")
            .description("A description")
            .version(7)
            .field("host_s", "a.org")
            .build();
        assert_eq!(
            built,
            json!({"id": "a", "sku": "https://a.org/x", "text_t": "some text",
                   "title": ["A title"], "description_txt": ["A description"],
                   "_version_": 7, "host_s": "a.org"})
        );
    }

    #[test]
    fn a_page_under_renamed_fields_uses_the_new_names() {
        let names = FieldNames {
            url: "url_s".into(),
            text: "content_t".into(),
            ..FieldNames::default()
        };
        let built = Page::under(names, "a")
            .url("https://a.org/")
            .text("t")
            .build();
        assert_eq!(
            built,
            json!({"id": "a", "url_s": "https://a.org/", "content_t": "t"})
        );
    }
}
