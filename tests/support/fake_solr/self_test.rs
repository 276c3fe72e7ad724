//! Tests of the fake itself: each fault does what its documentation says, basic auth answers like
//! Solr's BasicAuthPlugin, the request log and the test-side API behave.

use std::time::Duration;

use serde_json::{json, Value};

use super::{FakeOptions, FakeSolr, Fault, FaultRule};

fn client() -> reqwest::blocking::Client {
    {
        solr_dedup::solr_client::install_crypto_provider();
        reqwest::blocking::Client::builder()
    }
    .timeout(Duration::from_secs(60))
    .build()
    .expect("client")
}

fn post_update(
    c: &reqwest::blocking::Client,
    fake: &FakeSolr,
    query: &str,
    body: &Value,
) -> reqwest::Result<reqwest::blocking::Response> {
    c.post(format!("{}/update?{query}", fake.core_url()))
        .header("Content-Type", "application/json")
        .body(body.to_string())
        .send()
}

fn select_ids(c: &reqwest::blocking::Client, fake: &FakeSolr) -> (u16, Value) {
    let r = c
        .get(format!(
            "{}/select?q=*:*&fl=id&sort=id+asc&wt=json",
            fake.core_url()
        ))
        .send()
        .expect("select");
    let status = r.status().as_u16();
    (status, json_of(r))
}

/// Adds URL-encoded query parameters (the client has no `query` feature).
trait QueryPairs {
    fn query_pairs(self, pairs: &[(&str, &str)]) -> Self;
}

impl QueryPairs for reqwest::blocking::RequestBuilder {
    fn query_pairs(self, pairs: &[(&str, &str)]) -> Self {
        let (client, req) = self.build_split();
        let mut req = req.expect("request");
        req.url_mut().query_pairs_mut().extend_pairs(pairs);
        reqwest::blocking::RequestBuilder::from_parts(client, req)
    }
}

fn json_of(r: reqwest::blocking::Response) -> Value {
    serde_json::from_str(&r.text().expect("body")).expect("json body")
}

fn ids(docs: &[Value]) -> Vec<String> {
    docs.iter()
        .map(|d| d["id"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn status_fault_answers_solr_error_shape_then_lets_requests_through() {
    let fake = FakeSolr::start();
    let c = client();
    let h = fake.fault(FaultRule::once("/select", Fault::Status(503)));
    let (status, body) = select_ids(&c, &fake);
    assert_eq!(status, 503);
    assert_eq!(body["responseHeader"]["status"], json!(503));
    assert_eq!(body["error"]["code"], json!(503));
    assert_eq!(
        body["error"]["metadata"],
        json!([
            "error-class",
            "org.apache.solr.common.SolrException",
            "root-error-class",
            "org.apache.solr.common.SolrException"
        ])
    );
    let (status, _) = select_ids(&c, &fake);
    assert_eq!(status, 200);
    assert_eq!(h.hits(), 1);
    let statuses: Vec<Option<u16>> = fake.requests().iter().map(|r| r.status).collect();
    assert_eq!(statuses, vec![Some(503), Some(200)]);
}

#[test]
fn skip_and_times_choose_the_window() {
    let fake = FakeSolr::start();
    let c = client();
    let h = fake.fault(FaultRule {
        path: "/select".into(),
        skip: 1,
        times: 2,
        fault: Fault::Status(500),
    });
    let statuses: Vec<u16> = (0..4).map(|_| select_ids(&c, &fake).0).collect();
    assert_eq!(statuses, vec![200, 500, 500, 200]);
    assert_eq!(h.hits(), 2);
    // Other paths are not matched.
    let r = c
        .get(format!("{}/get?id=x&wt=json", fake.core_url()))
        .send()
        .expect("get");
    assert_eq!(r.status().as_u16(), 200);
}

#[test]
fn delay_outlasts_a_client_timeout_then_the_next_request_is_normal() {
    let fake = FakeSolr::start();
    let h = fake.fault(FaultRule::once(
        "/get",
        Fault::Delay(Duration::from_secs(30)),
    ));
    let impatient = {
        solr_dedup::solr_client::install_crypto_provider();
        reqwest::blocking::Client::builder()
    }
    .timeout(Duration::from_millis(200))
    .build()
    .expect("client");
    let err = impatient
        .get(format!("{}/get?id=a&wt=json", fake.core_url()))
        .send()
        .expect_err("the delayed request times out");
    assert!(err.is_timeout(), "{err}");
    assert_eq!(h.hits(), 1);
    let r = client()
        .get(format!("{}/get?id=a&wt=json", fake.core_url()))
        .send()
        .expect("get");
    assert_eq!(json_of(r), json!({"doc": null}));
}

#[test]
fn drop_closes_the_connection_and_leaves_the_state_alone() {
    let fake = FakeSolr::start();
    let c = client();
    let h = fake.fault(FaultRule::once("/update", Fault::Drop));
    let err = post_update(&c, &fake, "commit=true", &json!([{"id": "a"}])).expect_err("dropped");
    assert!(!err.is_timeout(), "{err}");
    assert!(h.wait_hit(Duration::from_secs(5)));
    assert!(fake.docs().is_empty());
    assert_eq!(fake.requests()[0].status, None);
    // The next request goes through.
    let r = post_update(&c, &fake, "commit=true", &json!([{"id": "a"}])).expect("update");
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(ids(&fake.committed_docs()), vec!["a"]);
}

#[test]
fn drop_after_apply_changes_the_state_but_never_answers() {
    let fake = FakeSolr::start();
    let c = client();
    let h = fake.fault(FaultRule::once("/update", Fault::DropAfterApply));
    post_update(&c, &fake, "", &json!([{"id": "a"}, {"id": "b"}])).expect_err("dropped");
    assert!(h.wait_hit(Duration::from_secs(5)));
    assert_eq!(ids(&fake.docs()), vec!["a", "b"]);
    assert!(fake.committed_docs().is_empty());
    assert_eq!(fake.requests()[0].status, None);
}

#[test]
fn hold_applies_a_prefix_of_the_batch_until_released() {
    let fake = FakeSolr::start();
    let h = fake.fault(FaultRule::once("/update", Fault::Hold { apply_first: 2 }));
    let url = format!("{}/update?wt=json", fake.core_url());
    let sender = std::thread::spawn(move || {
        client()
            .post(url)
            .header("Content-Type", "application/json")
            .body(json!([{"id": "a"}, {"id": "b"}, {"id": "c"}]).to_string())
            .send()
            .map(|r| r.status().as_u16())
    });
    assert!(
        h.wait_hit(Duration::from_secs(30)),
        "the batch was never held"
    );
    assert_eq!(ids(&fake.docs()), vec!["a", "b"]);
    assert!(!sender.is_finished(), "a held request has no answer yet");
    h.release();
    let outcome = sender.join().expect("sender thread");
    assert!(
        outcome.is_err(),
        "a released hold closes the connection: {outcome:?}"
    );
    assert_eq!(ids(&fake.docs()), vec!["a", "b"]);
    assert_eq!(fake.requests()[0].status, None);
}

#[test]
fn dropping_the_handle_releases_a_hold() {
    let fake = FakeSolr::start();
    let h = fake.fault(FaultRule::once("/update", Fault::Hold { apply_first: 0 }));
    let url = format!("{}/update?wt=json", fake.core_url());
    let sender = std::thread::spawn(move || {
        client()
            .post(url)
            .header("Content-Type", "application/json")
            .body("[{\"id\":\"a\"}]")
            .send()
            .map(|r| r.status().as_u16())
    });
    assert!(h.wait_hit(Duration::from_secs(30)));
    drop(h);
    assert!(sender.join().expect("sender thread").is_err());
    assert!(fake.docs().is_empty());
}

#[test]
fn hook_changes_the_state_between_a_read_and_a_write() {
    let fake = FakeSolr::start();
    let c = client();
    let v = fake.with_core(|core| {
        core.add(json!({"id": "a", "exact_signature_l": 1}))
            .expect("add")
    });
    let h = fake.fault(FaultRule::once(
        "/update",
        Fault::Hook(Box::new(|core| {
            core.delete("a");
        })),
    ));
    let r = post_update(
        &c,
        &fake,
        "wt=json",
        &json!([{"id": "a", "exact_signature_unique_b": {"set": true}, "_version_": v}]),
    )
    .expect("update");
    assert_eq!(r.status().as_u16(), 409);
    let body: Value = json_of(r);
    assert_eq!(
        body["error"]["msg"],
        json!("Document not found for update.  id=a")
    );
    assert_eq!(h.hits(), 1);
    assert!(fake.docs().is_empty());
}

#[test]
fn basic_auth_rejects_missing_and_wrong_credentials_like_solr() {
    let fake = FakeSolr::start_with(FakeOptions {
        basic_auth: Some(("solr".into(), "SolrRocks".into())),
        ..FakeOptions::default()
    });
    let c = client();
    let url = format!("{}/select?q=*:*&wt=json", fake.core_url());
    let r = c.get(&url).send().expect("select");
    assert_eq!(r.status().as_u16(), 401);
    assert_eq!(
        r.headers()["www-authenticate"].to_str().unwrap(),
        "Basic realm=\"solr\""
    );
    assert!(r.text().unwrap().contains("require authentication"));
    let r = c
        .get(&url)
        .basic_auth("solr", Some("wrong"))
        .send()
        .expect("select");
    assert_eq!(r.status().as_u16(), 401);
    assert!(r.text().unwrap().contains("Bad credentials"));
    let r = c
        .get(&url)
        .basic_auth("solr", Some("SolrRocks"))
        .send()
        .expect("select");
    assert_eq!(r.status().as_u16(), 200);
}

#[test]
fn requests_record_query_and_form_parameters() {
    let fake = FakeSolr::start();
    let c = client();
    c.post(format!("{}/select?wt=json", fake.core_url()))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body("q=*:*&fq=id:a&fq=id:b")
        .send()
        .expect("select");
    let rec = &fake.requests()[0];
    assert_eq!(rec.method, "POST");
    assert_eq!(rec.path, "/select");
    assert_eq!(
        rec.params,
        vec![
            ("wt".to_string(), "json".to_string()),
            ("q".to_string(), "*:*".to_string()),
            ("fq".to_string(), "id:a".to_string()),
            ("fq".to_string(), "id:b".to_string()),
        ]
    );
    assert_eq!(rec.status, Some(200));
    fake.clear_requests();
    assert!(fake.requests().is_empty());
}

#[test]
fn versions_come_from_a_solr_like_clock() {
    let fake = FakeSolr::start();
    let (a, b) = fake.with_core(|core| {
        (
            core.add(json!({"id": "a"})).expect("add"),
            core.add(json!({"id": "b"})).expect("add"),
        )
    });
    assert!(b > a);
    assert!(
        (1_700_000_000_000_000_000..2_000_000_000_000_000_000).contains(&a),
        "{a}"
    );
    let docs = fake.docs();
    assert_eq!(docs[0]["_version_"], json!(a));
}

#[test]
fn an_atomic_update_loses_fields_that_are_neither_stored_nor_doc_values() {
    let fake = FakeSolr::start();
    fake.edit_schema(|s| {
        let f = s.field_mut("text_t").expect("text_t");
        f.set("stored", "false");
        f.set("docValues", "false");
    });
    fake.with_core(|core| {
        core.add(json!({"id": "a", "text_t": "kept only in the index", "exact_signature_l": 5}))
            .expect("add");
        core.add(json!({"id": "a", "exact_signature_unique_b": {"set": true}}))
            .expect("atomic update");
        core.commit();
    });
    let c = client();
    let r: Value = c
        .get(format!("{}/select?q=text_t:index&wt=json", fake.core_url()))
        .send()
        .map(json_of)
        .expect("select");
    assert_eq!(
        r["response"]["numFound"],
        json!(0),
        "the text is gone from the index too"
    );
    let docs = fake.docs();
    assert_eq!(docs[0]["exact_signature_l"], json!(5));
    assert!(docs[0].get("text_t").is_none());
}

#[test]
fn commit_within_fires_on_its_own_in_timer_mode() {
    let fake = FakeSolr::start();
    let c = client();
    post_update(&c, &fake, "commitWithin=50", &json!([{"id": "a"}])).expect("update");
    let mut seen = false;
    for _ in 0..200 {
        let (_, body) = select_ids(&c, &fake);
        if body["response"]["numFound"] == json!(1) {
            seen = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(seen, "the commitWithin never fired");
}

#[test]
fn unknown_core_and_handler_get_the_html_404() {
    let fake = FakeSolr::start();
    let c = client();
    for url in [
        format!("{}/nosuchcore/select", fake.base_url()),
        format!("{}/nosuchhandler", fake.core_url()),
    ] {
        let r = c.get(url).send().expect("request");
        assert_eq!(r.status().as_u16(), 404);
        assert_eq!(r.headers()["content-type"], "text/html");
    }
    assert_eq!(fake.requests()[0].path, "/solr/nosuchcore/select");
    assert_eq!(fake.requests()[1].path, "/nosuchhandler");
}

#[test]
fn a_cursor_walk_returns_every_document_once() {
    let fake = FakeSolr::start();
    let docs: Vec<Value> = (0..3000)
        .map(|i| {
            let mut d = json!({"id": format!("doc{i:05}"), "text_t": format!("page number {i}")});
            if i % 7 != 0 {
                d["exact_signature_l"] = json!((i % 50) as i64 - 25);
            }
            d
        })
        .collect();
    let c = client();
    post_update(&c, &fake, "commit=true", &Value::Array(docs)).expect("index");
    let mut mark = "*".to_string();
    let mut seen = Vec::new();
    let mut last_key: Option<(i64, String)> = None;
    loop {
        let body = c
            .get(format!("{}/select", fake.core_url()))
            .query_pairs(&[
                ("q", "*:*"),
                ("fl", "id,exact_signature_l"),
                ("rows", "250"),
                ("sort", "exact_signature_l asc,id asc"),
                ("cursorMark", mark.as_str()),
                ("wt", "json"),
            ])
            .send()
            .map(json_of)
            .expect("select");
        for d in body["response"]["docs"].as_array().expect("docs") {
            let key = (
                d["exact_signature_l"].as_i64().unwrap_or(0),
                d["id"].as_str().expect("id").to_string(),
            );
            if let Some(prev) = &last_key {
                assert!(*prev < key, "{prev:?} before {key:?}");
            }
            last_key = Some(key.clone());
            seen.push(key.1);
        }
        let next = body["nextCursorMark"].as_str().expect("mark").to_string();
        if next == mark {
            break;
        }
        mark = next;
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 3000);
}

#[test]
fn copy_fields_survive_an_atomic_update() {
    let fake = FakeSolr::start();
    fake.edit_schema(|s| {
        s.put_field(super::schema::FieldDef::new(
            "copy_t",
            "text_general",
            &[("indexed", "true"), ("stored", "false")],
        ));
        s.copy_fields.push(super::schema::CopyField {
            source: "text_t".into(),
            dest: "copy_t".into(),
        });
    });
    fake.with_core(|core| {
        core.add(json!({"id": "a", "text_t": "needle"}))
            .expect("add");
        core.add(json!({"id": "a", "exact_signature_l": {"set": 1}}))
            .expect("atomic update");
        core.commit();
    });
    let body = client()
        .get(format!(
            "{}/select?q=copy_t:needle&fl=id&wt=json",
            fake.core_url()
        ))
        .send()
        .map(json_of)
        .expect("select");
    assert_eq!(body["response"]["numFound"], json!(1));
}
