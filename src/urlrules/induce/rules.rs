//! From counted candidates to rules: which candidates become rules of a site, of a path prefix,
//! or of all sites pooled, with their evidence.

use std::collections::BTreeMap;

use super::{Counts, FxHashMap, Key, Kind, Summary};
use crate::urlrules::{Evidence, ParamRule, Rules, SiteRules, ALL_SITES, FORMAT, MIN_OBSERVATIONS};

/// The rules of `candidates` (every one with at least one pair); `sites` are the learner's sites
/// (name, pages) by id.
pub(super) fn choose(
    candidates: FxHashMap<Key, Counts>,
    sites: &[(Box<str>, u64)],
    summary: &mut Summary,
    min_estimate: f64,
) -> Rules {
    let mut rules = Rules {
        url_rules: FORMAT,
        min_estimate,
        sites: BTreeMap::new(),
        calibration: None,
    };
    // Pooled over all sites: site-level evidence only, from at least two sites.
    let mut pooled: FxHashMap<Key, (Counts, u32)> = FxHashMap::default();
    // Sorted, so that the file is the same for the same index.
    let mut all: Vec<(Key, Counts)> = candidates.into_iter().collect();
    all.sort_by(|a, b| {
        let (ka, kb) = (&a.0, &b.0);
        (ka.site, ka.kind, &a.1.name, &a.1.value, &a.1.prefix).cmp(&(
            kb.site,
            kb.kind,
            &b.1.name,
            &b.1.value,
            &b.1.prefix,
        ))
    });
    // Whether the site-level irrelevant rule applies, per site and parameter name hash, so that
    // prefix rules and value rules it covers are left out.
    let mut param_applies: FxHashMap<(u32, u64, u64), bool> = FxHashMap::default();
    let mut prefix_params: std::collections::HashSet<(u32, u64, u64)> =
        std::collections::HashSet::new();
    let site_level: FxHashMap<Key, (u64, u64)> = all
        .iter()
        .filter(|(k, _)| k.prefix == 0)
        .map(|(k, c)| (*k, (c.support, c.against)))
        .collect();
    for (k, c) in &all {
        if k.kind == Kind::Param {
            let e = Evidence::new(c.support, c.against);
            let enough = c.support + c.against >= MIN_OBSERVATIONS;
            param_applies.insert(
                (k.site, k.name, k.prefix),
                enough && e.estimate >= min_estimate,
            );
        }
    }
    for (k, c) in all {
        if k.prefix == 0 {
            let p = pooled.entry(Key { site: 0, ..k }).or_insert_with(|| {
                (
                    Counts {
                        name: c.name.clone(),
                        value: c.value.clone(),
                        ..Counts::default()
                    },
                    0,
                )
            });
            p.0.support += c.support;
            p.0.against += c.against;
            p.1 += 1;
        }
        if c.support + c.against < MIN_OBSERVATIONS {
            continue;
        }
        // Where the parameter's rule applies at a level, a value rule at that level adds
        // nothing.
        let covered = param_applies
            .get(&(k.site, k.name, k.prefix))
            .copied()
            .unwrap_or(false);
        if covered && k.kind == Kind::ParamValue {
            continue;
        }
        // A value that does not apply says nothing its parameter's rule does not say.
        if k.kind == Kind::ParamValue && Evidence::new(c.support, c.against).estimate < min_estimate
        {
            continue;
        }
        // A prefix rule is kept where it decides otherwise than the site's rule, or applies
        // with a higher estimate; else it would only say the same on less evidence. A value
        // rule under a prefix is kept where the prefix has a parameter rule of its own (that
        // level decides there, and the value rule is what lets that value go). Parameter
        // rules sort before value rules, so the set is complete when values come.
        if k.prefix != 0 && k.kind == Kind::ParamValue {
            if !prefix_params.contains(&(k.site, k.name, k.prefix)) {
                continue;
            }
        } else if k.prefix != 0 {
            let site = site_level
                .get(&Key { prefix: 0, ..k })
                .map_or(0.0, |&(s, a)| Evidence::new(s, a).estimate);
            let here = Evidence::new(c.support, c.against).estimate;
            let differs = (here >= min_estimate) != (site >= min_estimate);
            let better = here >= min_estimate && here > site;
            if !(differs || better) {
                continue;
            }
            if k.kind == Kind::Param {
                prefix_params.insert((k.site, k.name, k.prefix));
            }
        }
        let (site, pages) = &sites[k.site as usize];
        let r = rules.sites.entry(site.to_string()).or_default();
        r.pages = *pages;
        put(r, k.kind, &c, summary, min_estimate);
    }
    let mut pooled: Vec<(Key, (Counts, u32))> = pooled.into_iter().collect();
    pooled.sort_by(|a, b| {
        (a.0.kind, &a.1 .0.name, &a.1 .0.value).cmp(&(b.0.kind, &b.1 .0.name, &b.1 .0.value))
    });
    let mut any = SiteRules::default();
    let mut pooled_params = std::collections::HashSet::new();
    for (k, (c, sites)) in pooled {
        let e = Evidence::new(c.support, c.against);
        if k.kind == Kind::ParamValue && pooled_params.contains(&k.name) {
            continue;
        }
        if sites >= 2 && e.estimate >= min_estimate {
            if k.kind == Kind::Param {
                pooled_params.insert(k.name);
            }
            put(&mut any, k.kind, &c, summary, min_estimate);
        }
    }
    if any != SiteRules::default() {
        any.pages = summary.pages;
        rules.sites.insert(ALL_SITES.to_owned(), any);
    }
    rules
}

/// Adds a candidate's rule to a site's rules.
fn put(r: &mut SiteRules, kind: Kind, c: &Counts, summary: &mut Summary, min: f64) {
    let e = Evidence::new(c.support, c.against);
    let name = c.name.to_string();
    let prefix = c.prefix.as_deref().unwrap_or("/");
    let label = match kind {
        Kind::Scheme => {
            r.scheme = Some(e);
            "scheme"
        }
        Kind::Www => {
            r.www = Some(e);
            "www"
        }
        Kind::ParamOrder => {
            r.param_order = Some(e);
            "param order"
        }
        Kind::PathParam => {
            r.path_params.insert(name, e);
            "path parameter"
        }
        Kind::DefaultDocument => {
            r.default_documents.insert(name, e);
            "default document"
        }
        Kind::Param => {
            r.params.push(ParamRule::irrelevant(&name, prefix, e));
            "irrelevant parameter"
        }
        Kind::ParamValue => {
            let value = c.value.as_deref().unwrap_or("");
            r.params
                .push(ParamRule::default_value(&name, value, prefix, e));
            "parameter value"
        }
    };
    let n = summary.rules.entry(label).or_default();
    n.0 += 1;
    if e.estimate >= min {
        n.1 += 1;
    }
}
