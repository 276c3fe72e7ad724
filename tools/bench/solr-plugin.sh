#!/usr/bin/env bash
# Issue 47: index-time signing on a real Solr core. CORPUS is loaded into a core without the
# signing chain (collection1, schema/) and into one with it (signed, solr-plugin/conf), each load
# timed (twice, alternating, from empty cores); then a first worker run on each with YaCy's fields;
# then `signed` emptied, given the in-place profile (schema apply), loaded through the chain again
# and decided by a first run again. Each run's wall time, the report's work and its modelled Solr
# time beside the floor (every text read once and every page written once: N x (0.28 + 0.60) ms,
# BENCHMARKS.md, Solr's work per run).
#
#   tools/bench/solr-plugin.sh WORKER NODE_URL CORPUS OUTDIR
#
# NODE_URL: the base of tests/solr's standalone node started with the plugin, e.g.
#   mvn -B -q -f solr-plugin/pom.xml package
#   java -Xmx6g -Dsolrdedup.plugin.jar=solr-plugin/target/solr-dedup-plugin-0.2.0.jar \
#     -Dsolrdedup.plugin.conf=solr-plugin/conf -cp "tests/solr/target/classes:$(cat tests/solr/target/classpath.txt)" \
#     SolrLauncher schema standalone      # prints {"standalone":"http://127.0.0.1:P/solr/collection1"}
# and NODE_URL=http://127.0.0.1:P/solr. The `signed` core is left with the in-place profile's fields.
# INPLACE_ONLY=1: the in-place part alone. SETTLE=SECONDS waits after each load so that Solr's merges do not land in the next step (default 30).
set -euo pipefail
worker=$1 node=$2 corpus=$3 out=$4
mkdir -p "$out"
docs=$(wc -l < "$corpus")
empty() {
    curl -sf -H 'Content-Type: application/json' --data-binary '{"delete":{"query":"*:*"}}' \
        "$node/$1/update?commit=true" > /dev/null
    sleep 5
}
# Loads CORPUS into core $1 in chunks of 10,000 pages and commits; prints the seconds it took.
load() {
    local core=$1 t0 t1
    rm -f "$out"/chunk.*
    split -l 10000 "$corpus" "$out/chunk."
    t0=$(date +%s.%N)
    for f in "$out"/chunk.*; do
        curl -sf -H 'Content-Type: application/json' --data-binary @"$f" "$node/$core/update/json/docs" > /dev/null
    done
    curl -sf "$node/$core/update?commit=true" > /dev/null
    t1=$(date +%s.%N)
    rm -f "$out"/chunk.*
    python3 -c "print(f'{$t1 - $t0:.2f}')"
}
step() {
    local name=$1 core=$2; shift 2
    local t0 t1
    rm -rf "$out/state-$name"
    t0=$(date +%s.%N)
    /usr/bin/time -f '%M' -o "$out/$name.rss" "$worker" run "$@" --solr "$node/$core" \
        --state-dir "$out/state-$name" --report "$out/$name.json" -q
    t1=$(date +%s.%N)
    python3 - "$out/$name.json" "$t0" "$t1" "$name" "$(cat "$out/$name.rss")" "$docs" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); w = r["work"]; ph = r.get("phases_ms", {})
wall = float(sys.argv[3]) - float(sys.argv[2])
floor = int(sys.argv[6]) * (0.28 + 0.60)
print(f"{sys.argv[4]:<14} wall {wall:7.2f} s  peak {int(sys.argv[5]) // 1024} MiB  texts {w['text_docs']:>7}  "
      f"export {w['light_export_docs']:>7}  cursor {w['light_cursor_docs']:>6}  looked up {w['lookup_docs']:>6}  "
      f"written {w['written_docs']:>7} (in place {w.get('written_in_place_docs', 0):>7})  requests {w['requests']:>5}  "
      f"modelled {w['modelled_solr_ms'] / 1000:7.2f} s = {w['modelled_solr_ms'] / floor:.3f} x the floor  phases {ph}")
print(json.dumps({"step": sys.argv[4], "wall": wall, "work": w, "phases_ms": ph}),
      file=open(sys.argv[1].replace(".json", ".line"), "w"))
PY
}
echo "corpus $corpus: $docs pages; floor $(python3 -c "print(f'{$docs * 0.88 / 1000:.1f}')") s modelled"
# Indexing speed: both cores from empty, twice, alternating.
if [ "${INPLACE_ONLY:-0}" != 1 ]; then
for pass in 1 2; do
    empty collection1
    echo "load $pass without the chain: $(load collection1) s"
    empty signed
    echo "load $pass through the chain: $(load signed) s"
done
sleep "${SETTLE:-30}"
step plain-yacy collection1
step signed-yacy signed
fi
# The in-place profile: its fields added, the pages loaded through the chain again.
# The profile is recorded with the (empty) core first: the chain follows the record, and writes the
# profile's first values only once it names the in-place profile.
empty signed
"$worker" schema apply --profile in-place --solr "$node/signed" -q
"$worker" run --reconfigure --solr "$node/signed" --no-change-state -q
echo "load through the chain, in-place fields: $(load signed) s"
sleep "${SETTLE:-30}"
step signed-inplace signed
