//! The command line as clap types, and nothing else: no I/O, no defaults that depend on each other.
//!
//! [`resolve`] turns a parsed [`Cli`] and the environment into the plain structs of [`crate::config`]
//! the commands run on; `main` does the
//! parsing and maps failures to exit codes. Every subcommand is one variant of [`Command`] with its own
//! `Args` struct, and options several subcommands share (the signature scheme and its tunables) live in
//! their own struct that each flattens in, so `run`, `check` and `schema` can be added beside
//! `signature` without touching it.

use std::path::PathBuf;

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};

use crate::model::{Dimension, YACY_NAMES};

mod chrome;
mod clean;
mod given;
mod layer;
mod schema;
mod show;
mod to_config;
mod urls;

pub use given::{parse_from, Given, Parsed};
pub use layer::Origin;
pub use schema::{ProfileArg, SchemaAction, SchemaArgs};
use schema::{SCHEMA_EXAMPLES, SCHEMA_LONG_ABOUT};
pub use show::{ConfigCommand, ConfigShowArgs};
pub use to_config::resolve;

pub use chrome::{ChromeCommand, ChromeLearnArgs};
pub use clean::CleanArgs;

pub use urls::{
    ContentArg, ExportFormatArg, IndexArgs, ServeArgs, UrlsCanonicalArgs, UrlsCommand,
    UrlsExportArgs, UrlsLearnArgs, UrlsPredictArgs,
};

const ABOUT: &str = "Finds the doubles in a Solr core of crawled pages and writes YaCy-compatible \
signatures, flags and copy counts";

const LONG_ABOUT: &str = "\
Finds the doubles in a Solr core of crawled web pages and writes YaCy-compatible signatures, flags and \
copy counts.

Every signature is bit-for-bit what YaCy and Solr compute (lookup3ycs64 for the `yacy` scheme, MD5 folded \
to a signed long for the `md5` scheme), so values that YaCy already wrote and values that solr-dedup \
writes can be compared.

`run` finds the doubles and writes flags and copy counts, `check` tells whether that is already done, \
`schema` checks or adds the fields a core needs, `signature` prints the signatures of a text, and \
`urls` learns which URL parts do not change a page and tells crawlers which URLs they need not fetch; \
`solr-dedup COMMAND --help` explains each. Each works on a Solr core (--solr URL, or SOLR_URL) or, for \
run and check, on a file of Solr documents (--input FILE).

Settings can live in a configuration file (TOML; --config FILE, SOLR_DEDUP_CONFIG, or \
~/.config/solr-dedup/config.toml): a flag beats its environment variable, which beats the file. \
`solr-dedup config show` prints the settings in effect and where each came from.

Exit codes: 0 done; 1 finished with problems; 2 usage, configuration or input error; 3 Solr \
unreachable; 130 or 143 stopped by SIGINT or SIGTERM.";

const EXAMPLES: &str = "\
Examples:
  solr-dedup run --solr http://127.0.0.1:8983/solr/collection1
      sign, group and flag the doubles of a core (credentials: SOLR_USER/SOLR_PASSWORD or --auth-file)
  solr-dedup schema apply --solr http://127.0.0.1:8983/solr/collection1
      add the fields the worker writes to a core that lacks them
  solr-dedup run --input docs.jsonl --output updates.jsonl --report -
      find the doubles in a file of Solr documents; write the atomic updates
  solr-dedup check --input docs.jsonl
      exit 0 when every flag and count is already right, 1 otherwise
  solr-dedup signature page.txt
      signatures of the text in page.txt (yacy scheme)
  printf 'hello world' | solr-dedup signature -
      read the text from standard input
  solr-dedup signature --batch docs.jsonl > signatures.jsonl
      one output line per {\"id\":…,\"text\":…} input line";

/// `--version`: the crate's version, the commit it was built from and the build date (build.rs).
pub const VERSION: &str = crate::build::LONG_VERSION;

/// `solr-dedup`: the whole command line.
#[derive(Debug, Parser)]
#[command(
    name = "solr-dedup",
    version = VERSION,
    about = ABOUT,
    long_about = LONG_ABOUT,
    after_help = EXAMPLES,
    propagate_version = true
)]
pub struct Cli {
    /// The configuration file (TOML) [default: $SOLR_DEDUP_CONFIG, else
    /// $CONFIGURATION_DIRECTORY/config.toml, else $XDG_CONFIG_HOME/solr-dedup/config.toml, else
    /// ~/.config/solr-dedup/config.toml]; flags and their environment variables override it
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// One variant per subcommand.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Sign what is unsigned, find the doubles, write flags and copy counts
    #[command(long_about = RUN_LONG_ABOUT, after_help = RUN_EXAMPLES)]
    Run(RunCommandArgs),
    /// Read-only: is every signature, flag and count what a full run would write? (exit 0 yes, 1 no)
    #[command(long_about = CHECK_LONG_ABOUT, after_help = CHECK_EXAMPLES)]
    Check(CheckArgs),
    /// Check, or add through the Schema API, the fields the worker reads and writes
    #[command(long_about = SCHEMA_LONG_ABOUT, after_help = SCHEMA_EXAMPLES)]
    Schema(SchemaArgs),
    /// Print the exact, fuzzy and title signatures of a text, as JSON
    #[command(long_about = SIGNATURE_LONG_ABOUT, after_help = SIGNATURE_EXAMPLES)]
    Signature(SignatureArgs),
    /// Near-duplicates (MinHash trials): the probability table of their parameters
    #[command(subcommand)]
    Near(NearCommand),
    /// Near-duplicates: learn each site's chrome (menus, footers) from a sample of its pages
    #[command(subcommand)]
    Chrome(ChromeCommand),
    /// URL rules: learn which URL parts do not change a page, and predict duplicate URLs for crawlers
    #[command(subcommand)]
    Urls(UrlsCommand),
    /// Take what the worker wrote off a core: flags, counts, near keys, signatures (--dry-run to count)
    #[command(long_about = clean::CLEAN_LONG_ABOUT, after_help = clean::CLEAN_EXAMPLES)]
    Clean(CleanArgs),
    /// The admin page and HTTP API: runs, checks, groups, URL predictions, metrics, schedules
    #[command(long_about = urls::SERVE_LONG_ABOUT, after_help = urls::SERVE_EXAMPLES)]
    Serve(ServeArgs),
    /// The configuration file: show the settings in effect and where each came from
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell), e.g.
    /// `solr-dedup completions bash > /etc/bash_completion.d/solr-dedup`
    #[command(long_about = COMPLETIONS_LONG_ABOUT)]
    Completions(CompletionsArgs),
    /// Print the manual page (roff), e.g. `solr-dedup man > /usr/local/share/man/man1/solr-dedup.1`
    #[command(long_about = MAN_LONG_ABOUT)]
    Man,
}

const COMPLETIONS_LONG_ABOUT: &str = "\
Print a shell completion script (bash, zsh, fish, elvish, powershell), generated from the argument \
definitions, e.g. `solr-dedup completions bash > ~/.local/share/bash-completion/completions/solr-dedup`.

Exit codes: 0 printed; 2 usage error.";

const MAN_LONG_ABOUT: &str = "\
Print the manual page (roff), generated from the argument definitions, e.g. `solr-dedup man > \
/usr/local/share/man/man1/solr-dedup.1`.

Exit codes: 0 printed; 2 usage error.";

/// `solr-dedup completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// The shell completion script for `shell`, generated from the definitions above.
pub fn completions(shell: clap_complete::Shell) -> String {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "solr-dedup", &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// The manual page (roff), generated from the definitions above: the synopsis, the description,
/// the global options, the subcommands with what each does (`solr-dedup SUBCOMMAND --help` for
/// theirs), the examples and the version.
pub fn man_page() -> String {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = clap_mangen::Man::new(Cli::command()).render(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// `solr-dedup near …`.
#[derive(Debug, Subcommand)]
pub enum NearCommand {
    /// Print the chance that a pair with a given shingle overlap is found, per number of hashes
    #[command(long_about = NEAR_TABLE_LONG_ABOUT, after_help = NEAR_TABLE_EXAMPLES)]
    Table(NearTableArgs),
}

const NEAR_TABLE_LONG_ABOUT: &str = "\
Print the chance that a pair of pages is found as near-duplicates, for shingle overlaps (rows) and \
numbers of hash functions per trial (columns).

Two pages are near-duplicates when at least A of T trials agree; a trial agrees when all its H min-hashes \
over the pages' word shingles are equal, which for one hash happens with the Jaccard overlap J of the \
shingle sets. So the chance is 1 - sum_{k<A} C(T,k) p^k (1-p)^(T-k) with p = J^H. More hashes make the \
test stricter (fewer pairs with a lower overlap are found); fewer trials that must agree make it looser.

Exit codes: 0 printed; 2 usage error.";

const NEAR_TABLE_EXAMPLES: &str = "\
Examples:
  solr-dedup near table
      the seed's table: H = 10, 12, …, 20, T = 6, A = 2, overlaps 100 % … 80 %
  solr-dedup near table --hashes 14 --trials 8 --agree 3 --overlap 0.95 0.9 0.8";

/// Arguments of `solr-dedup near table`.
#[derive(Debug, Args)]
pub struct NearTableArgs {
    /// Hash functions per trial, one column each (1 to 64)
    #[arg(long, num_args = 1.., value_name = "H", default_values_t = [10, 12, 14, 16, 18, 20],
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub hashes: Vec<u32>,
    /// Trials per page (1 to 16)
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub trials: u32,
    /// Trials that must agree (1 to --trials)
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub agree: u32,
    /// Shingle overlaps (Jaccard, 0 to 1), one row each
    #[arg(long, num_args = 1.., value_name = "J", value_parser = parse_overlap,
          default_values_t = [1.0, 0.99, 0.98, 0.97, 0.96, 0.95, 0.94, 0.93, 0.92, 0.91, 0.90, 0.85, 0.80])]
    pub overlap: Vec<f64>,
}

fn parse_overlap(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| {
        format!("not a number: {s:?} (an overlap is a number from 0 to 1, such as 0.9)")
    })?;
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!(
            "{s} is not between 0 and 1 (an overlap is a share, such as 0.9)"
        ))
    }
}

/// How to reach a Solr core: shared by `run`, `check` and `schema`.
#[derive(Debug, Args)]
pub struct SolrArgs {
    /// The Solr core URL, e.g. http://127.0.0.1:8983/solr/collection1 [env: SOLR_URL]
    #[arg(long, value_name = "URL")]
    pub solr: Option<String>,

    /// A file with one line `user:password` for basic auth; else SOLR_USER and SOLR_PASSWORD are used
    #[arg(long, value_name = "FILE")]
    pub auth_file: Option<PathBuf>,

    /// Time limit of one request to Solr, in seconds
    #[arg(long, value_name = "SECS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,

    /// How often a request is sent again after a 5xx, a timeout or a connection error (never after a
    /// 4xx), with jittered exponential backoff
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u64).range(0..=100))]
    pub retries: u64,

    /// The largest Solr answer read, in bytes (default 256 MiB, far above a --batch-size page of
    /// documents with their texts); a larger one ends the command with exit 3 rather than
    /// exhausting memory. /export answers stream: there it bounds each document
    #[arg(long, value_name = "BYTES", default_value_t = 256 << 20,
          value_parser = clap::value_parser!(u64).range(1024..))]
    pub max_response_bytes: u64,
}

const RUN_LONG_ABOUT: &str = "\
Sign what is unsigned, group the doubles in every dimension, pick one representative per group, and write \
back the flags and copy counts that differ from what is stored.

Dimensions (--dimensions, all by default):
  exact        equal exact_signature_l (the same text)          writes exact_signature_unique_b, _copycount_i
  fuzzy        equal fuzzy_signature_l (the same text profile)  writes fuzzy_signature_unique_b, _copycount_i
  title        equal title_exact_signature_l                    writes title_unique_b
  description  equal description_exact_signature_l              writes description_unique_b
  www          the same URL up to a leading www. of the host    writes www_unique_b
  http         the same URL up to http/https                    writes http_unique_b
  near         near-duplicate text: at least A of T MinHash     writes near_unique_b, near_copycount_i,
               trials over word shingles agree (--near-*)       near_group_s (the representative's id;
                                                                 for fq={!collapse field=near_group_s}),
                                                                 near_trials_ls, near_keys_ls, near_version_s
On a core with the in-place profile's fields (schema apply --profile in-place; --profile) the flags are \
*_unique_i (1 or 0), the counts *_copies_i and the near group near_group_l (the representative id's \
64-bit hash): numbers Solr updates in place, without re-indexing the page.

In each group exactly one document is unique (true), chosen by one order shared by all dimensions \
(--prefer canonical): the URL that is its canonical form under --rules, then the fewest session, tracking, \
print, default-value and host-case parts, then (with --rules) the host with more pages, https before http \
(--prefer-https) and www. before bare host (--prefer-www) or, with --rules, as most of the site's pages, \
then (with --rules) the site's parameter order, the shorter normalised URL, the smaller URL, the smaller id. \
--prefer yacy is YaCy's order: https, www., shorter, smaller, id. So `exact_signature_unique_b:true AND http_unique_b:true AND www_unique_b:true` \
keeps one copy of a page served at four URL variants. Documents that cannot take part (empty text, empty \
profile, a profile of fewer than --fuzzy-min-words words for fuzzy, no title, no description, no or unparseable URL, \
a non-http URL for http, no word for near) are unique with a count of 1, and counted in the report.

Weak fuzzy profiles (--fuzzy-min-words, default 4): a short text profile is shared by distinct pages, so a \
page whose profile has fewer words forms no fuzzy group and joins none (report: weak_profile). The default \
is measured: on the simulated crawl of tools/repr-eval every fuzzy group that joined distinct pages had a \
profile of 1 to 3 words (the 1-word groups hid 2,560 distinct pages), none of 4 or more. The count is stored in \
fuzzy_signature_words_i with the signature; documents signed without it have their text read once. \
--compat yacy is YaCy's semantics: --prefer yacy and --fuzzy-min-words 0.

Runs are incremental by default: only missing signatures are computed, and only documents whose stored \
values differ are written, so a second run over an unchanged input writes nothing. --full recomputes every \
signature from the text. The outcome is the same either way.

Against Solr (--solr URL or SOLR_URL), run first reads the schema and refuses, with the command that \
fixes it, when output fields are missing or when an atomic update would empty a field that is neither \
stored nor docValues (--allow-lossy-atomic-updates accepts that loss). Every update carries the \
_version_ that was read, so a document deleted or re-indexed meanwhile is never resurrected or given a \
stale signature (Solr answers 409; the worker reads it again). Reading the next page overlaps signing \
and writing the current one. One commit at the end (--commit).

File mode (--input) needs no Solr: the input is JSON Lines of Solr documents or a saved /select JSON \
response; the output (--output, or standard output) holds the atomic updates, ready to POST to /update, \
or with --output-format docs the annotated documents. The output appears only when the run succeeds: a \
regular file is replaced atomically, a symbolic link is followed, a special file (/dev/null, a FIFO) or \
`-` is streamed to; an output or report that is the input is refused. Lines longer than \
--max-line-bytes are refused with their FILE:LINE. SIGINT or SIGTERM stops the run before its next page \
(exit 130 or 143): in file mode with no output and no temporary file left, against Solr between \
batches, every batch written complete; the report says `interrupted`.

Exit codes: 0 done; 1 finished with problems (documents skipped or changed under the run); 2 usage, \
configuration, schema or input error (nothing, or only part, was done); 3 Solr unreachable; 130 or 143 \
stopped by SIGINT or SIGTERM.";

const RUN_EXAMPLES: &str = "\
Examples:
  solr-dedup run --solr http://127.0.0.1:8983/solr/collection1 --report run.json
      postprocess a core; one hard commit at the end
  solr-dedup run --solr http://127.0.0.1:8983/solr/collection1 --filter 'httpstatus_i:200' --commit soft
      only pages fetched with 200 take part (the fq goes to Solr unchanged)
  solr-dedup run --input docs.jsonl --output updates.jsonl
      decide everything for the documents in docs.jsonl; write the atomic updates
  { printf '['; paste -sd, updates.jsonl; printf ']'; } | curl -s -H 'Content-Type: application/json' \\
       --data-binary @- 'http://127.0.0.1:8983/solr/core/update?commit=true'
      apply them to a core yourself (the lines joined into one JSON array, the 64-bit values untouched)
  solr-dedup run --input docs.jsonl --output next.jsonl --output-format docs --report -
      annotated documents for the next run; the JSON report on standard output
  solr-dedup run --input docs.jsonl --dry-run --report report.json
      decide, write nothing
  solr-dedup run --input docs.jsonl --output u.jsonl --dimensions exact,www,http --scope host
      three dimensions; content groups only within one scheme+host+port
  solr-dedup run --input docs.jsonl --output u.jsonl --filter 'httpstatus_i:200' --prefer-www=false";

const CHECK_LONG_ABOUT: &str = "\
Read-only: does every document have its signatures, and does every flag and count equal what a full run \
would write? Takes the same options as `run`, minus the writing ones. Meant for CI jobs and monitoring.

Exit codes: 0 yes; 1 no (with counts per dimension and a few example ids); 2 it could not tell (bad \
input, configuration, schema); 3 Solr unreachable; 130 or 143 stopped by SIGINT or SIGTERM.";

const CHECK_EXAMPLES: &str = "\
Examples:
  solr-dedup check --input docs.jsonl
      exit 0 when docs.jsonl is fully postprocessed, 1 otherwise
  solr-dedup check --input docs.jsonl --report - --quiet
      the JSON report on standard output, nothing on standard error";

/// What `run` and `serve` take: the index, the decisions, and how the run writes.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Where the documents are and what to decide.
    #[command(flatten)]
    pub job: JobArgs,

    /// Where the updates go (file mode); standard output when left out. Written only on success
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// `updates`: atomic updates for /update; `docs`: every input document with the updates applied
    #[arg(long, value_enum, default_value_t = OutputFormatArg::Updates, value_name = "FORMAT")]
    pub output_format: OutputFormatArg,

    /// Decide everything, write nothing (the report says what would be written)
    #[arg(long)]
    pub dry_run: bool,

    /// Recompute every signature from the text, not only the missing ones
    #[arg(long)]
    pub full: bool,

    /// Do not write fuzzy_signature_text_t (left out anyway when the core has no such field)
    #[arg(long)]
    pub no_fuzzy_text: bool,

    /// Solr: how to make the updates visible at the end: hard, soft, none, or within:MS (commitWithin)
    #[arg(long, value_name = "MODE", default_value = "hard", value_parser = parse_commit)]
    pub commit: CommitArg,

    /// Solr: write even when an atomic update would empty fields that are neither stored nor docValues
    #[arg(long)]
    pub allow_lossy_atomic_updates: bool,

    /// Solr, `run` only: decide the core under this run's settings and record them with the core
    /// first (a user property of its configuration; needs the config-edit permission and reloads
    /// the core), so that every other run and serve, on any machine, is held to them: a run with
    /// other deciding settings (--scheme, --min-token-len, --quant-rate, --dimensions, --scope,
    /// --prefer, --compat, --prefer-https, --prefer-www, --fuzzy-min-words, --near-*, --rules,
    /// --chrome, --field) then stops with exit 2 naming each difference. Without it, the first
    /// writing run on a core with no record records its own settings
    #[arg(long)]
    pub reconfigure: bool,
}

/// A parsed `--commit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitArg {
    /// `commit=true`.
    Hard,
    /// `softCommit=true`.
    Soft,
    /// No commit.
    None,
    /// `commitWithin=MS` on every update.
    Within(u64),
}

fn parse_commit(s: &str) -> Result<CommitArg, String> {
    Ok(CommitArg::from(crate::config::value::parse_commit(s)?))
}

impl From<crate::store::CommitMode> for CommitArg {
    fn from(mode: crate::store::CommitMode) -> Self {
        use crate::store::CommitMode;
        match mode {
            CommitMode::Hard => CommitArg::Hard,
            CommitMode::Soft => CommitArg::Soft,
            CommitMode::None => CommitArg::None,
            CommitMode::Within(ms) => CommitArg::Within(ms),
        }
    }
}

impl From<CommitArg> for crate::store::CommitMode {
    fn from(arg: CommitArg) -> Self {
        use crate::store::CommitMode;
        match arg {
            CommitArg::Hard => CommitMode::Hard,
            CommitArg::Soft => CommitMode::Soft,
            CommitArg::None => CommitMode::None,
            CommitArg::Within(ms) => CommitMode::Within(ms),
        }
    }
}

/// Arguments of `solr-dedup check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Where the documents are and what to decide.
    #[command(flatten)]
    pub job: JobArgs,

    /// Also recompute every signature from the text and compare it with the stored one
    #[arg(long)]
    pub full: bool,

    /// Its report.
    #[command(flatten)]
    pub report: ReportArgs,
}

/// What `run` and `check` share: the source, the decisions, the report.
#[derive(Debug, Args)]
pub struct JobArgs {
    /// JSON Lines of Solr documents, or a Solr /select JSON response (file mode: no Solr needed)
    #[arg(long, value_name = "FILE", conflicts_with = "solr")]
    pub input: Option<PathBuf>,

    /// How to reach the core, when there is no --input.
    #[command(flatten)]
    pub solr: SolrArgs,

    /// Solr: how many requests may be in flight at once (the next page is read while the current one is
    /// signed and written)
    #[arg(long, value_name = "N", default_value_t = 4,
          value_parser = clap::value_parser!(u64).range(1..=64))]
    pub concurrency: u64,

    /// Solr: read every document's light fields, instead of only what changed since the last run
    /// (found from versions with the change state in --state-dir, which is then neither read nor
    /// kept)
    #[arg(long)]
    pub no_change_state: bool,

    /// Solr: how far below the last run's mark (the highest version it saw) changes are looked
    /// for, in ms: a document given its version before a commit and made visible after it is
    /// found if it came this much later
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    pub change_window: u64,

    /// How to compute missing signatures.
    #[command(flatten)]
    pub options: SignatureOptions,

    /// `global`: doubles anywhere; `host`: content doubles only within one scheme+host+port (as YaCy)
    #[arg(long, value_enum, default_value_t = ScopeArg::Global, value_name = "SCOPE")]
    pub scope: ScopeArg,

    /// Which fields hold the flags and counts: `auto` (the core's: in-place when its schema has the
    /// in-place fields, which `schema apply --profile in-place` adds; YaCy's in file mode), `yacy`
    /// (*_unique_b, *_copycount_i, near_group_s) or `in-place` (*_unique_i 1/0, *_copies_i,
    /// near_group_l: numbers Solr updates without re-indexing the page)
    #[arg(long, value_enum, default_value_t = ProfileArg::Auto, value_name = "PROFILE")]
    pub profile: ProfileArg,

    /// Comma-separated dimensions to decide: exact,fuzzy,title,description,www,http,near [default: all
    /// seven; against a core without the near fields, the first six and a note on how to add them]
    #[arg(long, value_name = "LIST", value_parser = parse_dimensions)]
    pub dimensions: Option<DimensionList>,

    /// Near-duplicates: words per shingle (n)
    #[arg(long, value_name = "N", default_value_t = 2,
          value_parser = clap::value_parser!(u64).range(1..=8))]
    pub near_shingle: u64,

    /// Near-duplicates: hash functions per trial (H); more make the test stricter
    #[arg(long, value_name = "H", default_value_t = 14,
          value_parser = clap::value_parser!(u64).range(1..=64))]
    pub near_hashes: u64,

    /// Near-duplicates: trials per page (T)
    #[arg(long, value_name = "T", default_value_t = 6,
          value_parser = clap::value_parser!(u64).range(1..=16))]
    pub near_trials: u64,

    /// Near-duplicates: trials that must agree (A, at most T); fewer make the test looser
    #[arg(long, value_name = "A", default_value_t = 2,
          value_parser = clap::value_parser!(u64).range(1..=16))]
    pub near_agree: u64,

    /// Near-duplicates: sign each modelled site's pages without their template (header and footer
    /// lines), as learned by `solr-dedup chrome learn` (a document signed under another model
    /// version of its site is signed again)
    #[arg(long, value_name = "FILE")]
    pub chrome: Option<PathBuf>,

    /// Prefer https over http when picking the representative (`--prefer-https=false` for the opposite)
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set,
          num_args = 0..=1, default_missing_value = "true")]
    pub prefer_https: bool,

    /// Prefer a www. host over the bare host (`--prefer-www=false` for the opposite)
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set,
          num_args = 0..=1, default_missing_value = "true")]
    pub prefer_www: bool,

    /// Which member of a group stays: `canonical` (the URL a searcher should see: its canonical form
    /// under --rules, then the fewest session, tracking, print and default-value parts, then
    /// --prefer-https/--prefer-www, shorter, smaller, id) or `yacy` (YaCy's order: https, www.,
    /// shorter, smaller, id) [default: canonical]
    #[arg(long, value_enum, value_name = "ORDER", conflicts_with = "compat")]
    pub prefer: Option<PreferArg>,

    /// Decide as YaCy does: YaCy's preference order (--prefer yacy) and fuzzy groups of any
    /// profile size (--fuzzy-min-words 0)
    #[arg(long, value_enum, value_name = "SYSTEM")]
    pub compat: Option<CompatArg>,

    /// The fewest words (`(token-cnt-qcnt)` entries of the text profile) a fuzzy signature needs to
    /// take part in the fuzzy dimension; a page below it is unique with a count of 1 (the report's
    /// `weak_profile`). 0 groups profiles of any size, as YaCy does. The default 4: on the simulated
    /// crawl of tools/repr-eval every fuzzy group that joined distinct pages had a profile of 1 to 3
    /// words (the 1-word groups alone hid 2,560 distinct pages), none of 4 or more. Needs
    /// fuzzy_signature_words_i on a core (documents signed without it have their text read once);
    /// a changed minimum needs no --full [default: 4]
    #[arg(long, value_name = "N", conflicts_with = "compat",
          value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub fuzzy_min_words: Option<u32>,

    /// URL rules learned by `solr-dedup urls learn`: the representative is the member whose URL is
    /// its canonical form, and the scheme, www. and parameter order most of its site's pages use.
    /// serve also answers URL predictions from it (loaded again within seconds when the file is
    /// written anew, and after every run; while it is not there the URL endpoints answer 503)
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,

    /// Only documents matching this filter take part; others are untouched. Solr gets it as an fq,
    /// unchanged, and a filter Solr refuses ends the run before anything is written. File mode reads
    /// Solr's standard syntax for *:*, field:value, field:"v", field:[a TO b], field:*, one -x / !x /
    /// NOT x / +x per clause, AND, OR (with Lucene's rules: a OR -b is a AND NOT b), field:(…) and
    /// parentheses, and refuses with one line what Solr refuses, and what only Solr can mean (no
    /// field:, wildcards, clauses whose meaning depends on q.op such as a:1 b:2)
    #[arg(long, value_name = "FQ", allow_hyphen_values = true)]
    pub filter: Option<String>,

    /// Documents per read page and per update batch
    #[arg(long, value_name = "N", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub batch_size: u64,

    /// Rename a field: the YaCy name, `=`, your name (repeatable), e.g. --field sku=url_s
    #[arg(long = "field", value_name = "NAME=FIELD", value_parser = parse_field)]
    pub fields: Vec<(String, String)>,

    /// File mode: the longest input line (one document) accepted, in bytes, or with K, M or G (KiB,
    /// MiB, GiB); a longer line stops the command with its FILE:LINE (exit 2), and no more than this is
    /// held for one line. Also bounds each document of a /select response
    #[arg(long, value_name = "BYTES", default_value = "64M", value_parser = parse_bytes)]
    pub max_line_bytes: u64,

    /// Memory budget, in bytes or with K, M or G (KiB, MiB, GiB): past their share of it, the
    /// per-document records and their index, the grouping keys and their sort, the signatures
    /// waiting to be written, the near-duplicate keys, the ids and URLs kept for lookups, the best
    /// members' strings and, with --input, the file's id index and pending updates go to
    /// temporary files in --temp-dir. What stays in memory: the groupings (8 bytes a document
    /// that has a double, per dimension), 40 bytes a group, and a bit or two a document
    #[arg(long, value_name = "BYTES", default_value = "256M", value_parser = parse_bytes)]
    pub memory: u64,

    /// Where the temporary files past --memory go [default: the system's temporary folder,
    /// $TMPDIR or /tmp]
    #[arg(long, value_name = "DIR")]
    pub temp_dir: Option<PathBuf>,

    /// Log more to standard error: -v for progress notes, -vv for detail
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// What `run` and `check` tell when they end, and what they keep between runs (serve has its own
/// `--state-dir` and keeps its runs' reports itself).
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Solr: where the preference order the core's flags were decided under is kept between runs,
    /// so that after new rules or --prefer-* only groups whose ranks moved are decided again
    /// [default: as serve's --state-dir]
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,

    /// Write the JSON report to FILE, or to standard output with `-`
    #[arg(long, value_name = "FILE|-")]
    pub report: Option<PathBuf>,

    /// Print no summary on standard error (errors still show)
    #[arg(short, long)]
    pub quiet: bool,
}

/// Arguments of `solr-dedup run`: what a run takes, and its report.
#[derive(Debug, Args)]
pub struct RunCommandArgs {
    /// What the run reads, decides and writes.
    #[command(flatten)]
    pub run: RunArgs,

    /// Its report.
    #[command(flatten)]
    pub report: ReportArgs,
}

/// The `--prefer` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PreferArg {
    /// The URL a searcher should see first (see --prefer)
    Canonical,
    /// YaCy's order: https, www., shorter, smaller, id
    Yacy,
}

/// The `--compat` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompatArg {
    /// YaCy's semantics
    Yacy,
}

/// The `--scope` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScopeArg {
    /// Doubles anywhere in the index (the seed's "complete set of all known documents")
    Global,
    /// Content doubles only within one scheme+host+port, as YaCy groups
    Host,
}

/// The `--output-format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormatArg {
    /// Atomic-update documents, one line per changed document
    Updates,
    /// Every input document with the updates applied
    Docs,
}

/// A parsed `--dimensions` list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DimensionList(pub Vec<Dimension>);

fn parse_dimensions(s: &str) -> Result<DimensionList, String> {
    Dimension::parse_list(s)
        .map(DimensionList)
        .map_err(|e| e.to_string())
}

pub(crate) use crate::config::value::parse_bytes;

fn parse_field(s: &str) -> Result<(String, String), String> {
    let (name, field) = s
        .split_once('=')
        .ok_or_else(|| "write NAME=FIELD, e.g. sku=url_s".to_string())?;
    let (name, field) = (name.trim(), field.trim());
    if field.is_empty() {
        return Err(format!("no new name given for '{name}'"));
    }
    if !YACY_NAMES.contains(&name) {
        return Err(format!(
            "unknown field '{name}'; renamable: {}",
            YACY_NAMES.join(", ")
        ));
    }
    Ok((name.to_string(), field.to_string()))
}

const SIGNATURE_LONG_ABOUT: &str = "\
Print the exact, fuzzy and title signatures of a text, as one JSON object on one line.

The text is read from FILE, or from standard input when FILE is `-`; one of the two must be given. It \
must be valid UTF-8 and is hashed exactly as read, with no normalisation: a final newline is part of the \
text and changes the exact signature (`echo` adds one, `printf` does not).

Output fields:
  exact_l   exact_signature_l: lookup3ycs64 (yacy) or folded MD5 (md5) of the text
  fuzzy_l   fuzzy_signature_l: the same hash of the text profile
  profile   the profile fuzzy_l hashes: `(token-qcnt)` entries (yacy), `token qcnt` lines (md5)
  scheme    the scheme used, `yacy` or `md5`
  text_t    fuzzy_signature_text_t: YaCy's `(token-cnt-qcnt)` entries, or null
  title_l   title_exact_signature_l: the exact signature of the first line

text_t is null for the md5 scheme, which has no such field, and null when the profile is empty, as \
YaCy then writes no value. The first line is taken without its line terminator (`\\n` or `\\r\\n`).

All signatures are JSON integers (signed 64-bit, as Solr stores them in a plong field).

With --batch, the input is JSON Lines instead: one object per line with a `text` string and an `id` that \
is a string or an integer (other fields are ignored, blank lines are skipped). Each input line gives one \
output line, the same object as above with the `id` first, echoed as given. Lines are processed as they \
are read; when a line is broken (not JSON, no `text`, a bad `id`) the command stops with exit code 2 and \
`FILE:LINE: what is wrong`, after the output lines of every earlier input line have been written.

Exit codes: 0 signed; 2 usage or input error (a broken line: FILE:LINE).";

const SIGNATURE_EXAMPLES: &str = "\
Examples:
  solr-dedup signature page.txt
      signatures of page.txt with YaCy's hashes and defaults (min token length 3, quant rate 0.5)
  printf 'hello world' | solr-dedup signature -
      {\"exact_l\":-6533976092579615214,…}: the text from standard input
  solr-dedup signature --scheme md5 page.txt
      Solr's TextProfileSignature / Nutch method (min token length 2, quant rate 0.01)
  solr-dedup signature --min-token-len 2 --quant-rate 0.3 page.txt
      a finer profile: more tokens count, smaller quantisation steps
  solr-dedup signature --batch docs.jsonl > signatures.jsonl
      docs.jsonl holds lines such as {\"id\":\"doc-1\",\"text\":\"Title\\nBody …\"}";

/// Arguments of `solr-dedup signature`.
#[derive(Debug, Args)]
pub struct SignatureArgs {
    /// How to compute the signatures.
    #[command(flatten)]
    pub options: SignatureOptions,

    /// Read JSON Lines of {"id":…,"text":…} and write one JSON line of signatures per input line
    #[arg(long)]
    pub batch: bool,

    /// The text to sign: a file, or `-` for standard input (required)
    #[arg(value_name = "FILE|-")]
    pub input: PathBuf,
}

/// The signature scheme and its tunables, shared by every subcommand that signs documents.
#[derive(Debug, Args)]
pub struct SignatureOptions {
    /// Hash family: `yacy` (lookup3ycs64, what YaCy indexes hold) or `md5` (Solr's TextProfileSignature)
    #[arg(long, value_enum, default_value_t = SchemeArg::Yacy, value_name = "SCHEME")]
    pub scheme: SchemeArg,

    /// Tokens of this many UTF-16 units or fewer do not count in the fuzzy profile [default: 3 for yacy,
    /// 2 for md5]
    #[arg(long, value_name = "N")]
    pub min_token_len: Option<usize>,

    /// Quantisation step of the fuzzy profile as a fraction of the highest token count; a finite number
    /// >= 0 [default: 0.5 for yacy, 0.01 for md5]
    #[arg(long, value_name = "F", value_parser = parse_quant_rate, allow_negative_numbers = true)]
    pub quant_rate: Option<f32>,
}

/// The `--scheme` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemeArg {
    /// lookup3ycs64 signatures, as every YaCy index holds them
    Yacy,
    /// MD5 signatures folded to a long, as Solr's and Nutch's TextProfileSignature
    Md5,
}

/// A quant rate: a finite number >= 0 ([`crate::config::value::check_quant_rate`]).
fn parse_quant_rate(s: &str) -> Result<f32, String> {
    let rate: f32 = s.trim().parse().map_err(|_| "not a number".to_string())?;
    crate::config::value::check_quant_rate(rate)
}

#[cfg(test)]
mod tests;
