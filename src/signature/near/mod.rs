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
//!    `Lt`, `Lm`, `Lo`) or a decimal digit (`Nd`), each lower-cased as Rust's `str::to_lowercase`
//!    does (the full mapping, final sigma included). Both by the tables checked in as
//!    `unicode/near-v1.txt` (categories of Unicode 16.0 as `unicode-general-category` 1.1 has
//!    them, mappings of Unicode 17.0 as Rust 1.95's std has them), which the Solr plugin reads
//!    too: neither side moves with its runtime's Unicode version. A text is blank when it has
//!    only the white space listed there.
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

use xxhash_rust::xxh3::xxh3_64_with_seed;

mod minima;
mod table;
mod tokens;

use minima::{function_keys, input32, lower_minima_best, premix};
pub use table::is_blank;
pub use tokens::{shingle_hashes, shingles, tokens};

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

/// The SplitMix64 finaliser: a bijection of `u64`.
fn fmix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
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

    /// The signature of a text without the shingles whose hash `skip` names, or
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
