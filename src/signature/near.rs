//! Near-duplicate signatures: the MinHash trials of seed 001 (`neardup.md`), pure code, no I/O.
//!
//! Two pages are near-duplicates when at least `agree` of their `trials` trials agree; a trial agrees
//! when all its `hashes` min-hashes over the pages' word shingles are equal. For one hash the chance
//! of that is the shingle sets' Jaccard overlap J, so a pair is found with probability
//! `1 − Σ_{k<A} C(T,k)·p^k·(1−p)^(T−k)` where `p = J^H` ([`probability`]).
//!
//! # Definition, version 1 (pinned: stored values compare across releases)
//!
//! 1. **Tokens**: maximal runs of characters whose Unicode general category is a letter (`Lu`, `Ll`,
//!    `Lt`, `Lm`, `Lo`) or a decimal digit (`Nd`), each lower-cased with Rust's `str::to_lowercase`
//!    (the full mapping, final sigma included). Categories come from `unicode-general-category`
//!    (Unicode 16.0 in the version the lock file pins).
//! 2. **Token hash**: `w = xxh3_64_with_seed(utf8(token), SEED)`.
//! 3. **Shingles**: every run of `n` consecutive tokens; a text of 1 to n−1 tokens has one shingle of
//!    all its tokens; a text without tokens has none and gets no signature. A shingle's hash folds its
//!    token hashes in order: `x = SEED`, then `x = fmix64(x ^ w_i)` for each token. The shingle set is
//!    the set of these hashes (a shingle that occurs twice counts once; minima do not see repeats).
//! 4. **Hash functions**: `y = lo32(x ^ (x >> 32))`, and `h_j(y) = fmix32(y ^ k_j)` for
//!    `j = 0 … H·T−1`, where `fmix64` is the SplitMix64 finaliser, `fmix32` MurmurHash3's (both
//!    bijections), and `k_j` is the low 32 bits of the `(j+1)`-th output of SplitMix64 started at
//!    `SEED`. Trial `t` uses `h_{t·H} … h_{t·H+H−1}`; `m_j` is the least `h_j` over the shingles.
//!    32-bit minima let one vector instruction compute eight hash functions.
//! 5. **Trial value**: `v_t = xxh3_64_with_seed(le32(m_{t·H}) ‖ … ‖ le32(m_{t·H+H−1}), SEED ^ t)`,
//!    stored as the `i64` with the same bits.
//! 6. **Combination keys**: for every `A`-subset `S = {s_1 < … < s_A}` of the trials, in
//!    lexicographic order, `key_S = xxh3_64_with_seed([s_1, …, s_A] as bytes ‖ le(v_{s_1}) ‖ … ‖
//!    le(v_{s_A}), SEED ^ 0xC0)`. Two documents are near-duplicates exactly when they share a key (up to
//!    64-bit collisions), so Solr can find them by equality.
//!
//! `SEED` is [`SEED`]; [`NearParams::version`] names the parameters a document was signed with.

use unicode_general_category::{get_general_category, GeneralCategory};
use xxhash_rust::xxh3::xxh3_64_with_seed;

/// The seed every hash of version 1 derives from.
pub const SEED: u64 = 0x5eed_0001_d0c5_1a7e;

/// The definition's version, part of [`NearParams::version`].
pub const VERSION: u32 = 1;

/// The parameters of near-duplicate signatures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NearParams {
    /// Words per shingle (n).
    pub shingle: usize,
    /// Hash functions per trial (H).
    pub hashes: usize,
    /// Trials (T).
    pub trials: usize,
    /// Trials that must agree (A).
    pub agree: usize,
}

impl Default for NearParams {
    /// The seed's defaults: n = 2, H = 14, T = 6, A = 2.
    fn default() -> Self {
        NearParams {
            shingle: 2,
            hashes: 14,
            trials: 6,
            agree: 2,
        }
    }
}

/// What is wrong with near-duplicate parameters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NearParamsError {
    /// A parameter out of its range.
    #[error("{name} must be between {min} and {max}, got {value}")]
    OutOfRange {
        /// The parameter.
        name: &'static str,
        /// Its value.
        value: usize,
        /// The least allowed.
        min: usize,
        /// The most allowed.
        max: usize,
    },
}

impl NearParams {
    /// Checks the ranges: n 1–8, H 1–64, T 1–16, A 1–T.
    pub fn validate(&self) -> Result<(), NearParamsError> {
        let check = |name, value: usize, min, max| {
            if (min..=max).contains(&value) {
                Ok(())
            } else {
                Err(NearParamsError::OutOfRange {
                    name,
                    value,
                    min,
                    max,
                })
            }
        };
        check("shingle", self.shingle, 1, 8)?;
        check("hashes", self.hashes, 1, 64)?;
        check("trials", self.trials, 1, 16)?;
        check("agree", self.agree, 1, self.trials)
    }

    /// The name of the definition and parameters, stored with a document's values:
    /// `near1-n2-h14-t6-a2`.
    pub fn version(&self) -> String {
        format!(
            "near{VERSION}-n{}-h{}-t{}-a{}",
            self.shingle, self.hashes, self.trials, self.agree
        )
    }

    /// The number of combination keys per document: C(T, A).
    pub fn keys_per_document(&self) -> usize {
        binomial(self.trials, self.agree) as usize
    }
}

/// The near-duplicate signature of one text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NearSignature {
    /// One value per trial.
    pub trials: Vec<i64>,
    /// One key per `agree`-subset of the trials, in lexicographic order of the subsets.
    pub keys: Vec<i64>,
}

/// The tokens of a text (step 1).
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    each_token(text, &mut String::new(), |t| out.push(t.to_owned()));
    out
}

fn is_word_char(c: char) -> bool {
    use GeneralCategory::*;
    matches!(
        get_general_category(c),
        UppercaseLetter
            | LowercaseLetter
            | TitlecaseLetter
            | ModifierLetter
            | OtherLetter
            | DecimalNumber
    )
}

/// The shingles of `n` tokens (step 3) as text, distinct, in first-seen order: what the hashes stand
/// for.
pub fn shingles(tokens: &[String], n: usize) -> Vec<String> {
    if tokens.is_empty() {
        return Vec::new();
    }
    let n = n.max(1);
    if tokens.len() < n {
        return vec![tokens.join(" ")];
    }
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for w in tokens.windows(n) {
        let s = w.join(" ");
        if seen.insert(s.clone()) {
            out.push(s);
        }
    }
    out
}

/// The hashes of a text's shingles (steps 1 to 3), repeats included.
pub fn shingle_hashes(text: &str, n: usize, out: &mut Vec<u64>) {
    out.clear();
    let n = n.clamp(1, 8);
    // The last `n` token hashes, in a ring: the oldest at `count % n` once full.
    let mut ring = [0u64; 8];
    let mut count = 0usize;
    let mut lower = String::new();
    let fold = |ring: &[u64; 8], count: usize, len: usize| {
        (0..len).fold(SEED, |x, i| fmix(x ^ ring[(count - len + i) % n]))
    };
    each_token(text, &mut lower, |token| {
        ring[count % n] = xxh3_64_with_seed(token.as_bytes(), SEED);
        count += 1;
        if count >= n {
            out.push(fold(&ring, count, n));
        }
    });
    if count > 0 && count < n {
        out.push(fold(&ring, count, count));
    }
}

/// Per ASCII byte: 0 not a word byte, else the byte lower-cased.
const ASCII_WORD: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        if c.is_ascii_alphanumeric() {
            t[b] = c.to_ascii_lowercase();
        }
        b += 1;
    }
    t
};

/// Calls `f` with every token of `text`, lower-cased (step 1), through one reused buffer: ASCII
/// bytes by a table, other characters by their general category; a token with any non-ASCII
/// character is lower-cased whole with `str::to_lowercase` (final sigma needs the whole word).
fn each_token(text: &str, lower: &mut String, mut f: impl FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut buf: Vec<u8> = std::mem::take(lower).into_bytes();
    buf.clear();
    // Start of the current token in `text`, and whether it has a non-ASCII character.
    let mut start = usize::MAX;
    let mut wide = false;
    let mut i = 0;
    let mut flush = |start: &mut usize, wide: &mut bool, end: usize, buf: &mut Vec<u8>| {
        if *start != usize::MAX {
            if *wide {
                f(&text[*start..end].to_lowercase());
            } else {
                // Only ASCII letters and digits went in.
                f(std::str::from_utf8(buf).expect("ASCII"));
            }
            buf.clear();
            *start = usize::MAX;
            *wide = false;
        }
    };
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            let l = ASCII_WORD[b as usize];
            if l != 0 {
                if start == usize::MAX {
                    start = i;
                }
                buf.push(l);
            } else {
                flush(&mut start, &mut wide, i, &mut buf);
            }
            i += 1;
        } else {
            let c = text[i..].chars().next().expect("a char boundary");
            if is_word_char(c) {
                if start == usize::MAX {
                    start = i;
                }
                wide = true;
            } else {
                flush(&mut start, &mut wide, i, &mut buf);
            }
            i += c.len_utf8();
        }
    }
    flush(&mut start, &mut wide, bytes.len(), &mut buf);
    buf.clear();
    *lower = String::from_utf8(buf).expect("cleared");
}

/// The SplitMix64 finaliser: a bijection of `u64`.
fn fmix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// MurmurHash3's 32-bit finaliser: a bijection of `u32`.
#[inline(always)]
fn fmix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// The keys `k_0 …` of the hash functions: the low halves of SplitMix64 outputs from [`SEED`].
fn function_keys(count: usize) -> Vec<u32> {
    let mut state = SEED;
    (0..count)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            fmix(state) as u32
        })
        .collect()
}

/// Lowers `minima[j]` to `fmix32(y ^ keys[j])` for every shingle hash `y`: the hot loop, written so
/// that the compiler computes eight functions per vector instruction.
#[inline(always)]
fn lower_minima(minima: &mut [u32], keys: &[u32], hashes: &[u64]) {
    let n = minima.len().min(keys.len());
    let (minima, keys) = (&mut minima[..n], &keys[..n]);
    for &x in hashes {
        let y = (x ^ (x >> 32)) as u32;
        for (m, &k) in minima.iter_mut().zip(keys) {
            *m = (*m).min(fmix32(y ^ k));
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn lower_minima_avx2(minima: &mut [u32], keys: &[u32], hashes: &[u64]) {
    lower_minima(minima, keys, hashes)
}

/// [`lower_minima`] with AVX2 where the processor has it (the same results either way).
fn lower_minima_best(minima: &mut [u32], keys: &[u32], hashes: &[u64]) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor supports AVX2, checked just above.
        unsafe { lower_minima_avx2(minima, keys, hashes) };
        return;
    }
    lower_minima(minima, keys, hashes)
}

/// The signature of a text, or `None` when it has no token.
pub fn signature(text: &str, params: &NearParams) -> Option<NearSignature> {
    NearSigner::new(*params).sign(text)
}

/// The signature from the shingle hashes (steps 1 to 3 done; repeats allowed).
pub fn signature_of_hashes(hashes: &[u64], params: &NearParams) -> Option<NearSignature> {
    NearSigner::new(*params).sign_hashes(hashes)
}

/// Signs texts under fixed parameters, with the hash-function keys and the trial subsets computed
/// once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NearSigner {
    params: NearParams,
    functions: Vec<u32>,
    subsets: Vec<Vec<usize>>,
}

impl NearSigner {
    /// A signer for `params` (which [`NearParams::validate`] accepts).
    pub fn new(params: NearParams) -> Self {
        NearSigner {
            params,
            functions: function_keys(params.hashes * params.trials),
            subsets: combinations(params.trials, params.agree),
        }
    }

    /// The parameters.
    pub fn params(&self) -> &NearParams {
        &self.params
    }

    /// The signature of a text, or `None` when it has no token.
    pub fn sign(&self, text: &str) -> Option<NearSignature> {
        self.sign_without(text, |_| false)
    }

    /// The signature of a text without the shingles whose hash `skip` names (a host's chrome), or
    /// `None` when no shingle is left.
    pub fn sign_without(&self, text: &str, skip: impl Fn(u64) -> bool) -> Option<NearSignature> {
        let mut hashes = Vec::new();
        shingle_hashes(text, self.params.shingle, &mut hashes);
        hashes.retain(|&h| !skip(h));
        self.sign_hashes(&hashes)
    }

    /// The signature from the shingle hashes (steps 1 to 3 done; repeats allowed).
    pub fn sign_hashes(&self, hashes: &[u64]) -> Option<NearSignature> {
        if hashes.is_empty() {
            return None;
        }
        let mut minima = vec![u32::MAX; self.functions.len()];
        lower_minima_best(&mut minima, &self.functions, hashes);
        let trials: Vec<i64> = minima
            .chunks(self.params.hashes)
            .enumerate()
            .map(|(t, chunk)| {
                let bytes: Vec<u8> = chunk.iter().flat_map(|m| m.to_le_bytes()).collect();
                xxh3_64_with_seed(&bytes, SEED ^ t as u64) as i64
            })
            .collect();
        let keys = self
            .subsets
            .iter()
            .map(|subset| combination_key(subset, &trials))
            .collect();
        Some(NearSignature { trials, keys })
    }
}

/// The key of one subset of trials (step 6).
fn combination_key(subset: &[usize], trials: &[i64]) -> i64 {
    let mut bytes: Vec<u8> = subset.iter().map(|&s| s as u8).collect();
    for &s in subset {
        bytes.extend(trials[s].to_le_bytes());
    }
    xxh3_64_with_seed(&bytes, SEED ^ 0xC0) as i64
}

/// The `k`-subsets of `0..n`, in lexicographic order.
fn combinations(n: usize, k: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut current = Vec::with_capacity(k);
    fn walk(start: usize, n: usize, k: usize, current: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if current.len() == k {
            out.push(current.clone());
            return;
        }
        for i in start..n {
            current.push(i);
            walk(i + 1, n, k, current, out);
            current.pop();
        }
    }
    walk(0, n, k, &mut current, &mut out);
    out
}

fn binomial(n: usize, k: usize) -> u64 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k);
    (0..k).fold(1u64, |acc, i| acc * (n - i) as u64 / (i + 1) as u64)
}

/// The probability that a pair with shingle overlap `jaccard` is found: at least `agree` of `trials`
/// trials of `hashes` hashes agree. `1 − Σ_{k<A} C(T,k)·p^k·(1−p)^(T−k)`, `p = J^H`.
pub fn probability(jaccard: f64, hashes: usize, trials: usize, agree: usize) -> f64 {
    let p = jaccard.powi(hashes as i32);
    let below: f64 = (0..agree.min(trials + 1))
        .map(|k| {
            binomial(trials, k) as f64 * p.powi(k as i32) * (1.0 - p).powi((trials - k) as i32)
        })
        .sum();
    (1.0 - below).clamp(0.0, 1.0)
}

/// Whether two signatures make their documents near-duplicates: at least `agree` trials equal.
pub fn agree(a: &NearSignature, b: &NearSignature, agree: usize) -> bool {
    a.trials
        .iter()
        .zip(&b.trials)
        .filter(|(x, y)| x == y)
        .count()
        >= agree
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_letters_and_decimal_digits_lower_cased() {
        assert_eq!(
            tokens("Hello, WORLD! 42x ½ Ⅻ straße İ日本"),
            vec!["hello", "world", "42x", "straße", "i\u{307}日本"]
        );
        assert!(tokens("  -- … ").is_empty());
    }

    #[test]
    fn shingles_are_distinct_and_short_texts_have_one() {
        let t = tokens("a b a b c");
        assert_eq!(shingles(&t, 2), vec!["a b", "b a", "b c"]);
        assert_eq!(shingles(&tokens("one"), 2), vec!["one"]);
        assert!(shingles(&[], 2).is_empty());
        assert_eq!(shingles(&t, 1), vec!["a", "b", "c"]);
    }

    #[test]
    fn the_keys_are_the_subsets_in_order() {
        assert_eq!(
            combinations(4, 2),
            vec![
                vec![0, 1],
                vec![0, 2],
                vec![0, 3],
                vec![1, 2],
                vec![1, 3],
                vec![2, 3]
            ]
        );
        assert_eq!(NearParams::default().keys_per_document(), 15);
        let s = signature("the quick brown fox jumps", &NearParams::default()).unwrap();
        assert_eq!((s.trials.len(), s.keys.len()), (6, 15));
        assert!(signature("", &NearParams::default()).is_none());
    }

    #[test]
    fn shared_keys_are_exactly_agreeing_trials() {
        let p = NearParams::default();
        let base: Vec<String> = (0..200).map(|i| format!("w{}", i % 97)).collect();
        let a = signature(&base.join(" "), &p).unwrap();
        for change in [1, 3, 10, 40] {
            let mut other = base.clone();
            for w in other.iter_mut().take(change) {
                *w = format!("x{w}");
            }
            let b = signature(&other.join(" "), &p).unwrap();
            let shared = a.keys.iter().any(|k| b.keys.contains(k));
            assert_eq!(shared, agree(&a, &b, p.agree), "change {change}");
        }
    }

    #[test]
    fn the_probability_formula() {
        // Worked by hand: J = 1 always agrees; for A = 2, T = 6 the seed's closed form.
        assert_eq!(probability(1.0, 14, 6, 2), 1.0);
        let j: f64 = 0.9;
        let p = j.powi(14);
        let seed = 1.0 - (1.0 - p).powi(6) - 6.0 * p * (1.0 - p).powi(5);
        assert!((probability(0.9, 14, 6, 2) - seed).abs() < 1e-12);
        // A = 1: one agreeing trial is enough.
        assert!((probability(0.5, 1, 2, 1) - 0.75).abs() < 1e-12);
    }

    #[test]
    fn params_are_checked() {
        assert!(NearParams::default().validate().is_ok());
        let bad = NearParams {
            agree: 7,
            ..NearParams::default()
        };
        assert_eq!(
            bad.validate(),
            Err(NearParamsError::OutOfRange {
                name: "agree",
                value: 7,
                min: 1,
                max: 6
            })
        );
        assert_eq!(NearParams::default().version(), "near1-n2-h14-t6-a2");
    }
}
