//! The `chrome` command's arguments and help texts.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{parse_bytes, parse_field, SolrArgs};

/// `solr-dedup chrome …`.
#[derive(Debug, Subcommand)]
pub enum ChromeCommand {
    /// Write a chrome model: per host, the shingles on more than --share of a sample of its pages
    #[command(long_about = CHROME_LEARN_LONG_ABOUT, after_help = CHROME_LEARN_EXAMPLES)]
    Learn(ChromeLearnArgs),
}

const CHROME_LEARN_LONG_ABOUT: &str = "\
Learn which word shingles are a site's chrome (header, menus, footer) and write them, with the evidence, \
to a JSON model that `run --chrome FILE` leaves out of near-duplicate signatures.

Pages whose own content is small next to their site's boilerplate look like near-duplicates of each other. \
A shingle (--near-shingle words, as the runs use) that occurs on more than --share of a sample of one \
host's pages is chrome there (seed 002: 5 %). The sample is the --sample pages of the host whose ids hash \
lowest: uniform, and the same for the same index. Hosts with fewer than --min-pages pages get no model, \
and are signed without removal, like hosts the model does not know.

Solr does little work for it: one light read of every id and URL, then the texts of the sampled pages \
only (real-time get), host by host.

The model (JSON) holds per host the pages seen, the sample size, every chrome shingle with its words, \
its hash, the pages it occurs on and its share, and the host's model version. A run stores that version \
in near_version_s, so after learning again exactly the documents of hosts whose chrome changed are signed \
again. The file may be edited by hand: removing a shingle from a host's list takes effect with a new \
version of that host.

A page all of whose shingles are chrome counts as having no words (near_version_s says no-words). A small \
host whose pages are mostly copies of each other can lose them all to its chrome; keep --min-pages well \
above the size of the clusters you want to find.

Exit codes: 0 model written; 2 usage or input error; 3 Solr unreachable.";

const CHROME_LEARN_EXAMPLES: &str = "\
Examples:
  solr-dedup chrome learn --solr http://127.0.0.1:8983/solr/collection1 --out chrome.json
      learn from every host with at least 50 pages, 200 pages each, 5 %
  solr-dedup run --solr http://127.0.0.1:8983/solr/collection1 --chrome chrome.json
      use it: pages of the hosts in the model are signed without their chrome
  solr-dedup chrome learn --input docs.jsonl --out - --sample 500 --share 0.1 | jq '.hosts | keys'
      file mode, a bigger sample, a stricter share; the model on standard output";

/// Arguments of `solr-dedup chrome learn`.
#[derive(Debug, Args)]
pub struct ChromeLearnArgs {
    /// JSON Lines of Solr documents, or a Solr /select JSON response (file mode: no Solr needed)
    #[arg(long, value_name = "FILE", conflicts_with = "solr")]
    pub input: Option<PathBuf>,

    /// How to reach the core, when there is no --input.
    #[command(flatten)]
    pub solr: SolrArgs,

    /// Where the model goes (JSON, written only when learning succeeds); `-` for standard output
    #[arg(long, value_name = "FILE|-")]
    pub out: PathBuf,

    /// Pages sampled per host at most (their texts are read)
    #[arg(long, value_name = "N", default_value_t = 200,
          value_parser = clap::value_parser!(u64).range(2..=1_000_000))]
    pub sample: u64,

    /// A shingle on more than this share of a host's sample is chrome (0 to 1, exclusive)
    #[arg(long, value_name = "SHARE", default_value_t = 0.05, value_parser = parse_share)]
    pub share: f64,

    /// Hosts with fewer pages than this get no model
    #[arg(long, value_name = "N", default_value_t = 50,
          value_parser = clap::value_parser!(u64).range(2..=1_000_000_000))]
    pub min_pages: u64,

    /// Words per shingle: the --near-shingle of the runs that will use the model
    #[arg(long, value_name = "N", default_value_t = 2,
          value_parser = clap::value_parser!(u64).range(1..=8))]
    pub near_shingle: u64,

    /// Only documents matching this filter take part (an fq for Solr; see `run --help` for file mode)
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

    /// Log more to standard error: -v for progress notes, -vv for every host
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

fn parse_share(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v < 1.0 => Ok(v),
        _ => Err("expected a share between 0 and 1, e.g. 0.05".to_owned()),
    }
}
