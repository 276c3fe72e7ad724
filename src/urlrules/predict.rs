//! Prediction: the canonical forms of the indexed URLs, and for a URL not fetched yet the indexed
//! page with the same canonical form.
//!
//! [`Index`] keeps a 64-bit hash of each indexed URL's canonical form, and the id and URL of every
//! page of a form; it names one of them (the one whose own rewriting the evidence trusts most; then
//! the shorter URL, then the smaller id, so the same index always names the same page), and names
//! the next when that page is removed ([`Index::remove_page`]). A hit is confirmed by computing the
//! named page's canonical form again, so a hash collision can never name a wrong page.
//!
//! A page the index flags as an exact double (`exact_signature_unique_b: false`) is not the one a
//! search filtered on the flag shows: the answer's `duplicate_of` names the representative of the
//! matched page's exact group (the member flagged true), and `matched` the page the canonical form
//! met. The index keeps, beside each page, its exact signature and whether it is flagged a double,
//! and the id and URL of the representative of every exact group of two or more (from the stored
//! flags and copy counts of the last run); without them (no run yet) `duplicate_of` is the matched
//! page.
//!
//! The probability that a URL duplicates that page is the product of the estimates of the rules
//! their match needed: the rules that rewrote either URL, a rule that removed the same parameter
//! from both counted once, and a rule that changed the same part the same way on both (both had
//! `www.`) not at all. It is 0 when no indexed page has the form: the URL is new, whatever the
//! rules say.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use rustc_hash::FxHasher;
use serde::Serialize;
use xxhash_rust::xxh3::xxh3_64;

use super::{canonical, Canonical, Rules, UrlError};

type FxHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// An indexed page of a canonical form: the one named for it, or one beside it.
#[derive(Debug, Clone)]
struct Page {
    id: Box<str>,
    url: Box<str>,
    keeps: f64,
    /// Its exact signature, when the index flags it a double: where to look its representative up.
    double_of: Option<i64>,
}

/// What the last run stored on a page about its exact group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExactGroup {
    /// `exact_signature_l`.
    pub signature: Option<i64>,
    /// `exact_signature_unique_b`.
    pub unique: Option<bool>,
    /// `exact_signature_copycount_i`.
    pub copies: Option<u64>,
}

/// The order of the pages of one form: the first is named ([`Page::rank`]).
type Rank<'p> = (
    f64,
    std::cmp::Reverse<usize>,
    std::cmp::Reverse<&'p str>,
    std::cmp::Reverse<&'p str>,
);

trait CmpRank {
    fn cmp_by(&self, other: &Self) -> std::cmp::Ordering;
}

impl CmpRank for Rank<'_> {
    fn cmp_by(&self, other: &Self) -> std::cmp::Ordering {
        self.partial_cmp(other).unwrap_or(std::cmp::Ordering::Equal)
    }
}

impl Page {
    /// The page whose own rewriting the evidence trusts most; then the shorter URL, then the
    /// smaller URL, then the smaller id.
    fn rank(&self) -> Rank<'_> {
        (
            self.keeps,
            std::cmp::Reverse(self.url.len()),
            std::cmp::Reverse(&*self.url),
            std::cmp::Reverse(&*self.id),
        )
    }

    /// What a place of the index holds when its form has no page any more.
    fn gone() -> Self {
        Page {
            id: "".into(),
            url: "".into(),
            keeps: 0.0,
            double_of: None,
        }
    }
}

/// The representative of an exact group of two or more.
#[derive(Debug, Clone)]
struct Representative {
    id: Box<str>,
    url: Box<str>,
}

/// The indexed pages by canonical form, under one set of rules.
#[derive(Debug, Clone)]
pub struct Index {
    rules: Rules,
    forms: FxHashMap<u64, u32>,
    pages: Vec<Page>,
    /// Beside the page named for a form (at the same place of `pages`), the other pages of that
    /// form: one of them is named when that page leaves ([`Index::remove_page`]).
    others: FxHashMap<u32, Vec<Page>>,
    /// Places of `pages` whose form has no page any more, to be used again.
    free: Vec<u32>,
    /// By exact signature: the representative of each exact group of two or more.
    representatives: FxHashMap<i64, Representative>,
    added: u64,
    bad_urls: u64,
}

/// What [`Index::predict`] says about a URL.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Prediction<'a> {
    /// The URL asked about, as given.
    pub url: &'a str,
    /// Its canonical form.
    pub canonical: String,
    /// The probability that it duplicates the indexed page (0 when there is none).
    pub probability: f64,
    /// The rules that rewrote it and, after `|`, the indexed page's URL into the canonical form.
    pub rules: Vec<String>,
    /// The page a search filtered on `exact_signature_unique_b:true` shows for the content of the
    /// indexed page with the same canonical form: the representative of that page's exact group
    /// (the page itself when it is one, or when the index has no flags yet); `None`: the URL is new.
    pub duplicate_of: Option<Indexed<'a>>,
    /// The indexed page with the same canonical form, when it is another page than `duplicate_of`
    /// (a double the index hides); `None` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched: Option<Indexed<'a>>,
}

/// An indexed page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Indexed<'a> {
    /// Its id.
    pub id: &'a str,
    /// Its URL.
    pub url: &'a str,
}

impl Index {
    /// An empty index under `rules`.
    pub fn new(rules: Rules) -> Self {
        Index {
            rules,
            forms: FxHashMap::default(),
            pages: Vec::new(),
            others: FxHashMap::default(),
            free: Vec::new(),
            representatives: FxHashMap::default(),
            added: 0,
            bad_urls: 0,
        }
    }

    /// The rules.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// Adds an indexed page; a URL without a canonical form is counted and left out.
    pub fn add(&mut self, id: &str, url: &str) -> Result<(), UrlError> {
        self.add_page(id, url, ExactGroup::default())
    }

    /// Adds an indexed page with what the last run stored about its exact group.
    pub fn add_page(&mut self, id: &str, url: &str, exact: ExactGroup) -> Result<(), UrlError> {
        let c = canonical(url, &self.rules).inspect_err(|_| self.bad_urls += 1)?;
        self.added += 1;
        // Credentials in an indexed URL never go out in an answer. The canonical form says when
        // it has any; only then is the URL parsed again.
        let url: Box<str> = if c.applied.iter().any(|a| a == "user info") {
            let mut u = super::parts::parse(url)?;
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.as_str().into()
        } else {
            url.into()
        };
        if let (Some(signature), Some(true), Some(2..)) =
            (exact.signature, exact.unique, exact.copies)
        {
            self.representatives.insert(
                signature,
                Representative {
                    id: id.into(),
                    url: url.clone(),
                },
            );
        }
        let page = Page {
            id: id.into(),
            url,
            keeps: c.keeps,
            double_of: exact.signature.filter(|_| exact.unique == Some(false)),
        };
        match self.forms.entry(xxh3_64(c.url.as_bytes())) {
            std::collections::hash_map::Entry::Vacant(v) => match self.free.pop() {
                Some(at) => {
                    v.insert(at);
                    self.pages[at as usize] = page;
                }
                None => {
                    v.insert(self.pages.len() as u32);
                    self.pages.push(page);
                }
            },
            std::collections::hash_map::Entry::Occupied(o) => {
                let at = *o.get();
                let old = &mut self.pages[at as usize];
                let other = if page.rank() > old.rank() {
                    std::mem::replace(old, page)
                } else {
                    page
                };
                self.others.entry(at).or_default().push(other);
            }
        }
        Ok(())
    }

    /// Removes an indexed page added with [`Index::add_page`] (`url` and `exact` as it was added):
    /// a page deleted, re-indexed (added again with its new URL and flags) or whose flags a run
    /// changed. The form's next page by the same order takes its place; a representative it was
    /// is forgotten (the run names the new one, which is added again).
    pub fn remove_page(&mut self, id: &str, url: &str, exact: ExactGroup) {
        let Ok(c) = canonical(url, &self.rules) else {
            self.bad_urls = self.bad_urls.saturating_sub(1);
            return;
        };
        if let Some(signature) = exact.signature {
            if self
                .representatives
                .get(&signature)
                .is_some_and(|r| *r.id == *id)
            {
                self.representatives.remove(&signature);
            }
        }
        let form = xxh3_64(c.url.as_bytes());
        let Some(&at) = self.forms.get(&form) else {
            return;
        };
        let others = self.others.get_mut(&at);
        if *self.pages[at as usize].id == *id {
            self.added = self.added.saturating_sub(1);
            let next = others.and_then(|o| {
                let best = (0..o.len()).max_by(|&a, &b| o[a].rank().cmp_by(&o[b].rank()))?;
                Some(o.swap_remove(best))
            });
            match next {
                Some(page) => self.pages[at as usize] = page,
                None => {
                    self.forms.remove(&form);
                    self.pages[at as usize] = Page::gone();
                    self.free.push(at);
                }
            }
        } else if let Some(o) = others {
            if let Some(i) = o.iter().position(|p| *p.id == *id) {
                o.swap_remove(i);
                self.added = self.added.saturating_sub(1);
            }
        }
        if self.others.get(&at).is_some_and(Vec::is_empty) {
            self.others.remove(&at);
        }
    }

    /// Pages added (with a canonical form).
    pub fn len(&self) -> u64 {
        self.added
    }

    /// Whether no page was added.
    pub fn is_empty(&self) -> bool {
        self.added == 0
    }

    /// Pages left out for their URL.
    pub fn bad_urls(&self) -> u64 {
        self.bad_urls
    }

    /// What the index says about `url`.
    pub fn predict<'s, 'u: 's>(&'s self, url: &'u str) -> Result<Prediction<'s>, UrlError> {
        let c = canonical(url, &self.rules)?;
        let hit = self
            .forms
            .get(&xxh3_64(c.url.as_bytes()))
            .map(|&i| &self.pages[i as usize])
            .and_then(|page| {
                // Confirm: the page's own canonical form, not only its hash.
                let theirs = canonical(&page.url, &self.rules).ok()?;
                (theirs.url == c.url).then_some((page, theirs))
            });
        let mut rules = c.applied.clone();
        let (probability, duplicate_of, matched) = match hit {
            Some((page, theirs)) => {
                let probability = joint(&c, &theirs);
                if !theirs.applied.is_empty() {
                    rules.push("|".to_owned());
                    rules.extend(theirs.applied);
                }
                let page_itself = Indexed {
                    id: &page.id,
                    url: &page.url,
                };
                // A double the index hides: the representative of its exact group instead.
                match page.double_of.and_then(|s| self.representatives.get(&s)) {
                    Some(rep) if *rep.id != *page.id => (
                        probability,
                        Some(Indexed {
                            id: &rep.id,
                            url: &rep.url,
                        }),
                        Some(page_itself),
                    ),
                    _ => (probability, Some(page_itself), None),
                }
            }
            None => (0.0, None, None),
        };
        Ok(Prediction {
            url,
            canonical: c.url,
            probability,
            rules,
            duplicate_of,
            matched,
        })
    }
}

/// Whether a rule applied to both URLs of a pair changed the same thing on both (both had
/// `www.`, both `http`, both `index.html`): then the two matched without it.
fn same_on_both(label: &str) -> bool {
    [
        "scheme",
        "www",
        "default document",
        "host case",
        "user info",
    ]
    .iter()
    .any(|k| label.starts_with(k))
}

/// The probability that the URL of `ours` and the indexed page of `theirs` serve the same page:
/// the product of the estimates of the rules their match needed. A rule that changed the same part
/// the same way on both sides is not needed; a rule that removed a part from both (`sid` with two
/// values) is counted once.
fn joint(ours: &Canonical, theirs: &Canonical) -> f64 {
    let mut p = 1.0;
    for (label, e) in ours.applied.iter().zip(&ours.probabilities) {
        if !(same_on_both(label) && theirs.applied.contains(label)) {
            p *= e;
        }
    }
    for (label, e) in theirs.applied.iter().zip(&theirs.probabilities) {
        if !ours.applied.contains(label) {
            p *= e;
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::urlrules::{Evidence, ParamRule, SiteRules};

    fn rules() -> Rules {
        let mut s = SiteRules {
            www: Some(Evidence::new(20, 0)),
            ..SiteRules::default()
        };
        s.params
            .push(ParamRule::irrelevant("sid", "/", Evidence::new(95, 5)));
        let mut r = Rules::default();
        r.sites.insert("f.example".into(), s);
        r
    }

    #[test]
    fn a_url_meets_the_indexed_page_of_its_canonical_form() {
        let mut ix = Index::new(rules());
        ix.add("1", "https://f.example/t?id=1&sid=aa").unwrap();
        ix.add("2", "https://user:secret@f.example/t?id=2").unwrap();
        assert!(ix.add("3", "ftp://f.example/").is_err());
        assert_eq!((ix.len(), ix.bad_urls()), (2, 1));

        // www and sid rewritten on the query, sid on the indexed page: the sid rule counted once,
        // 0.8389 × 0.8882.
        let p = ix.predict("https://www.f.example/t?sid=bb&id=1").unwrap();
        assert_eq!(p.canonical, "https://f.example/t?id=1");
        assert_eq!(p.rules, ["www", "param sid", "|", "param sid"]);
        assert_eq!(
            p.duplicate_of,
            Some(Indexed {
                id: "1",
                url: "https://f.example/t?id=1&sid=aa"
            })
        );
        assert!((p.probability - 0.8389 * 0.8882).abs() < 1e-3);

        // www on both sides: they matched without it; only sid counts.
        ix.add("4", "https://www.f.example/u?id=4").unwrap();
        let p = ix.predict("https://www.f.example/u?id=4&sid=x").unwrap();
        assert_eq!(p.rules, ["www", "param sid", "|", "www"]);
        assert!((p.probability - 0.8882).abs() < 1e-3);

        // The indexed URL itself: certain; its credentials are not in the answer.
        let p = ix.predict("https://f.example/t?id=2").unwrap();
        assert_eq!(
            p.duplicate_of.as_ref().unwrap().url,
            "https://f.example/t?id=2"
        );
        assert_eq!(p.probability, 1.0);
        assert!(p.rules.is_empty());

        // Rules apply, but no page has the form: new.
        let p = ix.predict("https://www.f.example/t?id=3&sid=x").unwrap();
        assert_eq!((p.probability, p.duplicate_of), (0.0, None));
        assert!(matches!(
            ix.predict("mailto:a@b"),
            Err(UrlError::NotHttp(_))
        ));
    }

    /// Pages written out by hand: URLs of one form (sid, www), an exact group whose
    /// representative changes, a bad URL.
    fn pages(step: usize) -> Vec<(&'static str, &'static str, ExactGroup)> {
        let g = |signature, unique, copies| ExactGroup {
            signature: Some(signature),
            unique: Some(unique),
            copies: Some(copies),
        };
        let mut v = vec![
            ("a", "https://f.example/t?id=1&sid=aa", g(1, true, 2)),
            ("b", "https://f.example/t?id=1", g(1, false, 2)),
            ("c", "https://www.f.example/t?id=1&sid=b", g(7, true, 1)),
            ("d", "https://f.example/u", g(8, true, 1)),
            ("e", "ftp://f.example/", ExactGroup::default()),
        ];
        if step == 1 {
            // b leaves (deleted), a is flagged again alone, c re-indexed at another URL, f new in
            // a's form and the representative of d's group.
            v.remove(1);
            v[0].2 = g(1, true, 1);
            v[1].1 = "https://f.example/v";
            v[2].2 = g(8, false, 2);
            v.push(("f", "https://f.example/t?sid=zz&id=1", g(8, true, 2)));
        }
        v
    }

    fn built(step: usize) -> Index {
        let mut ix = Index::new(rules());
        for (id, url, exact) in pages(step) {
            let _ = ix.add_page(id, url, exact);
        }
        ix
    }

    #[test]
    fn removing_and_adding_the_changed_pages_answers_as_a_new_index_does() {
        let (before, after) = (pages(0), pages(1));
        let mut ix = built(0);
        for (id, url, exact) in &before {
            if !after.contains(&(*id, *url, *exact)) {
                ix.remove_page(id, url, *exact);
            }
        }
        for (id, url, exact) in &after {
            if !before.contains(&(*id, *url, *exact)) {
                let _ = ix.add_page(id, url, *exact);
            }
        }
        let fresh = built(1);
        assert_eq!((ix.len(), ix.bad_urls()), (fresh.len(), fresh.bad_urls()));
        let asked = [
            "https://f.example/t?id=1",
            "https://www.f.example/t?id=1&sid=q",
            "https://f.example/u",
            "https://f.example/v",
            "https://f.example/w",
        ];
        for url in asked {
            assert_eq!(ix.predict(url), fresh.predict(url), "{url}");
        }
        // Every page of a form gone: the form is gone, and its place is used again.
        let mut ix = built(0);
        ix.remove_page("a", "https://f.example/t?id=1&sid=aa", pages(0)[0].2);
        ix.remove_page("b", "https://f.example/t?id=1", pages(0)[1].2);
        ix.remove_page("c", "https://www.f.example/t?id=1&sid=b", pages(0)[2].2);
        assert_eq!(
            ix.predict("https://f.example/t?id=1").unwrap().duplicate_of,
            None
        );
        let _ = ix.add_page("g", "https://f.example/x", ExactGroup::default());
        assert_eq!(ix.pages.len(), 2);
        assert_eq!(ix.len(), 2);
    }

    #[test]
    fn when_the_representative_leaves_the_updated_index_names_the_next_one() {
        let flags = |unique, copies| ExactGroup {
            signature: Some(-7),
            unique: Some(unique),
            copies: Some(copies),
        };
        // Before: r represents the group of r, d1 and d2. After: r deleted, d1 represents it.
        let mut ix = Index::new(rules());
        ix.add_page("r", "https://f.example/mirror/1", flags(true, 3))
            .unwrap();
        ix.add_page("d1", "https://f.example/a", flags(false, 3))
            .unwrap();
        ix.add_page("d2", "https://f.example/t?id=1&sid=aa", flags(false, 3))
            .unwrap();
        ix.remove_page("r", "https://f.example/mirror/1", flags(true, 3));
        ix.remove_page("d1", "https://f.example/a", flags(false, 3));
        ix.add_page("d1", "https://f.example/a", flags(true, 2))
            .unwrap();
        ix.remove_page("d2", "https://f.example/t?id=1&sid=aa", flags(false, 3));
        ix.add_page("d2", "https://f.example/t?id=1&sid=aa", flags(false, 2))
            .unwrap();
        let mut fresh = Index::new(rules());
        fresh
            .add_page("d2", "https://f.example/t?id=1&sid=aa", flags(false, 2))
            .unwrap();
        fresh
            .add_page("d1", "https://f.example/a", flags(true, 2))
            .unwrap();
        for url in [
            "https://www.f.example/t?id=1",
            "https://f.example/a",
            "https://f.example/mirror/1",
        ] {
            assert_eq!(ix.predict(url), fresh.predict(url), "{url}");
        }
        let p = ix.predict("https://www.f.example/t?id=1").unwrap();
        assert_eq!(
            (p.duplicate_of.map(|d| d.id), p.matched.map(|m| m.id)),
            (Some("d1"), Some("d2"))
        );
        assert_eq!(
            ix.predict("https://f.example/mirror/1")
                .unwrap()
                .duplicate_of,
            None
        );
        assert_eq!(ix.len(), 2);
    }

    #[test]
    fn a_hidden_double_is_answered_with_its_groups_representative() {
        let mut ix = Index::new(rules());
        let double = ExactGroup {
            signature: Some(-7),
            unique: Some(false),
            copies: Some(3),
        };
        let representative = ExactGroup {
            unique: Some(true),
            ..double
        };
        // The page the canonical form meets is a double; its group's representative is elsewhere.
        ix.add_page("d", "https://f.example/t?id=1&sid=aa", double)
            .unwrap();
        ix.add_page("r", "https://f.example/mirror/1", representative)
            .unwrap();
        // A singleton flagged true, and a double of a group whose representative is not read.
        ix.add_page(
            "s",
            "https://f.example/t?id=2",
            ExactGroup {
                signature: Some(5),
                unique: Some(true),
                copies: Some(1),
            },
        )
        .unwrap();
        ix.add_page(
            "o",
            "https://f.example/t?id=3",
            ExactGroup {
                signature: Some(9),
                ..double
            },
        )
        .unwrap();
        let p = ix.predict("https://www.f.example/t?id=1").unwrap();
        assert_eq!(
            p.duplicate_of,
            Some(Indexed {
                id: "r",
                url: "https://f.example/mirror/1"
            })
        );
        assert_eq!(
            p.matched,
            Some(Indexed {
                id: "d",
                url: "https://f.example/t?id=1&sid=aa"
            })
        );
        // The probability is the match's, with the matched page.
        assert!((p.probability - 0.8389 * 0.8882).abs() < 1e-3);
        let p = ix.predict("https://f.example/t?id=2").unwrap();
        assert_eq!((p.duplicate_of.unwrap().id, p.matched), ("s", None));
        // No representative known: the matched page.
        let p = ix.predict("https://f.example/t?id=3").unwrap();
        assert_eq!((p.duplicate_of.unwrap().id, p.matched), ("o", None));
    }

    #[test]
    fn the_page_named_is_the_one_the_evidence_trusts_most() {
        let mut ix = Index::new(rules());
        ix.add("b", "https://f.example/t?id=1&sid=aa").unwrap();
        ix.add("a", "https://f.example/t?id=1").unwrap();
        ix.add("c", "https://f.example/t?id=1&sid=b").unwrap();
        let p = ix.predict("https://f.example/t?id=1&sid=zz").unwrap();
        assert_eq!(p.duplicate_of.unwrap().id, "a");
    }
}
