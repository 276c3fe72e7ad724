//! The `solr-dedup` binary: parse the command line, run the command, turn the outcome into an exit code.
//!
//! Every failure ends as one line on stderr, `solr-dedup: error: ` and the error chain, never a
//! backtrace; a closed stdout (`solr-dedup … | head`) counts as success.

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::CommandFactory;
use solr_dedup::cli::{self, Cli};
use solr_dedup::commands::{self, Exit, Failure};
use solr_dedup::config::Environment;

fn main() -> ExitCode {
    let parsed = match cli::parse_from(std::env::args_os()) {
        Ok(parsed) => parsed,
        Err(err) => return usage_error(&err),
    };
    let config = match cli::resolve(parsed, &Environment::capture()) {
        Ok(config) => config,
        Err(e) => {
            let failure = Failure::new(Exit::Usage, anyhow::Error::new(e));
            eprintln!("solr-dedup: error: {failure}");
            return failure.exit.into();
        }
    };
    match commands::run(config) {
        Ok(exit) => exit.into(),
        Err(failure) if failure.is_broken_pipe() => Exit::Ok.into(),
        Err(failure) => {
            eprintln!("solr-dedup: error: {failure}");
            failure.exit.into()
        }
    }
}

/// `--help` and `--version` print as clap renders them and succeed; a usage error becomes one line,
/// clap's message and its hints without the usage block, and exit code 2.
fn usage_error(err: &clap::Error) -> ExitCode {
    if matches!(
        err.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
    ) {
        // Printing help can only fail on a closed stdout, which is as good as success.
        let _ = err.print();
        return Exit::Ok.into();
    }
    let help = help_command();
    if err.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        let names: Vec<String> = Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        eprintln!(
            "solr-dedup: error: a subcommand is required ({}); try '{help}'",
            names.join(", ")
        );
        return Exit::Usage.into();
    }
    let rendered = err.to_string();
    let message: Vec<&str> = rendered
        .lines()
        .take_while(|line| !line.starts_with("Usage:") && !line.starts_with("For more information"))
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect();
    let message = message.join(" ");
    let message = message.strip_prefix("error: ").unwrap_or(&message);
    eprintln!("solr-dedup: error: {message}; try '{help}'");
    Exit::Usage.into()
}

/// `solr-dedup SUBCOMMAND --help` when the first argument names a subcommand, else `solr-dedup --help`.
fn help_command() -> String {
    let command = Cli::command();
    match std::env::args().nth(1) {
        Some(name) if command.find_subcommand(&name).is_some() => {
            format!("solr-dedup {name} --help")
        }
        _ => "solr-dedup --help".to_string(),
    }
}
