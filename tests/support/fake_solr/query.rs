//! Solr's standard query parser, rebuilt on the lines of its JavaCC grammar: a modal lexer (a
//! default mode and a range mode), `Query := Modifiers Clause (Conjunction Modifiers Clause)*`,
//! Lucene's rules for turning `AND`/`OR`/`NOT`/`+`/`-` into required, optional and prohibited
//! clauses, local params (`{!term f=…}`, `{!terms f=…}`, `{!field}`, `{!prefix}`, `{!lucene}`),
//! and the parse errors Solr prints, with the token lists JavaCC prints for the states the
//! transcripts show.
//!
//! Evaluation runs against one view of the index (committed for `/select`, real-time for `/get`
//! and delete-by-query) and tells whether a document matches; there are no scores, as the client
//! always sorts (by id) and never asks for one.
//!
//! Deliberate simplifications: fuzzy slop, boosts and regular expressions are parsed but not
//! applied (a regexp is a 400), and a purely negative sub-query matches everything but its
//! clauses at any depth (Solr does this at the top level and for filters).

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

use super::analysis::analyze;
use super::error::SolrError;
use super::index::{
    compare_vals, doc_values, parse_bool, parse_java_int, parse_java_long, Doc, Val,
};
use super::schema::{Kind, SField, Schema};

/// How a clause takes part in a boolean query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Occur {
    Must,
    Should,
    MustNot,
}

/// A parsed query.
#[derive(Clone, Debug, PartialEq)]
pub enum Query {
    All,
    Nothing,
    /// One indexed term: a token of a text field, or a whole value of any other field.
    Term {
        field: String,
        term: Val,
    },
    Phrase {
        field: String,
        terms: Vec<String>,
    },
    Range {
        field: String,
        lo: Option<Val>,
        hi: Option<Val>,
        lo_incl: bool,
        hi_incl: bool,
    },
    Exists {
        field: String,
    },
    Prefix {
        field: String,
        prefix: String,
    },
    Wildcard {
        field: String,
        pattern: String,
    },
    Terms {
        field: String,
        terms: Vec<Val>,
    },
    Bool(Vec<(Occur, Query)>),
    /// Matches like the inner query, scores 0 (`filter(…)`).
    Filter(Box<Query>),
}

/// What a query string is parsed against.
pub struct QueryCtx<'a> {
    pub schema: &'a Schema,
    /// `df`.
    pub df: String,
    /// `q.op=AND`.
    pub and_default: bool,
    /// Request parameters, for `$name` references in local params.
    pub params: &'a [(String, String)],
}

// ----------------------------------------------------------------------------------------------
// Lexer

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tk {
    Eof,
    And,
    Or,
    Not,
    Plus,
    Minus,
    BareOper,
    LParen,
    RParen,
    Colon,
    Star,
    Carat,
    Quoted,
    Term,
    FuzzySlop,
    PrefixTerm,
    WildTerm,
    RegexpTerm,
    RangeInStart,
    RangeExStart,
    LParams,
    Filter,
    Number,
    RangeTo,
    RangeInEnd,
    RangeExEnd,
    RangeQuoted,
    RangeGoop,
}

impl Tk {
    /// JavaCC's `tokenImage`.
    fn image(self) -> &'static str {
        match self {
            Tk::Eof => "<EOF>",
            Tk::And => "<AND>",
            Tk::Or => "<OR>",
            Tk::Not => "<NOT>",
            Tk::Plus => "\"+\"",
            Tk::Minus => "\"-\"",
            Tk::BareOper => "<BAREOPER>",
            Tk::LParen => "\"(\"",
            Tk::RParen => "\")\"",
            Tk::Colon => "\":\"",
            Tk::Star => "\"*\"",
            Tk::Carat => "\"^\"",
            Tk::Quoted => "<QUOTED>",
            Tk::Term => "<TERM>",
            Tk::FuzzySlop => "<FUZZY_SLOP>",
            Tk::PrefixTerm => "<PREFIXTERM>",
            Tk::WildTerm => "<WILDTERM>",
            Tk::RegexpTerm => "<REGEXPTERM>",
            Tk::RangeInStart => "\"[\"",
            Tk::RangeExStart => "\"{\"",
            Tk::LParams => "<LPARAMS>",
            Tk::Filter => "\"filter(\"",
            Tk::Number => "<NUMBER>",
            Tk::RangeTo => "\"TO\"",
            Tk::RangeInEnd => "\"]\"",
            Tk::RangeExEnd => "\"}\"",
            Tk::RangeQuoted => "<RANGE_QUOTED>",
            Tk::RangeGoop => "<RANGE_GOOP>",
        }
    }
}

#[derive(Clone, Debug)]
struct Token {
    kind: Tk,
    image: String,
    begin: usize,
}

/// Tokens a clause may start with (after optional modifiers).
const CLAUSE_START: [Tk; 13] = [
    Tk::BareOper,
    Tk::LParen,
    Tk::Star,
    Tk::Quoted,
    Tk::Term,
    Tk::PrefixTerm,
    Tk::WildTerm,
    Tk::RegexpTerm,
    Tk::RangeInStart,
    Tk::RangeExStart,
    Tk::LParams,
    Tk::Filter,
    Tk::Number,
];

/// Expected at the start of a query or after a conjunction.
const EXPECT_CLAUSE: [Tk; 17] = [
    Tk::Not,
    Tk::Plus,
    Tk::Minus,
    Tk::BareOper,
    Tk::LParen,
    Tk::Star,
    Tk::Quoted,
    Tk::Term,
    Tk::PrefixTerm,
    Tk::WildTerm,
    Tk::RegexpTerm,
    Tk::RangeInStart,
    Tk::RangeExStart,
    Tk::LParams,
    Tk::Filter,
    Tk::Number,
    Tk::Term,
];

/// Expected after `field:`.
const EXPECT_TERM: [Tk; 13] = [
    Tk::BareOper,
    Tk::LParen,
    Tk::Star,
    Tk::Quoted,
    Tk::Term,
    Tk::PrefixTerm,
    Tk::WildTerm,
    Tk::RegexpTerm,
    Tk::RangeInStart,
    Tk::RangeExStart,
    Tk::LParams,
    Tk::Filter,
    Tk::Number,
];

/// Expected after a clause at the top level.
const EXPECT_MORE_TOP: [Tk; 21] = [
    Tk::Eof,
    Tk::And,
    Tk::Or,
    Tk::Not,
    Tk::Plus,
    Tk::Minus,
    Tk::BareOper,
    Tk::LParen,
    Tk::Star,
    Tk::Carat,
    Tk::Quoted,
    Tk::Term,
    Tk::FuzzySlop,
    Tk::PrefixTerm,
    Tk::WildTerm,
    Tk::RegexpTerm,
    Tk::RangeInStart,
    Tk::RangeExStart,
    Tk::LParams,
    Tk::Filter,
    Tk::Number,
];

/// Expected after a clause inside parentheses.
const EXPECT_MORE_GROUP: [Tk; 21] = [
    Tk::And,
    Tk::Or,
    Tk::Not,
    Tk::Plus,
    Tk::Minus,
    Tk::BareOper,
    Tk::LParen,
    Tk::RParen,
    Tk::Star,
    Tk::Carat,
    Tk::Quoted,
    Tk::Term,
    Tk::FuzzySlop,
    Tk::PrefixTerm,
    Tk::WildTerm,
    Tk::RegexpTerm,
    Tk::RangeInStart,
    Tk::RangeExStart,
    Tk::LParams,
    Tk::Filter,
    Tk::Number,
];

/// Expected inside a range.
const EXPECT_RANGE: [Tk; 3] = [Tk::RangeTo, Tk::RangeQuoted, Tk::RangeGoop];

fn is_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\u{3000}')
}

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

fn is_term_char(c: char) -> bool {
    is_term_start(c) || matches!(c, '-' | '+' | '/' | '!')
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    in_range: bool,
}

/// A lexical error (JavaCC's `TokenMgrError`).
struct LexError {
    column: usize,
    after: String,
}

impl Lexer {
    fn next(&mut self) -> Result<Token, LexError> {
        while self.pos < self.chars.len() && is_ws(self.chars[self.pos]) {
            self.pos += 1;
        }
        let begin = self.pos;
        let Some(&c) = self.chars.get(self.pos) else {
            return Ok(Token {
                kind: Tk::Eof,
                image: String::new(),
                begin,
            });
        };
        let at = |i: usize| self.chars.get(i).copied();
        let tok = |kind: Tk, end: usize, lx: &mut Lexer| {
            let image: String = lx.chars[begin..end].iter().collect();
            lx.pos = end;
            Ok(Token { kind, image, begin })
        };
        if self.in_range {
            match c {
                ']' => {
                    self.in_range = false;
                    return tok(Tk::RangeInEnd, begin + 1, self);
                }
                '}' => {
                    self.in_range = false;
                    return tok(Tk::RangeExEnd, begin + 1, self);
                }
                '"' => {
                    let mut i = begin + 1;
                    while i < self.chars.len() && self.chars[i] != '"' {
                        if self.chars[i] == '\\' {
                            i += 1;
                        }
                        i += 1;
                    }
                    if i >= self.chars.len() {
                        return Err(self.lex_error(begin));
                    }
                    return tok(Tk::RangeQuoted, i + 1, self);
                }
                _ => {
                    let mut i = begin;
                    while i < self.chars.len()
                        && !matches!(self.chars[i], ' ' | ']' | '}')
                        && !is_ws(self.chars[i])
                    {
                        i += 1;
                    }
                    let kind = if i - begin == 2
                        && self.chars[begin] == 'T'
                        && self.chars[begin + 1] == 'O'
                    {
                        Tk::RangeTo
                    } else {
                        Tk::RangeGoop
                    };
                    return tok(kind, i, self);
                }
            }
        }
        match c {
            '&' if at(begin + 1) == Some('&') => tok(Tk::And, begin + 2, self),
            '|' if at(begin + 1) == Some('|') => tok(Tk::Or, begin + 2, self),
            '+' | '-' | '!' if at(begin + 1).is_some_and(is_ws) => {
                tok(Tk::BareOper, begin + 2, self)
            }
            '+' => tok(Tk::Plus, begin + 1, self),
            '-' => tok(Tk::Minus, begin + 1, self),
            '!' => tok(Tk::Not, begin + 1, self),
            '(' => tok(Tk::LParen, begin + 1, self),
            ')' => tok(Tk::RParen, begin + 1, self),
            ':' => tok(Tk::Colon, begin + 1, self),
            '^' => {
                let mut i = begin + 1;
                while i < self.chars.len()
                    && (self.chars[i].is_ascii_digit() || self.chars[i] == '.')
                {
                    i += 1;
                }
                tok(Tk::Carat, i, self)
            }
            '~' => {
                let mut i = begin + 1;
                while i < self.chars.len()
                    && (self.chars[i].is_ascii_digit() || self.chars[i] == '.')
                {
                    i += 1;
                }
                tok(Tk::FuzzySlop, i, self)
            }
            '"' => {
                let mut i = begin + 1;
                while i < self.chars.len() && self.chars[i] != '"' {
                    if self.chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                if i >= self.chars.len() {
                    return Err(self.lex_error(begin));
                }
                tok(Tk::Quoted, i + 1, self)
            }
            '[' => {
                self.in_range = true;
                tok(Tk::RangeInStart, begin + 1, self)
            }
            '{' if at(begin + 1) == Some('!') => {
                let mut i = begin + 2;
                let mut quote: Option<char> = None;
                while i < self.chars.len() {
                    let ch = self.chars[i];
                    match quote {
                        Some(q) if ch == q => quote = None,
                        Some(_) => {}
                        None if ch == '\'' || ch == '"' => quote = Some(ch),
                        None if ch == '}' => break,
                        None => {}
                    }
                    i += 1;
                }
                if i >= self.chars.len() {
                    return Err(self.lex_error(begin));
                }
                i += 1;
                while i < self.chars.len()
                    && !matches!(self.chars[i], ')' | ' ' | '\t' | '\n' | '{' | '^')
                {
                    i += 1;
                }
                tok(Tk::LParams, i, self)
            }
            '{' => {
                self.in_range = true;
                tok(Tk::RangeExStart, begin + 1, self)
            }
            '/' => {
                let mut i = begin + 1;
                while i < self.chars.len() && self.chars[i] != '/' {
                    if self.chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                if i >= self.chars.len() {
                    return Err(self.lex_error(begin));
                }
                tok(Tk::RegexpTerm, i + 1, self)
            }
            'f' if self.chars[begin..].starts_with(&['f', 'i', 'l', 't', 'e', 'r', '(']) => {
                tok(Tk::Filter, begin + 7, self)
            }
            c if is_term_start(c) || c == '\\' || c == '*' || c == '?' => {
                let mut i = begin;
                let mut wild = 0usize;
                let mut trailing_star_only = false;
                while i < self.chars.len() {
                    let ch = self.chars[i];
                    if ch == '\\' {
                        if i + 1 >= self.chars.len() {
                            return Err(self.lex_error(i + 1));
                        }
                        i += 2;
                        continue;
                    }
                    if ch == '*' || ch == '?' {
                        wild += 1;
                        trailing_star_only = ch == '*';
                        i += 1;
                        continue;
                    }
                    if (i == begin && is_term_start(ch)) || (i > begin && is_term_char(ch)) {
                        if wild > 0 {
                            trailing_star_only = false;
                        }
                        i += 1;
                        continue;
                    }
                    break;
                }
                let len = i - begin;
                let image: String = self.chars[begin..i].iter().collect();
                let kind = if c == '*' && len == 1 {
                    Tk::Star
                } else if image == "AND" {
                    Tk::And
                } else if image == "OR" {
                    Tk::Or
                } else if image == "NOT" {
                    Tk::Not
                } else if wild == 1 && trailing_star_only && c != '*' {
                    Tk::PrefixTerm
                } else if wild > 0 {
                    Tk::WildTerm
                } else {
                    Tk::Term
                };
                tok(kind, i, self)
            }
            _ => Err(self.lex_error(begin)),
        }
    }

    fn lex_error(&self, at: usize) -> LexError {
        LexError {
            column: at,
            after: self.chars[at.min(self.chars.len())..].iter().collect(),
        }
    }
}

// ----------------------------------------------------------------------------------------------
// Parser

fn add_escapes(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '"' => out.push_str("\\\""),
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

/// Removes query-syntax backslash escapes.
pub fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            if let Some(n) = it.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

struct Parser<'a, 'b> {
    lexer: Lexer,
    ahead: VecDeque<Token>,
    text: String,
    ctx: &'b QueryCtx<'a>,
    and_default: bool,
    /// Groups open around the current token.
    depth: usize,
}

/// How deeply groups may nest before the parser "overflows its stack". Solr's JavaCC parser
/// recurses twice per group and answers 500 `java.lang.StackOverflowError` when the thread's stack
/// runs out: the Solr of `tests/solr` (1 MiB stacks) parsed 2,000 levels and overflowed at 3,000,
/// and a Solr started by `bin/solr` runs with 256 KiB stacks. The fake overflows past 1,000.
pub const STACK_DEPTH: usize = 1000;

/// `Cannot parse 'q': …` as Solr wraps a parse error.
fn syntax_error(text: &str, detail: String, root: &'static str) -> SolrError {
    SolrError::bad_request(format!(
        "org.apache.solr.search.SyntaxError: Cannot parse '{text}': {detail}"
    ))
    .root(root)
}

impl<'a, 'b> Parser<'a, 'b> {
    fn fill(&mut self, n: usize) -> Result<(), SolrError> {
        while self.ahead.len() < n {
            match self.lexer.next() {
                Ok(t) => self.ahead.push_back(t),
                Err(e) => {
                    let after = if e.after.is_empty() {
                        "<EOF>".to_string()
                    } else {
                        format!(
                            "\"{}\"",
                            add_escapes(&e.after.chars().take(1).collect::<String>())
                        )
                    };
                    return Err(syntax_error(
                        &self.text,
                        format!(
                            "Lexical error at line 1, column {}.  Encountered: {after} after : \"\"",
                            e.column
                        ),
                        "org.apache.solr.parser.TokenMgrError",
                    ));
                }
            }
        }
        Ok(())
    }

    fn peek(&mut self) -> Result<Tk, SolrError> {
        self.fill(1)?;
        Ok(self.ahead[0].kind)
    }

    fn peek2(&mut self) -> Result<Tk, SolrError> {
        self.fill(2)?;
        Ok(self.ahead[1].kind)
    }

    fn take(&mut self) -> Result<Token, SolrError> {
        self.fill(1)?;
        Ok(self.ahead.pop_front().expect("filled"))
    }

    fn error(&mut self, expected: &[Tk]) -> SolrError {
        if let Err(e) = self.fill(1) {
            return e;
        }
        let tok = self.ahead[0].clone();
        let encountered = if tok.kind == Tk::Eof {
            "<EOF>".to_string()
        } else {
            format!(" {} \"{} \"", tok.kind.image(), add_escapes(&tok.image))
        };
        let mut list = String::new();
        for t in expected {
            list.push_str(t.image());
            list.push(' ');
            if *t != Tk::Eof {
                list.push_str("...");
            }
            list.push_str("\n    ");
        }
        syntax_error(
            &self.text,
            format!(
                "Encountered \"{encountered}\" at line 1, column {}.\nWas expecting one of:\n    {list}",
                tok.begin
            ),
            "org.apache.solr.parser.ParseException",
        )
    }

    fn top(&mut self) -> Result<Query, SolrError> {
        if self.peek()? == Tk::Eof {
            return Ok(Query::Nothing);
        }
        let q = self.query(&self.ctx.df.clone())?;
        if self.peek()? != Tk::Eof {
            return Err(self.error(&EXPECT_MORE_TOP));
        }
        Ok(q)
    }

    fn modifiers(&mut self) -> Result<Option<Occur>, SolrError> {
        Ok(match self.peek()? {
            Tk::Plus => {
                self.take()?;
                Some(Occur::Must)
            }
            Tk::Minus | Tk::Not => {
                self.take()?;
                Some(Occur::MustNot)
            }
            _ => None,
        })
    }

    fn query(&mut self, field: &str) -> Result<Query, SolrError> {
        let mut clauses: Vec<(Occur, Query)> = Vec::new();
        let mods = self.modifiers()?;
        let q = self.clause(field, &EXPECT_CLAUSE)?;
        self.add_clause(&mut clauses, None, mods, q);
        loop {
            let next = self.peek()?;
            let conj = match next {
                Tk::And | Tk::Or => {
                    self.take()?;
                    Some(next)
                }
                Tk::Not | Tk::Plus | Tk::Minus => None,
                t if CLAUSE_START.contains(&t) => None,
                _ => break,
            };
            let mods = self.modifiers()?;
            let q = self.clause(field, &EXPECT_CLAUSE)?;
            self.add_clause(&mut clauses, conj, mods, q);
        }
        if clauses.len() == 1 && clauses[0].0 != Occur::MustNot {
            return Ok(clauses.pop().expect("one").1);
        }
        if clauses.is_empty() {
            return Ok(Query::Nothing);
        }
        Ok(Query::Bool(clauses))
    }

    /// Lucene's `QueryParserBase.addClause`.
    fn add_clause(
        &self,
        clauses: &mut Vec<(Occur, Query)>,
        conj: Option<Tk>,
        mods: Option<Occur>,
        q: Option<Query>,
    ) {
        if conj == Some(Tk::And) {
            if let Some(last) = clauses.last_mut() {
                if last.0 != Occur::MustNot {
                    last.0 = Occur::Must;
                }
            }
        }
        if self.and_default && conj == Some(Tk::Or) {
            if let Some(last) = clauses.last_mut() {
                if last.0 != Occur::MustNot {
                    last.0 = Occur::Should;
                }
            }
        }
        let Some(q) = q else { return };
        let prohibited = mods == Some(Occur::MustNot);
        let required = if self.and_default {
            !prohibited && conj != Some(Tk::Or)
        } else {
            mods == Some(Occur::Must) || (conj == Some(Tk::And) && !prohibited)
        };
        let occur = if prohibited {
            Occur::MustNot
        } else if required {
            Occur::Must
        } else {
            Occur::Should
        };
        clauses.push((occur, q));
    }

    fn clause(&mut self, field: &str, start_list: &[Tk]) -> Result<Option<Query>, SolrError> {
        let mut field = field.to_string();
        let mut explicit = false;
        let first = self.peek()?;
        if (first == Tk::Term || first == Tk::Star) && self.peek2()? == Tk::Colon {
            let t = self.take()?;
            self.take()?;
            field = if t.kind == Tk::Star {
                "*".into()
            } else {
                unescape(&t.image)
            };
            explicit = true;
        }
        match self.peek()? {
            Tk::LParen => {
                self.take()?;
                self.depth += 1;
                if self.depth > STACK_DEPTH {
                    return Err(SolrError::stack_overflow());
                }
                let q = self.query(&field)?;
                self.depth -= 1;
                if self.peek()? != Tk::RParen {
                    return Err(self.error(&EXPECT_MORE_GROUP));
                }
                self.take()?;
                if self.peek()? == Tk::Carat {
                    self.take()?;
                }
                Ok(Some(q))
            }
            Tk::Filter => {
                self.take()?;
                self.depth += 1;
                if self.depth > STACK_DEPTH {
                    return Err(SolrError::stack_overflow());
                }
                let q = self.query(&field)?;
                self.depth -= 1;
                if self.peek()? != Tk::RParen {
                    return Err(self.error(&EXPECT_MORE_GROUP));
                }
                self.take()?;
                Ok(Some(Query::Filter(Box::new(q))))
            }
            Tk::LParams => {
                let t = self.take()?;
                parse_with_local_params(&t.image, self.ctx).map(Some)
            }
            t if CLAUSE_START.contains(&t) => self.term(&field),
            _ => Err(self.error(if explicit { &EXPECT_TERM } else { start_list })),
        }
    }

    fn term(&mut self, field: &str) -> Result<Option<Query>, SolrError> {
        let t = self.take()?;
        match t.kind {
            Tk::RangeInStart | Tk::RangeExStart => {
                let lo = self.take()?;
                if !EXPECT_RANGE.contains(&lo.kind) {
                    self.ahead.push_front(lo);
                    return Err(self.error(&EXPECT_RANGE));
                }
                if self.peek()? == Tk::RangeTo {
                    self.take()?;
                }
                let hi = self.take()?;
                if !EXPECT_RANGE.contains(&hi.kind) {
                    self.ahead.push_front(hi);
                    return Err(self.error(&EXPECT_RANGE));
                }
                let end = self.take()?;
                if !matches!(end.kind, Tk::RangeInEnd | Tk::RangeExEnd) {
                    self.ahead.push_front(end);
                    return Err(self.error(&[Tk::RangeInEnd, Tk::RangeExEnd]));
                }
                if self.peek()? == Tk::Carat {
                    self.take()?;
                }
                let bound = |tok: &Token| -> Option<String> {
                    if tok.kind == Tk::RangeQuoted {
                        Some(unescape(&tok.image[1..tok.image.len() - 1]))
                    } else if tok.image == "*" {
                        None
                    } else {
                        Some(unescape(&tok.image))
                    }
                };
                range_query(
                    self.ctx.schema,
                    field,
                    bound(&lo),
                    bound(&hi),
                    t.kind == Tk::RangeInStart,
                    end.kind == Tk::RangeInEnd,
                )
                .map(Some)
            }
            Tk::Quoted => {
                self.skip_suffixes()?;
                let text = unescape(&t.image[1..t.image.len() - 1]);
                field_query(self.ctx.schema, field, &text, true, self.and_default)
            }
            Tk::Star => {
                self.skip_suffixes()?;
                if field == "*" {
                    return Ok(Some(Query::All));
                }
                existence_query(self.ctx.schema, field).map(Some)
            }
            Tk::PrefixTerm => {
                self.skip_suffixes()?;
                let text = unescape(&t.image[..t.image.len() - 1]);
                prefix_query(self.ctx.schema, field, &text).map(Some)
            }
            Tk::WildTerm => {
                self.skip_suffixes()?;
                let f = known_field(self.ctx.schema, field)?;
                let pattern = if f.kind == Kind::Text {
                    t.image.to_lowercase()
                } else {
                    t.image.clone()
                };
                Ok(Some(Query::Wildcard {
                    field: field.into(),
                    pattern,
                }))
            }
            Tk::RegexpTerm => Err(SolrError::bad_request(
                "fake solr: regular expression queries are not supported",
            )),
            _ => {
                self.skip_suffixes()?;
                let text = if t.kind == Tk::BareOper {
                    t.image.trim().to_string()
                } else {
                    unescape(&t.image)
                };
                field_query(self.ctx.schema, field, &text, false, self.and_default)
            }
        }
    }

    fn skip_suffixes(&mut self) -> Result<(), SolrError> {
        if self.peek()? == Tk::FuzzySlop {
            self.take()?;
        }
        if self.peek()? == Tk::Carat {
            self.take()?;
            if self.peek()? == Tk::FuzzySlop {
                self.take()?;
            }
        }
        Ok(())
    }
}

fn known_field(schema: &Schema, field: &str) -> Result<SField, SolrError> {
    schema
        .field(field)
        .ok_or_else(|| SolrError::bad_request(format!("undefined field {field}")))
}

/// A value typed for `field`, parsed from what a user wrote.
fn user_value(f: &SField, text: &str) -> Result<Val, SolrError> {
    let invalid = || SolrError::bad_request(format!("Invalid Number: {text} for field {}", f.name));
    Ok(match f.kind {
        Kind::Long => Val::Long(parse_java_long(text).or_else(|_| {
            let d: f64 = text.parse().map_err(|_| invalid())?;
            if d.fract() == 0.0 && d.abs() < 9.2e18 {
                Ok(d as i64)
            } else {
                Err(invalid())
            }
        })?),
        Kind::Int => Val::Int(parse_java_int(text).or_else(|_| {
            let d: f64 = text.parse().map_err(|_| invalid())?;
            if d.fract() == 0.0 && d.abs() <= i32::MAX as f64 {
                Ok(d as i32)
            } else {
                Err(invalid())
            }
        })?),
        Kind::Float => Val::Float(text.parse::<f32>().map_err(|_| invalid())?),
        Kind::Double => Val::Double(text.parse::<f64>().map_err(|_| invalid())?),
        Kind::Bool => Val::Bool(parse_bool(text)),
        _ => Val::Str(text.to_string()),
    })
}

/// `field:text` or `field:"text"`.
fn field_query(
    schema: &Schema,
    field: &str,
    text: &str,
    quoted: bool,
    and_default: bool,
) -> Result<Option<Query>, SolrError> {
    if field == "*" {
        return Err(SolrError::bad_request("undefined field *"));
    }
    let f = known_field(schema, field)?;
    if f.kind == Kind::Text {
        let tokens = analyze(text);
        return Ok(match tokens.len() {
            0 => None,
            1 => Some(Query::Term {
                field: field.into(),
                term: Val::Str(tokens[0].clone()),
            }),
            _ if quoted => Some(Query::Phrase {
                field: field.into(),
                terms: tokens,
            }),
            _ => {
                let occur = if and_default {
                    Occur::Must
                } else {
                    Occur::Should
                };
                Some(Query::Bool(
                    tokens
                        .into_iter()
                        .map(|t| {
                            (
                                occur,
                                Query::Term {
                                    field: field.into(),
                                    term: Val::Str(t),
                                },
                            )
                        })
                        .collect(),
                ))
            }
        });
    }
    Ok(Some(Query::Term {
        field: field.into(),
        term: user_value(&f, text)?,
    }))
}

fn existence_query(schema: &Schema, field: &str) -> Result<Query, SolrError> {
    known_field(schema, field)?;
    Ok(Query::Exists {
        field: field.into(),
    })
}

fn prefix_query(schema: &Schema, field: &str, prefix: &str) -> Result<Query, SolrError> {
    let f = known_field(schema, field)?;
    if f.kind.is_point() {
        return Err(SolrError::bad_request(
            "Can't run prefix queries on numeric fields".to_string(),
        ));
    }
    Ok(Query::Prefix {
        field: field.into(),
        prefix: if f.kind == Kind::Text {
            prefix.to_lowercase()
        } else {
            prefix.to_string()
        },
    })
}

fn range_query(
    schema: &Schema,
    field: &str,
    lo: Option<String>,
    hi: Option<String>,
    lo_incl: bool,
    hi_incl: bool,
) -> Result<Query, SolrError> {
    let Some(f) = schema.field(field) else {
        return Err(SolrError::bad_request(format!(
            "undefined field: \"{field}\""
        )));
    };
    if lo.is_none() && hi.is_none() {
        return Ok(Query::Exists {
            field: field.into(),
        });
    }
    let conv = |b: Option<String>| -> Result<Option<Val>, SolrError> {
        match b {
            None => Ok(None),
            Some(t) if f.kind == Kind::Text => Ok(Some(Val::Str(t.to_lowercase()))),
            Some(t) => user_value(&f, &t).map(Some),
        }
    };
    Ok(Query::Range {
        field: field.into(),
        lo: conv(lo)?,
        hi: conv(hi)?,
        lo_incl,
        hi_incl,
    })
}

/// Local params `{!type k=v …}`: the type, the pairs, and the rest of the text after `}`.
pub type LocalParams = (String, Vec<(String, String)>, String);

/// Splits local params off a query.
pub fn split_local_params(text: &str) -> Option<LocalParams> {
    let rest = text.strip_prefix("{!")?;
    let chars: Vec<char> = rest.chars().collect();
    let mut i = 0;
    let mut pairs = Vec::new();
    let mut kind = String::new();
    loop {
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        if i >= chars.len() {
            return None;
        }
        if chars[i] == '}' {
            i += 1;
            break;
        }
        let start = i;
        while i < chars.len() && !chars[i].is_whitespace() && chars[i] != '=' && chars[i] != '}' {
            i += 1;
        }
        let key: String = chars[start..i].iter().collect();
        if i < chars.len() && chars[i] == '=' {
            i += 1;
            let value: String = if i < chars.len() && (chars[i] == '\'' || chars[i] == '"') {
                // Backslash escapes work within quotes, as in Solr's StrParser.getQuotedString.
                let q = chars[i];
                i += 1;
                let mut v = String::new();
                while i < chars.len() && chars[i] != q {
                    if chars[i] == '\\' && i + 1 < chars.len() {
                        i += 1;
                        v.push(match chars[i] {
                            'n' => '\n',
                            't' => '\t',
                            'r' => '\r',
                            c => c,
                        });
                    } else {
                        v.push(chars[i]);
                    }
                    i += 1;
                }
                i += 1;
                v
            } else {
                let s = i;
                while i < chars.len() && !chars[i].is_whitespace() && chars[i] != '}' {
                    i += 1;
                }
                chars[s..i].iter().collect()
            };
            if key == "type" {
                kind = value;
            } else {
                pairs.push((key, value));
            }
        } else if kind.is_empty() && pairs.is_empty() {
            kind = key;
        }
    }
    let rest: String = chars[i.min(chars.len())..].iter().collect();
    Some((kind, pairs, rest))
}

/// Parses a q or fq value (local params first, then the lucene parser).
pub fn parse_query(text: &str, ctx: &QueryCtx) -> Result<Query, SolrError> {
    if text.starts_with("{!") {
        return parse_with_local_params(text, ctx);
    }
    parse_lucene(text, ctx, &ctx.df, ctx.and_default)
}

fn parse_lucene(
    text: &str,
    ctx: &QueryCtx,
    df: &str,
    and_default: bool,
) -> Result<Query, SolrError> {
    let ctx2 = QueryCtx {
        schema: ctx.schema,
        df: df.to_string(),
        and_default,
        params: ctx.params,
    };
    let mut p = Parser {
        lexer: Lexer {
            chars: text.chars().collect(),
            pos: 0,
            in_range: false,
        },
        ahead: VecDeque::new(),
        text: text.to_string(),
        ctx: &ctx2,
        and_default,
        depth: 0,
    };
    p.top()
}

fn parse_with_local_params(text: &str, ctx: &QueryCtx) -> Result<Query, SolrError> {
    let Some((kind, pairs, rest)) = split_local_params(text) else {
        return Err(SolrError::bad_request(format!(
            "org.apache.solr.search.SyntaxError: Expected identifier at pos 0 str='{text}'"
        )));
    };
    let local = |k: &str| -> Option<String> {
        let v = pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())?;
        match v.strip_prefix('$') {
            Some(name) => ctx
                .params
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone()),
            None => Some(v),
        }
    };
    let value = local("v").unwrap_or(rest);
    let field = local("f");
    let need_field = || {
        field
            .clone()
            .ok_or_else(|| SolrError::bad_request("Missing field name: f"))
    };
    match kind.as_str() {
        "" | "lucene" | "edismax" | "dismax" => {
            let df = local("df").unwrap_or_else(|| ctx.df.clone());
            let and = local("q.op").map(|o| o == "AND").unwrap_or(ctx.and_default);
            parse_lucene(&value, ctx, &df, and)
        }
        "term" | "raw" => {
            let f = need_field()?;
            let Some(sf) = ctx.schema.field(&f) else {
                return Ok(Query::Nothing);
            };
            Ok(Query::Term {
                term: if sf.kind == Kind::Text {
                    Val::Str(value)
                } else {
                    user_value(&sf, &value)?
                },
                field: f,
            })
        }
        "terms" => {
            let f = need_field()?;
            let Some(sf) = ctx.schema.field(&f) else {
                return Err(SolrError::bad_request(format!("undefined field: \"{f}\"")));
            };
            let sep = local("separator").unwrap_or_else(|| ",".into());
            let mut terms = Vec::new();
            for part in value.split(sep.as_str()).filter(|s| !s.is_empty()) {
                terms.push(if sf.kind == Kind::Text {
                    Val::Str(part.to_string())
                } else {
                    user_value(&sf, part)?
                });
            }
            Ok(Query::Terms { field: f, terms })
        }
        "bool" => {
            // Solr's BoolQParserPlugin: must, must_not, should and filter clauses, each a query
            // of its own (local params and `$` references included).
            let mut clauses = Vec::new();
            for (k, v) in &pairs {
                let occur = match k.as_str() {
                    "must" | "filter" => Occur::Must,
                    "should" => Occur::Should,
                    "must_not" => Occur::MustNot,
                    _ => continue,
                };
                let text = match v.strip_prefix('$') {
                    Some(name) => match ctx.params.iter().find(|(n, _)| n == name) {
                        Some((_, t)) => t.clone(),
                        None => continue,
                    },
                    None => v.clone(),
                };
                clauses.push((occur, parse_query(&text, ctx)?));
            }
            Ok(Query::Bool(clauses))
        }
        "field" => {
            let f = need_field()?;
            Ok(field_query(ctx.schema, &f, &value, true, false)?.unwrap_or(Query::Nothing))
        }
        "prefix" => {
            let f = need_field()?;
            prefix_query(ctx.schema, &f, &value)
        }
        other => Err(SolrError::bad_request(format!(
            "Unknown query parser '{other}'"
        ))),
    }
}

// ----------------------------------------------------------------------------------------------
// Evaluation

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
