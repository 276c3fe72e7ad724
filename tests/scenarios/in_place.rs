//! The in-place profile (issue 46) on a real core: `schema apply --profile in-place` adds the
//! profile's fields, `schema check` names the profile and any condition of Solr's in-place updates
//! that fails, a run finds the profile from the schema and writes `*_unique_i`, `*_copies_i` and
//! `near_group_l`, and its count refreshes leave a non-stored indexed field matching: Solr updated
//! them in place (a whole-document re-index would have dropped it, SOLR-11677). Every run ends
//! where the file store's `--full` does, in the profile's fields.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Map, Value};
use solr_dedup::model::IN_PLACE_NAMES;

use super::harness::{corpus, expected, shop_member, Target};
use crate::support::cmd::{solr_dedup, stderr};

/// Members of the group whose counts are refreshed.
const MEMBERS: usize = 40;

/// `solr-dedup schema ACTION --solr CORE --json EXTRA…`: the exit code and the verdict.
pub(super) fn schema(t: &Target, action: &str, extra: &[&str]) -> (Option<i32>, Value) {
    let out = solr_dedup()
        .args(["schema", action, "--solr", &t.core_url, "--json"])
        .args(extra)
        .output()
        .unwrap();
    let verdict =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    (out.status.code(), verdict)
}

/// Adds the fields this test needs beside the profile's, unless an earlier run added them: a
/// non-stored indexed text, and a stored long that no in-place update can set.
fn add_test_fields(t: &Target) {
    let have = t.get_json(&format!("{}/schema/fields", t.core_url), &[]);
    let names: Vec<&str> = have["fields"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["name"].as_str())
        .collect();
    let mut add = Vec::new();
    if !names.contains(&"hidden_t") {
        add.push(
            json!({"name": "hidden_t", "type": "text_general", "indexed": true, "stored": false}),
        );
    }
    if !names.contains(&"stored_group_l") {
        add.push(
            json!({"name": "stored_group_l", "type": "plong", "indexed": false,
                        "stored": true, "docValues": true}),
        );
    }
    if !add.is_empty() {
        t.schema_post(json!({ "add-field": add }));
    }
}

/// How many of the test's documents hold `word` in `hidden_t` (indexed, not stored).
fn hidden(t: &Target, word: &str) -> u64 {
    t.commit();
    let answer = t.get_json(
        &format!("{}/select", t.core_url),
        &[
            ("q", &format!("hidden_t:{word}")),
            ("fq", &format!("test_s:\"{}\"", t.tag)),
            ("rows", "0"),
        ],
    );
    answer["response"]["numFound"].as_u64().unwrap()
}

/// A run of the worker with the change state, accepting the non-stored field (the writes that
/// sign re-index whole documents; the count refreshes are in place).
fn run(t: &Target, dir: &Path) -> Value {
    let state = dir.join("state");
    t.run_ok(
        &[
            "run",
            "--state-dir",
            state.to_str().unwrap(),
            "--allow-lossy-atomic-updates",
        ],
        dir,
    )
}

/// Compares every document's in-place fields with the file store's `--full` answer in YaCy's
/// fields: a flag as 1 or 0, a count as it is, the near group as its representative id's hash.
/// Returns how many values were compared.
fn assert_settled_in_place(t: &Target, dir: &Path) -> usize {
    let actual = t.docs();
    // The oracle reads YaCy's fields: give it the documents without the in-place ones.
    let crawled: BTreeMap<String, Map<String, Value>> = actual
        .iter()
        .map(|(id, d)| {
            let mut d = d.clone();
            for (_, in_place) in IN_PLACE_NAMES {
                d.remove(in_place);
            }
            d.remove("hidden_t");
            (id.clone(), d)
        })
        .collect();
    let want = expected(t, &crawled, dir);
    assert_in_place(&actual, &want)
}

/// Compares every document's in-place fields in `actual` with YaCy's in `want` (the file store's
/// `--full` answer): a flag as 1 or 0, a count as it is, the near group as its representative id's
/// hash. Returns how many values were compared.
pub(super) fn assert_in_place(
    actual: &BTreeMap<String, Map<String, Value>>,
    want: &BTreeMap<String, Map<String, Value>>,
) -> usize {
    assert_eq!(
        actual.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    let mut checked = 0;
    for (id, w) in want {
        let got = &actual[id];
        for (yacy, in_place) in IN_PLACE_NAMES {
            let expect = match w.get(yacy) {
                None | Some(Value::Null) => None,
                Some(Value::Bool(b)) => Some(json!(i32::from(*b))),
                Some(Value::String(rep)) => Some(json!(solr_dedup::store::id_hash(rep) as i64)),
                Some(v) => Some(v.clone()),
            };
            assert_eq!(got.get(in_place).cloned(), expect, "{id}: {in_place}");
            assert!(got.get(yacy).is_none(), "{id}: {yacy} written");
            checked += 1;
        }
    }
    checked
}

#[test]
#[cfg_attr(
    not(real_solr),
    ignore = "needs Java 17 and Maven for a real Solr (tests/solr)"
)]
fn in_place_writes_keep_a_non_stored_field_and_end_where_full_does() {
    let t = Target::in_place("in-place");
    let dir = tempfile::tempdir().unwrap();

    // The profile's fields, added once (a second apply adds nothing).
    let (code, applied) = schema(&t, "apply", &["--profile", "in-place"]);
    assert_eq!(code, Some(0), "{applied}");
    assert_eq!(applied["profile"], "in-place", "{applied}");
    let (code, again) = schema(&t, "apply", &["--profile", "in-place"]);
    assert_eq!(code, Some(0), "{again}");
    assert_eq!(again["added"], json!([]), "{again}");
    add_test_fields(&t);

    // The core's profile is found from its schema; a field of the profile that the schema
    // cannot update in place is named with the condition that fails.
    let (code, checked) = schema(&t, "check", &[]);
    assert_eq!(code, Some(2), "the non-stored field is lossy: {checked}");
    assert_eq!(checked["profile"], "in-place", "{checked}");
    let (_, renamed) = schema(
        &t,
        "check",
        &[
            "--profile",
            "in-place",
            "--field",
            "near_group_s=stored_group_l",
        ],
    );
    let lines = renamed["not_in_place"].to_string();
    assert!(
        lines.contains("stored_group_l is stored (in place needs stored=false)"),
        "{renamed}"
    );
    assert!(!lines.contains("near_group_l"), "{renamed}");

    let mut docs: Vec<Value> = (0..MEMBERS).map(shop_member).collect();
    docs.extend(corpus(20, 77));
    t.load(&docs);
    let first = run(&t, dir.path());
    assert_eq!(first["outcome"], "succeeded", "{first}");
    let mut values = assert_settled_in_place(&t, dir.path());
    let pages = (MEMBERS + 20) as u64;

    // `urls learn` reads the near clusters under the core's profile (near_group_l).
    let rules = dir.path().join("rules.json");
    let learned = t.run_ok(
        &["urls", "learn", "--out", rules.to_str().unwrap()],
        dir.path(),
    );
    // Every page with a URL keyed by its near cluster, none by its exact signature.
    assert_eq!(learned["content"]["by_exact"], json!(0), "{learned}");
    assert!(
        learned["content"]["by_near"].as_u64().unwrap() > MEMBERS as u64,
        "{learned}"
    );

    // Every page gets the non-stored field (one atomic update each, which Solr indexes whole).
    let hide: Vec<Value> = t
        .docs()
        .keys()
        .map(|id| json!({"id": t.id(id), "hidden_t": {"set": "lighthouse keeper"}}))
        .collect();
    t.update(Value::Array(hide));
    assert_eq!(hidden(&t, "keeper"), pages);

    // A new member comes signed, as its group's pages are (the same text: their signatures), with
    // the in-place fields' first values: the run refreshes 41 counts in place.
    let proto = t.docs()["member-00000"].clone();
    let mut new = proto.clone();
    new.retain(|k, _| !k.starts_with('_') && k != "test_s");
    new.insert("id".into(), json!(format!("member-{MEMBERS:05}")));
    new.insert(
        "sku".into(),
        json!(format!("https://shop.example/item/{MEMBERS}")),
    );
    new.insert("hidden_t".into(), json!("lighthouse keeper"));
    t.load(&[Value::Object(new)]);
    let grown = run(&t, dir.path());
    assert!(
        grown["documents"]["written"].as_u64().unwrap() > MEMBERS as u64,
        "{grown}"
    );
    assert_eq!(grown["work"]["text_docs"], 0, "{grown}");
    assert_eq!(
        grown["work"]["written_in_place_docs"], grown["work"]["written_docs"],
        "every update sets only the profile's fields: {grown}"
    );
    assert_eq!(
        hidden(&t, "keeper"),
        pages + 1,
        "an update that was not in place dropped the non-stored field: {grown}"
    );
    values += assert_settled_in_place(&t, dir.path());

    // The representative goes: every member's counts and one flag change, in place.
    let rep = t
        .docs()
        .into_iter()
        .find(|(id, d)| id.starts_with("member-") && d["exact_signature_unique_i"] == json!(1))
        .map(|(id, _)| id)
        .expect("a representative");
    t.delete(&[&rep]);
    t.commit();
    let headless = run(&t, dir.path());
    assert!(
        headless["documents"]["written"].as_u64().unwrap() >= MEMBERS as u64,
        "{headless}"
    );
    assert_eq!(hidden(&t, "keeper"), pages, "{headless}");
    values += assert_settled_in_place(&t, dir.path());
    eprintln!("checked {values} values");

    // What the test would see of writes that are not in place: YaCy's fields, written by atomic
    // updates that re-index whole documents, drop the non-stored field of every page written.
    let yacy = t.run_ok(
        &[
            "run",
            "--no-change-state",
            "--profile",
            "yacy",
            "--allow-lossy-atomic-updates",
            // Other fields than the settings record's: a decision of the operator's.
            "--reconfigure",
        ],
        dir.path(),
    );
    assert_eq!(yacy["documents"]["written"], json!(pages), "{yacy}");
    assert_eq!(hidden(&t, "keeper"), 0, "{yacy}");
}

/// The in-place profile on the fake: `schema apply` and `check`, a run that finds the profile
/// from the schema and ends where `--full` does, a settled rerun, the views `serve` shows (a big
/// group with its one representative, a page looked up with its flags and counts), and `clean`,
/// which takes the profile's fields off again.
#[test]
fn the_in_place_profile_is_read_by_every_command_on_the_fake() {
    let t = Target::fake("in-place-fake");
    let dir = tempfile::tempdir().unwrap();
    let (code, applied) = schema(&t, "apply", &["--profile", "in-place"]);
    assert_eq!(code, Some(0), "{applied}");
    let (code, checked) = schema(&t, "check", &[]);
    assert_eq!(code, Some(0), "{checked}");
    assert_eq!(checked["profile"], "in-place", "{checked}");
    assert!(
        checked["not_in_place"]
            .to_string()
            .contains("exact_signature_unique_i is held by no document yet"),
        "{checked}"
    );
    let mut docs: Vec<Value> = (0..MEMBERS).map(shop_member).collect();
    docs.extend(corpus(40, 78));
    t.load(&docs);
    let state = dir.path().join("state");
    let state = state.to_str().unwrap();
    let first = t.run_ok(&["run", "--state-dir", state], dir.path());
    // Left out of the report when 0.
    assert_eq!(
        first["work"].get("written_in_place_docs"),
        None,
        "a first write signs: not in place: {first}"
    );
    assert_settled_in_place(&t, dir.path());
    let again = t.run_ok(&["run", "--state-dir", state], dir.path());
    assert_eq!(again["documents"]["written"], json!(0), "{again}");

    // One more member joins, signed as its group's pages are: every member's counts change, in
    // place.
    let proto = t.docs()["member-00001"].clone();
    let mut new = proto.clone();
    new.retain(|k, _| !k.starts_with('_') && k != "test_s");
    new.insert("id".into(), json!(format!("member-{MEMBERS:05}")));
    new.insert("sku".into(), json!("https://shop.example/item/new"));
    t.load(&[Value::Object(new)]);
    let grown = t.run_ok(&["run", "--state-dir", state], dir.path());
    assert!(
        grown["work"]["written_in_place_docs"].as_u64().unwrap() >= MEMBERS as u64,
        "{grown}"
    );
    assert_settled_in_place(&t, dir.path());

    // serve's views read the profile's fields: the big group, its one representative first.
    let server = super::serve::serve(&t, &[]);
    let listed = server.json("/api/groups/exact?limit=1&members=3");
    let group = &listed["groups"][0];
    assert_eq!(group["size"], json!(MEMBERS + 1), "{listed}");
    let rep = group["representative"]["id"]
        .as_str()
        .expect("a representative");
    assert_eq!(group["members"][0]["id"], json!(rep), "{listed}");
    assert_eq!(group["members"][0]["unique"], json!(true), "{listed}");
    assert_eq!(group["members"][1]["unique"], json!(false), "{listed}");
    let found = server.json(&format!("/api/lookup?q={rep}"));
    let exact = &found["documents"][0]["dimensions"][0];
    assert_eq!(exact["dimension"], "exact", "{found}");
    assert_eq!(exact["unique"], json!(true), "{found}");
    assert_eq!(exact["copycount"], json!(MEMBERS + 1), "{found}");
    drop(server);

    // clean takes the profile's fields off every page.
    let cleaned = t.run(&["clean", "--state-dir", state, "--quiet"]);
    assert_eq!(cleaned.status.code(), Some(0), "{}", stderr(&cleaned));
    for (id, d) in t.docs() {
        for (_, name) in IN_PLACE_NAMES {
            assert!(d.get(name).is_none(), "{id}: {name} left");
        }
    }
}

/// A core whose `_version_` is indexed updates nothing in place: `schema apply --profile in-place`
/// adds none of the profile's fields and says why, with exit 2.
#[test]
fn apply_refuses_the_in_place_profile_on_an_indexed_version_field() {
    let t = Target::fake("in-place-version");
    t.schema_post(
        json!({"replace-field": {"name": "_version_", "type": "plong",
                                            "indexed": true, "stored": false}}),
    );
    let (code, verdict) = schema(&t, "apply", &["--profile", "in-place"]);
    assert_eq!(code, Some(2), "{verdict}");
    assert_eq!(verdict["added"], json!([]), "{verdict}");
    let problems = verdict["problems"].to_string();
    assert!(
        problems.contains("not applied") && problems.contains("_version_ is indexed"),
        "{verdict}"
    );
    let (_, checked) = schema(&t, "check", &["--profile", "in-place"]);
    assert!(
        checked["not_in_place"]
            .to_string()
            .contains("_version_ (Solr's version field) is indexed"),
        "{checked}"
    );
}
