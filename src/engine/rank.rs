//! Pass B: read id, URL and version of the documents to decide and keep the best member of each open
//! group under the one preference order.
//!
//! When the documents to decide are looked up (a change, not everything), pass B reads their stored
//! flags and counts too and keeps them for pass C, which then writes without reading them again:
//! one lookup per document instead of two (issue 25). The kept answers are bounded (see
//! [`STASH_DOCS`]); past the bound pass C reads again, as it does after a full read.

use super::doc::{get_i64, get_str};
use super::group::Groups;
use super::pages::Rereads;
use super::{
    compare_full, deciding_rule, Best, Dimension, EngineError, Plan, RankInput, Rec, Report, Round,
    Scope, Todo, UrlKeys,
};
use crate::store::{id_hash, Doc, Store};

/// The most documents pass B keeps for pass C. A lookup round decides at most about
/// [`super::open::Keep::CAP`] values' documents, each kept with its dozen flag fields (under a
/// kilobyte); past this pass C reads them again instead.
const STASH_DOCS: usize = 20_000;

/// Pass B's answer: the best member of each group, and how many documents to decide its lookups
/// did not find (`None` when it read everything).
pub(super) struct Ranked {
    pub(super) best: Vec<Vec<Option<Best>>>,
    pub(super) missed: Option<usize>,
    /// The documents to decide as read with their flags and counts (pass C's fields), when this
    /// pass looked them up and kept them all; pass C then writes from these.
    pub(super) stash: Option<Vec<Doc>>,
}

impl<S: Store> Round<'_, S> {
    pub(super) async fn pass_b(
        &self,
        report: &mut Report,
        input: RankInput<'_>,
    ) -> Result<Ranked, EngineError> {
        let RankInput {
            records,
            todo,
            reads,
        } = input;
        let recs = records.recs;
        let Todo { groups, open, .. } = *todo;
        let mut best: Vec<Vec<Option<Best>>> = groups
            .iter()
            .map(|g| {
                g.as_ref()
                    .map_or_else(Vec::new, |g| (0..g.count()).map(|_| None).collect())
            })
            .collect();
        let lookups = Rereads::are_lookups(&self.plan.query().filter, reads);
        // Looked-up documents are few: read what pass C needs now, and keep it.
        let query = if lookups {
            self.plan.rank_write_query()
        } else {
            self.plan.rank_query()
        };
        let mut pages = Rereads::new(query, reads, self.progress);
        let mut stash = lookups.then(Vec::new);
        // Only lookups can miss a document; a full read that does not see one saw it deleted.
        if best.iter().all(Vec::is_empty) && !lookups {
            return Ok(Ranked {
                best,
                missed: None,
                stash: None,
            });
        }
        let mut find = records.finder();
        let mut seen = vec![false; recs.len()];
        while let Some(page) = pages.next(self.store, report).await? {
            for doc in &page.docs {
                let Some(id) = self.plan.id_of(doc) else {
                    continue;
                };
                let Some(idx) = find.index(id_hash(&id)) else {
                    continue;
                };
                if !open.docs[idx] {
                    continue;
                }
                if seen[idx] {
                    // Lookups may find a document twice; it is kept once.
                    continue;
                }
                seen[idx] = true;
                let rec = &recs.get(idx);
                if let Some(kept) = &mut stash {
                    if kept.len() < STASH_DOCS {
                        kept.push(doc.clone());
                    } else {
                        stash = None;
                    }
                }
                if !self.plan.same_version(doc, rec) {
                    continue;
                }
                // Most documents are alone in every dimension and need no URL parsing here.
                let grouped = groups.iter().zip(&open.groups).any(|(g, decide)| {
                    g.as_ref().is_some_and(|g| {
                        let gi = g.group_of(idx);
                        gi != Groups::ALONE && (open.all || decide[gi as usize])
                    })
                });
                if !grouped {
                    continue;
                }
                let url = UrlKeys::new(get_str(doc, &self.plan.cfg.fields.url));
                for d in Dimension::ALL {
                    let Some(g) = &groups[d.index()] else {
                        continue;
                    };
                    let gi = g.group_of(idx);
                    if gi == Groups::ALONE || !open.decides(&self.plan, d, gi, rec) {
                        continue;
                    }
                    let check = self.plan.key_material(d, &url);
                    let slot = &mut best[d.index()][gi as usize];
                    let me = (rec.prefix, url.normalized.as_deref(), id.as_ref());
                    let better = match slot {
                        None => true,
                        Some(b) => {
                            if *b.check != *check {
                                return Err(EngineError::KeyCollision {
                                    dimension: d,
                                    first: b.check.to_string(),
                                    second: check.to_string(),
                                });
                            }
                            compare_full(me, (b.prefix, b.url.as_deref(), &b.id)).is_lt()
                        }
                    };
                    let owned = || (me.0, me.1.map(Into::into), me.2.into());
                    if better {
                        let runner_up = slot.take().map(|b| (b.prefix, b.url, b.id));
                        *slot = Some(Best {
                            prefix: rec.prefix,
                            url: url.normalized.as_deref().map(Into::into),
                            id: id.as_ref().into(),
                            runner_up,
                            check: check.into(),
                        });
                    } else if let Some(b) = slot {
                        let second = match &b.runner_up {
                            None => true,
                            Some((p, u, i)) => compare_full(me, (*p, u.as_deref(), i)).is_lt(),
                        };
                        if second {
                            b.runner_up = Some(owned());
                        }
                    }
                }
            }
        }
        let missed = lookups.then(|| {
            open.docs
                .iter()
                .zip(&seen)
                .filter(|(n, s)| **n && !**s)
                .count()
        });
        Ok(Ranked {
            best,
            missed,
            stash,
        })
    }
}

/// Per dimension, the first rule of the order that separated each decided group's representative
/// from its runner-up (the report's `decided_by`).
pub(super) fn count_deciding_rules(best: &[Vec<Option<Best>>], report: &mut Report) {
    for d in Dimension::ALL {
        for b in best[d.index()].iter().flatten() {
            let Some((p, u, i)) = &b.runner_up else {
                continue;
            };
            let rule = deciding_rule((b.prefix, b.url.as_deref(), &b.id), (*p, u.as_deref(), i));
            let r = report.dimensions.entry(d.name().into()).or_default();
            *r.decided_by.entry(rule.name().into()).or_default() += 1;
        }
    }
}

impl Plan<'_> {
    /// What must be equal across a group besides its 64-bit key: the URL key for the URL dimensions,
    /// the host for content dimensions under host scope. Content signatures are their own keys.
    pub(super) fn key_material(&self, d: Dimension, url: &UrlKeys) -> String {
        match d {
            Dimension::Www => url.www_key.clone().unwrap_or_default(),
            Dimension::Http => url.http_key.clone().unwrap_or_default(),
            _ if self.cfg.scope == Scope::Host => url.host_key.clone().unwrap_or_default(),
            _ => String::new(),
        }
    }

    pub(super) fn same_version(&self, doc: &Doc, rec: &Rec) -> bool {
        let v = get_i64(doc, &self.cfg.fields.version).unwrap_or(0);
        v == rec.read_version
    }
}
