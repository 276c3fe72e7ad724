//! Runs that start by themselves: `--every DURATION`, and `--after-quiet DURATION`, which starts a
//! run once the index has had no change for that long and has changed since the last run, the way
//! to say "after the crawl has finished" without the crawler's help.
//!
//! **How a change is seen.** Every `quiet / 5` (at least 0.2 s, at most 30 s) the schedule reads the
//! index's change mark ([`crate::store::Store::change_mark`]): on Solr the number of documents of
//! `--filter` and their highest `_version_` (one `rows=0` request; an add, an update or a delete
//! changes one of them once it is committed and visible), on a file its size and modification
//! time. The quiet period starts over at every new mark. The mark read just after a run ends (its
//! own writes committed) is kept with the run, so the run's own writes never count as a change; a
//! page added or deleted while a run goes, or changed under it, keeps the run from marking the index
//! as seen (`runs::saw_everything`), so the next quiet period starts another run (a representative
//! deleted after the run's scan is repaired then). The server's start counts
//! as a change of unknown time: the first run waits one full quiet period. While a run goes the
//! mark is not read.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::watch;
use tracing::{info, warn};

use super::runs::{RunOptions, StartError, Trigger};
use super::AppState;

/// When runs start by themselves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Schedule {
    /// A run every so often.
    pub every: Option<Duration>,
    /// A run after the index has been quiet this long (and changed since the last run).
    pub after_quiet: Option<Duration>,
}

impl Schedule {
    /// As a person reads it, when there is one.
    pub fn describe(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(d) = self.every {
            parts.push(format!("every {}", humantime::format_duration(d)));
        }
        if let Some(d) = self.after_quiet {
            parts.push(format!(
                "after {} without a change in the index",
                humantime::format_duration(d)
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// How often `--after-quiet` reads the change mark.
    pub fn poll(quiet: Duration) -> Duration {
        (quiet / 5).clamp(Duration::from_millis(200), Duration::from_secs(30))
    }
}

/// When each of the schedule's loops starts its next run (Unix seconds), as far as it knows.
#[derive(Debug, Default)]
pub struct NextRun {
    /// `--every`, `--after-quiet`.
    at: Mutex<[Option<f64>; 2]>,
}

impl NextRun {
    /// The soonest.
    pub fn get(&self) -> Option<f64> {
        let at = *self.at.lock().unwrap_or_else(|e| e.into_inner());
        at.into_iter().flatten().reduce(f64::min)
    }

    fn set(&self, slot: usize, at: Option<f64>) {
        self.at.lock().unwrap_or_else(|e| e.into_inner())[slot] = at;
    }
}

/// Unix seconds `d` from now.
fn unix_in(d: Duration) -> f64 {
    (SystemTime::now() + d)
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |t| t.as_secs_f64())
}

/// Starts the schedule's tasks; they end when `stop` turns true.
pub fn spawn(state: Arc<AppState>, schedule: Schedule, stop: watch::Receiver<bool>) {
    if let Some(every) = schedule.every {
        tokio::spawn(every_loop(state.clone(), every, stop.clone()));
    }
    if let Some(quiet) = schedule.after_quiet {
        tokio::spawn(quiet_loop(state, quiet, stop));
    }
}

/// Sleeps `d`; false when told to stop meanwhile.
async fn sleep_or_stop(d: Duration, stop: &mut watch::Receiver<bool>) -> bool {
    let slept = tokio::select! {
        () = tokio::time::sleep(d) => true,
        _ = stop.wait_for(|s| *s) => false,
    };
    slept && !*stop.borrow()
}

fn start(state: &AppState, trigger: Trigger) {
    let Some(backend) = state.backend.clone() else {
        return;
    };
    match state.runs.start(backend, RunOptions::default(), trigger) {
        Ok(id) => info!(id, ?trigger, "scheduled run started"),
        Err(StartError::Busy(id)) => info!(
            running = id,
            ?trigger,
            "a run is going; the scheduled one is skipped"
        ),
        Err(StartError::Stopping) => {}
    }
}

async fn every_loop(state: Arc<AppState>, every: Duration, mut stop: watch::Receiver<bool>) {
    loop {
        state.next_run.set(0, Some(unix_in(every)));
        if !sleep_or_stop(every, &mut stop).await {
            break;
        }
        start(&state, Trigger::Every);
    }
    state.next_run.set(0, None);
}

async fn quiet_loop(state: Arc<AppState>, quiet: Duration, mut stop: watch::Receiver<bool>) {
    let Some(backend) = state.backend.clone() else {
        return;
    };
    let poll = Schedule::poll(quiet);
    let mut seen: Option<String> = None;
    let mut changed_at = Instant::now();
    let mut failing = false;
    while sleep_or_stop(poll, &mut stop).await {
        if state.runs.busy() {
            continue;
        }
        let mark = match backend.change_mark().await {
            Ok(mark) => {
                if failing {
                    info!("the index answers again");
                    failing = false;
                }
                mark
            }
            Err(e) => {
                if !failing {
                    warn!(error = %e, "cannot read whether the index changed; trying again");
                    failing = true;
                }
                continue;
            }
        };
        if seen.as_ref() != Some(&mark) {
            seen = Some(mark.clone());
            changed_at = Instant::now();
        }
        let unseen = state.runs.last_mark().as_ref() != Some(&mark);
        // Known only once the index has changed since the last run: then when it goes quiet.
        let next = unseen.then(|| unix_in(quiet.saturating_sub(changed_at.elapsed())));
        state.next_run.set(1, next);
        if changed_at.elapsed() >= quiet && unseen {
            start(&state, Trigger::AfterQuiet);
            state.next_run.set(1, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polls_a_fifth_of_the_quiet_period_within_bounds() {
        assert_eq!(
            Schedule::poll(Duration::from_secs(600)),
            Duration::from_secs(30)
        );
        assert_eq!(
            Schedule::poll(Duration::from_secs(10)),
            Duration::from_secs(2)
        );
        assert_eq!(
            Schedule::poll(Duration::from_millis(300)),
            Duration::from_millis(200)
        );
    }

    #[test]
    fn the_next_run_is_the_soonest_known() {
        let next = NextRun::default();
        assert_eq!(next.get(), None);
        next.set(1, Some(20.0));
        assert_eq!(next.get(), Some(20.0));
        next.set(0, Some(10.0));
        assert_eq!(next.get(), Some(10.0));
        next.set(0, None);
        assert_eq!(next.get(), Some(20.0));
        assert!(unix_in(Duration::from_secs(60)) > 1.7e9);
    }

    #[test]
    fn describes_itself() {
        assert_eq!(Schedule::default().describe(), None);
        let s = Schedule {
            every: Some(Duration::from_secs(3600)),
            after_quiet: Some(Duration::from_secs(600)),
        };
        assert_eq!(
            s.describe().unwrap(),
            "every 1h; after 10m without a change in the index"
        );
    }
}
