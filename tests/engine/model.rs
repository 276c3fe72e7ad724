//! Incremental == full: a property test over adds, re-indexes and deletes, and the near dimension.

use super::*;

pub(crate) fn outputs(docs: &Docs) -> BTreeMap<String, Vec<(String, Value)>> {
    docs.iter()
        .map(|(id, d)| {
            let mut fields: Vec<(String, Value)> = d
                .as_object()
                .unwrap()
                .iter()
                .filter(|(k, _)| {
                    k.ends_with("_unique_b")
                        || k.ends_with("_copycount_i")
                        || k.ends_with("signature_l")
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            fields.sort_by(|a, b| a.0.cmp(&b.0));
            (id.clone(), fields)
        })
        .collect()
}

#[derive(Debug, Clone)]
enum Op {
    Add(u8, u8),
    Replace(u8, u8, u8),
    Delete(u8),
    Run,
    /// A run killed after `k` of its updates reached the index.
    Interrupted(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u8..6, 0u8..40).prop_map(|(t, u)| Op::Add(t, u)),
        2 => (any::<u8>(), 0u8..6, 0u8..40).prop_map(|(s, t, u)| Op::Replace(s, t, u)),
        2 => any::<u8>().prop_map(Op::Delete),
        2 => Just(Op::Run),
        1 => any::<u8>().prop_map(Op::Interrupted),
    ]
}

fn make_doc(id: &str, text: u8, url: u8, version: i64) -> Value {
    let texts = [
        "alpha beta gamma delta",
        "alpha beta gamma delta",
        "Alpha, beta; gamma delta!",
        "",
        "zeta eta theta iota",
        "one two",
    ];
    let hosts = [
        "http://a.org",
        "https://a.org",
        "http://www.a.org",
        "https://www.a.org",
        "https://WWW.A.org",
    ];
    // What the canonical order ranks by: clutter a searcher should not see.
    let clutter = ["", "?sid=9", "?utm_source=feed", "/index.html"];
    let titles = [
        json!(["Home"]),
        json!(["Home"]),
        json!(["About"]),
        json!([]),
    ];
    let mut d = json!({
        "id": id,
        "sku": format!(
            "{}/{}{}",
            hosts[(url % 5) as usize],
            (url / 5) % 2,
            clutter[(url / 10) as usize % 4]
        ),
        "text_t": texts[text as usize % texts.len()],
        "title": titles[(text as usize + url as usize) % titles.len()],
        "_version_": version,
    });
    if url.is_multiple_of(3) {
        d["description_txt"] = json!(["same description"]);
    }
    d
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random adds, replaces and deletes, each followed (sometimes) by an incremental run: the end
    /// state equals one `--full` run on the final documents, and a run interrupted before its output
    /// was committed changes nothing.
    #[test]
    fn incremental_runs_end_where_a_full_run_does(
        ops in proptest::collection::vec(op(), 1..25),
        order in 0u8..3,
    ) {
        let mut crawl = Crawl::new();
        // YaCy's order, canonical first without rules, and with rules; kept between runs, as
        // `run` and serve keep it against Solr.
        let cfg = kept(match order {
            0 => EngineConfig {
                preference: Preference { order: Order::Yacy, ..Preference::default() },
                ..EngineConfig::default()
            },
            1 => EngineConfig::default(),
            _ => EngineConfig {
                url_rules: Some(Arc::new(a_org_rules())),
                ..EngineConfig::default()
            },
        });
        for op in ops {
            crawl.next_change();
            match op {
                Op::Add(t, u) => crawl.add(|id, v| make_doc(id, t, u, v)),
                Op::Replace(s, t, u) => crawl.replace(s, |id, v| make_doc(id, t, u, v)),
                Op::Delete(s) => crawl.delete(s),
                Op::Interrupted(k) if !crawl.docs.is_empty() => {
                    let updates = updates_with(&crawl.input(), &cfg);
                    let k = if updates.is_empty() { 0 } else { k as usize % updates.len() };
                    for u in &updates[..k] {
                        let id = u["id"].as_str().unwrap();
                        let doc = crawl.docs.get_mut(id).unwrap().as_object_mut().unwrap();
                        for (field, op) in u.as_object().unwrap() {
                            if field == "id" || field == "_version_" {
                                continue;
                            }
                            match &op["set"] {
                                Value::Null => { doc.remove(field); }
                                v => { doc.insert(field.clone(), v.clone()); }
                            }
                        }
                    }
                }
                Op::Run if !crawl.docs.is_empty() => {
                    crawl.docs = run_with(&crawl.input(), &cfg).1;
                }
                _ => {}
            }
        }
        prop_assume!(!crawl.docs.is_empty());
        let (incremental, full) = incremental_and_full(&crawl.docs, &cfg);
        prop_assert_eq!(outputs(&incremental), outputs(&full));
        // And the incremental result is settled: nothing left to write.
        let settled: Vec<Value> = incremental.values().cloned().collect();
        prop_assert!(updates_with(&settled, &cfg).is_empty());
    }
}

/// Rules for the proptest's site: `sid` does not matter, most pages are under http and the bare
/// host.
fn a_org_rules() -> Rules {
    crate::preference::site_rules("a.org")
}

/// The near-duplicate texts of the next proptest: a chain a - b - c (b bridges a and c), a copy of
/// a in upper case, a text near nothing, and one without words.
fn near_texts() -> Vec<String> {
    let [a, b, c] = crate::support::corpus::chain("prop");
    let upper = a.to_uppercase();
    vec![
        a,
        b,
        c,
        upper,
        "quite another page about something else entirely".to_owned(),
        "--- !!!".to_owned(),
    ]
}

/// What `--full` decides, the near group ids included.
fn near_outputs(docs: &Docs) -> BTreeMap<String, Vec<(String, Value)>> {
    let mut out = outputs(docs);
    for (id, fields) in out.iter_mut() {
        fields.push((
            "near_group_s".to_owned(),
            docs[id].get("near_group_s").cloned().unwrap_or(Value::Null),
        ));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Near clusters that merge (a bridge added), split (the bridge re-indexed with other text, or
    /// deleted) and lose their representative, decided by a store that answers lookups, so that
    /// incremental runs look up only what changed: the end state equals one `--full` run (made with
    /// a budget of a few bytes, so that its near keys and signatures go through temporary files),
    /// and it is settled.
    #[test]
    fn near_clusters_looked_up_by_the_change_end_where_a_full_run_does(
        ops in proptest::collection::vec(op(), 1..25)
    ) {
        let texts = near_texts();
        let mut crawl = Crawl::new();
        let cfg = kept(EngineConfig::default());
        let doc = |id: &str, t: u8, u: u8, version: i64| {
            json!({
                "id": id,
                "sku": format!("https://h{}.example/{}", u % 4, u),
                "text_t": texts[t as usize % texts.len()],
                "_version_": version,
            })
        };
        // Ten pages near nothing, so that a change stays small next to the index.
        for i in 0..10 {
            let id = format!("s{i:02}");
            crawl.docs.insert(id.clone(), json!({
                "id": id, "sku": format!("https://s.example/{i}"),
                "text_t": format!("standalone page number {i} with words of its own w{i}x w{i}y"),
                "_version_": crawl.version(),
            }));
        }
        for op in ops {
            crawl.next_change();
            match op {
                Op::Add(t, u) => crawl.add(|id, v| doc(id, t, u, v)),
                Op::Replace(s, t, u) => crawl.replace(s, |id, v| doc(id, t, u, v)),
                Op::Delete(s) if crawl.docs.len() > 1 => crawl.delete(s),
                Op::Run | Op::Interrupted(_) => {
                    crawl.docs = run_indexed(&crawl.input(), &cfg).1;
                }
                _ => {}
            }
        }
        let docs = crawl.docs;
        let input: Vec<Value> = docs.values().cloned().collect();
        let (report, incremental) = run_indexed(&input, &cfg);
        prop_assert_eq!(report.dimensions["near"].lookup_fallbacks, Some(0));
        let fresh: Vec<Value> = docs.values().map(reindexed).collect();
        let spilled = EngineConfig { full: true, memory: 64, ..cfg.clone() };
        let (full_report, full) = run_with(&fresh, &spilled);
        prop_assert!(full_report.memory.spilled_bytes > 0);
        prop_assert_eq!(near_outputs(&incremental), near_outputs(&full));
        let settled: Vec<Value> = incremental.values().cloned().collect();
        let (again, _) = run_indexed(&settled, &cfg);
        prop_assert_eq!(again.documents.written, 0);
    }
}

/// A key that very many documents hold (1,200 copies of one boilerplate text) and one new copy: the
/// lookups would hand out every copy, past the budget (1,000 documents for a change of one), so the
/// round reads every stored key instead, says so in the report, and ends where `--full` does.
#[test]
fn a_key_held_by_very_many_documents_falls_back_to_reading_every_key() {
    let cfg = kept(EngineConfig::default());
    let boiler = "Home page of the site, nothing else here";
    let mut docs: Vec<Value> = (0..1200)
        .map(|i| {
            page(
                &format!("b{i:04}"),
                &format!("https://b{i}.example/"),
                boiler,
            )
        })
        .collect();
    docs.extend((0..10).map(|i| {
        page(
            &format!("u{i}"),
            &format!("https://u.example/{i}"),
            &format!("a page of its own, number {i}, words u{i}x u{i}y u{i}z"),
        )
    }));
    let (_, first) = run_indexed(&docs, &cfg);
    let mut stored: Vec<Value> = first.values().cloned().collect();
    stored.push(page("new", "https://a.example/", boiler));
    let (report, incremental) = run_indexed(&stored, &cfg);
    assert_eq!(report.dimensions["near"].lookup_fallbacks, Some(1));
    assert_eq!(flag(&incremental, "b0000", "near_copycount_i"), json!(1201));
    let fresh: Vec<Value> = incremental.values().map(reindexed).collect();
    let (_, full) = run_with(
        &fresh,
        &EngineConfig {
            full: true,
            ..cfg.clone()
        },
    );
    assert_eq!(near_outputs(&incremental), near_outputs(&full));
}
