//! `packaging/monitoring/`: every `solr_dedup_*` name the Grafana dashboard and the alert rules use
//! is served by a fresh serve, before any run and without rules; the build facts in `/metrics` and
//! `/api/status`.

use std::collections::BTreeSet;

use crate::support::serve::Served as Server;

/// The `solr_dedup_…` names in `text` (a name ends where `[a-z0-9_]` does).
fn names_in(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("solr_dedup_") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(tail.len());
        // `solr_dedup_*` in a comment is no name.
        if !tail[..end].ends_with('_') {
            names.insert(tail[..end].to_owned());
        }
        rest = &tail[end..];
    }
    names
}

#[test]
fn every_metric_the_dashboard_and_alerts_name_is_served_from_the_start() {
    let root = env!("CARGO_MANIFEST_DIR");
    let dashboard = std::fs::read_to_string(format!(
        "{root}/packaging/monitoring/grafana-dashboard.json"
    ))
    .unwrap();
    let alerts =
        std::fs::read_to_string(format!("{root}/packaging/monitoring/alerts.yml")).unwrap();
    // The dashboard is JSON Grafana can import: panels with queries.
    let parsed: serde_json::Value = serde_json::from_str(&dashboard).unwrap();
    let panels = parsed["panels"].as_array().unwrap();
    assert!(panels.len() >= 10, "{} panels", panels.len());
    assert!(panels
        .iter()
        .all(|p| p["targets"].as_array().is_some_and(|t| !t.is_empty())));
    let wanted: BTreeSet<String> = names_in(&dashboard)
        .union(&names_in(&alerts))
        .cloned()
        .collect();
    assert!(wanted.len() >= 20, "{wanted:?}");

    // A fresh serve on the bundled corpus: no run yet, no rules.
    let corpus = format!("{root}/examples/corpus.jsonl");
    let server = Server::start(&["--input", &corpus], &[]);
    let (status, text) = server.get("/metrics", &[]);
    assert_eq!(status, 200, "{text}");
    let served: BTreeSet<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split(' ').next())
        .collect();
    let missing: Vec<&String> = wanted
        .iter()
        .filter(|n| !served.contains(n.as_str()))
        .collect();
    assert!(missing.is_empty(), "not served: {missing:?}\n{text}");
    // Each family the alerts watch has a sample from the start.
    for sample in [
        "solr_dedup_last_success_age_seconds{kind=\"run\"} ",
        "solr_dedup_check_drift_documents NaN",
        "solr_dedup_index_up 1",
        "solr_dedup_prediction_index_reload_failed 0",
        "solr_dedup_prediction_index_loaded_timestamp_seconds NaN",
        "solr_dedup_doubles{dimension=\"exact\"} NaN",
    ] {
        assert!(
            text.lines().any(|l| l.starts_with(sample)),
            "{sample}\n{text}"
        );
    }
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        text.lines().any(|l| l.starts_with(&format!(
            "solr_dedup_build_info{{version=\"{version}\",commit=\""
        )) && l.ends_with(" 1")),
        "{text}"
    );
    // /api/status says the same build.
    let (status, body) = server.get("/api/status", &[]);
    assert_eq!(status, 200);
    let status: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(status["version"], version);
    let build = text
        .lines()
        .find(|l| l.starts_with("solr_dedup_build_info"))
        .unwrap();
    let commit = status["commit"].as_str().unwrap();
    assert!(build.contains(&format!("commit=\"{commit}\"")), "{build}");
    assert!(
        build.contains(&format!(
            "build_date=\"{}\"",
            status["build_date"].as_str().unwrap()
        )),
        "{build}"
    );
}
