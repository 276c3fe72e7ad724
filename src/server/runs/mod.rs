//! Runs started over HTTP (or by the schedule): one at a time, each on a thread of its own, watched
//! through [`Live`], cancellable between batches, and kept with their reports in a state directory
//! so that the history outlives a restart.
//!
//! A record is written when its run starts and again when it ends, each time atomically (a temporary
//! file renamed over the old one), so a server killed at any point leaves whole records. A record
//! still `running` when the server starts again belonged to a server that stopped during the run: it
//! is closed as `interrupted` (nothing is lost; the next run converges, as after a kill).
//!
//! A record is typed: its `kind` is a [`Kind`] and its report the engine's `Report`. Its JSON keeps
//! the field names, values and key order records had when reports were kept as `serde_json::Value`,
//! so state files written before load as they are (pinned by `tests/fixtures/serve-state`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use tracing::{info, warn};
use utoipa::ToSchema;

use super::Backend;
use crate::engine::progress::{run_fraction, Meter, Phase};
use crate::engine::{DocumentCounts, Name, Progress, SolrWork};

/// Records kept in the state directory; older ones are removed.
pub const KEEP: usize = 100;

mod record;

pub use record::{Ended, Kind, Record, RunOptions, State, Trigger};

/// How far a running run is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ProgressView {
    /// `starting`, `scan`, `near`, `rank`, `write`, `commit` or `cancelling`.
    pub phase: String,
    /// Documents done in this phase (never more than `total`).
    pub done: u64,
    /// Documents this phase goes through, when known: the scan reads the index (of `--filter`,
    /// as Solr counts it); the near, rank and write phases read them all again on a first or full
    /// run, and only the documents of the groups to decide when they look them up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Documents a second in this phase.
    pub rate: f64,
    /// Seconds left in this phase at its rate, when its total is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eta: Option<f64>,
    /// How far the whole run is, in percent (the phases before this one done, and this one's share
    /// of its total).
    #[serde(default)]
    pub percent: f64,
    /// The round (a round repeats when documents changed under the run).
    pub round: u32,
    /// Seconds since the run started.
    pub elapsed: f64,
}

/// The progress of the run going on, shared between its thread and the API.
pub struct Live {
    /// The phase (none before the first) and when it began.
    phase: Mutex<(Option<Phase>, Instant)>,
    done: AtomicU64,
    /// The documents of the index (of the filter), when the backend could count them.
    count: Mutex<Option<u64>>,
    /// The documents of the current phase, when known.
    total: Mutex<Option<u64>>,
    round: AtomicU32,
    cancel: AtomicBool,
    started: Instant,
}

impl Live {
    fn new() -> Self {
        Live {
            phase: Mutex::new((None, Instant::now())),
            done: AtomicU64::new(0),
            count: Mutex::new(None),
            total: Mutex::new(None),
            round: AtomicU32::new(0),
            cancel: AtomicBool::new(false),
            started: Instant::now(),
        }
    }

    /// Sets the number of documents the run will go through (the scan's total), when the backend
    /// could count them.
    pub fn set_total(&self, total: u64) {
        *lock(&self.count) = Some(total);
    }

    fn view(&self) -> ProgressView {
        let (phase, since) = *lock(&self.phase);
        let meter = Meter::new(
            self.done.load(Ordering::Relaxed),
            *lock(&self.total),
            since.elapsed().as_secs_f64(),
        );
        let tenths = |x: f64| (x * 10.0).round() / 10.0;
        ProgressView {
            phase: if self.cancel.load(Ordering::Relaxed) {
                "cancelling".to_owned()
            } else {
                phase.map_or("starting", Phase::name).to_owned()
            },
            done: meter.done,
            total: meter.total,
            rate: tenths(meter.rate),
            eta: meter.eta.map(tenths),
            percent: tenths(run_fraction(phase, meter.fraction()) * 100.0),
            round: self.round.load(Ordering::Relaxed),
            elapsed: tenths(self.started.elapsed().as_secs_f64()),
        }
    }
}

impl Progress for Live {
    fn phase(&self, phase: Phase) {
        *lock(&self.phase) = (Some(phase), Instant::now());
        self.done.store(0, Ordering::Relaxed);
        // The scan reads the index; another phase's total is its own, once the engine tells it.
        *lock(&self.total) = match phase {
            Phase::Scan => *lock(&self.count),
            _ => None,
        };
    }

    fn expect(&self, documents: u64) {
        *lock(&self.total) = Some(documents);
    }

    fn advance(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }

    fn finish(&self) {}

    fn round(&self, n: u32) {
        self.round.store(n, Ordering::Relaxed);
    }

    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

/// Why a run was not started.
#[derive(Debug, PartialEq, Eq)]
pub enum StartError {
    /// Another run is going: its id.
    Busy(u64),
    /// The server is stopping.
    Stopping,
}

/// Why a run could not be cancelled.
#[derive(Debug, PartialEq, Eq)]
pub enum CancelError {
    /// No run has that id.
    Unknown,
    /// It has ended already.
    Ended,
}

struct Inner {
    /// Every kept record, by id.
    records: BTreeMap<u64, Record>,
    /// The run going on, with its progress.
    current: Option<(u64, Arc<Live>)>,
    next_id: u64,
    stopping: bool,
}

/// The runs: the one going on and the kept ones.
pub struct Runs {
    dir: PathBuf,
    /// Held (locked) while the server runs: one server per state directory.
    _lock: std::fs::File,
    inner: Mutex<Inner>,
    /// Notified whenever a run ends.
    ended: tokio::sync::watch::Sender<u64>,
    /// Counted when runs end (for `/metrics`).
    tally: Mutex<Tally>,
}

/// Totals over the runs this process saw end (Prometheus counters): the reports' fields summed.
#[derive(Debug, Default)]
pub(super) struct Tally {
    /// By (kind, state).
    pub(super) runs: BTreeMap<(Kind, State), u64>,
    /// The reports' per-document counts.
    pub(super) documents: DocumentCounts,
    /// The reports' Solr work.
    pub(super) work: SolrWork,
    /// The reports' milliseconds per phase.
    pub(super) phases_ms: BTreeMap<Name, u64>,
}

/// The totals, for `/metrics`.
pub(super) fn lock_tally(runs: &Runs) -> MutexGuard<'_, Tally> {
    lock(&runs.tally)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| (d.as_secs_f64() * 1000.0).round() / 1000.0)
}

/// Why the state directory cannot be used: one line that says what to do.
#[derive(Debug, thiserror::Error)]
pub enum StateDirError {
    /// Its `runs` folder cannot be made.
    #[error("cannot create the state directory {}: {error}; give a writable one with --state-dir", dir.display())]
    Create {
        /// The folder.
        dir: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// Its lock file cannot be opened.
    #[error("cannot open {}: {error}", path.display())]
    Open {
        /// The lock file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// Another server holds its lock.
    #[error("another solr-dedup serve uses the state directory {}; stop it, or give this one its own --state-dir", .0.display())]
    Busy(PathBuf),
    /// Its lock cannot be taken for another reason.
    #[error("cannot lock {}: {error}", path.display())]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// Its `runs` folder cannot be listed.
    #[error("cannot read {}: {error}", dir.display())]
    Read {
        /// The folder.
        dir: PathBuf,
        /// Why.
        error: std::io::Error,
    },
}

impl Runs {
    /// Opens the state directory (creating it), loads the kept records and closes those a stopped
    /// server left `running`.
    pub fn open(dir: &Path) -> Result<Runs, StateDirError> {
        let runs_dir = dir.join("runs");
        std::fs::create_dir_all(&runs_dir).map_err(|error| StateDirError::Create {
            dir: runs_dir.clone(),
            error,
        })?;
        let lock_path = dir.join("lock");
        let lock_file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|error| StateDirError::Open {
                path: lock_path.clone(),
                error,
            })?;
        if let Err(e) = lock_file.try_lock() {
            return Err(match e {
                std::fs::TryLockError::WouldBlock => StateDirError::Busy(dir.to_owned()),
                std::fs::TryLockError::Error(error) => StateDirError::Lock {
                    path: lock_path,
                    error,
                },
            });
        }
        let mut records = BTreeMap::new();
        // Ids go on from every record file, also one that cannot be read (never reused).
        let mut last_id = 0;
        let entries = std::fs::read_dir(&runs_dir).map_err(|error| StateDirError::Read {
            dir: runs_dir.clone(),
            error,
        })?;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            if let Some(id) = path
                .file_stem()
                .and_then(|s| s.to_str())
                .and_then(|s| s.parse::<u64>().ok())
            {
                last_id = last_id.max(id);
            }
            let parsed = std::fs::read_to_string(&path)
                .map_err(|e| e.to_string())
                .and_then(|t| serde_json::from_str::<Record>(&t).map_err(|e| e.to_string()));
            match parsed {
                Ok(r) => {
                    records.insert(r.id, r);
                }
                Err(e) => {
                    warn!(file = %path.display(), error = %e, "a run record that cannot be read is left out")
                }
            }
        }
        let next_id = records.keys().next_back().map_or(0, |&id| id).max(last_id) + 1;
        let runs = Runs {
            dir: runs_dir,
            _lock: lock_file,
            inner: Mutex::new(Inner {
                records,
                current: None,
                next_id,
                stopping: false,
            }),
            ended: tokio::sync::watch::Sender::new(0),
            tally: Mutex::new(Tally::default()),
        };
        let stale: Vec<Record> = lock(&runs.inner)
            .records
            .values_mut()
            .filter(|r| r.state == State::Running)
            .map(|r| {
                r.state = State::Interrupted;
                r.ended = Some(now());
                r.error = Some(
                    "the server stopped during the run; what it wrote is complete, and the next run converges"
                        .to_owned(),
                );
                r.progress = None;
                r.clone()
            })
            .collect();
        for r in &stale {
            runs.save(r);
        }
        Ok(runs)
    }

    fn save(&self, r: &Record) {
        let path = self.dir.join(format!("{:08}.json", r.id));
        let tmp = self.dir.join(format!(".{:08}.json.tmp", r.id));
        let result = serde_json::to_vec_pretty(r)
            .map_err(std::io::Error::other)
            .and_then(|bytes| {
                let mut f = std::fs::File::create(&tmp)?;
                std::io::Write::write_all(&mut f, &bytes)?;
                f.sync_all()
            })
            .and_then(|()| std::fs::rename(&tmp, &path));
        if let Err(e) = result {
            warn!(file = %path.display(), error = %e, "cannot save the run record");
        }
    }

    /// Starts a run of `backend` on a thread of its own, unless one is going.
    pub fn start(
        self: &Arc<Self>,
        backend: Arc<dyn Backend>,
        options: RunOptions,
        trigger: Trigger,
    ) -> Result<u64, StartError> {
        let options = backend.effective(options);
        let live = Arc::new(Live::new());
        let record = {
            let mut inner = lock(&self.inner);
            if inner.stopping {
                return Err(StartError::Stopping);
            }
            if let Some((id, _)) = &inner.current {
                return Err(StartError::Busy(*id));
            }
            let id = inner.next_id;
            inner.next_id += 1;
            let record = Record {
                id,
                kind: Kind::of(options),
                options,
                trigger,
                state: State::Running,
                started: now(),
                ended: None,
                error: None,
                report: None,
                mark_after: None,
                progress: None,
            };
            inner.records.insert(id, record.clone());
            inner.current = Some((id, live.clone()));
            // Keep the newest KEEP records, and always the newest successful run and check (the
            // metrics' last success and groups come from them).
            while inner.records.len() > KEEP {
                let keep: Vec<u64> = Kind::ALL
                    .iter()
                    .filter_map(|k| {
                        inner
                            .records
                            .values()
                            .rev()
                            .find(|r| r.state == State::Succeeded && r.kind == *k)
                            .map(|r| r.id)
                    })
                    .collect();
                let Some(old) = inner.records.keys().copied().find(|id| !keep.contains(id)) else {
                    break;
                };
                inner.records.remove(&old);
                let _ = std::fs::remove_file(self.dir.join(format!("{old:08}.json")));
            }
            record
        };
        self.save(&record);
        info!(id = record.id, kind = record.kind.name(), trigger = ?trigger, "run started");
        let runs = self.clone();
        let id = record.id;
        // The run's thread reaches the index through the server's runtime (its async calls are
        // driven there), and does the run's own work itself.
        let spawned = tokio::runtime::Handle::try_current()
            .map_err(|e| e.to_string())
            .and_then(|rt| {
                std::thread::Builder::new()
                    .name(format!("run-{id}"))
                    .spawn(move || runs.go(id, rt, backend, options, live))
                    .map_err(|e| e.to_string())
            });
        if let Err(e) = spawned {
            self.end(
                id,
                Ended {
                    state: State::Failed,
                    report: None,
                    error: Some(format!("cannot start a thread for the run: {e}")),
                },
                None,
            );
        }
        Ok(id)
    }

    /// The run `id`, on its own thread: counts the documents, runs the job, reads the change mark
    /// after it, and ends the run.
    fn go(
        &self,
        id: u64,
        rt: tokio::runtime::Handle,
        backend: Arc<dyn Backend>,
        options: RunOptions,
        live: Arc<Live>,
    ) {
        if let Some(total) = rt.block_on(backend.count()) {
            live.set_total(total);
        }
        let writes = !options.check && !options.dry_run;
        // The mark before the run: a change by someone else during the run must not count as seen.
        let before = writes
            .then(|| rt.block_on(backend.change_mark()).ok())
            .flatten();
        // A panic in the job must not leave the run going for ever (every later start
        // would answer 409): it ends the run as failed.
        let ended = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            backend.run(options, &*live)
        }))
        .unwrap_or_else(|panic| Ended {
            state: State::Failed,
            report: None,
            error: Some(format!(
                "the run stopped on an internal error ({}); please report it",
                panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default()
            )),
        });
        // The mark after the run counts as seen only for a run that wrote and succeeded, and saw
        // every change made while it went.
        let mark = (ended.state == State::Succeeded && writes)
            .then(|| rt.block_on(backend.change_mark()).ok())
            .flatten()
            .filter(|after| saw_everything(before.as_deref(), after, ended.report.as_ref()));
        self.end(id, ended, mark);
    }

    /// Saves and counts the ended run before it stops being the current one, so that whoever sees
    /// it ended (the API, `stop`) also sees its record saved and its metrics counted.
    fn end(&self, id: u64, ended: Ended, mark: Option<String>) {
        // The kept record reads `running` until the ended one is saved and counted: whoever reads
        // it ended (`GET /api/runs/ID`) also finds it in `/metrics`.
        let record = {
            let inner = lock(&self.inner);
            let Some(r) = inner.records.get(&id) else {
                return;
            };
            let mut r = r.clone();
            r.state = ended.state;
            r.ended = Some(now());
            r.report = ended.report;
            r.error = ended.error;
            r.mark_after = mark;
            r
        };
        self.save(&record);
        self.count(&record);
        match (&record.error, record.state) {
            (Some(e), State::Failed) => warn!(id, error = %e, "run failed"),
            _ => info!(id, state = record.state.name(), "run ended"),
        }
        {
            let mut inner = lock(&self.inner);
            inner.records.insert(id, record);
            if inner.current.as_ref().is_some_and(|(c, _)| *c == id) {
                inner.current = None;
            }
        }
        self.ended.send_replace(id);
    }

    pub(super) fn count(&self, r: &Record) {
        let mut tally = lock(&self.tally);
        *tally.runs.entry((r.kind, r.state)).or_default() += 1;
        let Some(report) = &r.report else {
            return;
        };
        tally.documents += &report.documents;
        tally.work += &report.work;
        for (phase, ms) in &report.phases_ms {
            *tally.phases_ms.entry(phase.clone()).or_default() += ms;
        }
    }

    /// Asks the run `id` to stop after the batch in flight.
    pub fn cancel(&self, id: u64) -> Result<(), CancelError> {
        let inner = lock(&self.inner);
        match &inner.current {
            Some((c, live)) if *c == id => {
                live.cancel.store(true, Ordering::Relaxed);
                Ok(())
            }
            _ if inner.records.contains_key(&id) => Err(CancelError::Ended),
            _ => Err(CancelError::Unknown),
        }
    }

    /// Refuses new runs, cancels the one going on and waits for it to end.
    pub async fn stop(&self) {
        let current = {
            let mut inner = lock(&self.inner);
            inner.stopping = true;
            inner.current.clone()
        };
        if let Some((id, live)) = current {
            info!(id, "stopping: cancelling the run going on");
            live.cancel.store(true, Ordering::Relaxed);
            let mut rx = self.ended.subscribe();
            while lock(&self.inner).current.is_some() {
                if rx.changed().await.is_err() {
                    break;
                }
            }
        }
    }

    /// A run by id, with its progress while it runs.
    pub fn get(&self, id: u64) -> Option<Record> {
        let inner = lock(&self.inner);
        let mut r = inner.records.get(&id)?.clone();
        if let Some((c, live)) = &inner.current {
            if *c == id {
                r.progress = Some(live.view());
            }
        }
        Some(r)
    }

    /// The run going on.
    pub fn current(&self) -> Option<Record> {
        let id = lock(&self.inner).current.as_ref().map(|(id, _)| *id)?;
        self.get(id)
    }

    /// The newest `n` runs, newest first (the one going on with its progress).
    pub fn recent(&self, n: usize) -> Vec<Record> {
        let ids: Vec<u64> = lock(&self.inner)
            .records
            .keys()
            .rev()
            .take(n)
            .copied()
            .collect();
        ids.into_iter().filter_map(|id| self.get(id)).collect()
    }

    /// The newest run that ended in `state` (of `kind`, when given).
    pub fn last(&self, state: State, kind: Option<Kind>) -> Option<Record> {
        lock(&self.inner)
            .records
            .values()
            .rev()
            .find(|r| r.state == state && kind.is_none_or(|k| r.kind == k))
            .cloned()
    }

    /// The change mark read after the newest run that ended with one (a successful run that could
    /// write: checks, dry runs, failed and cancelled runs keep none).
    pub fn last_mark(&self) -> Option<String> {
        lock(&self.inner)
            .records
            .values()
            .rev()
            .find_map(|r| r.mark_after.clone())
    }

    /// Whether a run is going.
    pub fn busy(&self) -> bool {
        lock(&self.inner).current.is_some()
    }

    /// Wakes up whenever a run ends (the value is its id).
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.ended.subscribe()
    }
}

/// Whether a run that read the change mark `before` it started and `after` it ended saw every change
/// made meanwhile, so that `after` may count as seen by the schedule. A run's own writes are atomic
/// updates of documents that exist: they raise the highest `_version_` but never change how many
/// documents there are (the part of the mark before its first `/`: on Solr the count, on a file its
/// size). So a different count means a page was added or deleted while the run went, perhaps after
/// it read that part of the index (a representative deleted after the light scan stays the only
/// `true` of its group in what the run saw): the next quiet period must start another run. So does a
/// document that changed under the run (`changed_during_run`, `conflicts`). Not told apart from the
/// run's own writes: a page re-indexed during the run that the run never decided (it was settled
/// when the run read it); the crawler's next change starts a run that takes it up. Serve's mark also
/// holds the rules file's modification time and size: rules learnt again while the run went were
/// not the ones it ranked by, so that part must not have changed either.
fn saw_everything(
    before: Option<&str>,
    after: &str,
    report: Option<&crate::engine::Report>,
) -> bool {
    // The count, and the rules file's part (serve's mark): rules learnt again during the run
    // were not the ones it ranked by.
    let count = |m: &str| {
        let (index, rules) = m.split_once(" rules ").unwrap_or((m, ""));
        let count = index.split_once('/').map_or(index, |(c, _)| c);
        (count.to_owned(), rules.to_owned())
    };
    let untouched =
        report.is_none_or(|r| r.documents.changed_during_run + r.documents.conflicts == 0);
    before.is_some_and(|b| count(b) == count(after)) && untouched
}

#[cfg(test)]
pub(crate) mod tests;
