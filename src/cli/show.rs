//! `solr-dedup config show`: the settings in effect, as a configuration file, each with where it
//! came from, for whoever wonders why a run decided as it did.
//!
//! It takes serve's options (which hold run's), so `config show --prefer yacy` shows what
//! `run --prefer yacy` and `serve --prefer yacy` would use. What it prints is itself a valid
//! configuration file. Secrets never show: the Solr URL loses its user info, credentials and the
//! token are named by where they come from, never by value, and the auth and token files are not
//! read.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use clap::{Args, Subcommand, ValueEnum};

use super::layer::Origin;
use super::{CompatArg, PreferArg, ServeArgs};
use crate::config::file::Loaded;
use crate::config::{value, Environment};
use crate::engine::DEFAULT_FUZZY_MIN_WORDS;
use crate::model::Dimension;
use crate::signature::{ProfileParams, Scheme};

/// `solr-dedup config …`.
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the settings in effect as TOML, each with where it came from (a flag, the
    /// environment, the configuration file, the default)
    #[command(long_about = SHOW_LONG_ABOUT, after_help = SHOW_EXAMPLES)]
    Show(ConfigShowArgs),
}

const SHOW_LONG_ABOUT: &str = "\
Print the settings in effect as a configuration file (TOML), each with a comment saying where it came \
from: a flag (# from --prefer), an environment variable (# from SOLR_URL), the configuration file \
(# from /etc/solr-dedup/config.toml) or the built-in default (# default). A flag beats its \
environment variable, which beats the file, which beats the default.

Takes every option of serve (and so of run): give the flags a command would get to see what it runs \
with. Nothing is contacted and no auth or token file is read; the Solr URL is shown without user \
info, and credentials and the token only by where they come from.

Exit codes: 0 printed; 2 usage error, or a configuration file that cannot be read or does not parse.";

const SHOW_EXAMPLES: &str = "\
Examples:
  solr-dedup config show
      the default path's file, the environment and the defaults
  solr-dedup --config /etc/solr-dedup/config.toml config show --prefer yacy
      what `run --prefer yacy` would run with under that file";

/// Arguments of `solr-dedup config show`.
#[derive(Debug, Args)]
pub struct ConfigShowArgs {
    /// The options of serve (and run), whose effect is shown.
    #[command(flatten)]
    pub serve: ServeArgs,
}

/// The text `config show` prints: `args` after the file was laid under them, `origins` as the
/// layer recorded them.
pub(super) fn render(
    args: &ServeArgs,
    env: &Environment,
    origins: &BTreeMap<String, Origin>,
    loaded: &Loaded,
) -> String {
    let mut out = String::new();
    let file_name = loaded
        .file()
        .map_or_else(String::new, |p| p.display().to_string());
    let _ = writeln!(
        out,
        "# solr-dedup config show: the settings in effect (flag > environment > file > default)"
    );
    match (&loaded.path, &loaded.missing_default) {
        (Some((path, whence)), _) => {
            let _ = writeln!(
                out,
                "# configuration file: {} (from {whence})",
                path.display()
            );
        }
        (None, Some(path)) => {
            let _ = writeln!(
                out,
                "# configuration file: none ({} is not there)",
                path.display()
            );
        }
        (None, None) => {
            let _ = writeln!(out, "# configuration file: none");
        }
    }
    let mut w = Writer {
        out,
        origins,
        file_name,
    };
    let job = &args.run.job;

    w.section("index");
    let solr = job
        .solr
        .solr
        .clone()
        .or_else(|| env.solr_url.clone())
        .map(|u| crate::solr_client::client::without_user_info(&u));
    let solr = solr.filter(|_| job.input.is_none());
    w.opt("index.solr", solr.as_deref().map(text));
    w.opt("index.input", job.input.as_ref().map(|p| path(p)));
    w.opt("index.filter", job.filter.as_deref().map(text));
    w.set("index.max-line-bytes", int(job.max_line_bytes));
    w.set("index.batch-size", int(job.batch_size));
    let mut renames = BTreeMap::new();
    for (name, field) in &job.fields {
        renames.insert(name.clone(), field.clone());
    }
    if !renames.is_empty() {
        w.section("index.field");
        for (name, field) in &renames {
            w.set(&format!("index.field.{name}"), text(field));
        }
    }

    w.section("solr");
    w.set("solr.timeout", int(job.solr.timeout));
    w.set("solr.retries", int(job.solr.retries));
    w.set("solr.concurrency", int(job.concurrency));
    w.set("solr.max-response-bytes", int(job.solr.max_response_bytes));
    match w.origin("solr.auth-file") {
        Origin::Env(var) => w.note(&format!("credentials: from {var} (not shown)")),
        _ => w.opt(
            "solr.auth-file",
            job.solr.auth_file.as_ref().map(|p| path(p)),
        ),
    }

    w.section("decide");
    match &job.dimensions {
        Some(d) => w.set("decide.dimensions", list(d.0.iter().map(|d| d.name()))),
        // Not written as a value: a list given is a list asked for, and near is then required.
        None => w.note(&format!(
            "dimensions = {}  # default: near left out against a core without its fields",
            list(Dimension::ALL.iter().map(|d| d.name()))
        )),
    }
    let scheme = match job.options.scheme {
        super::SchemeArg::Yacy => Scheme::Yacy,
        super::SchemeArg::Md5 => Scheme::Md5,
    };
    let profile = ProfileParams::defaults(scheme);
    w.set("decide.scheme", enum_text(job.options.scheme));
    let min_token_len = job.options.min_token_len.unwrap_or(profile.min_token_len);
    w.set("decide.min-token-len", int(min_token_len as u64));
    let rate = job.options.quant_rate.unwrap_or(profile.quant_rate);
    let rate: f64 = rate.to_string().parse().unwrap_or(f64::from(rate));
    w.set("decide.quant-rate", toml::Value::Float(rate).to_string());
    w.set("decide.scope", enum_text(job.scope));
    let yacy = job.prefer == Some(PreferArg::Yacy) || job.compat == Some(CompatArg::Yacy);
    let prefer = if yacy { "yacy" } else { "canonical" };
    w.set("decide.prefer", text(prefer));
    w.set("decide.prefer-https", job.prefer_https.to_string());
    w.set("decide.prefer-www", job.prefer_www.to_string());
    let min_words = match (job.fuzzy_min_words, job.compat) {
        (Some(n), _) => n,
        (None, Some(_)) => 0,
        (None, None) => DEFAULT_FUZZY_MIN_WORDS,
    };
    w.set("decide.fuzzy-min-words", int(u64::from(min_words)));
    if w.origin("decide.compat") != Origin::Default {
        w.note("compat = \"yacy\": prefer = \"yacy\" and fuzzy-min-words = 0, as set above");
    }
    w.opt("decide.rules", job.rules.as_ref().map(|p| path(p)));
    w.opt("decide.chrome", job.chrome.as_ref().map(|p| path(p)));
    w.set("decide.near-shingle", int(job.near_shingle));
    w.set("decide.near-hashes", int(job.near_hashes));
    w.set("decide.near-trials", int(job.near_trials));
    w.set("decide.near-agree", int(job.near_agree));

    w.section("run");
    w.set(
        "run.commit",
        text(&value::commit_text(commit(args.run.commit))),
    );
    w.set("run.memory", int(job.memory));
    w.opt("run.temp-dir", job.temp_dir.as_ref().map(|p| path(p)));
    match &args.state_dir {
        Some(dir) => w.set("run.state-dir", path(dir)),
        None => w.set_noted(
            "run.state-dir",
            path(&env.default_state_dir()),
            "$STATE_DIRECTORY, else $XDG_STATE_HOME/solr-dedup, else ~/.local/state/solr-dedup",
        ),
    }

    w.section("serve");
    w.set("serve.listen", text(&args.listen.to_string()));
    w.opt(
        "serve.every",
        args.every
            .map(|d| text(&humantime::format_duration(d).to_string())),
    );
    w.opt(
        "serve.after-quiet",
        args.after_quiet
            .map(|d| text(&humantime::format_duration(d).to_string())),
    );
    match w.origin("serve.token-file") {
        Origin::Env(var) => w.note(&format!("bearer token: from {var} (not shown)")),
        _ => w.opt(
            "serve.token-file",
            args.token_file.as_ref().map(|p| path(p)),
        ),
    }
    w.set(
        "serve.frame-ancestors",
        list(args.frame_ancestors.iter().map(String::as_str)),
    );
    w.out
}

/// Writes `key = value  # where from` lines.
struct Writer<'a> {
    out: String,
    origins: &'a BTreeMap<String, Origin>,
    file_name: String,
}

impl Writer<'_> {
    fn origin(&self, key: &str) -> Origin {
        self.origins.get(key).cloned().unwrap_or(Origin::Default)
    }

    fn comment(&self, key: &str) -> String {
        match self.origin(key) {
            Origin::Flag(flag) => format!("from {flag}"),
            Origin::Env(var) => format!("from {var}"),
            Origin::File => format!("from {}", self.file_name),
            Origin::Default => "default".to_owned(),
        }
    }

    fn section(&mut self, name: &str) {
        let _ = writeln!(self.out, "\n[{name}]");
    }

    fn name(key: &str) -> &str {
        key.rsplit('.').next().unwrap_or(key)
    }

    fn set(&mut self, key: &str, value: String) {
        let comment = self.comment(key);
        let _ = writeln!(self.out, "{} = {value}  # {comment}", Self::name(key));
    }

    fn set_noted(&mut self, key: &str, value: String, note: &str) {
        let comment = self.comment(key);
        let _ = writeln!(
            self.out,
            "{} = {value}  # {comment}: {note}",
            Self::name(key)
        );
    }

    /// A setting without a default: written when set, else a comment saying so.
    fn opt(&mut self, key: &str, value: Option<String>) {
        match value {
            Some(v) => self.set(key, v),
            None => {
                let _ = writeln!(self.out, "# {} is not set", Self::name(key));
            }
        }
    }

    fn note(&mut self, text: &str) {
        let _ = writeln!(self.out, "# {text}");
    }
}

fn text(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

fn path(p: &std::path::Path) -> String {
    text(&p.display().to_string())
}

fn int(n: u64) -> String {
    n.to_string()
}

fn list<'s>(items: impl Iterator<Item = &'s str>) -> String {
    let items: Vec<String> = items.map(text).collect();
    format!("[{}]", items.join(", "))
}

fn enum_text<E: ValueEnum>(e: E) -> String {
    text(
        e.to_possible_value()
            .map(|v| v.get_name().to_owned())
            .unwrap_or_default()
            .as_str(),
    )
}

fn commit(c: super::CommitArg) -> crate::store::CommitMode {
    use crate::store::CommitMode;
    match c {
        super::CommitArg::Hard => CommitMode::Hard,
        super::CommitArg::Soft => CommitMode::Soft,
        super::CommitArg::None => CommitMode::None,
        super::CommitArg::Within(ms) => CommitMode::Within(ms),
    }
}
