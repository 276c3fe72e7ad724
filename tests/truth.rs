//! The engine against the corpus generator's ground truth: every planted double is found, in every
//! dimension, and nothing else is grouped; planted near-duplicates have the shingle overlap the
//! truth states, and the near clusters the engine finds are made of planted doubles only.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::OnceLock;

use serde_json::Value;
use solr_dedup::engine::{EngineConfig, Report};
use solr_dedup::signature::near::{probability, NearParams};
use solr_dedup::signature::{Profile, ProfileParams, Scheme};
use solr_dedup::store::file::OutputFormat;

use crate::engine::by_id;
use crate::support::corpus::run_file;

#[path = "../examples/gen_corpus.rs"]
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
    near: Vec<NearGroup>,
}

/// One planted near unit: every pair of members shares `shared` shingles and has `own` of its own.
#[derive(serde::Deserialize)]
struct NearGroup {
    ids: Vec<String>,
    shared: usize,
    own: usize,
    jaccard: Vec<(String, String, f64)>,
}

/// A generated corpus with its truth, and what a full engine run on the file store made of it.
struct Planted {
    n: usize,
    truth: Truth,
    report: Report,
    /// The engine's output documents, by id.
    docs: BTreeMap<String, Value>,
    /// The generated `text_t`, by id.
    texts: BTreeMap<String, String>,
}

fn planted(n: u64, seed: u64, page_kb: f64) -> Planted {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("corpus.jsonl");
    let mut corpus = Vec::new();
    let mut truth = Vec::new();
    gen_corpus::generate(n, seed, page_kb, &mut corpus, Some(&mut truth)).unwrap();
    std::fs::write(&input, &corpus).unwrap();
    let truth: Truth = serde_json::from_slice(&truth).unwrap();
    let texts = String::from_utf8(corpus)
        .unwrap()
        .lines()
        .map(|l| {
            let d: Value = serde_json::from_str(l).unwrap();
            let text = d["text_t"].as_str().unwrap().to_owned();
            (d["id"].as_str().unwrap().to_owned(), text)
        })
        .collect();
    // The generator's truth groups profiles of any size, as YaCy does: many of its planted pages
    // (exact, title, URL doubles) have profiles of fewer words than the default minimum.
    let cfg = EngineConfig {
        fuzzy_min_words: 0,
        ..EngineConfig::default()
    };
    let (report, lines) = run_file(&input, &cfg, OutputFormat::Docs, false);
    let docs = by_id(lines);
    assert_eq!(docs.len() as u64, n);
    Planted {
        n: n as usize,
        truth,
        report,
        docs,
        texts,
    }
}

/// The corpus of the six-dimension test: 3,000 pages of about 1 KB.
fn small() -> &'static Planted {
    static P: OnceLock<Planted> = OnceLock::new();
    P.get_or_init(|| planted(3000, 7, 1.0))
}

/// A corpus with more near units (one block in 25 plants one): 12,000 pages of about 0.4 KB,
/// 56 near units with 200 pairs, every band present (from 14 to 39 pairs).
fn near_corpus() -> &'static Planted {
    static P: OnceLock<Planted> = OnceLock::new();
    P.get_or_init(|| planted(12_000, 7, 0.4))
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

/// Every group of `groups` is found with one representative and its size as the count; every other
/// document is alone, in each of the six dimensions.
fn six_dimensions_exact(p: &Planted) {
    let (truth, report, docs) = (&p.truth, &p.report, &p.docs);
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
        for (id, d) in docs {
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
    // `near` is not among `groups`: whether a near unit is found is a matter of chance (below).
    assert_eq!(truth.groups.len(), 6, "the truth covers all six dimensions");
    assert!(
        checked > 6 * p.n - 1,
        "every document checked in every dimension: {checked}"
    );
}

#[test]
fn every_planted_double_is_found_and_nothing_else() {
    six_dimensions_exact(small());
}

/// Near units must not disturb the other six dimensions: their members are doubles in none. The
/// engine checks the fuzzy profiles with its defaults; the members' profiles also differ for both
/// schemes at every setting the generator promises (min-token-len 2 to 7, quant-rate up to 0.5).
#[test]
fn near_units_are_doubles_in_no_other_dimension() {
    let p = near_corpus();
    six_dimensions_exact(p);
    for g in &p.truth.near {
        for (dim, groups) in &p.truth.groups {
            assert!(
                groups.iter().flatten().all(|id| !g.ids.contains(id)),
                "{dim}: near unit {:?} is in a planted group",
                g.ids
            );
        }
    }
    for scheme in [Scheme::Yacy, Scheme::Md5] {
        for min_token_len in 2..=7 {
            for quant_rate in [0.01, 0.25, 0.5] {
                let params = ProfileParams {
                    min_token_len,
                    quant_rate,
                };
                for g in &p.truth.near {
                    let profiles: BTreeSet<String> = g
                        .ids
                        .iter()
                        .map(|id| Profile::new(&p.texts[id], scheme, params).profile_string())
                        .collect();
                    assert_eq!(
                        profiles.len(),
                        g.ids.len(),
                        "{scheme:?} {params:?}: near unit {:?} shares a profile",
                        g.ids
                    );
                }
            }
        }
    }
}

// ------------------------------------------------------------------------------- shingles, plainly

/// Tokens as `neardup.md` defines them, written plainly and apart from the crate's tokeniser: runs of
/// alphanumeric characters, lower-cased. (`char::is_alphanumeric` also takes letter-like numbers and
/// combining marks that the definition's L*/Nd does not; the corpus has none, which the test below
/// confirms by comparing with the crate's tokens on every page.)
fn plain_tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The set of distinct word bigrams (a text of one token is its own shingle).
fn bigrams(text: &str) -> HashSet<(String, String)> {
    let t = plain_tokens(text);
    match t.len() {
        0 => HashSet::new(),
        1 => HashSet::from([(t[0].clone(), String::new())]),
        _ => t.windows(2).map(|w| (w[0].clone(), w[1].clone())).collect(),
    }
}

/// `(|A ∩ B|, |A ∪ B|)`.
fn overlap(a: &HashSet<(String, String)>, b: &HashSet<(String, String)>) -> (usize, usize) {
    let inter = a.intersection(b).count();
    (inter, a.len() + b.len() - inter)
}

/// The documents a page is planted with in a group whose members share (nearly) all their text:
/// near units, exact groups (same-page units among them) and fuzzy groups.
fn text_groups(p: &Planted) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = p.truth.near.iter().map(|g| g.ids.clone()).collect();
    out.extend(p.truth.groups["exact"].iter().cloned());
    out.extend(p.truth.groups["fuzzy"].iter().cloned());
    out
}

#[test]
fn planted_near_duplicates_have_the_stated_overlap_and_others_far_less() {
    let p = near_corpus();
    // The plain tokeniser agrees with the crate's on every page, so the overlaps below are those
    // the signatures see.
    for (id, text) in &p.texts {
        assert_eq!(
            plain_tokens(text),
            solr_dedup::signature::near::tokens(text),
            "{id}: tokens"
        );
    }
    let sets: BTreeMap<&str, HashSet<(String, String)>> = p
        .texts
        .iter()
        .map(|(id, t)| (id.as_str(), bigrams(t)))
        .collect();

    let mut pairs = 0;
    for g in &p.truth.near {
        assert!((2..=4).contains(&g.ids.len()), "{:?}", g.ids);
        assert_eq!(g.jaccard.len(), g.ids.len() * (g.ids.len() - 1) / 2);
        for (a, b, j) in &g.jaccard {
            let (sa, sb) = (&sets[a.as_str()], &sets[b.as_str()]);
            assert_eq!(sa.len(), g.shared + g.own, "{a}: shingles");
            assert_eq!(sb.len(), g.shared + g.own, "{b}: shingles");
            let (inter, union) = overlap(sa, sb);
            assert_eq!((inter, union), (g.shared, g.shared + 2 * g.own), "{a} {b}");
            assert_eq!(inter as f64 / union as f64, *j, "{a} {b}: Jaccard");
            assert_ne!(p.texts[a], p.texts[b], "{a} {b}: near, not exact");
            pairs += 1;
        }
    }
    // Exact groups (same-page units among them) are near-duplicates with J = 1 trivially; fuzzy
    // groups (the same words, other sentence order) have a high J that nobody planned. Observed
    // here: from 0.80 to 1 over 230 fuzzy pairs.
    for g in &p.truth.groups["exact"] {
        for id in &g[1..] {
            assert_eq!(sets[id.as_str()], sets[g[0].as_str()], "{id}: exact group");
        }
    }
    let mut fuzzy_min = 1f64;
    for g in &p.truth.groups["fuzzy"] {
        for (i, a) in g.iter().enumerate() {
            for b in &g[i + 1..] {
                let (inter, union) = overlap(&sets[a.as_str()], &sets[b.as_str()]);
                fuzzy_min = fuzzy_min.min(inter as f64 / union as f64);
            }
        }
    }
    assert!(fuzzy_min > 0.5, "a fuzzy pair has J = {fuzzy_min}");

    // Pages planted in no common group share common word pairs ("of the") and nothing more: a
    // fixed sample of 20,000 such pairs stays far below the lowest band (0.5). Observed: the largest
    // J is 0.026, the mean 0.0013.
    let groups = text_groups(p);
    let related: HashSet<(&str, &str)> = groups
        .iter()
        .flat_map(|g| {
            g.iter()
                .flat_map(|a| g.iter().map(move |b| (a.as_str(), b.as_str())))
        })
        .collect();
    let ids: Vec<&str> = sets.keys().copied().collect();
    let (mut max, mut sum, mut sampled) = (0f64, 0f64, 0);
    let mut x = 0x5eed_u64;
    while sampled < 20_000 {
        // A fixed LCG walk over the pairs.
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let (a, b) = (
            ids[(x >> 33) as usize % ids.len()],
            ids[(x >> 13) as usize % ids.len()],
        );
        if a == b || related.contains(&(a, b)) || sets[a].is_empty() || sets[b].is_empty() {
            continue;
        }
        let (inter, union) = overlap(&sets[a], &sets[b]);
        let j = inter as f64 / union as f64;
        max = max.max(j);
        sum += j;
        sampled += 1;
    }
    eprintln!(
        "near truth: {pairs} planted pairs exact; fuzzy pairs: min J {fuzzy_min:.3}; \
         unrelated pairs: max J {max:.4}, mean {:.4}",
        sum / f64::from(sampled)
    );
    assert!(max < 0.1, "an unrelated pair has J = {max}");
}

// ------------------------------------------------------------------------------- near clusters

fn near_keys(d: &Value) -> Vec<i64> {
    d["near_keys_ls"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_i64).collect())
        .unwrap_or_default()
}

/// Members per cluster, by `near_group_s` (the representative's id).
fn clusters(docs: &BTreeMap<String, Value>) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (id, d) in docs {
        let group = d["near_group_s"].as_str().unwrap_or_else(|| panic!("{id}"));
        out.entry(group.to_owned()).or_default().insert(id.clone());
    }
    out
}

#[test]
fn near_clusters_are_planted_doubles_only() {
    for p in [small(), near_corpus()] {
        let docs = &p.docs;
        let clusters = clusters(docs);
        let cluster_of = |id: &str| &clusters[docs[id]["near_group_s"].as_str().unwrap()];

        // Identical shingle sets always agree: near units with J = 1 and exact groups (same-page
        // units among them) are one cluster each, exactly.
        let mut certain: Vec<Vec<String>> = p
            .truth
            .near
            .iter()
            .filter(|g| g.own == 0)
            .map(|g| g.ids.clone())
            .collect();
        certain.extend(p.truth.groups["exact"].iter().cloned());
        assert!(!certain.is_empty());
        for g in &certain {
            let want: BTreeSet<String> = g.iter().cloned().collect();
            assert_eq!(cluster_of(&g[0]), &want, "{g:?}: one near cluster");
            let winners = g
                .iter()
                .filter(|id| docs[*id]["near_unique_b"] == Value::Bool(true))
                .count();
            assert_eq!(winners, 1, "{g:?}: one representative");
            for id in g {
                assert_eq!(docs[id]["near_copycount_i"], Value::from(g.len()), "{id}");
            }
        }

        // Every cluster of two or more lies inside one planted text group; a page in none is alone.
        let groups = text_groups(p);
        let mut multi = 0;
        for (rep, members) in &clusters {
            if members.len() < 2 {
                continue;
            }
            multi += 1;
            assert!(
                groups.iter().any(|g| members.iter().all(|m| g.contains(m))),
                "cluster {rep} {members:?} joins pages planted in no common group"
            );
            assert!(
                members.contains(rep),
                "{rep}: representative in its cluster"
            );
            for m in members {
                assert_eq!(docs[m]["near_copycount_i"], Value::from(members.len()));
                assert_eq!(docs[m]["near_unique_b"], Value::Bool(m == rep), "{m}");
            }
        }
        assert_eq!(
            p.report.dimensions["near"].groups, multi,
            "near group count"
        );
        let grouped: BTreeSet<&String> = groups.iter().flatten().collect();
        for (id, d) in docs {
            if !grouped.contains(id) {
                assert_eq!(d["near_copycount_i"], Value::from(1), "{id}: alone");
                assert_eq!(d["near_unique_b"], Value::Bool(true), "{id}: alone");
                assert_eq!(d["near_group_s"].as_str(), Some(id.as_str()), "{id}: alone");
            }
        }
    }
}

/// The share of planted pairs the engine links, per band, against the formula. A sanity check only:
/// a few dozen pairs per band cannot test the statistics (tests/signatures.rs does, with thousands),
/// and the pairs of a unit share members. The corpus is fixed, so the counts are too; observed
/// (linked of planted, formula for H = 14, T = 6, A = 2):
///
/// | J    | linked   | formula | expected pairs |
/// |------|----------|---------|----------------|
/// | 0.5  | 0 of 36  | 0.0 %   | 0.0            |
/// | 0.6  | 0 of 19  | 0.0 %   | 0.0            |
/// | 0.7  | 0 of 39  | 0.1 %   | 0.0            |
/// | 0.8  | 0 of 14  | 2.6 %   | 0.4            |
/// | 0.9  | 15 of 31 | 41.5 %  | 12.9           |
/// | 0.95 | 22 of 24 | 87.9 %  | 21.1           |
/// | 1.0  | 37 of 37 | 100 %   | 37             |
///
/// The bound is four standard deviations plus one pair; J = 1 must be linked every time.
#[test]
fn planted_near_pairs_are_linked_about_as_often_as_the_formula_says() {
    let p = near_corpus();
    let params = NearParams::default();
    let mut bands: BTreeMap<String, (f64, usize, usize)> = BTreeMap::new();
    for g in &p.truth.near {
        for (a, b, j) in &g.jaccard {
            let (da, db) = (&p.docs[a], &p.docs[b]);
            let (ka, kb) = (near_keys(da), near_keys(db));
            assert_eq!(ka.len(), params.keys_per_document(), "{a}: keys");
            let linked = ka.iter().any(|k| kb.contains(k));
            if linked {
                assert_eq!(da["near_group_s"], db["near_group_s"], "{a} {b}: linked");
            }
            let e = bands.entry(format!("{j:.2}")).or_insert((*j, 0, 0));
            e.1 += usize::from(linked);
            e.2 += 1;
        }
    }
    assert_eq!(bands.len(), 7, "every band is planted: {:?}", bands.keys());
    for (band, &(j, linked, n)) in &bands {
        let prob = probability(j, params.hashes, params.trials, params.agree);
        let expected = n as f64 * prob;
        let margin = 4.0 * (expected * (1.0 - prob)).sqrt() + 1.0;
        eprintln!(
            "near band {band}: linked {linked} of {n}, formula {:.1} % ({expected:.1} ± {margin:.1})",
            100.0 * prob
        );
        if j == 1.0 {
            assert_eq!(linked, n, "J = 1: identical shingle sets always agree");
        }
        assert!(
            (linked as f64 - expected).abs() <= margin,
            "band {band}: linked {linked} of {n}, expected {expected:.1} ± {margin:.1}"
        );
    }
}
