//! Nothing lost, resurrected or stale: documents that change between the worker's read and its write,
//! faults in the middle of a run, and a worker killed at several points and run again.
//!
//! The races run the engine in-process with a store wrapper that changes the core just before the
//! first write, so they run against a real Solr too. Faults and kills need the fake.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{json, Value};
use solr_dedup::engine::{self, EngineConfig};
use solr_dedup::solr_client::{Client, ClientConfig, Credentials};
use solr_dedup::store::solr::SolrStore;
use solr_dedup::store::{AtomicUpdate, CommitMode, Filter, Store};

use super::harness::{assert_fresh, assert_settled, corpus, long, solr_test, Target};
use crate::support::fake_solr::{Fault, FaultRule};
use crate::support::hooked::Hooked;

/// Runs the engine in-process against the target, with `hook` before the first write.
fn run_with_hook<'t>(t: &'t Target, full: bool, hook: impl FnOnce() + Send + 't) -> engine::Report {
    run_with_hook_when(t, full, |_| true, move |_| hook())
}

/// A Solr store on the target's core, as the command line makes it.
fn solr_store(t: &Target) -> SolrStore {
    let mut cc = ClientConfig::new(&t.core_url).unwrap();
    cc.retries = 2;
    cc.backoff_min = Duration::from_millis(10);
    if let Some((u, p)) = t.credentials() {
        cc.credentials = Some(Credentials::new(u.clone(), p.clone()));
    }
    let client = Client::new(&cc).unwrap();
    SolrStore::new(client, "id", "_version_", CommitMode::Hard, true)
}

/// Runs the engine in-process against the target, with `hook` before the first write for which
/// `when` holds.
fn run_with_hook_when<'t>(
    t: &'t Target,
    full: bool,
    when: impl Fn(&[AtomicUpdate]) -> bool + Send + Sync + 't,
    hook: impl FnOnce(&[AtomicUpdate]) + Send + 't,
) -> engine::Report {
    let store = Hooked::new(solr_store(t)).before_first_update(when, hook);
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

solr_test!(
    a_document_reindexed_between_signing_and_flagging_is_decided_again,
    |t: &Target| {
        // On SolrCloud the documents to re-index are those the core URL's node forwards to the other
        // shard: `adds` gives them version 0, so their flag update must learn the version their
        // signature update produced some other way (before, it was sent with `_version_: 1`, "must
        // exist", and a re-indexed document took flags decided from its old text).
        let dir = tempfile::tempdir().unwrap();
        let docs = corpus(150, 24);
        t.load(&docs);
        let short: Vec<&str> = docs.iter().map(|d| d["id"].as_str().unwrap()).collect();
        let forwarded = t.forwarded(&short);
        assert_eq!(forwarded.is_empty(), !t.is_cloud(), "{forwarded:?}");
        let picked: Mutex<Vec<String>> = Mutex::new(Vec::new());
        let is_flag_write = |batch: &[AtomicUpdate]| {
            batch
                .iter()
                .any(|u| u.set.iter().any(|(f, _)| f.ends_with("_unique_b")))
        };
        let report = run_with_hook_when(t, false, is_flag_write, |batch| {
            // The page these flags were decided on is read; re-crawl some of its documents.
            let chosen: Vec<String> = batch
                .iter()
                .map(|u| t.short(&u.id).to_owned())
                .filter(|id| forwarded.is_empty() || forwarded.contains(id))
                .step_by(2)
                .take(6)
                .collect();
            let recrawled: Vec<Value> = chosen
                .iter()
                .map(|id| {
                    let mut d = docs.iter().find(|d| d["id"] == json!(id)).unwrap().clone();
                    d["text_t"] = json!(format!("Re-crawled {id}: a text no other page has."));
                    d
                })
                .collect();
            t.load(&recrawled);
            *picked.lock().unwrap() = chosen;
        });
        let picked = picked.into_inner().unwrap();
        assert!(!picked.is_empty(), "the hook re-crawled nothing");
        assert!(
            report.documents.conflicts >= picked.len() as u64,
            "every re-crawled document is a conflict: {picked:?} {report:?}"
        );
        let after = t.docs();
        for id in &picked {
            assert_eq!(
                after[id]["text_t"],
                json!(format!("Re-crawled {id}: a text no other page has."))
            );
            assert_fresh(id, &after[id]);
        }
        let checked = assert_settled(t, dir.path());
        eprintln!(
            "checked {checked} values; {} documents re-crawled between signing and flagging",
            picked.len()
        );
    }
);

solr_test!(
    a_conflict_in_a_batch_costs_only_that_document,
    |t: &Target| {
        // A batch of atomic updates in which some documents changed since they were read. On SolrCloud
        // it mixes the documents of both shards: the receiving node applies its own documents after a
        // conflict on the other shard, and its 409 wraps the other leader's message.
        let docs = corpus(40, 25);
        t.load(&docs);
        let short: Vec<&str> = docs.iter().map(|d| d["id"].as_str().unwrap()).collect();
        let read = t.versions(&short);
        // A change since the read: the probe's own atomic update.
        let forwarded = t.forwarded(&short);
        let now = t.versions(&short);
        let (mut local, mut remote): (Vec<&str>, Vec<&str>) =
            short.iter().partition(|id| !forwarded.contains(**id));
        if remote.is_empty() {
            // A single core: every other document stands in for the other shard.
            remote = local.iter().copied().skip(1).step_by(2).collect();
            local = local.iter().copied().step_by(2).collect();
        }
        // Alternate the shards; every third document is stale (guarded by the version read before the
        // probe), the others current.
        let mut order: Vec<&str> = Vec::new();
        for i in 0..local.len().max(remote.len()).min(8) {
            order.extend(local.get(i));
            order.extend(remote.get(i));
        }
        let mut stale = std::collections::BTreeSet::new();
        let batch: Vec<AtomicUpdate> = order
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let old = i % 3 == 1;
                if old {
                    stale.insert(id.to_string());
                }
                AtomicUpdate {
                    id: t.id(id),
                    version: Some(if old { read[*id] } else { now[*id] }),
                    set: vec![("exact_signature_copycount_i".into(), json!(7))],
                }
            })
            .collect();
        let store = solr_store(t);
        let outcome = t
            .block(store.update(&batch))
            .expect("the update goes through");
        let conflicts: std::collections::BTreeSet<String> = outcome
            .conflicts
            .iter()
            .map(|id| t.short(id).to_owned())
            .collect();
        assert_eq!(
            conflicts, stale,
            "exactly the stale documents are conflicts"
        );
        assert_eq!(outcome.applied, order.len() - stale.len(), "{outcome:?}");
        // Every applied document's new version is known, and is the one the core has.
        let after = t.versions(&short);
        let versions: BTreeMap<String, i64> = outcome
            .versions
            .iter()
            .map(|(id, v)| (t.short(id).to_owned(), *v))
            .collect();
        let applied: Vec<&str> = order
            .iter()
            .copied()
            .filter(|id| !stale.contains(*id))
            .collect();
        assert_eq!(versions.len(), applied.len(), "{outcome:?}");
        for id in applied {
            assert_eq!(versions.get(id), Some(&after[id]), "{id}");
        }
        let stored = t.docs();
        for id in &order {
            let want = (!stale.contains(*id)).then_some(7);
            assert_eq!(
                long(&stored[*id], "exact_signature_copycount_i"),
                want,
                "{id}"
            );
        }
        eprintln!(
        "{} updates ({} forwarded to the other shard), {} conflicts, each applied version known",
        order.len(),
        order.iter().filter(|id| forwarded.contains(**id)).count(),
        stale.len()
    );
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
            skip: 0,
            times: 2,
            fault: Fault::Status(503),
        }),
        // The light scans stream through /export on this core.
        fake.fault(FaultRule {
            path: "/export".into(),
            skip: 1,
            times: 1,
            fault: Fault::Status(503),
        }),
        fake.fault(FaultRule {
            path: "/export".into(),
            skip: 2,
            times: 1,
            fault: Fault::Drop,
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
    eprintln!("checked {checked} values after 8 injected faults; report: {report}");
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
