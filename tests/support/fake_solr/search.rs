//! The read handlers: `/select` (and `/query`), `/get` and `/export`. Parameters come from the
//! query string, a form body, or a JSON request body (the JSON Request API), and the responses
//! have Solr 9's shapes: the echoed parameters, `numFound`/`start`/`numFoundExact`,
//! `nextCursorMark` and JSON facets (no scores: `score` in `fl` or `sort` is a 400 `fake solr: …`).

use serde_json::{json, Map, Value};

use super::cursor::{self, DecodeError, MarkVal};
use super::error::SolrError;
use super::facets;
use super::index::{compare_vals, doc_values, render_values, Core, Doc, FieldList, Val};
use super::json::{self, JVal};
use super::query::{parse_query, Query, QueryCtx, Searcher};
use super::schema::{Kind, SField, Schema};
use super::{Req, Resp};

/// Request parameters with Solr's lookups.
#[derive(Clone, Debug, Default)]
pub struct Params(pub Vec<(String, String)>);

impl Params {
    pub fn get(&self, k: &str) -> Option<&str> {
        self.0.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
    }
    pub fn all(&self, k: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
            .collect()
    }
    pub fn bool(&self, k: &str) -> bool {
        self.get(k) == Some("true")
    }
}

/// The echoed `params` object (repeated names become lists).
pub fn echo(params: &[(String, String)]) -> Value {
    let mut m = Map::new();
    for (k, v) in params {
        match m.get_mut(k) {
            Some(Value::Array(a)) => a.push(json!(v)),
            Some(prev) => {
                let first = prev.take();
                *prev = json!([first, v]);
            }
            None => {
                m.insert(k.clone(), json!(v));
            }
        }
    }
    Value::Object(m)
}

pub fn json_resp(status: u16, body: &Value) -> Resp {
    Resp {
        status,
        content_type: "application/json;charset=utf-8".into(),
        body: serde_json::to_vec(body).expect("json"),
        headers: Vec::new(),
    }
}

/// An error response; `params` is echoed in the header, `partial` adds keys (a search that ran).
pub fn error_resp(
    e: &SolrError,
    params: Option<&[(String, String)]>,
    partial: Map<String, Value>,
) -> Resp {
    if e.is_cut() {
        // Solr writes the error alone, pretty-printed, and its servlet stops after 64 KiB.
        let text = serde_json::to_string_pretty(&json!({ "error": e.error_object() }))
            .expect("json")
            .replace("\": ", "\":");
        let mut body = text.into_bytes();
        body.truncate(64 << 10);
        return Resp {
            status: e.code,
            content_type: "application/json;charset=utf-8".into(),
            body,
            headers: vec![(super::CUT_HEADER.to_owned(), "1".to_owned())],
        };
    }
    let mut header = Map::new();
    header.insert("status".into(), json!(e.code));
    header.insert("QTime".into(), json!(0));
    if let Some(p) = params {
        header.insert("params".into(), echo(p));
    }
    let mut body = Map::new();
    body.insert("responseHeader".into(), Value::Object(header));
    for (k, v) in partial {
        body.insert(k, v);
    }
    body.insert("error".into(), e.error_object());
    json_resp(e.code, &Value::Object(body))
}

/// Java's `Integer.parseInt` for `rows`/`start`.
fn int_param(p: &Params, k: &str, default: i32) -> Result<i32, SolrError> {
    match p.get(k) {
        None => Ok(default),
        Some(s) => super::index::parse_java_int(s).map_err(SolrError::number_format),
    }
}

// ----- sorting -----

#[derive(Clone, Debug)]
pub enum SortKey {
    DocId,
    Field(SField),
}

#[derive(Clone, Debug)]
pub struct SortSpec {
    pub keys: Vec<(SortKey, bool)>,
}

/// Parses `sort`, with Solr's messages.
pub fn parse_sort(schema: &Schema, spec: &str) -> Result<SortSpec, SolrError> {
    let mut keys = Vec::new();
    let mut offset = 0;
    for part in spec.split(',') {
        let lead = part.len() - part.trim_start().len();
        let p = part.trim_start();
        let name_len = p.find(char::is_whitespace).unwrap_or(p.len());
        let name = &p[..name_len];
        let dir = p[name_len..].trim();
        let pos = offset + lead + name_len;
        offset += part.len() + 1;
        if name.is_empty() && dir.is_empty() {
            continue;
        }
        let desc = match dir.to_ascii_lowercase().as_str() {
            "asc" => false,
            "desc" => true,
            _ => {
                return Err(SolrError::bad_request(format!(
                    "Can't determine a Sort Order (asc or desc) in sort spec '{spec}', pos={pos}"
                )))
            }
        };
        let key = match name {
            "score" => {
                return Err(SolrError::bad_request(
                    "fake solr: sorting by score is not supported",
                ))
            }
            "_docid_" => SortKey::DocId,
            _ => {
                let Some(f) = schema.field(name) else {
                    return Err(SolrError::bad_request(format!(
                        "sort param field can't be found: {name}"
                    )));
                };
                if f.multi_valued() && !f.doc_values() {
                    return Err(SolrError::bad_request(format!(
                        "can not sort on multivalued field: {name} of type: {}",
                        f.type_name
                    )));
                }
                SortKey::Field(f)
            }
        };
        keys.push((key, desc));
    }
    Ok(SortSpec { keys })
}

/// One document's value for one sort key. `None` is a missing value.
fn sort_value(s: &Searcher, key: &SortKey, desc: bool, doc: &Doc) -> Option<Val> {
    match key {
        SortKey::DocId => Some(Val::Long(doc.seq as i64)),
        SortKey::Field(f) => {
            let mut vals = if f.kind == Kind::Text {
                s.terms(doc, &f.name)
            } else {
                doc_values(doc, &f.name)
            };
            vals.sort_by(compare_vals);
            let v = if desc && f.multi_valued() {
                vals.pop()
            } else {
                vals.into_iter().next()
            };
            if v.is_none() && f.kind.is_point() && !f.sort_missing_first() && !f.sort_missing_last()
            {
                // Point fields without sortMissing* sort a missing value as 0.
                return Some(match f.kind {
                    Kind::Int => Val::Int(0),
                    Kind::Float => Val::Float(0.0),
                    Kind::Double => Val::Double(0.0),
                    _ => Val::Long(0),
                });
            }
            v
        }
    }
}

fn compare_key(key: &SortKey, desc: bool, a: &Option<Val>, b: &Option<Val>) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (last, first) = match key {
        SortKey::Field(f) => (f.sort_missing_last(), f.sort_missing_first()),
        _ => (false, false),
    };
    match (a, b) {
        (Some(x), Some(y)) => {
            let c = compare_vals(x, y);
            if desc {
                c.reverse()
            } else {
                c
            }
        }
        (None, None) => Ordering::Equal,
        (None, Some(_)) => {
            if last {
                Ordering::Greater
            } else if first || !desc {
                Ordering::Less
            } else {
                Ordering::Greater
            }
        }
        (Some(_), None) => compare_key(key, desc, b, a).reverse(),
    }
}

fn compare_all(spec: &SortSpec, a: &[Option<Val>], b: &[Option<Val>]) -> std::cmp::Ordering {
    for (i, (key, desc)) in spec.keys.iter().enumerate() {
        let c = compare_key(key, *desc, &a[i], &b[i]);
        if c.is_ne() {
            return c;
        }
    }
    std::cmp::Ordering::Equal
}

/// A mark value back as a sort value for its key.
fn unmarshal(key: &SortKey, v: &MarkVal) -> Option<Val> {
    match (key, v) {
        (_, MarkVal::Null) => None,
        (SortKey::Field(f), MarkVal::Str(s)) if f.kind == Kind::Bool => Some(Val::Bool(s == "T")),
        (_, MarkVal::Str(s)) => Some(Val::Str(s.clone())),
        (_, MarkVal::Long(x)) => Some(Val::Long(*x)),
        (SortKey::Field(f), MarkVal::Int(x)) if f.kind == Kind::Long => Some(Val::Long(*x as i64)),
        (_, MarkVal::Int(x)) => Some(Val::Int(*x)),
        (_, MarkVal::Float(x)) => Some(Val::Float(*x)),
        (_, MarkVal::Double(x)) => Some(Val::Double(*x)),
    }
}

// ----- the search itself -----

/// Everything a search needs, from any of the parameter sources.
pub struct SearchParams {
    pub params: Params,
    /// The JSON facet request, from `json.facet` or the body's `facet`.
    pub json_facet: Option<JVal>,
}

/// Maps a JSON request body onto parameters (the JSON Request API).
fn json_request(body: &JVal, out: &mut SearchParams) -> Result<(), SolrError> {
    let JVal::Obj(pairs) = body else {
        return Err(SolrError::bad_request(
            "fake solr: a JSON request must be an object",
        ));
    };
    let text = |v: &JVal| -> String {
        match v {
            JVal::Str(s) => s.clone(),
            JVal::Num(n) => n.clone(),
            JVal::Bool(b) => b.to_string(),
            other => other.to_compact(),
        }
    };
    let list = |v: &JVal| -> Vec<String> {
        match v {
            JVal::Arr(a) => a.iter().map(text).collect(),
            other => vec![text(other)],
        }
    };
    for (k, v) in pairs {
        let p = &mut out.params.0;
        match k.as_str() {
            "query" => p.push(("q".into(), text(v))),
            "filter" => p.extend(list(v).into_iter().map(|f| ("fq".to_string(), f))),
            "fields" => p.push(("fl".into(), list(v).join(","))),
            "limit" => p.push(("rows".into(), text(v))),
            "offset" => p.push(("start".into(), text(v))),
            "sort" => p.push(("sort".into(), text(v))),
            "facet" => out.json_facet = Some(v.clone()),
            "params" => {
                if let JVal::Obj(ps) = v {
                    for (pk, pv) in ps {
                        p.extend(list(pv).into_iter().map(|x| (pk.clone(), x)));
                    }
                }
            }
            "queries" => {}
            other => {
                return Err(SolrError::bad_request(format!(
                    "Unknown top-level key in JSON request : {other}"
                )))
            }
        }
    }
    Ok(())
}

/// How Solr reports a JSON request body or `json.facet` it cannot parse.
fn noggit_error(e: &json::ParseError) -> SolrError {
    SolrError::bad_request(format!(
        "org.noggit.JSONParser$ParseException: {}",
        e.message
    ))
    .root("org.noggit.JSONParser$ParseException")
}

/// `/select` and `/query`.
pub fn select(core: &Core, req: &Req) -> Resp {
    let mut echo_params = req.params.clone();
    let mut sp = SearchParams {
        params: Params(req.params.clone()),
        json_facet: None,
    };
    let is_json_body = req
        .content_type
        .as_deref()
        .is_some_and(|ct| ct.starts_with("application/json") || ct.starts_with("text/json"));
    if is_json_body && !req.body.is_empty() {
        let text = String::from_utf8_lossy(&req.body).to_string();
        echo_params.push(("json".into(), text.clone()));
        let parsed = match json::parse(&text) {
            Ok(v) => v,
            Err(e) => {
                return error_resp(&noggit_error(&e), Some(&echo_params), Map::new());
            }
        };
        if let Err(e) = json_request(&parsed, &mut sp) {
            return error_resp(&e, Some(&echo_params), Map::new());
        }
    }
    if let Some(jf) = sp.params.get("json.facet") {
        match json::parse(jf) {
            Ok(v) => sp.json_facet = Some(v),
            Err(e) => {
                return error_resp(&noggit_error(&e), Some(&echo_params), Map::new());
            }
        }
    }
    let mut header = Map::new();
    match run_select(core, &sp) {
        Ok(body) => {
            let mut full = Map::new();
            header.insert("status".into(), json!(0));
            header.insert("QTime".into(), json!(0));
            header.insert("params".into(), echo(&echo_params));
            full.insert("responseHeader".into(), Value::Object(header));
            for (k, v) in body {
                full.insert(k, v);
            }
            if sp.params.get("wt") == Some("xml") {
                let e = SolrError::bad_request("fake solr: wt=xml is not supported");
                return error_resp(&e, Some(&echo_params), Map::new());
            }
            json_resp(200, &Value::Object(full))
        }
        Err((e, partial)) => error_resp(&e, Some(&echo_params), partial),
    }
}

type SelectError = (SolrError, Map<String, Value>);

fn run_select(core: &Core, sp: &SearchParams) -> Result<Map<String, Value>, SelectError> {
    let p = &sp.params;
    let plain = |e: SolrError| (e, Map::new());
    let schema = core.schema();
    let ctx = QueryCtx {
        schema,
        df: p.get("df").unwrap_or("text_t").to_string(),
        and_default: p.get("q.op") == Some("AND"),
        params: &p.0,
    };
    let q = match p.get("q") {
        Some(text) if !text.trim().is_empty() => parse_query(text, &ctx).map_err(plain)?,
        _ => Query::Nothing,
    };
    let start = int_param(p, "start", 0).map_err(plain)?;
    let rows = int_param(p, "rows", 10).map_err(plain)?;
    let sort = match p.get("sort") {
        Some(s) if !s.trim().is_empty() => Some(parse_sort(schema, s).map_err(plain)?),
        _ => None,
    };
    if start < 0 {
        return Err(plain(SolrError::bad_request(
            "'start' parameter cannot be negative",
        )));
    }
    if rows < 0 {
        return Err(plain(SolrError::bad_request(
            "'rows' parameter cannot be negative",
        )));
    }
    let mut filters = Vec::new();
    for fq in p.all("fq") {
        if !fq.trim().is_empty() {
            filters.push(parse_query(&fq, &ctx).map_err(plain)?);
        }
    }
    // JSON facets are parsed (and their syntax checked) before the search runs.
    let json_facet = match &sp.json_facet {
        Some(spec) => Some(facets::parse_json_facet(spec).map_err(plain)?),
        None => None,
    };
    let cursor_mark = p.get("cursorMark");
    let mut mark_values: Option<Vec<Option<Val>>> = None;
    if let Some(mark) = cursor_mark {
        let Some(spec) = &sort else {
            return Err(plain(SolrError::bad_request(
                "Cursor functionality requires a sort containing a uniqueKey field tie breaker",
            )));
        };
        let has_key = spec
            .keys
            .iter()
            .any(|(k, _)| matches!(k, SortKey::Field(f) if f.name == schema.unique_key));
        if !has_key {
            return Err(plain(SolrError::bad_request(
                "Cursor functionality requires a sort containing a uniqueKey field tie breaker",
            )));
        }
        if start != 0 {
            return Err(plain(SolrError::bad_request(
                "Cursor functionality requires start=0",
            )));
        }
        if spec.keys.iter().any(|(k, _)| matches!(k, SortKey::DocId)) {
            return Err(plain(SolrError::bad_request(
                "Cursor functionality can not be used with internal doc ordering sort: _docid_",
            )));
        }
        if mark != "*" {
            let bad = |root: &'static str| {
                plain(
                    SolrError::bad_request(format!(
                        "Unable to parse 'cursorMark' after totem: value must either be '*' or the 'nextCursorMark' returned by a previous search: {mark}"
                    ))
                    .root(root),
                )
            };
            let values = cursor::decode(mark).map_err(|e| match e {
                DecodeError::Base64 => bad("java.lang.IllegalArgumentException"),
                DecodeError::JavaBin => bad("java.io.EOFException"),
            })?;
            if values.len() != spec.keys.len() {
                return Err(plain(SolrError::bad_request(format!(
                    "cursorMark does not work with current sort (wrong size): {mark}"
                ))));
            }
            mark_values = Some(
                spec.keys
                    .iter()
                    .zip(&values)
                    .map(|((k, _), v)| unmarshal(k, v))
                    .collect(),
            );
        }
    }
    if start as i64 + rows as i64 > i32::MAX as i64 {
        let wrapped = start.wrapping_add(rows);
        return Err(plain(SolrError::server_error(
            wrapped.to_string(),
            "java.lang.NegativeArraySizeException",
        )));
    }

    let committed = core.committed();
    let searcher = Searcher::new(schema, committed.values().map(|d| d.as_ref()).collect());
    let hits: Vec<&Doc> = searcher
        .docs
        .iter()
        .copied()
        .filter(|d| filters.iter().all(|f| searcher.matches(f, d)) && searcher.matches(&q, d))
        .collect();
    let num_found = hits.len();
    // Without scores, an unsorted search is in index order: Solr's order among equal scores.
    let spec = sort.clone().unwrap_or(SortSpec {
        keys: vec![(SortKey::DocId, false)],
    });
    let mut keyed: Vec<(Vec<Option<Val>>, &Doc)> = hits
        .iter()
        .map(|d| {
            let vals = spec
                .keys
                .iter()
                .map(|(k, desc)| sort_value(&searcher, k, *desc, d))
                .collect();
            (vals, *d)
        })
        .collect();
    if let Some(mark) = &mark_values {
        keyed.retain(|(vals, _)| compare_all(&spec, vals, mark).is_gt());
    }
    // Only the first start+rows in order are needed: select them, then sort just those (a cursor
    // walk over a large index would otherwise sort the whole index for every page).
    let order = |a: &(Vec<Option<Val>>, &Doc), b: &(Vec<Option<Val>>, &Doc)| {
        compare_all(&spec, &a.0, &b.0).then(a.1.seq.cmp(&b.1.seq))
    };
    let wanted = (start as usize).saturating_add(rows as usize);
    if wanted < keyed.len() {
        keyed.select_nth_unstable_by(wanted, order);
        keyed.truncate(wanted);
    }
    keyed.sort_by(order);
    let page: Vec<&(Vec<Option<Val>>, &Doc)> = keyed
        .iter()
        .skip(start as usize)
        .take(rows as usize)
        .collect();

    let fl = FieldList::parse(&p.all("fl"));
    if fl.score {
        return Err(plain(SolrError::bad_request(
            "fake solr: score in fl is not supported",
        )));
    }
    let docs: Vec<Value> = page
        .iter()
        .map(|(_, d)| Value::Object(core.render(d, &fl)))
        .collect();
    let mut response = Map::new();
    response.insert("numFound".into(), json!(num_found));
    response.insert("start".into(), json!(start));
    response.insert("numFoundExact".into(), json!(true));
    response.insert("docs".into(), Value::Array(docs));
    let mut body = Map::new();
    body.insert("response".into(), Value::Object(response));
    if let Some(mark) = cursor_mark {
        let next = match page.last() {
            Some((vals, _)) => cursor::encode(
                &vals
                    .iter()
                    .map(|v| v.as_ref().map(MarkVal::from_val).unwrap_or(MarkVal::Null))
                    .collect::<Vec<_>>(),
            ),
            None => mark.to_string(),
        };
        body.insert("nextCursorMark".into(), json!(next));
    }

    if p.bool("facet") {
        let e = SolrError::bad_request("fake solr: classic facets (facet=true) are not supported");
        return Err((e, body));
    }
    if let Some(spec) = json_facet {
        match facets::run_json_facet(&searcher, &ctx, &spec, &hits) {
            Ok(v) => {
                body.insert("facets".into(), v);
            }
            Err(e) => return Err((e, body)),
        }
    }
    Ok(body)
}

/// `/get`: real-time get by `id` (repeatable) and `ids` (comma lists).
pub fn get(core: &Core, req: &Req) -> Resp {
    let p = Params(req.params.clone());
    if let Some(max) = p.get("getFingerprint") {
        return fingerprint(core, max);
    }
    let id_params = p.all("id");
    let ids_params = p.all("ids");
    let mut ids: Vec<String> = id_params.clone();
    for list in &ids_params {
        ids.extend(
            list.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from),
        );
    }
    if ids.is_empty() {
        return json_resp(200, &json!({}));
    }
    let schema = core.schema();
    let ctx = QueryCtx {
        schema,
        df: p.get("df").unwrap_or("text_t").to_string(),
        and_default: false,
        params: &p.0,
    };
    let mut filters = Vec::new();
    for fq in p.all("fq") {
        match parse_query(&fq, &ctx) {
            Ok(q) => filters.push(q),
            Err(e) => return error_resp(&e, None, Map::new()),
        }
    }
    let fl = FieldList::parse(&p.all("fl"));
    let live: Vec<&Doc> = core.live().values().map(|d| d.as_ref()).collect();
    let searcher = Searcher::new(schema, live);
    let mut docs = Vec::new();
    for id in &ids {
        let Some(d) = core.live_doc(id) else { continue };
        if !filters.iter().all(|f| searcher.matches(f, d)) {
            continue;
        }
        docs.push(Value::Object(core.render(d, &fl)));
    }
    if id_params.len() == 1 && ids_params.is_empty() {
        return json_resp(
            200,
            &json!({ "doc": docs.into_iter().next().unwrap_or(Value::Null) }),
        );
    }
    json_resp(
        200,
        &json!({"response": {"numFound": docs.len(), "start": 0, "numFoundExact": true, "docs": docs}}),
    )
}

/// `/get?getFingerprint=MAX`: Solr's `IndexFingerprint` (what replicas compare in PeerSync) over
/// the real-time view, as Solr opens a real-time searcher for it (checked on 9.10.1: a document
/// added without a commit counts at once, though no search finds it): of the documents with a version at or below `|MAX|`, `numVersions` and
/// `versionsHash` (the wrapping sum of MurmurHash3's `fmix64` of each version), and
/// `maxVersionEncountered` of all. Solr 9 answers it alone, without a `responseHeader` (recorded
/// from Solr 9.10.1: `{"fingerprint":{"maxVersionSpecified":…,"maxVersionEncountered":…,
/// "maxInHash":…,"versionsHash":…,"numVersions":…,"numDocs":…,"maxDoc":…}}`), and refuses a value
/// that is not a long with a 400 and nothing else.
fn fingerprint(core: &Core, max: &str) -> Resp {
    let max = match super::index::parse_java_long(max) {
        // Java's Math.abs.
        Ok(v) => v.wrapping_abs(),
        Err(e) => {
            let e = SolrError::number_format(e);
            return json_resp(e.code, &json!({ "error": e.error_object() }));
        }
    };
    let fmix64 = |v: i64| {
        let mut k = v as u64;
        k ^= k >> 33;
        k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
        k ^= k >> 33;
        k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        k ^= k >> 33;
        k as i64
    };
    let live = core.live();
    let (mut seen, mut in_hash, mut hash, mut n) = (0i64, 0i64, 0i64, 0u64);
    for d in live.values() {
        seen = seen.max(d.version);
        if d.version <= max {
            in_hash = in_hash.max(d.version);
            hash = hash.wrapping_add(fmix64(d.version));
            n += 1;
        }
    }
    json_resp(
        200,
        &json!({"fingerprint": {
            "maxVersionSpecified": max,
            "maxVersionEncountered": seen,
            "maxInHash": in_hash,
            "versionsHash": hash,
            "numVersions": n,
            "numDocs": live.len(),
            "maxDoc": live.len(),
        }}),
    )
}

/// `/export`: sorted docValues, errors as HTTP 200 with an `EXCEPTION` document.
pub fn export(core: &Core, req: &Req) -> Resp {
    let p = Params(req.params.clone());
    let schema = core.schema();
    let fail = |msg: String| Resp {
        status: 200,
        content_type: "json".into(),
        body: serde_json::to_vec(&json!({
            "responseHeader": {"status": 400},
            "response": {"docs": [{"EXCEPTION": msg}], "numFound": 0}
        }))
        .expect("json"),
        headers: Vec::new(),
    };
    let Some(sort_text) = p.get("sort").filter(|s| !s.trim().is_empty()) else {
        return fail("org.apache.solr.search.SyntaxError: No sort criteria was provided.".into());
    };
    let Some(fl_text) = p.get("fl").filter(|s| !s.trim().is_empty()) else {
        return fail(
            "org.apache.solr.search.SyntaxError: export field list (fl) must be specified.".into(),
        );
    };
    let spec = match parse_sort(schema, sort_text) {
        Ok(s) => s,
        Err(e) => return fail(e.msg),
    };
    let mut fields = Vec::new();
    for name in fl_text.split([',', ' ']).filter(|s| !s.is_empty()) {
        let Some(f) = schema.field(name) else {
            return fail(format!("undefined field: \"{name}\""));
        };
        if !f.doc_values() {
            return fail(format!(
                "{} must have DocValues to use this feature.",
                f.java_string()
            ));
        }
        fields.push(f);
    }
    for (k, _) in &spec.keys {
        if let SortKey::Field(f) = k {
            if !f.doc_values() {
                return fail(format!(
                    "{} must have DocValues to use this feature.",
                    f.java_string()
                ));
            }
        }
    }
    let ctx = QueryCtx {
        schema,
        df: p.get("df").unwrap_or("text_t").to_string(),
        and_default: false,
        params: &p.0,
    };
    let q = match p.get("q") {
        Some(t) => match parse_query(t, &ctx) {
            Ok(q) => q,
            Err(e) => return fail(e.msg),
        },
        None => Query::All,
    };
    let mut filters = Vec::new();
    for fq in p.all("fq") {
        match parse_query(&fq, &ctx) {
            Ok(f) => filters.push(f),
            Err(e) => return fail(e.msg),
        }
    }
    let committed = core.committed();
    let searcher = Searcher::new(schema, committed.values().map(|d| d.as_ref()).collect());
    let mut keyed: Vec<(Vec<Option<Val>>, &Doc)> = Vec::new();
    for d in &searcher.docs {
        if filters.iter().all(|f| searcher.matches(f, d)) && searcher.matches(&q, d) {
            let vals = spec
                .keys
                .iter()
                .map(|(k, desc)| sort_value(&searcher, k, *desc, d))
                .collect();
            keyed.push((vals, d));
        }
    }
    keyed.sort_by(|a, b| compare_all(&spec, &a.0, &b.0).then(a.1.seq.cmp(&b.1.seq)));
    let docs: Vec<Value> = keyed
        .iter()
        .map(|(_, d)| {
            let mut m = Map::new();
            for f in &fields {
                let mut vals = doc_values(d, &f.name);
                if vals.is_empty() {
                    continue;
                }
                if f.multi_valued() {
                    vals.sort_by(compare_vals);
                }
                m.insert(f.name.clone(), render_values(f, &vals));
            }
            Value::Object(m)
        })
        .collect();
    Resp {
        status: 200,
        content_type: "json".into(),
        body: serde_json::to_vec(&json!({
            "responseHeader": {"status": 0},
            "response": {"numFound": docs.len(), "docs": docs}
        }))
        .expect("json"),
        headers: Vec::new(),
    }
}
