//! Plain configuration: what each command needs to know, with every default resolved, and no clap
//! types past this point ([`crate::cli`] fills it in; nothing here knows the command line).
//!
//! Keeping the commands off clap means they can be driven from tests by building these structs
//! directly. The configuration file ([`mod@file`]) is one more source of the same settings, resolved
//! with the command line and the environment in the same place. The environment is read once, into [`env::Environment`], and
//! resolved into these structs with the command line in one place ([`crate::cli::resolve`]):
//! credentials, serve's token, the log's colours and filter arrive here settled, and no command
//! reads the environment itself.

pub mod env;
pub mod file;
pub mod value;

/// How to reach a Solr core: the store layer's, resolved here.
pub use crate::store::SolrConfig;
pub use env::{Environment, Logging};

use std::path::PathBuf;
use std::time::Duration;

use crate::engine::EngineConfig;
use crate::signature::Signer;
use crate::store::file::OutputFormat;

/// What to do: one variant per subcommand.
#[derive(Debug, Clone)]
pub enum Config {
    /// `solr-dedup run` and `solr-dedup check` (boxed: it is much larger than the others).
    Job(Box<JobConfig>),
    /// `solr-dedup schema check|apply` (boxed for the same reason).
    Schema(Box<SchemaConfig>),
    /// `solr-dedup signature`.
    Signature(SignatureConfig),
    /// `solr-dedup near table`.
    NearTable(NearTableConfig),
    /// `solr-dedup chrome learn` (boxed: it holds field names).
    ChromeLearn(Box<ChromeLearnConfig>),
    /// `solr-dedup urls learn`.
    UrlsLearn(Box<UrlsLearnConfig>),
    /// `solr-dedup urls predict`.
    UrlsPredict(Box<UrlsPredictConfig>),
    /// `solr-dedup urls canonical`.
    UrlsCanonical(UrlsCanonicalConfig),
    /// `solr-dedup urls export`.
    UrlsExport(UrlsExportConfig),
    /// `solr-dedup serve`.
    Serve(Box<ServeConfig>),
    /// `solr-dedup clean`.
    Clean(Box<CleanConfig>),
    /// `solr-dedup config show`: the text to print (the settings in effect, with their origins).
    Show(String),
}

/// `solr-dedup serve`.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// The run options of `run`: the source, `--filter`, field names, what a run decides and
    /// writes. Runs started over HTTP change only `check`, `full` and `dry_run`.
    pub job: JobConfig,
    /// The rules file, if any.
    pub rules: Option<PathBuf>,
    /// Where to listen.
    pub listen: std::net::SocketAddr,
    /// The bearer token: the first line of `--token-file`, else `SOLR_DEDUP_TOKEN` (checked: at
    /// least 16 characters); `None` when neither is given.
    pub token: Option<Token>,
    /// Where the runs' records are kept.
    pub state_dir: PathBuf,
    /// `--every`: a run every so often.
    pub every: Option<Duration>,
    /// `--after-quiet`: a run once the index has had no change this long.
    pub after_quiet: Option<Duration>,
    /// Origins allowed to frame the admin page.
    pub frame_ancestors: Vec<String>,
    /// How logs are written (`-v`, `RUST_LOG`, colours).
    pub log: Logging,
}

/// `solr-dedup urls learn`.
#[derive(Debug, Clone)]
pub struct UrlsLearnConfig {
    /// Where the documents are and which of them count.
    pub index: IndexConfig,
    /// Where the rules go: a file (written atomically) or standard output.
    pub out: Input,
    /// Where the JSON summary goes (`--report`), if anywhere.
    pub report: Option<Input>,
    /// A rule applies when its estimate reaches this.
    pub min_estimate: f64,
    /// Near-duplicate clusters count as the same content.
    pub near: bool,
    /// Signs pages without a stored signature.
    pub signer: Signer,
    /// Field names.
    pub fields: crate::model::FieldNames,
    /// Documents per read page.
    pub batch_size: usize,
    /// No progress bar.
    pub quiet: bool,
    /// How logs are written (`-v`, `RUST_LOG`, colours).
    pub log: Logging,
}

/// `solr-dedup urls predict`.
#[derive(Debug, Clone)]
pub struct UrlsPredictConfig {
    /// The rules file.
    pub rules: PathBuf,
    /// Where the indexed documents are and which of them count.
    pub index: IndexConfig,
    /// The URLs; empty: standard input.
    pub urls: Vec<String>,
    /// Field names.
    pub fields: crate::model::FieldNames,
    /// Documents per read page.
    pub batch_size: usize,
    /// Where the JSON summary goes (`--report`), if anywhere.
    pub report: Option<Input>,
    /// No progress bar.
    pub quiet: bool,
    /// How logs are written (`-v`, `RUST_LOG`, colours).
    pub log: Logging,
}

/// `solr-dedup urls canonical`.
#[derive(Debug, Clone)]
pub struct UrlsCanonicalConfig {
    /// The rules file.
    pub rules: PathBuf,
    /// The URLs; empty: standard input.
    pub urls: Vec<String>,
}

/// `solr-dedup urls export`.
#[derive(Debug, Clone)]
pub struct UrlsExportConfig {
    /// The rules file.
    pub rules: PathBuf,
    /// Export only rules whose estimate reaches this (default: the file's).
    pub min_estimate: Option<f64>,
    /// Where it goes.
    pub out: Input,
}

/// `solr-dedup chrome learn`.
#[derive(Debug, Clone)]
pub struct ChromeLearnConfig {
    /// Where the documents are and which of them count.
    pub index: IndexConfig,
    /// Where the model goes: a file (written atomically) or standard output.
    pub out: Input,
    /// Pages sampled per site at most.
    pub sample: usize,
    /// A line in the header or footer run of more than this share of a site's sample is chrome.
    pub share: f64,
    /// Sites with fewer pages get no model.
    pub min_pages: usize,
    /// `--near-shingle` as given: accepted for old scripts, unused (template lines do not depend
    /// on the shingle length).
    pub shingle: usize,
    /// Field names.
    pub fields: crate::model::FieldNames,
    /// Documents per read page.
    pub batch_size: usize,
    /// Where the JSON summary goes (`--report`), if anywhere.
    pub report: Option<Input>,
    /// `-q`: no progress, no summary.
    pub quiet: bool,
    /// How logs are written (`-v`, `RUST_LOG`, colours).
    pub log: Logging,
}

/// `solr-dedup near table`.
#[derive(Debug, Clone, PartialEq)]
pub struct NearTableConfig {
    /// Hash functions per trial, one column each.
    pub hashes: Vec<usize>,
    /// Trials.
    pub trials: usize,
    /// Trials that must agree.
    pub agree: usize,
    /// Overlaps, one row each.
    pub overlaps: Vec<f64>,
}

/// Where a command's documents are and which of them count: the index settings every command
/// that reads documents shares (`--input` or `--solr`, `--filter`, `--max-line-bytes`).
#[derive(Debug, Clone, PartialEq)]
pub struct IndexConfig {
    /// `--input` or `--solr` / `SOLR_URL`.
    pub source: Source,
    /// `--filter` as given.
    pub filter: Option<String>,
    /// File mode: the longest input line accepted, in bytes (`--max-line-bytes`).
    pub max_line_bytes: usize,
}

/// Where the documents are.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// A file of Solr documents (`--input`).
    File(PathBuf),
    /// A Solr core (`--solr` or `SOLR_URL`).
    Solr(SolrConfig),
    /// Neither was given.
    Missing,
}

/// `solr-dedup clean`.
#[derive(Debug, Clone)]
pub struct CleanConfig {
    /// The core (a file is refused) and `--filter`.
    pub index: IndexConfig,
    /// Field names.
    pub fields: crate::model::FieldNames,
    /// Count, write nothing.
    pub dry_run: bool,
    /// Leave the signatures.
    pub keep_signatures: bool,
    /// The state folder whose kept order goes.
    pub state_dir: Option<PathBuf>,
    /// Documents per read page and per update.
    pub batch_size: usize,
    /// How the updates are made visible.
    pub commit: crate::store::CommitMode,
    /// Write even when atomic updates would empty fields.
    pub allow_lossy: bool,
    /// Where the JSON summary goes.
    pub report: Option<Input>,
    /// `-q`.
    pub quiet: bool,
    /// How logs are written (`-v`, `RUST_LOG`, colours).
    pub log: Logging,
}

/// `solr-dedup schema check|apply`.
#[derive(Debug, Clone)]
pub struct SchemaConfig {
    /// Add the missing fields (else only check).
    pub apply: bool,
    /// With `apply`: print the request instead of sending it.
    pub dry_run: bool,
    /// `--json`: the verdict as one JSON object on standard output.
    pub json: bool,
    /// `--report`: the verdict as one JSON object, to a file or standard output.
    pub report: Option<Input>,
    /// `-q`: nothing printed when the schema is ready.
    pub quiet: bool,
    /// The core; `None` when neither `--solr` nor `SOLR_URL` is set.
    pub solr: Option<SolrConfig>,
    /// The fields and dimensions that decide what is needed.
    pub engine: EngineConfig,
    /// How logs are written (`-v`, `RUST_LOG`, colours).
    pub log: Logging,
}

/// `solr-dedup run` or `solr-dedup check` on a file.
#[derive(Debug, Clone)]
pub struct JobConfig {
    /// True for `check`: read only, exit 1 when anything is out of date.
    pub check: bool,
    /// Where the documents are and which of them count (`--filter`: an `fq` for Solr, parsed
    /// for the file store).
    pub index: IndexConfig,
    /// Write even when atomic updates would empty fields that are neither stored nor docValues.
    pub allow_lossy: bool,
    /// `--reconfigure`: decide under this run's settings and record them with the core.
    pub reconfigure: bool,
    /// `--chrome`: the chrome model file the near signatures leave the host's chrome out by.
    pub chrome: Option<PathBuf>,
    /// `--rules`: the URL rules the representative is chosen by (and serve's predictions).
    pub rules: Option<PathBuf>,
    /// `near` is on by default, not asked for: a core without its fields runs the other dimensions
    /// (with a note on how to add them) instead of refusing.
    pub near_optional: bool,
    /// Where the updates go; `None` is standard output.
    pub output: Option<PathBuf>,
    /// Updates, or annotated documents.
    pub output_format: OutputFormat,
    /// Where the JSON report goes, if anywhere.
    pub report: Option<Input>,
    /// Everything the engine decides with.
    pub engine: EngineConfig,
    /// Find changes from versions with the change state in `state_dir` (not `--no-change-state`).
    pub changes: bool,
    /// `--change-window`: how far below the last run's mark changes are looked for, in ms.
    pub change_window_ms: u64,
    /// Where the order the core's flags were decided under and the change state are kept between
    /// runs (`--state-dir`; none: not kept, every run treats the order as not known and reads
    /// every document).
    pub state_dir: Option<PathBuf>,
    /// How logs are written (`-v`, `RUST_LOG`, colours).
    pub log: Logging,
    /// No summary on standard error.
    pub quiet: bool,
}

/// serve's bearer token, at least 16 characters; never shown by `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// The token checked: empty or shorter than 16 characters is refused with what to do.
    pub fn new(text: &str) -> Result<Token, ConfigError> {
        // A byte order mark an editor put at the start is no part of the token.
        let t = text.trim_start_matches('\u{feff}').trim();
        match t.len() {
            0 => Err(ConfigError::TokenEmpty),
            n if n < 16 => Err(ConfigError::TokenShort(n)),
            _ => Ok(Token(t.to_owned())),
        }
    }

    /// The token's text.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(<hidden>)")
    }
}

/// A setting that cannot be resolved: one line saying what to do (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// `--auth-file` cannot be read.
    #[error("cannot read the auth file {}", path.display())]
    AuthFileUnreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// `--auth-file` holds no `user:password` line.
    #[error("auth file {}: {problem}", path.display())]
    AuthFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: crate::solr_client::ConfigError,
    },
    /// One of `SOLR_USER` and `SOLR_PASSWORD` without the other.
    #[error("{0} is set but {1} is not; set both, or use --auth-file")]
    HalfCredentials(&'static str, &'static str),
    /// `--token-file` cannot be read.
    #[error("cannot read the token file {}", path.display())]
    TokenFileUnreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// An empty token.
    #[error(
        "the bearer token is empty; put at least 16 characters in --token-file or SOLR_DEDUP_TOKEN"
    )]
    TokenEmpty,
    /// `--report -` beside `--out -` (or the answers of `urls predict`): both on standard output.
    #[error(
        "--report - would share standard output with the command's output; give the report a file"
    )]
    BothOnStdout,
    /// `urls predict|canonical|export` without `--rules` or `rules` in the file.
    #[error("no rules file: give --rules FILE, or set rules in the configuration file's [decide]")]
    NoRules,
    /// The configuration file named by `--config` or `SOLR_DEDUP_CONFIG` cannot be read.
    #[error("cannot read the configuration file {} (from {whence})", path.display())]
    ConfigFileUnreadable {
        /// The file.
        path: PathBuf,
        /// How it was named.
        whence: file::Whence,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The configuration file does not parse, or a key or value in it is refused.
    #[error("{}", file_problem(path, *line, key.as_deref(), message))]
    ConfigFile {
        /// The file.
        path: PathBuf,
        /// The line (1-based), when known.
        line: Option<usize>,
        /// The key, `section.key`, when known.
        key: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// A token too short to be a secret.
    #[error("the bearer token is too short ({0} characters); use at least 16 (e.g. `openssl rand -hex 24`)")]
    TokenShort(usize),
}

/// `FILE:LINE: section.key: what is wrong`, with whatever of the line and the key is known.
fn file_problem(
    path: &std::path::Path,
    line: Option<usize>,
    key: Option<&str>,
    message: &str,
) -> String {
    let mut text = path.display().to_string();
    if let Some(line) = line {
        text.push_str(&format!(":{line}"));
    }
    if let Some(key) = key {
        text.push_str(&format!(": {key}"));
    }
    format!("{text}: {message}")
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

    /// How summaries name it as an output (`--out`): the path as given, or `standard output`.
    pub fn output_name(&self) -> String {
        match self {
            Input::Stdin => "standard output".to_string(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_checked_and_a_byte_order_mark_is_no_part_of_it() {
        assert!(matches!(Token::new("  "), Err(ConfigError::TokenEmpty)));
        assert!(matches!(
            Token::new("short"),
            Err(ConfigError::TokenShort(5))
        ));
        let t = Token::new("\u{feff}0123456789abcdef\n").unwrap();
        assert_eq!(t.expose(), "0123456789abcdef");
        assert_eq!(format!("{t:?}"), "Token(<hidden>)");
    }
}
