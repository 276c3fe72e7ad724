//! `solr-dedup signature`: the signatures of one text, or of each line of a JSON Lines file.
//!
//! This is the command to check a value by hand (`printf 'hello world' | solr-dedup signature -`) or to
//! sign documents outside Solr. The output of one text is one JSON object on one line:
//!
//! ```text
//! {"exact_l":…,"fuzzy_l":…,"near_keys_l":[…],"near_trials_l":[…],"near_version":"near1-n2-h14-t6-a2",
//!  "profile":"…","scheme":"yacy","text_t":"…","title_l":…}
//! ```
//!
//! - `near_trials_l` and `near_keys_l` are the near-duplicate trial values and combination keys
//!   ([`crate::signature::near`], default parameters, named by `near_version`); `null` for a text
//!   without a word.
//! - `text_t` is YaCy's `fuzzy_signature_text_t`; it is `null` for the `md5` scheme (YaCy's field has
//!   no md5 counterpart) and when the profile is empty (YaCy writes no value then).
//! - `title_l` is the exact signature of the first line, without its `\n` or `\r\n`.
//!
//! Batch mode (`--batch`) reads `{"id":…,"text":…}` lines and writes the same object with the `id` first.
//! It streams: output goes through a buffer, and when an input line is broken the output of every earlier
//! line is flushed before the command fails with `FILE:LINE: what is wrong`, so the output is always a
//! run of whole lines, one per good input line, in order.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};

use anyhow::{anyhow, bail, Context};
use serde::Serialize;
use serde_json::Value;

use super::{Exit, Failure};
use crate::config::{Input, SignatureConfig};
use crate::signature::near::{self, NearParams};
use crate::signature::{Scheme, Signer};

/// Every signature of one text, in the shape the command prints (fields in alphabetical order).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Signatures {
    /// `exact_signature_l` of the whole text.
    pub exact_l: i64,
    /// `fuzzy_signature_l`.
    pub fuzzy_l: i64,
    /// The near-duplicate combination keys; `None` for a text without a word.
    pub near_keys_l: Option<Vec<i64>>,
    /// The near-duplicate trial values; `None` for a text without a word.
    pub near_trials_l: Option<Vec<i64>>,
    /// The definition and parameters of the near-duplicate values.
    pub near_version: String,
    /// The profile string `fuzzy_l` hashes.
    pub profile: String,
    /// `yacy` or `md5`.
    pub scheme: &'static str,
    /// `fuzzy_signature_text_t`; `None` for `md5` and for an empty profile.
    pub text_t: Option<String>,
    /// `title_exact_signature_l` of the first line.
    pub title_l: i64,
}

impl Signatures {
    /// Signs `text` with `signer`.
    pub fn of(signer: &Signer, text: &str) -> Self {
        let profile = signer.profile(text);
        let text_t = match signer.scheme {
            Scheme::Yacy if !profile.is_empty() => Some(profile.text_t()),
            _ => None,
        };
        let params = NearParams::default();
        let near = near::signature(text, &params);
        Signatures {
            exact_l: signer.exact(text),
            fuzzy_l: profile.signature(),
            near_keys_l: near.as_ref().map(|n| n.keys.clone()),
            near_trials_l: near.map(|n| n.trials),
            near_version: params.version(),
            profile: profile.profile_string(),
            scheme: signer.scheme.name(),
            text_t,
            title_l: signer.exact(first_line(text)),
        }
    }
}

/// One output line of batch mode: the input's `id`, then the signatures.
#[derive(Serialize)]
struct BatchRecord<'a> {
    id: &'a Value,
    #[serde(flatten)]
    signatures: Signatures,
}

/// The text up to the first line break, without `\n` or `\r\n`.
fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// Runs `solr-dedup signature`.
pub fn run(config: &SignatureConfig) -> Result<Exit, Failure> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    if config.batch {
        let name = config.input.name();
        let reader = open(&config.input)?;
        let result = batch(reader, &name, &config.signer, &mut out);
        // Whatever happened, the lines signed so far go out whole, so a failure leaves a clean prefix.
        let flushed = out.flush().context("cannot write to stdout");
        result?;
        flushed?;
    } else {
        let text = read_text(&config.input)?;
        let line = to_line(&Signatures::of(&config.signer, &text))?;
        out.write_all(&line)
            .and_then(|()| out.flush())
            .context("cannot write to stdout")?;
    }
    Ok(Exit::Ok)
}

fn open(input: &Input) -> anyhow::Result<Box<dyn BufRead>> {
    Ok(match input {
        Input::Stdin => Box::new(BufReader::new(io::stdin())),
        Input::File(path) => Box::new(BufReader::new(
            File::open(path).with_context(|| format!("cannot read {}", path.display()))?,
        )),
    })
}

/// The whole input as UTF-8 text.
fn read_text(input: &Input) -> anyhow::Result<String> {
    let mut bytes = Vec::new();
    open(input)?
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", input.name()))?;
    String::from_utf8(bytes).map_err(|e| {
        anyhow!(
            "{}: not valid UTF-8 (bad byte at offset {}); convert the text to UTF-8 first",
            input.name(),
            e.utf8_error().valid_up_to()
        )
    })
}

/// Serialises one record plus its newline. Writing goes through a plain `io::Write` afterwards so that
/// an `io::Error` such as a broken pipe stays visible in the error chain.
fn to_line<T: Serialize>(record: &T) -> anyhow::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(record).context("cannot serialise the output")?;
    line.push(b'\n');
    Ok(line)
}

/// Signs every `{"id","text"}` line of `reader`, writing one line per record to `out`.
fn batch<R: BufRead, W: Write>(
    mut reader: R,
    name: &str,
    signer: &Signer,
    out: &mut W,
) -> anyhow::Result<()> {
    let mut buf = Vec::new();
    let mut number = 0usize;
    loop {
        buf.clear();
        let read = reader
            .read_until(b'\n', &mut buf)
            .with_context(|| format!("cannot read {name}"))?;
        if read == 0 {
            return Ok(());
        }
        number += 1;
        let Some((id, text)) = parse_line(&buf).map_err(|e| anyhow!("{name}:{number}: {e}"))?
        else {
            continue;
        };
        let record = BatchRecord {
            id: &id,
            signatures: Signatures::of(signer, &text),
        };
        out.write_all(&to_line(&record)?)
            .context("cannot write to stdout")?;
    }
}

/// One input line: `None` when blank, else its id and text.
fn parse_line(raw: &[u8]) -> anyhow::Result<Option<(Value, String)>> {
    let line = std::str::from_utf8(raw).map_err(|e| {
        anyhow!(
            "not valid UTF-8 (bad byte at column {})",
            e.valid_up_to() + 1
        )
    })?;
    if line.trim().is_empty() {
        return Ok(None);
    }
    let value: Value = serde_json::from_str(line).map_err(|e| {
        // serde_json ends its message with "at line 1 column N"; the line is ours to give, so keep
        // only the column.
        let message = e.to_string();
        let message = message
            .rsplit_once(" at line ")
            .map_or(message.as_str(), |(head, _)| head);
        anyhow!("invalid JSON at column {}: {message}", e.column())
    })?;
    let Value::Object(mut object) = value else {
        bail!(r#"expected a JSON object such as {{"id":"doc-1","text":"…"}}"#);
    };
    let id = match object.remove("id") {
        Some(id @ Value::String(_)) => id,
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Value::Number(n),
        Some(_) => bail!("`id` must be a string or an integer"),
        None => bail!("missing `id`"),
    };
    let text = match object.remove("text") {
        Some(Value::String(text)) => text,
        Some(_) => bail!("`text` must be a string"),
        None => bail!("missing `text`"),
    };
    Ok(Some((id, text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOREM: &str = "Lorem ipsum dolor sit amet, lorem ipsum dolor sit amet. Lorem ipsum! Dolor dolor dolor, amet amet.";

    fn run_batch(input: &str) -> (String, anyhow::Result<()>) {
        let mut out = Vec::new();
        let result = batch(
            input.as_bytes(),
            "in.jsonl",
            &Signer::new(Scheme::Yacy),
            &mut out,
        );
        (String::from_utf8(out).unwrap(), result)
    }

    #[test]
    fn one_text_gives_every_signature() {
        let s = Signatures::of(&Signer::new(Scheme::Yacy), LOREM);
        // Vectors from signatures.md.
        assert_eq!(s.fuzzy_l, 895551812756359877);
        assert_eq!(s.profile, "(dolor-3) (amet-3) (lorem-3) (ipsum-3)");
        assert_eq!(
            s.text_t.as_deref(),
            Some("(dolor-5-3) (amet-4-3) (lorem-3-3) (ipsum-3-3)")
        );
        assert_eq!(s.scheme, "yacy");
    }

    #[test]
    fn the_title_is_the_first_line_without_its_terminator() {
        let signer = Signer::new(Scheme::Yacy);
        for text in ["hello world", "hello world\nbody", "hello world\r\nbody"] {
            assert_eq!(
                Signatures::of(&signer, text).title_l,
                -6533976092579615214,
                "{text:?}"
            );
        }
    }

    #[test]
    fn text_t_is_null_for_md5_and_for_an_empty_profile() {
        assert_eq!(
            Signatures::of(&Signer::new(Scheme::Md5), LOREM).text_t,
            None
        );
        assert_eq!(
            Signatures::of(&Signer::new(Scheme::Yacy), "a b c").text_t,
            None
        );
    }

    #[test]
    fn batch_echoes_ids_and_skips_blank_lines() {
        let input =
            "{\"id\":\"a\",\"text\":\"hello world\"}\n\n  \r\n{\"text\":\"x\",\"id\":7}\r\n";
        let (out, result) = run_batch(input);
        result.unwrap();
        let lines: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["id"], "a");
        assert_eq!(lines[0]["exact_l"], -6533976092579615214i64);
        assert_eq!(lines[1]["id"], 7);
        assert!(out.starts_with("{\"id\":\"a\",\"exact_l\":"), "{out}");
    }

    #[test]
    fn batch_errors_name_the_line_and_keep_earlier_output() {
        let cases = [
            (
                "{\"id\":1,\"text\":\"a\"}\n{\"id\":2}\n",
                "in.jsonl:2: missing `text`",
            ),
            (
                "{\"id\":1,\"text\":\"a\"}\n{\"id\":2,",
                "in.jsonl:2: invalid JSON at column",
            ),
            (
                "{\"id\":1,\"text\":\"a\"}\n[1]\n",
                "in.jsonl:2: expected a JSON object",
            ),
            (
                "{\"id\":1,\"text\":\"a\"}\n{\"id\":1.5,\"text\":\"\"}\n",
                "in.jsonl:2: `id` must be",
            ),
            (
                "{\"id\":1,\"text\":\"a\"}\n{\"id\":null,\"text\":\"\"}\n",
                "in.jsonl:2: `id` must be",
            ),
            (
                "{\"id\":1,\"text\":\"a\"}\n{\"text\":\"\"}\n",
                "in.jsonl:2: missing `id`",
            ),
            (
                "{\"id\":1,\"text\":\"a\"}\n{\"id\":2,\"text\":3}\n",
                "in.jsonl:2: `text` must be a string",
            ),
        ];
        for (input, want) in cases {
            let (out, result) = run_batch(input);
            let message = format!("{:#}", result.unwrap_err());
            assert!(message.starts_with(want), "{message:?} for {input:?}");
            assert!(!message.contains("line 1"), "{message:?}");
            assert_eq!(out.lines().count(), 1, "{input:?}");
        }
    }

    #[test]
    fn batch_refuses_a_line_that_is_not_utf8() {
        let mut out = Vec::new();
        let input: &[u8] = b"{\"id\":1,\"text\":\"\xff\"}\n";
        let err = batch(input, "in.jsonl", &Signer::new(Scheme::Yacy), &mut out).unwrap_err();
        assert_eq!(
            format!("{err:#}"),
            "in.jsonl:1: not valid UTF-8 (bad byte at column 17)"
        );
    }
}
