//! SIGINT and SIGTERM for `run` and `check`, as `serve` handles them: the first signal asks the
//! engine to stop before its next page ([`Progress::cancelled`]). In file mode the run then ends
//! without writing its output, its temporary files are removed as the store is dropped; against
//! Solr the batch in flight finishes and every batch written is complete (each is a request Solr
//! acknowledged). The report says `interrupted`, and the process exits 130 (SIGINT) or 143
//! (SIGTERM). A second signal ends the process at once, after removing the temporary files it knows
//! of and recording that in the report. A signal that comes while the output is being put in place
//! lets that finish: the output is then complete, never half written.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use tokio::signal::unix::{signal, SignalKind};

use super::Exit;
use crate::engine::Progress;
use crate::store::file::remove_all_temp_files;

/// Which signal came, if any; the handlers run on a thread of their own, so they are heard while the
/// engine computes.
pub(crate) struct Interrupt(Arc<AtomicU8>);

impl Interrupt {
    /// Installs the handlers (replacing the default action, which would end the process with the
    /// temporary files left behind and no word in the report). `aborted` is called with the
    /// signal's number when a second one stops the process at once (it records that), and
    /// returns the line printed. `None` when they cannot be installed; the defaults then stay.
    pub(crate) fn install(aborted: Box<dyn Fn(i32) -> String + Send>) -> Option<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .ok()?;
        let (mut int, mut term) = {
            let _inside = runtime.enter();
            (
                signal(SignalKind::interrupt()).ok()?,
                signal(SignalKind::terminate()).ok()?,
            )
        };
        let got = Arc::new(AtomicU8::new(0));
        let seen = got.clone();
        std::thread::Builder::new()
            .name("solr-dedup-signals".into())
            .spawn(move || {
                runtime.block_on(async move {
                    loop {
                        let number = tokio::select! {
                            _ = int.recv() => 2,
                            _ = term.recv() => 15,
                        };
                        if seen.swap(number, Ordering::SeqCst) != 0 {
                            remove_all_temp_files();
                            let line = aborted(i32::from(number));
                            eprintln!("solr-dedup: error: {line}");
                            std::process::exit(128 + i32::from(number));
                        }
                    }
                })
            })
            .ok()?;
        Some(Interrupt(got))
    }

    /// The exit code of the signal that came, if one did.
    pub(crate) fn exit(&self) -> Option<Exit> {
        match self.0.load(Ordering::SeqCst) {
            2 => Some(Exit::Interrupted),
            15 => Some(Exit::Terminated),
            _ => None,
        }
    }

    /// The signal's name, for the message.
    pub(crate) fn name(&self) -> &'static str {
        match self.0.load(Ordering::SeqCst) {
            2 => "SIGINT",
            _ => "SIGTERM",
        }
    }
}

/// A [`Progress`] that also stops when a signal came.
pub(crate) struct Stoppable<'a, P> {
    pub(crate) inner: P,
    pub(crate) interrupt: Option<&'a Interrupt>,
}

impl<P: Progress> Progress for Stoppable<'_, P> {
    fn phase(&self, phase: crate::engine::progress::Phase) {
        self.inner.phase(phase);
    }

    fn expect(&self, documents: u64) {
        self.inner.expect(documents);
    }

    fn advance(&self, n: u64) {
        self.inner.advance(n);
    }

    fn finish(&self) {
        self.inner.finish();
    }

    fn round(&self, n: u32) {
        self.inner.round(n);
    }

    fn cancelled(&self) -> bool {
        self.interrupt.is_some_and(|i| i.exit().is_some()) || self.inner.cancelled()
    }
}
