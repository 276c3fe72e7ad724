//! What a run reads and writes: the fields, and what each must hold. A store checks its schema against
//! this before a run writes (for Solr, `commands::schema_fit`).

use std::collections::HashSet;

use super::{Dimension, EngineConfig};

/// What a field must hold, whatever the store calls its types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// A 64-bit integer (signatures).
    Long,
    /// Several 64-bit integers (the near-duplicate trial values and keys): a multi-valued field.
    Longs,
    /// A 32-bit integer (copy counts).
    Int,
    /// A string (the near-duplicate version and group id).
    Str,
    /// A boolean (flags).
    Bool,
    /// Analysed text (`fuzzy_signature_text_t`).
    Text,
    /// Anything (fields that are only read).
    Any,
}

/// A field the run needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Need {
    /// The field name (after `--field` renames).
    pub name: String,
    /// What it holds.
    pub kind: FieldKind,
    /// Written by the worker (as opposed to only read).
    pub written: bool,
    /// The run works without it (`fuzzy_signature_text_t`, and `fuzzy_signature_words_i` when
    /// `--fuzzy-min-words` is 0).
    pub optional: bool,
}

/// The fields a run with `cfg` reads and writes.
pub fn needs(cfg: &EngineConfig) -> Vec<Need> {
    let f = &cfg.fields;
    let on = |d: Dimension| cfg.dimensions.contains(&d);
    let read = |name: &str| Need {
        name: name.to_owned(),
        kind: FieldKind::Any,
        written: false,
        optional: false,
    };
    let write = |name: &str, kind: FieldKind| Need {
        name: name.to_owned(),
        kind,
        written: true,
        optional: false,
    };
    let mut out = vec![read(&f.id), read(&f.url)];
    let content = on(Dimension::Exact) || on(Dimension::Fuzzy);
    if content {
        out.push(read(&f.text));
        out.push(write(&f.exact_signature, FieldKind::Long));
        out.push(write(&f.fuzzy_signature, FieldKind::Long));
        if cfg.write_fuzzy_text {
            out.push(Need {
                optional: true,
                ..write(&f.fuzzy_signature_text, FieldKind::Text)
            });
        }
        if cfg.write_fuzzy_words || (on(Dimension::Fuzzy) && cfg.fuzzy_min_words > 0) {
            // Needed when profiles below a size sit out (runs that read no text learn the size from
            // it); else written when the core has it.
            out.push(Need {
                optional: !(on(Dimension::Fuzzy) && cfg.fuzzy_min_words > 0),
                ..write(&f.fuzzy_signature_words, FieldKind::Int)
            });
        }
    }
    if on(Dimension::Title) {
        out.push(read(&f.title));
        out.push(write(&f.title_signature, FieldKind::Long));
    }
    if on(Dimension::Description) {
        out.push(read(&f.description));
        out.push(write(&f.description_signature, FieldKind::Long));
    }
    if on(Dimension::Near) {
        out.push(read(&f.text));
        out.push(write(&f.near_trials, FieldKind::Longs));
        out.push(write(&f.near_keys, FieldKind::Longs));
        out.push(write(&f.near_version, FieldKind::Str));
        out.push(write(&f.near_group, FieldKind::Str));
    }
    for d in &cfg.dimensions {
        out.push(write(f.unique(*d), FieldKind::Bool));
        if let Some(c) = f.count(*d) {
            out.push(write(c, FieldKind::Int));
        }
    }
    let mut seen = HashSet::new();
    out.retain(|n| seen.insert(n.name.clone()));
    out
}
