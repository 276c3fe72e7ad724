//! The subcommands, run on plain [`Config`], and how they end: an [`Exit`] code on success, a
//! [`Failure`] (an error plus the exit code it stands for) otherwise.
//!
//! Every error a command returns carries context saying what it was doing (`cannot read page.txt: …`),
//! because `main` prints the chain on one line and nothing else. An error converted with `?` from
//! [`anyhow::Error`] counts as a usage, configuration or input error (exit 2); a command that talks to
//! Solr gets a [`Failure`] with [`Exit::SolrUnreachable`] from `common::failure` when retries run
//! out. What every command shares (opening the index, loading the chrome model and the URL rules,
//! the mapping of errors to exit codes, logging, the runtime) is in `common`, which the commands
//! import and never each other for it.

pub mod chrome;
pub mod clean;
mod common;
mod interrupt;
pub mod job;
pub mod near;
mod progress;
pub mod schema;
pub mod serve;
pub mod signature;
pub mod urls;

use std::fmt;
use std::io;

use crate::config::Config;

/// The process exit codes, the contract scripts rely on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Exit {
    /// Done, nothing to report.
    Ok = 0,
    /// Finished, with problems: a check failed or documents were skipped.
    Problems = 1,
    /// A usage, configuration, schema or input error: nothing (or only part) was done.
    Usage = 2,
    /// Solr could not be reached after retries.
    SolrUnreachable = 3,
    /// Stopped by SIGINT (128 + 2, as a shell reports it).
    Interrupted = 130,
    /// Stopped by SIGTERM (128 + 15).
    Terminated = 143,
}

impl Exit {
    /// The numeric code.
    pub fn code(self) -> u8 {
        self as u8
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        std::process::ExitCode::from(exit.code())
    }
}

/// A command that failed: what went wrong, and which exit code that means.
#[derive(Debug)]
pub struct Failure {
    /// The exit code to end the process with.
    pub exit: Exit,
    /// The error, with context; printed with `{:#}`.
    pub error: anyhow::Error,
}

impl Failure {
    /// A failure with an explicit exit code.
    pub fn new(exit: Exit, error: anyhow::Error) -> Self {
        Failure { exit, error }
    }

    /// True when the failure is only that whoever read standard output went away (`solr-dedup … | head`);
    /// that is not an error for a command whose output is a stream.
    pub fn is_broken_pipe(&self) -> bool {
        self.error.chain().any(|cause| {
            cause
                .downcast_ref::<io::Error>()
                .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
        })
    }
}

impl From<anyhow::Error> for Failure {
    fn from(error: anyhow::Error) -> Self {
        Failure::new(Exit::Usage, error)
    }
}

impl fmt::Display for Failure {
    /// The error chain on one line: `{:#}` joins causes with `: `; a newline inside a message (from a
    /// file name, say) is flattened so the message stays one line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = format!("{:#}", self.error);
        f.write_str(&text.replace(['\r', '\n'], " "))
    }
}

/// Writes `text` (`what`, for messages) to standard output, or to a file: a regular file through a
/// temporary file beside it, renamed over it at the end, so that a failed or killed command never
/// leaves half a file; a symbolic link followed to its target; a special file (`/dev/null`, a FIFO)
/// streamed to, never replaced (see [`crate::store::file::target`]).
pub(crate) fn write_text(
    out: &crate::config::Input,
    text: &str,
    what: &str,
) -> Result<(), Failure> {
    use anyhow::Context;
    use std::io::Write;
    match out {
        crate::config::Input::Stdin => io::stdout()
            .lock()
            .write_all(text.as_bytes())
            .with_context(|| format!("cannot write {what} to standard output"))?,
        crate::config::Input::File(path) => {
            crate::store::file::target::write_whole(path, text.as_bytes())
                .with_context(|| format!("cannot write {what} to {}", path.display()))?;
        }
    }
    Ok(())
}

/// Writes `value` as pretty JSON and a newline to `out`, as [`write_text`] does: the summaries
/// of `--report` and the learnt files.
pub(crate) fn write_json(
    out: &crate::config::Input,
    value: &impl serde::Serialize,
    what: &str,
) -> Result<(), Failure> {
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|e| anyhow::anyhow!("cannot encode {what}: {e}"))?;
    text.push('\n');
    write_text(out, &text, what)
}

/// Runs the command `config` describes.
pub fn run(config: Config) -> Result<Exit, Failure> {
    if let Some((role, other, field)) = field_names(&config).and_then(|f| f.shared()) {
        return Err(anyhow::anyhow!(
            "--field maps {role} and {other} to the same field {field}; each needs a field of its own"
        )
        .into());
    }
    match config {
        Config::Job(c) => job::run(&c),
        Config::Schema(c) => schema::run(&c),
        Config::Signature(c) => signature::run(&c),
        Config::NearTable(c) => near::table(&c),
        Config::ChromeLearn(c) => chrome::run(&c),
        Config::UrlsLearn(c) => urls::learn(&c),
        Config::UrlsPredict(c) => urls::predict(&c),
        Config::UrlsCanonical(c) => urls::canonical(&c),
        Config::UrlsExport(c) => urls::export(&c),
        Config::Serve(c) => serve::run(&c),
        Config::Clean(c) => clean::run(&c),
        Config::Show(text) => {
            use std::io::Write as _;
            std::io::stdout()
                .write_all(text.as_bytes())
                .map_err(|e| anyhow::Error::new(e).context("cannot write the configuration"))?;
            Ok(Exit::Ok)
        }
    }
}

/// The field names a command uses, for the commands that take `--field`.
fn field_names(config: &Config) -> Option<&crate::model::FieldNames> {
    match config {
        Config::Job(c) => Some(&c.engine.fields),
        Config::Schema(c) => Some(&c.engine.fields),
        Config::ChromeLearn(c) => Some(&c.fields),
        Config::UrlsLearn(c) => Some(&c.fields),
        Config::UrlsPredict(c) => Some(&c.fields),
        Config::Serve(c) => Some(&c.job.engine.fields),
        Config::Clean(c) => Some(&c.fields),
        Config::Signature(_)
        | Config::NearTable(_)
        | Config::UrlsCanonical(_)
        | Config::UrlsExport(_)
        | Config::Show(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use anyhow::Context;

    use super::*;

    #[test]
    fn exit_codes_are_the_documented_numbers() {
        assert_eq!(Exit::Ok.code(), 0);
        assert_eq!(Exit::Problems.code(), 1);
        assert_eq!(Exit::Usage.code(), 2);
        assert_eq!(Exit::SolrUnreachable.code(), 3);
        assert_eq!(Exit::Interrupted.code(), 130);
        assert_eq!(Exit::Terminated.code(), 143);
    }

    #[test]
    fn a_broken_pipe_is_found_under_context() {
        let err = Err::<(), _>(io::Error::from(io::ErrorKind::BrokenPipe))
            .context("cannot write to stdout")
            .unwrap_err();
        assert!(Failure::from(err).is_broken_pipe());
        let other = Err::<(), _>(io::Error::from(io::ErrorKind::NotFound))
            .context("cannot read x")
            .unwrap_err();
        assert!(!Failure::from(other).is_broken_pipe());
    }

    #[test]
    fn a_failure_prints_its_chain_on_one_line() {
        let err = Err::<(), _>(io::Error::other("disk\nfull"))
            .context("cannot read a.txt")
            .unwrap_err();
        let failure = Failure::from(err);
        assert_eq!(failure.exit, Exit::Usage);
        assert_eq!(failure.to_string(), "cannot read a.txt: disk full");
    }
}
