//! Signatures against ground truth produced by Java, and properties that must hold for any text.

use proptest::prelude::*;
use solr_dedup::signature::{lookup3ycs64, lookup3ycs64_chained, ProfileParams, Scheme, Signer};

#[derive(serde::Deserialize)]
struct JavaVector {
    text: String,
    q: f32,
    m: usize,
    /// The `yacy` profile string.
    nt: String,
    /// `fuzzy_signature_text_t`.
    ev: String,
    /// `fuzzy_signature_l`.
    l: i64,
}

/// 460 random texts (mixed scripts, punctuation, surrogates) signed by a Java run with the real
/// `java.util.HashMap` and Solr's hashing; copied from `shared/vectors/`.
#[test]
fn every_java_fuzzy_vector_matches() {
    let text = include_str!("fixtures/yacy-fuzzy-java.jsonl");
    let mut checked = 0;
    for (n, line) in text.lines().enumerate() {
        let v: JavaVector =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("line {}: {e}", n + 1));
        let signer = Signer {
            scheme: Scheme::Yacy,
            params: ProfileParams {
                min_token_len: v.m,
                quant_rate: v.q,
            },
        };
        let p = signer.profile(&v.text);
        assert_eq!(p.profile_string(), v.nt, "line {}: profile", n + 1);
        assert_eq!(p.text_t(), v.ev, "line {}: text_t", n + 1);
        assert_eq!(p.signature(), v.l, "line {}: signature", n + 1);
        checked += 1;
    }
    assert_eq!(checked, 460);
}

fn params(min_token_len: usize) -> ProfileParams {
    ProfileParams {
        min_token_len,
        quant_rate: 0.5,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn nothing_panics_on_any_unicode(text in "\\PC*", m in 0usize..6, q in 0.0f32..1.5) {
        for scheme in [Scheme::Yacy, Scheme::Md5] {
            let signer = Signer { scheme, params: ProfileParams { min_token_len: m, quant_rate: q } };
            let _ = signer.exact(&text);
            let p = signer.profile(&text);
            let _ = (p.signature(), p.text_t());
            let _ = signer.title(&[text.as_str()]);
            let _ = signer.description(&[text.as_str(), text.as_str()]);
        }
    }

    #[test]
    fn chaining_one_string_equals_the_plain_hash(text in any::<String>()) {
        prop_assert_eq!(lookup3ycs64_chained([text.as_str()]), lookup3ycs64(&text, 0));
    }

    #[test]
    fn the_profile_only_holds_tokens_longer_than_min(text in any::<String>(), m in 0usize..8) {
        for scheme in [Scheme::Yacy, Scheme::Md5] {
            let p = Signer { scheme, params: params(m) }.profile(&text);
            for t in p.tokens() {
                prop_assert!(t.token.encode_utf16().count() > m, "token {:?} with min {}", t.token, m);
            }
        }
    }

    #[test]
    fn lower_casing_ascii_keeps_the_fuzzy_signature(text in "[ -~\\n\\t]{0,400}") {
        for scheme in [Scheme::Yacy, Scheme::Md5] {
            let signer = Signer::new(scheme);
            let lower = text.to_ascii_lowercase();
            prop_assert_eq!(signer.profile(&text).signature(), signer.profile(&lower).signature());
        }
    }

    #[test]
    fn lower_casing_ascii_words_keeps_the_fuzzy_signature(words in proptest::collection::vec("[A-Za-z]{1,9}", 0..200)) {
        // Word lists with repeats make the profiles non-trivial, which random printable text rarely does.
        let text = words.join(" ");
        let signer = Signer::new(Scheme::Yacy);
        prop_assert_eq!(signer.profile(&text).signature(), signer.profile(&text.to_ascii_lowercase()).signature());
    }
}
