//! From a field and the text of one clause to a query node typed by the schema: text fields
//! analyzed into terms or a phrase, other fields' values parsed as Solr parses them (Java's
//! number rules), and Solr's errors for unknown fields and prefix queries on points.

use super::super::analysis::analyze;
use super::super::error::SolrError;
use super::super::index::{parse_bool, parse_java_int, parse_java_long, Val};
use super::super::schema::{Kind, SField, Schema};
use super::{Occur, Query};

pub(super) fn known_field(schema: &Schema, field: &str) -> Result<SField, SolrError> {
    schema
        .field(field)
        .ok_or_else(|| SolrError::bad_request(format!("undefined field {field}")))
}

/// A value typed for `field`, parsed from what a user wrote.
pub(super) fn user_value(f: &SField, text: &str) -> Result<Val, SolrError> {
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
pub(super) fn field_query(
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

pub(super) fn existence_query(schema: &Schema, field: &str) -> Result<Query, SolrError> {
    known_field(schema, field)?;
    Ok(Query::Exists {
        field: field.into(),
    })
}

pub(super) fn prefix_query(schema: &Schema, field: &str, prefix: &str) -> Result<Query, SolrError> {
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

pub(super) fn range_query(
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
