//! The iteration order of a `java.util.HashMap<String, _>`, computed without building one.
//!
//! YaCy and Solr collect profile tokens in a `HashMap` and then sort them with a *stable* sort, so tokens
//! with equal counts come out in the map's iteration order. Reproducing the signature bit for bit means
//! reproducing that order:
//!
//! - `h = String.hashCode()` (Σ unit·31^(n-1-i) over UTF-16 units, wrapping `i32`), `spread = h ^ (h >>> 16)`;
//! - the table starts at 16 buckets and doubles whenever the size exceeds 0.75 × buckets, so its final
//!   size is the smallest `16·2^k` with `distinct ≤ 12·2^k` (resizing never shrinks);
//! - iteration walks buckets by ascending index `spread & (buckets - 1)`; within a bucket keys keep their
//!   insertion order, which Java 8+'s split-on-resize preserves.
//!
//! | distinct keys | buckets |
//! |---------------|---------|
//! | 1..=12        | 16      |
//! | 13..=24       | 32      |
//! | 25..=48       | 64      |
//! | 49..=96       | 128     |
//!
//! Known limit: Java turns a bucket of 9 or more keys into a tree (or resizes the table instead, below
//! 64 buckets). That takes deliberately colliding tokens; it is not emulated.

/// Java's `String.hashCode()` over UTF-16 units.
pub fn java_string_hash(units: &[u16]) -> i32 {
    units
        .iter()
        .fold(0i32, |h, &u| h.wrapping_mul(31).wrapping_add(i32::from(u)))
}

/// `HashMap.hash()`: the high half folded into the low half.
pub fn spread(hash: i32) -> u32 {
    let h = hash as u32;
    h ^ (h >> 16)
}

/// The number of buckets a `HashMap` with default settings has after `distinct` insertions.
pub fn table_size(distinct: usize) -> usize {
    let mut buckets = 16usize;
    while distinct > buckets / 4 * 3 {
        buckets *= 2;
    }
    buckets
}

/// The bucket a key with `hash` occupies in a table of `buckets` (a power of two).
pub fn bucket(hash: i32, buckets: usize) -> usize {
    (spread(hash) as usize) & (buckets - 1)
}

/// Iteration order of a map filled with `hashes` in order (one per distinct key, first insertion first):
/// the indices into `hashes`, in the order Java would iterate them.
pub fn iteration_order(hashes: &[i32]) -> Vec<usize> {
    let buckets = table_size(hashes.len());
    let mut order: Vec<usize> = (0..hashes.len()).collect();
    // A stable sort by bucket keeps insertion order inside each bucket.
    order.sort_by_key(|&i| bucket(hashes[i], buckets));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utf16(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    /// A literal Java 8 `HashMap`: insert with chaining, resize by splitting each bucket into a low and a
    /// high list in order. The trivially slow model the closed form above must agree with.
    fn simulate(hashes: &[i32]) -> Vec<usize> {
        let mut table: Vec<Vec<usize>> = vec![Vec::new(); 16];
        let mut size = 0;
        for (i, &h) in hashes.iter().enumerate() {
            let n = table.len();
            table[(spread(h) as usize) & (n - 1)].push(i);
            size += 1;
            if size > n * 3 / 4 {
                let mut next: Vec<Vec<usize>> = vec![Vec::new(); n * 2];
                for (j, chain) in table.iter().enumerate() {
                    for &k in chain {
                        let hi = (spread(hashes[k]) as usize) & n != 0;
                        next[if hi { j + n } else { j }].push(k);
                    }
                }
                table = next;
            }
        }
        table.into_iter().flatten().collect()
    }

    #[test]
    fn string_hash_matches_java() {
        // Values printed by Java's "…".hashCode().
        assert_eq!(java_string_hash(&utf16("")), 0);
        assert_eq!(java_string_hash(&utf16("a")), 97);
        assert_eq!(java_string_hash(&utf16("date")), 3076014);
        assert_eq!(java_string_hash(&utf16("apple")), 93029210);
        assert_eq!(java_string_hash(&utf16("polygenelubricants")), i32::MIN);
    }

    #[test]
    fn table_sizes_at_every_resize() {
        for (distinct, want) in [
            (0, 16),
            (12, 16),
            (13, 32),
            (24, 32),
            (25, 64),
            (48, 64),
            (49, 128),
            (96, 128),
            (97, 256),
        ] {
            assert_eq!(table_size(distinct), want, "distinct {distinct}");
        }
    }

    #[test]
    fn spec_example_date_before_apple() {
        let hashes = [
            java_string_hash(&utf16("apple")),
            java_string_hash(&utf16("date")),
        ];
        assert_eq!(bucket(hashes[0], 16), 1);
        assert_eq!(bucket(hashes[1], 16), 0);
        assert_eq!(iteration_order(&hashes), vec![1, 0]);
    }

    /// Ground truth from a real `java.util.HashMap` (tools/java-chars/GenHashMapOrder.java), with key sets
    /// on both sides of every resize up to 400 keys and with keys sharing one bucket.
    #[test]
    fn order_matches_a_real_java_hashmap() {
        #[derive(serde::Deserialize)]
        struct Case {
            keys: Vec<String>,
            order: Vec<String>,
        }
        let text = include_str!("../../tests/fixtures/java-hashmap-order.jsonl");
        let mut checked = 0;
        for line in text.lines() {
            let case: Case = serde_json::from_str(line).unwrap();
            let hashes: Vec<i32> = case
                .keys
                .iter()
                .map(|k| java_string_hash(&utf16(k)))
                .collect();
            let got: Vec<&str> = iteration_order(&hashes)
                .into_iter()
                .map(|i| case.keys[i].as_str())
                .collect();
            assert_eq!(got, case.order, "{} keys", case.keys.len());
            checked += 1;
        }
        assert_eq!(checked, 64);
    }

    proptest::proptest! {
        #[test]
        fn closed_form_equals_a_simulated_hashmap(hashes in proptest::collection::vec(proptest::num::i32::ANY, 0..300)) {
            proptest::prop_assert_eq!(iteration_order(&hashes), simulate(&hashes));
        }

        #[test]
        fn closed_form_equals_simulation_with_clustered_hashes(low in proptest::collection::vec(0i32..8, 0..120)) {
            // Hashes that only differ in a few bits: heavy ties inside buckets, across every resize.
            let hashes: Vec<i32> = low.iter().enumerate().map(|(i, l)| l | ((i as i32 % 4) << 5)).collect();
            proptest::prop_assert_eq!(iteration_order(&hashes), simulate(&hashes));
        }
    }
}
