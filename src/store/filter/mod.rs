//! Which documents a read covers: a small filter language that both stores understand.
//!
//! The Solr store renders a [`Filter`] as an `fq` (`super::solr::filter`: every value quoted and
//! escaped, so nothing is pasted raw into query syntax); the file store evaluates it on each document
//! ([`Filter::matches`]). A user's `--filter` is parsed
//! into the same tree, from this subset of the Solr standard (lucene) query syntax, read the way
//! Solr's `QueryParser.jj` reads it:
//!
//! | form                                   | meaning                                              |
//! |----------------------------------------|------------------------------------------------------|
//! | `*:*`                                  | every document                                       |
//! | `field:value`, `field:"v"`             | the field holds the value (exact, not analysed)      |
//! | `field:[a TO b]`, `*` for an open end  | the value lies in the range, bounds included         |
//! | `field:*`, `field:[* TO *]`            | the field has a value                                |
//! | `-x`, `!x`, `NOT x`                    | prohibit: one modifier per clause (`--x` is an error)|
//! | `+x`                                   | require                                              |
//! | `x AND y`, `x && y`, `x OR y`, `x \|\| y`| Lucene's rules (below), not Boolean precedence      |
//! | `( )`, `field:(a OR b)`                | grouping; inside `field:( )` the field is the default|
//! | `\` before a character                 | the character as itself (`id:a\:b`, `n:\-5`)          |
//!
//! Clauses of one group combine as Lucene's `addClause` makes them: `AND` makes both neighbours
//! required, `-`/`NOT` prohibits, and the rest are optional. Required clauses must all match,
//! prohibited ones must not, and optional ones count only when nothing is required (then one of
//! them must match). So `a OR -b` is `a AND NOT b`, and `a OR b AND c` is `b AND c`, as in Solr. A
//! group of prohibited clauses alone (`-a`) matches every other document at the top and nothing
//! when nested (`x:1 OR (-a)` is `x:1`), as Solr does for `fq`.
//!
//! Refused, each with one line: what Solr refuses (a second modifier, an operator without a clause,
//! unbalanced parentheses or quotes, `:` in a value), and what Solr accepts but means by its default
//! field, its default operator `q.op` or analysis, which a file has not: a clause without `field:`,
//! `- x` (an operator followed by a space is a search for the character), clauses side by side or
//! `AND` mixed with `OR` where `q.op` changes the result (`a:1 b:2`, `a:1 AND b:2 OR c:3`), wildcards,
//! fuzzy, proximity and regular-expression searches, boosts, `{a TO b}`, local params and `filter()`.
//! Parentheses may nest [`MAX_DEPTH`] levels deep: the parser and the functions that walk the tree
//! recurse, so a deeper filter is refused rather than allowed to overflow the stack.

use std::borrow::Cow;
use std::cmp::Ordering;

use serde_json::Value;

use super::Doc;

mod parse;

/// How deeply parentheses may nest in a parsed filter.
pub const MAX_DEPTH: usize = 100;

/// Why a `--filter` cannot be parsed. Filters are shown quoted and cut short (see `shown`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilterError {
    /// A `"` or `[` is not closed.
    #[error("unclosed quote or range in filter {filter}")]
    Unclosed {
        /// The filter.
        filter: String,
    },
    /// A `(` has no matching `)`.
    #[error("missing ')' in filter {filter}")]
    MissingParen {
        /// The filter.
        filter: String,
    },
    /// A `)` has no matching `(`.
    #[error("unmatched ')' in filter {filter}")]
    UnmatchedParen {
        /// The filter.
        filter: String,
    },
    /// The filter ends after `AND`, `OR`, `NOT`, `-`, `+`, `field:` or `(`.
    #[error("filter {filter} ends where a clause was expected")]
    MissingClause {
        /// The filter.
        filter: String,
    },
    /// A token where Solr's grammar has no place for it, such as a second modifier (`--a:1`,
    /// `NOT -a:1`), an operator at the start, or `:` inside a value.
    #[error("unexpected '{found}' at column {column} of filter {filter}")]
    Syntax {
        /// The token.
        found: String,
        /// Where it starts, in characters from 0 (as Solr counts).
        column: usize,
        /// The filter.
        filter: String,
    },
    /// `+`, `-` or `!` followed by whitespace: to Solr a search for that character in the default
    /// field, which a file has not.
    #[error(
        "'{op}' followed by a space in filter {filter}: write {op}field:value without the space"
    )]
    BareOperator {
        /// The character.
        op: char,
        /// The filter.
        filter: String,
    },
    /// A clause without `field:` (Solr would search its default field).
    #[error("filter clause {clause:?} has no field: write field:value")]
    NoField {
        /// The clause as written.
        clause: String,
    },
    /// A range that is not `[a TO b]`.
    #[error("range {range:?} must read [a TO b]")]
    BadRange {
        /// The range as written.
        range: String,
    },
    /// Clauses whose meaning depends on Solr's default operator `q.op`: `a:1 b:2`, `a:1 +b:2`, or
    /// AND and OR mixed without parentheses as in `a:1 AND b:2 OR c:3`.
    #[error("filter {filter} means different things under q.op=AND and q.op=OR: join clauses with AND or OR, and group mixed AND/OR with parentheses")]
    DependsOnDefaultOperator {
        /// The filter.
        filter: String,
    },
    /// Syntax Solr accepts that the file store does not evaluate.
    #[error("{what} are not supported in file mode, in filter {filter}")]
    Unsupported {
        /// What, in the plural.
        what: &'static str,
        /// The filter.
        filter: String,
    },
    /// Parentheses nest deeper than [`MAX_DEPTH`].
    #[error("filter nests too deeply: at most {limit} levels of parentheses are allowed")]
    TooDeep {
        /// The limit, [`MAX_DEPTH`].
        limit: usize,
    },
}

/// A filter over documents.
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    /// Every document.
    All,
    /// The field holds exactly this value (any element of a multi-valued field).
    Term {
        /// Field name.
        field: String,
        /// The value, as Solr would print it.
        value: String,
    },
    /// The field holds a value within the bounds (inclusive; `None` is open).
    Range {
        /// Field name.
        field: String,
        /// Lower bound.
        lo: Option<String>,
        /// Upper bound.
        hi: Option<String>,
    },
    /// The field has a value.
    Present(String),
    /// Negation.
    Not(Box<Filter>),
    /// All of these.
    And(Vec<Filter>),
    /// Any of these.
    Or(Vec<Filter>),
    /// The field holds one of the values: a lookup by key. Build it with [`Filter::any_of`], which
    /// sorts the values for the file store's binary search.
    AnyOf {
        /// Field name.
        field: String,
        /// The values, sorted and without repeats, as Solr would print them.
        values: Vec<String>,
    },
    /// A Solr `fq` passed through unchanged: what `--filter` becomes against a Solr core, where the
    /// user writes Solr's own syntax. Only the Solr store understands it.
    Solr(String),
}

impl Filter {
    /// Parses the supported subset of Solr query syntax (see the module doc).
    pub fn parse(text: &str) -> Result<Filter, FilterError> {
        parse::parse(text)
    }

    /// Documents whose field holds any of `values`.
    pub fn any_of(field: impl Into<String>, mut values: Vec<String>) -> Filter {
        values.sort_unstable();
        values.dedup();
        Filter::AnyOf {
            field: field.into(),
            values,
        }
    }

    /// The conjunction of two filters, flattening `All`.
    pub fn and(self, other: Filter) -> Filter {
        match (self, other) {
            (Filter::All, f) | (f, Filter::All) => f,
            (Filter::And(mut a), Filter::And(b)) => {
                a.extend(b);
                Filter::And(a)
            }
            (Filter::And(mut a), f) => {
                a.push(f);
                Filter::And(a)
            }
            (f, g) => Filter::And(vec![f, g]),
        }
    }

    /// Whether a document matches.
    pub fn matches(&self, doc: &Doc) -> bool {
        match self {
            Filter::All => true,
            Filter::Term { field, value } => values(doc, field).any(|v| equals(v, value)),
            Filter::Range { field, lo, hi } => values(doc, field).any(|v| {
                lo.as_deref()
                    .is_none_or(|lo| compare(v, lo) != Some(Ordering::Less))
                    && hi
                        .as_deref()
                        .is_none_or(|hi| compare(v, hi) != Some(Ordering::Greater))
                    && (lo.is_some() || hi.is_some() || !v.is_null())
            }),
            Filter::Present(field) => values(doc, field).next().is_some(),
            Filter::AnyOf { field, values: set } => values(doc, field).any(|v| {
                let text: Cow<'_, str> = match v {
                    Value::String(s) => Cow::Borrowed(s),
                    Value::Number(n) => Cow::Owned(n.to_string()),
                    Value::Bool(b) => Cow::Owned(b.to_string()),
                    _ => return false,
                };
                set.binary_search_by(|x| x.as_str().cmp(&text)).is_ok()
            }),
            Filter::Not(f) => !f.matches(doc),
            Filter::And(fs) => fs.iter().all(|f| f.matches(doc)),
            Filter::Or(fs) => fs.iter().any(|f| f.matches(doc)),
            // The file store refuses it before reading (see `is_solr_only`).
            Filter::Solr(_) => false,
        }
    }

    /// The fields a filter reads.
    pub fn fields(&self, out: &mut Vec<String>) {
        match self {
            Filter::All | Filter::Solr(_) => {}
            Filter::Term { field, .. }
            | Filter::Range { field, .. }
            | Filter::Present(field)
            | Filter::AnyOf { field, .. } => {
                if !out.contains(field) {
                    out.push(field.clone());
                }
            }
            Filter::Not(f) => f.fields(out),
            Filter::And(fs) | Filter::Or(fs) => fs.iter().for_each(|f| f.fields(out)),
        }
    }

    /// Whether the filter holds a lookup ([`Filter::AnyOf`]).
    pub fn has_lookup(&self) -> bool {
        match self {
            Filter::AnyOf { .. } => true,
            Filter::Not(f) => f.has_lookup(),
            Filter::And(fs) | Filter::Or(fs) => fs.iter().any(Filter::has_lookup),
            _ => false,
        }
    }

    /// Whether the filter contains a raw Solr `fq` that only Solr can evaluate.
    pub fn is_solr_only(&self) -> bool {
        match self {
            Filter::Solr(_) => true,
            Filter::Not(f) => f.is_solr_only(),
            Filter::And(fs) | Filter::Or(fs) => fs.iter().any(Filter::is_solr_only),
            _ => false,
        }
    }
}

fn values<'a>(doc: &'a Doc, field: &str) -> Box<dyn Iterator<Item = &'a Value> + 'a> {
    match doc.get(field) {
        None | Some(Value::Null) => Box::new(std::iter::empty()),
        Some(Value::Array(items)) => Box::new(items.iter().filter(|v| !v.is_null())),
        Some(v) => Box::new(std::iter::once(v)),
    }
}

fn equals(v: &Value, lit: &str) -> bool {
    match v {
        Value::String(s) => s == lit,
        Value::Bool(b) => lit.parse::<bool>().ok() == Some(*b),
        Value::Number(n) => match (n.as_i64(), lit.parse::<i64>()) {
            (Some(a), Ok(b)) => a == b,
            _ => n
                .as_f64()
                .zip(lit.parse::<f64>().ok())
                .is_some_and(|(a, b)| a == b),
        },
        _ => false,
    }
}

fn compare(v: &Value, lit: &str) -> Option<Ordering> {
    match v {
        Value::Number(n) => match (n.as_i64(), lit.parse::<i64>()) {
            (Some(a), Ok(b)) => Some(a.cmp(&b)),
            _ => n.as_f64()?.partial_cmp(&lit.parse::<f64>().ok()?),
        },
        Value::String(s) => Some(s.as_str().cmp(lit)),
        Value::Bool(b) => Some(b.cmp(&lit.parse::<bool>().ok()?)),
        _ => None,
    }
}

/// The filter as messages show it: quoted, and cut after 60 characters so that a filter of 100,000
/// characters still makes one short line.
#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(v: Value) -> Doc {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn parses_and_evaluates_the_subset() {
        let d = doc(
            json!({"id":"a","httpstatus_i":200,"host_s":"example.org","tags_ss":["x","y"],"neg_l":-5}),
        );
        let cases = [
            ("*:*", true),
            ("httpstatus_i:200", true),
            ("httpstatus_i:404", false),
            ("-httpstatus_i:404", true),
            ("NOT httpstatus_i:200", false),
            ("host_s:\"example.org\" AND tags_ss:y", true),
            ("host_s:other OR tags_ss:x", true),
            ("httpstatus_i:[200 TO 299]", true),
            ("httpstatus_i:[300 TO *]", false),
            ("neg_l:\\-5", true),
            ("neg_l:\"-5\"", true),
            ("missing_s:*", false),
            ("(host_s:other OR tags_ss:y) AND -httpstatus_i:500", true),
            ("httpstatus_i:[200 TO 200] AND neg_l:[* TO -1]", true),
            ("", true),
        ];
        for (fq, want) in cases {
            let f = Filter::parse(fq).unwrap_or_else(|e| panic!("{fq}: {e}"));
            assert_eq!(f.matches(&d), want, "{fq}");
        }
    }

    /// Which of the documents `pa`, `pb`, `pc` (with `sku` `a`, `b`, `c`) a filter selects.
    fn selected(fq: &str) -> Vec<&'static str> {
        let f = Filter::parse(fq).unwrap_or_else(|e| panic!("{fq}: {e}"));
        ["pa", "pb", "pc"]
            .into_iter()
            .filter(|id| f.matches(&doc(json!({"id": id, "sku": &id[1..]}))))
            .collect()
    }

    #[test]
    fn selects_what_solr_selects() {
        // Each answer is what a real Solr 9.10 standalone core (three documents pa, pb, pc) answered
        // to the same fq; the gaps from Boolean logic are Lucene's rules for AND/OR/NOT.
        let cases: &[(&str, &[&str])] = &[
            ("-id:pa", &["pb", "pc"]),
            ("!id:pa", &["pb", "pc"]),
            ("NOT id:pa", &["pb", "pc"]),
            ("NOT(id:pa)", &["pb", "pc"]),
            ("+id:pa", &["pa"]),
            ("id:pa NOT id:pb", &["pa"]),
            ("id:pa OR NOT id:pb", &["pa"]),
            ("id:pa OR -id:pa", &[]),
            ("id:pa AND -id:pb", &["pa"]),
            ("-(id:pa OR id:pb)", &["pc"]),
            ("(-id:pa)", &["pb", "pc"]),
            ("((-id:pa))", &["pb", "pc"]),
            ("id:(-pa)", &["pb", "pc"]),
            ("-(-id:pa)", &["pa", "pb", "pc"]),
            ("id:pa OR (-id:pb)", &["pa"]),
            ("(-id:pa) OR (-id:pb)", &[]),
            ("id:pa AND (-id:pa)", &[]),
            ("id:pa OR id:pb AND id:pc", &[]),
            ("id:(pa OR pb)", &["pa", "pb"]),
            ("id:pa && id:pb", &[]),
            ("id:pa || id:pb", &["pa", "pb"]),
            ("id:\"pa\"", &["pa"]),
            ("id :pa", &["pa"]),
            ("id: pa", &["pa"]),
            ("id:[* TO pb]", &["pa", "pb"]),
            ("sku:[a TO b]", &["pa", "pb"]),
            ("id:*", &["pa", "pb", "pc"]),
            ("*:*", &["pa", "pb", "pc"]),
            ("-*:*", &[]),
            ("id:pa OR -*:*", &[]),
            ("+id:pa -sku:b", &["pa"]),
        ];
        for (fq, want) in cases {
            assert_eq!(selected(fq), *want, "{fq}");
        }
    }

    #[test]
    fn refuses_what_solr_refuses() {
        // Each of these is a 400 SyntaxError from Solr 9.10. The first two selected every document
        // before: the second `-` started a field named `-id`.
        let dashes = format!("{}id:pa", "-".repeat(100_000));
        let cases: &[(&str, &str)] = &[
            ("--id:x", "unexpected '-' at column 1 of filter \"--id:x\""),
            (
                &dashes,
                "unexpected '-' at column 1 of filter \"------------------------------------------------------------\"… (100005 characters)",
            ),
            ("+-id:pa", "unexpected '-' at column 1 of filter \"+-id:pa\""),
            ("NOT NOT id:pa", "unexpected 'NOT' at column 4 of filter \"NOT NOT id:pa\""),
            ("-NOT id:pa", "unexpected 'NOT' at column 1 of filter \"-NOT id:pa\""),
            ("NOT -id:pa", "unexpected '-' at column 4 of filter \"NOT -id:pa\""),
            ("AND id:pa", "unexpected 'AND' at column 0 of filter \"AND id:pa\""),
            ("id:pa OR OR id:pb", "unexpected 'OR' at column 9 of filter \"id:pa OR OR id:pb\""),
            ("()", "unexpected ')' at column 1 of filter \"()\""),
            ("id:a:b", "unexpected ':' at column 4 of filter \"id:a:b\""),
            ("n:-5", "unexpected '-' at column 2 of filter \"n:-5\""),
            ("id:pa NOT", "filter \"id:pa NOT\" ends where a clause was expected"),
            ("-", "filter \"-\" ends where a clause was expected"),
            ("a:", "filter \"a:\" ends where a clause was expected"),
            ("(a:1", "missing ')' in filter \"(a:1\""),
            ("id:(pa", "missing ')' in filter \"id:(pa\""),
            ("a:1)", "unmatched ')' in filter \"a:1)\""),
            ("(a:1))", "unmatched ')' in filter \"(a:1))\""),
            ("a:\"open", "unclosed quote or range in filter \"a:\\\"open\""),
            ("a:[1 TO", "unclosed quote or range in filter \"a:[1 TO\""),
            ("a:[1 2]", "range \"[1 2]\" must read [a TO b]"),
            ("a:[1 TO 2 TO 3]", "range \"[1 TO 2 TO 3]\" must read [a TO b]"),
        ];
        for (fq, want) in cases {
            let err = Filter::parse(fq).unwrap_err();
            assert_eq!(err.to_string(), *want, "{err:?}");
        }
    }

    #[test]
    fn refuses_what_only_solr_can_mean() {
        // Solr accepts these; their meaning rests on a default field, q.op or analysis.
        let cases: &[(&str, &str)] = &[
            ("justaword", "filter clause \"justaword\" has no field: write field:value"),
            ("a:1 OR x", "filter clause \"x\" has no field: write field:value"),
            (
                "- id:pa",
                "'-' followed by a space in filter \"- id:pa\": write -field:value without the space",
            ),
            (
                "a:1 b:2",
                "filter \"a:1 b:2\" means different things under q.op=AND and q.op=OR: join clauses with AND or OR, and group mixed AND/OR with parentheses",
            ),
            (
                "a:1 AND b:2 OR c:3",
                "filter \"a:1 AND b:2 OR c:3\" means different things under q.op=AND and q.op=OR: join clauses with AND or OR, and group mixed AND/OR with parentheses",
            ),
            (
                "a:1 +b:2",
                "filter \"a:1 +b:2\" means different things under q.op=AND and q.op=OR: join clauses with AND or OR, and group mixed AND/OR with parentheses",
            ),
            ("a:x*", "wildcards (* and ? inside a value) are not supported in file mode, in filter \"a:x*\""),
            ("a:1^2", "boosts (^) are not supported in file mode, in filter \"a:1^2\""),
            (
                "a:{1 TO 2]",
                "ranges that leave an end out ({a TO b}); write [a TO b] are not supported in file mode, in filter \"a:{1 TO 2]\"",
            ),
            (
                "{!term f=id}x",
                "local parameters ({!…}) are not supported in file mode, in filter \"{!term f=id}x\"",
            ),
        ];
        for (fq, want) in cases {
            let err = Filter::parse(fq).unwrap_err();
            assert_eq!(err.to_string(), *want, "{err:?}");
        }
        // Where q.op changes nothing, clauses may stand side by side.
        for fq in ["a:1 -b:2", "a:1 NOT b:2", "+a:1 +b:2", "a:1 OR b:2 AND c:3"] {
            assert!(Filter::parse(fq).is_ok(), "{fq}");
        }
    }

    #[test]
    fn escapes_and_term_characters() {
        let d = doc(json!({"id": "a:b", "url": "http://x.org/a-b+c!", "n": -5, "AND": "x"}));
        for fq in [
            "id:a\\:b",
            "id:\"a:b\"",
            "url:http\\://x.org/a-b+c!",
            "n:\\-5",
            "n:\"-5\"",
            "\\AND:x",
        ] {
            assert!(Filter::parse(fq).unwrap().matches(&d), "{fq}");
        }
        assert_eq!(
            Filter::parse("ANDROID:x OR NOTE:y").unwrap(),
            Filter::Or(vec![
                Filter::Term {
                    field: "ANDROID".into(),
                    value: "x".into()
                },
                Filter::Term {
                    field: "NOTE".into(),
                    value: "y".into()
                },
            ])
        );
    }

    #[test]
    fn refuses_a_filter_nested_too_deeply() {
        // Each of these overflowed the stack (the process aborted) before the parser had a limit.
        let parens = format!("{}a:1{}", "(".repeat(50_000), ")".repeat(50_000));
        let negated = format!("{}a:1{}", "-(".repeat(50_000), ")".repeat(50_000));
        let open = "(".repeat(50_000);
        for deep in [parens, negated, open] {
            let err = Filter::parse(&deep).unwrap_err();
            assert_eq!(err, FilterError::TooDeep { limit: MAX_DEPTH });
            assert_eq!(
                err.to_string(),
                "filter nests too deeply: at most 100 levels of parentheses are allowed"
            );
        }
    }

    #[test]
    fn the_depth_limit_is_exactly_max_depth() {
        let d = doc(json!({"a": 1}));
        let nested = |n: usize, inner: &str| format!("{}{inner}{}", "(".repeat(n), ")".repeat(n));
        let negated = |n: usize| format!("{}a:2{}", "-(".repeat(n), ")".repeat(n));
        // An even number of negations of a:2 selects a document without a:2.
        for fq in [nested(MAX_DEPTH, "a:1"), negated(MAX_DEPTH)] {
            let f = Filter::parse(&fq).unwrap_or_else(|e| panic!("{e}"));
            assert!(!crate::store::solr::filter::fq(&f).is_empty());
            let _ = f.matches(&d);
        }
        assert!(Filter::parse(&nested(MAX_DEPTH, "a:1"))
            .unwrap()
            .matches(&d));
        for fq in [nested(MAX_DEPTH + 1, "a:1"), negated(MAX_DEPTH + 1)] {
            assert_eq!(
                Filter::parse(&fq),
                Err(FilterError::TooDeep { limit: MAX_DEPTH }),
                "{fq}"
            );
        }
        // Depth is nesting, not length: many clauses side by side are fine.
        let wide = vec!["(a:1)"; 10 * MAX_DEPTH].join(" OR ");
        assert!(Filter::parse(&wide).unwrap().matches(&d));
    }

    #[test]
    fn any_of_looks_values_up() {
        let f = Filter::any_of(
            "exact_signature_l",
            vec!["7".into(), "-12".into(), "7".into()],
        );
        let doc = |v: Value| -> Doc {
            let mut d = Doc::new();
            d.insert("exact_signature_l".into(), v);
            d
        };
        assert!(f.matches(&doc(serde_json::json!(-12))));
        assert!(f.matches(&doc(serde_json::json!([3, 7]))));
        assert!(!f.matches(&doc(serde_json::json!(12))));
        assert!(!f.matches(&Doc::new()));
        let urls = Filter::any_of("sku", vec!["http://a.org/\"x\"".into()]);
        assert!(urls.matches(&{
            let mut d = Doc::new();
            d.insert("sku".into(), serde_json::json!("http://a.org/\"x\""));
            d
        }));
    }
}
