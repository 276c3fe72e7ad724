//! The syntax of the values a setting takes, one definition each, shared by the command line
//! ([`crate::cli`]'s value parsers) and the configuration file ([`super::file`]), so that
//! `--memory 1G` and `memory = "1G"` mean the same and are refused with the same words.
//!
//! Every function takes the text as written and gives the value or a message without a trailing
//! period, which the caller prefixes with what it was parsing (a flag, or a file's line and key).

use std::time::Duration;

use crate::store::CommitMode;

/// A byte count: digits, optionally followed by K, M or G (powers of 1024), at least 1.
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (digits, shift) = match s.strip_suffix(['K', 'k']) {
        Some(d) => (d, 10),
        None => match s.strip_suffix(['M', 'm']) {
            Some(d) => (d, 20),
            None => match s.strip_suffix(['G', 'g']) {
                Some(d) => (d, 30),
                None => (s, 0),
            },
        },
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("not a byte count: {s:?} (write e.g. 1048576, 512K or 64M)"))?;
    n.checked_mul(1 << shift)
        .filter(|&n| (1..=1 << 40).contains(&n))
        .ok_or_else(|| format!("{s} is out of range (1 byte to 1024G)"))
}

/// A duration such as `90s`, `10m`, `6h`, `1d` or `1h30m`, at least 0.1 s.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(s)
        .map_err(|e| format!("{e}; write a number and a unit, e.g. 90s, 10m, 6h, 1d"))?;
    if d < Duration::from_millis(100) {
        return Err("too short; use at least 100ms (e.g. 10m)".to_owned());
    }
    Ok(d)
}

/// `scheme://host[:port]`, nothing more (it goes into a Content-Security-Policy header).
pub fn parse_origin(s: &str) -> Result<String, String> {
    let u =
        url::Url::parse(s).map_err(|e| format!("{e}; write e.g. http://console.example:8090"))?;
    let origin = u.origin().ascii_serialization();
    if !matches!(u.scheme(), "http" | "https")
        || origin == "null"
        || s.trim_end_matches('/') != origin
    {
        return Err(format!(
            "an origin is scheme://host[:port] and nothing more, e.g. {origin}"
        ));
    }
    Ok(origin)
}

/// A quant rate is a finite, non-negative `f32`; NaN or infinity would make the quantisation step
/// meaningless rather than fail, so they are refused here.
pub fn check_quant_rate(rate: f32) -> Result<f32, String> {
    if !rate.is_finite() || rate < 0.0 {
        return Err("must be a finite number >= 0".to_string());
    }
    Ok(rate)
}

/// `hard`, `soft`, `none` or `within:MS` (MS > 0).
pub fn parse_commit(s: &str) -> Result<CommitMode, String> {
    match s {
        "hard" => Ok(CommitMode::Hard),
        "soft" => Ok(CommitMode::Soft),
        "none" => Ok(CommitMode::None),
        _ => s
            .strip_prefix("within:")
            .and_then(|ms| ms.parse::<u64>().ok())
            .filter(|&ms| ms > 0)
            .map(CommitMode::Within)
            .ok_or_else(|| "expected hard, soft, none or within:MS (e.g. within:10000)".to_owned()),
    }
}

/// How [`parse_commit`] reads `mode`: the text that gives it back.
pub fn commit_text(mode: CommitMode) -> String {
    match mode {
        CommitMode::Hard => "hard".to_owned(),
        CommitMode::Soft => "soft".to_owned(),
        CommitMode::None => "none".to_owned(),
        CommitMode::Within(ms) => format!("within:{ms}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_texts_read_back() {
        for mode in [
            CommitMode::Hard,
            CommitMode::Soft,
            CommitMode::None,
            CommitMode::Within(10_000),
        ] {
            assert_eq!(parse_commit(&commit_text(mode)), Ok(mode));
        }
        assert!(parse_commit("within:0").is_err());
    }

    #[test]
    fn byte_counts_take_binary_suffixes() {
        assert_eq!(parse_bytes("64M"), Ok(64 << 20));
        assert_eq!(parse_bytes("512k"), Ok(512 << 10));
        assert!(parse_bytes("0").is_err() && parse_bytes("2048G").is_err());
    }
}
