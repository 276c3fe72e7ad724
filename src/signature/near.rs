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
//!
//! # Speed
//!
//! The code computes exactly the definition above, by other routes where that is faster; the unit
//! tests hold each route to a plain implementation. Text to shingle hashes ([`shingle_hashes`])
//! classifies 64 bytes at a time into bit masks, walks the token boundaries with
//! `trailing_zeros`, and hashes the tokens of up to 8 ASCII bytes (nearly all) from one load,
//! lower-cased and hashed without a branch; only tokens with a non-ASCII character take the
//! character-by-character path. Shingle hashes to minima ([`NearSigner::sign_hashes`]) keeps 32
//! minima in vector registers while it runs over the shingles, with `fmix32`'s first step done
//! once per shingle and once per function (it is linear over XOR). `examples/near_speed.rs` and
//! `tools/near-bench/run.sh` measure it against the Python peers.

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
    each_token(text, &mut out);
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
    // A page has about one token per six bytes; growing from nothing would copy several times.
    out.reserve(text.len() / 4 + 1);
    // One copy of the scanner per shingle length, so that the window below is a few registers.
    match n.clamp(1, 8) {
        1 => shingle_hashes_n::<1>(text, out),
        2 => shingle_hashes_n::<2>(text, out),
        3 => shingle_hashes_n::<3>(text, out),
        4 => shingle_hashes_n::<4>(text, out),
        5 => shingle_hashes_n::<5>(text, out),
        6 => shingle_hashes_n::<6>(text, out),
        7 => shingle_hashes_n::<7>(text, out),
        _ => shingle_hashes_n::<8>(text, out),
    }
}

/// [`shingle_hashes`] for `N` tokens per shingle.
fn shingle_hashes_n<const N: usize>(text: &str, out: &mut Vec<u64>) {
    let mut shingles = Shingles::<N> {
        window: [0; N],
        count: 0,
        out,
    };
    each_token(text, &mut shingles);
    let Shingles { window, count, out } = shingles;
    if count > 0 && count < N {
        out.push(fold(&window[N - count..]));
    }
}

/// What [`each_token`] hands the tokens to.
trait TokenSink {
    /// A token, lower-cased.
    fn token(&mut self, token: &[u8]);

    /// A lower-cased ASCII token of `len` bytes, 1 to 8, as the low bytes of `word` (little-endian;
    /// the others zero).
    fn short_token(&mut self, word: u64, len: usize) {
        self.token(&word.to_le_bytes()[..len]);
    }
}

/// Collects the tokens as strings.
impl TokenSink for Vec<String> {
    fn token(&mut self, token: &[u8]) {
        self.push(
            std::str::from_utf8(token)
                .expect("tokens are UTF-8")
                .to_owned(),
        );
    }
}

/// Hashes tokens into the hashes of the shingles of `N` tokens.
struct Shingles<'a, const N: usize> {
    /// The hashes of the last `N` tokens, oldest first.
    window: [u64; N],
    /// Tokens so far.
    count: usize,
    out: &'a mut Vec<u64>,
}

impl<const N: usize> Shingles<'_, N> {
    #[inline(always)]
    fn push(&mut self, token_hash: u64) {
        self.window.copy_within(1.., 0);
        self.window[N - 1] = token_hash;
        self.count += 1;
        if self.count >= N {
            self.out.push(fold(&self.window));
        }
    }
}

// Inlined into the scanner's loop, where most tokens come from.
impl<const N: usize> TokenSink for Shingles<'_, N> {
    #[inline(always)]
    fn token(&mut self, token: &[u8]) {
        self.push(xxh3_64_with_seed(token, SEED));
    }

    #[inline(always)]
    fn short_token(&mut self, word: u64, len: usize) {
        self.push(short_token_hash(word, len));
    }
}

/// `xxh3_64_with_seed(token, SEED)` (step 2) for a token of `len` bytes, 1 to 8, held in the low
/// bytes of `word` (little-endian), without a branch.
///
/// XXH3 hashes 1 to 3 bytes one way and 4 to 8 another (`XXH3_len_1to3_64b` and
/// `XXH3_len_4to8_64b` of the XXH3 specification); about half the tokens of a page take each, in no
/// order a processor could predict, so both are computed and one is picked. The constants are those
/// of the default secret and [`SEED`]; the tests hold this to the crate's function for every length.
#[inline(always)]
fn short_token_hash(word: u64, len: usize) -> u64 {
    debug_assert!((1..=8).contains(&len));
    // The first 24 bytes of XXH3's default secret (`kSecret`).
    const SECRET: [u8; 24] = [
        0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad,
        0x1c, 0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb,
    ];
    const fn le32(at: usize) -> u32 {
        u32::from_le_bytes([SECRET[at], SECRET[at + 1], SECRET[at + 2], SECRET[at + 3]])
    }
    const fn le64(at: usize) -> u64 {
        (le32(at) as u64) | (le32(at + 4) as u64) << 32
    }
    // 1 to 3 bytes: the first, middle and last byte and the length, keyed and avalanched.
    const FLIP_1TO3: u64 = ((le32(0) ^ le32(4)) as u64).wrapping_add(SEED);
    let byte = |i: usize| (word >> (8 * i)) as u8 as u32;
    let combo = byte(0) << 16 | byte(len >> 1) << 24 | byte(len - 1) | (len as u32) << 8;
    let mut a = combo as u64 ^ FLIP_1TO3;
    a ^= a >> 33;
    a = a.wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
    a ^= a >> 29;
    a = a.wrapping_mul(0x1656_67b1_9e37_79f9);
    a ^= a >> 32;
    // 4 to 8 bytes: the first and last four, keyed and avalanched (garbage for fewer, unused).
    const FLIP_4TO8: u64 =
        (le64(8) ^ le64(16)).wrapping_sub(SEED ^ ((SEED as u32).swap_bytes() as u64) << 32);
    let first = word as u32 as u64;
    let last = (word >> (8 * len.saturating_sub(4))) as u32 as u64;
    let mut b = last.wrapping_add(first << 32) ^ FLIP_4TO8;
    b ^= b.rotate_left(49) ^ b.rotate_left(24);
    b = b.wrapping_mul(0x9fb2_1c65_1e98_df25);
    b ^= (b >> 35).wrapping_add(len as u64);
    b = b.wrapping_mul(0x9fb2_1c65_1e98_df25);
    b ^= b >> 28;
    // A select the compiler makes with a mask or a conditional move, not a jump.
    let short = 0u64.wrapping_sub((len < 4) as u64);
    (a & short) | (b & !short)
}

/// A shingle's hash from its token hashes (step 3).
#[inline(always)]
fn fold(tokens: &[u64]) -> u64 {
    tokens.iter().fold(SEED, |x, &w| fmix(x ^ w))
}

/// Hands every token of `text` to `f`, lower-cased (step 1), as UTF-8 bytes.
///
/// The text is read in blocks of 64 bytes, each classified at once into two bit masks: bytes that
/// can be part of a token (ASCII letters and digits, and every byte of a non-ASCII character) and
/// bytes that need care (ASCII capitals, non-ASCII). The runs of the first mask, walked with
/// `trailing_zeros`, are the tokens, except that a run with a non-ASCII character may hold several
/// or none. Run boundaries are character boundaries, since every byte of a multi-byte character
/// lies inside a run. See [`emit`] for what happens to a run.
#[inline(always)]
fn each_token(text: &str, f: &mut impl TokenSink) {
    let bytes = text.as_bytes();
    let full = bytes.len() / 64;
    // The token still open at the end of the last block: where it started, and whether it needs
    // care so far.
    let mut open: Option<(usize, bool)> = None;
    // Bit 0: the last byte of the previous block was a token byte.
    let mut carry = 0u64;
    let mut tail = [0u8; 64];
    for index in 0..=full {
        let base = 64 * index;
        let block: &[u8; 64] = if index < full {
            bytes[base..base + 64].try_into().expect("64 bytes")
        } else if base < bytes.len() {
            // Zeros separate tokens, so a token open at the end of the text ends here.
            let rest = &bytes[base..];
            tail[..rest.len()].copy_from_slice(rest);
            &tail
        } else {
            break;
        };
        let (word, mut care) = classify(block);
        let before = (word << 1) | carry;
        carry = word >> 63;
        let mut starts = word & !before;
        let mut ends = !word & before;
        if let Some((start, care_so_far)) = open {
            if ends == 0 {
                open = Some((start, care_so_far || care != 0));
                continue;
            }
            let e = ends.trailing_zeros();
            ends &= ends - 1;
            let below = (1u64 << e) - 1;
            emit(
                text,
                start,
                base + e as usize,
                care_so_far || care & below != 0,
                f,
            );
            care &= !below;
            open = None;
        }
        while starts != 0 {
            let s = base + starts.trailing_zeros() as usize;
            starts &= starts - 1;
            if ends == 0 {
                open = Some((s, care != 0));
                break;
            }
            let e = ends.trailing_zeros();
            ends &= ends - 1;
            // No care bit lies between tokens, so those below the end are this token's.
            let below = (1u64 << e) - 1;
            emit(text, s, base + e as usize, care & below != 0, f);
            care &= !below;
        }
    }
    if let Some((start, care)) = open {
        emit(text, start, bytes.len(), care, f);
    }
}

/// Hands the run `text[start..end]` to `f` as tokens. An ASCII run of up to 8 bytes (most of them)
/// goes as one word, lower-cased without a branch; a longer one without care is borrowed from the
/// text; one with capitals is lower-cased by [`each_capitalised_token`]; one with a non-ASCII
/// character is split and lower-cased by [`each_wide_token`].
#[inline(always)]
fn emit(text: &str, start: usize, end: usize, care: bool, f: &mut impl TokenSink) {
    let bytes = text.as_bytes();
    let len = end - start;
    // Most tokens: eight bytes or fewer, not at the very end of the text, so read in one load.
    if len <= 8 {
        if let Some(head) = bytes.get(start..start + 8) {
            let head = u64::from_le_bytes(head.try_into().expect("8 bytes"));
            // Only the token's bytes (len >= 1).
            let word = head & (u64::MAX >> (64 - 8 * len));
            if word & HIGH == 0 {
                // ASCII: lower-cased by setting 0x20 in each capital, if any, without a branch
                // (one token in ten has a capital, at no predictable place).
                let upper = at_least(word, b'A') & !at_least(word, b'Z' + 1);
                f.short_token(word | upper >> 2, len);
                return;
            }
        }
    }
    let run = &bytes[start..end];
    if !care {
        f.token(run);
    } else if run.is_ascii() {
        each_capitalised_token(run, f);
    } else {
        each_wide_token(&text[start..end], f);
    }
}

/// An ASCII token with capitals (longer than 8 bytes, or at the end of the text), lower-cased, on
/// the stack when it fits.
#[inline(never)]
fn each_capitalised_token(run: &[u8], f: &mut impl TokenSink) {
    let mut short = [0u8; 64];
    if let Some(buf) = short.get_mut(..run.len()) {
        for (l, &b) in buf.iter_mut().zip(run) {
            *l = b.to_ascii_lowercase();
        }
        f.token(buf);
    } else {
        f.token(&run.to_ascii_lowercase());
    }
}

/// The tokens of a run of letters, digits and other non-ASCII characters, each lower-cased whole
/// with `str::to_lowercase` when it has a non-ASCII character (final sigma needs the whole word).
#[inline(never)]
fn each_wide_token(run: &str, f: &mut impl TokenSink) {
    let mut start = None;
    for (i, c) in run.char_indices() {
        let word = if c.is_ascii() {
            // Only letters and digits are in a run.
            true
        } else {
            is_word_char(c)
        };
        match (word, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                f.token(run[s..i].to_lowercase().as_bytes());
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        f.token(run[s..].to_lowercase().as_bytes());
    }
}

/// Eight `0x01` bytes.
const ONES: u64 = u64::MAX / 255;
/// Eight `0x80` bytes.
const HIGH: u64 = ONES * 0x80;

/// `0x80` in every byte of `low` (bytes below `0x80`) that is at least `min` (at most `0x80`).
#[inline(always)]
fn at_least(low: u64, min: u8) -> u64 {
    // No byte overflows into the next: both terms are at most 0x7f and 0x80.
    (low + ONES * (0x80 - min as u64)) & HIGH
}

/// The bytes of `v` (eight, little-endian), classified: `0x80` in each byte of the first value
/// that may be a token's (an ASCII letter or digit, or non-ASCII), and in each byte of the second
/// that needs care (an ASCII capital, or non-ASCII).
#[inline(always)]
fn classify8(v: u64) -> (u64, u64) {
    let wide = v & HIGH;
    let low = v & !HIGH;
    let digit = at_least(low, b'0') & !at_least(low, b'9' + 1);
    let upper = at_least(low, b'A') & !at_least(low, b'Z' + 1);
    // Setting 0x20 maps capitals onto small letters and no other byte onto one.
    let folded = low | (ONES * 0x20);
    let letter = at_least(folded, b'a') & !at_least(folded, b'z' + 1);
    (digit | letter | wide, upper | wide)
}

/// The `0x80` bits of eight bytes gathered into the low eight bits, byte `i` to bit `i`.
#[inline(always)]
fn gather8(high: u64) -> u64 {
    // Bit 8i moves to bit 56+i; no two partial products meet there.
    ((high >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56
}

/// Classifies 64 bytes (see [`classify8`]) into two masks, byte `i` to bit `i`, with SSE2 (part of
/// every x86-64 processor): the portable [`classify_swar`] takes about four times the instructions.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classify(block: &[u8; 64]) -> (u64, u64) {
    use std::arch::x86_64::*;
    let mut word = 0;
    let mut care = 0;
    for (i, chunk) in block.chunks_exact(16).enumerate() {
        // SAFETY: SSE2 is part of the x86-64 baseline (every x86-64 processor has it, and the
        // compiler assumes it), and the load reads the 16 bytes of `chunk`, which it may read
        // unaligned.
        let (w, c) = unsafe {
            let v = _mm_loadu_si128(chunk.as_ptr().cast());
            // `lo <= b <= hi` as one signed comparison: `b + (0x80 - lo) < hi - lo + 1 - 0x80`.
            let within = |v, lo: u8, hi: u8| {
                let shifted = _mm_add_epi8(v, _mm_set1_epi8(0x80u8.wrapping_sub(lo) as i8));
                _mm_cmplt_epi8(shifted, _mm_set1_epi8((hi - lo + 1) as i8 ^ i8::MIN))
            };
            let digit = within(v, b'0', b'9');
            let letter = within(_mm_or_si128(v, _mm_set1_epi8(0x20)), b'a', b'z');
            let upper = within(v, b'A', b'Z');
            // Non-ASCII bytes have the sign bit, which is what `movemask` gathers.
            (
                _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(digit, letter), v)),
                _mm_movemask_epi8(_mm_or_si128(upper, v)),
            )
        };
        word |= (w as u64) << (16 * i);
        care |= (c as u64) << (16 * i);
    }
    (word, care)
}

#[cfg(not(target_arch = "x86_64"))]
use classify_swar as classify;

/// Classifies 64 bytes (see [`classify8`]) into two masks, byte `i` to bit `i`, eight at a time in
/// `u64`s.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn classify_swar(block: &[u8; 64]) -> (u64, u64) {
    let mut word = 0;
    let mut care = 0;
    for (i, chunk) in block.chunks_exact(8).enumerate() {
        let (w, c) = classify8(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        word |= gather8(w) << (8 * i);
        care |= gather8(c) << (8 * i);
    }
    (word, care)
}

/// The SplitMix64 finaliser: a bijection of `u64`.
fn fmix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// MurmurHash3's 32-bit finaliser: a bijection of `u32`. Computed as [`premix`] and
/// [`fmix32_rest`]; this plain form is what the tests hold them to.
#[cfg(test)]
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

/// The 32-bit input of the hash functions from a shingle hash (step 4), with `fmix32`'s first
/// step done: [`premix`].
#[inline(always)]
fn input32(x: u64) -> u32 {
    premix((x ^ (x >> 32)) as u32)
}

/// `fmix32`'s first step, `h ^ (h >> 16)`. It is linear over XOR, so `premix(y ^ k)` is
/// `premix(y) ^ premix(k)`: done once per shingle and once per function instead of once per pair.
#[inline(always)]
fn premix(h: u32) -> u32 {
    h ^ (h >> 16)
}

/// `fmix32(h)` given `premix(h)`.
#[inline(always)]
fn fmix32_rest(mut h: u32) -> u32 {
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// Lowers `minima[j]` to `fmix32(y ^ k_j)` for every shingle, given `ys` (their [`input32`]) and
/// `keys` (the [`premix`] of the `k_j`, padded to a multiple of 8): the hot loop. The functions are
/// taken 32 at a time (fewer for the last) and their minima stay in registers over all the
/// shingles, so that the compiler computes eight functions per vector instruction and touches
/// memory only to broadcast `y`.
#[inline(always)]
fn lower_minima(minima: &mut [u32], keys: &[u32], ys: &[u32]) {
    debug_assert!(minima.len() == keys.len() && keys.len() % 8 == 0);
    for (minima, keys) in minima.chunks_mut(32).zip(keys.chunks(32)) {
        match keys.len() {
            32 => lower_minima_of::<32>(minima, keys, ys),
            24 => lower_minima_of::<24>(minima, keys, ys),
            16 => lower_minima_of::<16>(minima, keys, ys),
            _ => lower_minima_of::<8>(minima, keys, ys),
        }
    }
}

/// [`lower_minima`] for `L` functions.
#[inline(always)]
fn lower_minima_of<const L: usize>(minima: &mut [u32], keys: &[u32], ys: &[u32]) {
    let keys: &[u32; L] = keys.try_into().expect("L keys");
    let minima: &mut [u32; L] = minima.try_into().expect("L minima");
    let mut low = *minima;
    for &y in ys {
        for (m, &k) in low.iter_mut().zip(keys) {
            *m = (*m).min(fmix32_rest(y ^ k));
        }
    }
    *minima = low;
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn lower_minima_avx2(minima: &mut [u32], keys: &[u32], ys: &[u32]) {
    lower_minima(minima, keys, ys)
}

/// [`lower_minima`] with AVX2 where the processor has it (the same results either way).
fn lower_minima_best(minima: &mut [u32], keys: &[u32], ys: &[u32]) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor supports AVX2, checked just above.
        unsafe { lower_minima_avx2(minima, keys, ys) };
        return;
    }
    lower_minima(minima, keys, ys)
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
    /// The [`premix`] of the `H·T` function keys, then zeros up to a multiple of 8 (padding whose
    /// minima are never read).
    functions: Vec<u32>,
    subsets: Vec<Vec<usize>>,
}

impl NearSigner {
    /// A signer for `params` (which [`NearParams::validate`] accepts).
    pub fn new(params: NearParams) -> Self {
        NearSigner {
            params,
            functions: {
                let count = params.hashes * params.trials;
                let mut keys: Vec<u32> = function_keys(count).into_iter().map(premix).collect();
                keys.resize(count.next_multiple_of(8), 0);
                keys
            },
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
        SCRATCH.with(|scratch| {
            let (hashes, ys) = &mut *scratch.borrow_mut();
            shingle_hashes(text, self.params.shingle, hashes);
            hashes.retain(|&h| !skip(h));
            self.sign_into(hashes, ys)
        })
    }

    /// The signature from the shingle hashes (steps 1 to 3 done; repeats allowed).
    pub fn sign_hashes(&self, hashes: &[u64]) -> Option<NearSignature> {
        self.sign_into(hashes, &mut Vec::new())
    }

    /// [`NearSigner::sign_hashes`] with a buffer for the 32-bit inputs.
    fn sign_into(&self, hashes: &[u64], ys: &mut Vec<u32>) -> Option<NearSignature> {
        if hashes.is_empty() {
            return None;
        }
        ys.clear();
        ys.extend(hashes.iter().map(|&x| input32(x)));
        let ys = &ys[..];
        let mut minima = vec![u32::MAX; self.functions.len()];
        lower_minima_best(&mut minima, &self.functions, ys);
        let h = self.params.hashes;
        let trials: Vec<i64> = minima[..h * self.params.trials]
            .chunks(h)
            .enumerate()
            .map(|(t, chunk)| {
                // At most 64 minima of 4 bytes.
                let mut bytes = [0u8; 256];
                for (b, m) in bytes.chunks_exact_mut(4).zip(chunk) {
                    b.copy_from_slice(&m.to_le_bytes());
                }
                xxh3_64_with_seed(&bytes[..4 * h], SEED ^ t as u64) as i64
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

thread_local! {
    /// Per signing thread: the shingle hashes of the text being signed, and their 32-bit inputs (a
    /// page's take some 10 KB; allocating them for every page showed in whole-run profiles).
    static SCRATCH: std::cell::RefCell<(Vec<u64>, Vec<u32>)> = const {
        std::cell::RefCell::new((Vec::new(), Vec::new()))
    };
}

/// The key of one subset of trials (step 6).
fn combination_key(subset: &[usize], trials: &[i64]) -> i64 {
    // At most 16 trials: 16 indices and 16 values of 8 bytes.
    let mut bytes = [0u8; 16 * 9];
    let a = subset.len();
    for (i, &s) in subset.iter().enumerate() {
        bytes[i] = s as u8;
        bytes[a + 8 * i..a + 8 * i + 8].copy_from_slice(&trials[s].to_le_bytes());
    }
    xxh3_64_with_seed(&bytes[..9 * a], SEED ^ 0xC0) as i64
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

    /// Steps 1 and 3 written plainly, character by character, for the fast scanner to be held to.
    fn plain_tokens(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut current = String::new();
        for c in text.chars() {
            if is_word_char(c) {
                current.push(c);
            } else if !current.is_empty() {
                out.push(current.to_lowercase());
                current.clear();
            }
        }
        if !current.is_empty() {
            out.push(current.to_lowercase());
        }
        out
    }

    fn plain_shingle_hashes(text: &str, n: usize) -> Vec<u64> {
        let n = n.clamp(1, 8);
        let words: Vec<u64> = plain_tokens(text)
            .iter()
            .map(|t| xxh3_64_with_seed(t.as_bytes(), SEED))
            .collect();
        let fold = |ws: &[u64]| ws.iter().fold(SEED, |x, &w| fmix(x ^ w));
        match words.len() {
            0 => Vec::new(),
            len if len < n => vec![fold(&words)],
            _ => words.windows(n).map(fold).collect(),
        }
    }

    /// The fast scanner gives what the plain definition gives, for every shingle length.
    fn check_against_plain(text: &str) {
        assert_eq!(tokens(text), plain_tokens(text), "tokens of {text:?}");
        let mut got = Vec::new();
        for n in 1..=8 {
            shingle_hashes(text, n, &mut got);
            assert_eq!(got, plain_shingle_hashes(text, n), "n = {n}, text {text:?}");
        }
    }

    #[test]
    fn the_fast_scanner_matches_the_plain_definition() {
        let samples = [
            "",
            " ",
            "a",
            "A",
            "7",
            "Hello, WORLD! 42x ½ Ⅻ straße İ日本",
            "ΟΔΟΣ ΟΔΟΣ. Σ ΑΣ σ ς",
            "İstanbul ıi IJ ǅemal ǈ Ǆ",
            "a½b x–y – e\u{301}t\u{301}é café CAFÉ Ærø São Zürich naïve",
            "١٢٣ ٤٥ 12٣ abc١ x² ³y",
            "emoji 😀 word😀word 😀😀 \u{200b}zero\u{200b}width",
            "tab\tnew\nline\r\ncr\u{0}nul\u{7f}del",
            "@[`{ aZ Za _underscore_ camelCase ALLCAPS 0x1F",
            "日本語のテキスト、と English mixed。中文字符",
        ];
        for s in samples {
            check_against_plain(s);
        }
        // Every token position and length across the 64-byte blocks, with and without capitals and
        // non-ASCII characters at either end.
        for pad in 0..140 {
            for word in [
                "x",
                "ab",
                "Word",
                "wordy",
                "Straße",
                "éa",
                "aé",
                "ÉÉ",
                "MIXEDcase",
            ] {
                let text = format!("{}{word}", " ".repeat(pad));
                check_against_plain(&text);
                check_against_plain(&format!("{text} tail"));
                check_against_plain(&format!("{text}{}", ",".repeat(pad % 7)));
                check_against_plain(&format!("{}{word}", "a".repeat(pad)));
            }
        }
        // Long tokens: past the stack buffer, past xxh3's short inputs, across many blocks.
        for len in [63, 64, 65, 129, 240, 241, 1000, 5000] {
            check_against_plain(&"a".repeat(len));
            check_against_plain(&"B".repeat(len));
            check_against_plain(&format!("x {}ß y", "Q".repeat(len)));
            check_against_plain(&format!("{}Σ", "Σ".repeat(len / 2)));
        }
        // A large page of mixed text.
        let page: String = (0..20_000)
            .map(|i| match i % 11 {
                0 => "Alpha ",
                1 => "beta, ",
                2 => "Köln ",
                3 => "1999 ",
                4 => "– ",
                5 => "ΣΟΦΟΣ ",
                6 => "x½y ",
                7 => "gamma\n",
                8 => "DELTA. ",
                9 => "日本 ",
                _ => "",
            })
            .collect();
        check_against_plain(&page);
    }

    #[test]
    fn the_short_token_hash_is_xxh3() {
        let mut x = SEED;
        for _ in 0..20_000 {
            x = fmix(x.wrapping_add(5));
            for len in 1..=8 {
                let word = x & (u64::MAX >> (64 - 8 * len));
                let want = xxh3_64_with_seed(&word.to_le_bytes()[..len], SEED);
                assert_eq!(short_token_hash(word, len), want, "{word:x}, {len} bytes");
            }
        }
    }

    #[test]
    fn the_split_finaliser_is_fmix32() {
        let mut x = SEED;
        for _ in 0..10_000 {
            x = fmix(x.wrapping_add(3));
            let (y, k) = (x as u32, (x >> 32) as u32);
            assert_eq!(fmix32_rest(premix(y) ^ premix(k)), fmix32(y ^ k));
        }
        // The vector loop against the plain one, for every padding of the last pass.
        let ys: Vec<u64> = (0..300u64).map(|i| fmix(i ^ SEED)).collect();
        for count in [1, 7, 8, 9, 31, 32, 33, 84, 100, 1024] {
            let keys = function_keys(count);
            let mut padded: Vec<u32> = keys.iter().map(|&k| premix(k)).collect();
            padded.resize(count.next_multiple_of(8), 0);
            let mut minima = vec![u32::MAX; padded.len()];
            let inputs: Vec<u32> = ys.iter().map(|&x| input32(x)).collect();
            lower_minima_best(&mut minima, &padded, &inputs);
            let plain: Vec<u32> = keys
                .iter()
                .map(|&k| {
                    ys.iter()
                        .map(|&x| fmix32((x ^ (x >> 32)) as u32 ^ k))
                        .min()
                        .unwrap()
                })
                .collect();
            assert_eq!(minima[..count], plain[..], "{count} functions");
        }
    }

    #[test]
    fn gathering_the_high_bits() {
        let mut x = SEED;
        for _ in 0..1000 {
            x = fmix(x.wrapping_add(1));
            let want = (0..8).fold(0, |m, b| m | ((x >> (8 * b + 7)) & 1) << b);
            assert_eq!(gather8(x & HIGH), want, "{x:x}");
        }
        for b in 0..=255u8 {
            let (word, care) = classify8(u64::from(b) << 24);
            let wide = b >= 0x80;
            assert_eq!(word != 0, b.is_ascii_alphanumeric() || wide, "{b}");
            assert_eq!(care != 0, b.is_ascii_uppercase() || wide, "{b}");
            assert_eq!((word | care) & !(0x80 << 24), 0, "{b}");
        }
    }

    #[test]
    fn both_classifiers_agree() {
        let mut x = SEED;
        for round in 0..2000 {
            let mut block = [0u8; 64];
            for (i, b) in block.iter_mut().enumerate() {
                // Every byte value at every position, then random blocks.
                *b = if round < 256 {
                    (round + 37 * i) as u8
                } else {
                    x = fmix(x.wrapping_add(1));
                    x as u8
                };
            }
            let (word, care) = classify(&block);
            assert_eq!((word, care), classify_swar(&block), "{block:?}");
            for (i, &b) in block.iter().enumerate() {
                let wide = b >= 0x80;
                assert_eq!(word >> i & 1 == 1, b.is_ascii_alphanumeric() || wide, "{b}");
                assert_eq!(care >> i & 1 == 1, b.is_ascii_uppercase() || wide, "{b}");
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]

        #[test]
        fn the_fast_scanner_matches_the_plain_definition_on_any_text(text in ".{0,300}") {
            check_against_plain(&text);
        }

        #[test]
        fn the_fast_scanner_matches_the_plain_definition_on_mixed_text(
            text in "[a-zA-Z0-9 ,.\\n_ΣσςΟοİıßẞÅåÄäÉé½–\u{301}日本😀١]{0,400}"
        ) {
            check_against_plain(&text);
        }
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
