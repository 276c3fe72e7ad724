//! `solr-dedup clean`: the arguments of taking the worker's values off a core.

use std::path::PathBuf;

use clap::Args;

use super::{parse_commit, parse_field, CommitArg, SolrArgs};

pub(super) const CLEAN_LONG_ABOUT: &str = "\
Take what the worker wrote off a Solr core, so that it is as a core the worker never touched: every \
flag and copy count, the near-duplicate keys, version and group, the fuzzy profile's word count and \
text, and the exact, fuzzy, title and description signatures (keep those with --keep-signatures: a YaCy \
core has them from YaCy itself). Also removed: the settings record of the core and --filter (a user \
property of its configuration; needs config-edit and reloads the core) and, with --state-dir, the order \
kept there. The fields stay in the schema (your configset may have had them; to delete one: the Schema \
API's delete-field).

Stop whatever runs the worker on the core first (serve, the timer): its next run would decide the \
core again and record its settings anew.

One light read of the documents that hold any of the fields, then atomic updates that set those \
fields to null, each guarded by the document's _version_: a page re-indexed meanwhile is read again, one \
deleted meanwhile stays deleted. Nothing else of a document changes; refused on a core whose atomic \
updates would empty fields (as `run` is). --dry-run counts and writes nothing.

Exit codes: 0 cleaned (or, with --dry-run, counted); 1 documents kept changing and still hold a field \
(run it again), or the settings record could not be removed; 2 usage, configuration or schema error; 3 \
Solr unreachable.";

pub(super) const CLEAN_EXAMPLES: &str = "\
Examples:
  solr-dedup clean --solr http://127.0.0.1:8983/solr/collection1 --dry-run
      how many documents hold the worker's fields, per field; nothing written
  solr-dedup clean --solr http://127.0.0.1:8983/solr/collection1 --state-dir /var/lib/solr-dedup
  solr-dedup clean --solr http://127.0.0.1:8983/solr/yacy --keep-signatures
      a YaCy core: its own signatures stay";

/// Arguments of `solr-dedup clean`.
#[derive(Debug, Args)]
pub struct CleanArgs {
    /// How to reach the core.
    #[command(flatten)]
    pub solr: SolrArgs,

    /// Only documents matching this filter (an fq) are cleaned, and the settings record of this
    /// filter is removed
    #[arg(long, value_name = "FQ", allow_hyphen_values = true)]
    pub filter: Option<String>,

    /// Count what would be taken off, per field; write nothing
    #[arg(long)]
    pub dry_run: bool,

    /// Leave the exact, fuzzy, title and description signatures (a YaCy core's own)
    #[arg(long)]
    pub keep_signatures: bool,

    /// The state folder of the runs on this core: the preference order kept there is removed
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,

    /// Rename a field: the YaCy name, `=`, your name (repeatable), e.g. --field sku=url_s
    #[arg(long = "field", value_name = "NAME=FIELD", value_parser = parse_field)]
    pub fields: Vec<(String, String)>,

    /// Documents per read page and per update
    #[arg(long, value_name = "N", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub batch_size: u64,

    /// How the updates are made visible: hard, soft, none or within:MS (as `run --commit`)
    #[arg(long, value_name = "MODE", default_value = "hard", value_parser = parse_commit)]
    pub commit: CommitArg,

    /// Write even when atomic updates would empty fields that are neither stored nor docValues
    #[arg(long)]
    pub allow_lossy_atomic_updates: bool,

    /// Write the JSON summary (documents, per field, cleaned, re-read, gone) to FILE, or to
    /// standard output with `-`
    #[arg(long, value_name = "FILE|-")]
    pub report: Option<PathBuf>,

    /// Print no summary on standard error (errors still show)
    #[arg(short, long)]
    pub quiet: bool,

    /// Log more to standard error
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
}
