"""Per-pattern share of queries predicted duplicate, each predictions file at its own threshold.

    python3 tools/urls-eval/at.py DIR ours.jsonl=0.5 maybedont.jsonl=0.98

For a `dup` pattern the share is its recall, for a `new` one its false-alarm rate. A line with
"error" counts as probability 0. Standard library only.
"""
import json
import sys
from collections import OrderedDict


def main():
    d = sys.argv[1]
    runs = [a.rsplit("=", 1) for a in sys.argv[2:]]
    queries = [json.loads(line) for line in open(f"{d}/queries.jsonl")]
    cols = []
    for name, t in runs:
        probs = [json.loads(line).get("probability", 0.0) or 0.0 for line in open(f"{d}/{name}")]
        assert len(probs) == len(queries), name
        cols.append((f"{name.rsplit('.', 1)[0]} >= {t}", float(t), probs))
    rows = OrderedDict()
    for i, q in enumerate(queries):
        key = (q["pattern"], "dup" if q["duplicate"] else "new")
        rows.setdefault(key, []).append(i)
    rows = OrderedDict(sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])))
    print("| pattern | label | count | " + " | ".join(c[0] for c in cols) + " |")
    print("|---|---|---:|" + "---:|" * len(cols))
    for (pattern, label), idx in rows.items():
        shares = [sum(1 for i in idx if probs[i] >= t) / len(idx) for _, t, probs in cols]
        print(f"| {pattern} | {label} | {len(idx)} | " + " | ".join(f"{s:.3f}" for s in shares) + " |")


if __name__ == "__main__":
    main()
