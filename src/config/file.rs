//! The configuration file: one TOML file every command reads, so that a timer's `run` and a
//! long-running `serve` decide under the same settings (issue 42).
//!
//! ```text
//! --config FILE ─┐
//! SOLR_DEDUP_CONFIG ─┼─▶ path ──▶ load() ──▶ FileConfig ──▶ cli::resolve: flag > environment > file > default
//! default path ──┘  ($CONFIGURATION_DIRECTORY/config.toml, $XDG_CONFIG_HOME/solr-dedup/config.toml,
//!                    ~/.config/solr-dedup/config.toml)
//! ```
//!
//! Keys are the long flags' names without the dashes (`max-line-bytes`, `prefer-https`), in five
//! sections by what they are about: `[index]` (where the documents are), `[solr]` (how to talk to
//! a core), `[decide]` (everything that changes the signatures or who stays), `[run]` and
//! `[serve]`. Values take the flags' syntax (`memory = "1G"`, `every = "6h"`,
//! `commit = "within:10000"`) and their limits, checked here while parsing so that a bad value is
//! reported with its line; a key this file does not know is refused by name, so a misspelt setting
//! never passes silently as a default. The file holds no secret: credentials and serve's token
//! only through `auth-file` and `token-file`, paths to files of their own.
//!
//! Nothing here knows the command line: [`crate::cli`] lays a loaded file under the flags the user
//! gave, and the environment over it, in its one resolver.

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;

use super::value;
use super::ConfigError;
use crate::model::{Dimension, YACY_NAMES};
use crate::store::CommitMode;

/// The file's settings, every one optional: what is left out falls through to the built-in default.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct FileConfig {
    /// `[index]`: where the documents are and which of them count.
    #[serde(default)]
    pub index: IndexSection,
    /// `[solr]`: how to talk to the core.
    #[serde(default)]
    pub solr: SolrSection,
    /// `[decide]`: what decides the signatures, the groups and which member stays.
    #[serde(default)]
    pub decide: DecideSection,
    /// `[run]`: how `run` (and serve's runs) write and what they keep.
    #[serde(default)]
    pub run: RunSection,
    /// `[serve]`: the server.
    #[serde(default)]
    pub serve: ServeSection,
}

/// `[index]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct IndexSection {
    /// `--solr`: the core's URL.
    pub solr: Option<String>,
    /// `--input`: a file of documents instead of a core.
    pub input: Option<PathBuf>,
    /// `--filter`.
    pub filter: Option<String>,
    /// `--field NAME=FIELD`, as a table `NAME = "FIELD"`.
    #[serde(default, deserialize_with = "renames")]
    pub field: BTreeMap<String, String>,
    /// `--max-line-bytes`.
    #[serde(default, deserialize_with = "bytes")]
    pub max_line_bytes: Option<u64>,
    /// `--batch-size`.
    #[serde(default, deserialize_with = "ranged::<1, 1_000_000, _>")]
    pub batch_size: Option<u64>,
}

/// `[solr]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SolrSection {
    /// `--timeout`, in seconds.
    #[serde(default, deserialize_with = "ranged::<1, 86_400, _>")]
    pub timeout: Option<u64>,
    /// `--retries`.
    #[serde(default, deserialize_with = "ranged::<0, 100, _>")]
    pub retries: Option<u64>,
    /// `--concurrency`.
    #[serde(default, deserialize_with = "ranged::<1, 64, _>")]
    pub concurrency: Option<u64>,
    /// `--auth-file`: a file with one line `user:password`.
    pub auth_file: Option<PathBuf>,
    /// `--max-response-bytes`.
    #[serde(default, deserialize_with = "ranged::<1024, { u64::MAX }, _>")]
    pub max_response_bytes: Option<u64>,
}

/// `[decide]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct DecideSection {
    /// `--dimensions`: a list, or one comma-separated string.
    #[serde(default, deserialize_with = "dimensions")]
    pub dimensions: Option<Vec<Dimension>>,
    /// `--scheme`.
    pub scheme: Option<SchemeName>,
    /// `--min-token-len`.
    pub min_token_len: Option<usize>,
    /// `--quant-rate`.
    #[serde(default, deserialize_with = "quant_rate")]
    pub quant_rate: Option<f32>,
    /// `--scope`.
    pub scope: Option<ScopeName>,
    /// `--prefer`.
    pub prefer: Option<PreferName>,
    /// `--compat`.
    pub compat: Option<CompatName>,
    /// `--prefer-https`.
    pub prefer_https: Option<bool>,
    /// `--prefer-www`.
    pub prefer_www: Option<bool>,
    /// `--fuzzy-min-words`.
    #[serde(default, deserialize_with = "ranged::<0, 1_000_000, _>")]
    pub fuzzy_min_words: Option<u64>,
    /// `--rules`: the URL rules file.
    pub rules: Option<PathBuf>,
    /// `--chrome`: the chrome model file.
    pub chrome: Option<PathBuf>,
    /// `--near-shingle`.
    #[serde(default, deserialize_with = "ranged::<1, 8, _>")]
    pub near_shingle: Option<u64>,
    /// `--near-hashes`.
    #[serde(default, deserialize_with = "ranged::<1, 64, _>")]
    pub near_hashes: Option<u64>,
    /// `--near-trials`.
    #[serde(default, deserialize_with = "ranged::<1, 16, _>")]
    pub near_trials: Option<u64>,
    /// `--near-agree`.
    #[serde(default, deserialize_with = "ranged::<1, 16, _>")]
    pub near_agree: Option<u64>,
}

/// `[run]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RunSection {
    /// `--commit`.
    #[serde(default, deserialize_with = "commit")]
    pub commit: Option<CommitMode>,
    /// `--memory`.
    #[serde(default, deserialize_with = "bytes")]
    pub memory: Option<u64>,
    /// `--temp-dir`.
    pub temp_dir: Option<PathBuf>,
    /// `--state-dir` (run's, check's and serve's).
    pub state_dir: Option<PathBuf>,
}

/// `[serve]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ServeSection {
    /// `--listen`.
    pub listen: Option<SocketAddr>,
    /// `--every`.
    #[serde(default, deserialize_with = "duration")]
    pub every: Option<Duration>,
    /// `--after-quiet`.
    #[serde(default, deserialize_with = "duration")]
    pub after_quiet: Option<Duration>,
    /// `--token-file`: a file whose first line is the bearer token.
    pub token_file: Option<PathBuf>,
    /// `--frame-ancestors`, a list of origins.
    #[serde(default, deserialize_with = "origins")]
    pub frame_ancestors: Option<Vec<String>>,
}

/// `scheme = "yacy" | "md5"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum SchemeName {
    Yacy,
    Md5,
}

/// `scope = "global" | "host"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum ScopeName {
    Global,
    Host,
}

/// `prefer = "canonical" | "yacy"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum PreferName {
    Canonical,
    Yacy,
}

/// `compat = "yacy"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum CompatName {
    Yacy,
}

/// How the file's path was chosen: what `config show` and error messages name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whence {
    /// `--config FILE`: it must exist.
    Flag,
    /// `SOLR_DEDUP_CONFIG`: it must exist.
    Env,
    /// The default path: a file that is not there is no error.
    Default,
}

impl fmt::Display for Whence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Whence::Flag => "--config",
            Whence::Env => "SOLR_DEDUP_CONFIG",
            Whence::Default => "the default path",
        })
    }
}

/// A configuration file as found: where it is (if anywhere) and what it says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Loaded {
    /// The file read, and how its path was chosen; `None` when there was none to read.
    pub path: Option<(PathBuf, Whence)>,
    /// The default path looked at and not found (for `config show`).
    pub missing_default: Option<PathBuf>,
    /// Its settings (all unset without a file).
    pub config: FileConfig,
}

impl Loaded {
    /// Reads the file at `path`, chosen as `whence` says: a default path that is not there gives
    /// an empty configuration, an explicit one is an error; so is a file that does not parse.
    pub fn read(path: &Path, whence: Whence) -> Result<Loaded, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if whence == Whence::Default && e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Loaded {
                    missing_default: Some(path.to_owned()),
                    ..Loaded::default()
                });
            }
            Err(source) => {
                return Err(ConfigError::ConfigFileUnreadable {
                    path: path.to_owned(),
                    whence,
                    source,
                })
            }
        };
        Ok(Loaded {
            path: Some((path.to_owned(), whence)),
            missing_default: None,
            config: parse(&text, path)?,
        })
    }

    /// The file's path, if one was read.
    pub fn file(&self) -> Option<&Path> {
        self.path.as_ref().map(|(p, _)| p.as_path())
    }
}

/// Parses the text of the file at `path` (named in errors, with the line and the key).
pub fn parse(text: &str, path: &Path) -> Result<FileConfig, ConfigError> {
    let config: FileConfig = toml::from_str(text).map_err(|e| {
        let (line, key) = match e.span() {
            Some(span) => locate(text, span.start),
            None => (None, None),
        };
        ConfigError::ConfigFile {
            path: path.to_owned(),
            line,
            key,
            message: e.message().trim().to_owned(),
        }
    })?;
    let conflict = |a: &str, b: &str, why: &str| ConfigError::ConfigFile {
        path: path.to_owned(),
        line: None,
        key: Some(a.to_owned()),
        message: format!("{a} and {b} cannot both be set{why}"),
    };
    if config.index.solr.is_some() && config.index.input.is_some() {
        return Err(conflict(
            "index.solr",
            "index.input",
            " (a core or a file, not both)",
        ));
    }
    if config.decide.compat.is_some() {
        for other in ["prefer", "fuzzy-min-words"] {
            let set = match other {
                "prefer" => config.decide.prefer.is_some(),
                _ => config.decide.fuzzy_min_words.is_some(),
            };
            if set {
                return Err(conflict(
                    "decide.compat",
                    &format!("decide.{other}"),
                    " (compat = \"yacy\" sets prefer and fuzzy-min-words)",
                ));
            }
        }
    }
    Ok(config)
}

/// The 1-based line of byte `offset` in `text`, and the `section.key` written on it (the key
/// before `=`, under the nearest `[section]` above).
fn locate(text: &str, offset: usize) -> (Option<usize>, Option<String>) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line_no = before.matches('\n').count() + 1;
    let line = text.lines().nth(line_no - 1).unwrap_or("");
    let section = before
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('[') && !line.trim().starts_with('['))
        .map(|l| l.trim_matches(['[', ']']).trim().to_owned());
    let key = line
        .split_once('=')
        .map(|(k, _)| k.trim().to_owned())
        .filter(|k| !k.is_empty() && !k.starts_with('['));
    let key = match (section, key) {
        (Some(s), Some(k)) => Some(format!("{s}.{k}")),
        (None, Some(k)) => Some(k),
        (Some(s), None) => Some(s),
        (None, None) => None,
    };
    (Some(line_no), key)
}

fn ranged<'de, const MIN: u64, const MAX: u64, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<u64>, D::Error> {
    let n = u64::deserialize(d)?;
    if (MIN..=MAX).contains(&n) {
        Ok(Some(n))
    } else if MAX == u64::MAX {
        Err(de::Error::custom(format!("{n} is less than {MIN}")))
    } else {
        Err(de::Error::custom(format!("{n} is not in {MIN} to {MAX}")))
    }
}

fn quant_rate<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f32>, D::Error> {
    value::check_quant_rate(f32::deserialize(d)?)
        .map(Some)
        .map_err(de::Error::custom)
}

/// A byte count as an integer, or as text with K, M or G (the flag's syntax).
fn bytes<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    struct Bytes;
    impl Visitor<'_> for Bytes {
        type Value = u64;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a byte count such as 1048576 or \"64M\"")
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
            value::parse_bytes(&v.to_string()).map_err(E::custom)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
            value::parse_bytes(&v.to_string()).map_err(E::custom)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
            value::parse_bytes(v).map_err(E::custom)
        }
    }
    d.deserialize_any(Bytes).map(Some)
}

fn duration<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    let text = String::deserialize(d)?;
    value::parse_duration(&text)
        .map(Some)
        .map_err(de::Error::custom)
}

fn commit<'de, D: Deserializer<'de>>(d: D) -> Result<Option<CommitMode>, D::Error> {
    let text = String::deserialize(d)?;
    value::parse_commit(&text)
        .map(Some)
        .map_err(de::Error::custom)
}

fn origins<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    Vec::<String>::deserialize(d)?
        .iter()
        .map(|o| value::parse_origin(o).map_err(de::Error::custom))
        .collect::<Result<_, _>>()
        .map(Some)
}

/// A table of renames, each checked where it is written: the name one the worker reads or writes,
/// the new name not empty.
fn renames<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, String>, D::Error> {
    #[derive(PartialEq, Eq, PartialOrd, Ord)]
    struct Name(String);
    impl<'de> Deserialize<'de> for Name {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let name = String::deserialize(d)?;
            if YACY_NAMES.contains(&name.as_str()) {
                Ok(Name(name))
            } else {
                Err(de::Error::custom(format!(
                    "unknown field '{name}'; renamable: {}",
                    YACY_NAMES.join(", ")
                )))
            }
        }
    }
    struct Field(String);
    impl<'de> Deserialize<'de> for Field {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let field = String::deserialize(d)?;
            if field.trim().is_empty() {
                return Err(de::Error::custom("no new name given"));
            }
            Ok(Field(field.trim().to_owned()))
        }
    }
    let map = BTreeMap::<Name, Field>::deserialize(d)?;
    Ok(map.into_iter().map(|(n, f)| (n.0, f.0)).collect())
}

/// `["exact", "fuzzy"]` or `"exact,fuzzy"`.
fn dimensions<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<Dimension>>, D::Error> {
    struct List;
    impl<'de> Visitor<'de> for List {
        type Value = Vec<Dimension>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a list of dimensions such as [\"exact\", \"fuzzy\"]")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Dimension::parse_list(v).map_err(E::custom)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut names = Vec::new();
            while let Some(name) = seq.next_element::<String>()? {
                names.push(name);
            }
            Dimension::parse_list(&names.join(",")).map_err(de::Error::custom)
        }
    }
    d.deserialize_any(List).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<FileConfig, String> {
        parse(text, Path::new("/etc/solr-dedup/config.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn an_empty_file_sets_nothing() {
        assert_eq!(parsed(""), Ok(FileConfig::default()));
    }

    #[test]
    fn every_section_takes_the_flags_syntax() {
        let c = parsed(
            r#"
            [index]
            solr = "http://127.0.0.1:8983/solr/collection1"
            filter = "host_s:example.org"
            max-line-bytes = "1M"
            batch-size = 500
            [index.field]
            sku = "url_s"

            [solr]
            timeout = 30
            retries = 0
            concurrency = 8
            auth-file = "/etc/solr-dedup/auth"
            max-response-bytes = 1048576

            [decide]
            dimensions = "exact,near"
            scheme = "md5"
            quant-rate = 0.25
            prefer = "yacy"
            prefer-www = false
            fuzzy-min-words = 0
            rules = "/var/lib/solr-dedup/rules.json"
            near-hashes = 12
            scope = "host"

            [run]
            commit = "within:10000"
            memory = "1G"

            [serve]
            listen = "0.0.0.0:8987"
            every = "6h"
            after-quiet = "10m"
            frame-ancestors = ["http://console.example:8090"]
            "#,
        )
        .unwrap();
        assert_eq!(c.index.max_line_bytes, Some(1 << 20));
        assert_eq!(c.index.field["sku"], "url_s");
        assert_eq!(c.solr.retries, Some(0));
        assert_eq!(
            c.decide.dimensions,
            Some(vec![Dimension::Exact, Dimension::Near])
        );
        assert_eq!(c.decide.scheme, Some(SchemeName::Md5));
        assert_eq!(c.decide.prefer, Some(PreferName::Yacy));
        assert_eq!(c.decide.prefer_www, Some(false));
        assert_eq!(c.decide.scope, Some(ScopeName::Host));
        assert_eq!(c.run.commit, Some(CommitMode::Within(10_000)));
        assert_eq!(c.run.memory, Some(1 << 30));
        assert_eq!(c.serve.every, Some(Duration::from_secs(6 * 3600)));
        assert_eq!(c.serve.listen, Some("0.0.0.0:8987".parse().unwrap()));
        let list = parsed("[decide]\ndimensions = [\"www\", \"exact\"]\n").unwrap();
        assert_eq!(
            list.decide.dimensions,
            Some(vec![Dimension::Exact, Dimension::Www])
        );
    }

    #[test]
    fn a_misspelt_key_is_refused_by_name_and_line() {
        let err = parsed("[decide]\nscheme = \"yacy\"\nprefr = \"yacy\"\n").unwrap_err();
        assert!(
            err.starts_with("/etc/solr-dedup/config.toml:3: decide.prefr: "),
            "{err}"
        );
        assert!(err.contains("unknown field `prefr`"), "{err}");
        let err = parsed("[decde]\nprefer = \"yacy\"\n").unwrap_err();
        assert!(err.contains(":1:") && err.contains("`decde`"), "{err}");
    }

    #[test]
    fn a_bad_value_is_refused_with_its_line_and_key() {
        for (text, line, key, words) in [
            (
                "[solr]\ntimeout = 0\n",
                2,
                "solr.timeout",
                "0 is not in 1 to 86400",
            ),
            (
                "[decide]\nprefer = \"newest\"\n",
                2,
                "decide.prefer",
                "newest",
            ),
            (
                "[run]\nmemory = \"lots\"\n",
                2,
                "run.memory",
                "not a byte count",
            ),
            (
                "[run]\ncommit = \"sometimes\"\n",
                2,
                "run.commit",
                "within:MS",
            ),
            ("[serve]\nevery = \"1ms\"\n", 2, "serve.every", "too short"),
            (
                "\n[decide]\nquant-rate = -1.0\n",
                3,
                "decide.quant-rate",
                ">= 0",
            ),
            (
                "[decide]\ndimensions = \"exact,bogus\"\n",
                2,
                "decide.dimensions",
                "bogus",
            ),
            (
                "[index.field]\nnope = \"x\"\n",
                2,
                "index.field.nope",
                "renamable",
            ),
            (
                "[serve]\nframe-ancestors = [\"http://a/b\"]\n",
                2,
                "serve.frame-ancestors",
                "origin",
            ),
            (
                "[decide]\nprefer-https = \"yes\"\n",
                2,
                "decide.prefer-https",
                "bool",
            ),
        ] {
            let err = parsed(text).unwrap_err();
            let at = format!("config.toml:{line}: {key}: ");
            assert!(err.contains(&at), "{text:?}: {err}");
            assert!(err.contains(words), "{text:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        }
    }

    #[test]
    fn settings_that_exclude_each_other_are_refused() {
        let err = parsed("[index]\nsolr = \"http://h/solr/c\"\ninput = \"d.jsonl\"\n").unwrap_err();
        assert!(err.contains("index.solr and index.input"), "{err}");
        let err = parsed("[decide]\ncompat = \"yacy\"\nprefer = \"canonical\"\n").unwrap_err();
        assert!(err.contains("decide.compat and decide.prefer"), "{err}");
    }

    #[test]
    fn the_guides_example_parses_with_the_defaults_it_claims() {
        let guide = include_str!("../../docs/src/configuration.md");
        let start = guide
            .find("```toml\n# /etc/solr-dedup/config.toml\n")
            .expect("the guide has the example")
            + "```toml\n".len();
        let example = &guide[start..];
        let example = &example[..example.find("```").unwrap()];
        let c = parsed(example).unwrap();
        assert_eq!(c.index.max_line_bytes, Some(64 << 20));
        assert_eq!(c.solr.max_response_bytes, Some(256 << 20));
        assert_eq!(c.decide.near_hashes, Some(14));
        assert_eq!(c.run.memory, Some(256 << 20));
        assert_eq!(c.serve.after_quiet, Some(Duration::from_secs(600)));
        // And every other file the documentation shows.
        let pages = [guide, include_str!("../../docs/src/serve.md")];
        for block in pages.iter().flat_map(|p| p.split("```toml\n").skip(1)) {
            let block = &block[..block.find("```").unwrap()];
            parsed(block).unwrap_or_else(|e| panic!("{e}:\n{block}"));
        }
        let compose = parsed(include_str!("../../docker-compose.config.toml")).unwrap();
        assert!(compose.index.solr.is_some() && compose.serve.listen.is_some());
        // The release tarball's example, installed as /etc/solr-dedup/config.toml.
        let packaged = parsed(include_str!("../../packaging/config.toml")).unwrap();
        assert!(packaged.index.solr.is_some() && packaged.decide.rules.is_some());
        assert_eq!(
            packaged.serve.listen,
            Some("127.0.0.1:8987".parse().unwrap())
        );
    }

    #[test]
    fn broken_toml_names_the_line() {
        let err = parsed("[decide]\nprefer = yacy\n").unwrap_err();
        assert!(err.contains("config.toml:2:"), "{err}");
    }

    #[test]
    fn a_missing_default_file_is_no_error_but_a_missing_explicit_one_is() {
        let path = Path::new("/nonexistent/solr-dedup/config.toml");
        let loaded = Loaded::read(path, Whence::Default).unwrap();
        assert_eq!(loaded.config, FileConfig::default());
        assert_eq!(loaded.missing_default.as_deref(), Some(path));
        for whence in [Whence::Flag, Whence::Env] {
            let err = Loaded::read(path, whence).unwrap_err().to_string();
            assert!(err.contains("/nonexistent/solr-dedup/config.toml"), "{err}");
            assert!(err.contains(&whence.to_string()), "{err}");
        }
    }
}
