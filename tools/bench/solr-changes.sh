#!/usr/bin/env bash
# Issue 45: everyday runs from versions on a real Solr core or collection. First run, settled rerun,
# check, a run after 1 % of the pages were re-indexed (tools/bench/recrawl.py), check, `--full
# --dry-run`, a run after 1 % were deleted, check; wall time, the report's `work` and `changes`.
#
#   tools/bench/solr-changes.sh WORKER CORE_URL CORPUS OUTDIR [EXTRA RUN ARGS…]
#
# CORE_URL: a core or collection made from schema/ (tests/solr's launcher prints both: `java -cp …
# SolrLauncher schema both`); it is emptied and CORPUS (JSON Lines from gen_corpus) loaded, unless
# LOADED=1. Every run shares OUTDIR/state as its --state-dir (removed first). SETTLE=SECONDS waits
# after each load so that Solr's merges do not land in the next run (default 60). AGAIN=1: the core
# holds CORPUS already decided by an earlier pass of this script (LOADED=1 implied, the state kept):
# the first step is a rerun that keeps a new state, and the re-indexed and deleted pages are others.
# SETTLED_ONLY=1: the first run, two settled reruns and two checks only.
set -euo pipefail
worker=$1 core=$2 corpus=$3 out=$4
shift 4
here=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
[ "${AGAIN:-0}" = 1 ] && LOADED=1 || rm -rf "$out/state"
load() {
    split -l 50000 "$1" "$out/chunk."
    for f in "$out"/chunk.*; do
        curl -sf -H 'Content-Type: application/json' --data-binary @"$f" "$core/update/json/docs" > /dev/null
        rm "$f"
    done
    curl -sf "$core/update?commit=true" > /dev/null
    sleep "${SETTLE:-60}"
}
step() {
    local name=$1; shift
    local t0 t1 code=0
    t0=$(date +%s.%N)
    /usr/bin/time -f '%M' -o "$out/$name.rss" "$worker" "$@" --solr "$core" --state-dir "$out/state" \
        --report "$out/$name.json" -q || code=$?
    t1=$(date +%s.%N)
    python3 - "$out/$name.json" "$t0" "$t1" "$code" "$name" "$(cat "$out/$name.rss")" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); w = r["work"]; d = r["documents"]; c = r.get("changes", {})
wall = float(sys.argv[3]) - float(sys.argv[2])
print(f"{sys.argv[5]:<12} exit {sys.argv[4]} wall {wall:7.2f} s  peak {int(sys.argv[6]) // 1024} MiB  "
      f"export {w['light_export_docs']:>8}  cursor {w['light_cursor_docs']:>7}  looked up {w['lookup_docs']:>6}  "
      f"texts {w['text_docs']:>7}  written {w['written_docs']:>7}  requests {w['requests']:>5}  "
      f"decided {d['decided']:>6}  changes {c.get('source', '-')} {c.get('reason', '')} "
      f"new {c.get('new', 0)} reindexed {c.get('reindexed', 0)} deleted {c.get('deleted', 0)} "
      f"versions {c.get('versions_read', 0)}  near fallbacks {r['dimensions'].get('near', {}).get('lookup_fallbacks', '-')}")
print(json.dumps({"step": sys.argv[5], "wall": wall, "work": w, "changes": c, "phases_ms": r.get("phases_ms")}),
      file=open(sys.argv[1].replace(".json", ".line"), "w"))
PY
}
if [ "${LOADED:-0}" != 1 ]; then
    curl -sf -H 'Content-Type: application/json' --data-binary '{"delete":{"query":"*:*"}}' "$core/update?commit=true" > /dev/null
    load "$corpus"
fi
step first run "$@"
[ "${AGAIN:-0}" = 1 ] && step first2 run "$@"
step settled run "$@"
step check check
# SETTLED_ONLY=1: a second settled rerun and check, and stop (the 4M figure).
if [ "${SETTLED_ONLY:-0}" = 1 ]; then
    step settled2 run "$@"
    step check2 check
    exit 0
fi
python3 "$here/tools/bench/recrawl.py" "$corpus" "$out/recrawl.jsonl"
load "$out/recrawl.jsonl"
step reindexed run "$@"
step check2 check
step fulldry run --full --dry-run "$@"
# 1 % deleted: every 100th page from the 14th.
python3 - "$corpus" "${AGAIN:-0}" > "$out/delete.json" <<'PY'
import json, sys
at = 23 if len(sys.argv) > 2 and sys.argv[2] == "1" else 13
ids = [json.loads(l)["id"] for i, l in enumerate(open(sys.argv[1])) if i % 100 == at]
print(json.dumps({"delete": ids}))
PY
curl -sf -H 'Content-Type: application/json' --data-binary @"$out/delete.json" "$core/update?commit=true" > /dev/null
sleep "${SETTLE:-60}"
step deleted run "$@"
step check3 check
step fulldry2 run --full --dry-run "$@"
