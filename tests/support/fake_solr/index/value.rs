//! One stored value ([`Val`]) and its conversions as Solr's Java code makes them: input to a
//! field's type (the coercions of the JSON loader and `DocumentBuilder`), Java's number parsing
//! and printing, and the order of values within a field.

use serde_json::Value;

use super::super::json::{is_integer_text, JVal};
use super::super::schema::{Kind, SField};

/// One stored value, typed by its field.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    Str(String),
    Long(i64),
    Int(i32),
    Bool(bool),
    Float(f32),
    Double(f64),
}

impl Val {
    /// The value in a JSON response.
    pub fn to_json(&self) -> Value {
        match self {
            Val::Str(s) => Value::String(s.clone()),
            Val::Long(v) => Value::from(*v),
            Val::Int(v) => Value::from(*v),
            Val::Bool(b) => Value::Bool(*b),
            Val::Float(f) => float_json(*f),
            Val::Double(d) => serde_json::Number::from_f64(*d)
                .map(Value::Number)
                .unwrap_or(Value::Null),
        }
    }

    /// The value as Java's `toString` prints it (facet values, error messages, sort marks).
    pub fn java_string(&self) -> String {
        match self {
            Val::Str(s) => s.clone(),
            Val::Long(v) => v.to_string(),
            Val::Int(v) => v.to_string(),
            Val::Bool(b) => b.to_string(),
            Val::Float(f) => java_float(*f as f64, format!("{f}")),
            Val::Double(d) => java_float(*d, format!("{d}")),
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Val::Long(v) => Some(*v as f64),
            Val::Int(v) => Some(*v as f64),
            Val::Float(f) => Some(*f as f64),
            Val::Double(d) => Some(*d),
            _ => None,
        }
    }
}

/// A float as Java prints it: always with a fraction.
fn java_float(v: f64, shortest: String) -> String {
    if v.is_finite() && v.fract() == 0.0 && !shortest.contains(['e', 'E', '.']) {
        format!("{shortest}.0")
    } else {
        shortest
    }
}

/// A Java `float` in JSON: the shortest text that reads back as the same float, as Java prints it.
pub fn float_json(f: f32) -> Value {
    let text = format!("{f}");
    let d: f64 = text.parse().unwrap_or(f as f64);
    serde_json::Number::from_f64(d)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

/// Order of values of one field.
pub fn compare_vals(a: &Val, b: &Val) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (a, b) {
        (Val::Str(x), Val::Str(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Val::Long(x), Val::Long(y)) => x.cmp(y),
        (Val::Int(x), Val::Int(y)) => x.cmp(y),
        (Val::Bool(x), Val::Bool(y)) => x.cmp(y),
        _ => a
            .as_f64()
            .zip(b.as_f64())
            .and_then(|(x, y)| x.partial_cmp(&y))
            .unwrap_or(Ordering::Equal),
    }
}

/// Java's `Long.parseLong`: optional sign, digits, nothing else.
pub fn parse_java_long(s: &str) -> Result<i64, String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("For input string: \"{s}\""));
    }
    s.parse::<i64>()
        .map_err(|_| format!("For input string: \"{s}\""))
}

/// Java's `Integer.parseInt`.
pub fn parse_java_int(s: &str) -> Result<i32, String> {
    let v = parse_java_long(s)?;
    i32::try_from(v).map_err(|_| format!("For input string: \"{s}\""))
}

fn parse_java_double(s: &str) -> Result<f64, String> {
    let t = s.trim().trim_end_matches(['d', 'D', 'f', 'F']);
    match t {
        "NaN" => Ok(f64::NAN),
        "Infinity" | "+Infinity" => Ok(f64::INFINITY),
        "-Infinity" => Ok(f64::NEG_INFINITY),
        _ => t
            .parse::<f64>()
            .map_err(|_| format!("For input string: \"{s}\"")),
    }
}

/// Converts one input value to the field's type, with Solr's coercions: numbers from strings,
/// floats truncated into integer fields, longs wrapped into `int` fields, and booleans true only
/// for text starting with `t`, `T` or `1`. Integers too big for a Java `long` arrive as text
/// (noggit's BIGNUMBER), so they fail like a bad string. Errors are the Java exception message.
pub fn convert(field: &SField, input: &JVal) -> Result<Val, String> {
    // What the JSON loader hands on: a Long, a Double, a String or a Boolean.
    enum In<'a> {
        Long(i64),
        Double(f64),
        Text(&'a str),
        Bool(bool),
    }
    let raw = match input {
        JVal::Num(n) if is_integer_text(n) => match n.parse::<i64>() {
            Ok(v) => In::Long(v),
            Err(_) => In::Text(n),
        },
        JVal::Num(n) => In::Double(n.parse::<f64>().unwrap_or(f64::NAN)),
        JVal::Str(s) => In::Text(s),
        JVal::Bool(b) => In::Bool(*b),
        JVal::Null => return Err("null value".into()),
        other => return Err(format!("unsupported value {}", other.to_compact())),
    };
    let text = |r: &In| -> String {
        match r {
            In::Long(v) => v.to_string(),
            In::Double(d) => java_float(*d, format!("{d}")),
            In::Text(s) => s.to_string(),
            In::Bool(b) => b.to_string(),
        }
    };
    Ok(match field.kind {
        Kind::Long => Val::Long(match raw {
            In::Long(v) => v,
            In::Double(d) => d as i64,
            ref r => parse_java_long(&text(r))?,
        }),
        Kind::Int => Val::Int(match raw {
            In::Long(v) => v as i32,
            In::Double(d) => d as i32,
            ref r => parse_java_int(&text(r))?,
        }),
        Kind::Float => Val::Float(match raw {
            In::Long(v) => v as f32,
            In::Double(d) => d as f32,
            ref r => parse_java_double(&text(r))? as f32,
        }),
        Kind::Double => Val::Double(match raw {
            In::Long(v) => v as f64,
            In::Double(d) => d,
            ref r => parse_java_double(&text(r))?,
        }),
        Kind::Bool => Val::Bool(match raw {
            In::Bool(b) => b,
            ref r => parse_bool(&text(r)),
        }),
        _ => Val::Str(text(&raw)),
    })
}

/// `BoolField`: true when the text starts with `t`, `T` or `1`.
pub fn parse_bool(s: &str) -> bool {
    matches!(s.chars().next(), Some('t') | Some('T') | Some('1'))
}
