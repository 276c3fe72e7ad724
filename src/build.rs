//! What the binary was built from, as `--version`, `/api/status` and the `solr_dedup_build_info`
//! metric report it: the crate's version, the commit (`unknown` outside a git checkout) and the
//! build date (`SOURCE_DATE_EPOCH` when set), set by the build script.

/// The crate's version (`0.2.0`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The commit the binary was built from (12 hex digits), or `unknown`.
pub const COMMIT: &str = env!("SOLR_DEDUP_COMMIT");

/// The build date (`YYYY-MM-DD`, UTC).
pub const DATE: &str = env!("SOLR_DEDUP_BUILD_DATE");

/// `--version`'s text: `0.2.0 (COMMIT DATE)`.
pub const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("SOLR_DEDUP_COMMIT"),
    " ",
    env!("SOLR_DEDUP_BUILD_DATE"),
    ")"
);
