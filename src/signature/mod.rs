//! Content signatures, bit-compatible with YaCy and Solr: pure functions, no I/O, no async.
//!
//! | signature                        | `yacy` scheme                         | `md5` scheme                          |
//! |----------------------------------|---------------------------------------|---------------------------------------|
//! | `exact_signature_l`              | lookup3ycs64 of the text              | MD5 of the UTF-8 text, folded to i64  |
//! | `fuzzy_signature_l`              | lookup3ycs64 of YaCy's text profile   | MD5 of Solr's `TextProfileSignature`  |
//! | `title_exact_signature_l`        | exact signature of the first title    | same                                  |
//! | `description_exact_signature_l`  | lookup3ycs64 chained over the values  | MD5 of the concatenated values        |
//!
//! Every value is a persisted hash that other systems compare with theirs, so each one is pinned by the
//! test vectors of `signatures.md` and by 460 profiles computed by Java (`tests/fixtures/`).
//!
//! ```
//! use solr_dedup::signature::{Scheme, Signer};
//!
//! let signer = Signer::new(Scheme::Yacy);
//! assert_eq!(signer.exact("hello world"), -6533976092579615214);
//! let profile = signer.profile("one two three");
//! assert_eq!(profile.profile_string(), "(three-1)");
//! ```

pub mod chrome;
mod java_chars;
pub mod java_hashmap;
pub mod lookup3;
pub mod near;
pub mod profile;

use md5::{Digest, Md5};

pub use lookup3::{lookup3ycs64, lookup3ycs64_chained};
pub use profile::{Profile, ProfileParams, ProfileToken};

/// Which family of hashes to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Scheme {
    /// lookup3ycs64 everywhere: what every YaCy index and Solr's `Lookup3Signature` hold.
    #[default]
    Yacy,
    /// MD5 folded to a long: the method of the YaCy wiki page and of Solr's `TextProfileSignature`.
    Md5,
}

impl Scheme {
    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Yacy => "yacy",
            Scheme::Md5 => "md5",
        }
    }
}

/// The first 8 bytes of `MD5(bytes)`, read big-endian as a signed long.
pub fn md5_long(bytes: &[u8]) -> i64 {
    let digest = Md5::digest(bytes);
    let mut head = [0u8; 8];
    head.copy_from_slice(&digest[..8]);
    i64::from_be_bytes(head)
}

/// Computes every signature of a document under one scheme and one set of profile parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Signer {
    /// The hash family.
    pub scheme: Scheme,
    /// The text-profile tunables.
    pub params: ProfileParams,
}

impl Signer {
    /// A signer with the scheme's default profile parameters.
    pub fn new(scheme: Scheme) -> Self {
        Signer {
            scheme,
            params: ProfileParams::defaults(scheme),
        }
    }

    /// `exact_signature_l` of a text (no normalisation).
    pub fn exact(&self, text: &str) -> i64 {
        match self.scheme {
            Scheme::Yacy => lookup3ycs64(text, 0),
            Scheme::Md5 => md5_long(text.as_bytes()),
        }
    }

    /// The text profile behind `fuzzy_signature_l` and `fuzzy_signature_text_t`.
    pub fn profile(&self, text: &str) -> Profile {
        Profile::new(text, self.scheme, self.params)
    }

    /// `title_exact_signature_l`: the exact signature of the first title, `None` without a title.
    pub fn title<S: AsRef<str>>(&self, titles: &[S]) -> Option<i64> {
        titles.first().map(|t| self.exact(t.as_ref()))
    }

    /// `description_exact_signature_l`: chained lookup3 (`yacy`) or MD5 of the concatenation (`md5`)
    /// over all values in order, `None` without a value.
    pub fn description<S: AsRef<str>>(&self, values: &[S]) -> Option<i64> {
        if values.is_empty() {
            return None;
        }
        Some(match self.scheme {
            Scheme::Yacy => lookup3ycs64_chained(values.iter().map(AsRef::as_ref)),
            Scheme::Md5 => {
                let mut md5 = Md5::new();
                for v in values {
                    md5.update(v.as_ref().as_bytes());
                }
                let digest = md5.finalize();
                let mut head = [0u8; 8];
                head.copy_from_slice(&digest[..8]);
                i64::from_be_bytes(head)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `unicode/java17.txt`, which the Solr plugin reads, holds the tables this crate tokenises by.
    #[test]
    fn the_plugins_java_tables_are_the_workers() {
        let text = include_str!("../../unicode/java17.txt");
        let (mut ranges, mut lower) = (Vec::new(), Vec::new());
        let mut section = "";
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            if let Some(name) = line.strip_prefix('[') {
                section = name.trim_end_matches(']');
                continue;
            }
            let (a, b) = line.split_once(' ').expect("two code units");
            let pair = (
                u16::from_str_radix(a, 16).unwrap(),
                u16::from_str_radix(b, 16).unwrap(),
            );
            match section {
                "letter-or-digit" => ranges.push(pair),
                "lower" => lower.push(pair),
                other => panic!("unknown section {other}"),
            }
        }
        assert_eq!(ranges, java_chars::LETTER_OR_DIGIT);
        assert_eq!(lower, java_chars::TO_LOWER);
    }

    #[test]
    fn md5_folding_is_big_endian_and_signed() {
        // MD5("") = d41d8cd98f00b204e9800998ecf8427e
        assert_eq!(md5_long(b""), 0xd41d8cd98f00b204u64 as i64);
        assert!(md5_long(b"") < 0);
    }

    #[test]
    fn title_uses_the_first_value_only() {
        let s = Signer::new(Scheme::Yacy);
        assert_eq!(
            s.title(&["hello world", "other"]),
            Some(-6533976092579615214)
        );
        assert_eq!(s.title::<&str>(&[]), None);
    }

    #[test]
    fn description_chains_in_yacy_and_concatenates_in_md5() {
        let yacy = Signer::new(Scheme::Yacy);
        assert_eq!(
            yacy.description(&["first description", "second description"]),
            Some(-6252947182592522076)
        );
        let md5 = Signer::new(Scheme::Md5);
        assert_eq!(md5.description(&["ab", "c"]), Some(md5_long(b"abc")));
        assert_eq!(md5.description::<&str>(&[]), None);
    }
}
