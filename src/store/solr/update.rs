//! The store's updates. Every update is guarded by the version it was decided on, and the store
//! tells the engine each applied document's new version (its later updates are guarded by it) and
//! each conflict:
//! - `adds` (`versions=true`) gives the version of every document the receiving node applied, also in
//!   a 409 answer, where it lists those processed before the conflict;
//! - a standalone core stops a batch at a conflict (`../shared/solr-transcripts`, surprise 6); the
//!   named document is a conflict and the rest is sent again;
//! - SolrCloud lists a document it forwarded to another shard's leader with version 0, and a conflict
//!   there does not stop the batch: the receiving node's own documents after it are applied, the
//!   other shard's are not. The 409 message wraps the leader's (`Async exception during distributed
//!   update: … Remote error message: version conflict for ID …`). So where `adds` does not give a
//!   version, a real-time get asks which documents hold what was sent: those that do are applied, with
//!   the version they have now; the others are sent again after a conflict, or are conflicts
//!   themselves (changed again) after a success.

use std::collections::HashMap;

use serde_json::Value;
use tracing::debug;

use super::{leaders, SolrStore};
use crate::solr_client::error::parse_adds;
use crate::solr_client::{Client, SolrError};
use crate::store::{AtomicUpdate, Doc, Store, StoreError, UpdateOutcome};

impl SolrStore {
    fn update_params(&self) -> Vec<(String, String)> {
        let mut p = vec![("versions".to_owned(), "true".to_owned())];
        if let Some(ms) = self.commit_within {
            p.push(("commitWithin".to_owned(), ms.to_string()));
        }
        p
    }

    /// Sends one batch and reads the new versions from `adds`.
    async fn send_batch(
        &self,
        client: &Client,
        batch: &[&AtomicUpdate],
    ) -> Result<Vec<(String, i64)>, SolrError> {
        let mut body = Vec::with_capacity(batch.len() * 128);
        body.push(b'[');
        for (i, u) in batch.iter().enumerate() {
            if i > 0 {
                body.push(b',');
            }
            body.extend(u.json_bytes(&self.id_field, &self.version_field));
        }
        body.push(b']');
        let answer = client.update(self.update_params(), body).await?;
        Ok(parse_adds(&answer))
    }

    /// Which of `updates` the core holds now, by real-time get: a document holds its update when
    /// every value the update sets is stored (a removed value: absent). The held ones come with the
    /// version they have now, which guards the engine's next update of them.
    ///
    /// This is how a batch's outcome is learnt where `adds` does not tell it: SolrCloud answers
    /// version 0 for a document it forwarded to another shard's leader, and a conflict there does
    /// not stop the batch at that document (the receiving node's own documents after it are
    /// applied, the other shard's are not).
    async fn holding<'u>(
        &self,
        updates: &[&'u AtomicUpdate],
    ) -> Result<(Vec<(String, i64)>, Vec<&'u AtomicUpdate>), StoreError> {
        let ids: Vec<String> = updates.iter().map(|u| u.id.clone()).collect();
        let mut fields = vec![self.version_field.clone()];
        for u in updates {
            for (f, _) in &u.set {
                if !fields.contains(f) {
                    fields.push(f.clone());
                }
            }
        }
        let docs = self.get(&ids, &fields).await?;
        let by_id: HashMap<String, &Doc> = docs
            .iter()
            .filter_map(|d| {
                let id = match d.get(&self.id_field)? {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                Some((id, d))
            })
            .collect();
        let mut held = Vec::new();
        let mut not_held = Vec::new();
        for &u in updates {
            let version = by_id.get(&u.id).and_then(|doc| {
                u.set
                    .iter()
                    .all(|(f, want)| stored_equals(doc.get(f), want))
                    .then(|| doc.get(&self.version_field).and_then(Value::as_i64))
                    .flatten()
            });
            match version {
                Some(v) => held.push((u.id.clone(), v)),
                None => not_held.push(u),
            }
        }
        Ok((held, not_held))
    }
}

/// Whether a stored value is the one an update set: `null` removes the field, and a multi-valued
/// field answers a one-element list.
fn stored_equals(stored: Option<&Value>, want: &Value) -> bool {
    match (stored, want) {
        (None | Some(Value::Null), Value::Null) => true,
        (Some(Value::Array(list)), w) if !w.is_array() => list.len() == 1 && list[0] == *w,
        (Some(s), w) => s == w,
        (None, _) => false,
    }
}

impl SolrStore {
    /// One batch in one request (and the requests its conflicts need).
    pub(super) async fn update_one(
        &self,
        batch: &[AtomicUpdate],
    ) -> Result<UpdateOutcome, StoreError> {
        self.update_via(&self.client, batch.iter().collect()).await
    }

    /// Each shard's part to its leader, two requests in flight per shard, all shards at once. A
    /// part whose leader cannot be reached goes through the collection URL.
    pub(super) async fn update_routed(
        &self,
        parts: Vec<(Client, Vec<&AtomicUpdate>)>,
    ) -> Result<UpdateOutcome, StoreError> {
        let mut jobs = Vec::new();
        for (client, part) in parts {
            if part.len() < 2 * MIN_HALF {
                jobs.push((client, part));
            } else {
                let (a, b) = part.split_at(part.len() / 2);
                jobs.push((client.clone(), a.to_vec()));
                jobs.push((client, b.to_vec()));
            }
        }
        let sends = jobs.into_iter().map(|(client, part)| async move {
            match self.update_via(&client, part.clone()).await {
                Err(e)
                    if self
                        .leaders
                        .as_ref()
                        .is_some_and(|l| l.give_up_after(&client, &e)) =>
                {
                    self.update_via(&self.client, part).await
                }
                done => done,
            }
        });
        let mut outcome = UpdateOutcome::default();
        for done in leaders::join_all(sends.collect()).await {
            let done = done?;
            outcome.applied += done.applied;
            outcome.conflicts.extend(done.conflicts);
            outcome.versions.extend(done.versions);
        }
        Ok(outcome)
    }

    /// One batch in one request to `client` (and the requests its conflicts need).
    pub(super) async fn update_via(
        &self,
        client: &Client,
        batch: Vec<&AtomicUpdate>,
    ) -> Result<UpdateOutcome, StoreError> {
        let mut outcome = UpdateOutcome::default();
        let mut rest = batch;
        while !rest.is_empty() {
            let (adds, conflict) = match self.send_batch(client, &rest).await {
                Ok(adds) => (adds, None),
                Err(SolrError::Conflict { document, adds, .. }) => (adds, Some(document)),
                Err(e) => return Err(e.into()),
            };
            // A version from the node that applied the update is exact; 0 (forwarded to another
            // shard's leader) and absent (after a conflict) say nothing.
            let known: HashMap<&str, i64> = adds
                .iter()
                .filter(|(_, v)| *v != 0)
                .map(|(id, v)| (id.as_str(), *v))
                .collect();
            let named = conflict.as_ref().and_then(Option::as_deref);
            let mut named_found = false;
            let mut unknown = Vec::new();
            for u in rest {
                if Some(u.id.as_str()) == named {
                    debug!(id = %u.id, "version conflict");
                    named_found = true;
                    outcome.conflicts.push(u.id.clone());
                } else if let Some(&v) = known.get(u.id.as_str()) {
                    outcome.applied += 1;
                    outcome.versions.push((u.id.clone(), v));
                } else {
                    unknown.push(u);
                }
            }
            if unknown.is_empty() {
                break;
            }
            let (held, not_held) = self.holding(&unknown).await?;
            outcome.applied += held.len();
            outcome.versions.extend(held);
            match conflict {
                None => {
                    // Solr took the whole batch: one that no longer holds what was sent changed
                    // again in between, and is left to the next round like any conflict.
                    outcome
                        .conflicts
                        .extend(not_held.iter().map(|u| u.id.clone()));
                    break;
                }
                // The named one is out; the rest were not reached (or not by their shard's leader).
                Some(_) if named_found => rest = not_held,
                // A message that names no document of the batch. One left: that is the conflict.
                Some(_) if not_held.len() <= 1 => {
                    outcome
                        .conflicts
                        .extend(not_held.iter().map(|u| u.id.clone()));
                    break;
                }
                // Several: one at a time, so that each conflict is known.
                Some(_) => {
                    for u in not_held {
                        let one = Box::pin(self.update_via(client, vec![u])).await?;
                        outcome.applied += one.applied;
                        outcome.conflicts.extend(one.conflicts);
                        outcome.versions.extend(one.versions);
                    }
                    break;
                }
            }
        }
        Ok(outcome)
    }
}

/// Batches of fewer than twice this many documents go out in one request.
pub(super) const MIN_HALF: usize = 100;
