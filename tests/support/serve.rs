//! A `solr-dedup serve` child process on a loopback port the system picks, stopped (killed) when
//! dropped, and the small HTTP client the serve tests talk to it with.

use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A blocking client (rustls with ring, as the binary uses).
pub fn http() -> reqwest::blocking::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

/// A running `serve`.
pub struct Served {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The state directory, unless the test gave its own.
    _state: Option<tempfile::TempDir>,
    /// Everything it wrote to standard error so far.
    log: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Served {
    /// Starts `cmd` (a `solr-dedup serve …` command), giving it a temporary `--state-dir` unless it
    /// has one and `--listen 127.0.0.1:0` unless it listens elsewhere, and waits for its
    /// `serving on` line.
    pub fn spawn(mut cmd: Command) -> Served {
        let args: Vec<String> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let state =
            (!args.iter().any(|a| a == "--state-dir")).then(|| tempfile::tempdir().unwrap());
        if let Some(dir) = &state {
            cmd.arg("--state-dir").arg(dir.path());
        }
        if !args.iter().any(|a| a == "--listen") {
            cmd.args(["--listen", "127.0.0.1:0"]);
        }
        if !cmd.get_envs().any(|(k, _)| k == "SOLR_DEDUP_TOKEN") {
            cmd.env_remove("SOLR_DEDUP_TOKEN");
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("start serve");
        let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        let mut said = String::new();
        let base = loop {
            line.clear();
            if err.read_line(&mut line).unwrap() == 0 {
                let _ = child.kill();
                panic!("serve ended before listening: {said}");
            }
            said.push_str(&line);
            if let Some(rest) = line.trim().strip_prefix("serving on ") {
                break rest.to_owned();
            }
        };
        // Keep draining its log so that it never blocks on a full pipe.
        let log = std::sync::Arc::new(std::sync::Mutex::new(said));
        let kept = log.clone();
        std::thread::spawn(move || {
            let mut sink = String::new();
            while err.read_line(&mut sink).unwrap_or(0) > 0 {
                if std::env::var_os("SOLR_DEDUP_TEST_SERVE_LOG").is_some() {
                    eprint!("serve: {sink}");
                }
                kept.lock().unwrap().push_str(&sink);
                sink.clear();
            }
        });
        Served {
            child,
            base,
            _state: state,
            log,
        }
    }

    /// What it wrote to standard error so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// `solr-dedup serve ARGS` with `ENV`.
    pub fn start(args: &[&str], env: &[(&str, &str)]) -> Served {
        let mut cmd = super::cmd::solr_dedup();
        cmd.arg("serve").args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        Served::spawn(cmd)
    }

    /// POSTs `body` as JSON; the status and the answer (JSON, or `null`).
    pub fn post(&self, path: &str, body: &Value, headers: &[(&str, &str)]) -> (u16, Value) {
        let mut req = http()
            .post(format!("{}{path}", self.base))
            .header("Content-Type", "application/json")
            .body(body.to_string());
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let resp = req.send().unwrap();
        let status = resp.status().as_u16();
        (
            status,
            serde_json::from_str(&resp.text().unwrap()).unwrap_or(Value::Null),
        )
    }

    /// GETs `path`; the status and the text.
    pub fn get(&self, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
        let mut req = http().get(format!("{}{path}", self.base));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let resp = req.send().unwrap();
        (resp.status().as_u16(), resp.text().unwrap())
    }

    /// GETs `path`, which must answer 200 with JSON.
    pub fn json(&self, path: &str) -> Value {
        self.json_with(path, &[])
    }

    /// GETs `path` with `headers`, which must answer 200 with JSON.
    pub fn json_with(&self, path: &str, headers: &[(&str, &str)]) -> Value {
        let (status, text) = self.get(path, headers);
        assert_eq!(status, 200, "{path}: {text}");
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}: {text}"))
    }

    /// Starts a run with `options`; its id. Panics unless it was accepted.
    pub fn start_run(&self, options: Value) -> u64 {
        let (status, answer) = self.post("/api/runs", &options, &[]);
        assert_eq!(status, 202, "{answer}");
        answer["id"].as_u64().unwrap()
    }

    /// Waits (polling every 50 ms, for at most `limit`) until run `id` has ended; its record.
    pub fn wait_run(&self, id: u64, limit: Duration) -> Value {
        let deadline = Instant::now() + limit;
        loop {
            let r = self.json(&format!("/api/runs/{id}"));
            if r["state"] != "running" {
                return r;
            }
            assert!(
                Instant::now() < deadline,
                "run {id} still going after {limit:?}: {r}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `/metrics`, parsed.
    pub fn metrics(&self) -> std::collections::BTreeMap<String, f64> {
        let (status, text) = self.get("/metrics", &[]);
        assert_eq!(status, 200);
        prometheus(&text)
    }

    /// Stops it the hard way (SIGKILL) and waits for it.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A Prometheus text exposition as `name` or `name{labels}` → value, checking every line's form:
/// `# HELP`/`# TYPE` lines, and samples whose names and label names are letters, digits and
/// underscores and whose label values are quoted.
pub fn prometheus(text: &str) -> std::collections::BTreeMap<String, f64> {
    let mut out = std::collections::BTreeMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let kind = rest.split(' ').nth(1).unwrap_or("");
            assert!(
                ["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind),
                "{line:?}"
            );
            continue;
        }
        if line.starts_with("# HELP ") {
            continue;
        }
        let (name, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("{line:?}"));
        let (base, labels) = match name.split_once('{') {
            Some((base, rest)) => (
                base,
                rest.strip_suffix('}').unwrap_or_else(|| panic!("{line:?}")),
            ),
            None => (name, ""),
        };
        let word =
            |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        assert!(word(base), "{line:?}");
        for pair in labels.split(',').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or_else(|| panic!("{line:?}"));
            assert!(
                word(k) && v.len() >= 2 && v.starts_with('"') && v.ends_with('"'),
                "{line:?}"
            );
        }
        out.insert(
            name.to_owned(),
            value.parse().unwrap_or_else(|_| panic!("{line:?}")),
        );
    }
    out
}
