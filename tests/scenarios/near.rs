//! The near-duplicate dimension against Solr, with expectations worked out by hand: a full run, `check`,
//! incremental runs after a deletion and an addition, each ending where a full run ends.
//!
//! The three news pages have the same words in the same order, only case and punctuation differ, so
//! their shingle sets are equal (Jaccard 1): every trial agrees and they are near-duplicates whatever
//! the hashes (while their exact signatures differ). The other pages share no two-word shingle with
//! them or with each other, so no key is shared (up to 64-bit collisions).

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::harness::{assert_settled, solr_test, Target};

const NEWS: &str = "Council approves the new bridge over the river; work starts in spring.";
const NEWS_LOUD: &str = "COUNCIL approves the new bridge over the river! Work starts in spring";
const NEWS_MIRROR: &str =
    "Council approves the new bridge, over the river: work starts in spring...";
const WEATHER: &str = "Sunny spells this afternoon with a light breeze from the west.";
const NO_WORDS: &str = "--- !!! ... ***";

fn documents() -> Vec<Value> {
    vec![
        json!({"id": "p1", "sku": "https://www.news.example/story", "text_t": NEWS}),
        json!({"id": "p2", "sku": "http://news.example/story?ref=rss", "text_t": NEWS_LOUD}),
        json!({"id": "p3", "sku": "https://mirror.example/copy/story", "text_t": NEWS_MIRROR}),
        json!({"id": "w1", "sku": "https://weather.example/today", "text_t": WEATHER}),
        json!({"id": "x1", "sku": "https://symbols.example/", "text_t": NO_WORDS}),
    ]
}

/// `(unique, count, group)` per short id, the group as a short id.
fn near_state(t: &Target) -> BTreeMap<String, (Value, Value, String)> {
    t.docs()
        .into_iter()
        .map(|(id, d)| {
            let group = d
                .get("near_group_s")
                .and_then(Value::as_str)
                .map(|g| t.short(g).to_owned())
                .unwrap_or_default();
            let state = (
                d.get("near_unique_b").cloned().unwrap_or(Value::Null),
                d.get("near_copycount_i").cloned().unwrap_or(Value::Null),
                group,
            );
            (id, state)
        })
        .collect()
}

fn want(rows: &[(&str, bool, i64, &str)]) -> BTreeMap<String, (Value, Value, String)> {
    rows.iter()
        .map(|(id, u, c, g)| (id.to_string(), (json!(u), json!(c), g.to_string())))
        .collect()
}

fn keys(d: &Map<String, Value>) -> Vec<i64> {
    d.get("near_keys_ls")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_i64).collect())
        .unwrap_or_default()
}

solr_test!(
    near_duplicates_are_clustered_and_stay_exact_under_change,
    |t: &Target| {
        let dir = tempfile::tempdir().unwrap();
        t.load(&documents());
        let first = t.run_ok(&["run"], dir.path());
        // p1 wins the cluster: https like p3, and a www. host.
        assert_eq!(
            near_state(t),
            want(&[
                ("p1", true, 3, "p1"),
                ("p2", false, 3, "p1"),
                ("p3", false, 3, "p1"),
                ("w1", true, 1, "w1"),
                ("x1", true, 1, "x1"),
            ])
        );
        assert_eq!(first["dimensions"]["near"]["groups"], 1, "{first}");
        assert_eq!(first["dimensions"]["near"]["doubles"], 2, "{first}");
        assert_eq!(
            first["dimensions"]["near"]["excluded"],
            json!({"no_words": 1}),
            "{first}"
        );
        let docs = t.docs();
        // Equal shingle sets, equal values; 15 keys and 6 trials with the defaults.
        assert_eq!(keys(&docs["p1"]).len(), 15);
        assert_eq!(keys(&docs["p1"]), keys(&docs["p2"]));
        assert_eq!(keys(&docs["p1"]), keys(&docs["p3"]));
        assert_ne!(
            docs["p1"]["exact_signature_l"],
            docs["p2"]["exact_signature_l"]
        );
        assert!(keys(&docs["w1"])
            .iter()
            .all(|k| !keys(&docs["p1"]).contains(k)));
        assert!(keys(&docs["x1"]).is_empty(), "no words, no keys");
        assert_eq!(docs["p1"]["near_version_s"], "near1-n2-h14-t6-a2");
        assert_eq!(docs["x1"]["near_version_s"], "near1-n2-h14-t6-a2 no-words");
        assert_settled(t, dir.path());

        let again = t.run_ok(&["run"], dir.path());
        assert_eq!(again["documents"]["written"], 0, "{again}");
        let check = t.run(&["check"]);
        assert_eq!(check.status.code(), Some(0), "{check:?}");

        // The representative is deleted: p3 (https) wins over p2 (http).
        t.delete(&["p1"]);
        t.commit();
        let r = t.run_ok(&["run"], dir.path());
        assert_eq!(r["documents"]["written"], 2, "{r}");
        assert_eq!(
            near_state(t),
            want(&[
                ("p2", false, 2, "p3"),
                ("p3", true, 2, "p3"),
                ("w1", true, 1, "w1"),
                ("x1", true, 1, "x1"),
            ])
        );
        assert_settled(t, dir.path());

        // A new copy at a better URL joins and wins; the weather page is not touched.
        t.load(&[json!({"id": "p4", "sku": "https://www.news.example/s", "text_t": NEWS})]);
        let r = t.run_ok(&["run"], dir.path());
        assert_eq!(r["documents"]["written"], 3, "{r}");
        assert_eq!(
            near_state(t),
            want(&[
                ("p2", false, 3, "p4"),
                ("p3", false, 3, "p4"),
                ("p4", true, 3, "p4"),
                ("w1", true, 1, "w1"),
                ("x1", true, 1, "x1"),
            ])
        );
        assert_settled(t, dir.path());
        let check = t.run(&["check"]);
        assert_eq!(check.status.code(), Some(0), "{check:?}");

        // Other parameters: every document is signed again (the version names them), and the cluster
        // stands.
        let r = t.run_ok(&["run", "--near-hashes", "10", "--reconfigure"], dir.path());
        assert_eq!(r["documents"]["signed"], 5, "{r}");
        let docs = t.docs();
        assert_eq!(docs["p2"]["near_version_s"], "near1-n2-h10-t6-a2");
        assert_eq!(
            near_state(t)["p2"],
            (json!(false), json!(3), "p4".to_owned())
        );
    }
);
