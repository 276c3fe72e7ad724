//! Full reads shard by shard (issue 26): a SolrCloud collection's light scans stream through each
//! shard's `/export`, all shards at once, and a read that breaks goes on after the last id it
//! handed out (on a standalone core too).

use serde_json::Value;

use super::harness::{assert_settled, corpus, n, Target};
use crate::support::fake_solr::{Fault, FaultRule};

/// An `/export` broken off mid-stream (its node went away) no longer fails the run: the read goes
/// on from after the last id the engine was given, so each document is read once.
#[test]
fn an_export_broken_mid_stream_goes_on_after_the_last_id() {
    let t = Target::fake("export-cut");
    let dir = tempfile::tempdir().unwrap();
    t.load(&corpus(300, 61));
    t.run_ok(&["run"], dir.path());
    let fake = t.fake_solr();
    // A part of the light scan's answer (300 documents of some 400 bytes), then the cut.
    let cut = fake.fault(FaultRule {
        path: "/export".into(),
        skip: 0,
        times: 1,
        fault: Fault::CutAfter(60_000),
    });
    let before = fake.requests().len();
    let report = t.run_ok(&["run", "--batch-size", "40"], dir.path());
    assert!(cut.hits() > 0, "the cut never happened");
    let w = &report["work"];
    assert_eq!(n(w, "light_export_docs"), 300, "each document once: {w}");
    assert_eq!(n(w, "written_docs"), 0, "{w}");
    let exports: Vec<_> = fake.requests()[before..]
        .iter()
        .filter(|r| r.path == "/export")
        .cloned()
        .collect();
    assert_eq!(exports.len(), 2, "the cut read and its resumption");
    let resumed = exports[1]
        .params
        .iter()
        .find(|(k, v)| k == "fq" && v.starts_with("id:{\""))
        .map(|(_, v)| v.clone());
    let after = resumed.expect("the second /export asks for the ids after the last one");
    // Whole pages of 40 went out before the cut: the resumption starts after one of them.
    let last: String = after["id:{\"".len()..after.len() - "\" TO *]".len()].to_owned();
    let ids: Vec<String> = t.docs().keys().cloned().collect();
    let at = ids
        .iter()
        .position(|id| id == t.short(&last))
        .unwrap_or_else(|| panic!("{last} is no id"));
    assert_eq!((at + 1) % 40, 0, "{last} ends a page of 40");
    let checked = assert_settled(&t, dir.path());
    eprintln!("resumed {after}; checked {checked} values");
}

/// On the real two-shard collection, a settled rerun scans the light fields through each shard's
/// `/export` once, and no page through `cursorMark`; a first run reads each text once, shard by
/// shard.
#[test]
#[cfg_attr(
    not(real_solr),
    ignore = "needs Java 17 and Maven for a real SolrCloud (tests/solr), or SOLR_DEDUP_TEST_SOLRCLOUD_URL"
)]
fn a_collection_is_read_shard_by_shard_through_export() {
    let t = Target::cloud("shard-reads");
    let dir = tempfile::tempdir().unwrap();
    let docs = corpus(500, 62);
    t.load(&docs);
    let first = t.run_ok(&["run", "--batch-size", "60"], dir.path());
    let w = &first["work"];
    assert_eq!(n(w, "text_docs"), 500, "each text once: {w}");
    assert_eq!(n(w, "written_docs"), 500, "{w}");
    assert_settled(&t, dir.path());
    let second = t.run_ok(
        &["run", "--batch-size", "60", "--no-change-state"],
        dir.path(),
    );
    let w = &second["work"];
    assert_eq!(
        n(w, "light_export_docs"),
        500,
        "one scan through /export: {w}"
    );
    assert_eq!(n(w, "light_cursor_docs"), 0, "{w}");
    assert_eq!(n(w, "written_docs"), 0, "{w}");
    // From the change state: the versions written within the window, through each shard's
    // /export, and the one row of the mark.
    let third = t.run_ok(&["run", "--batch-size", "60"], dir.path());
    let w = &third["work"];
    assert_eq!(third["changes"]["source"], "settled", "{third}");
    assert!(n(w, "light_export_docs") <= 500, "{w}");
    assert_eq!(n(w, "light_cursor_docs"), 1, "{w}");
    assert_eq!(n(w, "written_docs") + n(w, "text_docs"), 0, "{w}");
    let checked = assert_settled(&t, dir.path());
    eprintln!("checked {checked} values; work {w}");
}

/// Ids of every shape the `compositeId` router reads differently: plain, URL-like, with one, two
/// or three `!`, with bit counts (`/4!`), and ending in `!`.
fn routing_ids() -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..40 {
        ids.push(format!("p{i}"));
        ids.push(format!("http://www.example{i}.com/a/b?c={i}#frag"));
        ids.push(format!("https://de.example.org/wiki/Straße-{i}-日本"));
        ids.push(format!("site{}!http://s{}.com/{i}", i % 7, i % 7));
        ids.push(format!("app{}!user{}!doc{i}", i % 3, i % 5));
        ids.push(format!("r{}/4!x{i}", i % 9));
        ids.push(format!("a/2!b/3!c{i}"));
        ids.push(format!("http://ex.com/!/a!b!c/{i}"));
        ids.push(format!("t{i}!"));
        ids.push(format!("u{i}!v!"));
    }
    ids
}

/// The `compositeId` hash and ranges route every id to the shard the real two-shard collection
/// put it on (asked of each shard's core with `distrib=false`), `!` ids and URLs included.
#[test]
#[cfg_attr(
    not(real_solr),
    ignore = "needs Java 17 and Maven for a real SolrCloud (tests/solr), or SOLR_DEDUP_TEST_SOLRCLOUD_URL"
)]
fn compositeid_routing_agrees_with_solr() {
    use solr_dedup::solr_client::cloud::Cluster;
    use solr_dedup::solr_client::route::{composite_id_hash, shard_of};

    let t = Target::cloud("routing");
    let ids = routing_ids();
    let docs: Vec<Value> = ids
        .iter()
        .map(|id| serde_json::json!({ "id": id }))
        .collect();
    t.load(&docs);
    let (node, collection) = t.core_url.rsplit_once('/').unwrap();
    let state = t.get_json(
        &format!("{node}/admin/collections"),
        &[("action", "CLUSTERSTATUS"), ("collection", collection)],
    );
    let cluster = Cluster::parse(&state, collection).unwrap();
    assert_eq!(cluster.router, "compositeId");
    let ranges: Vec<(i32, i32)> = cluster.shards.iter().map(|s| s.range.unwrap()).collect();
    let fq = format!("test_s:\"{}\"", t.tag);
    let mut seen = 0;
    for (i, shard) in cluster.shards.iter().enumerate() {
        let answer = t.get_json(
            &format!("{}/select", shard.replicas[0].core_url),
            &[
                ("q", "*:*"),
                ("fq", &fq),
                ("fl", "id"),
                ("rows", "10000"),
                ("distrib", "false"),
            ],
        );
        let held = answer["response"]["docs"].as_array().unwrap();
        assert!(
            !held.is_empty(),
            "{} holds none of {}",
            shard.name,
            ids.len()
        );
        for d in held {
            let id = d["id"].as_str().unwrap();
            let hash = composite_id_hash(id);
            assert_eq!(
                shard_of(hash, &ranges),
                Some(i),
                "{id:?} (hash {hash}) is on {} {:?}",
                shard.name,
                ranges[i]
            );
            seen += 1;
        }
    }
    assert_eq!(seen, ids.len(), "every id on one shard");
}

/// On the real two-shard collection, each update goes to its shard's leader core (said once on
/// standard error), and the index ends as in file mode, a settled rerun writing nothing.
#[test]
#[cfg_attr(
    not(real_solr),
    ignore = "needs Java 17 and Maven for a real SolrCloud (tests/solr), or SOLR_DEDUP_TEST_SOLRCLOUD_URL"
)]
fn writes_go_to_each_shards_leader() {
    let t = Target::cloud("leader-writes");
    let dir = tempfile::tempdir().unwrap();
    // URL-like ids with `!`: they route by their prefix.
    let docs: Vec<Value> = corpus(400, 63)
        .into_iter()
        .enumerate()
        .map(|(i, mut d)| {
            let id = d["id"].as_str().unwrap().to_owned();
            if i % 3 == 0 {
                d["id"] = Value::String(format!("site{}!{id}", i % 5));
            }
            d
        })
        .collect();
    t.load(&docs);
    let report = dir.path().join("first.json");
    let out = t.run(&[
        "run",
        "-v",
        "--batch-size",
        "300",
        "--report",
        report.to_str().unwrap(),
    ]);
    let stderr = crate::support::cmd::stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("writing each update to its shard's leader"),
        "{stderr}"
    );
    assert!(!stderr.contains("cannot be reached"), "{stderr}");
    let first: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(n(&first["work"], "written_docs"), 400, "{}", first["work"]);
    let checked = assert_settled(&t, dir.path());
    let second = t.run_ok(&["run"], dir.path());
    assert_eq!(n(&second["work"], "written_docs"), 0, "{}", second["work"]);
    eprintln!(
        "checked {checked} values; first run's work {}",
        first["work"]
    );
}
