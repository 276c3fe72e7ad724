#!/usr/bin/env python3
"""Chrome-removal evaluation corpus (issue 29): sites with a header and footer template, bodies from
families that share phrasing, variants of each body on the site, on its `www.` alias and on hosts
without chrome, and small pages whose body is shorter than the chrome.

    python3 gen.py --seed 1 --out DIR

writes DIR/corpus.jsonl (Solr documents: id, sku, text_t), DIR/bodies.jsonl (each templated
page's body alone, on a host of its own, for score.py --exact) and DIR/truth.jsonl (one line per page:
id, host, site, body_id, kind, and the body's text as generated, before any chrome was put around
it). score.py computes each pair's overlap from these texts itself, so the truth never comes from
solr-dedup."""
import argparse
import json
import os
import random

SYL = ["ba", "ce", "di", "fo", "gu", "ha", "je", "ki", "lo", "mu", "na", "pe", "ri", "so", "tu",
       "va", "we", "xi", "yo", "zu", "br", "st", "an", "el", "or", "ik", "um", "ep"]


def vocab(rng, n):
    words = set()
    while len(words) < n:
        words.add("".join(rng.choice(SYL) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def words(rng, vocab, n):
    return [rng.choice(vocab) for _ in range(n)]


def lines_of(tokens, rng, lo=6, hi=16):
    out, i = [], 0
    while i < len(tokens):
        k = rng.randint(lo, hi)
        out.append(" ".join(tokens[i:i + k]))
        i += k
    return out


def template(rng, vocab, name):
    """A header and a footer as whole lines, 100 to 300 tokens in all."""
    total = rng.randint(100, 300)
    head = rng.randint(total // 3, 2 * total // 3)
    header = [f"{name} home news about contact"] + lines_of(words(rng, vocab, head), rng, 5, 14)
    footer = lines_of(words(rng, vocab, total - head), rng, 5, 14) + [f"copyright {name} all rights reserved"]
    return header, footer


def family(rng, vocab, phrases=40):
    """Phrases that the bodies of one family share (licence clauses, man-page sections)."""
    return [words(rng, vocab, rng.randint(3, 9)) for _ in range(phrases)]


def body(rng, vocab, fam, n):
    toks = []
    while len(toks) < n:
        if fam and rng.random() < 0.45:
            toks += rng.choice(fam)
        else:
            toks += words(rng, vocab, rng.randint(3, 10))
    return toks[:n]


def mutate(rng, vocab, toks, rate):
    """Replace about `rate` of the tokens, in short runs, so that the shingle overlap spreads."""
    out = list(toks)
    i = 0
    while i < len(out):
        if rng.random() < rate / 3:
            for j in range(i, min(len(out), i + 3)):
                out[j] = rng.choice(vocab)
            i += 3
        else:
            i += 1
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sites", type=int, default=4)
    ap.add_argument("--bases", type=int, default=60, help="bodies per site")
    ap.add_argument("--small", type=int, default=40, help="small pages per site")
    ap.add_argument("--page-lines", action="store_true",
                    help="templates with a page's own lines inside: its title below the header's first "
                         "line, an edit date above the footer's last line")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    voc = vocab(rng, 6000)
    os.makedirs(a.out, exist_ok=True)
    docs, truth = [], []
    mirrors = [f"mirror{k}.example.net" for k in range(3)]

    def add(host, path, body_lines, site, body_id, kind, chrome=None):
        """A page: its body's lines, wrapped in `chrome` (header, footer) when given."""
        did = f"d{len(docs):06d}"
        if chrome and a.page_lines:
            head, foot = chrome
            title = " ".join(words(rng, voc, rng.randint(2, 8)))
            date = f"last edited on {rng.randint(1, 28)} {rng.choice(voc)} {rng.randint(1990, 2030)}"
            chrome = (head[:1] + [title] + head[1:], foot[:-1] + [date] + foot[-1:])
        lines_ = chrome[0] + body_lines + chrome[1] if chrome else body_lines
        docs.append({"id": did, "sku": f"https://{host}/{path}", "text_t": "\n".join(lines_)})
        truth.append({"id": did, "host": host, "site": site, "body_id": body_id, "kind": kind,
                      "body": "\n".join(body_lines)})

    shared_family = family(rng, voc)
    for s in range(a.sites):
        name = f"site{s}"
        host = f"{name}.example.org"
        header, footer = template(rng, voc, name)
        fams = [family(rng, voc) for _ in range(3)] + [shared_family]
        for b in range(a.bases):
            fam = fams[b % len(fams)] if b % 5 else None
            base = body(rng, voc, fam, rng.randint(60, 400))
            bid = f"{name}-b{b}"
            tpl = (header, footer)
            # the base on the site, and variants: on the site, on www., on mirrors without chrome
            add(host, f"p/{b}", lines_of(base, rng), name, bid, "site", tpl)
            for v in range(rng.randint(1, 3)):
                rate = rng.choice([0.0, 0.02, 0.05, 0.1, 0.2, 0.35])
                where = rng.random()
                toks = mutate(rng, voc, base, rate)
                if where < 0.3:
                    add(host, f"p/{b}/v{v}", lines_of(toks, rng), name, bid, "site", tpl)
                elif where < 0.55:
                    add("www." + host, f"p/{b}/v{v}", lines_of(toks, rng), name, bid, "www", tpl)
                else:
                    add(rng.choice(mirrors), f"{name}/{b}/v{v}", lines_of(toks, rng), name, bid, "bare")
            if b % 4 == 0:
                add(rng.choice(mirrors), f"{name}/{b}", lines_of(base, rng), name, bid, "bare")
        for m in range(a.small):
            toks = words(rng, voc, rng.randint(3, 40))
            bid = f"{name}-s{m}"
            add(host if m % 3 else "www." + host, f"s/{m}", lines_of(toks, rng), name, bid, "small",
                (header, footer))
            if m % 4 == 0:
                add(rng.choice(mirrors), f"{name}/s{m}", lines_of(toks, rng), name, bid, "bare")
    # the mirrors also have pages of their own, from the same families: enough for a model
    for k, mh in enumerate(mirrors):
        for p in range(40):
            toks = body(rng, voc, shared_family if p % 2 else None, rng.randint(60, 300))
            add(mh, f"own/{p}", lines_of(toks, rng), mh, f"{mh}-o{p}", "bare")
    with open(os.path.join(a.out, "corpus.jsonl"), "w") as f:
        for d in docs:
            f.write(json.dumps(d) + "\n")
    # Each templated page's body alone, on a host of its own: run beside the corpus, a page whose
    # chrome removal is exact is signed as its body (score.py --exact).
    with open(os.path.join(a.out, "bodies.jsonl"), "w") as f:
        for t in truth:
            if t["kind"] != "bare":
                f.write(json.dumps({"id": "body-" + t["id"], "sku": f"https://bodies-{t['id']}.example/",
                                    "text_t": t["body"]}) + "\n")
    with open(os.path.join(a.out, "truth.jsonl"), "w") as f:
        for t in truth:
            f.write(json.dumps(t) + "\n")
    print(f"{len(docs)} pages written to {a.out}")


if __name__ == "__main__":
    main()
