//! `solr-dedup clean`: take the worker's values off the documents of an index, so that it is as a
//! core the worker never touched (the flags, counts, near keys and word counts, and the signatures
//! unless they are kept).
//!
//! One light read of the documents that hold any of the fields (`fq` on their presence, so a core
//! the worker never ran on costs one empty request), then atomic updates that set each field the
//! document holds to null, guarded by the `_version_` read: a document re-indexed meanwhile (a
//! crawler's new copy carries none of the worker's fields) is read again by id and cleaned only if
//! it still holds one; one deleted meanwhile stays deleted (a guarded update never makes a
//! document). Nothing else of a document changes.

use std::collections::BTreeMap;

use serde_json::Value;

use super::progress::{Phase, Progress};
use crate::store::{AtomicUpdate, CommitMode, Doc, Filter, ReadQuery, Store, StoreError};

/// Times a document that changed under the clean-up is read again before it is given up on.
const ROUNDS: usize = 5;

/// What to clean.
#[derive(Debug, Clone)]
pub struct CleanSettings {
    /// The fields to take off (only those the index has).
    pub fields: Vec<String>,
    /// The unique key.
    pub id_field: String,
    /// `_version_`.
    pub version_field: String,
    /// Which documents (`--filter`).
    pub filter: Filter,
    /// Documents per read page and per update.
    pub batch_size: usize,
    /// Count, write nothing.
    pub dry_run: bool,
    /// How the updates are made visible at the end.
    pub commit: CommitMode,
}

impl CleanSettings {
    /// What a clean-up reads of a document: the unique key, `_version_` and the fields.
    pub fn read_fields(&self) -> Vec<String> {
        let mut fields = vec![self.id_field.clone(), self.version_field.clone()];
        fields.extend(self.fields.iter().cloned());
        fields
    }
}

/// What a clean-up found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct CleanReport {
    /// Documents that held any of the fields.
    pub documents: u64,
    /// Per field, the documents that held it.
    pub fields: BTreeMap<String, u64>,
    /// Documents cleaned (in a dry run: 0).
    pub cleaned: u64,
    /// Documents that changed under the clean-up and were read again.
    pub reread: u64,
    /// Documents deleted under the clean-up (left deleted).
    pub gone: u64,
    /// Documents that kept changing and still hold a field (run `clean` again).
    pub left: u64,
    /// Requests sent to the store.
    pub requests: u64,
}

/// Cleans `settings.fields` off the documents of `store`.
pub async fn clean(
    store: &dyn Store,
    settings: &CleanSettings,
    progress: &dyn Progress,
) -> Result<CleanReport, StoreError> {
    let mut report = CleanReport::default();
    let start = store.requests();
    if settings.fields.is_empty() {
        return Ok(report);
    }
    let held = Filter::Or(
        settings
            .fields
            .iter()
            .map(|f| Filter::Present(f.clone()))
            .collect(),
    );
    let query = ReadQuery {
        filter: settings.filter.clone().and(held),
        fields: settings.read_fields(),
        rows: settings.batch_size,
    };
    progress.phase(Phase::Scan);
    if let Ok(Some(n)) = store.count(&query.filter).await {
        progress.expect(n);
    }
    let mut cursor = None;
    loop {
        let page = store.read_page(&query, cursor.as_deref()).await?;
        progress.advance(page.docs.len() as u64);
        let updates: Vec<AtomicUpdate> = page
            .docs
            .iter()
            .filter_map(|d| update_of(d, settings, &mut report))
            .collect();
        if !settings.dry_run {
            for batch in updates.chunks(settings.batch_size.max(1)) {
                write(store, batch, settings, &query.fields, &mut report).await?;
            }
        }
        match page.next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    if !settings.dry_run && report.cleaned > 0 {
        progress.phase(Phase::Commit);
        store.commit(settings.commit).await?;
    }
    progress.finish();
    report.requests = store.requests() - start;
    Ok(report)
}

/// The update that takes the fields `doc` holds off it (counted in `report`), none when it holds
/// none.
fn update_of(doc: &Doc, s: &CleanSettings, report: &mut CleanReport) -> Option<AtomicUpdate> {
    let held: Vec<&String> = s
        .fields
        .iter()
        .filter(|f| doc.get(*f).is_some_and(|v| !v.is_null()))
        .collect();
    if held.is_empty() {
        return None;
    }
    report.documents += 1;
    for f in &held {
        *report.fields.entry((*f).clone()).or_default() += 1;
    }
    let id = match doc.get(&s.id_field)? {
        Value::String(id) => id.clone(),
        other => other.to_string(),
    };
    Some(AtomicUpdate {
        id,
        // Without the version read, `1`: Solr's "the document must exist", so that a document
        // deleted meanwhile is never made again by the update.
        version: Some(
            doc.get(&s.version_field)
                .and_then(Value::as_i64)
                .unwrap_or(1),
        ),
        set: held.into_iter().map(|f| (f.clone(), Value::Null)).collect(),
    })
}

/// Sends `batch`; what changed meanwhile is read again by id and sent again while it still holds
/// a field, up to [`ROUNDS`] times.
async fn write(
    store: &dyn Store,
    batch: &[AtomicUpdate],
    s: &CleanSettings,
    fields: &[String],
    report: &mut CleanReport,
) -> Result<(), StoreError> {
    let mut pending = batch.to_vec();
    for _ in 0..ROUNDS {
        let outcome = store.update(&pending).await?;
        report.cleaned += outcome.applied as u64;
        if outcome.conflicts.is_empty() {
            return Ok(());
        }
        report.reread += outcome.conflicts.len() as u64;
        let now = store.get(&outcome.conflicts, fields).await?;
        report.gone += (outcome.conflicts.len() - now.len()) as u64;
        // Counted once, when first read.
        let mut scratch = CleanReport::default();
        pending = now
            .iter()
            .filter_map(|d| update_of(d, s, &mut scratch))
            .collect();
        if pending.is_empty() {
            return Ok(());
        }
    }
    report.left += pending.len() as u64;
    Ok(())
}
