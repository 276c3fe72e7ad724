//! Chrome (site boilerplate) removal for near-duplicate signatures: the lines of a site's template
//! (header and footer) that say nothing about one page (`neardup.md`, "Chrome removal").
//!
//! Pure code: [`SiteCounter`] (in `counter`) learns, from a sample of one site's pages, which
//! whole lines are its template; [`ChromeModel`] is the JSON file `solr-dedup chrome learn` writes,
//! with the evidence per line (pages, share, position); [`ChromeSet`] is what a run signs with: per
//! site, the template lines to strip and the model version that goes into `near_version_s`.
//!
//! # The method (model format 2)
//!
//! A *line* is what lies between two `\n` of the text, identified by its tokens (step 1 of the
//! near-duplicate definition: a line's hash is that of its tokens joined by one space, so case,
//! punctuation and spacing do not matter); lines without tokens are passed over. A page's *header
//! run* is the longest run of lines from its start that are template lines, its *footer run* the
//! same from its end; once a run has begun it may bridge one other line (a page's title inside the
//! header, an edit date inside the footer) when the line after it, going inward, is a template line
//! seen only in header runs (only in footer runs, for the footer): its [`Place`].
//!
//! - **Learning**: a line is a template line of a site when it stands in the header or footer run
//!   of **more than** `share` of the site's sampled pages (default 0.5: a template is on nearly
//!   every page) and of at least two, and at least once on a page with other lines (copies of one
//!   page that make up most of a small site are not its template). The runs are taken first with
//!   every line on more than `share` of the pages as a candidate (placed in the header or the
//!   footer by the half of the pages it mostly stands in; a tie places it in neither, so it is never
//!   bridged to), then again with only the lines so found and the places seen, until nothing
//!   changes. A phrase that a family of pages repeats inside its content is not a whole line in a
//!   header or footer position, so it is not chrome, however often it recurs; a line on more than
//!   `share` of the pages that follows the header with one other line between is taken for
//!   header, though.
//! - **Removal**: a page of a modelled site is signed as the text between its header run and its
//!   footer run, exactly as it stands. Nothing in between is touched (a template line in the
//!   middle of a page stays), so a body without the template loses nothing: the page and the same
//!   body on a host without a model have the same shingle sets, and link with the formula's
//!   probability at their body overlap. A page that is all template lines has no words left.
//! - **Sites**: a host and its `www.` alias are one site (the model's key is the host without a
//!   leading `www.`), so that the copies of a site on both names lose the same template.
//!
//! Texts without line breaks have one line a page: such a line is a template line only when the
//! same whole page text recurs on more than `share` of the pages, so such hosts get practically no
//! chrome (the model says so: no lines, nothing removed).
//!
//! A site's model version is a hash of its sorted template line hashes and their places, so
//! learning again with the same outcome changes nothing, and any other outcome signs exactly that site's documents again.
//!
//! ```
//! use solr_dedup::signature::chrome::SiteCounter;
//!
//! let mut site = SiteCounter::new();
//! for body in ["one two", "three four", "five six"] {
//!     site.add_page(&format!("Home | News\n{body}\nImprint"));
//! }
//! let chrome = site.finish(0.5);
//! assert_eq!(chrome.lines[0].line, "home news");
//! assert_eq!(chrome.lines[0].header, 3);
//! ```

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::near;

mod counter;

pub use counter::SiteCounter;

/// The format of the model file; a file of another format is refused.
pub const FORMAT: u32 = 2;

/// `chrome learn` warns about a site whose template lines take more than this share of an average
/// sampled page's words: a sign that content is being taken (or that the pages are all but empty).
/// On the evaluation corpus (`tools/near-bench/chrome-eval`, templates of 100 to 300 words around
/// bodies of 3 to 400 words) the removal takes 50 to 68 % (seeds 1 to 3).
pub const WARN_REMOVED: f64 = 0.75;

/// A chrome model: what `solr-dedup chrome learn` writes and `run --chrome` reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChromeModel {
    /// [`FORMAT`].
    pub chrome_model: u32,
    /// The near-duplicate definition the token rules belong to ([`near::VERSION`]).
    pub near_definition: u32,
    /// A line in the header or footer run of more than this share of a site's sampled pages is a
    /// template line.
    pub share: f64,
    /// Pages sampled per site at most.
    pub sample: usize,
    /// Sites with fewer pages than this got no model.
    pub min_pages: usize,
    /// Per site (the URL's host name without a leading `www.`, lower-case, IDN in punycode, no
    /// port): its evidence.
    pub hosts: BTreeMap<String, HostChrome>,
    /// Sites left out for having fewer than `min_pages` pages, and their pages.
    pub skipped: Skipped,
}

/// What was left out of a model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Skipped {
    /// Sites.
    pub hosts: u64,
    /// Their pages.
    pub pages: u64,
}

/// One site's chrome, with the evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostChrome {
    /// The site's model version (`c2-` and 16 hex digits, or `none`), for the reader: a run
    /// computes it again from the hashes, so a hand-edited list takes effect with a version of its
    /// own.
    pub model: String,
    /// The host names whose pages took part (the site and its `www.` alias).
    #[serde(default)]
    pub names: Vec<String>,
    /// The site's pages that took part.
    pub pages: u64,
    /// The pages sampled (the texts read).
    pub sample: u64,
    /// The share of an average sampled page's words that removal takes (pages without words left
    /// out of the average).
    pub removed: f64,
    /// The template lines, most frequent first.
    pub lines: Vec<ChromeLine>,
}

/// One template line and its evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChromeLine {
    /// The line's tokens, lower-cased, joined by one space.
    pub line: String,
    /// Its hash, 16 hex digits: what a run strips.
    pub hash: String,
    /// Sampled pages on which it stands in the header or footer run.
    pub pages: u64,
    /// `pages` over the sample.
    pub share: f64,
    /// Of `pages`, those on which it is in the header run (a page that is nothing but template
    /// lines counts in neither `header` nor `footer`).
    pub header: u64,
    /// Of `pages`, those on which it is in the footer run.
    pub footer: u64,
    /// Sampled pages on which it occurs only outside both runs (left there by removal).
    pub elsewhere: u64,
}

/// Errors of a model file.
#[derive(Debug, thiserror::Error)]
pub enum ChromeError {
    /// Not JSON of the model's shape.
    #[error("not a chrome model ({0}); make one with `solr-dedup chrome learn`")]
    Parse(#[from] serde_json::Error),
    /// Another file format.
    #[error("chrome model format {found}, this version reads format {FORMAT} (template lines, not shingles); learn the model again with `solr-dedup chrome learn`")]
    Format {
        /// What the file says.
        found: u64,
    },
    /// Another near-duplicate definition.
    #[error("the chrome model belongs to near-duplicate definition {found}, this version signs with {}; learn the model again", near::VERSION)]
    Definition {
        /// What the file says.
        found: u32,
    },
    /// A hash that is not 16 hex digits.
    #[error("host {host}: line {line:?} has the hash {hash:?}, expected 16 hex digits")]
    Hash {
        /// The site.
        host: String,
        /// The line.
        line: String,
        /// The hash as written.
        hash: String,
    },
}

impl ChromeModel {
    /// Reads a model from its JSON text, checking format and definition (the format first, so that
    /// a model of another format is refused as such, whatever its fields).
    pub fn from_json(text: &str) -> Result<Self, ChromeError> {
        let value: serde_json::Value = serde_json::from_str(text)?;
        if let Some(found) = value.get("chrome_model").and_then(|v| v.as_u64()) {
            if found != u64::from(FORMAT) {
                return Err(ChromeError::Format { found });
            }
        }
        let model: ChromeModel = serde_json::from_value(value)?;
        if model.near_definition != near::VERSION {
            return Err(ChromeError::Definition {
                found: model.near_definition,
            });
        }
        Ok(model)
    }

    /// The model as pretty JSON, with a final newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a model serialises");
        s.push('\n');
        s
    }

    /// What a run signs with.
    pub fn to_set(&self) -> Result<ChromeSet, ChromeError> {
        let mut hosts = HashMap::new();
        for (host, h) in &self.hosts {
            let mut lines = Vec::with_capacity(h.lines.len());
            for l in &h.lines {
                let hash = parse_hash(&l.hash).ok_or_else(|| ChromeError::Hash {
                    host: host.clone(),
                    line: l.line.clone(),
                    hash: l.hash.clone(),
                })?;
                lines.push((hash, Place::of(l.header, l.footer)));
            }
            if lines.is_empty() {
                // Nothing to strip: signed as a site the model does not know.
                continue;
            }
            hosts.insert(
                site_key(host).to_owned(),
                HostSet {
                    version: model_version(&lines),
                    template: Template::new(lines),
                },
            );
        }
        Ok(ChromeSet { hosts })
    }
}

fn parse_hash(s: &str) -> Option<u64> {
    (s.len() == 16)
        .then(|| u64::from_str_radix(s, 16).ok())
        .flatten()
}

/// The site a host name belongs to: the name without a leading `www.` (when something with a dot
/// is left), so that `www.example.org` and `example.org` share one model.
pub fn site_key(host: &str) -> &str {
    match host.strip_prefix("www.") {
        Some(rest) if rest.contains('.') => rest,
        _ => host,
    }
}

/// The version of a site's model: `c2-` and the hash of the sorted line hashes, each with its
/// [`Place`] (which decides what removal may bridge).
pub fn model_version(lines: &[(u64, Place)]) -> String {
    let mut sorted = lines.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut bytes = Vec::with_capacity(9 * sorted.len());
    for (h, place) in sorted {
        bytes.extend(h.to_le_bytes());
        bytes.push(place as u8);
    }
    format!("c2-{:016x}", xxh3_64_with_seed(&bytes, near::SEED))
}

/// Where a template line was seen: only in header runs, only in footer runs, or in both (or in
/// neither: only on pages that are template alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Place {
    /// Header and footer, or neither.
    Any = 0,
    /// Header runs only: a run from the top may bridge one other line to reach it.
    Header = 1,
    /// Footer runs only: a run from the bottom may bridge one other line to reach it.
    Footer = 2,
}

impl Place {
    /// The place of a line seen `header` times in a header run and `footer` times in a footer run.
    pub fn of(header: u64, footer: u64) -> Place {
        match (header > 0, footer > 0) {
            (true, false) => Place::Header,
            (false, true) => Place::Footer,
            _ => Place::Any,
        }
    }
}

/// A site's template lines, by hash, with the header-only and footer-only ones apart.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Template {
    /// Every template line.
    pub lines: HashSet<u64>,
    head: HashSet<u64>,
    foot: HashSet<u64>,
}

impl Template {
    /// The template of these lines.
    pub fn new(lines: impl IntoIterator<Item = (u64, Place)>) -> Self {
        let mut t = Template::default();
        for (h, place) in lines {
            t.lines.insert(h);
            match place {
                Place::Header => t.head.insert(h),
                Place::Footer => t.foot.insert(h),
                Place::Any => false,
            };
        }
        t
    }

    /// How many of a page's word lines (by hash, in order) form its header run and its footer
    /// run: the template lines from the top (and from the bottom), where one other line may be
    /// bridged when the line after it (before it, from the bottom) is a header-only (footer-only)
    /// template line and the run has begun. The runs never overlap, and a page of template lines
    /// only is all header.
    pub fn runs(&self, lines: &[u64]) -> (usize, usize) {
        runs(
            lines,
            &|h| self.lines.contains(&h),
            &|h| self.head.contains(&h),
            &|h| self.foot.contains(&h),
        )
    }
}

/// The chrome a run strips, per site.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChromeSet {
    hosts: HashMap<String, HostSet>,
}

/// One site's template lines and model version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostSet {
    /// Goes into `near_version_s`.
    pub version: String,
    /// The template lines ([`line_hash`]).
    pub template: Template,
}

impl HostSet {
    /// The part of `text` a page of this site is signed as: the text without its header run and
    /// its footer run of template lines.
    pub fn body<'a>(&self, text: &'a str) -> &'a str {
        body(text, &self.template)
    }
}

impl ChromeSet {
    /// The chrome of a host (its URL's host name; a `www.` alias finds its site's), if the model
    /// has any.
    pub fn host(&self, host: &str) -> Option<&HostSet> {
        self.hosts.get(site_key(host))
    }

    /// Every site with its model version, sorted by site: which chrome a run strips, in short.
    pub fn versions(&self) -> Vec<(&str, &str)> {
        let mut v: Vec<(&str, &str)> = self
            .hosts
            .iter()
            .map(|(site, set)| (site.as_str(), set.version.as_str()))
            .collect();
        v.sort_unstable();
        v
    }

    /// Sites with chrome.
    pub fn len(&self) -> usize {
        self.hosts.len()
    }

    /// No site has chrome.
    pub fn is_empty(&self) -> bool {
        self.hosts.is_empty()
    }
}

/// A line's identity: the hash of its tokens joined by one space, or `None` for a line without
/// tokens. Also returns the joined tokens and their number.
pub fn line_hash(line: &str) -> Option<(u64, String, usize)> {
    let tokens = near::tokens(line);
    if tokens.is_empty() {
        return None;
    }
    let joined = tokens.join(" ");
    let hash = xxh3_64_with_seed(joined.as_bytes(), near::SEED ^ 0x11e5);
    Some((hash, joined, tokens.len()))
}

/// The lines of a text with words: byte range, hash, and tokens.
pub(crate) fn word_lines(text: &str) -> Vec<(usize, usize, u64, String, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for line in text.split('\n') {
        let end = start + line.len();
        if let Some((h, joined, n)) = line_hash(line) {
            out.push((start, end, h, joined, n));
        }
        start = end + 1;
    }
    out
}

/// [`Template::runs`] with the three sets as predicates: `template` lines make the runs, and one
/// other line is bridged when the line after it is in `head` (from the top) or `foot`
/// (from the bottom).
pub(crate) fn runs(
    lines: &[u64],
    template: &impl Fn(u64) -> bool,
    head_line: &impl Fn(u64) -> bool,
    foot_line: &impl Fn(u64) -> bool,
) -> (usize, usize) {
    let n = lines.len();
    let mut head = 0;
    while head < n {
        if template(lines[head]) {
            head += 1;
        } else if head > 0 && head + 1 < n && head_line(lines[head + 1]) {
            head += 2;
        } else {
            break;
        }
    }
    let mut foot = 0;
    while head + foot < n {
        let i = n - 1 - foot;
        if template(lines[i]) {
            foot += 1;
        } else if foot > 0 && i > head && foot_line(lines[i - 1]) {
            foot += 2;
        } else {
            break;
        }
    }
    (head, foot)
}

/// `text` without its header and footer runs of `template`: from the start of its first other line
/// with words to the end of its last, exactly as it stands.
pub fn body<'a>(text: &'a str, template: &Template) -> &'a str {
    let lines = word_lines(text);
    let hashes: Vec<u64> = lines.iter().map(|l| l.2).collect();
    let (head, foot) = template.runs(&hashes);
    if head + foot == lines.len() {
        if head == 0 {
            // No line with words: the text has no words either way.
            return text;
        }
        return "";
    }
    if head == 0 && foot == 0 {
        return text;
    }
    let first = if head == 0 { 0 } else { lines[head].0 };
    let last = if foot == 0 {
        text.len()
    } else {
        lines[lines.len() - foot - 1].1
    };
    &text[first..last]
}

#[cfg(test)]
mod tests;
