//! What a reader derived from documents in an earlier run, handed back beside a page of them
//! ([`Page::derived`]).

// Named by the documentation only.
#[cfg(doc)]
use super::{Page, Store};

/// What a reader derived from some documents of a page in an earlier run ([`Store::serve_derived`]),
/// each with its id and the one field the reader asked for, in two buffers for the page (and where
/// each part lies): such a document comes as an empty map in [`Page::docs`]. At 1M pages a change
/// run is served about 980,000 of them; a map of two fields built, searched and dropped for each
/// was about a fifth of the worker's CPU.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Served {
    /// The derived parts.
    bytes: Vec<u8>,
    /// The ids and the field's values.
    text: String,
    /// One per document of the page (or none at all).
    each: Vec<Option<ServedAt>>,
}

/// Where one document's part lies in [`Served`]'s buffers.
#[derive(Debug, Clone, PartialEq)]
struct ServedAt {
    bytes: std::ops::Range<usize>,
    id: std::ops::Range<usize>,
    value: Option<std::ops::Range<usize>>,
}

/// One document's part of [`Served`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServedDoc<'a> {
    /// What the reader derived.
    pub derived: &'a [u8],
    /// The document's id.
    pub id: &'a str,
    /// The field asked for, when the document holds it as one text (a document that holds a list
    /// or a number there comes decoded in [`Page::docs`] instead, with no part).
    pub value: Option<&'a str>,
}

impl Served {
    /// Appends the next document's part (`None`: it comes without one, whole in [`Page::docs`]).
    pub fn push(&mut self, doc: Option<ServedDoc<'_>>) {
        let at = doc.map(|d| {
            let mut put = |s: &str| {
                let start = self.text.len();
                self.text.push_str(s);
                start..self.text.len()
            };
            let id = put(d.id);
            let value = d.value.map(put);
            let start = self.bytes.len();
            self.bytes.extend_from_slice(d.derived);
            ServedAt {
                bytes: start..self.bytes.len(),
                id,
                value,
            }
        });
        self.each.push(at);
    }

    /// The part of the `i`-th document, when it has one.
    pub fn get(&self, i: usize) -> Option<ServedDoc<'_>> {
        let at = self.each.get(i)?.as_ref()?;
        Some(ServedDoc {
            derived: &self.bytes[at.bytes.clone()],
            id: &self.text[at.id.clone()],
            value: at.value.clone().map(|v| &self.text[v]),
        })
    }

    /// How many documents it speaks for: the page's, or 0 when none has a part.
    pub fn len(&self) -> usize {
        self.each.len()
    }

    /// Whether no document has a part ([`Served::clear`] makes it so).
    pub fn is_empty(&self) -> bool {
        self.each.is_empty()
    }

    /// How many documents have a part.
    pub fn count(&self) -> usize {
        self.each.iter().flatten().count()
    }

    /// Forgets every part.
    pub fn clear(&mut self) {
        *self = Served::default();
    }
}

#[cfg(test)]
mod tests {
    use super::{Served, ServedDoc};

    /// Each document's part comes back as it was given, beside documents without one; an empty
    /// id or value, and bytes that are not UTF-8, too.
    #[test]
    fn a_served_page_gives_back_each_part_where_it_was() {
        let mut s = Served::default();
        assert!(s.is_empty() && s.get(0).is_none());
        let a = ServedDoc {
            derived: &[0xff, 0, 7],
            id: "a/1",
            value: Some("http://a.example/1"),
        };
        let b = ServedDoc {
            derived: &[],
            id: "",
            value: None,
        };
        let c = ServedDoc {
            derived: &[1],
            id: "c",
            value: Some(""),
        };
        s.push(Some(a));
        s.push(None);
        s.push(Some(b));
        s.push(Some(c));
        assert_eq!((s.len(), s.count()), (4, 3));
        assert_eq!(s.get(0), Some(a));
        assert_eq!(s.get(1), None);
        assert_eq!(s.get(2), Some(b));
        assert_eq!(s.get(3), Some(c));
        assert_eq!(s.get(4), None);
        s.clear();
        assert!(s.is_empty() && s.count() == 0);
    }
}
