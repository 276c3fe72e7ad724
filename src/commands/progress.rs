//! The progress of a run on a terminal: a spinner on standard error with the phase, the documents
//! gone through and the rate (`indicatif` hides it when standard error is not a terminal).

use indicatif::{ProgressBar, ProgressStyle};

use crate::engine::Progress;

/// [`Progress`] as an `indicatif` spinner.
pub(crate) struct Spinner(ProgressBar);

impl Spinner {
    /// A spinner, or a hidden one under `--quiet`.
    pub(crate) fn new(quiet: bool) -> Self {
        if quiet {
            return Spinner(ProgressBar::hidden());
        }
        let pb = ProgressBar::new_spinner();
        pb.set_style(
            ProgressStyle::with_template(
                "{spinner} {prefix:>6} {human_pos} documents {per_sec} {msg}",
            )
            .expect("valid template"),
        );
        Spinner(pb)
    }
}

impl Progress for Spinner {
    fn phase(&self, name: &'static str) {
        self.0.set_prefix(name);
        self.0.set_position(0);
    }

    fn advance(&self, n: u64) {
        self.0.inc(n);
    }

    fn finish(&self) {
        self.0.finish_and_clear();
    }
}
