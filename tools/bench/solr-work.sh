#!/usr/bin/env bash
# Solr's work per run against the fake Solr (issue 11): first run, settled second run, incremental
# run after re-crawling REcrawl's documents, and --full, with the worker's report (`work`), the
# fake's own counts, wall time and the worker's peak RSS.
#
#   tools/bench/solr-work.sh WORKER CORPUS RECRAWL OUTDIR
#
# WORKER: a solr-dedup binary; CORPUS: JSON Lines (gen_corpus); RECRAWL: JSON Lines of documents to
# re-add as a crawler would (no worker fields). Needs target/release/examples/fake_solr.
set -euo pipefail
worker=$1 corpus=$2 recrawl=$3 out=$4
here=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
fifo=$out/control
rm -f "$fifo" && mkfifo "$fifo"
"$here/target/release/examples/fake_solr" --load "$corpus" \
    --schema "$here/schema/conf/managed-schema.xml" < "$fifo" > "$out/fake.out" 2> "$out/fake.err" &
fake=$!
exec 3> "$fifo"
until [ -s "$out/fake.out" ]; do sleep 1; done
url=$(sed -n 1p "$out/fake.out")
step() {
    local name=$1; shift
    echo reset >&3
    local t0 t1
    t0=$(date +%s.%N)
    /usr/bin/time -f '%M' -o "$out/$name.rss" "$worker" run --solr "$url" --report "$out/$name.json" -q "$@" || true
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{printf "%.1f\n", $2-$1}' > "$out/$name.wall"
    local lines
    lines=$(wc -l < "$out/fake.out")
    echo work >&3
    until [ "$(wc -l < "$out/fake.out")" -gt "$lines" ]; do sleep 0.2; done
    tail -n 1 "$out/fake.out" > "$out/$name.fake.json"
    echo "$name: wall $(cat "$out/$name.wall") s, peak RSS $(cat "$out/$name.rss") KiB"
}
step first
step second
echo "load $recrawl" >&3
until [ "$(grep -c loaded "$out/fake.err")" -ge 2 ]; do sleep 1; done
step incremental
step full --full
exec 3>&-
wait "$fake" || true
