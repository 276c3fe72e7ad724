//! Calibrated probabilities for predictions: how likely a pair of URLs that differ only in a part a
//! rule removes serves the same page, from the rule's counts, instead of the pessimistic estimate
//! that decides whether the rule applies at all. Pure.
//!
//! # The model
//!
//! A URL part either does not change the page (the rule *holds*), and then a pair that differs in
//! it has the same content except for noise (a page that changed between two fetches, a near
//! duplicate split) at rate `epsilon`; or it matters, and the pair's chance of the same content is
//! anything between 0 and 1 (uniform). `pi` is the share of the index's candidate parts that hold.
//! For a part with `s` same-content pairs of `n`, Bayes' rule gives the chance it holds,
//!
//! ```text
//! P(holds) = pi·(1−ε)^s·ε^(n−s) / (pi·(1−ε)^s·ε^(n−s) + (1−pi)·B(s+1, n−s+1))
//! ```
//!
//! (the binomial coefficient cancels; `B` is the Beta function, the uniform prior's marginal), and
//! the chance the next pair serves the same page is `P(holds)·(1−ε) + (1−P(holds))·(s+1)/(n+2)`.
//!
//! # Calibrated by cross-validation
//!
//! `pi` and `epsilon` are chosen on the index's own pairs by leave-one-pair-out cross-validation:
//! every pair of every candidate is predicted from the other pairs of its candidate, and the pair
//! of parameters with the smallest log loss over all held-out pairs wins (a grid search; the loss is
//! computed from the counts alone). [`Fit`] keeps the held-out Brier score and log loss beside the
//! pessimistic estimate's, so that `urls learn` can say what calibration bought. The same held-out
//! losses chose the parameters, so the calibrated score is slightly optimistic; the evaluation on
//! separate crawls (`tools/urls-eval`) is the one to trust.

use serde::{Deserialize, Serialize};

/// The fitted parameters (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    /// The share of candidate parts that do not change the page.
    pub pi: f64,
    /// The rate of different content among pairs of a part that does not change the page.
    pub epsilon: f64,
}

/// A fit and how it did on held-out pairs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Fit {
    /// The parameters chosen.
    pub calibration: Calibration,
    /// Held-out pairs (every pair of every candidate with two or more).
    pub pairs: u64,
    /// Mean squared error of the calibrated probability on the held-out pairs.
    pub brier: f64,
    /// The same for the pessimistic estimate ([`super::pessimistic`]), for comparison.
    pub brier_pessimistic: f64,
    /// Mean log loss of the calibrated probability on the held-out pairs.
    pub log_loss: f64,
}

impl Calibration {
    /// The chance that a pair differing in a part with `support` same-content pairs and `against`
    /// others serves the same page.
    pub fn probability(&self, support: u64, against: u64) -> f64 {
        let (s, a) = (support as f64, against as f64);
        let (pi, eps) = (self.pi, self.epsilon);
        // In logs: (1−ε)^s ε^a can underflow for thousands of pairs.
        let holds = pi.ln() + s * (1.0 - eps).ln() + a * eps.ln();
        let matters = (1.0 - pi).ln() + ln_beta(s + 1.0, a + 1.0);
        let p_holds = 1.0 / (1.0 + (matters - holds).exp());
        let p = p_holds * (1.0 - eps) + (1.0 - p_holds) * (s + 1.0) / (s + a + 2.0);
        p.clamp(0.0, 1.0)
    }
}

/// `ln B(x, y)`, through `ln Γ`.
fn ln_beta(x: f64, y: f64) -> f64 {
    ln_gamma(x) + ln_gamma(y) - ln_gamma(x + y)
}

/// `ln Γ(x)` for `x > 0` (Lanczos, g = 7, n = 9; relative error below 1e-13 on the range used).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1−x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The grid the fit searches: `pi` and `epsilon`.
const PIS: [f64; 11] = [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95];
const EPSILONS: [f64; 11] = [
    0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2,
];

/// Used when the index has too few pairs to choose (fewer than [`MIN_PAIRS`]).
pub const DEFAULT: Calibration = Calibration {
    pi: 0.5,
    epsilon: 0.01,
};

/// Fewer held-out pairs than this: [`DEFAULT`] stands.
pub const MIN_PAIRS: u64 = 50;

/// Chooses `pi` and `epsilon` by leave-one-pair-out cross-validation over the candidates' counts
/// `(support, against)` (see the module docs).
pub fn fit(counts: &[(u64, u64)]) -> Fit {
    let held_out: u64 = counts
        .iter()
        .filter(|(s, a)| s + a >= 2)
        .map(|(s, a)| s + a)
        .sum();
    let score = |c: &Calibration| loo(counts, |s, a| c.probability(s, a));
    let calibration = if held_out < MIN_PAIRS {
        DEFAULT
    } else {
        let mut best = (f64::INFINITY, DEFAULT);
        for &pi in &PIS {
            for &epsilon in &EPSILONS {
                let c = Calibration { pi, epsilon };
                let (_, log_loss) = score(&c);
                if log_loss < best.0 {
                    best = (log_loss, c);
                }
            }
        }
        best.1
    };
    let (brier, log_loss) = score(&calibration);
    let (brier_pessimistic, _) = loo(counts, super::pessimistic);
    Fit {
        calibration,
        pairs: held_out,
        brier,
        brier_pessimistic,
        log_loss,
    }
}

/// Leave-one-pair-out over `counts`: each pair predicted by `p` from the rest of its candidate;
/// the mean Brier score and log loss over the held-out pairs (candidates with two or more).
fn loo(counts: &[(u64, u64)], p: impl Fn(u64, u64) -> f64) -> (f64, f64) {
    let (mut n, mut brier, mut log_loss) = (0.0, 0.0, 0.0);
    for &(s, a) in counts.iter().filter(|(s, a)| s + a >= 2) {
        if s > 0 {
            // A same-content pair held out.
            let q = p(s - 1, a);
            brier += s as f64 * (1.0 - q).powi(2);
            log_loss -= s as f64 * q.max(1e-12).ln();
        }
        if a > 0 {
            let q = p(s, a - 1);
            brier += a as f64 * q.powi(2);
            log_loss -= a as f64 * (1.0 - q).max(1e-12).ln();
        }
        n += (s + a) as f64;
    }
    if n == 0.0 {
        return (0.0, 0.0);
    }
    (brier / n, log_loss / n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ln_gamma_meets_known_values() {
        // Γ(1) = Γ(2) = 1, Γ(5) = 24, Γ(0.5) = √π.
        assert!(ln_gamma(1.0).abs() < 1e-12);
        assert!(ln_gamma(2.0).abs() < 1e-12);
        assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-12);
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-12);
        // B(1, 1) = 1, B(2, 3) = 1/12.
        assert!(ln_beta(1.0, 1.0).abs() < 1e-12);
        assert!((ln_beta(2.0, 3.0) - (1.0f64 / 12.0).ln()).abs() < 1e-12);
    }

    #[test]
    fn the_probability_by_hand() {
        // pi 0.5, epsilon 0.01, 24 of 24: holds 0.99^24 = 0.785678, matters B(25, 1) = 1/25;
        // P(holds) = 0.785678 / (0.785678 + 0.04) = 0.951561; 0.951561 · 0.99 + 0.048439 · 25/26.
        let p = DEFAULT.probability(24, 0);
        let want = 0.951_561 * 0.99 + 0.048_439 * 25.0 / 26.0;
        assert!((p - want).abs() < 1e-5, "{p} {want}");
        assert!(
            p >= 0.98,
            "consistent evidence of 24 pairs reaches 0.98: {p}"
        );
        // 5 of 10: matters, about (5 + 1) / 12.
        let p = DEFAULT.probability(5, 5);
        assert!((p - 0.5).abs() < 0.01, "{p}");
        // No pairs: the prior's mean, 0.5 · 0.99 + 0.5 · 0.5.
        assert!((DEFAULT.probability(0, 0) - 0.745).abs() < 1e-9);
        // Thousands of pairs do not underflow.
        let p = DEFAULT.probability(100_000, 1_000);
        assert!(p.is_finite() && p > 0.98, "{p}");
    }

    #[test]
    fn more_agreeing_pairs_never_lower_the_probability() {
        let c = Calibration {
            pi: 0.3,
            epsilon: 0.02,
        };
        for against in 0..4 {
            let mut last = 0.0;
            for support in 0..200 {
                let p = c.probability(support, against);
                assert!(p + 1e-12 >= last, "{support}/{against}: {p} < {last}");
                last = p;
            }
        }
    }

    #[test]
    fn cross_validation_recovers_the_rates_of_a_known_index_and_beats_the_pessimistic_estimate() {
        // 70 % of parts hold with 2 % noise; the rest keep the page at rates spread over [0, 1].
        // Counts drawn deterministically (a fixed linear congruential sequence).
        let mut seed = 12_345u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut counts = Vec::new();
        for i in 0..400 {
            let n = 5 + (i % 40) as u64;
            let rate = if next() < 0.7 { 0.98 } else { next() };
            let s = (0..n).filter(|_| next() < rate).count() as u64;
            counts.push((s, n - s));
        }
        let f = fit(&counts);
        assert!(
            (0.6..=0.8).contains(&f.calibration.pi),
            "{:?}",
            f.calibration
        );
        assert!(
            (0.01..=0.05).contains(&f.calibration.epsilon),
            "{:?}",
            f.calibration
        );
        assert!(f.brier < f.brier_pessimistic, "{f:?}");
    }

    #[test]
    fn too_few_pairs_keep_the_default() {
        let f = fit(&[(6, 0), (24, 0)]);
        assert_eq!(f.calibration, DEFAULT);
        assert_eq!(f.pairs, 30);
    }
}
