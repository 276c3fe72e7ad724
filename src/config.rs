//! Plain configuration, converted from the parsed command line: what each command needs to know, with
//! every default resolved, and no clap types past this point.
//!
//! Keeping the commands off clap means they can be driven from tests (or a later config file) by
//! building these structs directly.

use std::path::PathBuf;

use crate::cli::{Cli, Command, SchemeArg, SignatureArgs, SignatureOptions};
use crate::signature::{ProfileParams, Scheme, Signer};

/// What to do: one variant per subcommand.
#[derive(Debug, Clone, PartialEq)]
pub enum Config {
    /// `solr-dedup signature`.
    Signature(SignatureConfig),
}

impl From<Cli> for Config {
    fn from(cli: Cli) -> Self {
        match cli.command {
            Command::Signature(args) => Config::Signature(SignatureConfig::from(args)),
        }
    }
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

    #[test]
    fn defaults_follow_the_scheme() {
        let Config::Signature(c) = config(&["signature", "--scheme", "md5", "x"]);
        assert_eq!(c.signer, Signer::new(Scheme::Md5));
        assert_eq!(c.signer.params.min_token_len, 2);
        let Config::Signature(c) = config(&["signature", "x"]);
        assert_eq!(c.signer, Signer::new(Scheme::Yacy));
        assert_eq!(c.signer.params.quant_rate, 0.5);
    }

    #[test]
    fn given_tunables_override_the_scheme_defaults() {
        let Config::Signature(c) =
            config(&["signature", "--scheme", "md5", "--quant-rate", "0.2", "x"]);
        assert_eq!(c.signer.params.quant_rate, 0.2);
        assert_eq!(c.signer.params.min_token_len, 2);
    }

    #[test]
    fn a_dash_is_stdin() {
        let Config::Signature(c) = config(&["signature", "-"]);
        assert_eq!(c.input, Input::Stdin);
        let Config::Signature(c) = config(&["signature", "./-"]);
        assert_eq!(c.input, Input::File(PathBuf::from("./-")));
    }
}
