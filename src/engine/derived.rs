//! What pass A derives from a document that needs nothing read, kept by a store that keeps its own
//! copy of the index between runs ([`Store::keep_derived`]): the document's record, its grouping
//! keys and why it takes no part where it takes none. The next run's light read hands the bytes
//! back for every document that stayed as it was ([`Store::serve_derived`]), so that pass A neither
//! decodes its fields nor parses its URL again: at 1M pages, most of an everyday run's work.
//!
//! The bytes hold only what [`Plan::record`] computes from the document's light fields under the
//! run's settings, and [`tag`] names those settings: a run under other ones is served none.
//!
//! [`Store::keep_derived`]: crate::store::Store::keep_derived
//! [`Store::serve_derived`]: crate::store::Store::serve_derived

use std::fmt::Write;

use super::records::Rec;
use super::{Dimension, Exclusion, Plan};
use crate::spill::Fixed;

/// The layout of the bytes: a new one changes every [`tag`].
const LAYOUT: u8 = 1;

/// How a record is derived: bump it with any change to what [`Plan::record`], [`Plan::need`] or
/// signing a document that needs nothing compute from a document (URL parsing and keys, rank
/// prefixes, exclusions), so that parts derived by an older build are not served to this one. The
/// release version enters the tag too.
const DERIVATION: u32 = 1;

/// `[u8 LAYOUT][Rec][u64 key × 6][u8 exclusion × dimensions]`.
const LEN: usize = 1 + Rec::SIZE + 6 * 8 + Dimension::COUNT;

/// What a document's record is derived from besides the document, as one number (never 0): how
/// this build derives it ([`DERIVATION`], the release), the field names, the dimensions, the scope,
/// the preference order and URL rules, the order the flags were decided under, the fuzzy floor,
/// the near-duplicate version and chrome, the empty text's signatures and whether the core stores
/// its text.
pub(super) fn tag(plan: &Plan<'_>) -> u64 {
    let cfg = plan.cfg;
    // Rules that do not serialise (they always do) tag as their debug text.
    let rules = |r: Option<&crate::urlrules::Rules>| {
        r.map(|r| serde_json::to_string(r).unwrap_or_else(|_| format!("{r:?}")))
    };
    let mut text = format!(
        "{LAYOUT} {DERIVATION} {}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{}\n{}\n{} {}\n{}\n",
        env!("CARGO_PKG_VERSION"),
        cfg.fields,
        plan.enabled,
        cfg.scope,
        cfg.preference,
        rules(cfg.url_rules.as_deref()),
        cfg.fuzzy_min_words,
        plan.near_version,
        plan.empty_profile,
        plan.empty_exact,
        cfg.text_not_stored,
    );
    match &plan.earlier {
        None => text.push_str("decided under this order\n"),
        Some(None) => text.push_str("decided under an order not known\n"),
        Some(Some((p, r))) => {
            let _ = writeln!(text, "decided under {p:?} {:?}", rules(r.as_deref()));
        }
    }
    if let Some(chrome) = &cfg.chrome {
        for (site, version) in chrome.versions() {
            let _ = writeln!(text, "chrome {site} {version}");
        }
    }
    xxhash_rust::xxh3::xxh3_64(text.as_bytes()).max(1)
}

/// The bytes of a document's record, keys and exclusions.
pub(super) fn encode(
    rec: &Rec,
    keys: &[u64; 6],
    excluded: &[Option<Exclusion>; Dimension::COUNT],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(LEN);
    out.push(LAYOUT);
    rec.put(&mut out);
    for k in keys {
        out.extend_from_slice(&k.to_le_bytes());
    }
    out.extend(excluded.iter().map(|e| exclusion_code(*e)));
    out
}

/// A document's record, keys and exclusions from [`encode`]'s bytes; `None` when they are not
/// such bytes.
pub(super) fn decode(b: &[u8]) -> Option<(Rec, [u64; 6], [Option<Exclusion>; Dimension::COUNT])> {
    if b.len() != LEN || b[0] != LAYOUT {
        return None;
    }
    let rec = Rec::take(&b[1..1 + Rec::SIZE]);
    let at = 1 + Rec::SIZE;
    let mut keys = [0u64; 6];
    for (i, k) in keys.iter_mut().enumerate() {
        *k = u64::from_le_bytes(b[at + 8 * i..at + 8 * i + 8].try_into().ok()?);
    }
    let mut excluded = [None; Dimension::COUNT];
    for (e, &c) in excluded.iter_mut().zip(&b[at + 48..]) {
        *e = exclusion_of(c)?;
    }
    Some((rec, keys, excluded))
}

const EXCLUSIONS: [Exclusion; 8] = [
    Exclusion::EmptyText,
    Exclusion::EmptyProfile,
    Exclusion::NoTitle,
    Exclusion::NoDescription,
    Exclusion::NoUrl,
    Exclusion::NotHttp,
    Exclusion::NoWords,
    Exclusion::WeakProfile,
];

fn exclusion_code(e: Option<Exclusion>) -> u8 {
    match e {
        None => 0,
        Some(e) => match e {
            Exclusion::EmptyText => 1,
            Exclusion::EmptyProfile => 2,
            Exclusion::NoTitle => 3,
            Exclusion::NoDescription => 4,
            Exclusion::NoUrl => 5,
            Exclusion::NotHttp => 6,
            Exclusion::NoWords => 7,
            Exclusion::WeakProfile => 8,
        },
    }
}

/// `Some(None)`: takes part; `None`: not a code.
fn exclusion_of(c: u8) -> Option<Option<Exclusion>> {
    match c {
        0 => Some(None),
        c => EXCLUSIONS.get(usize::from(c) - 1).map(|e| Some(*e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RankPrefix;

    fn tag_of(cfg: &crate::engine::EngineConfig) -> u64 {
        tag(&Plan::new(cfg, crate::engine::Mode::Run, false))
    }

    #[test]
    fn the_tag_changes_with_what_a_record_is_derived_from() {
        use crate::engine::{DecidedUnder, EngineConfig, Scope};
        let base = || {
            let mut cfg = EngineConfig::default();
            cfg.decided_under = DecidedUnder::of(&cfg);
            cfg
        };
        let t = tag_of(&base());
        assert_ne!(t, 0);
        assert_eq!(tag_of(&base()), t, "the same settings, the same tag");
        let mut other: Vec<(&str, EngineConfig)> = Vec::new();
        let mut c = base();
        c.preference.prefer_https = false;
        other.push(("preference", c));
        let mut c = base();
        c.decided_under = DecidedUnder::Unknown;
        other.push(("decided under", c));
        let mut c = base();
        c.fuzzy_min_words += 1;
        other.push(("fuzzy floor", c));
        let mut c = base();
        c.dimensions.pop();
        other.push(("dimensions", c));
        let mut c = base();
        c.scope = Scope::Host;
        other.push(("scope", c));
        let mut c = base();
        c.fields.url = "url_s".into();
        other.push(("fields", c));
        let mut c = base();
        c.url_rules = Some(std::sync::Arc::new(crate::urlrules::Rules::default()));
        other.push(("rules", c));
        let mut c = base();
        c.near.shingle += 1;
        other.push(("near parameters", c));
        for (what, cfg) in other {
            assert_ne!(tag_of(&cfg), t, "{what}");
        }
        // What a record does not depend on leaves it.
        let mut c = base();
        c.batch_size = 7;
        c.memory /= 2;
        c.dry_run = true;
        assert_eq!(tag_of(&c), t);
    }

    #[test]
    fn a_record_comes_back_as_it_went() {
        let mut rec = Rec::new(7, 1 << 40, RankPrefix::from_bytes(&[3; 12]));
        rec.mask = 0b101_0101;
        rec.stored_true = 0b11;
        rec.near_group = 99;
        rec.reordered = true;
        rec.stored_counts = [1, 2, 3];
        let keys = [1, 2, 3, u64::MAX, 0, 6];
        let mut excluded = [None; Dimension::COUNT];
        for (i, e) in EXCLUSIONS.iter().enumerate().take(Dimension::COUNT) {
            excluded[i] = Some(*e);
        }
        excluded[2] = None;
        let bytes = encode(&rec, &keys, &excluded);
        assert_eq!(bytes.len(), LEN);
        let (r, k, e) = decode(&bytes).expect("decodes");
        assert_eq!(k, keys);
        assert_eq!(e, excluded);
        let mut a = Vec::new();
        let mut b = Vec::new();
        r.put(&mut a);
        rec.put(&mut b);
        assert_eq!(a, b);
        for (i, ex) in EXCLUSIONS.iter().enumerate() {
            assert_eq!(
                exclusion_of(exclusion_code(Some(*ex))),
                Some(Some(*ex)),
                "{i}"
            );
        }
        assert!(decode(&bytes[1..]).is_none());
        let mut other = bytes.clone();
        other[LEN - 1] = 200;
        assert!(decode(&other).is_none());
    }
}
