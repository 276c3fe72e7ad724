//! The seven dimensions along which documents can be doubles, and why a document may sit one out.
//!
//! Every dimension gives a document zero or more 64-bit keys; a group is a connected component of
//! documents that share a key. The first six give at most one key, so a group is simply the
//! documents with equal keys. `near` gives C(T, A) combination keys per document (`neardup.md`), so
//! its groups are the connected components over shared keys; grouping, ranking and writing are the
//! same for all seven.

use std::fmt;
use std::str::FromStr;

/// One way of being a double.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dimension {
    /// Equal `exact_signature_l`: the same text.
    Exact,
    /// Equal `fuzzy_signature_l`: the same text profile.
    Fuzzy,
    /// Equal `title_exact_signature_l`.
    Title,
    /// Equal `description_exact_signature_l`.
    Description,
    /// The same URL up to a leading `www.` of the host.
    Www,
    /// The same URL up to http/https.
    Http,
    /// Near-duplicate text: at least A of T MinHash trials agree (a shared combination key).
    Near,
}

impl Dimension {
    /// Every dimension, in report order.
    pub const ALL: [Dimension; 7] = [
        Dimension::Exact,
        Dimension::Fuzzy,
        Dimension::Title,
        Dimension::Description,
        Dimension::Www,
        Dimension::Http,
        Dimension::Near,
    ];

    /// How many dimensions there are: the size of per-dimension arrays.
    pub const COUNT: usize = 7;

    /// The name used by `--dimensions` and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Dimension::Exact => "exact",
            Dimension::Fuzzy => "fuzzy",
            Dimension::Title => "title",
            Dimension::Description => "description",
            Dimension::Www => "www",
            Dimension::Http => "http",
            Dimension::Near => "near",
        }
    }

    /// Position in [`Dimension::ALL`]; indexes per-dimension arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// Whether the dimension compares content (and so honours `--scope host`).
    pub fn is_content(self) -> bool {
        !matches!(self, Dimension::Www | Dimension::Http)
    }

    /// Whether a copy count is written besides the flag (exact and fuzzy, as in YaCy's schema, and
    /// near).
    pub fn has_count(self) -> bool {
        matches!(self, Dimension::Exact | Dimension::Fuzzy | Dimension::Near)
    }

    /// Parses a comma-separated list such as `exact,fuzzy,www`.
    pub fn parse_list(text: &str) -> Result<Vec<Dimension>, DimensionError> {
        let mut out: Vec<Dimension> = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let d: Dimension = part.parse()?;
            if !out.contains(&d) {
                out.push(d);
            }
        }
        if out.is_empty() {
            return Err(DimensionError::Empty);
        }
        out.sort();
        Ok(out)
    }
}

impl fmt::Display for Dimension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A dimension list that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DimensionError {
    /// A name that is no dimension.
    #[error("unknown dimension '{0}': use a comma-separated list of exact,fuzzy,title,description,www,http,near")]
    Unknown(String),
    /// No dimension at all.
    #[error("--dimensions needs at least one of exact,fuzzy,title,description,www,http,near")]
    Empty,
}

impl FromStr for Dimension {
    type Err = DimensionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Dimension::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| DimensionError::Unknown(s.to_owned()))
    }
}

/// Why a document takes no part in a dimension. Such a document is never grouped and is written as
/// unique with a copy count of 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Exclusion {
    /// The text is empty or only white space (exact).
    EmptyText,
    /// The text profile has no token (fuzzy).
    EmptyProfile,
    /// No title (title).
    NoTitle,
    /// No description (description).
    NoDescription,
    /// No URL, or one that does not parse (www, http, and content dimensions under `--scope host`).
    NoUrl,
    /// A URL whose scheme is not http or https (http).
    NotHttp,
    /// The text has no word, so no shingle (near).
    NoWords,
    /// The text profile has fewer words than `--fuzzy-min-words` (fuzzy): a profile that short is
    /// shared by distinct pages.
    WeakProfile,
}

impl Exclusion {
    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Exclusion::EmptyText => "empty_text",
            Exclusion::EmptyProfile => "empty_profile",
            Exclusion::NoTitle => "no_title",
            Exclusion::NoDescription => "no_description",
            Exclusion::NoUrl => "no_url",
            Exclusion::NotHttp => "not_http",
            Exclusion::NoWords => "no_words",
            Exclusion::WeakProfile => "weak_profile",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_and_rejects_unknown_names() {
        assert_eq!(
            Dimension::parse_list("www, exact,www").unwrap(),
            vec![Dimension::Exact, Dimension::Www]
        );
        let err = Dimension::parse_list("exact,fuzy").unwrap_err();
        assert!(
            err.to_string().contains("unknown dimension 'fuzy'"),
            "{err}"
        );
        assert!(Dimension::parse_list(" , ").is_err());
    }
}
