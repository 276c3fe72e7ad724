//! Pass C: read the stored flags and counts of the documents to decide (or take those pass B kept
//! when it looked them up), and write those that differ from the decision, guarded by the version
//! it was based on.

use serde_json::Value;
use tracing::debug;

use super::doc::{get_bool, get_i64, get_str};
use super::group::Groups;
use super::pages::Rereads;
use super::{Dimension, EngineError, Mode, Report, Round, Todo, WriteInput, Written};
use crate::store::{id_hash, AtomicUpdate, Store, StoreError};

impl<S: Store> Round<'_, S> {
    // ---------------------------------------------------------------- pass C

    pub(super) async fn pass_c(
        &self,
        report: &mut Report,
        input: WriteInput<'_>,
    ) -> Result<Written, EngineError> {
        let WriteInput {
            records,
            todo,
            best,
            reads,
            stash,
        } = input;
        let recs = records.recs;
        let Todo {
            groups,
            open,
            pending: sigs,
        } = *todo;
        let f = &self.plan.cfg.fields;
        let mut unsettled = 0u64;
        let mut batch: Vec<AtomicUpdate> = Vec::new();
        let mut seen = fixedbitset::FixedBitSet::with_capacity(recs.len());
        let mut find = records.finder();
        // Pass B kept what it looked up: one batch of those, else pages read again.
        let mut pages = stash
            .is_none()
            .then(|| Rereads::new(self.plan.write_query(), reads, self.progress));
        let mut kept = stash;
        loop {
            let docs = if let Some(docs) = kept.take() {
                self.progress.advance(docs.len() as u64);
                docs
            } else if let Some(pages) = &mut pages {
                match pages.next(self.store, report).await? {
                    Some(page) => page.docs,
                    None => break,
                }
            } else {
                break;
            };
            for doc in &docs {
                let Some(id) = self.plan.id_of(doc) else {
                    continue;
                };
                let Some(idx) = find.index(id_hash(&id)) else {
                    // Added after pass A: the next run takes it in.
                    continue;
                };
                // Lookups may find a document twice; it is decided once.
                if !open.docs[idx] || seen[idx] {
                    continue;
                }
                seen.insert(idx);
                let rec = &recs.get(idx);
                if !self.plan.same_version(doc, rec) {
                    report.documents.changed_during_run += 1;
                    unsettled += 1;
                    continue;
                }
                // The signatures pass A computed go in the same update as the flags and counts.
                let mut set = if rec.pending && self.plan.mode != Mode::Check {
                    sigs.get(idx)
                        .map_err(|e| {
                            StoreError::io("cannot read the signatures kept in pass A", e)
                        })?
                        .unwrap_or_default()
                } else {
                    Vec::new()
                };
                for d in Dimension::ALL {
                    let Some(g) = &groups[d.index()] else {
                        continue;
                    };
                    let gi = g.group_of(idx);
                    if !open.decides(&self.plan, d, gi, rec) {
                        continue;
                    }
                    let (unique, count) = if gi == Groups::ALONE {
                        (true, 1)
                    } else {
                        (best.winner(d, gi) == Some(idx as u32), g.sizes[gi as usize])
                    };
                    let mut changed = false;
                    if d == Dimension::Near {
                        // The cluster's id for `{!collapse}`: its representative's.
                        let winner = match gi {
                            Groups::ALONE => None,
                            _ if unique => None,
                            _ => best.winner_id(d, gi)?,
                        };
                        let group = winner.as_deref().unwrap_or(id.as_ref());
                        if f.numeric_flags() {
                            // The in-place profile: the id's hash, a number Solr updates in place.
                            let hash = crate::store::id_hash(group) as i64;
                            if get_i64(doc, &f.near_group) != Some(hash) {
                                set.push((f.near_group.clone(), Value::from(hash)));
                                changed = true;
                            }
                        } else if get_str(doc, &f.near_group) != Some(group) {
                            set.push((f.near_group.clone(), Value::String(group.to_owned())));
                            changed = true;
                        }
                    }
                    let stored = get_bool(doc, f.unique(d));
                    if stored != Some(unique) {
                        let flag = if f.numeric_flags() {
                            Value::from(i32::from(unique))
                        } else {
                            Value::Bool(unique)
                        };
                        set.push((f.unique(d).to_owned(), flag));
                        changed = true;
                    }
                    if stored == Some(!unique) {
                        // A flag that was set and turns over: what a new order or setting changes.
                        let r = report.dimensions.entry(d.name().into()).or_default();
                        r.flips += 1;
                        if !self.plan.writes() && r.flip_examples.len() < 5 {
                            r.flip_examples.push(id.clone().into_owned());
                        }
                    }
                    if let Some(cf) = f.count(d) {
                        if get_i64(doc, cf) != Some(i64::from(count)) {
                            set.push((cf.to_owned(), Value::from(count)));
                            changed = true;
                        }
                    }
                    if changed {
                        let r = report.dimensions.entry(d.name().into()).or_default();
                        r.changed += 1;
                        if self.plan.mode == Mode::Check && r.examples.len() < 5 {
                            r.examples.push(id.clone().into_owned());
                        }
                    }
                }
                // A check counts a document it would sign as one it would write, as the run does.
                let would_sign = rec.pending && self.plan.mode == Mode::Check;
                if set.is_empty() && !would_sign {
                    continue;
                }
                if rec.read_version == 0 && self.store.needs_versions() {
                    // Read without a version from a store others write to: refused, counted.
                    report.documents.unversioned += 1;
                    continue;
                }
                if !self.plan.writes() {
                    report.documents.written += 1;
                    continue;
                }
                batch.push(AtomicUpdate {
                    id: id.into_owned(),
                    // Guarded by the version the signatures and the decision were based on (a file
                    // read without one: "it exists", Solr's `_version_: 1`).
                    version: Some(if rec.read_version != 0 {
                        rec.read_version
                    } else {
                        1
                    }),
                    set,
                });
                if batch.len() >= self.plan.cfg.batch_size.max(1) {
                    // Never a decision from a record that could not be read back.
                    recs.check()?;
                    unsettled += self.flush(&mut batch, report).await?;
                }
            }
        }
        recs.check()?;
        unsettled += self.flush(&mut batch, report).await?;
        let gone = open.docs.difference_count(&seen) as u64;
        if gone > 0 {
            // Deleted (or moved out of the filter) during the run: their groups shrank.
            debug!(gone, "documents disappeared during the run");
            report.documents.changed_during_run += gone;
            unsettled += gone;
        }
        Ok(Written { unsettled })
    }

    pub(super) async fn flush(
        &self,
        batch: &mut Vec<AtomicUpdate>,
        report: &mut Report,
    ) -> Result<u64, EngineError> {
        if batch.is_empty() {
            return Ok(0);
        }
        report.work.written_docs += batch.len() as u64;
        if self.plan.cfg.in_place_writes {
            // Updates that set only the in-place profile's fields: Solr applies them in place.
            let profile = self.plan.cfg.fields.profile_fields();
            report.work.written_in_place_docs += batch
                .iter()
                .filter(|u| {
                    u.set
                        .iter()
                        .all(|(f, _)| profile.iter().any(|(_, name)| name == f))
                })
                .count() as u64;
        }
        let outcome = match self.store.update(batch).await {
            Ok(outcome) => outcome,
            Err(e) => {
                // Any failure may have come after Solr applied part of the batch: a broken
                // connection or a lost answer after all of it, a 400 after the documents before
                // the one it refused (Solr applies a batch in order and keeps what it applied), one
                // half or one shard's part acknowledged beside another's error. The report gives a
                // range that holds what landed.
                report.documents.unanswered += batch.len() as u64;
                return Err(e.into());
            }
        };
        let conflicts = outcome.conflicts.len() as u64;
        report.documents.conflicts += conflicts;
        report.documents.written += batch.len() as u64 - conflicts;
        batch.clear();
        Ok(conflicts)
    }
}
