//! What can go wrong talking to Solr, and which of it is worth another try.

use std::fmt;

use reqwest::StatusCode;

/// An error from one request to Solr. Messages name the URL (never credentials) and say what to do.
#[derive(Debug, thiserror::Error)]
pub enum SolrError {
    /// No answer: connection refused or reset, DNS, TLS, a timeout, a dropped connection.
    #[error("no answer from {url}: {reason}")]
    Transport {
        /// The request URL.
        url: String,
        /// What the HTTP stack said, flattened to one line.
        reason: String,
        /// Whether the request may have reached Solr (a timeout or a dropped answer) or surely did not
        /// (a refused connection).
        kind: TransportKind,
    },
    /// Solr answered 5xx.
    #[error("{url} answered HTTP {status}: {message}")]
    Server {
        /// The request URL.
        url: String,
        /// The status.
        status: StatusCode,
        /// Solr's `error.msg`, or the start of the body.
        message: String,
    },
    /// 401 or 403: missing or wrong credentials.
    #[error("{url} refused the credentials (HTTP {status}); set SOLR_USER and SOLR_PASSWORD, or --auth-file FILE with one line user:password")]
    Auth {
        /// The request URL.
        url: String,
        /// 401 or 403.
        status: StatusCode,
    },
    /// 404 with Solr's HTML page: no such core or handler.
    #[error("{url} does not exist (HTTP 404); --solr must be a core URL such as http://127.0.0.1:8983/solr/collection1")]
    NotFound {
        /// The request URL.
        url: String,
    },
    /// 409: an optimistic-concurrency conflict.
    #[error("{url} answered HTTP 409: {message}")]
    Conflict {
        /// The request URL.
        url: String,
        /// Solr's message, which names the document, flattened to one line.
        message: String,
        /// The document the message names ([`conflict_id`] of the whole message).
        document: Option<String>,
        /// What the answer's `adds` (`versions=true`) lists: `(id, version)` of the documents the
        /// receiving node processed before it answered. SolrCloud lists a document it forwarded to
        /// another shard's leader with version 0, whether or not that leader applied it.
        adds: Vec<(String, i64)>,
    },
    /// Any other 4xx: Solr refuses the request as it is.
    #[error("{url} rejected the request (HTTP {status}): {message}")]
    Rejected {
        /// The request URL.
        url: String,
        /// The status.
        status: StatusCode,
        /// Solr's `error.msg`, or the start of the body.
        message: String,
    },
    /// A 2xx answer that is not JSON: cut off on the way, or a proxy's page in Solr's place. It may
    /// come out right when the request is sent again (retried like a 5xx; an update sent again is
    /// guarded by its versions, so one that landed the first time is a conflict, not a double).
    #[error("{url} sent an answer that is not JSON: {reason}")]
    Malformed {
        /// The request URL.
        url: String,
        /// What it began with.
        reason: String,
    },
    /// A 2xx JSON answer that is not what Solr sends.
    #[error("{url} sent an answer that is not Solr's: {reason}")]
    BadResponse {
        /// The request URL.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An answer larger than the cap (`--max-response-bytes`): reading it was stopped there.
    #[error("{url} sent an answer larger than --max-response-bytes {limit}; lower --batch-size, or raise --max-response-bytes if Solr's pages are this large on purpose")]
    TooLarge {
        /// The request URL.
        url: String,
        /// The cap, in bytes.
        limit: usize,
    },
    /// Retries ran out on retryable errors.
    #[error("{last} (gave up after {attempts} {})", if *attempts == 1 { "attempt" } else { "attempts" })]
    Exhausted {
        /// How many requests were sent.
        attempts: usize,
        /// The last error.
        last: Box<SolrError>,
    },
}

/// How a request failed to get an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportKind {
    /// The connection could not be made: the request never reached Solr.
    Connect,
    /// The time ran out.
    Timeout,
    /// Anything else: the connection broke while the request or the answer was under way.
    Broken,
}

impl fmt::Display for TransportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TransportKind::Connect => "connect",
            TransportKind::Timeout => "timeout",
            TransportKind::Broken => "broken",
        })
    }
}

impl SolrError {
    /// Whether the same request may succeed later: 5xx, timeouts and connection errors. A 4xx never
    /// does (it would fail the same way), and a 409 needs the documents re-read, not the request
    /// resent.
    pub fn is_retryable(&self) -> bool {
        match self {
            SolrError::Transport { .. } | SolrError::Malformed { .. } => true,
            // A 500 that says the query could not be parsed (a StackOverflowError from a deeply
            // nested filter, a SyntaxError) fails the same way every time.
            SolrError::Server {
                status, message, ..
            } => status.is_server_error() && !is_parse_failure(message),
            SolrError::Auth { .. }
            | SolrError::NotFound { .. }
            | SolrError::Conflict { .. }
            | SolrError::Rejected { .. }
            | SolrError::BadResponse { .. }
            | SolrError::TooLarge { .. }
            | SolrError::Exhausted { .. } => false,
        }
    }

    /// Whether the error means Solr could not be reached or kept failing (exit code 3), as opposed to
    /// Solr answering that something is wrong with the request, the URL or the credentials (exit 2).
    pub fn is_unreachable(&self) -> bool {
        match self {
            SolrError::Exhausted { last, .. } => last.is_unreachable(),
            // Sending it again would get the same answer; like Solr down, it is nothing the
            // request's content can fix, and nothing is lost (exit 3).
            SolrError::TooLarge { .. } => true,
            other => other.is_retryable(),
        }
    }

    /// The status and Solr's message when Solr refused the request as it is: a 4xx other than
    /// 401, 403 and 409, or a 5xx that says the query could not be parsed. `None` for anything else.
    pub fn refusal(&self) -> Option<(StatusCode, &str)> {
        match self {
            SolrError::Rejected {
                status, message, ..
            } => Some((*status, message)),
            SolrError::Server {
                status, message, ..
            } if is_parse_failure(message) => Some((*status, message)),
            SolrError::Exhausted { last, .. } => last.refusal(),
            _ => None,
        }
    }

    /// The 409 message, if this is a version conflict.
    pub fn conflict_message(&self) -> Option<&str> {
        match self {
            SolrError::Conflict { message, .. } => Some(message),
            _ => None,
        }
    }
}

/// Whether a 5xx message says Solr could not parse the query: Solr answers 500
/// `java.lang.StackOverflowError` to a filter nested a few thousand levels deep (its parser
/// recurses), and some parse errors come wrapped in a 500.
pub fn is_parse_failure(message: &str) -> bool {
    [
        "StackOverflowError",
        "SyntaxError",
        "Cannot parse",
        "ParseException",
    ]
    .iter()
    .any(|m| message.contains(m))
}

/// The id a 409 message names: `version conflict for ID expected=…` or
/// `Document not found for update.  id=ID` (two spaces, as Solr 9 writes it).
///
/// A standalone core (and a SolrCloud node for a document of its own shard) says only that. A
/// SolrCloud node whose batch met the conflict on another shard's leader wraps it:
/// `Async exception during distributed update: Error from server at URL: …\n\nrequest: URL\nRemote
/// error message: version conflict for ID expected=… actual=…`, so the phrase is looked for on every
/// line, not only at the start. The first one found counts.
pub fn conflict_id(message: &str) -> Option<&str> {
    message.lines().find_map(|line| {
        if let Some(at) = line.find("version conflict for ") {
            let rest = &line[at + "version conflict for ".len()..];
            return rest.rsplit_once(" expected=").map(|(id, _)| id);
        }
        let at = line.find("Document not found for update.")?;
        line[at + "Document not found for update.".len()..]
            .trim_start()
            .strip_prefix("id=")
    })
}

/// The `adds` of an `/update?versions=true` answer: `[id, version, id, version, …]`.
pub fn parse_adds(answer: &serde_json::Value) -> Vec<(String, i64)> {
    let Some(adds) = answer.get("adds").and_then(serde_json::Value::as_array) else {
        return Vec::new();
    };
    adds.chunks(2)
        .filter_map(|pair| match pair {
            [id, v] => {
                let id = match id {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                Some((id, v.as_i64()?))
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transport(kind: TransportKind) -> SolrError {
        SolrError::Transport {
            url: "u".into(),
            reason: "r".into(),
            kind,
        }
    }

    fn status(code: u16) -> SolrError {
        let status = StatusCode::from_u16(code).unwrap();
        let url = "u".to_owned();
        let message = "m".to_owned();
        match code {
            401 | 403 => SolrError::Auth { url, status },
            404 => SolrError::NotFound { url },
            409 => SolrError::Conflict {
                url,
                message,
                document: None,
                adds: Vec::new(),
            },
            500..=599 => SolrError::Server {
                url,
                status,
                message,
            },
            _ => SolrError::Rejected {
                url,
                status,
                message,
            },
        }
    }

    #[test]
    fn retry_decisions() {
        let table: &[(SolrError, bool)] = &[
            (transport(TransportKind::Connect), true),
            (transport(TransportKind::Timeout), true),
            (transport(TransportKind::Broken), true),
            (status(500), true),
            (status(502), true),
            (status(503), true),
            (status(504), true),
            (
                SolrError::Server {
                    url: "u".into(),
                    status: StatusCode::INTERNAL_SERVER_ERROR,
                    message: "java.lang.StackOverflowError".into(),
                },
                false,
            ),
            (
                SolrError::Server {
                    url: "u".into(),
                    status: StatusCode::INTERNAL_SERVER_ERROR,
                    message: "-2047484296".into(),
                },
                true,
            ),
            (status(400), false),
            (status(401), false),
            (status(403), false),
            (status(404), false),
            (status(409), false),
            (status(415), false),
            (
                SolrError::BadResponse {
                    url: "u".into(),
                    reason: "r".into(),
                },
                false,
            ),
            (
                SolrError::Malformed {
                    url: "u".into(),
                    reason: "<html>".into(),
                },
                true,
            ),
        ];
        for (e, retry) in table {
            assert_eq!(e.is_retryable(), *retry, "{e}");
        }
    }

    #[test]
    fn unreachable_is_what_retries_could_not_fix() {
        let gave_up = SolrError::Exhausted {
            attempts: 3,
            last: Box::new(status(503)),
        };
        assert!(gave_up.is_unreachable());
        assert!(!gave_up.is_retryable());
        assert!(!status(401).is_unreachable());
        assert!(!status(404).is_unreachable());
    }

    #[test]
    fn conflict_ids_from_solr_messages() {
        // The messages of ../shared/solr-transcripts/07-atomic-updates.json.
        assert_eq!(
            conflict_id("version conflict for a expected=1800000000000000001 actual=18"),
            Some("a")
        );
        assert_eq!(
            conflict_id("version conflict for b expected=-1 actual=1"),
            Some("b")
        );
        assert_eq!(
            conflict_id("Document not found for update.  id=zz"),
            Some("zz")
        );
        assert_eq!(
            conflict_id("version conflict for id with spaces expected=5 actual=6"),
            Some("id with spaces")
        );
        assert_eq!(conflict_id("something else"), None);
    }

    #[test]
    fn conflict_ids_from_solrcloud_messages() {
        // Recorded from a two-shard Solr 9.10 collection: the conflict was on the other shard's leader.
        let remote = "Async exception during distributed update: Error from server at \
                      http://127.0.0.1:38827/solr: null\n\n\n\nrequest: http://127.0.0.1:38827/solr\n\
                      Remote error message: version conflict for m1-doc-000000168 expected=5 \
                      actual=1882639271418920960";
        assert_eq!(conflict_id(remote), Some("m1-doc-000000168"));
        let gone = "Async exception during distributed update: Error from server at \
                    http://127.0.0.1:1/solr: null\n\nrequest: http://127.0.0.1:1/solr\n\
                    Remote error message: Document not found for update.  id=zz";
        assert_eq!(conflict_id(gone), Some("zz"));
    }

    #[test]
    fn adds_with_versions() {
        let answer = serde_json::json!({"adds": ["a", 17, "b", 0, 7, 3, "odd"]});
        assert_eq!(
            parse_adds(&answer),
            vec![("a".into(), 17), ("b".into(), 0), ("7".into(), 3)]
        );
        assert!(parse_adds(&serde_json::json!({})).is_empty());
    }
}
