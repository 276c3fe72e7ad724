#!/usr/bin/env bash
# Issue 25: what an everyday run costs on a real Solr core with the default seven dimensions: first
# run, settled rerun, incremental run after re-crawling 1 % (tools/bench/recrawl.py), `check` of the
# settled index, with wall time and the report's `work`.
#
#   tools/bench/solr-near.sh WORKER CORE_URL CORPUS OUTDIR
#
# CORE_URL: an empty core with the schema of schema/ (e.g. tests/solr's launcher, standalone);
# CORPUS: JSON Lines from gen_corpus. Deletes everything in the core first, unless LOADED=1 says the
# core holds CORPUS already, loaded by this script's `load` and never run on (to load a large corpus
# while the worker builds). QUIET=1: see quiet() below.
set -euo pipefail
worker=$1 core=$2 corpus=$3 out=$4
here=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
load() {
    split -l 1000 "$1" "$out/chunk."
    for f in "$out"/chunk.*; do
        python3 -c 'import json,sys; print(json.dumps([json.loads(l) for l in open(sys.argv[1])]))' "$f" |
            curl -sf -H 'Content-Type: application/json' --data-binary @- "$core/update" > /dev/null
        rm "$f"
    done
    curl -sf "$core/update?commit=true" > /dev/null
}
# With QUIET=1, each step waits (up to 5 minutes) until the machine is idle (90 % of both cores idle
# over 2 s), so that Solr's background merges after a load do not land in the worker's time.
quiet() {
    [ "${QUIET:-0}" = 1 ] || return 0
    local i a b
    for i in $(seq 150); do
        a=($(head -1 /proc/stat)); sleep 2; b=($(head -1 /proc/stat))
        local idle=$(( b[4] - a[4] )) total=0 k
        for k in 1 2 3 4 5 6 7 8; do total=$(( total + b[k] - a[k] )); done
        [ $(( idle * 100 )) -ge $(( total * 90 )) ] && return 0
    done
}
step() {
    local name=$1; shift
    quiet
    local t0 t1 code=0
    t0=$(date +%s.%N)
    "$worker" "$@" --solr "$core" --report "$out/$name.json" -q || code=$?
    t1=$(date +%s.%N)
    python3 - "$out/$name.json" "$t0" "$t1" "$code" "$name" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); w = r["work"]; d = r["documents"]
wall = float(sys.argv[3]) - float(sys.argv[2])
print(f"{sys.argv[5]:<12} exit {sys.argv[4]} wall {wall:6.2f} s  modelled {w['modelled_solr_ms']/1000:6.2f} s  "
      f"looked up {w['lookup_docs']:>7}  light {w['light_export_docs'] + w['light_cursor_docs']:>7}  "
      f"texts {w['text_docs']:>6}  written {w['written_docs']:>6}  decided {d['decided']:>6}  "
      f"near fallbacks {r['dimensions'].get('near', {}).get('lookup_fallbacks', '-')}")
PY
}
if [ "${LOADED:-0}" != 1 ]; then
    curl -sf -H 'Content-Type: application/json' --data-binary '{"delete":{"query":"*:*"}}' "$core/update?commit=true" > /dev/null
    load "$corpus"
fi
step first run
step settled run
python3 "$here/tools/bench/recrawl.py" "$corpus" "$out/recrawl.jsonl"
load "$out/recrawl.jsonl"
step incremental run
step check check
step rerun run
