//! A real Solr for the scenarios' `::real` (standalone core) and `::cloud` (two-shard SolrCloud
//! collection) variants, started once per test binary from Apache Solr's own test framework.
//!
//! `tests/solr` is a small Maven project: `SolrLauncher` starts, on 127.0.0.1 and free ports, a
//! standalone node with the `schema/` configset as core `collection1`, and a SolrCloud of two nodes
//! (embedded ZooKeeper) with a two-shard collection `collection1` from the same configset. It prints
//! their URLs as one JSON line and stops when its standard input closes. The test binary keeps that
//! input open for as long as it lives, so however it ends, the JVM ends with it.
//!
//! The first scenario that needs it builds the launcher (`mvn compile dependency:build-classpath`,
//! only when `tests/solr` changed since the last build) and starts the JVM; the Solr log goes to
//! `tests/solr/target/solr.log`.
//!
//! Test-only variables (the tool's own `SOLR_URL`, `SOLR_USER` and `SOLR_PASSWORD` are never read
//! here, so `cargo test` cannot write into a core a user exported for the tool):
//!
//! | variable | effect |
//! |---|---|
//! | `SOLR_DEDUP_TEST_SOLR_URL` | run `::real` against this standalone core instead of starting one |
//! | `SOLR_DEDUP_TEST_SOLRCLOUD_URL` | run `::cloud` against this SolrCloud collection URL |
//! | `SOLR_DEDUP_TEST_SOLR_USER`, `SOLR_DEDUP_TEST_SOLR_PASSWORD` | basic auth for those two |
//! | `SOLR_DEDUP_TEST_NO_SOLR` | `1`: no real Solr (the variants show as ignored), see `build.rs` |
//! | `SOLR_DEDUP_TEST_REQUIRE_SOLR` | `1`: fail the build when they would be ignored (`.ci/run`) |
//!
//! The scenarios tell their documents apart by a tag, so the cores are shared by all of them.
//!
//! [`big_cloud`] starts, in a JVM of its own, the launcher's `cloud4x2` mode: four nodes and a
//! collection of four shards with two replicas each, whose nodes a scenario can stop and start
//! again ([`BigCloud::stop`], [`BigCloud::start`]). It has no URL variable: it is always started
//! (its log is `tests/solr/target/solr-4x2.log`).

use std::io::Write;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::ChildStdin;
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Mutex, OnceLock};
use std::time::{Duration, SystemTime};

/// How long the JVM may take to start both Solrs (about 10 s on a two-core machine).
const START_TIMEOUT: Duration = Duration::from_secs(300);

/// Where the scenarios' real Solr is.
#[derive(Debug)]
pub struct RealSolr {
    /// The standalone core URL.
    pub standalone: String,
    /// The SolrCloud collection URL (any node's).
    pub cloud: String,
    /// Basic-auth credentials, for cores given by URL.
    pub credentials: Option<(String, String)>,
    /// The launcher, whose standard input stays open until the process ends.
    _launcher: Option<Mutex<Child>>,
}

static REAL: OnceLock<Result<RealSolr, String>> = OnceLock::new();

/// The four-node SolrCloud of the scale scenario.
pub struct BigCloud {
    /// The collection URL (node 0's).
    pub cloud: String,
    /// Each node's `/solr` base URL, in the launcher's order.
    pub nodes: Vec<String>,
    /// The launcher's standard input (commands) and the lines it answers.
    control: Mutex<(ChildStdin, mpsc::Receiver<String>)>,
    _launcher: Mutex<Child>,
}

static BIG: OnceLock<Result<BigCloud, String>> = OnceLock::new();

/// The four-node cloud, started on first use; panics with what went wrong if it cannot start.
pub fn big_cloud() -> &'static BigCloud {
    let started = BIG.get_or_init(|| {
        let (mut child, urls, lines) = launch("cloud4x2", "solr-4x2.log")?;
        let field = |k: &str| urls.get(k).cloned().ok_or(format!("no {k} in {urls}"));
        let cloud = field("cloud")?.as_str().unwrap_or_default().to_owned();
        let nodes = field("nodes")?
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let stdin = child.stdin.take().expect("piped");
        Ok(BigCloud {
            cloud,
            nodes,
            control: Mutex::new((stdin, lines)),
            _launcher: Mutex::new(child),
        })
    });
    match started {
        Ok(b) => b,
        Err(e) => panic!("no four-node SolrCloud for this scenario: {e}"),
    }
}

impl BigCloud {
    fn command(&self, line: &str, want: &str) {
        let mut control = self.control.lock().unwrap_or_else(|e| e.into_inner());
        writeln!(control.0, "{line}").expect("the launcher reads its commands");
        control.0.flush().expect("the launcher reads its commands");
        let answer = control
            .1
            .recv_timeout(START_TIMEOUT)
            .unwrap_or_else(|e| panic!("{line}: no answer from the launcher ({e})"));
        assert_eq!(answer.trim(), want, "{line}");
    }

    /// Stops node `n` (its Jetty), once it is down.
    pub fn stop(&self, n: usize) {
        self.command(&format!("stop {n}"), &format!("stopped {n}"));
    }

    /// Starts node `n` again on its port, once every replica of the collection is active.
    pub fn start(&self, n: usize) {
        self.command(&format!("start {n}"), &format!("started {n}"));
    }
}

/// The real Solr, started on first use; panics with what went wrong (and where the log is) if it
/// cannot start.
pub fn real_solr() -> &'static RealSolr {
    match REAL.get_or_init(start) {
        Ok(r) => r,
        Err(e) => panic!("no real Solr for this scenario: {e}"),
    }
}

fn var(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty())
        .map(|v| v.trim_end_matches('/').to_owned())
}

fn start() -> Result<RealSolr, String> {
    let standalone = var("SOLR_DEDUP_TEST_SOLR_URL");
    let cloud = var("SOLR_DEDUP_TEST_SOLRCLOUD_URL");
    let credentials = var("SOLR_DEDUP_TEST_SOLR_USER").zip(var("SOLR_DEDUP_TEST_SOLR_PASSWORD"));
    let which = match (&standalone, &cloud) {
        (Some(s), Some(c)) => {
            return Ok(RealSolr {
                standalone: s.clone(),
                cloud: c.clone(),
                credentials,
                _launcher: None,
            })
        }
        (Some(_), None) => "cloud",
        (None, Some(_)) => "standalone",
        (None, None) => "both",
    };
    let (child, urls, _) = launch(which, "solr.log")?;
    let pick = |given: Option<String>, key: &str| -> Result<String, String> {
        given.map_or_else(
            || {
                urls.get(key)
                    .and_then(serde_json::Value::as_str)
                    .map(str::to_owned)
                    .ok_or_else(|| format!("the launcher printed no {key} URL: {urls}"))
            },
            Ok,
        )
    };
    Ok(RealSolr {
        standalone: pick(standalone, "standalone")?,
        cloud: pick(cloud, "cloud")?,
        credentials,
        _launcher: Some(Mutex::new(child)),
    })
}

fn launcher_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/solr")
}

fn modified(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// Builds the launcher unless its classes and classpath are newer than its sources.
fn build_launcher(dir: &Path) -> Result<PathBuf, String> {
    let target = dir.join("target");
    let classpath = target.join("classpath.txt");
    let class = target.join("classes/SolrLauncher.class");
    let built = modified(&classpath).min(modified(&class));
    let sources = [
        dir.join("pom.xml"),
        dir.join("src/main/java/SolrLauncher.java"),
        dir.join("src/main/resources/log4j2.xml"),
    ];
    let fresh = built.is_some_and(|b| sources.iter().all(|s| modified(s).is_some_and(|m| m <= b)));
    if !fresh {
        let out = Command::new("mvn")
            .args(["-B", "-q", "-f"])
            .arg(dir.join("pom.xml"))
            .args([
                "compile",
                "dependency:build-classpath",
                "-Dmdep.outputFile=target/classpath.txt",
            ])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| {
                format!("could not run mvn ({e}); install Maven, or set SOLR_DEDUP_TEST_NO_SOLR=1")
            })?;
        if !out.status.success() {
            return Err(format!(
                "mvn could not build the launcher in {}:\n{}{}",
                dir.display(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    let deps =
        std::fs::read_to_string(&classpath).map_err(|e| format!("{}: {e}", classpath.display()))?;
    let mut cp = target.join("classes").into_os_string();
    cp.push(":");
    cp.push(deps.trim());
    Ok(PathBuf::from(cp))
}

/// Builds the index-time signing plugin's jar (`solr-plugin/`, `mvn package` without its unit
/// tests, which `.ci/run` runs apart) unless it is newer than its sources; returns its path.
fn build_plugin() -> Result<PathBuf, String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("solr-plugin");
    let pom = std::fs::read_to_string(dir.join("pom.xml"))
        .map_err(|e| format!("solr-plugin/pom.xml: {e}"))?;
    // The project's own <version>, the first one after its artifactId.
    let version = pom
        .split("<artifactId>solr-dedup-plugin</artifactId>")
        .nth(1)
        .and_then(|rest| rest.split("<version>").nth(1))
        .and_then(|v| v.split("</version>").next())
        .ok_or("solr-plugin/pom.xml: no version")?;
    let jar = dir.join(format!("target/solr-dedup-plugin-{version}.jar"));
    let mut sources = vec![dir.join("pom.xml")];
    let mut stack = vec![
        dir.join("src/main"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("unicode"),
    ];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))? {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                sources.push(path);
            }
        }
    }
    let built = modified(&jar);
    if built.is_some_and(|b| sources.iter().all(|s| modified(s).is_some_and(|m| m <= b))) {
        return Ok(jar);
    }
    let out = Command::new("mvn")
        .args(["-B", "-q", "-DskipTests", "-f"])
        .arg(dir.join("pom.xml"))
        .arg("package")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            format!("could not run mvn ({e}); install Maven, or set SOLR_DEDUP_TEST_NO_SOLR=1")
        })?;
    if !out.status.success() || !jar.is_file() {
        return Err(format!(
            "mvn could not build the plugin in {}:\n{}{}",
            dir.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(jar)
}

/// Starts the launcher and waits for its line of URLs; the lines it prints after it come through
/// the receiver.
fn launch(
    which: &str,
    log_name: &str,
) -> Result<(Child, serde_json::Value, mpsc::Receiver<String>), String> {
    // Two launchers may start at once (the scale scenario's and the others'): one build.
    static BUILD: Mutex<()> = Mutex::new(());
    let dir = launcher_dir();
    let cp = {
        let _one = BUILD.lock().unwrap_or_else(|e| e.into_inner());
        build_launcher(&dir)?
    };
    let log_path = dir.join("target").join(log_name);
    let log =
        std::fs::File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
    let java = std::env::var_os("JAVA_HOME")
        .map(|h| PathBuf::from(h).join("bin/java"))
        .filter(|j| j.exists())
        .unwrap_or_else(|| PathBuf::from("java"));
    let plugin = {
        let _one = BUILD.lock().unwrap_or_else(|e| e.into_inner());
        build_plugin()?
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut child = Command::new(&java)
        .arg(format!("-Dsolrdedup.plugin.jar={}", plugin.display()))
        .arg(format!(
            "-Dsolrdedup.plugin.conf={}",
            root.join("solr-plugin/conf").display()
        ))
        .args([
            // Four nodes in one JVM need more room than a core and two nodes.
            if which == "cloud4x2" {
                "-Xmx2g"
            } else {
                "-Xmx1g"
            },
            "-XX:+UseSerialGC",
            "-Djava.net.preferIPv4Stack=true",
            "-cp",
        ])
        .arg(&cp)
        .arg("SolrLauncher")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("schema"))
        .arg(which)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
        .map_err(|e| {
            format!(
                "could not run {} ({e}); install Java 17, or set SOLR_DEDUP_TEST_NO_SOLR=1",
                java.display()
            )
        })?;
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    let (more_tx, more) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        let got = reader.read_line(&mut line).map(|_| line);
        let _ = tx.send(got);
        // Later lines answer commands; read all, so that it never blocks on a full pipe.
        for line in reader.lines() {
            let Ok(line) = line else { break };
            let _ = more_tx.send(line);
        }
    });
    let failed = |why: String| format!("{why}; the Solr log is {}", log_path.display());
    let line = match rx.recv_timeout(START_TIMEOUT) {
        Ok(Ok(line)) if !line.trim().is_empty() => line,
        Ok(Ok(_)) => {
            let status = child.wait().ok();
            return Err(failed(format!(
                "the launcher ended without URLs ({status:?})"
            )));
        }
        Ok(Err(e)) => return Err(failed(format!("reading the launcher: {e}"))),
        Err(_) => {
            let _ = child.kill();
            return Err(failed(format!(
                "the launcher was not ready after {} s",
                START_TIMEOUT.as_secs()
            )));
        }
    };
    let urls: serde_json::Value = serde_json::from_str(line.trim())
        .map_err(|e| failed(format!("the launcher printed {line:?}: {e}")))?;
    eprintln!("real Solr for the scenarios: {}", line.trim());
    Ok((child, urls, more))
}
