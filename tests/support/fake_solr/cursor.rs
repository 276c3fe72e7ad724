//! Cursor marks as Solr 9 writes them: Base64 of a JavaBin-serialised list of the last document's
//! sort values (`AoEhYw==` is version 2, a one-element array, the string `c`). The fake writes the
//! same bytes, so its marks equal real Solr's for the same sort values.

use super::index::Val;

/// A sort value as it goes into a mark.
#[derive(Clone, Debug, PartialEq)]
pub enum MarkVal {
    Null,
    Str(String),
    Long(i64),
    Int(i32),
    Float(f32),
    Double(f64),
}

impl MarkVal {
    pub fn from_val(v: &Val) -> MarkVal {
        match v {
            Val::Str(s) => MarkVal::Str(s.clone()),
            Val::Long(x) => MarkVal::Long(*x),
            Val::Int(x) => MarkVal::Int(*x),
            Val::Float(x) => MarkVal::Float(*x),
            Val::Double(x) => MarkVal::Double(*x),
            // BoolField marshals its sort value as the indexed term, `T` or `F`.
            Val::Bool(b) => MarkVal::Str(if *b { "T" } else { "F" }.into()),
        }
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

pub fn base64_encode(data: &[u8]) -> String {
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(B64[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Java's strict `Base64.getDecoder()`: only the standard alphabet, padding optional.
pub fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let trimmed = s.trim_end_matches('=');
    if s.len() - trimmed.len() > 2 {
        return None;
    }
    let mut bits = 0u32;
    let mut nbits = 0;
    let mut out = Vec::new();
    for c in trimmed.bytes() {
        let v = B64.iter().position(|&x| x == c)? as u32;
        bits = bits << 6 | v;
        nbits += 6;
        if nbits >= 8 {
            nbits -= 8;
            out.push((bits >> nbits) as u8);
            bits &= (1 << nbits) - 1;
        }
    }
    if trimmed.len() % 4 == 1 {
        return None;
    }
    Some(out)
}

fn write_vint(out: &mut Vec<u8>, mut v: u64) {
    while v & !0x7f != 0 {
        out.push(((v & 0x7f) | 0x80) as u8);
        v >>= 7;
    }
    out.push(v as u8);
}

fn write_tag_size(out: &mut Vec<u8>, tag: u8, size: usize) {
    if size < 0x1f {
        out.push(tag | size as u8);
    } else {
        out.push(tag | 0x1f);
        write_vint(out, (size - 0x1f) as u64);
    }
}

/// The mark for a list of sort values.
pub fn encode(values: &[MarkVal]) -> String {
    let mut out = vec![2u8];
    write_tag_size(&mut out, 0x80, values.len());
    for v in values {
        match v {
            MarkVal::Null => out.push(0),
            MarkVal::Str(s) => {
                write_tag_size(&mut out, 0x20, s.len());
                out.extend_from_slice(s.as_bytes());
            }
            MarkVal::Long(x) => {
                let x = *x;
                if (x as u64) & 0xff00_0000_0000_0000 == 0 {
                    let b = 0x60 | (x as u8 & 0x0f);
                    if x >= 0x0f {
                        out.push(b | 0x10);
                        write_vint(&mut out, (x as u64) >> 4);
                    } else {
                        out.push(b);
                    }
                } else {
                    out.push(7);
                    out.extend_from_slice(&x.to_be_bytes());
                }
            }
            MarkVal::Int(x) => {
                let x = *x;
                if x > 0 {
                    let b = 0x40 | (x as u8 & 0x0f);
                    if x >= 0x0f {
                        out.push(b | 0x10);
                        write_vint(&mut out, (x as u32 >> 4) as u64);
                    } else {
                        out.push(b);
                    }
                } else {
                    out.push(6);
                    out.extend_from_slice(&x.to_be_bytes());
                }
            }
            MarkVal::Float(f) => {
                out.push(8);
                out.extend_from_slice(&f.to_bits().to_be_bytes());
            }
            MarkVal::Double(d) => {
                out.push(5);
                out.extend_from_slice(&d.to_bits().to_be_bytes());
            }
        }
    }
    base64_encode(&out)
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Option<u8> {
        let b = *self.data.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }
    fn vint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let b = self.byte()?;
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Some(v);
            }
            shift += 7;
            if shift > 63 {
                return None;
            }
        }
    }
    fn bytes(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.data.get(self.pos..self.pos + n)?;
        self.pos += n;
        Some(s)
    }
    fn size(&mut self, tag: u8) -> Option<usize> {
        let s = (tag & 0x1f) as usize;
        if s == 0x1f {
            Some(0x1f + self.vint()? as usize)
        } else {
            Some(s)
        }
    }
    fn value(&mut self) -> Option<MarkVal> {
        let tag = self.byte()?;
        match tag & 0xe0 {
            0x20 => {
                let n = self.size(tag)?;
                let s = self.bytes(n)?;
                Some(MarkVal::Str(String::from_utf8(s.to_vec()).ok()?))
            }
            0x40 => {
                let mut v = (tag & 0x0f) as u64;
                if tag & 0x10 != 0 {
                    v |= self.vint()? << 4;
                }
                Some(MarkVal::Int(v as i32))
            }
            0x60 => {
                let mut v = (tag & 0x0f) as u64;
                if tag & 0x10 != 0 {
                    v |= self.vint()? << 4;
                }
                Some(MarkVal::Long(v as i64))
            }
            0 => match tag {
                0 => Some(MarkVal::Null),
                5 => Some(MarkVal::Double(f64::from_bits(u64::from_be_bytes(
                    self.bytes(8)?.try_into().ok()?,
                )))),
                6 => Some(MarkVal::Int(i32::from_be_bytes(
                    self.bytes(4)?.try_into().ok()?,
                ))),
                7 => Some(MarkVal::Long(i64::from_be_bytes(
                    self.bytes(8)?.try_into().ok()?,
                ))),
                8 => Some(MarkVal::Float(f32::from_bits(u32::from_be_bytes(
                    self.bytes(4)?.try_into().ok()?,
                )))),
                _ => None,
            },
            _ => None,
        }
    }
}

/// Why a mark could not be read: bad Base64 or bad JavaBin.
pub enum DecodeError {
    Base64,
    JavaBin,
}

/// The sort values in a mark.
pub fn decode(mark: &str) -> Result<Vec<MarkVal>, DecodeError> {
    let data = base64_decode(mark).ok_or(DecodeError::Base64)?;
    let mut r = Reader {
        data: &data,
        pos: 0,
    };
    if r.byte() != Some(2) {
        return Err(DecodeError::JavaBin);
    }
    let tag = r.byte().ok_or(DecodeError::JavaBin)?;
    if tag & 0xe0 != 0x80 {
        return Err(DecodeError::JavaBin);
    }
    let n = r.size(tag).ok_or(DecodeError::JavaBin)?;
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(r.value().ok_or(DecodeError::JavaBin)?);
    }
    Ok(out)
}
