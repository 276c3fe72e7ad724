//! Hand-worked expectations. The other scenarios compare the Solr store with the file store's `--full`
//! run, so a bug that both stores share (the engine is the same) would pass them. Here 15 small
//! documents were designed so that every dimension has groups and decisions to make, and the flags and
//! counts every document must get were worked out by hand from `spec/postprocessing.md` (groups, the
//! one preference order, exclusions). Nothing below computes an expectation with project code.
//!
//! The preference order is YaCy's (`--compat yacy`: these expectations are YaCy's semantics; the
//! canonical order is worked by hand in `tests/engine.rs`): https, then http, then any other scheme, then no URL; then a
//! `www.` host; then the shorter normalised URL; then the smaller normalised URL; then the smaller id.
//! Normalised: scheme and host lower-cased, default port and fragment dropped.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

use super::harness::{solr_test, Target};

/// The bakery page, served at four URL variants.
const BAKERY: &str = "Our bakery on Mill Street bakes sourdough bread every morning. \
                      Sourdough loaves, rye loaves and pastries are sold until noon.";
/// The allotment minutes, copied word for word by a feed and a blog.
const MINUTES: &str =
    "Minutes of the allotment society: the water tank will be repaired in April, \
                       and members vote on the new fence in May.";
/// The garden tips, and a near-double of them: other case, other punctuation, and one word that
/// occurs once replaced. Profile of both (`yacy`, min_token_len 3, quant_rate 0.5): tokens longer
/// than 3 units are tomatoes 3, water 2, and seven that occur once; max 3, quant round(1.5) = 2,
/// so only tomatoes (3/2*2 = 2) and water (2) stay: `(tomatoes-2) (water-2)` for both.
const TIPS: &str = "Water the tomatoes in the morning. Tomatoes need sun, water and patience; \
                    prune the tomatoes every week.";
const TIPS_NEAR: &str =
    "WATER the tomatoes in the morning! Tomatoes need sun - water and patience. \
                         Prune the tomatoes every Sunday.";
/// No token longer than 3 units: a text, but an empty profile.
const SHORT: &str = "Go to it.";
/// The lone page.
const LIBRARY: &str = "The library opens at nine on weekdays and at ten on Saturdays; closed on \
                       Sundays and public holidays.";

/// The documents, as a crawler would send them.
fn documents() -> Vec<Value> {
    vec![
        // The bakery page at http/https x bare/www.
        json!({"id": "a1", "sku": "http://example.com/about", "host_s": "example.com",
               "title": ["About the bakery"], "description_txt": ["Sourdough since 1952"],
               "text_t": BAKERY}),
        json!({"id": "a2", "sku": "https://example.com/about", "host_s": "example.com",
               "title": ["About the bakery"], "description_txt": ["Sourdough since 1952"],
               "text_t": BAKERY}),
        // Its title's first value is the same (only the first one counts); its description has a
        // second value, so its chained signature differs.
        json!({"id": "a3", "sku": "http://www.example.com/about", "host_s": "www.example.com",
               "title": ["About the bakery", "Mill Street"],
               "description_txt": ["Sourdough since 1952", "Open daily"], "text_t": BAKERY}),
        json!({"id": "a4", "sku": "https://www.example.com/about", "host_s": "www.example.com",
               "title": ["About the bakery"], "description_txt": ["Sourdough since 1952"],
               "text_t": BAKERY}),
        // The minutes: a feed whose URL is upper-case (it normalises to
        // https://feed.example.org/post/42), and the blog's page indexed twice, once with a fragment.
        json!({"id": "e1", "sku": "HTTPS://Feed.Example.ORG/post/42", "host_s": "feed.example.org",
               "title": ["Allotment news"], "description_txt": ["Minutes of the May meeting"],
               "text_t": MINUTES}),
        json!({"id": "e2", "sku": "https://blog.example.org/post/42#comments",
               "host_s": "blog.example.org", "title": ["Allotment news"],
               "description_txt": ["Minutes of the May meeting"], "text_t": MINUTES}),
        // Title differs in case; description split in two values whose concatenation is e1's
        // (chaining is not concatenation, so it is no double).
        json!({"id": "e3", "sku": "https://blog.example.org/post/42", "host_s": "blog.example.org",
               "title": ["Allotment News"], "description_txt": ["Minutes of the ", "May meeting"],
               "text_t": MINUTES}),
        // The garden tips: an exact pair (f1, f2; f2 has no title) and a fuzzy-only near-double
        // (f3, no description).
        json!({"id": "f1", "sku": "http://www.garden.example/tips", "host_s": "www.garden.example",
               "title": ["Garden tips"], "description_txt": ["Tips for a small garden"],
               "text_t": TIPS}),
        json!({"id": "f2", "sku": "https://garden.example/tips?from=feed",
               "host_s": "garden.example", "description_txt": ["Tips for a small garden"],
               "text_t": TIPS}),
        json!({"id": "f3", "sku": "https://garden.example/tips", "host_s": "garden.example",
               "title": ["Garden tips"], "text_t": TIPS_NEAR}),
        // A text without a profile, twice: s1 has no URL (and no description), s2 an ftp URL.
        json!({"id": "s1", "title": ["Readme"], "text_t": SHORT}),
        json!({"id": "s2", "sku": "ftp://files.example.org/readme.txt", "host_s": "files.example.org",
               "title": ["Readme"], "description_txt": ["Plain text file"], "text_t": SHORT}),
        // No text: an empty text_t, and none at all (n2 has no title either). Both would have the
        // signatures of "" and must not be grouped by them.
        json!({"id": "n1", "sku": "https://www.bakery.example/", "host_s": "www.bakery.example",
               "title": ["About the bakery"], "description_txt": ["Sourdough since 1952"],
               "text_t": ""}),
        json!({"id": "n2", "sku": "http://example.com/menu", "host_s": "example.com",
               "description_txt": ["Sourdough since 1952", "Open daily"]}),
        // Alone in every dimension.
        json!({"id": "l1", "sku": "https://www.library.example.org/hours",
               "host_s": "www.library.example.org", "title": ["Library opening hours"],
               "description_txt": ["Open Monday to Saturday"], "text_t": LIBRARY}),
    ]
}

const T: bool = true;
const F: bool = false;

/// One document's expected flags and counts.
struct Want {
    id: &'static str,
    exact: (bool, i64),
    fuzzy: (bool, i64),
    title: bool,
    description: bool,
    www: bool,
    http: bool,
}

const fn w(
    id: &'static str,
    exact: (bool, i64),
    fuzzy: (bool, i64),
    [title, description, www, http]: [bool; 4],
) -> Want {
    Want {
        id,
        exact,
        fuzzy,
        title,
        description,
        www,
        http,
    }
}

// The groups, worked out by hand, with the reason the representative wins. Normalised URL lengths:
// a1 http://example.com/about 24, a2 https://example.com/about 25, a3 http://www.example.com/about 28,
// a4 https://www.example.com/about 29, e1 https://feed.example.org/post/42 32,
// e2 = e3 https://blog.example.org/post/42 32, f1 http://www.garden.example/tips 30,
// f2 https://garden.example/tips?from=feed 37, f3 https://garden.example/tips 27,
// n1 https://www.bakery.example/ 27, n2 http://example.com/menu 23.
//
// exact (count = group size):
//   {a1,a2,a3,a4}: a4 — https and www; the longest URL and the largest id, so neither "shorter
//                  URL" nor "smaller id" may come first.
//   {e1,e2,e3}:    e2 — all https, bare, 32 long; blog < feed (e1's raw upper-case URL would sort
//                  first); e2 and e3 normalise to the same URL, so the smaller id wins, although
//                  e2's raw sku is the longer one.
//   {f1,f2}:       f2 — https beats http even against a www host and a shorter URL.
//   {s1,s2}:       s2 — another scheme (ftp) beats no URL at all, although s1's id is smaller.
//   excluded (empty text, so true/1 although their signatures are equal): n1, n2.  Alone: f3, l1.
// fuzzy:
//   {a1..a4}: a4, {e1,e2,e3}: e2, as above.
//   {f1,f2,f3}:    f3 — https like f2, bare like f2, and shorter (27 < 37).
//   excluded (empty profile): s1, s2, n1, n2.  Alone: l1.
// title (first value only):
//   {a1,a2,a3,a4,n1} "About the bakery": n1 — https, www like a4, and shorter (27 < 29): a page
//                  without text still takes part in the title dimension and wins it.
//   {e1,e2} "Allotment news": e2 — same length, blog < feed. e3's "Allotment News" is alone.
//   {f1,f3} "Garden tips": f3 — https beats http (and www).
//   {s1,s2} "Readme": s2 — ftp beats no URL.
//   excluded (no title): f2, n2.  Alone: e3, l1.
// description (all values, chained):
//   {a1,a2,a4,n1} ["Sourdough since 1952"]: n1 — https, www, shorter than a4.
//   {a3,n2} ["Sourdough since 1952","Open daily"]: a3 — both http; www beats the shorter bare URL.
//   {e1,e2} ["Minutes of the May meeting"]: e2 — blog < feed. e3's two values are alone.
//   {f1,f2} ["Tips for a small garden"]: f2 — https.
//   excluded (no description): f3, s1.  Alone: e3, s2, l1.
// www (URL without a leading www.):
//   {a1,a3} http://example.com/about: a3 — www, although longer.
//   {a2,a4} https://example.com/about: a4 — www, although longer.
//   {e2,e3} https://blog.example.org/post/42: e2 — the same normalised URL, smaller id.
//   excluded (no URL): s1.  Alone: the rest (f1's key http://garden.example/tips is not f3's
//   https://garden.example/tips: the scheme stays in the www key).
// http (URL without its scheme):
//   {a1,a2} //example.com/about: a2 — https.   {a3,a4} //www.example.com/about: a4 — https.
//   {e2,e3} //blog.example.org/post/42: e2 — same normalised URL, smaller id.
//   excluded: s1 (no URL), s2 (ftp).  Alone: the rest.
//
// So `exact_signature_unique_b AND http_unique_b AND www_unique_b` keeps only a4 of the bakery page.

/// Every worker flag and count of every document.
const TABLE: [Want; 15] = [
    //   id    exact   fuzzy   [title, description, www, http]
    w("a1", (F, 4), (F, 4), [F, F, F, F]),
    w("a2", (F, 4), (F, 4), [F, F, F, T]),
    w("a3", (F, 4), (F, 4), [F, T, T, F]),
    w("a4", (T, 4), (T, 4), [F, F, T, T]),
    w("e1", (F, 3), (F, 3), [F, F, T, T]),
    w("e2", (T, 3), (T, 3), [T, T, T, T]),
    w("e3", (F, 3), (F, 3), [T, T, F, F]),
    w("f1", (F, 2), (F, 3), [F, F, T, T]),
    w("f2", (T, 2), (F, 3), [T, T, T, T]),
    w("f3", (T, 1), (T, 3), [T, T, T, T]),
    w("s1", (F, 2), (T, 1), [F, T, T, T]),
    w("s2", (T, 2), (T, 1), [T, T, T, T]),
    w("n1", (T, 1), (T, 1), [T, T, T, T]),
    w("n2", (T, 1), (T, 1), [T, F, T, T]),
    w("l1", (T, 1), (T, 1), [T, T, T, T]),
];

/// Which documents must carry equal signatures, per signature field: each inner list is one class
/// (equal values within, different values across classes); `absent` lists the documents that must
/// not have the field. Every document is in exactly one class or in `absent`.
struct Classes {
    field: &'static str,
    classes: &'static [&'static [&'static str]],
    absent: &'static [&'static str],
}

const SIGNATURES: [Classes; 5] = [
    Classes {
        field: "exact_signature_l",
        // n1 and n2 both carry the signature of "" (but are not grouped by it).
        classes: &[
            &["a1", "a2", "a3", "a4"],
            &["e1", "e2", "e3"],
            &["f1", "f2"],
            &["f3"],
            &["s1", "s2"],
            &["n1", "n2"],
            &["l1"],
        ],
        absent: &[],
    },
    Classes {
        field: "fuzzy_signature_l",
        // The empty profile's signature is shared by the texts without a token and the empty ones.
        classes: &[
            &["a1", "a2", "a3", "a4"],
            &["e1", "e2", "e3"],
            &["f1", "f2", "f3"],
            &["s1", "s2", "n1", "n2"],
            &["l1"],
        ],
        absent: &[],
    },
    Classes {
        field: "fuzzy_signature_text_t",
        // Raw counts differ nowhere here, so the profiles with counts are equal within a fuzzy
        // group; not written when the profile is empty.
        classes: &[
            &["a1", "a2", "a3", "a4"],
            &["e1", "e2", "e3"],
            &["f1", "f2", "f3"],
            &["l1"],
        ],
        absent: &["s1", "s2", "n1", "n2"],
    },
    Classes {
        field: "title_exact_signature_l",
        classes: &[
            &["a1", "a2", "a3", "a4", "n1"],
            &["e1", "e2"],
            &["e3"],
            &["f1", "f3"],
            &["s1", "s2"],
            &["l1"],
        ],
        absent: &["f2", "n2"],
    },
    Classes {
        field: "description_exact_signature_l",
        classes: &[
            &["a1", "a2", "a4", "n1"],
            &["a3", "n2"],
            &["e1", "e2"],
            &["e3"],
            &["f1", "f2"],
            &["s2"],
            &["l1"],
        ],
        absent: &["f3", "s1"],
    },
];

/// Per dimension: groups of two or more, doubles (members that are not the representative), and
/// the documents excluded per reason, as the report must count them.
fn want_report() -> Value {
    json!({
        "exact": {"groups": 4, "doubles": 7, "excluded": {"empty_text": 2}},
        "fuzzy": {"groups": 3, "doubles": 7, "excluded": {"empty_profile": 4}},
        "title": {"groups": 4, "doubles": 7, "excluded": {"no_title": 2}},
        "description": {"groups": 4, "doubles": 6, "excluded": {"no_description": 2}},
        "www": {"groups": 3, "doubles": 3, "excluded": {"no_url": 1}},
        "http": {"groups": 3, "doubles": 3, "excluded": {"no_url": 1, "not_http": 1}},
    })
}

/// The differences between the stored flags and counts and the table, one line each.
fn flag_mismatches(docs: &BTreeMap<String, Map<String, Value>>) -> Vec<String> {
    let mut out = Vec::new();
    for want in &TABLE {
        let doc = &docs[want.id];
        let expected = [
            ("exact_signature_unique_b", json!(want.exact.0)),
            ("exact_signature_copycount_i", json!(want.exact.1)),
            ("fuzzy_signature_unique_b", json!(want.fuzzy.0)),
            ("fuzzy_signature_copycount_i", json!(want.fuzzy.1)),
            ("title_unique_b", json!(want.title)),
            ("description_unique_b", json!(want.description)),
            ("www_unique_b", json!(want.www)),
            ("http_unique_b", json!(want.http)),
        ];
        for (field, value) in expected {
            let got = doc.get(field).unwrap_or(&Value::Null);
            if *got != value {
                out.push(format!("{}: {field} is {got}, worked out {value}", want.id));
            }
        }
    }
    out
}

/// The differences between the stored signatures and the classes, one line each.
fn signature_mismatches(docs: &BTreeMap<String, Map<String, Value>>) -> Vec<String> {
    let mut out = Vec::new();
    for c in &SIGNATURES {
        let covered: BTreeSet<&str> = c
            .classes
            .iter()
            .flat_map(|class| class.iter().copied())
            .chain(c.absent.iter().copied())
            .collect();
        assert_eq!(
            covered,
            TABLE.iter().map(|w| w.id).collect::<BTreeSet<_>>(),
            "{}: the classes cover every document once",
            c.field
        );
        let value = |id: &str| docs[id].get(c.field).filter(|v| !v.is_null()).cloned();
        for id in c.absent {
            if let Some(v) = value(id) {
                out.push(format!("{id}: {} is {v}, worked out absent", c.field));
            }
        }
        let mut seen: Vec<(Value, &str)> = Vec::new();
        for class in c.classes {
            let first = class[0];
            let Some(v) = value(first) else {
                out.push(format!("{first}: {} is missing", c.field));
                continue;
            };
            for id in &class[1..] {
                if value(id).as_ref() != Some(&v) {
                    out.push(format!(
                        "{id}: {} is {:?}, worked out equal to {first}'s {v}",
                        c.field,
                        value(id)
                    ));
                }
            }
            if let Some((_, other)) = seen.iter().find(|(s, _)| *s == v) {
                out.push(format!(
                    "{first}: {} equals {other}'s, worked out different",
                    c.field
                ));
            }
            seen.push((v, first));
        }
    }
    out
}

solr_test!(
    a_hand_worked_index_gets_the_flags_and_counts_worked_out_by_hand,
    |t: &Target| {
        let dir = tempfile::tempdir().unwrap();
        t.load(&documents());
        let first = t.run_ok(&["run", "--compat", "yacy"], dir.path());
        assert_eq!(first["documents"]["read"], 15, "{first}");

        let docs = t.docs();
        assert_eq!(
            docs.keys().map(String::as_str).collect::<BTreeSet<_>>(),
            TABLE.iter().map(|w| w.id).collect::<BTreeSet<_>>(),
            "the same documents"
        );
        let flags = flag_mismatches(&docs);
        assert!(
            flags.is_empty(),
            "flags and counts differ from the hand-worked table:\n{}",
            flags.join("\n")
        );
        let sigs = signature_mismatches(&docs);
        assert!(
            sigs.is_empty(),
            "signatures differ from the hand-worked classes:\n{}",
            sigs.join("\n")
        );
        for (name, want) in want_report().as_object().unwrap() {
            let got = &first["dimensions"][name];
            for key in ["groups", "doubles", "excluded"] {
                assert_eq!(got[key], want[key], "report, {name}.{key}: {first}");
            }
        }

        let second = t.run_ok(&["run", "--compat", "yacy"], dir.path());
        assert_eq!(second["documents"]["written"], 0, "{second}");
        eprintln!(
            "checked {} flags and counts, {} signature fields and the report by hand",
            TABLE.len() * 8,
            TABLE.len() * SIGNATURES.len()
        );
    }
);
