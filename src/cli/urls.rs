//! The `urls` and `serve` commands' arguments and help texts.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use super::{parse_bytes, parse_field, SchemeArg, SolrArgs};

/// Where the indexed pages are and which of them count: `urls learn`, `urls predict` and `chrome
/// learn`.
#[derive(Debug, Args)]
pub struct IndexArgs {
    /// JSON Lines of Solr documents, or a Solr /select JSON response (file mode: no Solr needed)
    #[arg(long, value_name = "FILE", conflicts_with = "solr")]
    pub input: Option<PathBuf>,

    /// How to reach the core, when there is no --input.
    #[command(flatten)]
    pub solr: SolrArgs,

    /// Only documents matching this filter count (an fq for Solr; see `run --help` for file mode)
    #[arg(long, value_name = "FQ", allow_hyphen_values = true)]
    pub filter: Option<String>,

    /// Documents per read page
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
}

pub(super) const SERVE_LONG_ABOUT: &str = "\
One long-running process for operators and crawlers: an admin page, an HTTP API to start, watch and \
cancel runs and checks, the biggest groups of each dimension, URL predictions under learned rules, \
metrics, and runs that start by themselves (--every, --after-quiet). Takes the options of `run`, which \
every run it starts uses.

  GET  /                       the admin page (a browser; asks for the token when one is set)
  POST /api/runs               {\"check\", \"full\", \"dry_run\"} (all optional): start; 409 if one runs
  GET  /api/runs               recent runs with their reports (kept in --state-dir across restarts)
  GET  /api/runs/current       the run going on: phase, documents done of the total, rate, round
  GET  /api/runs/ID            one run; POST /api/runs/ID/cancel stops it after the batch in flight
  GET  /api/groups/DIMENSION   the biggest groups (exact, fuzzy, title, description, near)
  POST /api/urls/predict       {\"urls\": [...]}: one answer per URL, as `urls predict` writes it
  POST /api/urls/canonical     {\"urls\": [...]}: {\"url\", \"canonical\", \"rules\"} per URL
  GET  /api/status             the index, its health, the run going on, the schedule
  GET  /metrics                Prometheus text: runs, time per phase, documents, Solr's work
  GET  /openapi.json           the OpenAPI 3.1 document of all of these
  GET  /healthz                ok

--after-quiet starts a run once the index has had no change for that long and has changed since the \
last run: on Solr it reads the number of documents and their highest _version_ (one light request \
every fifth of the period, at most every 30 s); on a file, its size and modification time. In file mode \
without --output, runs are dry runs (they decide and report, and write nothing).

It listens on 127.0.0.1 unless told otherwise (--listen); on any other address it needs a bearer token \
(--token-file FILE, or SOLR_DEDUP_TOKEN), which every request but /healthz and the page's empty shell \
must then carry (Authorization: Bearer TOKEN). POSTs take application/json only, and cross-site \
requests are refused. Stop it with Ctrl-C (SIGINT) or SIGTERM: the run going on ends after its batch \
in flight.

Exit codes: 0 stopped by SIGINT or SIGTERM; 2 refused at start (usage, configuration, a token that is \
too short, a state directory another server holds, a rules file that does not parse); 3 Solr \
unreachable while starting.";

pub(super) const SERVE_EXAMPLES: &str = "\
Examples:
  solr-dedup serve --solr http://127.0.0.1:8983/solr/collection1 --after-quiet 10m
      open http://127.0.0.1:8987/ ; a run starts 10 minutes after the crawl stops writing
  solr-dedup serve --solr http://127.0.0.1:8983/solr/collection1 --rules rules.json --every 6h
  curl -s -XPOST localhost:8987/api/runs -H 'Content-Type: application/json' -d '{}'
  curl -s localhost:8987/api/urls/predict -H 'Content-Type: application/json' \\
      -d '{\"urls\": [\"http://www.shop.example/item?id=7&sid=x\"]}'
  SOLR_DEDUP_TOKEN=$(cat /etc/solr-dedup/token) solr-dedup serve --input docs.jsonl \\
      --output updates.jsonl --rules rules.json --listen 0.0.0.0:8987";

/// Arguments of `solr-dedup serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The index and what every run decides and writes (the options of `run`).
    #[command(flatten)]
    pub run: super::RunArgs,

    /// Address and port to listen on; any address but loopback needs a token
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8987")]
    pub listen: std::net::SocketAddr,

    /// A file whose first line is the bearer token (else SOLR_DEDUP_TOKEN; needed off loopback)
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,

    /// Where the runs and their reports are kept [default: $STATE_DIRECTORY (systemd), else
    /// $XDG_STATE_HOME/solr-dedup, else ~/.local/state/solr-dedup]
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,

    /// Start a run this often (e.g. 30m, 6h, 1d); skipped while one runs
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub every: Option<std::time::Duration>,

    /// Start a run once the index has had no change this long and has changed since the last run
    /// (e.g. 10m): after a crawl, without the crawler's help
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub after_quiet: Option<std::time::Duration>,

    /// An origin that may show the admin page in a frame, e.g. a YaCy-like console's
    /// http://console.example:8090 (repeatable; by default only this server's own pages)
    #[arg(long, value_name = "ORIGIN", value_parser = parse_origin)]
    #[allow(rustdoc::bare_urls)]
    // the text is --help's, where a bare URL is what a reader wants
    pub frame_ancestors: Vec<String>,
}

use crate::config::value::{parse_duration, parse_origin};

/// `solr-dedup urls …`.
#[derive(Debug, Subcommand)]
pub enum UrlsCommand {
    /// Learn the rules from the index's URLs and content groups; write them with their evidence
    #[command(long_about = URLS_LEARN_LONG_ABOUT, after_help = URLS_LEARN_EXAMPLES)]
    Learn(UrlsLearnArgs),
    /// For each URL: its canonical form, whether an indexed page has it, and the probability (JSON lines)
    #[command(long_about = URLS_PREDICT_LONG_ABOUT, after_help = URLS_PREDICT_EXAMPLES)]
    Predict(UrlsPredictArgs),
    /// Print the canonical form of each URL under the rules (one line each)
    #[command(long_about = URLS_CANONICAL_LONG_ABOUT, after_help = URLS_CANONICAL_EXAMPLES)]
    Canonical(UrlsCanonicalArgs),
    /// Write the rules for a crawler to apply without the worker (Apache Nutch's regex-normalize.xml)
    #[command(long_about = URLS_EXPORT_LONG_ABOUT, after_help = URLS_EXPORT_EXAMPLES)]
    Export(UrlsExportArgs),
}

const URLS_LEARN_LONG_ABOUT: &str = "\
Learn from the index which parts of its URLs do not change the page, and write them as rules with their \
evidence (JSON).

For every part a rule could cover (http vs https, www. vs the bare host, a path parameter such as \
;jsessionid=, a trailing default document such as index.html, a query parameter on the whole site or under \
a path prefix, a parameter at one value such as sort=asc, the order of the parameters), the evidence is the \
pairs of indexed URLs that differ only in that part: the same content is support, different content is \
against. Pairs are found by grouping, in time linear in the index. A rule's estimate is the lower end of \
the 95 % Wilson interval of support / pairs (0 under 5 pairs); it applies when the estimate reaches \
--min-estimate. Rules are per site (the host without www.) and pooled over all sites (\"*\", from at least \
two sites), which stand in for a site without evidence of its own. Host case never matters.

Content: a page's near-duplicate cluster (near_group_s, or near_group_l on a core with the in-place profile) when it has one, else the cluster of a page with the \
same exact signature, else its exact signature; pages with neither field have their text read and signed \
in memory. Run `solr-dedup run` first (with the near dimension), \
so that print views and other near-duplicates count as the same content and nothing is read twice.

Solr does little work for it: two light reads (id, URL, signature fields; then URLs), nothing written. \
Exit codes: 0 rules written; 1 nothing to learn (no page with an http(s) URL: no file written); 2 usage \
or input error; 3 Solr unreachable.";

const URLS_LEARN_EXAMPLES: &str = "\
Examples:
  solr-dedup urls learn --solr http://127.0.0.1:8983/solr/collection1 --out rules.json
  solr-dedup urls learn --input docs.jsonl --out - | jq '.sites[\"shop.example\"]'
  solr-dedup urls learn --input docs.jsonl --out rules.json --min-estimate 0.9
      apply only rules whose estimate is at least 0.9 (which prefix and value rules are written
      depends on it: learn again rather than edit the number in the file)";

const URLS_PREDICT_LONG_ABOUT: &str = "\
For each URL (arguments, or one per line on standard input with `-`), one JSON line:
  {\"url\": …, \"canonical\": …, \"probability\": 0.97, \"rules\": [\"www\", \"param sid\", \"|\", …],
   \"duplicate_of\": {\"id\": …, \"url\": …}, \"matched\": {\"id\": …, \"url\": …}}
The canonical form is the URL rewritten by the rules that apply; duplicate_of is the page a search filtered \
on exact_signature_unique_b:true shows for the content of the indexed page with the same canonical form \
(the representative of its exact group, from the flags the last run wrote), or null: the URL is new, \
whatever the rules say, and its probability is 0. matched, given only when it is another page, is the \
indexed page the canonical form met (a double the index hides). The \
probability is the chance that the URL serves that content: the product, over the rules the match needed, \
of each rule's calibrated probability (from its counts, under the calibration `urls learn` chose by \
cross-validation; a rules file without one gives the pessimistic estimates): those that rewrote the URL and \
(after \"|\" in rules) the indexed page's URL, a rule that removed a parameter from both counted once, and \
one that changed both the same way (both www., both http) not at all. A URL without a canonical form (not a URL, not http(s)) gets {\"url\": …, \"error\": …} \
and the rest are still answered.

Skip a URL above a threshold, and still fetch a small share (MaybeDont: 5 %) of those you would skip, so \
that a rule that stops holding is noticed; the guide (docs/src/url-rules.md) has the thresholds' trade-off.

The index is read once (ids, URLs and the exact flags, light) before the first answer.

Exit codes: 0 all answered; 1 some URLs had errors, or the index holds no page; 2 usage or rules-file \
error; 3 Solr unreachable.";

const URLS_PREDICT_EXAMPLES: &str = "\
Examples:
  solr-dedup urls predict --rules rules.json --solr http://127.0.0.1:8983/solr/collection1 \\
      'http://www.shop.example/item?id=7&utm_source=mail'
  crawler-frontier | solr-dedup urls predict --rules rules.json --input docs.jsonl - \\
      | jq -c 'select(.probability < 0.9) | .url'
      the URLs still worth fetching";

const URLS_CANONICAL_LONG_ABOUT: &str = "\
Print the canonical form of each URL under the rules (one line each): the URL with every part the rules \
say does not change the page rewritten, as `urls predict` gives it in `canonical`. Needs only the rules.

Exit codes: 0 every URL answered; 1 some URLs have no canonical form (not a URL, not http(s)); 2 usage \
or rules-file error.";

const URLS_CANONICAL_EXAMPLES: &str = "\
Examples:
  solr-dedup urls canonical --rules rules.json 'HTTP://WWW.Shop.Example/a;jsessionid=1?sid=2&id=7'
  solr-dedup urls canonical --rules rules.json - < urls.txt";

const URLS_EXPORT_LONG_ABOUT: &str = "\
Write the rules that apply as Apache Nutch's regex-normalize.xml (urlnormalizer-regex): one Java regex per \
rule, in the order of the canonical form, with the evidence in a comment. Rules pooled over all sites are \
not exported (a regex cannot say \"a site without evidence of its own\"), nor parameter order (a regex \
cannot sort; it is listed in a comment).

Exit codes: 0 written; 2 usage or rules-file error, or the output cannot be written.";

const URLS_EXPORT_EXAMPLES: &str = "\
Examples:
  solr-dedup urls export --rules rules.json --out conf/regex-normalize.xml
  solr-dedup urls export --rules rules.json --min-estimate 0.95";

/// Arguments of `solr-dedup urls learn`.
#[derive(Debug, Args)]
pub struct UrlsLearnArgs {
    /// The index: a file or a core, and which of its documents count.
    #[command(flatten)]
    pub index: IndexArgs,

    /// Where the rules go (JSON, written only when learning succeeds); `-` for standard output
    #[arg(long, value_name = "FILE|-")]
    pub out: PathBuf,

    /// A rule applies when its estimate (a pessimistic probability that it keeps the page) reaches this
    #[arg(long, value_name = "P", default_value_t = crate::urlrules::MIN_ESTIMATE, value_parser = parse_probability)]
    pub min_estimate: f64,

    /// What counts as the same content: near (the near-duplicate cluster where a page has one, else the
    /// exact signature) or exact (the exact signature only)
    #[arg(long, value_enum, value_name = "WHICH", default_value_t = ContentArg::Near)]
    pub content: ContentArg,

    /// The signature scheme of the index, for pages signed in memory
    #[arg(long, value_enum, value_name = "SCHEME", default_value_t = SchemeArg::Yacy)]
    pub scheme: SchemeArg,

    /// Write a JSON summary (pages, sites, pairs, rules per kind, documents read) to FILE, or to
    /// standard output with `-` (then --out must be a file)
    #[arg(long, value_name = "FILE|-")]
    pub report: Option<PathBuf>,

    /// Print no progress and no summary on standard error (errors still show)
    #[arg(short, long)]
    pub quiet: bool,

    /// Log more to standard error
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// The `--content` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ContentArg {
    /// The near-duplicate cluster where a page has one, else the exact signature
    Near,
    /// The exact signature only
    Exact,
}

/// Arguments of `solr-dedup urls predict`.
#[derive(Debug, Args)]
pub struct UrlsPredictArgs {
    /// The rules file (`urls learn --out`) [default: the configuration file's `rules`; one of the
    /// two is required]
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,

    /// The index: a file or a core, and which of its documents count.
    #[command(flatten)]
    pub index: IndexArgs,

    /// URLs to answer for; `-` (or none) reads them from standard input, one per line
    #[arg(value_name = "URL")]
    pub urls: Vec<String>,

    /// Write a JSON summary (URLs answered, with an indexed page met, at each threshold, errors)
    /// to FILE (standard output holds the answers)
    #[arg(long, value_name = "FILE|-")]
    pub report: Option<PathBuf>,

    /// No progress bar
    #[arg(short, long)]
    pub quiet: bool,

    /// Log more to standard error
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// Arguments of `solr-dedup urls canonical`.
#[derive(Debug, Args)]
pub struct UrlsCanonicalArgs {
    /// The rules file (`urls learn --out`) [default: the configuration file's `rules`; one of the
    /// two is required]
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,

    /// URLs; `-` (or none) reads them from standard input, one per line
    #[arg(value_name = "URL")]
    pub urls: Vec<String>,
}

/// Arguments of `solr-dedup urls export`.
#[derive(Debug, Args)]
pub struct UrlsExportArgs {
    /// The rules file (`urls learn --out`) [default: the configuration file's `rules`; one of the
    /// two is required]
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,

    /// The format
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = ExportFormatArg::Nutch)]
    pub format: ExportFormatArg,

    /// Export only rules whose estimate reaches this [default: the file's min_estimate]
    #[arg(long, value_name = "P", value_parser = parse_probability)]
    pub min_estimate: Option<f64>,

    /// Where it goes; `-` (the default) for standard output
    #[arg(long, value_name = "FILE|-", default_value = "-")]
    pub out: PathBuf,
}

/// The `urls export --format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormatArg {
    /// Apache Nutch's regex-normalize.xml (urlnormalizer-regex plugin)
    Nutch,
}

fn parse_probability(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err("must be a number from 0 to 1".to_string()),
    }
}
