//! The configuration file laid under the command line: every setting the file has and the user
//! did not give as a flag (nor, for the few that have one, as an environment variable) is written
//! into the parsed arguments, as if it had been typed; the rest of [`super::resolve`] then turns
//! the arguments into configuration as it always did.
//!
//! Precedence, per setting: a flag on the command line > its environment variable (`SOLR_URL`,
//! `SOLR_USER` and `SOLR_PASSWORD` for `auth-file`, `SOLR_DEDUP_TOKEN` for `token-file`) > the
//! file > the built-in default. Variables that only name default places (`STATE_DIRECTORY`,
//! `XDG_STATE_HOME`, `HOME`) stand below the file: `state-dir` in the file wins over them.
//!
//! Each decision is recorded with where the value came from ([`Origin`]), which `config show`
//! prints beside it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::given::Given;
use super::{
    CommitArg, DimensionList, IndexArgs, JobArgs, PreferArg, ReportArgs, RunArgs, SchemeArg,
    ScopeArg, ServeArgs, SignatureOptions, SolrArgs,
};
use crate::config::file::{FileConfig, PreferName, SchemeName, ScopeName};
use crate::config::Environment;

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A flag on the command line (`--prefer`).
    Flag(String),
    /// An environment variable (`SOLR_URL`).
    Env(&'static str),
    /// The configuration file.
    File,
    /// The built-in default (or, for a setting without one, not set).
    Default,
}

/// The file and the environment, laid under what the user gave.
pub(super) struct Layer<'a> {
    given: &'a Given,
    env: &'a Environment,
    file: &'a FileConfig,
    /// Where each setting came from, by `section.key`.
    pub origins: BTreeMap<String, Origin>,
}

/// The flag a file key stands for (`decide.prefer-https` → `--prefer-https`), and clap's id for it.
fn flag_and_id(key: &str) -> (String, String) {
    let name = key.rsplit('.').next().unwrap_or(key);
    let id = match name {
        "field" => "fields".to_owned(),
        other => other.replace('-', "_"),
    };
    (format!("--{name}"), id)
}

impl<'a> Layer<'a> {
    pub(super) fn new(given: &'a Given, env: &'a Environment, file: &'a FileConfig) -> Self {
        Layer {
            given,
            env,
            file,
            origins: BTreeMap::new(),
        }
    }

    /// `slot` keeps a value the user gave; else takes the file's, if any.
    fn take<T>(&mut self, key: &str, slot: &mut T, file: Option<T>) {
        self.take_or_env(key, slot, None, file);
    }

    /// Like [`Self::take`] for a setting an environment variable can also give (`env` names it
    /// when it is set): the variable beats the file, and the resolver reads it as before.
    fn take_or_env<T>(
        &mut self,
        key: &str,
        slot: &mut T,
        env: Option<&'static str>,
        file: Option<T>,
    ) {
        let (flag, id) = flag_and_id(key);
        let origin = if self.given.contains(&id) {
            Origin::Flag(flag)
        } else if let Some(var) = env {
            Origin::Env(var)
        } else if let Some(v) = file {
            *slot = v;
            Origin::File
        } else {
            Origin::Default
        };
        self.origins.insert(key.to_owned(), origin);
    }

    /// Where the documents are: `--input` or `--solr`, else `SOLR_URL`, else the file's `input` or
    /// `solr` (a source is one setting: a flag for either leaves both of the file's out).
    fn source(&mut self, input: Option<&mut Option<PathBuf>>, solr: &mut SolrArgs) {
        let f = &self.file.index;
        let file_input = if input.is_some() {
            f.input.clone()
        } else {
            None
        };
        let (input_origin, solr_origin) = if self.given.contains("input") {
            (Origin::Flag("--input".into()), Origin::Default)
        } else if self.given.contains("solr") {
            (Origin::Default, Origin::Flag("--solr".into()))
        } else if self.env.solr_url.is_some() {
            (Origin::Default, Origin::Env("SOLR_URL"))
        } else if let (Some(path), Some(slot)) = (file_input, input) {
            *slot = Some(path);
            (Origin::File, Origin::Default)
        } else if let Some(url) = &f.solr {
            solr.solr = Some(url.clone());
            (Origin::Default, Origin::File)
        } else {
            (Origin::Default, Origin::Default)
        };
        self.origins.insert("index.input".into(), input_origin);
        self.origins.insert("index.solr".into(), solr_origin);
    }

    /// `[solr]`, but `concurrency` (which only run, check and serve take).
    fn solr(&mut self, a: &mut SolrArgs) {
        let f = self.file.solr.clone();
        self.take("solr.timeout", &mut a.timeout, f.timeout);
        self.take("solr.retries", &mut a.retries, f.retries);
        self.take(
            "solr.max-response-bytes",
            &mut a.max_response_bytes,
            f.max_response_bytes,
        );
        let env = (self.env.solr_user.is_some() || self.env.solr_password.is_some())
            .then_some("SOLR_USER and SOLR_PASSWORD");
        self.take_or_env(
            "solr.auth-file",
            &mut a.auth_file,
            env,
            f.auth_file.map(Some),
        );
    }

    /// `--field` renames: the file's first, then the command line's, so that a flag renaming the
    /// same name wins.
    fn fields(&mut self, fields: &mut Vec<(String, String)>) {
        for name in self.file.index.field.keys() {
            let by_flag = fields.iter().any(|(n, _)| n == name);
            let origin = if by_flag {
                Origin::Flag("--field".into())
            } else {
                Origin::File
            };
            self.origins.insert(format!("index.field.{name}"), origin);
        }
        for (name, _) in fields.iter() {
            self.origins.insert(
                format!("index.field.{name}"),
                Origin::Flag("--field".into()),
            );
        }
        let mut all: Vec<(String, String)> = self
            .file
            .index
            .field
            .iter()
            .map(|(n, f)| (n.clone(), f.clone()))
            .collect();
        all.append(fields);
        *fields = all;
    }

    /// The index settings every command that reads documents shares.
    fn index(
        &mut self,
        input: &mut Option<PathBuf>,
        solr: &mut SolrArgs,
        filter: &mut Option<String>,
        batch_size: &mut u64,
        fields: &mut Vec<(String, String)>,
        max_line_bytes: &mut u64,
    ) {
        let f = self.file.index.clone();
        self.source(Some(input), solr);
        self.solr(solr);
        self.take("index.filter", filter, f.filter.map(Some));
        self.take("index.batch-size", batch_size, f.batch_size);
        self.take("index.max-line-bytes", max_line_bytes, f.max_line_bytes);
        self.fields(fields);
    }

    /// `urls learn`, `urls predict` and `chrome learn`.
    pub(super) fn index_args(&mut self, a: &mut IndexArgs) {
        self.index(
            &mut a.input,
            &mut a.solr,
            &mut a.filter,
            &mut a.batch_size,
            &mut a.fields,
            &mut a.max_line_bytes,
        );
    }

    /// `clean`: a core only, its filter, renames and batch size, and run's state folder.
    pub(super) fn clean(&mut self, a: &mut super::CleanArgs) {
        let f = self.file.index.clone();
        self.source(None, &mut a.solr);
        self.solr(&mut a.solr);
        self.take("index.filter", &mut a.filter, f.filter.map(Some));
        self.take("index.batch-size", &mut a.batch_size, f.batch_size);
        self.fields(&mut a.fields);
        let r = self.file.run.clone();
        self.take("run.state-dir", &mut a.state_dir, r.state_dir.map(Some));
        self.take("run.commit", &mut a.commit, r.commit.map(CommitArg::from));
    }

    /// `schema`: a core only, its renames and its dimensions.
    pub(super) fn schema(
        &mut self,
        solr: &mut SolrArgs,
        fields: &mut Vec<(String, String)>,
        dimensions: &mut DimensionList,
    ) {
        self.source(None, solr);
        self.solr(solr);
        self.fields(fields);
        let file = self.file.decide.dimensions.clone().map(DimensionList);
        self.take("decide.dimensions", dimensions, file);
    }

    /// The scheme and its profile tunables.
    pub(super) fn signature(&mut self, o: &mut SignatureOptions) {
        let d = self.file.decide.clone();
        self.scheme(&mut o.scheme);
        self.take(
            "decide.min-token-len",
            &mut o.min_token_len,
            d.min_token_len.map(Some),
        );
        self.take(
            "decide.quant-rate",
            &mut o.quant_rate,
            d.quant_rate.map(Some),
        );
    }

    /// `--scheme` alone (`urls learn`).
    pub(super) fn scheme(&mut self, scheme: &mut SchemeArg) {
        let file = self.file.decide.scheme.map(|s| match s {
            SchemeName::Yacy => SchemeArg::Yacy,
            SchemeName::Md5 => SchemeArg::Md5,
        });
        self.take("decide.scheme", scheme, file);
    }

    /// `--rules` of the `urls` commands that need one.
    pub(super) fn rules(&mut self, rules: &mut Option<PathBuf>) {
        let file = self.file.decide.rules.clone().map(Some);
        self.take("decide.rules", rules, file);
    }

    /// What `run`, `check` and serve decide with.
    pub(super) fn job(&mut self, a: &mut JobArgs) {
        let (d, s) = (self.file.decide.clone(), self.file.solr.clone());
        self.index(
            &mut a.input,
            &mut a.solr,
            &mut a.filter,
            &mut a.batch_size,
            &mut a.fields,
            &mut a.max_line_bytes,
        );
        self.take("solr.concurrency", &mut a.concurrency, s.concurrency);
        self.signature(&mut a.options);
        let scope = d.scope.map(|s| match s {
            ScopeName::Global => ScopeArg::Global,
            ScopeName::Host => ScopeArg::Host,
        });
        self.take("decide.scope", &mut a.scope, scope);
        let dimensions = d.dimensions.clone().map(|d| Some(DimensionList(d)));
        self.take("decide.dimensions", &mut a.dimensions, dimensions);
        self.take("decide.near-shingle", &mut a.near_shingle, d.near_shingle);
        self.take("decide.near-hashes", &mut a.near_hashes, d.near_hashes);
        self.take("decide.near-trials", &mut a.near_trials, d.near_trials);
        self.take("decide.near-agree", &mut a.near_agree, d.near_agree);
        self.take("decide.chrome", &mut a.chrome, d.chrome.clone().map(Some));
        self.take("decide.rules", &mut a.rules, d.rules.clone().map(Some));
        self.take("decide.prefer-https", &mut a.prefer_https, d.prefer_https);
        self.take("decide.prefer-www", &mut a.prefer_www, d.prefer_www);
        self.preference(a);
        let r = self.file.run.clone();
        self.take("run.memory", &mut a.memory, r.memory);
        self.take("run.temp-dir", &mut a.temp_dir, r.temp_dir.map(Some));
    }

    /// `prefer`, `compat` and `fuzzy-min-words`: the file's `compat = "yacy"` stands for
    /// `prefer = "yacy"` and `fuzzy-min-words = 0`, each of which a flag may override; `--compat`
    /// overrides both.
    fn preference(&mut self, a: &mut JobArgs) {
        let d = &self.file.decide;
        let compat = d.compat.is_some();
        let prefer = match (d.prefer, compat) {
            (Some(PreferName::Yacy), _) | (None, true) => Some(PreferArg::Yacy),
            (Some(PreferName::Canonical), _) => Some(PreferArg::Canonical),
            (None, false) => None,
        };
        let min_words = match (d.fuzzy_min_words, compat) {
            (Some(n), _) => u32::try_from(n).ok(),
            (None, true) => Some(0),
            (None, false) => None,
        };
        if self.given.contains("compat") {
            for key in ["decide.prefer", "decide.fuzzy-min-words", "decide.compat"] {
                self.origins
                    .insert(key.to_owned(), Origin::Flag("--compat".into()));
            }
            return;
        }
        self.origins.insert(
            "decide.compat".to_owned(),
            if compat {
                Origin::File
            } else {
                Origin::Default
            },
        );
        self.take("decide.prefer", &mut a.prefer, prefer.map(Some));
        self.take(
            "decide.fuzzy-min-words",
            &mut a.fuzzy_min_words,
            min_words.map(Some),
        );
    }

    /// `run` and serve: the job, and how it writes.
    pub(super) fn run(&mut self, a: &mut RunArgs) {
        self.job(&mut a.job);
        let r = self.file.run.clone();
        self.take("run.commit", &mut a.commit, r.commit.map(CommitArg::from));
    }

    /// `run`'s and `check`'s `--state-dir`.
    pub(super) fn report(&mut self, a: &mut ReportArgs) {
        let file = self.file.run.state_dir.clone().map(Some);
        self.take("run.state-dir", &mut a.state_dir, file);
    }

    /// `serve`: `run`'s settings and the server's.
    pub(super) fn serve(&mut self, a: &mut ServeArgs) {
        self.run(&mut a.run);
        let s = self.file.serve.clone();
        let state_dir = self.file.run.state_dir.clone().map(Some);
        self.take("run.state-dir", &mut a.state_dir, state_dir);
        self.take("serve.listen", &mut a.listen, s.listen);
        self.take("serve.every", &mut a.every, s.every.map(Some));
        self.take(
            "serve.after-quiet",
            &mut a.after_quiet,
            s.after_quiet.map(Some),
        );
        self.take(
            "serve.frame-ancestors",
            &mut a.frame_ancestors,
            s.frame_ancestors,
        );
        let env = self.env.token.is_some().then_some("SOLR_DEDUP_TOKEN");
        self.take_or_env(
            "serve.token-file",
            &mut a.token_file,
            env,
            s.token_file.map(Some),
        );
    }
}
