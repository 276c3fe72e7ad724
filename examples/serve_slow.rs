//! Slow clients against `solr-dedup serve` (issue 41): CONNECTIONS connections that each send one
//! byte of a request head and hold for SECONDS (with `reopen`, one the server closed is opened again
//! and sends its byte again, so that CONNECTIONS stay open: a flood), while `/healthz` is asked every 250 ms on a connection
//! of its own; prints the probes' latencies (connect to the end of the answer), the failures
//! (no 200, or no answer within 10 s) and how many slow connections the server closed.
//!
//! Run (figures in `BENCHMARKS.md`):
//!
//! ```text
//! prlimit --nofile=256:256 -- solr-dedup serve --listen 127.0.0.1:18990 --state-dir /tmp/slow-state &
//! cargo run --release --example serve_slow -- 127.0.0.1:18990 300 15 hold
//! cargo run --release --example serve_slow -- 127.0.0.1:18990 300 15 reopen
//! ```

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// Whether the server has closed `s` (an end of stream or a reset, without blocking).
fn closed(s: &TcpStream) -> bool {
    let mut byte = [0u8; 1];
    s.set_nonblocking(true).expect("nonblocking");
    let gone = match s.peek(&mut byte) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() != ErrorKind::WouldBlock,
    };
    let _ = s.set_nonblocking(false);
    gone
}

/// A connection that sent one byte of a head.
fn slow(addr: SocketAddr) -> std::io::Result<TcpStream> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(10))?;
    s.write_all(b"G")?;
    Ok(s)
}

/// One `GET /healthz`: its time, or why it failed.
fn probe(addr: SocketAddr) -> Result<Duration, String> {
    let start = Instant::now();
    let mut s =
        TcpStream::connect_timeout(&addr, Duration::from_secs(10)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(|e| e.to_string())?;
    let head = format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    s.write_all(head.as_bytes()).map_err(|e| e.to_string())?;
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).map_err(|e| e.to_string())?;
    if !answer.starts_with(b"HTTP/1.1 200 ") {
        return Err(format!("answered {:?}", String::from_utf8_lossy(&answer)));
    }
    Ok(start.elapsed())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 4 || !["hold", "reopen"].contains(&args[3].as_str()) {
        eprintln!("usage: serve_slow HOST:PORT CONNECTIONS SECONDS hold|reopen");
        std::process::exit(2);
    }
    let reopen = args[3] == "reopen";
    let addr: SocketAddr = args[0].parse().expect("HOST:PORT");
    let connections: usize = args[1].parse().expect("CONNECTIONS");
    let seconds: u64 = args[2].parse().expect("SECONDS");
    let begun = Instant::now();
    let mut held: Vec<TcpStream> = (0..connections)
        .map(|_| slow(addr).expect("open a slow connection"))
        .collect();
    println!(
        "{connections} one-byte connections opened in {:.2} s",
        begun.elapsed().as_secs_f64()
    );
    let end = Instant::now() + Duration::from_secs(seconds);
    // Keep CONNECTIONS of them open, on a thread of its own: the server closes some to make room,
    // and all at its header deadline.
    let holder = std::thread::spawn(move || {
        let mut reopened = 0u64;
        while Instant::now() < end {
            for s in held.iter_mut().filter(|_| reopen) {
                if closed(s) {
                    if let Ok(again) = slow(addr) {
                        *s = again;
                        reopened += 1;
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        reopened
    });
    let (mut times, mut failures) = (Vec::new(), Vec::new());
    while Instant::now() < end {
        match probe(addr) {
            Ok(t) => times.push(t),
            Err(e) => failures.push(e),
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    let reopened = holder.join().expect("the holding thread");
    times.sort();
    let pct = |p: f64| {
        times
            .get(((times.len() as f64 * p).ceil() as usize).saturating_sub(1))
            .map_or(f64::NAN, |d| d.as_secs_f64() * 1000.0)
    };
    println!(
        "healthz probes: {} answered, {} failed; p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        times.len(),
        failures.len(),
        pct(0.5),
        pct(0.9),
        pct(0.99),
        pct(1.0)
    );
    if reopen {
        println!("slow connections the server closed and that were opened again: {reopened}");
    }
    for f in failures.iter().take(5) {
        println!("failure: {f}");
    }
}
