//! The character tables of step 1 (see the parent module), read from `unicode/near-v1.txt`: which
//! characters make words, their lower-case images, the classes the final-sigma rule reads, and the
//! white space that makes a text blank. The Solr plugin (`solr-plugin/`) reads the same file, so
//! that neither side's signatures move with its runtime's Unicode version
//! (`examples/unicode_tables.rs` wrote it; the tests below hold it to its sources).

use std::sync::OnceLock;

/// The file, as checked in.
pub(crate) const SOURCE: &str = include_str!("../../../unicode/near-v1.txt");

/// The parsed tables.
struct Tables {
    word: Vec<(u32, u32)>,
    /// Sorted by the character: its image (1 to 3 characters).
    lower: Vec<(u32, Vec<char>)>,
    ignorable: Vec<(u32, u32)>,
    cased: Vec<(u32, u32)>,
    space: Vec<(u32, u32)>,
}

fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| parse(SOURCE))
}

fn parse(source: &str) -> Tables {
    let mut t = Tables {
        word: Vec::new(),
        lower: Vec::new(),
        ignorable: Vec::new(),
        cased: Vec::new(),
        space: Vec::new(),
    };
    let mut section = "";
    let hex = |s: &str| u32::from_str_radix(s, 16).expect("unicode/near-v1.txt: hex code points");
    for line in source.lines() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[') {
            section = name.trim_end_matches(']');
            continue;
        }
        let mut fields = line.split(' ').map(hex);
        let first = fields.next().expect("a code point");
        let rest: Vec<u32> = fields.collect();
        let list = match section {
            "lower" => {
                let image = rest
                    .iter()
                    .map(|&c| char::from_u32(c).expect("a character"));
                t.lower.push((first, image.collect()));
                continue;
            }
            "word" => &mut t.word,
            "ignorable" => &mut t.ignorable,
            "cased" => &mut t.cased,
            "space" => &mut t.space,
            other => panic!("unicode/near-v1.txt: unknown section {other}"),
        };
        list.push((first, rest[0]));
    }
    t
}

fn within(ranges: &[(u32, u32)], c: char) -> bool {
    let c = c as u32;
    ranges
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Whether `c` makes words: general category `L*` or `Nd`.
pub(crate) fn is_word_char(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric();
    }
    within(&tables().word, c)
}

/// Whether `text` is blank: empty or white space only.
pub fn is_blank(text: &str) -> bool {
    let space = &tables().space;
    text.chars().all(|c| within(space, c))
}

/// A token lower-cased as `str::to_lowercase` does (the full mappings, final sigma included), by
/// the tables. `token` holds word characters only, which is all the tables know.
pub(crate) fn lowercase(token: &str) -> String {
    let t = tables();
    let mut out = String::with_capacity(token.len());
    for (i, c) in token.char_indices() {
        if c == 'Σ' {
            // Final when a cased character precedes (skipping ignorable ones) and none follows.
            let before = cased_then(t, token[..i].chars().rev());
            let after = cased_then(t, token[i + c.len_utf8()..].chars());
            out.push(if before && !after { 'ς' } else { 'σ' });
            continue;
        }
        match t.lower.binary_search_by_key(&(c as u32), |(from, _)| *from) {
            Ok(at) => out.extend(&t.lower[at].1),
            Err(_) => out.push(c),
        }
    }
    out
}

/// Whether the first character of `chars` that is not case-ignorable is cased.
fn cased_then(t: &Tables, mut chars: impl Iterator<Item = char>) -> bool {
    chars
        .find(|&c| !within(&t.ignorable, c))
        .is_some_and(|c| within(&t.cased, c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use unicode_general_category::{get_general_category, GeneralCategory};

    fn all_chars() -> impl Iterator<Item = char> {
        (0..=0x10FFFFu32).filter_map(char::from_u32)
    }

    #[test]
    fn the_word_characters_are_the_crates_categories() {
        // The crate's version is pinned by Cargo.lock, so this holds on every compiler.
        use GeneralCategory::*;
        for c in all_chars() {
            let category = matches!(
                get_general_category(c),
                UppercaseLetter
                    | LowercaseLetter
                    | TitlecaseLetter
                    | ModifierLetter
                    | OtherLetter
                    | DecimalNumber
            );
            assert_eq!(is_word_char(c), category, "{c:?} U+{:04X}", c as u32);
        }
    }

    /// The Unicode version of the compiler that wrote the lower-case tables (their header).
    fn written_under() -> String {
        let line = SOURCE.lines().nth(2).expect("the header");
        let at = line.find("Unicode ").expect("a version") + "Unicode ".len();
        line[at..].split(')').next().expect("a version").to_owned()
    }

    #[test]
    fn the_mappings_are_the_standard_librarys_of_their_version() {
        let (a, b, c) = char::UNICODE_VERSION;
        if written_under() != format!("{a}.{b}.{c}") {
            // Another compiler: its std may differ, and the tables are what stays.
            eprintln!(
                "skipped: the tables are of Unicode {}, this std of {a}.{b}.{c}",
                written_under()
            );
            return;
        }
        for c in all_chars().filter(|&c| is_word_char(c)) {
            let alone = c.to_string();
            assert_eq!(
                lowercase(&alone),
                alone.to_lowercase(),
                "U+{:04X}",
                c as u32
            );
            // Beside a sigma both ways, and between letters.
            for s in [
                format!("{c}Σ"),
                format!("AΣ{c}"),
                format!("A{c}Σ"),
                format!("Σ{c}Σ"),
            ] {
                assert_eq!(lowercase(&s), s.to_lowercase(), "{s:?}");
            }
        }
        for c in all_chars() {
            assert_eq!(
                is_blank(&c.to_string()),
                c.is_whitespace(),
                "U+{:04X}",
                c as u32
            );
        }
    }

    #[test]
    fn final_sigma_and_expansions() {
        // Worked by the rule: final only after a cased letter and before none.
        assert_eq!(lowercase("ΟΔΟΣ"), "οδος");
        assert_eq!(lowercase("ΣΑ"), "σα");
        assert_eq!(lowercase("Σ"), "σ");
        assert_eq!(lowercase("İ"), "i\u{307}");
        assert!(is_blank(" \t\u{3000}"));
        assert!(is_blank(""));
        assert!(!is_blank(" a"));
    }
}
