//! The run records `serve` keeps: what a run was asked to do ([`RunOptions`]), what it was
//! ([`Kind`], [`Trigger`]), how it ended ([`State`], [`Ended`]) and the [`Record`] of it in the
//! state directory, with the JSON those have always had.

use serde::{Deserialize, Serialize, Serializer};
use utoipa::ToSchema;

use super::ProgressView;
use crate::engine::Report;

/// What a run is asked to do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RunOptions {
    /// `check`: read only, report what a run would change.
    pub check: bool,
    /// Recompute every signature from the text.
    pub full: bool,
    /// Decide everything, write nothing.
    pub dry_run: bool,
}

/// What a run does: `run` writes (unless a dry run), `check` only reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Signs, groups and writes.
    Run,
    /// Reports what a run would change.
    Check,
}

impl Kind {
    /// Both, in the order metrics list them.
    pub const ALL: [Kind; 2] = [Kind::Run, Kind::Check];

    /// The kind of a run started with `options`.
    pub fn of(options: RunOptions) -> Kind {
        if options.check {
            Kind::Check
        } else {
            Kind::Run
        }
    }

    /// The name used in JSON, metrics and the page.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Run => "run",
            Kind::Check => "check",
        }
    }
}

/// Who started a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Trigger {
    /// `POST /api/runs`.
    Api,
    /// `--every`.
    Every,
    /// `--after-quiet`.
    AfterQuiet,
}

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    /// Going.
    Running,
    /// Ended with a report.
    Succeeded,
    /// Ended with an error.
    Failed,
    /// Cancelled: what it wrote is complete.
    Cancelled,
    /// The server stopped during the run.
    Interrupted,
}

impl Trigger {
    /// The name used in JSON and on the page.
    pub fn name(self) -> &'static str {
        match self {
            Trigger::Api => "api",
            Trigger::Every => "every",
            Trigger::AfterQuiet => "after-quiet",
        }
    }
}

impl State {
    /// The name used in JSON and in metrics.
    pub fn name(self) -> &'static str {
        match self {
            State::Running => "running",
            State::Succeeded => "succeeded",
            State::Failed => "failed",
            State::Cancelled => "cancelled",
            State::Interrupted => "interrupted",
        }
    }
}

/// How a job ended, as the backend tells it.
pub struct Ended {
    /// Succeeded, failed or cancelled.
    pub state: State,
    /// The report, also of a cancelled run (what it did so far).
    pub report: Option<Report>,
    /// What went wrong, in one line.
    pub error: Option<String>,
}

/// A run, as kept and as answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Record {
    /// Increasing from 1 over the state directory's life.
    pub id: u64,
    /// `run` or `check`.
    pub kind: Kind,
    /// The options it was started with.
    pub options: RunOptions,
    /// Who started it.
    pub trigger: Trigger,
    /// Where it stands.
    pub state: State,
    /// Start, in seconds since the epoch (Unix time).
    pub started: f64,
    /// End, in seconds since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<f64>,
    /// What went wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The report (`--report`'s JSON).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "sorted_keys"
    )]
    pub report: Option<Report>,
    /// The index's change mark read after the run (the store's `change_mark`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark_after: Option<String>,
    /// While it runs: how far it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<ProgressView>,
}

/// The report as records always held it: through `serde_json::Value`, whose objects write their
/// keys sorted (not in the fields' order, as `--report` does), so that state files and answers keep
/// their bytes.
fn sorted_keys<S: Serializer>(report: &Option<Report>, s: S) -> Result<S::Ok, S::Error> {
    serde_json::to_value(report)
        .map_err(serde::ser::Error::custom)?
        .serialize(s)
}
