//! Steps 4 and 5 of the definition (see the parent module): the hash functions' keys and the
//! minima over a page's shingle hashes, eight functions per vector instruction.

use super::{fmix, SEED};

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
pub(super) fn function_keys(count: usize) -> Vec<u32> {
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
pub(super) fn input32(x: u64) -> u32 {
    premix((x ^ (x >> 32)) as u32)
}

/// `fmix32`'s first step, `h ^ (h >> 16)`. It is linear over XOR, so `premix(y ^ k)` is
/// `premix(y) ^ premix(k)`: done once per shingle and once per function instead of once per pair.
#[inline(always)]
pub(super) fn premix(h: u32) -> u32 {
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
    debug_assert!(minima.len() == keys.len() && keys.len().is_multiple_of(8));
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
// One of the two places the crate allows unsafe code: calling the AVX2 build after the check.
#[allow(unsafe_code)]
pub(super) fn lower_minima_best(minima: &mut [u32], keys: &[u32], ys: &[u32]) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor supports AVX2, checked just above.
        unsafe { lower_minima_avx2(minima, keys, ys) };
        return;
    }
    lower_minima(minima, keys, ys)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
