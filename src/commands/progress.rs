//! The progress of a run on a terminal: a spinner on standard error with the phase, the documents
//! gone through (of the phase's total, when the engine knows it), the rate and the time left
//! (`indicatif` hides it when standard error is not a terminal). The line is written by
//! [`Meter::line`], so the count never runs past its total and numbers have thousands separators.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};

use crate::engine::progress::{Meter, Phase};
use crate::engine::Progress;

/// [`Progress`] as an `indicatif` spinner.
pub(crate) struct Spinner {
    bar: ProgressBar,
    /// The phase, when it began, and its total when known.
    phase: Mutex<(&'static str, Instant, Option<u64>)>,
    /// Documents done in the phase, as the engine counts them (the line clamps them).
    done: AtomicU64,
}

impl Spinner {
    /// A spinner, or a hidden one under `--quiet`.
    pub(crate) fn new(quiet: bool) -> Self {
        let bar = if quiet {
            ProgressBar::hidden()
        } else {
            let pb = ProgressBar::new_spinner();
            pb.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("valid template"));
            pb
        };
        Spinner {
            bar,
            phase: Mutex::new(("", Instant::now(), None)),
            done: AtomicU64::new(0),
        }
    }

    /// The line as it stands.
    fn line(&self) -> String {
        let (name, since, total) = *self.phase.lock().unwrap_or_else(|e| e.into_inner());
        Meter::new(
            self.done.load(Ordering::Relaxed),
            total,
            since.elapsed().as_secs_f64(),
        )
        .line(name)
    }

    fn show(&self) {
        if !self.bar.is_hidden() {
            self.bar.set_message(self.line());
        }
    }
}

impl Progress for Spinner {
    fn phase(&self, phase: Phase) {
        *self.phase.lock().unwrap_or_else(|e| e.into_inner()) =
            (phase.name(), Instant::now(), None);
        self.done.store(0, Ordering::Relaxed);
        self.show();
    }

    fn expect(&self, documents: u64) {
        self.phase.lock().unwrap_or_else(|e| e.into_inner()).2 = Some(documents);
        self.show();
    }

    fn advance(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
        self.show();
        self.bar.tick();
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_shows_the_phase_total_and_clamps_the_count() {
        let s = Spinner::new(true);
        s.phase(Phase::Rank);
        s.expect(18_547);
        s.advance(112_669);
        let line = s.line();
        assert!(
            line.starts_with("rank, 18,547 of 18,547 documents, "),
            "{line}"
        );
        // A new phase starts from 0, without the last one's total.
        s.phase(Phase::Write);
        assert!(s.line().starts_with("write, 0 documents, "), "{}", s.line());
    }
}
