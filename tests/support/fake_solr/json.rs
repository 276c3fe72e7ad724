//! JSON the way Solr's noggit parser reads it: object keys keep their order (and may repeat, as in
//! `{"add":…,"add":…}`), numbers keep the text they were written with (so `9.0` stays apart from
//! `9` and `9223372036854775808` is not squeezed into an `i64`), and the relaxed forms Solr accepts
//! (bare words, single quotes, comments, trailing commas) parse. Errors carry noggit's wording and
//! positions, because Solr puts them verbatim into its error messages.
//!
//! The replay test uses the same type to read the transcripts without losing their key order and to
//! write request bodies exactly as the recorder did (Python's `json.dumps` defaults).

use std::fmt::Write as _;

/// A parsed JSON value with its object keys in document order.
#[derive(Clone, Debug, PartialEq)]
pub enum JVal {
    Null,
    Bool(bool),
    /// The number's text as written.
    Num(String),
    Str(String),
    Arr(Vec<JVal>),
    Obj(Vec<(String, JVal)>),
}

/// A parse error, worded as noggit words it (`Premature EOF: char=(EOF),position=10 AFTER='…'`).
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    pub message: String,
}

impl JVal {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            JVal::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The first value stored under `key` in an object.
    pub fn get(&self, key: &str) -> Option<&JVal> {
        match self {
            JVal::Obj(pairs) => pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            JVal::Num(n) => n.parse::<i64>().ok().or_else(|| {
                let f: f64 = n.parse().ok()?;
                Some(f as i64)
            }),
            JVal::Str(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            JVal::Bool(b) => Some(*b),
            JVal::Str(s) => match s.as_str() {
                "true" => Some(true),
                "false" => Some(false),
                _ => None,
            },
            _ => None,
        }
    }

    /// The value as a `serde_json` value. Integers that fit neither `i64` nor `u64` become floats.
    pub fn to_serde(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            JVal::Null => Value::Null,
            JVal::Bool(b) => Value::Bool(*b),
            JVal::Num(n) => {
                if is_integer_text(n) {
                    if let Ok(i) = n.parse::<i64>() {
                        return Value::from(i);
                    }
                    if let Ok(u) = n.parse::<u64>() {
                        return Value::from(u);
                    }
                }
                n.parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map(Value::Number)
                    .unwrap_or(Value::Null)
            }
            JVal::Str(s) => Value::String(s.clone()),
            JVal::Arr(items) => Value::Array(items.iter().map(JVal::to_serde).collect()),
            JVal::Obj(pairs) => {
                let mut map = serde_json::Map::new();
                for (k, v) in pairs {
                    map.entry(k.clone()).or_insert_with(|| v.to_serde());
                }
                Value::Object(map)
            }
        }
    }

    /// Converts a `serde_json` value (key order is whatever the map gives).
    pub fn from_serde(v: &serde_json::Value) -> JVal {
        use serde_json::Value;
        match v {
            Value::Null => JVal::Null,
            Value::Bool(b) => JVal::Bool(*b),
            Value::Number(n) => JVal::Num(n.to_string()),
            Value::String(s) => JVal::Str(s.clone()),
            Value::Array(a) => JVal::Arr(a.iter().map(JVal::from_serde).collect()),
            Value::Object(m) => JVal::Obj(
                m.iter()
                    .map(|(k, v)| (k.clone(), JVal::from_serde(v)))
                    .collect(),
            ),
        }
    }

    /// Compact JSON text (`,` and `:` without spaces).
    pub fn to_compact(&self) -> String {
        let mut out = String::new();
        write_json(self, &mut out, ",", ":", false);
        out
    }

    /// JSON text as Python's `json.dumps` writes it by default: `", "` and `": "` separators and
    /// every non-ASCII character escaped.
    pub fn to_python(&self) -> String {
        let mut out = String::new();
        write_json(self, &mut out, ", ", ": ", true);
        out
    }

    /// The value as Java's `toString` of the map/list Solr built from it (`{name=x, type=y}`), as
    /// Solr's schema API puts it into error messages.
    pub fn to_java_string(&self) -> String {
        match self {
            JVal::Null => "null".into(),
            JVal::Bool(b) => b.to_string(),
            JVal::Num(n) => n.clone(),
            JVal::Str(s) => s.clone(),
            JVal::Arr(items) => {
                let parts: Vec<String> = items.iter().map(JVal::to_java_string).collect();
                format!("[{}]", parts.join(", "))
            }
            JVal::Obj(pairs) => {
                let parts: Vec<String> = pairs
                    .iter()
                    .map(|(k, v)| format!("{k}={}", v.to_java_string()))
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
        }
    }
}

/// True for a number written without fraction or exponent.
pub fn is_integer_text(n: &str) -> bool {
    !n.contains(['.', 'e', 'E'])
}

fn write_json(v: &JVal, out: &mut String, comma: &str, colon: &str, ascii: bool) {
    match v {
        JVal::Null => out.push_str("null"),
        JVal::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        JVal::Num(n) => out.push_str(n),
        JVal::Str(s) => write_string(s, out, ascii),
        JVal::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(comma);
                }
                write_json(item, out, comma, colon, ascii);
            }
            out.push(']');
        }
        JVal::Obj(pairs) => {
            out.push('{');
            for (i, (k, item)) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push_str(comma);
                }
                write_string(k, out, ascii);
                out.push_str(colon);
                write_json(item, out, comma, colon, ascii);
            }
            out.push('}');
        }
    }
}

fn write_string(s: &str, out: &mut String, ascii: bool) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (ascii && (c as u32) > 0x7e) => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// How the text reaches the parser; it decides what noggit shows as context at the end of input.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A whole string (JSON request bodies, `json.facet`): the context shows the text before the error.
    Text,
    /// A stream (the `/update` loader): at the end of input the buffer is empty, so `AFTER=''`.
    Stream,
}

/// Parses exactly one value (surrounding whitespace and comments allowed).
pub fn parse(text: &str) -> Result<JVal, ParseError> {
    let mut p = Parser::new(text, Source::Text);
    p.skip_ws();
    let v = p.value().map_err(|(e, _)| e)?;
    p.skip_ws();
    if p.pos < p.chars.len() {
        return Err(p.err(Some("Unexpected characters after the value")));
    }
    Ok(v)
}

/// Parses a sequence of top-level values, as the `/update` loader reads its stream. On an error,
/// the values before it are returned, plus whatever complete items the broken value held
/// (complete array elements or object members), as noggit's streaming would have handed them on.
pub fn parse_stream(text: &str) -> (Vec<JVal>, Option<ParseError>) {
    let mut p = Parser::new(text, Source::Stream);
    let mut out = Vec::new();
    loop {
        p.skip_ws();
        if p.pos >= p.chars.len() {
            return (out, None);
        }
        if p.peek() == Some(',') {
            p.pos += 1;
            continue;
        }
        match p.value() {
            Ok(v) => out.push(v),
            Err((e, partial)) => {
                if let Some(v) = partial {
                    out.push(v);
                }
                return (out, Some(e));
            }
        }
    }
}

type PResult = Result<JVal, (ParseError, Option<JVal>)>;

struct Parser {
    chars: Vec<char>,
    pos: usize,
    source: Source,
}

impl Parser {
    fn new(text: &str, source: Source) -> Parser {
        Parser {
            chars: text.chars().collect(),
            pos: 0,
            source,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn err(&self, msg: Option<&str>) -> ParseError {
        let at_eof = self.pos >= self.chars.len();
        let ch = match self.peek() {
            None => "(EOF)".to_string(),
            Some(c) if (' '..='~').contains(&c) => format!("'{c}'({})", c as u32),
            Some(c) => format!("({})", c as u32),
        };
        let msg = msg.unwrap_or(if at_eof {
            "Unexpected EOF"
        } else {
            "JSON Parse Error"
        });
        let mut context = String::new();
        if !(at_eof && self.source == Source::Stream) {
            let from = self.pos.saturating_sub(30);
            let after: String = self.chars[from..self.pos].iter().collect();
            let _ = write!(context, " AFTER='{after}'");
        } else {
            context.push_str(" AFTER=''");
        }
        if !at_eof {
            let to = (self.pos + 30).min(self.chars.len());
            let before: String = self.chars[self.pos..to].iter().collect();
            let _ = write!(context, " BEFORE='{before}'");
        }
        ParseError {
            message: format!("{msg}: char={ch},position={}{context}", self.pos),
        }
    }

    fn skip_ws(&mut self) {
        loop {
            match self.peek() {
                Some(c) if c.is_whitespace() => self.pos += 1,
                Some('/') if self.chars.get(self.pos + 1) == Some(&'*') => {
                    self.pos += 2;
                    while self.pos < self.chars.len()
                        && !(self.chars[self.pos] == '*'
                            && self.chars.get(self.pos + 1) == Some(&'/'))
                    {
                        self.pos += 1;
                    }
                    self.pos = (self.pos + 2).min(self.chars.len());
                }
                Some('/') if self.chars.get(self.pos + 1) == Some(&'/') => {
                    while self.pos < self.chars.len() && self.chars[self.pos] != '\n' {
                        self.pos += 1;
                    }
                }
                Some('#') => {
                    while self.pos < self.chars.len() && self.chars[self.pos] != '\n' {
                        self.pos += 1;
                    }
                }
                _ => return,
            }
        }
    }

    fn value(&mut self) -> PResult {
        self.skip_ws();
        match self.peek() {
            None => Err((self.err(Some("Premature EOF")), None)),
            Some('{') => self.object(),
            Some('[') => self.array(),
            Some('"') | Some('\'') => self.string().map(JVal::Str).map_err(|e| (e, None)),
            Some(c) if c == '-' || c.is_ascii_digit() => Ok(self.number()),
            Some(c) if is_bare_char(c) => {
                let word = self.bare_word();
                Ok(match word.as_str() {
                    "true" => JVal::Bool(true),
                    "false" => JVal::Bool(false),
                    "null" => JVal::Null,
                    _ => JVal::Str(word),
                })
            }
            Some(_) => Err((self.err(None), None)),
        }
    }

    fn number(&mut self) -> JVal {
        let start = self.pos;
        if self.peek() == Some('-') {
            self.pos += 1;
        }
        while let Some(c) = self.peek() {
            if c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-') {
                self.pos += 1;
            } else {
                break;
            }
        }
        // A number glued to letters (`12abc`) is a bare word to noggit's relaxed mode.
        if matches!(self.peek(), Some(c) if is_bare_char(c)) {
            self.pos = start;
            return JVal::Str(self.bare_word());
        }
        JVal::Num(self.chars[start..self.pos].iter().collect())
    }

    fn bare_word(&mut self) -> String {
        let start = self.pos;
        while matches!(self.peek(), Some(c) if is_bare_char(c) || c == '-' || c == '.') {
            self.pos += 1;
        }
        self.chars[start..self.pos].iter().collect()
    }

    fn string(&mut self) -> Result<String, ParseError> {
        let quote = self.chars[self.pos];
        self.pos += 1;
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.err(Some("Premature EOF")));
            };
            self.pos += 1;
            if c == quote {
                return Ok(out);
            }
            if c != '\\' {
                out.push(c);
                continue;
            }
            let Some(e) = self.peek() else {
                return Err(self.err(Some("Premature EOF")));
            };
            self.pos += 1;
            match e {
                'n' => out.push('\n'),
                'r' => out.push('\r'),
                't' => out.push('\t'),
                'b' => out.push('\u{8}'),
                'f' => out.push('\u{c}'),
                'u' => {
                    let hex: String = self.chars[self.pos..(self.pos + 4).min(self.chars.len())]
                        .iter()
                        .collect();
                    let Ok(unit) = u16::from_str_radix(&hex, 16) else {
                        return Err(self.err(Some("invalid unicode escape")));
                    };
                    self.pos += 4;
                    if (0xd800..0xdc00).contains(&unit)
                        && self.chars.get(self.pos) == Some(&'\\')
                        && self.chars.get(self.pos + 1) == Some(&'u')
                    {
                        let hex2: String = self.chars
                            [self.pos + 2..(self.pos + 6).min(self.chars.len())]
                            .iter()
                            .collect();
                        if let Ok(low) = u16::from_str_radix(&hex2, 16) {
                            self.pos += 6;
                            out.extend(
                                char::decode_utf16([unit, low]).map(|r| r.unwrap_or('\u{fffd}')),
                            );
                            continue;
                        }
                    }
                    out.push(char::from_u32(unit as u32).unwrap_or('\u{fffd}'));
                }
                other => out.push(other),
            }
        }
    }

    fn key(&mut self) -> Result<String, ParseError> {
        match self.peek() {
            Some('"') | Some('\'') => self.string(),
            Some(c) if is_bare_char(c) || c.is_ascii_digit() || c == '-' => Ok(self.bare_word()),
            _ => Err(self.err(Some("Expected quoted string"))),
        }
    }

    fn object(&mut self) -> PResult {
        self.pos += 1;
        let mut pairs: Vec<(String, JVal)> = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                Some('}') => {
                    self.pos += 1;
                    return Ok(JVal::Obj(pairs));
                }
                Some(',') => {
                    self.pos += 1;
                    continue;
                }
                _ => {}
            }
            let key = match self.key() {
                Ok(k) => k,
                Err(e) => return Err((e, Some(JVal::Obj(pairs)))),
            };
            self.skip_ws();
            if self.peek() == Some(':') || self.peek() == Some('=') {
                self.pos += 1;
            } else {
                return Err((
                    self.err(Some("Expected key,value separator ':'")),
                    Some(JVal::Obj(pairs)),
                ));
            }
            match self.value() {
                Ok(v) => pairs.push((key, v)),
                Err((e, _)) => return Err((e, Some(JVal::Obj(pairs)))),
            }
            self.skip_ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some('}') => {}
                None => return Err((self.err(Some("Premature EOF")), Some(JVal::Obj(pairs)))),
                Some(_) => {
                    return Err((
                        self.err(Some("Expected ',' or '}'")),
                        Some(JVal::Obj(pairs)),
                    ))
                }
            }
        }
    }

    fn array(&mut self) -> PResult {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                Some(']') => {
                    self.pos += 1;
                    return Ok(JVal::Arr(items));
                }
                Some(',') => {
                    self.pos += 1;
                    continue;
                }
                _ => {}
            }
            match self.value() {
                Ok(v) => items.push(v),
                Err((e, _)) => return Err((e, Some(JVal::Arr(items)))),
            }
            self.skip_ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some(']') => {}
                None => return Err((self.err(Some("Premature EOF")), Some(JVal::Arr(items)))),
                Some(_) => {
                    return Err((
                        self.err(Some("Expected ',' or ']'")),
                        Some(JVal::Arr(items)),
                    ))
                }
            }
        }
    }
}

fn is_bare_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$' || c == '*'
}

/// Byte position of the end of the first top-level object key, as noggit counts it for
/// `Unknown command 'x' at [N]`.
pub fn position_after_key(text: &str, key: &str) -> usize {
    let needle_dq = format!("\"{key}\"");
    let needle_sq = format!("'{key}'");
    let chars: Vec<char> = text.chars().collect();
    let s: String = chars.iter().collect();
    if let Some(i) = s.find(&needle_dq).or_else(|| s.find(&needle_sq)) {
        return s[..i].chars().count() + key.chars().count() + 2;
    }
    s.find(key)
        .map(|i| s[..i].chars().count() + key.chars().count())
        .unwrap_or(0)
}
