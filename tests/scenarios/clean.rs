//! `clean` takes what the worker wrote off a core: afterwards every document is as the crawler
//! indexed it, the settings record is gone, and a fresh run does what it does on a core never touched
//! (issue 43).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::harness::{corpus, solr_test, Target};

/// Each document's fields and values, `_version_` left out.
fn contents(t: &Target) -> BTreeMap<String, Map<String, Value>> {
    t.docs()
        .into_iter()
        .map(|(id, mut d)| {
            d.remove("_version_");
            (id, d)
        })
        .collect()
}

solr_test!(
    clean_leaves_the_core_as_never_touched_and_a_fresh_run_behaves_as_on_one,
    |t: &Target| {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let state_arg = state.to_str().unwrap();
        let docs = corpus(150, 81);
        t.load(&docs);
        let untouched = contents(t);
        // A core the worker never touched: nothing to clean, nothing written.
        let before = t.versions_of(&docs);
        let r = t.run_ok(&["clean", "--dry-run"], dir.path());
        assert_eq!(r["documents"], 0, "{r}");
        let first = t.run_ok(&["run", "--state-dir", state_arg], dir.path());
        let decided = contents(t);
        assert_ne!(decided, untouched, "the run wrote");
        // The record holds a check under another order to its settings.
        let out = t.run(&["check", "--prefer", "yacy"]);
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("decided under other settings"),
            "{out:?}"
        );

        // A dry run counts every document (each was signed) and writes nothing.
        let versions = t.versions_of(&docs);
        assert_ne!(versions, before);
        let dry = t.run_ok(
            &["clean", "--dry-run", "--state-dir", state_arg],
            dir.path(),
        );
        assert_eq!(dry["documents"], docs.len(), "{dry}");
        assert_eq!(dry["cleaned"], 0, "{dry}");
        assert_eq!(dry["fields"]["exact_signature_l"], docs.len(), "{dry}");
        assert_eq!(t.versions_of(&docs), versions, "a dry run writes nothing");
        assert_eq!(contents(t), decided);

        let cleaned = t.run_ok(&["clean", "--state-dir", state_arg], dir.path());
        assert_eq!(cleaned["cleaned"], docs.len(), "{cleaned}");
        assert_eq!(cleaned["settings_record"]["removed"], true, "{cleaned}");
        assert_eq!(cleaned["kept_order_removed"], true, "{cleaned}");
        // Every document as the crawler indexed it: the worker's fields gone, nothing else changed.
        assert_eq!(contents(t), untouched);
        // The record is gone: a check under another order is not told about it.
        let out = t.run(&["check", "--prefer", "yacy"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("decided under other settings"), "{err}");
        // Cleaning again finds nothing.
        let again = t.run_ok(&["clean"], dir.path());
        assert_eq!(again["documents"], 0, "{again}");

        // A fresh run does what the first did, and leaves what it left.
        let fresh = t.run_ok(&["run", "--state-dir", state_arg], dir.path());
        for key in ["read", "signed", "written", "decided"] {
            assert_eq!(
                fresh["documents"][key], first["documents"][key],
                "documents.{key}: {fresh}"
            );
        }
        assert_eq!(fresh["work"]["text_docs"], first["work"]["text_docs"]);
        assert_eq!(fresh["dimensions"], first["dimensions"]);
        assert_eq!(contents(t), decided);
    }
);

/// `--keep-signatures` leaves the four signatures (a YaCy core has them from YaCy) and takes the
/// rest; without a core, one line says how to give one.
#[test]
fn keep_signatures_leaves_them_and_no_core_is_one_line() {
    let t = Target::fake("clean-keep");
    let dir = tempfile::tempdir().unwrap();
    let docs = corpus(60, 82);
    t.load(&docs);
    t.run_ok(&["run"], dir.path());
    let r = t.run_ok(&["clean", "--keep-signatures"], dir.path());
    assert_eq!(r["cleaned"], docs.len(), "{r}");
    assert!(r["fields"].get("exact_signature_l").is_none(), "{r}");
    for (id, d) in t.docs() {
        assert!(d.contains_key("exact_signature_l"), "{id}: {d:?}");
        assert!(!d.contains_key("exact_signature_unique_b"), "{id}: {d:?}");
        assert!(
            !d.keys().any(|k| k.ends_with("_copycount_i")),
            "{id}: {d:?}"
        );
    }
    // No core given: one line saying how to give one.
    let out = crate::support::cmd::run(&["clean"]);
    assert_eq!(out.status.code(), Some(2));
    let err = crate::support::cmd::error_line(&out);
    assert!(
        err.contains("no core to clean") && err.contains("--solr"),
        "{err}"
    );
}
