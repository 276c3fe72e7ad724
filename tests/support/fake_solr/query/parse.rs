//! The parser: `Query := Modifiers Clause (Conjunction Modifiers Clause)*` over the lexer's
//! tokens, Lucene's `addClause` rules for `AND`/`OR`/`NOT`/`+`/`-` under either default operator,
//! the depth at which Solr's recursion overflows, and Solr's parse errors with the token lists
//! JavaCC prints for the states the transcripts show. The query node one clause's text becomes
//! is built in [`super::field`], and local params are read in [`super::local_params`].

use std::collections::VecDeque;

use super::super::error::SolrError;
use super::super::schema::Kind;
use super::field::{existence_query, field_query, known_field, prefix_query, range_query};
use super::lex::{Lexer, Tk, Token};
use super::local_params::parse_with_local_params;
use super::{Occur, Query, QueryCtx};

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

/// Parses a q or fq value (local params first, then the lucene parser).
pub fn parse_query(text: &str, ctx: &QueryCtx) -> Result<Query, SolrError> {
    if text.starts_with("{!") {
        return parse_with_local_params(text, ctx);
    }
    parse_lucene(text, ctx, &ctx.df, ctx.and_default)
}

pub(super) fn parse_lucene(
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
