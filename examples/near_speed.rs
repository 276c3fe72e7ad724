//! `near_speed`: how fast near-duplicate signatures are computed on one core, from the text to the
//! trial values and combination keys (tokens, shingles, hashes, minima, keys), for
//! `tools/near-bench/run.sh`, which measures the Python peers in the same run.
//!
//! ```text
//! cargo run --release --example near_speed -- corpus.jsonl [--rounds 5]
//! ```
//!
//! Reads the `text_t` of every line, signs them all `--rounds` times on the calling thread, and prints
//! one JSON line: documents, mean distinct shingles, best and median documents per second, and the
//! rate by the thread's own processor time over all the rounds (`cpu_docs_per_s`, Linux only), which
//! other processes on a busy machine disturb less. With `NEAR_SPEED_PARTS=1` it also prints the same
//! rates for the two halves (text to shingle hashes; hashes to trial values and keys) on standard
//! error.

use std::io::BufRead;
use std::time::Instant;

use solr_dedup::signature::near::{self, NearParams, NearSigner};

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .ok_or_else(|| anyhow::anyhow!("usage: near_speed CORPUS.jsonl [--rounds N]"))?;
    let mut rounds = 5;
    while let Some(a) = args.next() {
        if a == "--rounds" {
            rounds = args.next().and_then(|n| n.parse().ok()).unwrap_or(5);
        }
    }
    let file = std::io::BufReader::new(std::fs::File::open(&path)?);
    let mut texts = Vec::new();
    for line in file.lines() {
        let doc: serde_json::Value = serde_json::from_str(&line?)?;
        if let Some(t) = doc.get("text_t").and_then(|t| t.as_str()) {
            texts.push(t.to_owned());
        }
    }
    let params = NearParams::default();
    let shingles: usize = texts
        .iter()
        .map(|t| near::shingles(&near::tokens(t), params.shingle).len())
        .sum();
    let bytes: usize = texts.iter().map(String::len).sum();
    let signer = NearSigner::new(params);
    let mut check = 0i64;
    let whole = measure(rounds, texts.len(), || {
        for text in &texts {
            if let Some(s) = signer.sign(text) {
                check = check.wrapping_add(s.keys[0]);
            }
        }
    });
    if std::env::var_os("NEAR_SPEED_PARTS").is_some() {
        let mut all: Vec<Vec<u64>> = vec![Vec::new(); texts.len()];
        let first = measure(rounds, texts.len(), || {
            for (text, hashes) in texts.iter().zip(&mut all) {
                near::shingle_hashes(text, params.shingle, hashes);
            }
        });
        eprintln!("shingle hashes: {first}");
        let second = measure(rounds, texts.len(), || {
            for h in &all {
                check = check.wrapping_add(signer.sign_hashes(h).map_or(0, |s| s.keys[0]));
            }
        });
        eprintln!("minima and keys: {second}");
    }
    println!(
        "{}",
        serde_json::json!({
            "impl": "solr-dedup NearSigner (tokens, shingles, 84 hashes, 15 keys)",
            "docs": texts.len(),
            "mean_bytes": bytes / texts.len().max(1),
            "mean_shingles": shingles as f64 / texts.len().max(1) as f64,
            "best_docs_per_s": whole.best.round(),
            "median_docs_per_s": whole.median.round(),
            "cpu_docs_per_s": whole.cpu.map(f64::round),
            "check": check,
        })
    );
    Ok(())
}

/// The rates of some rounds of work on `docs` documents.
struct Rates {
    /// The best and median by the wall clock.
    best: f64,
    median: f64,
    /// By the thread's own processor time over all the rounds (Linux only), which leaves out the
    /// time that other processes on a busy machine had the core. The kernel's count moves in
    /// scheduler ticks, so it is taken over all the rounds at once rather than per round.
    cpu: Option<f64>,
}

fn measure(rounds: usize, docs: usize, mut work: impl FnMut()) -> Rates {
    let rounds = rounds.max(1);
    let mut rates = Vec::new();
    let cpu = thread_cpu_ns();
    for _ in 0..rounds {
        let t = Instant::now();
        work();
        rates.push(docs as f64 / t.elapsed().as_secs_f64());
    }
    let cpu = cpu
        .zip(thread_cpu_ns())
        .map(|(a, b)| (rounds * docs) as f64 / ((b - a) as f64 / 1e9));
    rates.sort_by(|a, b| a.total_cmp(b));
    Rates {
        best: rates[rates.len() - 1],
        median: rates[rates.len() / 2],
        cpu,
    }
}

impl std::fmt::Display for Rates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "best {:.0} docs/s, median {:.0}", self.best, self.median)?;
        if let Some(cpu) = self.cpu {
            write!(f, ", {cpu:.0} by processor time")?;
        }
        Ok(())
    }
}

/// The nanoseconds this thread has run, from `/proc/thread-self/schedstat`.
fn thread_cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}
