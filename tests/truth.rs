//! The engine against the corpus generator's ground truth: every planted double is found, in every
//! dimension, and nothing else is grouped.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use solr_dedup::engine::EngineConfig;
use solr_dedup::store::file::OutputFormat;

use crate::engine::{by_id, run_file};

#[path = "../examples/gen_corpus.rs"]
#[allow(dead_code)]
pub(crate) mod gen_corpus;

/// `n` generated pages of about `page_kb` KB as JSON documents, without the ground truth.
pub(crate) fn generated(n: u64, seed: u64, page_kb: f64) -> Vec<Value> {
    let mut out = Vec::new();
    gen_corpus::generate(n, seed, page_kb, &mut out, None::<&mut Vec<u8>>).unwrap();
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[derive(serde::Deserialize)]
struct Truth {
    groups: BTreeMap<String, Vec<Vec<String>>>,
}

fn field(dim: &str) -> (&'static str, Option<&'static str>) {
    match dim {
        "exact" => (
            "exact_signature_unique_b",
            Some("exact_signature_copycount_i"),
        ),
        "fuzzy" => (
            "fuzzy_signature_unique_b",
            Some("fuzzy_signature_copycount_i"),
        ),
        "title" => ("title_unique_b", None),
        "description" => ("description_unique_b", None),
        "www" => ("www_unique_b", None),
        "http" => ("http_unique_b", None),
        other => panic!("unknown dimension {other}"),
    }
}

#[test]
fn every_planted_double_is_found_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("corpus.jsonl");
    let mut corpus = Vec::new();
    let mut truth = Vec::new();
    gen_corpus::generate(3000, 7, 1.0, &mut corpus, Some(&mut truth)).unwrap();
    std::fs::write(&input, &corpus).unwrap();
    let truth: Truth = serde_json::from_slice(&truth).unwrap();

    let (report, lines) = run_file(&input, &EngineConfig::default(), OutputFormat::Docs, false);
    let docs = by_id(lines);
    assert_eq!(docs.len(), 3000);

    let mut checked = 0;
    for (dim, groups) in &truth.groups {
        let (flag, count) = field(dim);
        assert_eq!(
            report.dimensions[dim.as_str()].groups,
            groups.len() as u64,
            "{dim}: group count"
        );
        let mut grouped = BTreeSet::new();
        for g in groups {
            let winners = g
                .iter()
                .filter(|id| docs[*id][flag] == Value::Bool(true))
                .count();
            assert_eq!(winners, 1, "{dim}: group {g:?} has one representative");
            if let Some(count) = count {
                for id in g {
                    assert_eq!(
                        docs[id][count],
                        Value::from(g.len()),
                        "{dim}: {id} copy count"
                    );
                }
            }
            grouped.extend(g.iter().cloned());
            checked += g.len();
        }
        // No false groups: everything else is unique with a count of one.
        for (id, d) in &docs {
            if grouped.contains(id) {
                continue;
            }
            assert_eq!(
                d[flag],
                Value::Bool(true),
                "{dim}: {id} is in no planted group"
            );
            if let Some(count) = count {
                assert_eq!(d[count], Value::from(1), "{dim}: {id} copy count");
            }
            checked += 1;
        }
    }
    assert_eq!(truth.groups.len(), 6, "the truth covers all six dimensions");
    assert!(
        checked > 6 * 3000 - 1,
        "every document checked in every dimension: {checked}"
    );
}
