//! Local params: splitting `{!type k=v …}` off a query (quotes, escapes and `$name` references
//! as Solr reads them), and the query parsers they name (`lucene`, `term`, `terms`, `bool`,
//! `field`, `prefix`).

use super::super::error::SolrError;
use super::super::index::Val;
use super::super::schema::Kind;
use super::field::{field_query, prefix_query, user_value};
use super::parse::{parse_lucene, parse_query};
use super::{Occur, Query, QueryCtx};

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

pub(super) fn parse_with_local_params(text: &str, ctx: &QueryCtx) -> Result<Query, SolrError> {
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
