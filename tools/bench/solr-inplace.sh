#!/usr/bin/env bash
# Issue 46: what a count refresh of a big group costs with YaCy's schema and with the in-place
# profile, on one real Solr node with two cores made from schema/ (tests/solr's launcher makes
# `collection1` and `inplace`: `java -cp … SolrLauncher schema standalone`).
#
#   tools/bench/solr-inplace.sh WORKER NODE_URL CORPUS OUTDIR
#
# NODE_URL: the node's base URL (http://127.0.0.1:PORT/solr). For each core (collection1 with
# YaCy's profile; inplace after `schema apply --profile in-place`): empty it, load CORPUS
# (gen_corpus --big-groups: a group of 11,000 pages, 10,000 of them with one text), run the worker
# once (it signs every page), then add one member of the big group, signed as its group's pages
# are (its fields copied from one of them, so that the run only refreshes counts), run, delete it
# again, run. Each run's wall time, its write phase, the documents written and Solr's
# modelled time go to OUTDIR/<core>-<step>.json and one line each on standard output.
# SETTLE=SECONDS waits after each load (default 30).
set -euo pipefail
worker=$1 node=$2 corpus=$3 out=$4
mkdir -p "$out"
post() { curl -sf -H 'Content-Type: application/json' --data-binary "$2" "$1" > /dev/null; }
step() {
    local core=$1 name=$2
    shift 2
    local t0 t1
    t0=$(date +%s.%N)
    "$worker" run --solr "$node/$core" --state-dir "$out/$core-state" --report "$out/$core-$name.json" -q "$@"
    t1=$(date +%s.%N)
    python3 - "$out/$core-$name.json" "$t0" "$t1" "$core" "$name" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); w = r["work"]; p = r.get("phases_ms", {})
wall = float(sys.argv[3]) - float(sys.argv[2])
print(f"{sys.argv[4]:<12} {sys.argv[5]:<8} wall {wall:7.2f} s  write phase {p.get('write', 0) / 1000:7.2f} s  "
      f"written {w['written_docs']:>6}  texts {w['text_docs']:>6}  modelled Solr {w['modelled_solr_ms'] / 1000:7.2f} s")
PY
}
for core in collection1 inplace; do
    rm -rf "$out/$core-state"
    post "$node/$core/update?commit=true" '{"delete":{"query":"*:*"}}'
    if [ "$core" = inplace ]; then
        "$worker" schema apply --profile in-place --solr "$node/$core" -q
    fi
    split -l 20000 "$corpus" "$out/chunk."
    for f in "$out"/chunk.*; do
        curl -sf -H 'Content-Type: application/json' --data-binary @"$f" "$node/$core/update/json/docs" > /dev/null
        rm "$f"
    done
    post "$node/$core/update?commit=true" '[]'
    sleep "${SETTLE:-30}"
    step "$core" first
    sleep "${SETTLE:-30}"
    # One more member, signed as the group's pages are: a copy of one of them under a new URL.
    curl -sf "$node/$core/get?id=big-000-00001&fl=*&wt=json" | python3 -c '
import json, sys
d = json.load(sys.stdin)["doc"]
d = {k: v for k, v in d.items() if not k.startswith("_")}
d["id"] = "big-000-new"; d["sku"] = "https://shop0.example/item/new"
print(json.dumps([d]))' > "$out/new.json"
    post "$node/$core/update?commit=true" @"$out/new.json"
    sleep 5
    step "$core" grown
    post "$node/$core/update?commit=true" '{"delete":["big-000-new"]}'
    sleep 5
    step "$core" shrunk
done
