//! A strict in-process fake of one Apache Solr 9 core, for tests.
//!
//! # Motivation
//! The worker talks to Solr over HTTP and relies on exact behaviour: which parameters Solr
//! accepts, how it answers errors, when documents become visible, how `_version_` conflicts and
//! atomic updates work. A permissive fake would let wrong clients pass. This one answers like the
//! Solr 9.3 that recorded `tests/fixtures/solr-transcripts/`, and the replay test
//! (`tests/transcripts.rs`) checks that, step by step.
//!
//! # Design
//! ```text
//!  test thread ──FakeSolr──┐            server thread (own current-thread tokio runtime)
//!    with_core / docs ─────┼─► Mutex<Core> ◄── handler ◄── fault layer ◄── hyper http1 ◄── TCP 127.0.0.1:0
//!    fault / requests ─────┴─► faults, request log ◄────────────┘
//! ```
//! Every request is recorded, checked for basic auth, matched against the fault rules, then
//! handled synchronously under the core's lock. A fault that drops a connection makes the hyper
//! service fail, which closes the connection without an answer.
//!
//! The HTTP side (accepting, recording, auth, writing answers) is in [`server`], the fault rules
//! in [`fault`]; this module holds the fake's API and routes requests to the handlers.
//!
//! # Consequences
//! Dropping the [`FakeSolr`] stops the server, cancels held requests and joins the thread. The
//! fake works with sync tests (spawning the binary) and async tests alike, as it never runs on
//! the caller's runtime. A bug in a handler answers 500 `fake solr panicked: …`.
//!
//! # Fidelity
//! Exact, as the replay test checks: every recorded request/answer pair it replays, including
//! error messages and cursor marks. Simplified on purpose, to what the client asks for:
//! - no relevance scores: a search without `sort` is in index order (Solr's order among equal
//!   scores), and `score` in `fl` or `sort` is a 400 `fake solr: …`;
//! - an atomic update always reads the old document through stored fields and docValues, so a
//!   field that is neither loses its value even while the old version is uncommitted (Solr can
//!   still find it in the update log then); the loss is certain instead of timing-dependent;
//! - a deleted id remembers its delete version (for `_version_` checks) until the next commit;
//! - `commitWithin` fires when the fake is next used after the deadline ([`CommitWithin::Timer`]),
//!   or only on request ([`CommitWithin::Manual`]);
//! - not supported (answered 400 `fake solr: …`): nested documents, XML/CSV/JavaBin updates,
//!   regular-expression queries, classic facets (`facet=true`), range facets, functions in
//!   `sort`/`fl`, rollback, `wt=xml`;
//! - not served (answered 404, as an unknown handler): what the client never asks for, such as
//!   `/admin/luke` and the node's CoreAdmin (their recorded steps are not replayed).

pub mod admin;
pub mod analysis;
mod config_api;
pub mod cursor;
pub mod error;
pub mod facets;
mod fault;
pub mod index;
pub mod json;
pub mod query;
pub mod schema;
pub mod search;
#[cfg(test)]
mod self_test;
mod server;
pub mod update;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use fault::{FaultEntry, FaultKind, FaultState};
use server::accept_loop;

pub use error::SolrError;
pub use fault::{Fault, FaultHandle, FaultRule};
pub use index::{CommitWithin, Core};
pub use schema::Schema;
pub use server::CUT_HEADER;

/// One HTTP request as the handlers see it.
#[derive(Clone, Debug)]
pub struct Req {
    pub method: String,
    /// Relative to the core (`/select`), or the full path for node-level requests.
    pub path: String,
    pub node_level: bool,
    pub params: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub content_type: Option<String>,
}

/// One HTTP answer.
#[derive(Clone, Debug)]
pub struct Resp {
    pub status: u16,
    pub content_type: String,
    pub body: Vec<u8>,
    pub headers: Vec<(String, String)>,
}

/// A request as the fake received it.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    pub method: String,
    /// Relative to the core (`/update`), or the full path for node-level and unknown-core requests.
    pub path: String,
    /// Parameters from the query string, then from a form body.
    pub params: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub content_type: Option<String>,
    /// The status answered; `None` while pending or when the connection was dropped.
    pub status: Option<u16>,
}

impl Recorded {
    /// The first value of a parameter.
    pub fn param(&self, name: &str) -> Option<&str> {
        first_param(&self.params, name)
    }
}

impl Req {
    /// The first value of a parameter.
    pub fn param(&self, name: &str) -> Option<&str> {
        first_param(&self.params, name)
    }
}

fn first_param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// How to start a fake.
pub struct FakeOptions {
    /// The core name (default `collection1`).
    pub core: String,
    /// When set, every request needs these basic-auth credentials.
    pub basic_auth: Option<(String, String)>,
    /// The schema (default: the transcripts' schema).
    pub schema: Schema,
    /// When `commitWithin` fires (default: after the requested time).
    pub commit_within: CommitWithin,
}

impl Default for FakeOptions {
    fn default() -> Self {
        FakeOptions {
            core: "collection1".into(),
            basic_auth: None,
            schema: Schema::transcripts(),
            commit_within: CommitWithin::Timer,
        }
    }
}

struct Shared {
    core_name: String,
    auth: Option<(String, String)>,
    core: Mutex<Core>,
    requests: Mutex<Vec<Recorded>>,
    faults: Mutex<Vec<Arc<FaultEntry>>>,
    counter: AtomicU64,
    work: Mutex<Work>,
    /// The Config API's `updateRequestProcessorChain` (null: none).
    chains: Mutex<serde_json::Value>,
    /// The configuration overlay's user properties (`set-user-property`).
    user_props: Mutex<serde_json::Map<String, serde_json::Value>>,
}

/// What the fake was asked to do, counted on its side as issue 11 counts Solr's work, so that tests
/// can hold the worker's own counts (its report's `work`) against it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Work {
    /// Requests to the core's `/select`, `/get`, `/export` and `/update`.
    pub requests: u64,
    /// Documents handed out with the text field ([`Work::TEXT_FIELD`] in `fl`, or `fl=*`).
    pub text_docs: u64,
    /// Documents handed out light by `/select` pages without a lookup filter.
    pub light_cursor_docs: u64,
    /// Documents handed out light by `/select` with a lookup filter (`{!terms}`, or an uncached OR).
    pub lookup_docs: u64,
    /// Documents handed out light by `/get` (the worker's checks of what a batch did).
    pub light_get_docs: u64,
    /// Documents streamed by `/export`.
    pub export_docs: u64,
    /// Documents in `/update` bodies (each one an atomic update Solr applies or rejects).
    pub written_docs: u64,
}

impl Work {
    /// The text field of the YaCy schema.
    pub const TEXT_FIELD: &'static str = "text_t";

    fn count(&mut self, r: &Req, resp: &Resp) {
        let counted = ["/select", "/query", "/get", "/export", "/update"];
        if r.node_level || !counted.contains(&r.path.as_str()) {
            return;
        }
        self.requests += 1;
        if r.path == "/update" {
            if let Ok(serde_json::Value::Array(docs)) =
                serde_json::from_slice::<serde_json::Value>(&r.body)
            {
                self.written_docs += docs.len() as u64;
            }
            return;
        }
        let Ok(answer) = serde_json::from_slice::<serde_json::Value>(&resp.body) else {
            return;
        };
        let docs = answer
            .pointer("/response/docs")
            .and_then(serde_json::Value::as_array)
            .map(Vec::len)
            .unwrap_or_else(|| usize::from(answer.get("doc").is_some_and(|d| d.is_object())))
            as u64;
        let values = |name: &'static str| {
            r.params
                .iter()
                .filter(move |(n, _)| n == name)
                .map(|(_, v)| v)
        };
        let text = values("fl").any(|fl| {
            fl.split([',', ' '])
                .any(|f| f == Self::TEXT_FIELD || f == "*")
        });
        // `{!terms}` lookups, and the quoted OR lookups of earlier versions (`{!cache=false}f:(…)`).
        let lookup =
            values("fq").any(|fq| fq.contains("{!terms") || fq.starts_with("{!cache=false}"));
        match r.path.as_str() {
            _ if text => self.text_docs += docs,
            "/export" => self.export_docs += docs,
            "/get" => self.light_get_docs += docs,
            _ if lookup => self.lookup_docs += docs,
            _ => self.light_cursor_docs += docs,
        }
    }
}

impl Shared {
    fn core(&self) -> MutexGuard<'_, Core> {
        let mut c = self.core.lock().unwrap_or_else(|e| e.into_inner());
        c.tick();
        c
    }
}

/// The running fake. Dropping it stops the server.
pub struct FakeSolr {
    shared: Arc<Shared>,
    addr: SocketAddr,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl FakeSolr {
    /// Starts a fake with [`FakeOptions::default`].
    pub fn start() -> FakeSolr {
        FakeSolr::start_with(FakeOptions::default())
    }

    pub fn start_with(opts: FakeOptions) -> FakeSolr {
        let shared = Arc::new(Shared {
            core_name: opts.core,
            auth: opts.basic_auth,
            core: Mutex::new(Core::new(opts.schema, opts.commit_within)),
            requests: Mutex::new(Vec::new()),
            faults: Mutex::new(Vec::new()),
            counter: AtomicU64::new(0),
            work: Mutex::new(Work::default()),
            chains: Mutex::new(serde_json::Value::Null),
            user_props: Mutex::new(serde_json::Map::new()),
        });
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("nonblocking listener");
        let addr = listener.local_addr().expect("local addr");
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let server_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name("fake-solr".into())
            // Room for the query parser's recursion up to its depth limit (query::parse::STACK_DEPTH).
            .stack_size(16 << 20)
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("fake solr runtime");
                rt.block_on(accept_loop(listener, server_shared, rx));
                // Dropping the runtime cancels connection tasks, held requests included.
            })
            .expect("spawn fake solr thread");
        FakeSolr {
            shared,
            addr,
            shutdown: Some(tx),
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT/solr`.
    pub fn base_url(&self) -> String {
        format!("http://{}/solr", self.addr)
    }

    /// `base_url() + "/" + core`.
    pub fn core_url(&self) -> String {
        format!("{}/{}", self.base_url(), self.shared.core_name)
    }

    /// The real-time view (what `/get` sees, uncommitted changes included), sorted by id, each
    /// document with `_version_` as a JSON number.
    pub fn docs(&self) -> Vec<serde_json::Value> {
        let core = self.shared.core();
        let mut docs: Vec<&index::Doc> = core.live().values().map(|d| d.as_ref()).collect();
        docs.sort_by(|a, b| a.id.cmp(&b.id).then(a.seq.cmp(&b.seq)));
        docs.into_iter()
            .map(|d| serde_json::Value::Object(core.render(d, &index::FieldList::all())))
            .collect()
    }

    /// The committed view (what `/select` sees), sorted by id.
    pub fn committed_docs(&self) -> Vec<serde_json::Value> {
        let core = self.shared.core();
        let committed = core.committed();
        let mut docs: Vec<&index::Doc> = committed.values().map(|d| d.as_ref()).collect();
        docs.sort_by(|a, b| a.id.cmp(&b.id).then(a.seq.cmp(&b.seq)));
        docs.into_iter()
            .map(|d| serde_json::Value::Object(core.render(d, &index::FieldList::all())))
            .collect()
    }

    /// Sets the update chains the Config API answers with, in Solr's shape (a list of
    /// `{"name", "default", "": [processors]}`), as a solrconfig.xml with them would.
    pub fn set_update_chains(&self, chains: serde_json::Value) {
        *self.shared.chains.lock().unwrap_or_else(|e| e.into_inner()) = chains;
    }

    /// Changes the schema in place (as a restart with another schema would; no API call).
    pub fn edit_schema(&self, f: impl FnOnce(&mut Schema)) {
        f(self.shared.core().schema_mut());
    }

    /// Installs a fault rule. Rules are checked in the order they were added; each counts the
    /// requests matching its path, and the first rule whose window covers a request applies.
    pub fn fault(&self, rule: FaultRule) -> FaultHandle {
        let (tx, _rx) = tokio::sync::watch::channel(false);
        let state = Arc::new(FaultState {
            hits: Mutex::new(0),
            cond: Condvar::new(),
            released: tx,
        });
        let kind = match rule.fault {
            Fault::Status(s) => FaultKind::Status(s),
            Fault::Delay(d) => FaultKind::Delay(d),
            Fault::Drop => FaultKind::Drop,
            Fault::DropAfterApply => FaultKind::DropAfterApply,
            Fault::GarbledAfterApply => FaultKind::GarbledAfterApply,
            Fault::CutAfter(n) => FaultKind::CutAfter(n),
            Fault::Hold { apply_first } => FaultKind::Hold(apply_first),
            Fault::Hook(f) => FaultKind::Hook(Mutex::new(Some(f))),
        };
        self.shared
            .faults
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Arc::new(FaultEntry {
                path: rule.path,
                skip: rule.skip,
                times: rule.times,
                seen: AtomicUsize::new(0),
                kind,
                state: state.clone(),
            }));
        FaultHandle { state }
    }

    /// Removes every fault rule (held requests stay held until their handles go).
    pub fn clear_faults(&self) {
        self.shared
            .faults
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared
            .requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// What the fake was asked to do since it started or since [`FakeSolr::reset_work`].
    pub fn work(&self) -> Work {
        self.shared
            .work
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Starts counting [`FakeSolr::work`] from zero.
    pub fn reset_work(&self) {
        *self.shared.work.lock().unwrap_or_else(|e| e.into_inner()) = Work::default();
    }

    pub fn clear_requests(&self) {
        self.shared
            .requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// Direct access to the core (same semantics as the HTTP calls, new versions included).
    pub fn with_core<R>(&self, f: impl FnOnce(&mut Core) -> R) -> R {
        f(&mut self.shared.core())
    }
}

impl Drop for FakeSolr {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn not_found() -> Resp {
    Resp {
        status: 404,
        content_type: "text/html".into(),
        body: b"<p>\n  Searching for Solr?<br/>\n  You must type the correct path.<br/>\n  Solr will respond.\n</p>\n".to_vec(),
        headers: Vec::new(),
    }
}

/// [`handle`], with a bug in the fake turned into a 500 that names it instead of a dropped
/// connection.
fn handle_guarded(shared: &Shared, r: &Req) -> Resp {
    let resp = handle_caught(shared, r);
    shared
        .work
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .count(r, &resp);
    resp
}

fn handle_caught(shared: &Shared, r: &Req) -> Resp {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handle(shared, r))).unwrap_or_else(
        |panic| {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            let e = SolrError::server_error(
                format!("fake solr panicked: {what}"),
                "java.lang.IllegalStateException",
            );
            search::error_resp(&e, None, serde_json::Map::new())
        },
    )
}

/// Routes a request to its handler, under the core's lock.
fn handle(shared: &Shared, r: &Req) -> Resp {
    let mut core = shared.core();
    if r.node_level {
        return not_found();
    }
    match r.path.as_str() {
        "/select" | "/query" => search::select(&core, r),
        "/get" => search::get(&core, r),
        "/update" => update::update(&mut core, r),
        "/export" => search::export(&core, r),
        "/admin/ping" => admin::ping(
            &shared.core_name,
            r,
            shared.counter.fetch_add(1, Ordering::SeqCst),
        ),
        p if p == "/schema" || p.starts_with("/schema/") => schema_api(&mut core, r),
        p if p.starts_with("/config/") => {
            let chains = shared.chains.lock().unwrap_or_else(|e| e.into_inner());
            let props = shared.user_props.lock().unwrap_or_else(|e| e.into_inner());
            config_api::config(&chains, &props, r)
        }
        "/config" if r.method == "POST" => {
            let mut props = shared.user_props.lock().unwrap_or_else(|e| e.into_inner());
            config_api::post(&mut props, r)
        }
        _ => not_found(),
    }
}

fn schema_api(core: &mut Core, r: &Req) -> Resp {
    let sub = &r.path["/schema".len()..];
    let ok = |mut body: serde_json::Map<String, serde_json::Value>| {
        let mut full = serde_json::Map::new();
        full.insert(
            "responseHeader".into(),
            serde_json::json!({"status": 0, "QTime": 0}),
        );
        full.append(&mut body);
        search::json_resp(200, &serde_json::Value::Object(full))
    };
    let fail = |e: SolrError| search::error_resp(&e, None, serde_json::Map::new());
    match r.method.as_str() {
        "GET" => match core.schema().api_get(sub, &r.params) {
            Ok(body) => ok(body),
            Err(e) => fail(e),
        },
        "POST" if sub.is_empty() => {
            let text = String::from_utf8_lossy(&r.body).to_string();
            let parsed = match json::parse(&text) {
                Ok(v) => v,
                Err(e) => return fail(SolrError::bad_request(e.message)),
            };
            match core.schema_mut().api_post(&parsed) {
                Ok(()) => ok(serde_json::Map::new()),
                Err(e) => fail(e),
            }
        }
        _ => not_found(),
    }
}
