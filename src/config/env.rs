//! The process's environment, read once: the one place in `src` that calls `std::env::var`.
//!
//! ```text
//! main ── Environment::capture() ──▶ cli::resolve(cli, &env) ──▶ Config (every fact settled)
//! ```
//!
//! Everything a command takes from its environment (the core's URL, credentials, serve's token,
//! whether standard error wants colours, the log filter, where state and the configuration file
//! are by default) is copied
//! into an [`Environment`] when the process starts, and configuration is resolved from it and the
//! command line in [`crate::cli`]. Nothing under [`crate::commands`] reads the environment, so a
//! test can resolve a configuration from a made-up environment ([`Environment::default`] is an
//! empty one). The configuration file ([`super::file`]) is found from here too, and read by the
//! same resolver.
//!
//! Secrets (`SOLR_PASSWORD`, `SOLR_DEDUP_TOKEN`) never show in `Debug`.

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;

/// What the environment says, as the process found it when it started.
#[derive(Clone, Default)]
pub struct Environment {
    /// `SOLR_URL`: the core when `--solr` is not given (blank counts as unset).
    pub solr_url: Option<String>,
    /// `SOLR_USER` (empty counts as unset).
    pub solr_user: Option<String>,
    /// `SOLR_PASSWORD` (empty counts as unset).
    pub solr_password: Option<String>,
    /// `SOLR_DEDUP_TOKEN`: serve's bearer token when `--token-file` is not given.
    pub token: Option<String>,
    /// `NO_COLOR` is set (no-color.org), to anything.
    pub no_color: bool,
    /// Standard error is a terminal (a person, not a log file, a pipe or journald).
    pub stderr_is_terminal: bool,
    /// `RUST_LOG`: log directives that replace the verbosity's.
    pub log_directives: Option<String>,
    /// `STATE_DIRECTORY` (systemd's `StateDirectory=`), non-empty.
    pub state_directory: Option<OsString>,
    /// `XDG_STATE_HOME`, non-empty.
    pub xdg_state_home: Option<OsString>,
    /// `HOME`, non-empty.
    pub home: Option<OsString>,
    /// `SOLR_DEDUP_CONFIG`: the configuration file when `--config` is not given (non-empty).
    pub config_file: Option<OsString>,
    /// `CONFIGURATION_DIRECTORY` (systemd's `ConfigurationDirectory=`), non-empty.
    pub configuration_directory: Option<OsString>,
    /// `XDG_CONFIG_HOME`, non-empty.
    pub xdg_config_home: Option<OsString>,
}

impl Environment {
    /// Reads the process's environment (once, in `main`).
    pub fn capture() -> Self {
        let text = |k: &str| std::env::var(k).ok();
        let path = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        Environment {
            solr_url: text("SOLR_URL").filter(|u| !u.trim().is_empty()),
            solr_user: text("SOLR_USER").filter(|u| !u.is_empty()),
            solr_password: text("SOLR_PASSWORD").filter(|p| !p.is_empty()),
            token: text("SOLR_DEDUP_TOKEN"),
            no_color: std::env::var_os("NO_COLOR").is_some(),
            stderr_is_terminal: std::io::IsTerminal::is_terminal(&std::io::stderr()),
            log_directives: text("RUST_LOG"),
            state_directory: path("STATE_DIRECTORY"),
            xdg_state_home: path("XDG_STATE_HOME"),
            home: path("HOME"),
            config_file: path("SOLR_DEDUP_CONFIG"),
            configuration_directory: path("CONFIGURATION_DIRECTORY"),
            xdg_config_home: path("XDG_CONFIG_HOME"),
        }
    }

    /// The state directory when `--state-dir` is not given: `$STATE_DIRECTORY` (systemd's
    /// `StateDirectory=`; the first of several), else `$XDG_STATE_HOME/solr-dedup`, else
    /// `~/.local/state/solr-dedup`, else `.solr-dedup-state` in the working directory.
    pub fn default_state_dir(&self) -> PathBuf {
        if let Some(d) = &self.state_directory {
            return first_listed(d);
        }
        if let Some(d) = &self.xdg_state_home {
            return PathBuf::from(d).join("solr-dedup");
        }
        if let Some(h) = &self.home {
            return PathBuf::from(h).join(".local/state/solr-dedup");
        }
        ".solr-dedup-state".into()
    }

    /// The configuration file when neither `--config` nor `SOLR_DEDUP_CONFIG` names one:
    /// `$CONFIGURATION_DIRECTORY/config.toml` (systemd's `ConfigurationDirectory=`; the first of
    /// several), else `$XDG_CONFIG_HOME/solr-dedup/config.toml`, else
    /// `~/.config/solr-dedup/config.toml`; `None` without any of them.
    pub fn default_config_file(&self) -> Option<PathBuf> {
        if let Some(d) = &self.configuration_directory {
            return Some(first_listed(d).join("config.toml"));
        }
        if let Some(d) = &self.xdg_config_home {
            return Some(PathBuf::from(d).join("solr-dedup/config.toml"));
        }
        self.home
            .as_ref()
            .map(|h| PathBuf::from(h).join(".config/solr-dedup/config.toml"))
    }

    /// How logs are written: `verbosity` (0 warnings, 1 info, 2 debug) unless `RUST_LOG` says
    /// otherwise; colours only for a terminal, and never with `NO_COLOR`.
    pub fn logging(&self, verbosity: u8) -> Logging {
        Logging {
            verbosity,
            colour: self.stderr_is_terminal && !self.no_color,
            directives: self.log_directives.clone(),
        }
    }
}

/// The first directory of a systemd list (`StateDirectory=` and `ConfigurationDirectory=` may name
/// several, separated by colons: the first is ours).
fn first_listed(list: &OsString) -> PathBuf {
    list.to_string_lossy()
        .split(':')
        .next()
        .unwrap_or("")
        .into()
}

impl fmt::Debug for Environment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hidden = |v: &Option<String>| v.as_ref().map(|_| "<hidden>");
        f.debug_struct("Environment")
            .field(
                "solr_url",
                &self
                    .solr_url
                    .as_deref()
                    .map(crate::solr_client::client::without_user_info),
            )
            .field("solr_user", &self.solr_user)
            .field("solr_password", &hidden(&self.solr_password))
            .field("token", &hidden(&self.token))
            .field("no_color", &self.no_color)
            .field("stderr_is_terminal", &self.stderr_is_terminal)
            .field("log_directives", &self.log_directives)
            .field("state_directory", &self.state_directory)
            .field("xdg_state_home", &self.xdg_state_home)
            .field("home", &self.home)
            .field("config_file", &self.config_file)
            .field("configuration_directory", &self.configuration_directory)
            .field("xdg_config_home", &self.xdg_config_home)
            .finish()
    }
}

/// How a command's logs are written to standard error, settled once.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Logging {
    /// 0 warnings, 1 info, 2 debug (`-v`, `-vv`).
    pub verbosity: u8,
    /// ANSI colours.
    pub colour: bool,
    /// `RUST_LOG`'s directives, which replace the verbosity's when they parse.
    pub directives: Option<String>,
}

impl Logging {
    /// The same, at least at `verbosity` (serve logs its requests' outcomes at info).
    pub fn at_least(&self, verbosity: u8) -> Logging {
        Logging {
            verbosity: self.verbosity.max(verbosity),
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_dir_falls_back_in_order() {
        let mut env = Environment::default();
        assert_eq!(env.default_state_dir(), PathBuf::from(".solr-dedup-state"));
        env.home = Some("/home/u".into());
        assert_eq!(
            env.default_state_dir(),
            PathBuf::from("/home/u/.local/state/solr-dedup")
        );
        env.xdg_state_home = Some("/x".into());
        assert_eq!(env.default_state_dir(), PathBuf::from("/x/solr-dedup"));
        env.state_directory = Some("/var/lib/a:/var/lib/b".into());
        assert_eq!(env.default_state_dir(), PathBuf::from("/var/lib/a"));
    }

    #[test]
    fn the_default_config_file_falls_back_in_order() {
        let mut env = Environment::default();
        assert_eq!(env.default_config_file(), None);
        env.home = Some("/home/u".into());
        assert_eq!(
            env.default_config_file(),
            Some(PathBuf::from("/home/u/.config/solr-dedup/config.toml"))
        );
        env.xdg_config_home = Some("/x".into());
        assert_eq!(
            env.default_config_file(),
            Some(PathBuf::from("/x/solr-dedup/config.toml"))
        );
        env.configuration_directory = Some("/etc/solr-dedup:/etc/other".into());
        assert_eq!(
            env.default_config_file(),
            Some(PathBuf::from("/etc/solr-dedup/config.toml"))
        );
    }

    #[test]
    fn secrets_stay_out_of_debug() {
        let env = Environment {
            solr_url: Some("http://u:pw1@h/solr/c".into()),
            solr_password: Some("pw2".into()),
            token: Some("tok3".into()),
            ..Environment::default()
        };
        let shown = format!("{env:?}");
        for secret in ["pw1", "pw2", "tok3"] {
            assert!(!shown.contains(secret), "{shown}");
        }
    }

    #[test]
    fn colours_need_a_terminal_and_no_no_color() {
        let mut env = Environment {
            stderr_is_terminal: true,
            ..Environment::default()
        };
        assert!(env.logging(0).colour);
        env.no_color = true;
        assert!(!env.logging(0).colour);
        env.no_color = false;
        env.stderr_is_terminal = false;
        assert!(!env.logging(0).colour);
    }
}
