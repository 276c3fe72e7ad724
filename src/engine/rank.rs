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
use super::spill;
use super::{
    compare_full, deciding_rule, Dimension, EngineError, Plan, RankInput, RankPrefix, Rec, Report,
    Round, Rule, Scope, Todo, UrlKeys,
};
use crate::store::{id_hash, Doc, Store, StoreError};

/// The most documents pass B keeps for pass C. A lookup round decides at most about
/// [`super::open::Keep::CAP`] values' documents, each kept with its dozen flag fields (under a
/// kilobyte); past this pass C reads them again instead.
const STASH_DOCS: usize = 20_000;

/// Pass B's answer: the best member of each group, and how many documents to decide its lookups
/// did not find (`None` when it read everything).
pub(super) struct Ranked {
    pub(super) best: Bests,
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
        let mut best = Bests::new(groups, &self.spill)?;
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
        if best.is_empty() && !lookups {
            return Ok(Ranked {
                best,
                missed: None,
                stash: None,
            });
        }
        let mut find = records.finder();
        let mut seen = fixedbitset::FixedBitSet::with_capacity(recs.len());
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
                seen.insert(idx);
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
                    let me = (rec.prefix, url.normalized.as_deref(), id.as_ref());
                    best.consider(d, gi, idx as u32, me, &check)?;
                }
            }
        }
        let missed = lookups.then(|| open.docs.difference_count(&seen));
        if missed.is_some_and(|m| m > 0) && tracing::enabled!(tracing::Level::DEBUG) {
            for idx in open.docs.difference(&seen).take(5) {
                let rec = recs.get(idx);
                let sizes: Vec<(&str, u32)> = Dimension::ALL
                    .into_iter()
                    .filter_map(|d| {
                        let g = groups[d.index()].as_ref()?;
                        let gi = g.group_of(idx);
                        (gi != Groups::ALONE).then(|| (d.name(), g.sizes[gi as usize]))
                    })
                    .collect();
                tracing::debug!(
                    ?rec,
                    ?sizes,
                    "a document to decide the lookups did not find"
                );
            }
        }
        Ok(Ranked {
            best,
            missed,
            stash,
        })
    }
}

/// Per dimension, per group: the best member so far under the one preference order, kept in a
/// fixed-size slot (40 bytes a group). Its strings (normalised URL, id, key material) go to a
/// [`spill::Strings`] past a 32nd of the budget, and are read back only when another member ties
/// with it on the rank prefix (the URL decides then), for the key-collision message, and for the
/// near dimension's representative id. The runner-up is not kept: in a lexicographic order the
/// member that comes second agrees longest with the first, so the rule that separated them (the
/// report's `decided_by`) is the deepest rule on which any member first differed from the best.
pub(super) struct Bests {
    slots: Vec<Vec<Slot>>,
    strings: spill::Strings,
}

#[derive(Clone, Copy)]
struct Slot {
    prefix: RankPrefix,
    /// The best member's record, [`Slot::NONE`] before any.
    winner: u32,
    /// The deepest rule on which a member differed from the best (`None`: no other member yet).
    rule: Option<Rule>,
    /// Where the best member's strings are.
    at: u64,
    /// A hash of the group's key material (another hash than the key's), to notice two keys with
    /// one 64-bit hash.
    check: u64,
}

impl Slot {
    const NONE: u32 = u32::MAX;
}

/// The strings of a best member, as kept: URL (if any), id, key material.
struct Kept {
    url: Option<String>,
    id: String,
    check: String,
}

impl Kept {
    fn bytes(url: Option<&str>, id: &str, check: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(9 + url.map_or(0, str::len) + id.len() + check.len());
        out.push(u8::from(url.is_some()));
        for s in [url.unwrap_or(""), id] {
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        out.extend_from_slice(check.as_bytes());
        out
    }

    fn from_bytes(b: &[u8]) -> Kept {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let len =
            |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes")) as usize;
        let url_len = len(1);
        let id_at = 5 + url_len;
        let id_len = len(id_at);
        Kept {
            url: (b[0] != 0).then(|| text(&b[5..id_at])),
            id: text(&b[id_at + 4..id_at + 4 + id_len]),
            check: text(&b[id_at + 4 + id_len..]),
        }
    }
}

impl Bests {
    /// Of the memory budget, the part the strings keep in memory.
    const SHARE: u64 = 32;

    fn new(groups: &[Option<Groups>], area: &spill::SpillArea) -> Result<Bests, EngineError> {
        let empty = Slot {
            prefix: RankPrefix::from_bytes(&[0; 12]),
            winner: Slot::NONE,
            rule: None,
            at: 0,
            check: 0,
        };
        Ok(Bests {
            slots: groups
                .iter()
                .map(|g| g.as_ref().map_or_else(Vec::new, |g| vec![empty; g.count()]))
                .collect(),
            strings: spill::Strings::new(area.clone(), area.share(Self::SHARE)),
        })
    }

    /// No dimension has a group.
    fn is_empty(&self) -> bool {
        self.slots.iter().all(Vec::is_empty)
    }

    /// The record of the best member of group `gi` in `d`, if any member was ranked.
    pub(super) fn winner(&self, d: Dimension, gi: u32) -> Option<u32> {
        let w = self.slots[d.index()][gi as usize].winner;
        (w != Slot::NONE).then_some(w)
    }

    /// The id of the best member of group `gi` in `d`, if any member was ranked.
    pub(super) fn winner_id(&self, d: Dimension, gi: u32) -> Result<Option<String>, EngineError> {
        let slot = &self.slots[d.index()][gi as usize];
        if slot.winner == Slot::NONE {
            return Ok(None);
        }
        Ok(Some(self.kept(slot.at)?.id))
    }

    fn kept(&self, at: u64) -> Result<Kept, EngineError> {
        let bytes = self
            .strings
            .get(at)
            .map_err(|e| StoreError::io("cannot read the best members back", e))?;
        Ok(Kept::from_bytes(&bytes))
    }

    /// Ranks record `idx` (`me`: its rank prefix, normalised URL and id) in group `gi` of `d`, whose
    /// key material is `check`.
    fn consider(
        &mut self,
        d: Dimension,
        gi: u32,
        idx: u32,
        me: (RankPrefix, Option<&str>, &str),
        check: &str,
    ) -> Result<(), EngineError> {
        let check_hash = id_hash(check);
        let slot = self.slots[d.index()][gi as usize];
        let keep = |strings: &mut spill::Strings| {
            strings
                .push(&Kept::bytes(me.1, me.2, check))
                .map_err(|e| StoreError::io("cannot keep the best members", e))
        };
        if slot.winner == Slot::NONE {
            let at = keep(&mut self.strings)?;
            self.slots[d.index()][gi as usize] = Slot {
                prefix: me.0,
                winner: idx,
                rule: None,
                at,
                check: check_hash,
            };
            return Ok(());
        }
        if slot.check != check_hash {
            return Err(EngineError::KeyCollision {
                dimension: d,
                first: self.kept(slot.at)?.check,
                second: check.to_owned(),
            });
        }
        // Which comes first, and the rule that separated them: from the prefixes alone unless
        // they tie, when the URL and id decide.
        let (better, rule) = if me.0 != slot.prefix {
            let (a, b) = ((me.0, None, ""), (slot.prefix, None, ""));
            (me.0 < slot.prefix, deciding_rule(a, b))
        } else {
            let kept = self.kept(slot.at)?;
            let other = (slot.prefix, kept.url.as_deref(), kept.id.as_str());
            (compare_full(me, other).is_lt(), deciding_rule(me, other))
        };
        let slot = &mut self.slots[d.index()][gi as usize];
        if better {
            // The old best comes second now: nothing agrees longer with the new one.
            slot.prefix = me.0;
            slot.winner = idx;
            slot.rule = Some(rule);
            slot.at = keep(&mut self.strings)?;
        } else {
            slot.rule = Some(slot.rule.map_or(rule, |r| r.max(rule)));
        }
        Ok(())
    }

    /// Per dimension, the first rule of the order that separated each decided group's
    /// representative from its runner-up (the report's `decided_by`).
    pub(super) fn count_deciding_rules(&self, report: &mut Report) {
        for (d, slots) in Dimension::ALL.into_iter().zip(&self.slots) {
            for slot in slots {
                let Some(rule) = slot.rule else {
                    continue;
                };
                let r = report.dimensions.entry(d.name().into()).or_default();
                *r.decided_by.entry(rule.name().into()).or_default() += 1;
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Preference, UrlKeys};
    use proptest::prelude::*;

    /// Members of one group, in the order pass B reads them: the slot ends with the member the
    /// whole order puts first, and the rule that separates it from the one it puts second (what
    /// keeping the runner-up gave), for every order of arrival; prefixes tie often (same length,
    /// same scheme), so the URL and id decide through the kept strings, spilled or not.
    fn check(urls: Vec<(usize, u8)>, budget: u64) {
        let hosts = [
            "http://a.org/",
            "https://a.org/",
            "http://www.a.org/",
            "https://b.org/",
        ];
        let members: Vec<(RankPrefix, String, String)> = urls
            .iter()
            .enumerate()
            .map(|(i, &(h, p))| {
                let url = format!(
                    "{}{}",
                    hosts[h % hosts.len()],
                    ["x", "y", "xy", "yx"][p as usize % 4]
                );
                let keys = UrlKeys::new(Some(&url));
                let prefix = RankPrefix::new(Some(&url), &keys, Preference::default(), None);
                (
                    prefix,
                    keys.normalized.unwrap_or_default(),
                    format!("id-{}", (i * 7) % 5 + i),
                )
            })
            .collect();
        let area = spill::SpillArea::new(None, budget);
        let groups = vec![Some(Groups::from_members(
            members.len(),
            (0..members.len() as u32).map(|i| (i, 0)),
            vec![members.len() as u32],
        ))];
        let mut best = Bests::new(&groups, &area).unwrap();
        for (i, (p, u, id)) in members.iter().enumerate() {
            best.consider(Dimension::Exact, 0, i as u32, (*p, Some(u), id), "")
                .unwrap();
        }
        let key = |i: usize| {
            (
                members[i].0,
                Some(members[i].1.as_str()),
                members[i].2.as_str(),
            )
        };
        let mut order: Vec<usize> = (0..members.len()).collect();
        order.sort_by(|&a, &b| compare_full(key(a), key(b)));
        assert_eq!(best.winner(Dimension::Exact, 0), Some(order[0] as u32));
        assert_eq!(
            best.winner_id(Dimension::Exact, 0).unwrap().as_deref(),
            Some(members[order[0]].2.as_str())
        );
        let mut report = Report::default();
        best.count_deciding_rules(&mut report);
        let rules = report
            .dimensions
            .get("exact")
            .map(|d| d.decided_by.clone())
            .unwrap_or_default();
        if members.len() > 1 {
            let rule = deciding_rule(key(order[0]), key(order[1]));
            assert_eq!(rules.len(), 1);
            assert_eq!(rules.get(rule.name()), Some(&1), "{rules:?}");
        } else {
            assert!(rules.is_empty());
        }
    }

    proptest! {
        #[test]
        fn the_best_member_and_its_rule_match_a_sort(
            urls in proptest::collection::vec((0usize..4, 0u8..4), 1..12),
            small in any::<bool>(),
        ) {
            // A budget of 64 bytes spills every string after the first.
            check(urls, if small { 64 * Bests::SHARE } else { 1 << 20 });
        }
    }

    #[test]
    fn two_keys_with_one_hash_are_told() {
        let area = spill::SpillArea::new(None, 1 << 20);
        let groups = vec![
            None,
            Some(Groups::from_members(
                2,
                [(0, 0), (1, 0)].into_iter(),
                vec![2],
            )),
        ];
        let mut best = Bests::new(&groups, &area).unwrap();
        let url = "http://a.org/x";
        let p = RankPrefix::new(
            Some(url),
            &UrlKeys::new(Some(url)),
            Preference::default(),
            None,
        );
        best.consider(Dimension::Fuzzy, 0, 0, (p, Some(url), "a"), "k1")
            .unwrap();
        let e = best
            .consider(Dimension::Fuzzy, 0, 1, (p, Some(url), "b"), "k2")
            .unwrap_err();
        assert!(
            matches!(&e, EngineError::KeyCollision { first, second, .. } if first == "k1" && second == "k2"),
            "{e}"
        );
    }
}
