//! The HTTP client: one core URL, credentials, timeouts, a cap on requests in flight, and retries.

use std::fmt;
use std::sync::{Arc, Once};
use std::time::{Duration, Instant};

use backon::{ExponentialBuilder, Retryable};
use reqwest::{Method, StatusCode};
use serde_json::Value;
use tokio::sync::Semaphore;
use tracing::{debug, info};
use url::Url;

use super::error::{conflict_id, parse_adds, SolrError, TransportKind};

/// A user name and password for HTTP basic auth. `Debug` never shows the password.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// The user name.
    pub user: String,
    password: String,
}

impl Credentials {
    /// Credentials from a user name and a password.
    pub fn new(user: impl Into<String>, password: impl Into<String>) -> Self {
        Credentials {
            user: user.into(),
            password: password.into(),
        }
    }

    /// Parses the one line of an auth file: `user:password` (the password may hold colons).
    pub fn parse_line(text: &str) -> Result<Self, ConfigError> {
        // A byte order mark an editor put at the start is no part of the user name.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let line = line.trim_end_matches(['\r', '\n']);
        match line.split_once(':') {
            Some((user, password)) if !user.is_empty() => Ok(Credentials::new(user, password)),
            _ => Err(ConfigError::AuthLine),
        }
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("user", &self.user)
            .field("password", &"<hidden>")
            .finish()
    }
}

/// A core URL or an auth file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// `--solr` does not parse as a URL.
    #[error("--solr {url:?} is not a URL ({source}); give a core URL such as http://127.0.0.1:8983/solr/collection1")]
    NotAUrl {
        /// What was given, with anything that may be user info (up to the last `@`) left out: the
        /// message may reach a log or a page.
        url: String,
        /// The parser's reason.
        source: url::ParseError,
    },
    /// Neither http nor https.
    #[error("--solr must be an http:// or https:// URL, not {0}:")]
    Scheme(String),
    /// An auth file without a `user:password` line.
    #[error("expected one line of the form user:password")]
    AuthLine,
}

/// How to reach a core.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// The core URL, such as `http://127.0.0.1:8983/solr/collection1`. User info in it is moved into
    /// [`ClientConfig::credentials`] by [`ClientConfig::new`] so that it is never printed.
    pub core_url: Url,
    /// Basic-auth credentials.
    pub credentials: Option<Credentials>,
    /// The time limit of one request, answer included.
    pub timeout: Duration,
    /// How many times a failed request is sent again (5xx, timeouts, connection errors).
    pub retries: usize,
    /// The first wait before a retry; it doubles each time, with jitter, up to 10 s.
    pub backoff_min: Duration,
    /// How many requests may be in flight at once.
    pub concurrency: usize,
    /// The largest answer read, in bytes; for `/export`, which streams, the largest document.
    pub max_response_bytes: usize,
}

/// The default cap on a Solr answer: 256 MiB. The largest legitimate answer is a page of
/// `--batch-size` documents with their texts (1,000 by default; a crawled page's text is rarely over
/// 100 KB, so about 100 MB at worst); the cap leaves room above that and still stops a runaway
/// answer long before it exhausts memory (a 300 MB answer took 2.1 GB when bodies had no cap).
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 256 << 20;

/// `text` with everything between `://` and the last `@` replaced by `***@`: a URL that does not
/// parse cannot say where its user info ends, so all that may be user info goes.
pub fn without_user_info(text: &str) -> String {
    match (text.find("://"), text.rfind('@')) {
        (Some(s), Some(at)) if at > s + 3 => format!("{}***{}", &text[..s + 3], &text[at..]),
        (None, Some(at)) => format!("***{}", &text[at..]),
        _ => text.to_owned(),
    }
}

impl ClientConfig {
    /// A configuration with the defaults: 60 s timeout, 5 retries from 200 ms, 4 requests in flight.
    pub fn new(core_url: &str) -> Result<Self, ConfigError> {
        let mut url = Url::parse(core_url.trim()).map_err(|source| ConfigError::NotAUrl {
            url: without_user_info(core_url),
            source,
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ConfigError::Scheme(url.scheme().to_owned()));
        }
        let mut credentials = None;
        if !url.username().is_empty() {
            let user = percent(url.username());
            let password = percent(url.password().unwrap_or(""));
            credentials = Some(Credentials::new(user, password));
            let _ = url.set_username("");
            let _ = url.set_password(None);
        }
        url.set_query(None);
        url.set_fragment(None);
        let trimmed = url.path().trim_end_matches('/').to_owned();
        url.set_path(&trimmed);
        Ok(ClientConfig {
            core_url: url,
            credentials,
            timeout: Duration::from_secs(60),
            retries: 5,
            backoff_min: Duration::from_millis(200),
            concurrency: 4,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
        })
    }
}

/// User info as the URL spells it, percent-decoded (a `+` stays a `+`: this is not a form).
fn percent(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

/// A request body.
#[derive(Debug, Clone)]
enum Body {
    None,
    /// `application/x-www-form-urlencoded`: how long parameter lists (many ids, a long `fq`) travel.
    Form(Vec<(String, String)>),
    /// `application/json`.
    Json(Vec<u8>),
}

#[derive(Debug, Clone)]
struct Request {
    method: Method,
    /// The handler path below the core, such as `select` or `schema/fields`.
    handler: String,
    /// URL query parameters (`wt=json` is added).
    query: Vec<(String, String)>,
    body: Body,
}

/// A Solr core client. Cloning is cheap and shares the connection pool and the in-flight cap.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    http: reqwest::Client,
    core: Url,
    credentials: Option<Credentials>,
    retries: usize,
    backoff_min: Duration,
    limit: Semaphore,
    /// The size of `limit`, for the clients of other cores ([`Client::for_core`]).
    concurrency: usize,
    /// The cap on an answer ([`ClientConfig::max_response_bytes`]).
    max_body: usize,
    /// Requests sent, retries included: what Solr was asked to do. Shared with the clients of
    /// other cores made by [`Client::for_core`].
    sent: Arc<std::sync::atomic::AtomicU64>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("core", &self.inner.core.as_str())
            .finish_non_exhaustive()
    }
}

/// rustls needs one process-wide crypto provider; reqwest is built without one (ring keeps the build
/// free of a C toolchain requirement beyond what cargo has). [`Client::new`] calls it; other users of
/// reqwest in the same process (tests) call it before building a client of their own.
pub fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

impl Client {
    /// A client for the configured core. Nothing is sent yet.
    pub fn new(cfg: &ClientConfig) -> Result<Self, SolrError> {
        install_crypto_provider();
        let http = reqwest::Client::builder()
            .timeout(cfg.timeout)
            // Also each read: an `/export` answer has no overall limit (below), only this one.
            .read_timeout(cfg.timeout)
            .connect_timeout(cfg.timeout.min(Duration::from_secs(10)))
            .pool_max_idle_per_host(cfg.concurrency.max(1))
            .user_agent(concat!("solr-dedup/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| SolrError::Transport {
                url: cfg.core_url.to_string(),
                reason: flatten(&e),
                kind: TransportKind::Connect,
            })?;
        Ok(Client {
            inner: Arc::new(Inner {
                http,
                core: cfg.core_url.clone(),
                credentials: cfg.credentials.clone(),
                retries: cfg.retries,
                backoff_min: cfg.backoff_min,
                limit: Semaphore::new(cfg.concurrency.max(1)),
                concurrency: cfg.concurrency.max(1),
                max_body: cfg.max_response_bytes,
                sent: Arc::new(std::sync::atomic::AtomicU64::new(0)),
            }),
        })
    }

    /// A client of another core (a SolrCloud replica's, or a node's `/solr` base for the admin
    /// API) with this one's connection pool, credentials, limits and request count, sending a
    /// failed request again at most `retries` times. `core_url` comes from Solr's cluster state,
    /// never from a user, so it carries no credentials.
    pub fn for_core(&self, core_url: &str, retries: usize) -> Result<Client, ConfigError> {
        let cfg = ClientConfig::new(core_url)?;
        let inner = &self.inner;
        Ok(Client {
            inner: Arc::new(Inner {
                http: inner.http.clone(),
                core: cfg.core_url,
                credentials: inner.credentials.clone(),
                retries,
                backoff_min: inner.backoff_min,
                limit: Semaphore::new(inner.concurrency),
                concurrency: inner.concurrency,
                max_body: inner.max_body,
                sent: inner.sent.clone(),
            }),
        })
    }

    /// `GET <core>/<handler>` with `params` in the URL: for the admin API, whose handlers live
    /// below a node's `/solr` base (a client made by [`Client::for_core`] for it).
    pub async fn get(
        &self,
        handler: &str,
        params: Vec<(String, String)>,
    ) -> Result<Value, SolrError> {
        self.send(Request {
            method: Method::GET,
            handler: handler.to_owned(),
            query: params,
            body: Body::None,
        })
        .await
    }

    /// The cap on an answer, and on one `/export` document, in bytes.
    pub fn max_response_bytes(&self) -> usize {
        self.inner.max_body
    }

    /// The core URL, without credentials.
    pub fn core_url(&self) -> &str {
        self.inner.core.as_str()
    }

    /// `/select`, parameters sent as a form.
    pub async fn select(&self, params: Vec<(String, String)>) -> Result<Value, SolrError> {
        self.send(Request {
            method: Method::POST,
            handler: "select".into(),
            query: Vec::new(),
            body: Body::Form(params),
        })
        .await
    }

    /// Real-time `/get`, parameters sent as a form.
    pub async fn realtime_get(&self, params: Vec<(String, String)>) -> Result<Value, SolrError> {
        self.send(Request {
            method: Method::POST,
            handler: "get".into(),
            query: Vec::new(),
            body: Body::Form(params),
        })
        .await
    }

    /// Solr's index fingerprint up to `max_version` (`/get?getFingerprint=`, `distrib=false`: of
    /// the core that answers; a SolrCloud collection's URL answers `{"doc":null}` without it):
    /// `(numVersions, versionsHash, maxVersionEncountered)`, `None` when the answer lacks one of
    /// them.
    pub async fn fingerprint(
        &self,
        max_version: i64,
    ) -> Result<Option<(u64, i64, i64)>, SolrError> {
        let answer = self
            .realtime_get(vec![
                ("getFingerprint".to_owned(), max_version.to_string()),
                ("distrib".to_owned(), "false".to_owned()),
            ])
            .await?;
        let field = |k: &str| answer.pointer(&format!("/fingerprint/{k}"))?.as_i64();
        Ok(
            match (
                field("numVersions"),
                field("versionsHash"),
                field("maxVersionEncountered"),
            ) {
                (Some(n), Some(hash), Some(max)) if n >= 0 => Some((n as u64, hash, max)),
                _ => None,
            },
        )
    }

    /// `/update` with a JSON body (`params` go in the URL).
    pub async fn update(
        &self,
        params: Vec<(String, String)>,
        body: Vec<u8>,
    ) -> Result<Value, SolrError> {
        self.send(Request {
            method: Method::POST,
            handler: "update".into(),
            query: params,
            body: Body::Json(body),
        })
        .await
    }

    /// `GET /schema/<path>`.
    pub async fn schema_get(
        &self,
        path: &str,
        params: Vec<(String, String)>,
    ) -> Result<Value, SolrError> {
        self.send(Request {
            method: Method::GET,
            handler: format!("schema/{path}"),
            query: params,
            body: Body::None,
        })
        .await
    }

    /// `POST /schema` with Schema API commands. Not retried: a command that reached Solr but whose
    /// answer was lost would fail the second time ("already exists").
    pub async fn schema_post(&self, commands: &Value) -> Result<Value, SolrError> {
        let req = Request {
            method: Method::POST,
            handler: "schema".into(),
            query: Vec::new(),
            body: Body::Json(serde_json::to_vec(commands).expect("JSON serialises")),
        };
        self.once(&req).await
    }

    /// `POST /config` with Config API commands (`set-user-property`). Not retried, as the Schema
    /// API's: each command reloads the core.
    pub async fn config_post(&self, commands: &Value) -> Result<Value, SolrError> {
        let req = Request {
            method: Method::POST,
            handler: "config".into(),
            query: Vec::new(),
            body: Body::Json(serde_json::to_vec(commands).expect("JSON serialises")),
        };
        self.once(&req).await
    }

    /// `/admin/ping`.
    pub async fn ping(&self) -> Result<Value, SolrError> {
        self.send(Request {
            method: Method::GET,
            handler: "admin/ping".into(),
            query: Vec::new(),
            body: Body::None,
        })
        .await
    }

    /// Sends a request, again on retryable errors with jittered exponential backoff.
    async fn send(&self, req: Request) -> Result<Value, SolrError> {
        self.retrying(|| self.once(&req)).await
    }

    /// Runs `attempt` until it succeeds, fails for good, or the retries run out (then the last error
    /// comes wrapped in [`SolrError::Exhausted`]).
    async fn retrying<T, F, Fut>(&self, mut attempt: F) -> Result<T, SolrError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, SolrError>>,
    {
        let backoff = ExponentialBuilder::default()
            .with_min_delay(self.inner.backoff_min)
            .with_max_delay(Duration::from_secs(10))
            .with_max_times(self.inner.retries)
            .with_jitter();
        let mut attempts = 0usize;
        let result = (|| {
            attempts += 1;
            attempt()
        })
        .retry(backoff)
        .when(SolrError::is_retryable)
        .notify(|e, wait| {
            // Shown with -v: a retry that succeeds is no news, one that does not ends in the error.
            info!(error = %e, wait_ms = wait.as_millis() as u64, "request failed; retrying");
        })
        .await;
        match result {
            Err(e) if e.is_retryable() => Err(SolrError::Exhausted {
                attempts,
                last: Box::new(e),
            }),
            other => other,
        }
    }

    /// How many requests this client (and its clones) sent so far, retries included.
    pub fn requests_sent(&self) -> u64 {
        self.inner.sent.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The HTTP request for `req`, and its URL as messages show it (never with credentials). Every
    /// request built is sent, so this is where they are counted.
    fn build(&self, req: &Request) -> (String, reqwest::RequestBuilder) {
        self.inner
            .sent
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut url = self.inner.core.clone();
        url.set_path(&format!("{}/{}", self.inner.core.path(), req.handler));
        {
            let mut q = url.query_pairs_mut();
            for (k, v) in &req.query {
                q.append_pair(k, v);
            }
            q.append_pair("wt", "json");
        }
        let shown = url.to_string();
        let mut builder = self.inner.http.request(req.method.clone(), url);
        if let Some(c) = &self.inner.credentials {
            builder = builder.basic_auth(&c.user, Some(&c.password));
        }
        builder = match &req.body {
            Body::None => builder,
            Body::Form(params) => {
                let body = url::form_urlencoded::Serializer::new(String::new())
                    .extend_pairs(params)
                    .finish();
                builder
                    .header(
                        reqwest::header::CONTENT_TYPE,
                        "application/x-www-form-urlencoded",
                    )
                    .body(body)
            }
            Body::Json(bytes) => builder
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(bytes.clone()),
        };
        (shown, builder)
    }

    /// `/export` with `params` sent as a form: the answer's head, its body left to stream. Sent again
    /// on retryable errors until the answer starts; a failure after that is the caller's to report.
    pub async fn export(
        &self,
        params: Vec<(String, String)>,
    ) -> Result<(String, reqwest::Response), SolrError> {
        let req = Request {
            method: Method::POST,
            handler: "export".into(),
            query: Vec::new(),
            body: Body::Form(params),
        };
        self.retrying(|| self.export_once(&req)).await
    }

    async fn export_once(&self, req: &Request) -> Result<(String, reqwest::Response), SolrError> {
        let (shown, builder) = self.build(req);
        let transport = |e| transport_error(&shown, e);
        // The whole answer streams for as long as the engine takes to work through it, so it has no
        // overall limit; a stall longer than the time limit of one request still ends it.
        let resp = builder
            .timeout(EXPORT_LIMIT)
            .send()
            .await
            .map_err(transport)?;
        let status = resp.status();
        if status.is_success() {
            return Ok((shown, resp));
        }
        let bytes = self.body(&shown, status, resp).await?;
        classify(&shown, status, &bytes).map(|_| unreachable!("a failed status is an error"))
    }

    /// One request and its answer, classified.
    async fn once(&self, req: &Request) -> Result<Value, SolrError> {
        let _permit = self
            .inner
            .limit
            .acquire()
            .await
            .expect("the semaphore is never closed");
        let (shown, builder) = self.build(req);
        let started = Instant::now();
        let transport = |e| transport_error(&shown, e);
        let resp = builder.send().await.map_err(transport)?;
        let status = resp.status();
        let bytes = self.body(&shown, status, resp).await?;
        debug!(
            method = %req.method,
            url = %shown,
            status = status.as_u16(),
            bytes = bytes.len(),
            ms = started.elapsed().as_millis() as u64,
            "solr"
        );
        classify(&shown, status, &bytes)
    }
}

impl Client {
    /// Reads an answer's body chunk by chunk, so that memory never holds more than the cap and one
    /// chunk. An error answer that breaks off is classified by what arrived: Solr sends the first
    /// 64 KiB of an error with a long stack trace (a `StackOverflowError`) and then drops the
    /// connection.
    async fn body(
        &self,
        shown: &str,
        status: StatusCode,
        mut resp: reqwest::Response,
    ) -> Result<Vec<u8>, SolrError> {
        let limit = self.inner.max_body;
        let mut body = Vec::new();
        loop {
            match resp.chunk().await {
                Ok(Some(chunk)) => {
                    if body.len() + chunk.len() > limit {
                        return Err(SolrError::TooLarge {
                            url: shown.to_owned(),
                            limit,
                        });
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(None) => return Ok(body),
                Err(_) if !status.is_success() && !body.is_empty() => return Ok(body),
                Err(e) => return Err(transport_error(shown, e)),
            }
        }
    }
}

/// A failure to send a request or read its answer, classified by what went wrong.
fn transport_error(url: &str, e: reqwest::Error) -> SolrError {
    let kind = if e.is_connect() {
        TransportKind::Connect
    } else if e.is_timeout() {
        TransportKind::Timeout
    } else {
        TransportKind::Broken
    };
    SolrError::Transport {
        url: url.to_owned(),
        kind,
        // The URL is in our message already.
        reason: flatten(&e.without_url()),
    }
}

/// The overall limit of one `/export` answer (its reads are limited like any request's).
const EXPORT_LIMIT: Duration = Duration::from_secs(24 * 3600);

/// Turns an answer into a JSON value or the error it stands for.
fn classify(url: &str, status: StatusCode, body: &[u8]) -> Result<Value, SolrError> {
    let json: Option<Value> = serde_json::from_slice(body).ok();
    let message = || {
        json.as_ref()
            .and_then(|j| j.pointer("/error/msg"))
            .and_then(Value::as_str)
            .map(|m| one_line(m, 300))
            .or_else(|| cut_msg(body).map(|m| one_line(&m, 300)))
            .unwrap_or_else(|| one_line(&String::from_utf8_lossy(body), 200))
    };
    let url = url.to_owned();
    match status.as_u16() {
        200..=299 => json.ok_or_else(|| SolrError::Malformed {
            url,
            reason: one_line(&String::from_utf8_lossy(body), 80),
        }),
        401 | 403 => Err(SolrError::Auth { url, status }),
        // Solr's own 404 for an unknown core or handler is an HTML page; a JSON 404 (the Schema API's
        // "No such field") is an answer about the request.
        404 if json.is_none() => Err(SolrError::NotFound { url }),
        409 => Err(SolrError::Conflict {
            url,
            message: message(),
            document: json
                .as_ref()
                .and_then(|j| j.pointer("/error/msg"))
                .and_then(Value::as_str)
                .and_then(conflict_id)
                .map(str::to_owned),
            adds: json.as_ref().map(parse_adds).unwrap_or_default(),
        }),
        500..=599 => Err(SolrError::Server {
            url,
            status,
            message: message(),
        }),
        _ => Err(SolrError::Rejected {
            url,
            status,
            message: message(),
        }),
    }
}

/// `error.msg` of an answer cut short: Solr sends the first 64 KiB of an error whose stack trace is
/// longer (a `StackOverflowError`), which is not JSON as a whole but starts with the message.
fn cut_msg(body: &[u8]) -> Option<String> {
    const KEY: &[u8] = b"\"msg\":\"";
    let start = body.windows(KEY.len()).position(|w| w == KEY)? + KEY.len() - 1;
    let mut escaped = false;
    let len = body[start + 1..].iter().position(|&b| {
        let end = b == b'"' && !escaped;
        escaped = b == b'\\' && !escaped;
        end
    })?;
    serde_json::from_slice(&body[start..start + len + 2]).ok()
}

fn one_line(s: &str, max: usize) -> String {
    let flat: String = s
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(max)
        .collect();
    flat
}

/// An error and its causes on one line (reqwest's own message leaves the cause out).
fn flatten(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    one_line(&text, 400)
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_auth_file_with_a_byte_order_mark_gives_the_user_without_it() {
        let c = Credentials::parse_line("\u{feff}alice:pa:ss\n").unwrap();
        assert_eq!(c.user, "alice");
        assert_eq!(c, Credentials::new("alice", "pa:ss"));
    }

    use super::*;

    #[test]
    fn a_url_that_does_not_parse_is_shown_without_its_user_info() {
        // An unencoded `#` in the password: the URL does not parse.
        let Err(e) = ClientConfig::new("http://admin:s3cr#et@127.0.0.1:8983/solr/c") else {
            panic!("parsed");
        };
        let shown = e.to_string();
        assert!(
            !shown.contains("s3cr") && !shown.contains("admin"),
            "{shown}"
        );
        assert!(
            shown.contains("http://***@127.0.0.1:8983/solr/c"),
            "{shown}"
        );
        assert_eq!(without_user_info("a:b@c@host/x"), "***@host/x");
        assert_eq!(without_user_info("http://host/x"), "http://host/x");
    }

    #[test]
    fn credentials_never_show_the_password() {
        let c = Credentials::new("solr", "SolrRocks");
        let shown = format!("{c:?}");
        assert!(
            shown.contains("solr") && !shown.contains("SolrRocks"),
            "{shown}"
        );
    }

    #[test]
    fn auth_file_lines() {
        assert_eq!(
            Credentials::parse_line("admin:pa:ss\n").unwrap(),
            Credentials::new("admin", "pa:ss")
        );
        assert_eq!(
            Credentials::parse_line("\nadmin:x\r\n").unwrap(),
            Credentials::new("admin", "x")
        );
        assert!(Credentials::parse_line("nocolon").is_err());
        assert!(Credentials::parse_line(":pw").is_err());
        assert!(Credentials::parse_line("").is_err());
    }

    #[test]
    fn user_info_moves_out_of_the_url() {
        let c = ClientConfig::new("http://us%3Aer:p%40ss@127.0.0.1:8983/solr/core1/?x=1").unwrap();
        assert_eq!(c.core_url.as_str(), "http://127.0.0.1:8983/solr/core1");
        assert_eq!(c.credentials, Some(Credentials::new("us:er", "p@ss")));
        let c = ClientConfig::new("http://solr:a+b%2Bc@host/solr/c").unwrap();
        assert_eq!(c.credentials, Some(Credentials::new("solr", "a+b+c")));
        assert!(ClientConfig::new("ftp://x/solr/c").is_err());
        assert!(ClientConfig::new("not a url").is_err());
    }

    #[test]
    fn answers_are_classified() {
        let ok = classify("u", StatusCode::OK, br#"{"a":1}"#).unwrap();
        assert_eq!(ok["a"], 1);
        let html = b"<html><title>Searching for Solr?</title></html>";
        assert!(matches!(
            classify("u", StatusCode::NOT_FOUND, html),
            Err(SolrError::NotFound { .. })
        ));
        let schema404 = br#"{"error":{"msg":"No such field [x]","code":404}}"#;
        assert!(matches!(
            classify("u", StatusCode::NOT_FOUND, schema404),
            Err(SolrError::Rejected { .. })
        ));
        let conflict =
            br#"{"error":{"msg":"version conflict for a expected=1 actual=2","code":409}}"#;
        assert_eq!(
            classify("u", StatusCode::CONFLICT, conflict)
                .unwrap_err()
                .conflict_message(),
            Some("version conflict for a expected=1 actual=2")
        );
        let partial = br#"{"adds":["x",5],"error":{"msg":"version conflict for a expected=1 actual=2","code":409}}"#;
        match classify("u", StatusCode::CONFLICT, partial).unwrap_err() {
            SolrError::Conflict { document, adds, .. } => {
                assert_eq!(document.as_deref(), Some("a"));
                assert_eq!(adds, vec![("x".to_owned(), 5)]);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            classify("u", StatusCode::OK, b"not json"),
            Err(SolrError::Malformed { .. })
        ));
        // The first 64 KiB of Solr 9.10's answer to a filter nested 10,000 levels deep.
        let cut = b"{\n  \"error\":{\n    \"msg\":\"java.lang.StackOverflowError\",\n    \"trace\":\"java.lang.RuntimeException: java.lang.StackOverflowError\\n\\tat org.apache.solr.servlet.HttpSolrCall.sendError(HttpSolrCall.java:861)\\n\\tat org.apache.solr.pa";
        match classify("u", StatusCode::INTERNAL_SERVER_ERROR, cut).unwrap_err() {
            e @ SolrError::Server { .. } => {
                assert_eq!(
                    e.refusal().map(|(_, m)| m),
                    Some("java.lang.StackOverflowError")
                );
                assert!(!e.is_retryable());
            }
            other => panic!("{other:?}"),
        }
        assert!(classify("u", StatusCode::SERVICE_UNAVAILABLE, b"busy")
            .unwrap_err()
            .is_retryable());
    }
}
