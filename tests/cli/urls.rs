//! `urls learn|predict|canonical|export`: evidence, predictions, rules files, Nutch regexes.

use super::*;

#[test]
fn urls_learn_counts_the_evidence_of_a_hand_made_corpus() {
    let (input, rules_path) = shop_rules("urls-learn");
    let text = std::fs::read_to_string(&rules_path).unwrap();
    let rules: Value = serde_json::from_str(&text).unwrap();
    // Counted by hand, per product (5 products), each URL against the URL without one part:
    // - pI-http → https://shop.example/item/I = pI, same text: 1 scheme pair, support; 5 in all.
    // - pI-www → the bare host = pI, same text: 1 www pair, support; 5 in all.
    // - pI-sa, pI-sb → without sid = pI, same text: 2 sid pairs, support; 10 in all.
    // - pI-page2 → without page = pI, other text: 1 page pair, against; 5 in all.
    // - dropping the last segment (`/item/`) never gives an indexed URL: no default document.
    // The rules under /item/ hold the same pairs as the site's (page 0 of 5, sid 10 of 10: left
    // out), `page=2` never applies (left out), each sid value has one pair (under 5: no rule). One
    // site: nothing pooled over sites.
    assert_eq!(rules["url_rules"], 1, "{text}");
    assert_eq!(rules["min_estimate"], 0.5, "{text}");
    let sites: Vec<&String> = rules["sites"].as_object().unwrap().keys().collect();
    assert_eq!(sites, ["shop.example"], "{text}");
    let shop = rules["sites"]["shop.example"].as_object().unwrap();
    let mut keys: Vec<&str> = shop.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["pages", "params", "scheme", "spelling", "www"],
        "{text}"
    );
    assert_eq!(shop["pages"], 30);
    // Per product: https for all but pI-http, the bare host for all but pI-www; one pair at most
    // in a query, so no parameter order. Together: pI, pI-sa, pI-sb and pI-page2 under
    // https://shop.example, pI-http under http://, pI-www under https://www.; none under
    // http://www.
    assert_eq!(
        shop["spelling"],
        serde_json::json!({"https": 25, "http": 5, "www": 5, "bare": 25,
            "origins": {"https_bare": 20, "http_bare": 5, "https_www": 5}}),
        "{text}"
    );
    for part in ["scheme", "www"] {
        assert_eq!(shop[part]["support"], 5, "{part}: {text}");
        assert_eq!(shop[part]["against"], 0, "{part}: {text}");
        assert!(close(&shop[part]["estimate"], ALL_OF_5), "{part}: {text}");
    }
    let params = shop["params"].as_array().unwrap();
    assert_eq!(params.len(), 2, "{text}");
    let param = |name: &str| {
        params
            .iter()
            .find(|p| p["param"] == name)
            .unwrap_or_else(|| panic!("no {name} rule: {text}"))
    };
    let sid = param("sid");
    assert_eq!(sid["path_prefix"], "/");
    assert!(sid.get("value").is_none(), "any value: {sid}");
    assert_eq!(
        (&sid["evidence"]["support"], &sid["evidence"]["against"]),
        (&serde_json::json!(10), &serde_json::json!(0))
    );
    assert!(close(&sid["evidence"]["estimate"], ALL_OF_10), "{sid}");
    let page = param("page");
    assert_eq!(page["path_prefix"], "/");
    assert_eq!(
        page["evidence"],
        serde_json::json!({"support": 0, "against": 5, "estimate": 0.0})
    );

    // The summary: 30 pages; 5 + 5 + 10 + 5 = 25 pairs; candidates met: scheme, www, sid and page
    // on the site and under /item/ (4), sid at each of its 10 values on the site and under /item/
    // (20), page=2 on the site and under /item/ (2): 28.
    let out = run(
        &[
            "urls",
            "learn",
            "--input",
            input.to_str().unwrap(),
            "--out",
            "-",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        text,
        "the same rules on stdout as in the file"
    );
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "one line: {err:?}");
    assert!(
        err.contains("30 pages of 1 sites, 25 pairs compared, 28 candidates"),
        "{err}"
    );
    assert!(err.contains("signed now 30"), "{err}");
    assert!(err.contains("written to standard output"), "{err}");

    // --min-estimate 0.6: the same evidence, written with the other threshold.
    let out = run(
        &[
            "urls",
            "learn",
            "--input",
            input.to_str().unwrap(),
            "--out",
            "-",
            "--min-estimate",
            "0.6",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let strict: Value = serde_json::from_str(stdout(&out)).unwrap();
    assert_eq!(strict["min_estimate"], 0.6);
    assert_eq!(strict["sites"], rules["sites"]);
}

#[test]
fn urls_predict_names_the_indexed_page_a_url_duplicates() {
    let (input, rules) = shop_rules("urls-predict");
    let out = run(
        &[
            "urls",
            "predict",
            "--rules",
            rules.to_str().unwrap(),
            "--input",
            input.to_str().unwrap(),
            "http://www.shop.example/item/2?sid=zz",
            "https://www.shop.example/item/3?page=2",
            "https://shop.example/item/3?page=3",
            "https://shop.example/item/99",
            "https://shop.example/item/0",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 5, "{}", stdout(&out));
    let page = |id: &str, url: &str| serde_json::json!({"id": id, "url": url});

    // scheme, www and sid rewrite it to p2's URL, which no rule rewrites: 0.5655 × 0.5655 × 0.7225.
    let p = &lines[0];
    assert_eq!(p["url"], "http://www.shop.example/item/2?sid=zz");
    assert_eq!(p["canonical"], "https://shop.example/item/2");
    assert_eq!(
        p["rules"],
        serde_json::json!(["scheme", "www", "param sid"])
    );
    assert_eq!(
        p["duplicate_of"],
        page("p2", "https://shop.example/item/2"),
        "the page with the URL no rule had to rewrite, not its http/www/sid copies"
    );
    assert!(
        close(&p["probability"], P_ALL_OF_5 * P_ALL_OF_5 * P_ALL_OF_10),
        "{p}"
    );

    // page matters (0 of 5): kept; www rewrites the host; the indexed page=2 page is named.
    let p = &lines[1];
    assert_eq!(p["canonical"], "https://shop.example/item/3?page=2");
    assert_eq!(p["rules"], serde_json::json!(["www"]));
    assert_eq!(
        p["duplicate_of"],
        page("p3-page2", "https://shop.example/item/3?page=2")
    );
    assert!(close(&p["probability"], P_ALL_OF_5), "{p}");

    // No indexed page has these forms: new, probability 0.
    for (p, canonical) in [
        (&lines[2], "https://shop.example/item/3?page=3"),
        (&lines[3], "https://shop.example/item/99"),
    ] {
        assert_eq!(p["canonical"], canonical);
        assert_eq!(p["probability"], 0.0, "{p}");
        assert_eq!(p["duplicate_of"], Value::Null, "{p}");
        assert_eq!(p["rules"], serde_json::json!([]), "{p}");
    }

    // An indexed URL itself: certain, no rule.
    let p = &lines[4];
    assert_eq!(p["duplicate_of"], page("p0", "https://shop.example/item/0"));
    assert_eq!(p["probability"], 1.0);
    assert_eq!(
        p.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["canonical", "duplicate_of", "probability", "rules", "url"]
    );
}

#[test]
fn urls_predict_answers_the_rest_of_a_batch_around_bad_urls() {
    let (input, rules) = shop_rules("urls-predict-bad");
    let batch = "http://www.shop.example/item/2?sid=zz\n\
                 not a url\n\
                 mailto:orders@shop.example\n\
                 \n\
                 ftp://shop.example/item/1\n\
                 http://\n\
                 https://shop.example/item/99\n";
    let out = run(
        &[
            "urls",
            "predict",
            "--rules",
            rules.to_str().unwrap(),
            "--input",
            input.to_str().unwrap(),
            "-",
        ],
        batch.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "one line: {err:?}");
    assert!(err.contains("4 URLs had no canonical form"), "{err}");
    // One line per URL, in order; the blank line is skipped.
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 6, "{}", stdout(&out));
    assert_eq!(lines[0]["duplicate_of"]["id"], "p2", "{}", lines[0]);
    for (line, url, why) in [
        (&lines[1], "not a url", "not a URL"),
        (
            &lines[2],
            "mailto:orders@shop.example",
            "not an http(s) URL",
        ),
        (&lines[3], "ftp://shop.example/item/1", "not an http(s) URL"),
        (&lines[4], "http://", "not a URL"),
    ] {
        assert_eq!(line["url"], url, "{line}");
        assert!(
            line["error"].as_str().is_some_and(|e| e.contains(why)),
            "{line}"
        );
        assert_eq!(line.as_object().unwrap().len(), 2, "url and error: {line}");
    }
    assert_eq!(lines[5]["url"], "https://shop.example/item/99");
    assert_eq!(lines[5]["duplicate_of"], Value::Null);
}

#[test]
fn urls_predict_against_an_empty_index_answers_every_url_as_new() {
    let (_, rules) = shop_rules("urls-predict-empty");
    let empty = temp_file("urls-empty-index.jsonl", b"");
    let out = run(
        &[
            "urls",
            "predict",
            "--rules",
            rules.to_str().unwrap(),
            "--input",
            empty.to_str().unwrap(),
            "http://www.shop.example/item/2?sid=zz",
            "https://shop.example/item/0",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "one line: {err:?}");
    assert!(err.contains("the index holds no page"), "{err}");
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 2, "{}", stdout(&out));
    // The rules still rewrite the URL; with no page of that form it is new.
    assert_eq!(lines[0]["canonical"], "https://shop.example/item/2");
    assert_eq!(
        lines[0]["rules"],
        serde_json::json!(["scheme", "www", "param sid"])
    );
    for line in &lines {
        assert_eq!(line["probability"], 0.0, "{line}");
        assert_eq!(line["duplicate_of"], Value::Null, "{line}");
    }
}

#[test]
fn urls_canonical_prints_one_line_per_url() {
    let (_, rules) = shop_rules("urls-canonical");
    let rules = rules.to_str().unwrap();
    // With the rules learned above (scheme, www, sid apply; page does not): host case and scheme
    // and www and sid; another site has no rules (nothing pooled); page stays.
    let batch = "HTTP://WWW.Shop.Example/item/7?sid=q&x=1\n\
                 not a url\n\
                 \n\
                 https://other.example/a?sid=1\n\
                 mailto:orders@shop.example\n\
                 https://shop.example/item/1?page=2&sid=x#reviews\n";
    let out = run(
        &["urls", "canonical", "--rules", rules, "-"],
        batch.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "https://shop.example/item/7?x=1\n\
         \n\
         https://other.example/a?sid=1\n\
         \n\
         https://shop.example/item/1?page=2\n",
        "one line per URL (the blank input line skipped), an empty one for each bad URL"
    );
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 2, "one line per bad URL: {err:?}");
    assert!(err.lines().next().unwrap().contains("not a URL"), "{err}");
    assert!(err.contains("not an http(s) URL"), "{err}");

    let out = run(
        &[
            "urls",
            "canonical",
            "--rules",
            rules,
            "http://shop.example/item/4",
            "https://www.shop.example/",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "https://shop.example/item/4\nhttps://shop.example/\n"
    );
    assert_eq!(stderr(&out), "");
}

/// The `(pattern, substitution)` of each `<regex>` of a `regex-normalize.xml`, after checking that
/// it has the shape Nutch reads. Comments are left out before parsing: whether they are well-formed
/// is [`urls_export_is_well_formed_xml`]'s business.
fn nutch_regexes(xml: &str) -> Vec<(String, String)> {
    let mut plain = String::new();
    let mut rest = xml;
    while let Some(start) = rest.find("<!--") {
        plain.push_str(&rest[..start]);
        let end = rest[start..].find("-->").expect("comments end") + start + 3;
        rest = &rest[end..];
    }
    plain.push_str(rest);
    let doc = roxmltree::Document::parse(&plain).unwrap_or_else(|e| panic!("{e}: {xml}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "regex-normalize", "{xml}");
    root.children()
        .filter(|n| n.is_element())
        .map(|n| {
            assert_eq!(n.tag_name().name(), "regex", "{xml}");
            let text = |tag: &str| {
                n.children()
                    .find(|c| c.has_tag_name(tag))
                    .unwrap_or_else(|| panic!("no {tag}: {xml}"))
                    .text()
                    .unwrap_or("")
                    .to_owned()
            };
            (text("pattern"), text("substitution"))
        })
        .collect()
}

#[test]
fn urls_export_writes_nutch_regexes_for_the_rules_that_apply() {
    let (_, rules) = shop_rules("urls-export");
    let rules = rules.to_str().unwrap();
    let out = run(
        &["urls", "export", "--rules", rules, "--format", "nutch"],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let xml = stdout(&out).to_owned();
    assert!(xml.starts_with("<?xml"), "{xml}");
    // nutch is the default format.
    let default = run(&["urls", "export", "--rules", rules], b"");
    assert_eq!(default.status.code(), Some(0), "{}", stderr(&default));
    assert_eq!(stdout(&default), xml);
    let regexes = nutch_regexes(&xml);
    // scheme, www and sid apply (page does not): three rules and the two clean-ups of the query.
    assert_eq!(regexes.len(), 5, "{xml}");
    assert!(
        regexes
            .iter()
            .any(|(p, s)| p.contains("www\\.") && p.contains("shop\\.example") && s == "$1$2"),
        "a regex for the www rule: {xml}"
    );
    // The evidence in comments; the page rule (0 of 5) is not exported.
    assert!(xml.contains("shop.example: scheme (5 of 5)"), "{xml}");
    assert!(xml.contains("shop.example: www (5 of 5)"), "{xml}");
    assert!(xml.contains("shop.example: param sid (10 of 10)"), "{xml}");
    assert!(!xml.contains("param page"), "{xml}");

    // Applied in order with replaceAll, as Nutch does, they rewrite as the canonical form does
    // (the host is lower-case already: Nutch's basic normaliser does that before).
    let apply = |url: &str| {
        regexes.iter().fold(url.to_owned(), |u, (p, s)| {
            let re = fancy_regex::Regex::new(p).unwrap_or_else(|e| panic!("{p}: {e}"));
            re.replace_all(&u, s.as_str()).into_owned()
        })
    };
    for (url, want) in [
        (
            "http://www.shop.example/item/2?sid=zz",
            "https://shop.example/item/2",
        ),
        (
            "http://www.shop.example/item/2?sid=zz&x=1",
            "https://shop.example/item/2?x=1",
        ),
        (
            "https://shop.example/item/1?page=2&sid=x",
            "https://shop.example/item/1?page=2",
        ),
        (
            "https://www.shop.example/item/3?page=2",
            "https://shop.example/item/3?page=2",
        ),
        (
            "https://other.example/a?sid=1",
            "https://other.example/a?sid=1",
        ),
    ] {
        assert_eq!(apply(url), want, "{url}");
        let c = run(&["urls", "canonical", "--rules", rules, url], b"");
        assert_eq!(stdout(&c), format!("{want}\n"), "{url}");
    }

    // --out writes the same file; --min-estimate 0.7 keeps only sid (0.7225; scheme and www 0.5655).
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("cli")
        .join("urls-export.xml");
    let _ = std::fs::remove_file(&path);
    let out = run(
        &[
            "urls",
            "export",
            "--rules",
            rules,
            "--format",
            "nutch",
            "--out",
            path.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).is_empty());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), xml);
    let out = run(
        &[
            "urls",
            "export",
            "--rules",
            rules,
            "--format",
            "nutch",
            "--min-estimate",
            "0.7",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let strict = stdout(&out);
    assert_eq!(nutch_regexes(strict).len(), 3, "{strict}");
    assert!(strict.contains("param sid (10 of 10)"), "{strict}");
    assert!(!strict.contains("www (5 of 5)"), "{strict}");
}

#[test]
fn urls_bad_rules_files_are_refused_in_one_line() {
    let input = shop_corpus("urls-bad-rules-corpus.jsonl");
    let input = input.to_str().unwrap();
    let missing = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-such-rules.json");
    let cases: Vec<(PathBuf, &[&str])> = vec![
        (
            temp_file(
                "urls-format-2.json",
                br#"{"url_rules": 2, "min_estimate": 0.5, "sites": {}}"#,
            ),
            &["format 2, this solr-dedup reads format 1", "urls learn"],
        ),
        (
            temp_file("urls-broken.json", br#"{"url_rules": 1, "sites": {"#),
            &["not JSON", "urls learn"],
        ),
        (
            // A chrome model: JSON, but not rules.
            temp_file("urls-chrome-model.json", br#"{"hosts": {}, "skipped": {}}"#),
            &["not a rules file", "urls learn"],
        ),
        (
            temp_file("urls-array.json", b"[1, 2, 3]"),
            &["not a rules file", "urls learn"],
        ),
        (
            temp_file("urls-no-min.json", br#"{"url_rules": 1, "sites": {}}"#),
            &["missing field `min_estimate`", "learn the rules again"],
        ),
        (
            temp_file(
                "urls-min-range.json",
                br#"{"url_rules": 1, "min_estimate": 1.5, "sites": {}}"#,
            ),
            &["min_estimate must be from 0 to 1"],
        ),
        (missing, &["cannot read the rules"]),
    ];
    for (path, wanted) in &cases {
        let rules = path.to_str().unwrap();
        let name = path.file_name().unwrap().to_str().unwrap();
        for args in [
            &[
                "urls",
                "predict",
                "--rules",
                rules,
                "--input",
                input,
                "https://shop.example/item/1",
            ][..],
            &["urls", "predict", "--rules", rules, "--input", input, "-"],
            &[
                "urls",
                "canonical",
                "--rules",
                rules,
                "https://shop.example/item/1",
            ],
            &["urls", "export", "--rules", rules, "--format", "nutch"],
        ] {
            let out = run(args, b"https://shop.example/item/1\n");
            let err = usage_failure(&out);
            assert!(stdout(&out).is_empty(), "{args:?}: {}", stdout(&out));
            assert!(err.contains(name), "names the file: {err}");
            for w in *wanted {
                assert!(err.contains(w), "{args:?}: {w:?} in {err}");
            }
        }
    }
}

#[test]
fn urls_learn_with_nothing_to_learn_writes_no_file() {
    let empty = temp_file("urls-learn-empty.jsonl", b"");
    let out_path = empty.with_file_name("urls-learn-empty-rules.json");
    let _ = std::fs::remove_file(&out_path);
    let out = run(
        &[
            "urls",
            "learn",
            "--input",
            empty.to_str().unwrap(),
            "--out",
            out_path.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "one line: {err:?}");
    assert!(err.contains("nothing to learn"), "{err}");
    assert!(err.contains("(0 documents read"), "{err}");
    assert!(!out_path.exists(), "no rules file");
    assert!(stdout(&out).is_empty());

    // Three documents: one without a URL, two with URLs that are not http(s).
    let no_http = temp_file(
        "urls-learn-no-http.jsonl",
        concat!(
            r#"{"id":"1","text_t":"no URL at all"}"#,
            "\n",
            r#"{"id":"2","sku":"ftp://files.example/a.txt","text_t":"a file"}"#,
            "\n",
            r#"{"id":"3","sku":"mailto:someone@mail.example","text_t":"a mailbox"}"#,
            "\n",
        )
        .as_bytes(),
    );
    let out = run(
        &[
            "urls",
            "learn",
            "--input",
            no_http.to_str().unwrap(),
            "--out",
            "-",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "one line: {err:?}");
    assert!(
        err.contains("(3 documents read, 1 without a URL, 2 with another kind of URL)"),
        "{err}"
    );
}

#[test]
fn urls_without_an_index_exit_2_and_with_solr_down_exit_3() {
    let (input, rules) = shop_rules("urls-no-index");
    let rules = rules.to_str().unwrap();
    let out_path = input.with_file_name("urls-no-index-out.json");
    let _ = std::fs::remove_file(&out_path);
    let out_arg = out_path.to_str().unwrap();

    let err = usage_failure(&run_without_solr_url(&["urls", "learn", "--out", out_arg]));
    assert!(err.contains("no index: give --solr URL"), "{err}");
    assert!(err.contains("--input FILE"), "{err}");
    assert!(!out_path.exists());
    let err = usage_failure(&run_without_solr_url(&[
        "urls",
        "predict",
        "--rules",
        rules,
        "https://shop.example/item/1",
    ]));
    assert!(err.contains("no index"), "{err}");

    // Usage errors: clap's, one line.
    for args in [
        &["urls", "predict", "--input", input.to_str().unwrap(), "x"][..],
        &["urls", "learn", "--input", input.to_str().unwrap()],
        &["urls", "export", "--rules", rules, "--format", "csv"],
        &[
            "urls",
            "learn",
            "--input",
            "/no/such/corpus.jsonl",
            "--out",
            out_arg,
        ],
        &[
            "urls",
            "learn",
            "--input",
            input.to_str().unwrap(),
            "--out",
            out_arg,
            "--min-estimate",
            "2",
        ],
    ] {
        let out = run_without_solr_url(args);
        usage_failure(&out);
        assert!(stdout(&out).is_empty(), "{args:?}");
        assert!(!out_path.exists(), "{args:?}");
    }

    // Solr not running: a port nothing listens on (bound, noted, closed).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let solr = format!("http://127.0.0.1:{port}/solr/collection1");
    for args in [
        &[
            "urls",
            "learn",
            "--solr",
            &solr,
            "--retries",
            "0",
            "--out",
            out_arg,
        ][..],
        &[
            "urls",
            "predict",
            "--rules",
            rules,
            "--solr",
            &solr,
            "--retries",
            "0",
            "https://shop.example/",
        ],
    ] {
        let out = run_without_solr_url(args);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", stderr(&out));
        let err = error_line(&out);
        assert!(err.contains("could not be reached"), "{err}");
        assert!(stdout(&out).is_empty(), "{args:?}");
        assert!(!out_path.exists(), "{args:?}");
    }
}

#[test]
fn urls_export_is_well_formed_xml() {
    // Nutch reads regex-normalize.xml with a DOM parser, which refuses the whole file when it is not
    // well-formed: `--` inside a comment, say.
    let (_, rules) = shop_rules("urls-export-xml");
    let out = run(
        &[
            "urls",
            "export",
            "--rules",
            rules.to_str().unwrap(),
            "--format",
            "nutch",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let xml = stdout(&out);
    let doc = roxmltree::Document::parse(xml).unwrap_or_else(|e| panic!("{e}: {xml}"));
    assert_eq!(doc.root_element().tag_name().name(), "regex-normalize");
    let comments: Vec<&str> = doc
        .descendants()
        .filter(|n| n.is_comment())
        .filter_map(|n| n.text())
        .collect();
    assert!(
        comments.iter().any(|c| c.contains("www (5 of 5)")),
        "{comments:?}"
    );
}

#[test]
fn urls_learn_gives_a_page_without_a_cluster_the_cluster_of_its_exact_copies() {
    // Five pages with a near cluster and an exact signature; their http:// copies were indexed
    // after the last run: same signature, no cluster yet. By hand: 5 scheme pairs, all the same
    // content once the copies take their originals' clusters. A sixth http:// page whose signature
    // no clustered page has stands for itself (its https page has another signature): 1 against.
    let mut lines = String::new();
    for i in 0..5 {
        lines.push_str(&format!(
            "{{\"id\":\"a{i}\",\"sku\":\"https://m.example/p{i}\",\"exact_signature_l\":{},\"near_group_s\":\"a{i}\"}}\n",
            1000 + i
        ));
        lines.push_str(&format!(
            "{{\"id\":\"b{i}\",\"sku\":\"http://m.example/p{i}\",\"exact_signature_l\":{}}}\n",
            1000 + i
        ));
    }
    lines.push_str("{\"id\":\"a9\",\"sku\":\"https://m.example/p9\",\"exact_signature_l\":9,\"near_group_s\":\"a9\"}\n");
    lines.push_str("{\"id\":\"b9\",\"sku\":\"http://m.example/p9\",\"exact_signature_l\":99}\n");
    let input = temp_file("urls-waiting.jsonl", lines.as_bytes());
    let out = run(
        &[
            "urls",
            "learn",
            "--input",
            input.to_str().unwrap(),
            "--out",
            "-",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rules: Value = serde_json::from_str(stdout(&out)).unwrap();
    let scheme = &rules["sites"]["m.example"]["scheme"];
    assert_eq!(
        (scheme["support"].as_u64(), scheme["against"].as_u64()),
        (Some(5), Some(1)),
        "{rules}"
    );
    assert!(
        stderr(&out).contains("content by near cluster 11, by exact signature 1"),
        "{}",
        stderr(&out)
    );
}

/// A rules file whose calibration cannot be a probability model (pi or epsilon at 0 or 1, which
/// would give NaN probabilities) is refused with one line, exit 2.
#[test]
fn a_rules_file_with_an_impossible_calibration_is_refused() {
    for calibration in [
        r#"{"pi": 0.0, "epsilon": 0.01}"#,
        r#"{"pi": 0.5, "epsilon": 0.0}"#,
        r#"{"pi": 1.5, "epsilon": 0.01}"#,
    ] {
        let rules = temp_file(
            "rules-bad-calibration.json",
            format!(r#"{{"url_rules": 1, "min_estimate": 0.5, "sites": {{}}, "calibration": {calibration}}}"#)
                .as_bytes(),
        );
        let out = run(
            &[
                "urls",
                "canonical",
                "--rules",
                rules.to_str().unwrap(),
                "https://a.example/",
            ],
            b"",
        );
        assert_eq!(
            out.status.code(),
            Some(2),
            "{calibration}: {}",
            stderr(&out)
        );
        assert!(
            error_line(&out).contains("calibration pi and epsilon must be between 0 and 1"),
            "{}",
            stderr(&out)
        );
    }
}
