//! Chrome removal against Solr, with expectations worked out by hand: `chrome learn` finds two sites'
//! templates, `run --chrome` strips them so that an article syndicated on both sites (and on the
//! shop's `www.` alias) becomes a near-duplicate, and a changed model signs again exactly the
//! documents of the site whose chrome changed.
//!
//! Both sites wrap every page in a header line of 20 words and a footer line of 20 words. Five pages
//! of each site are nothing but that template (with blank or punctuation lines between); the sixth
//! holds the same article of 29 words on both sites, and the shop has it once more on
//! www.shop.example. Once the header and footer lines are stripped, the article pages are exactly the
//! article: Jaccard 1, found whatever the hashes. With the chrome, the shop's and the paper's article
//! pages share 30 of 106 shingles (Jaccard 0.28: a trial agrees with chance 0.28^14 ≈ 2e-8), and
//! an article page shares with its site's chrome-only pages 38 of 69 (0.55^14 ≈ 2e-4 a trial; two
//! of six trials ≈ 8e-7): neither pair is found. The chrome-only pages of one site have
//! equal shingle sets, so without chrome removal they form one cluster of five; with it they have no
//! word left and stand alone.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::harness::{assert_settled, solr_test, Target};

const SHOP_HEADER: &str = "Shop Online Sale Gifts Toys Books Garden Kitchen Sports Music \
Films Games Fashion Shoes Beauty Health Travel Outlet Account Menu";
const SHOP_FOOTER: &str = "Imprint Contact Privacy Terms Cookies Returns Delivery Payment \
Careers Press Stores Newsletter Apps Partners Affiliates Help Sitemap Accessibility Shop Ltd";
const PAPER_HEADER: &str = "Daily Courier News Politics Business Science Culture Opinion Sport \
Weather Travel Style Podcasts Video Puzzles Letters Obituaries Archive Subscribe Menu";
const PAPER_FOOTER: &str = "Imprint Editorial Standards Corrections Advertise Syndication Jobs \
Events Shop Crosswords Newsletters Tips Feeds Accessibility Privacy Cookies Terms Courier Media Group";
const ARTICLE: &str = "Researchers at the coastal institute measured how quickly seagrass \
meadows recover after storms and found that sheltered bays regrow within two summers while exposed \
shores take almost a decade";

fn page(header: &str, body: &str, footer: &str, sep: &str) -> String {
    format!("{header}{sep}{body}{sep}{footer}")
}

fn documents() -> Vec<Value> {
    let seps = ["\n", "\n | \n", "\r\n", "\n\n", "\n – \n"];
    let mut docs = Vec::new();
    for (i, sep) in seps.iter().enumerate() {
        docs.push(json!({
            "id": format!("s{i}"),
            "sku": format!("https://shop.example/category/{i}"),
            "text_t": page(SHOP_HEADER, "", SHOP_FOOTER, sep),
        }));
        docs.push(json!({
            "id": format!("n{i}"),
            "sku": format!("https://paper.example/section/{i}"),
            "text_t": page(PAPER_HEADER, "", PAPER_FOOTER, sep),
        }));
    }
    docs.push(json!({
        "id": "sa",
        "sku": "https://shop.example/blog/seagrass",
        "text_t": page(SHOP_HEADER, ARTICLE, SHOP_FOOTER, "\n"),
    }));
    docs.push(json!({
        "id": "sw",
        "sku": "https://www.shop.example/blog/seagrass",
        "text_t": page(SHOP_HEADER, ARTICLE, SHOP_FOOTER, "\n"),
    }));
    docs.push(json!({
        "id": "na",
        "sku": "https://paper.example/science/seagrass",
        "text_t": page(PAPER_HEADER, ARTICLE, PAPER_FOOTER, "\n"),
    }));
    docs.push(json!({
        "id": "w1",
        "sku": "https://weather.example/today",
        "text_t": "Sunny spells this afternoon with a light breeze from the west.",
    }));
    docs
}

/// `(count, group)` per short id.
fn clusters(t: &Target) -> BTreeMap<String, (i64, String)> {
    t.docs()
        .into_iter()
        .map(|(id, d)| {
            let group = d["near_group_s"].as_str().map(|g| t.short(g).to_owned());
            (
                id,
                (
                    d["near_copycount_i"].as_i64().unwrap_or(0),
                    group.unwrap_or_default(),
                ),
            )
        })
        .collect()
}

fn versions(t: &Target) -> BTreeMap<String, String> {
    t.docs()
        .into_iter()
        .map(|(id, d)| (id, d["near_version_s"].as_str().unwrap_or("").to_owned()))
        .collect()
}

fn learn(t: &Target, out: &std::path::Path) -> Value {
    let o = t.run(&[
        "chrome",
        "learn",
        "--out",
        out.to_str().unwrap(),
        "--min-pages",
        "5",
        "--share",
        "0.5",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("chrome model: 2 of 2 hosts with chrome"),
        "{stderr}"
    );
    // Most pages are template alone: more than three quarters of an average page goes, and it says so.
    assert!(
        stderr.contains(
            "shop.example (shop.example, www.shop.example): 7 pages, 7 sampled, 2 template lines, \
             removes 88.0 % of an average page's words; warning: more than 75 % of a page"
        ),
        "{stderr}"
    );
    serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap()
}

/// What `args` (a `check`) reports it would write, through its JSON report; it exits 1 (out of
/// date).
fn would_write(t: &Target, args: &[&str], dir: &std::path::Path) -> Value {
    let report = dir.join("check-report.json");
    let mut all = args.to_vec();
    all.extend(["--report", report.to_str().unwrap(), "--quiet"]);
    let out = t.run(&all);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    r["documents"]["written"].clone()
}

solr_test!(
    chrome_is_learned_left_out_and_signed_again_per_host,
    |t: &Target| {
        let dir = tempfile::tempdir().unwrap();
        t.load(&documents());

        // Without chrome removal: each site's chrome-only pages form one cluster (s0 and n0 have the
        // shortest URLs); the shop's two article pages are the same text (www. preferred), the
        // paper's stands alone.
        t.run_ok(&["run"], dir.path());
        let c = clusters(t);
        for i in 0..5 {
            assert_eq!(c[&format!("s{i}")], (5, "s0".to_owned()), "{c:?}");
            assert_eq!(c[&format!("n{i}")], (5, "n0".to_owned()), "{c:?}");
        }
        assert_eq!(c["sa"], (2, "sw".to_owned()), "{c:?}");
        assert_eq!(c["sw"], (2, "sw".to_owned()), "{c:?}");
        assert_eq!(c["na"], (1, "na".to_owned()));

        // The model: both sites, the shop with its www. alias (seven pages), the paper six; the weather
        // host has one page (< 5): skipped.
        let model_path = dir.path().join("chrome.json");
        let model = learn(t, &model_path);
        let hosts = model["hosts"].as_object().unwrap();
        assert_eq!(
            hosts.keys().collect::<Vec<_>>(),
            ["paper.example", "shop.example"]
        );
        assert_eq!(model["skipped"], json!({"hosts": 1, "pages": 1}));
        let shop = &hosts["shop.example"];
        assert_eq!(shop["names"], json!(["shop.example", "www.shop.example"]));
        assert_eq!(shop["pages"], 7);
        assert_eq!(shop["sample"], 7);
        // Two template lines, on all seven pages; in position on the two article pages only (the
        // others are template alone); the article's line and the separator lines are not chrome.
        let words = |s: &str| {
            s.to_lowercase()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(
            shop["lines"],
            json!([
                {"line": words(SHOP_FOOTER), "hash": shop["lines"][0]["hash"], "pages": 7,
                 "share": 1.0, "header": 0, "footer": 2, "elsewhere": 0},
                {"line": words(SHOP_HEADER), "hash": shop["lines"][1]["hash"], "pages": 7,
                 "share": 1.0, "header": 2, "footer": 0, "elsewhere": 0},
            ]),
            "{shop}"
        );
        // Five pages lose everything, the article pages 40 of 69 words.
        let removed = (5.0 + 2.0 * 40.0 / 69.0) / 7.0;
        assert!(
            (shop["removed"].as_f64().unwrap() - removed).abs() < 1e-4,
            "{shop}"
        );

        // With the model: the article pages are near-duplicates (Jaccard 1 without the chrome); the
        // chrome-only pages have no word left. Only the thirteen pages of the two sites are signed
        // again.
        let model_arg = model_path.to_str().unwrap();
        let before = versions(t);
        // check with the same settings says how many documents the run writes, re-signing
        // included.
        let would = would_write(t, &["check", "--chrome", model_arg], dir.path());
        let r = t.run_ok(&["run", "--reconfigure", "--chrome", model_arg], dir.path());
        assert_eq!(r["documents"]["signed"], 13, "{r}");
        assert_eq!(r["documents"]["written"], would, "check said {would}: {r}");
        let c = clusters(t);
        assert_eq!(c["sa"], (3, "sw".to_owned()), "{c:?}");
        assert_eq!(c["sw"], (3, "sw".to_owned()), "{c:?}");
        assert_eq!(c["na"], (3, "sw".to_owned()), "{c:?}");
        for i in 0..5 {
            assert_eq!(c[&format!("s{i}")], (1, format!("s{i}")), "{c:?}");
        }
        let v = versions(t);
        let shop_version = shop["model"].as_str().unwrap();
        assert!(shop_version.starts_with("c2-"), "{shop_version}");
        assert_eq!(v["sa"], format!("near1-n2-h14-t6-a2 chrome:{shop_version}"));
        assert_eq!(v["sw"], v["sa"]);
        assert_eq!(
            v["s1"],
            format!("near1-n2-h14-t6-a2 chrome:{shop_version} no-words")
        );
        assert_eq!(v["w1"], before["w1"]);
        assert_eq!(v["w1"], "near1-n2-h14-t6-a2");
        let again = t.run_ok(&["run", "--chrome", model_arg], dir.path());
        assert_eq!(again["documents"]["written"], 0, "{again}");
        assert_eq!(again["documents"]["signed"], 0, "{again}");
        let check = t.run(&["check", "--chrome", model_arg]);
        assert_eq!(check.status.code(), Some(0), "{check:?}");
        let check = t.run(&["check"]);
        assert_eq!(
            check.status.code(),
            Some(1),
            "without the model the values are out of date"
        );

        // A line added to the shop's model by hand that no page has: a model version of its own, so
        // its seven pages are signed again, with the same keys and so the same flags. check counts
        // them among what the run would write (before, it said 0 beside "7 documents lack
        // signatures"), and the run writes exactly that.
        let mut extra = model.clone();
        extra["hosts"]["shop.example"]["lines"]
            .as_array_mut()
            .unwrap()
            .push(
                json!({"line": "never on a page", "hash": "00000000deadbeef", "pages": 0,
                         "share": 0.0, "header": 0, "footer": 1, "elsewhere": 0}),
            );
        let extra_path = dir.path().join("extra.json");
        std::fs::write(&extra_path, extra.to_string()).unwrap();
        let extra_arg = extra_path.to_str().unwrap();
        let would = would_write(t, &["check", "--chrome", extra_arg], dir.path());
        assert_eq!(would, 7, "the shop's pages, signed again");
        let r = t.run_ok(&["run", "--reconfigure", "--chrome", extra_arg], dir.path());
        assert_eq!(r["documents"]["signed"], 7, "{r}");
        assert_eq!(r["documents"]["written"], would, "check said {would}: {r}");
        let r = t.run_ok(&["run", "--reconfigure", "--chrome", model_arg], dir.path());
        assert_eq!(
            r["documents"]["signed"], 7,
            "back to the learned model: {r}"
        );

        // The paper's chrome is dropped from the model by hand: only its six pages are signed again;
        // its chrome-only pages cluster again and the article pages part.
        let mut edited = model.clone();
        edited["hosts"]
            .as_object_mut()
            .unwrap()
            .remove("paper.example");
        let edited_path = dir.path().join("edited.json");
        std::fs::write(&edited_path, edited.to_string()).unwrap();
        let edited_arg = edited_path.to_str().unwrap();
        let would = would_write(t, &["check", "--chrome", edited_arg], dir.path());
        let r = t.run_ok(
            &["run", "--reconfigure", "--chrome", edited_arg],
            dir.path(),
        );
        assert_eq!(r["documents"]["signed"], 6, "{r}");
        assert_eq!(r["documents"]["written"], would, "check said {would}: {r}");
        let c = clusters(t);
        assert_eq!(c["n3"], (5, "n0".to_owned()), "{c:?}");
        assert_eq!(c["sa"], (2, "sw".to_owned()), "{c:?}");
        assert_eq!(c["na"], (1, "na".to_owned()), "{c:?}");
        assert_eq!(versions(t)["na"], "near1-n2-h14-t6-a2");

        // No model at all: the shop's seven pages are signed again, and everything is as at the start.
        let r = t.run_ok(&["run", "--reconfigure"], dir.path());
        assert_eq!(r["documents"]["signed"], 7, "{r}");
        assert_settled(t, dir.path());
    }
);
