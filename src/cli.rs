//! The command line as clap types, and nothing else: no I/O, no defaults that depend on each other.
//!
//! [`crate::config`] turns a parsed [`Cli`] into plain structs the commands run on; `main` does the
//! parsing and maps failures to exit codes. Every subcommand is one variant of [`Command`] with its own
//! `Args` struct, and options several subcommands share (the signature scheme and its tunables) live in
//! their own struct that each flattens in, so `run`, `check` and `schema` can be added beside
//! `signature` without touching it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

const ABOUT: &str = "Finds the doubles in a Solr core of crawled pages and writes YaCy-compatible \
signatures, flags and copy counts";

const LONG_ABOUT: &str = "\
Finds the doubles in a Solr core of crawled web pages and writes YaCy-compatible signatures, flags and \
copy counts.

Every signature is bit-for-bit what YaCy and Solr compute (lookup3ycs64 for the `yacy` scheme, MD5 folded \
to a signed long for the `md5` scheme), so values that YaCy already wrote and values that solr-dedup \
writes can be compared.

For now the one subcommand is `signature`, which prints the signatures of a text; run \
`solr-dedup signature --help` for its details.

Exit codes: 0 done; 1 finished with problems; 2 usage, configuration or input error; 3 Solr unreachable.";

const EXAMPLES: &str = "\
Examples:
  solr-dedup signature page.txt
      signatures of the text in page.txt (yacy scheme)
  printf 'hello world' | solr-dedup signature -
      read the text from standard input
  solr-dedup signature --batch docs.jsonl > signatures.jsonl
      one output line per {\"id\":…,\"text\":…} input line";

/// `solr-dedup`: the whole command line.
#[derive(Debug, Parser)]
#[command(
    name = "solr-dedup",
    version,
    about = ABOUT,
    long_about = LONG_ABOUT,
    after_help = EXAMPLES,
    propagate_version = true
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// One variant per subcommand.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the exact, fuzzy and title signatures of a text, as JSON
    #[command(long_about = SIGNATURE_LONG_ABOUT, after_help = SIGNATURE_EXAMPLES)]
    Signature(SignatureArgs),
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
`FILE:LINE: what is wrong`, after the output lines of every earlier input line have been written.";

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

/// A quant rate is a finite, non-negative `f32`; NaN or infinity would make the quantisation step
/// meaningless rather than fail, so they are refused here.
fn parse_quant_rate(s: &str) -> Result<f32, String> {
    let rate: f32 = s.trim().parse().map_err(|_| "not a number".to_string())?;
    if !rate.is_finite() || rate < 0.0 {
        return Err("must be a finite number >= 0".to_string());
    }
    Ok(rate)
}

#[cfg(test)]
mod tests {
    use clap::error::ErrorKind;
    use clap::CommandFactory;

    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("solr-dedup").chain(args.iter().copied()))
    }

    fn signature(args: &[&str]) -> SignatureArgs {
        match parse(args).expect("parses").command {
            Command::Signature(a) => a,
        }
    }

    #[test]
    fn the_command_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn signature_defaults_leave_the_tunables_to_the_scheme() {
        let a = signature(&["signature", "page.txt"]);
        assert_eq!(a.options.scheme, SchemeArg::Yacy);
        assert_eq!(a.options.min_token_len, None);
        assert_eq!(a.options.quant_rate, None);
        assert!(!a.batch);
        assert_eq!(a.input, PathBuf::from("page.txt"));
    }

    #[test]
    fn signature_takes_every_option() {
        let a = signature(&[
            "signature",
            "--scheme",
            "md5",
            "--min-token-len",
            "4",
            "--quant-rate",
            "0.25",
            "--batch",
            "-",
        ]);
        assert_eq!(a.options.scheme, SchemeArg::Md5);
        assert_eq!(a.options.min_token_len, Some(4));
        assert_eq!(a.options.quant_rate, Some(0.25));
        assert!(a.batch);
        assert_eq!(a.input, PathBuf::from("-"));
    }

    #[test]
    fn signature_requires_an_input() {
        let err = parse(&["signature"]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::MissingRequiredArgument);
    }

    #[test]
    fn bad_quant_rates_are_refused() {
        for bad in ["-0.5", "nan", "inf", "1e40", "half"] {
            let err = parse(&["signature", "--quant-rate", bad, "x"]).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::ValueValidation, "{bad}");
        }
        assert_eq!(
            signature(&["signature", "--quant-rate", "0", "x"])
                .options
                .quant_rate,
            Some(0.0)
        );
    }

    #[test]
    fn unknown_schemes_are_refused() {
        let err = parse(&["signature", "--scheme", "sha1", "x"]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidValue);
    }
}
