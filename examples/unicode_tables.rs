//! Writes the character tables the worker and the Solr plugin (`solr-plugin/`) share, so that both
//! tokenise by the same tables whatever their runtime's Unicode version:
//!
//! - `unicode/near-v1.txt`: near-duplicate tokens (definition version 1, `signature::near`): the
//!   word characters (general category `L*` or `Nd` as `unicode-general-category` has them), their
//!   full lower-case mappings and the two classes the final-sigma rule reads (as Rust's
//!   `str::to_lowercase` of the compiler that generated them has them), and the white space that
//!   makes a text blank (`char::is_whitespace`).
//! - `unicode/java17.txt`: the text profile's classes (`signature::java_chars`, generated from
//!   Java 17 by `tools/java-chars/GenJavaChars.java`), in the same plain form.
//!
//! These files are the definition: a change to them changes stored signatures, so they are written
//! once and checked in, and a test holds them to their sources where it still can. Run with
//! `cargo run --example unicode_tables` (it rewrites both files).

use std::fmt::Write as _;

use unicode_general_category::{get_general_category, GeneralCategory};

fn is_word(c: char) -> bool {
    use GeneralCategory::*;
    matches!(
        get_general_category(c),
        UppercaseLetter
            | LowercaseLetter
            | TitlecaseLetter
            | ModifierLetter
            | OtherLetter
            | DecimalNumber
    )
}

/// Whether `text` lower-cases to a string ending in final sigma.
fn final_sigma(text: &str) -> bool {
    text.to_lowercase().ends_with('ς')
}

/// The inclusive ranges of the code points in `0..=max` for which `f` holds.
fn ranges(max: u32, f: impl Fn(u32) -> bool) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for cp in 0..=max {
        if f(cp) {
            match out.last_mut() {
                Some((_, last)) if *last + 1 == cp => *last = cp,
                _ => out.push((cp, cp)),
            }
        }
    }
    out
}

fn section(out: &mut String, name: &str, ranges: &[(u32, u32)]) {
    writeln!(out, "[{name}]").unwrap();
    for (a, b) in ranges {
        writeln!(out, "{a:04X} {b:04X}").unwrap();
    }
}

fn near() -> String {
    let chars = |f: fn(char) -> bool| ranges(0x10FFFF, move |cp| char::from_u32(cp).is_some_and(f));
    let word = chars(is_word);
    // The final-sigma rule skips case-ignorable characters and then asks whether the next one is
    // cased; only word characters can stand beside a sigma inside a token. Probed through the rule
    // itself: "cΣ" ends in final sigma when c is cased and not ignorable, "AcΣ" also when c is
    // ignorable (skipped to the cased A).
    let ignorable = chars(|c| {
        is_word(c) && c != 'Σ' && !final_sigma(&format!("{c}Σ")) && final_sigma(&format!("A{c}Σ"))
    });
    let cased = chars(|c| is_word(c) && final_sigma(&format!("{c}Σ")));
    let space = chars(char::is_whitespace);
    let mut out = String::new();
    let (a, b, c) = char::UNICODE_VERSION;
    writeln!(
        out,
        "# solr-dedup near-duplicate tokens, definition version 1: written by examples/unicode_tables.rs, do not edit.\n\
         # word: general category L* or Nd (unicode-general-category 1.1, Unicode 16.0); lower: every word character\n\
         # whose full lower-case mapping differs (Rust's str::to_lowercase, Unicode {a}.{b}.{c}), first the character,\n\
         # then its image; ignorable and cased: the word characters the final-sigma rule skips, and those that make a\n\
         # sigma final; space: white space (char::is_whitespace). Code points in hex, ranges inclusive."
    )
    .unwrap();
    section(&mut out, "word", &word);
    writeln!(out, "[lower]").unwrap();
    for (lo, hi) in &word {
        for cp in *lo..=*hi {
            let Some(c) = char::from_u32(cp) else {
                continue;
            };
            let lower: Vec<char> = c.to_lowercase().collect();
            if lower != [c] {
                write!(out, "{cp:04X}").unwrap();
                for l in lower {
                    write!(out, " {:04X}", l as u32).unwrap();
                }
                out.push('\n');
            }
        }
    }
    section(&mut out, "ignorable", &ignorable);
    section(&mut out, "cased", &cased);
    section(&mut out, "space", &space);
    out
}

#[path = "../src/signature/java_chars.rs"]
#[allow(dead_code, unreachable_pub)]
mod java_chars;

fn java17() -> String {
    let mut out = String::new();
    writeln!(
        out,
        "# solr-dedup text-profile classes of Java 17 (Unicode 13.0): written by examples/unicode_tables.rs from\n\
         # src/signature/java_chars.rs (itself from tools/java-chars/GenJavaChars.java), do not edit.\n\
         # letter-or-digit: UTF-16 units for which Character.isLetterOrDigit(char) holds, ranges inclusive;\n\
         # lower: every unit Character.toLowerCase(char) changes, then its image. Hex."
    )
    .unwrap();
    let ranges: Vec<(u32, u32)> = java_chars::LETTER_OR_DIGIT
        .iter()
        .map(|&(a, b)| (u32::from(a), u32::from(b)))
        .collect();
    section(&mut out, "letter-or-digit", &ranges);
    writeln!(out, "[lower]").unwrap();
    for (from, to) in java_chars::TO_LOWER {
        writeln!(out, "{from:04X} {to:04X}").unwrap();
    }
    out
}

fn main() -> std::io::Result<()> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("unicode");
    std::fs::create_dir_all(&root)?;
    std::fs::write(root.join("near-v1.txt"), near())?;
    std::fs::write(root.join("java17.txt"), java17())?;
    println!("wrote {}", root.display());
    Ok(())
}
