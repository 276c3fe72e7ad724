//! Which groups a round decides again (`Open`), what pass A keeps to look their documents up (`Keep`),
//! and the work list passes B and C share (`Todo`).

use fixedbitset::FixedBitSet;

use super::group::Groups;
use super::pending::Pending;
use super::spill::SpillArea;
use super::{Dimension, Plan, RankPrefix, Rec, Recs};

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
    /// Per dimension, per group: decided again (a bit each).
    pub(super) groups: Vec<FixedBitSet>,
    /// Per record: takes part in some group decided again, or is alone and does not stand (a bit
    /// each).
    pub(super) docs: FixedBitSet,
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
/// found by its other members' URLs). A 32nd of the memory budget is held in memory; past it the
/// entries go to a temporary file in record order (with one sparse index entry per
/// [`Keep::SPARSE`]), so that a large index never makes a small change read everything. A full run
/// keeps nothing ([`Keep::everything`]).
pub(super) struct Keep {
    /// Keeps nothing: passes B and C read everything.
    pub(super) everything: bool,
    /// Entries in record order, before they spill.
    mem: Vec<(Kind, u32, Box<str>)>,
    mem_bytes: usize,
    share: usize,
    area: Option<SpillArea>,
    file: Option<KeptFile>,
    /// Ids kept after pass A (documents the near join found), in any order.
    late: Vec<(u32, Box<str>)>,
    /// Dirty records noted, and the documents the store said the scan holds: past a quarter of
    /// them (and [`Keep::CAP`]) passes B and C read everything anyway (a first run), so nothing
    /// more is kept.
    dirty: u64,
    expected: Option<u64>,
}

/// What a kept entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Id,
    Url,
}

/// The spilled entries: `kind u8, record u32, length u32, bytes`, in record order.
struct KeptFile {
    writer: std::io::BufWriter<std::fs::File>,
    len: u64,
    /// Every [`Keep::SPARSE`]th entry: its record and its offset.
    sparse: Vec<(u32, u64)>,
    entries: u64,
}

impl Default for Keep {
    fn default() -> Self {
        Keep {
            everything: false,
            mem: Vec::new(),
            mem_bytes: 0,
            share: usize::MAX,
            area: None,
            file: None,
            late: Vec::new(),
            dirty: 0,
            expected: None,
        }
    }
}

impl Keep {
    /// The dirty records pass A noted (every one while it keeps anything).
    pub(super) fn dirty_noted(&self) -> usize {
        usize::try_from(self.dirty).unwrap_or(usize::MAX)
    }

    /// The most values lookups carry before one read of everything costs less.
    pub(super) const CAP: usize = 100_000;
    /// Its part of the memory budget.
    const SHARE: u64 = 32;
    /// Spilled entries per sparse index entry.
    const SPARSE: u64 = 256;

    /// Keeps entries in `area`'s share of the budget and its files past that; `everything`: keeps
    /// nothing (a full run); `expected`: the documents the scan holds, if the store knows.
    pub(super) fn new(area: &SpillArea, everything: bool, expected: Option<u64>) -> Self {
        Keep {
            everything,
            share: area.share(Self::SHARE),
            area: Some(area.clone()),
            expected,
            ..Keep::default()
        }
    }

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
        if rec.dirty {
            self.dirty += 1;
            let large = self.dirty > Self::CAP as u64;
            if large && self.expected.is_some_and(|n| self.dirty * 4 > n) {
                // Lookups would not be used (see `lookups`): stop keeping.
                *self = Keep {
                    everything: true,
                    ..Keep::default()
                };
                return;
            }
        }
        let url_dims = [Dimension::Www, Dimension::Http]
            .into_iter()
            .filter(|&d| plan.on(d));
        let url_double = url_dims
            .clone()
            .any(|d| rec.stored_true & (1 << d.index()) == 0);
        let near_stored = plan.on(Dimension::Near)
            && !rec.dirty
            && (rec.near_group != rec.id_hash
                || rec.stored_counts[counted_slot(Dimension::Near)] != 1
                || rec.stored_true & (1 << Dimension::Near.index()) == 0);
        // Dirty, or stored in a near cluster (or alone, but not as a run leaves a document
        // alone): found by id if its cluster is decided again, and read by id when a change
        // touches it.
        if rec.dirty || near_stored {
            self.push(Kind::Id, idx as u32, id);
        }
        if (rec.dirty || url_double) && url_dims.count() > 0 {
            if let Some(url) = url {
                self.push(Kind::Url, idx as u32, url);
            }
        }
    }

    /// Keeps an id for lookups (a document the near-duplicate join found).
    pub(super) fn note_id(&mut self, idx: usize, id: &str) {
        if !self.everything {
            self.late.push((idx as u32, id.into()));
        }
    }

    /// Appends an entry of a record at or after every kept one.
    fn push(&mut self, kind: Kind, idx: u32, value: &str) {
        if self.file.is_some() {
            self.write(kind, idx, value);
            return;
        }
        self.mem_bytes += value.len() + 32;
        self.mem.push((kind, idx, value.into()));
        if self.mem_bytes > self.share {
            for (kind, idx, value) in std::mem::take(&mut self.mem) {
                self.write(kind, idx, &value);
                if self.everything {
                    return;
                }
            }
            self.mem_bytes = 0;
        }
    }

    fn write(&mut self, kind: Kind, idx: u32, value: &str) {
        use std::io::Write;
        if self.file.is_none() {
            let Some(file) = self.area.as_ref().map(SpillArea::file) else {
                return self.give_up("no temporary folder");
            };
            match file {
                Ok(f) => {
                    self.file = Some(KeptFile {
                        writer: std::io::BufWriter::with_capacity(1 << 16, f),
                        len: 0,
                        sparse: Vec::new(),
                        entries: 0,
                    })
                }
                Err(e) => return self.give_up(&e.to_string()),
            }
        }
        let Some(f) = self.file.as_mut() else {
            return;
        };
        if f.entries % Self::SPARSE == 0 {
            f.sparse.push((idx, f.len));
        }
        let mut head = [0u8; 9];
        head[0] = kind as u8;
        head[1..5].copy_from_slice(&idx.to_le_bytes());
        head[5..9].copy_from_slice(&(value.len() as u32).to_le_bytes());
        let written = f
            .writer
            .write_all(&head)
            .and_then(|()| f.writer.write_all(value.as_bytes()));
        f.len += (head.len() + value.len()) as u64;
        f.entries += 1;
        if let Some(area) = &self.area {
            area.wrote(head.len() + value.len());
        }
        if let Err(e) = written {
            self.give_up(&e.to_string());
        }
    }

    /// A temporary file failed: keeps nothing more, and passes B and C read everything.
    fn give_up(&mut self, why: &str) {
        tracing::warn!(
            "cannot keep the documents to look up ({why}); the run reads everything instead"
        );
        *self = Keep {
            everything: true,
            ..Keep::default()
        };
    }

    /// Makes the spilled entries readable; on failure keeps nothing more (reads everything).
    pub(super) fn finish(&mut self) {
        use std::io::Write;
        if let Some(f) = self.file.as_mut() {
            if let Err(e) = f.writer.flush() {
                self.give_up(&e.to_string());
            }
        }
    }

    /// Every kept entry, in record order (then the late ids), or `None` after a temporary file
    /// failed (read everything).
    pub(super) fn each(&self, mut f: impl FnMut(Kind, u32, &str)) -> Option<()> {
        if self.everything {
            return None;
        }
        if let Some(file) = &self.file {
            let mut r = std::io::BufReader::with_capacity(
                1 << 16,
                At {
                    file: file.writer.get_ref(),
                    pos: 0,
                },
            );
            for _ in 0..file.entries {
                let (kind, idx, value) = read_entry(&mut r)?;
                f(kind, idx, &value);
            }
        }
        for (kind, idx, value) in &self.mem {
            f(*kind, *idx, value);
        }
        for (idx, value) in &self.late {
            f(Kind::Id, *idx, value);
        }
        Some(())
    }

    /// The kept id of record `idx`, if any (`None` also after a temporary file failed).
    pub(super) fn id_of(&self, idx: u32) -> Option<Box<str>> {
        if self.everything {
            return None;
        }
        // Entries are in record order: the first of `idx`, then its others.
        let from = self.mem.partition_point(|(_, i, _)| *i < idx);
        let in_mem = self.mem[from..]
            .iter()
            .take_while(|(_, i, _)| *i == idx)
            .find(|(k, _, _)| *k == Kind::Id)
            .map(|(_, _, v)| v.clone());
        if in_mem.is_some() {
            return in_mem;
        }
        if let Some(file) = &self.file {
            // The last sparse entry before `idx`: every entry of `idx` comes after it.
            let s = file.sparse.partition_point(|&(i, _)| i < idx);
            let pos = if s == 0 { 0 } else { file.sparse[s - 1].1 };
            let mut r = std::io::BufReader::with_capacity(
                1 << 12,
                At {
                    file: file.writer.get_ref(),
                    pos,
                },
            );
            let mut at = pos;
            while at < file.len {
                let (kind, i, value) = read_entry(&mut r)?;
                if i > idx {
                    break;
                }
                if i == idx && kind == Kind::Id {
                    return Some(value.into());
                }
                at += 9 + value.len() as u64;
            }
        }
        self.late
            .iter()
            .find(|(i, _)| *i == idx)
            .map(|(_, v)| v.clone())
    }
}

/// Reads a file from a position of its own (the writer's offset stays where it is).
struct At<'f> {
    file: &'f std::fs::File,
    pos: u64,
}

impl std::io::Read for At<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::os::unix::fs::FileExt;
        let n = self.file.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// The next spilled entry.
fn read_entry(r: &mut impl std::io::Read) -> Option<(Kind, u32, String)> {
    let mut head = [0u8; 9];
    r.read_exact(&mut head).ok()?;
    let kind = if head[0] == Kind::Id as u8 {
        Kind::Id
    } else {
        Kind::Url
    };
    let idx = u32::from_le_bytes(head[1..5].try_into().ok()?);
    let len = u32::from_le_bytes(head[5..9].try_into().ok()?) as usize;
    let mut value = vec![0u8; len];
    r.read_exact(&mut value).ok()?;
    Some((kind, idx, String::from_utf8(value).ok()?))
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

    pub(super) fn open_groups(&self, recs: &Recs, groups: &[Option<Groups>]) -> Open {
        // `check` decides what an incremental run would: a settled index costs it one light scan.
        // `check --full` signs every document again, so every group is decided.
        let all = self.full;
        let mut open = Open {
            all,
            groups: vec![FixedBitSet::new(); Dimension::COUNT],
            docs: FixedBitSet::with_capacity(recs.len()),
        };
        if all {
            open.docs.insert_range(..);
            return open;
        }
        for d in Dimension::ALL {
            let Some(g) = &groups[d.index()] else {
                continue;
            };
            let (decide, docs) = self.open_in(d, recs, g);
            open.docs.union_with(&docs);
            open.groups[d.index()] = decide;
        }
        open
    }

    /// One dimension's part of [`Plan::open_groups`]: per group, whether it is decided again, and per
    /// record, whether it takes part in such a group or is alone and does not stand.
    pub(super) fn open_in(
        &self,
        d: Dimension,
        recs: &Recs,
        g: &Groups,
    ) -> (FixedBitSet, FixedBitSet) {
        let bit = 1u8 << d.index();
        let counted = self.cfg.fields.count(d).is_some();
        let n = g.count();
        let mut docs = FixedBitSet::with_capacity(recs.len());
        let mut broken = vec![false; n];
        let mut trues = vec![0u32; n];
        let mut best: Vec<Option<RankPrefix>> = vec![None; n];
        let mut rep: Vec<Option<RankPrefix>> = vec![None; n];
        // Near: the id hash of the member with the true flag, which every member names as its group.
        let mut rep_id = vec![0u64; n];
        for ((i, r), gi) in recs.iter().enumerate().zip(g.each()) {
            if gi == Groups::ALONE {
                docs.set(i, !self.alone_stands(d, &r));
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
            for (i, gi) in g.members() {
                if recs.get(i).near_group != rep_id[gi as usize] {
                    broken[gi as usize] = true;
                }
            }
        }
        // Members that share the best prefix are ordered by their URL. A representative holding it
        // was the URL's pick under the order it was decided under, unless that order ranked one of
        // them otherwise: then the group is decided again.
        let mut tied = vec![0u32; n];
        let mut tie_reordered = vec![false; n];
        for (i, gi) in g.members() {
            let r = recs.get(i);
            if best[gi as usize] == Some(r.prefix) {
                tied[gi as usize] += 1;
                tie_reordered[gi as usize] |= r.reordered;
            }
        }
        let mut decide: FixedBitSet = (0..n)
            .filter(|&gi| {
                broken[gi]
                    || trues[gi] != 1
                    || rep[gi] != best[gi]
                    || (tied[gi] > 1 && tie_reordered[gi])
            })
            .collect();
        // As long as the groups, also when the last ones stand.
        decide.grow(n);
        for (i, gi) in g.members() {
            if decide[gi as usize] {
                docs.insert(i);
            }
        }
        (decide, docs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Past its share of a small budget the kept entries go to a file; every one comes back, in
    /// record order, and ids are found by record through the sparse index.
    #[test]
    fn kept_entries_spill_and_come_back() {
        let area = SpillArea::new(None, 64 * 32);
        let mut keep = Keep::new(&area, false, None);
        for i in 0..2000u32 {
            keep.push(Kind::Id, i, &format!("id-{i}"));
            if i % 3 == 0 {
                keep.push(Kind::Url, i, &format!("https://example.org/{i}"));
            }
        }
        keep.note_id(5000, "late");
        keep.finish();
        assert!(keep.file.is_some() && area.written() > 0);
        let mut seen = Vec::new();
        keep.each(|k, i, v| seen.push((k, i, v.to_owned())))
            .unwrap();
        assert_eq!(seen.len(), 2000 + 667 + 1);
        assert_eq!(seen[0], (Kind::Id, 0, "id-0".to_owned()));
        assert_eq!(seen[1], (Kind::Url, 0, "https://example.org/0".to_owned()));
        assert!(seen[..seen.len() - 1].windows(2).all(|w| w[0].1 <= w[1].1));
        for i in [0u32, 1, 255, 256, 257, 1023, 1999] {
            assert_eq!(keep.id_of(i).as_deref(), Some(format!("id-{i}").as_str()));
        }
        assert_eq!(keep.id_of(5000).as_deref(), Some("late"));
        assert_eq!(keep.id_of(2500), None);
    }

    /// A first run (most documents dirty, the total known) stops keeping: its passes read
    /// everything anyway.
    #[test]
    fn a_first_run_stops_keeping() {
        let area = SpillArea::new(None, 1 << 20);
        let mut keep = Keep::new(&area, false, Some(200_000));
        keep.dirty = Keep::CAP as u64;
        keep.push(Kind::Id, 0, "a");
        assert!(!keep.everything);
        let cfg = crate::engine::EngineConfig::default();
        let plan = Plan::new(&cfg, crate::engine::Mode::Run, false);
        let mut rec = Rec::new(
            1,
            0,
            RankPrefix::new(
                None,
                &crate::engine::UrlKeys::new(None),
                crate::engine::Preference::default(),
                None,
            ),
        );
        rec.dirty = true;
        keep.note(&plan, 1, &rec, "b", None);
        assert!(keep.everything);
        assert!(keep.each(|_, _, _| {}).is_none());
    }
}
