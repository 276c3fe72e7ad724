//! Nothing lost, resurrected or stale: documents that change between the worker's read and its write,
//! faults in the middle of a run, and a worker killed at several points and run again.
//!
//! The races run the engine in-process with a store wrapper that changes the core just before the
//! first write, so they run against a real Solr too. Faults and kills need the fake.

use std::sync::Mutex;
use std::time::Duration;

use serde_json::{json, Value};
use solr_dedup::engine::{self, EngineConfig};
use solr_dedup::solr::{Client, ClientConfig, Credentials};
use solr_dedup::store::solr::SolrStore;
use solr_dedup::store::{
    AtomicUpdate, Bucket, CommitMode, Doc, FacetQuery, Filter, Page, ReadQuery, StatsBucket,
    StatsQuery, Store, StoreError, UpdateOutcome,
};

use super::harness::{assert_fresh, assert_settled, corpus, long, solr_test, Target};
use crate::support::fake_solr::{Fault, FaultRule};

/// A store that runs `hook` once, just before the first update reaches the core.
struct Hooked<'t, S> {
    inner: S,
    hook: Mutex<Option<Box<dyn FnOnce() + Send + 't>>>,
}

impl<S: Store> Store for Hooked<'_, S> {
    async fn read_page(&self, query: &ReadQuery, cursor: Option<&str>) -> Result<Page, StoreError> {
        self.inner.read_page(query, cursor).await
    }
    fn max_lookup_values(&self) -> usize {
        self.inner.max_lookup_values()
    }
    async fn facet(&self, query: &FacetQuery) -> Result<Vec<Bucket>, StoreError> {
        self.inner.facet(query).await
    }
    async fn bucket_stats(&self, query: &StatsQuery) -> Result<Vec<StatsBucket>, StoreError> {
        self.inner.bucket_stats(query).await
    }
    async fn get(&self, ids: &[String], fields: &[String]) -> Result<Vec<Doc>, StoreError> {
        self.inner.get(ids, fields).await
    }
    async fn update(&self, batch: &[AtomicUpdate]) -> Result<UpdateOutcome, StoreError> {
        let hook = self.hook.lock().unwrap().take();
        if let Some(hook) = hook {
            hook();
        }
        self.inner.update(batch).await
    }
    async fn refresh(&self) -> Result<(), StoreError> {
        self.inner.refresh().await
    }
    async fn commit(&self, mode: CommitMode) -> Result<(), StoreError> {
        self.inner.commit(mode).await
    }
    fn describe(&self) -> String {
        self.inner.describe()
    }
}

/// Runs the engine in-process against the target, with `hook` before the first write.
fn run_with_hook<'t>(t: &'t Target, full: bool, hook: impl FnOnce() + Send + 't) -> engine::Report {
    let mut cc = ClientConfig::new(&t.core_url).unwrap();
    cc.retries = 2;
    cc.backoff_min = Duration::from_millis(10);
    if let (Ok(u), Ok(p)) = (std::env::var("SOLR_USER"), std::env::var("SOLR_PASSWORD")) {
        if matches!(t.backend, crate::scenarios::harness::Backend::Real) {
            cc.credentials = Some(Credentials::new(u, p));
        }
    }
    let client = Client::new(&cc).unwrap();
    let store = Hooked {
        inner: SolrStore::new(client, "id", "_version_", CommitMode::Hard, true),
        hook: Mutex::new(Some(Box::new(hook))),
    };
    let cfg = EngineConfig {
        full,
        batch_size: 50,
        filter: Filter::Solr(format!("test_s:\"{}\"", t.tag)),
        ..EngineConfig::default()
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(engine::run(&store, &cfg))
        .expect("the run settles")
}

solr_test!(
    a_document_deleted_before_the_write_stays_deleted,
    |t: &Target| {
        let dir = tempfile::tempdir().unwrap();
        let docs = corpus(150, 21);
        t.load(&docs);
        let victim = docs[4]["id"].as_str().unwrap().to_owned();
        let report = run_with_hook(t, false, || t.delete(&[victim.as_str()]));
        assert!(report.documents.conflicts >= 1, "{report:?}");
        let after = t.docs();
        assert!(!after.contains_key(&victim), "{victim} came back");
        assert_eq!(after.len(), 149);
        let checked = assert_settled(t, dir.path());
        eprintln!("checked {checked} values; the deleted document stayed deleted");
    }
);

solr_test!(
    a_document_reindexed_before_the_write_gets_its_new_signature,
    |t: &Target| {
        let dir = tempfile::tempdir().unwrap();
        let docs = corpus(150, 22);
        t.load(&docs);
        let mut changed = docs[4].clone();
        changed["text_t"] = json!("A brand new text, written after the worker read the old one.");
        let id = changed["id"].as_str().unwrap().to_owned();
        let report = run_with_hook(t, false, || t.load(std::slice::from_ref(&changed)));
        assert!(report.documents.conflicts >= 1, "{report:?}");
        let after = t.docs();
        assert_eq!(
            after[&id]["text_t"],
            json!("A brand new text, written after the worker read the old one.")
        );
        let checked = assert_fresh(&id, &after[&id]) + assert_settled(t, dir.path());
        eprintln!("checked {checked} values; the re-indexed document carries its new signatures");
    }
);

solr_test!(
    a_document_reindexed_before_a_flag_write_is_decided_again,
    |t: &Target| {
        let dir = tempfile::tempdir().unwrap();
        let docs = corpus(150, 23);
        t.load(&docs);
        t.run_ok(&["run"], dir.path());
        // A planted exact double loses its twin: a new text for one member, set just before the
        // incremental run's first write (its flag update for the group's other members).
        let stored = t.docs();
        let (a, b) = {
            let mut by_sig: std::collections::BTreeMap<i64, Vec<&String>> = Default::default();
            for (id, d) in &stored {
                if let Some(s) = long(d, "exact_signature_l") {
                    by_sig.entry(s).or_default().push(id);
                }
            }
            let pair = by_sig
                .values()
                .find(|v| v.len() == 2)
                .expect("a planted pair");
            (pair[0].clone(), pair[1].clone())
        };
        // Start the change: a third copy of the pair's text, so the incremental run decides the
        // pair's group again and has flags to write for it.
        let mut extra = Value::Object(stored[&a].clone());
        for f in crate::scenarios::harness::WORKER_FIELDS {
            extra.as_object_mut().unwrap().remove(f);
        }
        extra.as_object_mut().unwrap().remove("_version_");
        extra["id"] = json!("extra");
        extra["sku"] = json!("https://extra.example.org/");
        t.load(&[extra]);
        let mut changed = Value::Object(stored[&a].clone());
        for f in crate::scenarios::harness::WORKER_FIELDS {
            changed.as_object_mut().unwrap().remove(f);
        }
        changed.as_object_mut().unwrap().remove("test_s");
        changed["id"] = json!(a);
        changed["text_t"] = json!("Now a page of its own.");
        run_with_hook(t, false, || t.load(std::slice::from_ref(&changed)));
        let after = t.docs();
        assert_eq!(long(&after[&a], "exact_signature_copycount_i"), Some(1));
        assert_eq!(long(&after[&b], "exact_signature_copycount_i"), Some(2));
        let checked = assert_settled(t, dir.path());
        eprintln!("checked {checked} values; {b} is one of two again after {a} was re-indexed");
    }
);

/// The fake answers 503 a few times and drops connections in the middle of the run; retries carry
/// it through.
#[test]
fn errors_and_dropped_connections_in_the_middle_of_a_run() {
    let t = Target::fake("faults");
    let dir = tempfile::tempdir().unwrap();
    t.load(&corpus(200, 31));
    let fake = t.fake_solr();
    let faults = [
        fake.fault(FaultRule {
            path: "/select".into(),
            skip: 2,
            times: 2,
            fault: Fault::Status(503),
        }),
        fake.fault(FaultRule {
            path: "/get".into(),
            skip: 1,
            times: 1,
            fault: Fault::Drop,
        }),
        fake.fault(FaultRule {
            path: "/update".into(),
            skip: 1,
            times: 2,
            fault: Fault::Status(503),
        }),
        // Applied, but the answer is lost: the retry meets 409s and the next round reads again.
        fake.fault(FaultRule {
            path: "/update".into(),
            skip: 4,
            times: 1,
            fault: Fault::DropAfterApply,
        }),
    ];
    let report = t.run_ok(&["run", "--batch-size", "40"], dir.path());
    for (i, f) in faults.iter().enumerate() {
        assert!(f.hits() > 0, "fault {i} never fired");
    }
    let checked = assert_settled(&t, dir.path());
    eprintln!("checked {checked} values after 6 injected faults; report: {report}");
}

/// Solr keeps failing: the worker gives up with exit 3 and leaves nothing half-done that a later run
/// cannot finish.
#[test]
fn solr_failing_for_good_ends_with_exit_3_and_a_later_run_finishes() {
    let t = Target::fake("failing");
    let dir = tempfile::tempdir().unwrap();
    t.load(&corpus(100, 32));
    let fake = t.fake_solr();
    let fault = fake.fault(FaultRule {
        path: "/update".into(),
        skip: 1,
        times: usize::MAX,
        fault: Fault::Status(503),
    });
    let out = t.run(&["run", "--batch-size", "30", "--retries", "2"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
    fault.release();
    t.fake_solr().clear_faults();
    t.run_ok(&["run"], dir.path());
    let checked = assert_settled(&t, dir.path());
    eprintln!("checked {checked} values after a run that gave up");
}

/// Counts the `/update` requests of an undisturbed run over the same documents, so that a kill can
/// be placed before the last one (the commit).
fn updates_of_a_clean_run(docs: &[Value], args: &[&str]) -> usize {
    let t = Target::fake("reference");
    t.load(docs);
    t.fake_solr().clear_requests();
    let dir = tempfile::tempdir().unwrap();
    t.run_ok(args, dir.path());
    t.fake_solr()
        .requests()
        .iter()
        .filter(|r| r.path == "/update")
        .count()
}

/// Kills the worker while the fake holds the `skip+1`-th update (after applying `apply_first` of its
/// documents), then runs it again and checks the core.
fn killed_and_run_again(name: &str, skip: usize, apply_first: usize, docs: &[Value]) -> usize {
    let t = Target::fake(name);
    let dir = tempfile::tempdir().unwrap();
    t.load(docs);
    let hold = t.fake_solr().fault(FaultRule {
        path: "/update".into(),
        skip,
        times: 1,
        fault: Fault::Hold { apply_first },
    });
    let mut child = t
        .command(&["run", "--batch-size", "40", "--quiet"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        hold.wait_hit(Duration::from_secs(60)),
        "{name}: the worker never reached the held update"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    hold.release();
    let report = t.run_ok(&["run", "--batch-size", "40"], dir.path());
    assert!(report["documents"]["read"].as_u64().unwrap() > 0);
    let checked = assert_settled(&t, dir.path());
    // Nothing lost, nothing resurrected: the same documents as loaded.
    assert_eq!(t.docs().len(), docs.len());
    checked
}

#[test]
fn killed_between_reading_and_writing() {
    let docs = corpus(160, 41);
    let checked = killed_and_run_again("kill-before-write", 0, 0, &docs);
    eprintln!("checked {checked} values after a kill before the first write");
}

#[test]
fn killed_in_the_middle_of_a_batch() {
    let docs = corpus(160, 42);
    // The third batch: 17 of its 40 documents applied, then the worker dies.
    let checked = killed_and_run_again("kill-mid-batch", 2, 17, &docs);
    eprintln!("checked {checked} values after a kill in the middle of a batch");
}

#[test]
fn killed_before_the_commit() {
    let docs = corpus(160, 43);
    let updates = updates_of_a_clean_run(&docs, &["run", "--batch-size", "40"]);
    assert!(updates >= 2);
    // Every update applied, the commit (the last request) held: the core has the writes, /select
    // does not see them yet.
    let checked = killed_and_run_again("kill-before-commit", updates - 1, 0, &docs);
    eprintln!("checked {checked} values after a kill before the commit");
}
