//! The scale scenario (issue 26): a few thousand pages on a SolrCloud collection of four shards
//! with two replicas each, and a node that holds a shard leader stopped in the middle of a run.
//! Whether that run ends well or fails, the next one (the node back) leaves the flags of file mode
//! and no document lost.
//!
//! It runs on the real four-node cloud only (`crate::support::real_solr::big_cloud`), and is not a
//! `::real`/`::cloud` variant: `.ci/run` checks that it ran by its own name.

use std::collections::BTreeMap;
use std::process::Stdio;

use super::harness::{assert_settled, corpus, Target};
use crate::support::real_solr::big_cloud;

/// The node (an index into the launcher's list) that holds the leader of some shard, other than
/// node 0 (whose URL the runs use).
fn a_leader_node(t: &Target, nodes: &[String]) -> (usize, String) {
    let (node, collection) = t.core_url.rsplit_once('/').unwrap();
    let state = t.get_json(
        &format!("{node}/admin/collections"),
        &[("action", "CLUSTERSTATUS"), ("collection", collection)],
    );
    let shards = state["cluster"]["collections"][collection]["shards"]
        .as_object()
        .unwrap_or_else(|| panic!("no shards in {state}"));
    for (name, shard) in shards {
        for r in shard["replicas"].as_object().unwrap().values() {
            let leader = r["leader"] == "true" || r["leader"] == true;
            let base = r["base_url"].as_str().unwrap().trim_end_matches('/');
            let at = nodes.iter().position(|n| n.trim_end_matches('/') == base);
            if let (true, Some(at)) = (leader, at) {
                if at != 0 {
                    return (at, name.clone());
                }
            }
        }
    }
    panic!("no shard leader outside node 0: {state}");
}

#[test]
#[cfg_attr(
    not(real_solr),
    ignore = "needs Java 17 and Maven for a real SolrCloud (tests/solr)"
)]
fn scale_4x2_a_leader_node_stopped_mid_run() {
    let big = big_cloud();
    let t = Target::big_cloud("scale-4x2");
    let dir = tempfile::tempdir().unwrap();
    let docs = corpus(3000, 71);
    t.load(&docs);
    let loaded = t.docs().len();
    assert_eq!(loaded, docs.len(), "every page loaded");
    let ids: Vec<String> = t.docs().keys().cloned().collect();
    let probe: Vec<&str> = ids.iter().step_by(15).map(String::as_str).collect();
    let before: BTreeMap<String, i64> = t.versions(&probe);
    let (victim, shard) = a_leader_node(&t, &big.nodes);

    // The run, in the background; the node goes away once the run has written something (a
    // real-time version changed), while it still runs.
    let report = dir.path().join("stopped.json");
    let mut run = t
        .command(&[
            "run",
            "-v",
            "--batch-size",
            "50",
            "--report",
            report.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut stopped_mid_run = false;
    loop {
        if run.try_wait().unwrap().is_some() {
            break;
        }
        if t.versions(&probe) != before {
            stopped_mid_run = run.try_wait().unwrap().is_none();
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    if stopped_mid_run {
        big.stop(victim);
    }
    let out = run.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    eprintln!(
        "node {victim} (leader of {shard}) stopped mid-run: {stopped_mid_run}; the run ended {:?}; \
         fell back to the collection URL: {}",
        out.status.code(),
        stderr.contains("writing through the collection URL for the rest of the run")
    );
    if stopped_mid_run {
        big.start(victim);
    }
    assert!(
        stopped_mid_run,
        "the run ended before it wrote anything the probe saw: {stderr}"
    );

    // The node back: the next run converges to file mode's flags, and nothing is lost.
    let again = t.run_ok(&["run", "--batch-size", "50"], dir.path());
    let after = t.docs();
    assert_eq!(after.len(), loaded, "no document lost");
    let checked = assert_settled(&t, dir.path());
    let settled = t.run_ok(&["run"], dir.path());
    assert_eq!(
        settled["work"]["written_docs"].as_u64(),
        Some(0),
        "{}",
        settled["work"]
    );
    eprintln!(
        "checked {checked} values; the rerun's work {}",
        again["work"]
    );
}
