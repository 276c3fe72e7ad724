//! A change state record's body: what the run before derived from the document, if anything, then
//! its light fields, each as its place in the state's fields and a value of [`codec`]; encoded,
//! decoded, searched for one field without decoding the rest, and put with the id and URL first.

use crate::store::{codec, Doc};

/// A record's body less the derived part it may begin with.
pub(super) fn fields_of(body: &[u8]) -> &[u8] {
    match derived_len(body) {
        Some(n) => &body[3 + n..],
        None => body,
    }
}

/// The length of the derived part `body` begins with, if it begins with one.
pub(super) fn derived_len(body: &[u8]) -> Option<usize> {
    match body {
        [DERIVED, a, b, ..] => {
            let n = u16::from_le_bytes([*a, *b]) as usize;
            (body.len() >= 3 + n).then_some(n)
        }
        _ => None,
    }
}

// The record's body: first, when the run derived something from the document, `[254][u16
// length][bytes]`; then for each field, `[u8 place in the state's fields]` (or `[255][u16 length]
// [name]` for a field not in the list or past its 254th place), then its value
// ([`crate::store::codec`]).
const NAMED: u8 = 255;
pub(super) const DERIVED: u8 = 254;

/// `doc` in the state's encoding, its field names as places in `fields` (sorted).
pub(crate) fn encode(doc: &Doc, fields: &[String]) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(64 + doc.len() * 12);
    for (name, value) in doc {
        match fields.binary_search(name) {
            Ok(i) if i < DERIVED as usize => out.push(i as u8),
            _ => {
                let n = u16::try_from(name.len())
                    .map_err(|_| std::io::Error::other("a field name too long"))?;
                out.push(NAMED);
                out.extend(n.to_le_bytes());
                out.extend(name.as_bytes());
            }
        }
        codec::put_value(&mut out, value)?;
    }
    Ok(out)
}

/// The fields of `body` whose place in `fields` is set in `wanted` (all without it), as a document;
/// the others are skipped undecoded.
pub(crate) fn decode(
    body: &[u8],
    fields: &[String],
    wanted: Option<&[bool]>,
) -> std::io::Result<Doc> {
    let mut doc = Doc::new();
    let mut r = codec::Reader(fields_of(body));
    while !r.is_empty() {
        let index = r.u8()?;
        let (name, place) = if index == NAMED {
            let n = r.u16()?;
            let name = r.text(n)?;
            (name, fields.binary_search_by(|f| f.as_str().cmp(name)).ok())
        } else {
            let f = fields.get(index as usize).ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "a state record names a field the state does not hold",
                )
            })?;
            (f.as_str(), Some(index as usize))
        };
        let keep = match wanted {
            None => true,
            Some(w) => place.is_some_and(|i| w.get(i).copied().unwrap_or(false)),
        };
        if let Some(value) = r.value(keep)? {
            doc.insert(name.to_owned(), value);
        }
    }
    Ok(doc)
}

/// The text of the field at `place` in `fields` (sorted) within `body`, borrowed and found without
/// decoding the others (`None`: the record has no such field, or its value is not a text).
pub(crate) fn text_at<'b>(
    body: &'b [u8],
    fields: &[String],
    place: usize,
) -> std::io::Result<Option<&'b str>> {
    Ok(match field_at(body, fields, place)? {
        Field::Text(text) => Some(text),
        Field::Absent | Field::Other => None,
    })
}

/// What a record holds in one field, found without decoding the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field<'b> {
    /// No such field.
    Absent,
    /// A text, borrowed from the record.
    Text(&'b str),
    /// Another value (a number, a list, ...).
    Other,
}

/// The field at `place` in `fields` (sorted) within `body` ([`text_at`] with the absent told apart
/// from the values that are no text).
pub(crate) fn field_at<'b>(
    body: &'b [u8],
    fields: &[String],
    place: usize,
) -> std::io::Result<Field<'b>> {
    let mut r = codec::Reader(fields_of(body));
    while !r.is_empty() {
        let index = r.u8()?;
        let here = if index == NAMED {
            let n = r.u16()?;
            let name = r.text(n)?;
            fields.get(place).is_some_and(|f| f == name)
        } else {
            index as usize == place
        };
        if here {
            return Ok(r.text_value()?.map_or(Field::Other, Field::Text));
        }
        // Passed over undecoded.
        r.value(false)?;
    }
    Ok(Field::Absent)
}

/// `body`'s fields (a record's body less its derived part) with the fields at `lead`'s places in
/// `fields` first, in that order, and the others after them as they were; `None` when they are
/// first already (those of them the record holds), or when `body` cannot be read, holds one of
/// them twice or `lead` names a place twice (it is kept as it is).
///
/// Every pass over the state looks for a record's id and URL where they lie ([`field_at`]). Written
/// in the document's order they come after the fields before them by name (with YaCy's fields the
/// 12th and 18th of 21), and passing over those was a tenth of a change run's CPU at 1M pages; at
/// the front each is found at once. Decoding does not depend on the order.
pub(crate) fn led(body: &[u8], fields: &[String], lead: &[usize]) -> Option<Vec<u8>> {
    if lead.iter().enumerate().any(|(i, l)| lead[..i].contains(l)) {
        return None;
    }
    // In order already, the usual case once a state went through one merge: the lead fields at
    // the front (as many as lead the record), and none of them after (a record without a URL).
    let mut r = codec::Reader(body);
    let (mut front, mut in_front, mut misplaced) = (0, true, false);
    while !r.is_empty() && !misplaced {
        let place = entry_place(&mut r, fields).ok()?;
        if in_front && lead.get(front).is_some_and(|&l| place == Some(l)) {
            front += 1;
            if front == lead.len() {
                return None;
            }
        } else {
            in_front = false;
            misplaced = place.is_some_and(|p| lead.contains(&p));
        }
    }
    if !misplaced {
        return None;
    }
    let mut r = codec::Reader(body);
    let mut entries: Vec<(std::ops::Range<usize>, Option<usize>)> = Vec::new();
    while !r.is_empty() {
        let start = body.len() - r.0.len();
        let place = entry_place(&mut r, fields).ok()?;
        entries.push((start..body.len() - r.0.len(), place));
    }
    let mut out = Vec::with_capacity(body.len());
    for &l in lead {
        let mut of_l = entries.iter().filter(|e| e.1 == Some(l));
        if let Some((span, _)) = of_l.next() {
            if of_l.next().is_some() {
                return None;
            }
            out.extend_from_slice(&body[span.clone()]);
        }
    }
    for (span, place) in &entries {
        if !place.is_some_and(|p| lead.contains(&p)) {
            out.extend_from_slice(&body[span.clone()]);
        }
    }
    (out != body).then_some(out)
}

/// The place in `fields` of the field of the entry `r` is at (`None`: not among them), passing over
/// its value undecoded.
fn entry_place(r: &mut codec::Reader<'_>, fields: &[String]) -> std::io::Result<Option<usize>> {
    let index = r.u8()?;
    let place = if index == NAMED {
        let n = r.u16()?;
        let name = r.text(n)?;
        fields.binary_search_by(|f| f.as_str().cmp(name)).ok()
    } else {
        Some(index as usize)
    };
    r.value(false)?;
    Ok(place)
}

#[cfg(test)]
mod tests {
    use super::super::state::{hash, Raw};
    use super::*;

    #[test]
    fn records_decode_to_what_was_encoded() {
        let fields: Vec<String> = ["_version_", "flag_b", "id", "keys_ls", "n_i", "url_s"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let doc: Doc = serde_json::from_str(
            r#"{"_version_": 1883056581424185344, "flag_b": false, "id": "doc-1 ü",
                "keys_ls": [-3393482324371875542, 0, 9223372036854775807], "n_i": -1,
                "url_s": "https://example.org/a?b=1", "other": 1.5, "big": 18446744073709551615,
                "mixed": [1, "a"], "empty": [], "nothing": null}"#,
        )
        .unwrap();
        let raw = Raw::of(&doc, &fields, "id", "_version_", 7).unwrap();
        assert_eq!(raw.version, 1883056581424185344);
        assert_eq!(raw.hash, hash(7, "doc-1 ü"));
        assert_eq!(raw.doc(&fields).unwrap(), doc);
        let wanted: Vec<bool> = fields.iter().map(|f| f == "id" || f == "n_i").collect();
        let some = raw.doc_with(&fields, &wanted).unwrap();
        assert_eq!(
            serde_json::to_value(&some).unwrap(),
            serde_json::json!({"id": "doc-1 ü", "n_i": -1})
        );
        // A record cut short, or naming a field the state does not hold, is an error, not a panic.
        for cut in 0..raw.body.len() {
            let _ = decode(&raw.body[..cut], &fields, None);
        }
        assert!(decode(&raw.body, &fields[..2], None).is_err());
    }

    #[test]
    fn a_text_is_found_in_place_without_decoding_the_rest() {
        let fields: Vec<String> = ["_version_", "id", "n_i", "url_s"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let doc: Doc = serde_json::from_str(
            r#"{"_version_": 5, "id": "doc-1 ü", "n_i": -1, "url_s": "https://example.org/",
                "zz_s": "named", "keys_ls": [1, 2]}"#,
        )
        .unwrap();
        let raw = Raw::of(&doc, &fields, "id", "_version_", 7).unwrap();
        let at = |place| text_at(&raw.body, &fields, place).unwrap();
        assert_eq!(at(1), Some("doc-1 ü"));
        assert_eq!(at(3), Some("https://example.org/"));
        // A number is not a text; a place past the fields is nothing.
        assert_eq!(at(2), None);
        assert_eq!(at(0), None);
        assert_eq!(at(9), None);
        // Told apart: a field that is there but holds no text, and one that is not there.
        let field = |place| field_at(&raw.body, &fields, place).unwrap();
        assert_eq!(field(3), Field::Text("https://example.org/"));
        assert_eq!(field(2), Field::Other);
        assert_eq!(field(9), Field::Absent);
        let listed: Doc =
            serde_json::from_str(r#"{"id": "d", "url_s": ["https://x/", "y"]}"#).unwrap();
        let listed = Raw::of(&listed, &fields, "id", "_version_", 7).unwrap();
        assert_eq!(field_at(&listed.body, &fields, 3).unwrap(), Field::Other);
        // A field kept under its name (not among the state's fields) is found by that name.
        let mut more = fields.clone();
        more.push("zz_s".into());
        assert_eq!(text_at(&raw.body, &more, 4).unwrap(), Some("named"));
        // Behind a derived part, as in a record a run derived something from.
        let mut derived = vec![DERIVED, 2, 0, 9, 9];
        derived.extend(&raw.body);
        assert_eq!(text_at(&derived, &fields, 1).unwrap(), Some("doc-1 ü"));
        // Cut short: an error or nothing, never a panic.
        for cut in 0..raw.body.len() {
            let _ = text_at(&raw.body[..cut], &fields, 3);
        }
    }

    #[test]
    fn the_id_and_the_url_are_put_first_and_found_there() {
        let fields: Vec<String> = ["_version_", "a_b", "id", "n_i", "url_s"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let (id, url) = (2, 4);
        let doc: Doc = serde_json::from_str(
            r#"{"_version_": 5, "a_b": true, "id": "doc-1", "n_i": -1,
                "url_s": "https://example.org/", "zz_s": "named", "keys_ls": [1, 2]}"#,
        )
        .unwrap();
        let raw = Raw::of(&doc, &fields, "id", "_version_", 7).unwrap();
        // In the document's order the id is the third field and the URL the sixth (the named
        // `keys_ls` before `n_i`).
        assert_eq!(raw.body[0], 0);
        let body = led(&raw.body, &fields, &[id, url]).expect("put first");
        assert_eq!(&body[..1], &[id as u8]);
        assert_eq!(
            &body[1 + 5 + 5],
            &(url as u8),
            "after the id's tag, length and 5 bytes"
        );
        assert_eq!(body.len(), raw.body.len());
        assert_eq!(decode(&body, &fields, None).unwrap(), doc);
        assert_eq!(text_at(&body, &fields, id).unwrap(), Some("doc-1"));
        assert_eq!(
            text_at(&body, &fields, url).unwrap(),
            Some("https://example.org/")
        );
        // First already: kept as it is.
        assert_eq!(led(&body, &fields, &[id, url]), None);
        assert_eq!(led(&body, &fields, &[id]), None);
        // The id alone asked for: the others keep their order behind it.
        let id_first = led(&raw.body, &fields, &[id]).unwrap();
        assert_eq!(id_first[0], id as u8);
        assert_eq!(decode(&id_first, &fields, None).unwrap(), doc);
        assert_eq!(id_first.len(), raw.body.len());
        // The same fields either way, none twice: the body put in order is the id's entry, the
        // URL's, then the rest as it was.
        let entry = |name: &str| {
            let one: Doc = [(name.to_owned(), doc[name].clone())].into_iter().collect();
            Raw::of(&one, &fields, "id", "_version_", 7).unwrap().body
        };
        let mut rest = doc.clone();
        rest.remove("id");
        rest.remove("url_s");
        let rest = Raw::of(&rest, &fields, "id", "_version_", 7).unwrap().body;
        assert_eq!(body, [entry("id"), entry("url_s"), rest.clone()].concat());
        // A place named twice: kept as it is.
        assert_eq!(led(&raw.body, &fields, &[id, id]), None);
        // No URL: the id first, and a record with the id first already is kept.
        let mut no_url = doc.clone();
        no_url.remove("url_s");
        let no_url = Raw::of(&no_url, &fields, "id", "_version_", 7).unwrap();
        let moved = led(&no_url.body, &fields, &[id, url]).unwrap();
        assert_eq!(moved[0], id as u8);
        assert_eq!(moved.len(), no_url.body.len());
        assert_eq!(
            decode(&moved, &fields, None).unwrap(),
            decode(&no_url.body, &fields, None).unwrap()
        );
        assert_eq!(led(&moved, &fields, &[id, url]), None);
        // The URL before the id: both moved.
        let swapped = [entry("url_s"), entry("id"), rest.clone()].concat();
        assert_eq!(
            led(&swapped, &fields, &[id, url]).unwrap(),
            [entry("id"), entry("url_s"), rest.clone()].concat()
        );
        // A field kept under its name is found by its name.
        let mut fewer = fields.clone();
        fewer.retain(|f| f != "url_s");
        let named = Raw::of(&doc, &fewer, "id", "_version_", 7).unwrap();
        let mut more = fewer.clone();
        more.push("url_s".into());
        let body = led(&named.body, &more, &[2, 4]).unwrap();
        assert_eq!(&body[..1], &[2]);
        assert_eq!(
            text_at(&body, &more, 4).unwrap(),
            Some("https://example.org/")
        );
        assert_eq!(decode(&body, &more, None).unwrap(), doc);
        // A field twice, or a body cut short: kept as it is, never a panic.
        let mut twice = raw.body.clone();
        twice.extend(&raw.body);
        assert_eq!(led(&twice, &fields, &[id, url]), None);
        for cut in 0..raw.body.len() {
            let part = &raw.body[..cut];
            if let Some(body) = led(part, &fields, &[id, url]) {
                // Cut between two fields: a record of fewer fields, the same ones put in order.
                let was = decode(part, &fields, None).unwrap();
                assert_eq!(decode(&body, &fields, None).unwrap(), was, "{cut} bytes");
            }
        }
        // Nothing to put first.
        assert_eq!(led(&raw.body, &fields, &[]), None);
    }
}
