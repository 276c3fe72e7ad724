//! The `chrome` command's arguments and help texts.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::IndexArgs;

/// `solr-dedup chrome …`.
#[derive(Debug, Subcommand)]
pub enum ChromeCommand {
    /// Write a chrome model: per site, the whole lines in the header or footer of more than --share of a sample of its pages
    #[command(long_about = CHROME_LEARN_LONG_ABOUT, after_help = CHROME_LEARN_EXAMPLES)]
    Learn(ChromeLearnArgs),
}

const CHROME_LEARN_LONG_ABOUT: &str = "\
Learn which lines are a site's chrome (its template: header and footer) and write them, with the \
evidence, to a JSON model; `run --chrome FILE` signs the pages of those sites without them in the \
near-duplicate signatures.

Pages whose own content is small next to their site's boilerplate look like near-duplicates of each \
other; and a page's body must still link to the same body on a host without that boilerplate. So the \
unit is a whole line (text between line breaks, compared by its words), and only the header run (the \
template lines from the top of a page) and the footer run (from the bottom) are removed, nothing in \
between; a run bridges one other line (a title inside the header, a date inside the footer) when the \
next line inward is a template line seen only in header (footer) runs. A line is a template line when it stands in the header or footer run of more than --share of \
the site's sampled pages (default 0.5: a template is on nearly every page), and of at least two. \
Phrases that a family of pages shares inside its content are not chrome. A host and its www. alias are \
one site. The sample is the --sample pages of the site whose ids hash lowest: uniform, and the same for \
the same index. Sites with fewer than --min-pages pages get no model, and are signed without removal, \
like sites the model does not know. Texts without line breaks get practically no chrome.

Solr does little work for it: one light read of every id and URL, then the texts of the sampled pages \
only (real-time get), site by site.

The model (JSON) holds per site the host names and pages seen, the sample size, the share of an average \
sampled page's words that removal takes, every template line with its words, its hash, the pages it is \
in a header or footer run on, its share, how often in the header and in the footer, and on how many \
pages it also stands elsewhere (left there); and the site's model version. A run stores that version in \
near_version_s, so after learning again exactly the documents of sites whose chrome changed are signed \
again. The file may be edited by hand: removing a line from a site's list takes effect with a new \
version of that site.

The command prints one line per site with chrome: its pages, template lines and the share of an \
average page's words they remove, and a warning when that is more than three quarters (content may be taken, or \
the pages are all but empty). A page that is nothing but template lines counts as having no words \
(near_version_s says no-words).

Exit codes: 0 model written; 2 usage or input error; 3 Solr unreachable.";

const CHROME_LEARN_EXAMPLES: &str = "\
Examples:
  solr-dedup chrome learn --solr http://127.0.0.1:8983/solr/collection1 --out chrome.json
      learn from every site with at least 50 pages, 200 pages each, lines on more than half
  solr-dedup run --solr http://127.0.0.1:8983/solr/collection1 --chrome chrome.json
      use it: pages of the hosts in the model are signed without their chrome
  solr-dedup chrome learn --input docs.jsonl --out - --sample 500 --share 0.8 | jq '.hosts | keys'
      file mode, a bigger sample, a stricter share; the model on standard output";

/// Arguments of `solr-dedup chrome learn`.
#[derive(Debug, Args)]
pub struct ChromeLearnArgs {
    /// The index: a file or a core, and which of its documents take part (as `urls learn`'s).
    #[command(flatten)]
    pub index: IndexArgs,

    /// Where the model goes (JSON, written only when learning succeeds); `-` for standard output
    #[arg(long, value_name = "FILE|-")]
    pub out: PathBuf,

    /// Pages sampled per site at most (their texts are read)
    #[arg(long, value_name = "N", default_value_t = 200,
          value_parser = clap::value_parser!(u64).range(2..=1_000_000))]
    pub sample: u64,

    /// A line in the header or footer run of more than this share of a site's sample is chrome (0 to
    /// 1, exclusive)
    #[arg(long, value_name = "SHARE", default_value_t = 0.5, value_parser = parse_share)]
    pub share: f64,

    /// Sites (a host and its www. alias) with fewer pages than this get no model
    #[arg(long, value_name = "N", default_value_t = 50,
          value_parser = clap::value_parser!(u64).range(2..=1_000_000_000))]
    pub min_pages: u64,

    /// Accepted for old scripts and unused: template lines do not depend on the shingle length
    #[arg(long, value_name = "N", default_value_t = 2, hide = true,
          value_parser = clap::value_parser!(u64).range(1..=8))]
    pub near_shingle: u64,

    /// Write a JSON summary (hosts, hosts with chrome, sites left out, documents read) to FILE, or
    /// to standard output with `-` (then --out must be a file)
    #[arg(long, value_name = "FILE|-")]
    pub report: Option<PathBuf>,

    /// Print no progress and no summary on standard error (errors still show)
    #[arg(short, long)]
    pub quiet: bool,

    /// Log more to standard error: -v for progress notes, -vv for every host
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

fn parse_share(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v < 1.0 => Ok(v),
        _ => Err("expected a share between 0 and 1, e.g. 0.5".to_owned()),
    }
}
