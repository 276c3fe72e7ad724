//! Predictions name the page search shows: `duplicate_of` is the representative of the matched
//! page's exact group (flagged unique), `matched` the double the canonical form met; after the
//! representative is deleted and a run repairs its group, the answer follows the new one (issue 44).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::harness::{solr_test, Target};
use crate::support::serve::Served;

const LONG: Duration = Duration::from_secs(300);

/// The bundled corpus (`examples/corpus.jsonl`).
fn bundled() -> Vec<Value> {
    let text = include_str!("../../examples/corpus.jsonl");
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The URL with `www.` added to its host, or taken off.
fn www_toggled(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    Some(match rest.strip_prefix("www.") {
        Some(bare) => format!("{scheme}://{bare}"),
        None => format!("{scheme}://www.{rest}"),
    })
}

/// Waits until the prediction index has been rebuilt after `since` (its load time) from an index
/// of `urls` pages with an http(s) URL (a rebuild that began before a change is not the one).
fn rebuilt_after(server: &Served, since: f64, urls: usize) {
    let deadline = Instant::now() + LONG;
    loop {
        let s = server.json("/api/status");
        let p = &s["prediction_index"];
        if p["loaded_at"].as_f64().unwrap_or(0.0) > since
            && p["reloading"] == false
            && p["urls"] == urls
        {
            return;
        }
        assert!(Instant::now() < deadline, "the index was not rebuilt: {s}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

solr_test!(
    duplicate_of_names_the_page_search_shows_and_follows_a_repair,
    |t: &Target| {
        let dir = tempfile::tempdir().unwrap();
        let docs = bundled();
        t.load(&docs);
        let with_urls = docs
            .iter()
            .filter(|d| {
                // A multi-valued URL counts by its first value, as the worker reads it.
                let url = d["sku"].as_str().or_else(|| d["sku"][0].as_str());
                url.is_some_and(|u| u.starts_with("http://") || u.starts_with("https://"))
            })
            .count();
        let rules = dir.path().join("rules.json");
        let out = t
            .command(&["urls", "learn", "--out", rules.to_str().unwrap(), "-q"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let mut cmd = t.command(&["serve", "--rules", rules.to_str().unwrap()]);
        cmd.arg("--state-dir").arg(dir.path().join("state"));
        let server = Served::spawn(cmd);
        let loaded = server.json("/api/status")["prediction_index"]["loaded_at"]
            .as_f64()
            .unwrap();
        let run = server.start_run(json!({}));
        assert_eq!(server.wait_run(run, LONG)["state"], "succeeded");
        rebuilt_after(&server, loaded, with_urls);
        // Built from the change state the run kept, not from a read of the index.
        let status = server.json("/api/status");
        assert_eq!(
            status["prediction_index"]["loaded_from"], "state",
            "{status}"
        );

        // Every indexed URL with www. toggled: a variant a crawler meets.
        let variants: Vec<String> = docs
            .iter()
            .filter_map(|d| d["sku"].as_str().and_then(www_toggled))
            .collect();
        let predict = |urls: &[String]| -> Vec<Value> {
            let (status, answer) = server.post("/api/urls/predict", &json!({ "urls": urls }), &[]);
            assert_eq!(status, 200, "{answer}");
            answer["answers"].as_array().unwrap().clone()
        };
        let answers = predict(&variants);
        let flags: BTreeMap<String, Value> = t
            .docs()
            .into_iter()
            .map(|(id, d)| {
                (
                    id,
                    d.get("exact_signature_unique_b")
                        .cloned()
                        .unwrap_or(Value::Null),
                )
            })
            .collect();
        let named: Vec<&Value> = answers
            .iter()
            .filter(|a| !a["duplicate_of"].is_null())
            .collect();
        assert!(named.len() > 100, "{} answers name a page", named.len());
        for a in &named {
            let id = t.short(a["duplicate_of"]["id"].as_str().unwrap());
            assert_eq!(flags[id], json!(true), "{a}");
        }
        // Some of them met a double the index hides: the answer gives it as `matched`.
        let hidden: Vec<&&Value> = named.iter().filter(|a| !a["matched"].is_null()).collect();
        assert!(!hidden.is_empty(), "no answer met a hidden double");
        for a in &hidden {
            let matched = t.short(a["matched"]["id"].as_str().unwrap());
            assert_eq!(flags[matched], json!(false), "{a}");
        }

        // The representative of one of them is deleted; a run repairs the group, the index is
        // rebuilt, and the answer names the group's new representative.
        let asked = hidden[0]["url"].as_str().unwrap().to_owned();
        let gone = t
            .short(hidden[0]["duplicate_of"]["id"].as_str().unwrap())
            .to_owned();
        let loaded = server.json("/api/status")["prediction_index"]["loaded_at"]
            .as_f64()
            .unwrap();
        t.delete(&[&gone]);
        t.commit();
        let run = server.start_run(json!({}));
        assert_eq!(server.wait_run(run, LONG)["state"], "succeeded");
        rebuilt_after(&server, loaded, with_urls - 1);
        // Updated from the pages the run changed; its answers are those of an index read anew
        // (a second server, which reads the index when it starts).
        let status = server.json("/api/status");
        assert_eq!(
            status["prediction_index"]["loaded_from"], "delta",
            "{status}"
        );
        let other = tempfile::tempdir().unwrap();
        let mut cmd = t.command(&["serve", "--rules", rules.to_str().unwrap()]);
        cmd.arg("--state-dir").arg(other.path().join("state"));
        let fresh = Served::spawn(cmd);
        let (status, anew) = fresh.post("/api/urls/predict", &json!({ "urls": &variants }), &[]);
        assert_eq!(status, 200, "{anew}");
        assert_eq!(
            predict(&variants),
            anew["answers"].as_array().unwrap().clone()
        );
        drop(fresh);
        let answer = predict(std::slice::from_ref(&asked)).remove(0);
        let now = t
            .short(answer["duplicate_of"]["id"].as_str().unwrap())
            .to_owned();
        assert_ne!(now, gone, "{answer}");
        let docs_now = t.docs();
        assert_eq!(
            docs_now[&now]["exact_signature_unique_b"],
            json!(true),
            "{answer}"
        );
        eprintln!(
            "checked {} answers, {} hidden doubles",
            named.len(),
            hidden.len()
        );
    }
);
