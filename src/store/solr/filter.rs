//! A [`Filter`] as Solr `fq` parameters: the Solr store's half of the filter language (the parser and
//! the file store's evaluation are in [`crate::store::filter`]).
//!
//! Every value is phrase-quoted with `\` and `"` escaped ([`quote`]), so no value is ever pasted raw
//! into query syntax; lookups go through `{!terms}` (one term-set query for thousands of values), and
//! several lookups are the `should` clauses of one `{!bool}` query. A user's raw `fq`
//! ([`Filter::Solr`]) is sent alone, unchanged.

use crate::store::Filter;

/// The filter as one Solr `fq` in the standard query syntax. Every value is phrase-quoted with `\`
/// and `"` escaped (see [`quote`]), so no value is ever pasted raw into query syntax; negative numbers
/// are safe too.
pub fn fq(filter: &Filter) -> String {
    match filter {
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
        Filter::Not(f) => format!("(*:* -{})", group(f)),
        Filter::And(fs) => join(fs, " AND "),
        Filter::Or(fs) => join(fs, " OR "),
        Filter::Solr(fq) => fq.clone(),
    }
}

/// The filter as Solr `fq` parameters: one per part of a conjunction, which Solr intersects, so that
/// a user's raw `fq` (which may start with local params such as `{!term f=…}`) is always sent alone
/// and stays in Solr's filter cache. Lookups (parts holding [`Filter::AnyOf`]) differ on every read,
/// so they are marked `{!cache=false}`.
pub fn fqs(filter: &Filter) -> Vec<String> {
    let parts: Vec<&Filter> = match filter {
        Filter::All => Vec::new(),
        Filter::And(fs) => fs.iter().collect(),
        f => vec![f],
    };
    parts
        .into_iter()
        .map(|f| {
            lookup_fq(f).unwrap_or_else(|| {
                if f.has_lookup() {
                    format!("{{!cache=false}}{}", fq(f))
                } else {
                    fq(f)
                }
            })
        })
        .collect()
}

/// A part of a conjunction or disjunction, in parentheses where it needs them.
fn group(filter: &Filter) -> String {
    match filter {
        Filter::And(_) | Filter::Or(_) | Filter::Solr(_) => format!("({})", fq(filter)),
        _ => fq(filter),
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
    fs.iter().map(group).collect::<Vec<_>>().join(sep)
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

#[cfg(test)]
mod tests {
    use super::*;

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
            fq(&f),
            "sku:\"http://x.org/a\\\"b\" AND (*:* -exact_signature_l:[* TO *])"
        );
        let neg = Filter::Term {
            field: "exact_signature_l".into(),
            value: "-2401053093171183889".into(),
        };
        assert_eq!(fq(&neg), "exact_signature_l:\"-2401053093171183889\"");
    }

    #[test]
    fn any_of_renders_one_quoted_clause_each() {
        let f = Filter::any_of(
            "exact_signature_l",
            vec!["7".into(), "-12".into(), "7".into()],
        );
        assert_eq!(fq(&f), "exact_signature_l:(\"-12\" OR \"7\")");
        let urls = Filter::any_of("sku", vec!["http://a.org/\"x\"".into()]);
        assert_eq!(fq(&urls), "sku:(\"http://a.org/\\\"x\\\"\")");
        assert_eq!(fq(&Filter::any_of("id", Vec::new())), "(*:* -*:*)");
        let user = Filter::Solr("{!term f=title}a b".into());
        let looked_up = user.clone().and(Filter::Or(vec![f.clone(), urls.clone()]));
        // Lookups go through the terms parser; several are the should clauses of one bool query,
        // with `\\` and `'` escaped inside the quotes.
        assert_eq!(
            fqs(&looked_up),
            vec![
                "{!term f=title}a b".to_owned(),
                r#"{!bool should='{!terms f=exact_signature_l}-12,7' should='{!terms f=sku}http://a.org/"x"' cache=false}"#.to_owned()
            ]
        );
        let quoted = Filter::any_of("sku", vec!["http://a.org/it's\\".into(), "b".into()]);
        assert_eq!(
            fqs(&Filter::Or(vec![quoted.clone()])),
            vec![r"{!bool should='{!terms f=sku}b,http://a.org/it\'s\\' cache=false}".to_owned()]
        );
        // A value with a comma takes the next separator; one alone is a terms query of its own.
        let commas = Filter::any_of("sku", vec!["http://a.org/a,b".into(), "c".into()]);
        assert_eq!(
            fqs(&commas),
            vec!["{!terms f=sku separator=| cache=false}c|http://a.org/a,b".to_owned()]
        );
        // No separator fits, or an empty value: quoted phrases, as before.
        let odd = Filter::any_of("sku", vec!["".into(), "x".into()]);
        assert_eq!(
            fqs(&odd),
            vec![r#"{!cache=false}sku:("" OR "x")"#.to_owned()]
        );
        assert!(fqs(&Filter::All).is_empty());
    }
}
