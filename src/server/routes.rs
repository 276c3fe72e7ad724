//! Every route the server serves, in one table ([`ROUTES`]) that the router is built from, and the
//! test that the table's API routes are the OpenAPI document's operations, both ways: a route
//! added to the router without its `#[utoipa::path]` in [`ApiDoc`], or a path documented and not
//! served, fails it.

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::http::{Method, StatusCode};
use axum::middleware;
use axum::routing::{on, MethodFilter, MethodRouter};
use axum::Router;

use super::security::{csp, guard, headers};
use super::{
    cancel_run, canonical_forms, current_run, error, get_run, groups, healthz, list_runs,
    lookup::lookup, metrics, openapi_json, page, predict, start_run, status, AppState,
};

/// Who a route is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Audience {
    /// Scripts: the route is in the OpenAPI document ([`ApiDoc`]).
    Api,
    /// Browsers: the admin page and its fragments, left out of the document.
    Browser,
}

/// A route the server serves: the router is built from [`ROUTES`] alone, and a test checks the
/// table's [`Audience::Api`] routes against the OpenAPI document both ways.
struct Route {
    path: &'static str,
    method: Method,
    /// Read by the test against the document only.
    #[cfg_attr(not(test), allow(dead_code))]
    audience: Audience,
    /// Behind the guard (the token, the host names, cross-site requests): all but `/healthz` and
    /// the page's empty shell at `/`.
    guarded: bool,
    /// The handler, routed for the method it is given (the table's).
    handler: fn(MethodFilter) -> MethodRouter<Arc<AppState>>,
}

/// Every route, in one table for the router and the test against the document.
#[rustfmt::skip]
const ROUTES: &[Route] = &[
    Route { path: "/healthz", method: Method::GET, audience: Audience::Api, guarded: false, handler: |m| on(m, healthz) },
    Route { path: "/", method: Method::GET, audience: Audience::Browser, guarded: false, handler: |m| on(m, page::shell) },
    Route { path: "/api/urls/predict", method: Method::POST, audience: Audience::Api, guarded: true, handler: |m| on(m, predict) },
    Route { path: "/api/urls/canonical", method: Method::POST, audience: Audience::Api, guarded: true, handler: |m| on(m, canonical_forms) },
    Route { path: "/api/runs", method: Method::POST, audience: Audience::Api, guarded: true, handler: |m| on(m, start_run) },
    Route { path: "/api/runs", method: Method::GET, audience: Audience::Api, guarded: true, handler: |m| on(m, list_runs) },
    Route { path: "/api/runs/current", method: Method::GET, audience: Audience::Api, guarded: true, handler: |m| on(m, current_run) },
    Route { path: "/api/runs/{id}", method: Method::GET, audience: Audience::Api, guarded: true, handler: |m| on(m, get_run) },
    Route { path: "/api/runs/{id}/cancel", method: Method::POST, audience: Audience::Api, guarded: true, handler: |m| on(m, cancel_run) },
    Route { path: "/api/groups/{dimension}", method: Method::GET, audience: Audience::Api, guarded: true, handler: |m| on(m, groups) },
    Route { path: "/api/lookup", method: Method::GET, audience: Audience::Api, guarded: true, handler: |m| on(m, lookup) },
    Route { path: "/api/status", method: Method::GET, audience: Audience::Api, guarded: true, handler: |m| on(m, status) },
    Route { path: "/ui/overview", method: Method::GET, audience: Audience::Browser, guarded: true, handler: |m| on(m, page::overview) },
    Route { path: "/ui/groups", method: Method::GET, audience: Audience::Browser, guarded: true, handler: |m| on(m, page::groups) },
    Route { path: "/ui/lookup", method: Method::GET, audience: Audience::Browser, guarded: true, handler: |m| on(m, page::lookup) },
    Route { path: "/metrics", method: Method::GET, audience: Audience::Api, guarded: true, handler: |m| on(m, metrics::metrics) },
    Route { path: "/openapi.json", method: Method::GET, audience: Audience::Api, guarded: true, handler: |m| on(m, openapi_json) },
];

/// The router over `state`: the routes of `ROUTES`, the guarded ones behind the guard.
pub fn router(state: Arc<AppState>) -> Router {
    let (mut open, mut api) = (Router::new(), Router::new());
    for r in ROUTES {
        let method = MethodFilter::try_from(r.method.clone()).expect("a method axum routes");
        if r.guarded {
            api = api.route(r.path, (r.handler)(method));
        } else {
            open = open.route(r.path, (r.handler)(method));
        }
    }
    let api = api.layer(middleware::from_fn_with_state(state.clone(), guard));
    open.merge(api)
        .fallback(|| async {
            error(
                StatusCode::NOT_FOUND,
                "no such endpoint; see /openapi.json or the guide's serve chapter (docs/src/serve.md)",
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::super::{openapi, Metrics, Runs};
    use super::*;

    /// The table's API routes are the document's operations, both ways; every route of the table
    /// reaches a handler (neither the fallback nor a wrong method); the routes left out of the
    /// document are the page's. The document is OpenAPI 3.1 with `kind` an enum.
    #[tokio::test]
    async fn the_routes_are_the_documented_operations_both_ways() {
        let doc = serde_json::to_value(openapi()).unwrap();
        assert_eq!(doc["openapi"], "3.1.0");
        assert_eq!(
            doc["components"]["schemas"]["Kind"]["enum"],
            serde_json::json!(["run", "check"])
        );
        assert!(doc["components"]["securitySchemes"]["bearer"].is_object());
        let documented: BTreeSet<(String, String)> = doc["paths"]
            .as_object()
            .unwrap()
            .iter()
            .flat_map(|(path, item)| {
                item.as_object()
                    .unwrap()
                    .keys()
                    .map(|m| (path.clone(), m.to_uppercase()))
            })
            .collect();
        let api: BTreeSet<(String, String)> = ROUTES
            .iter()
            .filter(|r| r.audience == Audience::Api)
            .map(|r| (r.path.to_owned(), r.method.to_string()))
            .collect();
        let served_not_documented: Vec<_> = api.difference(&documented).collect();
        assert!(
            served_not_documented.is_empty(),
            "served, not in the OpenAPI document: {served_not_documented:?}"
        );
        let documented_not_served: Vec<_> = documented.difference(&api).collect();
        assert!(
            documented_not_served.is_empty(),
            "in the OpenAPI document, not served: {documented_not_served:?}"
        );
        assert_eq!(documented.len(), 13);
        for r in ROUTES.iter().filter(|r| r.audience == Audience::Browser) {
            assert!(r.path == "/" || r.path.starts_with("/ui/"), "{}", r.path);
        }

        let dir = tempfile::tempdir().unwrap();
        let state = Arc::new(AppState {
            backend: None,
            runs: Arc::new(Runs::open(dir.path()).unwrap()),
            index: None,
            token: None,
            frame_ancestors: Vec::new(),
            schedule: None,
            metrics: Metrics::default(),
            next_run: Default::default(),
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, router(state)).await });
        for r in ROUTES {
            let target = r.path.replace("{id}", "1").replace("{dimension}", "exact");
            let target = if r.path == "/ui/groups" {
                "/ui/groups?dimension=exact".to_owned()
            } else if r.path == "/ui/lookup" || r.path == "/api/lookup" {
                format!("{}?q=x", r.path)
            } else {
                target
            };
            let answer = request(addr, r.method.as_str(), &target).await;
            let status = answer.split(' ').nth(1).unwrap_or("");
            assert!(
                status != "405" && !answer.contains("no such endpoint"),
                "{} {}: {answer}",
                r.method,
                r.path
            );
        }
        // And what the table does not hold is not served.
        let answer = request(addr, "GET", "/api/nothing").await;
        assert!(answer.contains("no such endpoint"), "{answer}");
    }

    /// One HTTP/1.1 request with an empty JSON body; the whole answer.
    async fn request(addr: std::net::SocketAddr, method: &str, path: &str) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
             Content-Length: 2\r\nConnection: close\r\n\r\n{{}}"
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        answer
    }
}
