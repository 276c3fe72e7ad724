//! The preference order a Solr index's flags were last decided under (the `--prefer-*` switches and
//! the URL rules), kept in the state folder between runs so that the next run knows which tied
//! groups to decide again ([`DecidedUnder`]).
//!
//! One small JSON file per core (its URL without user info, hashed into the name) in
//! `STATE_DIR/decided/`. A run that writes under another order than the kept one removes the file
//! before it writes anything, and writes the new one only when it succeeds: a run killed half-way
//! leaves no file, and the next run treats the order as not known (it decides every group whose
//! best rank is shared again, which costs lookups, never correctness). File mode keeps nothing:
//! its runs read everything anyway.

use std::path::PathBuf;
use std::sync::Arc;

use md5::{Digest, Md5};
use serde::{Deserialize, Serialize};

use crate::config::{JobConfig, Source};
use crate::engine::{DecidedUnder, EngineConfig, Order, Preference};
use crate::store::file::target::write_whole;
use crate::urlrules::Rules;

/// A core's URL without user info and without a trailing `/`: what names its state.
pub(crate) fn target_of(url: &str) -> String {
    match url::Url::parse(url.trim()) {
        Ok(mut u) => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.as_str().trim_end_matches('/').to_owned()
        }
        Err(_) => url.trim().trim_end_matches('/').to_owned(),
    }
}

/// What the file holds.
#[derive(Serialize, Deserialize)]
struct Kept {
    /// The core, without user info.
    target: String,
    /// The `--filter` of the run that wrote it: the order is known for runs with the same filter,
    /// or for any run when this is none.
    filter: Option<String>,
    prefer_https: bool,
    prefer_www: bool,
    /// `canonical` or `yacy`.
    order: String,
    rules: Option<Rules>,
}

/// Where one core's kept order is.
pub(crate) struct Decided {
    path: PathBuf,
    target: String,
    filter: Option<String>,
}

impl Decided {
    /// The kept order of the job's core, when it has a state folder and is a Solr core.
    pub(crate) fn of(c: &JobConfig) -> Option<Decided> {
        Decided::of_index(&c.index, c.state_dir.as_deref())
    }

    /// The kept order of `index` in `state_dir`, when both are given and it is a Solr core.
    pub(crate) fn of_index(
        index: &crate::config::IndexConfig,
        state_dir: Option<&std::path::Path>,
    ) -> Option<Decided> {
        let (Source::Solr(solr), Some(dir)) = (&index.source, state_dir) else {
            return None;
        };
        let target = target_of(&solr.url);
        let name = format!("{:x}.json", Md5::digest(target.as_bytes()));
        Some(Decided {
            path: dir.join("decided").join(name),
            target,
            filter: index.filter.clone(),
        })
    }

    /// Forgets the kept order (`clean`): whether there was one.
    pub(crate) fn forget(&self) -> std::io::Result<bool> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The order the core's flags were last decided under, as far as this run can rely on it.
    pub(crate) fn read(&self) -> DecidedUnder {
        let Ok(text) = std::fs::read_to_string(&self.path) else {
            return DecidedUnder::Unknown;
        };
        let kept: Kept = match serde_json::from_str(&text) {
            Ok(k) => k,
            Err(e) => {
                tracing::warn!(
                    file = %self.path.display(),
                    "the kept preference order is unreadable ({e}); groups tied on their best rank are decided again"
                );
                return DecidedUnder::Unknown;
            }
        };
        let filter_fits = kept.filter.is_none() || kept.filter == self.filter;
        if kept.target != self.target || !filter_fits {
            return DecidedUnder::Unknown;
        }
        let order = match kept.order.as_str() {
            "canonical" => Order::Canonical,
            "yacy" => Order::Yacy,
            _ => return DecidedUnder::Unknown,
        };
        DecidedUnder::Order {
            preference: Preference {
                prefer_https: kept.prefer_https,
                prefer_www: kept.prefer_www,
                order,
            },
            rules: kept.rules.map(|mut r| {
                r.recompute();
                Arc::new(r)
            }),
        }
    }

    /// Before a run that writes: forgets the kept order unless the run decides under that same one.
    pub(crate) fn before_writing(&self, kept: &DecidedUnder, cfg: &EngineConfig) {
        if same(kept, cfg) {
            return;
        }
        match std::fs::remove_file(&self.path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => tracing::warn!(
                file = %self.path.display(),
                "cannot remove the kept preference order ({e}); remove it by hand before the next run"
            ),
        }
    }

    /// After a run that wrote and succeeded: every group now stands under `cfg`'s order.
    pub(crate) fn after_success(&self, kept: &DecidedUnder, cfg: &EngineConfig) {
        if same(kept, cfg) && self.path.exists() {
            return;
        }
        let p = cfg.preference;
        let file = Kept {
            target: self.target.clone(),
            filter: self.filter.clone(),
            prefer_https: p.prefer_https,
            prefer_www: p.prefer_www,
            order: match p.order {
                Order::Canonical => "canonical",
                Order::Yacy => "yacy",
            }
            .to_owned(),
            rules: cfg.url_rules.as_deref().cloned(),
        };
        let written = serde_json::to_vec(&file)
            .map_err(std::io::Error::other)
            .and_then(|bytes| {
                if let Some(dir) = self.path.parent() {
                    std::fs::create_dir_all(dir)?;
                }
                write_whole(&self.path, &bytes)
            });
        if let Err(e) = written {
            tracing::warn!(
                file = %self.path.display(),
                "cannot keep the preference order ({e}); the next run decides groups tied on their best rank again"
            );
        }
    }
}

/// Whether the kept order is the one `cfg` decides under.
fn same(kept: &DecidedUnder, cfg: &EngineConfig) -> bool {
    match kept {
        DecidedUnder::Unknown => false,
        DecidedUnder::Order { preference, rules } => {
            *preference == cfg.preference && rules.as_deref() == cfg.url_rules.as_deref()
        }
    }
}
