//! Load on `solr-dedup serve`: CONCURRENCY clients, each sending prediction requests one after the
//! other for SECONDS, each request BATCH URLs from a file (cycled); prints the requests, the errors
//! (any status but 200, or a transport error) and the latency percentiles.
//!
//! Run (figures in `BENCHMARKS.md`):
//!
//! ```text
//! solr-dedup serve --input signed.jsonl --rules rules.json --listen 127.0.0.1:8987 &
//! cargo run --release --example serve_load -- http://127.0.0.1:8987 query-urls.txt 200 10 10
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 5 {
        eprintln!("usage: serve_load BASE_URL URL_FILE CONCURRENCY SECONDS BATCH");
        std::process::exit(2);
    }
    let base = args[0].trim_end_matches('/').to_owned();
    let urls: Vec<String> = std::fs::read_to_string(&args[1])
        .expect("read the URL file")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect();
    let concurrency: usize = args[2].parse().expect("CONCURRENCY");
    let seconds: u64 = args[3].parse().expect("SECONDS");
    let batch: usize = args[4].parse().expect("BATCH");
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(concurrency)
            .build()
            .expect("client");
        let urls = Arc::new(urls);
        let errors = Arc::new(AtomicU64::new(0));
        let end = Instant::now() + Duration::from_secs(seconds);
        let mut tasks = Vec::new();
        for c in 0..concurrency {
            let (client, urls, errors, base) =
                (client.clone(), urls.clone(), errors.clone(), base.clone());
            tasks.push(tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut at = c * batch;
                while Instant::now() < end {
                    let body: Vec<&String> =
                        (0..batch).map(|i| &urls[(at + i) % urls.len()]).collect();
                    at += batch * concurrency;
                    let t = Instant::now();
                    let ok = match client
                        .post(format!("{base}/api/urls/predict"))
                        .header("Content-Type", "application/json")
                        .body(serde_json::json!({ "urls": body }).to_string())
                        .send()
                        .await
                    {
                        Ok(r) if r.status() == 200 => r.bytes().await.is_ok(),
                        _ => false,
                    };
                    latencies.push(t.elapsed());
                    if !ok {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                }
                latencies
            }));
        }
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await.expect("task"));
        }
        all.sort();
        let pct = |p: f64| all[((all.len() as f64 * p) as usize).min(all.len() - 1)];
        println!(
            "{} requests ({} URLs each) in {seconds} s from {concurrency} clients: {:.0} requests/s, {} errors; \
             latency p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            all.len(),
            batch,
            all.len() as f64 / seconds as f64,
            errors.load(Ordering::Relaxed),
            pct(0.5).as_secs_f64() * 1e3,
            pct(0.9).as_secs_f64() * 1e3,
            pct(0.99).as_secs_f64() * 1e3,
            all.last().unwrap().as_secs_f64() * 1e3,
        );
    });
}
