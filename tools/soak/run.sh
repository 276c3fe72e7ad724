#!/usr/bin/env bash
# The soak of the crawl loop (issue 30): a real Solr from tests/solr, a simulated web, a crawler that
# asks `solr-dedup serve` for predictions, serve's --after-quiet runs with URL rules learnt again and
# again, and faults; at rest the invariants. Exit 0 only when every invariant holds; the last line is
# a one-line summary.
#
#   tools/soak/run.sh --minutes N [--cloud] [--seed S] [--sites N] [--pages P] [--quiet SECONDS]
#                     [--rate URLS_A_SECOND] [--fault-every SECONDS] [--node-down SECONDS]
#                     [--break-at-rest] [--work DIR]
#
# --cloud adds a fault: a SolrCloud node stopped (through the launcher's standard input) for
# --node-down seconds (15), then started again, the two nodes in turn.
#
# Binary: $SOLR_DEDUP, else target/release/solr-dedup, else target/debug/solr-dedup. Needs Java 17 and
# the launcher built (`mvn -f tests/solr/pom.xml compile dependency:build-classpath
# -Dmdep.outputFile=target/classpath.txt`, as .ci/run does) and python3 (standard library only).
# Every process it starts ends with it, on Ctrl-C and on failure too.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pid=
cleanup() {
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM
python3 "$here/soak.py" "$@" &
pid=$!
set +e
wait "$pid"
code=$?
pid=
exit "$code"
