//! Writing: `update` with its version guard, `commit`, and `change_mark`. What was written is read
//! back past the store ([`World::stored`]), never through it.

use serde_json::{json, Value};
use solr_dedup::store::{AtomicUpdate, CommitMode, ReadQuery, Store, StoreErrorKind};

use super::{corpus_doc, store_test, World};

const FLAG: &str = "exact_signature_unique_b";

/// An update setting [`FLAG`] on `short`, guarded by `version`.
fn flag(w: &World, short: &str, version: i64) -> AtomicUpdate {
    AtomicUpdate {
        id: w.id(short),
        version: Some(version),
        set: vec![(FLAG.into(), json!(true))],
    }
}

/// Updates guarded by the current version are applied, and a commit makes them what is stored:
/// a set value is there, a `null` removes the field, other fields stay.
fn update_with_the_current_version_is_applied(store: &dyn Store, w: &World) {
    let (va, vd) = (w.version("a"), w.version("d"));
    let batch = [
        flag(w, "a", va),
        AtomicUpdate {
            id: w.id("d"),
            version: Some(vd),
            set: vec![
                ("note_s".into(), Value::Null),
                ("exact_signature_copycount_i".into(), json!(2)),
            ],
        },
    ];
    let outcome = w.run(store.update(&batch)).expect("the update");
    assert_eq!(outcome.applied, 2, "{outcome:?}");
    assert!(outcome.conflicts.is_empty(), "{outcome:?}");
    if w.allowed().reports_versions {
        // A new version for each, which guards the next update of the document.
        let mut versions = outcome.versions.clone();
        versions.sort();
        assert_eq!(versions.len(), 2, "{outcome:?}");
        assert_eq!(versions[0].0, w.id("a"));
        assert_eq!(versions[1].0, w.id("d"));
        assert_ne!(versions[0].1, va);
        assert_ne!(versions[1].1, vd);
        assert_eq!(versions[0].1, w.version("a"), "the version Solr holds now");
    } else {
        assert!(outcome.versions.is_empty(), "{outcome:?}");
    }
    w.run(store.commit(CommitMode::Hard)).expect("the commit");
    let stored = w.stored();
    assert_eq!(stored["a"][FLAG], json!(true), "{:?}", w.kind());
    assert_eq!(stored["a"]["sku"], corpus_doc("a")["sku"]);
    assert!(!stored["d"].contains_key("note_s"), "{:?}", stored["d"]);
    assert_eq!(stored["d"]["exact_signature_copycount_i"], json!(2));
    assert_eq!(stored["d"]["host_s"], json!("y.example"));
    for untouched in ["b", "c", "e", "f"] {
        assert!(!stored[untouched].contains_key(FLAG), "{untouched}");
    }
    assert_eq!(stored.len(), 6);
}

/// A stale version is a conflict in the outcome, not an error, and the rest of the batch is
/// applied (a standalone core stops a batch at a conflict; the store sends the rest again). The
/// file store checks no version: the stale one travels with its update in the output.
fn update_with_a_stale_version_is_a_conflict(store: &dyn Store, w: &World) {
    let stale = w.version("b") - 1;
    let batch = [
        flag(w, "a", w.version("a")),
        flag(w, "b", stale),
        flag(w, "d", w.version("d")),
    ];
    let outcome = w.run(store.update(&batch)).expect("a conflict is no error");
    w.run(store.commit(CommitMode::Hard)).unwrap();
    let stored = w.stored();
    assert_eq!(stored["a"][FLAG], json!(true));
    assert_eq!(stored["d"][FLAG], json!(true));
    if w.allowed().guards_versions {
        assert_eq!(outcome.applied, 2, "{outcome:?}");
        assert_eq!(outcome.conflicts, [w.id("b")], "{outcome:?}");
        assert!(!stored["b"].contains_key(FLAG), "{:?}", stored["b"]);
    } else {
        assert_eq!(outcome.applied, 3, "{outcome:?}");
        assert!(outcome.conflicts.is_empty(), "{outcome:?}");
        let line = w
            .output_lines()
            .into_iter()
            .find(|l| l["id"] == json!(w.id("b")))
            .expect("b's update in the output");
        assert_eq!(
            line,
            json!({"id": w.id("b"), "_version_": stale, FLAG: {"set": true}})
        );
    }
}

/// An update of a document that is not there (deleted since it was read, or never indexed) is a
/// conflict in Solr, not an error, and does not bring it back; the file store, whose input cannot
/// lose a document under it, refuses an id its input never held.
fn update_of_a_document_that_is_gone(store: &dyn Store, w: &World) {
    let never = flag(w, "never-indexed", 1_800_000_000_000_000_000);
    if w.allowed().missing_is_conflict {
        let vc = w.version("c");
        w.delete(&["c"]);
        let batch = [flag(w, "c", vc), never, flag(w, "e", w.version("e"))];
        let outcome = w.run(store.update(&batch)).expect("conflicts are no error");
        let mut conflicts = outcome.conflicts.clone();
        conflicts.sort();
        assert_eq!(conflicts, [w.id("c"), w.id("never-indexed")], "{outcome:?}");
        assert_eq!(outcome.applied, 1, "{outcome:?}");
        w.run(store.commit(CommitMode::Hard)).unwrap();
        let stored = w.stored();
        assert!(
            !stored.contains_key("c"),
            "c came back: {:?}",
            stored.get("c")
        );
        assert!(!stored.contains_key("never-indexed"));
        assert_eq!(stored["e"][FLAG], json!(true));
        assert_eq!(stored.len(), 5);
    } else {
        let err = w
            .run(store.update(&[never]))
            .expect_err("an id the input never held");
        assert_eq!(err.kind(), StoreErrorKind::Unsupported, "{err}");
        assert!(err.to_string().contains("never-indexed"), "{err}");
    }
}

/// After a commit the store's own reads see its updates (Solr), or its output holds them and its
/// reads still give its input (the file store). Nothing is in the file store's output before it.
fn commit_makes_updates_visible(store: &dyn Store, w: &World) {
    w.run(store.update(&[flag(w, "f", w.version("f"))]))
        .unwrap();
    if !w.allowed().reads_see_own_writes {
        assert!(w.output_lines().is_empty(), "written before the commit");
    }
    w.run(store.commit(CommitMode::Hard)).unwrap();
    let read = w
        .run(store.get(&[w.id("f")], &["id".to_owned(), FLAG.to_owned()]))
        .unwrap();
    let seen = if w.allowed().reads_see_own_writes {
        json!([{"id": w.id("f"), FLAG: true}])
    } else {
        json!([{"id": w.id("f")}])
    };
    assert_eq!(Value::from(read), seen, "{:?}: get", w.kind());
    let query = ReadQuery {
        filter: w.scope(),
        fields: vec!["id".to_owned(), FLAG.to_owned()],
        rows: 100,
    };
    let page = w.run(store.read_page(&query, None)).unwrap();
    let flagged = page.docs.iter().filter(|d| d.contains_key(FLAG)).count();
    assert_eq!(
        flagged,
        usize::from(w.allowed().reads_see_own_writes),
        "{:?}: read_page",
        w.kind()
    );
    assert_eq!(w.stored()["f"][FLAG], json!(true), "{:?}", w.kind());
}

/// `change_mark` stays while nothing changes, and changes when a crawler re-indexes a page; after
/// the store's own committed update, Solr's changes too, while the file store's follows its input.
fn change_mark_changes_after_a_write(store: &dyn Store, w: &World) {
    let scope = w.scope();
    let first = w.run(store.change_mark(&scope)).expect("a mark");
    assert_eq!(w.run(store.change_mark(&scope)).unwrap(), first);
    let mut page = corpus_doc("b");
    page.insert(
        "text_t".into(),
        json!("The page b of x.example, re-crawled with a longer text."),
    );
    w.load(&[Value::Object(page)]);
    let second = w.run(store.change_mark(&scope)).unwrap();
    assert_ne!(second, first, "{:?}: a re-indexed page", w.kind());
    assert_eq!(w.run(store.change_mark(&scope)).unwrap(), second);
    w.run(store.update(&[flag(w, "a", w.version("a"))]))
        .unwrap();
    w.run(store.commit(CommitMode::Hard)).unwrap();
    let third = w.run(store.change_mark(&scope)).unwrap();
    assert_eq!(
        third != second,
        w.allowed().mark_follows_own_writes,
        "{:?}: the store's own update ({second} then {third})",
        w.kind()
    );
}

store_test!(update_with_the_current_version_is_applied);
store_test!(update_with_a_stale_version_is_a_conflict);
store_test!(update_of_a_document_that_is_gone);
store_test!(commit_makes_updates_visible);
store_test!(change_mark_changes_after_a_write);
