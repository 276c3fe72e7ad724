//! The files a command reads before its work starts, each refused with one line naming what is
//! wrong: the chrome model of `run --chrome` and the URL rules of `urls` and `serve --rules`. A
//! command loads them once and passes them in, so a bad file stops it before anything is read.

use std::path::Path;
use std::sync::Arc;

use anyhow::{anyhow, Context};

use super::super::Failure;
use crate::signature::chrome::{ChromeModel, ChromeSet};
use crate::urlrules::{Rules, FORMAT};

/// `text` without the UTF-8 byte order mark an editor may have put at its start.
fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Reads the model of `run --chrome` (template lines: any shingle length can use it).
pub(crate) fn load_chrome(path: &Path) -> Result<Arc<ChromeSet>, Failure> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the chrome model {}", path.display()))?;
    let model = ChromeModel::from_json(without_bom(&text))
        .map_err(|e| anyhow!("chrome model {}: {e}", path.display()))?;
    let set = model
        .to_set()
        .map_err(|e| anyhow!("chrome model {}: {e}", path.display()))?;
    tracing::info!(hosts = set.len(), "chrome model read");
    Ok(Arc::new(set))
}

/// Reads a rules file: one line on what is wrong with it otherwise.
pub(crate) fn load_rules(path: &Path) -> Result<Rules, Failure> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "cannot read the rules {} (make them with `solr-dedup urls learn --out {}`)",
            path.display(),
            path.display()
        )
    })?;
    let value: serde_json::Value = serde_json::from_str(without_bom(&text)).map_err(|e| {
        anyhow!(
            "rules {}: not JSON ({e}); write it again with `solr-dedup urls learn`",
            path.display()
        )
    })?;
    match value.get("url_rules").and_then(serde_json::Value::as_u64) {
        Some(v) if v == u64::from(FORMAT) => {}
        Some(v) => {
            return Err(anyhow!(
                "rules {}: format {v}, this solr-dedup reads format {FORMAT}; learn them again with `solr-dedup urls learn`",
                path.display()
            )
            .into())
        }
        None if value.get("url_rules").is_some() => {
            return Err(anyhow!(
                "rules {}: \"url_rules\" must be a format number ({FORMAT}); learn them again with `solr-dedup urls learn`",
                path.display()
            )
            .into())
        }
        None => {
            return Err(anyhow!(
                "rules {}: not a rules file (no \"url_rules\" format number); make one with `solr-dedup urls learn`",
                path.display()
            )
            .into())
        }
    }
    let rules: Rules = serde_json::from_value(value).map_err(|e| {
        anyhow!(
            "rules {}: {e}; fix it or learn the rules again",
            path.display()
        )
    })?;
    if !(0.0..=1.0).contains(&rules.min_estimate) {
        return Err(anyhow!("rules {}: min_estimate must be from 0 to 1", path.display()).into());
    }
    if let Some(c) = rules.calibration {
        let inside = |v: f64| v > 0.0 && v < 1.0;
        if !inside(c.pi) || !inside(c.epsilon) {
            return Err(anyhow!(
                "rules {}: calibration pi and epsilon must be between 0 and 1 (exclusive); fix them, remove \"calibration\", or learn the rules again",
                path.display()
            )
            .into());
        }
    }
    Ok(rules)
}
