//! The admin page: a shell at `/` that holds no index data (so it needs no token to load), and
//! server-rendered fragments under `/ui/` that its little script fetches with the token, puts in
//! place, and refreshes while a run goes. No build step, no framework, no external resource.
//!
//! The markup, style and script are files in `assets/`, not Rust strings:
//! - `page.html` (the shell), `overview.html` and `groups.html` (the fragments) are
//!   [askama](https://askama.rs) templates, compiled into the binary and checked when it builds
//!   (a field a template names and the view lacks is a build error). askama escapes every value it
//!   writes into HTML, so everything from the index (URLs, ids, errors) is escaped without an
//!   escaping function of ours; links are made only to `http` and `https` URLs ([`web`]).
//! - `page.css` and `page.js` are plain files (`include_str!`) put into the shell as they are, so
//!   that an editor and a linter read them as CSS and JavaScript.
//!
//! The views below hold what the templates show, already formatted (dates with `humantime`). The
//! script's paths are relative, so the page works mounted under a reverse proxy's path prefix.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use serde::Deserialize;

use super::runs::{Kind, Record};
use super::{find_documents, find_groups, status_of, AppState};
use crate::browse::Member;
use crate::engine::progress::{seconds, thousands};
use crate::engine::{DimensionReport, DocumentCounts, Name};

/// `url` when it is an `http` or `https` URL (the only ones the page links to).
pub fn web(url: &str) -> Option<&str> {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    (lower.starts_with("http://") || lower.starts_with("https://")).then_some(url)
}

/// Unix seconds as `2026-11-24 10:31:05 UTC`.
pub fn utc(secs: f64) -> String {
    let t = UNIX_EPOCH + Duration::from_secs(secs.max(0.0) as u64);
    // RFC 3339 (`2026-11-24T10:31:05Z`), as a person reads it.
    let rfc = humantime::format_rfc3339_seconds(t).to_string();
    format!("{} UTC", rfc.trim_end_matches('Z').replacen('T', " ", 1))
}

/// Renders `t`, or says what went wrong (a template that renders nothing is a bug of ours).
fn render(status: StatusCode, t: &impl Template) -> Response {
    match t.render() {
        Ok(html) => (status, Html(html)).into_response(),
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot render the page: {e}"),
        )
            .into_response(),
    }
}

/// The page's shell.
#[derive(Template)]
#[template(path = "page.html")]
struct Shell {
    needs_token: bool,
    css: &'static str,
    script: &'static str,
}

pub(super) async fn shell(State(state): State<Arc<AppState>>) -> Response {
    let shell = Shell {
        needs_token: state.token.is_some(),
        css: include_str!("assets/page.css"),
        script: include_str!("assets/page.js"),
    };
    render(StatusCode::OK, &shell)
}

/// Whether the index answers.
enum Health {
    /// The server has none.
    NoIndex,
    Answers,
    /// What is wrong.
    Fails(String),
}

/// The newest run with a report: its findings per dimension.
struct Last<'a> {
    id: u64,
    kind: &'static str,
    state: &'static str,
    /// The last column's title: what a check calls wrong, a run changed.
    changed: &'static str,
    dimensions: &'a BTreeMap<Name, DimensionReport>,
    error: Option<&'a str>,
}

/// A row of the recent runs.
struct RunRow<'a> {
    id: u64,
    /// `run`, then ` full` and ` dry` as the options say.
    kind: String,
    trigger: &'static str,
    state: &'static str,
    error: &'a str,
    started: String,
    took: String,
    read: String,
    signed: String,
    written: String,
    /// `exact 3/5 · fuzzy 2/4`: groups and doubles per dimension.
    dimensions: String,
}

impl<'a> RunRow<'a> {
    fn of(r: &'a Record) -> Self {
        let docs = |n: fn(&DocumentCounts) -> u64| {
            r.report
                .as_ref()
                .map_or_else(|| "–".to_owned(), |rep| n(&rep.documents).to_string())
        };
        let mut kind = r.kind.name().to_owned();
        if r.options.full {
            kind.push_str(" full");
        }
        if r.options.dry_run {
            kind.push_str(" dry");
        }
        let dimensions = r.report.as_ref().map_or_else(String::new, |rep| {
            rep.dimensions
                .iter()
                .map(|(d, v)| format!("{d} {}/{}", v.groups, v.doubles))
                .collect::<Vec<_>>()
                .join(" · ")
        });
        RunRow {
            id: r.id,
            kind,
            trigger: r.trigger.name(),
            state: r.state.name(),
            error: r.error.as_deref().unwrap_or(""),
            started: utc(r.started),
            took: r
                .ended
                .map_or_else(|| "…".to_owned(), |e| format!("{:.1} s", e - r.started)),
            read: docs(|d| d.read),
            signed: docs(|d| d.signed),
            written: docs(|d| d.written),
            dimensions,
        }
    }
}

/// The index, its health, the schedule, and the recent runs with their per-dimension findings.
#[derive(Template)]
#[template(path = "overview.html")]
struct Overview<'a> {
    store: Option<String>,
    /// The index's own admin page, when the page may link to it.
    admin_link: Option<String>,
    /// Documents in the index (in the filter), when it answers and counts cheaply.
    documents: Option<String>,
    /// The newest run: `run 4, succeeded, started 2026-11-24 10:31:05 UTC`.
    last_run: Option<String>,
    /// When the documents last changed.
    last_change: Option<String>,
    /// When the schedule starts its next run.
    next_run: Option<String>,
    /// `(name, value)` of serve's settings.
    settings: Vec<(&'static str, String)>,
    health: Health,
    schedule: Option<String>,
    rules: bool,
    /// The prediction index's size and age, as a line.
    prediction_index: Option<String>,
    last: Option<Last<'a>>,
    runs: Vec<RunRow<'a>>,
}

pub(super) async fn overview(State(state): State<Arc<AppState>>) -> Response {
    let status = status_of(&state).await;
    let health = match (status.healthy, status.health_error) {
        (None, _) => Health::NoIndex,
        (Some(true), _) => Health::Answers,
        (Some(false), e) => Health::Fails(e.unwrap_or_default()),
    };
    let runs = state.runs.recent(10);
    let last = runs.iter().find_map(|r| {
        let report = r.report.as_ref()?;
        Some(Last {
            id: r.id,
            kind: r.kind.name(),
            state: r.state.name(),
            changed: if r.kind == Kind::Check {
                "wrong"
            } else {
                "changed"
            },
            dimensions: &report.dimensions,
            error: r.error.as_deref(),
        })
    });
    let mut settings = Vec::new();
    if let Some(s) = status.settings {
        settings.push(("scheme", s.scheme));
        settings.push(("dimensions", s.dimensions.join(", ")));
        settings.push(("scope", s.scope));
        settings.push((
            "filter",
            s.filter
                .unwrap_or_else(|| "none (every document)".to_owned()),
        ));
        settings.push((
            "chrome model",
            s.chrome_model.unwrap_or_else(|| "none".to_owned()),
        ));
    }
    let overview = Overview {
        store: status.store.filter(|s| !s.is_empty()),
        admin_link: status
            .admin_link
            .as_deref()
            .and_then(web)
            .map(str::to_owned),
        documents: status.documents.map(thousands),
        last_run: runs.first().map(|r| {
            format!(
                "{} {}, {}, started {}",
                r.kind.name(),
                r.id,
                r.state.name(),
                utc(r.started)
            )
        }),
        settings,
        last_change: status.last_change.map(utc),
        next_run: status.next_run.map(utc),
        health,
        schedule: status.schedule,
        rules: status.rules,
        prediction_index: status.prediction_index.map(|p| {
            let mut line = format!(
                "{} URLs, loaded {} ({} ago)",
                thousands(p.urls),
                utc(p.loaded_at),
                seconds(p.age_seconds)
            );
            if p.reloading {
                line.push_str("; reloading after the last run");
            }
            if let Some(e) = p.reload_error {
                line.push_str("; the last reload failed: ");
                line.push_str(&e);
            }
            line
        }),
        last,
        runs: runs.iter().map(RunRow::of).collect(),
    };
    render(StatusCode::OK, &overview)
}

#[derive(Deserialize)]
pub(super) struct GroupsQuery {
    dimension: String,
    #[serde(default)]
    limit: Option<usize>,
    #[serde(default)]
    host: Option<String>,
}

/// A group, each a `<details>` with its members.
struct GroupRow {
    key: String,
    size: u64,
    /// The representative's URL (or id).
    representative: String,
    members: Vec<MemberRow>,
    /// Members not listed.
    more: u64,
}

struct MemberRow {
    id: String,
    /// The URL (or the id when it has none).
    text: String,
    /// The URL, when the page may link to it.
    href: Option<String>,
    unique: bool,
    /// When the index has a web interface: the document's link there, if the page may link to it.
    in_index: Option<Option<String>>,
    /// Its rank under the runs' order and the rule that put the representative before it.
    why: Option<String>,
}

/// The biggest groups of a dimension, or why not.
#[derive(Template)]
#[template(path = "groups.html")]
struct Groups {
    error: Option<String>,
    groups: Vec<GroupRow>,
}

pub(super) async fn groups(
    State(state): State<Arc<AppState>>,
    Query(q): Query<GroupsQuery>,
) -> Response {
    let groups = match find_groups(
        &state,
        &q.dimension,
        q.limit.unwrap_or(10),
        8,
        q.host.as_deref(),
    )
    .await
    {
        Ok(g) => g,
        Err((status, message)) => {
            let page = Groups {
                error: Some(message),
                groups: Vec::new(),
            };
            return render(status, &page);
        }
    };
    let backend = state.backend.as_ref();
    let rows = groups
        .into_iter()
        .map(|g| GroupRow {
            key: g.key,
            size: g.size,
            representative: g
                .representative
                .map(|m| m.url.unwrap_or(m.id))
                .unwrap_or_else(|| "no representative yet (run first)".to_owned()),
            more: g.size.saturating_sub(g.members.len() as u64),
            members: g
                .members
                .into_iter()
                .map(|m| member_row(backend, m))
                .collect(),
        })
        .collect();
    let page = Groups {
        error: None,
        groups: rows,
    };
    render(StatusCode::OK, &page)
}

/// The parts of a member's rank under the order runs decide with, named (smaller ranks first):
/// `rank: rewrites 0, clutter 0, host 0, scheme 1, www 1, parameter order 0, URL length 39`.
fn rank_in_words(rank: &[u32]) -> String {
    const NAMES: [&str; 7] = [
        "rewrites",
        "clutter",
        "host",
        "scheme",
        "www",
        "parameter order",
        "URL length",
    ];
    let parts: Vec<String> = rank
        .iter()
        .enumerate()
        .map(|(i, v)| match NAMES.get(i) {
            Some(name) => format!("{name} {v}"),
            None => v.to_string(),
        })
        .collect();
    format!("rank (smaller first): {}", parts.join(", "))
}

/// A member as the page lists it, with its links.
fn member_row(backend: Option<&Arc<dyn super::Backend>>, m: Member) -> MemberRow {
    let url = m.url.unwrap_or_default();
    let rank = (!m.rank.is_empty()).then(|| rank_in_words(&m.rank));
    let why = match (rank, m.separated_by) {
        (Some(r), Some(rule)) => Some(format!("behind the representative on {rule}; {r}")),
        (Some(r), None) => Some(r),
        (None, Some(rule)) => Some(format!("behind the representative on {rule}")),
        (None, None) => None,
    };
    MemberRow {
        why,
        href: web(&url).map(str::to_owned),
        text: if url.is_empty() { m.id.clone() } else { url },
        unique: m.unique == Some(true),
        in_index: backend
            .and_then(|b| b.document_link(&m.id))
            .map(|l| web(&l).map(str::to_owned)),
        id: m.id,
    }
}

#[derive(Deserialize)]
pub(super) struct LookupQuery {
    q: String,
}

/// A found document.
struct FoundRow {
    id: String,
    text: String,
    href: Option<String>,
    in_index: Option<Option<String>>,
    dimensions: Vec<FoundDimensionRow>,
}

struct FoundDimensionRow {
    name: String,
    /// `representative or no doubles`, `double`, or `–` when not decided.
    flag: &'static str,
    copycount: String,
    /// The group's size and its first members.
    group: Option<(u64, Vec<MemberRow>)>,
}

/// The documents with an id or URL, each dimension's flag, count and group.
#[derive(Template)]
#[template(path = "lookup.html")]
struct Lookup {
    q: String,
    error: Option<String>,
    found: Vec<FoundRow>,
}

pub(super) async fn lookup(
    State(state): State<Arc<AppState>>,
    Query(q): Query<LookupQuery>,
) -> Response {
    let found = match find_documents(&state, &q.q, 10).await {
        Ok(f) => f,
        Err((status, message)) => {
            let page = Lookup {
                q: q.q,
                error: Some(message),
                found: Vec::new(),
            };
            return render(status, &page);
        }
    };
    let backend = state.backend.as_ref();
    let found = found
        .into_iter()
        .map(|f| {
            let url = f.url.unwrap_or_default();
            FoundRow {
                href: web(&url).map(str::to_owned),
                text: if url.is_empty() { f.id.clone() } else { url },
                in_index: backend
                    .and_then(|b| b.document_link(&f.id))
                    .map(|l| web(&l).map(str::to_owned)),
                id: f.id,
                dimensions: f
                    .dimensions
                    .into_iter()
                    .map(|d| FoundDimensionRow {
                        name: d.dimension,
                        flag: match d.unique {
                            Some(true) => "unique",
                            Some(false) => "double",
                            None => "–",
                        },
                        copycount: d
                            .copycount
                            .map_or_else(|| "–".to_owned(), |c| c.to_string()),
                        group: d.group.map(|g| {
                            (
                                g.size,
                                g.members
                                    .into_iter()
                                    .map(|m| member_row(backend, m))
                                    .collect(),
                            )
                        }),
                    })
                    .collect(),
            }
        })
        .collect();
    let page = Lookup {
        q: q.q,
        error: None,
        found,
    };
    render(StatusCode::OK, &page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_only_web_urls() {
        assert_eq!(web("javascript:alert(1)"), None);
        assert_eq!(web("HTTPS://e.org/?a=<b>"), Some("HTTPS://e.org/?a=<b>"));
        assert_eq!(web("http:"), None);
    }

    #[test]
    fn unix_seconds_read_as_utc_dates() {
        assert_eq!(utc(0.0), "1970-01-01 00:00:00 UTC");
        // 2000-02-29 12:34:56 UTC, a leap day.
        assert_eq!(utc(951_827_696.0), "2000-02-29 12:34:56 UTC");
        // 2026-11-24 00:00:00 UTC.
        assert_eq!(utc(1_795_478_400.0), "2026-11-24 00:00:00 UTC");
        assert_eq!(utc(-5.0), "1970-01-01 00:00:00 UTC");
    }

    #[test]
    fn the_fragments_escape_what_the_index_holds() {
        let page = Groups {
            error: None,
            groups: vec![GroupRow {
                key: "k\"<".into(),
                size: 3,
                representative: "<script>".into(),
                members: vec![MemberRow {
                    id: "a&b".into(),
                    text: "http://e.org/?q=\"><script>".into(),
                    href: web("http://e.org/?q=\"><script>").map(str::to_owned),
                    unique: true,
                    in_index: Some(None),
                    why: Some("rank (smaller first): rewrites 0, clutter 0, host 0, scheme 0, www 0, parameter order 0, URL length 19".into()),
                }],
                more: 2,
            }],
        };
        let html = page.render().unwrap();
        assert!(
            !html.contains("<script>") && !html.contains("?q=\">"),
            "{html}"
        );
        assert!(html.contains("a&#38;b"), "{html}");
        assert!(html.contains("and 2 more"), "{html}");
        let error = Groups {
            error: Some("<b>".into()),
            groups: Vec::new(),
        };
        assert_eq!(error.render().unwrap(), "<p class=\"bad\">&#60;b&#62;</p>");
    }
}
