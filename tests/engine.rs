//! Engine scenarios on the file store: every dimension and rule of `postprocessing.md`.
//!
//! Expected flags and counts are worked out from the spec's rules by hand in each test, never taken
//! from a run of the code under test.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{json, Value};
use solr_dedup::engine::{self, Dimension, EngineConfig, Order, Preference, Report, Scope};
use solr_dedup::store::file::{FileStore, Output, OutputFormat};
use solr_dedup::store::{
    AtomicUpdate, Bucket, CommitMode, CostModel, Doc, FacetQuery, Filter, Page, ReadQuery, Store,
    StoreError, UpdateOutcome,
};
use solr_dedup::urlrules::Rules;

pub(crate) type Docs = BTreeMap<String, Value>;

pub(crate) fn write_jsonl(path: &Path, docs: &[Value]) {
    let text: String = docs.iter().map(|d| format!("{d}\n")).collect();
    std::fs::write(path, text).unwrap();
}

fn read_jsonl(path: &Path) -> Vec<Value> {
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

/// The file store as a store with an index: it answers lookups (split at 500 values, as the Solr
/// store does) instead of telling the engine to read everything, so that the lookup path runs here
/// against the file store's exact filter evaluation.
struct Indexed(FileStore);

#[async_trait::async_trait]
impl Store for Indexed {
    async fn read_page(&self, q: &ReadQuery, cursor: Option<&str>) -> Result<Page, StoreError> {
        self.0.read_page(q, cursor).await
    }
    fn hint_rereads(&self, q: &ReadQuery) {
        self.0.hint_rereads(q)
    }
    fn max_lookup_values(&self) -> usize {
        500
    }
    async fn facet(&self, q: &FacetQuery) -> Result<Vec<Bucket>, StoreError> {
        self.0.facet(q).await
    }
    async fn get(&self, ids: &[String], fields: &[String]) -> Result<Vec<Doc>, StoreError> {
        self.0.get(ids, fields).await
    }
    async fn update(&self, batch: &[AtomicUpdate]) -> Result<UpdateOutcome, StoreError> {
        self.0.update(batch).await
    }
    async fn commit(&self, mode: CommitMode) -> Result<(), StoreError> {
        self.0.commit(mode).await
    }
    fn describe(&self) -> String {
        self.0.describe()
    }
    fn cost_model(&self) -> CostModel {
        self.0.cost_model()
    }
}

/// [`run_with`] through [`Indexed`].
fn run_indexed(docs: &[Value], cfg: &EngineConfig) -> (Report, Docs) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    write_jsonl(&input, docs);
    let output = input.with_extension("out.jsonl");
    let store = Indexed(
        FileStore::open(
            &input,
            Output::File(output.clone()),
            OutputFormat::Docs,
            "id",
            "_version_",
        )
        .unwrap(),
    );
    let report = block_on(engine::run(&store, cfg)).unwrap();
    (report, by_id(read_jsonl(&output)))
}

/// Writes `docs` to a fresh file and runs on it with `format` output.
fn run_docs(
    docs: &[Value],
    cfg: &EngineConfig,
    format: OutputFormat,
    check: bool,
) -> (Report, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    write_jsonl(&input, docs);
    run_file(&input, cfg, format, check)
}

/// Runs the engine on `docs` and returns the report and the annotated documents by id.
pub(crate) fn run_with(docs: &[Value], cfg: &EngineConfig) -> (Report, Docs) {
    let (report, lines) = run_docs(docs, cfg, OutputFormat::Docs, false);
    (report, by_id(lines))
}

/// Output lines keyed by their id.
pub(crate) fn by_id(lines: Vec<Value>) -> Docs {
    lines
        .into_iter()
        .map(|d| (d["id"].as_str().unwrap().to_owned(), d))
        .collect()
}

pub(crate) fn run(docs: &[Value]) -> (Report, Docs) {
    run_with(docs, &EngineConfig::default())
}

/// The updates a run would write, as JSON lines.
fn updates_with(docs: &[Value], cfg: &EngineConfig) -> Vec<Value> {
    run_docs(docs, cfg, OutputFormat::Updates, false).1
}

fn flag(docs: &Docs, id: &str, field: &str) -> Value {
    docs[id].get(field).cloned().unwrap_or(Value::Null)
}

pub(crate) fn page(id: &str, url: &str, text: &str) -> Value {
    json!({"id": id, "sku": url, "text_t": text, "_version_": 1_800_000_000_000_000_000i64})
}

pub(crate) const TEXT: &str =
    "The same article text, served at several addresses on one site and another.";

#[test]
fn exact_group_counts_and_one_representative_by_preference() {
    let docs = [
        page("a", "http://example.org/x", TEXT),
        page("b", "https://www.example.org/x", TEXT),
        page("c", "https://other.org/y", TEXT),
        page(
            "d",
            "https://other.org/z",
            "A different text with other words entirely.",
        ),
    ];
    let (report, out) = run(&docs);
    // Group {a, b, c}; preference: https before http, www before bare, then shorter URL:
    // b (https, www, 25 bytes) beats c (https, bare) and a (http).
    for id in ["a", "b", "c"] {
        assert_eq!(
            flag(&out, id, "exact_signature_copycount_i"),
            json!(3),
            "{id}"
        );
        assert_eq!(
            flag(&out, id, "fuzzy_signature_copycount_i"),
            json!(3),
            "{id}"
        );
    }
    assert_eq!(flag(&out, "b", "exact_signature_unique_b"), json!(true));
    assert_eq!(flag(&out, "a", "exact_signature_unique_b"), json!(false));
    assert_eq!(flag(&out, "c", "exact_signature_unique_b"), json!(false));
    assert_eq!(flag(&out, "d", "exact_signature_unique_b"), json!(true));
    assert_eq!(flag(&out, "d", "exact_signature_copycount_i"), json!(1));
    let exact = &report.dimensions["exact"];
    assert_eq!((exact.groups, exact.doubles), (1, 2));
    assert_eq!(report.documents.read, 4);
    assert_eq!(report.documents.signed, 4);
    assert_eq!(
        report.documents.written, 4,
        "each document counted once, signatures and flags alike"
    );
}

#[test]
fn signatures_are_written_bit_exact() {
    let docs = [
        json!({"id":"h","sku":"http://h.org/","text_t":"hello world","title":["hello world"],
        "description_txt":["first description","second description"]}),
    ];
    let (_, out) = run(&docs);
    // Vectors from signatures.md.
    assert_eq!(
        flag(&out, "h", "exact_signature_l"),
        json!(-6533976092579615214i64)
    );
    assert_eq!(
        flag(&out, "h", "title_exact_signature_l"),
        json!(-6533976092579615214i64)
    );
    assert_eq!(
        flag(&out, "h", "description_exact_signature_l"),
        json!(-6252947182592522076i64)
    );
    // "hello world": tokens of 5 letters, each once: profile "(hello-1) (world-1)" in some order.
    assert!(flag(&out, "h", "fuzzy_signature_text_t")
        .as_str()
        .unwrap()
        .contains("(hello-1-1)"));
}

#[test]
fn a_page_at_four_url_variants_keeps_exactly_one_copy() {
    let urls = [
        "http://example.org/p",
        "https://example.org/p",
        "http://www.example.org/p",
        "https://www.example.org/p",
    ];
    let docs: Vec<Value> = urls
        .iter()
        .enumerate()
        .map(|(i, u)| page(&format!("v{i}"), u, TEXT))
        .collect();
    let (_, out) = run(&docs);
    let kept: Vec<&String> = out
        .keys()
        .filter(|id| {
            ["exact_signature_unique_b", "http_unique_b", "www_unique_b"]
                .iter()
                .all(|f| flag(&out, id, f) == json!(true))
        })
        .collect();
    assert_eq!(
        kept,
        vec!["v3"],
        "only https://www. survives the combined filter"
    );
    // www groups: {http://www, http://} and {https://www, https://}; http groups: {http://, https://}
    // and {http://www, https://www}.
    assert_eq!(flag(&out, "v0", "www_unique_b"), json!(false));
    assert_eq!(flag(&out, "v2", "www_unique_b"), json!(true));
    assert_eq!(flag(&out, "v1", "www_unique_b"), json!(false));
    assert_eq!(flag(&out, "v1", "http_unique_b"), json!(true));
    assert_eq!(flag(&out, "v0", "http_unique_b"), json!(false));
    assert_eq!(flag(&out, "v2", "http_unique_b"), json!(false));

    // The opposite preferences pick the opposite corner.
    let cfg = EngineConfig {
        preference: Preference {
            prefer_https: false,
            prefer_www: false,
            ..Preference::default()
        },
        ..EngineConfig::default()
    };
    let (_, out) = run_with(&docs, &cfg);
    assert_eq!(flag(&out, "v0", "exact_signature_unique_b"), json!(true));
    assert_eq!(flag(&out, "v0", "www_unique_b"), json!(true));
    assert_eq!(flag(&out, "v0", "http_unique_b"), json!(true));
}

#[test]
fn ties_fall_to_the_smaller_url_then_the_smaller_id() {
    let docs = [
        page("z", "https://example.org/b", TEXT),
        page("y", "https://example.org/a", TEXT),
        // Same URL as y: the id decides.
        page("x", "https://example.org/a", TEXT),
        page("w", "https://example.org/longer", TEXT),
    ];
    let (_, out) = run(&docs);
    assert_eq!(flag(&out, "x", "exact_signature_unique_b"), json!(true));
    for id in ["y", "z", "w"] {
        assert_eq!(
            flag(&out, id, "exact_signature_unique_b"),
            json!(false),
            "{id}"
        );
    }
    // y and x share a URL, so they are one www group and one http group: x wins there too.
    assert_eq!(flag(&out, "x", "www_unique_b"), json!(true));
    assert_eq!(flag(&out, "y", "www_unique_b"), json!(false));
    assert_eq!(flag(&out, "z", "www_unique_b"), json!(true));
}

#[test]
fn empty_texts_titles_and_descriptions_take_no_part() {
    let docs = [
        json!({"id":"e1","sku":"http://a.org/1","text_t":""}),
        json!({"id":"e2","sku":"http://a.org/2","text_t":"  \n\t "}),
        json!({"id":"e3","sku":"http://a.org/3","text_t":""}),
        json!({"id":"s1","sku":"http://a.org/4","text_t":"a b c !!","title":[""],"description_txt":[""]}),
        json!({"id":"s2","sku":"http://a.org/5","text_t":"x y z ??","title":[],"description_txt":[]}),
    ];
    let (report, out) = run(&docs);
    for id in ["e1", "e2", "e3", "s1", "s2"] {
        for f in [
            "exact_signature_unique_b",
            "fuzzy_signature_unique_b",
            "title_unique_b",
            "description_unique_b",
        ] {
            assert_eq!(flag(&out, id, f), json!(true), "{id} {f}");
        }
        assert_eq!(
            flag(&out, id, "exact_signature_copycount_i"),
            json!(1),
            "{id}"
        );
        assert_eq!(
            flag(&out, id, "fuzzy_signature_copycount_i"),
            json!(1),
            "{id}"
        );
        // Every document gets both signatures, even with an empty text: the hash of "" here.
        assert!(out[id].get("exact_signature_l").is_some(), "{id}");
        assert!(out[id].get("title_exact_signature_l").is_none(), "{id}");
        assert!(out[id].get("fuzzy_signature_text_t").is_none(), "{id}");
    }
    assert_eq!(
        flag(&out, "e1", "exact_signature_l"),
        json!(-2401053093171183889i64)
    );
    assert_eq!(
        flag(&out, "e1", "fuzzy_signature_l"),
        json!(-2401053093171183889i64)
    );
    let exact = &report.dimensions["exact"];
    assert_eq!(exact.excluded["empty_text"], 3);
    assert_eq!(exact.groups, 0);
    assert_eq!(report.dimensions["fuzzy"].excluded["empty_profile"], 5);
    assert_eq!(report.dimensions["title"].excluded["no_title"], 5);
    assert_eq!(
        report.dimensions["description"].excluded["no_description"],
        5
    );
}

#[test]
fn urls_that_cannot_take_part() {
    let docs = [
        json!({"id":"n1","text_t":"one page"}),
        json!({"id":"n2","sku":"not a url","text_t":"two page"}),
        json!({"id":"f1","sku":"ftp://www.files.org/a","text_t":"three page"}),
        json!({"id":"f2","sku":"ftp://files.org/a","text_t":"four page"}),
    ];
    let (report, out) = run(&docs);
    for id in ["n1", "n2", "f1", "f2"] {
        assert_eq!(flag(&out, id, "http_unique_b"), json!(true), "{id}");
    }
    assert_eq!(flag(&out, "n1", "www_unique_b"), json!(true));
    // ftp URLs take part in www (prefer www): f1 wins, f2 is its double.
    assert_eq!(flag(&out, "f1", "www_unique_b"), json!(true));
    assert_eq!(flag(&out, "f2", "www_unique_b"), json!(false));
    assert_eq!(report.dimensions["http"].excluded["no_url"], 2);
    assert_eq!(report.dimensions["http"].excluded["not_http"], 2);
    assert_eq!(report.dimensions["www"].excluded["no_url"], 2);
}

#[test]
fn odd_urls_are_normalised_before_comparing() {
    let docs = [
        page("o1", "HTTP://WWW.Example.ORG:80/Path#frag", "odd one"),
        page("o2", "http://www.example.org/Path", "odd two"),
    ];
    // The same normalised URL: one www group and one http group. Under YaCy's order the URLs are
    // equal, so the id decides.
    let yacy = EngineConfig {
        preference: Preference {
            order: Order::Yacy,
            ..Preference::default()
        },
        ..EngineConfig::default()
    };
    let (_, out) = run_with(&docs, &yacy);
    assert_eq!(flag(&out, "o1", "www_unique_b"), json!(true));
    assert_eq!(flag(&out, "o2", "www_unique_b"), json!(false));
    assert_eq!(flag(&out, "o2", "http_unique_b"), json!(false));
    // Canonical first: the host written in upper case is clutter, so o2 stays.
    let (_, out) = run(&docs);
    assert_eq!(flag(&out, "o2", "www_unique_b"), json!(true));
    assert_eq!(flag(&out, "o1", "www_unique_b"), json!(false));
    assert_eq!(flag(&out, "o1", "http_unique_b"), json!(false));
}

#[test]
fn host_scope_groups_content_within_one_host_only() {
    let docs = [
        page("a", "https://one.org/a", TEXT),
        page("b", "https://one.org/bb", TEXT),
        page("c", "https://two.org/a", TEXT),
        json!({"id":"d","text_t":TEXT}),
    ];
    let cfg = EngineConfig {
        scope: Scope::Host,
        ..EngineConfig::default()
    };
    let (report, out) = run_with(&docs, &cfg);
    assert_eq!(flag(&out, "a", "exact_signature_copycount_i"), json!(2));
    assert_eq!(flag(&out, "a", "exact_signature_unique_b"), json!(true));
    assert_eq!(flag(&out, "b", "exact_signature_unique_b"), json!(false));
    assert_eq!(flag(&out, "c", "exact_signature_copycount_i"), json!(1));
    assert_eq!(flag(&out, "d", "exact_signature_copycount_i"), json!(1));
    assert_eq!(report.dimensions["exact"].excluded["no_url"], 1);
    // Global scope joins all four.
    let (_, out) = run(&docs);
    assert_eq!(flag(&out, "d", "exact_signature_copycount_i"), json!(4));
}

#[test]
fn titles_and_descriptions_group_on_their_own() {
    let docs = [
        json!({"id":"t1","sku":"https://a.org/1","text_t":"alpha text here","title":["Home","ignored"],"description_txt":["d1","d2"]}),
        json!({"id":"t2","sku":"https://a.org/22","text_t":"beta text here","title":["Home"],"description_txt":["d1","d2"]}),
        json!({"id":"t3","sku":"https://a.org/3","text_t":"gamma text here","title":["Other"],"description_txt":["d2","d1"]}),
    ];
    let (_, out) = run(&docs);
    assert_eq!(flag(&out, "t1", "title_unique_b"), json!(true));
    assert_eq!(flag(&out, "t2", "title_unique_b"), json!(false));
    assert_eq!(flag(&out, "t3", "title_unique_b"), json!(true));
    // Description values chain in order: [d1,d2] differs from [d2,d1].
    assert_eq!(flag(&out, "t1", "description_unique_b"), json!(true));
    assert_eq!(flag(&out, "t2", "description_unique_b"), json!(false));
    assert_eq!(flag(&out, "t3", "description_unique_b"), json!(true));
    // Copy counts are written for exact and fuzzy only.
    assert!(out["t2"].get("title_copycount_i").is_none());
}

#[test]
fn fuzzy_groups_pages_with_the_same_profile() {
    let a = "Lorem ipsum dolor sit amet, lorem ipsum dolor sit amet. Lorem ipsum! Dolor dolor dolor, amet amet.";
    let b = "AMET amet; dolor DOLOR dolor? lorem: ipsum sit; amet - lorem ipsum dolor sit. lorem ipsum dolor amet";
    let docs = [
        page("a", "https://a.org/1", a),
        page("b", "https://b.org/1", b),
    ];
    let (_, out) = run(&docs);
    assert_eq!(flag(&out, "a", "fuzzy_signature_copycount_i"), json!(2));
    assert_eq!(flag(&out, "b", "fuzzy_signature_copycount_i"), json!(2));
    assert_eq!(flag(&out, "a", "exact_signature_copycount_i"), json!(1));
    assert_eq!(
        flag(&out, "a", "fuzzy_signature_l"),
        json!(895551812756359877i64)
    );
}

#[test]
fn dimensions_and_filter_limit_the_work() {
    let docs = [
        json!({"id":"a","sku":"https://a.org/1","text_t":TEXT,"httpstatus_i":200}),
        json!({"id":"b","sku":"https://a.org/2","text_t":TEXT,"httpstatus_i":200}),
        json!({"id":"c","sku":"https://a.org/3","text_t":TEXT,"httpstatus_i":404}),
    ];
    let cfg = EngineConfig {
        dimensions: vec![Dimension::Exact],
        filter: Filter::parse("httpstatus_i:200").unwrap(),
        ..EngineConfig::default()
    };
    let (report, out) = run_with(&docs, &cfg);
    assert_eq!(flag(&out, "a", "exact_signature_copycount_i"), json!(2));
    assert_eq!(
        flag(&out, "c", "exact_signature_copycount_i"),
        Value::Null,
        "filtered out: untouched"
    );
    assert_eq!(flag(&out, "c", "exact_signature_l"), Value::Null);
    assert_eq!(
        flag(&out, "a", "www_unique_b"),
        Value::Null,
        "dimension not asked for"
    );
    assert_eq!(report.documents.read, 2);
}

#[test]
fn a_second_run_writes_nothing_and_check_passes() {
    let docs = [
        page("a", "http://example.org/x", TEXT),
        page("b", "https://www.example.org/x", TEXT),
        json!({"id":"c","text_t":""}),
    ];
    let (_, out) = run(&docs);
    let again: Vec<Value> = out.values().cloned().collect();
    assert!(updates_with(&again, &EngineConfig::default()).is_empty());
    let full = EngineConfig {
        full: true,
        ..EngineConfig::default()
    };
    assert!(
        updates_with(&again, &full).is_empty(),
        "a full run agrees with what is stored"
    );
    assert!(!check(&again).check_failed());
    let before = check(&docs);
    assert!(before.check_failed());
    assert_eq!(before.documents.missing_signatures, 3);
}

/// An incremental run on a settled index reads it once and decides nothing; each way a group can
/// stop standing as a run left it makes the next incremental run decide it again, and end where a
/// full run ends.
#[test]
fn incremental_runs_decide_exactly_the_groups_that_changed() {
    let docs = [
        page("a", "https://www.example.org/x", TEXT),
        page("b", "http://example.org/x", TEXT),
        page("c", "http://example.org/y", TEXT),
        page(
            "d",
            "http://other.example.net/z",
            "A page of its own, with no twin anywhere.",
        ),
    ];
    let (_, settled) = run(&docs);
    let settled: Vec<Value> = settled.values().cloned().collect();
    let (report, _) = run_with(&settled, &EngineConfig::default());
    assert_eq!(report.documents.written, 0);
    assert!(
        !report.phases_ms.contains_key("rank") && !report.phases_ms.contains_key("write"),
        "a settled index needs no second pass: {:?}",
        report.phases_ms
    );

    let same_as_full = |state: &[Value], cfg: &EngineConfig, what: &str| {
        let (_, incremental) = run_with(state, cfg);
        let (_, full) = run_with(
            state,
            &EngineConfig {
                full: true,
                ..cfg.clone()
            },
        );
        assert_eq!(outputs(&incremental), outputs(&full), "{what}");
    };
    let with = |id: &str, field: &str, v: Value| -> Vec<Value> {
        settled
            .iter()
            .map(|d| {
                let mut d = d.clone();
                if d["id"] == id {
                    d[field] = v.clone();
                }
                d
            })
            .collect()
    };
    // Two true flags with right counts: what a run killed between two writes can leave.
    assert_eq!(settled[0]["id"], "a");
    assert_eq!(settled[0]["exact_signature_unique_b"], json!(true));
    let two_true = with("b", "exact_signature_unique_b", json!(true));
    same_as_full(&two_true, &EngineConfig::default(), "two true flags");
    let (r, out) = run_with(&two_true, &EngineConfig::default());
    assert_eq!(r.documents.written, 1);
    assert_eq!(flag(&out, "b", "exact_signature_unique_b"), json!(false));
    // No true flag left: the representative was deleted.
    let headless: Vec<Value> = settled.iter().filter(|d| d["id"] != "a").cloned().collect();
    same_as_full(
        &headless,
        &EngineConfig::default(),
        "representative deleted",
    );
    // The preference order changed since the last run: the best prefix moved.
    let http_first = EngineConfig {
        preference: Preference {
            prefer_https: false,
            prefer_www: true,
            ..Preference::default()
        },
        ..EngineConfig::default()
    };
    same_as_full(&settled, &http_first, "--prefer-https=false");
    let (r, _) = run_with(&settled, &http_first);
    assert!(r.documents.written > 0);
    // The scope changed since the last run: groups split by host.
    let by_host = EngineConfig {
        scope: Scope::Host,
        ..EngineConfig::default()
    };
    same_as_full(&settled, &by_host, "--scope host");
}

/// After a small crawl change, the ranking and writing passes look up only the documents of the
/// groups that changed, and the result is a full run's.
#[test]
fn a_small_change_is_decided_from_lookups_alone() {
    let (_, first) = run(&crate::truth::generated(2000, 5, 0.5));
    let mut docs: Vec<Value> = first.values().cloned().collect();
    let version = 1_900_000_000_000_000_000i64;
    // Re-index ten documents (five with another page's text), delete ten (among them the
    // representatives of an exact and a www group), add ten (copies and URL variants).
    for i in 0..10 {
        let k = 37 * i + 11;
        let mut d = reindexed(&docs[k]);
        if i % 2 == 0 {
            d["text_t"] = docs[k + 500]["text_t"].clone();
        }
        d["_version_"] = json!(version + i as i64);
        docs[k] = d;
    }
    let rep_of = |field: &str, count: Option<&str>| {
        docs.iter()
            .position(|d| {
                d[field] == json!(true)
                    && count.is_none_or(|c| d[c].as_i64().unwrap_or(0) >= 2)
                    && (count.is_some()
                        || docs.iter().any(|o| {
                            o[field] == json!(false)
                                && o["sku"].as_str().is_some_and(|u| {
                                    let strip = |s: &str| s.replace("://www.", "://");
                                    strip(u) == strip(d["sku"].as_str().unwrap_or(""))
                                })
                        }))
            })
            .expect("a representative")
    };
    let exact_rep = rep_of(
        "exact_signature_unique_b",
        Some("exact_signature_copycount_i"),
    );
    let www_rep = rep_of("www_unique_b", None);
    let mut gone = vec![exact_rep, www_rep];
    gone.extend((0..8).map(|i| 41 * i + 900));
    gone.sort_unstable();
    gone.dedup();
    for &k in gone.iter().rev() {
        docs.remove(k);
    }
    for i in 0..10 {
        let src = &docs[53 * i + 7];
        let url = src["sku"].as_str().unwrap_or("https://example.org/");
        let variant = if i % 2 == 0 {
            url.replacen("https://", "http://", 1)
        } else {
            url.replacen("://", "://www.", 1)
        };
        docs.push(json!({
            "id": format!("new-{i}"),
            "sku": variant,
            "text_t": src["text_t"].clone(),
            "title": src.get("title").cloned().unwrap_or(json!([])),
            "_version_": version + 100 + i as i64,
        }));
    }
    let (report, incremental) = run_indexed(&docs, &EngineConfig::default());
    let fresh: Vec<Value> = docs.iter().map(reindexed).collect();
    let full = EngineConfig {
        full: true,
        ..EngineConfig::default()
    };
    let (_, expected) = run_with(&fresh, &full);
    assert_eq!(outputs(&incremental), outputs(&expected));
    let d = &report.documents;
    eprintln!(
        "read {}, decided {}, reread {}, written {}",
        d.read, d.decided, d.reread, d.written
    );
    assert!(d.decided > 20 && d.decided * 10 < d.read, "{d:?}");
    assert!(
        d.reread <= 2 * d.decided,
        "passes B and C read only what they decide: {d:?}"
    );
}

/// A change whose lookup values fill several reads (here 150 re-indexed pages, about ten values each,
/// against reads of at most 500): each decided document's values go into one read, so passes B and
/// C hand each decided document out once each, no more (filled field after field, a document came
/// back once per read that held one of its values), and the result is a full run's.
#[test]
fn lookups_over_several_reads_hand_each_decided_document_out_once_per_pass() {
    let (_, first) = run(&crate::truth::generated(2000, 7, 0.5));
    let mut docs: Vec<Value> = first.values().cloned().collect();
    let version = 1_900_000_000_000_000_000i64;
    for i in 0..150 {
        let k = 13 * i + 5;
        let mut d = reindexed(&docs[k]);
        if i % 3 == 0 {
            d["text_t"] = json!(format!(
                "re-indexed page {i} with a text of its own, r{i}x r{i}y"
            ));
        }
        d["_version_"] = json!(version + i as i64);
        docs[k] = d;
    }
    let (report, incremental) = run_indexed(&docs, &EngineConfig::default());
    let fresh: Vec<Value> = docs.iter().map(reindexed).collect();
    let full = EngineConfig {
        full: true,
        ..EngineConfig::default()
    };
    let (_, expected) = run_with(&fresh, &full);
    assert_eq!(outputs(&incremental), outputs(&expected));
    let d = &report.documents;
    eprintln!(
        "read {}, decided {}, reread {}, looked up {}",
        d.read, d.decided, d.reread, report.work.lookup_docs
    );
    // Looked up, not read whole: more than 150 decided, but under a quarter of the index.
    assert!(d.decided >= 150 && d.decided * 4 <= d.read, "{d:?}");
    assert!(
        d.reread <= 2 * d.decided,
        "each decided document once per pass: {d:?}"
    );
}

/// The file store with a count of the documents it was told at open, as the Solr store learns
/// `numFound` from its probe.
struct Counted(FileStore, Filter, u64);

#[async_trait::async_trait]
impl Store for Counted {
    async fn read_page(&self, q: &ReadQuery, cursor: Option<&str>) -> Result<Page, StoreError> {
        self.0.read_page(q, cursor).await
    }
    fn known_count(&self, filter: &Filter) -> Option<u64> {
        (filter == &self.1).then_some(self.2)
    }
    async fn facet(&self, q: &FacetQuery) -> Result<Vec<Bucket>, StoreError> {
        self.0.facet(q).await
    }
    async fn get(&self, ids: &[String], fields: &[String]) -> Result<Vec<Doc>, StoreError> {
        self.0.get(ids, fields).await
    }
    async fn update(&self, batch: &[AtomicUpdate]) -> Result<UpdateOutcome, StoreError> {
        self.0.update(batch).await
    }
    async fn commit(&self, mode: CommitMode) -> Result<(), StoreError> {
        self.0.commit(mode).await
    }
    fn describe(&self) -> String {
        self.0.describe()
    }
    fn cost_model(&self) -> CostModel {
        self.0.cost_model()
    }
}

/// What the engine told a progress: phases, totals and documents done, in order.
#[derive(Default)]
struct Recorded(std::sync::Mutex<Vec<(&'static str, u64)>>);

impl engine::Progress for Recorded {
    fn phase(&self, name: &'static str) {
        self.0.lock().unwrap().push((name, 0));
    }
    fn expect(&self, documents: u64) {
        self.0.lock().unwrap().push(("expect", documents));
    }
    fn advance(&self, n: u64) {
        self.0.lock().unwrap().push(("advance", n));
    }
    fn finish(&self) {}
}

/// The scan of a store that knows how many documents the run's filter selects has that total from
/// its start; a count for another filter is not taken for the scan's.
#[test]
fn the_scan_takes_its_total_from_the_store_when_it_knows_it() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    write_jsonl(&input, &crate::truth::generated(120, 3, 0.5));
    let scan = |count_for: Filter| {
        let store = FileStore::open(
            &input,
            Output::File(dir.path().join("out.jsonl")),
            OutputFormat::Updates,
            "id",
            "_version_",
        )
        .unwrap();
        let progress = Recorded::default();
        block_on(engine::execute(
            &Counted(store, count_for, 120),
            &EngineConfig::default(),
            engine::Mode::Check,
            &progress,
        ))
        .unwrap();
        let events = progress.0.into_inner().unwrap();
        let end = events[1..]
            .iter()
            .position(|(e, _)| !matches!(*e, "expect" | "advance"))
            .map_or(events.len(), |p| p + 1);
        events[..end].to_vec()
    };
    let known = scan(Filter::All);
    assert_eq!(known[..2], [("scan", 0), ("expect", 120)], "{known:?}");
    let done: u64 = known[2..].iter().map(|(_, n)| n).sum();
    assert_eq!(done, 120, "{known:?}");
    let other = scan(Filter::Solr("host_s:other".into()));
    assert!(other.iter().all(|(e, _)| *e != "expect"), "{other:?}");
}

/// A twin whose URL is stored in another spelling than its normalised form is not found by a
/// lookup; the run notices the miss and reads everything, with the same result.
#[test]
fn a_twin_stored_under_an_odd_spelling_is_still_found() {
    let mut docs: Vec<Value> = (0..40)
        .map(|i| {
            page(
                &format!("p{i:02}"),
                &format!("https://site{i}.example.net/"),
                &format!("Page number {i} of a quiet site, unlike any other page."),
            )
        })
        .collect();
    docs.push(page("odd", "HTTP://Example.ORG:80/p", TEXT));
    let (_, settled) = run(&docs);
    let mut docs: Vec<Value> = settled.values().cloned().collect();
    docs.push(page(
        "twin",
        "http://www.example.org/p",
        "Another text entirely, same page.",
    ));
    let (report, incremental) = run_with(&docs, &EngineConfig::default());
    assert_eq!(flag(&incremental, "twin", "www_unique_b"), json!(true));
    assert_eq!(flag(&incremental, "odd", "www_unique_b"), json!(false));
    let (_, full) = run_with(
        &docs,
        &EngineConfig {
            full: true,
            ..EngineConfig::default()
        },
    );
    assert_eq!(outputs(&incremental), outputs(&full));
    let d = &report.documents;
    assert_eq!(d.decided, 2, "{d:?}");
    assert!(d.reread > d.read, "the miss led to a full read: {d:?}");
}

pub(crate) fn check(docs: &[Value]) -> Report {
    run_docs(docs, &EngineConfig::default(), OutputFormat::Updates, true).0
}

#[test]
fn updates_touch_only_the_workers_fields_and_carry_the_version() {
    let docs = [
        page("a", "http://example.org/x", TEXT),
        page("b", "https://www.example.org/x", TEXT),
    ];
    let updates = updates_with(&docs, &EngineConfig::default());
    assert_eq!(updates.len(), 2, "one merged update per document");
    for u in &updates {
        let obj = u.as_object().unwrap();
        assert_eq!(obj["_version_"], json!(1_800_000_000_000_000_000i64));
        assert!(!obj.contains_key("text_t") && !obj.contains_key("sku"));
        for (k, v) in obj {
            if k != "id" && k != "_version_" {
                assert!(v.get("set").is_some(), "{k} is a set operation");
            }
        }
    }
}

#[test]
fn broken_input_fails_with_file_and_line_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    let output = dir.path().join("out.jsonl");
    for (text, want) in [
        (
            "{\"id\":\"a\",\"text_t\":\"x\"}\n{\"id\":\"b\",\n",
            "in.jsonl:2: broken JSON",
        ),
        (
            "{\"id\":\"a\"}\n\n{\"text_t\":\"no id\"}\n",
            "in.jsonl:3: document has no 'id'",
        ),
        ("[1,2]\n", "in.jsonl:1: expected a JSON object"),
    ] {
        std::fs::write(&input, text).unwrap();
        let store = FileStore::open(
            &input,
            Output::File(output.clone()),
            OutputFormat::Updates,
            "id",
            "_version_",
        )
        .unwrap();
        let err = block_on(engine::run(&store, &EngineConfig::default()))
            .unwrap_err()
            .to_string();
        assert!(err.contains(want), "{err:?} lacks {want:?}");
        assert!(!output.exists(), "no half-written output");
    }
    let bad_out = dir.path().join("no-such-dir").join("out.jsonl");
    std::fs::write(&input, "{\"id\":\"a\"}\n").unwrap();
    let err = FileStore::open(
        &input,
        Output::File(bad_out),
        OutputFormat::Updates,
        "id",
        "_version_",
    )
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains("cannot write the output"), "{err}");
}

#[test]
fn a_select_response_is_accepted_as_input() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("select.json");
    let output = dir.path().join("out.jsonl");
    let body = json!({"responseHeader":{"status":0,"QTime":1},"response":{"numFound":2,"start":0,"docs":[
        page("a", "https://a.org/1", TEXT), page("b", "https://a.org/2", TEXT)]}});
    std::fs::write(&input, serde_json::to_string_pretty(&body).unwrap()).unwrap();
    let store = FileStore::open(
        &input,
        Output::File(output.clone()),
        OutputFormat::Docs,
        "id",
        "_version_",
    )
    .unwrap();
    let report = block_on(engine::run(&store, &EngineConfig::default())).unwrap();
    assert_eq!(report.documents.read, 2);
    assert_eq!(report.dimensions["exact"].groups, 1);
}

// ------------------------------------------------------------------ incremental == full

/// Strips what the worker writes, as a crawler's re-index does.
fn reindexed(doc: &Value) -> Value {
    let mut d = doc.as_object().unwrap().clone();
    d.retain(|k, _| {
        [
            "id",
            "sku",
            "text_t",
            "title",
            "description_txt",
            "_version_",
        ]
        .contains(&k.as_str())
    });
    Value::Object(d)
}

pub(crate) fn outputs(docs: &Docs) -> BTreeMap<String, Vec<(String, Value)>> {
    docs.iter()
        .map(|(id, d)| {
            let mut fields: Vec<(String, Value)> = d
                .as_object()
                .unwrap()
                .iter()
                .filter(|(k, _)| {
                    k.ends_with("_unique_b")
                        || k.ends_with("_copycount_i")
                        || k.ends_with("signature_l")
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            fields.sort_by(|a, b| a.0.cmp(&b.0));
            (id.clone(), fields)
        })
        .collect()
}

#[derive(Debug, Clone)]
enum Op {
    Add(u8, u8),
    Replace(u8, u8, u8),
    Delete(u8),
    Run,
    /// A run killed after `k` of its updates reached the index.
    Interrupted(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u8..6, 0u8..40).prop_map(|(t, u)| Op::Add(t, u)),
        2 => (any::<u8>(), 0u8..6, 0u8..40).prop_map(|(s, t, u)| Op::Replace(s, t, u)),
        2 => any::<u8>().prop_map(Op::Delete),
        2 => Just(Op::Run),
        1 => any::<u8>().prop_map(Op::Interrupted),
    ]
}

fn make_doc(id: &str, text: u8, url: u8, version: i64) -> Value {
    let texts = [
        "alpha beta gamma delta",
        "alpha beta gamma delta",
        "Alpha, beta; gamma delta!",
        "",
        "zeta eta theta iota",
        "one two",
    ];
    let hosts = [
        "http://a.org",
        "https://a.org",
        "http://www.a.org",
        "https://www.a.org",
        "https://WWW.A.org",
    ];
    // What the canonical order ranks by: clutter a searcher should not see.
    let clutter = ["", "?sid=9", "?utm_source=feed", "/index.html"];
    let titles = [
        json!(["Home"]),
        json!(["Home"]),
        json!(["About"]),
        json!([]),
    ];
    let mut d = json!({
        "id": id,
        "sku": format!(
            "{}/{}{}",
            hosts[(url % 5) as usize],
            (url / 5) % 2,
            clutter[(url / 10) as usize % 4]
        ),
        "text_t": texts[text as usize % texts.len()],
        "title": titles[(text as usize + url as usize) % titles.len()],
        "_version_": version,
    });
    if url.is_multiple_of(3) {
        d["description_txt"] = json!(["same description"]);
    }
    d
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random adds, replaces and deletes, each followed (sometimes) by an incremental run: the end
    /// state equals one `--full` run on the final documents, and a run interrupted before its output
    /// was committed changes nothing.
    #[test]
    fn incremental_runs_end_where_a_full_run_does(
        ops in proptest::collection::vec(op(), 1..25),
        order in 0u8..3,
    ) {
        let mut docs: BTreeMap<String, Value> = BTreeMap::new();
        let mut version = 1_800_000_000_000_000_000i64;
        let mut next_id = 0u32;
        // YaCy's order, canonical first without rules, and with rules.
        let cfg = match order {
            0 => EngineConfig {
                preference: Preference { order: Order::Yacy, ..Preference::default() },
                ..EngineConfig::default()
            },
            1 => EngineConfig::default(),
            _ => EngineConfig {
                url_rules: Some(Arc::new(a_org_rules())),
                ..EngineConfig::default()
            },
        };
        for op in ops {
            version += 1;
            match op {
                Op::Add(t, u) => {
                    let id = format!("d{next_id:03}");
                    next_id += 1;
                    docs.insert(id.clone(), make_doc(&id, t, u, version));
                }
                Op::Replace(s, t, u) if !docs.is_empty() => {
                    let id = docs.keys().nth(s as usize % docs.len()).unwrap().clone();
                    docs.insert(id.clone(), make_doc(&id, t, u, version));
                }
                Op::Delete(s) if !docs.is_empty() => {
                    let id = docs.keys().nth(s as usize % docs.len()).unwrap().clone();
                    docs.remove(&id);
                }
                Op::Interrupted(k) if !docs.is_empty() => {
                    let input: Vec<Value> = docs.values().cloned().collect();
                    let updates = updates_with(&input, &cfg);
                    let k = if updates.is_empty() { 0 } else { k as usize % updates.len() };
                    for u in &updates[..k] {
                        let id = u["id"].as_str().unwrap();
                        let doc = docs.get_mut(id).unwrap().as_object_mut().unwrap();
                        for (field, op) in u.as_object().unwrap() {
                            if field == "id" || field == "_version_" {
                                continue;
                            }
                            match &op["set"] {
                                Value::Null => { doc.remove(field); }
                                v => { doc.insert(field.clone(), v.clone()); }
                            }
                        }
                    }
                }
                Op::Run if !docs.is_empty() => {
                    let input: Vec<Value> = docs.values().cloned().collect();
                    let (_, out) = run_with(&input, &cfg);
                    docs = out;
                }
                _ => {}
            }
        }
        prop_assume!(!docs.is_empty());
        let input: Vec<Value> = docs.values().cloned().collect();
        let (_, incremental) = run_with(&input, &cfg);
        let fresh: Vec<Value> = docs.values().map(reindexed).collect();
        let (_, full) = run_with(&fresh, &EngineConfig { full: true, ..cfg.clone() });
        prop_assert_eq!(outputs(&incremental), outputs(&full));
        // And the incremental result is settled: nothing left to write.
        let settled: Vec<Value> = incremental.values().cloned().collect();
        prop_assert!(updates_with(&settled, &cfg).is_empty());
    }
}

/// Rules for the proptest's site: `sid` does not matter, most pages are under http and the bare
/// host.
fn a_org_rules() -> Rules {
    super::preference::site_rules("a.org")
}

/// The near-duplicate texts of the next proptest: a chain a - b - c (b bridges a and c), a copy of
/// a in upper case, a text near nothing, and one without words.
fn near_texts() -> Vec<String> {
    let [a, b, c] = crate::scenarios::solr_work::chain("prop");
    let upper = a.to_uppercase();
    vec![
        a,
        b,
        c,
        upper,
        "quite another page about something else entirely".to_owned(),
        "--- !!!".to_owned(),
    ]
}

/// What `--full` decides, the near group ids included.
fn near_outputs(docs: &Docs) -> BTreeMap<String, Vec<(String, Value)>> {
    let mut out = outputs(docs);
    for (id, fields) in out.iter_mut() {
        fields.push((
            "near_group_s".to_owned(),
            docs[id].get("near_group_s").cloned().unwrap_or(Value::Null),
        ));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Near clusters that merge (a bridge added), split (the bridge re-indexed with other text, or
    /// deleted) and lose their representative, decided by a store that answers lookups, so that
    /// incremental runs look up only what changed: the end state equals one `--full` run (made with
    /// a budget of a few bytes, so that its near keys and signatures go through temporary files),
    /// and it is settled.
    #[test]
    fn near_clusters_looked_up_by_the_change_end_where_a_full_run_does(
        ops in proptest::collection::vec(op(), 1..25)
    ) {
        let texts = near_texts();
        let mut docs: BTreeMap<String, Value> = BTreeMap::new();
        let mut version = 1_800_000_000_000_000_000i64;
        let mut next_id = 0u32;
        let cfg = EngineConfig::default();
        let doc = |id: &str, t: u8, u: u8, version: i64| {
            json!({
                "id": id,
                "sku": format!("https://h{}.example/{}", u % 4, u),
                "text_t": texts[t as usize % texts.len()],
                "_version_": version,
            })
        };
        // Ten pages near nothing, so that a change stays small next to the index.
        for i in 0..10 {
            let id = format!("s{i:02}");
            docs.insert(id.clone(), json!({
                "id": id, "sku": format!("https://s.example/{i}"),
                "text_t": format!("standalone page number {i} with words of its own w{i}x w{i}y"),
                "_version_": version,
            }));
        }
        for op in ops {
            version += 1;
            match op {
                Op::Add(t, u) => {
                    let id = format!("d{next_id:03}");
                    next_id += 1;
                    docs.insert(id.clone(), doc(&id, t, u, version));
                }
                Op::Replace(s, t, u) => {
                    let id = docs.keys().nth(s as usize % docs.len()).unwrap().clone();
                    docs.insert(id.clone(), doc(&id, t, u, version));
                }
                Op::Delete(s) if docs.len() > 1 => {
                    let id = docs.keys().nth(s as usize % docs.len()).unwrap().clone();
                    docs.remove(&id);
                }
                Op::Run | Op::Interrupted(_) => {
                    let input: Vec<Value> = docs.values().cloned().collect();
                    let (_, out) = run_indexed(&input, &cfg);
                    docs = out;
                }
                _ => {}
            }
        }
        let input: Vec<Value> = docs.values().cloned().collect();
        let (report, incremental) = run_indexed(&input, &cfg);
        prop_assert_eq!(report.dimensions["near"].lookup_fallbacks, Some(0));
        let fresh: Vec<Value> = docs.values().map(reindexed).collect();
        let spilled = EngineConfig { full: true, memory: 64, ..cfg.clone() };
        let (full_report, full) = run_with(&fresh, &spilled);
        prop_assert!(full_report.memory.spilled_bytes > 0);
        prop_assert_eq!(near_outputs(&incremental), near_outputs(&full));
        let settled: Vec<Value> = incremental.values().cloned().collect();
        let (again, _) = run_indexed(&settled, &cfg);
        prop_assert_eq!(again.documents.written, 0);
    }
}

/// A key that very many documents hold (1,200 copies of one boilerplate text) and one new copy: the
/// lookups would hand out every copy, past the budget (1,000 documents for a change of one), so the
/// round reads every stored key instead, says so in the report, and ends where `--full` does.
#[test]
fn a_key_held_by_very_many_documents_falls_back_to_reading_every_key() {
    let cfg = EngineConfig::default();
    let boiler = "Home page of the site, nothing else here";
    let mut docs: Vec<Value> = (0..1200)
        .map(|i| {
            page(
                &format!("b{i:04}"),
                &format!("https://b{i}.example/"),
                boiler,
            )
        })
        .collect();
    docs.extend((0..10).map(|i| {
        page(
            &format!("u{i}"),
            &format!("https://u.example/{i}"),
            &format!("a page of its own, number {i}, words u{i}x u{i}y u{i}z"),
        )
    }));
    let (_, first) = run_indexed(&docs, &cfg);
    let mut stored: Vec<Value> = first.values().cloned().collect();
    stored.push(page("new", "https://a.example/", boiler));
    let (report, incremental) = run_indexed(&stored, &cfg);
    assert_eq!(report.dimensions["near"].lookup_fallbacks, Some(1));
    assert_eq!(flag(&incremental, "b0000", "near_copycount_i"), json!(1201));
    let fresh: Vec<Value> = incremental.values().map(reindexed).collect();
    let (_, full) = run_with(
        &fresh,
        &EngineConfig {
            full: true,
            ..cfg.clone()
        },
    );
    assert_eq!(near_outputs(&incremental), near_outputs(&full));
}

// ------------------------------------------------------------------------------- scheme guard

/// `n` generated pages signed as a crawler would have signed them, with `signer`.
fn signed_with(n: u64, signer: &solr_dedup::signature::Signer) -> Vec<Value> {
    crate::truth::generated(n, 61, 1.0)
        .into_iter()
        .map(|mut d| {
            let text = d["text_t"].as_str().unwrap_or("").to_owned();
            d["exact_signature_l"] = json!(signer.exact(&text));
            d["fuzzy_signature_l"] = json!(signer.profile(&text).signature());
            d
        })
        .collect()
}

/// Runs (or checks) on `docs` and returns the engine's answer and what was written.
fn guarded(
    docs: &[Value],
    cfg: &EngineConfig,
    check: bool,
) -> (Result<Report, engine::EngineError>, String) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    write_jsonl(&input, docs);
    let output = input.with_extension("out.jsonl");
    let store = FileStore::open(
        &input,
        Output::File(output.clone()),
        OutputFormat::Updates,
        "id",
        "_version_",
    )
    .unwrap();
    let result = block_on(async {
        if check {
            engine::check(&store, cfg).await
        } else {
            engine::run(&store, cfg).await
        }
    });
    (result, std::fs::read_to_string(&output).unwrap_or_default())
}

fn md5_signer(min_token_len: usize, quant_rate: f32) -> solr_dedup::signature::Signer {
    solr_dedup::signature::Signer {
        scheme: solr_dedup::signature::Scheme::Md5,
        params: solr_dedup::signature::ProfileParams {
            min_token_len,
            quant_rate,
        },
    }
}

#[test]
fn an_index_signed_with_another_scheme_stops_the_run_before_it_writes() {
    // Signed by Solr's own TextProfileSignature defaults (md5, 2, 0.01); this run is yacy's.
    let docs = signed_with(40, &md5_signer(2, 0.01));
    let (result, written) = guarded(&docs, &EngineConfig::default(), false);
    let Err(engine::EngineError::SchemeMismatch(m)) = result else {
        panic!("the guard let the run go on: {result:?}");
    };
    assert_eq!((m.sampled, m.agreeing), (40, 0));
    let text = m.to_string();
    assert!(
        text.contains("signed with --scheme md5 --min-token-len 2 --quant-rate 0.01"),
        "{text}"
    );
    assert!(text.contains("--full"), "{text}");
    assert_eq!(written, "", "nothing is written before the guard");
    // check says the same.
    let (result, _) = guarded(&docs, &EngineConfig::default(), true);
    assert!(
        matches!(result, Err(engine::EngineError::SchemeMismatch(_))),
        "{result:?}"
    );
}

#[test]
fn the_guard_names_uncommon_profile_parameters() {
    let docs = signed_with(30, &md5_signer(1, 0.05));
    let cfg = EngineConfig {
        signer: md5_signer(2, 0.01),
        ..EngineConfig::default()
    };
    let (result, _) = guarded(&docs, &cfg, false);
    let Err(engine::EngineError::SchemeMismatch(m)) = result else {
        panic!("{result:?}");
    };
    // Short pages give the same profile under neighbouring quantisation rates, so the guard may name
    // another rate than the crawler's; what it names must sign every sampled page as it is signed.
    let found = m.index.expect("the settings are found");
    assert_eq!(
        (found.scheme, found.params.min_token_len),
        (solr_dedup::signature::Scheme::Md5, 1),
        "{m}"
    );
    let signer = solr_dedup::signature::Signer {
        scheme: found.scheme,
        params: found.params,
    };
    for d in &docs {
        let text = d["text_t"].as_str().unwrap_or("");
        assert_eq!(
            d["fuzzy_signature_l"],
            json!(signer.profile(text).signature()),
            "{m}"
        );
    }
    assert!(
        m.to_string().contains(&format!("signed with {found}")),
        "{m}"
    );
}

#[test]
fn full_signs_everything_again_whatever_the_index_was_signed_with() {
    let docs = signed_with(40, &md5_signer(2, 0.01));
    let cfg = EngineConfig {
        full: true,
        ..EngineConfig::default()
    };
    let (result, written) = guarded(&docs, &cfg, false);
    let report = result.expect("--full skips the guard");
    assert_eq!(report.documents.signed, 40);
    assert_eq!(written.lines().count(), 40);
}

#[test]
fn texts_changed_after_signing_do_not_trip_the_guard() {
    // Signed with this run's scheme, then a quarter of the texts changed without new signatures.
    let mut docs = signed_with(
        40,
        &solr_dedup::signature::Signer::new(solr_dedup::signature::Scheme::Yacy),
    );
    for d in docs.iter_mut().step_by(4) {
        d["text_t"] = json!("An edited text that no signature was computed for.");
    }
    let (result, _) = guarded(&docs, &EngineConfig::default(), false);
    result.expect("a few stale signatures are no other scheme");
}

#[test]
fn a_sample_mostly_out_of_date_stops_the_run() {
    // More than half of the sample disagrees with every scheme: the guard stops, naming none.
    let mut docs = signed_with(
        20,
        &solr_dedup::signature::Signer::new(solr_dedup::signature::Scheme::Yacy),
    );
    for (i, d) in docs.iter_mut().enumerate().filter(|(i, _)| i % 4 != 0) {
        d["text_t"] = json!(format!("Edited text number {i}, never signed."));
    }
    let (result, _) = guarded(&docs, &EngineConfig::default(), false);
    let Err(engine::EngineError::SchemeMismatch(m)) = result else {
        panic!("{result:?}");
    };
    assert_eq!((m.sampled, m.agreeing, m.index), (20, 5, None));
    assert!(m.to_string().contains("no usual scheme fits"), "{m}");
}

/// A budget of a few kilobytes sends the signatures waiting for pass C and the near-duplicate keys
/// to temporary files from the first page on: the run writes exactly what the same run in memory
/// writes, says what it spilled, and leaves nothing in its temporary folder.
#[test]
fn a_tiny_memory_budget_spills_and_writes_what_a_run_in_memory_writes() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("corpus.jsonl");
    let mut corpus = Vec::new();
    crate::truth::gen_corpus::generate(1500, 3, 1.0, &mut corpus, None::<&mut Vec<u8>>).unwrap();
    std::fs::write(&input, corpus).unwrap();
    let spill_dir = tempfile::tempdir().unwrap();
    let in_memory = EngineConfig::default();
    let tiny = EngineConfig {
        memory: 4 << 10,
        temp_dir: Some(spill_dir.path().to_owned()),
        ..EngineConfig::default()
    };
    for format in [OutputFormat::Updates, OutputFormat::Docs] {
        let (want_report, want) = run_file(&input, &in_memory, format, false);
        let (report, got) = run_file(&input, &tiny, format, false);
        assert!(want.len() > 1000, "the corpus has doubles to write");
        assert_eq!(got, want, "the same updates, in the same order");
        assert_eq!(report.dimensions, want_report.dimensions);
        assert_eq!(report.documents, want_report.documents);
        assert_eq!(want_report.memory.budget_bytes, 256 << 20);
        assert_eq!(want_report.memory.spilled_bytes, 0, "1,500 pages fit");
        assert_eq!(report.memory.budget_bytes, 4096);
        // Every page's signatures, and every near key (12 bytes a pair), at least.
        assert!(
            report.memory.spilled_bytes > 1500 * 12,
            "{:?}",
            report.memory
        );
        assert_eq!(std::fs::read_dir(spill_dir.path()).unwrap().count(), 0);
    }
}

/// A temporary folder that cannot be written stops a run that must spill with one line naming the
/// folder, before anything is written.
#[test]
fn a_temp_dir_that_cannot_be_written_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    let docs: Vec<Value> = (0..50)
        .map(|i| {
            page(
                &format!("d{i}"),
                &format!("https://h.example/{i}"),
                "same text",
            )
        })
        .collect();
    write_jsonl(&input, &docs);
    let output = input.with_extension("out.jsonl");
    let store = FileStore::open(
        &input,
        Output::File(output.clone()),
        OutputFormat::Updates,
        "id",
        "_version_",
    )
    .unwrap();
    let missing = dir.path().join("no-such-folder");
    let cfg = EngineConfig {
        memory: 64,
        temp_dir: Some(missing.clone()),
        ..EngineConfig::default()
    };
    let err = block_on(engine::run(&store, &cfg)).unwrap_err();
    let line = format!("{:#}", anyhow::Error::from(err));
    assert!(line.contains(&*missing.to_string_lossy()), "{line}");
    assert!(line.contains("--temp-dir"), "{line}");
    assert!(!output.exists(), "nothing written");
}
