//! The parsed command line becomes plain configuration: every default resolved, every clap type left
//! behind here, so that [`crate::config`] and the layers under it never see the command line.

use std::time::Duration;

use super::given::Parsed;
use super::layer::Layer;
use super::show::render;
use super::{
    CheckArgs, ChromeCommand, Command, CompatArg, ConfigCommand, JobArgs, NearCommand,
    OutputFormatArg, PreferArg, ReportArgs, RunArgs, RunCommandArgs, SchemaAction, SchemaArgs,
    SchemeArg, ScopeArg, SignatureArgs, SignatureOptions, SolrArgs, UrlsCommand,
};
use std::path::{Path, PathBuf};

use crate::config::file::{Loaded, Whence};
use crate::config::{
    ChromeLearnConfig, CleanConfig, Config, ConfigError, Environment, IndexConfig, Input,
    JobConfig, Logging, NearTableConfig, SchemaConfig, ServeConfig, SignatureConfig, SolrConfig,
    Source, Token, UrlsCanonicalConfig, UrlsExportConfig, UrlsLearnConfig, UrlsPredictConfig,
};
use crate::engine::{EngineConfig, Order, Preference, Scope, DEFAULT_FUZZY_MIN_WORDS};
use crate::model::{Dimension, FieldNames};
use crate::signature::near::NearParams;
use crate::signature::{ProfileParams, Scheme, Signer};
use crate::solr_client::Credentials;
use crate::store::file::OutputFormat;
use crate::store::CredentialsError;

/// Resolves the parsed command line against the environment into the plain configuration the
/// commands run on: every default, every environment fact (the core's URL, credentials, serve's
/// token, the log's colours and filter, the state directory) settled here, once.
///
/// The configuration file (`--config`, else `SOLR_DEDUP_CONFIG`, else the default path) is read
/// here, once, and laid under the flags the user gave (`cli/layer.rs`): a flag beats its
/// environment variable, which beats the file, which beats the built-in default.
pub fn resolve(parsed: Parsed, env: &Environment) -> Result<Config, ConfigError> {
    let Parsed { cli, given } = parsed;
    // What the command line's definitions alone make: no configuration file needed (or read).
    match &cli.command {
        Command::Completions(args) => return Ok(Config::Show(super::completions(args.shell))),
        Command::Man => return Ok(Config::Show(super::man_page())),
        _ => {}
    }
    let loaded = load(cli.config.as_deref(), env)?;
    let mut layer = Layer::new(&given, env, &loaded.config);
    let r = Resolver { env };
    Ok(match cli.command {
        Command::Run(mut args) => {
            layer.run(&mut args.run);
            layer.report(&mut args.report);
            Config::Job(Box::new(r.run_command(args)?))
        }
        Command::Check(mut args) => {
            layer.job(&mut args.job);
            layer.report(&mut args.report);
            Config::Job(Box::new(r.check(args)?))
        }
        Command::Schema(mut args) => {
            layer.schema(&mut args.solr, &mut args.fields, &mut args.dimensions);
            Config::Schema(Box::new(r.schema(args)?))
        }
        Command::Clean(mut args) => {
            layer.clean(&mut args);
            Config::Clean(Box::new(CleanConfig {
                index: r.index(&None, &args.solr, 2, args.filter, 64 << 20)?,
                fields: field_names(&args.fields),
                dry_run: args.dry_run,
                keep_signatures: args.keep_signatures,
                state_dir: args.state_dir,
                batch_size: usize::try_from(args.batch_size).unwrap_or(1000),
                commit: args.commit.into(),
                allow_lossy: args.allow_lossy_atomic_updates,
                report: args.report.map(Input::from_arg),
                quiet: args.quiet,
                log: env.logging(args.verbose),
            }))
        }
        Command::Signature(mut args) => {
            layer.signature(&mut args.options);
            Config::Signature(SignatureConfig::from(args))
        }
        Command::Completions(_) | Command::Man => unreachable!("answered above"),
        Command::Config(ConfigCommand::Show(mut args)) => {
            layer.serve(&mut args.serve);
            Config::Show(render(&args.serve, env, &layer.origins, &loaded))
        }
        Command::Near(NearCommand::Table(args)) => Config::NearTable(NearTableConfig {
            hashes: args.hashes.iter().map(|&h| h as usize).collect(),
            trials: args.trials as usize,
            agree: args.agree as usize,
            overlaps: args.overlap,
        }),
        Command::Chrome(ChromeCommand::Learn(mut args)) => {
            layer.index_args(&mut args.index);
            let report = report_beside(args.report.take(), &args.out)?;
            Config::ChromeLearn(Box::new(ChromeLearnConfig {
                index: r.index_of(&args.index)?,
                out: Input::from_arg(args.out),
                sample: usize::try_from(args.sample).unwrap_or(200),
                share: args.share,
                min_pages: usize::try_from(args.min_pages).unwrap_or(50),
                shingle: usize::try_from(args.near_shingle).unwrap_or(2),
                fields: field_names(&args.index.fields),
                batch_size: usize::try_from(args.index.batch_size).unwrap_or(1000),
                report,
                quiet: args.quiet,
                log: env.logging(args.verbose),
            }))
        }
        Command::Urls(UrlsCommand::Learn(mut args)) => {
            layer.index_args(&mut args.index);
            layer.scheme(&mut args.scheme);
            Config::UrlsLearn(Box::new(UrlsLearnConfig {
                index: r.index_of(&args.index)?,
                report: report_beside(args.report.clone(), &args.out)?,
                out: Input::from_arg(args.out),
                min_estimate: args.min_estimate,
                near: args.content == super::ContentArg::Near,
                signer: Signer::new(match args.scheme {
                    SchemeArg::Yacy => Scheme::Yacy,
                    SchemeArg::Md5 => Scheme::Md5,
                }),
                fields: field_names(&args.index.fields),
                batch_size: usize::try_from(args.index.batch_size).unwrap_or(1000),
                quiet: args.quiet,
                log: env.logging(args.verbose),
            }))
        }
        Command::Urls(UrlsCommand::Predict(mut args)) => {
            layer.index_args(&mut args.index);
            layer.rules(&mut args.rules);
            Config::UrlsPredict(Box::new(UrlsPredictConfig {
                rules: args.rules.ok_or(ConfigError::NoRules)?,
                index: r.index_of(&args.index)?,
                urls: stdin_dash(args.urls),
                fields: field_names(&args.index.fields),
                batch_size: usize::try_from(args.index.batch_size).unwrap_or(1000),
                // The answers are standard output's: the report goes to a file.
                report: report_beside(args.report, std::path::Path::new("-"))?,
                quiet: args.quiet,
                log: env.logging(args.verbose),
            }))
        }
        Command::Urls(UrlsCommand::Canonical(mut args)) => {
            layer.rules(&mut args.rules);
            Config::UrlsCanonical(UrlsCanonicalConfig {
                rules: args.rules.ok_or(ConfigError::NoRules)?,
                urls: stdin_dash(args.urls),
            })
        }
        Command::Serve(mut args) => {
            layer.serve(&mut args);
            let log = env.logging(args.run.job.verbose);
            let state_dir = args.state_dir.unwrap_or_else(|| env.default_state_dir());
            let token = r.token(args.token_file.as_deref())?;
            let rules = args.run.job.rules.clone();
            let mut job = r.run(args.run)?;
            job.state_dir = Some(state_dir.clone());
            Config::Serve(Box::new(ServeConfig {
                rules,
                job,
                listen: args.listen,
                token,
                state_dir,
                every: args.every,
                after_quiet: args.after_quiet,
                frame_ancestors: args.frame_ancestors,
                log,
            }))
        }
        Command::Urls(UrlsCommand::Export(mut args)) => {
            layer.rules(&mut args.rules);
            Config::UrlsExport(UrlsExportConfig {
                rules: args.rules.ok_or(ConfigError::NoRules)?,
                min_estimate: args.min_estimate,
                out: Input::from_arg(args.out),
            })
        }
    })
}

/// The configuration file: `--config`, else `SOLR_DEDUP_CONFIG` (either must be there), else the
/// default path (which need not be).
fn load(flag: Option<&Path>, env: &Environment) -> Result<Loaded, ConfigError> {
    match (flag, &env.config_file) {
        (Some(path), _) => Loaded::read(path, Whence::Flag),
        (None, Some(path)) => Loaded::read(Path::new(path), Whence::Env),
        (None, None) => match env.default_config_file() {
            Some(path) => Loaded::read(&path, Whence::Default),
            None => Ok(Loaded::default()),
        },
    }
}

/// The environment the command line is resolved against.
struct Resolver<'e> {
    env: &'e Environment,
}

impl Resolver<'_> {
    /// `--solr`, else `SOLR_URL`; `None` when neither is set. Credentials come from `--auth-file`,
    /// else `SOLR_USER` and `SOLR_PASSWORD` (both or neither), else the URL's user info.
    fn solr(&self, args: &SolrArgs, concurrency: u64) -> Result<Option<SolrConfig>, ConfigError> {
        // (Infallible today: credentials that cannot be resolved travel as their error.)
        let Some(url) = args.solr.clone().or_else(|| self.env.solr_url.clone()) else {
            return Ok(None);
        };
        Ok(Some(SolrConfig {
            url,
            // Met when the core is opened, so that a run's report records it.
            credentials: self
                .credentials(args.auth_file.as_deref())
                .map_err(|e| CredentialsError(format!("{:#}", anyhow::Error::new(e)))),
            timeout: Duration::from_secs(args.timeout),
            retries: usize::try_from(args.retries).unwrap_or(5),
            concurrency: usize::try_from(concurrency).unwrap_or(4),
            max_response_bytes: usize::try_from(args.max_response_bytes).unwrap_or(usize::MAX),
        }))
    }

    fn credentials(&self, auth_file: Option<&Path>) -> Result<Option<Credentials>, ConfigError> {
        if let Some(path) = auth_file {
            let text = std::fs::read_to_string(path).map_err(|source| {
                ConfigError::AuthFileUnreadable {
                    path: path.to_owned(),
                    source,
                }
            })?;
            return Credentials::parse_line(&text).map(Some).map_err(|problem| {
                ConfigError::AuthFile {
                    path: path.to_owned(),
                    problem,
                }
            });
        }
        match (&self.env.solr_user, &self.env.solr_password) {
            (Some(user), Some(password)) => Ok(Some(Credentials::new(user, password))),
            (Some(_), None) => Err(ConfigError::HalfCredentials("SOLR_USER", "SOLR_PASSWORD")),
            (None, Some(_)) => Err(ConfigError::HalfCredentials("SOLR_PASSWORD", "SOLR_USER")),
            (None, None) => Ok(None),
        }
    }

    /// serve's bearer token: the first line of `--token-file`, else `SOLR_DEDUP_TOKEN`.
    fn token(&self, file: Option<&Path>) -> Result<Option<Token>, ConfigError> {
        let text = match file {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|source| {
                    ConfigError::TokenFileUnreadable {
                        path: path.to_owned(),
                        source,
                    }
                })?;
                Some(text.lines().next().unwrap_or("").to_owned())
            }
            None => self.env.token.clone(),
        };
        text.map(|t| Token::new(&t)).transpose()
    }

    /// `--input`, else `--solr` / `SOLR_URL`, with `--filter` and `--max-line-bytes`.
    fn index(
        &self,
        input: &Option<PathBuf>,
        solr: &SolrArgs,
        concurrency: u64,
        filter: Option<String>,
        max_line_bytes: u64,
    ) -> Result<IndexConfig, ConfigError> {
        let source = match input {
            Some(path) => Source::File(path.clone()),
            None => match self.solr(solr, concurrency)? {
                Some(solr) => Source::Solr(solr),
                None => Source::Missing,
            },
        };
        Ok(IndexConfig {
            source,
            filter,
            max_line_bytes: usize::try_from(max_line_bytes).unwrap_or(usize::MAX),
        })
    }

    /// The index of `urls learn|predict` and `chrome learn` (`IndexArgs`).
    fn index_of(&self, a: &super::IndexArgs) -> Result<IndexConfig, ConfigError> {
        self.index(&a.input, &a.solr, 2, a.filter.clone(), a.max_line_bytes)
    }

    fn schema(&self, args: SchemaArgs) -> Result<SchemaConfig, ConfigError> {
        let mut fields = field_names(&args.fields);
        let profile_auto = args.profile.apply(&mut fields);
        Ok(SchemaConfig {
            apply: args.action == SchemaAction::Apply,
            dry_run: args.dry_run,
            json: args.json,
            report: args.report.map(Input::from_arg),
            quiet: args.quiet,
            solr: self.solr(&args.solr, 1)?,
            engine: EngineConfig {
                fields,
                dimensions: args.dimensions.0,
                profile_auto,
                ..EngineConfig::default()
            },
            log: self.env.logging(args.verbose),
        })
    }

    /// `run`'s options (serve takes the same).
    fn run(&self, args: RunArgs) -> Result<JobConfig, ConfigError> {
        let mut c = self.job(args.job, false)?;
        c.output = args.output;
        c.output_format = match args.output_format {
            OutputFormatArg::Updates => OutputFormat::Updates,
            OutputFormatArg::Docs => OutputFormat::Docs,
        };
        c.engine.full = args.full;
        c.engine.dry_run = args.dry_run;
        c.engine.write_fuzzy_text &= !args.no_fuzzy_text;
        c.engine.commit = args.commit.into();
        c.allow_lossy = args.allow_lossy_atomic_updates;
        c.reconfigure = args.reconfigure;
        Ok(c)
    }

    /// `solr-dedup run`: its options and its report.
    fn run_command(&self, args: RunCommandArgs) -> Result<JobConfig, ConfigError> {
        Ok(self.with_report(self.run(args.run)?, args.report))
    }

    /// `solr-dedup check`.
    fn check(&self, args: CheckArgs) -> Result<JobConfig, ConfigError> {
        let mut c = self.job(args.job, true)?;
        c.engine.full = args.full;
        Ok(self.with_report(c, args.report))
    }

    fn with_report(&self, mut c: JobConfig, args: ReportArgs) -> JobConfig {
        c.report = args.report.map(Input::from_arg);
        c.quiet = args.quiet;
        c.state_dir = Some(
            args.state_dir
                .unwrap_or_else(|| self.env.default_state_dir()),
        );
        c
    }

    fn job(&self, args: JobArgs, check: bool) -> Result<JobConfig, ConfigError> {
        let index = self.index(
            &args.input,
            &args.solr,
            args.concurrency,
            args.filter.clone(),
            args.max_line_bytes,
        )?;
        let log = self.env.logging(args.verbose);
        Ok(job(args, index, check, log))
    }
}

/// URL arguments: `-` alone (or none) means standard input, given as an empty list.
/// `--report` of a command whose `--out` may be standard output too: refused when both are.
fn report_beside(report: Option<PathBuf>, out: &Path) -> Result<Option<Input>, ConfigError> {
    let report = report.map(Input::from_arg);
    if report == Some(Input::Stdin) && out.as_os_str() == "-" {
        return Err(ConfigError::BothOnStdout);
    }
    Ok(report)
}

fn stdin_dash(urls: Vec<String>) -> Vec<String> {
    if urls.len() == 1 && urls[0] == "-" {
        Vec::new()
    } else {
        urls
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

fn job(args: JobArgs, index: IndexConfig, check: bool, log: Logging) -> JobConfig {
    let mut fields = field_names(&args.fields);
    let profile_auto = args.profile.apply(&mut fields);
    let signer = signer(&args.options);
    JobConfig {
        check,
        index,
        allow_lossy: false,
        reconfigure: false,
        changes: !args.no_change_state,
        change_window_ms: args.change_window,
        near_optional: args.dimensions.is_none(),
        chrome: args.chrome.clone(),
        rules: args.rules.clone(),
        output: None,
        output_format: OutputFormat::Updates,
        report: None,
        state_dir: None,
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
            profile_auto,
            ..EngineConfig::default()
        },
        log,
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

    use super::*;
    use crate::store::CommitMode;

    fn config(args: &[&str]) -> Config {
        let parsed =
            super::super::parse_from(std::iter::once("solr-dedup").chain(args.iter().copied()))
                .expect("parses");
        resolve(parsed, &Environment::default()).expect("resolves")
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
        assert_eq!(c.index.source, Source::File(PathBuf::from("d.jsonl")));
        assert_eq!(c.index.filter.as_deref(), Some("a:1 b:2"));
        let c = job(&[
            "run",
            "--solr",
            "http://127.0.0.1:8983/solr/c",
            "--commit",
            "soft",
            "--retries",
            "2",
        ]);
        let Source::Solr(s) = c.index.source else {
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
