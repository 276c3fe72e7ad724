#!/usr/bin/env python3
"""Writes a crawler's re-crawl of 1 % of a corpus: every 100th document (from the 8th), without the
worker's fields or _version_, a third of them with new text (none with RECRAWL_SAME=1 in the
environment: a crawler fetching pages that did not change; RECRAWL_AT=K starts from the K-th
instead, for a second re-crawl of other pages).

    tools/bench/recrawl.py CORPUS OUT [TEXT_CHARS]
"""
import json
import os
import sys

corpus, out = sys.argv[1], sys.argv[2]
keep = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
WORKER = ("_unique_b", "_copycount_i", "_unique_i", "_copies_i")
same = os.environ.get("RECRAWL_SAME") == "1"
at = int(os.environ.get("RECRAWL_AT", "7"))
with open(corpus) as src, open(out, "w") as dst:
    for i, line in enumerate(src):
        if i % 100 != at:
            continue
        d = json.loads(line)
        for k in list(d):
            if k.endswith(WORKER) or "signature" in k or k == "_version_":
                del d[k]
        if (i // 100) % 3 == 0 and not same:
            d["text_t"] = (
                "Re-crawled page %d, now about rivers, bridges and the weather in spring. " % i
                + d.get("text_t", "")[:keep]
            )
        dst.write(json.dumps(d) + "\n")
