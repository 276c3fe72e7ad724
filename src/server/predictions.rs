//! The prediction index the server answers `/api/urls/predict` from, kept in step with the index.
//!
//! The index of canonical forms ([`Index`]) is built once at start and again after every run that
//! succeeded, so that a page indexed while the server runs is found as the original of its URL
//! variants once a run (over the API or by the schedule) has gone over it, without a restart:
//!
//! ```text
//! run ends (succeeded) ──▶ rebuild on a thread of its own ──▶ swap ──▶ predictions use the new one
//!                              │ (requests keep reading the old index meanwhile)
//!                              └─ fails: the old index stays, a warning is logged
//! ```
//!
//! A request takes an [`Arc`] of the index it started with, so a swap never waits for requests and
//! a request never sees half an index. One rebuild at a time: a run ending during a rebuild asks for
//! another one after it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use tracing::{info, warn};
use utoipa::ToSchema;

use super::runs::{Runs, State};
use crate::urlrules::predict::Index;

/// Builds the prediction index anew (blocking: it reads every indexed URL).
pub type Loader = Box<dyn Fn(&Loaded) -> Result<Reload, LoadError> + Send + Sync>;

/// What a [`Loader`] gives: the new index and where it came from.
pub struct Reload {
    /// The index of canonical forms.
    pub index: Index,
    /// The change state's documents file it reflects, when it was built or updated from one: the
    /// next reload may update it from that state's delta.
    pub from_state: Option<String>,
    /// How it was made: `index` (read from the index), `state` (from the change state's
    /// documents), `delta` (the index before, updated with the documents a run changed).
    pub loaded_from: &'static str,
}

impl From<Index> for Reload {
    fn from(index: Index) -> Self {
        Reload {
            index,
            from_state: None,
            loaded_from: "index",
        }
    }
}

/// Why the prediction index could not be built (the rules file, the index's read, or the loader
/// stopping on an internal error); `/api/status` shows it as `reload_error`, with its causes.
#[derive(Debug, thiserror::Error)]
#[error("{}", crate::store::error_line(.0.as_ref()))]
pub struct LoadError(pub Box<dyn std::error::Error + Send + Sync>);

impl LoadError {
    /// An error with only a message.
    pub fn msg(message: impl Into<String>) -> Self {
        LoadError(message.into().into())
    }
}

/// An index and when it was loaded.
pub struct Loaded {
    /// The index of canonical forms.
    pub index: Index,
    /// When it was loaded, in seconds since the epoch (Unix time).
    pub loaded_at: f64,
    /// See [`Reload::from_state`].
    pub from_state: Option<String>,
    /// See [`Reload::loaded_from`].
    pub loaded_from: &'static str,
}

/// The prediction index in use, and how to build it again.
pub struct Predictions {
    current: RwLock<Arc<Loaded>>,
    loader: Option<Loader>,
    /// A rebuild is going.
    reloading: AtomicBool,
    /// A run ended during the rebuild: build again after it.
    again: AtomicBool,
    /// Why the last rebuild failed (cleared by one that succeeds).
    last_error: Mutex<Option<String>>,
    /// Why there is no index yet (the rules file is not there): the URL endpoints answer 503 with
    /// this until a rebuild succeeds.
    waiting: Mutex<Option<String>>,
}

/// The prediction index, as `/api/status` answers it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct IndexStatus {
    /// Indexed URLs predictions point at.
    pub urls: u64,
    /// When the index was loaded, in seconds since the epoch (Unix time).
    pub loaded_at: f64,
    /// Seconds since it was loaded.
    pub age_seconds: f64,
    /// Whether a new index is being built (the old one answers meanwhile).
    pub reloading: bool,
    /// Why the last rebuild failed, when it did (the index loaded before answers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reload_error: Option<String>,
    /// How the index in use was made: `index` (a read of the index), `state` (the change state
    /// the last run kept), `delta` (the index before it, updated with the pages the last run
    /// changed).
    pub loaded_from: String,
}

/// Now, in seconds since the epoch, to the millisecond.
fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| (d.as_secs_f64() * 1000.0).round() / 1000.0)
}

impl Predictions {
    /// Answers from `index` (loaded now); `loader` builds it again after a run (none: never).
    pub fn new(index: Index, loader: Option<Loader>) -> Self {
        Predictions {
            current: RwLock::new(Arc::new(Loaded {
                index,
                loaded_at: now(),
                from_state: None,
                loaded_from: "index",
            })),
            loader,
            reloading: AtomicBool::new(false),
            again: AtomicBool::new(false),
            last_error: Mutex::new(None),
            waiting: Mutex::new(None),
        }
    }

    /// No index yet, for the reason `why` (e.g. the rules file is not there yet); `loader` builds
    /// one at the next [`Predictions::reload`].
    pub fn waiting(loader: Loader, why: String) -> Self {
        let p = Predictions::new(Index::new(crate::urlrules::Rules::default()), Some(loader));
        *p.waiting.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
        p
    }

    /// Why there is no index yet; `None` once one is loaded.
    pub fn waiting_for(&self) -> Option<String> {
        self.waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The index in use.
    pub fn get(&self) -> Arc<Loaded> {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Its size and age.
    pub fn status(&self) -> IndexStatus {
        let loaded = self.get();
        IndexStatus {
            urls: loaded.index.len(),
            loaded_at: loaded.loaded_at,
            age_seconds: ((now() - loaded.loaded_at).max(0.0) * 10.0).round() / 10.0,
            reloading: self.reloading.load(Ordering::Relaxed),
            reload_error: self
                .last_error
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
            loaded_from: loaded.loaded_from.to_owned(),
        }
    }

    /// Swaps `reload`'s index in.
    fn swap(&self, reload: Reload) {
        let loaded = Arc::new(Loaded {
            index: reload.index,
            loaded_at: now(),
            from_state: reload.from_state,
            loaded_from: reload.loaded_from,
        });
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = loaded;
    }

    /// Builds the index again on a thread of its own and swaps it in when it is ready; a failure
    /// keeps the index in use. A call during a rebuild makes one more rebuild follow it.
    pub fn reload(self: &Arc<Self>) {
        if self.loader.is_none() {
            return;
        }
        self.again.store(true, Ordering::SeqCst);
        if self.reloading.swap(true, Ordering::SeqCst) {
            return;
        }
        let this = self.clone();
        let spawned = std::thread::Builder::new()
            .name("prediction-index".into())
            .spawn(move || this.rebuild());
        if let Err(e) = spawned {
            warn!(error = %e, "cannot start a thread to reload the prediction index; the old one answers");
            self.reloading.store(false, Ordering::SeqCst);
        }
    }

    fn rebuild(&self) {
        let Some(loader) = &self.loader else {
            return;
        };
        loop {
            self.again.store(false, Ordering::SeqCst);
            let current = self.get();
            let outcome =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| loader(&current)))
                    .unwrap_or_else(|_| {
                        Err(LoadError::msg("the loader stopped on an internal error"))
                    });
            drop(current);
            let mut last_error = self.last_error.lock().unwrap_or_else(|e| e.into_inner());
            match outcome {
                Ok(reload) => {
                    info!(
                        urls = reload.index.len(),
                        from = reload.loaded_from,
                        "prediction index reloaded"
                    );
                    self.swap(reload);
                    *last_error = None;
                    *self.waiting.lock().unwrap_or_else(|e| e.into_inner()) = None;
                }
                Err(e) => {
                    warn!(error = %e, "cannot reload the prediction index; the one loaded before answers");
                    *last_error = Some(e.to_string());
                }
            }
            drop(last_error);
            // Another run ended meanwhile: build again; else stop (and look once more, so that a
            // request made between the check and the store is not lost).
            if self.again.load(Ordering::SeqCst) {
                continue;
            }
            self.reloading.store(false, Ordering::SeqCst);
            if !self.again.load(Ordering::SeqCst) || self.reloading.swap(true, Ordering::SeqCst) {
                return;
            }
        }
    }
}

/// Reloads `predictions` after every run that succeeds, until `stop` turns true.
pub fn follow(
    predictions: Arc<Predictions>,
    runs: Arc<Runs>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let mut ended = runs.subscribe();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                changed = ended.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    let id = *ended.borrow_and_update();
                    // A run that found nothing changed since a settled state leaves the index as
                    // the prediction index has it.
                    let changed = |r: &super::runs::Record| {
                        r.report.as_ref().and_then(|rep| rep.changes.as_ref())
                            .is_none_or(|c| c.source != "settled")
                    };
                    if runs.get(id).is_some_and(|r| r.state == State::Succeeded && changed(&r)) {
                        predictions.reload();
                    }
                }
                _ = stop.changed() => return,
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::urlrules::Rules;
    use std::sync::atomic::AtomicU32;

    fn index_of(urls: &[&str]) -> Index {
        let mut ix = Index::new(Rules::default());
        for (i, u) in urls.iter().enumerate() {
            ix.add(&format!("d{i}"), u).unwrap();
        }
        ix
    }

    fn wait_idle(p: &Predictions) {
        for _ in 0..2000 {
            if !p.reloading.load(Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        panic!("the reload did not end");
    }

    #[test]
    fn a_reload_swaps_in_the_new_index_and_a_failed_one_keeps_the_old() {
        let calls = Arc::new(AtomicU32::new(0));
        let c = calls.clone();
        let loader: Loader = Box::new(move |_| match c.fetch_add(1, Ordering::SeqCst) {
            0 => Ok(index_of(&["http://a.example/1", "http://a.example/2"]).into()),
            _ => Err(LoadError::msg("Solr is down")),
        });
        let p = Arc::new(Predictions::new(
            index_of(&["http://a.example/1"]),
            Some(loader),
        ));
        let before = p.get();
        assert_eq!(p.status().urls, 1);
        p.reload();
        wait_idle(&p);
        assert_eq!(p.status().urls, 2);
        assert!(p.status().reload_error.is_none());
        // A request that held the old index still reads it whole.
        assert_eq!(before.index.len(), 1);
        p.reload();
        wait_idle(&p);
        let s = p.status();
        assert_eq!(s.urls, 2, "the old index stays");
        assert_eq!(s.reload_error.as_deref(), Some("Solr is down"));
        assert!(!s.reloading);
    }

    #[test]
    fn a_waiting_index_answers_once_a_rebuild_succeeds() {
        let calls = Arc::new(AtomicU32::new(0));
        let c = calls.clone();
        let loader: Loader = Box::new(move |_| match c.fetch_add(1, Ordering::SeqCst) {
            0 => Err(LoadError::msg("cannot read the rules rules.json")),
            _ => Ok(index_of(&["http://a.example/1"]).into()),
        });
        let p = Arc::new(Predictions::waiting(loader, "no rules yet".to_owned()));
        assert_eq!(p.waiting_for().as_deref(), Some("no rules yet"));
        p.reload();
        wait_idle(&p);
        assert_eq!(
            p.waiting_for().as_deref(),
            Some("no rules yet"),
            "still none"
        );
        assert_eq!(
            p.status().reload_error.as_deref(),
            Some("cannot read the rules rules.json")
        );
        p.reload();
        wait_idle(&p);
        assert_eq!(p.waiting_for(), None);
        assert_eq!(p.status().urls, 1);
    }

    #[test]
    fn without_a_loader_nothing_reloads() {
        let p = Arc::new(Predictions::new(index_of(&[]), None));
        p.reload();
        assert!(!p.status().reloading);
        assert_eq!(p.status().urls, 0);
    }
}
