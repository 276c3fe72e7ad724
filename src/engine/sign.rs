//! Pass A's signing of one document: what it needs read besides its light fields, and its
//! signatures and near-duplicate values from what was read (or as stored).

use serde_json::Value;

use super::doc::{get_i64, get_str, get_strings};
use super::{Dimension, Plan, Scheme, Sigs};
use crate::signature::near::NearSignature;
use crate::store::Doc;

/// What of a document pass A reads besides its light fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Need {
    /// Nothing: its stored signatures stand.
    Nothing,
    /// Its title and description: title or description signatures that may be missing or absent.
    Titles,
    /// Its text (with title and description): to sign it.
    Text,
}

/// A document's near-duplicate values after pass A.
pub(super) enum NearState {
    /// Stored under this run's version: whether the text has words (and so keys in the store).
    Stored(bool),
    /// Computed in this round: `None` for a text without words.
    Computed(Option<NearSignature>),
}

/// The result of signing one document in pass A.
pub(super) struct Signed {
    pub(super) sigs: Sigs,
    pub(super) near: NearState,
    pub(super) blank: bool,
    /// How many words the fuzzy profile has: computed, or as stored (`None`: not known).
    pub(super) words: Option<u32>,
    pub(super) computed: bool,
    pub(super) version: i64,
    /// The signature fields that differ from the stored ones.
    pub(super) update: Option<Vec<(String, Value)>>,
}

impl Signed {
    /// A document whose record an earlier run derived ([`derived`]): it needed nothing, and
    /// nothing is written to it.
    pub(super) fn as_derived(version: i64) -> Self {
        Signed {
            sigs: Sigs::default(),
            near: NearState::Stored(false),
            blank: false,
            words: None,
            computed: false,
            version,
            update: None,
        }
    }
}

/// Signs one document from `content`, what `need` read of it (`None`: it vanished), or, needing
/// nothing, keeps the signatures it has.
pub(super) fn sign_one(
    round: &Plan<'_>,
    doc: &Doc,
    need: Need,
    content: Option<&Doc>,
) -> Option<Signed> {
    let cfg = round.cfg;
    let f = &cfg.fields;
    round.id_of(doc)?;
    let stored = round.stored_sigs(doc);
    let read_version = get_i64(doc, &f.version).unwrap_or(0);
    if need == Need::Titles {
        // Only the title and description were read: the rest stands as stored.
        let content = content?;
        let mut signed = sign_one(round, doc, Need::Nothing, None)?;
        let mut set = signed.update.take().unwrap_or_default();
        let current = signed.sigs.clone();
        signed.computed |= sign_titles(round, content, &current, &mut signed.sigs, &mut set);
        signed.version = get_i64(content, &f.version).unwrap_or(read_version);
        signed.update = (!set.is_empty()).then_some(set);
        return Some(signed);
    }
    if need == Need::Nothing {
        // Not needed: its stored near version is this run's (see `need`).
        let chrome = round.near_chrome(doc);
        let stored_near = round
            .on(Dimension::Near)
            .then(|| round.near_stored(get_str(doc, &f.near_version), chrome))
            .flatten();
        return Some(Signed {
            // The empty text's exact signature stands for an empty text, and this run's near
            // version marks a blank one (see `need`).
            blank: stored.exact == Some(round.empty_exact) || stored_near.is_some_and(|s| s.blank),
            words: stored_words(round, doc, stored.fuzzy),
            sigs: stored,
            near: NearState::Stored(stored_near.is_some_and(|s| s.words)),
            computed: false,
            version: read_version,
            update: stored_near
                .and_then(|s| round.near_scope_update(s, chrome))
                .map(|u| vec![u]),
        });
    }
    // Sign from the real-time copy: it is the current text, and its version guards the update.
    let content = content?;
    let version = get_i64(content, &f.version).unwrap_or(read_version);
    let current = round.stored_sigs(content);
    let text = get_str(content, &f.text).unwrap_or("");
    let blank = crate::signature::near::is_blank(text);
    let signer = &cfg.signer;
    let mut sigs = current.clone();
    let mut set: Vec<(String, Value)> = Vec::new();
    let recompute = |have: Option<i64>| round.full || have.is_none();
    let mut computed = false;
    let content_dims = round.on(Dimension::Exact) || round.on(Dimension::Fuzzy);
    if content_dims && recompute(current.exact) {
        sigs.exact = Some(signer.exact(text));
        computed = true;
    }
    let mut words = stored_words(round, content, current.fuzzy);
    // A signature stored before word counts were: the profile is computed again from this version's
    // text (its signature is the stored one unless the text changed), and its size written with it.
    let refill = round.words_missing(current.fuzzy, content);
    if content_dims && (recompute(current.fuzzy) || refill) {
        let profile = signer.profile(text);
        sigs.fuzzy = Some(profile.signature());
        computed = true;
        let n = u32::try_from(profile.words()).unwrap_or(u32::MAX);
        words = Some(n);
        if cfg.write_fuzzy_words && get_i64(content, &f.fuzzy_signature_words) != Some(i64::from(n))
        {
            set.push((f.fuzzy_signature_words.clone(), Value::from(n)));
        }
        if cfg.write_fuzzy_text && signer.scheme == Scheme::Yacy {
            let text_t = profile.text_t();
            let value = if text_t.is_empty() {
                Value::Null
            } else {
                Value::String(text_t)
            };
            let stored_text = content
                .get(&f.fuzzy_signature_text)
                .cloned()
                .unwrap_or(Value::Null);
            if value != stored_text {
                set.push((f.fuzzy_signature_text.clone(), value));
            }
        }
    }
    computed |= sign_titles(round, content, &current, &mut sigs, &mut set);
    for (field, new, old) in [
        (&f.exact_signature, sigs.exact, current.exact),
        (&f.fuzzy_signature, sigs.fuzzy, current.fuzzy),
    ] {
        if new != old {
            set.push((field.clone(), new.map_or(Value::Null, Value::from)));
        }
    }
    let near = near_values(round, doc, content, (text, blank), &mut set);
    computed |= matches!(near, NearState::Computed(_));
    let update = (!set.is_empty()).then_some(set);
    Some(Signed {
        sigs,
        near,
        blank,
        words,
        computed,
        version,
        update,
    })
}

/// The profile word count stored on `doc`; the empty profile's signature stands for 0.
fn stored_words(round: &Plan<'_>, doc: &Doc, fuzzy: Option<i64>) -> Option<u32> {
    if fuzzy == Some(round.empty_profile) {
        return Some(0);
    }
    get_i64(doc, &round.cfg.fields.fuzzy_signature_words).map(|n| u32::try_from(n).unwrap_or(0))
}

/// Signs the title and description of `content` where the run needs them (both missing from
/// `current`, or `--full`), into `sigs`, with the fields that change added to `set`. Returns
/// whether a signature was computed. A title counts when its first value is not empty; a
/// description when any value is not.
fn sign_titles(
    round: &Plan<'_>,
    content: &Doc,
    current: &Sigs,
    sigs: &mut Sigs,
    set: &mut Vec<(String, Value)>,
) -> bool {
    let f = &round.cfg.fields;
    let signer = &round.cfg.signer;
    let titles = get_strings(content, &f.title);
    let descriptions = get_strings(content, &f.description);
    let has_title = titles.first().is_some_and(|t| !t.is_empty());
    let has_description = descriptions.iter().any(|d| !d.is_empty());
    let mut computed = false;
    if round.on(Dimension::Title) && (round.full || current.title.is_none()) {
        sigs.title = if has_title {
            signer.title(&titles[..1])
        } else {
            None
        };
        computed |= has_title;
    }
    if round.on(Dimension::Description) && (round.full || current.description.is_none()) {
        sigs.description = if has_description {
            signer.description(&descriptions)
        } else {
            None
        };
        computed |= has_description;
    }
    for (field, new, old) in [
        (&f.title_signature, sigs.title, current.title),
        (
            &f.description_signature,
            sigs.description,
            current.description,
        ),
    ] {
        if new != old {
            set.push((field.clone(), new.map_or(Value::Null, Value::from)));
        }
    }
    computed
}

/// The near-duplicate values of a document whose content was read: the stored ones when they are
/// this run's, else computed from `text`, with the fields that differ added to `set`.
fn near_values(
    round: &Plan<'_>,
    doc: &Doc,
    content: &Doc,
    (text, blank): (&str, bool),
    set: &mut Vec<(String, Value)>,
) -> NearState {
    if !round.on(Dimension::Near) {
        return NearState::Stored(false);
    }
    let f = &round.cfg.fields;
    let stored_version = get_str(content, &f.near_version);
    // The host as read in pass A: the URL a document is ranked and grouped by.
    let chrome = round.near_chrome(doc);
    if !round.full {
        if let Some(stored) = round.near_stored(stored_version, chrome) {
            if !stored.words && stored.blank != blank {
                // Stored before versions marked blank texts: the values stand, the mark is added
                // once so that later runs need not read the text to know.
                let version = round.near_version_for(false, blank, chrome);
                set.push((f.near_version.clone(), Value::String(version)));
            } else {
                set.extend(round.near_scope_update(stored, chrome));
            }
            return NearState::Stored(stored.words);
        }
    }
    let sig = match chrome {
        Some(c) => round.near.sign(c.body(text)),
        None => round.near.sign(text),
    };
    let version = round.near_version_for(sig.is_some(), blank, chrome);
    let longs = |v: Option<&Vec<i64>>| {
        v.map_or(Value::Null, |v| {
            Value::Array(v.iter().map(|&x| Value::from(x)).collect())
        })
    };
    let stored = |field: &str| match content.get(field) {
        None => Value::Null,
        Some(Value::Array(a)) if a.is_empty() => Value::Null,
        Some(v) => v.clone(),
    };
    for (field, value) in [
        (&f.near_trials, longs(sig.as_ref().map(|s| &s.trials))),
        (&f.near_keys, longs(sig.as_ref().map(|s| &s.keys))),
        (&f.near_version, Value::String(version)),
    ] {
        if stored(field) != value {
            set.push((field.clone(), value));
        }
    }
    NearState::Computed(sig)
}
