//! The settings a Solr index's flags are decided under, recorded with the index so that every
//! process pointed at it, on any machine, is held to them: serve and the nightly timer's `run`
//! never undo each other's flags (issue 42).
//!
//! What is recorded ([`Deciding`]): every setting that decides flags or signatures (the scheme and
//! its tunables, the dimensions, the scope, the preference order and its switches, the fuzzy
//! minimum, the near-duplicate parameters), and the *sources* of the URL rules and the chrome
//! model (their paths), not their content: rules learnt again from the same source are no settings
//! change (runs re-decide the groups the new rules move, as before). `--filter` picks the record:
//! each filter's documents have their own.
//!
//! Where: a user property of the core's configuration, through Solr's Config API
//! (`set-user-property`, read back from `/config/overlay`), named
//! `solr-dedup.settings.<collection>.<md5 of the filter>`. It travels with the index's
//! configuration to every process and machine that reads it, needs no field in the schema, and is
//! no document (the index's searches and counts never see it). The costs, weighed: writing it needs
//! the `config-edit` permission and reloads the core (on SolrCloud, every collection of the
//! configset), so it is written only when it changes: by the first writing run (or serve's start)
//! on a core with none, and by `run --reconfigure`; the state folder is per
//! machine (what `decided/` keeps there is a cache of the last rules content, for which groups to
//! decide again, never the truth); a settings document inside the index would need only update
//! rights and travel with backups, but every search and count of the index would see it.
//!
//! How: a writing run compares its deciding settings with the record. None recorded: it records
//! its own and runs (a Solr that refuses the write leaves the core unrecorded, with a warning). The
//! same: it runs. Others: it stops with exit 2
//! before anything is written, naming each difference, unless `--reconfigure` says to decide the
//! core under the new ones, which the record then holds once the run has succeeded. `check` and
//! `--dry-run` only say so (a check previews what other settings would do).

use md5::{Digest, Md5};
use serde::{Deserialize, Serialize};

use crate::config::{JobConfig, SolrConfig};
use crate::engine::{Dimension, EngineConfig, Order};
use crate::store::open::{delete_user_property, read_user_property, write_user_property};

/// The format of a record.
const FORMAT: u32 = 1;

/// The deciding settings of a run, as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Deciding {
    /// [`FORMAT`].
    format: u32,
    /// `--scheme`.
    scheme: String,
    /// `--min-token-len`.
    min_token_len: usize,
    /// `--quant-rate`.
    quant_rate: f32,
    /// `--dimensions`, in their order.
    dimensions: Vec<String>,
    /// `--scope`.
    scope: String,
    /// `--prefer` (or `--compat yacy`).
    prefer: String,
    /// `--prefer-https`.
    prefer_https: bool,
    /// `--prefer-www`.
    prefer_www: bool,
    /// `--fuzzy-min-words`.
    fuzzy_min_words: u32,
    /// `--near-shingle`, `--near-hashes`, `--near-trials`, `--near-agree`.
    near: [usize; 4],
    /// `--rules`: the source (the file's absolute path), when the run ranks by rules (the canonical
    /// order, and the file there).
    rules: Option<String>,
    /// `--chrome`: the source (the file's absolute path), when near is decided.
    chrome: Option<String>,
    /// The field names after `--field` renames, as one digest: which fields are read and written.
    /// Taken under YaCy's profile whatever the run's ([`fields_digest`]), so that a record made
    /// before profiles existed still matches; the profile is recorded apart.
    #[serde(default)]
    fields: String,
    /// `--profile` as the run resolved it (`yacy` or `in-place`); absent in records made before
    /// profiles existed, which are YaCy's.
    #[serde(default = "yacy_profile", skip_serializing_if = "is_yacy_profile")]
    profile: String,
}

fn yacy_profile() -> String {
    crate::model::Profile::Yacy.name().to_owned()
}

fn is_yacy_profile(p: &String) -> bool {
    *p == yacy_profile()
}

/// The digest of the field names after `--field` renames, taken under YaCy's profile: the names
/// as their `Debug` text had it before the profile was a field of theirs.
fn fields_digest(fields: &crate::model::FieldNames) -> String {
    let mut yacy = fields.clone();
    yacy.set_profile(crate::model::Profile::Yacy);
    let text = format!("{yacy:?}").replacen("profile: Yacy, ", "", 1);
    format!("{:x}", Md5::digest(text.as_bytes()))
}

impl Deciding {
    /// The deciding settings of `c` as the run decides: `e` is its engine's configuration once
    /// fitted to the core (near left out when the core lacks it), and a dimension's parameters count
    /// only when it is decided.
    pub(crate) fn of(c: &JobConfig, e: &EngineConfig) -> Deciding {
        let mut dimensions: Vec<Dimension> = e.dimensions.clone();
        dimensions.sort_by_key(|d| d.index());
        let near = dimensions.contains(&Dimension::Near);
        let fuzzy = dimensions.contains(&Dimension::Fuzzy);
        Deciding {
            format: FORMAT,
            scheme: e.signer.scheme.name().to_owned(),
            min_token_len: e.signer.params.min_token_len,
            quant_rate: e.signer.params.quant_rate,
            dimensions: dimensions.iter().map(|d| d.name().to_owned()).collect(),
            scope: e.scope.name().to_owned(),
            prefer: match e.preference.order {
                Order::Canonical => "canonical",
                Order::Yacy => "yacy",
            }
            .to_owned(),
            prefer_https: e.preference.prefer_https,
            prefer_www: e.preference.prefer_www,
            fuzzy_min_words: if fuzzy { e.fuzzy_min_words } else { 0 },
            near: if near {
                [e.near.shingle, e.near.hashes, e.near.trials, e.near.agree]
            } else {
                [0; 4]
            },
            // Rules rank only under the canonical order. The source counts, not whether its file
            // is there yet: serve waits for a file `urls learn` has not written and ranks without
            // rules meanwhile, as it would under empty ones.
            rules: c
                .rules
                .as_deref()
                .filter(|_| e.preference.order == Order::Canonical)
                .map(source),
            chrome: c.chrome.as_deref().filter(|_| near).map(source),
            fields: fields_digest(&e.fields),
            profile: e.fields.profile.name().to_owned(),
        }
    }

    /// Each setting in which `self` (a run's) differs from `recorded`, one line each, named by its
    /// flag.
    pub(crate) fn differences(&self, recorded: &Deciding) -> Vec<String> {
        self.differences_from(recorded, "recorded")
    }

    /// [`Deciding::differences`], each line ending `(<whose>: <their value>)`.
    fn differences_from(&self, recorded: &Deciding, whose: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut differ = |flag: &str, ours: String, theirs: String| {
            if ours != theirs {
                out.push(format!("{flag} {ours} ({whose}: {theirs})"));
            }
        };
        let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "none".to_owned());
        differ("--scheme", self.scheme.clone(), recorded.scheme.clone());
        differ(
            "--min-token-len",
            self.min_token_len.to_string(),
            recorded.min_token_len.to_string(),
        );
        differ(
            "--quant-rate",
            self.quant_rate.to_string(),
            recorded.quant_rate.to_string(),
        );
        differ(
            "--dimensions",
            self.dimensions.join(","),
            recorded.dimensions.join(","),
        );
        differ("--scope", self.scope.clone(), recorded.scope.clone());
        differ("--prefer", self.prefer.clone(), recorded.prefer.clone());
        differ(
            "--prefer-https",
            self.prefer_https.to_string(),
            recorded.prefer_https.to_string(),
        );
        differ(
            "--prefer-www",
            self.prefer_www.to_string(),
            recorded.prefer_www.to_string(),
        );
        differ(
            "--fuzzy-min-words",
            self.fuzzy_min_words.to_string(),
            recorded.fuzzy_min_words.to_string(),
        );
        let near = |n: &[usize; 4]| format!("{}/{}/{}/{}", n[0], n[1], n[2], n[3]);
        differ(
            "--near-shingle/hashes/trials/agree",
            near(&self.near),
            near(&recorded.near),
        );
        differ("--rules", shown(&self.rules), shown(&recorded.rules));
        differ("--chrome", shown(&self.chrome), shown(&recorded.chrome));
        differ("--profile", self.profile.clone(), recorded.profile.clone());
        if self.fields != recorded.fields {
            out.push("--field renames other than the recorded ones".to_owned());
        }
        out
    }
}

/// A file's source as recorded: its absolute path, links resolved when it is there, so that
/// `rules.json` and `/var/lib/solr-dedup/rules.json` are one source.
fn source(path: &std::path::Path) -> String {
    std::fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_owned())
        .display()
        .to_string()
}

/// Where a core's record is: its Solr and the property's name.
pub(crate) struct Record<'a> {
    solr: &'a SolrConfig,
    name: String,
}

impl<'a> Record<'a> {
    /// The record of `c`'s core and filter; none in file mode.
    pub(crate) fn of(c: &'a JobConfig) -> Option<Record<'a>> {
        Record::of_index(&c.index)
    }

    /// The record of `index`'s core and filter; none in file mode.
    pub(crate) fn of_index(index: &'a crate::config::IndexConfig) -> Option<Record<'a>> {
        Record::named(index, false)
    }

    /// The record of the whole core (no filter): the one the index-time signing processor reads.
    pub(crate) fn of_core(index: &'a crate::config::IndexConfig) -> Option<Record<'a>> {
        Record::named(index, true)
    }

    fn named(index: &'a crate::config::IndexConfig, unfiltered: bool) -> Option<Record<'a>> {
        let crate::config::Source::Solr(solr) = &index.source else {
            return None;
        };
        // The core or collection as the client reaches it: the last segment of its path (no user
        // info, query or fragment), percent-decoded.
        let collection = url::Url::parse(solr.url.trim())
            .ok()
            .and_then(|u| {
                u.path_segments()?.rev().find(|s| !s.is_empty()).map(|s| {
                    percent_encoding::percent_decode_str(s)
                        .decode_utf8_lossy()
                        .into_owned()
                })
            })
            .unwrap_or_else(|| "core".to_owned());
        let filter = if unfiltered {
            ""
        } else {
            index.filter.as_deref().unwrap_or("")
        };
        let name = format!(
            "solr-dedup.settings.{collection}.{:x}",
            Md5::digest(filter.as_bytes())
        );
        Some(Record { solr, name })
    }

    /// The recorded settings: `Ok(None)` when none are, `Ok(Some(Err(why)))` for a record this
    /// version cannot read (another format, a newer version's), an error when the Config API cannot
    /// be read.
    pub(crate) async fn read(&self) -> Result<Option<Result<Deciding, String>>, String> {
        let text = read_user_property(self.solr, &self.name).await?;
        Ok(text.map(|t| match serde_json::from_str::<Deciding>(&t) {
            Ok(d) if d.format == FORMAT => Ok(d),
            Ok(d) => Err(format!(
                "the core's settings record is of format {} (this version reads {FORMAT})",
                d.format
            )),
            Err(e) => Err(format!("the core's settings record cannot be read ({e})")),
        }))
    }

    /// Removes the record (`clean`; a core reload, needs `config-edit`).
    pub(crate) async fn remove(&self) -> Result<(), String> {
        delete_user_property(self.solr, &self.name).await
    }

    /// The property's name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Records `settings` (a core reload; needs `config-edit`).
    pub(crate) async fn write(&self, settings: &Deciding) -> Result<(), String> {
        let text = serde_json::to_string(settings).expect("settings serialise");
        write_user_property(self.solr, &self.name, &text).await
    }
}

/// What of `c`'s settings (as `e` decides) would sign pages otherwise than the core's record: the
/// scheme, its tunables and the near parameters, as [`Deciding::differences`] names them. Empty
/// when the core has no record or signs alike. An error when the record cannot be read.
pub(crate) async fn resigning_differences(
    c: &JobConfig,
    e: &EngineConfig,
) -> Result<Vec<String>, String> {
    let Some(record) = Record::of(c) else {
        return Ok(Vec::new());
    };
    let Some(Ok(recorded)) = record.read().await? else {
        return Ok(Vec::new());
    };
    let ours = Deciding::of(c, e);
    Ok(ours
        .differences(&recorded)
        .into_iter()
        .filter(|d| {
            ["--scheme ", "--min-token-len ", "--quant-rate ", "--near-"]
                .iter()
                .any(|flag| d.starts_with(flag))
        })
        .collect())
}

/// The simple class name of the index-time signing processor (`solr-plugin/`).
pub(crate) const SIGNING_PROCESSOR: &str = "SolrDedupUpdateProcessorFactory";

/// What the index-time signing processor signs under, as the processor resolves it: the core's
/// record (no filter) when there is one, else `ours` with the processor's arguments in the places
/// it reads (the scheme, its tunables, the dimensions, the near parameters and scope), the worker's
/// defaults for those it lacks.
fn chain_settings(
    recorded: Option<Deciding>,
    p: &crate::solr_client::config::Processor,
    ours: &Deciding,
) -> Deciding {
    if let Some(d) = recorded {
        return d;
    }
    let arg = |k: &str| match p.params.get(k) {
        Some(serde_json::Value::String(s)) => Some(s.trim().to_owned()),
        Some(v @ serde_json::Value::Number(_)) => Some(v.to_string()),
        _ => None,
    };
    let scheme = arg("scheme").unwrap_or_else(|| "yacy".to_owned());
    let profile = crate::signature::ProfileParams::defaults(if scheme == "md5" {
        crate::signature::Scheme::Md5
    } else {
        crate::signature::Scheme::Yacy
    });
    let n = crate::signature::near::NearParams::default();
    let defaults = [n.shingle, n.hashes, n.trials, n.agree];
    let mut near = defaults;
    for (i, k) in ["nearShingle", "nearHashes", "nearTrials", "nearAgree"]
        .iter()
        .enumerate()
    {
        near[i] = arg(k).and_then(|v| v.parse().ok()).unwrap_or(defaults[i]);
    }
    Deciding {
        min_token_len: arg("minTokenLen")
            .and_then(|v| v.parse().ok())
            .unwrap_or(profile.min_token_len),
        quant_rate: arg("quantRate")
            .and_then(|v| v.parse().ok())
            .unwrap_or(profile.quant_rate),
        scheme,
        dimensions: match p.strings("dimensions") {
            d if d.is_empty() => Dimension::ALL.iter().map(|d| d.name().to_owned()).collect(),
            d => d,
        },
        near,
        scope: arg("scope").unwrap_or_else(|| "global".to_owned()),
        // The processor applies no chrome model.
        chrome: None,
        ..ours.clone()
    }
}

/// How the pages `p` signs at index time differ from what this run (`c`, `e`) would sign, one
/// `--flag ours (the chain signs under: theirs)` each, for what both sign: the scheme and its
/// tunables for the text's, title's and description's signatures, the near parameters and scope
/// for the near values. Empty when they agree. An error when the core's record cannot be read.
pub(crate) async fn chain_differences(
    c: &JobConfig,
    e: &EngineConfig,
    p: &crate::solr_client::config::Processor,
) -> Result<Vec<String>, String> {
    let recorded = match Record::of_core(&c.index) {
        Some(record) => record.read().await?.and_then(Result::ok),
        None => None,
    };
    let ours = Deciding::of(c, e);
    let chain = chain_settings(recorded, p, &ours);
    let both =
        |d: &str| ours.dimensions.iter().any(|x| x == d) && chain.dimensions.iter().any(|x| x == d);
    // The run's settings with the chain's in the places where both sign: what differs there.
    let mut theirs = ours.clone();
    if ["exact", "fuzzy", "title", "description"]
        .iter()
        .any(|d| both(d))
    {
        theirs.scheme = chain.scheme;
    }
    if both("exact") || both("fuzzy") {
        theirs.min_token_len = chain.min_token_len;
        theirs.quant_rate = chain.quant_rate;
    }
    // A chrome model, the chain's or the run's: the near values are the worker's to sign.
    if both("near") && chain.chrome.is_none() && ours.chrome.is_none() {
        theirs.near = chain.near;
        theirs.scope = chain.scope;
    }
    let mut out = ours.differences_from(&theirs, "the chain signs under");
    // The fields the chain signs from (`field.<YaCy's name>`), against the run's.
    let f = &e.fields;
    for (yacy, ours) in [
        ("text_t", &f.text),
        ("title", &f.title),
        ("description_txt", &f.description),
    ] {
        let theirs = match p.params.get(&format!("field.{yacy}")) {
            Some(serde_json::Value::String(s)) => s.trim().to_owned(),
            _ => yacy.to_owned(),
        };
        if *ours != theirs {
            out.push(format!(
                "--field {yacy}={ours} (the chain signs from: {theirs})"
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Deciding {
        Deciding {
            format: FORMAT,
            scheme: "yacy".into(),
            min_token_len: 3,
            quant_rate: 0.5,
            dimensions: vec!["exact".into(), "title".into()],
            scope: "global".into(),
            prefer: "canonical".into(),
            prefer_https: true,
            prefer_www: true,
            fuzzy_min_words: 4,
            near: [2, 14, 6, 2],
            rules: Some("/var/lib/solr-dedup/rules.json".into()),
            chrome: None,
            fields: "f".into(),
            profile: "yacy".into(),
        }
    }

    #[test]
    fn each_difference_is_named_by_its_flag() {
        let recorded = base();
        assert!(base().differences(&recorded).is_empty());
        let mut ours = base();
        ours.prefer = "yacy".into();
        ours.rules = None;
        ours.near[1] = 16;
        assert_eq!(
            ours.differences(&recorded),
            [
                "--prefer yacy (recorded: canonical)",
                "--near-shingle/hashes/trials/agree 2/16/6/2 (recorded: 2/14/6/2)",
                "--rules none (recorded: /var/lib/solr-dedup/rules.json)",
            ]
        );
    }

    #[test]
    fn a_record_reads_back() {
        let text = serde_json::to_string(&base()).unwrap();
        assert_eq!(serde_json::from_str::<Deciding>(&text).unwrap(), base());
    }

    /// The digest of YaCy's names is what records made before profiles hold: the `Debug` text
    /// of the names as it was then, written out here by hand.
    #[test]
    fn the_fields_digest_is_what_records_before_profiles_hold() {
        use crate::model::{FieldNames, Profile};
        let before = r#"FieldNames { id: "id", url: "sku", text: "text_t", title: "title", description: "description_txt", version: "_version_", exact_signature: "exact_signature_l", fuzzy_signature: "fuzzy_signature_l", fuzzy_signature_text: "fuzzy_signature_text_t", fuzzy_signature_words: "fuzzy_signature_words_i", title_signature: "title_exact_signature_l", description_signature: "description_exact_signature_l", unique: ["exact_signature_unique_b", "fuzzy_signature_unique_b", "title_unique_b", "description_unique_b", "www_unique_b", "http_unique_b", "near_unique_b"], exact_count: "exact_signature_copycount_i", fuzzy_count: "fuzzy_signature_copycount_i", near_trials: "near_trials_ls", near_keys: "near_keys_ls", near_version: "near_version_s", near_count: "near_copycount_i", near_group: "near_group_s" }"#;
        let want = format!("{:x}", Md5::digest(before.as_bytes()));
        assert_eq!(fields_digest(&FieldNames::default()), want);
        // The profile is recorded apart: the names' digest does not change with it.
        let mut in_place = FieldNames::default();
        in_place.set_profile(Profile::InPlace);
        assert_eq!(fields_digest(&in_place), want);
        // A rename does change it.
        let mut renamed = FieldNames::default();
        renamed.rename("sku", "url_s");
        assert_ne!(fields_digest(&renamed), want);
    }

    /// A record made before profiles (no `profile`) reads as YaCy's, and YaCy's is written as
    /// before (without it); another profile is named by its flag.
    #[test]
    fn a_record_without_a_profile_is_yacy_s() {
        let old = r#"{"format":1,"scheme":"yacy","min_token_len":3,"quant_rate":0.01,"dimensions":["exact"],"scope":"global","prefer":"canonical","prefer_https":true,"prefer_www":true,"fuzzy_min_words":4,"near":[0,0,0,0],"rules":null,"chrome":null,"fields":"x"}"#;
        let d: Deciding = serde_json::from_str(old).unwrap();
        assert_eq!(d.profile, "yacy");
        assert_eq!(serde_json::to_string(&d).unwrap(), old);
        let mut in_place = d.clone();
        in_place.profile = "in-place".into();
        assert_eq!(
            in_place.differences(&d),
            vec!["--profile in-place (recorded: yacy)".to_owned()]
        );
    }
}
