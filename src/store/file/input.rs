//! Input-format detection: JSON Lines, or a saved Solr `/select` response, converted once into a
//! temporary JSON Lines file.

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
    let trimmed = text.trim_start();
    Ok(trimmed.starts_with('{')
        && (trimmed.contains("\"responseHeader\"") || trimmed.contains("\"response\""))
        && !trimmed.lines().next().is_some_and(|l| {
            serde_json::from_str::<Value>(l)
                .ok()
                .is_some_and(|v| v.get("response").is_none())
        }))
}

pub(super) fn convert_select_response(input: &Path) -> Result<TempFile, StoreError> {
    let loc = |m: String| StoreError::Input {
        location: input.display().to_string(),
        message: m,
    };
    let text = std::fs::read_to_string(input)
        .map_err(|e| StoreError::io(format!("cannot read {}", input.display()), e))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| loc(format!("broken JSON in the /select response ({e})")))?;
    let docs = value
        .pointer("/response/docs")
        .and_then(Value::as_array)
        .ok_or_else(|| loc("a /select response needs response.docs".to_owned()))?;
    let tmp = TempFile(std::env::temp_dir().join(format!(
        "solr-dedup-{}-{}.jsonl",
        std::process::id(),
        id_hash(&input.display().to_string())
    )));
    let mut w = BufWriter::new(
        File::create(&tmp.0).map_err(|e| StoreError::io("cannot create a temporary file", e))?,
    );
    for d in docs {
        serde_json::to_writer(&mut w, d).map_err(|e| StoreError::Unsupported(e.to_string()))?;
        w.write_all(b"\n")
            .map_err(|e| StoreError::io("cannot write a temporary file", e))?;
    }
    w.flush()
        .map_err(|e| StoreError::io("cannot write a temporary file", e))?;
    Ok(tmp)
}
