//! Reading: `read_page` (pages, cursors, fields, filters), `sample`, `get`, `facet`, and what a store
//! tells about itself (`known_count`, `count`, `ping`, `requests`, `max_lookup_values`,
//! `cost_model`). Expected values come from the corpus's table ([`super::corpus`]), written out.

use serde_json::{json, Value};
use solr_dedup::store::{Bucket, CostModel, Doc, FacetQuery, Filter, ReadQuery, Store};

use super::{corpus_doc, store_test, Order, World};

/// Every page of `query`, from the first, as the engine reads them; panics past 20 pages.
fn pages(store: &dyn Store, w: &World, query: &ReadQuery) -> Vec<Vec<Doc>> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = w
            .run(store.read_page(query, cursor.as_deref()))
            .expect("a page");
        assert_eq!(page.via, w.allowed().via, "{:?}", w.kind());
        out.push(page.docs);
        match page.next {
            Some(next) => cursor = Some(next),
            None => return out,
        }
        assert!(out.len() < 20, "the read does not end: {out:?}");
    }
}

/// The short ids of documents, in their order.
fn shorts(w: &World, docs: &[Doc]) -> Vec<String> {
    docs.iter()
        .map(|d| w.short(d["id"].as_str().expect("a string id")))
        .collect()
}

/// The short ids `filter` (within the test's scope) selects, sorted: the set, whatever the order.
fn selected(store: &dyn Store, w: &World, filter: Filter) -> Vec<String> {
    let query = ReadQuery {
        filter: w.scope().and(filter),
        fields: vec!["id".into()],
        rows: 100,
    };
    let mut ids: Vec<String> = pages(store, w, &query)
        .concat()
        .iter()
        .map(|d| w.short(d["id"].as_str().unwrap()))
        .collect();
    ids.sort();
    ids
}

fn query(w: &World, fields: &[&str], rows: usize) -> ReadQuery {
    ReadQuery {
        filter: w.scope(),
        fields: fields.iter().map(|f| (*f).to_owned()).collect(),
        rows,
    }
}

/// A full read hands out every document once, in pages of at most `rows`, and ends. The order is
/// where stores differ: Solr's by id, the file store's by line.
fn read_page_reads_every_document_once(store: &dyn Store, w: &World) {
    let q = query(w, &["id"], 4);
    let pages = pages(store, w, &q);
    let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
    assert_eq!(sizes, [4, 2], "{:?}", w.kind());
    let order = shorts(w, &pages.concat());
    let expected = match w.allowed().order {
        Order::ById => ["a", "b", "c", "d", "e", "f"],
        Order::Input => ["e", "b", "d", "a", "f", "c"],
    };
    assert_eq!(order, expected, "{:?}", w.kind());
    // `sample` is the first page and nothing more.
    let sample = w.run(store.sample(&q)).unwrap();
    assert_eq!(shorts(w, &sample), expected[..4], "{:?}", w.kind());
}

/// A cursor names a place, not a state: the same cursor reads the same page again, and a second
/// read from the start goes the same way.
fn read_page_cursor_can_be_read_again(store: &dyn Store, w: &World) {
    let q = query(w, &["id"], 2);
    let first = w.run(store.read_page(&q, None)).unwrap();
    let cursor = first.next.clone().expect("more than one page");
    let second = w.run(store.read_page(&q, Some(&cursor))).unwrap();
    let again = w.run(store.read_page(&q, Some(&cursor))).unwrap();
    assert_eq!(shorts(w, &second.docs), shorts(w, &again.docs));
    assert_eq!(second.next, again.next);
    assert_eq!(second.docs.len(), 2);
    let restart = w.run(store.read_page(&q, None)).unwrap();
    assert_eq!(shorts(w, &restart.docs), shorts(w, &first.docs));
    // Pages do not overlap.
    let mut seen = shorts(w, &first.docs);
    seen.extend(shorts(w, &second.docs));
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 4, "{seen:?}");
}

/// A read returns the requested fields, nothing else; a document without a field has no entry
/// for it (not `null`); values come back as they were indexed (strings and longs, negative ones
/// too).
fn read_page_returns_the_requested_fields(store: &dyn Store, w: &World) {
    let fields = ["id", "sku", "note_s", "exact_signature_l"];
    let mut docs = pages(store, w, &query(w, &fields, 100)).concat();
    docs.sort_by_key(|d| d["id"].as_str().unwrap().to_owned());
    let mut expected = Vec::new();
    for short in ["a", "b", "c", "d", "e", "f"] {
        let mut want = corpus_doc(short);
        want.retain(|k, _| fields.contains(&k.as_str()));
        want.insert("id".into(), json!(w.id(short)));
        expected.push(want);
    }
    assert_eq!(docs, expected, "{:?}", w.kind());
    let ids = pages(store, w, &query(w, &["id"], 100)).concat();
    assert!(ids.iter().all(|d| d.len() == 1), "{ids:?}");
}

/// The unique key comes with every document, asked for or not (`ReadQuery::fields`: "the unique
/// key is always among them"); without it a caller could not tell which document `get` found.
fn the_id_comes_with_every_document_unasked(store: &dyn Store, w: &World) {
    let docs = pages(store, w, &query(w, &["host_s"], 100)).concat();
    assert_eq!(docs.len(), 6);
    for d in &docs {
        let keys: Vec<&String> = d.keys().collect();
        assert_eq!(keys, ["host_s", "id"], "{:?}: read_page: {d:?}", w.kind());
    }
    let found = w
        .run(store.get(&w.ids(&["c", "missing", "a"]), &["host_s".to_owned()]))
        .unwrap();
    assert_eq!(
        Value::from(found),
        json!([
            {"id": w.id("c"), "host_s": "x.example"},
            {"id": w.id("a"), "host_s": "x.example"},
        ]),
        "{:?}: get",
        w.kind()
    );
}

/// The filter language selects the same documents in every store: a term, a range over longs
/// (a negative bound too), presence, negation, a disjunction, and a lookup by id (what the engine
/// splits by `max_lookup_values`).
fn read_page_filters_select_the_same_documents(store: &dyn Store, w: &World) {
    let term = |field: &str, value: &str| Filter::Term {
        field: field.into(),
        value: value.into(),
    };
    assert_eq!(
        selected(store, w, term("host_s", "x.example")),
        ["a", "b", "c"]
    );
    assert_eq!(
        selected(
            store,
            w,
            Filter::Range {
                field: "exact_signature_l".into(),
                lo: Some("10".into()),
                hi: Some("20".into()),
            }
        ),
        ["b", "c", "d", "e"]
    );
    assert_eq!(
        selected(
            store,
            w,
            Filter::Range {
                field: "exact_signature_l".into(),
                lo: None,
                hi: Some("-1".into()),
            }
        ),
        ["f"]
    );
    assert_eq!(
        selected(store, w, Filter::Present("note_s".into())),
        ["a", "d"]
    );
    assert_eq!(
        selected(store, w, Filter::Not(Box::new(term("host_s", "x.example")))),
        ["d", "e", "f"]
    );
    assert_eq!(
        selected(
            store,
            w,
            Filter::Or(vec![term("host_s", "z.example"), term("note_s", "first")])
        ),
        ["a", "f"]
    );
    let lookup = Filter::any_of("id", w.ids(&["d", "a", "nothing-here"]));
    assert_eq!(selected(store, w, lookup), ["a", "d"]);
    assert_eq!(
        selected(store, w, term("host_s", "w.example")),
        [] as [&str; 0]
    );
}

/// `get` finds documents by id in the order asked, skips ids that are not there, and returns only
/// the requested fields.
fn get_finds_present_ids_and_skips_missing_ones(store: &dyn Store, w: &World) {
    let ids = vec![w.id("c"), w.id("missing"), w.id("a")];
    let fields = vec!["id".to_owned(), "host_s".to_owned()];
    let docs = w.run(store.get(&ids, &fields)).unwrap();
    assert_eq!(
        Value::from(docs),
        json!([
            {"id": w.id("c"), "host_s": "x.example"},
            {"id": w.id("a"), "host_s": "x.example"},
        ]),
        "{:?}",
        w.kind()
    );
    let none = w.run(store.get(&[w.id("missing")], &fields)).unwrap();
    assert!(none.is_empty(), "{none:?}");
    let empty = w.run(store.get(&[], &fields)).unwrap();
    assert!(empty.is_empty(), "{empty:?}");
}

fn facet(store: &dyn Store, w: &World, field: &str, mincount: u64, limit: Option<usize>) -> Value {
    facet_in(store, w, field, w.scope(), mincount, limit)
}

fn facet_in(
    store: &dyn Store,
    w: &World,
    field: &str,
    filter: Filter,
    mincount: u64,
    limit: Option<usize>,
) -> Value {
    let buckets = w
        .run(store.facet(&FacetQuery {
            field: field.into(),
            filter,
            mincount,
            limit,
        }))
        .expect("facet");
    buckets
        .into_iter()
        .map(|Bucket { value, count }| json!([value, count]))
        .collect()
}

/// Facets count values alike: count descending, ties in the field's order (numeric for longs),
/// typed values (numbers stay numbers), values under `mincount` left out, `limit` keeping the most
/// held, and the filter deciding which documents count.
fn facet_counts_with_mincount_and_limit(store: &dyn Store, w: &World) {
    let k = w.kind();
    assert_eq!(
        facet(store, w, "host_s", 1, None),
        json!([["x.example", 3], ["y.example", 2], ["z.example", 1]]),
        "{k:?}"
    );
    assert_eq!(
        facet(store, w, "host_s", 2, None),
        json!([["x.example", 3], ["y.example", 2]]),
        "{k:?}"
    );
    assert_eq!(facet(store, w, "host_s", 4, None), json!([]), "{k:?}");
    assert_eq!(
        facet(store, w, "host_s", 1, Some(1)),
        json!([["x.example", 3]]),
        "{k:?}"
    );
    assert_eq!(
        facet(store, w, "host_s", 1, Some(2)),
        json!([["x.example", 3], ["y.example", 2]]),
        "{k:?}"
    );
    assert_eq!(
        facet(store, w, "exact_signature_l", 1, None),
        json!([[10, 3], [-5, 1], [20, 1], [30, 1]]),
        "{k:?}"
    );
    assert_eq!(
        facet(store, w, "exact_signature_l", 2, None),
        json!([[10, 3]]),
        "{k:?}"
    );
    // A field only some documents hold counts only those.
    assert_eq!(
        facet(store, w, "note_s", 1, None),
        json!([["first", 1], ["second", 1]]),
        "{k:?}"
    );
    let x = w.scope().and(Filter::Term {
        field: "host_s".into(),
        value: "x.example".into(),
    });
    assert_eq!(
        facet_in(store, w, "exact_signature_l", x, 1, None),
        json!([[10, 2], [30, 1]]),
        "{k:?}"
    );
}

/// What a store knows of its counts: the Solr store the count of the filter it was opened with (and
/// of no other), and a count on request; the file store neither. Where a store answers, it
/// answers right.
fn counts_where_the_store_knows_them(store: &dyn Store, w: &World) {
    let allowed = w.allowed();
    let x = w.scope().and(Filter::Term {
        field: "host_s".into(),
        value: "x.example".into(),
    });
    assert_eq!(
        store.known_count(&w.scope()),
        allowed.known_count.then_some(6),
        "{:?}",
        w.kind()
    );
    assert_eq!(store.known_count(&x), None);
    assert_eq!(
        w.run(store.count(&w.scope())).unwrap(),
        allowed.count.then_some(6)
    );
    assert_eq!(w.run(store.count(&x)).unwrap(), allowed.count.then_some(3));
}

/// `ping` answers; `requests` counts one request per request sent (the file store sends none);
/// `max_lookup_values` is the store's own limit; every store prices its work with the model
/// measured on a real Solr (`src/store/solr/cost.rs`; the file store's report says what the same
/// run would cost a core).
fn what_a_store_tells_about_itself(store: &dyn Store, w: &World) {
    let allowed = w.allowed();
    let per = u64::from(allowed.sends_requests);
    let before = store.requests();
    w.run(store.ping()).expect("the store answers");
    assert_eq!(store.requests(), before + per, "{:?}: ping", w.kind());
    w.run(store.count(&w.scope())).unwrap();
    assert_eq!(store.requests(), before + 2 * per, "{:?}: count", w.kind());
    w.run(store.get(&[w.id("a")], &[])).unwrap();
    assert_eq!(store.requests(), before + 3 * per, "{:?}: get", w.kind());
    if !allowed.sends_requests {
        assert_eq!(store.requests(), 0);
    }
    assert_eq!(store.max_lookup_values(), allowed.max_lookup_values);
    assert_eq!(
        store.cost_model(),
        CostModel {
            text_ms: 0.28,
            update_ms: 0.60,
            in_place_ms: 0.10,
            export_ms: 0.006,
            cursor_light_ms: 0.079,
            lookup_ms: 0.079,
            request_ms: 1.0,
        }
    );
}

store_test!(read_page_reads_every_document_once);
store_test!(read_page_cursor_can_be_read_again);
store_test!(read_page_returns_the_requested_fields);
store_test!(the_id_comes_with_every_document_unasked);
store_test!(read_page_filters_select_the_same_documents);
store_test!(get_finds_present_ids_and_skips_missing_ones);
store_test!(facet_counts_with_mincount_and_limit);
store_test!(counts_where_the_store_knows_them);
store_test!(what_a_store_tells_about_itself);
