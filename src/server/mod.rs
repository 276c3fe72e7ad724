//! `solr-dedup serve`: the HTTP API (axum). **First part of issue 14:** URL predictions and
//! canonical forms for crawlers, `/healthz`, `/metrics`, and the listening rules (loopback by
//! default; a bearer token required anywhere else). Starting, watching and cancelling runs, the
//! admin page and scheduling are not built yet. `/openapi.json` describes what is.
//!
//! The router holds the index of canonical forms ([`crate::urlrules::predict::Index`]) loaded at
//! start, so that a crawler's request costs a lookup per URL and no Solr work.
//!
//! Security:
//! - with a token, every route but `/healthz` needs `Authorization: Bearer TOKEN` (compared in
//!   constant time); the token is never logged or echoed;
//! - a state-changing or answering `POST` only takes `Content-Type: application/json`, which a
//!   cross-site HTML form cannot send without a CORS preflight (and CORS is not enabled), and a
//!   request whose `Origin` names another host than its `Host` is refused;
//! - answers never hold Solr's URL or credentials.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::urlrules::canonical;
use crate::urlrules::predict::Index;

/// URLs per prediction or canonical request at most.
pub const MAX_URLS: usize = 10_000;

/// What the server holds.
pub struct AppState {
    /// The index predictions look pages up in, when rules were given.
    pub index: Option<Index>,
    /// The bearer token every route but `/healthz` needs, when set.
    pub token: Option<String>,
    /// Counters for `/metrics`.
    pub metrics: Metrics,
}

/// Counters, exported in Prometheus' text format.
#[derive(Debug, Default)]
pub struct Metrics {
    predict_requests: AtomicU64,
    predicted_urls: AtomicU64,
    predicted_duplicates: AtomicU64,
    url_errors: AtomicU64,
    canonical_requests: AtomicU64,
    unauthorized: AtomicU64,
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
        .route("/metrics", get(metrics))
        .route("/openapi.json", get(|| async { Json(openapi()) }))
        .layer(middleware::from_fn_with_state(state.clone(), guard));
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .merge(api)
        .fallback(|| async {
            error(
                StatusCode::NOT_FOUND,
                "no such endpoint; see the README's serve section",
            )
        })
        // Enough for MAX_URLS URLs of a few hundred bytes each.
        .layer(DefaultBodyLimit::max(8 << 20))
        .with_state(state)
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({ "error": message }))).into_response()
}

/// Constant-time comparison, so that the time of a refusal says nothing about the token.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The token, and no request from another site.
async fn guard(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    req: Request,
    next: Next,
) -> Response {
    if let Some(token) = &state.token {
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
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

async fn metrics(State(state): State<Arc<AppState>>) -> Response {
    let m = &state.metrics;
    let indexed = state.index.as_ref().map_or(0, Index::len);
    let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
    let samples = [
        (
            "solr_dedup_predict_requests_total",
            "counter",
            "Prediction requests answered.",
            n(&m.predict_requests),
        ),
        (
            "solr_dedup_predicted_urls_total",
            "counter",
            "URLs answered by prediction requests.",
            n(&m.predicted_urls),
        ),
        (
            "solr_dedup_predicted_duplicates_total",
            "counter",
            "URLs answered with an indexed page of the same canonical form.",
            n(&m.predicted_duplicates),
        ),
        (
            "solr_dedup_url_errors_total",
            "counter",
            "URLs without a canonical form.",
            n(&m.url_errors),
        ),
        (
            "solr_dedup_canonical_requests_total",
            "counter",
            "Canonical-form requests answered.",
            n(&m.canonical_requests),
        ),
        (
            "solr_dedup_unauthorized_total",
            "counter",
            "Requests refused for a missing or wrong token.",
            n(&m.unauthorized),
        ),
        (
            "solr_dedup_indexed_pages",
            "gauge",
            "Pages in the prediction index.",
            indexed,
        ),
    ];
    let mut out = String::new();
    for (name, kind, help, v) in samples {
        out.push_str(&format!(
            "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}\n"
        ));
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out).into_response()
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
            "description": "URL predictions and canonical forms under rules learned by `solr-dedup urls learn`. \
                With a token configured, every path but /healthz needs `Authorization: Bearer TOKEN`."
        },
        "components": {
            "securitySchemes": { "bearer": { "type": "http", "scheme": "bearer" } },
            "schemas": {
                "Error": { "type": "object", "required": ["error"], "properties": { "error": { "type": "string" } } },
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
    fn tokens_compare_whole() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"ab"));
        assert!(!same(b"", b"a"));
    }
}
