//! Evaluation: whether a document of one view of the index (committed for `/select`, real-time
//! for `/get` and delete-by-query) matches a [`Query`], with each document's text analysis cached
//! for the view's lifetime. There are no scores.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::super::analysis::analyze;
use super::super::index::{compare_vals, doc_values, Doc, Val};
use super::super::schema::{Kind, Schema};
use super::{Occur, Query};

/// Tokens of each value of a text field.
type Tokens = Rc<Vec<Vec<String>>>;

/// One view of the index that queries run against, with cached analysis.
pub struct Searcher<'a> {
    pub schema: &'a Schema,
    pub docs: Vec<&'a Doc>,
    tokens: RefCell<HashMap<(u64, String), Tokens>>,
}

impl<'a> Searcher<'a> {
    pub fn new(schema: &'a Schema, docs: Vec<&'a Doc>) -> Searcher<'a> {
        Searcher {
            schema,
            docs,
            tokens: RefCell::new(HashMap::new()),
        }
    }

    /// Tokens of each value of a text field.
    pub fn text_tokens(&self, doc: &Doc, field: &str) -> Rc<Vec<Vec<String>>> {
        let key = (doc.seq, field.to_string());
        if let Some(t) = self.tokens.borrow().get(&key) {
            return t.clone();
        }
        let toks: Vec<Vec<String>> = doc
            .values(field)
            .unwrap_or(&[])
            .iter()
            .map(|v| match v {
                Val::Str(s) => analyze(s),
                other => analyze(&other.java_string()),
            })
            .collect();
        let rc = Rc::new(toks);
        self.tokens.borrow_mut().insert(key, rc.clone());
        rc
    }

    /// The indexed terms of a field in a document: tokens for text, values otherwise.
    pub fn terms(&self, doc: &Doc, field: &str) -> Vec<Val> {
        match self.schema.field(field) {
            Some(f) if f.kind == Kind::Text => self
                .text_tokens(doc, field)
                .iter()
                .flatten()
                .map(|t| Val::Str(t.clone()))
                .collect(),
            _ => doc_values(doc, field),
        }
    }

    /// Whether `doc` matches `q`.
    pub fn matches(&self, q: &Query, doc: &Doc) -> bool {
        match q {
            Query::All => true,
            Query::Nothing => false,
            Query::Term { field, term } => self.terms(doc, field).contains(term),
            Query::Phrase { field, terms } => self.text_tokens(doc, field).iter().any(|value| {
                value.len() >= terms.len()
                    && value.windows(terms.len()).any(|w| w == terms.as_slice())
            }),
            Query::Range {
                field,
                lo,
                hi,
                lo_incl,
                hi_incl,
            } => self.terms(doc, field).iter().any(|v| {
                let above = match lo {
                    None => true,
                    Some(l) => {
                        let c = compare_vals(v, l);
                        c.is_gt() || (*lo_incl && c.is_eq())
                    }
                };
                let below = match hi {
                    None => true,
                    Some(h) => {
                        let c = compare_vals(v, h);
                        c.is_lt() || (*hi_incl && c.is_eq())
                    }
                };
                above && below
            }),
            Query::Exists { field } => !self.terms(doc, field).is_empty(),
            Query::Prefix { field, prefix } => self
                .terms(doc, field)
                .iter()
                .any(|v| matches!(v, Val::Str(s) if s.starts_with(prefix.as_str()))),
            Query::Wildcard { field, pattern } => {
                let pat: Vec<char> = unescape_keep_wild(pattern);
                self.terms(doc, field)
                    .iter()
                    .any(|v| wildcard(&pat, &v.java_string().chars().collect::<Vec<_>>()))
            }
            Query::Terms { field, terms } => {
                self.terms(doc, field).iter().any(|v| terms.contains(v))
            }
            Query::Filter(inner) => self.matches(inner, doc),
            Query::Bool(clauses) => {
                let mut has_required = false;
                let mut any_should = false;
                let mut has_positive = false;
                for (occur, c) in clauses {
                    match occur {
                        Occur::Must => {
                            has_required = true;
                            has_positive = true;
                            if !self.matches(c, doc) {
                                return false;
                            }
                        }
                        Occur::Should => {
                            has_positive = true;
                            any_should = any_should || self.matches(c, doc);
                        }
                        Occur::MustNot => {
                            if self.matches(c, doc) {
                                return false;
                            }
                        }
                    }
                }
                // A purely negative query: everything but its clauses.
                !has_positive || has_required || any_should
            }
        }
    }
}

fn unescape_keep_wild(p: &str) -> Vec<char> {
    // Escaped `*`/`?` stay literal: mark them with private-use stand-ins.
    let mut out = Vec::new();
    let mut it = p.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.next() {
                Some('*') => out.push('\u{e000}'),
                Some('?') => out.push('\u{e001}'),
                Some(n) => out.push(n),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn wildcard(p: &[char], s: &[char]) -> bool {
    match p.first() {
        None => s.is_empty(),
        Some('*') => (0..=s.len()).any(|i| wildcard(&p[1..], &s[i..])),
        Some('?') => !s.is_empty() && wildcard(&p[1..], &s[1..]),
        Some(&c) => {
            let c = match c {
                '\u{e000}' => '*',
                '\u{e001}' => '?',
                c => c,
            };
            s.first() == Some(&c) && wildcard(&p[1..], &s[1..])
        }
    }
}
