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

/// How deeply parentheses may nest in a parsed filter.
pub const MAX_DEPTH: usize = 100;

/// Why a `--filter` cannot be parsed. Filters are shown quoted and cut short (see [`shown`]).
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
        let tokens = tokenize(text)?;
        if tokens.len() == 1 {
            return Ok(Filter::All);
        }
        let mut p = Parser {
            tokens,
            pos: 0,
            depth: 0,
            text,
        };
        let node = p.query(None)?;
        match p.peek() {
            Tok::Eof => Ok(to_filter(node, true)),
            Tok::RParen => Err(FilterError::UnmatchedParen {
                filter: shown(text),
            }),
            _ => Err(p.unexpected()),
        }
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
fn shown(text: &str) -> String {
    const MAX: usize = 60;
    if text.chars().count() <= MAX {
        return format!("{text:?}");
    }
    let head: String = text.chars().take(MAX).collect();
    format!("{head:?}… ({} characters)", text.chars().count())
}

/// Whitespace as the lucene parser skips it.
fn is_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\u{3000}')
}

/// A character that may start a term (Solr's `_TERM_START_CHAR`).
fn is_term_start(c: char) -> bool {
    !is_ws(c)
        && !matches!(
            c,
            '+' | '-'
                | '!'
                | '('
                | ')'
                | ':'
                | '^'
                | '['
                | ']'
                | '"'
                | '{'
                | '}'
                | '~'
                | '*'
                | '?'
                | '\\'
                | '/'
        )
}

/// A character that may continue a term (Solr's `_TERM_CHAR`).
fn is_term_char(c: char) -> bool {
    is_term_start(c) || matches!(c, '-' | '+' | '/' | '!')
}

/// A token of the lucene syntax, as its lexer cuts them (longest match: `ANDROID` is a term, `AND`
/// an operator, `-x` a prohibit modifier, `- x` a bare operator).
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    And,
    Or,
    /// `NOT` or `!`.
    Not,
    Plus,
    Minus,
    LParen,
    RParen,
    Colon,
    Star,
    /// A term as written, escapes kept.
    Term(String),
    /// A quoted phrase's inside, escapes kept.
    Quoted(String),
    /// A range: its bounds as written (`None` for `*`), and whether each end is inclusive.
    Range {
        lo: Option<String>,
        hi: Option<String>,
        inclusive: bool,
    },
    Eof,
}

impl Tok {
    fn image(&self) -> String {
        match self {
            Tok::And => "AND".into(),
            Tok::Or => "OR".into(),
            Tok::Not => "NOT".into(),
            Tok::Plus => "+".into(),
            Tok::Minus => "-".into(),
            Tok::LParen => "(".into(),
            Tok::RParen => ")".into(),
            Tok::Colon => ":".into(),
            Tok::Star => "*".into(),
            Tok::Term(t) => t.clone(),
            Tok::Quoted(q) => format!("\"{q}\""),
            Tok::Range { .. } => "[".into(),
            Tok::Eof => "the end".into(),
        }
    }
}

/// Cuts `text` into tokens, each with the character column (from 0, as Solr counts) it starts at.
/// Syntax Solr accepts but the file store does not evaluate is refused here.
fn tokenize(text: &str) -> Result<Vec<(Tok, usize)>, FilterError> {
    let chars: Vec<char> = text.chars().collect();
    let at = |i: usize| chars.get(i).copied();
    let unsupported = |what: &'static str| FilterError::Unsupported {
        what,
        filter: shown(text),
    };
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if is_ws(c) {
            i += 1;
            continue;
        }
        let begin = i;
        let tok = match c {
            '(' => {
                i += 1;
                Tok::LParen
            }
            ')' => {
                i += 1;
                Tok::RParen
            }
            ':' => {
                i += 1;
                Tok::Colon
            }
            '+' | '-' | '!' if at(i + 1).is_some_and(is_ws) => {
                return Err(FilterError::BareOperator {
                    op: c,
                    filter: shown(text),
                })
            }
            '+' => {
                i += 1;
                Tok::Plus
            }
            '-' => {
                i += 1;
                Tok::Minus
            }
            '!' => {
                i += 1;
                Tok::Not
            }
            '^' => return Err(unsupported("boosts (^)")),
            '~' => return Err(unsupported("fuzzy and proximity searches (~)")),
            '/' => return Err(unsupported("regular expressions (/…/)")),
            '{' if at(i + 1) == Some('!') => return Err(unsupported("local parameters ({!…})")),
            '"' => {
                i += 1;
                let mut inner = String::new();
                loop {
                    match at(i) {
                        None => {
                            return Err(FilterError::Unclosed {
                                filter: shown(text),
                            })
                        }
                        Some('"') => break,
                        Some('\\') => {
                            inner.push('\\');
                            if let Some(n) = at(i + 1) {
                                inner.push(n);
                            }
                            i += 2;
                        }
                        Some(ch) => {
                            inner.push(ch);
                            i += 1;
                        }
                    }
                }
                i += 1;
                Tok::Quoted(inner)
            }
            '[' | '{' => {
                let (range, end) = range(&chars, i, text)?;
                i = end;
                range
            }
            _ => {
                // A term, a wildcard term or an operator word: the longest run of term characters.
                let mut raw = String::new();
                let mut wild = false;
                while let Some(ch) = at(i) {
                    if ch == '\\' {
                        raw.push(ch);
                        if let Some(n) = at(i + 1) {
                            raw.push(n);
                        }
                        i += 2;
                    } else if is_term_char(ch) || (ch == '*' || ch == '?') {
                        wild |= ch == '*' || ch == '?';
                        raw.push(ch);
                        i += 1;
                    } else {
                        break;
                    }
                }
                if raw.is_empty() {
                    // Only `]` and `}` get here: they close nothing outside a range.
                    return Err(FilterError::Syntax {
                        found: c.to_string(),
                        column: begin,
                        filter: shown(text),
                    });
                }
                match raw.as_str() {
                    "*" => Tok::Star,
                    "AND" | "&&" => Tok::And,
                    "OR" | "||" => Tok::Or,
                    "NOT" => Tok::Not,
                    "filter" if at(i) == Some('(') => return Err(unsupported("filter(…) clauses")),
                    _ if wild => return Err(unsupported("wildcards (* and ? inside a value)")),
                    _ => Tok::Term(raw),
                }
            }
        };
        tokens.push((tok, begin));
    }
    tokens.push((Tok::Eof, chars.len()));
    Ok(tokens)
}

/// The range that starts at `chars[start]` (`[` or `{`), and the index after it. Its bounds are a
/// quoted phrase or a run of characters up to a space, `]` or `}` (Solr's range mode).
fn range(chars: &[char], start: usize, text: &str) -> Result<(Tok, usize), FilterError> {
    let open = chars[start];
    let mut i = start + 1;
    let mut words: Vec<(String, bool)> = Vec::new();
    loop {
        while chars.get(i).copied().is_some_and(is_ws) {
            i += 1;
        }
        match chars.get(i) {
            None => {
                return Err(FilterError::Unclosed {
                    filter: shown(text),
                })
            }
            Some(&close @ (']' | '}')) => {
                i += 1;
                let bad = || FilterError::BadRange {
                    range: chars[start..i].iter().collect(),
                };
                let [(lo, lo_q), (to, false), (hi, hi_q)] = words.as_slice() else {
                    return Err(bad());
                };
                if to != "TO" {
                    return Err(bad());
                }
                if open == '{' || close == '}' {
                    return Err(FilterError::Unsupported {
                        what: "ranges that leave an end out ({a TO b}); write [a TO b]",
                        filter: shown(text),
                    });
                }
                let bound = |w: &String, quoted: bool| (quoted || w != "*").then(|| w.clone());
                return Ok((
                    Tok::Range {
                        lo: bound(lo, *lo_q),
                        hi: bound(hi, *hi_q),
                        inclusive: true,
                    },
                    i,
                ));
            }
            Some('"') => {
                let mut word = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => {
                            return Err(FilterError::Unclosed {
                                filter: shown(text),
                            })
                        }
                        Some('"') => break,
                        Some('\\') => {
                            word.push('\\');
                            if let Some(&n) = chars.get(i + 1) {
                                word.push(n);
                            }
                            i += 2;
                        }
                        Some(&ch) => {
                            word.push(ch);
                            i += 1;
                        }
                    }
                }
                i += 1;
                words.push((word, true));
            }
            Some(_) => {
                let mut word = String::new();
                while let Some(&ch) = chars.get(i) {
                    if is_ws(ch) || ch == ']' || ch == '}' {
                        break;
                    }
                    word.push(ch);
                    i += 1;
                }
                words.push((word, false));
            }
        }
    }
}

/// How a clause is joined to the one before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Conj {
    None,
    And,
    Or,
}

/// A clause's prefix: `+`, `-`/`!`/`NOT`, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Modifier {
    None,
    Required,
    Prohibited,
}

/// How a clause takes part in a boolean query (Lucene's `BooleanClause.Occur`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Occur {
    Must,
    Should,
    MustNot,
}

/// A parsed query before it becomes a [`Filter`]: a leaf, or a boolean query as Lucene builds it.
#[derive(Debug)]
enum Node {
    Leaf(Filter),
    Bool(Vec<(Occur, Node)>),
}

/// The occurs Lucene's `QueryParserBase.addClause` gives a group's clauses under the default
/// operator `q.op` (AND when `and_default`).
fn occurs(joins: &[(Conj, Modifier)], and_default: bool) -> Vec<Occur> {
    let mut out: Vec<Occur> = Vec::with_capacity(joins.len());
    for &(conj, modifier) in joins {
        if let Some(last) = out.last_mut() {
            if conj == Conj::And && *last != Occur::MustNot {
                *last = Occur::Must;
            }
            if and_default && conj == Conj::Or && *last != Occur::MustNot {
                *last = Occur::Should;
            }
        }
        let prohibited = modifier == Modifier::Prohibited;
        let required = if and_default {
            !prohibited && conj != Conj::Or
        } else {
            modifier == Modifier::Required || (conj == Conj::And && !prohibited)
        };
        out.push(if prohibited {
            Occur::MustNot
        } else if required {
            Occur::Must
        } else {
            Occur::Should
        });
    }
    out
}

/// What a group of occurs matches, as (clauses all required, clauses one of which is required,
/// clauses excluded): `SHOULD` clauses count only when there is no `MUST`, and one alone is required.
fn meaning(occurs: &[Occur]) -> (Vec<usize>, Vec<usize>, Vec<usize>) {
    let of = |o: Occur| -> Vec<usize> { (0..occurs.len()).filter(|&i| occurs[i] == o).collect() };
    let (must, should, not) = (of(Occur::Must), of(Occur::Should), of(Occur::MustNot));
    match (must.is_empty(), should.len()) {
        (false, _) => (must, Vec::new(), not),
        (true, 1) => (should, Vec::new(), not),
        (true, _) => (Vec::new(), should, not),
    }
}

/// A recursive-descent parser on the lines of Solr's `QueryParser.jj`:
/// `Query := Modifier? Clause (Conjunction? Modifier? Clause)*`,
/// `Clause := (field ':')? (Term | '(' Query ')')`.
struct Parser<'t> {
    tokens: Vec<(Tok, usize)>,
    pos: usize,
    /// Parentheses open around the current token.
    depth: usize,
    text: &'t str,
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        &self.tokens[self.pos].0
    }

    fn peek2(&self) -> &Tok {
        &self.tokens[(self.pos + 1).min(self.tokens.len() - 1)].0
    }

    fn take(&mut self) -> Tok {
        let t = self.tokens[self.pos].0.clone();
        if self.pos + 1 < self.tokens.len() {
            self.pos += 1;
        }
        t
    }

    /// Solr's answer to the current token: a syntax error (400).
    fn unexpected(&self) -> FilterError {
        let (tok, column) = &self.tokens[self.pos];
        if *tok == Tok::Eof {
            return FilterError::MissingClause {
                filter: shown(self.text),
            };
        }
        FilterError::Syntax {
            found: tok.image(),
            column: *column,
            filter: shown(self.text),
        }
    }

    fn modifier(&mut self) -> Modifier {
        match self.peek() {
            Tok::Plus => {
                self.take();
                Modifier::Required
            }
            Tok::Minus | Tok::Not => {
                self.take();
                Modifier::Prohibited
            }
            _ => Modifier::None,
        }
    }

    fn starts_clause(t: &Tok) -> bool {
        matches!(
            t,
            Tok::Not
                | Tok::Plus
                | Tok::Minus
                | Tok::LParen
                | Tok::Star
                | Tok::Term(_)
                | Tok::Quoted(_)
                | Tok::Range { .. }
        )
    }

    fn query(&mut self, field: Option<&str>) -> Result<Node, FilterError> {
        let mut joins = Vec::new();
        let mut nodes = Vec::new();
        let first = self.modifier();
        nodes.push(self.clause(field)?);
        joins.push((Conj::None, first));
        loop {
            let conj = match self.peek() {
                Tok::And => Conj::And,
                Tok::Or => Conj::Or,
                t if Self::starts_clause(t) => Conj::None,
                _ => break,
            };
            if conj != Conj::None {
                self.take();
            }
            let modifier = self.modifier();
            nodes.push(self.clause(field)?);
            joins.push((conj, modifier));
        }
        if nodes.len() == 1 && first == Modifier::None {
            return Ok(nodes.pop().expect("one clause"));
        }
        let (or, and) = (occurs(&joins, false), occurs(&joins, true));
        if meaning(&or) != meaning(&and) {
            return Err(FilterError::DependsOnDefaultOperator {
                filter: shown(self.text),
            });
        }
        Ok(Node::Bool(or.into_iter().zip(nodes).collect()))
    }

    fn clause(&mut self, field: Option<&str>) -> Result<Node, FilterError> {
        let mut field = field.map(str::to_owned);
        if matches!(self.peek(), Tok::Term(_) | Tok::Star) && *self.peek2() == Tok::Colon {
            field = Some(match self.take() {
                Tok::Term(raw) => unescape(&raw),
                _ => "*".to_owned(),
            });
            self.take();
        }
        match self.peek().clone() {
            Tok::LParen => {
                self.take();
                if self.depth == MAX_DEPTH {
                    return Err(FilterError::TooDeep { limit: MAX_DEPTH });
                }
                self.depth += 1;
                let inner = self.query(field.as_deref())?;
                match self.peek() {
                    Tok::RParen => {}
                    Tok::Eof => {
                        return Err(FilterError::MissingParen {
                            filter: shown(self.text),
                        })
                    }
                    _ => return Err(self.unexpected()),
                }
                self.take();
                self.depth -= 1;
                Ok(inner)
            }
            tok @ (Tok::Star | Tok::Term(_) | Tok::Quoted(_) | Tok::Range { .. }) => {
                let Some(field) = field else {
                    return Err(FilterError::NoField {
                        clause: tok.image(),
                    });
                };
                self.take();
                let leaf = match tok {
                    Tok::Star if field == "*" => Filter::All,
                    _ if field == "*" => {
                        return Err(FilterError::Unsupported {
                            what: "the field * other than in *:*",
                            filter: shown(self.text),
                        })
                    }
                    Tok::Star => Filter::Present(field),
                    Tok::Term(raw) | Tok::Quoted(raw) => Filter::Term {
                        field,
                        value: unescape(&raw),
                    },
                    Tok::Range { lo, hi, .. } => match (lo, hi) {
                        (None, None) => Filter::Present(field),
                        (lo, hi) => Filter::Range {
                            field,
                            lo: lo.as_deref().map(unescape),
                            hi: hi.as_deref().map(unescape),
                        },
                    },
                    _ => unreachable!("matched above"),
                };
                Ok(Node::Leaf(leaf))
            }
            _ => Err(self.unexpected()),
        }
    }
}

/// The filter a parsed query stands for. A query of prohibited clauses only matches nothing in
/// Lucene; Solr makes the outermost one (`-a`, `(-a)`, `field:(-a)`) match every document but
/// those, and leaves nested ones matching nothing (`x:1 OR (-a)` is `x:1`).
fn to_filter(node: Node, top: bool) -> Filter {
    let clauses = match node {
        Node::Leaf(f) => return f,
        Node::Bool(clauses) => clauses,
    };
    let occurs: Vec<Occur> = clauses.iter().map(|(o, _)| *o).collect();
    let (all, any, not) = meaning(&occurs);
    if all.is_empty() && any.is_empty() && !top {
        return Filter::Not(Box::new(Filter::All));
    }
    let mut nodes: Vec<Option<Node>> = clauses.into_iter().map(|(_, n)| Some(n)).collect();
    let mut take = |i: usize| to_filter(nodes[i].take().expect("each clause once"), false);
    let mut parts: Vec<Filter> = all.into_iter().map(&mut take).collect();
    if !any.is_empty() {
        parts.push(Filter::Or(any.into_iter().map(&mut take).collect()));
    }
    parts.extend(not.into_iter().map(|i| Filter::Not(Box::new(take(i)))));
    if parts.len() == 1 {
        parts.pop().expect("one part")
    } else {
        Filter::And(parts)
    }
}

/// A value with its backslash escapes resolved.
fn unescape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let mut chars = v.chars();
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
