//! Throughput of the exact and fuzzy signatures, both schemes, and of the near-duplicate signature
//! (whole, and its two halves), on English-like pages of 1 KB, 10 KB and 100 KB.
//!
//! The pages are generated here from a fixed seed, so every run and every machine measures the same
//! bytes: sentences of common English words with capitals, commas, full stops, the odd number and a few
//! non-ASCII words ("Köln", "café") so that the non-ASCII paths are part of the measurement. Each benchmark
//! checks its own output inside the loop against the value computed once before it, so a change that
//! makes the code fast by making it wrong fails the benchmark instead of improving the figure.
//!
//! Run: `cargo bench --bench signatures`; figures are recorded in `BENCHMARKS.md`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use solr_dedup::signature::near::{self, NearParams, NearSigner};
use solr_dedup::signature::{Scheme, Signer};

#[rustfmt::skip]
const WORDS: &[&str] = &[
    "the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with", "be", "by", "on",
    "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an", "had",
    "they", "you", "were", "their", "one", "all", "we", "can", "her", "has", "there", "been", "if",
    "more", "when", "will", "would", "who", "so", "no", "she", "other", "its", "may", "these",
    "about", "than", "into", "some", "could", "them", "only", "time", "new", "people", "first",
    "after", "also", "many", "years", "most", "made", "world", "city", "over", "such", "between",
    "where", "should", "because", "each", "being", "through", "government", "during", "school",
    "system", "before", "under", "university", "number", "water", "against", "public", "second",
    "family", "history", "search", "engine", "index", "document", "page", "crawler", "content",
    "signature", "duplicate", "network", "server", "software", "information", "language",
    "research", "market", "library", "station", "railway", "village", "river", "mountain",
    "church", "music", "album", "season", "league", "football", "election", "council", "museum",
    "company", "service", "national", "international", "development", "population", "district",
    "building", "century", "published", "included", "announced", "released", "received",
    "according", "following", "including", "important", "different", "available", "community",
    "children", "together", "already", "another", "therefore", "however", "although", "without",
    "visitors", "weather", "morning", "evening", "summer", "winter", "coffee", "breakfast",
];

/// Rare words that exercise the multi-byte paths: Latin-1 letters, a German sharp s, a ligature.
const FOREIGN: &[&str] = &[
    "Köln", "café", "Zürich", "naïve", "Straße", "résumé", "São", "Ærø",
];

/// SplitMix64: tiny, fixed, good enough to pick words.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// An English-like page of exactly `size` bytes (cut at a char boundary at or below it).
fn page(size: usize, seed: u64) -> String {
    let mut rng = Rng(seed);
    let mut out = String::with_capacity(size + 64);
    // A title line first, as a crawled page's text usually has.
    out.push_str("Weather and coffee in Köln: a visitor's guide\n");
    while out.len() < size {
        let words = 6 + rng.below(14);
        for w in 0..words {
            let roll = rng.below(100);
            let word = if roll < 2 {
                FOREIGN[rng.below(FOREIGN.len())].to_string()
            } else if roll < 4 {
                (1800 + rng.below(230)).to_string()
            } else {
                WORDS[rng.below(WORDS.len())].to_string()
            };
            if w == 0 {
                let mut chars = word.chars();
                if let Some(first) = chars.next() {
                    out.extend(first.to_uppercase());
                    out.push_str(chars.as_str());
                }
            } else {
                out.push(' ');
                out.push_str(&word);
            }
            if w + 1 < words && rng.below(10) == 0 {
                out.push(',');
            }
        }
        out.push_str(match rng.below(10) {
            0 => "!",
            1 => "?",
            _ => ".",
        });
        out.push(if rng.below(6) == 0 { '\n' } else { ' ' });
    }
    let mut end = size.min(out.len());
    while !out.is_char_boundary(end) {
        end -= 1;
    }
    out.truncate(end);
    out
}

const SIZES: &[(usize, &str)] = &[(1024, "1KB"), (10 * 1024, "10KB"), (100 * 1024, "100KB")];

fn bench(c: &mut Criterion) {
    for scheme in [Scheme::Yacy, Scheme::Md5] {
        let signer = Signer::new(scheme);

        let mut group = c.benchmark_group(format!("exact/{}", scheme.name()));
        for &(size, label) in SIZES {
            let text = page(size, 42);
            assert!(!text.is_ascii(), "the page must hold non-ASCII words");
            let want = signer.exact(&text);
            group.throughput(Throughput::Bytes(text.len() as u64));
            group.bench_with_input(BenchmarkId::from_parameter(label), &text, |b, text| {
                b.iter(|| {
                    let got = signer.exact(black_box(text));
                    assert_eq!(got, want);
                    got
                })
            });
        }
        group.finish();

        let mut group = c.benchmark_group(format!("fuzzy/{}", scheme.name()));
        for &(size, label) in SIZES {
            let text = page(size, 42);
            let profile = signer.profile(&text);
            assert!(
                profile.tokens().len() > 5,
                "the {label} page must give a real profile, got {:?}",
                profile.profile_string()
            );
            let want = profile.signature();
            group.throughput(Throughput::Bytes(text.len() as u64));
            group.bench_with_input(BenchmarkId::from_parameter(label), &text, |b, text| {
                b.iter(|| {
                    // The whole fuzzy signature: tokenise, count, order, format, hash.
                    let got = signer.profile(black_box(text)).signature();
                    assert_eq!(got, want);
                    got
                })
            });
        }
        group.finish();
    }
}

/// The near-duplicate signature with the default parameters: text to trial values and keys, and
/// its halves, text to shingle hashes and shingle hashes to trial values and keys.
fn bench_near(c: &mut Criterion) {
    let params = NearParams::default();
    let signer = NearSigner::new(params);
    let mut group = c.benchmark_group("near");
    for &(size, label) in SIZES {
        let text = page(size, 42);
        let want = signer.sign(&text).expect("the page has tokens");
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(label), &text, |b, text| {
            b.iter(|| {
                let got = signer.sign(black_box(text));
                assert_eq!(got.as_ref(), Some(&want));
                got
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("near/shingle_hashes");
    for &(size, label) in SIZES {
        let text = page(size, 42);
        let mut want = Vec::new();
        near::shingle_hashes(&text, params.shingle, &mut want);
        let mut got = Vec::new();
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(label), &text, |b, text| {
            b.iter(|| {
                near::shingle_hashes(black_box(text), params.shingle, &mut got);
                assert_eq!(got, want);
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("near/sign_hashes");
    for &(size, label) in SIZES {
        let text = page(size, 42);
        let mut hashes = Vec::new();
        near::shingle_hashes(&text, params.shingle, &mut hashes);
        let want = signer.sign(&text);
        // Per shingle hash, the unit of this half's work.
        group.throughput(Throughput::Elements(hashes.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(label), &hashes, |b, hashes| {
            b.iter(|| {
                let got = signer.sign_hashes(black_box(hashes));
                assert_eq!(got, want);
                got
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench, bench_near);
criterion_main!(benches);
