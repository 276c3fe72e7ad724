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

use std::cell::RefCell;
use std::sync::OnceLock;

use super::java_chars::{LETTER_OR_DIGIT, TO_LOWER};
use super::java_hashmap::{bucket, table_size};
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
        let tokens = SCRATCH.with(|scratch| {
            let mut counter = scratch.borrow_mut();
            counter.count(text, params.min_token_len);
            let kept = counter.kept(scheme, params.quant_rate);
            counter.shrink();
            kept
        });
        Profile { scheme, tokens }
    }

    /// The kept tokens, in profile order.
    pub fn tokens(&self) -> &[ProfileToken] {
        &self.tokens
    }

    /// How many words (kept tokens, the `(token-cnt-qcnt)` entries of [`Profile::text_t`]) the
    /// profile has: 0 for an empty text. A fuzzy signature of few words is shared by distinct pages
    /// (`--fuzzy-min-words`).
    pub fn words(&self) -> usize {
        self.tokens.len()
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

thread_local! {
    /// One counter per thread, so that its buffers are allocated once, not once per page.
    static SCRATCH: RefCell<Counter> = RefCell::new(Counter::default());
}

/// A distinct token: where its units are in [`Counter::units`], its Java `String.hashCode()` and its count.
#[derive(Clone, Copy)]
struct Entry {
    start: u32,
    len: u32,
    hash: i32,
    count: u32,
}

/// Tokenises a text and counts its distinct tokens in one pass.
///
/// `units` holds the lower-cased units of each distinct token once (a repeated token is compared
/// and dropped again), `entries` one [`Entry`] per distinct token in order of first occurrence, and
/// `slots` an open-addressing index into `entries` (0 empty, else index + 1), keyed by the token's
/// Java hash, which the scan computes as it goes and the iteration order needs anyway.
#[derive(Default)]
struct Counter {
    units: Vec<u16>,
    entries: Vec<Entry>,
    slots: Vec<u32>,
}

/// For ASCII bytes: 0 when not a letter or digit, else the lower-cased byte. Agrees with
/// [`unit_table`]; it is the short way there for the common case.
const ASCII_LOWER: [u8; 128] = {
    let mut table = [0u8; 128];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        if c.is_ascii_alphanumeric() {
            table[b] = c.to_ascii_lowercase();
        }
        b += 1;
    }
    table
};

impl Counter {
    fn count(&mut self, text: &str, min_len: usize) {
        let table = unit_table();
        self.entries.clear();
        // Every unit comes from at least one byte, so `units` never needs more than the text's length.
        // The buffer only grows; nothing in it is read before it is written.
        if self.units.len() < text.len() {
            self.units.resize(text.len(), 0);
        }
        let want = (text.len() / 8).next_power_of_two().clamp(64, 1 << 16);
        self.slots.clear();
        self.slots.resize(want, 0);
        let mut index = Index {
            entries: &mut self.entries,
            slots: &mut self.slots,
            min_len,
        };
        let units = &mut self.units[..];
        let bytes = text.as_bytes();
        // `units[start..end]` is the token being read; `units[..start]` the distinct tokens so far.
        let (mut start, mut end) = (0usize, 0usize);
        let mut hash = 0i32;
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            let unit = if b < 0x80 {
                i += 1;
                u16::from(ASCII_LOWER[usize::from(b)])
            } else if b >= 0xF0 {
                // Outside the BMP: two surrogate units, neither a letter.
                i += 4;
                0
            } else if b >= 0xE0 {
                let c = (u32::from(b & 0x0F) << 12)
                    | (u32::from(bytes[i + 1] & 0x3F) << 6)
                    | u32::from(bytes[i + 2] & 0x3F);
                i += 3;
                table[c as usize]
            } else {
                let c = (u32::from(b & 0x1F) << 6) | u32::from(bytes[i + 1] & 0x3F);
                i += 2;
                table[c as usize]
            };
            if unit != 0 {
                units[end] = unit;
                end += 1;
                hash = hash.wrapping_mul(31).wrapping_add(i32::from(unit));
            } else if end > start {
                start = index.end_token(units, start, end, hash);
                end = start;
                hash = 0;
            }
        }
        if end > start {
            index.end_token(units, start, end, hash);
        }
    }

    /// Frees buffers that a huge text grew, so that a thread does not keep them for good.
    fn shrink(&mut self) {
        const KEEP_UNITS: usize = 1 << 20;
        if self.units.len() > KEEP_UNITS {
            self.units = Vec::new();
        }
        if self.slots.len() > 1 << 16 {
            self.slots = Vec::new();
            self.entries = Vec::new();
        }
    }

    /// The kept tokens in profile order.
    fn kept(&self, scheme: Scheme, quant_rate: f32) -> Vec<ProfileToken> {
        let max_freq = self.entries.iter().map(|e| e.count).max().unwrap_or(0);
        let quant = quant_step(max_freq, quant_rate);
        let buckets = table_size(self.entries.len());
        // (sort key, bucket, insertion index): sorting by the triple equals Java's stable sort of the
        // HashMap's iteration order.
        let mut kept: Vec<(u32, usize, usize, u32)> = self
            .entries
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
                Some((key, bucket(e.hash, buckets), i, qcount))
            })
            .collect();
        kept.sort_unstable_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
        kept.into_iter()
            .map(|(_, _, i, qcount)| {
                let e = &self.entries[i];
                let units = &self.units[e.start as usize..(e.start + e.len) as usize];
                ProfileToken {
                    token: String::from_utf16(units).expect("tokens hold no surrogates"),
                    count: e.count,
                    qcount,
                }
            })
            .collect()
    }
}

/// The counter's open-addressing index, borrowed apart from `units` so that the scan keeps its
/// positions in registers.
struct Index<'a> {
    entries: &'a mut Vec<Entry>,
    slots: &'a mut Vec<u32>,
    min_len: usize,
}

impl Index<'_> {
    /// `units[start..end]` is a finished token: count it. Returns where the next token starts: `end`
    /// when this one was new and its units stay, else `start`.
    #[inline]
    fn end_token(&mut self, units: &[u16], start: usize, end: usize, hash: i32) -> usize {
        let len = end - start;
        if len <= self.min_len {
            return start;
        }
        let token = &units[start..end];
        let mask = self.slots.len() - 1;
        let mut slot = home(hash, mask);
        loop {
            match self.slots[slot] {
                0 => break,
                k => {
                    let e = &mut self.entries[k as usize - 1];
                    if e.hash == hash
                        && e.len as usize == len
                        && units[e.start as usize..][..len] == *token
                    {
                        e.count += 1;
                        return start;
                    }
                }
            }
            slot = (slot + 1) & mask;
        }
        self.entries.push(Entry {
            start: start as u32,
            len: len as u32,
            hash,
            count: 1,
        });
        self.slots[slot] = self.entries.len() as u32;
        if self.entries.len() * 2 > self.slots.len() {
            self.grow();
        }
        end
    }

    fn grow(&mut self) {
        let size = self.slots.len() * 2;
        self.slots.clear();
        self.slots.resize(size, 0);
        let mask = size - 1;
        for (k, e) in self.entries.iter().enumerate() {
            let mut slot = home(e.hash, mask);
            while self.slots[slot] != 0 {
                slot = (slot + 1) & mask;
            }
            self.slots[slot] = k as u32 + 1;
        }
    }
}

/// Fibonacci hashing of the Java hash, whose low bits alone are poor for short tokens.
#[inline]
fn home(hash: i32, mask: usize) -> usize {
    ((hash as u32).wrapping_mul(0x9E37_79B9).rotate_left(16) as usize) & mask
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
    fn words_are_the_profile_entries() {
        // Counted by hand from the vectors above: one word per `(token-qcnt)` entry.
        assert_eq!(yacy(LOREM).words(), 4);
        assert_eq!(yacy(APPLE).words(), 4);
        assert_eq!(yacy("one two three").words(), 1);
        assert_eq!(yacy("").words(), 0);
        assert_eq!(yacy("   ").words(), 0);
        assert_eq!(yacy("Go to it.").words(), 0);
        // Solr's flavour keeps more: `the 8`, `cat 4`, `dog 2`; and `lorem … sit`, five.
        assert_eq!(md5(CAT).words(), 3);
        assert_eq!(md5(LOREM).words(), 5);
        assert_eq!(md5("").words(), 0);
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

    /// The algorithm as Java runs it, written the plain way: UTF-16 units, a token list, a map of
    /// counts, the `HashMap` iteration order, a stable sort.
    fn reference(text: &str, scheme: Scheme, params: ProfileParams) -> Vec<ProfileToken> {
        use super::super::java_hashmap::{iteration_order, java_string_hash};
        let table = unit_table();
        let mut distinct: Vec<Vec<u16>> = Vec::new();
        let mut counts: std::collections::HashMap<Vec<u16>, u32> = Default::default();
        let mut token = Vec::new();
        for unit in text.encode_utf16().chain([0]) {
            let lower = table[usize::from(unit)];
            if lower != 0 {
                token.push(lower);
                continue;
            }
            if token.len() > params.min_token_len {
                let count = counts.entry(token.clone()).or_insert(0);
                if *count == 0 {
                    distinct.push(token.clone());
                }
                *count += 1;
            }
            token.clear();
        }
        let max_freq = counts.values().copied().max().unwrap_or(0);
        let quant = quant_step(max_freq, params.quant_rate);
        let hashes: Vec<i32> = distinct.iter().map(|t| java_string_hash(t)).collect();
        let mut tokens: Vec<ProfileToken> = iteration_order(&hashes)
            .into_iter()
            .map(|i| {
                let count = counts[&distinct[i]];
                ProfileToken {
                    token: String::from_utf16(&distinct[i]).unwrap(),
                    count,
                    qcount: count / quant * quant,
                }
            })
            .filter(|t| t.qcount >= quant)
            .collect();
        match scheme {
            Scheme::Yacy => tokens.sort_by_key(|t| std::cmp::Reverse(t.count)),
            Scheme::Md5 => tokens.sort_by_key(|t| std::cmp::Reverse(t.qcount)),
        }
        tokens
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]

        /// Texts from few words, so that tokens repeat, tie and collide in the one-pass counter.
        #[test]
        fn the_one_pass_counter_equals_the_plain_algorithm(
            words in proptest::collection::vec(
                proptest::prop_oneof![
                    "[a-eA-E]{1,6}",
                    "[a-c0-2äÄßİǅ]{1,5}",
                    "\\PC{1,4}",
                    "[ ,.!\\n]{1,2}",
                ],
                0..400,
            ),
            m in 0usize..5,
            q in proptest::prop_oneof![0.0f32..1.0, proptest::strategy::Just(0.5f32), proptest::strategy::Just(0.01f32)],
        ) {
            let text = words.join(" ");
            for scheme in [Scheme::Yacy, Scheme::Md5] {
                let params = ProfileParams { min_token_len: m, quant_rate: q };
                let profile = Profile::new(&text, scheme, params);
                proptest::prop_assert_eq!(profile.tokens(), &reference(&text, scheme, params)[..]);
            }
        }
    }

    #[test]
    fn the_ascii_table_agrees_with_the_full_table() {
        for b in 0..128u8 {
            assert_eq!(
                u16::from(ASCII_LOWER[usize::from(b)]),
                unit_table()[usize::from(b)],
                "byte {b}"
            );
        }
    }

    #[test]
    fn a_huge_text_does_not_stay_in_the_thread_buffers() {
        let text = "abcd efgh ".repeat(300_000);
        let p = Profile::new(&text, Scheme::Yacy, ProfileParams::defaults(Scheme::Yacy));
        let counts: Vec<(&str, u32)> = p
            .tokens()
            .iter()
            .map(|t| (t.token.as_str(), t.count))
            .collect();
        assert!(counts.contains(&("abcd", 300_000)) && counts.contains(&("efgh", 300_000)));
        SCRATCH.with(|s| assert!(s.borrow().units.capacity() <= 1 << 20));
        // The next page still works with the buffers freed.
        assert_eq!(
            yacy(APPLE).profile_string(),
            "(date-4) (apple-4) (banana-2) (cherry-2)"
        );
    }

    #[test]
    fn tokens_with_one_java_hash_stay_apart() {
        // 'a'·31 + 'þ' = 'b'·31 + 'ß' = 3261: the counter's index sees the same hash for both.
        let text = "aþaa bßaa aþaa bßaa";
        let params = ProfileParams {
            min_token_len: 2,
            quant_rate: 0.5,
        };
        let p = Profile::new(text, Scheme::Yacy, params);
        // One bucket, so the tie keeps the order of first occurrence.
        assert_eq!(p.text_t(), "(aþaa-2-2) (bßaa-2-2)");
        assert_eq!(p.tokens(), &reference(text, Scheme::Yacy, params)[..]);
    }

    #[test]
    fn many_distinct_tokens_grow_the_index() {
        // 5,000 distinct tokens in 35,000 bytes: more than half the first index size, so it grows.
        let text: String = (0..5000).map(|i| format!("w{i:05} ")).collect();
        let params = ProfileParams {
            min_token_len: 2,
            quant_rate: 0.5,
        };
        let p = Profile::new(&text, Scheme::Yacy, params);
        assert_eq!(p.tokens(), &reference(&text, Scheme::Yacy, params)[..]);
        assert_eq!(p.tokens().len(), 5000);
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
