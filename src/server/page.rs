//! The admin page: a shell at `/` that holds no index data (so it needs no token to load), and
//! server-rendered fragments under `/ui/` that its little script fetches with the token, puts in
//! place, and refreshes while a run goes. No build step, no framework, no external resource.
//!
//! Everything from the index (URLs, ids, errors) is HTML-escaped here; links are made only to
//! `http` and `https` URLs. The script's paths are relative, so the page works mounted under a
//! reverse proxy's path prefix.

use std::fmt::Write;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::{Html, IntoResponse, Response};
use serde::Deserialize;
use serde_json::Value;

use super::runs::{Kind, Record};
use super::{find_groups, status_of, AppState};
use crate::engine::DocumentCounts;

/// `&`, `<`, `>`, `"` and `'` escaped.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A link to `url` when it is http(s), else the escaped text.
fn link(url: &str, text: &str) -> String {
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        format!(
            "<a href=\"{}\" rel=\"noreferrer noopener\" target=\"_blank\">{}</a>",
            esc(url),
            esc(text)
        )
    } else {
        esc(text)
    }
}

/// Unix seconds as `2026-11-24 10:31:05 UTC`.
pub fn utc(secs: f64) -> String {
    let s = secs.max(0.0) as i64;
    let (days, rem) = (s.div_euclid(86_400), s.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The page's shell.
pub(super) async fn shell(State(state): State<Arc<AppState>>) -> Response {
    let needs_token = state.token.is_some();
    Html(SHELL.replace(
        "__NEEDS_TOKEN__",
        if needs_token { "true" } else { "false" },
    ))
    .into_response()
}

/// The index, its health, the schedule, and the recent runs with their per-dimension findings.
pub(super) async fn overview(State(state): State<Arc<AppState>>) -> Response {
    let status = status_of(&state).await;
    let mut h = String::new();
    let text = |v: &Value| v.as_str().unwrap_or("").to_owned();
    let _ = write!(
        h,
        "<dl class=\"facts\"><dt>Index</dt><dd id=\"core\">{}</dd>",
        esc(&status
            .get("store")
            .map(text)
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "none (start serve with --solr or --input)".to_owned()))
    );
    let health = match status.get("healthy").and_then(Value::as_bool) {
        Some(true) => "<span class=\"ok\">answers</span>".to_owned(),
        Some(false) => format!(
            "<span class=\"bad\">{}</span>",
            esc(&status.get("health_error").map(text).unwrap_or_default())
        ),
        None => "–".to_owned(),
    };
    let _ = write!(h, "<dt>Health</dt><dd id=\"health\">{health}</dd>");
    let schedule = status
        .get("schedule")
        .and_then(Value::as_str)
        .unwrap_or("none: runs start from here or the API");
    let _ = write!(h, "<dt>Schedule</dt><dd>{}</dd>", esc(schedule));
    let rules = if status.get("rules").and_then(Value::as_bool) == Some(true) {
        "loaded"
    } else {
        "none (start serve with --rules)"
    };
    let _ = write!(h, "<dt>URL rules</dt><dd>{rules}</dd></dl>");

    let runs = state.runs.recent(10);
    if let Some(last) = runs.iter().find(|r| r.report.is_some()) {
        dimensions_table(&mut h, last);
    }
    h.push_str("<h2>Recent runs</h2>");
    if runs.is_empty() {
        h.push_str("<p id=\"no-runs\">No runs yet.</p>");
    } else {
        h.push_str(
            "<div class=\"scroll\"><table id=\"runs\"><thead><tr><th>#</th><th>kind</th><th>by</th>\
             <th>outcome</th><th>started</th><th>took</th><th class=\"n\">read</th>\
             <th class=\"n\">signed</th><th class=\"n\">written</th>\
             <th title=\"groups / doubles\">groups / doubles per dimension</th></tr></thead><tbody>",
        );
        for r in &runs {
            run_row(&mut h, r);
        }
        h.push_str("</tbody></table></div>");
    }
    Html(h).into_response()
}

fn run_row(h: &mut String, r: &Record) {
    let docs = |n: fn(&DocumentCounts) -> u64| {
        r.report
            .as_ref()
            .map_or_else(|| "–".to_owned(), |rep| n(&rep.documents).to_string())
    };
    let took = r
        .ended
        .map_or_else(|| "…".to_owned(), |e| format!("{:.1} s", e - r.started));
    let mut kind = r.kind.name().to_owned();
    if r.options.full {
        kind.push_str(" full");
    }
    if r.options.dry_run {
        kind.push_str(" dry");
    }
    let dims = r
        .report
        .as_ref()
        .map(|rep| {
            rep.dimensions
                .iter()
                .map(|(d, v)| format!("{} {}/{}", esc(d), v.groups, v.doubles))
                .collect::<Vec<_>>()
                .join(" · ")
        })
        .unwrap_or_default();
    let trigger = serde_json::to_value(r.trigger)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let _ = write!(
        h,
        "<tr class=\"run\" data-id=\"{id}\" data-state=\"{state}\"><td>{id}</td><td>{kind}</td><td>{trigger}</td>\
         <td><span class=\"state {state}\" title=\"{error}\">{state}</span></td><td>{started}</td><td>{took}</td>\
         <td class=\"n\">{read}</td><td class=\"n\">{signed}</td><td class=\"n\">{written}</td>\
         <td class=\"dims\">{dims}</td></tr>",
        id = r.id,
        kind = esc(&kind),
        trigger = esc(&trigger),
        state = r.state.name(),
        error = esc(r.error.as_deref().unwrap_or("")),
        started = utc(r.started),
        read = docs(|d| d.read),
        signed = docs(|d| d.signed),
        written = docs(|d| d.written),
    );
}

fn dimensions_table(h: &mut String, r: &Record) {
    let Some(dims) = r.report.as_ref().map(|rep| &rep.dimensions) else {
        return;
    };
    let changed = if r.kind == Kind::Check {
        "wrong"
    } else {
        "changed"
    };
    let _ = write!(
        h,
        "<h2>Run {} ({}, {})</h2><div class=\"scroll\"><table id=\"dimensions\"><thead><tr><th>dimension</th>\
         <th class=\"n\">groups</th><th class=\"n\">doubles</th><th class=\"n\">{changed}</th></tr></thead><tbody>",
        r.id,
        r.kind.name(),
        r.state.name()
    );
    for (d, v) in dims {
        let _ = write!(
            h,
            "<tr class=\"dimension\" data-dimension=\"{d}\"><td>{d}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            v.groups,
            v.doubles,
            v.changed,
            d = esc(d)
        );
    }
    h.push_str("</tbody></table></div>");
    if let Some(e) = &r.error {
        let _ = write!(h, "<p class=\"bad\">{}</p>", esc(e));
    }
}

#[derive(Deserialize)]
pub(super) struct GroupsQuery {
    dimension: String,
    #[serde(default)]
    limit: Option<usize>,
}

/// The biggest groups of a dimension, each a `<details>` with its members.
pub(super) async fn groups(
    State(state): State<Arc<AppState>>,
    Query(q): Query<GroupsQuery>,
) -> Response {
    let groups = match find_groups(&state, &q.dimension, q.limit.unwrap_or(10), 8).await {
        Ok(g) => g,
        Err((status, message)) => {
            return (
                status,
                Html(format!("<p class=\"bad\">{}</p>", esc(&message))),
            )
                .into_response();
        }
    };
    let mut h = String::new();
    if groups.is_empty() {
        h.push_str("<p id=\"no-groups\">No group of two or more documents.</p>");
    }
    let backend = state.backend.as_ref();
    for g in &groups {
        let rep = g
            .representative
            .as_ref()
            .map(|m| m.url.clone().unwrap_or_else(|| m.id.clone()))
            .unwrap_or_else(|| "no representative yet (run first)".to_owned());
        let _ = write!(
            h,
            "<details class=\"group\" data-key=\"{key}\"><summary><b>{size}</b> documents · {rep}\
             <span class=\"key\">{key}</span></summary><ul>",
            key = esc(&g.key),
            size = g.size,
            rep = esc(&rep)
        );
        for m in &g.members {
            let url = m.url.as_deref().unwrap_or("");
            let star = if m.unique == Some(true) {
                "<span title=\"representative\">★</span> "
            } else {
                ""
            };
            let solr = backend
                .and_then(|b| b.document_link(&m.id))
                .map(|l| format!(" · {}", link(&l, "in the index")))
                .unwrap_or_default();
            let _ = write!(
                h,
                "<li class=\"member\">{star}{} <span class=\"id\">{}</span>{solr}</li>",
                link(url, if url.is_empty() { &m.id } else { url }),
                esc(&m.id)
            );
        }
        if g.size > g.members.len() as u64 {
            let _ = write!(
                h,
                "<li class=\"more\">and {} more</li>",
                g.size - g.members.len() as u64
            );
        }
        h.push_str("</ul></details>");
    }
    Html(h).into_response()
}

const SHELL: &str = r##"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>solr-dedup</title>
<style>
  :root { --fg: #1d2430; --muted: #5b6676; --line: #d9dee6; --bg: #f6f7f9; --accent: #1f6feb; --ok: #1a7f37; --bad: #c62828; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
  header { background: #fff; border-bottom: 1px solid var(--line); padding: .8rem 1rem; display: flex; gap: 1rem; align-items: baseline; flex-wrap: wrap; }
  header h1 { font-size: 1.2rem; margin: 0; }
  header .sub { color: var(--muted); }
  main { max-width: 1100px; margin: 0 auto; padding: 1rem; display: grid; gap: 1rem; grid-template-columns: minmax(0, 1fr); }
  section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 1rem; }
  h2 { font-size: 1rem; margin: .8rem 0 .5rem; }
  section > h2:first-child { margin-top: 0; }
  dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: 0; }
  dt { color: var(--muted); } dd { margin: 0; overflow-wrap: anywhere; }
  button { font: inherit; padding: .45rem .9rem; border-radius: 6px; border: 1px solid var(--line); background: #fff; cursor: pointer; }
  button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
  button:disabled { opacity: .45; cursor: default; }
  .row { display: flex; gap: .5rem; flex-wrap: wrap; align-items: center; }
  progress { width: 100%; height: 1.1rem; }
  .scroll { overflow-x: auto; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line); white-space: nowrap; }
  th.n, td.n { text-align: right; font-variant-numeric: tabular-nums; }
  .state.succeeded, .ok { color: var(--ok); } .state.failed, .state.interrupted, .bad { color: var(--bad); } .state.cancelled { color: var(--muted); }
  details.group { border-bottom: 1px solid var(--line); padding: .35rem 0; }
  details.group summary { cursor: pointer; overflow-wrap: anywhere; }
  td.dims { white-space: normal; min-width: 16rem; font-size: .85em; color: var(--muted); }
  .key, .id, .muted { color: var(--muted); font-size: .85em; margin-left: .5rem; }
  li.member { overflow-wrap: anywhere; }
  textarea { width: 100%; min-height: 5rem; font: 13px ui-monospace, monospace; }
  select, input[type=password] { font: inherit; padding: .35rem; }
  #token-box { display: none; border-color: var(--accent); }
  #url-results td { white-space: normal; overflow-wrap: anywhere; }
  @media (max-width: 600px) { main { padding: .5rem; } section { padding: .7rem; } th, td { padding: .25rem .3rem; } }
</style>
</head>
<body>
<header><h1>solr-dedup</h1><span class="sub">doubles in a Solr core of crawled pages</span></header>
<main>
<section id="token-box">
  <h2>Token</h2>
  <p>This server needs its bearer token. It is kept in this tab only.</p>
  <div class="row"><input id="token" type="password" autocomplete="off" placeholder="token"><button id="btn-token" class="primary">Use</button></div>
</section>
<section>
  <h2>Run</h2>
  <div class="row">
    <button id="btn-run" class="primary">Run</button>
    <button id="btn-check">Check</button>
    <button id="btn-cancel" disabled>Cancel</button>
    <label><input type="checkbox" id="opt-full"> full (sign every page again)</label>
    <label><input type="checkbox" id="opt-dry"> dry run</label>
  </div>
  <div id="progress-box" hidden>
    <p id="progress-text" class="muted"></p>
    <progress id="progress" max="1" value="0"></progress>
  </div>
  <p id="message" role="status"></p>
</section>
<section id="overview"><p class="muted">Loading…</p></section>
<section>
  <h2>Biggest groups</h2>
  <div class="row">
    <select id="groups-dimension">
      <option>exact</option><option>fuzzy</option><option>title</option><option>description</option><option>near</option>
    </select>
    <button id="btn-groups">Show</button>
  </div>
  <div id="groups"></div>
</section>
<section>
  <h2>Test URLs against the rules</h2>
  <textarea id="urls" placeholder="one URL a line"></textarea>
  <div class="row"><button id="btn-test">Test</button></div>
  <div class="scroll"><table id="url-results"></table></div>
</section>
</main>
<script>
"use strict";
const needsToken = __NEEDS_TOKEN__;
const $ = (id) => document.getElementById(id);
let running = null;
function token() { return sessionStorage.getItem("solr-dedup-token") || ""; }
async function api(path, body) {
  const headers = {};
  if (token()) headers["Authorization"] = "Bearer " + token();
  const init = { headers };
  if (body !== undefined) { init.method = "POST"; headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
  const r = await fetch(path, init);
  if (r.status === 401) { $("token-box").style.display = "block"; throw new Error("the token is missing or wrong"); }
  return r;
}
function say(text, bad) { const m = $("message"); m.textContent = text; m.className = bad ? "bad" : "muted"; }
async function fragment(id, path) {
  const r = await api(path);
  $(id).innerHTML = await r.text();
}
function showProgress(run) {
  const box = $("progress-box"), bar = $("progress");
  if (!run) { box.hidden = true; return; }
  box.hidden = false;
  const p = run.progress || { phase: "starting", done: 0, rate: 0, round: 0 };
  if (p.total) { bar.max = p.total; bar.value = Math.min(p.done, p.total); } else { bar.removeAttribute("value"); }
  $("progress-text").textContent = `${run.kind} ${run.id}: ${p.phase}, ${p.done.toLocaleString()}` +
    (p.total ? ` of ${p.total.toLocaleString()}` : "") + ` documents, ${p.rate.toLocaleString()}/s, round ${p.round}`;
}
async function poll() {
  try {
    const r = await api("api/runs/current");
    const run = (await r.json()).run;
    showProgress(run);
    $("btn-cancel").disabled = !run;
    $("btn-run").disabled = $("btn-check").disabled = !!run;
    if (running && (!run || run.id !== running)) {
      const ended = running;
      running = run ? run.id : null;
      await fragment("overview", "ui/overview");
      const done = await (await api("api/runs/" + ended)).json();
      say(`Run ${ended} ${done.state}` + (done.error ? `: ${done.error}` : "."), done.state !== "succeeded");
    } else if (run && !running) {
      running = run.id;
      await fragment("overview", "ui/overview");
    }
  } catch (e) { say(e.message, true); }
  setTimeout(poll, running ? 400 : 2000);
}
async function start(check) {
  try {
    const r = await api("api/runs", { check, full: $("opt-full").checked, dry_run: $("opt-dry").checked });
    const answer = await r.json();
    if (r.status === 202) { running = answer.id; say(`${check ? "Check" : "Run"} ${answer.id} started.`); showProgress(answer.run); }
    else say(answer.error, true);
  } catch (e) { say(e.message, true); }
}
$("btn-run").onclick = () => start(false);
$("btn-check").onclick = () => start(true);
$("btn-cancel").onclick = async () => {
  if (!running) return;
  try { const r = await api(`api/runs/${running}/cancel`, {}); if (r.status !== 202) say((await r.json()).error, true); else say("Cancelling after the batch in flight…"); }
  catch (e) { say(e.message, true); }
};
$("btn-groups").onclick = async () => {
  $("groups").innerHTML = '<p class="muted">Loading…</p>';
  try { await fragment("groups", "ui/groups?dimension=" + encodeURIComponent($("groups-dimension").value)); }
  catch (e) { say(e.message, true); }
};
$("btn-test").onclick = async () => {
  const urls = $("urls").value.split("\n").map((u) => u.trim()).filter((u) => u);
  const table = $("url-results");
  table.textContent = "";
  if (!urls.length) return;
  try {
    const r = await api("api/urls/predict", { urls });
    const answer = await r.json();
    if (r.status !== 200) { say(answer.error, true); return; }
    const head = table.insertRow();
    for (const t of ["URL", "canonical", "duplicate of", "probability"]) { const th = document.createElement("th"); th.textContent = t; head.appendChild(th); }
    for (const a of answer.answers) {
      const row = table.insertRow();
      row.className = "url-result";
      row.dataset.duplicate = a.duplicate_of ? "yes" : "no";
      const cells = a.error ? [a.url, a.error, "", ""] :
        [a.url, a.canonical, a.duplicate_of ? a.duplicate_of.url : "new", a.duplicate_of ? a.probability.toFixed(3) : ""];
      for (const c of cells) row.insertCell().textContent = c;
    }
  } catch (e) { say(e.message, true); }
};
$("btn-token").onclick = () => { sessionStorage.setItem("solr-dedup-token", $("token").value.trim()); $("token-box").style.display = "none"; fragment("overview", "ui/overview").catch((e) => say(e.message, true)); };
if (needsToken && !token()) $("token-box").style.display = "block";
fragment("overview", "ui/overview").catch((e) => say(e.message, true));
poll();
</script>
</body>
</html>
"##;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_links_only_web_urls() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert!(link("javascript:alert(1)", "x").starts_with('x'));
        assert!(link("HTTPS://e.org/?a=<b>", "t").contains("href=\"HTTPS://e.org/?a=&lt;b&gt;\""));
    }

    #[test]
    fn unix_seconds_read_as_utc_dates() {
        assert_eq!(utc(0.0), "1970-01-01 00:00:00 UTC");
        // 2000-02-29 12:34:56 UTC, a leap day.
        assert_eq!(utc(951_827_696.0), "2000-02-29 12:34:56 UTC");
        // 2026-11-24 00:00:00 UTC.
        assert_eq!(utc(1_795_478_400.0), "2026-11-24 00:00:00 UTC");
    }
}
