//! Issue 27 against Solr: the profile's word count is stored in `fuzzy_signature_words_i` with the
//! fuzzy signature; documents signed without it (a core without the field, an older release) get it
//! once, from their text; after that a settled rerun reads no text. A core without the field stops a
//! run that needs it, and `--fuzzy-min-words 0` runs without it. Expectations worked out by hand from
//! the profile vectors of `spec/signatures.md` (as in `tests/fuzzy_words.rs`).

use serde_json::{json, Value};

use super::harness::{assert_fresh, assert_settled, solr_test, Target};
// The texts of `tests/fuzzy_words.rs`: `WEAK_A` and `WEAK_B` share the one-word profile
// `(three-1)`, `STRONG_A` and `STRONG_B` the four-word `(dolor-3) (amet-3) (lorem-3) (ipsum-3)`.
use crate::fuzzy_words::{STRONG_A, STRONG_B, WEAK_A, WEAK_B};

/// A field no rule of the test schemas covers: a core without a place for the word count.
const NOWHERE: &str = "fuzzy_signature_words_i=fuzzy_words_count";

fn documents() -> Vec<Value> {
    [
        ("w1", "https://a.example/1", WEAK_A),
        ("w2", "https://a.example/2", WEAK_B),
        ("s1", "https://b.example/1", STRONG_A),
        ("s2", "https://b.example/2", STRONG_B),
    ]
    .into_iter()
    .map(|(id, url, text)| json!({"id": id, "sku": url, "text_t": text}))
    .collect()
}

/// Per short id: fuzzy flag, fuzzy count, word count.
fn fuzzy(t: &Target) -> Vec<(String, Value, Value, Value)> {
    t.docs()
        .into_iter()
        .map(|(id, d)| {
            let get = |f: &str| d.get(f).cloned().unwrap_or(Value::Null);
            (
                id,
                get("fuzzy_signature_unique_b"),
                get("fuzzy_signature_copycount_i"),
                get("fuzzy_signature_words_i"),
            )
        })
        .collect()
}

fn row(id: &str, unique: bool, count: u32, words: Option<u32>) -> (String, Value, Value, Value) {
    (id.to_owned(), json!(unique), json!(count), json!(words))
}

solr_test!(
    fuzzy_word_counts_are_written_filled_in_once_and_then_read_light,
    |t: &Target| {
        let dir = tempfile::tempdir().unwrap();
        t.load(&documents());

        // A core without the field: the default minimum cannot be honoured, and the run says what
        // to do before it writes anything.
        let out = t.run(&["run", "--field", NOWHERE]);
        assert_eq!(out.status.code(), Some(2));
        let err = crate::support::cmd::error_line(&out);
        assert!(
            err.contains("missing output field fuzzy_words_count")
                && err.contains("--fuzzy-min-words 0 (or --compat yacy)"),
            "{err}"
        );
        assert!(
            t.docs()
                .values()
                .all(|d| !d.contains_key("fuzzy_signature_l")),
            "nothing written"
        );

        // YaCy's semantics run without it: w1 and w2 group, no count is stored.
        let first = t.run_ok(&["run", "--compat", "yacy", "--field", NOWHERE], dir.path());
        assert_eq!(first["documents"]["signed"], 4, "{first}");
        assert_eq!(
            fuzzy(t),
            [
                row("s1", true, 2, None),
                row("s2", false, 2, None),
                row("w1", true, 2, None),
                row("w2", false, 2, None),
            ]
        );

        // The default minimum on that index: each text is read once to count its profile's words;
        // the counts are written with the flags, and the one-word pair falls apart.
        // Another minimum and another order are a settings change: the switch says so.
        let second = t.run_ok(&["run", "--reconfigure"], dir.path());
        assert_eq!(second["work"]["text_docs"], 4, "{second}");
        assert_eq!(second["dimensions"]["fuzzy"]["excluded"]["weak_profile"], 2);
        assert_eq!(second["dimensions"]["fuzzy"]["groups"], 1);
        assert_eq!(
            fuzzy(t),
            [
                row("s1", true, 2, Some(4)),
                row("s2", false, 2, Some(4)),
                row("w1", true, 1, Some(1)),
                row("w2", true, 1, Some(1)),
            ]
        );
        for (id, d) in t.docs() {
            assert_fresh(&id, &d);
        }

        // Settled: a rerun reads the light fields only, no text, and writes nothing; check agrees.
        let third = t.run_ok(&["run"], dir.path());
        assert_eq!(third["work"]["text_docs"], 0, "{third}");
        assert_eq!(third["work"]["sample_docs"], 0, "{third}");
        assert_eq!(third["documents"]["written"], 0, "{third}");
        let checked = t.run_ok(&["check"], dir.path());
        assert_eq!(checked["work"]["text_docs"], 0, "{checked}");
        // Every worker field as a fresh full run on the file store leaves it (the count included).
        let n = assert_settled(t, dir.path());

        // Back to YaCy's semantics: the stored counts are not needed, and no text is read.
        let back = t.run_ok(&["run", "--compat", "yacy", "--reconfigure"], dir.path());
        assert_eq!(back["work"]["text_docs"], 0, "{back}");
        assert_eq!(back["dimensions"]["fuzzy"]["flips"], 1, "{back}");
        assert_eq!(fuzzy(t)[3], row("w2", false, 2, Some(1)));
        eprintln!("checked {} values", n + 16);
    }
);
