//! Solr's error answers: the status, the message, and the Java class names Solr lists in
//! `error.metadata`, so that the JSON body has the exact shape of a real one.

use serde_json::{json, Value};

const SOLR_EXCEPTION: &str = "org.apache.solr.common.SolrException";

/// One error as a Solr handler raises it.
#[derive(Clone, Debug, PartialEq)]
pub struct SolrError {
    /// HTTP status and `error.code`.
    pub code: u16,
    /// `error.msg`.
    pub msg: String,
    /// The class listed as `error-class`.
    pub error_class: &'static str,
    /// The class listed as `root-error-class`.
    pub root_class: &'static str,
    /// Schema API details and 500 stack traces, rarely present.
    pub extra: Option<Box<Extra>>,
}

/// The rarely used parts of an error.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Extra {
    /// Schema API errors list the failing commands here.
    pub details: Option<Value>,
    /// A 500 carries a stack trace instead of metadata.
    pub trace: Option<String>,
    /// The answer is cut after 64 KiB, as Solr cuts an error whose stack trace is longer: no
    /// `responseHeader`, and not JSON as a whole.
    pub cut: bool,
}

impl SolrError {
    pub fn new(code: u16, msg: impl Into<String>) -> SolrError {
        SolrError {
            code,
            msg: msg.into(),
            error_class: SOLR_EXCEPTION,
            root_class: SOLR_EXCEPTION,
            extra: None,
        }
    }

    pub fn bad_request(msg: impl Into<String>) -> SolrError {
        SolrError::new(400, msg)
    }

    pub fn conflict(msg: impl Into<String>) -> SolrError {
        SolrError::new(409, msg)
    }

    pub fn not_found(msg: impl Into<String>) -> SolrError {
        SolrError::new(404, msg)
    }

    /// A `NumberFormatException` wrapped into a 400, as Solr reports bad numbers.
    pub fn number_format(msg: impl Into<String>) -> SolrError {
        SolrError::bad_request(msg).root("java.lang.NumberFormatException")
    }

    /// A 500 with a one-line Java stack trace.
    pub fn server_error(msg: impl Into<String>, exception_class: &str) -> SolrError {
        let msg = msg.into();
        let mut e = SolrError::new(500, msg.clone());
        e.extra = Some(Box::new(Extra {
            details: None,
            trace: Some(format!(
                "{exception_class}: {msg}\n\tat fake_solr (the fake has no Java stack)"
            )),
            cut: false,
        }));
        e
    }

    /// What Solr answers when its query parser overflows the stack (a filter nested thousands of
    /// levels deep): a 500 whose trace repeats the parser's two recursive frames until the answer
    /// is cut at 64 KiB.
    pub fn stack_overflow() -> SolrError {
        let mut trace = "java.lang.RuntimeException: java.lang.StackOverflowError\n\tat org.apache.solr.servlet.HttpSolrCall.sendError(HttpSolrCall.java:861)".to_owned();
        while trace.len() < 70_000 {
            trace.push_str("\n\tat org.apache.solr.parser.QueryParser.Clause(QueryParser.java:298)\n\tat org.apache.solr.parser.QueryParser.Query(QueryParser.java:173)");
        }
        let mut e = SolrError::new(500, "java.lang.StackOverflowError");
        e.extra = Some(Box::new(Extra {
            details: None,
            trace: Some(trace),
            cut: true,
        }));
        e
    }

    /// Whether the answer is cut after 64 KiB (see [`Extra::cut`]).
    pub fn is_cut(&self) -> bool {
        self.extra.as_ref().is_some_and(|e| e.cut)
    }

    pub fn root(mut self, class: &'static str) -> SolrError {
        self.root_class = class;
        self
    }

    pub fn class(mut self, class: &'static str) -> SolrError {
        self.error_class = class;
        self
    }

    /// Adds schema API `details`.
    pub fn with_details(mut self, details: Value) -> SolrError {
        self.extra.get_or_insert_with(Box::default).details = Some(details);
        self
    }

    fn trace(&self) -> Option<&String> {
        self.extra.as_ref().and_then(|e| e.trace.as_ref())
    }

    /// The `error` object of the response body.
    pub fn error_object(&self) -> Value {
        let mut obj = serde_json::Map::new();
        if self.trace().is_none() {
            obj.insert(
                "metadata".into(),
                json!([
                    "error-class",
                    self.error_class,
                    "root-error-class",
                    self.root_class
                ]),
            );
        }
        if let Some(d) = self.extra.as_ref().and_then(|e| e.details.as_ref()) {
            obj.insert("details".into(), d.clone());
        }
        obj.insert("msg".into(), Value::String(self.msg.clone()));
        if let Some(t) = self.trace() {
            obj.insert("trace".into(), Value::String(t.clone()));
        }
        obj.insert("code".into(), json!(self.code));
        Value::Object(obj)
    }
}
