//! Which shard of a SolrCloud collection holds a document: the `compositeId` router's hash, bit for
//! bit as Solr computes it (`org.apache.solr.common.cloud.CompositeIdRouter.sliceHash` and
//! `org.apache.solr.common.util.Hash.murmurhash3_x86_32`), and the shard whose hash range holds it.
//!
//! Pure: no I/O. The store ([`crate::store::solr`]) uses it to send each update to its shard's
//! leader; a mistake here would cost one hop (the leader forwards what is not its own), never a
//! document on the wrong shard.
//!
//! # The hash
//!
//! MurmurHash3 x86_32 with seed 0 over the UTF-8 bytes of the id. Solr hashes a Java `String`
//! without encoding it first, writing an unpaired surrogate as three bytes; a Rust `str` holds none,
//! so its UTF-8 bytes are what Solr hashes.
//!
//! An id with a `!` is split into at most three parts (`route!id`, `app!user!id`); each part is
//! hashed and the result takes its top bits from the first part, and so on:
//!
//! | id            | parts             | bits taken from each part        |
//! |---------------|-------------------|----------------------------------|
//! | `doc-1`       | `doc-1`           | 32                               |
//! | `a!b`         | `a`, `b`          | 16 (top), 16                     |
//! | `a/8!b`       | `a`, `b`          | 8, 24                            |
//! | `a!b!c`       | `a`, `b`, `c`     | 8, 8, 16                         |
//! | `a/4!b/4!c`   | `a`, `b`, `c`     | 4, 4, 24                         |
//! | `a!b!c!d`     | `a`, `b`, `c!d`   | 8, 8, 16 (a third `!` is text)   |
//! | `a!` / `a!b!` | `a`, `` / `a`,`b`,`` | an id ending in `!` gets an empty last part |
//!
//! Edge cases kept as Solr has them: a bit count over 32 or with a non-digit (`a/x!b`) is `-1`,
//! which Java's shifts (modulo 32) turn into odd masks; `/8!b` (nothing before the `/`) is no bit
//! count; `a!!` has two parts. The test vectors were printed by Solr 9.10's own classes.

/// Solr's `Hash.murmurhash3_x86_32` over `data` with `seed`.
pub fn murmurhash3_x86_32(data: &[u8], seed: u32) -> i32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mut h1 = seed;
    let mut blocks = data.chunks_exact(4);
    for block in &mut blocks {
        let mut k1 = u32::from_le_bytes([block[0], block[1], block[2], block[3]]);
        k1 = k1.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        h1 ^= k1;
        h1 = h1.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let mut k1 = 0u32;
        for (i, &b) in tail.iter().enumerate() {
            k1 |= u32::from(b) << (8 * i);
        }
        k1 = k1.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        h1 ^= k1;
    }
    h1 ^= data.len() as u32;
    h1 ^= h1 >> 16;
    h1 = h1.wrapping_mul(0x85eb_ca6b);
    h1 ^= h1 >> 13;
    h1 = h1.wrapping_mul(0xc2b2_ae35);
    h1 ^= h1 >> 16;
    h1 as i32
}

fn hash(s: &str) -> i32 {
    murmurhash3_x86_32(s.as_bytes(), 0)
}

/// Java's `-1 << n` (the shift count taken modulo 32).
fn shl_ones(n: i32) -> i32 {
    (-1i32).wrapping_shl(n as u32)
}

/// `CompositeIdRouter.KeyParser.getNumBits`: the digits after the `/`, `-1` when one is not a digit
/// or the number is over 32 (Java's int arithmetic, wrapping).
fn num_bits(digits: &str) -> i32 {
    let mut v: i32 = 0;
    for b in digits.bytes() {
        if !b.is_ascii_digit() {
            return -1;
        }
        v = v.wrapping_mul(10).wrapping_add(i32::from(b - b'0'));
    }
    if v > 32 {
        -1
    } else {
        v
    }
}

/// The hash the `compositeId` router gives `id` (`CompositeIdRouter.sliceHash` without a
/// `router.field`).
pub fn composite_id_hash(id: &str) -> i32 {
    let Some(first) = id.find('!') else {
        return hash(id);
    };
    // The parts, as KeyParser cuts them.
    let mut parts: Vec<&str> = vec![&id[..first]];
    let last = id.len() - 1;
    if first < last {
        match id[first + 1..].find('!').map(|p| p + first + 1) {
            None => parts.push(&id[first + 1..]),
            Some(second) if second == last => {
                if first < second - 1 {
                    parts.push(&id[first + 1..second]);
                }
            }
            Some(second) => {
                parts.push(&id[first + 1..second]);
                parts.push(&id[second + 1..]);
            }
        }
    }
    let mut pieces = parts.len();
    if id.ends_with('!') && pieces < 3 {
        pieces += 1;
    }
    let tri = pieces == 3;
    let mut bits: [i32; 2] = if tri { [8, 8] } else { [16, 0] };
    // An id ending in `!` has an empty last part.
    let hashes: Vec<i32> = (0..pieces)
        .map(|i| {
            let mut part = parts.get(i).copied().unwrap_or("");
            if i < pieces - 1 {
                if let Some(slash) = part.find('/').filter(|&p| p > 0) {
                    bits[i] = num_bits(&part[slash + 1..]);
                    part = &part[..slash];
                }
            }
            hash(part)
        })
        .collect();
    let masks: Vec<i32> = if tri {
        let (a, b) = (bits[0], bits[1]);
        let m0 = if a == 0 { 0 } else { shl_ones(32 - a) };
        let m1 = (if a + b == 0 { 0 } else { shl_ones(32 - a - b) }) ^ m0;
        let m2 = if a + b == 32 { 0 } else { !(m0 | m1) };
        vec![m0, m1, m2]
    } else {
        let a = bits[0];
        let m0 = if a == 0 { 0 } else { shl_ones(32 - a) };
        let m1 = if a == 32 {
            0
        } else {
            ((-1i32 as u32).wrapping_shr(a as u32)) as i32
        };
        vec![m0, m1]
    };
    hashes
        .iter()
        .zip(&masks)
        .fold(0, |acc, (h, m)| acc | (h & m))
}

/// The index of the range in `ranges` (inclusive, signed, as in the cluster state) that holds
/// `hash`; `None` when none does (a range not listed, a layout being changed).
pub fn shard_of(hash: i32, ranges: &[(i32, i32)]) -> Option<usize> {
    ranges.iter().position(|&(lo, hi)| lo <= hash && hash <= hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Printed by Solr 9.10.1's own `CompositeIdRouter.sliceHash(id, null, null, null)` (the
    /// solrj jar the test launcher runs), not by this code.
    const SOLR: &[(&str, i32)] = &[
        ("", 0),
        ("a", 1009084850),
        ("abc", -1277324294),
        ("abcd", 1139631978),
        ("abcde", -392455434),
        ("doc-1", -20795890),
        ("http://www.example.com/a/b?c=d#e", -289747886),
        ("https://de.wikipedia.org/wiki/Straße", 782255612),
        ("日本語", -1515949417),
        ("emoji😘x", 1455425590),
        ("a!b", 1009090051),
        ("a!", 1009057792),
        ("!b", 32259),
        ("!", 0),
        ("!!", 0),
        ("a!!", 1009057792),
        ("a!b!", 1021181952),
        ("a!b!c", 1021236831),
        ("a!b!c!d", 1021210739),
        ("a/8!b", 1021214211),
        ("a/0!b", -1780580861),
        ("a/16!b", 1009090051),
        ("a/32!b", 1009084850),
        ("a/33!b", 1009084851),
        ("a/x!b", 1009084851),
        ("a/!b", -1780580861),
        ("/8!b", 1950973443),
        ("a/4!b/4!c", 892524127),
        ("a/4!b!c", 903009887),
        ("a!b/4!c", 1020450399),
        ("a/8!b!", 1021181952),
        ("user!uniqueid", -1785445026),
        ("contact!0000000KISS", -541334944),
        ("http://ex.com/p?x=1!2", 683221523),
        ("http://ex.com/!/a!b!c/d", 704478995),
    ];

    #[test]
    fn the_hash_is_solrs() {
        for &(id, want) in SOLR {
            assert_eq!(composite_id_hash(id), want, "{id:?}");
        }
    }

    #[test]
    fn murmur3_reference_vectors() {
        // The reference implementation's (SMHasher) published values for seed 0 and 1.
        assert_eq!(murmurhash3_x86_32(b"", 0), 0);
        assert_eq!(murmurhash3_x86_32(b"", 1) as u32, 0x514e_28b7);
        assert_eq!(murmurhash3_x86_32(b"hello", 0) as u32, 0x248b_fa47);
        assert_eq!(
            murmurhash3_x86_32(b"The quick brown fox jumps over the lazy dog", 0) as u32,
            0x2e4f_f723
        );
    }

    #[test]
    fn the_range_that_holds_a_hash() {
        let two = [(i32::MIN, -1), (0, i32::MAX)];
        assert_eq!(shard_of(i32::MIN, &two), Some(0));
        assert_eq!(shard_of(-1, &two), Some(0));
        assert_eq!(shard_of(0, &two), Some(1));
        assert_eq!(shard_of(i32::MAX, &two), Some(1));
        assert_eq!(shard_of(5, &[(i32::MIN, -1)]), None);
    }
}
