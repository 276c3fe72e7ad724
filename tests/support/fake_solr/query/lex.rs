//! The lexer of Solr's standard query syntax, after its JavaCC grammar: a default mode and a
//! range mode (entered by `[` or `{`, left by `]` or `}`), JavaCC's token kinds with the images
//! its error messages print, and the lexical errors (`TokenMgrError`) the parser reports.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tk {
    Eof,
    And,
    Or,
    Not,
    Plus,
    Minus,
    BareOper,
    LParen,
    RParen,
    Colon,
    Star,
    Carat,
    Quoted,
    Term,
    FuzzySlop,
    PrefixTerm,
    WildTerm,
    RegexpTerm,
    RangeInStart,
    RangeExStart,
    LParams,
    Filter,
    Number,
    RangeTo,
    RangeInEnd,
    RangeExEnd,
    RangeQuoted,
    RangeGoop,
}

impl Tk {
    /// JavaCC's `tokenImage`.
    pub(super) fn image(self) -> &'static str {
        match self {
            Tk::Eof => "<EOF>",
            Tk::And => "<AND>",
            Tk::Or => "<OR>",
            Tk::Not => "<NOT>",
            Tk::Plus => "\"+\"",
            Tk::Minus => "\"-\"",
            Tk::BareOper => "<BAREOPER>",
            Tk::LParen => "\"(\"",
            Tk::RParen => "\")\"",
            Tk::Colon => "\":\"",
            Tk::Star => "\"*\"",
            Tk::Carat => "\"^\"",
            Tk::Quoted => "<QUOTED>",
            Tk::Term => "<TERM>",
            Tk::FuzzySlop => "<FUZZY_SLOP>",
            Tk::PrefixTerm => "<PREFIXTERM>",
            Tk::WildTerm => "<WILDTERM>",
            Tk::RegexpTerm => "<REGEXPTERM>",
            Tk::RangeInStart => "\"[\"",
            Tk::RangeExStart => "\"{\"",
            Tk::LParams => "<LPARAMS>",
            Tk::Filter => "\"filter(\"",
            Tk::Number => "<NUMBER>",
            Tk::RangeTo => "\"TO\"",
            Tk::RangeInEnd => "\"]\"",
            Tk::RangeExEnd => "\"}\"",
            Tk::RangeQuoted => "<RANGE_QUOTED>",
            Tk::RangeGoop => "<RANGE_GOOP>",
        }
    }
}

#[derive(Clone, Debug)]
pub(super) struct Token {
    pub(super) kind: Tk,
    pub(super) image: String,
    pub(super) begin: usize,
}

fn is_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\u{3000}')
}

fn is_term_start(c: char) -> bool {
    !is_ws(c)
        && !matches!(
            c,
            '+' | '-'
                | '!'
                | '('
                | ')'
                | ':'
                | '^'
                | '['
                | ']'
                | '"'
                | '{'
                | '}'
                | '~'
                | '*'
                | '?'
                | '\\'
                | '/'
        )
}

fn is_term_char(c: char) -> bool {
    is_term_start(c) || matches!(c, '-' | '+' | '/' | '!')
}

pub(super) struct Lexer {
    pub(super) chars: Vec<char>,
    pub(super) pos: usize,
    pub(super) in_range: bool,
}

/// A lexical error (JavaCC's `TokenMgrError`).
pub(super) struct LexError {
    pub(super) column: usize,
    pub(super) after: String,
}

impl Lexer {
    pub(super) fn next(&mut self) -> Result<Token, LexError> {
        while self.pos < self.chars.len() && is_ws(self.chars[self.pos]) {
            self.pos += 1;
        }
        let begin = self.pos;
        let Some(&c) = self.chars.get(self.pos) else {
            return Ok(Token {
                kind: Tk::Eof,
                image: String::new(),
                begin,
            });
        };
        let at = |i: usize| self.chars.get(i).copied();
        let tok = |kind: Tk, end: usize, lx: &mut Lexer| {
            let image: String = lx.chars[begin..end].iter().collect();
            lx.pos = end;
            Ok(Token { kind, image, begin })
        };
        if self.in_range {
            match c {
                ']' => {
                    self.in_range = false;
                    return tok(Tk::RangeInEnd, begin + 1, self);
                }
                '}' => {
                    self.in_range = false;
                    return tok(Tk::RangeExEnd, begin + 1, self);
                }
                '"' => {
                    let mut i = begin + 1;
                    while i < self.chars.len() && self.chars[i] != '"' {
                        if self.chars[i] == '\\' {
                            i += 1;
                        }
                        i += 1;
                    }
                    if i >= self.chars.len() {
                        return Err(self.lex_error(begin));
                    }
                    return tok(Tk::RangeQuoted, i + 1, self);
                }
                _ => {
                    let mut i = begin;
                    while i < self.chars.len()
                        && !matches!(self.chars[i], ' ' | ']' | '}')
                        && !is_ws(self.chars[i])
                    {
                        i += 1;
                    }
                    let kind = if i - begin == 2
                        && self.chars[begin] == 'T'
                        && self.chars[begin + 1] == 'O'
                    {
                        Tk::RangeTo
                    } else {
                        Tk::RangeGoop
                    };
                    return tok(kind, i, self);
                }
            }
        }
        match c {
            '&' if at(begin + 1) == Some('&') => tok(Tk::And, begin + 2, self),
            '|' if at(begin + 1) == Some('|') => tok(Tk::Or, begin + 2, self),
            '+' | '-' | '!' if at(begin + 1).is_some_and(is_ws) => {
                tok(Tk::BareOper, begin + 2, self)
            }
            '+' => tok(Tk::Plus, begin + 1, self),
            '-' => tok(Tk::Minus, begin + 1, self),
            '!' => tok(Tk::Not, begin + 1, self),
            '(' => tok(Tk::LParen, begin + 1, self),
            ')' => tok(Tk::RParen, begin + 1, self),
            ':' => tok(Tk::Colon, begin + 1, self),
            '^' => {
                let mut i = begin + 1;
                while i < self.chars.len()
                    && (self.chars[i].is_ascii_digit() || self.chars[i] == '.')
                {
                    i += 1;
                }
                tok(Tk::Carat, i, self)
            }
            '~' => {
                let mut i = begin + 1;
                while i < self.chars.len()
                    && (self.chars[i].is_ascii_digit() || self.chars[i] == '.')
                {
                    i += 1;
                }
                tok(Tk::FuzzySlop, i, self)
            }
            '"' => {
                let mut i = begin + 1;
                while i < self.chars.len() && self.chars[i] != '"' {
                    if self.chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                if i >= self.chars.len() {
                    return Err(self.lex_error(begin));
                }
                tok(Tk::Quoted, i + 1, self)
            }
            '[' => {
                self.in_range = true;
                tok(Tk::RangeInStart, begin + 1, self)
            }
            '{' if at(begin + 1) == Some('!') => {
                let mut i = begin + 2;
                let mut quote: Option<char> = None;
                while i < self.chars.len() {
                    let ch = self.chars[i];
                    match quote {
                        Some(q) if ch == q => quote = None,
                        Some(_) => {}
                        None if ch == '\'' || ch == '"' => quote = Some(ch),
                        None if ch == '}' => break,
                        None => {}
                    }
                    i += 1;
                }
                if i >= self.chars.len() {
                    return Err(self.lex_error(begin));
                }
                i += 1;
                while i < self.chars.len()
                    && !matches!(self.chars[i], ')' | ' ' | '\t' | '\n' | '{' | '^')
                {
                    i += 1;
                }
                tok(Tk::LParams, i, self)
            }
            '{' => {
                self.in_range = true;
                tok(Tk::RangeExStart, begin + 1, self)
            }
            '/' => {
                let mut i = begin + 1;
                while i < self.chars.len() && self.chars[i] != '/' {
                    if self.chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                if i >= self.chars.len() {
                    return Err(self.lex_error(begin));
                }
                tok(Tk::RegexpTerm, i + 1, self)
            }
            'f' if self.chars[begin..].starts_with(&['f', 'i', 'l', 't', 'e', 'r', '(']) => {
                tok(Tk::Filter, begin + 7, self)
            }
            c if is_term_start(c) || c == '\\' || c == '*' || c == '?' => {
                let mut i = begin;
                let mut wild = 0usize;
                let mut trailing_star_only = false;
                while i < self.chars.len() {
                    let ch = self.chars[i];
                    if ch == '\\' {
                        if i + 1 >= self.chars.len() {
                            return Err(self.lex_error(i + 1));
                        }
                        i += 2;
                        continue;
                    }
                    if ch == '*' || ch == '?' {
                        wild += 1;
                        trailing_star_only = ch == '*';
                        i += 1;
                        continue;
                    }
                    if (i == begin && is_term_start(ch)) || (i > begin && is_term_char(ch)) {
                        if wild > 0 {
                            trailing_star_only = false;
                        }
                        i += 1;
                        continue;
                    }
                    break;
                }
                let len = i - begin;
                let image: String = self.chars[begin..i].iter().collect();
                let kind = if c == '*' && len == 1 {
                    Tk::Star
                } else if image == "AND" {
                    Tk::And
                } else if image == "OR" {
                    Tk::Or
                } else if image == "NOT" {
                    Tk::Not
                } else if wild == 1 && trailing_star_only && c != '*' {
                    Tk::PrefixTerm
                } else if wild > 0 {
                    Tk::WildTerm
                } else {
                    Tk::Term
                };
                tok(kind, i, self)
            }
            _ => Err(self.lex_error(begin)),
        }
    }

    fn lex_error(&self, at: usize) -> LexError {
        LexError {
            column: at,
            after: self.chars[at.min(self.chars.len())..].iter().collect(),
        }
    }
}
