//! `/metrics` in Prometheus' text format (version 0.0.4): the URL endpoints' counters, the runs'
//! totals and last results, and the connections (open, the cap, closed by the server and why).
//!
//! Counters count what this process saw (they start from 0 at each start, as Prometheus expects of
//! counters); the gauges of groups, doubles and the last success come from the newest kept record,
//! so they survive a restart.
//!
//! Every number is read from a typed field of the reports ([`crate::engine::Report`]), so renaming
//! a field breaks the build here instead of silently zeroing a metric.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::listen::{Closed, Counters};
use super::runs::{self, Kind, State as RunState};
use super::AppState;
use crate::engine::DimensionReport;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};

/// The URL endpoints' counters.
#[derive(Debug)]
pub struct Metrics {
    /// When this server started (Unix seconds).
    pub(super) started: f64,
    pub(super) predict_requests: AtomicU64,
    pub(super) predicted_urls: AtomicU64,
    pub(super) predicted_duplicates: AtomicU64,
    pub(super) url_errors: AtomicU64,
    pub(super) canonical_requests: AtomicU64,
    pub(super) unauthorized: AtomicU64,
    /// The connections' counters, kept by [`super::listen`].
    pub(super) connections: Counters,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics {
            started: now(),
            predict_requests: AtomicU64::default(),
            predicted_urls: AtomicU64::default(),
            predicted_duplicates: AtomicU64::default(),
            url_errors: AtomicU64::default(),
            canonical_requests: AtomicU64::default(),
            unauthorized: AtomicU64::default(),
            connections: Counters::default(),
        }
    }
}

/// Now, in Unix seconds.
fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Writes Prometheus text: a family at a time.
struct Out(String);

impl Out {
    fn family(&mut self, name: &str, kind: &str, help: &str, samples: &[(String, f64)]) {
        let _ = writeln!(self.0, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for (labels, v) in samples {
            let _ = writeln!(self.0, "{name}{labels} {v}");
        }
    }

    fn one(&mut self, name: &str, kind: &str, help: &str, v: f64) {
        self.family(name, kind, help, &[(String::new(), v)]);
    }
}

/// `{name="value"}` (values here are names of ours: no escaping needed).
fn labels(pairs: &[(&str, &str)]) -> String {
    let inner: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
    format!("{{{}}}", inner.join(","))
}

#[utoipa::path(get, path = "/metrics", responses(
    (status = 200, description = "counters", content_type = "text/plain; version=0.0.4", body = String),
    (status = 401, description = "refused", body = super::ErrorBody),
))]
/// Counters in Prometheus' text format.
pub(super) async fn metrics(State(state): State<Arc<AppState>>) -> Response {
    let mut out = Out(String::new());
    let m = &state.metrics;
    let n = |c: &AtomicU64| c.load(Ordering::Relaxed) as f64;
    let url_counters = [
        (
            "solr_dedup_predict_requests_total",
            "Prediction requests answered.",
            &m.predict_requests,
        ),
        (
            "solr_dedup_predicted_urls_total",
            "URLs answered by prediction requests.",
            &m.predicted_urls,
        ),
        (
            "solr_dedup_predicted_duplicates_total",
            "URLs answered with an indexed page of the same canonical form.",
            &m.predicted_duplicates,
        ),
        (
            "solr_dedup_url_errors_total",
            "URLs without a canonical form.",
            &m.url_errors,
        ),
        (
            "solr_dedup_canonical_requests_total",
            "Canonical-form requests answered.",
            &m.canonical_requests,
        ),
        (
            "solr_dedup_unauthorized_total",
            "Requests refused for a missing or wrong token.",
            &m.unauthorized,
        ),
    ];
    for (name, help, counter) in url_counters {
        out.one(name, "counter", help, n(counter));
    }
    out.one(
        "solr_dedup_indexed_pages",
        "gauge",
        "Pages in the prediction index.",
        state.index.as_ref().map_or(0, |p| p.get().index.len()) as f64,
    );
    // The prediction index follows the index: rebuilt after every run that succeeds.
    if let Some(p) = &state.index {
        let s = p.status();
        prediction_index(
            &mut out,
            s.urls as f64,
            s.loaded_at,
            s.reload_error.is_some(),
        );
    }
    runs(&mut out, &state);
    connections(&mut out, &m.connections);
    watching(&mut out, &state).await;
    // Added after the watched families (issue 46): nothing before it moves.
    let in_place = runs::lock_tally(&state.runs).work.written_in_place_docs;
    out.one(
        "solr_dedup_solr_written_in_place_documents_total",
        "counter",
        "Of the documents the runs sent to Solr's /update, those whose update Solr could apply in place (the in-place profile).",
        in_place as f64,
    );
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out.0).into_response()
}

fn runs(out: &mut Out, state: &AppState) {
    let runs = &state.runs;
    out.one(
        "solr_dedup_run_in_progress",
        "gauge",
        "1 while a run or check is going.",
        f64::from(u8::from(runs.busy())),
    );
    let tally = runs::lock_tally(runs);
    let mut by_outcome = Vec::new();
    for kind in Kind::ALL {
        for outcome in [RunState::Succeeded, RunState::Failed, RunState::Cancelled] {
            let v = tally.runs.get(&(kind, outcome)).copied().unwrap_or(0);
            by_outcome.push((
                labels(&[("kind", kind.name()), ("outcome", outcome.name())]),
                v as f64,
            ));
        }
    }
    out.family(
        "solr_dedup_runs_total",
        "counter",
        "Runs and checks ended, by outcome.",
        &by_outcome,
    );
    // The phases are the keys of the reports' `phases_ms` map (the engine's phase names).
    let phases: Vec<(String, f64)> = ["scan", "near", "rank", "write", "commit"]
        .iter()
        .map(|p| {
            let ms = tally.phases_ms.get(*p).copied().unwrap_or(0);
            (labels(&[("phase", p)]), ms as f64 / 1000.0)
        })
        .collect();
    out.family(
        "solr_dedup_run_phase_seconds_total",
        "counter",
        "Time the runs spent per phase.",
        &phases,
    );
    let (d, w) = (&tally.documents, &tally.work);
    for (name, n, help) in [
        (
            "solr_dedup_documents_read_total",
            d.read,
            "Documents the runs read.",
        ),
        (
            "solr_dedup_documents_signed_total",
            d.signed,
            "Documents the runs signed.",
        ),
        (
            "solr_dedup_documents_written_total",
            d.written,
            "Documents the runs wrote (or, in checks and dry runs, would write).",
        ),
        (
            "solr_dedup_conflicts_total",
            d.conflicts,
            "Updates Solr refused because the document had changed (HTTP 409).",
        ),
        (
            "solr_dedup_solr_requests_total",
            w.requests,
            "Requests the runs sent to Solr.",
        ),
        (
            "solr_dedup_solr_written_documents_total",
            w.written_docs,
            "Documents the runs sent to Solr's /update.",
        ),
    ] {
        out.one(name, "counter", help, n as f64);
    }
    let reads: Vec<(String, f64)> = [
        ("text", w.text_docs),
        ("sample", w.sample_docs),
        ("light_export", w.light_export_docs),
        ("light_cursor", w.light_cursor_docs),
        ("lookup", w.lookup_docs),
        ("file", w.file_docs),
    ]
    .iter()
    .map(|(how, n)| (labels(&[("read", how)]), *n as f64))
    .collect();
    out.family(
        "solr_dedup_solr_read_documents_total",
        "counter",
        "Documents the runs read from the store, by how (text: with the page text; the others light).",
        &reads,
    );
    out.one(
        "solr_dedup_solr_modelled_seconds_total",
        "counter",
        "Solr time the runs' work models, from per-document costs measured on a real Solr.",
        w.modelled_solr_ms as f64 / 1000.0,
    );
    drop(tally);
    if let Some(last) = runs.last(RunState::Succeeded, None) {
        let dims = last.report.map(|r| r.dimensions).unwrap_or_default();
        let per = |field: fn(&DimensionReport) -> u64| -> Vec<(String, f64)> {
            dims.iter()
                .map(|(d, r)| (labels(&[("dimension", d)]), field(r) as f64))
                .collect()
        };
        groups_and_doubles(out, &per(|r| r.groups), &per(|r| r.doubles));
    }
    let mut last = Vec::new();
    for kind in Kind::ALL {
        if let Some(r) = runs.last(RunState::Succeeded, Some(kind)) {
            last.push((
                labels(&[("kind", kind.name())]),
                r.ended.unwrap_or(r.started),
            ));
        }
    }
    out.family(
        "solr_dedup_last_success_timestamp_seconds",
        "gauge",
        "When the last successful run and check ended (Unix time).",
        &last,
    );
}

/// Listed last, so that the text before them is as it was before they came.
fn connections(out: &mut Out, c: &Counters) {
    let n = |c: &AtomicU64| c.load(Ordering::Relaxed) as f64;
    out.one(
        "solr_dedup_connections_open",
        "gauge",
        "HTTP connections open now.",
        n(&c.open),
    );
    out.one(
        "solr_dedup_connections_limit",
        "gauge",
        "HTTP connections open at once at most (below the limit of open files).",
        n(&c.limit),
    );
    let closed: Vec<(String, f64)> = Closed::ALL
        .iter()
        .map(|why| (labels(&[("reason", why.name())]), c.closed(*why) as f64))
        .collect();
    out.family(
        "solr_dedup_connections_closed_total",
        "counter",
        "HTTP connections the server closed: part of a head not complete within the header deadline (header_deadline), nothing sent within it (idle), a body not complete within the body deadline (body_deadline), at the limit the one idle the longest (limit_oldest) or, none idle, the new one (limit_new).",
        &closed,
    );
    out.one(
        "solr_dedup_accept_errors_total",
        "counter",
        "Connections that could not be accepted (such as for want of open files).",
        n(&c.accept_errors),
    );
}

/// What dashboards and alerts watch (`packaging/monitoring/`), listed after the connections so that
/// the text before them is as it was. Every family is there from the server's start, before any run
/// and without rules: NaN (or 0 for a flag) until known.
async fn watching(out: &mut Out, state: &AppState) {
    let now = now();
    out.family(
        "solr_dedup_build_info",
        "gauge",
        "1, labelled with the version, the commit and the build date of this server.",
        &[(
            labels(&[
                ("version", crate::build::VERSION),
                ("commit", crate::build::COMMIT),
                ("build_date", crate::build::DATE),
            ]),
            1.0,
        )],
    );
    out.one(
        "solr_dedup_start_timestamp_seconds",
        "gauge",
        "When this server started (Unix time).",
        state.metrics.started,
    );
    let runs = &state.runs;
    let mut age = Vec::new();
    let mut duration = Vec::new();
    for kind in Kind::ALL {
        let last = runs.last(RunState::Succeeded, Some(kind));
        let ended = last.as_ref().map(|r| r.ended.unwrap_or(r.started));
        let l = labels(&[("kind", kind.name())]);
        age.push((l.clone(), now - ended.unwrap_or(state.metrics.started)));
        duration.push((
            l,
            last.map_or(f64::NAN, |r| {
                (r.ended.unwrap_or(r.started) - r.started).max(0.0)
            }),
        ));
    }
    out.family(
        "solr_dedup_last_success_age_seconds",
        "gauge",
        "Seconds since the last successful run and check ended; since this server started when the kept history has none.",
        &age,
    );
    out.family(
        "solr_dedup_last_success_duration_seconds",
        "gauge",
        "How long the last successful run and check took (NaN until one has).",
        &duration,
    );
    out.one(
        "solr_dedup_check_drift_documents",
        "gauge",
        "Documents the last successful check said a run would write: 0 when the flags are current (NaN until a check has succeeded).",
        runs.last(RunState::Succeeded, Some(Kind::Check))
            .and_then(|r| r.report)
            .map_or(f64::NAN, |r| r.documents.written as f64),
    );
    // Bounded well under a scrape's usual timeout (10 s): a Solr that does not answer within 2 s
    // reads as down, and the rest of the text still goes out.
    let up = match &state.backend {
        Some(b) => {
            let probe = tokio::time::timeout(std::time::Duration::from_secs(2), b.health()).await;
            f64::from(u8::from(matches!(probe, Ok(Ok(())))))
        }
        None => f64::NAN,
    };
    out.one(
        "solr_dedup_index_up",
        "gauge",
        "1 when the index (Solr, or the input file) answers this scrape's health probe within 2 s, 0 when not.",
        up,
    );
    // Without rules the prediction index's families are here, not above (where they are with rules).
    if state.index.is_none() {
        prediction_index(out, 0.0, f64::NAN, false);
    }
    // Before any success the groups and doubles are not known: NaN per dimension.
    if runs.last(RunState::Succeeded, None).is_none() {
        let unknown: Vec<(String, f64)> = crate::model::Dimension::ALL
            .iter()
            .map(|d| (labels(&[("dimension", d.name())]), f64::NAN))
            .collect();
        groups_and_doubles(out, &unknown, &unknown);
    }
}

/// The prediction index's families: its URLs, when it was loaded, whether the last rebuild failed.
fn prediction_index(out: &mut Out, urls: f64, loaded_at: f64, reload_failed: bool) {
    out.one(
        "solr_dedup_prediction_index_urls",
        "gauge",
        "Indexed URLs in the prediction index in use.",
        urls,
    );
    out.one(
        "solr_dedup_prediction_index_loaded_timestamp_seconds",
        "gauge",
        "When the prediction index in use was loaded, in seconds since the epoch.",
        loaded_at,
    );
    out.one(
        "solr_dedup_prediction_index_reload_failed",
        "gauge",
        "1 when the last rebuild of the prediction index failed (the one before answers).",
        f64::from(u8::from(reload_failed)),
    );
}

/// The groups and doubles per dimension of the last successful run or check.
fn groups_and_doubles(out: &mut Out, groups: &[(String, f64)], doubles: &[(String, f64)]) {
    out.family(
        "solr_dedup_groups",
        "gauge",
        "Groups of two or more documents, per dimension, as the last successful run or check found them.",
        groups,
    );
    out.family(
        "solr_dedup_doubles",
        "gauge",
        "Documents that double another, per dimension, as the last successful run or check found them.",
        doubles,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::runs::{Record, Runs};

    /// The whole text (then the connections' families), over the kept records of `tests/fixtures/serve-state` counted as if they
    /// had ended in this process: as the server answered before its records were typed.
    #[tokio::test]
    async fn the_text_is_as_before() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("runs")).unwrap();
        // The three runs with reports (the failed record 4 is not part of what was saved).
        for text in &runs::tests::OLD_RECORDS[..3] {
            let r: Record = serde_json::from_str(text).unwrap();
            std::fs::write(dir.path().join(format!("runs/{:08}.json", r.id)), text).unwrap();
        }
        let runs = Arc::new(Runs::open(dir.path()).unwrap());
        for r in runs.recent(10).iter().rev() {
            runs.count(r);
        }
        let state = Arc::new(AppState {
            backend: None,
            runs,
            index: None,
            token: None,
            frame_ancestors: Vec::new(),
            schedule: None,
            metrics: Metrics::default(),
            next_run: Default::default(),
        });
        let answer = metrics(State(state)).await;
        let body = axum::body::to_bytes(answer.into_body(), usize::MAX)
            .await
            .unwrap();
        let before = include_str!("../../tests/fixtures/serve-state/metrics.txt");
        let text = std::str::from_utf8(&body).unwrap();
        // The connections' families came after (issue 41), then the watched ones (issue 43): added
        // at the end, nothing renamed.
        let added = text.strip_prefix(before).expect("the text before is kept");
        let names: Vec<&str> = added
            .lines()
            .filter_map(|l| l.strip_prefix("# TYPE "))
            .collect();
        assert_eq!(
            names,
            [
                "solr_dedup_connections_open gauge",
                "solr_dedup_connections_limit gauge",
                "solr_dedup_connections_closed_total counter",
                "solr_dedup_accept_errors_total counter",
                // Then what dashboards and alerts watch (issue 43).
                "solr_dedup_build_info gauge",
                "solr_dedup_start_timestamp_seconds gauge",
                "solr_dedup_last_success_age_seconds gauge",
                "solr_dedup_last_success_duration_seconds gauge",
                "solr_dedup_check_drift_documents gauge",
                "solr_dedup_index_up gauge",
                "solr_dedup_prediction_index_urls gauge",
                "solr_dedup_prediction_index_loaded_timestamp_seconds gauge",
                "solr_dedup_prediction_index_reload_failed gauge",
                // Then the in-place profile's writes (issue 46).
                "solr_dedup_solr_written_in_place_documents_total counter",
            ]
        );
        for reason in [
            "header_deadline",
            "idle",
            "body_deadline",
            "limit_oldest",
            "limit_new",
        ] {
            let line = format!("solr_dedup_connections_closed_total{{reason=\"{reason}\"}} 0");
            assert!(added.lines().any(|l| l == line), "{line}");
        }
    }
}
