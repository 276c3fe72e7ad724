//! The fuzzy signature: a text profile of quantised token counts, as YaCy (`yacy` scheme) and Solr's and
//! Nutch's `TextProfileSignature` (`md5` scheme) compute it.
//!
//! 1. Tokenise over UTF-16 units: a unit for which Java's `Character.isLetterOrDigit(char)` holds is
//!    lower-cased with `Character.toLowerCase(char)` and appended; any other unit ends the token. A
//!    character outside the BMP is two surrogate units, neither a letter, so it separates tokens.
//! 2. Keep tokens longer than `min_token_len` units, count them; `max_freq` is the largest count.
//! 3. `quant = round_half_up(max_freq × quant_rate)` in `f32`; below 2 it becomes 2 when `max_freq > 1`,
//!    else 1.
//! 4. `qcnt = cnt / quant × quant`; tokens with `qcnt < quant` are dropped.
//! 5. Stable sort, descending, by `cnt` (`yacy`) or `qcnt` (`md5`), starting from Java `HashMap`
//!    iteration order (see [`super::java_hashmap`]).
//!
//! Worked example (`yacy`, min_token_len 3, quant_rate 0.5), text
//! `Apple banana apple cherry banana apple. APPLE Banana cherry! date date date date elderberry`:
//!
//! | token      | cnt | bucket (16) | qcnt (quant 2) |
//! |------------|-----|-------------|----------------|
//! | apple      | 4   | 1           | 4              |
//! | banana     | 3   |             | 2              |
//! | cherry     | 2   |             | 2              |
//! | date       | 4   | 0           | 4              |
//! | elderberry | 1   |             | dropped        |
//!
//! `date` and `apple` tie on 4; `date` sits in bucket 0, so the profile is
//! `(date-4) (apple-4) (banana-2) (cherry-2)`.
//!
//! The character classes come from Java 17 (Unicode 13.0), generated into `java_chars.rs`;
//! characters assigned in later Unicode versions are a known limit, as is Java's treeified bucket
//! (see [`super::java_hashmap`]).

use std::hash::BuildHasherDefault;
use std::sync::OnceLock;

use rustc_hash::FxHasher;

use super::java_chars::{LETTER_OR_DIGIT, TO_LOWER};
use super::java_hashmap::{bucket, java_string_hash, table_size};
use super::{lookup3::lookup3ycs64, md5_long, Scheme};

/// The two tunables of the text profile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProfileParams {
    /// A token counts only if it is longer than this, in UTF-16 units.
    pub min_token_len: usize,
    /// The quantisation step as a fraction of the highest token count.
    pub quant_rate: f32,
}

impl ProfileParams {
    /// What each ecosystem runs with: 3 / 0.5 for YaCy, 2 / 0.01 for Solr and Nutch.
    pub fn defaults(scheme: Scheme) -> Self {
        match scheme {
            Scheme::Yacy => ProfileParams {
                min_token_len: 3,
                quant_rate: 0.5,
            },
            Scheme::Md5 => ProfileParams {
                min_token_len: 2,
                quant_rate: 0.01,
            },
        }
    }
}

/// One kept token of a profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileToken {
    /// The lower-cased token.
    pub token: String,
    /// How often it occurs in the text.
    pub count: u32,
    /// The count rounded down to a multiple of the quantisation step.
    pub qcount: u32,
}

/// The kept tokens of a text, in profile order for the scheme that made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    scheme: Scheme,
    tokens: Vec<ProfileToken>,
}

impl Profile {
    /// Computes the profile of `text`.
    pub fn new(text: &str, scheme: Scheme, params: ProfileParams) -> Self {
        let mut units = Vec::with_capacity(text.len());
        let mut spans = Vec::new();
        tokenize(text, params.min_token_len, &mut units, &mut spans);
        let tokens = build(&units, &spans, scheme, params.quant_rate);
        Profile { scheme, tokens }
    }

    /// The kept tokens, in profile order.
    pub fn tokens(&self) -> &[ProfileToken] {
        &self.tokens
    }

    /// True when no token was kept.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The string that is hashed: `(token-qcnt)` joined by spaces (`yacy`), or `token qcnt` lines (`md5`).
    pub fn profile_string(&self) -> String {
        let mut out = String::new();
        for (i, t) in self.tokens.iter().enumerate() {
            match self.scheme {
                Scheme::Yacy => {
                    if i > 0 {
                        out.push(' ');
                    }
                    out.push('(');
                    out.push_str(&t.token);
                    out.push('-');
                    push_u32(&mut out, t.qcount);
                    out.push(')');
                }
                Scheme::Md5 => {
                    if i > 0 {
                        out.push('\n');
                    }
                    out.push_str(&t.token);
                    out.push(' ');
                    push_u32(&mut out, t.qcount);
                }
            }
        }
        out
    }

    /// YaCy's `fuzzy_signature_text_t`: `(token-cnt-qcnt)` joined by spaces, in profile order.
    pub fn text_t(&self) -> String {
        let mut out = String::new();
        for (i, t) in self.tokens.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            out.push('(');
            out.push_str(&t.token);
            out.push('-');
            push_u32(&mut out, t.count);
            out.push('-');
            push_u32(&mut out, t.qcount);
            out.push(')');
        }
        out
    }

    /// `fuzzy_signature_l`: lookup3ycs64 (`yacy`) or folded MD5 (`md5`) of the profile string.
    pub fn signature(&self) -> i64 {
        let s = self.profile_string();
        match self.scheme {
            Scheme::Yacy => lookup3ycs64(&s, 0),
            Scheme::Md5 => md5_long(s.as_bytes()),
        }
    }
}

fn push_u32(out: &mut String, n: u32) {
    use std::fmt::Write;
    let _ = write!(out, "{n}");
}

/// For every BMP unit: 0 when Java says it is not a letter or digit, else its Java lower case.
fn unit_table() -> &'static [u16; 65536] {
    static TABLE: OnceLock<Box<[u16; 65536]>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = Box::new([0u16; 65536]);
        for &(lo, hi) in LETTER_OR_DIGIT {
            for u in lo..=hi {
                table[usize::from(u)] = u;
            }
        }
        for &(from, to) in TO_LOWER {
            if table[usize::from(from)] != 0 {
                table[usize::from(from)] = to;
            }
        }
        debug_assert_eq!(table[0], 0, "NUL must stay a separator");
        table
    })
}

/// Lower-cased letters and digits go to `units`; every token longer than `min_len` becomes a span.
fn tokenize(text: &str, min_len: usize, units: &mut Vec<u16>, spans: &mut Vec<(u32, u32)>) {
    let table = unit_table();
    let mut start = 0usize;
    let mut end_token = |units: &mut Vec<u16>, start: &mut usize| {
        let len = units.len() - *start;
        if len > min_len {
            spans.push((*start as u32, units.len() as u32));
        } else {
            units.truncate(*start);
        }
        *start = units.len();
    };
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            // ASCII: the table gives the same answer, this is just the short way there.
            if b.is_ascii_alphanumeric() {
                units.push(u16::from(b.to_ascii_lowercase()));
            } else if units.len() > start {
                end_token(units, &mut start);
            }
            i += 1;
            continue;
        }
        // Decode one multi-byte char; `text` is valid UTF-8, so the width follows from the lead byte.
        let width = if b >= 0xF0 {
            4
        } else if b >= 0xE0 {
            3
        } else {
            2
        };
        let c = text[i..i + width].chars().next().map_or(0, u32::from);
        i += width;
        let lower = if c <= 0xFFFF { table[c as usize] } else { 0 };
        if lower != 0 {
            units.push(lower);
        } else if units.len() > start {
            end_token(units, &mut start);
        }
    }
    if units.len() > start {
        end_token(units, &mut start);
    }
}

struct Entry {
    span: (u32, u32),
    count: u32,
}

type FxMap<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<FxHasher>>;

fn build(
    units: &[u16],
    spans: &[(u32, u32)],
    scheme: Scheme,
    quant_rate: f32,
) -> Vec<ProfileToken> {
    let mut index: FxMap<&[u16], usize> = FxMap::default();
    index.reserve(spans.len().min(4096));
    let mut entries: Vec<Entry> = Vec::new();
    for &(s, e) in spans {
        let token = &units[s as usize..e as usize];
        match index.get(token) {
            Some(&k) => entries[k].count += 1,
            None => {
                index.insert(token, entries.len());
                entries.push(Entry {
                    span: (s, e),
                    count: 1,
                });
            }
        }
    }
    let max_freq = entries.iter().map(|e| e.count).max().unwrap_or(0);
    let quant = quant_step(max_freq, quant_rate);
    let buckets = table_size(entries.len());
    // (sort key, bucket, insertion index): sorting by the triple equals Java's stable sort of the
    // HashMap's iteration order.
    let mut kept: Vec<(u32, usize, usize, u32)> = entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| {
            let qcount = e.count / quant * quant;
            if qcount < quant {
                return None;
            }
            let key = match scheme {
                Scheme::Yacy => e.count,
                Scheme::Md5 => qcount,
            };
            let token = &units[e.span.0 as usize..e.span.1 as usize];
            Some((key, bucket(java_string_hash(token), buckets), i, qcount))
        })
        .collect();
    kept.sort_unstable_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
    kept.into_iter()
        .map(|(_, _, i, qcount)| {
            let e = &entries[i];
            ProfileToken {
                token: String::from_utf16(&units[e.span.0 as usize..e.span.1 as usize])
                    .expect("tokens hold no surrogates"),
                count: e.count,
                qcount,
            }
        })
        .collect()
}

/// Java: `int quant = Math.round(maxFreq * quantRate)`, then the floor of 2 (or 1).
fn quant_step(max_freq: u32, quant_rate: f32) -> u32 {
    let x = max_freq as f32 * quant_rate;
    // Math.round(float) is round-half-up; `x - floor(x)` is exact in f32, so this is too.
    let floor = x.floor();
    let rounded = if x - floor >= 0.5 { floor + 1.0 } else { floor };
    // Java's float-to-int cast saturates (NaN gives 0), as does Rust's `as`.
    let quant = rounded as i32;
    if quant < 2 {
        if max_freq > 1 {
            2
        } else {
            1
        }
    } else {
        quant as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yacy(text: &str) -> Profile {
        Profile::new(text, Scheme::Yacy, ProfileParams::defaults(Scheme::Yacy))
    }

    fn md5(text: &str) -> Profile {
        Profile::new(text, Scheme::Md5, ProfileParams::defaults(Scheme::Md5))
    }

    const LOREM: &str = "Lorem ipsum dolor sit amet, lorem ipsum dolor sit amet. Lorem ipsum! Dolor dolor dolor, amet amet.";
    const APPLE: &str = "Apple banana apple cherry banana apple. APPLE Banana cherry! date date date date elderberry";
    const CAT: &str = "The cat sat on the mat. The cat ate the rat. The dog chased the cat; the cat ran away from the dog.";

    #[test]
    fn yacy_vectors_from_the_spec() {
        let cases: &[(&str, &str, i64)] = &[
            (
                LOREM,
                "(dolor-3) (amet-3) (lorem-3) (ipsum-3)",
                895551812756359877,
            ),
            (
                APPLE,
                "(date-4) (apple-4) (banana-2) (cherry-2)",
                4761585746979352620,
            ),
            (
                "Straße STRASSE straße Straße Ärger ärger ÄRGER über über",
                "(straße-2) (ärger-2) (über-2)",
                5061506097942851391,
            ),
            ("one two three", "(three-1)", 2158197660035733832),
            ("", "", -2401053093171183889),
        ];
        for (text, profile, sig) in cases {
            let p = yacy(text);
            assert_eq!(p.profile_string(), *profile, "text {text:?}");
            assert_eq!(p.signature(), *sig, "text {text:?}");
        }
        assert_eq!(
            yacy(LOREM).text_t(),
            "(dolor-5-3) (amet-4-3) (lorem-3-3) (ipsum-3-3)"
        );
    }

    #[test]
    fn md5_vectors_from_the_spec() {
        let cases: &[(&str, &str, &str)] = &[
            (CAT, "the 8\ncat 4\ndog 2", "9f84dda4092864e7"),
            (
                LOREM,
                "dolor 4\namet 4\nlorem 2\nipsum 2\nsit 2",
                "b6192639f16bc753",
            ),
            (
                APPLE,
                "date 4\napple 4\nbanana 2\ncherry 2",
                "91c4aba8a105ea83",
            ),
            ("one two three", "one 1\ntwo 1\nthree 1", "349a4cd1faf11c87"),
            ("", "", "d41d8cd98f00b204"),
        ];
        for (text, profile, hex) in cases {
            let p = md5(text);
            assert_eq!(p.profile_string(), *profile, "text {text:?}");
            let want = u64::from_str_radix(hex, 16).unwrap() as i64;
            assert_eq!(p.signature(), want, "text {text:?}");
        }
    }

    #[test]
    fn quant_step_rounds_half_up_with_a_floor_of_two() {
        assert_eq!(quant_step(0, 0.5), 1);
        assert_eq!(quant_step(1, 0.5), 1);
        assert_eq!(quant_step(2, 0.5), 2);
        assert_eq!(quant_step(5, 0.5), 3); // 2.5 rounds up
        assert_eq!(quant_step(7, 0.5), 4); // 3.5 rounds up
        assert_eq!(quant_step(100, 0.01), 2); // 1.0 is below the floor
        assert_eq!(quant_step(250, 0.01), 3); // 2.5 in f32
        assert_eq!(quant_step(10, f32::NAN), 2);
    }

    #[test]
    fn java_case_mapping_not_rust_case_mapping() {
        // 'İ' lower-cases to plain 'i' in Java's char mapping (Rust's full mapping gives "i̇").
        assert_eq!(yacy("İİİİ İİİİ").profile_string(), "(iiii-2)");
        // Titlecase 'ǅ' maps to 'ǆ'; 'ß' stays.
        assert_eq!(yacy("ǅabc ǅabc").tokens()[0].token, "ǆabc");
        // A letter outside the BMP separates tokens; a combining mark (Mn) is not a letter.
        assert_eq!(yacy("abcd𝔘abcd").tokens()[0].count, 2);
        assert_eq!(yacy("abcd\u{0301}abcd").tokens()[0].count, 2);
        // Roman numeral Ⅻ (Nl) is not a letter for Java either.
        assert!(yacy("ⅫⅫⅫⅫ").is_empty());
    }

    #[test]
    fn token_length_is_strictly_greater_than_min() {
        let p = Profile::new(
            "abc abcd",
            Scheme::Yacy,
            ProfileParams {
                min_token_len: 3,
                quant_rate: 0.5,
            },
        );
        assert_eq!(p.profile_string(), "(abcd-1)");
    }
}
