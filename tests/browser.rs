//! Browser tests: pages driven in a real headless Chromium through chromedriver
//! (`tests/support/webdriver.rs`). Without a browser they skip with a note, unless
//! `SOLR_DEDUP_TEST_REQUIRE_BROWSER=1` (CI) makes that a failure.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

use crate::scenarios::harness::{corpus, Target};
use crate::support::fake_solr::{Fault, FaultRule};
use crate::support::serve::Served;
use crate::support::webdriver;

/// How long a page may take to show what a test waits for.
const WAIT: Duration = Duration::from_secs(10);

/// How long a run may take.
const RUN: Duration = Duration::from_secs(300);

/// Serves `html` to every request on a fresh 127.0.0.1 port, from a background thread that lives as
/// long as the test binary; returns the page's URL.
fn serve_html(html: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("cannot bind a port for the test page");
    let url = format!("http://{}/", listener.local_addr().expect("local address"));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            // A thread per connection: Chromium opens spare connections that it may never use, and
            // those must not hold up the next request.
            std::thread::spawn(move || {
                let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\n\
                     content-length: {}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n{html}",
                    html.len()
                );
                let _ = stream.write_all(answer.as_bytes());
            });
        }
    });
    url
}

const SMOKE_PAGE: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>smoke</title></head>
<body>
<h1>WebDriver smoke test</h1>
<input id="name" value="prefilled">
<button id="go" type="button">Go</button>
<p id="out"></p>
<script>
document.getElementById('go').addEventListener('click', () => {
  setTimeout(() => {
    document.getElementById('out').textContent =
      'clicked: ' + document.getElementById('name').value;
  }, 50);
});
</script>
</body></html>"#;

/// The harness end to end: a page served here, typed into, clicked, its script's answer waited for,
/// scripts run, and a screenshot saved as a PNG.
#[test]
fn webdriver_drives_a_page() {
    let Some(browser) = webdriver::browser("webdriver_drives_a_page") else {
        return;
    };
    let url = serve_html(SMOKE_PAGE);
    browser.set_window_size(1024, 768);
    browser.goto(&url);
    assert_eq!(browser.current_url(), url);

    let name = browser.wait_for("#name", WAIT);
    assert_eq!(browser.property(&name, "value"), "prefilled");
    assert_eq!(browser.attr(&name, "id").as_deref(), Some("name"));
    assert_eq!(browser.attr(&name, "placeholder"), None);
    browser.clear(&name);
    browser.send_keys(&name, "Ångström");
    assert!(browser.find("#no-such-thing").is_none());

    let button = browser.find("#go").expect("the button");
    assert_eq!(browser.text(&button), "Go");
    browser.click(&button);
    let out = browser.wait_for_text("#out", "clicked", WAIT);
    assert_eq!(browser.text(&out), "clicked: Ångström");

    let tag = browser.execute(
        "return arguments[0].tagName + ' ' + arguments[1];",
        &[out.to_json(), serde_json::json!(42)],
    );
    assert_eq!(tag, "P 42");
    let width = browser.wait_until(WAIT, "the window to be 1024 wide", |b| {
        let w = b.execute("return window.outerWidth;", &[]);
        (w == 1024).then_some(w)
    });
    assert_eq!(width, 1024);

    let png = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser-smoke.png");
    let _ = std::fs::remove_file(&png);
    browser.screenshot_png(&png);
    let bytes = std::fs::read(&png).expect("the screenshot");
    assert!(
        bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{} is not a PNG",
        png.display()
    );
}

/// The admin page of `solr-dedup serve`, on the fake Solr slowed down so that a run can be watched:
/// it loads, starts a run, shows the progress bar moving and the run's result, opens a group, and
/// tests URLs against the rules. Saves `serve-admin.png` (the README's screenshot) and
/// `serve-admin-phone.png` in the target's temporary directory.
#[test]
fn the_admin_page_runs_watches_opens_a_group_and_tests_urls() {
    let Some(browser) =
        webdriver::browser("the_admin_page_runs_watches_opens_a_group_and_tests_urls")
    else {
        return;
    };
    let t = Target::fake("browser-admin");
    let docs = corpus(240, 61);
    t.load(&docs);
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.json");
    let out = t.run(&["urls", "learn", "--out", rules.to_str().unwrap(), "--quiet"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let server = Served::spawn(t.command(&[
        "serve",
        "--rules",
        rules.to_str().unwrap(),
        "--batch-size",
        "10",
    ]));
    // Every request to the fake waits a little: the run takes a few seconds.
    t.fake_solr().fault(FaultRule {
        path: String::new(),
        skip: 0,
        times: usize::MAX,
        fault: Fault::Delay(Duration::from_millis(50)),
    });

    browser.set_window_size(1280, 1000);
    browser.goto(&format!("{}/", server.base));
    browser.wait_for_text("#core", &t.core_url, WAIT);
    browser.wait_for_text("#health", "answers", WAIT);
    browser.wait_for_text("#no-runs", "No runs yet", WAIT);

    // The index panel: documents, serve's settings, and links to Solr's admin UI, metrics, the API.
    browser.wait_for_text("#documents", "240", WAIT);
    let scheme = browser.wait_for(r#"#settings dd[data-setting="scheme"]"#, WAIT);
    assert_eq!(
        browser.text(&scheme),
        server.json("/api/status")["settings"]["scheme"]
            .as_str()
            .unwrap()
    );
    let admin = browser
        .find("#admin-link")
        .expect("a link to Solr's admin UI");
    let core = t.core_url.rsplit('/').next().unwrap();
    assert!(
        browser
            .attr(&admin, "href")
            .unwrap()
            .ends_with(&format!("/solr/#/{core}/core-overview")),
        "{:?}",
        browser.attr(&admin, "href")
    );
    for link in ["#link-metrics", "#link-openapi"] {
        assert!(browser.find(link).is_some(), "{link}");
    }
    assert_eq!(
        browser.property(&browser.find("#btn-run").unwrap(), "disabled"),
        serde_json::json!(false)
    );

    // Start a full run; the progress bar moves, and the "full" box is unticked once it started.
    browser.click(&browser.find("#opt-full").unwrap());
    let run = browser.find("#btn-run").expect("the run button");
    browser.click(&run);
    browser.wait_until(WAIT, "the full box to be unticked", |b| {
        let full = b.find("#opt-full").unwrap();
        (b.property(&full, "checked") == serde_json::json!(false)).then_some(())
    });
    let mut values: Vec<f64> = Vec::new();
    browser.wait_until(RUN, "the progress bar to move", |b| {
        let v = b.execute(
            "const p = document.getElementById('progress'); \
             return document.getElementById('progress-box').hidden ? -1 : (p.max > 1 ? p.value / p.max : -1);",
            &[],
        );
        let v = v.as_f64().unwrap_or(-1.0);
        if v > 0.0 && values.last() != Some(&v) {
            values.push(v);
        }
        (values.len() >= 3).then_some(())
    });
    let text = browser.text(&browser.find("#progress-text").unwrap());
    assert!(
        text.contains("documents") && text.contains("of 240"),
        "{text}"
    );

    // The result appears.
    browser.wait_for(r#"tr.run[data-state="succeeded"]"#, RUN);
    t.fake_solr().clear_faults();
    let message = browser.wait_for_text("#message", "succeeded", WAIT);
    assert!(browser.text(&message).starts_with("Run 1 succeeded"));
    let exact = browser.wait_for(r#"tr.dimension[data-dimension="exact"]"#, WAIT);
    assert!(
        browser.text(&exact).starts_with("exact"),
        "{}",
        browser.text(&exact)
    );
    assert!(
        browser
            .find(r#"tr.dimension[data-dimension="exact"] td.excluded"#)
            .is_some(),
        "the excluded counts per reason"
    );
    let api = server.json("/api/runs/1");
    let groups = api["report"]["dimensions"]["exact"]["groups"]
        .as_u64()
        .unwrap();
    let shown = browser.execute(
        "return arguments[0].cells[1].textContent;",
        &[exact.to_json()],
    );
    assert_eq!(
        shown,
        serde_json::json!(groups.to_string()),
        "the report's groups"
    );

    // Open the biggest exact group.
    browser.click(&browser.find("#btn-groups").unwrap());
    let summary = browser.wait_for("details.group summary", WAIT);
    let biggest = server.json("/api/groups/exact?limit=1&members=8");
    let first = &biggest["groups"][0];
    assert!(browser
        .text(&summary)
        .starts_with(&format!("{} documents", first["size"])));
    browser.click(&summary);
    let group = browser.find("details.group").unwrap();
    browser.wait_until(WAIT, "the group to open", |b| {
        (b.property(&group, "open") == serde_json::json!(true)).then_some(())
    });
    let member = browser.wait_for("details.group[open] li.member a", WAIT);
    let rep_url = first["representative"]["url"].as_str().unwrap();
    assert_eq!(browser.text(&member), rep_url, "the representative first");

    // The groups of the biggest group's host: that group among them, with its whole size.
    let host = url::Url::parse(rep_url)
        .unwrap()
        .host_str()
        .unwrap()
        .to_owned();
    browser.send_keys(&browser.find("#groups-host").unwrap(), &host);
    browser.click(&browser.find("#btn-groups").unwrap());
    let key = first["key"].as_str().unwrap().to_owned();
    browser.wait_until(WAIT, "the host's groups", |b| {
        let groups = b.find_all("details.group");
        (!groups.is_empty()
            && groups
                .iter()
                .any(|g| b.attr(g, "data-key").as_deref() == Some(&key)))
        .then_some(())
    });

    // Look an indexed URL up: its flags, counts and groups in each dimension.
    let member_url = first["members"][1]["url"].as_str().unwrap();
    browser.send_keys(&browser.find("#lookup-q").unwrap(), member_url);
    browser.click(&browser.find("#btn-lookup").unwrap());
    let exact_row = browser.wait_for(r#"tr.found-dimension[data-dimension="exact"]"#, WAIT);
    let api = server.json(&format!(
        "/api/lookup?q={}",
        url::form_urlencoded::byte_serialize(member_url.as_bytes()).collect::<String>()
    ));
    let doc = &api["documents"][0];
    assert_eq!(doc["url"], member_url, "{api}");
    let exact_api = &doc["dimensions"][0];
    assert_eq!(exact_api["dimension"], "exact");
    assert_eq!(exact_api["group"]["size"], first["size"], "{api}");
    assert!(
        browser
            .text(&exact_row)
            .contains(&format!("{} documents", first["size"])),
        "{}",
        browser.text(&exact_row)
    );

    // A member's "flags and groups" looks that member up in the page (not in Solr's raw JSON).
    let looked_up = doc["id"].as_str().unwrap().to_owned();
    let (look_up, other) = browser
        .find_all("#lookup a.look-up")
        .into_iter()
        .find_map(|a| {
            let id = browser.attr(&a, "data-lookup")?;
            (id != looked_up).then_some((a, id))
        })
        .expect("another member in the looked-up page's groups");
    // Inside a closed <details>: clicked by script, as a person would after opening it.
    browser.execute("arguments[0].click();", &[look_up.to_json()]);
    browser.wait_until(WAIT, "the other member looked up", |b| {
        let ids = b.find_all("#lookup p.found-doc span.id");
        (ids.len() == 1 && b.text(&ids[0]) == other).then_some(())
    });

    // Test an indexed URL and a new one against the rules.
    let indexed = docs[0]["sku"].as_str().unwrap();
    let urls = browser.find("#urls").unwrap();
    browser.send_keys(
        &urls,
        &format!("{indexed}\nhttps://never-crawled.example/page"),
    );
    browser.click(&browser.find("#btn-test").unwrap());
    browser.wait_until(WAIT, "two answers", |b| {
        (b.find_all("tr.url-result").len() == 2).then_some(())
    });
    let rows = browser.find_all("tr.url-result");
    assert_eq!(
        browser.attr(&rows[0], "data-duplicate").as_deref(),
        Some("yes")
    );
    assert_eq!(
        browser.attr(&rows[1], "data-duplicate").as_deref(),
        Some("no")
    );
    assert!(
        browser.text(&rows[1]).contains("new"),
        "{}",
        browser.text(&rows[1])
    );

    let shots = Path::new(env!("CARGO_TARGET_TMPDIR"));
    browser.set_window_size(1280, 2050);
    browser.execute("window.scrollTo(0, 0);", &[]);
    browser.screenshot_png(&shots.join("serve-admin.png"));
    // Readable on a phone: nothing wider than the screen.
    browser.set_window_size(390, 844);
    let fits = browser.wait_until(WAIT, "the phone layout", |b| {
        let v = b.execute(
            "return window.innerWidth <= 400 ? document.documentElement.scrollWidth <= window.innerWidth : null;",
            &[],
        );
        v.as_bool()
    });
    assert!(fits, "the page is wider than a phone's screen");
    // Every column of the runs table, the index panel, the settings and the lookup show on the
    // screen itself, not only after scrolling a table sideways.
    let hidden = browser.execute(
        "const cells = [...document.querySelectorAll('#runs tr.run td, #index-panel dd, #settings dd, #lookup .found-doc, #url-results td')];          return cells.filter((c) => c.getBoundingClientRect().right > window.innerWidth + 1).map((c) => c.dataset.label || c.id || c.className);",
        &[],
    );
    assert_eq!(hidden, serde_json::json!([]), "cut off on a phone");
    // The URL test's answers wrap: a URL cell is as wide as the screen allows, not a few
    // characters squeezed into a column.
    let narrowest = browser.execute(
        "return Math.min(...[...document.querySelectorAll('#url-results tr.url-result td')].filter((c) => c.textContent).map((c) => c.getBoundingClientRect().width));",
        &[],
    );
    assert!(
        narrowest.as_f64().is_some_and(|w| w > 200.0),
        "URL cells at 390 px: {narrowest}"
    );
    browser.screenshot_png(&shots.join("serve-admin-phone.png"));
}

/// While the index does not answer, Run and Check are disabled with the reason beside them; a run
/// that failed shows its error in the runs table (not only in a tooltip); once the index answers
/// again the buttons come back.
#[test]
fn the_admin_page_shows_a_failing_index_and_a_failed_run() {
    let Some(browser) = webdriver::browser("the_admin_page_shows_a_failing_index_and_a_failed_run")
    else {
        return;
    };
    let t = Target::fake("browser-failing");
    t.load(&corpus(20, 7));
    let server = Served::spawn(t.command(&["serve"]));
    // Solr answers 500 to everything from now on.
    t.fake_solr().fault(FaultRule {
        path: String::new(),
        skip: 0,
        times: usize::MAX,
        fault: Fault::Status(500),
    });
    let id = server.start_run(serde_json::json!({}));
    let ended = server.wait_run(id, RUN);
    assert_eq!(ended["state"], "failed", "{ended}");
    let error = ended["error"].as_str().unwrap().to_owned();

    browser.set_window_size(390, 844);
    browser.goto(&format!("{}/", server.base));
    let blocked = browser.wait_for_text("#run-blocked", "wait until the index answers", WAIT);
    assert!(!browser.text(&blocked).is_empty());
    for button in ["#btn-run", "#btn-check"] {
        assert_eq!(
            browser.property(&browser.find(button).unwrap(), "disabled"),
            serde_json::json!(true),
            "{button}"
        );
    }
    let row = browser.wait_for(&format!(r#"tr.run-error[data-id="{id}"]"#), WAIT);
    let shown = browser.text(&row);
    assert!(
        error.starts_with(shown.trim()) || shown.contains(&error[..error.len().min(40)]),
        "shown {shown:?}, the run's error {error:?}"
    );
    let fits = browser.execute(
        "return document.documentElement.scrollWidth <= window.innerWidth;",
        &[],
    );
    assert_eq!(fits, serde_json::json!(true), "wider than a phone");

    // Solr answers again: within the page's refresh, Run comes back.
    t.fake_solr().clear_faults();
    browser.wait_until(Duration::from_secs(30), "Run to be enabled", |b| {
        let run = b.find("#btn-run")?;
        (b.property(&run, "disabled") == serde_json::json!(false)).then_some(())
    });
    let blocked = browser.find("#run-blocked").unwrap();
    assert_eq!(
        browser.property(&blocked, "hidden"),
        serde_json::json!(true)
    );
}

/// With a token: a first visit asks for it as a prompt (no error before anything was typed, nothing
/// sent, Run disabled, the index panel saying why it is empty); once a valid one is entered the
/// overview loads and Run comes.
#[test]
fn the_admin_page_forgets_the_token_message_once_the_token_is_right() {
    let Some(browser) =
        webdriver::browser("the_admin_page_forgets_the_token_message_once_the_token_is_right")
    else {
        return;
    };
    let t = Target::fake("browser-token");
    t.load(&corpus(10, 3));
    let token = "a-token-of-twenty-four-c";
    let mut cmd = t.command(&["serve"]);
    cmd.env("SOLR_DEDUP_TOKEN", token);
    let server = Served::spawn(cmd);
    browser.set_window_size(1024, 768);
    browser.goto(&format!("{}/", server.base));
    browser.wait_for_text("#overview", "once the token is given", WAIT);
    let message = browser.text(&browser.find("#message").unwrap());
    assert_eq!(message.trim(), "", "no error before anything was typed");
    assert_eq!(
        browser.property(&browser.find("#btn-run").unwrap(), "disabled"),
        serde_json::json!(true)
    );
    let box_shown = browser.execute(
        "return getComputedStyle(document.getElementById('token-box')).display;",
        &[],
    );
    assert_eq!(box_shown, serde_json::json!("block"));
    let input = browser.wait_for("#token", WAIT);
    browser.send_keys(&input, token);
    browser.click(&browser.find("#btn-token").unwrap());
    browser.wait_for_text("#health", "answers", WAIT);
    browser.wait_until(WAIT, "Run to be enabled", |b| {
        let run = b.find("#btn-run")?;
        (b.property(&run, "disabled") == serde_json::json!(false)).then_some(())
    });
    // The poll after the token also answers; the message stays empty.
    std::thread::sleep(Duration::from_millis(2500));
    let message = browser.text(&browser.find("#message").unwrap());
    assert!(
        !message.contains("token"),
        "the token message stayed: {message:?}"
    );
}
