//! Bob Jenkins' lookup3 hash in the 64-bit form Solr ships as `Hash.lookup3ycs64`, which YaCy uses for
//! `exact_signature_l`, `fuzzy_signature_l` and the title and description signatures.
//!
//! The hash runs over the text as Java sees it: UTF-16 code units, except that a high surrogate followed
//! by another unit is folded with it into one code point. A Rust `str` is valid UTF-16 once encoded, so
//! every value fed to the hash is exactly one `char` as `u32`; no UTF-16 buffer is ever built.
//!
//! | input            | values fed            | rounds                  |
//! |------------------|-----------------------|-------------------------|
//! | `""`             | none                  | none: `0xdeadbeeedeadbeef` |
//! | `"abc"`          | 0x61 0x62 0x63        | final                   |
//! | `"abcd"`         | 0x61 0x62 0x63 0x64   | mix, final              |
//! | `"😀"`           | 0x1F600 (one value)   | final                   |
//!
//! The result is `(c as i32 as i64) + ((b as u32 as i64) << 32)`: `c` is sign-extended before the add,
//! exactly as Java's `c + (((long) b) << 32)` with an `int c` does. Changing any of this changes every
//! persisted signature, so the function is pinned by the vectors of `signatures.md` in the tests below.
//!
//! Reference: Solr `org.apache.solr.common.util.Hash#lookup3ycs64`, after
//! <http://burtleburtle.net/bob/c/lookup3.c>.

const GOLDEN: u32 = 0xdead_beef;

#[inline(always)]
fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *a = a.wrapping_sub(*c);
    *a ^= c.rotate_left(4);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a);
    *b ^= a.rotate_left(6);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b);
    *c ^= b.rotate_left(8);
    *b = b.wrapping_add(*a);
    *a = a.wrapping_sub(*c);
    *a ^= c.rotate_left(16);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a);
    *b ^= a.rotate_left(19);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b);
    *c ^= b.rotate_left(4);
    *b = b.wrapping_add(*a);
}

#[inline(always)]
fn final_round(a: &mut u32, b: &mut u32, c: &mut u32) {
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(14));
    *a ^= *c;
    *a = a.wrapping_sub(c.rotate_left(11));
    *b ^= *a;
    *b = b.wrapping_sub(a.rotate_left(25));
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(16));
    *a ^= *c;
    *a = a.wrapping_sub(c.rotate_left(4));
    *b ^= *a;
    *b = b.wrapping_sub(a.rotate_left(14));
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(24));
}

/// Hashes a sequence of lookup3 *values* (code points, see the module doc) with a 64-bit `initval`.
///
/// This is the core every public function here shares; it is public so that callers holding text in
/// another shape (a profile assembled on the fly) need not build a `String` first.
pub fn lookup3ycs64_values<I: IntoIterator<Item = u32>>(values: I, initval: u64) -> i64 {
    let mut a = GOLDEN.wrapping_add(initval as u32);
    let mut b = a;
    let mut c = a.wrapping_add((initval >> 32) as u32);
    let mut it = values.into_iter();
    if let Some(mut v) = it.next() {
        loop {
            a = a.wrapping_add(v);
            let Some(v2) = it.next() else { break };
            b = b.wrapping_add(v2);
            let Some(v3) = it.next() else { break };
            c = c.wrapping_add(v3);
            let Some(next) = it.next() else { break };
            mix(&mut a, &mut b, &mut c);
            v = next;
        }
        final_round(&mut a, &mut b, &mut c);
    }
    (c as i32 as i64).wrapping_add(((b as u64) << 32) as i64)
}

/// `lookup3ycs64(s, initval)`: the hash of one string.
pub fn lookup3ycs64(s: &str, initval: u64) -> i64 {
    // ASCII is the common case for crawled text and lets the loop read bytes directly, which is several
    // times faster than decoding chars; the value sequence is identical.
    if s.is_ascii() {
        lookup3ycs64_values(s.bytes().map(u32::from), initval)
    } else {
        lookup3ycs64_values(s.chars().map(u32::from), initval)
    }
}

/// Chained hash over several strings: each is hashed with the previous result as `initval`, starting
/// from 0. This is how YaCy signs a list of descriptions; it is not the hash of the concatenation.
pub fn lookup3ycs64_chained<'a, I: IntoIterator<Item = &'a str>>(strings: I) -> i64 {
    strings
        .into_iter()
        .fold(0i64, |acc, s| lookup3ycs64(s, acc as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_vectors_from_the_spec() {
        let cases: &[(&str, i64)] = &[
            ("", -2401053093171183889),
            ("a", 6580303088314554544),
            ("abc", 2457236392649380105),
            ("abcd", -1536488273823155229),
            ("hello world", -6533976092579615214),
            ("Hello World", -6910252017529009057),
            (
                "The quick brown fox jumps over the lazy dog",
                4976671508721419908,
            ),
            ("Grüße aus Köln", 4742056712392629552),
            ("😀 emoji", 1388799410959769494),
        ];
        for (text, want) in cases {
            assert_eq!(lookup3ycs64(text, 0), *want, "text {text:?}");
        }
        assert_eq!(lookup3ycs64("", 0) as u64, 0xdead_beee_dead_beef);
    }

    #[test]
    fn chained_vectors_from_the_spec() {
        assert_eq!(
            lookup3ycs64_chained(["first description", "second description"]),
            -6252947182592522076
        );
        assert_eq!(lookup3ycs64_chained(["a", "b", "c"]), 6721152593147771285);
    }

    /// Solr's own unit test for the 32-bit `lookup3ycs`, which is the low word of the 64-bit form.
    #[test]
    fn solr_lookup3ycs_test_vector() {
        let want: [u32; 11] = [
            0xc4c20dd5, 0x3ab04cc3, 0xebe874a3, 0x0e770ef3, 0xec321498, 0x73845e86, 0x8a2db728,
            0x03c313bb, 0xfe5b9199, 0x95965125, 0xcbc4e7c2,
        ];
        let s = "hello world";
        for (i, want) in want.iter().enumerate() {
            let len = i + 1;
            let initval = (i as u32)
                .wrapping_mul(12345)
                .wrapping_add((len as u32) << 2);
            let got = lookup3ycs64(&s[..len], u64::from(initval)) as u32;
            assert_eq!(got, *want, "len {len}");
        }
    }

    #[test]
    fn ascii_fast_path_matches_the_char_path() {
        for s in [
            "",
            "a",
            "ab",
            "abc",
            "abcd",
            "abcdefghijklmnopqrstuvwxyz0123456789",
        ] {
            let by_chars = lookup3ycs64_values(s.chars().map(u32::from), 7);
            assert_eq!(lookup3ycs64(s, 7), by_chars);
        }
    }
}
