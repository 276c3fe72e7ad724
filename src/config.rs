//! Plain configuration, converted from the parsed command line: what each command needs to know, with
//! every default resolved, and no clap types past this point.
//!
//! Keeping the commands off clap means they can be driven from tests (or a later config file) by
//! building these structs directly.

use std::path::PathBuf;

use crate::cli::{
    CheckArgs, Cli, Command, JobArgs, OutputFormatArg, RunArgs, SchemeArg, ScopeArg, SignatureArgs,
    SignatureOptions,
};
use crate::engine::{EngineConfig, FieldNames, Preference, Scope};
use crate::signature::{ProfileParams, Scheme, Signer};
use crate::store::file::OutputFormat;
use crate::store::Filter;

/// What to do: one variant per subcommand.
#[derive(Debug, Clone)]
pub enum Config {
    /// `solr-dedup run` and `solr-dedup check` (boxed: it is much larger than the others).
    Job(Box<JobConfig>),
    /// `solr-dedup signature`.
    Signature(SignatureConfig),
}

impl From<Cli> for Config {
    fn from(cli: Cli) -> Self {
        match cli.command {
            Command::Run(args) => Config::Job(Box::new(JobConfig::from(args))),
            Command::Check(args) => Config::Job(Box::new(JobConfig::from(args))),
            Command::Signature(args) => Config::Signature(SignatureConfig::from(args)),
        }
    }
}

/// `solr-dedup run` or `solr-dedup check` on a file.
#[derive(Debug, Clone)]
pub struct JobConfig {
    /// True for `check`: read only, exit 1 when anything is out of date.
    pub check: bool,
    /// The documents (file mode).
    pub input: PathBuf,
    /// Where the updates go; `None` is standard output.
    pub output: Option<PathBuf>,
    /// Updates, or annotated documents.
    pub output_format: OutputFormat,
    /// Where the JSON report goes, if anywhere.
    pub report: Option<Input>,
    /// Everything the engine decides with.
    pub engine: EngineConfig,
    /// 0 quiet logs, 1 info, 2 debug.
    pub verbosity: u8,
    /// No summary on standard error.
    pub quiet: bool,
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
        c
    }
}

impl From<CheckArgs> for JobConfig {
    fn from(args: CheckArgs) -> Self {
        let mut c = job(args.job, true);
        c.engine.full = args.full;
        c
    }
}

fn job(args: JobArgs, check: bool) -> JobConfig {
    let mut fields = FieldNames::default();
    for (name, field) in &args.fields {
        rename(&mut fields, name, field.clone());
    }
    let signer = signer(&args.options);
    JobConfig {
        check,
        input: args.input,
        output: None,
        output_format: OutputFormat::Updates,
        report: args.report.map(Input::from_arg),
        engine: EngineConfig {
            fields,
            write_fuzzy_text: signer.scheme == Scheme::Yacy,
            signer,
            dimensions: args.dimensions.0,
            scope: match args.scope {
                ScopeArg::Global => Scope::Global,
                ScopeArg::Host => Scope::Host,
            },
            preference: Preference {
                prefer_https: args.prefer_https,
                prefer_www: args.prefer_www,
            },
            filter: args.filter.unwrap_or(Filter::All),
            batch_size: usize::try_from(args.batch_size).unwrap_or(1000),
            progress: !args.quiet,
            ..EngineConfig::default()
        },
        verbosity: args.verbose,
        quiet: args.quiet,
    }
}

/// Applies `--field NAME=FIELD`; the names were checked against [`crate::cli::FIELD_NAMES`].
fn rename(f: &mut FieldNames, name: &str, field: String) {
    let slot = match name {
        "id" => &mut f.id,
        "sku" => &mut f.url,
        "text_t" => &mut f.text,
        "title" => &mut f.title,
        "description_txt" => &mut f.description,
        "_version_" => &mut f.version,
        "exact_signature_l" => &mut f.exact_signature,
        "fuzzy_signature_l" => &mut f.fuzzy_signature,
        "fuzzy_signature_text_t" => &mut f.fuzzy_signature_text,
        "title_exact_signature_l" => &mut f.title_signature,
        "description_exact_signature_l" => &mut f.description_signature,
        "exact_signature_unique_b" => &mut f.unique[0],
        "fuzzy_signature_unique_b" => &mut f.unique[1],
        "title_unique_b" => &mut f.unique[2],
        "description_unique_b" => &mut f.unique[3],
        "www_unique_b" => &mut f.unique[4],
        "http_unique_b" => &mut f.unique[5],
        "exact_signature_copycount_i" => &mut f.exact_count,
        "fuzzy_signature_copycount_i" => &mut f.fuzzy_count,
        _ => return,
    };
    *slot = field;
}

/// Where a command reads its input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// Standard input (`-` on the command line).
    Stdin,
    /// A file.
    File(PathBuf),
}

impl Input {
    /// `-` means standard input; anything else is a path.
    pub fn from_arg(arg: PathBuf) -> Self {
        if arg.as_os_str() == "-" {
            Input::Stdin
        } else {
            Input::File(arg)
        }
    }

    /// How messages name this input: the path as given, or `<stdin>`.
    pub fn name(&self) -> String {
        match self {
            Input::Stdin => "<stdin>".to_string(),
            Input::File(path) => path.display().to_string(),
        }
    }
}

/// `solr-dedup signature`.
#[derive(Debug, Clone, PartialEq)]
pub struct SignatureConfig {
    /// The scheme and profile parameters, defaults filled in per scheme.
    pub signer: Signer,
    /// Where the text (or, with `batch`, the JSON Lines) comes from.
    pub input: Input,
    /// Read JSON Lines of `{"id", "text"}` and write one result line per input line.
    pub batch: bool,
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
        for name in crate::cli::FIELD_NAMES {
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
    fn a_dash_is_stdin() {
        let c = sig(&["signature", "-"]);
        assert_eq!(c.input, Input::Stdin);
        let c = sig(&["signature", "./-"]);
        assert_eq!(c.input, Input::File(PathBuf::from("./-")));
    }
}
