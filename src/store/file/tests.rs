//! Tests of the file store: facets, real-time get, paging, update merging.

use serde_json::json;

use super::*;
use crate::store::StoreErrorKind;

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}

/// The transcripts' main fixture in miniature: signatures 1000007 ×3, 1000003 ×2, one singleton,
/// one document without a signature.
fn store(dir: &Path) -> FileStore {
    let docs = [
        json!({"id":"c","exact_signature_l":1000007,"exact_signature_copycount_i":3}),
        json!({"id":"a","exact_signature_l":1000003,"exact_signature_copycount_i":2}),
        json!({"id":"d","exact_signature_l":1000007,"exact_signature_copycount_i":3}),
        json!({"id":"b","exact_signature_l":1000003,"exact_signature_copycount_i":1}),
        json!({"id":"e","exact_signature_l":1000007,"exact_signature_copycount_i":3}),
        json!({"id":"j","exact_signature_l":-2401053093171183889i64}),
        json!({"id":"m","text_t":"no signature"}),
    ];
    open_lines(
        dir,
        &docs.iter().map(|d| format!("{d}\n")).collect::<String>(),
    )
}

#[test]
fn a_raw_solr_query_is_refused_not_matched_against_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    let raw = Filter::Solr("{!term f=id}a".into());
    let read = ReadQuery {
        filter: Filter::All.and(Filter::Not(Box::new(raw.clone()))),
        fields: vec!["id".into()],
        rows: 10,
    };
    assert!(matches!(
        block_on(s.read_page(&read, None)),
        Err(e) if e.kind() == StoreErrorKind::Unsupported
    ));
    let facet = FacetQuery {
        field: "exact_signature_l".into(),
        filter: raw,
        mincount: 1,
        limit: None,
    };
    assert!(matches!(
        block_on(s.facet(&facet)),
        Err(e) if e.kind() == StoreErrorKind::Unsupported
    ));
}

#[test]
fn facet_counts_with_mincount_in_solr_order() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    let q = |mincount| FacetQuery {
        field: "exact_signature_l".into(),
        filter: Filter::All,
        mincount,
        limit: None,
    };
    let buckets = block_on(s.facet(&q(2))).unwrap();
    assert_eq!(
        buckets,
        vec![
            Bucket {
                value: json!(1000007),
                count: 3
            },
            Bucket {
                value: json!(1000003),
                count: 2
            },
        ]
    );
    // mincount 0 acts as 1 on a Points field; ties in count go by value (numeric order).
    let all = block_on(s.facet(&q(0))).unwrap();
    assert_eq!(all.len(), 3);
    assert_eq!(all[2].value, json!(-2401053093171183889i64));
    // A limit keeps the top values in that order.
    let top = FacetQuery {
        limit: Some(1),
        ..q(0)
    };
    assert_eq!(
        block_on(s.facet(&top)).unwrap(),
        vec![Bucket {
            value: json!(1000007),
            count: 3
        }]
    );
}

#[test]
fn get_returns_requested_ids_in_order_and_skips_missing_ones() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    let ids: Vec<String> = ["e", "zz", "a"].iter().map(|s| s.to_string()).collect();
    let fl = ["id".to_string(), "exact_signature_l".to_string()];
    let docs = block_on(s.get(&ids, &fl)).unwrap();
    assert_eq!(docs.len(), 2);
    assert_eq!(docs[0]["id"], json!("e"));
    assert_eq!(docs[1]["id"], json!("a"));
    assert_eq!(docs[1]["exact_signature_l"], json!(1000003));
    assert!(
        docs[1].get("exact_signature_copycount_i").is_none(),
        "fl is honoured"
    );
}

#[test]
fn pages_cover_every_match_once_whatever_the_page_size() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    for rows in [1, 2, 3, 100] {
        let q = ReadQuery {
            filter: Filter::Present("exact_signature_l".into()),
            fields: vec!["id".into()],
            rows,
        };
        let mut ids = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = block_on(s.read_page(&q, cursor.as_deref())).unwrap();
            ids.extend(
                page.docs
                    .iter()
                    .map(|d| d["id"].as_str().unwrap().to_owned()),
            );
            match page.next {
                Some(n) => cursor = Some(n),
                None => break,
            }
        }
        assert_eq!(ids, ["c", "a", "d", "b", "e", "j"], "rows {rows}");
    }
}

#[test]
fn updates_to_one_document_merge_and_keep_the_first_version() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    let q = ReadQuery {
        filter: Filter::All,
        fields: vec!["id".into()],
        rows: 100,
    };
    block_on(s.read_page(&q, None)).unwrap();
    let up = |id: &str, version, field: &str, v: Value| AtomicUpdate {
        id: id.into(),
        version: Some(version),
        set: vec![(field.into(), v)],
    };
    block_on(s.update(&[
        up("d", 7, "exact_signature_l", json!(1)),
        up("a", 5, "x_b", json!(true)),
    ]))
    .unwrap();
    block_on(s.update(&[up("a", 6, "x_b", json!(false)), up("d", 8, "y_i", json!(2))])).unwrap();
    block_on(s.commit(CommitMode::Hard)).unwrap();
    let out = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Input order (a before d), one line each, later sets win, the first version stays.
    assert_eq!(
        lines,
        vec![
            json!({"id":"a","x_b":{"set":false},"_version_":5}),
            json!({"id":"d","exact_signature_l":{"set":1},"y_i":{"set":2},"_version_":7}),
        ]
    );
}

fn read_all(s: &FileStore, q: &ReadQuery) -> Vec<Doc> {
    let mut docs = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = block_on(s.read_page(q, cursor.as_deref())).unwrap();
        docs.extend(page.docs);
        match page.next {
            Some(n) => cursor = Some(n),
            None => return docs,
        }
    }
}

fn open_lines(dir: &Path, text: &str) -> FileStore {
    let input = dir.join("in.jsonl");
    std::fs::write(&input, text).unwrap();
    FileStore::open(
        &input,
        Output::File(dir.join("out.jsonl")),
        OutputFormat::Updates,
        "id",
        "_version_",
    )
    .unwrap()
}

#[test]
fn rereads_come_from_the_light_copy_and_equal_reads_of_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in 0..40 {
        let d = json!({"id": format!("d{i:02}"), "sku": format!("http://x.org/{i}"),
            "n_i": i % 7, "text_t": "long text ".repeat(50), "odd_b": i % 2 == 1});
        text.push_str(&format!("{d}\n"));
        if i % 9 == 0 {
            text.push_str("  \n\n");
        }
    }
    let light = ReadQuery {
        filter: Filter::Present("odd_b".into()),
        fields: vec!["id".into(), "sku".into(), "n_i".into()],
        rows: 3,
    };
    let s = open_lines(dir.path(), &text);
    s.hint_rereads(&light);
    let first = read_all(&s, &light);
    assert_eq!(first.len(), 40);
    assert!(
        first[0].get("odd_b").is_none(),
        "filter fields are not returned"
    );
    let copy = s
        .state
        .lock()
        .unwrap()
        .light
        .ready
        .as_ref()
        .map(|r| r.0.clone());
    assert_eq!(
        copy,
        Some(vec![
            "id".into(),
            "n_i".into(),
            "odd_b".into(),
            "sku".into()
        ])
    );
    // Every later read equals the same read on a store that never made a copy.
    let other_dir = tempfile::tempdir().unwrap();
    let plain = open_lines(other_dir.path(), &text);
    let narrower = ReadQuery {
        filter: Filter::Term {
            field: "odd_b".into(),
            value: "true".into(),
        },
        fields: vec!["id".into(), "n_i".into()],
        rows: 4,
    };
    let uncovered = ReadQuery {
        fields: vec!["id".into(), "text_t".into()],
        ..light.clone()
    };
    let other_filter = ReadQuery {
        filter: Filter::Term {
            field: "n_i".into(),
            value: "3".into(),
        },
        ..light.clone()
    };
    for q in [&light, &narrower, &uncovered, &other_filter] {
        assert_eq!(read_all(&s, q), read_all(&plain, q), "{q:?}");
    }
    assert_eq!(read_all(&s, &narrower).len(), 20);
    // A page read from the copy leaves its reader where the page ended...
    let page = block_on(s.read_page(&light, None)).unwrap();
    let next = page.next.unwrap();
    assert!(s.state.lock().unwrap().light.reader.is_some());
    // ...and any cursor, from the copy or from the input, continues at the same document.
    let rest = block_on(s.read_page(&light, Some(&next))).unwrap();
    let rest_plain = block_on(plain.read_page(&light, Some(&next))).unwrap();
    assert_eq!(rest, rest_plain);
    assert_eq!(rest.docs[0]["id"], json!("d03"));
}

#[test]
fn a_get_finds_documents_not_read_yet() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    let q = ReadQuery {
        filter: Filter::All,
        fields: vec!["id".into()],
        rows: 2,
    };
    let page = block_on(s.read_page(&q, None)).unwrap();
    assert_eq!(page.docs.len(), 2);
    let ids: Vec<String> = ["a", "m", "j"].iter().map(|s| s.to_string()).collect();
    let docs = block_on(s.get(&ids, &["*".to_string()])).unwrap();
    let got: Vec<&str> = docs.iter().map(|d| d["id"].as_str().unwrap()).collect();
    assert_eq!(got, ["a", "m", "j"]);
    assert_eq!(docs[1]["text_t"], json!("no signature"));
    // The page read goes on where it stopped.
    let next = block_on(s.read_page(&q, page.next.as_deref())).unwrap();
    assert_eq!(next.docs[0]["id"], json!("d"));
}

#[test]
fn a_line_that_is_not_utf8_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, b"{\"id\":\"a\"}\n{\"id\":\"b\xff\"}\n").unwrap();
    let s = FileStore::open(
        &input,
        Output::Stdout,
        OutputFormat::Updates,
        "id",
        "_version_",
    )
    .unwrap();
    let q = ReadQuery {
        filter: Filter::All,
        fields: vec!["id".into()],
        rows: 10,
    };
    let err = block_on(s.read_page(&q, None)).unwrap_err().to_string();
    assert!(err.ends_with("in.jsonl:2"), "{err}");
}
