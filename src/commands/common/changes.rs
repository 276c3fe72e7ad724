//! Which runs find their changes from versions ([`crate::store::changes`]), and with what: a Solr
//! core with a state folder, one state per core and `--filter` in `STATE_DIR/changes/`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use md5::{Digest, Md5};

use super::decided::target_of;
use super::settings::Deciding;
use crate::config::{IndexConfig, JobConfig, Source};
use crate::engine::{DimensionReport, EngineConfig, Name};
use crate::store::changes::{ChangeStore, ChangesConfig, DeltaFields};
use crate::store::{CommitMode, Store};

/// The most changed documents a run reads into memory: a 16th of `--memory` at about 1 KiB each,
/// and never fewer than 1,000.
fn max_changed(memory: u64) -> usize {
    ((memory / 16 / 1024) as usize).max(1000)
}

/// The deciding settings, the URL rules and the chrome model, as one digest: a settled state is
/// trusted to need nothing only under the same. (The order the flags were decided under before
/// the state's run does not enter: that run decided every group it touched under these.)
fn digest(c: &JobConfig, engine: &EngineConfig) -> String {
    let mut h = Md5::new();
    h.update(serde_json::to_vec(&Deciding::of(c, engine)).unwrap_or_default());
    if let Some(rules) = &engine.url_rules {
        h.update(serde_json::to_vec(&**rules).unwrap_or_default());
    }
    if let Some(chrome) = &c.chrome {
        h.update(std::fs::read(chrome).unwrap_or_default());
    }
    format!("{:x}", h.finalize())
}

/// Where the change state of a core (its URL) and `--filter` is kept in `state_dir`.
fn dir_of(url: &str, filter: Option<&str>, state_dir: &Path) -> PathBuf {
    let target = target_of(url);
    let name = format!(
        "{:x}",
        Md5::digest(format!("{target}\n{filter:?}").as_bytes())
    );
    state_dir.join("changes").join(name)
}

/// The documents of the change state a run kept for `index` in `state_dir`, when it holds
/// `needed` (serve's prediction index after a run).
pub(crate) fn kept_docs(
    index: &IndexConfig,
    state_dir: Option<&Path>,
    needed: &[String],
) -> Option<crate::store::changes::KeptDocs> {
    let (Source::Solr(solr), Some(dir)) = (&index.source, state_dir) else {
        return None;
    };
    crate::store::changes::kept_docs(
        &dir_of(&solr.url, index.filter.as_deref(), dir),
        &target_of(&solr.url),
        index.filter.as_deref(),
        needed,
    )
}

/// The documents the run that kept the change state of `index` changed against the state whose
/// documents file was `from` (serve's prediction index after a run; see
/// [`crate::store::changes::kept_delta`]).
pub(crate) fn kept_delta(
    index: &IndexConfig,
    state_dir: Option<&Path>,
    fields: &crate::engine::FieldNames,
    from: &str,
) -> Option<crate::store::changes::KeptDelta> {
    let (Source::Solr(solr), Some(dir)) = (&index.source, state_dir) else {
        return None;
    };
    crate::store::changes::kept_delta(
        &dir_of(&solr.url, index.filter.as_deref(), dir),
        &target_of(&solr.url),
        index.filter.as_deref(),
        // What the runs keep in the delta is what the prediction index reads.
        &delta_fields(fields),
        from,
    )
}

/// Removes the change state of `index` (`clean`): the next run reads every document.
pub(crate) fn forget(index: &IndexConfig, state_dir: Option<&Path>) -> std::io::Result<()> {
    let (Source::Solr(solr), Some(dir)) = (&index.source, state_dir) else {
        return Ok(());
    };
    match std::fs::remove_dir_all(dir_of(&solr.url, index.filter.as_deref(), dir)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// The store that finds `inner`'s changes from versions, when the run can: a Solr core, a state
/// folder, and not `--no-change-state`. `extra`: fields read light besides the engine's (the near keys,
/// when the core streams them).
pub(crate) fn store_for(
    c: &JobConfig,
    engine: &EngineConfig,
    inner: Arc<dyn Store>,
    extra: Vec<String>,
    writes: bool,
) -> Option<Arc<ChangeStore>> {
    let (Source::Solr(solr), Some(dir)) = (&c.index.source, c.state_dir.as_deref()) else {
        return None;
    };
    if !c.changes {
        return None;
    }
    let cfg = ChangesConfig {
        dir: dir_of(&solr.url, c.index.filter.as_deref(), dir),
        target: target_of(&solr.url),
        filter_text: c.index.filter.clone(),
        filter: engine.filter.clone(),
        id_field: engine.fields.id.clone(),
        version_field: engine.fields.version.clone(),
        light_fields: crate::engine::light_fields(engine),
        extra_fields: extra,
        digest: digest(c, engine),
        window_ms: c.change_window_ms,
        batch: engine.batch_size,
        max_changed: max_changed(engine.memory),
        writes,
        visible_after_commit: matches!(engine.commit, CommitMode::Hard | CommitMode::Soft),
        full: engine.full,
        temp_dir: engine.temp_dir.clone(),
        memory: engine.memory,
        delta: Some(delta_fields(&engine.fields)),
    };
    Some(Arc::new(ChangeStore::new(inner, cfg)))
}

/// What the state's delta keeps: what serve's prediction index reads of a page (see
/// [`crate::learn::urls::index_fields`]), the exact copy count only as "has a double or not".
fn delta_fields(fields: &crate::engine::FieldNames) -> DeltaFields {
    DeltaFields {
        fields: crate::learn::urls::index_fields(fields, true),
        above_one: fields
            .count(crate::engine::Dimension::Exact)
            .map(str::to_owned)
            .into_iter()
            .collect(),
    }
}

/// The dimensions a settled state's run reported, as a run that finds nothing changed repeats
/// them: the same groups and doubles, nothing changed.
pub(crate) fn settled_dimensions(kept: serde_json::Value) -> BTreeMap<Name, DimensionReport> {
    let mut dims: BTreeMap<Name, DimensionReport> =
        serde_json::from_value(kept).unwrap_or_default();
    for d in dims.values_mut() {
        d.changed = 0;
        d.examples.clear();
        d.flips = 0;
        d.flip_examples.clear();
        d.decided_by.clear();
    }
    dims
}
