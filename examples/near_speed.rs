//! `near_speed`: how fast near-duplicate signatures are computed on one core, from the text to the
//! trial values and combination keys (tokens, shingles, hashes, minima, keys), for
//! `tools/near-bench/run.sh`, which measures the Python peers in the same run.
//!
//! ```text
//! cargo run --release --example near_speed -- corpus.jsonl [--rounds 5]
//! ```
//!
//! Reads the `text_t` of every line, signs them all `--rounds` times on the calling thread, and prints
//! one JSON line: documents, mean distinct shingles, best and median documents per second. With
//! `NEAR_SPEED_PARTS=1` it also prints the rates of the two halves (text to shingle hashes; hashes to
//! trial values and keys) on standard error.

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
    let mut rates = Vec::new();
    let mut check = 0i64;
    for _ in 0..rounds {
        let t = Instant::now();
        for text in &texts {
            if let Some(s) = signer.sign(text) {
                check = check.wrapping_add(s.keys[0]);
            }
        }
        rates.push(texts.len() as f64 / t.elapsed().as_secs_f64());
    }
    rates.sort_by(|a, b| a.total_cmp(b));
    if std::env::var_os("NEAR_SPEED_PARTS").is_some() {
        let mut hashes = Vec::new();
        let t = Instant::now();
        let mut all = Vec::new();
        for text in &texts {
            near::shingle_hashes(text, params.shingle, &mut hashes);
            all.push(hashes.clone());
        }
        eprintln!(
            "shingle hashes: {:.0} docs/s",
            texts.len() as f64 / t.elapsed().as_secs_f64()
        );
        let t = Instant::now();
        for h in &all {
            check = check.wrapping_add(signer.sign_hashes(h).map_or(0, |s| s.keys[0]));
        }
        eprintln!(
            "minima and keys: {:.0} docs/s",
            texts.len() as f64 / t.elapsed().as_secs_f64()
        );
    }
    println!(
        "{}",
        serde_json::json!({
            "impl": "solr-dedup NearSigner (tokens, shingles, 84 hashes, 15 keys)",
            "docs": texts.len(),
            "mean_bytes": bytes / texts.len().max(1),
            "mean_shingles": shingles as f64 / texts.len().max(1) as f64,
            "best_docs_per_s": rates.last().copied().unwrap_or(0.0).round(),
            "median_docs_per_s": rates[rates.len() / 2].round(),
            "check": check,
        })
    );
    Ok(())
}
