use super::*;
use crate::signature::near::{NearParams, NearSigner};

fn set(lines: &[&str]) -> Template {
    placed(lines, Place::Any)
}

fn placed(lines: &[&str], place: Place) -> Template {
    Template::new(lines.iter().map(|l| (line_hash(l).unwrap().0, place)))
}

fn hash(line: &str) -> u64 {
    line_hash(line).unwrap().0
}

#[test]
fn a_line_is_its_tokens() {
    let (h, joined, n) = line_hash("  Home | NEWS, about ").unwrap();
    assert_eq!((joined.as_str(), n), ("home news about", 3));
    assert_eq!(line_hash("home news about").unwrap().0, h);
    assert_ne!(line_hash("home news").unwrap().0, h);
    assert_eq!(line_hash(" | -- "), None);
    assert_eq!(line_hash(""), None);
}

#[test]
fn removal_takes_the_header_and_footer_runs_and_nothing_else() {
    let t = set(&["Home | News", "Menu", "Imprint", "Contact us"]);
    // Header run of two (blank and punctuation lines passed over), footer run of two; the
    // template line "Menu" in the middle stays.
    let page =
        "Home | News\n\n  --\nMenu\nFirst line of the body\nMenu\nlast line\nImprint\nContact us\n";
    assert_eq!(body(page, &t), "First line of the body\nMenu\nlast line");
    // A page without the template is signed whole.
    let bare = "First line of the body\nMenu\nlast line";
    assert_eq!(body(bare, &t), bare);
    // Only a header; only a footer.
    assert_eq!(body("Menu\nbody words", &t), "body words");
    assert_eq!(body("body words\nImprint", &t), "body words");
    // All template: nothing left; no words at all: as it is.
    assert_eq!(body("Home news\nImprint", &t), "");
    assert_eq!(body(" -- \n", &t), " -- \n");
    // A template line that is only part of a line is no match.
    assert_eq!(body("Home news today\nx", &t), "Home news today\nx");
}

#[test]
fn one_other_line_is_bridged_only_into_a_header_or_footer_line() {
    let head = ["Site name", "Menu one two"].map(hash);
    let foot = ["Imprint", "Privacy terms"].map(hash);
    let t = Template::new(
        head.iter()
            .map(|&h| (h, Place::Header))
            .chain(foot.iter().map(|&h| (h, Place::Footer))),
    );
    // A page title between two header lines, a date between two footer lines: both go.
    let page = "Site name\nThe page title\nMenu one two\nbody words\nmore body\nImprint\nEdited 3 May\nPrivacy terms";
    assert_eq!(body(page, &t), "body words\nmore body");
    // A small page: header, one line of body, footer. The body line is followed by a footer line,
    // not a header line, so the header run does not bridge it (nor the footer run: it is preceded
    // by a header line).
    assert_eq!(body("Site name\nMenu one two\nhello\nImprint", &t), "hello");
    // No bridge before a run has begun, nor two lines at once.
    assert_eq!(
        body("Title\nMenu one two\nbody", &t),
        "Title\nMenu one two\nbody"
    );
    assert_eq!(
        body("Site name\nA\nB\nMenu one two\nbody", &t),
        "A\nB\nMenu one two\nbody"
    );
    // Lines seen in both places (or neither) are never bridged into.
    let any = set(&["Site name", "Menu one two"]);
    assert_eq!(
        body("Site name\nTitle\nMenu one two\nbody", &any),
        "Title\nMenu one two\nbody"
    );
    // The runs as counts.
    let lines = [head[0], 7, head[1], 8, 9, foot[0], 10, foot[1]];
    assert_eq!(t.runs(&lines), (3, 3));
    assert_eq!(t.runs(&[head[0], head[1]]), (2, 0));
    assert_eq!(t.runs(&[foot[0], foot[1]]), (2, 0));
}

#[test]
fn a_title_inside_the_header_is_learned_around() {
    // Every page: "Site name", its own title, "Menu one two", a body of three lines, "Imprint".
    // Without a bridge the menu line would stand after a non-template line on every page; it is in
    // the top half of every page, so a header line, which a header run may bridge one line to.
    let mut c = SiteCounter::new();
    for i in 0..6 {
        c.add_page(&format!(
            "Site name\nTitle number {i}\nMenu one two\nbody {i} words\nsecond {i}\nthird {i}\nImprint"
        ));
    }
    let h = c.finish(0.5);
    let got: Vec<(&str, u64, u64, u64)> = h
        .lines
        .iter()
        .map(|l| (l.line.as_str(), l.pages, l.header, l.footer))
        .collect();
    assert_eq!(
        got,
        [
            ("imprint", 6, 0, 6),
            ("menu one two", 6, 6, 0),
            ("site name", 6, 6, 0),
        ]
    );
    let set = model(h).to_set().unwrap();
    let site = set.host("example.org").unwrap();
    assert_eq!(
        site.body("Site name\nTitle seven\nMenu one two\nthe body\nImprint"),
        "the body"
    );
}

#[test]
fn a_line_in_the_middle_of_short_pages_is_never_bridged_to() {
    // The same pages with a body of one line: the menu line is the middle line of each page, so
    // in neither half; it is not bridged to, and not chrome (the body is never taken for a gap).
    let mut c = SiteCounter::new();
    for i in 0..6 {
        c.add_page(&format!(
            "Site name\nTitle number {i}\nMenu one two\nbody {i} words\nImprint"
        ));
    }
    let h = c.finish(0.5);
    let got: Vec<&str> = h.lines.iter().map(|l| l.line.as_str()).collect();
    assert_eq!(got, ["imprint", "site name"]);
}

#[test]
fn a_body_without_its_template_signs_as_the_same_body_elsewhere() {
    let signer = NearSigner::new(NearParams::default());
    let t = set(&[
        "Example site home news about contact",
        "Copyright example site",
    ]);
    let text =
        "Researchers measured how quickly seagrass meadows recover\nafter storms in sheltered bays";
    let page =
        format!("Example site · Home · News · About · Contact\n{text}\nCopyright Example site");
    assert_eq!(signer.sign(body(&page, &t)), signer.sign(text));
    assert_ne!(signer.sign(&page), signer.sign(text));
}

#[test]
fn template_lines_stand_in_header_or_footer_runs_on_more_than_the_share() {
    let mut c = SiteCounter::new();
    // Every page: a header line and a footer line. Four of five pages carry a family line in the
    // middle of their bodies ("the software is provided as is"), two lines below the header:
    // frequent, but never in a run (one other line may be bridged, not two).
    // "Related pages" stands just above the footer on three of five pages (60 %): in the footer run
    // there, so a template line; "see also" precedes it on two pages only (40 %).
    let pages = [
        "Site home\nalpha one\ngamma one\nthe software is provided as is\nbeta one\nRelated pages\nFooter text",
        "Site home\nalpha two\ngamma two\nthe software is provided as is\nbeta two\nRelated pages\nFooter text",
        "Site home\nalpha three\ngamma three\nthe software is provided as is\nbeta three\nsee also\nRelated pages\nFooter text",
        "Site home\nalpha four\ngamma four\nthe software is provided as is\nbeta four\nsee also\nFooter text",
        "Site home\nalpha five\nFooter text",
    ];
    for p in pages {
        c.add_page(p);
    }
    assert_eq!(c.pages(), 5);
    let h = c.finish(0.5);
    let got: Vec<(&str, u64, f64, u64, u64, u64)> = h
        .lines
        .iter()
        .map(|l| {
            (
                l.line.as_str(),
                l.pages,
                l.share,
                l.header,
                l.footer,
                l.elsewhere,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("footer text", 5, 1.0, 0, 5, 0),
            ("site home", 5, 1.0, 5, 0, 0),
            ("related pages", 3, 0.6, 0, 3, 0),
        ]
    );
    assert!(h.model.starts_with("c2-"));
    // Words removed: page 1 has 2+2+2+6+2+2+2 = 18 tokens of which 2+2+2 go (6/18); page 2 the
    // same; page 3 20 tokens, 6 go; page 4 18 tokens, 4 go (site home, footer text); page 5 6
    // tokens, 4 go.
    let want = (6.0 / 18.0 + 6.0 / 18.0 + 6.0 / 20.0 + 4.0 / 18.0 + 4.0 / 6.0) / 5.0;
    assert!((h.removed - want).abs() < 1e-4, "{} vs {want}", h.removed);
}

#[test]
fn a_share_of_exactly_the_threshold_is_not_enough_and_one_page_never_is() {
    let mut c = SiteCounter::new();
    for p in ["Head\na b", "Head\nc d", "x y\ne f", "z w\ng h"] {
        c.add_page(p);
    }
    assert!(c.finish(0.5).lines.is_empty());
    // Pages of template lines only count in neither position.
    let mut c = SiteCounter::new();
    for p in ["Head\na b\nFoot", "Head\nc d\nFoot", "Head\nFoot"] {
        c.add_page(p);
    }
    let h = c.finish(0.5);
    let got: Vec<(&str, u64, u64, u64)> = h
        .lines
        .iter()
        .map(|l| (l.line.as_str(), l.pages, l.header, l.footer))
        .collect();
    assert_eq!(got, [("foot", 3, 0, 2), ("head", 3, 2, 0)]);
    // Copies of one page on most of the site: never next to other lines, so no template.
    let mut c = SiteCounter::new();
    for p in [
        "Same page\nsame words",
        "Same page\nsame words",
        "Other page",
    ] {
        c.add_page(p);
    }
    assert!(c.finish(0.5).lines.is_empty());
    let mut c = SiteCounter::new();
    c.add_page("Head\nbody");
    let h = c.finish(0.1);
    assert!(h.lines.is_empty());
    assert_eq!(h.model, "none");
}

#[test]
fn a_www_alias_finds_its_sites_model() {
    assert_eq!(site_key("www.example.org"), "example.org");
    assert_eq!(site_key("example.org"), "example.org");
    assert_eq!(site_key("www.org"), "www.org");
    assert_eq!(site_key("wwwx.example.org"), "wwwx.example.org");
    let mut c = SiteCounter::new();
    for p in ["Head\na b", "Head\nc d", "Head\ne f"] {
        c.add_page(p);
    }
    let set = model(c.finish(0.5)).to_set().unwrap();
    assert!(set.host("www.example.org").is_some());
    assert!(set.host("example.org").is_some());
    assert!(set.host("other.org").is_none());
    assert_eq!(
        set.host("www.example.org").unwrap().body("Head\na b"),
        "a b"
    );
}

fn model(host: HostChrome) -> ChromeModel {
    ChromeModel {
        chrome_model: FORMAT,
        near_definition: near::VERSION,
        share: 0.5,
        sample: 200,
        min_pages: 3,
        hosts: BTreeMap::from([("example.org".to_owned(), host)]),
        skipped: Skipped::default(),
    }
}

#[test]
fn a_model_round_trips_and_its_version_depends_only_on_the_hashes() {
    let mut c = SiteCounter::new();
    for p in ["Head\nMenu\na", "Head\nMenu\nb", "Head\nMenu\nc"] {
        c.add_page(p);
    }
    let host = c.finish(0.5);
    assert_eq!(host.lines.len(), 2);
    let model = model(host.clone());
    let back = ChromeModel::from_json(&model.to_json()).unwrap();
    assert_eq!(back, model);
    let set = back.to_set().unwrap();
    let h = set.host("example.org").unwrap();
    assert_eq!(h.version, host.model);
    assert_eq!(h.template.lines.len(), 2);
    let version = |m: &ChromeModel| {
        m.to_set()
            .unwrap()
            .host("example.org")
            .unwrap()
            .version
            .clone()
    };
    // The same hashes in another order, or with other evidence: the same version.
    let mut edited = model.clone();
    let e = edited.hosts.get_mut("example.org").unwrap();
    e.lines.reverse();
    e.lines[0].pages = 1;
    assert_eq!(version(&edited), h.version);
    // One line less: another version.
    edited.hosts.get_mut("example.org").unwrap().lines.pop();
    assert_ne!(version(&edited), h.version);
}

#[test]
fn broken_and_old_models_say_what_is_wrong() {
    assert!(matches!(
        ChromeModel::from_json("{"),
        Err(ChromeError::Parse(_))
    ));
    // A model of format 1 (shingles): refused as such, with what to do.
    let old = r#"{"chrome_model": 1, "near_definition": 1, "shingle": 2, "share": 0.05,
        "sample": 200, "min_pages": 50, "hosts": {}, "skipped": {"hosts": 0, "pages": 0}}"#;
    let e = ChromeModel::from_json(old).unwrap_err();
    assert!(matches!(e, ChromeError::Format { found: 1 }));
    let e = e.to_string();
    assert!(
        e.contains("format 1") && e.contains("learn the model again"),
        "{e}"
    );
    let mut bad = model(SiteCounter::new().finish(0.5));
    let mut v: serde_json::Value = serde_json::from_str(&bad.to_json()).unwrap();
    v["near_definition"] = 9.into();
    assert!(matches!(
        ChromeModel::from_json(&v.to_string()),
        Err(ChromeError::Definition { found: 9 })
    ));
    bad.hosts
        .get_mut("example.org")
        .unwrap()
        .lines
        .push(ChromeLine {
            line: "a b".into(),
            hash: "xyz".into(),
            pages: 1,
            share: 1.0,
            header: 1,
            footer: 0,
            elsewhere: 0,
        });
    let e = bad.to_set().unwrap_err().to_string();
    assert!(e.contains("16 hex digits"), "{e}");
}
