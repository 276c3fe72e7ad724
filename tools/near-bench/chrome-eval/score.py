#!/usr/bin/env python3
"""Scores chrome removal on a corpus of gen.py (issue 29).

    python3 score.py DIR DOCS.jsonl [--shingle 2 --hashes 14 --trials 6 --agree 2]

DIR holds truth.jsonl; DOCS.jsonl is `solr-dedup run --output-format docs` over DIR/corpus.jsonl
(with or without --chrome). A pair is linked when the two pages share a near_keys_ls key. The truth
is computed here from the generated texts: each pair's shingle overlap (Jaccard) of the bodies
("without chrome") and of the whole pages ("with chrome"), tokens as neardup.md step 1 (the corpus
is ASCII, so runs of [a-z0-9] after lower-casing).

Same-body pairs (variants of one body, on the site, its www. alias and hosts without chrome): per
band of body overlap, the linked count against the seed formula's expectation
P(J) = 1 - sum_{k<A} C(T,k) p^k (1-p)^(T-k), p = J^H, summed over the band's pairs, with
sd = sqrt(sum P(1-P)) (at least 0.3, so that a band whose expectation is all but 0 or all but 1
may miss by one pair). A band passes within 3.3 sd. Chrome-only pairs (two pages of one site,
www. alias included, with different bodies) pass when they link no more often than the formula at
their body overlap plus 3.3 sd. Prints a table and a last line PASS or FAIL."""
import argparse
import itertools
import json
import math
import os
import re
from collections import defaultdict

TOKEN = re.compile(r"[a-z0-9]+")


def shingles(text, n):
    toks = TOKEN.findall(text.lower())
    if not toks:
        return frozenset()
    if len(toks) < n:
        return frozenset([tuple(toks)])
    return frozenset(tuple(toks[i:i + n]) for i in range(len(toks) - n + 1))


def jaccard(a, b):
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def prob(j, h, t, a):
    p = j ** h
    return min(1.0, max(0.0, 1.0 - sum(math.comb(t, k) * p ** k * (1 - p) ** (t - k) for k in range(a))))


BANDS = [0.0, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0001]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("docs")
    ap.add_argument("--shingle", type=int, default=2)
    ap.add_argument("--hashes", type=int, default=14)
    ap.add_argument("--trials", type=int, default=6)
    ap.add_argument("--agree", type=int, default=2)
    ap.add_argument("--exact", metavar="DOCS",
                    help="a run over corpus.jsonl plus bodies.jsonl: count the templated pages whose "
                         "near_trials_ls equal those of their bare body (removal took exactly the chrome)")
    a = ap.parse_args()
    truth = {}
    texts = {}
    with open(os.path.join(a.dir, "truth.jsonl")) as f:
        for line in f:
            t = json.loads(line)
            truth[t["id"]] = t
    with open(os.path.join(a.dir, "corpus.jsonl")) as f:
        for line in f:
            d = json.loads(line)
            texts[d["id"]] = d["text_t"]
    keys = {}
    with open(a.docs) as f:
        for line in f:
            d = json.loads(line)
            keys[d["id"]] = set(d.get("near_keys_ls") or [])
    body_sh = {i: shingles(t["body"], a.shingle) for i, t in truth.items()}
    page_sh = {i: shingles(texts[i], a.shingle) for i in truth}
    P = lambda j: prob(j, a.hashes, a.trials, a.agree)
    linked = lambda x, y: bool(keys.get(x, set()) & keys.get(y, set()))

    by_body = defaultdict(list)
    for i, t in truth.items():
        by_body[t["body_id"]].append(i)
    rows = defaultdict(lambda: [0, 0, 0.0, 0.0, 0.0])  # pairs, linked, expected, var, sum J with chrome
    cross = defaultdict(lambda: [0, 0, 0.0, 0.0, 0.0])
    for ids in by_body.values():
        for x, y in itertools.combinations(sorted(ids), 2):
            jb = jaccard(body_sh[x], body_sh[y])
            jp = jaccard(page_sh[x], page_sh[y])
            band = next(k for k in range(len(BANDS) - 1) if jb < BANDS[k + 1])
            p = P(jb)
            kinds = {truth[x]["kind"], truth[y]["kind"]}
            for table, on in ((rows, True), (cross, "bare" in kinds and len(kinds) > 1)):
                if on:
                    r = table[band]
                    r[0] += 1
                    r[1] += linked(x, y)
                    r[2] += p
                    r[3] += p * (1 - p)
                    r[4] += jp
    ok = True

    def show(title, table):
        nonlocal ok
        print(title)
        print(f"  {'body overlap':>14} {'pairs':>6} {'linked':>7} {'formula':>8} {'sd':>6} {'z':>6}  mean overlap with chrome")
        for k in sorted(table):
            n, l, e, v, jp = table[k]
            sd = max(math.sqrt(v), 0.3)
            z = (l - e) / sd
            good = abs(z) <= 3.3
            ok &= good
            band = f"[{BANDS[k]:.2f},{min(BANDS[k + 1], 1.0):.2f}{']' if BANDS[k + 1] > 1 else ')'}"
            print(f"  {band:>14} {n:>6} {l:>7} {e:>8.1f} {sd:>6.2f} {z:>6.1f}  {jp / n:.3f}{'' if good else '  FAIL'}")

    show("same-body pairs, all:", rows)
    show("same-body pairs, one page with chrome and one on a host without:", cross)

    by_site = defaultdict(list)
    for i, t in truth.items():
        if t["kind"] in ("site", "www", "small"):
            by_site[t["site"]].append(i)
    n = l = 0
    e = v = 0.0
    worst = 0.0
    for ids in by_site.values():
        for x, y in itertools.combinations(sorted(ids), 2):
            if truth[x]["body_id"] == truth[y]["body_id"]:
                continue
            jb = jaccard(body_sh[x], body_sh[y])
            p = P(jb)
            n += 1
            l += linked(x, y)
            e += p
            v += p * (1 - p)
            worst = max(worst, jb)
    sd = max(math.sqrt(v), 0.3)
    good = l <= e + 3.3 * sd
    ok &= good
    print(f"chrome-only pairs (one site, different bodies): {n} pairs, {l} linked, formula {e:.2f} "
          f"(largest body overlap {worst:.3f}){'' if good else '  FAIL'}")
    if a.exact:
        trials = {}
        with open(a.exact) as f:
            for line in f:
                d = json.loads(line)
                trials[d["id"]] = d.get("near_trials_ls")
        pages = [i for i, t in truth.items() if t["kind"] != "bare"]
        same = sum(trials.get(i) == trials.get("body-" + i) for i in pages)
        print(f"templated pages signed exactly as their bare body: {same} of {len(pages)}")
    print("PASS" if ok else "FAIL")


if __name__ == "__main__":
    main()
