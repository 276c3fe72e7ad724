//! `solr-dedup schema check|apply` on the command line, and the `--profile` values it shares with
//! `run`, `check` and `serve`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{parse_dimensions, parse_field, DimensionList, SolrArgs};

pub(super) const SCHEMA_LONG_ABOUT: &str = "\
Check, or add through the Schema API, the fields the worker reads and writes.

`schema check` reads the core's schema and says what a run would refuse: output fields that are missing \
or have the wrong type (signatures plong, flags boolean, counts pint), read fields that are missing \
(rename them with --field), a unique key other than the id field, and fields an atomic update would empty \
(neither stored nor docValues, and not a copyField destination). Exit 0 when a run can go ahead, 2 when \
not, 3 when Solr cannot be reached.

`schema apply` adds the missing output fields in one all-or-nothing Schema API request (stored and \
docValues, with the core's own types). It changes nothing else: fields that would lose data on an atomic \
update must be fixed by hand, and a full reindex follows such a change.

Profiles (--profile): YaCy's schema holds the flags as *_unique_b booleans, the counts as *_copycount_i and \
the near cluster as near_group_s, indexed and stored: every count refresh makes Solr re-index the whole \
page. The in-place profile holds them as *_unique_i (1 or 0), *_copies_i and near_group_l, single-valued \
numeric docValues fields neither indexed nor stored, which Solr updates in place (the signatures stay \
indexed and are written once per page version). `schema apply --profile in-place` adds them; afterwards \
runs find the profile from the schema (--profile auto). `schema check` says which profile the core has, \
and under the in-place one every condition of Solr's in-place updates that fails (a field indexed, stored, \
multi-valued or not numeric, copied to such a field, an indexed or stored _version_, a field no \
document holds yet): Solr then re-indexes the whole page instead, without a word, and drops its \
non-stored fields.

Exit codes: 0 a run can go ahead (check), the fields were added or none was missing (apply); 2 a run \
would be refused, or a usage or Schema API error; 3 Solr unreachable.";

pub(super) const SCHEMA_EXAMPLES: &str = "\
Examples:
  solr-dedup schema check --solr http://127.0.0.1:8983/solr/collection1
      exit 0 when a run may write to this core
  solr-dedup schema apply --solr http://127.0.0.1:8983/solr/collection1 --dry-run
      print the Schema API request that would add the missing fields
  SOLR_USER=admin SOLR_PASSWORD=… solr-dedup schema apply --solr https://solr.example.org/solr/web
      add them, with basic auth
  solr-dedup schema apply --profile in-place --solr http://127.0.0.1:8983/solr/collection1
      add the in-place profile's fields; runs write them from then on";

/// Arguments of `solr-dedup schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// `check` or `apply`.
    #[arg(value_enum, value_name = "ACTION")]
    pub action: SchemaAction,

    /// How to reach the core.
    #[command(flatten)]
    pub solr: SolrArgs,

    /// Comma-separated dimensions whose fields count: exact,fuzzy,title,description,www,http,near
    #[arg(long, value_name = "LIST", value_parser = parse_dimensions,
          default_value = "exact,fuzzy,title,description,www,http,near")]
    pub dimensions: DimensionList,

    /// Rename a field: the YaCy name, `=`, your name (repeatable), e.g. --field sku=url_s
    #[arg(long = "field", value_name = "NAME=FIELD", value_parser = parse_field)]
    pub fields: Vec<(String, String)>,

    /// `apply`: print the Schema API request instead of sending it
    #[arg(long)]
    pub dry_run: bool,

    /// The fields checked and added: `auto` (the core's profile: in-place when it has the
    /// in-place fields), `yacy` (*_unique_b, *_copycount_i, near_group_s: YaCy's schema) or
    /// `in-place` (*_unique_i, *_copies_i, near_group_l: single-valued numeric docValues fields,
    /// neither indexed nor stored, which Solr updates in place)
    #[arg(long, value_enum, default_value_t = ProfileArg::Auto, value_name = "PROFILE")]
    pub profile: ProfileArg,

    /// Print the verdict as one JSON object (`core`, `ok`, `problems`, `added`, `notes`, `profile`,
    /// `not_in_place`) instead of lines; the exit code is the same
    #[arg(long)]
    pub json: bool,

    /// Write the verdict as one JSON object (as --json prints it) to FILE, or to standard output
    /// with `-`
    #[arg(long, value_name = "FILE|-")]
    pub report: Option<PathBuf>,

    /// Print nothing when the schema is ready (problems still show, and the exit code says it)
    #[arg(short, long)]
    pub quiet: bool,

    /// Log more to standard error: -v for progress notes, -vv for every request
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// The `schema` actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemaAction {
    /// Say whether a run may write to the core (exit 0) or what is wrong (exit 2)
    Check,
    /// Add the missing output fields through the Schema API
    Apply,
}

/// The `--profile` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProfileArg {
    /// The core's: in-place when its schema has the in-place fields, else YaCy's
    Auto,
    /// YaCy's schema: *_unique_b, *_copycount_i, near_group_s
    Yacy,
    /// Numbers Solr updates in place: *_unique_i (1/0), *_copies_i, near_group_l
    InPlace,
}

impl ProfileArg {
    /// The field names after `--field` renames under this profile, and whether the core's schema
    /// decides it.
    pub fn apply(self, fields: &mut crate::model::FieldNames) -> bool {
        use crate::model::Profile;
        match self {
            ProfileArg::Auto => true,
            ProfileArg::Yacy => {
                fields.set_profile(Profile::Yacy);
                false
            }
            ProfileArg::InPlace => {
                fields.set_profile(Profile::InPlace);
                false
            }
        }
    }
}
