//! What every request passes before a handler: the bearer token (compared in constant time), no
//! request to another host name without one (DNS rebinding), no cross-site request, and the
//! security headers of every answer.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use subtle::ConstantTimeEq;

use super::{error, AppState};

/// The Content-Security-Policy of every answer, made once.
pub(super) fn csp(frame_ancestors: &[String]) -> header::HeaderValue {
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
pub(super) async fn headers(
    State(csp): State<header::HeaderValue>,
    req: Request,
    next: Next,
) -> Response {
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

/// Constant-time comparison (`subtle`), so that the time of a refusal says nothing about the token.
pub(super) fn same(a: &[u8], b: &[u8]) -> bool {
    a.ct_eq(b).into()
}

/// Whether the request's `Host` names the loopback interface (`localhost`, `127.x.y.z`, `[::1]`,
/// with any port). A `Host` that is not a host name or address and an optional port, and nothing
/// else (`localhost:80@evil.example`, `127.0.0.1:80 evil`), names nothing and is refused.
pub(super) fn loopback_host(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST) else {
        // HTTP/1.0 without Host: not a browser's rebinding request.
        return true;
    };
    let Some(name) = host.to_str().ok().and_then(host_name) else {
        return false;
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The name in a `Host` value (RFC 9110 7.2: `uri-host [ ":" port ]`): a bracketed IPv6 address
/// (returned without its brackets), or a registered name or IPv4 address made of letters, digits,
/// `-` and `.`; the port, when there is one, 1 to 5 digits. `None` for anything else.
fn host_name(host: &str) -> Option<&str> {
    let (name, port) = match host.strip_prefix('[') {
        Some(rest) => {
            let (inside, after) = rest.split_once(']')?;
            if !inside
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
            {
                return None;
            }
            let port = match after {
                "" => None,
                _ => Some(after.strip_prefix(':')?),
            };
            (inside, port)
        }
        None => match host.split_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, None),
        },
    };
    let name_ok = host.starts_with('[')
        || (!name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.'));
    let port_ok =
        port.is_none_or(|p| (1..=5).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()));
    (name_ok && port_ok && !name.is_empty()).then_some(name)
}

/// The token, no request to another host name without one, and no request from another site.
pub(super) async fn guard(
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
    // A POST carries JSON or nothing at all (`curl -XPOST …/cancel`). A cross-site form always
    // sends a Content-Type, and a page's script cannot send JSON elsewhere without a preflight; a
    // bodiless cross-site fetch still sends Origin, refused below.
    let bodiless = !headers.contains_key(header::CONTENT_TYPE)
        && !headers.contains_key(header::TRANSFER_ENCODING)
        && headers
            .get(header::CONTENT_LENGTH)
            .is_none_or(|v| v.as_bytes() == b"0");
    if req.method() == Method::POST
        && !bodiless
        && !headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"))
    {
        return error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send the request body as Content-Type: application/json (or send no body)",
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
