//! How a run reports its progress: the engine says which phase it is in and how many documents it
//! has gone through; the command layer draws that (a progress bar on a terminal) or shows nothing.

/// A receiver of a run's progress. Called from the engine's task; cheap calls only.
pub trait Progress: Send + Sync {
    /// A phase begins (`scan`, `rank`, `write`); its count starts from 0.
    fn phase(&self, name: &'static str);
    /// `n` more documents of the current phase are done.
    fn advance(&self, n: u64);
    /// The round is over: clear what is shown.
    fn finish(&self);
}

/// Shows nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Progress for Silent {
    fn phase(&self, _: &'static str) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
}
