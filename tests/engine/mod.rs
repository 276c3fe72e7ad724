//! Engine scenarios on the file store: every dimension and rule of `postprocessing.md`.
//!
//! Expected flags and counts are worked out from the spec's rules by hand in each test, never taken
//! from a run of the code under test.

use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{json, Value};
use solr_dedup::engine::{
    self, DecidedUnder, Dimension, EngineConfig, Order, Preference, Report, Scope, DEFAULT_MEMORY,
};
use solr_dedup::store::file::{FileStore, Output, OutputFormat};
use solr_dedup::store::Filter;
use solr_dedup::urlrules::Rules;

use crate::support::hooked::Hooked;

mod guard;
mod incremental;
mod model;

pub(crate) use crate::support::corpus::{block_on, read_jsonl, run_file, write_jsonl};
pub(crate) use incremental::check;
pub(crate) use model::outputs;

pub(crate) type Docs = BTreeMap<String, Value>;

/// [`run_with`] on the file store as a store with an index: it answers lookups (split at 500
/// values, as the Solr store splits at 2000) instead of telling the engine to read everything, so
/// that the lookup path runs here against the file store's exact filter evaluation.
fn run_indexed(docs: &[Value], cfg: &EngineConfig) -> (Report, Docs) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    write_jsonl(&input, docs);
    let output = input.with_extension("out.jsonl");
    let store = Hooked::new(
        FileStore::open(
            &input,
            Output::File(output.clone()),
            OutputFormat::Docs,
            "id",
            "_version_",
        )
        .unwrap(),
    )
    .with_max_lookup_values(500);
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
    crate::support::page::page(id)
        .url(url)
        .text(text)
        .version(crate::support::page::VERSION)
        .build()
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

/// Strips what the worker writes, as a crawler's re-index does.
pub(crate) fn reindexed(doc: &Value) -> Value {
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

/// The documents of an index as a crawler changes them, for the property tests: each change carries
/// the version set by [`Crawl::next_change`], added documents get ids `d000`, `d001`, …, and a
/// replace or delete picks the document at its number modulo the documents there are (none while
/// there are none).
pub(crate) struct Crawl {
    pub(crate) docs: Docs,
    version: i64,
    next_id: u32,
}

impl Crawl {
    pub(crate) fn new() -> Self {
        Crawl {
            docs: Docs::new(),
            version: 1_800_000_000_000_000_000,
            next_id: 0,
        }
    }

    /// The version of the next change (one a step, whatever the step does).
    pub(crate) fn next_change(&mut self) {
        self.version += 1;
    }

    pub(crate) fn version(&self) -> i64 {
        self.version
    }

    /// Adds `make(id, version)` under the next id.
    pub(crate) fn add(&mut self, make: impl FnOnce(&str, i64) -> Value) {
        let id = format!("d{:03}", self.next_id);
        self.next_id += 1;
        self.docs.insert(id.clone(), make(&id, self.version));
    }

    /// Re-indexes the `pick`th document as `make(id, version)`.
    pub(crate) fn replace(&mut self, pick: u8, make: impl FnOnce(&str, i64) -> Value) {
        if let Some(id) = self.pick(pick) {
            let doc = make(&id, self.version);
            self.docs.insert(id, doc);
        }
    }

    /// Deletes the `pick`th document.
    pub(crate) fn delete(&mut self, pick: u8) {
        if let Some(id) = self.pick(pick) {
            self.docs.remove(&id);
        }
    }

    fn pick(&self, pick: u8) -> Option<String> {
        let n = self.docs.len();
        (n > 0).then(|| self.docs.keys().nth(pick as usize % n).unwrap().clone())
    }

    /// The documents as a store's input.
    pub(crate) fn input(&self) -> Vec<Value> {
        self.docs.values().cloned().collect()
    }
}

/// An incremental run over `docs` under `cfg`, and a `--full` run over the same documents
/// re-indexed (the worker's fields stripped): (incremental, full), whose outputs the property tests
/// compare.
/// `cfg` run after runs under its own order, as `run` and serve keep it between runs against Solr
/// (without it, every group whose best rank is shared is decided again).
pub(crate) fn kept(cfg: EngineConfig) -> EngineConfig {
    EngineConfig {
        decided_under: DecidedUnder::of(&cfg),
        ..cfg
    }
}

pub(crate) fn incremental_and_full(docs: &Docs, cfg: &EngineConfig) -> (Docs, Docs) {
    let input: Vec<Value> = docs.values().cloned().collect();
    let (_, incremental) = run_with(&input, cfg);
    let fresh: Vec<Value> = docs.values().map(reindexed).collect();
    let full = EngineConfig {
        full: true,
        ..cfg.clone()
    };
    (incremental, run_with(&fresh, &full).1)
}
