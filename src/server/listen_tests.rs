//! The cap's table, the log gate, and a server on a loopback port under short deadlines and a cap
//! of four: slow connections pushed out for `/healthz`, a head that never ends, a late body.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::*;
use crate::server::{AppState, Metrics, Runs};

#[test]
fn the_cap_stays_below_the_file_limit() {
    for (files, cap) in [
        (Some(20), 8),
        (Some(256), 128),
        (Some(1024), 768),
        (Some(4096), 3072),
        (Some(65_536), 4096),
        (None, 4096),
    ] {
        assert_eq!(connection_cap(files), cap, "{files:?}");
    }
    for files in [200, 256, 300, 1024, 10_000] {
        assert!(connection_cap(Some(files)) as u64 + RESERVE <= files);
    }
}

fn peer(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

#[test]
fn the_connection_idle_the_longest_makes_room_and_a_busy_one_never() {
    let t0 = Instant::now();
    let at = |s: u64| t0 + Duration::from_secs(s);
    let mut table = Table::default();
    let (a, _) = table.open(peer(1), at(0));
    let (b, _) = table.open(peer(2), at(1));
    let (c, close_c) = table.open(peer(3), at(2));
    table.busy(a);
    assert_eq!(table.evict(), Some(peer(2)));
    // Closed for room, it is not idle again when its answer ends.
    table.idle(b, at(3));
    table.idle(a, at(4));
    assert_eq!(table.evict(), Some(peer(3)));
    assert!(close_c.notified().now_or_never().is_some(), "told to close");
    assert_eq!(table.evict(), Some(peer(1)));
    assert_eq!(table.evict(), None);
    assert_eq!(table.entries.len(), 3, "open until their tasks close them");
    for id in [a, b, c] {
        table.close(id);
    }
    assert!(table.entries.is_empty() && table.idle.is_empty());
}

/// `Future::now_or_never` without futures-util.
trait NowOrNever: std::future::Future + Sized {
    fn now_or_never(self) -> Option<Self::Output> {
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        match pin!(self).poll(&mut cx) {
            Poll::Ready(v) => Some(v),
            Poll::Pending => None,
        }
    }
}

impl<F: std::future::Future> NowOrNever for F {}

#[test]
fn the_gate_logs_the_first_then_once_an_interval_with_the_count_between() {
    let gate = Gate::default();
    let t0 = Instant::now();
    assert_eq!(gate.pass(t0), Some(0));
    for s in 1..5 {
        assert_eq!(gate.pass(t0 + Duration::from_secs(s)), None);
    }
    assert_eq!(gate.pass(t0 + LOG_EVERY), Some(4));
    assert_eq!(gate.pass(t0 + LOG_EVERY), None);
    assert_eq!(gate.pass(t0 + LOG_EVERY * 3), Some(1));
}

/// A server on a loopback port under `limits`; its address, its state, and what stops it.
async fn start(
    limits: Limits,
) -> (
    SocketAddr,
    Arc<AppState>,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
    tempfile::TempDir,
) {
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
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let stop = async move {
        let _ = stop_rx.await;
    };
    let served = tokio::spawn(serve(listener, state.clone(), limits, stop));
    (addr, state, stop_tx, served, dir)
}

/// Everything the server sends until it closes the connection (bounded: 10 s).
async fn until_closed(s: &mut TcpStream) -> String {
    let mut got = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut got))
        .await
        .expect("closed by the server within 10 s")
        .expect("a clean close");
    String::from_utf8_lossy(&got).into_owned()
}

/// A request for `path` closing the connection after its answer; the answer.
async fn get(addr: SocketAddr, path: &str) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let head = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    s.write_all(head.as_bytes()).await.unwrap();
    until_closed(&mut s).await
}

const SHORT: Limits = Limits {
    header: Duration::from_millis(300),
    body: Duration::from_millis(300),
    connections: 4,
};

#[tokio::test]
async fn slow_connections_make_room_for_healthz_and_are_closed_at_their_deadlines() {
    let (addr, state, stop, served, _dir) = start(SHORT).await;
    let counters = &state.metrics.connections;
    // Ten connections that each send a byte: six pushed out for the next.
    let mut slow = Vec::new();
    for _ in 0..10 {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(b"G").await.unwrap();
        slow.push(s);
    }
    let answer = get(addr, "/healthz").await;
    assert!(answer.starts_with("HTTP/1.1 200 "), "{answer}");
    assert!(counters.closed(Closed::LimitOldest) >= 6);
    assert!(counters.open.load(Ordering::Relaxed) <= 4 + SLACK as u64);
    // The first was pushed out (reset if it went before its byte was read); the last is closed at
    // the header deadline: no answer, a close.
    let mut rest = Vec::new();
    let first = tokio::time::timeout(Duration::from_secs(10), slow[0].read_to_end(&mut rest));
    match first.await.expect("closed by the server within 10 s") {
        Ok(0) => {}
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset),
        Ok(n) => panic!("{n} bytes: {}", String::from_utf8_lossy(&rest)),
    }
    assert_eq!(until_closed(slow.last_mut().unwrap()).await, "");
    assert!(counters.closed(Closed::HeaderDeadline) >= 1);

    // A connection that sends nothing is closed as idle; so is one after its answer.
    let mut quiet = TcpStream::connect(addr).await.unwrap();
    assert_eq!(until_closed(&mut quiet).await, "");
    let mut kept = TcpStream::connect(addr).await.unwrap();
    let head = format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    kept.write_all(head.as_bytes()).await.unwrap();
    let answered = until_closed(&mut kept).await;
    assert!(answered.starts_with("HTTP/1.1 200 "), "{answered}");
    assert!(counters.closed(Closed::Idle) >= 2);

    // A body of 100 bytes of which 10 come: 408, and the connection closed.
    let mut late = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /api/urls/canonical HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"urls\": ["
    );
    late.write_all(head.as_bytes()).await.unwrap();
    let answer = until_closed(&mut late).await;
    assert!(answer.starts_with("HTTP/1.1 408 "), "{answer}");
    assert!(answer.contains("not complete within 0.3 s"), "{answer}");
    assert_eq!(counters.closed(Closed::BodyDeadline), 1);

    // The metrics list them.
    let metrics = get(addr, "/metrics").await;
    assert!(
        metrics.contains("solr_dedup_connections_closed_total{reason=\"body_deadline\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("solr_dedup_connections_limit 4"),
        "{metrics}"
    );

    // Stopping ends the loop; nothing is left open.
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), served)
        .await
        .expect("stopped")
        .unwrap();
    assert_eq!(counters.open.load(Ordering::Relaxed), 0);
}

#[tokio::test]
async fn at_a_cap_of_one_an_answered_connection_makes_room_for_the_next() {
    let limits = Limits {
        connections: 1,
        ..SHORT
    };
    let (addr, state, stop, served, _dir) = start(limits).await;
    // A request answered, then a second connection while the first is still open and idle: the
    // first makes room. (None idle, the new one would be closed: the table's test.)
    let mut first = TcpStream::connect(addr).await.unwrap();
    let head = format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    first.write_all(head.as_bytes()).await.unwrap();
    let mut buf = [0u8; 512];
    let n = first.read(&mut buf).await.unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200 "));
    let answer = get(addr, "/healthz").await;
    assert!(answer.starts_with("HTTP/1.1 200 "), "{answer}");
    assert_eq!(until_closed(&mut first).await, "");
    assert_eq!(state.metrics.connections.closed(Closed::LimitOldest), 1);
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), served)
        .await
        .expect("stopped")
        .unwrap();
}
