//! `serve` under slow clients (issue 41): a flood of one-byte connections under a low file limit
//! does not lock `/healthz` out, and a request head that never ends is closed at the header
//! deadline. Every loop here is bounded in count and time, and connects to 127.0.0.1 only.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::support::cmd::solr_dedup_under;
use crate::support::serve::{http, prometheus, Served};

/// The server's address (it listens on 127.0.0.1).
fn addr_of(server: &Served) -> SocketAddr {
    let addr: SocketAddr = server
        .base
        .strip_prefix("http://")
        .unwrap()
        .parse()
        .unwrap();
    assert!(addr.ip().is_loopback());
    addr
}

/// Waits (60 s at most) until the server has logged a line containing `text`; that line.
fn logged(server: &Served, text: &str) -> String {
    let end = Instant::now() + Duration::from_secs(60);
    loop {
        let log = server.log();
        if let Some(line) = log.lines().find(|l| l.contains(text)) {
            return line.to_owned();
        }
        assert!(Instant::now() < end, "no line with {text:?} in:\n{log}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Reads until the server closes `s`; panics if it has not within 60 s. A connection closed
/// before the server read its byte may end with a reset instead of an end of stream.
fn closed_by_the_server(s: &mut TcpStream, reset_too: bool) -> Vec<u8> {
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut got = Vec::new();
    match s.read_to_end(&mut got) {
        Ok(_) => got,
        Err(e) if reset_too && e.kind() == std::io::ErrorKind::ConnectionReset => got,
        Err(e) => panic!("not closed by the server: {e}; read {got:?}"),
    }
}

#[test]
fn serve_answers_healthz_while_300_one_byte_connections_are_held_under_a_file_limit_of_256() {
    let token = "0123456789abcdef0123";
    let mut cmd = solr_dedup_under("prlimit", &["--nofile=256:256", "--"]);
    cmd.arg("serve").env("SOLR_DEDUP_TOKEN", token);
    let server = Served::spawn(cmd);
    logged(
        &server,
        "at most 128 connections at once, below the soft limit of 256 open files",
    );
    let addr = addr_of(&server);
    // 300 connections, each sending one byte of a head and holding: more than the server's files.
    let mut held = Vec::new();
    for _ in 0..300 {
        let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(10)).unwrap();
        // The server may already have closed it to make room for a later one.
        let _ = s.write_all(b"G");
        held.push(s);
    }
    // While the client holds them all: /healthz, and with the token /api/status and /metrics.
    let healthz = http()
        .get(format!("{}/healthz", server.base))
        .send()
        .unwrap();
    assert_eq!(healthz.status().as_u16(), 200);
    let bearer = format!("Bearer {token}");
    let (status, text) = server.get("/api/status", &[("Authorization", &bearer)]);
    assert_eq!(status, 200, "{text}");
    let (status, text) = server.get("/metrics", &[("Authorization", &bearer)]);
    assert_eq!(status, 200);
    let m = prometheus(&text);
    assert_eq!(m["solr_dedup_connections_limit"], 128.0);
    assert!(m["solr_dedup_connections_open"] <= 128.0 + 16.0, "{text}");
    let made_room = m[r#"solr_dedup_connections_closed_total{reason="limit_oldest"}"#];
    assert!(made_room >= 1.0, "{text}");
    logged(
        &server,
        "at the limit of 128 connections: closed the one idle the longest",
    );
    // The first connection was one of those closed to make room (or, later, at the deadline).
    let first = closed_by_the_server(&mut held[0], true);
    assert!(first.is_empty(), "{}", String::from_utf8_lossy(&first));
    drop(held);
    assert_eq!(server.get("/healthz", &[]).0, 200);
}

#[test]
fn serve_closes_a_connection_whose_request_head_never_ends_at_the_header_deadline() {
    let server = Served::start(&[], &[]);
    let addr = addr_of(&server);
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(10)).unwrap();
    let head = format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nX-Slow: ");
    s.write_all(head.as_bytes()).unwrap();
    // No answer: an end of stream once the deadline has passed.
    let answer = closed_by_the_server(&mut s, false);
    assert!(answer.is_empty(), "{}", String::from_utf8_lossy(&answer));
    let line = logged(
        &server,
        "closed a connection that sent no whole request head within 10 s",
    );
    assert!(line.contains("WARN"), "{line}");
    let m = server.metrics();
    assert_eq!(
        m[r#"solr_dedup_connections_closed_total{reason="header_deadline"}"#],
        1.0
    );
}
