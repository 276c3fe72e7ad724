//! The scheme guard: before a run writes, it samples documents that already carry signatures and
//! recomputes them from their text with this run's scheme and profile parameters. An index signed
//! under another scheme would otherwise be split silently: new documents would get this run's
//! signatures, old ones keep theirs, and the same text would never be grouped again.
//!
//! A sample of [`SAMPLE`] signed documents (the first by id that match the run's filter) is read
//! with its text. The guard passes when at least half of them carry the signatures this run computes:
//! a document whose text changed after it was signed (an atomic update of the text by someone else)
//! disagrees, and a few of those must not stop a run. Otherwise it names the scheme and parameters
//! that fit the most of the sample, when one of the usual ones fits a majority, and the run stops before it
//! writes. `--full` signs everything again with this run's settings, so it skips the guard.
//!
//! The guard runs when pass A first meets a document it must sign, before anything is written (pass
//! C writes): a run with nothing to sign writes no signature, so a settled index costs no text read.

use std::fmt;

use super::doc::{get_i64, get_str};
use super::{Dimension, EngineConfig, EngineError};
use crate::signature::{ProfileParams, Scheme, Signer};
use crate::store::{Filter, ReadQuery, Store};

/// How many signed documents the guard reads with their text.
pub const SAMPLE: usize = 64;

/// Below this many signed documents the sample says too little to stop a run.
pub const MIN_SAMPLE: usize = 4;

/// A scheme and its profile parameters, as the command line spells them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SchemeSettings {
    /// `--scheme`.
    pub scheme: Scheme,
    /// `--min-token-len` and `--quant-rate`.
    pub params: ProfileParams,
}

impl fmt::Display for SchemeSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "--scheme {} --min-token-len {} --quant-rate {}",
            self.scheme.name(),
            self.params.min_token_len,
            self.params.quant_rate
        )
    }
}

/// What the guard found when the sample disagrees with the run.
#[derive(Debug, Clone, PartialEq)]
pub struct SchemeMismatch {
    /// This run's settings.
    pub run: SchemeSettings,
    /// The settings most of the sample agrees with, when one of the usual ones does.
    pub index: Option<SchemeSettings>,
    /// Signed documents sampled.
    pub sampled: usize,
    /// Of those, how many carry this run's signatures.
    pub agreeing: usize,
}

impl fmt::Display for SchemeMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the index was signed with other settings than this run's ({}): only {} of {} sampled \
             signed documents carry the signatures their text gives with them; ",
            self.run, self.agreeing, self.sampled
        )?;
        match self.index {
            Some(found) => write!(
                f,
                "they were signed with {found}: run with those options, or with --full to sign every \
                 document again with this run's"
            ),
            None => write!(
                f,
                "no usual scheme fits them: find the settings the crawler signed with, or run with \
                 --full to sign every document again with this run's"
            ),
        }
    }
}

/// The usual profile parameters a crawler signs with, tried when the sample disagrees: each
/// ecosystem's defaults first, then a small grid around them.
fn candidates(scheme: Scheme) -> Vec<ProfileParams> {
    let mut out = vec![
        ProfileParams::defaults(scheme),
        ProfileParams::defaults(Scheme::Yacy),
        ProfileParams::defaults(Scheme::Md5),
    ];
    for min_token_len in 0..=5 {
        for quant_rate in [0.01f32, 0.05, 0.1, 0.2, 0.25, 0.3, 0.5] {
            out.push(ProfileParams {
                min_token_len,
                quant_rate,
            });
        }
    }
    let mut seen = Vec::new();
    out.retain(|p| {
        let key = (p.min_token_len, p.quant_rate.to_bits());
        !seen.contains(&key) && {
            seen.push(key);
            true
        }
    });
    out
}

/// A sampled document: its text and the signatures it carries.
struct Sampled {
    text: String,
    exact: Option<i64>,
    fuzzy: Option<i64>,
}

/// How many of `sample` carry the signatures `signer` computes from their text (each signature the
/// document carries must match).
fn agreeing(signer: &Signer, sample: &[Sampled], check_fuzzy: bool) -> usize {
    sample
        .iter()
        .filter(|s| {
            s.exact.is_none_or(|e| e == signer.exact(&s.text))
                && (!check_fuzzy
                    || s.fuzzy
                        .is_none_or(|f| f == signer.profile(&s.text).signature()))
        })
        .count()
}

/// Whether no document the run reads holds the text field at all (one `rows=1` read of the ids
/// of documents that have it): the field is misnamed. Asked only when the documents at hand have
/// no text field, so a run over pages with text never pays for it.
pub(super) async fn text_field_missing<S: Store>(
    store: &S,
    cfg: &EngineConfig,
) -> Result<bool, EngineError> {
    let f = &cfg.fields;
    let query = ReadQuery {
        filter: Filter::And(vec![cfg.filter.clone(), Filter::Present(f.text.clone())]),
        fields: vec![f.id.clone()],
        rows: 1,
    };
    Ok(store.sample(&query).await?.is_empty())
}

/// Reads the sample and checks it; `Ok` with the number of documents read (with their text) when
/// the run may go on.
pub(super) async fn check_scheme<S: Store>(
    store: &S,
    cfg: &EngineConfig,
) -> Result<usize, EngineError> {
    let f = &cfg.fields;
    let on = |d: Dimension| cfg.dimensions.contains(&d);
    // A text the core does not store cannot be signed again to compare (pages signed at index
    // time, whose chain the run was held to: `chain_differences`).
    if cfg.full || cfg.text_not_stored || !(on(Dimension::Exact) || on(Dimension::Fuzzy)) {
        return Ok(0);
    }
    let query = ReadQuery {
        filter: Filter::And(vec![
            cfg.filter.clone(),
            Filter::Present(f.exact_signature.clone()),
        ]),
        fields: vec![
            f.id.clone(),
            f.text.clone(),
            f.exact_signature.clone(),
            f.fuzzy_signature.clone(),
        ],
        rows: SAMPLE,
    };
    let docs = store.sample(&query).await?;
    let sample: Vec<Sampled> = docs
        .iter()
        .take(SAMPLE)
        .map(|d| Sampled {
            text: get_str(d, &f.text).unwrap_or("").to_owned(),
            exact: get_i64(d, &f.exact_signature),
            fuzzy: get_i64(d, &f.fuzzy_signature),
        })
        .collect();
    // A sample without a single text field: the field may be misnamed, and then no scheme fits.
    if !docs.is_empty()
        && docs.iter().all(|d| !d.contains_key(&f.text))
        && text_field_missing(store, cfg).await?
    {
        return Err(EngineError::NoTextField {
            field: f.text.clone(),
        });
    }
    if sample.len() < MIN_SAMPLE {
        tracing::debug!(
            signed = sample.len(),
            "too few signed documents to check the scheme"
        );
        return Ok(docs.len());
    }
    let run = SchemeSettings {
        scheme: cfg.signer.scheme,
        params: cfg.signer.params,
    };
    let agree = agreeing(&cfg.signer, &sample, true);
    tracing::debug!(sampled = sample.len(), agree, "scheme guard");
    if agree * 2 >= sample.len() {
        return Ok(docs.len());
    }
    // The exact signature depends on the scheme alone; the fuzzy one on the parameters too.
    let majority = |n: usize| n * 2 >= sample.len();
    // Of the settings that fit a majority, the one that fits the most (the first of equals): short
    // pages give the same profile under neighbouring parameters.
    let mut index: Option<(usize, SchemeSettings)> = None;
    for scheme in [Scheme::Yacy, Scheme::Md5] {
        if !majority(agreeing(&Signer::new(scheme), &sample, false)) {
            continue;
        }
        for params in candidates(scheme) {
            let n = agreeing(&Signer { scheme, params }, &sample, true);
            if majority(n) && index.is_none_or(|(best, _)| n > best) {
                index = Some((n, SchemeSettings { scheme, params }));
            }
        }
    }
    let index = index.map(|(_, s)| s);
    Err(EngineError::SchemeMismatch(SchemeMismatch {
        run,
        index,
        sampled: sample.len(),
        agreeing: agree,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_usual_parameters_come_first_and_once() {
        let c = candidates(Scheme::Md5);
        assert_eq!(c[0], ProfileParams::defaults(Scheme::Md5));
        assert_eq!(c[1], ProfileParams::defaults(Scheme::Yacy));
        let mut keys: Vec<_> = c
            .iter()
            .map(|p| (p.min_token_len, p.quant_rate.to_bits()))
            .collect();
        let n = keys.len();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), n);
    }

    #[test]
    fn the_message_names_both_settings() {
        let m = SchemeMismatch {
            run: SchemeSettings {
                scheme: Scheme::Yacy,
                params: ProfileParams::defaults(Scheme::Yacy),
            },
            index: Some(SchemeSettings {
                scheme: Scheme::Md5,
                params: ProfileParams::defaults(Scheme::Md5),
            }),
            sampled: 10,
            agreeing: 0,
        };
        let text = m.to_string();
        assert!(
            text.contains("--scheme yacy --min-token-len 3 --quant-rate 0.5"),
            "{text}"
        );
        assert!(
            text.contains("--scheme md5 --min-token-len 2 --quant-rate 0.01"),
            "{text}"
        );
        assert!(text.contains("--full"), "{text}");
        assert!(!text.contains('\n'));
    }
}
