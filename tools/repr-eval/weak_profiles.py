#!/usr/bin/env python3
"""Weak fuzzy profiles (issue 27): in a run's output (`--output-format docs`, yacy scheme, so with
`fuzzy_signature_text_t`) and the simulator's truth, how many fuzzy groups and pages have a text
profile of N words, and how many distinct contents (topics) such groups merge. Standard library only.

    python3 tools/repr-eval/weak_profiles.py DIR OUT.jsonl [--max-words 8]

A fuzzy group is "mixed" when its members have more than one content id: merging them hides
distinct pages behind one `fuzzy_signature_unique_b:true`. For each profile size N, the groups of
that size, their pages, the mixed ones and the contents hidden (contents in the group minus one).
"""
import argparse
import collections
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from score import load_truth  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('dir')
    ap.add_argument('out')
    ap.add_argument('--max-words', type=int, default=8)
    a = ap.parse_args()
    content = {i: t['content'] for i, t in load_truth(a.dir).items()}
    groups = collections.defaultdict(list)
    words = {}
    with open(a.out) as f:
        for line in f:
            d = json.loads(line)
            sig = d.get('fuzzy_signature_l')
            prof = d.get('fuzzy_signature_text_t')
            if sig is None or prof is None or not prof.strip():
                continue
            groups[sig].append(d['id'])
            words[sig] = len(prof.split())
    rows = collections.defaultdict(lambda: [0, 0, 0, 0])  # groups, pages, mixed, hidden
    for sig, ids in groups.items():
        if len(ids) < 2:
            continue
        n = min(words[sig], a.max_words)
        topics = {content.get(i) for i in ids}
        r = rows[n]
        r[0] += 1
        r[1] += len(ids)
        if len(topics) > 1:
            r[2] += 1
            r[3] += len(topics) - 1
    print('profile words  groups  pages  mixed groups  contents hidden')
    for n in sorted(rows):
        g, p, m, h = rows[n]
        label = '%d+' % n if n == a.max_words else str(n)
        print('%13s  %6d  %5d  %12d  %15d' % (label, g, p, m, h))


if __name__ == '__main__':
    main()
