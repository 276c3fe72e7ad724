//! The health probe's one line: what a failed `rows=0` select of serve's health check tells a
//! person (`Solr at URL is unreachable: connection refused`), rather than the HTTP stack's chain.

use std::time::Duration;

use super::kind_of;
use crate::solr_client::error::TransportKind;
use crate::solr_client::SolrError;
use crate::store::StoreError;

/// What a failed health probe of the core at `core_url` tells a person, in one line: `Solr at URL
/// is unreachable: connection refused`, rather than the HTTP stack's whole chain.
pub(super) fn health_error(core_url: &str, timeout: Duration, e: &SolrError) -> StoreError {
    let kind = kind_of(e);
    let last = match e {
        SolrError::Exhausted { last, .. } => last,
        e => e,
    };
    let message = match last {
        SolrError::Transport {
            kind: TransportKind::Timeout,
            ..
        } if timeout.is_zero() => format!("Solr at {core_url} is unreachable: no answer in time"),
        SolrError::Transport {
            kind: TransportKind::Timeout,
            ..
        } => format!(
            "Solr at {core_url} is unreachable: no answer within {} s",
            timeout.as_secs_f64()
        ),
        SolrError::Transport { reason, .. } => {
            format!("Solr at {core_url} is unreachable: {}", cause(reason))
        }
        other => other.to_string(),
    };
    StoreError::new(kind, message)
}

/// The innermost cause of a flattened transport error (`… tcp connect error: Connection refused
/// (os error 111)` is `connection refused`).
fn cause(reason: &str) -> String {
    let last = reason.rsplit(": ").next().unwrap_or(reason).trim();
    let last = match last.rfind(" (os error ") {
        Some(at) if last.ends_with(')') => &last[..at],
        _ => last,
    };
    let mut chars = last.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => reason.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StoreErrorKind;

    #[test]
    fn a_transport_error_reads_as_its_innermost_cause() {
        for (reason, want) in [
            (
                "error sending request for url (http://127.0.0.1:1/solr/c/select?wt=json): client error (Connect): tcp connect error: Connection refused (os error 111)",
                "connection refused",
            ),
            (
                "error sending request for url (http://nohost.invalid/solr/c/select?wt=json): client error (Connect): dns error: failed to lookup address information: Name or service not known",
                "name or service not known",
            ),
            ("connection reset", "connection reset"),
        ] {
            assert_eq!(cause(reason), want, "{reason}");
        }
    }

    #[test]
    fn the_health_line_names_the_core_and_the_kind() {
        let core = "http://127.0.0.1:1/solr/c";
        let refused = SolrError::Transport {
            url: format!("{core}/select"),
            reason: "client error (Connect): tcp connect error: Connection refused (os error 111)"
                .into(),
            kind: TransportKind::Connect,
        };
        let e = health_error(core, Duration::from_secs(5), &refused);
        assert_eq!(
            e.to_string(),
            "Solr at http://127.0.0.1:1/solr/c is unreachable: connection refused"
        );
        assert_eq!(e.kind(), StoreErrorKind::Unreachable);
        let slow = SolrError::Exhausted {
            attempts: 1,
            last: Box::new(SolrError::Transport {
                url: format!("{core}/select"),
                reason: "operation timed out".into(),
                kind: TransportKind::Timeout,
            }),
        };
        let e = health_error(core, Duration::from_secs(5), &slow);
        assert_eq!(
            e.to_string(),
            "Solr at http://127.0.0.1:1/solr/c is unreachable: no answer within 5 s"
        );
        assert_eq!(e.kind(), StoreErrorKind::Timeout);
    }
}
