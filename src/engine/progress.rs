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
    fn phase(&self, _: &'static str) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
}
