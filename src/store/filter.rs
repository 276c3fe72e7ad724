//! Which documents a read covers: a small filter language that both stores understand.
//!
//! The Solr store renders a [`Filter`] as an `fq` (every value quoted and escaped, so nothing is pasted
//! raw into query syntax); the file store evaluates it on each document. A user's `--filter` is parsed
//! into the same tree, from this subset of the Solr standard query syntax:
//!
//! | form                      | meaning                                          |
//! |---------------------------|--------------------------------------------------|
//! | `*:*`                     | every document                                   |
//! | `field:value`, `field:"v"`| the field holds the value (exact, not analysed)  |
//! | `field:[a TO b]`, `*` ends| the value lies in the range, bounds included     |
//! | `field:*`                 | the field has a value                            |
//! | `-x`, `NOT x`             | negation                                         |
//! | `x AND y`, `x OR y`, `( )`| AND binds tighter than OR                        |
//!
//! A bare list of clauses without operators is rejected rather than guessed, because Solr's meaning of
//! it depends on `q.op`. Parentheses and negations may nest [`MAX_DEPTH`] levels deep: the parser
//! and the functions that walk the tree recurse, so a deeper filter is refused rather than allowed to
//! overflow the stack.

use std::borrow::Cow;
use std::cmp::Ordering;

use serde_json::Value;

use super::Doc;

/// How deeply parentheses and negations (`NOT x`, `-x`) may nest in a parsed filter.
pub const MAX_DEPTH: usize = 100;

/// Why a `--filter` cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilterError {
    /// A `"` or `[` is not closed.
    #[error("unclosed quote or range in filter {filter:?}")]
    Unclosed {
        /// The whole filter.
        filter: String,
    },
    /// A `(` has no matching `)`.
    #[error("missing ')' in filter")]
    MissingParen,
    /// A `)` has no matching `(`.
    #[error("unmatched ')' in filter {filter:?}")]
    UnmatchedParen {
        /// The whole filter.
        filter: String,
    },
    /// The filter ends after `AND`, `OR`, `NOT` or `(`.
    #[error("filter ends where a clause was expected")]
    MissingClause,
    /// A clause without `field:`.
    #[error("filter clause {clause:?} has no field: write field:value")]
    NoField {
        /// The clause as written.
        clause: String,
    },
    /// A clause with an empty field or value (`:x`, `x:`).
    #[error("filter clause {clause:?} needs a field and a value")]
    EmptyFieldOrValue {
        /// The clause as written.
        clause: String,
    },
    /// A range that is not `[a TO b]`.
    #[error("range {range:?} must read [a TO b]")]
    BadRange {
        /// The range as written.
        range: String,
    },
    /// Clauses side by side without `AND` or `OR`.
    #[error("unexpected '{token}' in filter {filter:?}: join clauses with AND or OR")]
    BareClauseList {
        /// The first clause that follows another without an operator.
        token: String,
        /// The whole filter.
        filter: String,
    },
    /// Parentheses and negations nest deeper than [`MAX_DEPTH`].
    #[error(
        "filter nests too deeply: at most {limit} levels of parentheses and negations (NOT, -) are allowed"
    )]
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
        let tokens = tokenize(text)?;
        if tokens.is_empty() {
            return Ok(Filter::All);
        }
        let mut p = Parser {
            tokens,
            pos: 0,
            depth: 0,
        };
        let f = p.or()?;
        if p.pos != p.tokens.len() {
            let token = p.tokens[p.pos].clone();
            return Err(if token == ")" {
                FilterError::UnmatchedParen {
                    filter: text.to_owned(),
                }
            } else {
                FilterError::BareClauseList {
                    token,
                    filter: text.to_owned(),
                }
            });
        }
        Ok(f)
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

    /// The filter as a Solr `fq`. Every value is phrase-quoted with `\` and `"` escaped (see [`quote`]),
    /// so no value is ever pasted raw into query syntax; negative numbers are safe too.
    pub fn to_solr(&self) -> String {
        match self {
            Filter::All => "*:*".to_owned(),
            Filter::Term { field, value } => format!("{field}:{}", quote(value)),
            Filter::Range { field, lo, hi } => format!(
                "{field}:[{} TO {}]",
                lo.as_deref().map_or("*".to_owned(), quote),
                hi.as_deref().map_or("*".to_owned(), quote)
            ),
            Filter::Present(field) => format!("{field}:[* TO *]"),
            Filter::AnyOf { values, .. } if values.is_empty() => "(*:* -*:*)".to_owned(),
            Filter::AnyOf { field, values } => format!(
                "{field}:({})",
                values
                    .iter()
                    .map(|v| quote(v))
                    .collect::<Vec<_>>()
                    .join(" OR ")
            ),
            Filter::Not(f) => format!("(*:* -{})", f.to_solr_group()),
            Filter::And(fs) => join(fs, " AND "),
            Filter::Or(fs) => join(fs, " OR "),
            Filter::Solr(fq) => fq.clone(),
        }
    }

    /// The filter as Solr `fq` parameters: one per part of a conjunction, which Solr intersects,
    /// so that a user's raw `fq` (which may start with local params such as `{!term f=…}`) is
    /// always sent alone and stays in Solr's filter cache. Lookups (parts holding [`Filter::AnyOf`])
    /// differ on every read, so they are marked `{!cache=false}`.
    pub fn to_solr_fqs(&self) -> Vec<String> {
        let parts: Vec<&Filter> = match self {
            Filter::All => Vec::new(),
            Filter::And(fs) => fs.iter().collect(),
            f => vec![f],
        };
        parts
            .into_iter()
            .map(|f| {
                lookup_fq(f).unwrap_or_else(|| {
                    if f.has_lookup() {
                        format!("{{!cache=false}}{}", f.to_solr())
                    } else {
                        f.to_solr()
                    }
                })
            })
            .collect()
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

    fn to_solr_group(&self) -> String {
        match self {
            Filter::And(_) | Filter::Or(_) | Filter::Solr(_) => format!("({})", self.to_solr()),
            _ => self.to_solr(),
        }
    }
}

/// A lookup (one [`Filter::AnyOf`], or an OR of several) through Solr's `{!terms}` query parser, which
/// takes thousands of values as one term-set query instead of as many boolean clauses; several are
/// the `should` clauses of a `{!bool}` query, so a document found by several keys is handed out once.
/// No value is ever parsed as query syntax: each `{!terms}` value list is split by a separator that
/// occurs in none of its values, and a nested query is quoted with `\` and `'` escaped, as local
/// params quote. `None` when the filter is not such a lookup, or no separator fits.
fn lookup_fq(f: &Filter) -> Option<String> {
    match f {
        Filter::AnyOf { field, values } if !values.is_empty() => terms_fq(field, values, true),
        Filter::Or(parts) if !parts.is_empty() => {
            let mut fq = "{!bool".to_owned();
            for part in parts {
                let Filter::AnyOf { field, values } = part else {
                    return None;
                };
                if values.is_empty() {
                    continue;
                }
                let terms = terms_fq(field, values, false)?;
                fq.push_str(" should='");
                for c in terms.chars() {
                    if c == '\\' || c == '\'' {
                        fq.push('\\');
                    }
                    fq.push(c);
                }
                fq.push('\'');
            }
            fq.push_str(" cache=false}");
            Some(fq)
        }
        _ => None,
    }
}

/// `{!terms f=… [separator=…] [cache=false]}v1,v2,…`, or `None` when every candidate separator occurs
/// in some value (or a value is empty).
fn terms_fq(field: &str, values: &[String], uncached: bool) -> Option<String> {
    const SEPARATORS: [&str; 6] = [",", "|", "^", "~", "`", "\u{1}"];
    let sep = SEPARATORS
        .into_iter()
        .find(|sep| values.iter().all(|v| !v.contains(sep) && !v.is_empty()))?;
    let mut fq = format!("{{!terms f={field}");
    if sep != "," {
        fq.push_str(" separator=");
        fq.push_str(sep);
    }
    fq.push_str(if uncached { " cache=false}" } else { "}" });
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            fq.push_str(sep);
        }
        fq.push_str(v);
    }
    Some(fq)
}

fn join(fs: &[Filter], sep: &str) -> String {
    if fs.is_empty() {
        return "*:*".to_owned();
    }
    fs.iter()
        .map(Filter::to_solr_group)
        .collect::<Vec<_>>()
        .join(sep)
}

/// A phrase-quoted value with `\` and `"` escaped: safe for any content, negative numbers included.
pub fn quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
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

fn tokenize(text: &str) -> Result<Vec<String>, FilterError> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '(' || c == ')' {
            tokens.push(c.to_string());
            chars.next();
        } else {
            let mut tok = String::new();
            let mut in_quote = false;
            let mut in_range = false;
            while let Some(&c) = chars.peek() {
                if !in_quote
                    && !in_range
                    && (c.is_whitespace() || c == ')' || (c == '(' && tok.is_empty()))
                {
                    break;
                }
                chars.next();
                match c {
                    '\\' => {
                        tok.push(c);
                        if let Some(n) = chars.next() {
                            tok.push(n);
                        }
                        continue;
                    }
                    '"' => in_quote = !in_quote,
                    '[' if !in_quote => in_range = true,
                    ']' if !in_quote => in_range = false,
                    _ => {}
                }
                tok.push(c);
            }
            if in_quote || in_range {
                return Err(FilterError::Unclosed {
                    filter: text.to_owned(),
                });
            }
            tokens.push(tok);
        }
    }
    Ok(tokens)
}

struct Parser {
    tokens: Vec<String>,
    pos: usize,
    /// Parentheses and negations open around the current token.
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&str> {
        self.tokens.get(self.pos).map(String::as_str)
    }

    /// Enters one more level of parentheses or negation; the caller leaves it with `depth -= 1`.
    fn enter(&mut self) -> Result<(), FilterError> {
        if self.depth == MAX_DEPTH {
            return Err(FilterError::TooDeep { limit: MAX_DEPTH });
        }
        self.depth += 1;
        Ok(())
    }

    fn or(&mut self) -> Result<Filter, FilterError> {
        let mut parts = vec![self.and()?];
        while self.peek() == Some("OR") {
            self.pos += 1;
            parts.push(self.and()?);
        }
        Ok(if parts.len() == 1 {
            parts.pop().unwrap_or(Filter::All)
        } else {
            Filter::Or(parts)
        })
    }

    fn and(&mut self) -> Result<Filter, FilterError> {
        let mut parts = vec![self.unary()?];
        while self.peek() == Some("AND") {
            self.pos += 1;
            parts.push(self.unary()?);
        }
        Ok(if parts.len() == 1 {
            parts.pop().unwrap_or(Filter::All)
        } else {
            Filter::And(parts)
        })
    }

    fn unary(&mut self) -> Result<Filter, FilterError> {
        let Some(tok) = self.peek().map(str::to_owned) else {
            return Err(FilterError::MissingClause);
        };
        self.pos += 1;
        if tok == "NOT" {
            self.enter()?;
            let inner = self.unary()?;
            self.depth -= 1;
            return Ok(Filter::Not(Box::new(inner)));
        }
        if tok == "(" {
            self.enter()?;
            let inner = self.or()?;
            if self.peek() != Some(")") {
                return Err(FilterError::MissingParen);
            }
            self.pos += 1;
            self.depth -= 1;
            return Ok(inner);
        }
        if let Some(rest) = tok.strip_prefix('-') {
            // `-` negates one clause and does not recurse, but it is a level of the tree all the same.
            self.enter()?;
            self.depth -= 1;
            return Ok(Filter::Not(Box::new(clause(rest)?)));
        }
        clause(&tok)
    }
}

fn clause(tok: &str) -> Result<Filter, FilterError> {
    if tok == "*:*" {
        return Ok(Filter::All);
    }
    let Some(colon) = find_unescaped_colon(tok) else {
        return Err(FilterError::NoField {
            clause: tok.to_owned(),
        });
    };
    let (field, value) = (&tok[..colon], &tok[colon + 1..]);
    if field.is_empty() || value.is_empty() {
        return Err(FilterError::EmptyFieldOrValue {
            clause: tok.to_owned(),
        });
    }
    if value == "*" {
        return Ok(Filter::Present(field.to_owned()));
    }
    if let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
        let parts: Vec<&str> = inner.split(" TO ").collect();
        if parts.len() != 2 {
            return Err(FilterError::BadRange {
                range: value.to_owned(),
            });
        }
        let bound = |b: &str| (b.trim() != "*").then(|| unquote(b.trim()));
        let (lo, hi) = (bound(parts[0]), bound(parts[1]));
        if lo.is_none() && hi.is_none() {
            return Ok(Filter::Present(field.to_owned()));
        }
        return Ok(Filter::Range {
            field: field.to_owned(),
            lo,
            hi,
        });
    }
    Ok(Filter::Term {
        field: field.to_owned(),
        value: unquote(value),
    })
}

fn find_unescaped_colon(tok: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in tok.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            ':' if !escaped => return Some(i),
            _ => escaped = false,
        }
    }
    None
}

fn unquote(v: &str) -> String {
    let inner = v
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(v);
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

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
        ];
        for (fq, want) in cases {
            let f = Filter::parse(fq).unwrap_or_else(|e| panic!("{fq}: {e}"));
            assert_eq!(f.matches(&d), want, "{fq}");
        }
    }

    #[test]
    fn rejects_what_it_cannot_mean_exactly() {
        for fq in ["a:1 b:2", "justaword", "a:[1 TO", "a:\"open", "(a:1"] {
            assert!(Filter::parse(fq).is_err(), "{fq}");
        }
    }

    #[test]
    fn names_each_problem() {
        let cases = [
            ("a:[1 TO", "unclosed quote or range in filter \"a:[1 TO\""),
            (
                "a:\"open",
                "unclosed quote or range in filter \"a:\\\"open\"",
            ),
            ("(a:1", "missing ')' in filter"),
            ("a:1)", "unmatched ')' in filter \"a:1)\""),
            ("a:1 AND", "filter ends where a clause was expected"),
            (
                "justaword",
                "filter clause \"justaword\" has no field: write field:value",
            ),
            ("a:", "filter clause \"a:\" needs a field and a value"),
            ("a:[1 2]", "range \"[1 2]\" must read [a TO b]"),
            (
                "a:1 b:2",
                "unexpected 'b:2' in filter \"a:1 b:2\": join clauses with AND or OR",
            ),
        ];
        for (fq, want) in cases {
            let err = Filter::parse(fq).unwrap_err();
            assert_eq!(err.to_string(), want, "{fq}: {err:?}");
        }
    }

    #[test]
    fn refuses_a_filter_nested_too_deeply() {
        // Each of these overflowed the stack (the process aborted) before the parser had a limit.
        let parens = format!("{}a:1{}", "(".repeat(50_000), ")".repeat(50_000));
        let nots = format!("{}a:1", "NOT ".repeat(50_000));
        let open = "(".repeat(50_000);
        for deep in [parens, nots, open] {
            let err = Filter::parse(&deep).unwrap_err();
            assert_eq!(err, FilterError::TooDeep { limit: MAX_DEPTH });
            assert_eq!(
                err.to_string(),
                "filter nests too deeply: at most 100 levels of parentheses and negations (NOT, -) are allowed"
            );
        }
    }

    #[test]
    fn the_depth_limit_is_exactly_max_depth() {
        let d = doc(json!({"a": 1}));
        let nested = |n: usize, inner: &str| format!("{}{inner}{}", "(".repeat(n), ")".repeat(n));
        // Parentheses alone, negations alone, and the two mixed, with `-` as the innermost level.
        let at_limit = [
            nested(MAX_DEPTH, "a:1"),
            format!("{}a:1", "NOT ".repeat(MAX_DEPTH)),
            nested(
                MAX_DEPTH / 2,
                &format!("{}-a:1", "NOT ".repeat(MAX_DEPTH / 2 - 1)),
            ),
        ];
        for fq in &at_limit {
            let f = Filter::parse(fq).unwrap_or_else(|e| panic!("{e}"));
            assert!(f.matches(&d), "{fq}");
            assert!(!f.to_solr().is_empty());
        }
        let over = [
            nested(MAX_DEPTH + 1, "a:1"),
            format!("{}a:1", "NOT ".repeat(MAX_DEPTH + 1)),
            nested(
                MAX_DEPTH / 2,
                &format!("{}-a:1", "NOT ".repeat(MAX_DEPTH / 2)),
            ),
        ];
        for fq in &over {
            assert_eq!(
                Filter::parse(fq),
                Err(FilterError::TooDeep { limit: MAX_DEPTH }),
                "{fq}"
            );
        }
        // Depth is nesting, not length: many clauses side by side are fine.
        let wide = vec!["(a:1)"; 10 * MAX_DEPTH].join(" OR ");
        assert!(Filter::parse(&wide).unwrap().matches(&d));
    }

    #[test]
    fn renders_safe_solr_syntax() {
        let f = Filter::Term {
            field: "sku".into(),
            value: "http://x.org/a\"b".into(),
        }
        .and(Filter::Not(Box::new(Filter::Present(
            "exact_signature_l".into(),
        ))));
        assert_eq!(
            f.to_solr(),
            "sku:\"http://x.org/a\\\"b\" AND (*:* -exact_signature_l:[* TO *])"
        );
        let neg = Filter::Term {
            field: "exact_signature_l".into(),
            value: "-2401053093171183889".into(),
        };
        assert_eq!(neg.to_solr(), "exact_signature_l:\"-2401053093171183889\"");
    }

    #[test]
    fn any_of_looks_values_up_and_renders_one_quoted_clause_each() {
        let f = Filter::any_of(
            "exact_signature_l",
            vec!["7".into(), "-12".into(), "7".into()],
        );
        assert_eq!(f.to_solr(), "exact_signature_l:(\"-12\" OR \"7\")");
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
        assert_eq!(urls.to_solr(), "sku:(\"http://a.org/\\\"x\\\"\")");
        assert!(urls.matches(&{
            let mut d = Doc::new();
            d.insert("sku".into(), serde_json::json!("http://a.org/\"x\""));
            d
        }));
        assert_eq!(Filter::any_of("id", Vec::new()).to_solr(), "(*:* -*:*)");
        let user = Filter::Solr("{!term f=title}a b".into());
        let looked_up = user.clone().and(Filter::Or(vec![f.clone(), urls.clone()]));
        // Lookups go through the terms parser; several are the should clauses of one bool query,
        // with `\\` and `'` escaped inside the quotes.
        assert_eq!(
            looked_up.to_solr_fqs(),
            vec![
                "{!term f=title}a b".to_owned(),
                r#"{!bool should='{!terms f=exact_signature_l}-12,7' should='{!terms f=sku}http://a.org/"x"' cache=false}"#.to_owned()
            ]
        );
        let quoted = Filter::any_of("sku", vec!["http://a.org/it's\\".into(), "b".into()]);
        assert_eq!(
            Filter::Or(vec![quoted.clone()]).to_solr_fqs(),
            vec![r"{!bool should='{!terms f=sku}b,http://a.org/it\'s\\' cache=false}".to_owned()]
        );
        // A value with a comma takes the next separator; one alone is a terms query of its own.
        let commas = Filter::any_of("sku", vec!["http://a.org/a,b".into(), "c".into()]);
        assert_eq!(
            commas.to_solr_fqs(),
            vec!["{!terms f=sku separator=| cache=false}c|http://a.org/a,b".to_owned()]
        );
        // No separator fits, or an empty value: quoted phrases, as before.
        let odd = Filter::any_of("sku", vec!["".into(), "x".into()]);
        assert_eq!(
            odd.to_solr_fqs(),
            vec![r#"{!cache=false}sku:("" OR "x")"#.to_owned()]
        );
        assert!(Filter::All.to_solr_fqs().is_empty());
    }
}
