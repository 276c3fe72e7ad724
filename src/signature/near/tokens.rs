//! Steps 1 to 3 of the definition (see the parent module): tokens, shingles and their hashes, with
//! the fast scanner (64-byte blocks classified into bit masks) and the plain routes it is held to.

use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::table::{is_word_char, lowercase};
use super::{fmix, SEED};

/// The tokens of a text (step 1).
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    each_token(text, &mut out);
    out
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
/// by the tables when it has a non-ASCII character (final sigma needs the whole word).
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
                f.token(lowercase(&run[s..i]).as_bytes());
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        f.token(lowercase(&run[s..]).as_bytes());
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
// One of the two places the crate allows unsafe code: the SSE2 intrinsics.
#[allow(unsafe_code)]
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
                out.push(lowercase(&current));
                current.clear();
            }
        }
        if !current.is_empty() {
            out.push(lowercase(&current));
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
}
