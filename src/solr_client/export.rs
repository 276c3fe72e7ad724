//! Reading an `/export` answer as it streams in: Solr writes every matching document in one answer
//! (`{"responseHeader":…,"response":{"numFound":N,"docs":[{…},{…},…]}}`), which for a large core is
//! far too big to hold, so the documents are cut out of the byte stream one by one.
//!
//! A failure after the answer has started comes as a document of its own, `{"EXCEPTION":"…"}`
//! (Solr's `ExportWriter`); [`Splitter`] turns it into an error.

use serde_json::{Map, Value};

/// Cuts the documents of the `docs` array out of an `/export` answer fed in chunks.
#[derive(Debug)]
pub struct Splitter {
    /// Bytes not consumed yet (the start of an unfinished document).
    buf: Vec<u8>,
    /// Inside the `docs` array.
    in_docs: bool,
    /// The array ended.
    done: bool,
    /// The largest document, in bytes (`usize::MAX` when [`Splitter::new`] made it).
    max_doc: usize,
}

/// What is wrong with an `/export` answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExportError {
    /// Solr reported an exception inside the answer.
    #[error("Solr stopped the export: {0}")]
    Exception(String),
    /// The bytes are not an `/export` answer.
    #[error("not an /export answer: {0}")]
    Malformed(String),
    /// A document (or what precedes the documents) is longer than the limit.
    #[error("a document of the /export answer is larger than {0} bytes")]
    TooLarge(usize),
}

impl Default for Splitter {
    fn default() -> Self {
        Splitter::with_limit(usize::MAX)
    }
}

impl Splitter {
    /// A splitter at the start of an answer.
    pub fn new() -> Self {
        Splitter::with_limit(usize::MAX)
    }

    /// A splitter that refuses a document longer than `max_doc` bytes: the answer streams, so its
    /// whole length is unbounded, but the splitter holds one unfinished document at a time.
    pub fn with_limit(max_doc: usize) -> Self {
        Splitter {
            buf: Vec::new(),
            in_docs: false,
            done: false,
            max_doc,
        }
    }

    /// Whether the `docs` array has ended.
    pub fn finished(&self) -> bool {
        self.done
    }

    /// Takes the next chunk and returns the documents it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<Map<String, Value>>, ExportError> {
        self.buf.extend_from_slice(chunk);
        let mut docs = Vec::new();
        let mut pos = 0;
        if !self.in_docs && !self.done {
            const KEY: &[u8] = b"\"docs\"";
            let Some(at) = find(&self.buf, KEY) else {
                // Keep a tail that may hold the start of the key.
                let keep = self.buf.len().saturating_sub(KEY.len());
                self.buf.drain(..keep);
                return Ok(docs);
            };
            let Some(open) = self.buf[at..].iter().position(|&b| b == b'[') else {
                return Ok(docs);
            };
            pos = at + open + 1;
            self.in_docs = true;
        }
        while self.in_docs {
            // Skip separators up to the next document or the end of the array.
            while pos < self.buf.len()
                && matches!(self.buf[pos], b' ' | b'\n' | b'\r' | b'\t' | b',')
            {
                pos += 1;
            }
            match self.buf.get(pos) {
                None => break,
                Some(b']') => {
                    self.in_docs = false;
                    self.done = true;
                    pos += 1;
                    break;
                }
                Some(b'{') => {}
                Some(&other) => {
                    return Err(ExportError::Malformed(format!(
                        "unexpected byte {:?} in the docs array",
                        other as char
                    )))
                }
            }
            let Some(end) = object_end(&self.buf[pos..]) else {
                break;
            };
            let bytes = &self.buf[pos..pos + end];
            let doc: Map<String, Value> =
                serde_json::from_slice(bytes).map_err(|e| ExportError::Malformed(e.to_string()))?;
            if let Some(e) = doc.get("EXCEPTION") {
                let text = e.as_str().map_or_else(|| e.to_string(), str::to_owned);
                return Err(ExportError::Exception(text));
            }
            docs.push(doc);
            pos += end;
        }
        self.buf.drain(..pos.min(self.buf.len()));
        if self.done {
            self.buf.clear();
        }
        if self.buf.len() > self.max_doc {
            return Err(ExportError::TooLarge(self.max_doc));
        }
        Ok(docs)
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The length of the JSON object at the start of `bytes`, or `None` if it is not complete yet.
fn object_end(bytes: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const ANSWER: &str = r#"{
  "responseHeader":{"status":0},
  "response":{
    "numFound":3,
    "docs":[{"id":"a","sku":"http://x/}{\"","n":[1,2]},{"id":"b\\","_version_":7},
    {"id":"c"}]}}"#;

    #[test]
    fn documents_come_out_whole_whatever_the_chunks() {
        let want = vec![
            json!({"id":"a","sku":"http://x/}{\"","n":[1,2]}),
            json!({"id":"b\\","_version_":7}),
            json!({"id":"c"}),
        ];
        for size in [1, 2, 3, 7, 64, 4096] {
            let mut s = Splitter::new();
            let mut got = Vec::new();
            for chunk in ANSWER.as_bytes().chunks(size) {
                got.extend(s.feed(chunk).unwrap().into_iter().map(Value::Object));
            }
            assert_eq!(got, want, "chunks of {size}");
            assert!(s.finished());
        }
    }

    #[test]
    fn an_exception_in_the_stream_is_an_error() {
        let answer = r#"{"responseHeader":{"status":0},"response":{"numFound":2,"docs":[{"id":"a"},{"EXCEPTION":"java.io.EOFException"}]}}"#;
        let mut s = Splitter::new();
        assert_eq!(
            s.feed(answer.as_bytes()),
            Err(ExportError::Exception("java.io.EOFException".into()))
        );
    }

    #[test]
    fn a_document_over_the_limit_is_an_error() {
        // The first document is 18 bytes long, the second 60: with a limit of 40, the splitter
        // holds the second one's start until it passes 40 bytes, then gives up.
        let answer = br#"{"response":{"docs":[{"id":"a","n":123},{"id":"b","text":"0123456789abcdefghijklmnopqrstuvwxyz0123"}]}}"#;
        let mut s = Splitter::with_limit(40);
        let mut got = 0;
        let mut failed = None;
        for chunk in answer.chunks(8) {
            match s.feed(chunk) {
                Ok(docs) => got += docs.len(),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        assert_eq!(got, 1);
        assert_eq!(failed, Some(ExportError::TooLarge(40)));
        let mut s = Splitter::with_limit(60);
        assert_eq!(s.feed(answer).unwrap().len(), 2);
    }

    #[test]
    fn an_empty_export_is_finished() {
        let mut s = Splitter::new();
        let docs = s
            .feed(br#"{"responseHeader":{"status":0},"response":{"numFound":0,"docs":[]}}"#)
            .unwrap();
        assert!(docs.is_empty() && s.finished());
    }
}
