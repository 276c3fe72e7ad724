#!/usr/bin/env bash
# A SolrCloud collection against a standalone core, same pages (issue 26): loads CORPUS into both,
# then per target a first run and a settled rerun, with wall time and the report's `work`.
#
#   tools/bench/solr-cloud.sh WORKER CORPUS STANDALONE_URL CLOUD_URL OUTDIR
#
# The URLs are the test launcher's (tests/solr: `java … SolrLauncher schema both` prints them), or
# any empty core and collection made from schema/. Each target is emptied and loaded first, unless
# LOAD=0 (then they hold CORPUS already, with no worker fields). SETTLE=SECONDS waits that long after
# each load, so that Solr's merges after the load do not land in the first run (0 by default).
set -euo pipefail
worker=$1 corpus=$2 core=$3 cloud=$4 out=$5
mkdir -p "$out"
load() {
    curl -sf "$1/update?commit=true" -H 'Content-Type: application/json' \
        -d '{"delete":{"query":"*:*"}}' > /dev/null
    curl -sf "$1/update/json/docs?commit=true" -H 'Content-Type: application/json' \
        --data-binary @"$corpus" > /dev/null
}
step() {
    local name=$1 url=$2; shift 2
    local t0 t1
    t0=$(date +%s.%N)
    "$worker" run --solr "$url" --report "$out/$name.json" -q "$@"
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{printf "%.2f\n", $2-$1}' > "$out/$name.wall"
    echo "$name: wall $(cat "$out/$name.wall") s, work $(jq -c .work "$out/$name.json")"
}
for target in core cloud; do
    url=$core
    [ "$target" = cloud ] && url=$cloud
    if [ "${LOAD:-1}" != 0 ]; then
        load "$url"
        sleep "${SETTLE:-0}"
    fi
    step "$target-first" "$url"
    step "$target-settled" "$url"
    step "$target-settled2" "$url"
done
