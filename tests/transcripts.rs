//! Replays every recorded real-Solr transcript (`tests/fixtures/solr-transcripts/*.json`, recorded
//! on Solr 9.3) against a fresh fake, over real HTTP, and compares status, content type and body
//! of every step.
//!
//! Placeholders work as the transcripts' README says. `<version:…>` and `<delete-version:…>` are
//! bound to the fake's value where they first appear in a response, then substituted into later
//! requests and checked wherever they appear again; one fake value never stands for two
//! placeholders. The other placeholders (`<timestamp>`, `<core-dir>`, `<request-id>`, …) and
//! the zeroed numbers (`QTime`, `uptime`, the index `version` and sizes) are normalisations: they
//! match any value. Objects are compared as maps (Solr's key order carries no meaning).
//!
//! A step the fake answers differently on purpose is listed with its reason in the file's table;
//! such a step must still differ, so the table stays honest.
//!
//! Not replayed: what the client (`src/solr_client/`, `src/store/solr/`) never asks for, and the fake
//! therefore no longer serves. The steps stay in the recordings; [`not_served`] names them, and
//! they are read-only, so skipping them changes no later answer. They are `/admin/luke` and the
//! node's CoreAdmin `STATUS` (in `11-admin.json`), the two searches asking for BM25 scores (`fl`
//! with `score`, in `02-select.json`), the `wt=xml` answer (in `10-errors.json`), and classic `facet.field`/`facet.query` faceting (all of
//! `04-facet-field.json` past its setup, so that file is not replayed at all).
//!
//! `commitWithin`: the fake runs with [`CommitWithin::Manual`], and the step the recorder reached
//! after waiting 3 s fires the pending commit first. This keeps the "not yet visible" step
//! deterministic on a loaded machine, where a real 1 s timer could fire early.

use std::collections::HashMap;
use std::time::Duration;

use crate::support::fake_solr::json::{self, is_integer_text, JVal};
use crate::support::fake_solr::{CommitWithin, FakeOptions, FakeSolr};

const DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/solr-transcripts"
);

struct Step {
    method: String,
    path: String,
    node: bool,
    params: Vec<(String, String)>,
    body: Option<JVal>,
    content_type: Option<String>,
    status: u16,
    resp_content_type: String,
    resp_body: JVal,
    notes: String,
}

fn load(file: &str) -> Vec<Step> {
    let text = std::fs::read_to_string(format!("{DIR}/{file}")).expect("transcript file");
    let doc = json::parse(&text).expect("transcript JSON");
    let Some(JVal::Arr(steps)) = doc.get("steps") else {
        panic!("{file}: no steps");
    };
    steps
        .iter()
        .map(|s| {
            let req = s.get("request").expect("request");
            let resp = s.get("response").expect("response");
            let text = |v: Option<&JVal>| v.and_then(JVal::as_str).map(String::from);
            let params = match req.get("params") {
                Some(JVal::Arr(ps)) => ps
                    .iter()
                    .map(|p| match p {
                        JVal::Arr(kv) => (
                            kv[0].as_str().unwrap_or("").to_string(),
                            kv[1].as_str().unwrap_or("").to_string(),
                        ),
                        _ => panic!("param pair"),
                    })
                    .collect(),
                _ => Vec::new(),
            };
            Step {
                method: text(req.get("method")).expect("method"),
                path: text(req.get("path")).expect("path"),
                node: text(req.get("path_relative_to")).as_deref() == Some("node"),
                params,
                body: match req.get("body") {
                    None | Some(JVal::Null) => None,
                    Some(b) => Some(b.clone()),
                },
                content_type: text(req.get("content_type")),
                status: resp.get("status").and_then(JVal::as_i64).expect("status") as u16,
                resp_content_type: text(resp.get("content_type")).unwrap_or_default(),
                resp_body: resp.get("body").cloned().unwrap_or(JVal::Null),
                notes: text(s.get("notes")).unwrap_or_default(),
            }
        })
        .collect()
}

/// A piece of an expected string: literal text or a placeholder.
enum Piece {
    Lit(String),
    /// A numbered placeholder, bound on first sight.
    Bind(String),
    /// A normalisation: matches anything.
    Wild,
}

fn is_binding(name: &str) -> bool {
    name.starts_with("<version:") || name.starts_with("<delete-version:")
}

fn is_wild(name: &str) -> bool {
    matches!(
        name,
        "<request-id>"
            | "<timestamp>"
            | "<timestamp-ms>"
            | "<core-dir>"
            | "<index-dir>"
            | "<hash>"
            | "<size>"
            | "<n>"
    ) || (name.ends_with(" more stack trace lines removed>")
        && name[1..]
            .split(' ')
            .next()
            .is_some_and(|n| n.parse::<u32>().is_ok()))
}

fn pieces(s: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(open) = rest.find('<') {
        let Some(close) = rest[open..].find('>') else {
            break;
        };
        let name = &rest[open..open + close + 1];
        if is_binding(name) || is_wild(name) {
            if open > 0 {
                out.push(Piece::Lit(rest[..open].to_string()));
            }
            out.push(if is_binding(name) {
                Piece::Bind(name.to_string())
            } else {
                Piece::Wild
            });
        } else {
            out.push(Piece::Lit(rest[..open + close + 1].to_string()));
        }
        rest = &rest[open + close + 1..];
    }
    if !rest.is_empty() {
        out.push(Piece::Lit(rest.to_string()));
    }
    out
}

#[derive(Default)]
struct Bindings {
    value: HashMap<String, String>,
    owner: HashMap<String, String>,
}

impl Bindings {
    /// Matches `actual` against the pieces; on success returns the new bindings.
    fn match_pieces(&self, ps: &[Piece], actual: &str, new: &mut Vec<(String, String)>) -> bool {
        let Some(first) = ps.first() else {
            return actual.is_empty();
        };
        match first {
            Piece::Lit(l) => {
                actual.starts_with(l.as_str())
                    && self.match_pieces(&ps[1..], &actual[l.len()..], new)
            }
            Piece::Bind(name) => {
                let known = self
                    .value
                    .get(name)
                    .cloned()
                    .or_else(|| new.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()));
                if let Some(v) = known {
                    return actual.starts_with(&v)
                        && self.match_pieces(&ps[1..], &actual[v.len()..], new);
                }
                // A version: an optional minus and digits.
                let bytes = actual.as_bytes();
                let mut end = usize::from(bytes.first() == Some(&b'-'));
                while end < bytes.len() && bytes[end].is_ascii_digit() {
                    end += 1;
                }
                for cut in (1..=end).rev() {
                    new.push((name.clone(), actual[..cut].to_string()));
                    if self.match_pieces(&ps[1..], &actual[cut..], new) {
                        return true;
                    }
                    new.pop();
                }
                false
            }
            Piece::Wild => (0..=actual.len())
                .filter(|i| actual.is_char_boundary(*i))
                .any(|i| self.match_pieces(&ps[1..], &actual[i..], new)),
        }
    }

    fn commit(&mut self, new: Vec<(String, String)>) -> Result<(), String> {
        for (name, v) in new {
            if let Some(other) = self.owner.get(&v) {
                if *other != name {
                    return Err(format!(
                        "the fake's value {v} stands for both {other} and {name}"
                    ));
                }
            }
            self.owner.insert(v.clone(), name.clone());
            self.value.insert(name, v);
        }
        Ok(())
    }

    /// Replaces placeholders in request text.
    fn substitute(&self, s: &str) -> String {
        let mut out = String::new();
        for p in pieces(s) {
            match p {
                Piece::Lit(l) => out.push_str(&l),
                Piece::Bind(name) => out.push_str(self.value.get(&name).unwrap_or_else(|| {
                    panic!("{name} used in a request before any response showed it")
                })),
                Piece::Wild => panic!("a normalised placeholder in a request: {s}"),
            }
        }
        out
    }

    fn substitute_json(&self, v: &JVal) -> JVal {
        match v {
            JVal::Str(s) if is_binding(s) => JVal::Num(self.substitute(s)),
            JVal::Str(s) => JVal::Str(self.substitute(s)),
            JVal::Arr(a) => JVal::Arr(a.iter().map(|x| self.substitute_json(x)).collect()),
            JVal::Obj(p) => JVal::Obj(
                p.iter()
                    .map(|(k, x)| (k.clone(), self.substitute_json(x)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// Keys whose numbers the recorder zeroed.
fn zeroed(key: &str, parent: &str) -> bool {
    matches!(key, "QTime" | "uptime")
        || (parent == "index"
            && matches!(key, "version" | "segmentsFileSizeInBytes" | "sizeInBytes"))
}

fn compare(
    expected: &JVal,
    actual: &JVal,
    at: &str,
    parent: &str,
    b: &mut Bindings,
) -> Result<(), String> {
    let key = at.rsplit('.').next().unwrap_or("");
    if zeroed(key, parent)
        && matches!(expected, JVal::Num(n) if n == "0")
        && matches!(actual, JVal::Num(_))
    {
        return Ok(());
    }
    match (expected, actual) {
        (JVal::Str(e), _)
            if e.contains('<') && pieces(e).iter().any(|p| !matches!(p, Piece::Lit(_))) =>
        {
            let text = match actual {
                JVal::Str(s) => s.clone(),
                JVal::Num(n) => n.clone(),
                other => return Err(format!("{at}: expected {e}, got {}", other.to_compact())),
            };
            let whole = pieces(e).len() == 1;
            if matches!(actual, JVal::Num(_)) && !whole {
                return Err(format!("{at}: expected text {e}, got number {text}"));
            }
            let mut new = Vec::new();
            if b.match_pieces(&pieces(e), &text, &mut new) {
                b.commit(new).map_err(|m| format!("{at}: {m}"))
            } else {
                Err(format!("{at}: expected {e:?}, got {text:?}"))
            }
        }
        (JVal::Num(e), JVal::Num(a)) => {
            let same = match (is_integer_text(e), is_integer_text(a)) {
                (true, true) => e.parse::<i128>().ok() == a.parse::<i128>().ok(),
                (false, false) => e.parse::<f64>().ok() == a.parse::<f64>().ok(),
                _ => false,
            };
            if same {
                Ok(())
            } else {
                Err(format!("{at}: expected {e}, got {a}"))
            }
        }
        (JVal::Obj(e), JVal::Obj(a)) => {
            for (k, ev) in e {
                match a.iter().find(|(ak, _)| ak == k) {
                    Some((_, av)) => compare(ev, av, &format!("{at}.{k}"), key, b)?,
                    None => return Err(format!("{at}: missing key {k:?}")),
                }
            }
            for (k, _) in a {
                if !e.iter().any(|(ek, _)| ek == k) {
                    return Err(format!("{at}: unexpected key {k:?}"));
                }
            }
            Ok(())
        }
        (JVal::Arr(e), JVal::Arr(a)) => {
            if e.len() != a.len() {
                return Err(format!(
                    "{at}: expected {} items, got {}: {}",
                    e.len(),
                    a.len(),
                    JVal::Arr(a.clone()).to_compact()
                ));
            }
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                compare(ev, av, &format!("{at}[{i}]"), parent, b)?;
            }
            Ok(())
        }
        (e, a) if e == a => Ok(()),
        (e, a) => Err(format!(
            "{at}: expected {}, got {}",
            e.to_compact(),
            a.to_compact()
        )),
    }
}

/// The recorder trimmed one long list (its notes say "TRIMMED"): keep only the list entries whose
/// `name` the recorded list kept, so the rest of the answer is still compared.
fn trim_like(expected: &JVal, actual: &mut JVal) {
    let (JVal::Obj(e), JVal::Obj(a)) = (expected, actual) else {
        return;
    };
    for (k, av) in a.iter_mut() {
        let Some((_, JVal::Arr(ev))) = e.iter().find(|(ek, _)| ek == k) else {
            continue;
        };
        let kept: Vec<&JVal> = ev.iter().filter_map(|x| x.get("name")).collect();
        if let JVal::Arr(items) = av {
            if !kept.is_empty() {
                items.retain(|x| x.get("name").is_some_and(|n| kept.contains(&n)));
            }
        }
    }
}

/// Sends one step and compares the answer.
fn run_step(
    client: &reqwest::blocking::Client,
    fake: &FakeSolr,
    step: &Step,
    b: &mut Bindings,
) -> Result<(), String> {
    let url = if step.node {
        format!("{}{}", fake.base_url().trim_end_matches("/solr"), step.path)
    } else {
        format!("{}{}", fake.core_url(), step.path)
    };
    let params: Vec<(String, String)> = step
        .params
        .iter()
        .map(|(k, v)| (k.clone(), b.substitute(v)))
        .collect();
    let url = if params.is_empty() {
        url
    } else {
        let query = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(&params)
            .finish();
        format!("{url}?{query}")
    };
    let method = reqwest::Method::from_bytes(step.method.as_bytes()).expect("method");
    let mut rb = client.request(method, &url);
    if let Some(ct) = &step.content_type {
        rb = rb.header("Content-Type", ct);
    }
    match &step.body {
        Some(JVal::Str(raw)) => rb = rb.body(b.substitute(raw)),
        Some(v) => rb = rb.body(b.substitute_json(v).to_python()),
        None => {}
    }
    let resp = rb.send().map_err(|e| format!("request failed: {e}"))?;
    let status = resp.status().as_u16();
    let ct = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let body = resp.text().map_err(|e| format!("reading the body: {e}"))?;
    let mut problems = Vec::new();
    if status != step.status {
        problems.push(format!("status {status}, expected {}", step.status));
    }
    if ct != step.resp_content_type {
        problems.push(format!(
            "content type {ct:?}, expected {:?}",
            step.resp_content_type
        ));
    }
    let outcome = match &step.resp_body {
        JVal::Str(expected) => {
            if *expected == body {
                Ok(())
            } else {
                Err(format!("body {body:?}, expected {expected:?}"))
            }
        }
        expected => match json::parse(&body) {
            Ok(mut actual) => {
                if step.notes.contains("TRIMMED") {
                    trim_like(expected, &mut actual);
                }
                compare(expected, &actual, "body", "", b)
            }
            Err(e) => Err(format!("body is not JSON ({}): {body}", e.message)),
        },
    };
    if let Err(e) = outcome {
        problems.push(e);
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// Why a recorded step is not replayed: it asks for something the client never sends (see the
/// module doc); `None` for every step that is.
fn not_served(step: &Step) -> Option<&'static str> {
    let facet = step.params.iter().any(|(k, v)| k == "facet" && v == "true");
    let score = step.params.iter().any(|(k, v)| {
        (k == "fl" || k == "sort") && v.split([',', ' ']).any(|part| part == "score")
    });
    let reason = match step.path.as_str() {
        "/admin/luke" if !step.node => "the index summary (/admin/luke)",
        "/solr/admin/cores" if step.node => "CoreAdmin",
        _ if facet => "classic faceting (facet=true)",
        "/select" | "/query" if score => "relevance scores (BM25)",
        _ if step.params.iter().any(|(k, v)| k == "wt" && v == "xml") => "the XML writer",
        _ => return None,
    };
    assert_eq!(step.method, "GET", "a skipped step must change nothing");
    Some(reason)
}

/// Replays one transcript; `deliberate` lists the steps the fake answers differently on purpose.
fn replay(file: &str, deliberate: &[(usize, &str)]) {
    let steps = load(file);
    let fake = FakeSolr::start_with(FakeOptions {
        commit_within: CommitWithin::Manual,
        ..FakeOptions::default()
    });
    let client = {
        solr_dedup::solr_client::install_crypto_provider();
        reqwest::blocking::Client::builder()
    }
    .timeout(Duration::from_secs(60))
    .build()
    .expect("client");
    let mut b = Bindings::default();
    let mut matched = 0;
    let mut failures = Vec::new();
    let mut skipped = 0;
    for (i, step) in steps.iter().enumerate() {
        if not_served(step).is_some() {
            skipped += 1;
            continue;
        }
        if step.notes.contains("recorder waited") {
            fake.with_core(|c| c.fire_commit_within());
        }
        let result = run_step(&client, &fake, step, &mut b);
        let listed = deliberate.iter().find(|(n, _)| *n == i);
        match (result, listed) {
            (Ok(()), None) => matched += 1,
            (Ok(()), Some((_, why))) => failures.push(format!(
                "step {i} now matches but is listed as a deliberate difference ({why}): remove it from the table"
            )),
            (Err(e), None) => failures.push(format!(
                "step {i} ({} {} {:?}): {e}",
                step.method, step.path, step.params
            )),
            (Err(_), Some(_)) => {}
        }
    }
    eprintln!(
        "{file}: {matched}/{} steps match, {} deliberate differences, {skipped} not served",
        steps.len(),
        deliberate.len()
    );
    assert!(failures.is_empty(), "{file}:\n{}", failures.join("\n"));
}

#[test]
fn transcript_01_add_and_commit() {
    replay("01-add-and-commit.json", &[]);
}

#[test]
fn transcript_02_select() {
    replay("02-select.json", &[]);
}

#[test]
fn transcript_03_cursor_mark() {
    replay("03-cursor-mark.json", &[]);
}

#[test]
fn transcript_05_json_facet() {
    replay("05-json-facet.json", &[]);
}

#[test]
fn transcript_06_realtime_get() {
    replay("06-realtime-get.json", &[]);
}

#[test]
fn transcript_07_atomic_updates() {
    replay("07-atomic-updates.json", &[]);
}

#[test]
fn transcript_08_delete() {
    replay("08-delete.json", &[]);
}

#[test]
fn transcript_09_schema_api() {
    replay("09-schema-api.json", &[]);
}

#[test]
fn transcript_10_errors() {
    replay("10-errors.json", &[]);
}

#[test]
fn transcript_11_admin() {
    replay("11-admin.json", &[]);
}

#[test]
fn transcript_12_export() {
    replay("12-export.json", &[]);
}
