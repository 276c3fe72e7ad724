//! Which groups a round decides again (`Open`), what pass A keeps to look their documents up (`Keep`),
//! and the work list passes B and C share (`Todo`).

use super::group::Groups;
use super::pending::Pending;
use super::{Dimension, Plan, RankPrefix, Rec};

/// The groups a round decides, and the documents it must read again to do so.
///
/// Under `--full` (and `check --full`) that is everything. An incremental run and `check` decide only
/// the groups that are not as a run leaves them: a group stands when none of its members is dirty (signed in this
/// round, or missing a flag or count), every member's stored count equals the group's size, exactly
/// one member's stored flag is true, and that member's rank prefix is the group's best. A document
/// alone stands when it is not dirty, its flag is true and its count 1.
///
/// Every way the index changes between runs breaks one of these for each group whose outcome it
/// changes: an added or re-indexed document is dirty (a crawler's new document carries none of the
/// worker's fields); a deleted member shrinks its group below the stored counts, or takes the only
/// true flag with it; a run killed half-way leaves a dirty member, two true flags or mixed counts; a
/// changed `--prefer-*` or rules file moves the best prefix, and a changed `--scope` splits or
/// merges groups into ones with no or several true flags.
///
/// Members that tie on the best prefix are ordered by their URL, which the records do not hold. A
/// representative holding a shared best prefix was the URL's pick among the members that shared
/// the best prefix of the order it was decided under. If every member sharing the best prefix now
/// had that same prefix then, they all shared the best one then (the representative had it), so
/// the pick stands. Otherwise, or when that order is not known ([`super::DecidedUnder`]), the group
/// is decided again: after the rules are learnt again, only groups with a member whose rank moved. Not seen: a
/// member's URL edited in place without re-indexing (an atomic update of the URL field by someone
/// else), and a changed `--filter`, which can join members decided in different runs into a group
/// whose flags and counts look settled; `--full` and `check --full` decide everything.
pub(super) struct Open {
    /// Everything is decided again.
    pub(super) all: bool,
    /// Per dimension, per group: decided again.
    pub(super) groups: Vec<Vec<bool>>,
    /// Per record: takes part in some group decided again, or is alone and does not stand.
    pub(super) docs: Vec<bool>,
}

impl Open {
    /// Whether the record's group in `d` (`gi`, or alone) is decided in this round.
    pub(super) fn decides(&self, plan: &Plan<'_>, d: Dimension, gi: u32, rec: &Rec) -> bool {
        if self.all {
            return true;
        }
        if gi == Groups::ALONE {
            !plan.alone_stands(d, rec)
        } else {
            self.groups[d.index()][gi as usize]
        }
    }
}

/// What pass A keeps so that passes B and C can look up the documents of the groups to decide
/// instead of reading everything again: the ids of dirty documents, and the URLs of documents that
/// are dirty or stored as a www or http double (so that a group that lost its representative is
/// found by its other members' URLs). Bounded: past [`Keep::CAP`] entries (a first run, a large
/// change) the round reads everything instead.
#[derive(Default)]
pub(super) struct Keep {
    /// Record index and id.
    pub(super) ids: Vec<(u32, Box<str>)>,
    /// Record index and URL as stored.
    pub(super) urls: Vec<(u32, Box<str>)>,
    /// Gave up keeping: passes B and C read everything.
    pub(super) everything: bool,
}

impl Keep {
    pub(super) const CAP: usize = 100_000;

    pub(super) fn note(
        &mut self,
        plan: &Plan<'_>,
        idx: usize,
        rec: &Rec,
        id: &str,
        url: Option<&str>,
    ) {
        if self.everything {
            return;
        }
        let url_dims = [Dimension::Www, Dimension::Http]
            .into_iter()
            .filter(|&d| plan.on(d));
        let url_double = url_dims
            .clone()
            .any(|d| rec.stored_true & (1 << d.index()) == 0);
        if rec.dirty {
            self.ids.push((idx as u32, id.into()));
        }
        if (rec.dirty || url_double) && url_dims.count() > 0 {
            if let Some(url) = url {
                self.urls.push((idx as u32, url.into()));
            }
        }
        if plan.on(Dimension::Near)
            && !rec.dirty
            && (rec.near_group != rec.id_hash
                || rec.stored_counts[counted_slot(Dimension::Near)] != 1
                || rec.stored_true & (1 << Dimension::Near.index()) == 0)
        {
            // Stored in a near cluster (or alone, but not as a run leaves a document alone): found
            // by id if its cluster is decided again, and read by id when a change touches it.
            self.ids.push((idx as u32, id.into()));
        }
        self.check_cap();
    }

    /// Keeps an id for lookups (a document the near-duplicate join found).
    pub(super) fn note_id(&mut self, idx: usize, id: &str) {
        if !self.everything {
            self.ids.push((idx as u32, id.into()));
            self.check_cap();
        }
    }

    fn check_cap(&mut self) {
        if self.ids.len() + self.urls.len() > Self::CAP {
            *self = Keep {
                everything: true,
                ..Keep::default()
            };
        }
    }
}

/// The groups of a round and which of them it decides: what passes B and C work through.
pub(super) struct Todo<'r> {
    pub(super) groups: &'r [Option<Groups>],
    pub(super) open: &'r Open,
    /// The signatures pass A computed, written with the flags in pass C.
    pub(super) pending: &'r Pending,
}

/// Where a dimension's stored count sits in [`Rec::stored_counts`].
pub(super) fn counted_slot(d: Dimension) -> usize {
    match d {
        Dimension::Fuzzy => 1,
        Dimension::Near => 2,
        _ => 0,
    }
}

impl Plan<'_> {
    pub(super) fn alone_stands(&self, d: Dimension, rec: &Rec) -> bool {
        !rec.dirty
            && rec.stored_true & (1 << d.index()) != 0
            && (self.cfg.fields.count(d).is_none() || rec.stored_counts[counted_slot(d)] == 1)
            && (d != Dimension::Near || rec.near_group == rec.id_hash)
    }

    pub(super) fn open_groups(&self, recs: &[Rec], groups: &[Option<Groups>]) -> Open {
        // `check` decides what an incremental run would: a settled index costs it one light scan.
        // `check --full` signs every document again, so every group is decided.
        let all = self.full;
        let mut open = Open {
            all,
            groups: vec![Vec::new(); Dimension::COUNT],
            docs: vec![all; recs.len()],
        };
        if all {
            return open;
        }
        for d in Dimension::ALL {
            let Some(g) = &groups[d.index()] else {
                continue;
            };
            let (decide, docs) = self.open_in(d, recs, g);
            for (o, n) in open.docs.iter_mut().zip(docs) {
                *o |= n;
            }
            open.groups[d.index()] = decide;
        }
        open
    }

    /// One dimension's part of [`Plan::open_groups`]: per group, whether it is decided again, and per
    /// record, whether it takes part in such a group or is alone and does not stand.
    pub(super) fn open_in(&self, d: Dimension, recs: &[Rec], g: &Groups) -> (Vec<bool>, Vec<bool>) {
        let bit = 1u8 << d.index();
        let counted = self.cfg.fields.count(d).is_some();
        let n = g.count();
        let mut docs = vec![false; recs.len()];
        let mut broken = vec![false; n];
        let mut trues = vec![0u32; n];
        let mut best: Vec<Option<RankPrefix>> = vec![None; n];
        let mut rep: Vec<Option<RankPrefix>> = vec![None; n];
        // Near: the id hash of the member with the true flag, which every member names as its group.
        let mut rep_id = vec![0u64; n];
        for (i, r) in recs.iter().enumerate() {
            let gi = g.group_of[i];
            if gi == Groups::ALONE {
                docs[i] = !self.alone_stands(d, r);
                continue;
            }
            let gi = gi as usize;
            broken[gi] |= r.dirty || (counted && r.stored_counts[counted_slot(d)] != g.sizes[gi]);
            if r.stored_true & bit != 0 {
                trues[gi] += 1;
                rep[gi] = Some(r.prefix);
                rep_id[gi] = r.id_hash;
            }
            best[gi] = Some(best[gi].map_or(r.prefix, |b| b.min(r.prefix)));
        }
        if d == Dimension::Near {
            for (i, r) in recs.iter().enumerate() {
                let gi = g.group_of[i];
                if gi != Groups::ALONE && r.near_group != rep_id[gi as usize] {
                    broken[gi as usize] = true;
                }
            }
        }
        // Members that share the best prefix are ordered by their URL. A representative holding it
        // was the URL's pick under the order it was decided under, unless that order ranked one of
        // them otherwise: then the group is decided again.
        let mut tied = vec![0u32; n];
        let mut tie_reordered = vec![false; n];
        for (i, r) in recs.iter().enumerate() {
            let gi = g.group_of[i];
            if gi != Groups::ALONE && best[gi as usize] == Some(r.prefix) {
                tied[gi as usize] += 1;
                tie_reordered[gi as usize] |= r.reordered;
            }
        }
        let decide: Vec<bool> = (0..n)
            .map(|gi| {
                broken[gi]
                    || trues[gi] != 1
                    || rep[gi] != best[gi]
                    || (tied[gi] > 1 && tie_reordered[gi])
            })
            .collect();
        for (i, &gi) in g.group_of.iter().enumerate() {
            if gi != Groups::ALONE && decide[gi as usize] {
                docs[i] = true;
            }
        }
        (decide, docs)
    }
}
