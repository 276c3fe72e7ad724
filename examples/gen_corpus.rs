//! `gen_corpus`: a deterministic generator of synthetic crawled pages with planted doubles in every
//! dimension solr-dedup handles, and an exact ground truth of what it planted (for near-duplicates:
//! the exact shingle overlap of every planted pair).
//!
//! ```text
//! cargo run --release --example gen_corpus -- --docs 100000 --seed 1 --out corpus.jsonl --truth truth.json
//! ```
//!
//! # Design
//!
//! The corpus is `N` *slots*. A slot's role is a pure function of `(seed, N, slot)`, so nothing is held in
//! memory and the truth is derived from the same functions that generate the documents:
//!
//! ```text
//!  slot s ──► block s/8 ──► block plan (maybe one planted unit at the block's start) ──► role of s
//!                                                                                         │
//!  output line p = σ(s)   (affine permutation: group members end up far apart)            ▼
//!  id            = τ(s)   (another affine permutation: id order ≠ output order ≠ URL order)  meta(s):
//!                                                        text key, title key, description key, URL
//! ```
//!
//! Blocks 0 and 1 are fixtures (the special URL pair, every kind of empty text, every odd URL kind), so
//! that even a corpus of 16 documents holds one of each. Every other block plants at most one unit.
//!
//! # Why the truth is exact
//!
//! Every text, title and description that is not meant to be shared carries a *topic word* derived from
//! its owner's slot number: eight or more letters in strict consonant-vowel alternation, a shape no other
//! word of the vocabulary has (pseudo-words have at most seven letters; the real-word list is checked at
//! start-up). Two fields can only be equal if their topic words are, i.e. if they share an owner.
//!
//! Fuzzy signatures: in a unique text the topic word occurs more often than any other token of four or
//! more UTF-16 units, and more than half as often as any token of three or more, so it survives the
//! quantisation of both schemes at their defaults (`yacy` 3/0.5, `md5` 2/0.01) and makes the profile
//! unique. A planted fuzzy group is built so that its profile does not depend on word order: seven key
//! words occur 16, 12, 10, 8, 6, 4 and 2 times (the first is the group's topic word), every other token of
//! three or more units occurs exactly once, and short words (two units or fewer) are free. The key words
//! have distinct raw counts (`yacy` sorts by those) and sit in pairwise different Java `HashMap` buckets at
//! any table size (where `md5` quantisation makes their counts tie, the bucket orders them), so the order
//! of words never decides anything: the members only differ in sentence order, separators, line breaks
//! and ASCII case, which the profile ignores. Each member's first sentence ends with a different character (`.`, `!`, `?`, `;`) and no such
//! character occurs earlier in the text, so no two members are byte-identical.
//!
//! # Near-duplicates with a known overlap
//!
//! A near unit (2-4 members) plants pages whose shingle sets (distinct word bigrams, tokens as
//! `spec/neardup.md` defines them: runs of letters and digits, lower-cased) have a planned Jaccard
//! overlap J, the same for every pair of the unit, from the bands 0.5, 0.6, 0.7, 0.8, 0.9, 0.95 and 1.0
//! (one in seven units each). Tokens ignore punctuation, so the bigram sequence runs across sentence
//! ends; the construction therefore reasons about the token sequence alone (`NearPlan`):
//!
//! ```text
//!  member i:  own fresh words │ shared body (unit's words, every member's anchor) │ own fresh words
//! ```
//!
//! - The shared body is `words` vocabulary words drawn so that no ordered pair of neighbours repeats,
//!   with one *anchor* per member j inserted at a fixed gap: member j's topic word written several
//!   times in a row. Every bigram of the body is then distinct and the body has exactly
//!   `shared = words + 2k − 1` shingles (an anchor removes the one word pair it splits and adds
//!   `(prev, T_j)`, `(T_j, T_j)`, `(T_j, next)`), however often its topic word is repeated.
//! - Member j repeats its own anchor's topic word until it dominates the profile by the rule above
//!   (at least four times; the other anchors hold their topic word twice), so each member has a
//!   fuzzy profile of its own while the shingle set does not change. Its title, description and URL
//!   are its own, as on a unique page.
//! - A member's own part is `own` fresh words (split between the start and the end of the text): its
//!   topic word, an `x`, and a syllable spelling of a counter, a shape nothing else has, so each
//!   occurs once in the corpus and adds exactly one shingle no other page has (before the body each
//!   starts one word pair, the last one with the body's first word; after the body each ends one).
//!
//! So any two members share exactly `shared` shingles and have `own` each alone:
//! `J = shared / (shared + 2·own)`, and `shared` and `own` are sized from the page size so that this
//! is the band exactly (`own/shared = (1 − J)/(2J)`; J = 1 means no fresh words: the members differ
//! only in how often each topic word is repeated and in punctuation, sentence breaks and case). The
//! truth computes both numbers from the plan; no text is generated for it.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Parser;

const LONG_ABOUT: &str = "\
Writes a deterministic synthetic corpus of crawled web pages as JSON Lines of Solr documents (one JSON \
object per line), with doubles planted in every dimension solr-dedup handles (exact, fuzzy, title, \
description, www, http) and near-duplicates with a planned shingle overlap, and optionally a \
ground-truth JSON file that lists every planted group and the exact overlap of every planted \
near-duplicate pair.

The same --docs and --seed always give byte-identical output (corpus and truth). Documents are generated \
one at a time into a buffered writer and the truth file is streamed, so memory stays small for any N.";

const AFTER_LONG_HELP: &str = "\
DOCUMENTS
  id               \"doc-000000123\", unique; a permutation of the slots, so id order,
                   output order and URL order all differ
  sku              the URL; absent for some odd-URL documents
  host_s           the URL's host; absent when there is no parseable URL
  title            [one string]; absent for pages without a title
  description_txt  [one or two strings]; absent sometimes
  text_t           English-like sentences and paragraphs from ~200 real words, ~6000
                   pseudo-words, years, small numbers and a few non-ASCII words (Köln,
                   café, naïve, Straße, 日本語, ...); about --page-kb KiB per page
  No signature fields: the worker computes them.

PLANTED DOUBLES (fixed fractions). The corpus is cut into blocks of 8 slots; every block
after the first two plants at most one unit at its start, the rest are single documents.
  exact         4% of blocks, 2-5 docs (~1.7% of docs): byte-identical text_t,
                different URLs, own titles and descriptions
  fuzzy         4% of blocks, 2-4 docs (~1.5%): the same words with the same counts in
                another sentence order, with other separators, line breaks and ASCII
                case; never byte-identical
  title         3% of blocks, 2-4 docs (~1.1%): one shared title, different texts
  description   3% of blocks, 2-4 docs (~1.1%): one shared description_txt array
  www pair      3% of blocks, 2 docs (~0.75%): scheme://www.host/path and
                scheme://host/path
  http pair     3% of blocks, 2 docs (~0.75%): http:// and https://, same host form
  four-variant  2% of blocks, 4 docs (~1%): http/https x www/bare
  near          4% of blocks, 2-4 docs (~1.5%): near-duplicates whose shingle sets (distinct
                word bigrams) overlap by a planned Jaccard J, the same for every pair of
                the unit: 0.5, 0.6, 0.7, 0.8, 0.9, 0.95 or 1.0 (one unit in seven each).
                Each member is: own fresh words | a shared body | own fresh words. The
                shared body is the unit's words, no word pair repeated, with one anchor
                per member (its topic word repeated); each member repeats its own
                anchor to dominate its text profile. Fresh words occur nowhere else, so
                each adds one shingle of its own. Doubles in no other dimension: own
                text, fuzzy profile, title, description and URL. Near pages stay below
                about 34 KiB whatever --page-kb says.
  A same page (www, http, four-variant) shares text, title and description (when it has
  them), so it is also an exact, fuzzy, title and description group.

SINGLE DOCUMENTS (per slot, outside planted units)
  0.5%  empty text: \"\", \"  \\n\\t \", \"\\u00a0\\u2003\\n\", \" \" or \"\\n\\n\"
  0.2%  empty profile: a unique text of words of one or two characters only
  1.0%  odd URL, nine kinds in equal shares: upper-case scheme/host, explicit default
        port (:443, :80), a fragment, an IDN host (bücher.example, ...), a non-default
        port (:8080, :8443), a non-ASCII path, ftp://, an unparseable sku (\"not a url\",
        \"http://\", \"http://exa mple.org/1\", ...), no sku at all; content unique
  rest  unique pages; ~3% of them without title, ~12% without description
  Fixtures, so that even 16 docs hold one of each: slots 0-1 are the one planted URL
  double, HTTP://WWW.Example.ORG/Path#frag and http://www.example.org/Path (the same
  page at one normalised URL); slots 2-4 hold the texts \"\", \"  \\n\\t \" and
  \"\\u00a0\\u2003\\n\", slot 5 an empty-profile page, slots 6-14 one of each odd URL kind.

SITES (--site-pages N)
  After the --docs documents, N pages of two sites (forum.example.org, wiki.example.net), half
  each, outside the truth file. Every page is a header line, its own body, a footer line: the
  site's chrome, which `solr-dedup chrome learn` finds. A third of the forum's topics is indexed
  a second time under a session id (&sid=…), a third of the wiki's articles under www., with the
  same text: the evidence from which `solr-dedup urls learn` learns that neither changes a page.
  Ids are site-S-KKKK-V.

BIG GROUPS (--big-groups N)
  After the sites, N pages of shops whose items share everything but the URL: blocks of
  11,000 pages (the first, when N is at least that) and then of 1,100, each with one title
  and one description; ten pages in eleven share one text (exact groups of 10,000 and 1,000),
  the rest hold the same words in another order (fuzzy groups of the whole block). Outside
  the truth file. Ids are big-BBB-MMMMM.

TRUTH FILE (--truth)
  {\"docs\":N, \"seed\":S, \"page_kb\":K,
   \"groups\":{\"exact\":[[id,...],...], \"fuzzy\":[...], \"title\":[...],
             \"description\":[...], \"www\":[...], \"http\":[...]},
   \"near\":[{\"ids\":[id,...], \"shared\":S, \"own\":O,
            \"jaccard\":[[id_a,id_b,J],...]}, ...],
   \"empty_text\":[id,...], \"empty_profile\":[...], \"no_title\":[...],
   \"no_description\":[...], \"no_url\":[...], \"non_http\":[...],
   \"counts\":{\"exact_groups\":..., \"exact_docs\":..., ..., \"no_url\":..., ...}}
  groups.DIM      every group of size >= 2 that the worker must find in that dimension
                  with global scope, with every member id (sorted). A document in none
                  of them is alone there: unique_b true, copycount 1. Exact groups are
                  listed under fuzzy too (same text, same profile); a same page is listed
                  in every dimension it shares. A four-variant page gives the www groups
                  {http://www.h/p, http://h/p}, {https://www.h/p, https://h/p} and the
                  http groups {http://www.h/p, https://www.h/p}, {http://h/p, https://h/p}.
  near            one entry per near unit, in slot order: its members (sorted); S, the
                  shingles every member has (distinct word bigrams of text_t, tokens as
                  in spec/neardup.md); O, the shingles each member has alone. Every member
                  has S+O shingles and every pair J = S/(S+2O) exactly, listed per pair
                  (id_a < id_b) as the nearest double to the fraction (1.0 for J = 1).
                  Not part of groups: whether the worker links a pair is chance, with the
                  probability `solr-dedup near table` prints for J; a unit with J = 1
                  always ends up as one cluster.
                  Other planted doubles are near-duplicates too, without being listed
                  here: an exact group and a same-page unit have identical text (J = 1,
                  always one cluster); a fuzzy group has the same words in another
                  sentence order, so a high but unplanned J (about 0.8 to 1). Pages in no
                  common group share only common word pairs (\"of the\"): J of a few
                  percent.
  empty_text      text_t empty or whitespace only (never in exact or fuzzy groups)
  empty_profile   no token longer than two characters: empty_text + empty-profile pages
  no_title        no title field
  no_description  no description_txt field
  no_url          no sku, or an sku that does not parse as a URL
  non_http        a parseable URL whose scheme is neither http nor https
  counts          groups and grouped documents per dimension (near: near_groups,
                  near_docs, near_pairs), and list lengths
  Groups come in slot order, list entries in no particular order.

EXACTNESS
  The truth is built from the plan, not measured. It is exact for both signature schemes
  at their defaults (yacy: min-token-len 3, quant-rate 0.5; md5: 2, 0.01) and for any
  min-token-len from 2 to 7 with any quant-rate up to 0.5. Fuzzy pages stay below about
  32 KiB whatever --page-kb says (nearly every token needs a word of its own). The near
  overlaps are exact for word bigrams (n = 2, the default) of the tokens spec/neardup.md
  defines: every word of the corpus is one token, separators and case never matter. Other
  shingle sizes give other, unplanned overlaps.";

/// Generates a synthetic Solr corpus with planted doubles and its ground truth.
#[derive(Parser, Debug)]
#[command(
    name = "gen_corpus",
    about = "Generates a deterministic synthetic Solr corpus (JSON Lines) with planted doubles and an exact ground truth",
    long_about = LONG_ABOUT,
    after_long_help = AFTER_LONG_HELP
)]
struct Args {
    /// Number of documents to write.
    #[arg(long, value_name = "N")]
    docs: u64,
    /// Seed of every random choice; the same N and S give byte-identical files.
    #[arg(long, value_name = "S")]
    seed: u64,
    /// Where to write the JSON Lines corpus ("-" or absent: stdout).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Where to write the ground-truth JSON (see TRUTH FILE below); not written when absent.
    #[arg(long, value_name = "FILE")]
    truth: Option<PathBuf>,
    /// Average size of a page's text_t in KiB (pages vary from 0.6x to 1.4x; fractions allowed).
    #[arg(long, value_name = "K", default_value_t = 5.0)]
    page_kb: f64,
    /// Also write this many pages of two sites with real chrome (a header and a footer on every
    /// page) and URL variants (session ids, `www.`), after the --docs documents and outside the
    /// truth file: what `chrome learn` and `urls learn` learn from (see SITES below).
    #[arg(long, value_name = "N", default_value_t = 0)]
    site_pages: u64,
    /// Also write this many pages in big groups, after the others and outside the truth file: the
    /// pages of a shop whose thousands of items share one title, one description and one
    /// boilerplate text (see BIG GROUPS below).
    #[arg(long, value_name = "N", default_value_t = 0)]
    big_groups: u64,
}

// The example's entry point; `tests/truth.rs` includes this file as a module for its generator
// only.
#[cfg_attr(test, allow(dead_code))]
fn main() -> Result<()> {
    let args = Args::parse();
    if !(args.page_kb.is_finite() && (0.0..=100_000.0).contains(&args.page_kb)) {
        bail!(
            "--page-kb must be between 0 and 100000, got {}",
            args.page_kb
        );
    }
    let sink: Box<dyn Write> = match &args.out {
        None => Box::new(io::stdout().lock()),
        Some(p) if p.as_os_str() == "-" => Box::new(io::stdout().lock()),
        Some(p) => {
            Box::new(File::create(p).with_context(|| format!("cannot create {}", p.display()))?)
        }
    };
    let mut out = BufWriter::with_capacity(1 << 20, sink);
    let mut truth = match &args.truth {
        Some(p) => Some(BufWriter::with_capacity(
            1 << 20,
            File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        None => None,
    };
    generate(args.docs, args.seed, args.page_kb, &mut out, truth.as_mut())
        .context("cannot write the corpus or the truth file")?;
    write_sites(args.site_pages, args.seed, &mut out).context("cannot write the corpus")?;
    write_big_groups(args.big_groups, args.seed, args.page_kb, &mut out)
        .context("cannot write the corpus")?;
    Ok(())
}

/// Members of the first big group, and of every later one.
const BIG_FIRST: u64 = 11_000;
const BIG_NEXT: u64 = 1_100;

/// `--big-groups`: `pages` pages in blocks of [`BIG_FIRST`] (when there are that many), then of
/// [`BIG_NEXT`]. Every page of a block shares the block's title and description; ten in eleven
/// share one text (an exact group of 10,000, then of 1,000), the rest hold the same words in
/// another order (so the fuzzy group is the whole block). URLs and ids are the page's own.
fn write_big_groups<W: Write>(pages: u64, seed: u64, page_kb: f64, out: &mut W) -> io::Result<()> {
    if pages == 0 {
        return out.flush();
    }
    // Texts of their own: another seed than the planted corpus's.
    let ctx = Ctx::new(pages.max(16), seed ^ 0xB16_6A0F, page_kb);
    let mut gen = Gen::new(&ctx);
    let (mut block, mut start) = (0u64, 0u64);
    while start < pages {
        let size = if block == 0 && pages >= BIG_FIRST {
            BIG_FIRST
        } else {
            BIG_NEXT
        };
        let exact = size * 10 / 11;
        for m in 0..size.min(pages - start) {
            gen.fuzzy_text(1_000_000 + block, if m < exact { 0 } else { m });
            let url = format!("https://shop{block}.example/item/{m}");
            let doc = serde_json::json!({
                "id": format!("big-{block:03}-{m:05}"),
                "sku": url,
                "host_s": format!("shop{block}.example"),
                "title": [format!("Shop {block} – every item in one place")],
                "description_txt": [format!("Shop {block}: the same description on every page.")],
                "text_t": gen.text,
            });
            writeln!(out, "{doc}")?;
        }
        start += size;
        block += 1;
    }
    out.flush()
}

/// One of the two sites of `--site-pages`.
struct Site {
    host: &'static str,
    /// A page's URL before its key.
    prefix: &'static str,
    /// What the key names (`Topic`, `Article`).
    kind: &'static str,
    /// The indexed variant: `{}` (the page's URL) and a session id after it, or `www`.
    variant: &'static str,
    header: &'static str,
    footer: &'static str,
}

const SITES: [Site; 2] = [
    Site {
        host: "forum.example.org",
        prefix: "https://forum.example.org/viewtopic.php?t=",
        kind: "Topic",
        variant: "{}&sid=",
        header: "Example Forum · Board index · Search · Members · The team · FAQ · Register · Login",
        footer: "Forum rules: be kind, stay on topic, search before you post. Powered by a forum engine.",
    },
    Site {
        host: "wiki.example.net",
        prefix: "https://wiki.example.net/wiki/Article_",
        kind: "Article",
        variant: "www",
        header: "Example Wiki, the free handbook · Main page · Recent changes · Random article · Help",
        footer: "This page was last edited by a volunteer. Text is available under a free licence.",
    },
];

/// Words of the sites' pages (each page also carries a word of its own).
const SITE_WORDS: &[&str] = &[
    "kernel", "driver", "install", "package", "update", "network", "printer", "screen", "sound",
    "disk", "backup", "restore", "boot", "error", "message", "log", "config", "setting", "option",
    "version", "release", "patch", "bug", "report", "thread", "reply", "question", "answer",
    "solve", "thank", "try", "mount", "build", "test", "file", "folder", "user", "group", "port",
    "work", "fail", "load", "memory", "cpu", "fan", "battery", "wifi", "cable", "monitor", "mouse",
    "keyboard", "server", "client", "proxy", "cache", "index", "query", "table", "font", "theme",
    "panel", "window", "mirror", "repo", "branch", "commit", "merge", "script", "shell", "path",
    "socket", "signal", "thread", "process", "service", "timer", "clock", "zone", "locale",
    "encode", "decode", "stream", "buffer", "queue", "stack", "heap", "page", "block", "sector",
    "volume", "label", "token", "secret", "account", "profile", "session", "cookie", "header",
];

/// `--site-pages`: pages of [`SITES`], half each. Every page is its header, its own body and its
/// footer, one per line. On the forum a third of the topics is also indexed under a session id,
/// on the wiki under `www.`, with the same text: exact doubles in which `urls learn` finds `sid`
/// and `www.` do not change the page, and from which `chrome learn` learns the header and footer.
fn write_sites<W: Write>(pages: u64, seed: u64, out: &mut W) -> io::Result<()> {
    for (s, site) in SITES.iter().enumerate() {
        let Site {
            host,
            prefix,
            kind,
            variant,
            header,
            footer,
        } = site;
        let share = pages / 2 + (s == 0) as u64 * (pages % 2);
        // Pages of this site: n keys, a third of them indexed twice (n + n/3 = share).
        let n = (share * 3).div_ceil(4);
        let mut written = 0;
        for k in 0..n {
            let mut r = Rng::new(&[seed, 0x5173, s as u64, k]);
            let own = format!("{}{}", kind.to_lowercase(), 1000 + k);
            let words = 40 + r.below(60);
            // A word list and its plurals and -ing forms: enough words that no pair of them is on
            // more than a few pages by chance, so that only the header and footer are chrome.
            let body: Vec<String> = (0..words)
                .map(|i| {
                    if i % 9 == 4 {
                        return own.clone();
                    }
                    let w = *r.pick(SITE_WORDS);
                    match r.below(4) {
                        0 => format!("{w}s"),
                        1 => format!("{w}ing"),
                        2 => format!("re{w}"),
                        _ => w.to_owned(),
                    }
                })
                .collect();
            let text = format!(
                "{header}\n{kind} {}: {}.\n{footer}",
                1000 + k,
                body.join(" ")
            );
            let url = format!("{prefix}{}", 1000 + k);
            let title = format!("{kind} {} – {host}", 1000 + k);
            let mut urls = vec![url.clone()];
            if k % 3 == 1 && written + 1 < share {
                urls.push(if *variant == "www" {
                    url.replacen("https://", "https://www.", 1)
                } else {
                    format!("{}{:08x}", variant.replace("{}", &url), r.next() as u32)
                });
            }
            for (v, u) in urls.iter().enumerate() {
                if written == share {
                    break;
                }
                let doc = serde_json::json!({
                    "id": format!("site-{s}-{k:04}-{v}"),
                    "sku": u,
                    "host_s": u.split('/').nth(2).unwrap_or(host),
                    "title": [title],
                    "text_t": text,
                });
                writeln!(out, "{doc}")?;
                written += 1;
            }
        }
    }
    out.flush()
}

/// Writes `docs` documents for `seed` to `out`, and the ground truth to `truth` when given. Tests
/// include this file as a module and call this directly.
pub fn generate<W: Write, T: Write>(
    docs: u64,
    seed: u64,
    page_kb: f64,
    out: &mut W,
    truth: Option<&mut T>,
) -> io::Result<()> {
    let ctx = Ctx::new(docs, seed, page_kb);
    let mut gen = Gen::new(&ctx);
    let mut line = Vec::with_capacity(64 << 10);
    for p in 0..ctx.n {
        gen.write_doc(ctx.slot_at(p), &mut line);
        out.write_all(&line)?;
    }
    out.flush()?;
    if let Some(w) = truth {
        write_truth(&ctx, w)?;
        w.flush()?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------------
// Randomness: splitmix64, keyed by (seed, purpose tag, key...) so every field is a pure function.

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn hash(parts: &[u64]) -> u64 {
    let mut h = 0x243F_6A88_85A3_08D3u64;
    for &p in parts {
        h = mix64(h.wrapping_add(GOLDEN) ^ mix64(p.wrapping_add(0x1357_9BDF_2468_ACE0)));
    }
    h
}

struct Rng(u64);

impl Rng {
    fn new(parts: &[u64]) -> Rng {
        Rng(hash(parts))
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN);
        mix64(self.0)
    }
    /// Uniform in `0..n` (n > 0).
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
}

// Purpose tags.
const T_BLOCK: u64 = 1;
const T_SINGLE: u64 = 2;
const T_TEXT: u64 = 3;
const T_FUZZ: u64 = 4;
const T_FUZZVAR: u64 = 5;
const T_TITLE: u64 = 6;
const T_DESC: u64 = 7;
const T_HAS_TITLE: u64 = 8;
const T_HAS_DESC: u64 = 9;
const T_HOST: u64 = 10;
const T_PATH: u64 = 11;
const T_ODD: u64 = 12;
const T_VARIANT: u64 = 13;
const T_PERM: u64 = 14;
const T_EMPTYPROF: u64 = 15;
const T_NEAR: u64 = 16;
const T_NEARTEXT: u64 = 17;
const T_NEARVAR: u64 = 18;

// ---------------------------------------------------------------------------------------------------
// Vocabulary.

const CONS: &[u8] = b"bdfghjklmnprstvz";
const VOWS: &[u8] = b"aeiou";
const CODA: &[u8] = b"nrslkm";
const N_PSEUDO: usize = 6000;
const TABLE_BITS: u32 = 16;
/// Stands for the page's topic word in a word-id sequence.
const TOPIC: u32 = u32::MAX;

/// Words of at most two characters: free in both schemes' profiles (never a counted token).
const SHORT: &[&str] = &[
    "a", "of", "to", "in", "is", "it", "on", "be", "as", "at", "by", "or", "an", "we", "he", "if",
    "no", "so", "up", "do", "my", "me", "us", "go", "am",
];

/// Real English words of three or more letters, roughly by frequency.
const COMMON: &[&str] = &[
    "the",
    "and",
    "for",
    "that",
    "with",
    "you",
    "this",
    "not",
    "but",
    "from",
    "have",
    "they",
    "are",
    "was",
    "his",
    "her",
    "she",
    "will",
    "one",
    "all",
    "would",
    "there",
    "their",
    "what",
    "out",
    "about",
    "who",
    "get",
    "which",
    "when",
    "make",
    "can",
    "like",
    "time",
    "just",
    "him",
    "know",
    "take",
    "people",
    "into",
    "year",
    "your",
    "good",
    "some",
    "could",
    "them",
    "see",
    "other",
    "than",
    "then",
    "now",
    "look",
    "only",
    "come",
    "its",
    "over",
    "think",
    "also",
    "back",
    "after",
    "use",
    "two",
    "how",
    "our",
    "work",
    "first",
    "well",
    "way",
    "even",
    "new",
    "want",
    "because",
    "any",
    "these",
    "give",
    "day",
    "most",
    "find",
    "here",
    "thing",
    "many",
    "tell",
    "very",
    "through",
    "long",
    "where",
    "much",
    "should",
    "before",
    "between",
    "life",
    "under",
    "never",
    "same",
    "another",
    "while",
    "last",
    "might",
    "great",
    "since",
    "against",
    "right",
    "three",
    "both",
    "little",
    "world",
    "still",
    "own",
    "old",
    "house",
    "part",
    "place",
    "case",
    "week",
    "company",
    "system",
    "program",
    "question",
    "government",
    "number",
    "night",
    "point",
    "home",
    "water",
    "room",
    "mother",
    "area",
    "money",
    "story",
    "fact",
    "month",
    "lot",
    "study",
    "book",
    "eye",
    "job",
    "word",
    "business",
    "issue",
    "side",
    "kind",
    "head",
    "far",
    "black",
    "city",
    "community",
    "name",
    "president",
    "team",
    "minute",
    "idea",
    "kid",
    "body",
    "information",
    "school",
    "face",
    "others",
    "level",
    "office",
    "door",
    "health",
    "person",
    "art",
    "war",
    "history",
    "party",
    "result",
    "change",
    "morning",
    "reason",
    "research",
    "girl",
    "guy",
    "moment",
    "air",
    "teacher",
    "force",
    "education",
    "foot",
    "boy",
    "age",
    "policy",
    "music",
    "market",
    "sense",
    "nation",
    "plan",
    "college",
    "interest",
    "death",
    "experience",
    "effect",
    "class",
    "control",
    "field",
    "development",
    "role",
    "effort",
    "rate",
    "heart",
    "show",
    "leader",
    "light",
    "voice",
    "police",
    "mind",
    "price",
    "report",
    "decision",
    "son",
    "view",
    "town",
    "road",
    "difference",
    "value",
    "building",
    "action",
    "model",
    "season",
    "society",
    "director",
    "position",
    "player",
    "record",
    "paper",
    "space",
    "ground",
    "form",
    "event",
    "matter",
    "center",
    "couple",
    "site",
    "project",
    "activity",
    "star",
    "table",
    "court",
    "situation",
    "cost",
    "industry",
    "figure",
    "street",
    "image",
    "phone",
    "data",
    "picture",
    "practice",
    "piece",
    "land",
    "product",
    "doctor",
    "wall",
    "patient",
    "worker",
    "news",
    "test",
    "movie",
    "north",
    "love",
    "support",
    "technology",
    "step",
    "baby",
    "computer",
    "type",
    "attention",
    "film",
    "tree",
    "source",
    "organization",
    "window",
    "evidence",
    "population",
    "truth",
    "song",
    "science",
];

/// Non-ASCII words; every character is a letter in one BMP unit, so each is one token.
const NON_ASCII: &[&str] = &[
    "Köln",
    "café",
    "naïve",
    "Straße",
    "日本語",
    "Zürich",
    "façade",
    "résumé",
    "jalapeño",
    "Ελλάδα",
    "Ångström",
    "São",
    "über",
    "crème",
    "Москва",
];

const IDN_HOSTS: &[&str] = &[
    "bücher.example",
    "www.bücher.example",
    "münchen.example.de",
    "日本語.example.jp",
    "café.example.fr",
    "straße.example.de",
];

/// True for the shape reserved for topic words: 8+ letters, consonant-vowel pairs from our alphabets.
fn is_topic_like(w: &str) -> bool {
    let b = w.as_bytes();
    b.len() >= 8
        && b.len().is_multiple_of(2)
        && b.chunks(2).all(|p| {
            CONS.contains(&p[0].to_ascii_lowercase()) && VOWS.contains(&p[1].to_ascii_lowercase())
        })
}

/// True for the shape reserved for fresh words ([`push_fresh`]): a topic-like word, an `x`, and one or
/// more consonant-vowel pairs.
fn is_fresh_like(w: &str) -> bool {
    match w.split_once('x') {
        Some((head, tail)) => {
            is_topic_like(head)
                && !tail.is_empty()
                && tail.len() % 2 == 0
                && tail
                    .as_bytes()
                    .chunks(2)
                    .all(|p| CONS.contains(&p[0]) && VOWS.contains(&p[1]))
        }
        None => false,
    }
}

struct Vocab {
    words: Vec<String>,
    /// Length in UTF-16 units (what the profile's min-token-len compares against).
    units: Vec<u32>,
    short: Vec<u32>,
    /// Every word of three or more units: the once-only filler of fuzzy pages.
    pool: Vec<u32>,
    /// ASCII words of four or more letters: key words of fuzzy pages.
    pool4: Vec<u32>,
    /// ASCII letter words for titles, descriptions and URL slugs.
    plain: Vec<u32>,
    non_ascii: Vec<u32>,
    /// 2^TABLE_BITS word ids laid out by weight: one draw is one table lookup.
    table: Vec<u16>,
    /// Every word as is and capitalised, zero-padded to 16 bytes, for [`Bytes::put16`].
    padded: Vec<[u8; 16]>,
    padded_cap: Vec<[u8; 16]>,
    /// Mean bytes of a weighted draw and the space after it (sizes near pages).
    avg_bytes: f64,
}

impl Vocab {
    fn build() -> Vocab {
        let mut v = Vocab {
            words: Vec::new(),
            units: Vec::new(),
            short: Vec::new(),
            pool: Vec::new(),
            pool4: Vec::new(),
            plain: Vec::new(),
            non_ascii: Vec::new(),
            table: Vec::new(),
            padded: Vec::new(),
            padded_cap: Vec::new(),
            avg_bytes: 0.0,
        };
        let mut seen = HashSet::new();
        let mut weighted: Vec<(u32, f64)> = Vec::new();
        let mut add_class = |v: &mut Vocab, words: Vec<String>, share: f64, offset: f64| {
            let ids: Vec<u32> = words
                .into_iter()
                .filter_map(|w| v.add(&mut seen, w))
                .collect();
            let total: f64 = (0..ids.len()).map(|r| 1.0 / (r as f64 + offset)).sum();
            for (r, &id) in ids.iter().enumerate() {
                weighted.push((id, share / (r as f64 + offset) / total));
            }
            ids
        };
        let strs = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        v.short = add_class(&mut v, strs(SHORT), 0.25, 2.0);
        add_class(&mut v, strs(COMMON), 0.30, 3.0);
        // Pseudo-words: one to three consonant-vowel syllables and an optional coda, 3..=7 letters,
        // from a fixed seed so the vocabulary never changes.
        let mut r = Rng::new(&[0x5EED, 0]);
        let mut pseudo = Vec::with_capacity(N_PSEUDO);
        let mut pseudo_seen = HashSet::new();
        while pseudo.len() < N_PSEUDO {
            let syl = 1 + r.below(3) as usize;
            let mut w = String::with_capacity(7);
            for _ in 0..syl {
                w.push(*r.pick(CONS) as char);
                w.push(*r.pick(VOWS) as char);
            }
            if syl == 1 || r.below(3) == 0 {
                w.push(*r.pick(CODA) as char);
            }
            if pseudo_seen.insert(w.clone()) {
                pseudo.push(w);
            }
        }
        add_class(&mut v, pseudo, 0.42, 15.0);
        add_class(
            &mut v,
            (1990..=2025).map(|y| y.to_string()).collect(),
            0.02,
            1e9,
        );
        v.non_ascii = add_class(&mut v, strs(NON_ASCII), 0.01, 1e9);

        for (id, w) in v.words.iter().enumerate() {
            assert!(
                !is_topic_like(w) && !is_fresh_like(w),
                "vocabulary word {w:?} has the topic-word or fresh-word shape"
            );
            let id = id as u32;
            let units = v.units[id as usize];
            if v.short.contains(&id) {
                assert!(units <= 2, "short word {w:?} is longer than two units");
                continue;
            }
            assert!(
                units >= 3,
                "word {w:?} is neither short nor a counted token"
            );
            v.pool.push(id);
            if w.bytes().all(|b| b.is_ascii_lowercase()) {
                v.plain.push(id);
                if units >= 4 {
                    v.pool4.push(id);
                }
            }
        }
        assert!(v.words.len() < usize::from(u16::MAX));
        for w in &v.words {
            let mut cap = String::new();
            push_word(&mut cap, w, Case::Cap);
            v.padded.push(pad16(w));
            v.padded_cap.push(pad16(&cap));
        }

        let size = 1usize << TABLE_BITS;
        let total: f64 = weighted.iter().map(|w| w.1).sum();
        v.table = Vec::with_capacity(size);
        let (mut k, mut cum) = (0usize, weighted[0].1 / total);
        for i in 0..size {
            let x = (i as f64 + 0.5) / size as f64;
            while cum < x && k + 1 < weighted.len() {
                k += 1;
                cum += weighted[k].1 / total;
            }
            v.table.push(weighted[k].0 as u16);
        }
        let bytes: usize = v
            .table
            .iter()
            .map(|&id| v.words[usize::from(id)].len() + 1)
            .sum();
        v.avg_bytes = bytes as f64 / size as f64;
        v
    }

    fn add(&mut self, seen: &mut HashSet<String>, w: String) -> Option<u32> {
        if !seen.insert(w.to_lowercase()) {
            return None;
        }
        let id = self.words.len() as u32;
        self.units.push(w.encode_utf16().count() as u32);
        self.words.push(w);
        Some(id)
    }

    fn draw(&self, r: &mut Rng) -> u32 {
        u32::from(self.table[(r.next() >> (64 - TABLE_BITS)) as usize])
    }

    /// A weighted draw among the plain words (no short words, no digits, ASCII).
    fn draw_plain(&self, r: &mut Rng) -> u32 {
        loop {
            let id = self.draw(r);
            let w = self.words[id as usize].as_bytes();
            if w.len() >= 3 && w.iter().all(u8::is_ascii_lowercase) {
                return id;
            }
        }
    }
}

/// `w` zero-padded to 16 bytes (every word and topic word is shorter).
fn pad16(w: &str) -> [u8; 16] {
    let mut p = [0u8; 16];
    assert!(w.len() <= 16, "word {w:?} is longer than 16 bytes");
    p[..w.len()].copy_from_slice(w.as_bytes());
    p
}

/// A byte buffer for the hot path: every word goes in as one fixed 16-byte copy (no `memcpy` call per
/// word), only its real length counts.
#[derive(Default)]
struct Bytes {
    buf: Vec<u8>,
    len: usize,
}

impl Bytes {
    fn clear(&mut self) {
        self.len = 0;
    }
    #[inline]
    fn room(&mut self, extra: usize) {
        if self.len + extra > self.buf.len() {
            let size = (self.len + extra).max(self.buf.len() * 2);
            self.buf.resize(size, 0);
        }
    }
    #[inline]
    fn put16(&mut self, w: &[u8; 16], n: usize) {
        self.room(16);
        self.buf[self.len..self.len + 16].copy_from_slice(w);
        self.len += n;
    }
    #[inline]
    fn put(&mut self, s: &[u8]) {
        self.room(s.len());
        self.buf[self.len..self.len + s.len()].copy_from_slice(s);
        self.len += s.len();
    }
    fn as_slice(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// Appends the topic word of `n`: the bijective base-80 syllable spelling of a scrambled `n`, eight
/// letters for the first 80^4 numbers, ten for the next 80^5, and so on.
fn push_topic(out: &mut String, n: u64, cap: bool) {
    let (mut rel, mut syl) = (u128::from(n), 4u32);
    while rel >= 80u128.pow(syl) {
        rel -= 80u128.pow(syl);
        syl += 1;
    }
    // A multiplier coprime to 80^syl (odd, not a multiple of 5) keeps this a bijection.
    let m = 80u128.pow(syl);
    let mut x = (rel * 2_654_435_761 + 12_345) % m;
    for i in 0..syl {
        let d = (x % 80) as usize;
        x /= 80;
        let c = CONS[d / 5];
        out.push(if cap && i == 0 {
            c.to_ascii_uppercase()
        } else {
            c
        } as char);
        out.push(VOWS[d % 5] as char);
    }
}

/// Appends fresh word `k` of slot `s`: the slot's topic word, an `x` and the bijective base-80 syllable
/// spelling of `k` (one syllable for k < 80, two for the next 80^2, ...). Topic words have no `x` and no
/// vocabulary word has this shape, so a fresh word occurs in one text of the corpus and only once.
fn push_fresh(out: &mut String, s: u64, k: u64, cap: bool) {
    push_topic(out, s, cap);
    out.push('x');
    let mut n = u128::from(k) + 1;
    while n > 0 {
        let d = ((n - 1) % 80) as usize;
        out.push(CONS[d / 5] as char);
        out.push(VOWS[d % 5] as char);
        n = (n - 1) / 80;
    }
}

/// The low four bits of the Java `HashMap` bucket of a token (`String.hashCode`, spread): two tokens
/// that differ here sit in different buckets at every table size (16 · 2^k buckets).
fn java_bucket16(token: &str) -> u32 {
    let h = token
        .encode_utf16()
        .fold(0u32, |h, u| h.wrapping_mul(31).wrapping_add(u32::from(u)));
    (h ^ (h >> 16)) & 15
}

#[derive(Clone, Copy)]
enum Case {
    Lower,
    Cap,
    Upper,
}

/// Appends a word, changing the case of ASCII letters only (so every token lower-cases as before).
fn push_word(out: &mut String, w: &str, case: Case) {
    match case {
        Case::Lower => out.push_str(w),
        Case::Cap => {
            let b = w.as_bytes()[0];
            if b.is_ascii_lowercase() {
                out.push(b.to_ascii_uppercase() as char);
                out.push_str(&w[1..]);
            } else {
                out.push_str(w);
            }
        }
        Case::Upper => out.extend(w.chars().map(|c| c.to_ascii_uppercase())),
    }
}

// ---------------------------------------------------------------------------------------------------
// Hosts.

#[derive(Clone, Copy, PartialEq)]
enum WwwPolicy {
    Bare,
    Www,
    Mixed,
}

struct Host {
    name: String,
    policy: WwwPolicy,
}

fn build_hosts(v: &Vocab) -> Vec<Host> {
    let mut r = Rng::new(&[0x5EED, 1]);
    let mut seen = HashSet::new();
    let mut hosts = Vec::new();
    let mut i = 0u64;
    while hosts.len() < 300 {
        i += 1;
        let w1 = &v.words[*r.pick(&v.plain) as usize];
        let w2 = &v.words[*r.pick(&v.plain) as usize];
        let name = match r.below(6) {
            0 | 1 => format!("site{i}.example.org"),
            2 => format!("{w1}.example.com"),
            3 => format!("news.{w1}.example.net"),
            4 => format!("{w1}-{w2}.example.org"),
            _ => format!("shop{i}.example.com"),
        };
        let policy = match r.below(10) {
            0..=4 => WwwPolicy::Bare,
            5..=7 => WwwPolicy::Www,
            _ => WwwPolicy::Mixed,
        };
        if seen.insert(name.clone()) {
            hosts.push(Host { name, policy });
        }
    }
    hosts
}

// ---------------------------------------------------------------------------------------------------
// The plan: what each slot is.

const BLOCK: u64 = 8;
const FIXTURE_BLOCKS: u64 = 2;
const N_EMPTY_KINDS: u8 = 5;
const EMPTY_TEXTS: [&str; N_EMPTY_KINDS as usize] =
    ["", "  \n\t ", "\u{a0}\u{2003}\n", " ", "\n\n"];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Unit {
    Exact,
    Fuzzy,
    Title,
    Desc,
    WwwPair,
    HttpPair,
    Four,
    /// Near-duplicates with a planned shingle overlap (see [`NearPlan`]).
    Near,
    /// The fixture pair `HTTP://WWW.Example.ORG/Path#frag` / `http://www.example.org/Path`.
    Special,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Odd {
    UpperCase,
    DefaultPort,
    Fragment,
    Idn,
    OtherPort,
    UnicodePath,
    Ftp,
    Unparseable,
    Missing,
}

const ODDS: [Odd; 9] = [
    Odd::UpperCase,
    Odd::DefaultPort,
    Odd::Fragment,
    Odd::Idn,
    Odd::OtherPort,
    Odd::UnicodePath,
    Odd::Ftp,
    Odd::Unparseable,
    Odd::Missing,
];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Role {
    Unique,
    Empty(u8),
    EmptyProfile,
    OddUrl(Odd),
    Member { unit: Unit, first: u64, idx: u64 },
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum TextSpec {
    Unique(u64),
    Fuzzy {
        key: u64,
        variant: u64,
    },
    Empty(u8),
    EmptyProfile(u64),
    /// Member `idx` of the near unit at slot `first`.
    Near {
        first: u64,
        idx: u64,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum UrlSpec {
    /// A regular URL: host, scheme and www form chosen from the key.
    Regular(u64),
    /// A same-page variant: host and path from the key, scheme and www form given.
    Variant {
        key: u64,
        https: bool,
        www: bool,
    },
    Odd(Odd, u64),
    SpecialA,
    SpecialB,
}

/// The overlap bands of near units, as fractions `num/den`: every pair of a unit's members has exactly
/// this Jaccard overlap of its shingle sets.
const NEAR_BANDS: [(u64, u64); 7] = [(1, 2), (3, 5), (7, 10), (4, 5), (9, 10), (19, 20), (1, 1)];
/// Near pages are sized for at most this many bytes whatever --page-kb says: the shared body's word
/// pairs must all differ, which a vocabulary of ~6,300 words allows for a few thousand words only.
const NEAR_MAX_BYTES: usize = 32 << 10;
/// A fresh word and its space, roughly (for sizing only).
const FRESH_BYTES: f64 = 13.0;

/// What a near unit of k members plants. Member i's text is, as tokens,
///
/// ```text
///   f_0 … f_{p-1}  w_1 … w_a  T_0 … T_0  w_{a+1} … T_1 … T_1 … T_{k-1} … T_{k-1} … w_words  f_p … f_{own-1}
///   └─── own ───┘  └──────────────────────────── shared body ────────────────────────────┘  └──── own ────┘
/// ```
///
/// - `w_1 … w_words`: the unit's vocabulary words, drawn so that no ordered pair of neighbours
///   repeats; anchor j (its topic word `T_j` in a row) sits after word ⌊(j+1)·words/(k+1)⌋.
/// - `T_j` is written twice in every member's text but member j's own, where it is written often
///   enough to dominate the profile (at least four times).
/// - `f_*`: fresh words of member i, `p` of them before the body (the member's own choice).
///
/// The body's shingles are all distinct, `words − 1` word pairs less the `k` the anchors split, plus
/// `(prev, T_j)`, `(T_j, T_j)` and `(T_j, next)` per anchor however long it is:
/// `shared = words + 2k − 1`. A fresh word occurs in no other text, so each adds one shingle no other
/// page has (before the body each starts one pair, after it each ends one): `own` per member. Any two
/// members: `J = shared / (shared + 2·own) = num/den`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct NearPlan {
    size: u64,
    num: u64,
    den: u64,
    /// Vocabulary words of the shared body.
    words: u64,
    /// Distinct shingles of the shared body: `words + 2·size − 1`.
    shared: u64,
    /// Fresh words, and so own shingles, of every member.
    own: u64,
}

#[derive(Clone, Copy, Debug)]
struct Meta {
    text: TextSpec,
    title: Option<u64>,
    desc: Option<u64>,
    url: UrlSpec,
}

struct Ctx {
    n: u64,
    seed: u64,
    page_bytes: f64,
    vocab: Vocab,
    hosts: Vec<Host>,
    /// Output line p holds slot (ord_a * p + ord_c) mod n.
    ord_a: u64,
    ord_c: u64,
    /// Slot s has id number (id_a * s + id_c) mod n.
    id_a: u64,
    id_c: u64,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// A multiplier coprime to `n` near `frac * n` (plus a little seed jitter): an affine map with it
/// spreads consecutive slots evenly over `0..n`, as a Weyl sequence does.
fn coprime(n: u64, frac: f64, h: u64) -> u64 {
    if n <= 2 {
        return 1;
    }
    let mut a = ((n as f64 * frac) as u64 + h % (n / 64 + 1)).clamp(2, n - 1);
    while gcd(a, n) != 1 {
        a = if a + 1 >= n { 2 } else { a + 1 };
    }
    a
}

fn mul_add_mod(a: u64, x: u64, c: u64, n: u64) -> u64 {
    ((u128::from(a) * u128::from(x) + u128::from(c)) % u128::from(n)) as u64
}

impl Ctx {
    fn new(n: u64, seed: u64, page_kb: f64) -> Ctx {
        let vocab = Vocab::build();
        let hosts = build_hosts(&vocab);
        let n1 = n.max(1);
        Ctx {
            n,
            seed,
            page_bytes: page_kb * 1024.0,
            ord_a: coprime(n1, 0.618_033_988_75, hash(&[seed, T_PERM, 1])),
            ord_c: hash(&[seed, T_PERM, 2]) % n1,
            id_a: coprime(n1, 0.414_213_562_37, hash(&[seed, T_PERM, 3])),
            id_c: hash(&[seed, T_PERM, 4]) % n1,
            vocab,
            hosts,
        }
    }

    fn slot_at(&self, p: u64) -> u64 {
        mul_add_mod(self.ord_a, p, self.ord_c, self.n)
    }

    fn id_num(&self, s: u64) -> u64 {
        mul_add_mod(self.id_a, s, self.id_c, self.n)
    }

    fn blocks(&self) -> u64 {
        self.n.div_ceil(BLOCK)
    }

    /// The planted unit at the start of block `b`, if any, with its size.
    fn block_unit(&self, b: u64) -> Option<(Unit, u64)> {
        let cap = BLOCK.min(self.n - b * BLOCK);
        if b == 0 {
            return (cap >= 2).then_some((Unit::Special, 2));
        }
        if b < FIXTURE_BLOCKS {
            return None;
        }
        let mut r = Rng::new(&[self.seed, T_BLOCK, b]);
        let (unit, size) = match r.below(1000) {
            0..40 => (Unit::Exact, 2 + r.below(4)),
            40..80 => (Unit::Fuzzy, 2 + r.below(3)),
            80..110 => (Unit::Title, 2 + r.below(3)),
            110..140 => (Unit::Desc, 2 + r.below(3)),
            140..170 => (Unit::WwwPair, 2),
            170..200 => (Unit::HttpPair, 2),
            200..220 => (Unit::Four, 4),
            220..260 => (Unit::Near, 2 + r.below(3)),
            _ => return None,
        };
        (size <= cap).then_some((unit, size))
    }

    fn role(&self, s: u64) -> Role {
        let b = s / BLOCK;
        if let Some((unit, size)) = self.block_unit(b) {
            let idx = s - b * BLOCK;
            if idx < size {
                return Role::Member {
                    unit,
                    first: b * BLOCK,
                    idx,
                };
            }
        }
        if b < FIXTURE_BLOCKS {
            return match s {
                2..=4 => Role::Empty((s - 2) as u8),
                5 => Role::EmptyProfile,
                6..=14 => Role::OddUrl(ODDS[(s - 6) as usize]),
                _ => Role::Unique,
            };
        }
        let h = hash(&[self.seed, T_SINGLE, s]);
        match h % 10_000 {
            0..50 => Role::Empty(((h >> 32) % u64::from(N_EMPTY_KINDS)) as u8),
            50..70 => Role::EmptyProfile,
            70..170 => Role::OddUrl(ODDS[((h >> 32) % ODDS.len() as u64) as usize]),
            _ => Role::Unique,
        }
    }

    fn has(&self, tag: u64, key: u64, per_mille: u64) -> bool {
        hash(&[self.seed, tag, key]) % 1000 < per_mille
    }

    fn title_if(&self, key: u64, per_mille: u64) -> Option<u64> {
        self.has(T_HAS_TITLE, key, per_mille).then_some(key)
    }

    fn desc_if(&self, key: u64, per_mille: u64) -> Option<u64> {
        self.has(T_HAS_DESC, key, per_mille).then_some(key)
    }

    fn meta(&self, s: u64) -> Meta {
        let own = |text| Meta {
            text,
            title: self.title_if(s, 970),
            desc: self.desc_if(s, 880),
            url: UrlSpec::Regular(s),
        };
        match self.role(s) {
            Role::Unique => own(TextSpec::Unique(s)),
            Role::Empty(k) => Meta {
                text: TextSpec::Empty(k),
                title: self.title_if(s, 500),
                desc: self.desc_if(s, 500),
                url: UrlSpec::Regular(s),
            },
            Role::EmptyProfile => Meta {
                text: TextSpec::EmptyProfile(s),
                title: self.title_if(s, 800),
                ..own(TextSpec::EmptyProfile(s))
            },
            Role::OddUrl(odd) => Meta {
                url: UrlSpec::Odd(odd, s),
                ..own(TextSpec::Unique(s))
            },
            Role::Member { unit, first, idx } => match unit {
                Unit::Exact => own(TextSpec::Unique(first)),
                Unit::Fuzzy => own(TextSpec::Fuzzy {
                    key: first,
                    variant: idx,
                }),
                Unit::Title => Meta {
                    title: Some(first),
                    ..own(TextSpec::Unique(s))
                },
                Unit::Desc => Meta {
                    desc: Some(first),
                    ..own(TextSpec::Unique(s))
                },
                Unit::Near => own(TextSpec::Near { first, idx }),
                Unit::WwwPair | Unit::HttpPair | Unit::Four | Unit::Special => {
                    let bit = |i: u32| hash(&[self.seed, T_VARIANT, first]) >> i & 1 == 1;
                    let url = match unit {
                        Unit::WwwPair => UrlSpec::Variant {
                            key: first,
                            https: bit(0),
                            www: idx == 0,
                        },
                        Unit::HttpPair => UrlSpec::Variant {
                            key: first,
                            https: idx == 1,
                            www: bit(1),
                        },
                        Unit::Four => UrlSpec::Variant {
                            key: first,
                            https: idx >= 2,
                            www: idx % 2 == 0,
                        },
                        _ if idx == 0 => UrlSpec::SpecialA,
                        _ => UrlSpec::SpecialB,
                    };
                    Meta {
                        text: TextSpec::Unique(first),
                        title: self.title_if(first, 900),
                        desc: self.desc_if(first, 850),
                        url,
                    }
                }
            },
        }
    }

    /// The plan of the near unit at slot `first`: its band, and a shared body and own parts sized so
    /// that `shared / (shared + 2·own)` is the band exactly (`shared` a multiple of the band's
    /// `2·num/gcd`) and the page is about --page-kb.
    fn near_plan(&self, first: u64) -> NearPlan {
        let Some((Unit::Near, size)) = self.block_unit(first / BLOCK) else {
            unreachable!("slot {first} starts no near unit");
        };
        let mut r = Rng::new(&[self.seed, T_NEAR, first]);
        let (num, den) = NEAR_BANDS[r.below(NEAR_BANDS.len() as u64) as usize];
        let bytes = self.target_bytes(&mut r).min(NEAR_MAX_BYTES) as f64 * 16.0 / 17.0;
        // own/shared = (1 − J)/(2J) = (den − num)/(2·num); per step, `s1` shared and `o1` own.
        let g = gcd(2 * num, den - num);
        let (s1, o1) = (2 * num / g, (den - num) / g);
        let step = s1 as f64 * self.vocab.avg_bytes + o1 as f64 * FRESH_BYTES;
        // At least eight body words: shared >= 8 + 2·size − 1.
        let m = ((bytes / step).round() as u64).max((2 * size + 7).div_ceil(s1));
        let shared = m * s1;
        NearPlan {
            size,
            num,
            den,
            words: shared + 1 - 2 * size,
            shared,
            own: m * o1,
        }
    }

    fn target_bytes(&self, r: &mut Rng) -> usize {
        let f = 0.6 + 0.8 * (r.below(1 << 20) as f64 / f64::from(1u32 << 20));
        (self.page_bytes * f) as usize
    }
}

// ---------------------------------------------------------------------------------------------------
// Generation of one document.

struct Gen<'a> {
    c: &'a Ctx,
    ids: Vec<u32>,
    counts: Vec<u32>,
    stamp: Vec<u32>,
    stamp_cur: u32,
    sent_ends: Vec<usize>,
    order: Vec<usize>,
    topic: String,
    prose: Bytes,
    text: String,
    title: String,
    desc: [String; 2],
    url: String,
    host: String,
}

impl<'a> Gen<'a> {
    fn new(c: &'a Ctx) -> Gen<'a> {
        let nw = c.vocab.words.len();
        Gen {
            c,
            ids: Vec::new(),
            counts: vec![0; nw],
            stamp: vec![0; nw],
            stamp_cur: 0,
            sent_ends: Vec::new(),
            order: Vec::new(),
            topic: String::new(),
            prose: Bytes::default(),
            text: String::new(),
            title: String::new(),
            desc: [String::new(), String::new()],
            url: String::new(),
            host: String::new(),
        }
    }

    fn write_doc(&mut self, s: u64, line: &mut Vec<u8>) {
        let m = self.c.meta(s);
        line.clear();
        line.extend_from_slice(b"{\"id\":\"doc-");
        let id = self.c.id_num(s);
        let _ = write!(line, "{id:09}\"");
        let has_url = self.url_for(m.url);
        if has_url {
            line.extend_from_slice(b",\"sku\":");
            json_str(line, &self.url);
            if !self.host.is_empty() {
                line.extend_from_slice(b",\"host_s\":");
                json_str(line, &self.host);
            }
        }
        if let Some(k) = m.title {
            self.gen_title(k);
            line.extend_from_slice(b",\"title\":[");
            json_str(line, &self.title);
            line.push(b']');
        }
        if let Some(k) = m.desc {
            let two = self.gen_desc(k);
            line.extend_from_slice(b",\"description_txt\":[");
            json_str(line, &self.desc[0]);
            if two {
                line.push(b',');
                json_str(line, &self.desc[1]);
            }
            line.push(b']');
        }
        line.extend_from_slice(b",\"text_t\":");
        match m.text {
            TextSpec::Unique(k) => {
                self.unique_text(k);
                json_bytes(line, self.prose.as_slice());
            }
            TextSpec::Fuzzy { key, variant } => {
                self.fuzzy_text(key, variant);
                json_str(line, &self.text);
            }
            TextSpec::Empty(k) => json_str(line, EMPTY_TEXTS[usize::from(k)]),
            TextSpec::EmptyProfile(k) => {
                self.empty_profile_text(k);
                json_str(line, &self.text);
            }
            TextSpec::Near { first, idx } => {
                self.near_text(first, idx);
                json_str(line, &self.text);
            }
        }
        line.extend_from_slice(b"}\n");
    }

    // --- texts -------------------------------------------------------------------------------------

    /// A unique page: weighted words, then the topic word planted often enough to be the profile's
    /// strongest token (see the module doc).
    fn unique_text(&mut self, key: u64) {
        let v = &self.c.vocab;
        let mut r = Rng::new(&[self.c.seed, T_TEXT, key]);
        // Punctuation, numbers and quotes add about 6% to the words and their spaces.
        let target = self.c.target_bytes(&mut r) * 16 / 17;
        let ids = &mut self.ids;
        ids.clear();
        let mut est = 0;
        while est < target || ids.len() < 8 {
            let id = v.draw(&mut r);
            ids.push(id);
            est += v.words[id as usize].len() + 1;
        }
        let (mut max3, mut max4) = (0, 0);
        for &id in ids.iter() {
            let c = &mut self.counts[id as usize];
            *c += 1;
            let u = v.units[id as usize];
            if u >= 3 {
                max3 = max3.max(*c);
            }
            if u >= 4 {
                max4 = max4.max(*c);
            }
        }
        for &id in ids.iter() {
            self.counts[id as usize] = 0;
        }
        let k = 3.max(max4 + 1).max(max3.div_ceil(2) + 1) as usize;
        if ids.len() < k {
            ids.clear();
            ids.resize(k, TOPIC);
        } else {
            let stride = ids.len() / k;
            for i in 0..k {
                ids[i * stride + r.below(stride as u64) as usize] = TOPIC;
            }
        }
        self.topic.clear();
        push_topic(&mut self.topic, key, true);
        render_prose(
            v,
            &self.ids,
            &pad16(&self.topic),
            self.topic.len(),
            &mut r,
            &mut self.prose,
        );
    }

    /// Fills `ids` and `sent_ends` with the order-independent word multiset of fuzzy group `key`.
    fn fuzzy_base(&mut self, key: u64) {
        const KEY_COUNTS: [usize; 7] = [16, 12, 10, 8, 6, 4, 2];
        let v = &self.c.vocab;
        let mut r = Rng::new(&[self.c.seed, T_FUZZ, key]);
        let target = self.c.target_bytes(&mut r);
        self.stamp_cur += 1;
        let cur = self.stamp_cur;
        let stamp = &mut self.stamp;
        let mut fresh = |r: &mut Rng, from: &[u32]| loop {
            let id = *r.pick(from);
            if stamp[id as usize] != cur {
                stamp[id as usize] = cur;
                return id;
            }
        };
        let ids = &mut self.ids;
        ids.clear();
        let mut est = 0;
        self.topic.clear();
        push_topic(&mut self.topic, key, false);
        // Key words in pairwise different HashMap buckets: where quantisation makes their counts tie
        // (md5 sorts by the quantised count), the bucket decides, never the order of the words.
        let mut buckets = 1u32 << java_bucket16(&self.topic);
        for (i, &n) in KEY_COUNTS.iter().enumerate() {
            let (id, len) = if i == 0 {
                (TOPIC, self.topic.len())
            } else {
                let id = loop {
                    let id = fresh(&mut r, &v.pool4);
                    let b = 1 << java_bucket16(&v.words[id as usize]);
                    if buckets & b == 0 {
                        buckets |= b;
                        break id;
                    }
                };
                (id, v.words[id as usize].len())
            };
            ids.extend(std::iter::repeat_n(id, n));
            est += (len + 1) * n;
        }
        // Rejection sampling stays cheap while at most 60% of the pool is taken.
        let limit = v.pool.len() * 6 / 10;
        let mut taken = KEY_COUNTS.len();
        while est < target && taken < limit {
            let id = if r.below(100) < 35 {
                *r.pick(&v.short)
            } else {
                taken += 1;
                fresh(&mut r, &v.pool)
            };
            ids.push(id);
            est += v.words[id as usize].len() + 1;
        }
        for i in (1..ids.len()).rev() {
            ids.swap(i, r.below(i as u64 + 1) as usize);
        }
        self.sent_ends.clear();
        let mut i = 0;
        while i < ids.len() {
            i = (i + 5 + r.below(12) as usize).min(ids.len());
            self.sent_ends.push(i);
        }
    }

    /// Member `variant` of fuzzy group `key`: the same words in other sentence order, separators,
    /// line breaks and ASCII case. The first sentence ends with a character that differs per variant.
    fn fuzzy_text(&mut self, key: u64, variant: u64) {
        const FIRST_END: [char; 4] = ['.', '!', '?', ';'];
        const ENDS: [&str; 7] = [".", ".", ".", "!", "?", ";", "…"];
        self.fuzzy_base(key);
        let v = &self.c.vocab;
        let mut r = Rng::new(&[self.c.seed, T_FUZZVAR, key, variant]);
        let ns = self.sent_ends.len();
        self.order.clear();
        self.order.extend(0..ns);
        if variant > 0 {
            for i in (1..ns).rev() {
                self.order.swap(i, r.below(i as u64 + 1) as usize);
            }
        }
        let out = &mut self.text;
        out.clear();
        for (j, &si) in self.order.iter().enumerate() {
            let start = if si == 0 { 0 } else { self.sent_ends[si - 1] };
            for (wi, &id) in self.ids[start..self.sent_ends[si]].iter().enumerate() {
                if wi > 0 {
                    out.push_str(match r.below(100) {
                        0..85 => " ",
                        85..91 => ", ",
                        91..94 => "  ",
                        94..96 => " - ",
                        96 => " / ",
                        97 => " – ",
                        98 => ",\t",
                        _ => " · ",
                    });
                }
                let case = match r.below(100) {
                    _ if wi == 0 => Case::Cap,
                    0..4 => Case::Cap,
                    4..6 => Case::Upper,
                    _ => Case::Lower,
                };
                if id == TOPIC {
                    push_word(out, &self.topic, case);
                } else {
                    push_word(out, &v.words[id as usize], case);
                }
            }
            if j == 0 {
                out.push(FIRST_END[variant as usize % FIRST_END.len()]);
            } else {
                let end: &&str = r.pick(&ENDS);
                out.push_str(end);
            }
            if j + 1 < ns {
                out.push_str(match r.below(100) {
                    0..12 => "\n\n",
                    12..18 => "\n",
                    _ => " ",
                });
            }
        }
    }

    /// Member `idx` of the near unit at slot `first`, as [`NearPlan`] lays it out. The shared body's
    /// words come from the unit's key, so they are the same in every member; sentence breaks,
    /// separators and where the own fresh words go (before or after the body) are the member's.
    fn near_text(&mut self, first: u64, idx: u64) {
        #[derive(Clone, Copy)]
        enum Tok {
            Word(u32),
            Topic(u64),
            Fresh(u64),
            /// Ends the sentence before the next word.
            Break,
        }
        let c = self.c;
        let v = &c.vocab;
        let plan = c.near_plan(first);
        let mut r = Rng::new(&[c.seed, T_NEARTEXT, first]);
        let ids = &mut self.ids;
        ids.clear();
        let mut pairs = HashSet::with_capacity(plan.words as usize);
        for i in 0..plan.words {
            // Weighted draws, then uniform ones: the page is small enough (NEAR_MAX_BYTES) that a
            // word never runs out of unused followers.
            let mut tries = 0;
            let id = loop {
                let id = if tries < 64 {
                    v.draw(&mut r)
                } else {
                    r.below(v.words.len() as u64) as u32
                };
                tries += 1;
                if i == 0 || pairs.insert(u64::from(ids[ids.len() - 1]) << 32 | u64::from(id)) {
                    break id;
                }
            };
            ids.push(id);
        }
        // The own topic word must dominate the profile, as on a unique page (module doc); the other
        // members' topic words (twice each) and fresh words (once each) count too.
        let (mut max3, mut max4) = (2, 2);
        for &id in ids.iter() {
            let n = &mut self.counts[id as usize];
            *n += 1;
            let u = v.units[id as usize];
            if u >= 3 {
                max3 = max3.max(*n);
            }
            if u >= 4 {
                max4 = max4.max(*n);
            }
        }
        for &id in ids.iter() {
            self.counts[id as usize] = 0;
        }
        let boost = 4.max(max4 + 1).max(max3.div_ceil(2) + 1);

        let mut r = Rng::new(&[c.seed, T_NEARVAR, first, idx]);
        let head = r.below(plan.own + 1);
        let mut toks = Vec::with_capacity((plan.words + plan.own + 8 * plan.size) as usize);
        toks.extend((0..head).map(Tok::Fresh));
        toks.push(Tok::Break);
        let mut anchor = 0;
        for (i, &id) in ids.iter().enumerate() {
            if anchor < plan.size && i as u64 == (anchor + 1) * plan.words / (plan.size + 1) {
                let n = if anchor == idx { boost } else { 2 };
                toks.push(Tok::Break);
                toks.extend(std::iter::repeat_n(Tok::Topic(first + anchor), n as usize));
                toks.push(Tok::Break);
                anchor += 1;
            }
            toks.push(Tok::Word(id));
        }
        debug_assert_eq!(anchor, plan.size);
        toks.push(Tok::Break);
        toks.extend((head..plan.own).map(Tok::Fresh));

        let out = &mut self.text;
        out.clear();
        let (mut left, mut started) = (0, false);
        for t in toks {
            if let Tok::Break = t {
                left = 0;
                continue;
            }
            let cap = left == 0;
            if cap {
                if started {
                    let end: &&str = r.pick(&[". ", ". ", ". ", "! ", "? ", ".\n\n", ".\n"]);
                    out.push_str(end);
                }
                left = 5 + r.below(14);
            } else {
                out.push_str(match r.below(100) {
                    0..80 => " ",
                    80..90 => ", ",
                    90..94 => " – ",
                    94..97 => "; ",
                    _ => ": ",
                });
            }
            left -= 1;
            started = true;
            match t {
                Tok::Word(id) => {
                    let case = if cap { Case::Cap } else { Case::Lower };
                    push_word(out, &v.words[id as usize], case);
                }
                Tok::Topic(s) => push_topic(out, s, cap),
                Tok::Fresh(k) => push_fresh(out, first + idx, k, cap),
                Tok::Break => unreachable!(),
            }
        }
        if started {
            out.push('.');
        }
    }

    /// Only words of one or two characters, and the slot number as two-digit groups after the only `#`,
    /// so the text is unique while its profile is empty.
    fn empty_profile_text(&mut self, key: u64) {
        let v = &self.c.vocab;
        let mut r = Rng::new(&[self.c.seed, T_EMPTYPROF, key]);
        let out = &mut self.text;
        out.clear();
        let n = 6 + r.below(30);
        let mut case = Case::Cap;
        for i in 0..n {
            if i > 0 {
                let stop = r.below(6) == 0;
                out.push_str(if stop { ". " } else { " " });
                case = if stop { Case::Cap } else { Case::Lower };
            }
            push_word(out, &v.words[*r.pick(&v.short) as usize], case);
        }
        out.push_str(". #");
        let digits = key.to_string();
        for (i, ch) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(2) {
                out.push('-');
            }
            out.push(ch);
        }
        out.push('.');
    }

    // --- title and description ---------------------------------------------------------------------

    fn gen_title(&mut self, key: u64) {
        let v = &self.c.vocab;
        let mut r = Rng::new(&[self.c.seed, T_TITLE, key]);
        let t = &mut self.title;
        t.clear();
        let word = |t: &mut String, r: &mut Rng, case| {
            push_word(t, &v.words[v.draw_plain(r) as usize], case);
        };
        match r.below(5) {
            0 => {
                push_topic(t, key, true);
                t.push_str(": ");
                word(t, &mut r, Case::Cap);
                t.push(' ');
                word(t, &mut r, Case::Lower);
                t.push(' ');
                word(t, &mut r, Case::Lower);
            }
            1 => {
                word(t, &mut r, Case::Cap);
                t.push(' ');
                word(t, &mut r, Case::Lower);
                t.push(' ');
                push_topic(t, key, true);
                t.push_str(" | ");
                word(t, &mut r, Case::Cap);
                let kind: &&str = r.pick(&[" News", " Blog", " Wiki", " Magazine"]);
                t.push_str(kind);
            }
            2 => {
                push_topic(t, key, true);
                t.push_str(&format!(" {} – ", 2010 + r.below(16)));
                word(t, &mut r, Case::Cap);
                t.push(' ');
                word(t, &mut r, Case::Lower);
            }
            3 => {
                t.push_str("The \"");
                push_topic(t, key, true);
                t.push_str("\" ");
                word(t, &mut r, Case::Lower);
                t.push(' ');
                word(t, &mut r, Case::Lower);
            }
            _ => {
                word(t, &mut r, Case::Cap);
                t.push(' ');
                word(t, &mut r, Case::Lower);
                t.push_str(" in ");
                t.push_str(&v.words[*r.pick(&v.non_ascii) as usize]);
                t.push_str(": ");
                push_topic(t, key, true);
            }
        }
    }

    /// Returns whether there is a second value. The first value holds the topic word and ends with a
    /// period, so even the concatenation (`md5` scheme) of two arrays can only be equal for one key.
    fn gen_desc(&mut self, key: u64) -> bool {
        let v = &self.c.vocab;
        let mut r = Rng::new(&[self.c.seed, T_DESC, key]);
        let [d0, d1] = &mut self.desc;
        let n = 6 + r.below(14);
        let at = r.below(n);
        d0.clear();
        for i in 0..n {
            if i > 0 {
                d0.push(' ');
            }
            if i == at {
                push_topic(d0, key, true);
            } else {
                let id = if r.below(3) == 0 {
                    *r.pick(&v.short)
                } else {
                    v.draw_plain(&mut r)
                };
                push_word(
                    d0,
                    &v.words[id as usize],
                    if i == 0 { Case::Cap } else { Case::Lower },
                );
            }
        }
        d0.push('.');
        if r.below(10) < 4 {
            d1.clear();
            let n = 4 + r.below(8);
            for i in 0..n {
                if i > 0 {
                    d1.push(' ');
                }
                let case = if i == 0 { Case::Cap } else { Case::Lower };
                push_word(d1, &v.words[v.draw_plain(&mut r) as usize], case);
            }
            d1.push('.');
            true
        } else {
            false
        }
    }

    // --- URLs --------------------------------------------------------------------------------------

    /// Host of a regular or variant URL of `key`, and its default scheme and www form.
    fn pick_host(&self, key: u64) -> (&'a Host, bool, bool) {
        let mut r = Rng::new(&[self.c.seed, T_HOST, key]);
        let u = r.below(1 << 20) as f64 / f64::from(1u32 << 20);
        let host = &self.c.hosts[(u * u * self.c.hosts.len() as f64) as usize];
        let https = r.below(10) < 6;
        let www = match host.policy {
            WwwPolicy::Bare => false,
            WwwPolicy::Www => true,
            WwwPolicy::Mixed => r.below(2) == 0,
        };
        (host, https, www)
    }

    /// A path (and maybe a query) that holds `key` as its only decimal number after a hyphen, underscore
    /// or `id=`, so different keys never give the same path.
    fn path(&self, key: u64) -> String {
        let v = &self.c.vocab;
        let mut r = Rng::new(&[self.c.seed, T_PATH, key]);
        let mut slug = String::new();
        for i in 0..2 + r.below(3) {
            if i > 0 {
                slug.push('-');
            }
            slug.push_str(&v.words[v.draw_plain(&mut r) as usize]);
        }
        let year = 2012 + r.below(14);
        match r.below(7) {
            0 => format!("/articles/{year}/{slug}-{key}.html"),
            1 => format!("/blog/{year}/{:02}/{slug}-{key}/", 1 + r.below(12)),
            2 => format!("/products/{slug}-{key}?ref=home"),
            3 => format!("/index.php?page={slug}-{key}&lang=en"),
            4 => format!("/news/{slug}-{key}"),
            5 => {
                let mut s = String::new();
                push_word(&mut s, &slug.replace('-', "_"), Case::Cap);
                format!("/wiki/{s}_{key}")
            }
            _ => format!("/p?id={key}&utm_source=feed"),
        }
    }

    /// Fills `url` and `host` (empty when there is no parseable host); false when there is no sku.
    fn url_for(&mut self, spec: UrlSpec) -> bool {
        self.url.clear();
        self.host.clear();
        let scheme = |https: bool| if https { "https" } else { "http" };
        match spec {
            UrlSpec::Regular(key) => {
                let (h, https, www) = self.pick_host(key);
                self.regular(key, h, https, www);
            }
            UrlSpec::Variant { key, https, www } => {
                let (h, _, _) = self.pick_host(key);
                self.regular(key, h, https, www);
            }
            UrlSpec::SpecialA => {
                self.url.push_str("HTTP://WWW.Example.ORG/Path#frag");
                self.host.push_str("www.example.org");
            }
            UrlSpec::SpecialB => {
                self.url.push_str("http://www.example.org/Path");
                self.host.push_str("www.example.org");
            }
            UrlSpec::Odd(odd, key) => {
                let mut r = Rng::new(&[self.c.seed, T_ODD, key]);
                let (h, https, www) = self.pick_host(key);
                let host = if www {
                    format!("www.{}", h.name)
                } else {
                    h.name.clone()
                };
                let path = self.path(key);
                let url = match odd {
                    Odd::UpperCase => {
                        let sch = *r.pick(&["HTTP", "HTTPS", "Http", "hTTps"]);
                        let shown: String = if r.below(2) == 0 {
                            host.to_ascii_uppercase()
                        } else {
                            // Capitalise every label, upper-case the last one: Www.Site12.Example.ORG
                            let labels: Vec<&str> = host.split('.').collect();
                            let last = labels.len() - 1;
                            labels
                                .iter()
                                .enumerate()
                                .map(|(i, l)| {
                                    let mut s = String::new();
                                    let case = if i == last { Case::Upper } else { Case::Cap };
                                    push_word(&mut s, l, case);
                                    s
                                })
                                .collect::<Vec<_>>()
                                .join(".")
                        };
                        self.host.push_str(&host);
                        format!("{sch}://{shown}{path}")
                    }
                    Odd::DefaultPort => {
                        self.host.push_str(&host);
                        let port = if https { 443 } else { 80 };
                        format!("{}://{host}:{port}{path}", scheme(https))
                    }
                    Odd::Fragment => {
                        self.host.push_str(&host);
                        let frag = *r.pick(&["#section-2", "#top", "#comments", "#"]);
                        format!("{}://{host}{path}{frag}", scheme(https))
                    }
                    Odd::Idn => {
                        let idn = *r.pick(IDN_HOSTS);
                        self.host.push_str(idn);
                        format!("{}://{idn}{path}", scheme(https))
                    }
                    Odd::OtherPort => {
                        self.host.push_str(&host);
                        let port = if https { 8443 } else { 8080 };
                        format!("{}://{host}:{port}{path}", scheme(https))
                    }
                    Odd::UnicodePath => {
                        self.host.push_str(&host);
                        let v = &self.c.vocab;
                        let w = &v.words[*r.pick(&v.non_ascii) as usize];
                        format!("{}://{host}/wiki/{w}_{key}", scheme(https))
                    }
                    Odd::Ftp => {
                        self.host.push_str("files.example.org");
                        let v = &self.c.vocab;
                        let file = &v.words[v.draw_plain(&mut r) as usize];
                        format!("ftp://files.example.org/pub/{key}/{file}.txt")
                    }
                    Odd::Unparseable => match r.below(6) {
                        0 | 1 => "not a url".to_string(),
                        2 => format!("not a url {key}"),
                        3 => "http://".to_string(),
                        4 => format!("http://exa mple.org/{key}"),
                        _ => format!("http://[::1/{key}"),
                    },
                    Odd::Missing => return false,
                };
                self.url.push_str(&url);
            }
        }
        true
    }

    fn regular(&mut self, key: u64, h: &Host, https: bool, www: bool) {
        let path = self.path(key);
        if www {
            self.host.push_str("www.");
        }
        self.host.push_str(&h.name);
        self.url
            .push_str(if https { "https://" } else { "http://" });
        self.url.push_str(&self.host);
        self.url.push_str(&path);
    }
}

/// English-like prose: capitalised sentences of 5-18 words, commas, dashes, a few quotes and small
/// numbers (never a counted token), paragraphs separated by blank lines or single newlines.
fn render_prose(
    v: &Vocab,
    ids: &[u32],
    topic: &[u8; 16],
    topic_len: usize,
    r: &mut Rng,
    out: &mut Bytes,
) {
    const ENDS: &[u8; 8] = b".....?!.";
    out.clear();
    let mut left = 0;
    let mut para = 2 + r.below(6);
    for (i, &id) in ids.iter().enumerate() {
        let x = r.next();
        let mut cap = false;
        if left == 0 {
            if i > 0 {
                out.put(&[ENDS[(x & 7) as usize]]);
                para -= 1;
                if para == 0 {
                    out.put(if x >> 3 & 3 == 0 { b"\n" } else { b"\n\n" });
                    para = 2 + r.below(6);
                } else {
                    out.put(b" ");
                }
            }
            left = 5 + r.below(14);
            cap = true;
        } else {
            match x >> 8 & 127 {
                0..9 => out.put(b", "),
                9 => out.put(" – ".as_bytes()),
                10 => out.put(b"; "),
                11 | 12 => {
                    let n = 1 + (x >> 20) % 99;
                    out.put(b" ");
                    if n >= 10 {
                        out.put(&[b'0' + (n / 10) as u8]);
                    }
                    out.put(&[b'0' + (n % 10) as u8, b' ']);
                }
                _ => out.put(b" "),
            }
        }
        left -= 1;
        let quote = x >> 16 & 255 == 0;
        if quote {
            out.put(b"\"");
        }
        if id == TOPIC {
            out.put16(topic, topic_len);
        } else {
            let table = if cap { &v.padded_cap } else { &v.padded };
            out.put16(&table[id as usize], v.words[id as usize].len());
        }
        if quote {
            out.put(b"\"");
        }
    }
    if !ids.is_empty() {
        out.put(b".");
    }
}

/// Appends `s` as a JSON string.
fn json_str(buf: &mut Vec<u8>, s: &str) {
    json_bytes(buf, s.as_bytes());
}

/// True when one of the 8 bytes is `"`, `\\` or a control character (exact, no false positives:
/// the classic "has a byte less than n" bit trick).
#[inline]
fn needs_escape(w: u64) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let below = |x: u64, n: u64| x.wrapping_sub(LO * n) & !x & HI;
    (below(w, 0x20) | below(w ^ (LO * 0x22), 1) | below(w ^ (LO * 0x5c), 1)) != 0
}

/// Appends UTF-8 `bytes` as a JSON string: `"`, `\\` and control characters escaped, everything else
/// verbatim. Clean runs are found 8 bytes at a time.
fn json_bytes(buf: &mut Vec<u8>, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    buf.reserve(bytes.len() + 2);
    buf.push(b'"');
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if i + 8 <= bytes.len() {
            let w = u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
            if !needs_escape(w) {
                i += 8;
                continue;
            }
        }
        let end = (i + 8).min(bytes.len());
        for (j, &b) in bytes.iter().enumerate().take(end).skip(i) {
            let u = [
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 15)],
            ];
            let esc: &[u8] = match b {
                b'"' => b"\\\"",
                b'\\' => b"\\\\",
                b'\n' => b"\\n",
                b'\t' => b"\\t",
                b'\r' => b"\\r",
                0..0x20 => &u,
                _ => continue,
            };
            buf.extend_from_slice(&bytes[start..j]);
            buf.extend_from_slice(esc);
            start = j + 1;
        }
        i = end;
    }
    buf.extend_from_slice(&bytes[start..]);
    buf.push(b'"');
}

// ---------------------------------------------------------------------------------------------------
// Ground truth, derived from the plan (no text is generated).

#[derive(Clone, Copy, PartialEq)]
enum Dim {
    Exact,
    Fuzzy,
    Title,
    Desc,
    Www,
    Http,
}

const DIMS: [(Dim, &str); 6] = [
    (Dim::Exact, "exact"),
    (Dim::Fuzzy, "fuzzy"),
    (Dim::Title, "title"),
    (Dim::Desc, "description"),
    (Dim::Www, "www"),
    (Dim::Http, "http"),
];

/// The groups (as member indexes) that unit `u` of `size` members starting at slot `first` forms in `dim`.
fn unit_groups(c: &Ctx, dim: Dim, u: Unit, first: u64, size: u64) -> Vec<Vec<u64>> {
    let all = || vec![(0..size).collect::<Vec<_>>()];
    let same_page = matches!(
        u,
        Unit::WwwPair | Unit::HttpPair | Unit::Four | Unit::Special
    );
    match dim {
        Dim::Exact if u == Unit::Exact || same_page => all(),
        Dim::Fuzzy if u == Unit::Exact || u == Unit::Fuzzy || same_page => all(),
        Dim::Title if u == Unit::Title => all(),
        Dim::Desc if u == Unit::Desc => all(),
        Dim::Title if same_page && c.meta(first).title.is_some() => all(),
        Dim::Desc if same_page && c.meta(first).desc.is_some() => all(),
        Dim::Www if u == Unit::WwwPair || u == Unit::Special => all(),
        Dim::Http if u == Unit::HttpPair || u == Unit::Special => all(),
        Dim::Www if u == Unit::Four => vec![vec![0, 1], vec![2, 3]],
        Dim::Http if u == Unit::Four => vec![vec![0, 2], vec![1, 3]],
        _ => Vec::new(),
    }
}

/// `"near":[{"ids":[...],"shared":S,"own":O,"jaccard":[[id_a,id_b,J],...]},...]`, one entry per near
/// unit, from its plan alone.
fn write_near_truth(
    c: &Ctx,
    w: &mut impl Write,
    counts: &mut Vec<(String, u64)>,
) -> io::Result<()> {
    w.write_all(b",\"near\":[")?;
    let (mut groups, mut docs, mut pairs) = (0u64, 0u64, 0u64);
    let mut ids = Vec::new();
    for b in 0..c.blocks() {
        let Some((Unit::Near, size)) = c.block_unit(b) else {
            continue;
        };
        let first = b * BLOCK;
        let plan = c.near_plan(first);
        let jaccard = plan.shared as f64 / (plan.shared + 2 * plan.own) as f64;
        debug_assert_eq!(jaccard, plan.num as f64 / plan.den as f64);
        ids.clear();
        ids.extend((0..size).map(|i| c.id_num(first + i)));
        ids.sort_unstable();
        w.write_all(if groups > 0 { b",{" } else { b"{" })?;
        w.write_all(b"\"ids\":[")?;
        for (k, id) in ids.iter().enumerate() {
            write!(w, "{}\"doc-{id:09}\"", if k > 0 { "," } else { "" })?;
        }
        write!(
            w,
            "],\"shared\":{},\"own\":{},\"jaccard\":[",
            plan.shared, plan.own
        )?;
        let mut k = 0;
        for (i, a) in ids.iter().enumerate() {
            for b in &ids[i + 1..] {
                write!(
                    w,
                    "{}[\"doc-{a:09}\",\"doc-{b:09}\",{jaccard:?}]",
                    if k > 0 { "," } else { "" }
                )?;
                k += 1;
            }
        }
        w.write_all(b"]}")?;
        groups += 1;
        docs += size;
        pairs += k;
    }
    w.write_all(b"]")?;
    counts.push(("near_groups".into(), groups));
    counts.push(("near_docs".into(), docs));
    counts.push(("near_pairs".into(), pairs));
    Ok(())
}

fn write_truth(c: &Ctx, w: &mut impl Write) -> io::Result<()> {
    write!(
        w,
        "{{\"docs\":{},\"seed\":{},\"page_kb\":{},\"groups\":{{",
        c.n,
        c.seed,
        c.page_bytes / 1024.0
    )?;
    let mut counts = Vec::new();
    let mut ids = Vec::new();
    for (di, &(dim, name)) in DIMS.iter().enumerate() {
        if di > 0 {
            w.write_all(b",")?;
        }
        write!(w, "\"{name}\":[")?;
        let (mut groups, mut docs) = (0u64, 0u64);
        for b in 0..c.blocks() {
            let Some((u, size)) = c.block_unit(b) else {
                continue;
            };
            let first = b * BLOCK;
            for g in unit_groups(c, dim, u, first, size) {
                ids.clear();
                ids.extend(g.iter().map(|&i| c.id_num(first + i)));
                ids.sort_unstable();
                w.write_all(if groups > 0 { b",[" } else { b"[" })?;
                for (k, id) in ids.iter().enumerate() {
                    write!(w, "{}\"doc-{id:09}\"", if k > 0 { "," } else { "" })?;
                }
                w.write_all(b"]")?;
                groups += 1;
                docs += ids.len() as u64;
            }
        }
        w.write_all(b"]")?;
        counts.push((format!("{name}_groups"), groups));
        counts.push((format!("{name}_docs"), docs));
    }
    w.write_all(b"}")?;
    write_near_truth(c, w, &mut counts)?;
    type Pred = fn(&Meta) -> bool;
    let lists: [(&str, Pred); 6] = [
        ("empty_text", |m| matches!(m.text, TextSpec::Empty(_))),
        ("empty_profile", |m| {
            matches!(m.text, TextSpec::Empty(_) | TextSpec::EmptyProfile(_))
        }),
        ("no_title", |m| m.title.is_none()),
        ("no_description", |m| m.desc.is_none()),
        ("no_url", |m| {
            matches!(m.url, UrlSpec::Odd(Odd::Unparseable | Odd::Missing, _))
        }),
        ("non_http", |m| matches!(m.url, UrlSpec::Odd(Odd::Ftp, _))),
    ];
    for (name, pred) in lists {
        write!(w, ",\"{name}\":[")?;
        let mut k = 0u64;
        for s in 0..c.n {
            if pred(&c.meta(s)) {
                write!(
                    w,
                    "{}\"doc-{:09}\"",
                    if k > 0 { "," } else { "" },
                    c.id_num(s)
                )?;
                k += 1;
            }
        }
        w.write_all(b"]")?;
        counts.push((name.to_string(), k));
    }
    w.write_all(b",\"counts\":{")?;
    for (i, (k, n)) in counts.iter().enumerate() {
        write!(w, "{}\"{k}\":{n}", if i > 0 { "," } else { "" })?;
    }
    w.write_all(b"}}\n")
}
