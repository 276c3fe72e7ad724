#!/usr/bin/env bash
# One everyday change on a core that solr-changes.sh loaded and decided, and the run after it:
# 1 % of CORPUS re-crawled from the K-th page (tools/bench/recrawl.py, RECRAWL_AT=K) or 1 % deleted
# (every 100th page from the K-th), committed, SETTLE seconds (default 30), then one timed run with
# the change state in STATE_DIR. Prints the wall time, phases, work, the report's changes and the
# peak memory; the report goes to OUT.json. K must differ between steps (a page re-crawled twice is
# a re-index like any other; one deleted twice is no change). RUST_LOG is passed on.
#
#   tools/bench/solr-change-step.sh WORKER CORE_URL CORPUS STATE_DIR reindex|delete K OUT
set -euo pipefail
worker=$1 core=$2 corpus=$3 state=$4 kind=$5 k=$6 out=$7
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
case $kind in
reindex)
    RECRAWL_AT=$k python3 "$here/tools/bench/recrawl.py" "$corpus" "$tmp/change.jsonl"
    curl -sf -H 'Content-Type: application/json' --data-binary @"$tmp/change.jsonl" \
        "$core/update/json/docs" > /dev/null
    curl -sf "$core/update?commit=true" > /dev/null
    ;;
delete)
    python3 - "$corpus" "$k" > "$tmp/delete.json" <<'PY'
import json, sys
at = int(sys.argv[2])
ids = [json.loads(l)["id"] for i, l in enumerate(open(sys.argv[1])) if i % 100 == at]
print(json.dumps({"delete": ids}))
PY
    curl -sf -H 'Content-Type: application/json' --data-binary @"$tmp/delete.json" \
        "$core/update?commit=true" > /dev/null
    ;;
*)
    echo "solr-change-step.sh: the change is reindex or delete, not $kind" >&2
    exit 2
    ;;
esac
sleep "${SETTLE:-30}"
t0=$(date +%s.%N)
/usr/bin/time -f '%M' -o "$tmp/rss" "$worker" run --solr "$core" --state-dir "$state" \
    --report "$out.json" -q
t1=$(date +%s.%N)
python3 - "$out.json" "$t0" "$t1" "$(cat "$tmp/rss")" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = r.get("changes", {})
print(f"wall {float(sys.argv[3]) - float(sys.argv[2]):.2f} s  peak {int(sys.argv[4]) // 1024} MiB  "
      f"reread {r['documents']['reread']}")
print("phases", r.get("phases_ms"))
print("work", r["work"])
print("changes", {k: c.get(k) for k in ("source", "reindexed", "deleted", "served", "served_derived")})
PY
