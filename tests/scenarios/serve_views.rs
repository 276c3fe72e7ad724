//! What `solr-dedup serve` shows of the index a run left: the index panel's facts, a page looked up
//! by URL or id with its flags, counts and groups (none for a page the run left alone), and the
//! groups with doubles on one host.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::harness::{corpus, Target};
use super::serve::{serve, unix_now, LONG};

/// The index panel's facts (`documents`, `last_change`, `admin_link`, `settings`) and
/// `GET /api/lookup`: a page found by its URL and by its id, with the flags and copy counts the run
/// stored and the groups it shares; a value full of query syntax is looked up as a value (nothing
/// found, no error); no `q` is a 400.
#[test]
fn serve_tells_its_index_and_looks_a_page_up() {
    let t = Target::fake("serve-lookup");
    t.load(&corpus(120, 29));
    let server = serve(&t, &[]);
    let run = server.wait_run(server.start_run(json!({})), LONG);
    assert_eq!(run["state"], "succeeded", "{run}");

    let status = server.json("/api/status");
    assert_eq!(status["documents"], 120, "{status}");
    let core = t.core_url.rsplit('/').next().unwrap();
    assert!(
        status["admin_link"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/solr/#/{core}/core-overview")),
        "{status}"
    );
    assert_eq!(status["settings"]["scheme"], "yacy", "{status}");
    assert!(status["settings"]["dimensions"]
        .as_array()
        .unwrap()
        .contains(&json!("exact")));
    let changed = status["last_change"].as_f64().expect("a last change");
    assert!((unix_now() - changed).abs() < 600.0, "{status}");
    assert_eq!(status["next_run"], Value::Null, "no schedule: {status}");

    // A member of the biggest exact group, by URL and by id.
    let groups = server.json("/api/groups/exact?limit=1&members=5");
    let group = &groups["groups"][0];
    let member = &group["members"][1];
    let stored = &t.docs()[t.short(member["id"].as_str().unwrap())];
    let by_url = server.json(&format!(
        "/api/lookup?q={}",
        url::form_urlencoded::byte_serialize(member["url"].as_str().unwrap().as_bytes())
            .collect::<String>()
    ));
    let by_id = server.json(&format!(
        "/api/lookup?q={}",
        url::form_urlencoded::byte_serialize(member["id"].as_str().unwrap().as_bytes())
            .collect::<String>()
    ));
    assert_eq!(by_url["documents"], by_id["documents"]);
    let docs = by_url["documents"].as_array().unwrap();
    assert_eq!(docs.len(), 1, "{by_url}");
    let exact = &docs[0]["dimensions"][0];
    assert_eq!(exact["dimension"], "exact");
    assert_eq!(
        exact["unique"], stored["exact_signature_unique_b"],
        "{by_url}"
    );
    assert_eq!(
        exact["copycount"], stored["exact_signature_copycount_i"],
        "{by_url}"
    );
    assert_eq!(exact["group"]["key"], group["key"], "{by_url}");
    assert_eq!(exact["group"]["size"], group["size"], "{by_url}");
    assert_eq!(docs[0]["dimensions"].as_array().unwrap().len(), 7);

    for q in [
        "%22*%3A*%22%20OR%20id%3A*",
        "%7B!terms%20f%3Did%7D*",
        "never-indexed",
    ] {
        let (code, body) = server.get(&format!("/api/lookup?q={q}"), &[]);
        assert_eq!(code, 200, "{q}: {body}");
        let answer: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(answer["documents"], json!([]), "{q}: {answer}");
    }
    let (code, body) = server.get("/api/lookup", &[]);
    assert_eq!(code, 400, "{body}");
    let (code, page) = server.get(
        &format!(
            "/ui/lookup?q={}",
            url::form_urlencoded::byte_serialize(member["id"].as_str().unwrap().as_bytes())
                .collect::<String>()
        ),
        &[],
    );
    assert_eq!(code, 200);
    assert!(page.contains("found-dimension"), "{page}");
}

/// A fuzzy profile too weak to count (one word, under `--fuzzy-min-words` 4) shares its signature
/// with another page, but the run left both alone: the lookup shows no fuzzy group for it (issue 44).
#[test]
fn serve_shows_no_group_for_a_profile_that_takes_no_part() {
    let t = Target::fake("serve-weak");
    t.load(&[
        json!({"id": "w1", "sku": "https://a.example/home", "text_t": "Welcome"}),
        json!({"id": "w2", "sku": "https://b.example/start", "text_t": "welcome!"}),
    ]);
    let server = serve(&t, &[]);
    let run = server.wait_run(server.start_run(json!({})), LONG);
    assert_eq!(run["state"], "succeeded", "{run}");
    let docs = t.docs();
    assert_eq!(
        docs["w1"]["fuzzy_signature_l"], docs["w2"]["fuzzy_signature_l"],
        "one profile"
    );
    let found = server.json(&format!("/api/lookup?q={}", t.id("w1")));
    let fuzzy = &found["documents"][0]["dimensions"][1];
    assert_eq!(fuzzy["dimension"], "fuzzy", "{found}");
    assert_eq!(fuzzy["copycount"], 1, "{found}");
    assert_eq!(fuzzy["unique"], true, "{found}");
    assert!(fuzzy["group"].is_null(), "no group: {found}");
}

/// `GET /api/groups/exact?host=H`: the groups with doubles on H, each with its whole size; a host
/// with a slash is refused.
#[test]
fn serve_lists_the_groups_of_one_host() {
    let t = Target::fake("serve-host-groups");
    t.load(&corpus(200, 31));
    let server = serve(&t, &[]);
    let run = server.wait_run(server.start_run(json!({})), LONG);
    assert_eq!(run["state"], "succeeded", "{run}");

    let all = server.json("/api/groups/exact?limit=100&members=1");
    let sizes: BTreeMap<String, Value> = all["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["key"].as_str().unwrap().to_owned(), g["size"].clone()))
        .collect();
    let url = all["groups"][0]["representative"]["url"].as_str().unwrap();
    let host = url::Url::parse(url).unwrap().host_str().unwrap().to_owned();
    // The groups with a double on the host, from the documents themselves.
    let mut want: Vec<String> = t
        .docs()
        .values()
        .filter(|d| {
            d["exact_signature_unique_b"] == false
                && d["sku"]
                    .as_str()
                    .and_then(|u| url::Url::parse(u).ok())
                    .is_some_and(|u| u.host_str() == Some(&host) && u.port().is_none())
        })
        .map(|d| d["exact_signature_l"].to_string())
        .collect();
    want.sort();
    want.dedup();
    assert!(!want.is_empty());
    let on_host = server.json(&format!(
        "/api/groups/exact?limit=100&members=1&host={host}"
    ));
    let mut got: Vec<String> = on_host["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            let key = g["key"].as_str().unwrap().to_owned();
            assert_eq!(g["size"], sizes[&key], "the whole group's size: {g}");
            key
        })
        .collect();
    got.sort();
    assert_eq!(got, want, "{on_host}");
    let (code, body) = server.get("/api/groups/exact?host=a%2Fb", &[]);
    assert_eq!(code, 400, "{body}");
}
