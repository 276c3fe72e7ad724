//! A small W3C WebDriver client for the browser tests: Debian's `chromium` driven headless by its
//! `chromedriver` (package `chromium-driver`), over plain HTTP JSON on the loopback interface.
//!
//! [`Browser::start`] starts a `chromedriver` on a free 127.0.0.1 port and opens one session in a
//! headless Chromium; dropping the [`Browser`] closes the session and stops the driver. The
//! chromedriver log goes to `target/tmp/chromedriver/<port>.log` and is kept only when the test
//! panicked (the panic messages name it).
//!
//! Where there is no browser, a test skips: [`browser`] prints a note and returns `None`, and the
//! test returns early and passes. CI must not pass that way, so it sets
//! `SOLR_DEDUP_TEST_REQUIRE_BROWSER=1` (`.ci/run`, which also installs both packages), and then a
//! missing browser fails the test instead.
//!
//! Test-only variables:
//!
//! | variable | effect |
//! |---|---|
//! | `SOLR_DEDUP_TEST_CHROMEDRIVER` | the chromedriver to use (default: `chromedriver` on the `PATH`, else `/usr/bin/chromedriver`) |
//! | `SOLR_DEDUP_TEST_CHROMIUM` | the browser binary (default: `chromium` on the `PATH`, else `/usr/bin/chromium`) |
//! | `SOLR_DEDUP_TEST_REQUIRE_BROWSER` | `1`: fail the browser tests when there is no browser, not skip them |
//!
//! A path given by variable that does not exist counts as no browser (skip, or fail when required).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// How long chromedriver may take to answer `GET /status` as ready.
const DRIVER_START_TIMEOUT: Duration = Duration::from_secs(30);

/// How many free ports to try when chromedriver cannot bind the one picked (another process took it
/// between our probe and chromedriver's bind).
const PORT_ATTEMPTS: usize = 5;

/// The upper bound on any single WebDriver command (starting the browser is the slowest).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// How often [`Browser::wait_for`] and [`Browser::wait_until`] poll.
const POLL_INTERVAL: Duration = Duration::from_millis(100);

/// The W3C key under which an element reference travels in JSON.
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

/// The headless-Chromium arguments. `--no-sandbox` because tests often run as root (in CI and in
/// containers), where Chromium refuses to start with its sandbox; `--disable-dev-shm-usage` because
/// containers' `/dev/shm` is often too small.
const CHROMIUM_ARGS: &[&str] = &[
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--window-size=1280,1000",
];

/// Whether a missing browser fails the browser tests (`SOLR_DEDUP_TEST_REQUIRE_BROWSER=1`) rather
/// than skipping them.
pub fn required() -> bool {
    std::env::var("SOLR_DEDUP_TEST_REQUIRE_BROWSER").is_ok_and(|v| v == "1")
}

/// The browser for test `test`: `Some` when there is one; when there is none, panics if
/// [`required`], else prints a note that the test is skipped and returns `None` (the test then
/// returns early).
pub fn browser(test: &str) -> Option<Browser> {
    let browser = Browser::start();
    if browser.is_none() {
        let why = "no chromedriver or chromium (Debian: apt-get install chromium chromium-driver; \
                   or set SOLR_DEDUP_TEST_CHROMEDRIVER and SOLR_DEDUP_TEST_CHROMIUM)";
        assert!(
            !required(),
            "{test}: {why}, and SOLR_DEDUP_TEST_REQUIRE_BROWSER=1 requires the browser tests to run"
        );
        eprintln!("note: {test} skipped: {why}");
    }
    browser
}

/// An element of the current page, as the WebDriver session knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Element(pub String);

impl Element {
    /// The element as a script argument for [`Browser::execute`] (it arrives as the DOM node).
    pub fn to_json(&self) -> Value {
        json!({ ELEMENT_KEY: self.0 })
    }
}

/// An error a WebDriver command answered with.
#[derive(Debug, Clone)]
pub struct WebDriverError {
    /// The W3C error code, such as `no such element` or `stale element reference`; `http` for a
    /// failure to talk to chromedriver at all.
    pub error: String,
    /// chromedriver's message.
    pub message: String,
}

impl std::fmt::Display for WebDriverError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.error, self.message)
    }
}

/// A chromedriver child process with one headless-Chromium session; dropping it deletes the session
/// and stops the driver.
///
/// Every command method panics (with the command and chromedriver's error) when the command fails,
/// except [`Browser::find`], which answers `None` for no such element, and [`Browser::command`],
/// which returns the error.
pub struct Browser {
    driver: Child,
    /// `http://127.0.0.1:<port>`.
    base: String,
    session: String,
    client: reqwest::blocking::Client,
    log: PathBuf,
}

impl std::fmt::Debug for Browser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Browser")
            .field("base", &self.base)
            .field("session", &self.session)
            .field("log", &self.log)
            .finish()
    }
}

/// The program `name` on the `PATH`, else `fallback` if that exists; or the path in variable `var`
/// when set (and then nothing else).
fn locate(var: &str, name: &str, fallback: &str) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(var).filter(|v| !v.is_empty()) {
        let path = PathBuf::from(path);
        return path.is_file().then_some(path);
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(name))
        .chain([PathBuf::from(fallback)])
        .find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A port on 127.0.0.1 that was free a moment ago.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("cannot bind a free port on 127.0.0.1")
}

/// `s` cut to at most `max` characters, with a mark when cut.
fn snippet(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

impl Browser {
    /// Starts chromedriver and a headless-Chromium session; `None` when chromedriver or Chromium is
    /// not installed (see the module doc for where they are looked for). Panics when they are
    /// there but do not start.
    pub fn start() -> Option<Browser> {
        let driver = locate(
            "SOLR_DEDUP_TEST_CHROMEDRIVER",
            "chromedriver",
            "/usr/bin/chromedriver",
        )?;
        let chromium = locate("SOLR_DEDUP_TEST_CHROMIUM", "chromium", "/usr/bin/chromium")?;
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::blocking::Client::builder()
            .no_proxy()
            .timeout(COMMAND_TIMEOUT)
            .build()
            .expect("cannot build the WebDriver HTTP client");
        let log_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("chromedriver");
        std::fs::create_dir_all(&log_dir)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", log_dir.display()));

        let mut failures = Vec::new();
        for _ in 0..PORT_ATTEMPTS {
            let port = free_port();
            let log = log_dir.join(format!("{port}.log"));
            let mut child = Command::new(&driver)
                .arg(format!("--port={port}"))
                .arg(format!("--log-path={}", log.display()))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("cannot run {}: {e}", driver.display()));
            let base = format!("http://127.0.0.1:{port}");
            match wait_ready(&client, &base, &mut child) {
                Ok(()) => {
                    let mut browser = Browser {
                        driver: child,
                        base,
                        session: String::new(),
                        client,
                        log,
                    };
                    browser.session = browser.new_session(&chromium);
                    return Some(browser);
                }
                Err(NotReady::Exited(status)) => {
                    // Most likely the port was taken meanwhile ("IPv4 port not available").
                    failures.push(format!("port {port}: chromedriver exited ({status})"));
                }
                Err(NotReady::TimedOut) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!(
                        "{} did not answer GET {base}/status as ready within {DRIVER_START_TIMEOUT:?}; \
                         its log is {}",
                        driver.display(),
                        log.display()
                    );
                }
            }
        }
        panic!(
            "{} did not start in {PORT_ATTEMPTS} attempts ({}); its logs are in {}",
            driver.display(),
            failures.join("; "),
            log_dir.display()
        )
    }

    /// Opens the session, panicking with chromedriver's answer when Chromium does not start.
    fn new_session(&self, chromium: &Path) -> String {
        let caps = json!({
            "capabilities": {
                "alwaysMatch": {
                    "browserName": "chrome",
                    "goog:chromeOptions": {
                        "binary": chromium.to_string_lossy(),
                        "args": CHROMIUM_ARGS,
                    },
                },
            },
        });
        let url = format!("{}/session", self.base);
        match send(&self.client, reqwest::Method::POST, &url, Some(&caps)) {
            Ok(v) => v["sessionId"]
                .as_str()
                .unwrap_or_else(|| panic!("new session: no sessionId in {v}"))
                .to_owned(),
            Err(e) => panic!(
                "chromedriver could not start {} (args {CHROMIUM_ARGS:?}): {e}; its log is {}",
                chromium.display(),
                self.log.display()
            ),
        }
    }

    /// Runs WebDriver command `method` on `path` relative to the session (such as `"/url"`, or `""`
    /// for the session itself) with JSON `body`, and returns the answer's `value`.
    pub fn command(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, WebDriverError> {
        let url = format!("{}/session/{}{path}", self.base, self.session);
        send(&self.client, method, &url, body)
    }

    /// [`Browser::command`], panicking with `what` and the error when it fails.
    fn must(&self, what: &str, method: reqwest::Method, path: &str, body: Option<&Value>) -> Value {
        self.command(method, path, body).unwrap_or_else(|e| {
            panic!(
                "WebDriver {what} failed: {e} (chromedriver log: {})",
                self.log.display()
            )
        })
    }

    fn get(&self, what: &str, path: &str) -> Value {
        self.must(what, reqwest::Method::GET, path, None)
    }

    fn post(&self, what: &str, path: &str, body: Value) -> Value {
        self.must(what, reqwest::Method::POST, path, Some(&body))
    }

    /// Navigates to `url` and waits until the page has loaded.
    pub fn goto(&self, url: &str) {
        self.post(&format!("goto {url}"), "/url", json!({ "url": url }));
    }

    /// The current page's URL.
    pub fn current_url(&self) -> String {
        self.get("current URL", "/url")
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// The first element matching CSS selector `css`, or `None`; panics on any other error (such as
    /// an invalid selector).
    pub fn find(&self, css: &str) -> Option<Element> {
        let body = json!({ "using": "css selector", "value": css });
        match self.command(reqwest::Method::POST, "/element", Some(&body)) {
            Ok(v) => Some(element(&v)),
            Err(e) if e.error == "no such element" => None,
            Err(e) => panic!("WebDriver find {css:?} failed: {e}"),
        }
    }

    /// All elements matching CSS selector `css`, in document order.
    pub fn find_all(&self, css: &str) -> Vec<Element> {
        let body = json!({ "using": "css selector", "value": css });
        match self.post(&format!("find all {css:?}"), "/elements", body) {
            Value::Array(found) => found.iter().map(element).collect(),
            other => panic!("WebDriver find all {css:?}: not a list: {other}"),
        }
    }

    /// The first element matching `css`, polled for until it appears; panics after `timeout` with
    /// the page's URL and the start of its text.
    pub fn wait_for(&self, css: &str, timeout: Duration) -> Element {
        self.wait_until(timeout, &format!("an element matching {css:?}"), |b| {
            b.find(css)
        })
    }

    /// The first element matching `css` whose text contains `needle`, polled for (tolerating
    /// elements replaced meanwhile); panics after `timeout` like [`Browser::wait_for`].
    pub fn wait_for_text(&self, css: &str, needle: &str, timeout: Duration) -> Element {
        self.wait_until(
            timeout,
            &format!("an element matching {css:?} with text containing {needle:?}"),
            |b| {
                let el = b.find(css)?;
                let text = b.command(
                    reqwest::Method::GET,
                    &format!("/element/{}/text", el.0),
                    None,
                );
                text.ok()?.as_str()?.contains(needle).then_some(el)
            },
        )
    }

    /// Polls `check` every 100 ms until it returns `Some`, and returns that; panics after `timeout`
    /// naming `what` it waited for, the page's URL and the start of its text.
    pub fn wait_until<T>(
        &self,
        timeout: Duration,
        what: &str,
        mut check: impl FnMut(&Browser) -> Option<T>,
    ) -> T {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(found) = check(self) {
                return found;
            }
            if Instant::now() >= deadline {
                panic!(
                    "waited {timeout:?} for {what} in vain; the page is {} and its text begins:\n{}\n\
                     (chromedriver log: {})",
                    self.current_url(),
                    self.page_text_snippet(),
                    self.log.display()
                );
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    /// The start of `document.body.innerText`, for panic messages; never panics itself.
    fn page_text_snippet(&self) -> String {
        let body = json!({
            "script": "return document.body ? document.body.innerText : '(no body)';",
            "args": [],
        });
        match self.command(reqwest::Method::POST, "/execute/sync", Some(&body)) {
            Ok(Value::String(text)) => snippet(&text, 1500),
            Ok(other) => other.to_string(),
            Err(e) => format!("(cannot read it: {e})"),
        }
    }

    /// Clicks `el` (scrolled into view first, as a user would).
    pub fn click(&self, el: &Element) {
        self.post("click", &format!("/element/{}/click", el.0), json!({}));
    }

    /// The rendered text of `el` (`innerText`-like: what is visible).
    pub fn text(&self, el: &Element) -> String {
        let v = self.get("text", &format!("/element/{}/text", el.0));
        v.as_str().unwrap_or_default().to_owned()
    }

    /// The value of `el`'s attribute `name` (as in the HTML), or `None` when it has none.
    pub fn attr(&self, el: &Element, name: &str) -> Option<String> {
        let v = self.get(
            &format!("attribute {name:?}"),
            &format!("/element/{}/attribute/{name}", el.0),
        );
        v.as_str().map(str::to_owned)
    }

    /// The value of `el`'s DOM property `name` (such as `value` or `checked`), as JSON.
    pub fn property(&self, el: &Element, name: &str) -> Value {
        self.get(
            &format!("property {name:?}"),
            &format!("/element/{}/property/{name}", el.0),
        )
    }

    /// Types `text` into `el` (focusing it first).
    pub fn send_keys(&self, el: &Element, text: &str) {
        self.post(
            "send keys",
            &format!("/element/{}/value", el.0),
            json!({ "text": text }),
        );
    }

    /// Clears the editable `el`.
    pub fn clear(&self, el: &Element) {
        self.post("clear", &format!("/element/{}/clear", el.0), json!({}));
    }

    /// Runs `script` as the body of a function with `args` (see [`Element::to_json`]) as its
    /// `arguments`, and returns what it returns (a returned promise is awaited).
    pub fn execute(&self, script: &str, args: &[Value]) -> Value {
        self.post(
            "execute script",
            "/execute/sync",
            json!({ "script": script, "args": args }),
        )
    }

    /// Saves a PNG screenshot of the viewport to `path`.
    pub fn screenshot_png(&self, path: &Path) {
        let v = self.get("screenshot", "/screenshot");
        let data = v.as_str().and_then(base64_decode).unwrap_or_else(|| {
            panic!(
                "WebDriver screenshot: not base64: {}",
                snippet(&v.to_string(), 200)
            )
        });
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        }
        std::fs::write(path, data)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    }

    /// Resizes the browser window to `width` × `height` CSS pixels.
    pub fn set_window_size(&self, width: u32, height: u32) {
        self.post(
            "set window size",
            "/window/rect",
            json!({ "width": width, "height": height }),
        );
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Deleting the session quits Chromium; if that fails, chromedriver's own shutdown command
        // still takes its browsers down with it, which a kill would not.
        let quit = self.command(reqwest::Method::DELETE, "", None);
        if quit.is_err() {
            let _ = send(
                &self.client,
                reqwest::Method::GET,
                &format!("{}/shutdown", self.base),
                None,
            );
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        if !std::thread::panicking() {
            let _ = std::fs::remove_file(&self.log);
        }
    }
}

/// Why chromedriver is not ready.
enum NotReady {
    /// It exited (status as text).
    Exited(String),
    /// It did not answer as ready in time.
    TimedOut,
}

/// Polls chromedriver's `GET /status` until it answers `ready`.
fn wait_ready(
    client: &reqwest::blocking::Client,
    base: &str,
    child: &mut Child,
) -> Result<(), NotReady> {
    let deadline = Instant::now() + DRIVER_START_TIMEOUT;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(NotReady::Exited(status.to_string()));
        }
        let url = format!("{base}/status");
        if let Ok(v) = send(client, reqwest::Method::GET, &url, None) {
            if v["ready"] == json!(true) {
                // It answered; make sure it was ours, not a process that bound the port meanwhile.
                return match child.try_wait() {
                    Ok(Some(status)) => Err(NotReady::Exited(status.to_string())),
                    _ => Ok(()),
                };
            }
        }
        if Instant::now() >= deadline {
            return Err(NotReady::TimedOut);
        }
        std::thread::sleep(POLL_INTERVAL);
    }
}

/// One WebDriver HTTP request; the answer's `value`, or the error it carries.
fn send(
    client: &reqwest::blocking::Client,
    method: reqwest::Method,
    url: &str,
    body: Option<&Value>,
) -> Result<Value, WebDriverError> {
    let http_error = |message: String| WebDriverError {
        error: "http".to_owned(),
        message,
    };
    let mut request = client.request(method.clone(), url);
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    let response = request
        .send()
        .map_err(|e| http_error(format!("{method} {url}: {e}")))?;
    let status = response.status();
    let text = response
        .text()
        .map_err(|e| http_error(format!("{method} {url}: reading the answer: {e}")))?;
    let mut answer: Value = serde_json::from_str(&text).map_err(|e| {
        http_error(format!(
            "{method} {url}: HTTP {status}, not JSON ({e}): {}",
            snippet(&text, 300)
        ))
    })?;
    let value = answer["value"].take();
    match value.get("error").and_then(Value::as_str) {
        Some(error) => Err(WebDriverError {
            error: error.to_owned(),
            message: value["message"].as_str().unwrap_or_default().to_owned(),
        }),
        None if !status.is_success() => Err(http_error(format!(
            "{method} {url}: HTTP {status}: {}",
            snippet(&text, 300)
        ))),
        None => Ok(value),
    }
}

/// The element reference in a find answer.
fn element(v: &Value) -> Element {
    match v[ELEMENT_KEY].as_str() {
        Some(id) => Element(id.to_owned()),
        None => panic!("WebDriver: not an element reference: {v}"),
    }
}

/// Decodes standard base64 (with or without padding; whitespace ignored); `None` when it is not.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.bytes().filter(|c| !c.is_ascii_whitespace()) {
        let sextet = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => break,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(sextet);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::base64_decode;

    #[test]
    fn base64_decodes_with_and_without_padding() {
        assert_eq!(base64_decode("").unwrap(), b"");
        assert_eq!(base64_decode("Zg==").unwrap(), b"f");
        assert_eq!(base64_decode("Zm8=").unwrap(), b"fo");
        assert_eq!(base64_decode("Zm9v").unwrap(), b"foo");
        assert_eq!(base64_decode("Zm9vYg").unwrap(), b"foob");
        assert_eq!(
            base64_decode("iVBORw0K\nGgo=").unwrap(),
            b"\x89PNG\r\n\x1a\n"
        );
        assert_eq!(base64_decode("+/+/").unwrap(), [0xfb, 0xff, 0xbf]);
        assert!(base64_decode("Zm9v!").is_none());
    }
}
