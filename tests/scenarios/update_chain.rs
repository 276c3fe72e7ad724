//! An update chain that would change what the worker's atomic updates keep (Solr's
//! `SignatureUpdateProcessorFactory`, a processor that rewrites a field the worker writes) is named
//! by `schema check` and refused by a run with exit 2 before anything is written. (The fake answers
//! the Config API as Solr 9 does; the chain is set on it, as a solrconfig.xml would.)

use serde_json::{json, Value};

use super::harness::{assert_settled, corpus, Target};
use crate::support::cmd::{solr_dedup, stderr};

fn chain(processor: Value) -> Value {
    json!([{"default": "true", "name": "dedupe", "": [
        processor,
        {"class": "solr.LogUpdateProcessorFactory"},
        {"class": "solr.RunUpdateProcessorFactory"}
    ]}])
}

fn updates(t: &Target) -> usize {
    t.fake_solr()
        .requests()
        .iter()
        .filter(|r| r.path == "/update")
        .count()
}

#[test]
fn a_signature_processor_in_the_update_chain_is_named_and_refused() {
    let t = Target::fake("update-chain");
    let dir = tempfile::tempdir().unwrap();
    t.load(&corpus(40, 51));
    t.fake_solr().set_update_chains(chain(json!({
        "class": "solr.processor.SignatureUpdateProcessorFactory",
        "signatureField": "signature_s", "fields": "text_t",
        "signatureClass": "solr.processor.Lookup3Signature",
        "enabled": true, "overwriteDupes": false
    })));
    let check = solr_dedup()
        .args(["schema", "check", "--solr", &t.core_url])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(2), "{said}{}", stderr(&check));
    assert!(said.contains("the update chain 'dedupe'"), "{said}");
    assert!(said.contains("SignatureUpdateProcessorFactory"), "{said}");
    // The same verdict as one JSON object, for scripts: the same exit code.
    let check = solr_dedup()
        .args(["schema", "check", "--json", "--solr", &t.core_url])
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(2), "{}", stderr(&check));
    let v: Value = serde_json::from_slice(&check.stdout).unwrap();
    assert_eq!(v["ok"], false, "{v}");
    assert_eq!(v["core"], t.core_url.as_str(), "{v}");
    let problems = v["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{v}");
    assert!(
        problems[0]
            .as_str()
            .unwrap()
            .contains("SignatureUpdateProcessorFactory"),
        "{v}"
    );
    assert_eq!(v["added"], serde_json::json!([]), "{v}");
    // --report writes the same object; -q keeps the problems on standard output all the same.
    let report = dir.path().join("schema.json");
    let check = solr_dedup()
        .args(["schema", "check", "-q", "--solr", &t.core_url, "--report"])
        .arg(&report)
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(2), "{}", stderr(&check));
    assert!(String::from_utf8_lossy(&check.stdout).contains("SignatureUpdateProcessorFactory"));
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(written, v);
    t.fake_solr().clear_requests();
    let out = t.run(&["run"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(
        err.contains("update chain would change what this run writes"),
        "{err}"
    );
    assert_eq!(updates(&t), 0, "nothing written");
    // A check only reads: it goes on.
    let out = t.run(&["check"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // Off, the processor is no reason to refuse.
    t.fake_solr().set_update_chains(chain(json!({
        "class": "solr.processor.SignatureUpdateProcessorFactory",
        "fields": "text_t", "enabled": false
    })));
    t.run_ok(&["run"], dir.path());
    assert_settled(&t, dir.path());
}

#[test]
fn a_processor_rewriting_a_field_the_worker_writes_is_refused() {
    let t = Target::fake("update-chain-rewrite");
    t.load(&corpus(20, 52));
    t.fake_solr().set_update_chains(chain(json!({
        "class": "solr.TruncateFieldUpdateProcessorFactory",
        "fieldName": ["title", "exact_signature_copycount_i"], "maxLength": 3
    })));
    t.fake_solr().clear_requests();
    let out = t.run(&["run"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("TruncateFieldUpdateProcessorFactory on exact_signature_copycount_i"),
        "{err}"
    );
    assert_eq!(updates(&t), 0, "nothing written");
    // On a field the worker only reads it is the crawler's business.
    t.fake_solr().set_update_chains(chain(json!({
        "class": "solr.TruncateFieldUpdateProcessorFactory",
        "fieldName": "title", "maxLength": 3
    })));
    let out = t.run(&["run"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
