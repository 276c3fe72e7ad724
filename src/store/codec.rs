//! One JSON value in a compact binary form: a tag, then nothing (null, false, true), 8 bytes (an
//! `i64`), a length (u32) and bytes (a string, or any other value as JSON text), or a count (u32)
//! and 8 bytes each (an array of `i64`). Little-endian. The engine keeps the signatures waiting
//! for pass C in it, the change state its documents' light fields; each puts its field names
//! before the values its own way.

use std::io::{Error, ErrorKind, Result};

use serde_json::Value;

const NULL: u8 = 0;
const FALSE: u8 = 1;
const TRUE: u8 = 2;
const INT: u8 = 3;
const STR: u8 = 4;
const INTS: u8 = 5;
/// Any other value, as JSON (floats, large unsigned numbers, objects, mixed arrays).
const JSON: u8 = 6;

fn len32(n: usize) -> Result<[u8; 4]> {
    u32::try_from(n)
        .map(u32::to_le_bytes)
        .map_err(|_| Error::other("a value of 4 GiB or more"))
}

/// Appends `value`.
pub(crate) fn put_value(out: &mut Vec<u8>, value: &Value) -> Result<()> {
    match value {
        Value::Null => out.push(NULL),
        Value::Bool(false) => out.push(FALSE),
        Value::Bool(true) => out.push(TRUE),
        Value::Number(n) if n.as_i64().is_some() => {
            out.push(INT);
            out.extend(n.as_i64().expect("checked").to_le_bytes());
        }
        Value::String(s) => {
            out.push(STR);
            out.extend(len32(s.len())?);
            out.extend(s.as_bytes());
        }
        Value::Array(a) if a.iter().all(|v| v.as_i64().is_some()) => {
            out.push(INTS);
            out.extend(len32(a.len())?);
            for v in a {
                out.extend(v.as_i64().expect("checked").to_le_bytes());
            }
        }
        other => {
            let text = serde_json::to_vec(other).map_err(Error::other)?;
            out.push(JSON);
            out.extend(len32(text.len())?);
            out.extend(text);
        }
    }
    Ok(())
}

/// Reads what [`put_value`] and the callers' own field names wrote.
pub(crate) struct Reader<'a>(pub(crate) &'a [u8]);

fn damaged(what: &str) -> Error {
    Error::new(ErrorKind::InvalidData, what.to_owned())
}

impl<'a> Reader<'a> {
    /// Whether everything was read.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The next `n` bytes.
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.0.len() < n {
            return Err(damaged("an encoded value cut short"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    pub(crate) fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn u16(&mut self) -> Result<usize> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("2 bytes")) as usize)
    }

    fn u32(&mut self) -> Result<usize> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")) as usize)
    }

    fn i64(&mut self) -> Result<i64> {
        Ok(i64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    /// `n` bytes of UTF-8.
    pub(crate) fn text(&mut self, n: usize) -> Result<&'a str> {
        std::str::from_utf8(self.take(n)?).map_err(|_| damaged("an encoded text is not UTF-8"))
    }

    /// The next value when it is a string, borrowed; any other value is skipped (`None`).
    pub(crate) fn text_value(&mut self) -> Result<Option<&'a str>> {
        if self.0.first() == Some(&STR) {
            self.u8()?;
            let n = self.u32()?;
            return self.text(n).map(Some);
        }
        self.value(false).map(|_| None)
    }

    /// The next value; with `keep` false it is skipped (`None`) without being decoded.
    pub(crate) fn value(&mut self, keep: bool) -> Result<Option<Value>> {
        let value = match self.u8()? {
            NULL => Value::Null,
            FALSE => Value::Bool(false),
            TRUE => Value::Bool(true),
            INT => Value::from(self.i64()?),
            STR => {
                let n = self.u32()?;
                if !keep {
                    self.take(n)?;
                    return Ok(None);
                }
                Value::String(self.text(n)?.to_owned())
            }
            INTS => {
                let n = self.u32()?;
                let bytes = self.take(
                    n.checked_mul(8)
                        .ok_or_else(|| damaged("an array too long"))?,
                )?;
                if !keep {
                    return Ok(None);
                }
                Value::Array(
                    bytes
                        .chunks_exact(8)
                        .map(|b| Value::from(i64::from_le_bytes(b.try_into().expect("8"))))
                        .collect(),
                )
            }
            JSON => {
                let n = self.u32()?;
                let bytes = self.take(n)?;
                if !keep {
                    return Ok(None);
                }
                serde_json::from_slice(bytes).map_err(|e| Error::new(ErrorKind::InvalidData, e))?
            }
            tag => return Err(damaged(&format!("an encoded value with tag {tag}"))),
        };
        Ok(keep.then_some(value))
    }
}
