//! `serve`'s connections: its own accept loop over hyper's HTTP/1, serving the [`router`](super::router),
//! so that slow and idle clients are closed instead of holding the process's files (issue 41).
//!
//! # Motivation
//!
//! `axum::serve` waits for a request head as long as a client takes, gives a body all the time it
//! wants and accepts connections until `accept` fails for want of files. 200 clients sending a byte
//! every 10 s held their connections for over a minute, and under systemd's usual soft limit of
//! 1,024 open files, 1,100 idle connections left `/healthz` unanswered, with no log line.
//!
//! # Design
//!
//! ```text
//! accept ─► open < cap? ─no─► close the connection idle the longest ─(none idle)─► close the new one
//!    │ yes          │
//!    ▼              ▼
//! a task per connection: hyper's HTTP/1 ─ head within HEADER_DEADLINE ─► body within BODY_DEADLINE
//!   ─► the router (busy: never closed to make room) ─► answered: idle again, the head deadline anew
//! ```
//!
//! - **Header deadline** ([`HEADER_DEADLINE`], 10 s): hyper's `header_read_timeout`, which runs from
//!   when hyper starts waiting for a head: when the connection opens and after each answer. A head
//!   is a few hundred bytes, sent in well under a second on any network; 10 s leaves room for a slow
//!   link and cuts a client that sends a byte every few seconds. A connection that sent part of a
//!   head is closed and logged (`header_deadline`); one that sent nothing since it opened or since its
//!   last answer, such as a client's pooled keep-alive connection, is closed quietly (`idle`).
//! - **Body deadline** ([`BODY_DEADLINE`], 30 s from the end of the head): a body is read through
//!   `Deadline`, which fails when the time is up; the request is then answered 408 with
//!   `Connection: close`. 30 s carries the largest body the router takes (8 MiB) at 280 KB/s. A body
//!   the handler does not read is drained once after the answer, and the connection closed if that
//!   does not finish it (hyper's own rule).
//! - **Cap** ([`connection_cap`]): below the soft limit of open files (`getrlimit(RLIMIT_NOFILE)`),
//!   keeping a quarter of it and at least [`RESERVE`] for the rest of the process (a run's Solr
//!   connections and spill files, the state directory), and at most [`MAX_CONNECTIONS`]. At the cap
//!   a new connection closes the one idle the longest: waiting for a head or a body, or for its
//!   client to read an answer; never one whose request the router is answering. So a flood of slow
//!   connections cannot lock `/healthz` out: each new connection pushes the oldest slow one out. When
//!   every connection is busy, the new one is closed instead. The connections closed for room close
//!   when their tasks next run; the accept loop does not outrun them by more than 16 (`Shared::room`):
//!   meanwhile new connections wait in the kernel's queue ([`BACKLOG`], 1,024), holding no file.
//! - **Accept errors**: a failed `accept` (`EMFILE`, `ENFILE`, out of memory) does not end the
//!   server: it closes the connection idle the longest, waits [`ACCEPT_BACKOFF`] and goes on.
//!   Connections reset before they were accepted are skipped.
//! - Each of these is counted for `/metrics` ([`Counters`]) and logged at most once every
//!   [`LOG_EVERY`] per kind, the line saying how many like it were not logged (`not_logged`), so that
//!   a flood does not flood the log.
//!
//! # Consequences
//!
//! - A keep-alive connection idle for 10 s is closed; clients open another (browsers and reqwest
//!   retry a request on a pooled connection the server closed).
//! - Stopping: connections are accepted until the `stop` future of [`serve`] is done (in `serve`,
//!   once the run going on has finished its batch); then connections between requests close at
//!   once, one still sending a head or a body within a second, one being answered once answered;
//!   any still open after [`DRAIN`] (a client not reading its answer) are dropped with the process.

use std::collections::{BTreeSet, HashMap};
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::http::{header, HeaderValue, Request, StatusCode};
use axum::response::Response;
use axum::Router;
use hyper::body::{Body, Bytes, Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::{watch, Notify};
use tokio::time::{Instant, Sleep};
use tracing::{debug, info, warn};

use super::AppState;

/// A connection that has not sent a whole request head within this is closed.
pub const HEADER_DEADLINE: Duration = Duration::from_secs(10);

/// A request whose body is not complete within this of its head is answered 408 and closed.
pub const BODY_DEADLINE: Duration = Duration::from_secs(30);

/// Connections open at once at most, whatever the file limit: hyper keeps a buffer of 8 KiB or more
/// per connection, and a server for operators and a crawler's workers needs nowhere near this many.
pub const MAX_CONNECTIONS: usize = 4096;

/// Connections open at once at least, even under a file limit too low to keep [`RESERVE`] apart.
const MIN_CONNECTIONS: usize = 8;

/// Files kept apart from connections at least: a run's Solr connections and spill files (a few
/// dozen while it merges), the state directory, the runtime's own.
pub const RESERVE: u64 = 128;

/// Connections over the cap that may still be closing (closed for room, their task not yet run)
/// before the accept loop waits for them; well inside [`RESERVE`].
const SLACK: usize = 16;

/// One log line per kind of closing at most this often.
pub const LOG_EVERY: Duration = Duration::from_secs(10);

/// How long the accept loop waits after `accept` failed.
pub const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Connections the kernel queues for `accept` (tokio's default is 128): while the accept loop
/// waits for connections it closed for room to go, a burst of new ones waits there, holding no file
/// of this process, instead of having its SYNs dropped and retried a second later.
pub const BACKLOG: u32 = 1024;

/// How long a connection not being answered is given to close once stopping (an answer being
/// written finishes; a head or a body being sent does not).
const STOP_GRACE: Duration = Duration::from_secs(1);

/// How long stopping waits for the connections to close.
pub const DRAIN: Duration = Duration::from_secs(15);

/// What the server closes connections by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A connection that has not sent a whole request head within this is closed.
    pub header: Duration,
    /// A request whose body is not complete within this of its head is answered 408 and closed.
    pub body: Duration,
    /// Connections open at once at most.
    pub connections: usize,
}

impl Limits {
    /// [`HEADER_DEADLINE`], [`BODY_DEADLINE`] and the cap under this process's soft limit of open
    /// files (logged).
    pub fn for_this_process() -> Limits {
        let files = file_limit();
        let connections = connection_cap(files);
        match files {
            Some(files) => info!(
                connections,
                files, "at most {connections} connections at once, below the soft limit of {files} open files"
            ),
            None => info!(
                connections,
                "at most {connections} connections at once (no limit of open files)"
            ),
        }
        Limits {
            header: HEADER_DEADLINE,
            body: BODY_DEADLINE,
            connections,
        }
    }
}

/// The soft limit of open files, `getrlimit(RLIMIT_NOFILE)`; none when unlimited (or not Unix).
pub fn file_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        rustix::process::getrlimit(rustix::process::Resource::Nofile).current
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Connections open at once at most under a soft limit of `files` open files: the limit less a
/// quarter of it, or less [`RESERVE`] when that is more, between 8 and [`MAX_CONNECTIONS`].
///
/// | files | 256 | 1,024 | 4,096 | 65,536 | unlimited |
/// |---|---|---|---|---|---|
/// | connections | 128 | 768 | 3,072 | 4,096 | 4,096 |
pub fn connection_cap(files: Option<u64>) -> usize {
    let Some(files) = files else {
        return MAX_CONNECTIONS;
    };
    let free = files.saturating_sub((files / 4).max(RESERVE));
    usize::try_from(free)
        .unwrap_or(MAX_CONNECTIONS)
        .clamp(MIN_CONNECTIONS, MAX_CONNECTIONS)
}

/// Why the server closed a connection: the `reason` of `solr_dedup_connections_closed_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closed {
    /// Part of a request head, not completed within the header deadline.
    HeaderDeadline = 0,
    /// Nothing sent within the header deadline since it opened or since its last answer.
    Idle,
    /// A request body not complete within the body deadline.
    BodyDeadline,
    /// At the cap: the connection idle the longest, to make room for a new one.
    LimitOldest,
    /// At the cap with every connection busy: the new one.
    LimitNew,
}

impl Closed {
    /// Every reason, in the order `/metrics` lists them.
    pub const ALL: [Closed; 5] = [
        Closed::HeaderDeadline,
        Closed::Idle,
        Closed::BodyDeadline,
        Closed::LimitOldest,
        Closed::LimitNew,
    ];

    /// The label value.
    pub fn name(self) -> &'static str {
        match self {
            Closed::HeaderDeadline => "header_deadline",
            Closed::Idle => "idle",
            Closed::BodyDeadline => "body_deadline",
            Closed::LimitOldest => "limit_oldest",
            Closed::LimitNew => "limit_new",
        }
    }
}

/// The connections' counters, read by `/metrics`.
#[derive(Debug, Default)]
pub struct Counters {
    /// Connections open now.
    pub(super) open: AtomicU64,
    /// The cap ([`Limits::connections`]); 0 until the server listens.
    pub(super) limit: AtomicU64,
    /// Connections closed by the server, by [`Closed`] (its discriminant).
    pub(super) closed: [AtomicU64; 5],
    /// Failed `accept`s but for connections reset before they were accepted.
    pub(super) accept_errors: AtomicU64,
}

impl Counters {
    /// Connections closed for `why` so far.
    pub(super) fn closed(&self, why: Closed) -> u64 {
        self.closed[why as usize].load(Ordering::Relaxed)
    }
}

/// A listener on `addr` (with `SO_REUSEADDR`, as tokio's own bind) with a queue of [`BACKLOG`].
pub fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    #[cfg(not(windows))]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}

/// Serves `state`'s router on `listener` until `stop` is done, under `limits`; then lets the
/// connections finish their requests (for [`DRAIN`] at most).
pub async fn serve(
    listener: TcpListener,
    state: Arc<AppState>,
    limits: Limits,
    stop: impl Future<Output = ()>,
) {
    let router = super::router(state.clone());
    let shared = Arc::new(Shared {
        table: Mutex::default(),
        limits,
        state,
        logs: Default::default(),
        accept_log: Gate::default(),
        closed: Notify::new(),
    });
    shared
        .counters()
        .limit
        .store(limits.connections as u64, Ordering::Relaxed);
    let (stopping_tx, stopping) = watch::channel(false);
    let mut stop = pin!(stop);
    loop {
        let accepted = tokio::select! {
            accepted = async {
                shared.room().await;
                listener.accept().await
            } => accepted,
            () = &mut stop => break,
        };
        match accepted {
            Ok((stream, peer)) => shared.admit(stream, peer, &router, &stopping),
            Err(e) if reset_before_accepted(&e) => {}
            Err(e) => {
                shared.accept_failed(&e);
                tokio::select! {
                    () = tokio::time::sleep(ACCEPT_BACKOFF) => {}
                    () = &mut stop => break,
                }
            }
        }
    }
    drop(listener);
    stopping_tx.send_replace(true);
    shared.drain(DRAIN).await;
}

/// A connection that went away between the kernel's queue and `accept`: nothing to wait for.
fn reset_before_accepted(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionRefused
    )
}

/// What the accept loop and the connections' tasks share.
struct Shared {
    table: Mutex<Table>,
    limits: Limits,
    /// For its counters (`state.metrics.connections`).
    state: Arc<AppState>,
    /// One per [`Closed`] reason.
    logs: [Gate; 5],
    accept_log: Gate,
    /// Told each time a connection closes (stopping waits for the last).
    closed: Notify,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    fn counters(&self) -> &Counters {
        &self.state.metrics.connections
    }

    /// Serves a new connection, making room at the cap.
    fn admit(
        self: &Arc<Self>,
        stream: TcpStream,
        peer: SocketAddr,
        router: &Router,
        stopping: &watch::Receiver<bool>,
    ) {
        let open = lock(&self.table).entries.len();
        if open >= self.limits.connections {
            let oldest = lock(&self.table).evict();
            match oldest {
                Some(old) => self.closed(Closed::LimitOldest, old),
                None => return self.closed(Closed::LimitNew, peer),
            }
        }
        let (id, close) = {
            let mut table = lock(&self.table);
            let opened = table.open(peer, Instant::now());
            self.counters()
                .open
                .store(table.entries.len() as u64, Ordering::Relaxed);
            opened
        };
        let conn = Arc::new(Conn {
            id,
            peer,
            close,
            heard: AtomicBool::new(false),
            shared: self.clone(),
        });
        tokio::spawn(connection(conn, stream, router.clone(), stopping.clone()));
    }

    /// Waits until fewer than the cap and `SLACK` connections are open: the accept loop would
    /// otherwise outrun the tasks of the connections it closed for room, which close their sockets
    /// when they next run. Meanwhile new connections wait in the kernel's queue, holding no file of
    /// this process.
    async fn room(&self) {
        loop {
            // Made before the count is read, so that a close in between still wakes it.
            let closed = self.closed.notified();
            if lock(&self.table).entries.len() < self.limits.connections + SLACK {
                return;
            }
            closed.await;
        }
    }

    /// Counts and logs a connection closed for `why`.
    fn closed(&self, why: Closed, peer: SocketAddr) {
        self.counters().closed[why as usize].fetch_add(1, Ordering::Relaxed);
        let Some(not_logged) = self.logs[why as usize].pass(Instant::now()) else {
            return;
        };
        let (limit, header_s, body_s) = (
            self.limits.connections,
            self.limits.header.as_secs_f64(),
            self.limits.body.as_secs_f64(),
        );
        match why {
            Closed::HeaderDeadline => warn!(
                %peer,
                not_logged, "closed a connection that sent no whole request head within {header_s} s"
            ),
            Closed::Idle => debug!(%peer, not_logged, "closed a connection idle for {header_s} s"),
            Closed::BodyDeadline => warn!(
                %peer,
                not_logged,
                "answered 408 and closed a connection whose request body was not complete within {body_s} s"
            ),
            Closed::LimitOldest => warn!(
                %peer,
                not_logged,
                "at the limit of {limit} connections: closed the one idle the longest to make room"
            ),
            Closed::LimitNew => warn!(
                %peer,
                not_logged,
                "at the limit of {limit} connections, none idle: closed the new one"
            ),
        }
    }

    /// Counts and logs a failed `accept`, and closes the connection idle the longest: the failure
    /// is most likely for want of files.
    fn accept_failed(&self, e: &io::Error) {
        self.counters()
            .accept_errors
            .fetch_add(1, Ordering::Relaxed);
        let oldest = lock(&self.table).evict();
        if let Some(old) = oldest {
            self.closed(Closed::LimitOldest, old);
        }
        if let Some(not_logged) = self.accept_log.pass(Instant::now()) {
            warn!(
                error = %e,
                not_logged,
                "cannot accept a connection; trying again in {} ms",
                ACCEPT_BACKOFF.as_millis()
            );
        }
    }

    /// Waits until every connection has closed, for `within` at most.
    async fn drain(&self, within: Duration) {
        let end = Instant::now() + within;
        loop {
            // Made before the count is read, so that a close in between still wakes it.
            let closed = self.closed.notified();
            let open = lock(&self.table).entries.len();
            if open == 0 {
                return;
            }
            if tokio::time::timeout_at(end, closed).await.is_err() {
                info!(
                    open,
                    "stopping with {open} connections still open after {} s",
                    within.as_secs()
                );
                return;
            }
        }
    }
}

/// The open connections, and which may be closed to make room: the idle ones, oldest first.
#[derive(Debug, Default)]
struct Table {
    next: u64,
    entries: HashMap<u64, Entry>,
    /// The connections not answering a request, by since when.
    idle: BTreeSet<(Instant, u64)>,
}

#[derive(Debug)]
struct Entry {
    peer: SocketAddr,
    close: Arc<Notify>,
    /// Since when it has been idle; none while the router answers it, or once closed for room.
    since: Option<Instant>,
    /// Closed for room: never idle again.
    evicted: bool,
}

impl Table {
    /// A new connection, idle from `now`: its id and what closes it.
    fn open(&mut self, peer: SocketAddr, now: Instant) -> (u64, Arc<Notify>) {
        let id = self.next;
        self.next += 1;
        let close = Arc::new(Notify::new());
        self.entries.insert(
            id,
            Entry {
                peer,
                close: close.clone(),
                since: Some(now),
                evicted: false,
            },
        );
        self.idle.insert((now, id));
        (id, close)
    }

    /// Connection `id`'s request is with the router.
    fn busy(&mut self, id: u64) {
        if let Some(since) = self.entries.get_mut(&id).and_then(|e| e.since.take()) {
            self.idle.remove(&(since, id));
        }
    }

    /// Connection `id` was answered at `now`.
    fn idle(&mut self, id: u64, now: Instant) {
        if let Some(e) = self.entries.get_mut(&id) {
            if e.since.is_none() && !e.evicted {
                e.since = Some(now);
                self.idle.insert((now, id));
            }
        }
    }

    /// Connection `id` has closed.
    fn close(&mut self, id: u64) {
        if let Some(since) = self.entries.remove(&id).and_then(|e| e.since) {
            self.idle.remove(&(since, id));
        }
    }

    /// Tells the connection idle the longest to close; its peer, or none when none is idle.
    fn evict(&mut self) -> Option<SocketAddr> {
        let (_, id) = self.idle.pop_first()?;
        let e = self.entries.get_mut(&id)?;
        e.since = None;
        e.evicted = true;
        e.close.notify_one();
        Some(e.peer)
    }
}

/// One connection's place in the table, shared by its task, its service, its socket and the body
/// being read; the last of them to go takes it out of the table.
struct Conn {
    id: u64,
    peer: SocketAddr,
    /// Told when the connection is to close for room.
    close: Arc<Notify>,
    /// Whether a byte came since it opened or since its last answer: a head begun.
    heard: AtomicBool,
    shared: Arc<Shared>,
}

impl Conn {
    fn busy(&self) {
        lock(&self.shared.table).busy(self.id);
    }

    /// Whether it is idle: not answering a request (nor closed for room).
    fn idle(&self) -> bool {
        lock(&self.shared.table)
            .entries
            .get(&self.id)
            .is_some_and(|e| e.since.is_some())
    }

    fn answered(&self) {
        self.heard.store(false, Ordering::Relaxed);
        lock(&self.shared.table).idle(self.id, Instant::now());
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        let open = {
            let mut table = lock(&self.shared.table);
            table.close(self.id);
            table.entries.len()
        };
        self.shared
            .counters()
            .open
            .store(open as u64, Ordering::Relaxed);
        self.shared.closed.notify_waiters();
    }
}

/// Serves one connection until it ends or is closed for room; once stopping, until it has answered
/// the request it is answering, or for `STOP_GRACE` when not answering one.
async fn connection(
    conn: Arc<Conn>,
    stream: TcpStream,
    router: Router,
    mut stopping: watch::Receiver<bool>,
) {
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(conn.shared.limits.header);
    let io = TokioIo::new(Heard {
        stream,
        conn: conn.clone(),
    });
    let service = Answer {
        router: TowerToHyperService::new(router),
        conn: conn.clone(),
    };
    let mut served = pin!(http.serve_connection(io, service));
    let close = conn.close.clone();
    let mut shutting = false;
    // Once stopping, when the connection is not being answered: when to drop it.
    let mut cut: Option<Instant> = None;
    let ended = loop {
        tokio::select! {
            ended = served.as_mut() => break Some(ended),
            () = close.notified() => break None,
            () = tokio::time::sleep_until(cut.unwrap_or_else(Instant::now)), if cut.is_some() => {
                break None;
            }
            _ = stopping.wait_for(|s| *s), if !shutting => {
                shutting = true;
                // hyper closes a connection between requests at once, lets the one it answers
                // finish, and would wait for the rest of a head up to its deadline.
                served.as_mut().graceful_shutdown();
                if conn.idle() {
                    cut = Some(Instant::now() + STOP_GRACE);
                }
            }
        }
    };
    match ended {
        Some(Err(e)) if e.is_timeout() => {
            let why = if conn.heard.load(Ordering::Relaxed) {
                Closed::HeaderDeadline
            } else {
                Closed::Idle
            };
            conn.shared.closed(why, conn.peer);
        }
        Some(Err(e)) => debug!(peer = %conn.peer, error = %e, "connection ended"),
        Some(Ok(())) | None => {}
    }
}

/// The connection's service: the router, with the request body under the body deadline and the
/// connection's state kept in the table.
struct Answer {
    router: TowerToHyperService<Router>,
    conn: Arc<Conn>,
}

type Answering = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

impl hyper::service::Service<Request<Incoming>> for Answer {
    type Response = Response;
    type Error = Infallible;
    type Future = Answering;

    fn call(&self, req: Request<Incoming>) -> Answering {
        let conn = self.conn.clone();
        let late = Arc::new(AtomicBool::new(false));
        let req = if req.body().is_end_stream() {
            conn.busy();
            req.map(axum::body::Body::new)
        } else {
            let limit = conn.shared.limits.body;
            let (c, l) = (conn.clone(), late.clone());
            req.map(|body| axum::body::Body::new(Deadline::new(body, limit, c, l)))
        };
        let answering = self.router.call(req);
        Box::pin(async move {
            let Ok(mut answer) = answering.await;
            if late.load(Ordering::Relaxed) {
                conn.shared.closed(Closed::BodyDeadline, conn.peer);
                answer = too_late(conn.shared.limits.body);
            }
            conn.answered();
            Ok(answer)
        })
    }
}

/// 408, closing the connection (the rest of the body is not read).
fn too_late(limit: Duration) -> Response {
    let message = format!(
        "the request body was not complete within {} s of its head",
        limit.as_secs_f64()
    );
    let mut answer = super::error(StatusCode::REQUEST_TIMEOUT, &message);
    answer
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    answer
}

/// A request body that fails once its deadline has passed; the connection is busy (not closed for
/// room) from when the body is complete.
struct Deadline {
    body: Incoming,
    timer: Pin<Box<Sleep>>,
    conn: Arc<Conn>,
    /// Set when the deadline passed first.
    late: Arc<AtomicBool>,
    complete: bool,
}

impl Deadline {
    fn new(body: Incoming, limit: Duration, conn: Arc<Conn>, late: Arc<AtomicBool>) -> Self {
        Deadline {
            body,
            timer: Box::pin(tokio::time::sleep(limit)),
            conn,
            late,
            complete: false,
        }
    }
}

/// The error a late body ends with.
#[derive(Debug)]
struct LateBody;

impl std::fmt::Display for LateBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the request body was not complete within the deadline")
    }
}

impl std::error::Error for LateBody {}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl Body for Deadline {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        match Pin::new(&mut this.body).poll_frame(cx) {
            Poll::Pending => {
                if !this.complete && this.timer.as_mut().poll(cx).is_ready() {
                    this.late.store(true, Ordering::Relaxed);
                    return Poll::Ready(Some(Err(Box::new(LateBody))));
                }
                Poll::Pending
            }
            Poll::Ready(frame) => {
                if !this.complete && (frame.is_none() || this.body.is_end_stream()) {
                    this.complete = true;
                    this.conn.busy();
                }
                Poll::Ready(frame.map(|f| f.map_err(Into::into)))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// The connection's socket, noting when a byte comes (for [`Conn::heard`]).
struct Heard {
    stream: TcpStream,
    conn: Arc<Conn>,
}

impl AsyncRead for Heard {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let read = Pin::new(&mut this.stream).poll_read(cx, buf);
        if buf.filled().len() > before {
            this.conn.heard.store(true, Ordering::Relaxed);
        }
        read
    }
}

impl AsyncWrite for Heard {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

/// At most one log line every [`LOG_EVERY`], counting the events it did not log.
#[derive(Debug, Default)]
struct Gate(Mutex<(Option<Instant>, u64)>);

impl Gate {
    /// Whether to log an event at `now`; if so, how many went unlogged since the last line.
    fn pass(&self, now: Instant) -> Option<u64> {
        let mut g = lock(&self.0);
        match g.0 {
            Some(last) if now.saturating_duration_since(last) < LOG_EVERY => {
                g.1 += 1;
                None
            }
            _ => {
                g.0 = Some(now);
                Some(std::mem::take(&mut g.1))
            }
        }
    }
}

#[cfg(test)]
#[path = "listen_tests.rs"]
mod tests;
