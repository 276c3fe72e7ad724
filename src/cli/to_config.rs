//! The parsed command line becomes plain configuration: every default resolved, every clap type left
//! behind here, so that [`crate::config`] and the layers under it never see the command line.

use std::time::Duration;

use super::{
    CheckArgs, ChromeCommand, Cli, Command, CommitArg, CompatArg, JobArgs, NearCommand,
    OutputFormatArg, PreferArg, ReportArgs, RunArgs, RunCommandArgs, SchemaAction, SchemaArgs,
    SchemeArg, ScopeArg, SignatureArgs, SignatureOptions, SolrArgs, UrlsCommand,
};
use crate::config::ServeConfig;
use crate::config::{
    ChromeLearnConfig, Config, Input, JobConfig, NearTableConfig, SchemaConfig, SignatureConfig,
    SolrConfig, Source, UrlsCanonicalConfig, UrlsExportConfig, UrlsLearnConfig, UrlsPredictConfig,
};
use crate::engine::{EngineConfig, Order, Preference, Scope, DEFAULT_FUZZY_MIN_WORDS};
use crate::model::{Dimension, FieldNames};
use crate::signature::near::NearParams;
use crate::signature::{ProfileParams, Scheme, Signer};
use crate::store::file::OutputFormat;
use crate::store::CommitMode;

impl From<Cli> for Config {
    fn from(cli: Cli) -> Self {
        match cli.command {
            Command::Run(args) => Config::Job(Box::new(JobConfig::from(args))),
            Command::Check(args) => Config::Job(Box::new(JobConfig::from(args))),
            Command::Schema(args) => Config::Schema(Box::new(SchemaConfig::from(args))),
            Command::Signature(args) => Config::Signature(SignatureConfig::from(args)),
            Command::Near(NearCommand::Table(args)) => Config::NearTable(NearTableConfig {
                hashes: args.hashes.iter().map(|&h| h as usize).collect(),
                trials: args.trials as usize,
                agree: args.agree as usize,
                overlaps: args.overlap,
            }),
            Command::Chrome(ChromeCommand::Learn(args)) => {
                Config::ChromeLearn(Box::new(ChromeLearnConfig {
                    source: source(&args.input, &args.solr, 2),
                    filter: args.filter,
                    out: Input::from_arg(args.out),
                    sample: usize::try_from(args.sample).unwrap_or(200),
                    share: args.share,
                    min_pages: usize::try_from(args.min_pages).unwrap_or(50),
                    shingle: usize::try_from(args.near_shingle).unwrap_or(2),
                    fields: field_names(&args.fields),
                    max_line_bytes: usize::try_from(args.max_line_bytes).unwrap_or(usize::MAX),
                    batch_size: usize::try_from(args.batch_size).unwrap_or(1000),
                    verbosity: args.verbose,
                }))
            }
            Command::Urls(UrlsCommand::Learn(args)) => {
                Config::UrlsLearn(Box::new(UrlsLearnConfig {
                    source: source(&args.index.input, &args.index.solr, 2),
                    filter: args.index.filter,
                    out: Input::from_arg(args.out),
                    min_estimate: args.min_estimate,
                    near: args.content == super::ContentArg::Near,
                    signer: Signer::new(match args.scheme {
                        SchemeArg::Yacy => Scheme::Yacy,
                        SchemeArg::Md5 => Scheme::Md5,
                    }),
                    fields: field_names(&args.index.fields),
                    max_line_bytes: usize::try_from(args.index.max_line_bytes)
                        .unwrap_or(usize::MAX),
                    batch_size: usize::try_from(args.index.batch_size).unwrap_or(1000),
                    quiet: args.quiet,
                    verbosity: args.verbose,
                }))
            }
            Command::Urls(UrlsCommand::Predict(args)) => {
                Config::UrlsPredict(Box::new(UrlsPredictConfig {
                    rules: args.rules,
                    source: source(&args.index.input, &args.index.solr, 2),
                    filter: args.index.filter,
                    urls: stdin_dash(args.urls),
                    fields: field_names(&args.index.fields),
                    max_line_bytes: usize::try_from(args.index.max_line_bytes)
                        .unwrap_or(usize::MAX),
                    batch_size: usize::try_from(args.index.batch_size).unwrap_or(1000),
                    quiet: args.quiet,
                    verbosity: args.verbose,
                }))
            }
            Command::Urls(UrlsCommand::Canonical(args)) => {
                Config::UrlsCanonical(UrlsCanonicalConfig {
                    rules: args.rules,
                    urls: stdin_dash(args.urls),
                })
            }
            Command::Serve(args) => {
                let verbosity = args.run.job.verbose;
                let state_dir = args.state_dir.unwrap_or_else(default_state_dir);
                Config::Serve(Box::new(ServeConfig {
                    rules: args.run.job.rules.clone(),
                    job: JobConfig {
                        state_dir: Some(state_dir.clone()),
                        ..JobConfig::from(args.run)
                    },
                    listen: args.listen,
                    token_file: args.token_file,
                    state_dir,
                    every: args.every,
                    after_quiet: args.after_quiet,
                    frame_ancestors: args.frame_ancestors,
                    verbosity,
                }))
            }
            Command::Urls(UrlsCommand::Export(args)) => Config::UrlsExport(UrlsExportConfig {
                rules: args.rules,
                min_estimate: args.min_estimate,
                out: Input::from_arg(args.out),
            }),
        }
    }
}

/// `$STATE_DIRECTORY` (systemd's `StateDirectory=`), else `$XDG_STATE_HOME/solr-dedup`, else
/// `~/.local/state/solr-dedup`, else `.solr-dedup-state` in the working directory.
fn default_state_dir() -> std::path::PathBuf {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(d) = var("STATE_DIRECTORY") {
        // systemd may list several, separated by colons: the first is ours.
        let first = d
            .to_string_lossy()
            .split(':')
            .next()
            .unwrap_or("")
            .to_owned();
        return first.into();
    }
    if let Some(d) = var("XDG_STATE_HOME") {
        return std::path::PathBuf::from(d).join("solr-dedup");
    }
    if let Some(h) = var("HOME") {
        return std::path::PathBuf::from(h).join(".local/state/solr-dedup");
    }
    ".solr-dedup-state".into()
}

/// URL arguments: `-` alone (or none) means standard input, given as an empty list.
fn stdin_dash(urls: Vec<String>) -> Vec<String> {
    if urls.len() == 1 && urls[0] == "-" {
        Vec::new()
    } else {
        urls
    }
}

impl SolrConfig {
    /// `--solr`, else `SOLR_URL`; `None` when neither is set.
    pub(crate) fn from_args(args: &SolrArgs, concurrency: u64) -> Option<SolrConfig> {
        let url = args.solr.clone().or_else(|| {
            std::env::var("SOLR_URL")
                .ok()
                .filter(|u| !u.trim().is_empty())
        })?;
        Some(SolrConfig {
            url,
            auth_file: args.auth_file.clone(),
            timeout: Duration::from_secs(args.timeout),
            retries: usize::try_from(args.retries).unwrap_or(5),
            concurrency: usize::try_from(concurrency).unwrap_or(4),
            max_response_bytes: usize::try_from(args.max_response_bytes).unwrap_or(usize::MAX),
        })
    }
}

/// The field names after `--field NAME=FIELD` renames.
fn field_names(renames: &[(String, String)]) -> FieldNames {
    let mut fields = FieldNames::default();
    for (name, field) in renames {
        fields.rename(name, field);
    }
    fields
}

/// `--input`, else `--solr` / `SOLR_URL`.
fn source(input: &Option<std::path::PathBuf>, solr: &SolrArgs, concurrency: u64) -> Source {
    match (input, SolrConfig::from_args(solr, concurrency)) {
        (Some(path), _) => Source::File(path.clone()),
        (None, Some(solr)) => Source::Solr(solr),
        (None, None) => Source::Missing,
    }
}

impl From<SchemaArgs> for SchemaConfig {
    fn from(args: SchemaArgs) -> Self {
        let fields = field_names(&args.fields);
        SchemaConfig {
            apply: args.action == SchemaAction::Apply,
            dry_run: args.dry_run,
            solr: SolrConfig::from_args(&args.solr, 1),
            engine: EngineConfig {
                fields,
                dimensions: args.dimensions.0,
                ..EngineConfig::default()
            },
            verbosity: args.verbose,
        }
    }
}

impl From<RunArgs> for JobConfig {
    fn from(args: RunArgs) -> Self {
        let mut c = job(args.job, false);
        c.output = args.output;
        c.output_format = match args.output_format {
            OutputFormatArg::Updates => OutputFormat::Updates,
            OutputFormatArg::Docs => OutputFormat::Docs,
        };
        c.engine.full = args.full;
        c.engine.dry_run = args.dry_run;
        c.engine.write_fuzzy_text &= !args.no_fuzzy_text;
        c.engine.commit = match args.commit {
            CommitArg::Hard => CommitMode::Hard,
            CommitArg::Soft => CommitMode::Soft,
            CommitArg::None => CommitMode::None,
            CommitArg::Within(ms) => CommitMode::Within(ms),
        };
        c.allow_lossy = args.allow_lossy_atomic_updates;
        c
    }
}

impl From<CheckArgs> for JobConfig {
    fn from(args: CheckArgs) -> Self {
        let mut c = job(args.job, true);
        c.engine.full = args.full;
        c.with_report(args.report)
    }
}

impl From<RunCommandArgs> for JobConfig {
    fn from(args: RunCommandArgs) -> Self {
        JobConfig::from(args.run).with_report(args.report)
    }
}

impl JobConfig {
    fn with_report(mut self, args: ReportArgs) -> Self {
        self.report = args.report.map(Input::from_arg);
        self.quiet = args.quiet;
        self.state_dir = Some(args.state_dir.unwrap_or_else(default_state_dir));
        self
    }
}

fn job(args: JobArgs, check: bool) -> JobConfig {
    let fields = field_names(&args.fields);
    let signer = signer(&args.options);
    let source = source(&args.input, &args.solr, args.concurrency);
    JobConfig {
        check,
        source,
        filter: args.filter.clone(),
        allow_lossy: false,
        near_optional: args.dimensions.is_none(),
        chrome: args.chrome.clone(),
        rules: args.rules.clone(),
        output: None,
        output_format: OutputFormat::Updates,
        report: None,
        state_dir: None,
        max_line_bytes: usize::try_from(args.max_line_bytes).unwrap_or(usize::MAX),
        engine: EngineConfig {
            fields,
            write_fuzzy_text: signer.scheme == Scheme::Yacy,
            signer,
            dimensions: args
                .dimensions
                .as_ref()
                .map_or_else(|| Dimension::ALL.to_vec(), |d| d.0.clone()),
            near: NearParams {
                shingle: usize::try_from(args.near_shingle).unwrap_or(2),
                hashes: usize::try_from(args.near_hashes).unwrap_or(14),
                trials: usize::try_from(args.near_trials).unwrap_or(6),
                agree: usize::try_from(args.near_agree).unwrap_or(2),
            },
            scope: match args.scope {
                ScopeArg::Global => Scope::Global,
                ScopeArg::Host => Scope::Host,
            },
            preference: Preference {
                prefer_https: args.prefer_https,
                prefer_www: args.prefer_www,
                order: match (args.prefer, args.compat) {
                    (Some(PreferArg::Yacy), _) | (_, Some(CompatArg::Yacy)) => Order::Yacy,
                    (Some(PreferArg::Canonical) | None, None) => Order::Canonical,
                },
            },
            fuzzy_min_words: match (args.fuzzy_min_words, args.compat) {
                (Some(n), _) => n,
                (None, Some(CompatArg::Yacy)) => 0,
                (None, None) => DEFAULT_FUZZY_MIN_WORDS,
            },
            batch_size: usize::try_from(args.batch_size).unwrap_or(1000),
            memory: args.memory,
            temp_dir: args.temp_dir.clone(),
            ..EngineConfig::default()
        },
        verbosity: args.verbose,
        quiet: false,
    }
}

impl From<SignatureArgs> for SignatureConfig {
    fn from(args: SignatureArgs) -> Self {
        SignatureConfig {
            signer: signer(&args.options),
            input: Input::from_arg(args.input),
            batch: args.batch,
        }
    }
}

/// The signer the options ask for: each tunable left out takes the scheme's own default, so
/// `--scheme md5` alone means Solr's 2 / 0.01, not YaCy's 3 / 0.5.
pub fn signer(options: &SignatureOptions) -> Signer {
    let scheme = match options.scheme {
        SchemeArg::Yacy => Scheme::Yacy,
        SchemeArg::Md5 => Scheme::Md5,
    };
    let defaults = ProfileParams::defaults(scheme);
    Signer {
        scheme,
        params: ProfileParams {
            min_token_len: options.min_token_len.unwrap_or(defaults.min_token_len),
            quant_rate: options.quant_rate.unwrap_or(defaults.quant_rate),
        },
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use clap::Parser;

    use super::*;

    fn config(args: &[&str]) -> Config {
        let cli = Cli::try_parse_from(std::iter::once("solr-dedup").chain(args.iter().copied()))
            .expect("parses");
        Config::from(cli)
    }

    fn sig(args: &[&str]) -> SignatureConfig {
        match config(args) {
            Config::Signature(c) => c,
            other => panic!("not signature: {other:?}"),
        }
    }

    fn job(args: &[&str]) -> JobConfig {
        match config(args) {
            Config::Job(c) => *c,
            other => panic!("not a job: {other:?}"),
        }
    }

    #[test]
    fn every_renamable_field_renames() {
        for name in crate::model::YACY_NAMES {
            let c = job(&["run", "--input", "x", "--field", &format!("{name}=renamed")]);
            assert_ne!(c.engine.fields, FieldNames::default(), "{name}");
        }
    }

    #[test]
    fn md5_writes_no_fuzzy_text_and_check_is_read_only() {
        let c = job(&["run", "--input", "x", "--scheme", "md5"]);
        assert!(!c.engine.write_fuzzy_text);
        assert!(!c.check);
        let c = job(&["check", "--input", "x", "--full"]);
        assert!(c.check && c.engine.full);
    }

    #[test]
    fn defaults_follow_the_scheme() {
        let c = sig(&["signature", "--scheme", "md5", "x"]);
        assert_eq!(c.signer, Signer::new(Scheme::Md5));
        assert_eq!(c.signer.params.min_token_len, 2);
        let c = sig(&["signature", "x"]);
        assert_eq!(c.signer, Signer::new(Scheme::Yacy));
        assert_eq!(c.signer.params.quant_rate, 0.5);
    }

    #[test]
    fn given_tunables_override_the_scheme_defaults() {
        let c = sig(&["signature", "--scheme", "md5", "--quant-rate", "0.2", "x"]);
        assert_eq!(c.signer.params.quant_rate, 0.2);
        assert_eq!(c.signer.params.min_token_len, 2);
    }

    #[test]
    fn the_source_is_the_file_or_the_core() {
        let c = job(&["run", "--input", "d.jsonl", "--filter", "a:1 b:2"]);
        assert_eq!(c.source, Source::File(PathBuf::from("d.jsonl")));
        assert_eq!(c.filter.as_deref(), Some("a:1 b:2"));
        let c = job(&[
            "run",
            "--solr",
            "http://127.0.0.1:8983/solr/c",
            "--commit",
            "soft",
            "--retries",
            "2",
        ]);
        let Source::Solr(s) = c.source else {
            panic!("not solr")
        };
        assert_eq!(s.url, "http://127.0.0.1:8983/solr/c");
        assert_eq!((s.retries, s.concurrency), (2, 4));
        assert_eq!(c.engine.commit, CommitMode::Soft);
    }

    #[test]
    fn schema_fields_follow_renames_and_dimensions() {
        let Config::Schema(c) = config(&[
            "schema",
            "check",
            "--solr",
            "http://x/solr/c",
            "--field",
            "sku=url_s",
            "--dimensions",
            "www",
        ]) else {
            panic!("not schema")
        };
        assert!(!c.apply);
        assert_eq!(c.engine.fields.url, "url_s");
        assert_eq!(c.engine.dimensions, vec![Dimension::Www]);
    }

    #[test]
    fn a_dash_is_stdin() {
        let c = sig(&["signature", "-"]);
        assert_eq!(c.input, Input::Stdin);
        let c = sig(&["signature", "./-"]);
        assert_eq!(c.input, Input::File(PathBuf::from("./-")));
    }
}
