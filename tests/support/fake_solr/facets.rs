//! Facets through the JSON Facet API, the one facet shape the client asks for (classic
//! `facet=true` is answered 400 `fake solr: …`): `terms` (limit, offset, mincount, sort by count,
//! index or a nested stat, `numBuckets` and `allBuckets` that ignore mincount, `missing`,
//! `domain.filter`), `query` facets, and the stats `min`, `max`, `sum` (a double), `avg`,
//! `unique`, `hll`, `countvals`, `missing` and `sumsq`. No matching document gives just
//! `{"count":0}`.
//!
//! Ties in count order are broken by index order (numeric for numbers).

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use super::error::SolrError;
use super::index::{compare_vals, doc_values, Doc, Val};
use super::json::JVal;
use super::query::{parse_query, QueryCtx, Searcher};
use super::schema::Kind;

/// Distinct indexed terms of a field in one document.
fn doc_terms(s: &Searcher, doc: &Doc, field: &str) -> Vec<Val> {
    let mut t = s.terms(doc, field);
    t.sort_by(compare_vals);
    t.dedup();
    t
}

/// Term counts over `docs`, in index order, plus the documents with no term.
fn count_terms<'d>(
    s: &Searcher,
    docs: &[&'d Doc],
    field: &str,
) -> (Vec<(Val, Vec<&'d Doc>)>, Vec<&'d Doc>) {
    let mut by_key: HashMap<String, usize> = HashMap::new();
    let mut buckets: Vec<(Val, Vec<&Doc>)> = Vec::new();
    let mut missing = Vec::new();
    for d in docs {
        let terms = doc_terms(s, d, field);
        if terms.is_empty() {
            missing.push(*d);
        }
        for t in terms {
            let key = format!("{t:?}");
            match by_key.get(&key) {
                Some(&i) => buckets[i].1.push(*d),
                None => {
                    by_key.insert(key, buckets.len());
                    buckets.push((t, vec![*d]));
                }
            }
        }
    }
    buckets.sort_by(|a, b| compare_vals(&a.0, &b.0));
    (buckets, missing)
}

#[derive(Clone, Debug)]
pub enum SortBy {
    Count,
    Index,
    Stat(String),
}

#[derive(Clone, Debug)]
pub struct TermsFacet {
    pub field: String,
    pub limit: i64,
    pub offset: usize,
    pub mincount: usize,
    pub sort: (SortBy, bool),
    pub num_buckets: bool,
    pub all_buckets: bool,
    pub missing: bool,
    pub prefix: Option<String>,
    pub subs: Vec<(String, JFacet)>,
    pub domain_filters: Vec<String>,
}

#[derive(Clone, Debug)]
pub enum JFacet {
    Stat {
        func: String,
        field: String,
    },
    Terms(Box<TermsFacet>),
    Query {
        q: String,
        subs: Vec<(String, JFacet)>,
        domain_filters: Vec<String>,
    },
    /// `type: range` with arbitrary `ranges` of a long field (the form the worker sends; `start`,
    /// `end` and `gap` are not emulated): `(from, to, inclusive_from, inclusive_to)`.
    Ranges {
        field: String,
        ranges: Vec<(i64, i64, bool, bool)>,
    },
}

const AGGREGATIONS: [&str; 9] = [
    "min",
    "max",
    "sum",
    "avg",
    "unique",
    "hll",
    "countvals",
    "missing",
    "sumsq",
];

fn parse_stat(text: &str) -> Result<JFacet, SolrError> {
    let syntax = |msg: String| {
        SolrError::bad_request(format!("org.apache.solr.search.SyntaxError: {msg}"))
            .root("org.apache.solr.search.SyntaxError")
    };
    let Some(open) = text.find('(') else {
        return Err(syntax(format!(
            "Expected aggregation in input ('{text}', pos=0)"
        )));
    };
    let func = text[..open].trim();
    if !AGGREGATIONS.contains(&func) {
        return Err(syntax(format!(
            "Unknown aggregation '{func}' in input ('{text}', pos={})",
            open + 1
        )));
    }
    let field = text[open + 1..]
        .trim_end()
        .trim_end_matches(')')
        .trim()
        .to_string();
    Ok(JFacet::Stat {
        func: func.to_string(),
        field,
    })
}

fn text_of(v: &JVal) -> String {
    match v {
        JVal::Str(s) => s.clone(),
        JVal::Num(n) => n.clone(),
        JVal::Bool(b) => b.to_string(),
        other => other.to_compact(),
    }
}

fn domain_filters(v: Option<&JVal>) -> Vec<String> {
    match v.and_then(|d| d.get("filter")) {
        Some(JVal::Arr(a)) => a.iter().map(text_of).collect(),
        Some(other) => vec![text_of(other)],
        None => Vec::new(),
    }
}

fn parse_subs(v: &JVal) -> Result<Vec<(String, JFacet)>, SolrError> {
    let JVal::Obj(pairs) = v else {
        return Err(SolrError::bad_request(
            "fake solr: a facet block must be an object",
        ));
    };
    pairs
        .iter()
        .map(|(name, spec)| Ok((name.clone(), parse_one(spec)?)))
        .collect()
}

fn parse_one(spec: &JVal) -> Result<JFacet, SolrError> {
    match spec {
        JVal::Str(s) => parse_stat(s),
        JVal::Obj(_) => {
            let (kind, body) = if let Some(t) = spec.get("type") {
                (text_of(t), spec)
            } else if let Some(b) = spec.get("terms") {
                ("terms".to_string(), b)
            } else if let Some(b) = spec.get("query") {
                ("query".to_string(), b)
            } else {
                return Err(SolrError::bad_request("fake solr: unknown facet type"));
            };
            match kind.as_str() {
                "terms" => {
                    let field = match body {
                        JVal::Str(f) => f.clone(),
                        _ => body.get("field").map(text_of).unwrap_or_default(),
                    };
                    let subs = match body.get("facet") {
                        Some(f) => parse_subs(f)?,
                        None => Vec::new(),
                    };
                    let int = |k: &str, d: i64| body.get(k).and_then(JVal::as_i64).unwrap_or(d);
                    let flag = |k: &str| body.get(k).and_then(JVal::as_bool).unwrap_or(false);
                    let sort = parse_facet_sort(body.get("sort"), &field, &subs)?;
                    Ok(JFacet::Terms(Box::new(TermsFacet {
                        limit: int("limit", 10),
                        offset: int("offset", 0).max(0) as usize,
                        mincount: int("mincount", 1).max(0) as usize,
                        sort,
                        num_buckets: flag("numBuckets"),
                        all_buckets: flag("allBuckets"),
                        missing: flag("missing"),
                        prefix: body.get("prefix").map(text_of),
                        domain_filters: domain_filters(body.get("domain")),
                        field,
                        subs,
                    })))
                }
                "query" => {
                    let q = match body {
                        JVal::Str(q) => q.clone(),
                        _ => body.get("q").map(text_of).unwrap_or_else(|| "*:*".into()),
                    };
                    let subs = match body.get("facet") {
                        Some(f) => parse_subs(f)?,
                        None => Vec::new(),
                    };
                    Ok(JFacet::Query {
                        q,
                        subs,
                        domain_filters: domain_filters(body.get("domain")),
                    })
                }
                "range" => {
                    let field = body.get("field").map(text_of).unwrap_or_default();
                    let Some(JVal::Arr(list)) = body.get("ranges") else {
                        return Err(SolrError::bad_request(
                            "fake solr: a range facet needs 'ranges' (start/end/gap are not emulated)",
                        ));
                    };
                    let mut ranges = Vec::new();
                    for r in list {
                        let bound = |k: &str| {
                            r.get(k).and_then(JVal::as_i64).ok_or_else(|| {
                                SolrError::bad_request(format!(
                                    "fake solr: a range needs a numeric '{k}'"
                                ))
                            })
                        };
                        let flag = |k: &str, d: bool| r.get(k).and_then(JVal::as_bool).unwrap_or(d);
                        ranges.push((
                            bound("from")?,
                            bound("to")?,
                            flag("inclusive_from", true),
                            flag("inclusive_to", false),
                        ));
                    }
                    Ok(JFacet::Ranges { field, ranges })
                }
                other => Err(SolrError::bad_request(format!(
                    "fake solr: facet type '{other}' is not supported"
                ))),
            }
        }
        _ => Err(SolrError::bad_request("fake solr: bad facet specification")),
    }
}

fn parse_facet_sort(
    v: Option<&JVal>,
    field: &str,
    subs: &[(String, JFacet)],
) -> Result<(SortBy, bool), SolrError> {
    let (text, key, dir) = match v {
        None => return Ok((SortBy::Count, true)),
        Some(JVal::Obj(p)) if p.len() == 1 => {
            let (k, d) = &p[0];
            (format!("{k} {}", text_of(d)), k.clone(), Some(text_of(d)))
        }
        Some(other) => {
            let t = text_of(other);
            let mut parts = t.split_whitespace();
            let k = parts.next().unwrap_or("").to_string();
            let d = parts.next().map(String::from);
            (t, k, d)
        }
    };
    let by = match key.as_str() {
        "count" => SortBy::Count,
        "index" => SortBy::Index,
        k if subs.iter().any(|(n, _)| n == k) => SortBy::Stat(k.to_string()),
        _ => {
            return Err(SolrError::bad_request(format!(
                "Invalid sort option '{text}' for field '{field}'"
            )))
        }
    };
    let desc = match dir.as_deref() {
        Some("asc") => false,
        Some("desc") => true,
        None => !matches!(by, SortBy::Index),
        Some(_) => {
            return Err(SolrError::bad_request(format!(
                "Invalid sort option '{text}' for field '{field}'"
            )))
        }
    };
    Ok((by, desc))
}

/// Parses a JSON facet request (syntax errors come before the search runs).
pub fn parse_json_facet(spec: &JVal) -> Result<Vec<(String, JFacet)>, SolrError> {
    parse_subs(spec)
}

/// Runs a JSON facet request over the result set.
pub fn run_json_facet(
    s: &Searcher,
    ctx: &QueryCtx,
    spec: &[(String, JFacet)],
    domain: &[&Doc],
) -> Result<Value, SolrError> {
    level(s, ctx, spec, domain).map(Value::Object)
}

fn level(
    s: &Searcher,
    ctx: &QueryCtx,
    subs: &[(String, JFacet)],
    docs: &[&Doc],
) -> Result<Map<String, Value>, SolrError> {
    let mut m = Map::new();
    m.insert("count".into(), json!(docs.len()));
    if docs.is_empty() {
        return Ok(m);
    }
    for (name, f) in subs {
        match f {
            JFacet::Stat { func, field } => {
                if let Some(v) = stat(s, func, field, docs)? {
                    m.insert(name.clone(), v);
                }
            }
            JFacet::Terms(t) => {
                m.insert(name.clone(), terms(s, ctx, t, docs)?);
            }
            JFacet::Query {
                q,
                subs,
                domain_filters,
            } => {
                let docs = filter_domain(s, ctx, domain_filters, docs)?;
                let q = parse_query(q, ctx)?;
                let inner: Vec<&Doc> = docs.into_iter().filter(|d| s.matches(&q, d)).collect();
                m.insert(name.clone(), Value::Object(level(s, ctx, subs, &inner)?));
            }
            JFacet::Ranges { field, ranges } => {
                let values: Vec<i64> = docs
                    .iter()
                    .flat_map(|d| doc_values(d, field))
                    .filter_map(|v| match v {
                        Val::Long(x) => Some(x),
                        Val::Int(x) => Some(i64::from(x)),
                        _ => None,
                    })
                    .collect();
                let buckets: Vec<Value> = ranges
                    .iter()
                    .map(|&(from, to, fi, ti)| {
                        let count = values
                            .iter()
                            .filter(|&&v| {
                                (v > from || (fi && v == from)) && (v < to || (ti && v == to))
                            })
                            .count();
                        let val = format!(
                            "{}{from},{to}{}",
                            if fi { "[" } else { "(" },
                            if ti { "]" } else { ")" }
                        );
                        json!({"val": val, "count": count})
                    })
                    .collect();
                m.insert(name.clone(), json!({ "buckets": buckets }));
            }
        }
    }
    Ok(m)
}

fn filter_domain<'d>(
    s: &Searcher,
    ctx: &QueryCtx,
    filters: &[String],
    docs: &[&'d Doc],
) -> Result<Vec<&'d Doc>, SolrError> {
    let mut out: Vec<&Doc> = docs.to_vec();
    for f in filters {
        let q = parse_query(f, ctx)?;
        out.retain(|d| s.matches(&q, d));
    }
    Ok(out)
}

fn stat(s: &Searcher, func: &str, field: &str, docs: &[&Doc]) -> Result<Option<Value>, SolrError> {
    let Some(f) = s.schema.field(field) else {
        return Err(SolrError::bad_request(format!(
            "undefined field: \"{field}\""
        )));
    };
    let per_doc: Vec<Vec<Val>> = docs
        .iter()
        .map(|d| {
            if f.kind == Kind::Text {
                s.terms(d, field)
            } else {
                doc_values(d, field)
            }
        })
        .collect();
    let all: Vec<&Val> = per_doc.iter().flatten().collect();
    let nums: Vec<f64> = all.iter().filter_map(|v| v.as_f64()).collect();
    Ok(match func {
        "min" | "max" => {
            let pick = all.iter().copied().reduce(|a, b| {
                let c = compare_vals(a, b);
                if (func == "min") == c.is_le() {
                    a
                } else {
                    b
                }
            });
            pick.map(|v| match v {
                Val::Float(x) => json!(*x as f64),
                other => other.to_json(),
            })
        }
        "sum" => Some(json!(nums.iter().sum::<f64>())),
        "sumsq" => Some(json!(nums.iter().map(|x| x * x).sum::<f64>())),
        "avg" => {
            if nums.is_empty() {
                None
            } else {
                Some(json!(nums.iter().sum::<f64>() / nums.len() as f64))
            }
        }
        "unique" | "hll" => {
            let mut vals: Vec<&Val> = all.clone();
            vals.sort_by(|a, b| compare_vals(a, b));
            vals.dedup();
            Some(json!(vals.len()))
        }
        "countvals" => Some(json!(all.len())),
        "missing" => Some(json!(per_doc.iter().filter(|v| v.is_empty()).count())),
        _ => None,
    })
}

fn value_order(a: &Value, b: &Value) -> std::cmp::Ordering {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal),
        _ => a.to_string().cmp(&b.to_string()),
    }
}

fn terms(s: &Searcher, ctx: &QueryCtx, t: &TermsFacet, docs: &[&Doc]) -> Result<Value, SolrError> {
    if s.schema.field(&t.field).is_none() {
        return Err(SolrError::bad_request(format!(
            "undefined field: \"{}\"",
            t.field
        )));
    }
    let docs = filter_domain(s, ctx, &t.domain_filters, docs)?;
    let (mut counted, missing_docs) = count_terms(s, &docs, &t.field);
    if let Some(pre) = &t.prefix {
        counted.retain(|(v, _)| v.java_string().starts_with(pre.as_str()));
    }
    let mut out = Map::new();
    if t.num_buckets {
        out.insert("numBuckets".into(), json!(counted.len()));
    }
    if t.all_buckets {
        let total: usize = counted.iter().map(|(_, d)| d.len()).sum();
        let mut union: Vec<&Doc> = counted
            .iter()
            .flat_map(|(_, d)| d.iter().copied())
            .collect();
        union.sort_by_key(|d| d.seq);
        union.dedup_by_key(|d| d.seq);
        let mut m = level(s, ctx, &t.subs, &union)?;
        m.insert("count".into(), json!(total));
        out.insert("allBuckets".into(), Value::Object(m));
    }
    if t.missing {
        out.insert(
            "missing".into(),
            Value::Object(level(s, ctx, &t.subs, &missing_docs)?),
        );
    }
    let mut buckets: Vec<(Val, Map<String, Value>)> = Vec::new();
    for (v, d) in &counted {
        if d.len() >= t.mincount.max(1) {
            buckets.push((v.clone(), level(s, ctx, &t.subs, d)?));
        }
    }
    let (by, desc) = &t.sort;
    buckets.sort_by(|a, b| {
        let primary = match by {
            SortBy::Index => compare_vals(&a.0, &b.0),
            SortBy::Count => value_order(&a.1["count"], &b.1["count"]),
            SortBy::Stat(name) => match (a.1.get(name), b.1.get(name)) {
                (Some(x), Some(y)) => value_order(x, y),
                (Some(_), None) => return std::cmp::Ordering::Less,
                (None, Some(_)) => return std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            },
        };
        let primary = if *desc { primary.reverse() } else { primary };
        primary.then(compare_vals(&a.0, &b.0))
    });
    let take = if t.limit < 0 {
        usize::MAX
    } else {
        t.limit as usize
    };
    let list: Vec<Value> = buckets
        .into_iter()
        .skip(t.offset)
        .take(take)
        .map(|(v, mut m)| {
            let mut b = Map::new();
            b.insert("val".into(), v.to_json());
            b.insert("count".into(), m.remove("count").unwrap_or(json!(0)));
            for (k, x) in m {
                b.insert(k, x);
            }
            Value::Object(b)
        })
        .collect();
    out.insert("buckets".into(), Value::Array(list));
    Ok(Value::Object(out))
}
