//! One scenario, three targets: the in-process fake Solr, a real standalone Solr core, and a real
//! two-shard SolrCloud collection (`crate::support::real_solr` starts both from Solr's own test
//! framework, once per test binary). Without Java and Maven the real variants show as ignored (see
//! `build.rs`).
//!
//! Each test isolates its documents on a shared core: their ids start with a tag of the test, they
//! carry `test_s:<tag>`, and the worker runs with `--filter test_s:<tag>`. Documents are loaded and
//! read back over plain HTTP, so the checks never go through the code under test.
//!
//! Expected flags and counts come from the file store's `--full` run on the same documents (the file
//! store is checked against hand-worked expectations and the generator's ground truth elsewhere), and
//! every signature is recomputed from the stored text with the signature library (checked against
//! Java's vectors), so a stale signature cannot pass.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{json, Map, Value};
use solr_dedup::engine::EngineConfig;
use solr_dedup::signature::{Scheme, Signer};
use solr_dedup::store::file::OutputFormat;

use crate::support::corpus::{run_file, write_jsonl};

use crate::support::fake_solr::{FakeOptions, FakeSolr};

/// The fields the worker writes.
pub const WORKER_FIELDS: [&str; 20] = [
    "exact_signature_l",
    "fuzzy_signature_l",
    "fuzzy_signature_text_t",
    "fuzzy_signature_words_i",
    "title_exact_signature_l",
    "description_exact_signature_l",
    "exact_signature_unique_b",
    "fuzzy_signature_unique_b",
    "title_unique_b",
    "description_unique_b",
    "www_unique_b",
    "http_unique_b",
    "exact_signature_copycount_i",
    "fuzzy_signature_copycount_i",
    "near_trials_ls",
    "near_keys_ls",
    "near_version_s",
    "near_unique_b",
    "near_copycount_i",
    "near_group_s",
];

/// Where a scenario runs.
pub enum Backend {
    /// The fake, started for this test alone.
    Fake(FakeSolr),
    /// A real standalone core, shared: documents are told apart by the tag.
    Real,
    /// A real SolrCloud collection of two shards, shared in the same way.
    Cloud,
}

/// A scenario's view of its core.
pub struct Target {
    /// The fake or the real core.
    pub backend: Backend,
    /// The core URL.
    pub core_url: String,
    /// The tag of this test's documents.
    pub tag: String,
    credentials: Option<(String, String)>,
    http: reqwest::Client,
    rt: tokio::runtime::Runtime,
}

static SEQ: AtomicU64 = AtomicU64::new(0);

impl Target {
    /// A fresh fake Solr.
    pub fn fake(name: &str) -> Target {
        Target::fake_with(name, FakeOptions::default())
    }

    /// A fresh fake Solr with options (basic auth, schema edits).
    pub fn fake_with(name: &str, opts: FakeOptions) -> Target {
        let credentials = opts.basic_auth.clone();
        let fake = FakeSolr::start_with(opts);
        let core_url = fake.core_url();
        Target::new(Backend::Fake(fake), core_url, name, credentials)
    }

    /// The real standalone core.
    pub fn real(name: &str) -> Target {
        let solr = crate::support::real_solr::real_solr();
        Target::shared(Backend::Real, &solr.standalone, name)
    }

    /// The real standalone node's second core, `inplace` (the launcher makes it from the same
    /// configset), whose schema the in-place profile's tests change: the other tests' core keeps
    /// YaCy's profile.
    pub fn in_place(name: &str) -> Target {
        Target::standalone_core("inplace", name)
    }

    /// Another core of the real standalone node, by name (the launcher's `inplace`, `signed`,
    /// `unstored`).
    fn standalone_core(core: &str, name: &str) -> Target {
        let solr = crate::support::real_solr::real_solr();
        Target::shared(Backend::Real, &sibling(&solr.standalone, core), name)
    }

    /// The real standalone core `signed`: the plugin's configset, whose default update chain signs
    /// every page as it is indexed (`solr-plugin/`, the jar in the core's `lib/`).
    pub fn signed(name: &str) -> Target {
        Target::standalone_core("signed", name)
    }

    /// The real standalone core `unstored`: `signed`'s configset with `text_t` not stored.
    pub fn unstored(name: &str) -> Target {
        Target::standalone_core("unstored", name)
    }

    /// The real SolrCloud's two-shard collection `signed`, from the plugin's configset.
    pub fn signed_cloud(name: &str) -> Target {
        let solr = crate::support::real_solr::real_solr();
        Target::shared(Backend::Cloud, &sibling(&solr.cloud, "signed"), name)
    }

    /// The real two-shard SolrCloud collection.
    pub fn cloud(name: &str) -> Target {
        let solr = crate::support::real_solr::real_solr();
        Target::shared(Backend::Cloud, &solr.cloud, name)
    }

    /// The four-node SolrCloud's collection of four shards with two replicas each (the scale
    /// scenario's; started apart from the others, without credentials).
    pub fn big_cloud(name: &str) -> Target {
        let big = crate::support::real_solr::big_cloud();
        let t = Target::new(Backend::Cloud, big.cloud.clone(), name, None);
        t.wipe();
        t
    }

    fn shared(backend: Backend, url: &str, name: &str) -> Target {
        let credentials = crate::support::real_solr::real_solr().credentials.clone();
        let t = Target::new(backend, url.to_owned(), name, credentials);
        t.wipe();
        t
    }

    /// Basic-auth credentials of the core, if it has any.
    pub fn credentials(&self) -> Option<&(String, String)> {
        self.credentials.as_ref()
    }

    /// Whether this is a SolrCloud collection.
    pub fn is_cloud(&self) -> bool {
        matches!(self.backend, Backend::Cloud)
    }

    fn new(
        backend: Backend,
        core_url: String,
        name: &str,
        credentials: Option<(String, String)>,
    ) -> Target {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis();
        let tag = format!(
            "{name}-{}-{stamp}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        )
        .replace('_', "-");
        solr_dedup::solr_client::install_crypto_provider();
        Target {
            backend,
            core_url,
            tag,
            credentials,
            http: reqwest::Client::new(),
            rt: tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap(),
        }
    }

    /// The fake, for scenarios that inject faults (they run against the fake only).
    pub fn fake_solr(&self) -> &FakeSolr {
        match &self.backend {
            Backend::Fake(f) => f,
            Backend::Real | Backend::Cloud => panic!("this scenario needs the fake"),
        }
    }

    /// Runs a future on the harness's runtime from any thread, even one inside another runtime.
    pub fn block<F: std::future::Future + Send>(&self, f: F) -> F::Output
    where
        F::Output: Send,
    {
        std::thread::scope(|s| s.spawn(|| self.rt.block_on(f)).join().unwrap())
    }

    async fn post(&self, path: &str, params: &[(&str, &str)], body: Value) -> Value {
        let mut url = url::Url::parse(&format!("{}{path}", self.core_url)).unwrap();
        url.query_pairs_mut()
            .append_pair("wt", "json")
            .extend_pairs(params);
        let mut req = self
            .http
            .post(url)
            .header("Content-Type", "application/json")
            .body(body.to_string());
        if let Some((u, p)) = &self.credentials {
            req = req.basic_auth(u, Some(p));
        }
        let resp = req.send().await.expect("the core answers");
        let status = resp.status();
        let text = resp.text().await.unwrap();
        assert!(status.is_success(), "{path}: HTTP {status}: {text}");
        serde_json::from_str(&text).unwrap()
    }

    /// The full id of a document of this test.
    pub fn id(&self, short: &str) -> String {
        format!("{}-{short}", self.tag)
    }

    /// A document's short id from its full one.
    pub fn short<'a>(&self, id: &'a str) -> &'a str {
        id.strip_prefix(&format!("{}-", self.tag)).unwrap_or(id)
    }

    /// Adds (or replaces) documents as a crawler would: whole documents, ids tagged, then one commit.
    pub fn load(&self, docs: &[Value]) {
        let docs: Vec<Value> = docs
            .iter()
            .map(|d| {
                let mut d = d.as_object().unwrap().clone();
                d.remove("_version_");
                let id = d["id"].as_str().unwrap().to_owned();
                d.insert("id".into(), json!(self.id(&id)));
                d.insert("test_s".into(), json!(self.tag));
                Value::Object(d)
            })
            .collect();
        for chunk in docs.chunks(500) {
            self.block(self.post("/update", &[], Value::Array(chunk.to_vec())));
        }
        self.commit();
    }

    /// The documents (short ids) that the core URL's node forwards to another shard's leader: on a
    /// SolrCloud collection of two shards, about half; on a standalone core, none. Found by an atomic
    /// update of a field of the test's own (`route_probe_s`) with `versions=true`, which answers
    /// version 0 for a forwarded document. Commits, so that searches see the probe too.
    pub fn forwarded(&self, short_ids: &[&str]) -> std::collections::BTreeSet<String> {
        let body: Vec<Value> = short_ids
            .iter()
            .map(|s| json!({"id": self.id(s), "route_probe_s": {"set": "probe"}}))
            .collect();
        let answer = self.block(self.post(
            "/update",
            &[("versions", "true"), ("commit", "true")],
            Value::Array(body),
        ));
        let adds = answer["adds"].as_array().expect("adds").clone();
        adds.chunks(2)
            .filter(|pair| pair[1] == json!(0))
            .map(|pair| self.short(pair[0].as_str().unwrap()).to_owned())
            .collect()
    }

    /// The `_version_` of each of `docs` (as loaded, by their short ids): what a run changed.
    pub fn versions_of(&self, docs: &[Value]) -> BTreeMap<String, i64> {
        let ids: Vec<String> = docs
            .iter()
            .map(|d| self.short(d["id"].as_str().unwrap()).to_owned())
            .collect();
        let short: Vec<&str> = ids.iter().map(String::as_str).collect();
        self.versions(&short)
    }

    /// The real-time `_version_` of documents (short ids); a missing document is left out.
    pub fn versions(&self, short_ids: &[&str]) -> BTreeMap<String, i64> {
        let ids: Vec<String> = short_ids.iter().map(|s| self.id(s)).collect();
        let answer: Value = self.block(async {
            let mut req = self
                .http
                .post(format!("{}/get", self.core_url))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .body(
                    url::form_urlencoded::Serializer::new(String::new())
                        .extend_pairs(ids.iter().map(|id| ("id", id.as_str())))
                        .extend_pairs([("fl", "id,_version_"), ("wt", "json")])
                        .finish(),
                );
            if let Some((u, p)) = &self.credentials {
                req = req.basic_auth(u, Some(p));
            }
            let text = req.send().await.unwrap().text().await.unwrap();
            serde_json::from_str(&text).unwrap()
        });
        // Solr answers one id with `doc` (null when missing), several with `response.docs`.
        let docs = match answer.get("doc") {
            Some(Value::Null) => Vec::new(),
            Some(doc) => vec![doc.clone()],
            None => answer["response"]["docs"].as_array().expect("docs").clone(),
        };
        docs.iter()
            .map(|d| {
                (
                    self.short(d["id"].as_str().unwrap()).to_owned(),
                    d["_version_"].as_i64().unwrap(),
                )
            })
            .collect()
    }

    /// Deletes documents by their short ids, without a commit.
    pub fn delete(&self, short_ids: &[&str]) {
        let ids: Vec<String> = short_ids.iter().map(|s| self.id(s)).collect();
        self.block(self.post("/update", &[], json!({ "delete": ids })));
    }

    /// Sends Schema API commands to the core; panics unless Solr takes them.
    pub fn schema_post(&self, commands: Value) -> Value {
        self.block(self.post("/schema", &[], commands))
    }

    /// Sends an update body (atomic updates, deletions) as it is, then commits.
    pub fn update(&self, body: Value) -> Value {
        self.block(self.post("/update", &[("commit", "true")], body))
    }

    /// A hard commit.
    pub fn commit(&self) {
        self.block(self.post("/update", &[("commit", "true")], json!([])));
    }

    fn wipe(&self) {
        self.block(self.post(
            "/update",
            &[("commit", "true")],
            json!({"delete": {"query": format!("test_s:\"{}\"", self.tag)}}),
        ));
    }

    /// This test's documents as `/select` sees them after a commit, by short id.
    pub fn docs(&self) -> BTreeMap<String, Map<String, Value>> {
        self.commit();
        let mut out = BTreeMap::new();
        let mut mark = "*".to_owned();
        loop {
            let fq = format!("test_s:\"{}\"", self.tag);
            let answer: Value = self.block(async {
                let mut req = self
                    .http
                    .post(format!("{}/select", self.core_url))
                    .header("Content-Type", "application/x-www-form-urlencoded")
                    .body(
                        url::form_urlencoded::Serializer::new(String::new())
                            .extend_pairs([
                                ("q", "*:*"),
                                ("fq", fq.as_str()),
                                ("fl", "*"),
                                ("rows", "500"),
                                ("sort", "id asc"),
                                ("cursorMark", mark.as_str()),
                                ("wt", "json"),
                            ])
                            .finish(),
                    );
                if let Some((u, p)) = &self.credentials {
                    req = req.basic_auth(u, Some(p));
                }
                let text = req.send().await.unwrap().text().await.unwrap();
                serde_json::from_str(&text).unwrap()
            });
            let docs = answer["response"]["docs"].as_array().expect("docs").clone();
            for d in docs {
                let d = d.as_object().unwrap().clone();
                let id = d["id"].as_str().unwrap().to_owned();
                out.insert(self.short(&id).to_owned(), d);
            }
            let next = answer["nextCursorMark"].as_str().unwrap().to_owned();
            if next == mark {
                return out;
            }
            mark = next;
        }
    }

    /// `GET url` (any node's or core's, with the target's credentials) as JSON; panics unless 2xx.
    pub fn get_json(&self, url: &str, params: &[(&str, &str)]) -> Value {
        let mut url = url::Url::parse(url).unwrap();
        url.query_pairs_mut()
            .append_pair("wt", "json")
            .extend_pairs(params);
        self.block(async {
            let mut req = self.http.get(url.clone());
            if let Some((u, p)) = &self.credentials {
                req = req.basic_auth(u, Some(p));
            }
            let resp = req.send().await.expect("the node answers");
            let status = resp.status();
            let text = resp.text().await.unwrap();
            assert!(status.is_success(), "{url}: HTTP {status}: {text}");
            serde_json::from_str(&text).unwrap()
        })
    }

    /// `solr-dedup ARGS --solr <core> --filter test_s:<tag>`, credentials through the environment.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = self.command_unfiltered(args);
        cmd.args(["--filter", &format!("test_s:\"{}\"", self.tag)]);
        cmd
    }

    /// `solr-dedup ARGS --solr <core>` over the whole index, credentials through the environment:
    /// only for the fake, which holds this test's documents alone.
    fn command_unfiltered(&self, args: &[&str]) -> Command {
        let mut cmd = crate::support::cmd::solr_dedup();
        cmd.args(args).args(["--solr", &self.core_url]);
        if let Some((u, p)) = &self.credentials {
            cmd.env("SOLR_USER", u).env("SOLR_PASSWORD", p);
        }
        cmd
    }

    /// Runs the worker to the end.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("the binary runs")
    }

    /// Runs the worker and returns its JSON report; panics unless it exits 0.
    pub fn run_ok(&self, args: &[&str], dir: &Path) -> Value {
        self.report_of(args, dir, |all| self.command(all))
    }

    /// [`Target::run_ok`] over the whole index (no `--filter`): on the fake alone, which holds
    /// this test's documents and nothing else.
    pub fn run_ok_unfiltered(&self, args: &[&str], dir: &Path) -> Value {
        assert!(
            matches!(self.backend, Backend::Fake(_)),
            "a run over the whole index is for the fake alone"
        );
        self.report_of(args, dir, |all| self.command_unfiltered(all))
    }

    /// Runs the command `command` makes of `args` with a report in `dir`; its report, panicking
    /// unless it exits 0.
    fn report_of(&self, args: &[&str], dir: &Path, command: impl Fn(&[&str]) -> Command) -> Value {
        let report = dir.join(format!(
            "report-{}.json",
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let mut all = args.to_vec();
        let report_arg = report.to_str().unwrap().to_owned();
        all.extend(["--report", &report_arg, "--quiet"]);
        let out = command(&all).output().expect("the binary runs");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            crate::support::cmd::stderr(&out)
        );
        serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap()
    }
}

/// The URL of another core or collection on the node of `url` (a core or collection URL).
fn sibling(url: &str, core: &str) -> String {
    let base = url.rsplit_once('/').map_or(url, |(b, _)| b);
    format!("{base}/{core}")
}

/// `v[key]` as a number; panics naming the key and the value when it is not one (a report's
/// counts).
pub fn n(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("no {key} in {v}"))
}

/// Page `i` of a shop whose pages share one title, one description and one text (a big group in
/// every content dimension), each under its own URL; id `member-000ii`.
pub fn shop_member(i: usize) -> Value {
    serde_json::json!({
        "id": format!("member-{i:05}"),
        "sku": format!("https://shop.example/item/{i}"),
        "title": ["Shop – every item in one place"],
        "description_txt": ["The same boilerplate description on every page of the shop."],
        "text_t": "This item is out of stock. The shop has ferries, owls and lighthouses; \
                   come back soon and browse the catalogue again.",
    })
}

/// A generated corpus of `n` crawled pages with planted doubles (the corpus generator).
pub fn corpus(n: u64, seed: u64) -> Vec<Value> {
    crate::truth::generated(n, seed, 1.0)
}

/// What a fresh `--full` run would leave: the file store's answer for the same documents, without
/// anything the worker wrote. Keys are short ids.
pub fn expected(
    t: &Target,
    docs: &BTreeMap<String, Map<String, Value>>,
    dir: &Path,
) -> BTreeMap<String, Map<String, Value>> {
    let input = dir.join(format!(
        "oracle-{}.jsonl",
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let crawled: Vec<Value> = docs
        .values()
        .map(|d| {
            let mut d = d.clone();
            for f in WORKER_FIELDS {
                d.remove(f);
            }
            d.remove("_version_");
            Value::Object(d)
        })
        .collect();
    write_jsonl(&input, &crawled);
    let cfg = EngineConfig {
        full: true,
        ..EngineConfig::default()
    };
    let (_, out) = run_file(&input, &cfg, OutputFormat::Docs, false);
    out.into_iter()
        .map(|d| {
            let d = d.as_object().unwrap().clone();
            (t.short(d["id"].as_str().unwrap()).to_owned(), d)
        })
        .collect()
}

/// Compares every worker field of every document with the expectation, and every signature with the
/// one its stored text gives. Returns how many values were checked.
pub fn assert_settled(t: &Target, dir: &Path) -> usize {
    let actual = t.docs();
    let expected = expected(t, &actual, dir);
    assert_eq!(
        actual.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>(),
        "the same documents"
    );
    let mut checked = 0;
    for (id, want) in &expected {
        let got = &actual[id];
        for f in WORKER_FIELDS {
            assert_eq!(
                got.get(f).filter(|v| !v.is_null()),
                want.get(f).filter(|v| !v.is_null()),
                "{id}: {f}"
            );
            checked += 1;
        }
        checked += assert_fresh(id, got);
    }
    checked
}

/// The stored signatures are those of the stored text: never computed from an older text.
pub fn assert_fresh(id: &str, doc: &Map<String, Value>) -> usize {
    let signer = Signer::new(Scheme::Yacy);
    let text = doc.get("text_t").and_then(Value::as_str).unwrap_or("");
    assert_eq!(
        doc.get("exact_signature_l").and_then(Value::as_i64),
        Some(signer.exact(text)),
        "{id}: exact_signature_l is not the signature of text_t"
    );
    assert_eq!(
        doc.get("fuzzy_signature_l").and_then(Value::as_i64),
        Some(signer.profile(text).signature()),
        "{id}: fuzzy_signature_l is not the signature of text_t"
    );
    2
}

/// A field of a document as an `i64`.
pub fn long(doc: &Map<String, Value>, field: &str) -> Option<i64> {
    doc.get(field).and_then(Value::as_i64)
}

/// Declares a scenario that runs against the fake (`::fake`), the real standalone core (`::real`) and
/// the real SolrCloud collection (`::cloud`).
macro_rules! solr_test {
    ($name:ident, $body:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            #[test]
            fn fake() {
                let t = $crate::scenarios::harness::Target::fake(stringify!($name));
                ($body)(&t);
            }

            #[test]
            #[cfg_attr(
                not(real_solr),
                ignore = "needs Java 17 and Maven for a real Solr (tests/solr), or SOLR_DEDUP_TEST_SOLR_URL"
            )]
            fn real() {
                let t = $crate::scenarios::harness::Target::real(stringify!($name));
                ($body)(&t);
            }

            #[test]
            #[cfg_attr(
                not(real_solr),
                ignore = "needs Java 17 and Maven for a real SolrCloud (tests/solr), or SOLR_DEDUP_TEST_SOLRCLOUD_URL"
            )]
            fn cloud() {
                let t = $crate::scenarios::harness::Target::cloud(stringify!($name));
                ($body)(&t);
            }
        }
    };
}
pub(crate) use solr_test;
