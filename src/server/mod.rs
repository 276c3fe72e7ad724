//! `solr-dedup serve`: one long-running process for operators and crawlers (axum).
//!
//! - **Runs** ([`runs`]): start a run or a check over HTTP (one at a time; a second start answers 409
//!   with the running one's id), watch its phase, documents done, rate and round, cancel it between
//!   batches, and read the recent runs with their reports, kept in a state directory across
//!   restarts.
//! - **Schedule** ([`schedule`]): `--every` and `--after-quiet` start runs by themselves.
//! - **Groups**: the biggest groups of a dimension, for a person to look at
//!   ([`crate::engine::biggest`]).
//! - **URLs**: predictions and canonical forms under learned rules, from an index of canonical forms
//!   ([`crate::urlrules::predict::Index`]) loaded at start, so that a crawler's request costs a
//!   lookup per URL and no Solr work.
//! - **Watching**: `/healthz`, `/metrics` in Prometheus' text format ([`metrics`]), the admin page at
//!   `/` ([`page`]), and `/openapi.json`.
//!
//! The server reaches the index only through a [`Backend`], which the `serve` command builds over the
//! store: the server itself knows nothing of Solr or files.
//!
//! Security:
//! - with a token, every route but `/healthz` and the page's empty shell at `/` needs
//!   `Authorization: Bearer TOKEN` (compared in constant time); the page's script asks for the token
//!   and sends it; the token is never logged or echoed;
//! - a `POST` only takes `Content-Type: application/json`, which a cross-site HTML form cannot send
//!   without a CORS preflight (and CORS is not enabled), and a request whose `Origin` names another
//!   host than its `Host`, or that a browser marks `Sec-Fetch-Site: cross-site`, is refused;
//! - the page may be framed only by the origins `--frame-ancestors` names;
//! - answers never hold Solr's credentials (the backend describes the core without them).

pub mod metrics;
pub mod page;
pub mod runs;
pub mod schedule;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, Path, Query, Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::engine::biggest::GroupView;
use crate::engine::{Dimension, Progress};
use crate::urlrules::canonical;
use crate::urlrules::predict::Index;
pub use metrics::Metrics;
use runs::{CancelError, Ended, RunOptions, Runs, StartError, Trigger};

/// URLs per prediction or canonical request at most.
pub const MAX_URLS: usize = 10_000;

/// Groups per request at most.
pub const MAX_GROUPS: usize = 100;

/// What the server needs of the index; the `serve` command implements it over the store. Every
/// method blocks (the server calls them on a blocking thread) and none may return credentials.
pub trait Backend: Send + Sync + 'static {
    /// Where the documents are, for a person: `solr http://host:8983/solr/core` or `file docs.jsonl`.
    fn describe(&self) -> String;
    /// A link to the document in the index, when it has a web interface (Solr's `/select`).
    fn document_link(&self, id: &str) -> Option<String>;
    /// Whether the index answers: `Err` says what is wrong.
    fn health(&self) -> Result<(), String>;
    /// The options a run asked for `options` runs with: the server's own (`serve --full`,
    /// `--dry-run`) add to them. What the run's record keeps.
    fn effective(&self, options: RunOptions) -> RunOptions {
        options
    }
    /// Runs a job to its end, telling `progress` how far it is and stopping when it says so.
    fn run(&self, options: RunOptions, progress: &dyn Progress) -> Ended;
    /// The documents a run goes through, when they can be counted cheaply.
    fn count(&self) -> Option<u64>;
    /// A mark that changes whenever the documents change (see
    /// [`crate::store::Store::change_mark`]).
    fn change_mark(&self) -> Result<String, String>;
    /// The biggest groups of `d` (`None`: the dimension has no group field).
    fn groups(
        &self,
        d: Dimension,
        limit: usize,
        members: usize,
    ) -> Result<Option<Vec<GroupView>>, String>;
}

/// What the server holds.
pub struct AppState {
    /// The index runs go to, when the server was given one.
    pub backend: Option<Arc<dyn Backend>>,
    /// The runs: the one going on and the kept ones.
    pub runs: Arc<Runs>,
    /// The index predictions look pages up in, when rules were given.
    pub index: Option<Index>,
    /// The bearer token every route but `/healthz` and `/` needs, when set.
    pub token: Option<String>,
    /// Origins allowed to frame the admin page (`--frame-ancestors`); none: only this server.
    pub frame_ancestors: Vec<String>,
    /// The schedule, as a person reads it (`every 1h`, `after 10m quiet`), when there is one.
    pub schedule: Option<String>,
    /// Counters for `/metrics`.
    pub metrics: Metrics,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UrlsBody {
    urls: Vec<String>,
}

/// The router over `state`.
pub fn router(state: Arc<AppState>) -> Router {
    let api = Router::new()
        .route("/api/urls/predict", post(predict))
        .route("/api/urls/canonical", post(canonical_forms))
        .route("/api/runs", post(start_run).get(list_runs))
        .route("/api/runs/current", get(current_run))
        .route("/api/runs/{id}", get(get_run))
        .route("/api/runs/{id}/cancel", post(cancel_run))
        .route("/api/groups/{dimension}", get(groups))
        .route("/api/status", get(status))
        .route("/ui/overview", get(page::overview))
        .route("/ui/groups", get(page::groups))
        .route("/metrics", get(metrics::metrics))
        .route("/openapi.json", get(|| async { Json(openapi()) }))
        .layer(middleware::from_fn_with_state(state.clone(), guard));
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/", get(page::shell))
        .merge(api)
        .fallback(|| async {
            error(
                StatusCode::NOT_FOUND,
                "no such endpoint; see /openapi.json or the README's serve section",
            )
        })
        // Enough for MAX_URLS URLs of a few hundred bytes each.
        .layer(DefaultBodyLimit::max(8 << 20))
        .layer(middleware::from_fn_with_state(
            csp(&state.frame_ancestors),
            headers,
        ))
        .with_state(state)
}

/// The Content-Security-Policy of every answer, made once.
fn csp(frame_ancestors: &[String]) -> header::HeaderValue {
    let mut ancestors = vec!["'self'".to_owned()];
    ancestors.extend(frame_ancestors.iter().cloned());
    let csp = format!(
        "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; \
         img-src 'self' data:; frame-ancestors {}",
        ancestors.join(" ")
    );
    // Origins are checked when parsed (scheme://host[:port]), so the value is always valid.
    header::HeaderValue::from_str(&csp)
        .unwrap_or_else(|_| header::HeaderValue::from_static("frame-ancestors 'self'"))
}

/// Headers on every answer: no sniffing, no caching of answers that hold index data, and who may
/// frame the page.
async fn headers(State(csp): State<header::HeaderValue>, req: Request, next: Next) -> Response {
    let mut r = next.run(req).await;
    let h = r.headers_mut();
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        header::HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    h.insert(header::CONTENT_SECURITY_POLICY, csp);
    r
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({ "error": message }))).into_response()
}

/// Constant-time comparison, so that the time of a refusal says nothing about the token.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Whether the request's `Host` names the loopback interface (`localhost`, `127.x.y.z`, `[::1]`,
/// with any port).
fn loopback_host(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
        // HTTP/1.0 without Host: not a browser's rebinding request.
        return true;
    };
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(n, _)| n),
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The token, no request to another host name without one, and no request from another site.
async fn guard(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    req: Request,
    next: Next,
) -> Response {
    if let Some(token) = &state.token {
        // The scheme's name is case-insensitive (RFC 9110).
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.get(..7)
                    .filter(|s| s.eq_ignore_ascii_case("bearer "))
                    .map(|_| &v[7..])
            })
            .unwrap_or("");
        if !same(given.as_bytes(), token.as_bytes()) {
            state.metrics.unauthorized.fetch_add(1, Ordering::Relaxed);
            let mut r = error(
                StatusCode::UNAUTHORIZED,
                "a bearer token is needed: Authorization: Bearer TOKEN",
            );
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
            return r;
        }
    }
    if state.token.is_none() && !loopback_host(&headers) {
        // Without a token the server listens on loopback only; a page of another site whose name
        // now resolves to 127.0.0.1 (DNS rebinding) still sends its own name as Host.
        return error(
            StatusCode::FORBIDDEN,
            "without a token, only requests to localhost, 127.0.0.1 or [::1] are served; set a token to serve other host names",
        );
    }
    if headers
        .get("sec-fetch-site")
        .is_some_and(|v| v.as_bytes() == b"cross-site")
    {
        return error(StatusCode::FORBIDDEN, "cross-site requests are refused");
    }
    if req.method() == Method::POST
        && !headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"))
    {
        return error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send the request body as Content-Type: application/json",
        );
    }
    if let (Some(origin), Some(host)) = (headers.get(header::ORIGIN), headers.get(header::HOST)) {
        let origin = origin.to_str().unwrap_or("");
        let origin_host = origin.split_once("://").map_or(origin, |(_, h)| h);
        if origin == "null" || origin_host != host.to_str().unwrap_or("") {
            return error(StatusCode::FORBIDDEN, "cross-site requests are refused");
        }
    }
    next.run(req).await
}

fn urls_of(
    body: Result<Json<UrlsBody>, axum::extract::rejection::JsonRejection>,
) -> Result<Vec<String>, Box<Response>> {
    let Json(body) = body.map_err(|e| {
        let message = format!(
            "{}; send {{\"urls\": [\"http://…\", …]}} as application/json",
            e.body_text()
        );
        Box::new(error(e.status(), &message))
    })?;
    if body.urls.len() > MAX_URLS {
        let message = format!(
            "{} URLs in one request; send at most {MAX_URLS}",
            body.urls.len()
        );
        return Err(Box::new(error(StatusCode::PAYLOAD_TOO_LARGE, &message)));
    }
    Ok(body.urls)
}

async fn predict(
    State(state): State<Arc<AppState>>,
    body: Result<Json<UrlsBody>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let urls = match urls_of(body) {
        Ok(u) => u,
        Err(r) => return *r,
    };
    let Some(index) = &state.index else {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "no rules loaded: start serve with --rules rules.json (made by `solr-dedup urls learn`)",
        );
    };
    let m = &state.metrics;
    m.predict_requests.fetch_add(1, Ordering::Relaxed);
    m.predicted_urls
        .fetch_add(urls.len() as u64, Ordering::Relaxed);
    let answers: Vec<Value> = urls
        .iter()
        .map(|u| match index.predict(u) {
            Ok(p) => {
                if p.duplicate_of.is_some() {
                    m.predicted_duplicates.fetch_add(1, Ordering::Relaxed);
                }
                serde_json::to_value(&p).unwrap_or(Value::Null)
            }
            Err(e) => {
                m.url_errors.fetch_add(1, Ordering::Relaxed);
                json!({ "url": u, "error": e.to_string() })
            }
        })
        .collect();
    Json(json!({ "answers": answers })).into_response()
}

async fn canonical_forms(
    State(state): State<Arc<AppState>>,
    body: Result<Json<UrlsBody>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let urls = match urls_of(body) {
        Ok(u) => u,
        Err(r) => return *r,
    };
    let Some(index) = &state.index else {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "no rules loaded: start serve with --rules rules.json (made by `solr-dedup urls learn`)",
        );
    };
    state
        .metrics
        .canonical_requests
        .fetch_add(1, Ordering::Relaxed);
    let answers: Vec<Value> = urls
        .iter()
        .map(|u| match canonical(u, index.rules()) {
            Ok(c) => json!({ "url": u, "canonical": c.url, "rules": c.applied }),
            Err(e) => {
                state.metrics.url_errors.fetch_add(1, Ordering::Relaxed);
                json!({ "url": u, "error": e.to_string() })
            }
        })
        .collect();
    Json(json!({ "answers": answers })).into_response()
}

/// What a request that needs the index is told when the server has none.
const NO_INDEX: &str = "no index: start serve with --solr URL or --input FILE";

/// The backend, or the answer that the server has no index.
#[allow(clippy::result_large_err)]
fn backend(state: &AppState) -> Result<Arc<dyn Backend>, Response> {
    state
        .backend
        .clone()
        .ok_or_else(|| error(StatusCode::SERVICE_UNAVAILABLE, NO_INDEX))
}

async fn start_run(
    State(state): State<Arc<AppState>>,
    body: Result<Json<RunOptions>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let options = match body {
        Ok(Json(o)) => o,
        Err(e) => {
            let message = format!(
                "{}; send {{\"check\": false, \"full\": false, \"dry_run\": false}} (every field optional)",
                e.body_text()
            );
            return error(e.status(), &message);
        }
    };
    let backend = match backend(&state) {
        Ok(b) => b,
        Err(r) => return r,
    };
    match state.runs.start(backend, options, Trigger::Api) {
        Ok(id) => (
            StatusCode::ACCEPTED,
            [(header::LOCATION, format!("/api/runs/{id}"))],
            Json(json!({ "id": id, "run": state.runs.get(id) })),
        )
            .into_response(),
        Err(StartError::Busy(running)) => (
            StatusCode::CONFLICT,
            Json(json!({
                "error": format!("run {running} is going; wait for it or cancel it (POST /api/runs/{running}/cancel)"),
                "running": running,
            })),
        )
            .into_response(),
        Err(StartError::Stopping) => error(StatusCode::SERVICE_UNAVAILABLE, "the server is stopping"),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    #[serde(default)]
    limit: Option<usize>,
}

async fn list_runs(
    State(state): State<Arc<AppState>>,
    query: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let limit = match query {
        Ok(Query(q)) => q.limit.unwrap_or(20).min(runs::KEEP),
        Err(e) => return error(StatusCode::BAD_REQUEST, &e.body_text()),
    };
    Json(json!({ "runs": state.runs.recent(limit) })).into_response()
}

async fn current_run(State(state): State<Arc<AppState>>) -> Response {
    Json(json!({ "run": state.runs.current() })).into_response()
}

fn run_id(id: &str) -> Result<u64, Box<Response>> {
    id.parse()
        .map_err(|_| Box::new(error(StatusCode::NOT_FOUND, "no run has that id")))
}

async fn get_run(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> Response {
    let id = match run_id(&id) {
        Ok(id) => id,
        Err(r) => return *r,
    };
    match state.runs.get(id) {
        Some(r) => Json(r).into_response(),
        None => error(
            StatusCode::NOT_FOUND,
            "no run has that id (or it is no longer kept)",
        ),
    }
}

async fn cancel_run(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> Response {
    let id = match run_id(&id) {
        Ok(id) => id,
        Err(r) => return *r,
    };
    match state.runs.cancel(id) {
        Ok(()) => (
            StatusCode::ACCEPTED,
            Json(json!({ "id": id, "cancelling": true })),
        )
            .into_response(),
        Err(CancelError::Ended) => error(StatusCode::CONFLICT, "that run has ended already"),
        Err(CancelError::Unknown) => error(StatusCode::NOT_FOUND, "no run has that id"),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GroupsQuery {
    #[serde(default)]
    limit: Option<usize>,
    #[serde(default)]
    members: Option<usize>,
}

/// The biggest groups of a dimension, or the status and message that say why not (the API answers
/// them as JSON, the page as a line).
pub(crate) async fn find_groups(
    state: &AppState,
    dimension: &str,
    limit: usize,
    members: usize,
) -> Result<Vec<GroupView>, (StatusCode, String)> {
    let d: Dimension = dimension
        .parse()
        .map_err(|e: crate::model::DimensionError| (StatusCode::NOT_FOUND, e.to_string()))?;
    let backend = state
        .backend
        .clone()
        .ok_or((StatusCode::SERVICE_UNAVAILABLE, NO_INDEX.to_owned()))?;
    let limit = limit.clamp(1, MAX_GROUPS);
    let members = members.clamp(1, 20);
    let answer = tokio::task::spawn_blocking(move || backend.groups(d, limit, members))
        .await
        .map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    match answer {
        Ok(Some(groups)) => Ok(groups),
        Ok(None) => Err((
            StatusCode::BAD_REQUEST,
            format!(
                "the {d} dimension keys its groups by a URL form no field stores, and they hold at most four documents; \
                 groups are listed for exact, fuzzy, title, description and near"
            ),
        )),
        Err(e) => Err((StatusCode::BAD_GATEWAY, e)),
    }
}

async fn groups(
    State(state): State<Arc<AppState>>,
    Path(dimension): Path<String>,
    query: Result<Query<GroupsQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let q = match query {
        Ok(Query(q)) => q,
        Err(e) => return error(StatusCode::BAD_REQUEST, &e.body_text()),
    };
    let (limit, members) = (q.limit.unwrap_or(10), q.members.unwrap_or(5));
    match find_groups(&state, &dimension, limit, members).await {
        Ok(groups) => {
            let backend = state.backend.as_ref();
            let groups: Vec<Value> = groups
                .iter()
                .map(|g| {
                    let mut v = serde_json::to_value(g).unwrap_or(Value::Null);
                    if let (Some(b), Some(list)) =
                        (backend, v.get_mut("members").and_then(Value::as_array_mut))
                    {
                        for m in list {
                            let link = m
                                .get("id")
                                .and_then(Value::as_str)
                                .and_then(|id| b.document_link(id));
                            if let (Some(link), Some(o)) = (link, m.as_object_mut()) {
                                o.insert("link".into(), Value::String(link));
                            }
                        }
                    }
                    v
                })
                .collect();
            Json(json!({ "dimension": dimension, "groups": groups })).into_response()
        }
        Err((status, message)) => error(status, &message),
    }
}

/// The server at a glance: the index and its health, the run going on, the schedule.
pub(crate) async fn status_of(state: &AppState) -> Value {
    let (store, health) = match state.backend.clone() {
        Some(b) => {
            let describe = b.describe();
            let health = tokio::task::spawn_blocking(move || b.health())
                .await
                .unwrap_or_else(|e| Err(e.to_string()));
            (Some(describe), Some(health))
        }
        None => (None, None),
    };
    json!({
        "store": store,
        "healthy": health.as_ref().map(Result::is_ok),
        "health_error": health.and_then(Result::err),
        "running": state.runs.current(),
        "schedule": state.schedule,
        "rules": state.index.is_some(),
        "version": env!("CARGO_PKG_VERSION"),
    })
}

async fn status(State(state): State<Arc<AppState>>) -> Response {
    Json(status_of(&state).await).into_response()
}

/// The OpenAPI 3.1 document of the API (served at `/openapi.json`).
pub fn openapi() -> Value {
    let error = json!({ "description": "an error", "content": { "application/json": { "schema": {
        "$ref": "#/components/schemas/Error" } } } });
    // The two URL operations differ only in their summary and the schema of an answer.
    let urls_op = |summary: &str, answer: &str| {
        json!({ "post": {
            "summary": summary,
            "requestBody": {
                "required": true,
                "content": { "application/json": { "schema": {
                    "type": "object", "required": ["urls"], "additionalProperties": false,
                    "properties": { "urls": { "type": "array", "maxItems": MAX_URLS, "items": { "type": "string" } } }
                } } }
            },
            "responses": {
                "200": { "description": "one answer per URL, in order", "content": { "application/json": { "schema": {
                    "type": "object", "properties": { "answers": { "type": "array",
                        "items": { "$ref": format!("#/components/schemas/{answer}") } } } } } } },
                "401": error, "403": error, "413": error, "415": error, "422": error, "503": error
            }
        } })
    };
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "solr-dedup serve",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Runs, checks and their history, the biggest groups, URL predictions and canonical forms \
                under rules learned by `solr-dedup urls learn`, and metrics. The admin page at / and its fragments \
                under /ui/ are for browsers. With a token configured, every path but /healthz and / needs \
                `Authorization: Bearer TOKEN`."
        },
        "components": {
            "securitySchemes": { "bearer": { "type": "http", "scheme": "bearer" } },
            "schemas": {
                "Error": { "type": "object", "required": ["error"], "properties": { "error": { "type": "string" } } },
                "RunOptions": {
                    "type": "object", "additionalProperties": false,
                    "properties": {
                        "check": { "type": "boolean", "default": false, "description": "read only: report what a run would change" },
                        "full": { "type": "boolean", "default": false, "description": "recompute every signature from the text" },
                        "dry_run": { "type": "boolean", "default": false, "description": "decide everything, write nothing" }
                    }
                },
                "Run": {
                    "type": "object",
                    "required": ["id", "kind", "options", "trigger", "state", "started"],
                    "properties": {
                        "id": { "type": "integer" },
                        "kind": { "enum": ["run", "check"] },
                        "options": { "$ref": "#/components/schemas/RunOptions" },
                        "trigger": { "enum": ["api", "every", "after-quiet"] },
                        "state": { "enum": ["running", "succeeded", "failed", "cancelled", "interrupted"] },
                        "started": { "type": "number", "description": "Unix time, seconds" },
                        "ended": { "type": "number" },
                        "error": { "type": "string" },
                        "report": { "type": "object", "description": "the JSON report of `run --report` (also of a cancelled run: what it did so far)" },
                        "mark_after": { "type": "string", "description": "the index's change mark read after the run" },
                        "progress": {
                            "type": "object", "description": "while it runs",
                            "properties": {
                                "phase": { "type": "string" }, "done": { "type": "integer" },
                                "total": { "type": "integer" }, "rate": { "type": "number" },
                                "round": { "type": "integer" }, "elapsed": { "type": "number" }
                            }
                        }
                    }
                },
                "Group": {
                    "type": "object",
                    "properties": {
                        "key": { "type": "string" }, "size": { "type": "integer" },
                        "representative": { "$ref": "#/components/schemas/Member" },
                        "members": { "type": "array", "items": { "$ref": "#/components/schemas/Member" } }
                    }
                },
                "Member": {
                    "type": ["object", "null"],
                    "properties": {
                        "id": { "type": "string" }, "url": { "type": ["string", "null"] },
                        "unique": { "type": ["boolean", "null"] }, "link": { "type": "string" }
                    }
                },
                "Prediction": {
                    "type": "object",
                    "description": "As `solr-dedup urls predict` writes it; `error` instead of the rest for a URL without a canonical form.",
                    "properties": {
                        "url": { "type": "string" },
                        "canonical": { "type": "string" },
                        "probability": { "type": "number", "minimum": 0, "maximum": 1 },
                        "rules": { "type": "array", "items": { "type": "string" } },
                        "duplicate_of": { "type": ["object", "null"], "properties": {
                            "id": { "type": "string" }, "url": { "type": "string" } } },
                        "error": { "type": "string" }
                    }
                },
                "Canonical": {
                    "type": "object",
                    "properties": {
                        "url": { "type": "string" },
                        "canonical": { "type": "string" },
                        "rules": { "type": "array", "items": { "type": "string" } },
                        "error": { "type": "string" }
                    }
                }
            }
        },
        "security": [ { "bearer": [] } ],
        "paths": {
            "/api/runs": {
                "post": {
                    "summary": "Start a run or a check (one at a time)",
                    "requestBody": { "required": true, "content": { "application/json": { "schema": {
                        "$ref": "#/components/schemas/RunOptions" } } } },
                    "responses": {
                        "202": { "description": "started", "content": { "application/json": { "schema": {
                            "type": "object", "properties": { "id": { "type": "integer" }, "run": { "$ref": "#/components/schemas/Run" } } } } } },
                        "409": { "description": "another run is going", "content": { "application/json": { "schema": {
                            "type": "object", "properties": { "error": { "type": "string" }, "running": { "type": "integer" } } } } } },
                        "401": error, "403": error, "415": error, "422": error, "503": error
                    }
                },
                "get": {
                    "summary": "The newest runs, newest first, with their reports",
                    "parameters": [ { "name": "limit", "in": "query", "schema": { "type": "integer", "default": 20, "maximum": runs::KEEP } } ],
                    "responses": { "200": { "description": "runs", "content": { "application/json": { "schema": {
                        "type": "object", "properties": { "runs": { "type": "array", "items": { "$ref": "#/components/schemas/Run" } } } } } } },
                        "401": error }
                }
            },
            "/api/runs/current": { "get": {
                "summary": "The run going on, with its progress (null when none)",
                "responses": { "200": { "description": "the run", "content": { "application/json": { "schema": {
                    "type": "object", "properties": { "run": { "oneOf": [ { "$ref": "#/components/schemas/Run" }, { "type": "null" } ] } } } } } },
                    "401": error }
            } },
            "/api/runs/{id}": { "get": {
                "summary": "One run",
                "parameters": [ { "name": "id", "in": "path", "required": true, "schema": { "type": "integer" } } ],
                "responses": { "200": { "description": "the run", "content": { "application/json": { "schema": {
                    "$ref": "#/components/schemas/Run" } } } }, "401": error, "404": error }
            } },
            "/api/runs/{id}/cancel": { "post": {
                "summary": "Cancel a run after its batch in flight",
                "parameters": [ { "name": "id", "in": "path", "required": true, "schema": { "type": "integer" } } ],
                "responses": { "202": { "description": "cancelling" }, "401": error, "403": error, "404": error, "409": error, "415": error }
            } },
            "/api/groups/{dimension}": { "get": {
                "summary": "The biggest groups of a dimension, as the last run left them",
                "parameters": [
                    { "name": "dimension", "in": "path", "required": true, "schema": { "enum": ["exact", "fuzzy", "title", "description", "near"] } },
                    { "name": "limit", "in": "query", "schema": { "type": "integer", "default": 10, "maximum": MAX_GROUPS } },
                    { "name": "members", "in": "query", "schema": { "type": "integer", "default": 5, "maximum": 20 } }
                ],
                "responses": { "200": { "description": "groups, biggest first", "content": { "application/json": { "schema": {
                    "type": "object", "properties": { "dimension": { "type": "string" },
                        "groups": { "type": "array", "items": { "$ref": "#/components/schemas/Group" } } } } } } },
                    "400": error, "401": error, "404": error, "502": error, "503": error }
            } },
            "/api/status": { "get": {
                "summary": "The index, whether it answers, the run going on, the schedule",
                "responses": { "200": { "description": "status" }, "401": error }
            } },
            "/api/urls/predict": urls_op("Whether each URL duplicates an indexed page", "Prediction"),
            "/api/urls/canonical": urls_op("The canonical form of each URL under the rules", "Canonical"),
            "/metrics": { "get": {
                "summary": "Counters in Prometheus' text format",
                "responses": { "200": { "description": "text/plain; version=0.0.4" }, "401": error }
            } },
            "/openapi.json": { "get": {
                "summary": "This document",
                "responses": { "200": { "description": "OpenAPI 3.1" }, "401": error }
            } },
            "/healthz": { "get": {
                "summary": "Liveness",
                "security": [],
                "responses": { "200": { "description": "ok" } }
            } }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_names_are_loopback_hosts() {
        let host = |h: &str| {
            let mut m = HeaderMap::new();
            m.insert(header::HOST, h.parse().unwrap());
            loopback_host(&m)
        };
        for ok in [
            "localhost",
            "LOCALHOST:8987",
            "127.0.0.1",
            "127.3.2.1:80",
            "[::1]:8987",
            "[::1]",
        ] {
            assert!(host(ok), "{ok}");
        }
        for no in [
            "attacker.example",
            "attacker.example:8987",
            "10.0.0.1:8987",
            "localhost.evil.example",
            "[::2]:1",
        ] {
            assert!(!host(no), "{no}");
        }
        assert!(loopback_host(&HeaderMap::new()));
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"ab"));
        assert!(!same(b"", b"a"));
    }
}
