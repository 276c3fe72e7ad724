//! Learning one site's template lines from a sample of its pages (the method: the parent module).

use std::collections::{HashMap, HashSet};

use super::{model_version, word_lines, ChromeLine, HostChrome, Place, Template};

/// A sampled page: its word lines' hashes in order, and their token counts.
#[derive(Debug, Clone)]
struct Page {
    lines: Vec<u64>,
    tokens: Vec<u32>,
}

/// Collects a sample of one site's pages and finds its template lines.
#[derive(Debug, Clone, Default)]
pub struct SiteCounter {
    pages: Vec<Page>,
    /// Per line hash: the pages it is on, and its tokens joined.
    lines: HashMap<u64, (u64, String)>,
}

impl SiteCounter {
    /// An empty sample.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one sampled page (a page without words counts too: it is part of the sample).
    pub fn add_page(&mut self, text: &str) {
        let mut seen = HashSet::new();
        let mut page = Page {
            lines: Vec::new(),
            tokens: Vec::new(),
        };
        for (_, _, hash, joined, n) in word_lines(text) {
            page.lines.push(hash);
            page.tokens.push(n as u32);
            if seen.insert(hash) {
                self.lines.entry(hash).or_insert((0, joined)).0 += 1;
            }
        }
        self.pages.push(page);
    }

    /// Pages sampled.
    pub fn pages(&self) -> u64 {
        self.pages.len() as u64
    }

    /// Per line, on how many pages it stands in the header run and in the footer run, and in
    /// either (each page counted once per line), when `template` is the template.
    fn positions(&self, template: &Template) -> HashMap<u64, (u64, u64, u64)> {
        let mut out: HashMap<u64, (u64, u64, u64)> = HashMap::new();
        for p in &self.pages {
            let (head, foot) = template.runs(&p.lines);
            // A page of template lines only has no telling header from footer: its lines count in
            // `pages` but in neither position.
            let all = head == p.lines.len();
            let mut on_page: HashMap<u64, (bool, bool, bool)> = HashMap::new();
            for (i, &h) in p.lines.iter().enumerate() {
                let e = on_page.entry(h).or_default();
                if i < head {
                    e.0 |= !all;
                    e.2 = true;
                } else if i >= p.lines.len() - foot {
                    e.1 = true;
                    e.2 = true;
                }
            }
            for (h, (in_head, in_foot, in_run)) in on_page {
                let e = out.entry(h).or_default();
                e.0 += u64::from(in_head);
                e.1 += u64::from(in_foot);
                e.2 += u64::from(in_run);
            }
        }
        out
    }

    /// The site's template lines: those in the header or footer run of more than `share` of the
    /// sampled pages (and of at least two), and next to other lines on at least one (a line seen
    /// only on pages that are nothing but such lines, copies of one page, is no sign of a
    /// template), most frequent first, with their evidence and the share
    /// of an average page's words they take. `pages` is set to the sample size (the caller knows
    /// the site's full count).
    pub fn finish(self, share: f64) -> HostChrome {
        let sample = self.pages.len() as u64;
        let enough = |pages: u64| pages >= 2 && pages as f64 > share * sample as f64;
        // Candidates: every line on more than `share` of the pages, placed in the header when it
        // stands in the top half of its pages more often than in the bottom half, in the footer
        // when the other way round (a tie: in neither, so never bridged to); then only the lines that the runs confirm, with the places seen, until the
        // template stands (the lines only shrink; the places get a bounded number of rounds).
        let candidates: HashSet<u64> = self
            .lines
            .iter()
            .filter(|(_, (pages, _))| enough(*pages))
            .map(|(&h, _)| h)
            .collect();
        let mut halves: HashMap<u64, i64> = HashMap::new();
        for p in &self.pages {
            let n = p.lines.len();
            for (i, h) in p.lines.iter().enumerate() {
                if candidates.contains(h) && 2 * i + 1 != n {
                    *halves.entry(*h).or_default() += if 2 * i + 1 < n { 1 } else { -1 };
                }
            }
        }
        let mut template = Template::new(candidates.iter().map(|&h| {
            let top = halves.get(&h).copied().unwrap_or(0);
            let place = match top.cmp(&0) {
                std::cmp::Ordering::Greater => Place::Header,
                std::cmp::Ordering::Less => Place::Footer,
                std::cmp::Ordering::Equal => Place::Any,
            };
            (h, place)
        }));
        let mut positions = self.positions(&template);
        for _ in 0..16 {
            let next = Template::new(template.lines.iter().filter_map(|h| {
                let &(header, footer, pages) = positions.get(h)?;
                (enough(pages) && header + footer > 0).then(|| (*h, Place::of(header, footer)))
            }));
            if next == template {
                break;
            }
            template = next;
            positions = self.positions(&template);
        }
        let mut removed_sum = 0.0;
        let mut with_words = 0u64;
        for p in &self.pages {
            let total: u32 = p.tokens.iter().sum();
            if total == 0 {
                continue;
            }
            let (head, foot) = template.runs(&p.lines);
            let gone: u32 = p.tokens[..head].iter().sum::<u32>()
                + p.tokens[p.tokens.len() - foot..].iter().sum::<u32>();
            removed_sum += f64::from(gone) / f64::from(total);
            with_words += 1;
        }
        let mut lines: Vec<ChromeLine> = template
            .lines
            .iter()
            .map(|h| {
                let (header, footer, pages) = positions[h];
                let (on, text) = &self.lines[h];
                ChromeLine {
                    line: text.clone(),
                    hash: format!("{h:016x}"),
                    pages,
                    share: round4(pages as f64 / sample as f64),
                    header,
                    footer,
                    elsewhere: on - pages,
                }
            })
            .collect();
        lines.sort_by(|a, b| b.pages.cmp(&a.pages).then_with(|| a.line.cmp(&b.line)));
        let placed: Vec<(u64, Place)> = lines
            .iter()
            .map(|l| {
                let h = u64::from_str_radix(&l.hash, 16).expect("written above");
                (h, Place::of(l.header, l.footer))
            })
            .collect();
        HostChrome {
            model: if placed.is_empty() {
                "none".to_owned()
            } else {
                model_version(&placed)
            },
            names: Vec::new(),
            pages: sample,
            sample,
            removed: if with_words == 0 {
                0.0
            } else {
                round4(removed_sum / with_words as f64)
            },
            lines,
        }
    }
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}
