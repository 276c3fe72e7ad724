//! Parsing the command line so that a flag the user gave can be told from a default clap filled
//! in: the configuration file may replace the second, never the first.
//!
//! clap's derive API hides that difference (`--timeout 60` and no `--timeout` both give `60`), so
//! the arguments are parsed into [`clap::ArgMatches`] first, the ids whose value came from the
//! command line are kept as [`Given`], and [`Cli`] is built from the same matches.

use std::collections::BTreeSet;
use std::ffi::OsString;

use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches};

use super::Cli;

/// The parsed command line, and which of its arguments the user wrote.
#[derive(Debug)]
pub struct Parsed {
    /// The arguments, defaults filled in.
    pub cli: Cli,
    /// The ids of the arguments given on the command line.
    pub given: Given,
}

/// The ids (clap's: the field names, such as `near_hashes` or `fields` for `--field`) of the
/// arguments given on the command line, for the command that runs (the innermost subcommand) and
/// the global ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Given(BTreeSet<String>);

impl Given {
    /// True when the user wrote the argument `id`.
    pub fn contains(&self, id: &str) -> bool {
        self.0.contains(id)
    }

    fn collect(matches: &ArgMatches, into: &mut BTreeSet<String>) {
        for id in matches.ids() {
            if matches.value_source(id.as_str()) == Some(ValueSource::CommandLine) {
                into.insert(id.as_str().to_owned());
            }
        }
        if let Some((_, sub)) = matches.subcommand() {
            Given::collect(sub, into);
        }
    }

    /// What `matches` say was written on the command line.
    pub fn from_matches(matches: &ArgMatches) -> Given {
        let mut ids = BTreeSet::new();
        Given::collect(matches, &mut ids);
        Given(ids)
    }
}

/// Parses `args` (the program's name first), as [`clap::Parser::try_parse_from`] does.
pub fn parse_from<I, T>(args: I) -> Result<Parsed, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let mut matches = Cli::command().try_get_matches_from(args)?;
    let given = Given::from_matches(&matches);
    let cli = Cli::from_arg_matches_mut(&mut matches)?;
    Ok(Parsed { cli, given })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_not_given() {
        let p = parse_from(["solr-dedup", "run", "--input", "d", "--timeout", "60"]).unwrap();
        assert!(p.given.contains("input") && p.given.contains("timeout"));
        assert!(!p.given.contains("retries") && !p.given.contains("prefer_https"));
        let p = parse_from([
            "solr-dedup",
            "--config",
            "c.toml",
            "urls",
            "learn",
            "--out",
            "-",
        ])
        .unwrap();
        assert!(p.given.contains("config") && p.given.contains("out"));
        assert_eq!(
            p.cli.config.as_deref(),
            Some(std::path::Path::new("c.toml"))
        );
    }

    #[test]
    fn the_global_flag_goes_anywhere() {
        for args in [
            &["solr-dedup", "--config", "c.toml", "signature", "-"][..],
            &["solr-dedup", "signature", "--config", "c.toml", "-"],
            &["solr-dedup", "signature", "-", "--config", "c.toml"],
        ] {
            let p = parse_from(args).unwrap();
            assert_eq!(
                p.cli.config.as_deref(),
                Some(std::path::Path::new("c.toml")),
                "{args:?}"
            );
            assert!(p.given.contains("config"), "{args:?}");
        }
    }
}
