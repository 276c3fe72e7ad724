//! How a run reports its progress: the engine says which phase it is in, how many documents it
//! expects the phase to go through when it knows, and how many it has gone through; the command
//! layer draws that (a progress bar on a terminal, the server's page) or shows nothing.
//!
//! What every view shows is worked out here, once ([`Meter`]): a count never runs past its total
//! (a phase may read a few documents more than expected, such as pages indexed during the run), the
//! ETA follows from the rate, and numbers are written with thousands separators.

/// The steps of a run, and of the learners on the engine's readers, in the order they come, as
/// progress and the report name them (the report's `phases_ms` keys, serve's `phase`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    /// A run reads the index (a chrome learner too): signatures and keys of every document.
    Scan,
    /// A run joins the near-duplicate keys.
    Near,
    /// A run ranks each group's members.
    Rank,
    /// A run writes its updates.
    Write,
    /// A run commits them.
    Commit,
    /// `chrome learn` reads each site's sample of texts.
    Sample,
    /// `urls learn` reads the URLs.
    Read,
    /// `urls learn` pairs the URLs of the same content.
    Pairs,
    /// `urls learn` derives the rules.
    Rules,
    /// The index of canonical forms is built (`urls predict`, serve's predictions).
    Index,
}

impl Phase {
    /// The name the report, the API and the progress line use.
    pub const fn name(self) -> &'static str {
        match self {
            Phase::Scan => "scan",
            Phase::Near => "near",
            Phase::Rank => "rank",
            Phase::Write => "write",
            Phase::Commit => "commit",
            Phase::Sample => "sample",
            Phase::Read => "read",
            Phase::Pairs => "pairs",
            Phase::Rules => "rules",
            Phase::Index => "index",
        }
    }

    /// The phases of a run in order, with the share of the whole run each one's bar covers.
    const RUN: [(Phase, f64); 4] = [
        (Phase::Scan, 0.5),
        (Phase::Near, 0.1),
        (Phase::Rank, 0.2),
        (Phase::Write, 0.2),
    ];
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A receiver of a run's progress. Called from the engine's task; cheap calls only.
pub trait Progress: Send + Sync {
    /// A phase begins; its count starts from 0.
    fn phase(&self, phase: Phase);
    /// The current phase goes through about `documents` documents (called after
    /// [`Progress::phase`] when the engine knows: its own total, not the index's).
    fn expect(&self, _documents: u64) {}
    /// `n` more documents of the current phase are done.
    fn advance(&self, n: u64);
    /// The round is over: clear what is shown.
    fn finish(&self);
    /// Round `n` (from 1) begins; a round repeats when documents changed under the run.
    fn round(&self, _n: u32) {}
    /// Whether the run should stop: checked before every page the engine reads, so that the batch in
    /// flight finishes and the run ends with [`super::EngineError::Cancelled`].
    fn cancelled(&self) -> bool {
        false
    }
}

/// Shows nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Progress for Silent {
    fn phase(&self, _: Phase) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
}

/// A phase's progress as shown: the count clamped to the total, the rate and the ETA.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Meter {
    /// Documents done, never more than `total`.
    pub done: u64,
    /// Documents the phase goes through, when known.
    pub total: Option<u64>,
    /// Documents a second (0 before the first second's worth).
    pub rate: f64,
    /// Seconds left in the phase at this rate, when the total is known and the rate is not 0.
    pub eta: Option<f64>,
}

impl Meter {
    /// `done` documents of `total` in `secs` seconds.
    pub fn new(done: u64, total: Option<u64>, secs: f64) -> Self {
        let done = total.map_or(done, |t| done.min(t));
        let rate = if secs > 0.0 { done as f64 / secs } else { 0.0 };
        let eta = match total {
            Some(t) if rate > 0.0 => Some((t - done) as f64 / rate),
            _ => None,
        };
        Meter {
            done,
            total,
            rate,
            eta,
        }
    }

    /// The phase's share done, from 0 to 1, when its total is known (an empty phase is done).
    pub fn fraction(&self) -> Option<f64> {
        self.total.map(|t| {
            if t == 0 {
                1.0
            } else {
                self.done as f64 / t as f64
            }
        })
    }

    /// `scan, 1,234 of 18,547 documents, 2,345/s, about 7s left` (what is known of it).
    pub fn line(&self, phase: &str) -> String {
        let mut s = format!("{phase}, {}", thousands(self.done));
        if let Some(t) = self.total {
            s.push_str(" of ");
            s.push_str(&thousands(t));
        }
        s.push_str(" documents, ");
        s.push_str(&per_second(self.rate));
        if let Some(eta) = self.eta {
            s.push_str(", about ");
            s.push_str(&seconds(eta));
            s.push_str(" left");
        }
        s
    }
}

/// How far the whole run is, from 0 to 1: the phases before `phase` are done, and `phase` is
/// `fraction` done (0 when unknown). No phase yet, or one that is not a run's, counts as the start.
pub fn run_fraction(phase: Option<Phase>, fraction: Option<f64>) -> f64 {
    let Some(phase) = phase else {
        return 0.0;
    };
    let mut before = 0.0;
    for (step, share) in Phase::RUN {
        if step == phase {
            return (before + share * fraction.unwrap_or(0.0).clamp(0.0, 1.0)).min(1.0);
        }
        before += share;
    }
    match phase {
        Phase::Commit => 1.0,
        _ => 0.0,
    }
}

/// `18547` as `18,547`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A rate as `12,346/s` (whole documents from 10 a second on, one decimal below).
pub fn per_second(rate: f64) -> String {
    let rate = if rate.is_finite() { rate.max(0.0) } else { 0.0 };
    if rate >= 10.0 {
        format!("{}/s", thousands(rate.round() as u64))
    } else {
        format!("{rate:.1}/s")
    }
}

/// Seconds as `42s`, `3m 05s` or `2h 07m`.
pub fn seconds(secs: f64) -> String {
    let s = if secs.is_finite() {
        secs.max(0.0).round() as u64
    } else {
        0
    };
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_never_runs_past_its_total() {
        // The check that showed "scan, 112,669 of 18,547 documents".
        let m = Meter::new(112_669, Some(18_547), 10.0);
        assert_eq!(m.done, 18_547);
        assert_eq!(m.fraction(), Some(1.0));
        assert_eq!(m.eta, Some(0.0));
        assert_eq!(
            m.line("scan"),
            "scan, 18,547 of 18,547 documents, 1,855/s, about 0s left"
        );
        // Without a total, nothing to clamp to.
        let m = Meter::new(112_669, None, 10.0);
        assert_eq!(m.done, 112_669);
        assert_eq!(m.fraction(), None);
        assert_eq!(m.eta, None);
        assert_eq!(m.line("scan"), "scan, 112,669 documents, 11,267/s");
        assert_eq!(Meter::new(0, Some(0), 1.0).fraction(), Some(1.0));
    }

    #[test]
    fn the_eta_follows_the_rate() {
        let m = Meter::new(1_000, Some(10_000), 2.0);
        assert_eq!(m.rate, 500.0);
        assert_eq!(m.eta, Some(18.0));
        assert_eq!(
            m.line("rank"),
            "rank, 1,000 of 10,000 documents, 500/s, about 18s left"
        );
        // Before the first document or the first instant: no ETA.
        assert_eq!(Meter::new(0, Some(10), 5.0).eta, None);
        assert_eq!(Meter::new(5, Some(10), 0.0).eta, None);
    }

    #[test]
    fn numbers_are_written_as_the_rest_of_the_output() {
        for (n, s) in [
            (0, "0"),
            (999, "999"),
            (1_000, "1,000"),
            (18_547, "18,547"),
            (112_669, "112,669"),
            (1_234_567, "1,234,567"),
        ] {
            assert_eq!(thousands(n), s);
        }
        assert_eq!(per_second(1234.5678), "1,235/s");
        assert_eq!(per_second(3.24159), "3.2/s");
        assert_eq!(per_second(f64::NAN), "0.0/s");
        assert_eq!(seconds(42.4), "42s");
        assert_eq!(seconds(185.0), "3m 05s");
        assert_eq!(seconds(7620.0), "2h 07m");
    }

    #[test]
    fn one_bar_covers_the_whole_run() {
        use Phase::*;
        assert_eq!(run_fraction(None, None), 0.0);
        assert_eq!(run_fraction(Some(Scan), Some(0.5)), 0.25);
        assert_eq!(run_fraction(Some(Scan), None), 0.0);
        assert!((run_fraction(Some(Rank), Some(0.5)) - 0.7).abs() < 1e-9);
        assert_eq!(run_fraction(Some(Write), Some(1.0)), 1.0);
        assert_eq!(run_fraction(Some(Write), Some(7.0)), 1.0, "clamped");
        assert_eq!(run_fraction(Some(Commit), None), 1.0);
        // Phases only go forward.
        let order: Vec<f64> = [Scan, Near, Rank, Write, Commit]
            .iter()
            .map(|&p| run_fraction(Some(p), Some(0.0)))
            .collect();
        assert!(order.windows(2).all(|w| w[0] <= w[1]), "{order:?}");
    }
}
