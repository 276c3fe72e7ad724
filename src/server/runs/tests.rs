//! The runs' unit tests: records, progress, marks, panics and the kept history.

use super::*;
use crate::engine::Report;

#[test]
fn a_phase_shows_its_own_total_and_never_runs_past_it() {
    let live = Live::new();
    live.set_total(18_547);
    live.round(1);
    live.phase(Phase::Scan);
    live.advance(112_669);
    let v = live.view();
    assert_eq!(
        (v.phase.as_str(), v.done, v.total),
        ("scan", 18_547, Some(18_547))
    );
    assert_eq!(v.percent, 50.0, "the scan is half of the run's bar");
    // The rank phase looks 300 documents up: its own total, not the index's.
    live.phase(Phase::Rank);
    assert_eq!(live.view().total, None);
    live.expect(300);
    live.advance(150);
    let v = live.view();
    assert_eq!((v.done, v.total), (150, Some(300)));
    assert_eq!(v.percent, 70.0);
    live.advance(1_000);
    assert_eq!(live.view().done, 300);
}

#[test]
fn options_take_defaults_and_refuse_unknown_fields() {
    let o: RunOptions = serde_json::from_str(r#"{"full": true}"#).unwrap();
    assert_eq!(
        o,
        RunOptions {
            check: false,
            full: true,
            dry_run: false
        }
    );
    assert!(serde_json::from_str::<RunOptions>(r#"{"fulll": true}"#).is_err());
}

#[test]
fn a_record_left_running_is_closed_as_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let runs_dir = dir.path().join("runs");
    std::fs::create_dir_all(&runs_dir).unwrap();
    let r = Record {
        id: 7,
        kind: Kind::Run,
        options: RunOptions::default(),
        trigger: Trigger::Api,
        state: State::Running,
        started: 1.0,
        ended: None,
        error: None,
        report: None,
        mark_after: None,
        progress: None,
    };
    std::fs::write(
        runs_dir.join("00000007.json"),
        serde_json::to_vec(&r).unwrap(),
    )
    .unwrap();
    std::fs::write(runs_dir.join("00000008.json"), b"{ broken").unwrap();
    let runs = Runs::open(dir.path()).unwrap();
    let got = runs.get(7).unwrap();
    assert_eq!(got.state, State::Interrupted);
    assert!(got.error.unwrap().contains("stopped during the run"));
    // Saved as such; the next id follows the newest file, also one that cannot be read.
    drop(runs);
    let again = Runs::open(dir.path()).unwrap();
    assert_eq!(again.get(7).unwrap().state, State::Interrupted);
    assert!(again.get(7).unwrap().ended.is_some());
    assert_eq!(lock(&again.inner).next_id, 9);
    // A second server on the same directory is refused while the first holds it.
    let err = Runs::open(dir.path()).err().expect("locked");
    assert!(matches!(err, StateDirError::Busy(_)), "{err}");
    assert!(
        err.to_string().contains("another solr-dedup serve"),
        "{err}"
    );
}

/// The records of `tests/fixtures/serve-state`, as the server wrote them before its records
/// were typed (4 written by hand in the same format).
pub(crate) const OLD_RECORDS: [&str; 4] = [
    include_str!("../../../tests/fixtures/serve-state/runs/00000001.json"),
    include_str!("../../../tests/fixtures/serve-state/runs/00000002.json"),
    include_str!("../../../tests/fixtures/serve-state/runs/00000003.json"),
    include_str!("../../../tests/fixtures/serve-state/runs/00000004.json"),
];

#[test]
fn old_records_load_and_save_byte_for_byte() {
    for text in OLD_RECORDS {
        let r: Record = serde_json::from_str(text).unwrap();
        // As `save` writes it.
        let again = String::from_utf8(serde_json::to_vec_pretty(&r).unwrap()).unwrap();
        assert_eq!(again, text, "record {}", r.id);
    }
}

/// A backend whose runs do what the test says.
struct Scripted {
    outcome: fn() -> Ended,
}

#[async_trait::async_trait]
impl Backend for Scripted {
    fn describe(&self) -> String {
        "scripted".into()
    }
    fn document_link(&self, _: &str) -> Option<String> {
        None
    }
    async fn health(&self) -> Result<(), crate::server::BackendError> {
        Ok(())
    }
    fn run(&self, _: RunOptions, _: &dyn Progress) -> Ended {
        (self.outcome)()
    }
    async fn count(&self) -> Option<u64> {
        None
    }
    async fn change_mark(&self) -> Result<String, crate::server::BackendError> {
        Ok("mark".into())
    }
    async fn groups(
        &self,
        _: crate::engine::Dimension,
        _: usize,
        _: usize,
        _: Option<&str>,
    ) -> Result<Option<Vec<crate::browse::GroupView>>, crate::server::BackendError> {
        Ok(None)
    }
}

fn succeeded() -> Ended {
    Ended {
        state: State::Succeeded,
        report: Some(Report::default()),
        error: None,
    }
}

/// Starts a run and waits (polling, bounded) until it ends.
fn run_to_end(runs: &Arc<Runs>, b: Arc<dyn Backend>, o: RunOptions) -> Record {
    // As in the server: runs start on its runtime.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .unwrap();
    let id = rt
        .block_on(async { runs.start(b, o, Trigger::Api) })
        .unwrap();
    for _ in 0..2000 {
        let r = runs.get(id).unwrap();
        if r.state != State::Running && !runs.busy() {
            return r;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    panic!("run {id} did not end");
}

#[test]
fn a_panicking_run_ends_failed_and_the_next_one_starts() {
    let dir = tempfile::tempdir().unwrap();
    let runs = Arc::new(Runs::open(dir.path()).unwrap());
    let panics: Arc<dyn Backend> = Arc::new(Scripted {
        outcome: || panic!("boom"),
    });
    let r = run_to_end(&runs, panics, RunOptions::default());
    assert_eq!(r.state, State::Failed);
    assert!(r.error.unwrap().contains("boom"));
    let ok: Arc<dyn Backend> = Arc::new(Scripted { outcome: succeeded });
    assert_eq!(
        run_to_end(&runs, ok, RunOptions::default()).state,
        State::Succeeded
    );
}

#[test]
fn only_a_successful_writing_run_marks_the_index_as_seen() {
    let dir = tempfile::tempdir().unwrap();
    let runs = Arc::new(Runs::open(dir.path()).unwrap());
    let ok: Arc<dyn Backend> = Arc::new(Scripted { outcome: succeeded });
    let check = RunOptions {
        check: true,
        ..RunOptions::default()
    };
    let dry = RunOptions {
        dry_run: true,
        ..RunOptions::default()
    };
    run_to_end(&runs, ok.clone(), check);
    run_to_end(&runs, ok.clone(), dry);
    assert_eq!(runs.last_mark(), None);
    let failing: Arc<dyn Backend> = Arc::new(Scripted {
        outcome: || Ended {
            state: State::Failed,
            report: None,
            error: Some("no".into()),
        },
    });
    run_to_end(&runs, failing, RunOptions::default());
    assert_eq!(runs.last_mark(), None);
    run_to_end(&runs, ok, RunOptions::default());
    assert_eq!(runs.last_mark().as_deref(), Some("mark"));
}

/// A backend whose change marks come from a list, one a read, as a crawl moves them.
struct Crawled {
    marks: Mutex<Vec<&'static str>>,
    outcome: fn() -> Ended,
}

#[async_trait::async_trait]
impl Backend for Crawled {
    fn describe(&self) -> String {
        "crawled".into()
    }
    fn document_link(&self, _: &str) -> Option<String> {
        None
    }
    async fn health(&self) -> Result<(), crate::server::BackendError> {
        Ok(())
    }
    fn run(&self, _: RunOptions, _: &dyn Progress) -> Ended {
        (self.outcome)()
    }
    async fn count(&self) -> Option<u64> {
        None
    }
    async fn change_mark(&self) -> Result<String, crate::server::BackendError> {
        Ok(lock(&self.marks).remove(0).into())
    }
    async fn groups(
        &self,
        _: crate::engine::Dimension,
        _: usize,
        _: usize,
        _: Option<&str>,
    ) -> Result<Option<Vec<crate::browse::GroupView>>, crate::server::BackendError> {
        Ok(None)
    }
}

#[test]
fn a_page_added_deleted_or_changed_during_a_run_is_not_seen_by_it() {
    let dir = tempfile::tempdir().unwrap();
    let runs = Arc::new(Runs::open(dir.path()).unwrap());
    let crawl = |marks: Vec<&'static str>, outcome: fn() -> Ended| -> Arc<dyn Backend> {
        Arc::new(Crawled {
            marks: Mutex::new(marks),
            outcome,
        })
    };
    // Its own writes raise the highest version only: seen.
    run_to_end(
        &runs,
        crawl(vec!["10/5", "10/9"], succeeded),
        RunOptions::default(),
    );
    assert_eq!(runs.last_mark().as_deref(), Some("10/9"));
    // A page deleted (or added) while it went: the count moved, the mark is not seen.
    run_to_end(
        &runs,
        crawl(vec!["10/9", "9/12"], succeeded),
        RunOptions::default(),
    );
    assert_eq!(runs.last_mark().as_deref(), Some("10/9"));
    run_to_end(
        &runs,
        crawl(vec!["9/12", "11/14"], succeeded),
        RunOptions::default(),
    );
    assert_eq!(runs.last_mark().as_deref(), Some("10/9"));
    // A page re-indexed under the run (it counted it as changed during the run): not seen.
    let changed = || {
        let mut report = Report::default();
        report.documents.changed_during_run = 1;
        Ended {
            state: State::Succeeded,
            report: Some(report),
            error: None,
        }
    };
    run_to_end(
        &runs,
        crawl(vec!["11/14", "11/16"], changed),
        RunOptions::default(),
    );
    assert_eq!(runs.last_mark().as_deref(), Some("10/9"));
    // The next quiet run sees it all.
    run_to_end(
        &runs,
        crawl(vec!["11/16", "11/18"], succeeded),
        RunOptions::default(),
    );
    assert_eq!(runs.last_mark().as_deref(), Some("11/18"));
}

#[test]
fn the_oldest_records_go_but_the_last_successes_stay() {
    let dir = tempfile::tempdir().unwrap();
    let runs = Arc::new(Runs::open(dir.path()).unwrap());
    let ok: Arc<dyn Backend> = Arc::new(Scripted { outcome: succeeded });
    let failing: Arc<dyn Backend> = Arc::new(Scripted {
        outcome: || Ended {
            state: State::Failed,
            report: None,
            error: Some("Solr is down".into()),
        },
    });
    let first = run_to_end(&runs, ok, RunOptions::default()).id;
    for _ in 0..KEEP + 5 {
        run_to_end(&runs, failing.clone(), RunOptions::default());
    }
    let kept = std::fs::read_dir(dir.path().join("runs")).unwrap().count();
    assert_eq!(kept, KEEP);
    assert_eq!(
        runs.last(State::Succeeded, Some(Kind::Run)).unwrap().id,
        first
    );
    assert_eq!(runs.recent(KEEP + 10).len(), KEEP);
    assert!(runs.get(2).is_none(), "the oldest failure went");
}

/// A run saw everything when the count and the rules file's part of the mark stayed: its own
/// writes move only the highest version; a page added, or rules learnt again while it went, do not
/// count as seen.
#[test]
fn rules_learnt_again_during_a_run_are_a_change_it_did_not_see() {
    assert!(saw_everything(
        Some("10/5 rules 1 2"),
        "10/9 rules 1 2",
        None
    ));
    assert!(!saw_everything(
        Some("10/5 rules 1 2"),
        "10/9 rules 3 2",
        None
    ));
    assert!(!saw_everything(
        Some("10/5 rules 1 2"),
        "11/9 rules 1 2",
        None
    ));
    assert!(saw_everything(Some("10/5"), "10/9", None));
    assert!(!saw_everything(Some("10/5"), "11/9", None));
}
