#!/usr/bin/env python3
"""The Python peers of the near-duplicate signature, measured on the same pages as solr-dedup's
`examples/near_speed.rs` (see run.sh): datasketch's MinHash.update_batch, rensa's RMinHash and
CMinHash, each with 84 permutations (6 trials x 14 hashes), on one core.

Two figures each: with the tokenising done beforehand (lower-cased word bigrams, as the peers'
published figures) and end to end (tokenising in Python included). The pretokenised ones are also
given by the thread's processor time (`pretokenised_cpu_docs_per_s`), as near_speed's
`cpu_docs_per_s` is, for a machine that other processes keep busy.

    python3 -m venv /tmp/v && /tmp/v/bin/pip install datasketch rensa
    /tmp/v/bin/python tools/near-bench/peers.py corpus.jsonl
"""
import json
import re
import sys
import time

import datasketch
import rensa

PERM = 84
WORD = re.compile(r"[^\W_]+")


def bigrams(text):
    toks = WORD.findall(text.lower())
    if len(toks) < 2:
        return [" ".join(toks)] if toks else []
    return list({a + " " + b for a, b in zip(toks, toks[1:])})


CPU = {}


def best_rate(fn, items, rounds=3, name=None):
    """The best wall-clock rate of `rounds`; the rate by this thread's processor time over all the
    rounds (which other processes on a busy machine disturb less) goes to CPU[name]."""
    best = 0.0
    cpu = time.thread_time()
    for _ in range(rounds):
        t = time.perf_counter()
        for it in items:
            fn(it)
        best = max(best, len(items) / (time.perf_counter() - t))
    if name:
        CPU[name] = round(rounds * len(items) / max(time.thread_time() - cpu, 1e-9))
    return round(best)


def main():
    texts = []
    with open(sys.argv[1], encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            if d.get("text_t"):
                texts.append(d["text_t"])
    shingled = [bigrams(t) for t in texts]
    encoded = [[s.encode("utf-8") for s in sh] for sh in shingled]

    def ds(sh):
        m = datasketch.MinHash(num_perm=PERM, seed=1)
        m.update_batch(sh)
        return m.digest()

    def rm(sh):
        m = rensa.RMinHash(num_perm=PERM, seed=1)
        m.update(sh)
        return m.digest()

    def cm(sh):
        m = rensa.CMinHash(num_perm=PERM, seed=1)
        m.update(sh)
        return m.digest()

    out = {
        "docs": len(texts),
        "mean_shingles": round(sum(len(s) for s in shingled) / len(shingled), 1),
        "versions": {"datasketch": datasketch.__version__ if hasattr(datasketch, "__version__") else "?",
                     "rensa": getattr(rensa, "__version__", "?")},
        "pretokenised_docs_per_s": {
            "datasketch MinHash.update_batch": best_rate(ds, encoded, rounds=1, name="datasketch"),
            "rensa RMinHash": best_rate(rm, shingled, name="rensa RMinHash"),
            "rensa CMinHash": best_rate(cm, shingled, name="rensa CMinHash"),
        },
        "end_to_end_docs_per_s": {
            "rensa RMinHash": best_rate(lambda t: rm(bigrams(t)), texts),
            "rensa CMinHash": best_rate(lambda t: cm(bigrams(t)), texts),
        },
    }
    out["pretokenised_cpu_docs_per_s"] = CPU
    print(json.dumps(out))


if __name__ == "__main__":
    main()
