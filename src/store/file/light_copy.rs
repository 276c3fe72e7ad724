//! The light copy: the few fields a caller reads again and again, one small line per document in a
//! temporary file, written by the first complete read that parses them anyway (see the module doc).

use super::*;

/// The light copy (see the module doc): its state across reads.
///
/// A record is one line, `START END_OFFSET END_LINE JSON`: the document's byte offset in the input
/// (for the id index), the input position after its line (for cursors), and the document reduced to
/// the copy's fields.
#[derive(Default)]
pub(super) struct Light {
    /// The fields the caller announced (sorted, with the id): what the next copy will hold.
    pub(super) wanted: Option<Vec<String>>,
    /// A copy being written by a sequential read of the input, and where that read has got to.
    pub(super) building: Option<(Vec<String>, TempFile, BufWriter<File>, Pos)>,
    /// A complete copy: its fields, its file, and the input position at its end.
    pub(super) ready: Option<(Vec<String>, TempFile, Pos)>,
    /// A reader of the complete copy left where the last page ended, at that input position: the
    /// records of its last batch that the page had no room for (parsed for the fields kept then),
    /// then the reader.
    pub(super) reader: Option<(Pos, Leftover, ReadAhead)>,
}

/// Records read from the light copy but not yet handed out: a filtered page fills up in the middle
/// of a batch, and the next page starts with them.
#[derive(Default)]
pub(super) struct Leftover {
    pub(super) keep: Option<Vec<String>>,
    pub(super) records: std::collections::VecDeque<Parsed>,
    /// The reader has nothing more after these.
    pub(super) eof: bool,
}

impl Light {
    /// Whether a read keeping `keep` (`None`: every field) can be served by the complete copy.
    pub(super) fn covers(&self, keep: Option<&[String]>) -> bool {
        match (&self.ready, keep) {
            (Some((fields, _, _)), Some(keep)) => keep.iter().all(|k| fields.contains(k)),
            _ => false,
        }
    }

    /// Whether a read of the input from `start` keeping `keep` writes the next copy; starts one when it
    /// reads from the beginning with every announced field.
    pub(super) fn builds(
        &mut self,
        start: Pos,
        keep: Option<&[String]>,
        path: impl FnOnce() -> PathBuf,
    ) -> bool {
        let Some(wanted) = &self.wanted else {
            return false;
        };
        let has_all = keep.is_none_or(|k| wanted.iter().all(|w| k.contains(w)));
        if !has_all {
            return false;
        }
        if matches!(&self.building, Some((_, _, _, next)) if *next == start) {
            return true;
        }
        let already = matches!(&self.ready, Some((fields, _, _)) if fields == wanted);
        if start != (0, 0) || already {
            return false;
        }
        let tmp = TempFile::new(path());
        match File::create(&tmp.0) {
            Ok(f) => {
                self.building = Some((
                    wanted.clone(),
                    tmp,
                    BufWriter::with_capacity(1 << 20, f),
                    start,
                ));
                true
            }
            Err(e) => {
                debug!(error = %e, "no light copy: cannot create its temporary file");
                false
            }
        }
    }

    /// The fields of the copy being built.
    pub(super) fn building_fields(&self) -> Option<&[String]> {
        self.building.as_ref().map(|(fields, ..)| fields.as_slice())
    }

    /// Appends one document's record (see [`record_line`]) to the copy being built; a failure only
    /// abandons the copy.
    pub(super) fn record(&mut self, line: &[u8], end: Pos) {
        let Some((_, _, w, next)) = &mut self.building else {
            return;
        };
        match w.write_all(line) {
            Ok(()) => *next = end,
            Err(e) => {
                debug!(error = %e, "light copy abandoned");
                self.building = None;
            }
        }
    }

    /// The read that built the copy reached the end of the input at `end`.
    pub(super) fn finish(&mut self, end: Pos) {
        let Some((fields, tmp, mut w, _)) = self.building.take() else {
            return;
        };
        match w.flush() {
            Ok(()) => {
                self.ready = Some((fields, tmp, end));
                self.reader = None;
            }
            Err(e) => debug!(error = %e, "light copy abandoned"),
        }
    }
}

/// A document's record in the light copy (see [`Light`]), with its newline.
pub(super) fn record_line(doc: &Doc, fields: &[String], start: u64, end: Pos) -> Vec<u8> {
    let mut line = format!("{start} {} {} ", end.0, end.1).into_bytes();
    serde_json::to_writer(&mut line, &Reduced { doc, fields }).expect("a JSON object serialises");
    line.push(b'\n');
    line
}

/// A document reduced to some fields (sorted), serialised without copying it.
pub(super) struct Reduced<'a> {
    pub(super) doc: &'a Doc,
    pub(super) fields: &'a [String],
}

impl serde::Serialize for Reduced<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(
            self.doc
                .iter()
                .filter(|(k, _)| self.fields.binary_search(k).is_ok()),
        )
    }
}
