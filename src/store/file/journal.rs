//! The update journal: the atomic updates of a run, merged per document in the order they were
//! made, and applied to documents for the `docs` output.

use std::collections::VecDeque;

use super::*;

/// Applies an atomic update's `set` operations to a document.
pub(super) fn apply(doc: &mut Doc, update: &Value, id_field: &str, version_field: &str) {
    let Value::Object(u) = update else { return };
    for (field, op) in u {
        if field == id_field || field == version_field {
            continue;
        }
        match op.get("set") {
            Some(Value::Null) | None => {
                doc.remove(field);
            }
            Some(v) => {
                doc.insert(field.clone(), v.clone());
            }
        }
    }
}

/// Pending updates in input order, merged per document: later `set`s win, the first version stays
/// (it is the one the document had when the worker first read it).
///
/// The engine writes while it reads, so the pending file is a few runs each already in input order
/// (one per pass that wrote). Each run is read sequentially and the runs are merged by input offset.
pub(super) struct Merged {
    /// The input offset of each pending update's document, in the order written (spilled past a
    /// 64th of the budget).
    docs: Column<u64>,
    runs: Vec<Run>,
}

/// A run of pending updates in input order: `docs[next..end]`, read from `reader`.
struct Run {
    next: usize,
    end: usize,
    /// `docs[next..]`, read a block at a time.
    heads: VecDeque<u64>,
    reader: BufReader<File>,
}

impl Run {
    /// Offsets read from the column at a time.
    const HEADS: usize = 4096;

    /// The next pending update of this run, as written.
    fn read(&mut self) -> Result<String, StoreError> {
        let mut line = String::new();
        self.reader
            .read_line(&mut line)
            .map_err(|e| StoreError::io("cannot read pending updates", e))?;
        self.next += 1;
        self.heads.pop_front();
        Ok(line)
    }
}

impl Merged {
    /// `runs` holds where each run starts: index into `docs`, byte offset in the pending file.
    pub(super) fn new(
        path: Option<&Path>,
        docs: Column<u64>,
        runs: Vec<(usize, u64)>,
    ) -> Result<Self, StoreError> {
        let mut readers = Vec::new();
        if let Some(p) = path {
            for (i, &(next, at)) in runs.iter().enumerate() {
                let mut f =
                    File::open(p).map_err(|e| StoreError::io("cannot read pending updates", e))?;
                f.seek(SeekFrom::Start(at))
                    .map_err(|e| StoreError::io("cannot read pending updates", e))?;
                readers.push(Run {
                    next,
                    end: runs.get(i + 1).map_or(docs.len(), |r| r.0),
                    heads: VecDeque::new(),
                    reader: BufReader::with_capacity(1 << 20, f),
                });
            }
        }
        Ok(Merged {
            docs,
            runs: readers,
        })
    }

    /// The input offset of the next update of run `i`, if any.
    fn head(&mut self, i: usize) -> Result<Option<u64>, StoreError> {
        let run = &mut self.runs[i];
        if run.heads.is_empty() && run.next < run.end {
            let n = (run.end - run.next).min(Run::HEADS);
            for v in self.docs.iter_from(run.next).take(n) {
                run.heads
                    .push_back(v.map_err(|e| StoreError::io("cannot read pending updates", e))?);
            }
        }
        Ok(run.heads.front().copied())
    }

    /// The pending updates of the next document, unparsed and in the order they were written, with
    /// the document's input offset. Reading is sequential; parsing and merging ([`merge_updates`])
    /// can then run in parallel.
    pub(super) fn next_document(&mut self) -> Result<Option<(u64, Vec<String>)>, StoreError> {
        let mut offset = None;
        for i in 0..self.runs.len() {
            if let Some(h) = self.head(i)? {
                offset = Some(offset.map_or(h, |o: u64| o.min(h)));
            }
        }
        let Some(offset) = offset else {
            return Ok(None);
        };
        let mut lines = Vec::new();
        // Runs in write order, and within a run in order.
        for i in 0..self.runs.len() {
            while self.head(i)? == Some(offset) {
                lines.push(self.runs[i].read()?);
            }
        }
        Ok(Some((offset, lines)))
    }

    /// Up to `max` documents' pending updates (see [`Merged::next_document`]).
    pub(super) fn next_documents(
        &mut self,
        max: usize,
    ) -> Result<Vec<(u64, Vec<String>)>, StoreError> {
        let mut out = Vec::new();
        while out.len() < max {
            match self.next_document()? {
                Some(d) => out.push(d),
                None => break,
            }
        }
        Ok(out)
    }
}

/// One document's pending updates, oldest first, merged into one: later operations on a field win,
/// the id and the first version stay.
pub(super) fn merge_updates(lines: &[String]) -> Result<Value, StoreError> {
    let mut merged: Option<Value> = None;
    for line in lines {
        let later: Value = serde_json::from_str(line)
            .map_err(|e| StoreError::unsupported(format!("pending update: {e}")))?;
        match (&mut merged, later) {
            (None, l) => merged = Some(l),
            (Some(Value::Object(m)), Value::Object(l)) => {
                for (k, v) in l {
                    // Field operations: the later one wins. id and _version_: the first stays.
                    if v.get("set").is_some() || !m.contains_key(&k) {
                        m.insert(k, v);
                    }
                }
            }
            _ => {}
        }
    }
    Ok(merged.unwrap_or(Value::Null))
}
