//! Shared fixtures of the scenario modules: files of documents written and read back, a run of the
//! engine on a file, texts planted as near-duplicates. They live here, not in one scenario module
//! that the others would import from.

use std::path::Path;

use serde_json::Value;
use solr_dedup::engine::{self, EngineConfig, Report};
use solr_dedup::signature::near::{NearParams, NearSigner};
use solr_dedup::store::file::{FileStore, Output, OutputFormat};

pub(crate) fn write_jsonl(path: &Path, docs: &[Value]) {
    let text: String = docs.iter().map(|d| format!("{d}\n")).collect();
    std::fs::write(path, text).unwrap();
}

pub(crate) fn read_jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub(crate) fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}

/// Runs (or checks) on a file of documents and returns the report and the output lines. Shared by
/// every scenario here and by the ground-truth test.
pub(crate) fn run_file(
    input: &Path,
    cfg: &EngineConfig,
    format: OutputFormat,
    check: bool,
) -> (Report, Vec<Value>) {
    let output = input.with_extension("out.jsonl");
    let store = FileStore::open(
        input,
        Output::File(output.clone()),
        format,
        "id",
        "_version_",
    )
    .unwrap();
    let report = block_on(async {
        if check {
            engine::check(&store, cfg).await
        } else {
            engine::run(&store, cfg).await
        }
    })
    .unwrap();
    let lines = if check {
        Vec::new()
    } else {
        read_jsonl(&output)
    };
    (report, lines)
}

/// Whether two texts are near-duplicates under the default parameters: they share a combination key.
pub(crate) fn links(a: &str, b: &str) -> bool {
    let signer = NearSigner::new(NearParams::default());
    let (x, y) = (signer.sign(a).unwrap(), signer.sign(b).unwrap());
    x.keys.iter().any(|k| y.keys.contains(k))
}

/// Three texts where the middle one bridges the others: `a`–`b` and `b`–`c` near-duplicates, `a`–`c`
/// not. `b` is 60 words, `a` and `c` add three words of their own before or after (J(a, b) = 0.95,
/// J(a, c) = 0.91), which links as wanted about one time in three; the variants are tried in a
/// fixed order, so the texts are always the same.
pub(crate) fn chain(topic: &str) -> [String; 3] {
    for attempt in 0..200 {
        let words = |from: usize, to: usize, tag: &str| -> Vec<String> {
            (from..to)
                .map(|i| format!("{topic}{tag}{attempt}x{i}"))
                .collect()
        };
        let body = words(0, 60, "w").join(" ");
        let a = format!("{} {body}.", words(0, 3, "a").join(" "));
        let c = format!("{body} {}.", words(0, 3, "c").join(" "));
        let b = format!("{body}.");
        if links(&a, &b) && links(&b, &c) && !links(&a, &c) {
            return [a, b, c];
        }
    }
    panic!("no chain for {topic}");
}
