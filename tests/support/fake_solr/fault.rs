//! The fault layer: the faults a test can inject (an error status, a delay, a dropped
//! connection, an answer cut off mid-body, a request held after applying part of its batch, a
//! state change just before a request), the rules that say which requests they hit, the handle
//! a test observes and releases them with, choosing the rule for a request, and what a fault
//! answers or applies itself (an injected status, the first documents of a held batch).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::{handle, json, search, Core, Req, Resp, Shared, SolrError};

/// A fault to inject.
pub enum Fault {
    /// Answer this status with Solr's JSON error body; the state is untouched.
    Status(u16),
    /// Wait, then handle the request normally.
    Delay(Duration),
    /// Close the connection with no answer; the state is untouched.
    Drop,
    /// Handle the request (the state changes), then close the connection with no answer.
    DropAfterApply,
    /// Handle the request (the state changes), then answer 200 with a page that is not JSON (a
    /// proxy's error page in Solr's place).
    GarbledAfterApply,
    /// Handle the request, send the first this many bytes of its answer, then break the
    /// connection off: an `/export` whose node goes away mid-stream.
    CutAfter(usize),
    /// For `/update` with a JSON array body: apply only the first `apply_first` documents, then
    /// hold the request unanswered until the handle is released or dropped (or the client goes
    /// away), then close the connection. Other requests are held without being applied.
    Hold { apply_first: usize },
    /// Run against the state just before the request is handled normally.
    Hook(HookFn),
}

/// Where and when a fault applies.
pub struct FaultRule {
    /// Path prefix relative to the core (`/update`, `/select`, `/get`, `/schema`); `""` = any;
    /// with a method first (`POST /config`), only requests of that method; with parameters after
    /// it (`/update?commit=true`), only requests that have each of them.
    pub path: String,
    /// Let this many matching requests through first.
    pub skip: usize,
    /// Then apply to this many (`usize::MAX` = forever).
    pub times: usize,
    pub fault: Fault,
}

impl FaultRule {
    /// A rule for the next request to `path`.
    pub fn once(path: &str, fault: Fault) -> FaultRule {
        FaultRule {
            path: path.into(),
            skip: 0,
            times: 1,
            fault,
        }
    }
}

pub(super) struct FaultState {
    pub(super) hits: Mutex<usize>,
    pub(super) cond: Condvar,
    pub(super) released: tokio::sync::watch::Sender<bool>,
}

/// A state change a [`Fault::Hook`] makes.
pub type HookFn = Box<dyn FnOnce(&mut Core) + Send>;

pub(super) enum FaultKind {
    Status(u16),
    Delay(Duration),
    Drop,
    DropAfterApply,
    GarbledAfterApply,
    CutAfter(usize),
    Hold(usize),
    Hook(Mutex<Option<HookFn>>),
}

pub(super) struct FaultEntry {
    pub(super) path: String,
    pub(super) skip: usize,
    pub(super) times: usize,
    pub(super) seen: AtomicUsize,
    pub(super) kind: FaultKind,
    pub(super) state: Arc<FaultState>,
}

impl FaultState {
    pub(super) fn hit(&self) {
        *self.hits.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.cond.notify_all();
    }
}

/// Observes and releases one fault rule. The rule stays installed when the handle is dropped;
/// dropping it releases a [`Fault::Hold`] as [`FaultHandle::release`] does.
pub struct FaultHandle {
    pub(super) state: Arc<FaultState>,
}

impl FaultHandle {
    /// Waits until the fault has been applied at least once; false on timeout. For `Hold`,
    /// `DropAfterApply` and `Hook` the state change is done when this returns true.
    pub fn wait_hit(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut hits = self.state.hits.lock().unwrap_or_else(|e| e.into_inner());
        while *hits == 0 {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            hits = self
                .state
                .cond
                .wait_timeout(hits, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }

    /// How many requests the fault has been applied to.
    pub fn hits(&self) -> usize {
        *self.state.hits.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Lets held requests go (their connections are then closed without an answer); later
    /// matches of a `Hold` rule are no longer held.
    pub fn release(&self) {
        self.state.released.send_replace(true);
    }
}

impl Drop for FaultHandle {
    fn drop(&mut self) {
        self.release();
    }
}

/// Applies the first `n` documents of an `/update` JSON array body.
pub(super) fn apply_prefix(shared: &Shared, r: &Req, n: usize) {
    if r.path != "/update" {
        return;
    }
    let text = String::from_utf8_lossy(&r.body).to_string();
    let Ok(json::JVal::Arr(docs)) = json::parse(&text) else {
        return;
    };
    let first: Vec<json::JVal> = docs.into_iter().take(n).collect();
    let mut partial = r.clone();
    partial.body = json::JVal::Arr(first).to_compact().into_bytes();
    partial
        .params
        .retain(|(k, _)| k != "commit" && k != "softCommit");
    let _ = handle(shared, &partial);
}

pub(super) fn pick_fault(shared: &Shared, r: &Req) -> Option<Arc<FaultEntry>> {
    let faults = shared.faults.lock().unwrap_or_else(|e| e.into_inner());
    let mut chosen = None;
    for f in faults.iter() {
        // `POST /config`: the method too.
        let (method, path) = match f.path.split_once(' ') {
            Some((m, p)) => (Some(m), p),
            None => (None, f.path.as_str()),
        };
        let (path, params) = path.split_once('?').unwrap_or((path, ""));
        let has_params = params.split('&').filter(|p| !p.is_empty()).all(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            r.params.iter().any(|(rk, rv)| rk == k && rv == v)
        });
        let matches = method.is_none_or(|m| m == r.method)
            && (path.is_empty() || (!r.node_level && r.path.starts_with(path)))
            && has_params;
        if !matches {
            continue;
        }
        let n = f.seen.fetch_add(1, Ordering::SeqCst);
        if chosen.is_none() && n >= f.skip && n - f.skip < f.times {
            chosen = Some(f.clone());
        }
    }
    chosen
}

/// The 200 page a proxy may send in Solr's place: not JSON.
pub(super) fn garbled() -> Resp {
    Resp {
        status: 200,
        content_type: "text/html".to_owned(),
        body: b"<html><body><h1>Bad gateway</h1></body></html>".to_vec(),
        headers: Vec::new(),
    }
}

pub(super) fn injected_status(code: u16) -> Resp {
    let msg = match code {
        503 => "Service Unavailable",
        500 => "Server Error",
        429 => "Too Many Requests",
        502 => "Bad Gateway",
        504 => "Gateway Timeout",
        _ => "Injected fault",
    };
    let e = SolrError::new(code, msg);
    search::error_resp(&e, None, serde_json::Map::new())
}
