//! The memory budget (`--memory`) and the temporary files that take what goes past it.
//!
//! The structures of a round that grow with the index and that are written once and read back in
//! order (the signatures waiting for pass C in [`super::pending::Pending`], the near-duplicate
//! keys in [`super::near::Join`]) each keep a share of the budget in memory and append the rest to
//! anonymous temporary files in the temporary folder (`--temp-dir`, else the system's). The files
//! have no name from the start, so they are gone when the run ends, fails, is interrupted or is
//! killed. What they took on disk is counted for the report (`memory.spilled_bytes`).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The default `--memory` budget: 256 MiB.
pub const DEFAULT_MEMORY: u64 = 256 << 20;

/// Where a round's spilled structures go, and what they wrote there. Cloned into each structure
/// that spills; the count is shared.
#[derive(Clone, Debug)]
pub(super) struct SpillArea {
    dir: PathBuf,
    budget: u64,
    written: Arc<AtomicU64>,
}

impl SpillArea {
    /// An area in `dir` (the system's temporary folder when `None`) for a run with `budget` bytes.
    pub(super) fn new(dir: Option<&Path>, budget: u64) -> Self {
        SpillArea {
            dir: dir.map_or_else(std::env::temp_dir, Path::to_path_buf),
            budget,
            written: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The bytes a structure keeps in memory before it spills: `1 / parts` of the budget, at least
    /// one byte (so that a budget of a few bytes spills everything, as tests want).
    pub(super) fn share(&self, parts: u64) -> usize {
        usize::try_from(self.budget / parts.max(1))
            .unwrap_or(usize::MAX)
            .max(1)
    }

    /// A new anonymous temporary file; the error names the folder.
    pub(super) fn file(&self) -> std::io::Result<File> {
        tempfile::tempfile_in(&self.dir).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!(
                    "cannot write temporary files in {} (--temp-dir): {e}",
                    self.dir.display()
                ),
            )
        })
    }

    /// Counts `bytes` written to a spill file.
    pub(super) fn wrote(&self, bytes: usize) {
        self.written.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// Bytes written to spill files so far.
    pub(super) fn written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_folder_is_named_in_the_error() {
        let area = SpillArea::new(Some(Path::new("/nonexistent/solr-dedup-spill")), 1 << 20);
        let e = area.file().unwrap_err().to_string();
        assert!(e.contains("/nonexistent/solr-dedup-spill"), "{e}");
        assert!(e.contains("--temp-dir"), "{e}");
    }

    #[test]
    fn shares_split_the_budget_and_never_reach_zero() {
        let area = SpillArea::new(None, 256 << 20);
        assert_eq!(area.share(32), 8 << 20);
        assert_eq!(SpillArea::new(None, 4).share(32), 1);
    }
}
