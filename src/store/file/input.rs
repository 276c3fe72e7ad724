//! Input-format detection: JSON Lines, or a saved Solr `/select` response, converted once into a
//! temporary JSON Lines file.

use super::readahead::LineTooLong;
use super::*;

pub(super) fn looks_like_select_response(
    file: &mut File,
    input: &Path,
) -> Result<bool, StoreError> {
    let mut head = [0u8; 4096];
    let n = file
        .read(&mut head)
        .map_err(|e| StoreError::io(format!("cannot read {}", input.display()), e))?;
    let text = String::from_utf8_lossy(&head[..n]);
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    Ok(trimmed.starts_with('{')
        && (trimmed.contains("\"responseHeader\"") || trimmed.contains("\"response\""))
        && !trimmed.lines().next().is_some_and(|l| {
            serde_json::from_str::<Value>(l)
                .ok()
                .is_some_and(|v| v.get("response").is_none())
        }))
}

/// Leaves `file` after a UTF-8 byte order mark at its start, else at its start.
fn skip_byte_order_mark(file: &mut File) -> io::Result<()> {
    use std::io::{Seek, SeekFrom};
    let mut head = [0u8; 3];
    let mut n = 0;
    while n < 3 {
        match file.read(&mut head[n..])? {
            0 => break,
            k => n += k,
        }
    }
    if head[..n] != [0xEF, 0xBB, 0xBF] {
        file.seek(SeekFrom::Start(0))?;
    }
    Ok(())
}

/// Converts a saved `/select` response into a temporary JSON Lines file, one document a line. The
/// response is streamed, never held whole: memory stays bounded by the largest document, and a
/// document (its JSON text) longer than `max_doc` bytes (`--max-line-bytes`, which bounds every line of
/// the JSON Lines read afterwards too) is refused, as is anything between two documents past that.
pub(super) fn convert_select_response(
    input: &Path,
    max_doc: usize,
) -> Result<TempFile, StoreError> {
    let loc = |m: String| StoreError::input(input.display().to_string(), m);
    let mut file = File::open(input)
        .map_err(|e| StoreError::io(format!("cannot read {}", input.display()), e))?;
    skip_byte_order_mark(&mut file)
        .map_err(|e| StoreError::io(format!("cannot read {}", input.display()), e))?;
    let tmp = TempFile::new(temp_name(&std::env::temp_dir(), None, "select"));
    let out =
        File::create(&tmp.0).map_err(|e| StoreError::io("cannot create a temporary file", e))?;
    let since = std::rc::Rc::new(std::cell::Cell::new(0u64));
    let reader = Bounded {
        inner: BufReader::with_capacity(1 << 20, file),
        since: since.clone(),
        max: max_doc as u64,
    };
    let mut de = serde_json::Deserializer::from_reader(reader);
    let mut sink = DocSink {
        out: BufWriter::new(out),
        since,
        docs: 0,
    };
    let found = serde::de::DeserializeSeed::deserialize(Top(&mut sink), &mut de)
        .and_then(|found| de.end().map(|()| found))
        .map_err(|e| {
            let inner = e.io_error_kind().is_some();
            match std::error::Error::source(&e).and_then(|s| s.downcast_ref::<io::Error>()) {
                Some(io) if too_long(io).is_some() => loc(format!(
                    "a document of the /select response is longer than {max_doc} bytes (--max-line-bytes)"
                )),
                _ if inner => loc(format!("cannot read the /select response ({e})")),
                _ => loc(format!("broken JSON in the /select response ({e})")),
            }
        })?;
    if !found {
        return Err(loc("a /select response needs response.docs".to_owned()));
    }
    sink.out
        .flush()
        .map_err(|e| StoreError::io("cannot write a temporary file", e))?;
    Ok(tmp)
}

/// A reader that fails with [`LineTooLong`] once more than `max` bytes were read since `since` was
/// last reset (by [`DocSink`], after each document).
struct Bounded<R> {
    inner: R,
    since: std::rc::Rc<std::cell::Cell<u64>>,
    max: u64,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let since = self.since.get() + n as u64;
        if since > self.max {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                LineTooLong(self.max as usize),
            ));
        }
        self.since.set(since);
        Ok(n)
    }
}

/// Where the documents of the response go, one line each.
struct DocSink {
    out: BufWriter<File>,
    since: std::rc::Rc<std::cell::Cell<u64>>,
    docs: u64,
}

/// The response object: `response.docs` streamed into the sink, everything else skipped. `true`
/// when `response.docs` was there.
struct Top<'s>(&'s mut DocSink);
/// The `response` object.
struct Response<'s>(&'s mut DocSink);
/// The `docs` array.
struct Docs<'s>(&'s mut DocSink);

impl<'de> serde::de::DeserializeSeed<'de> for Top<'_> {
    type Value = bool;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Top<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a /select response object")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let mut found = false;
        while let Some(key) = map.next_key::<String>()? {
            if key == "response" {
                found |= map.next_value_seed(Response(&mut *self.0))?;
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Response<'_> {
    type Value = bool;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Response<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the response object")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let mut found = false;
        while let Some(key) = map.next_key::<String>()? {
            if key == "docs" {
                map.next_value_seed(Docs(&mut *self.0))?;
                found = true;
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(found)
    }
    fn visit_unit<E>(self) -> Result<bool, E> {
        Ok(false)
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Docs<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Docs<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an array of documents")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        use serde::de::Error;
        self.0.since.set(0);
        while let Some(doc) = seq.next_element::<Value>()? {
            serde_json::to_writer(&mut self.0.out, &doc).map_err(A::Error::custom)?;
            self.0.out.write_all(b"\n").map_err(A::Error::custom)?;
            self.0.docs += 1;
            self.0.since.set(0);
        }
        Ok(())
    }
}
