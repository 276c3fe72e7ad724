//! `/update`: content-type checks, the lenient JSON loader (a JSON array of documents, or command
//! objects `add`/`delete`/`commit`/`optimize`, streamed in order so that everything before the
//! first error stays applied), and the `commit`, `softCommit`, `commitWithin`, `versions`,
//! `overwrite` and `failOnVersionConflicts` parameters.

use std::time::Duration;

use serde_json::{json, Map, Value};

use super::error::SolrError;
use super::index::{Core, UpdateOpts};
use super::json::{self, position_after_key, JVal};
use super::query::{parse_query, QueryCtx, Searcher};
use super::search::{error_resp, json_resp, Params};
use super::{Req, Resp};

const SUPPORTED: &str = "[application/xml, application/csv, application/json, text/json, text/csv, text/xml, application/javabin, application/cbor]";

/// What `versions=true` reports.
#[derive(Default)]
struct Versions {
    adds: Vec<Value>,
    deletes: Vec<Value>,
    by_query: Vec<Value>,
}

pub fn update(core: &mut Core, req: &Req) -> Resp {
    let p = Params(req.params.clone());
    let mime = req.content_type.as_deref().map(|c| {
        c.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    });
    let has_stream =
        !req.body.is_empty() && mime.as_deref() != Some("application/x-www-form-urlencoded");
    let commit_param = p.bool("commit") || p.bool("softCommit") || p.bool("optimize");
    if !has_stream {
        if commit_param {
            core.commit();
            return ok(None);
        }
        return error_resp(
            &SolrError::bad_request("missing content stream"),
            None,
            Map::new(),
        );
    }
    let mut versions = Versions::default();
    let result = match mime.as_deref() {
        None => Err(SolrError::new(415, "Missing ContentType")),
        Some("application/json") | Some("text/json") => load_json(core, req, &p, &mut versions),
        Some("application/xml") | Some("text/xml") => {
            let text = String::from_utf8_lossy(&req.body);
            match text.trim_start().chars().next() {
                Some('<') => Err(SolrError::bad_request(
                    "fake solr: XML updates are not supported",
                )),
                Some(c) => Err(SolrError::bad_request(format!(
                    "Unexpected character '{c}' (code {}) in prolog; expected '<'\n at [row,col {{unknown-source}}]: [1,1]",
                    c as u32
                ))
                .root("com.ctc.wstx.exc.WstxUnexpectedCharException")),
                None => Ok(()),
            }
        }
        Some(m) if SUPPORTED.contains(m) => Err(SolrError::bad_request(format!(
            "fake solr: {m} updates are not supported"
        ))),
        Some(m) => Err(SolrError::new(
            415,
            format!("Unsupported ContentType: {m}  Not in: {SUPPORTED}"),
        )),
    };
    match result {
        Ok(()) => {
            if commit_param {
                core.commit();
            }
            ok(p.bool("versions").then_some(versions))
        }
        // Solr 9 keeps what `versions=true` collected before the error in the error answer: a 409
        // lists the documents applied before the conflict in `adds` (seen on Solr 9.10; the
        // transcripts were recorded without `versions`, so they do not show it).
        Err(e) => {
            let mut partial = Map::new();
            if p.bool("versions") {
                versions.put(&mut partial);
            }
            error_resp(&e, None, partial)
        }
    }
}

impl Versions {
    fn put(self, body: &mut Map<String, Value>) {
        if !self.adds.is_empty() {
            body.insert("adds".into(), Value::Array(self.adds));
        }
        if !self.deletes.is_empty() {
            body.insert("deletes".into(), Value::Array(self.deletes));
        }
        if !self.by_query.is_empty() {
            body.insert("deleteByQuery".into(), Value::Array(self.by_query));
        }
    }
}

fn ok(versions: Option<Versions>) -> Resp {
    let mut body = Map::new();
    body.insert("responseHeader".into(), json!({"status": 0, "QTime": 0}));
    if let Some(v) = versions {
        v.put(&mut body);
    }
    json_resp(200, &Value::Object(body))
}

fn opts_from(p: &Params) -> UpdateOpts {
    UpdateOpts {
        overwrite: p.get("overwrite") != Some("false"),
        fail_on_version_conflicts: p.get("failOnVersionConflicts") != Some("false"),
        commit_within: p
            .get("commitWithin")
            .and_then(|v| v.parse::<i64>().ok())
            .filter(|ms| *ms >= 0)
            .map(|ms| Duration::from_millis(ms as u64)),
    }
}

fn load_json(
    core: &mut Core,
    req: &Req,
    p: &Params,
    versions: &mut Versions,
) -> Result<(), SolrError> {
    let text = String::from_utf8_lossy(&req.body).to_string();
    let (values, parse_error) = json::parse_stream(&text);
    let opts = opts_from(p);
    for v in &values {
        match v {
            JVal::Arr(docs) => {
                for d in docs {
                    add_one(core, d, &opts, versions)?;
                }
            }
            JVal::Obj(commands) => {
                for (cmd, arg) in commands {
                    command(core, &text, cmd, arg, &opts, p, versions)?;
                }
            }
            _ => {}
        }
    }
    if let Some(e) = parse_error {
        return Err(SolrError::bad_request(format!(
            "Cannot parse provided JSON: {}",
            e.message
        )));
    }
    Ok(())
}

fn add_one(
    core: &mut Core,
    doc: &JVal,
    opts: &UpdateOpts,
    versions: &mut Versions,
) -> Result<(), SolrError> {
    if let Some((id, v)) = core.add_jdoc(doc, opts)? {
        versions.adds.push(json!(id));
        versions.adds.push(json!(v));
    }
    Ok(())
}

fn command(
    core: &mut Core,
    text: &str,
    cmd: &str,
    arg: &JVal,
    opts: &UpdateOpts,
    p: &Params,
    versions: &mut Versions,
) -> Result<(), SolrError> {
    match cmd {
        "add" => match arg {
            JVal::Arr(docs) => {
                // Each element of a list is taken as the document itself.
                for d in docs {
                    add_one(core, d, opts, versions)?;
                }
                Ok(())
            }
            JVal::Obj(_) => {
                let mut o = opts.clone();
                if let Some(ms) = arg.get("commitWithin").and_then(JVal::as_i64) {
                    o.commit_within = (ms >= 0).then(|| Duration::from_millis(ms as u64));
                }
                if let Some(b) = arg.get("overwrite").and_then(JVal::as_bool) {
                    o.overwrite = b;
                }
                let doc = arg.get("doc").cloned().unwrap_or(JVal::Obj(Vec::new()));
                add_one(core, &doc, &o, versions)
            }
            _ => Err(SolrError::bad_request(format!(
                "Unexpected value for add at [{}]",
                position_after_key(text, cmd)
            ))),
        },
        "delete" => {
            let items: Vec<&JVal> = match arg {
                JVal::Arr(a) => a.iter().collect(),
                other => vec![other],
            };
            for item in items {
                match item {
                    JVal::Str(id) => delete_id(core, id, None, opts, versions)?,
                    JVal::Num(n) => delete_id(core, n, None, opts, versions)?,
                    JVal::Obj(_) => {
                        let mut o = opts.clone();
                        if let Some(ms) = item.get("commitWithin").and_then(JVal::as_i64) {
                            o.commit_within = (ms >= 0).then(|| Duration::from_millis(ms as u64));
                        }
                        if let Some(q) = item.get("query") {
                            let q = match q {
                                JVal::Str(s) => s.clone(),
                                other => other.to_compact(),
                            };
                            delete_query(core, &q, &o, p, versions)?;
                        } else if let Some(id) = item.get("id") {
                            let id = match id {
                                JVal::Str(s) => s.clone(),
                                other => other.to_compact(),
                            };
                            let ver = item.get("_version_").and_then(JVal::as_i64);
                            delete_id(core, &id, ver, &o, versions)?;
                        }
                    }
                    _ => {}
                }
            }
            Ok(())
        }
        "commit" | "optimize" => {
            core.commit();
            Ok(())
        }
        "rollback" => Err(SolrError::bad_request(
            "fake solr: rollback is not supported",
        )),
        other => Err(SolrError::bad_request(format!(
            "Unknown command '{other}' at [{}]",
            position_after_key(text, other)
        ))),
    }
}

fn delete_id(
    core: &mut Core,
    id: &str,
    ver: Option<i64>,
    opts: &UpdateOpts,
    versions: &mut Versions,
) -> Result<(), SolrError> {
    if let Some((id, v)) = core.delete_id(id, ver, opts)? {
        versions.deletes.push(json!(id));
        versions.deletes.push(json!(v));
    }
    Ok(())
}

fn delete_query(
    core: &mut Core,
    q: &str,
    opts: &UpdateOpts,
    p: &Params,
    versions: &mut Versions,
) -> Result<(), SolrError> {
    let query = {
        let ctx = QueryCtx {
            schema: core.schema(),
            df: p.get("df").unwrap_or("text_t").to_string(),
            and_default: false,
            params: &p.0,
        };
        parse_query(q, &ctx)?
    };
    let gone: std::collections::HashSet<u64> = {
        let live: Vec<_> = core.live().values().map(|d| d.as_ref()).collect();
        let s = Searcher::new(core.schema(), live);
        s.docs
            .iter()
            .filter(|d| s.matches(&query, d))
            .map(|d| d.seq)
            .collect()
    };
    let v = core.delete_where(|d| gone.contains(&d.seq), opts);
    versions.by_query.push(json!(q));
    versions.by_query.push(json!(v));
    Ok(())
}
