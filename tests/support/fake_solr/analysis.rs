//! Text analysis for `text_general`: a standard tokenizer (the word rules of Unicode UAX #29 that
//! matter for Latin text: letters and digits join across `_`, a letter-`:`/`.`/`'`-letter joins,
//! a digit-`,`/`.`-digit joins) followed by lower-casing, at index and query time alike.
//!
//! | input | tokens |
//! |---|---|
//! | `Some Title: with colon` | `some`, `title`, `with`, `colon` |
//! | `example.com/a` | `example.com`, `a` |
//! | `3.14, 2,5 don't foo_bar` | `3.14`, `2,5`, `don't`, `foo_bar` |

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Letter,
    Digit,
    Connector,
    MidLetter,
    MidNum,
    MidNumLet,
    Quote,
    Other,
}

fn class(c: char) -> Class {
    match c {
        '_'
        | '\u{203f}'
        | '\u{2040}'
        | '\u{2054}'
        | '\u{fe33}'
        | '\u{fe34}'
        | '\u{fe4d}'..='\u{fe4f}'
        | '\u{ff3f}' => Class::Connector,
        ':' | '\u{b7}' | '\u{387}' | '\u{5f4}' | '\u{2027}' | '\u{fe13}' | '\u{fe55}'
        | '\u{ff1a}' => Class::MidLetter,
        ',' | ';' | '\u{37e}' | '\u{589}' | '\u{60c}' | '\u{60d}' | '\u{66c}' | '\u{7f8}'
        | '\u{2044}' | '\u{fe10}' | '\u{fe14}' | '\u{fe50}' | '\u{fe54}' | '\u{ff0c}'
        | '\u{ff1b}' => Class::MidNum,
        '.' | '\u{2018}' | '\u{2019}' | '\u{2024}' | '\u{fe52}' | '\u{ff07}' | '\u{ff0e}' => {
            Class::MidNumLet
        }
        '\'' => Class::Quote,
        c if c.is_numeric() => Class::Digit,
        c if c.is_alphabetic() => Class::Letter,
        _ => Class::Other,
    }
}

fn is_word(c: Class) -> bool {
    matches!(c, Class::Letter | Class::Digit | Class::Connector)
}

/// Tokens of `text` as the standard tokenizer cuts them, before lower-casing.
pub fn tokenize_raw(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let classes: Vec<Class> = chars.iter().map(|&c| class(c)).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !is_word(classes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        loop {
            if i < chars.len() && is_word(classes[i]) {
                i += 1;
                continue;
            }
            // A single middle character joins two letters or two digits.
            if i + 1 < chars.len() {
                let prev = classes[i - 1];
                let mid = classes[i];
                let next = classes[i + 1];
                let letters = prev == Class::Letter
                    && next == Class::Letter
                    && matches!(mid, Class::MidLetter | Class::MidNumLet | Class::Quote);
                let digits = prev == Class::Digit
                    && next == Class::Digit
                    && matches!(mid, Class::MidNum | Class::MidNumLet | Class::Quote);
                if letters || digits {
                    i += 2;
                    continue;
                }
            }
            break;
        }
        let token: String = chars[start..i].iter().collect();
        if token.chars().any(|c| c.is_alphanumeric()) {
            out.push(token);
        }
    }
    out
}

/// Tokens of `text`, lower-cased: what a `text_general` field indexes.
pub fn analyze(text: &str) -> Vec<String> {
    tokenize_raw(text)
        .into_iter()
        .map(|t| t.to_lowercase())
        .collect()
}
