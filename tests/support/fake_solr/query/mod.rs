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
//!
//! The modules:
//! - [`lex`]: the tokens of the query syntax, in the lexer's two modes;
//! - [`parse`]: tokens to a [`Query`], with Lucene's clause rules and Solr's parse errors;
//! - [`field`]: the text of one clause to a query node typed by the schema;
//! - [`local_params`]: `{!type k=v …}` prefixes and the query parsers they name;
//! - [`eval`]: a [`Query`] against one view of the index.

mod eval;
mod field;
mod lex;
mod local_params;
mod parse;

pub use eval::Searcher;
pub use parse::parse_query;

use super::index::Val;
use super::schema::Schema;

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
