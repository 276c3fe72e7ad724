#!/usr/bin/env python3
"""An independent implementation of the near-duplicate signature, version 1 (src/signature/near/mod.rs
module docs), written from that definition alone. It writes the test vectors the Rust code is held
to: tests/fixtures/near-v1.jsonl.

    python3 -m venv /tmp/v && /tmp/v/bin/pip install xxhash
    /tmp/v/bin/python tools/near-vectors/gen.py > tests/fixtures/near-v1.jsonl

Texts use characters whose categories are the same in Python's Unicode tables and the Rust crate's.
"""
import itertools
import json
import unicodedata

import xxhash

SEED = 0x5EED0001D0C51A7E
M64 = (1 << 64) - 1
WORD = {"Lu", "Ll", "Lt", "Lm", "Lo", "Nd"}


def tokens(text):
    out, cur = [], []
    for c in text:
        if unicodedata.category(c) in WORD:
            cur.append(c)
        elif cur:
            out.append("".join(cur).lower())
            cur = []
    if cur:
        out.append("".join(cur).lower())
    return out


def fmix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def fmix32(h):
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    return h ^ (h >> 16)


def token_hash(tok):
    return xxhash.xxh3_64_intdigest(tok.encode("utf-8"), seed=SEED)


def fold(ws):
    x = SEED
    for w in ws:
        x = fmix(x ^ w)
    return x


def shingle_hashes(toks, n):
    """The set of shingle hashes (step 3)."""
    if not toks:
        return set()
    ws = [token_hash(t) for t in toks]
    if len(ws) < n:
        return {fold(ws)}
    return {fold(ws[i : i + n]) for i in range(len(ws) - n + 1)}


def keys_of_functions(count):
    state, out = SEED, []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & M64
        out.append(fmix(state) & 0xFFFFFFFF)
    return out


def signed(x):
    return x - (1 << 64) if x >= 1 << 63 else x


def signature(text, n, h, t, a):
    xs = shingle_hashes(tokens(text), n)
    if not xs:
        return None
    ys = [(x ^ (x >> 32)) & 0xFFFFFFFF for x in xs]
    ks = keys_of_functions(h * t)
    minima = [min(fmix32(y ^ k) for y in ys) for k in ks]
    trials = []
    for i in range(t):
        b = b"".join(m.to_bytes(4, "little") for m in minima[i * h : (i + 1) * h])
        trials.append(xxhash.xxh3_64_intdigest(b, seed=SEED ^ i))
    keys = []
    for subset in itertools.combinations(range(t), a):
        b = bytes(subset) + b"".join(trials[s].to_bytes(8, "little") for s in subset)
        keys.append(signed(xxhash.xxh3_64_intdigest(b, seed=SEED ^ 0xC0)))
    return [signed(v) for v in trials], keys


TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "the QUICK brown fox, jumps over the lazy dog!!",
    "One",
    "",
    "  -- ... ",
    "Straße und Größe: 42 Häuser, 7 Brücken; ΟΔΥΣΣΕΥΣ sailed home.",
    "日本語のテキスト と English words 123 mixed",
    "repeat repeat repeat repeat repeat repeat",
    " ".join("word%d" % (i % 37) for i in range(300)),
    "A page about gardens. " * 40 + "Footer: contact us, privacy, imprint.",
]
PARAMS = [(2, 14, 6, 2), (2, 10, 6, 2), (1, 3, 4, 1), (3, 20, 5, 3)]

for text in TEXTS:
    for n, h, t, a in PARAMS:
        sig = signature(text, n, h, t, a)
        row = {"text": text, "n": n, "h": h, "t": t, "a": a}
        if sig is None:
            row["trials"] = None
            row["keys"] = None
        else:
            row["trials"], row["keys"] = sig
        print(json.dumps(row, ensure_ascii=False))
