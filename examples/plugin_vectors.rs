//! Writes the worker's values that the Solr plugin's unit tests hold it to
//! (`solr-plugin/src/test/resources/worker-vectors.jsonl`): XXH3 for every length from 0 to 1,100
//! bytes under several seeds, and for 940 texts (the first 40 of the bundled corpus's pages, titles and
//! descriptions, the 460 texts of `tests/fixtures/yacy-fuzzy-java.jsonl`, the near-duplicate
//! fixtures and 400 generated texts that mix scripts, final sigmas, expanding lower cases,
//! characters newer than Java 17's Unicode, surrogates and odd white space) every signature under
//! both schemes and the near values under two parameter sets.
//!
//! The worker is the reference: `cargo run --example plugin_vectors` writes the file again, and the
//! test `plugin_vectors_are_the_workers` fails when the worker's values move away from it.

use std::io::Write as _;

use serde_json::{json, Value};
use solr_dedup::signature::near::{self, NearParams, SEED};
use solr_dedup::signature::{Scheme, Signer};
use xxhash_rust::xxh3::xxh3_64_with_seed;

/// The second near parameter set: longer shingles, fewer hashes, three of five trials.
const OTHER_NEAR: NearParams = NearParams {
    shingle: 3,
    hashes: 10,
    trials: 5,
    agree: 3,
};

/// Characters the generated texts are made of, by kind.
const POOLS: &[&[&str]] = &[
    &[
        "the", "Cat", "SAT", "on", "mat", "apple", "banana", "42", "x7", "Straße", "STRASSE",
    ],
    &[
        "ΟΔΟΣ", "ΣΑΣ", "Σ", "ΑΣ", "αΣβ", "ΌΣΑ", "ᾼΣ", "ΑʹΣ", "ΣΣ", "ΑΣʰ",
    ],
    &["İstanbul", "İ", "ǅemal", "ǈ", "ᾈ", "ẞ", "Ω", "K", "Å"],
    &["ʰa", "ˆ", "aˁb", "ـ", "ᴬᴮ", "ꟸ", "ª", "º"],
    &["é", "e\u{301}", "a\u{308}", "क्षत्रिय", "नमस्ते", "ภาษาไทย"],
    &["日本語", "中文", "한국어", "カタカナ", "ｶﾀｶﾅ"],
    &["😀", "𝔘nicode", "𐐀𐐨", "𞤀𞤢", "𑀅"],
    &["٣٤", "۵", "߁", "໓", "꧑"],
    &["Ⅻ", "½", "²", "①"],
    &["Ꭰ", "Ᏸ", "ꭰ", "Ა", "Ჿ"],
    &["Ꟁ", "ꟁ", "Ꟑ", "𞀰", "𐞀", "\u{1DF25}", "Ᲊ", "ᲈ"],
];
const SEPARATORS: &[&str] = &[
    " ", " ", " ", "  ", "\t", "\n", ", ", ". ", "!", "-", "'", "\u{a0}", "\u{3000}", "\u{2028}",
    "\u{85}", "\u{200b}", "\u{feff}", "·", "_",
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[(self.next() % from.len() as u64) as usize]
    }
}

fn generated(count: usize) -> Vec<String> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    (0..count)
        .map(|i| {
            let words = (rng.next() % 60) as usize + i % 3;
            let mut text = String::new();
            // A few texts that are white space only, or empty.
            if i % 50 == 7 {
                return " \u{3000}\t".repeat(i % 4);
            }
            for _ in 0..words {
                let pool = POOLS[(rng.next() % POOLS.len() as u64) as usize];
                text.push_str(rng.pick(pool));
                if !rng.next().is_multiple_of(4) {
                    text.push_str(rng.pick(SEPARATORS));
                }
            }
            text
        })
        .collect()
}

fn lines(path: &str) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON lines"))
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a
            .iter()
            .filter_map(|x| x.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// The texts, each with titles and descriptions (some empty).
fn inputs() -> Vec<(String, Vec<String>, Vec<String>)> {
    let mut out = Vec::new();
    for doc in lines("examples/corpus.jsonl").into_iter().take(40) {
        let text = doc["text_t"].as_str().unwrap_or("").to_owned();
        out.push((
            text,
            strings(&doc["title"]),
            strings(&doc["description_txt"]),
        ));
    }
    for path in [
        "tests/fixtures/yacy-fuzzy-java.jsonl",
        "tests/fixtures/near-v1.jsonl",
    ] {
        for line in lines(path) {
            let text = line["text"].as_str().expect("a text").to_owned();
            let title = text.chars().take(30).collect::<String>();
            out.push((text, vec![title], Vec::new()));
        }
    }
    let texts = generated(400);
    for (i, text) in texts.iter().enumerate() {
        let other = &texts[(i * 7 + 3) % texts.len()];
        let descriptions = match i % 3 {
            0 => vec![],
            1 => vec![other.clone()],
            _ => vec![String::new(), other.clone(), text.clone()],
        };
        out.push((text.clone(), vec![other.clone()], descriptions));
    }
    out
}

fn near_values(text: &str, params: &NearParams) -> Value {
    match near::signature(text, params) {
        Some(s) => json!({ "trials": s.trials, "keys": s.keys }),
        None => Value::Null,
    }
}

/// The worker's values for one text, its titles and descriptions: one line of the file.
pub fn text_line(text: &str, titles: &[String], descriptions: &[String]) -> Value {
    let yacy = Signer::new(Scheme::Yacy);
    let md5 = Signer::new(Scheme::Md5);
    let (py, pm) = (yacy.profile(text), md5.profile(text));
    json!({
        "text": text,
        "titles": titles,
        "descriptions": descriptions,
        "exact_yacy": yacy.exact(text),
        "exact_md5": md5.exact(text),
        "fuzzy_yacy": py.signature(),
        "text_t": py.text_t(),
        "words_yacy": py.words(),
        "fuzzy_md5": pm.signature(),
        "words_md5": pm.words(),
        "title_yacy": yacy.title(titles),
        "title_md5": md5.title(titles),
        "description_yacy": yacy.description(descriptions),
        "description_md5": md5.description(descriptions),
        "tokens": if text.len() < 400 { json!(near::tokens(text)) } else { Value::Null },
        "blank": near::is_blank(text),
        "near": near_values(text, &NearParams::default()),
        "near_other": near_values(text, &OTHER_NEAR),
    })
}

/// The input XXH3 lines hash: `len` bytes of a fixed pattern.
pub fn xxh3_input() -> Vec<u8> {
    (0..1100u32).map(|i| ((i * 131 + 7) % 251) as u8).collect()
}

/// One XXH3 line.
pub fn xxh3_line(input: &[u8], len: usize, seed: u64) -> Value {
    let v = xxh3_64_with_seed(&input[..len], seed) as i64;
    json!({ "xxh3": len, "seed": seed as i64, "value": v })
}

/// The seeds of the XXH3 lines: 0, the near definition's and two derived from it, all ones.
pub const XXH3_SEEDS: [u64; 5] = [0, SEED, SEED ^ 3, SEED ^ 0xC0, u64::MAX];

#[allow(dead_code)]
fn main() -> std::io::Result<()> {
    let path = "solr-plugin/src/test/resources/worker-vectors.jsonl";
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    let input = xxh3_input();
    for seed in XXH3_SEEDS {
        for len in 0..=1100 {
            writeln!(out, "{}", xxh3_line(&input, len, seed))?;
        }
    }
    let inputs = inputs();
    for (text, titles, descriptions) in &inputs {
        writeln!(out, "{}", text_line(text, titles, descriptions))?;
    }
    out.flush()?;
    println!("wrote {path}: {} texts", inputs.len());
    Ok(())
}
