#!/usr/bin/env bash
# Is the representative of each group the cleanest member? (issue 27; tools/repr-eval/README.md)
#
#   bash tools/repr-eval/run.sh [--seed N] [--scale F] [--work DIR] [--dimensions LIST]
#
#   --seed N           simulation seed (default 1)
#   --scale F          size of the simulated crawl (1: about 14,000 pages)
#   --work DIR         data (default $REPR_EVAL_WORK or /tmp/repr-eval)
#   --dimensions LIST  passed to `run` (default: all seven)
#
# The binary is $SOLR_DEDUP, else target/release/solr-dedup, else target/debug/solr-dedup (never
# built here). When `run --help` lists --rules, the crawl is also scored with rules learnt from it
# (`urls learn` on the signed crawl, then `run --rules`); otherwise that step is skipped, with a note.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
scale=1 seed=1 dims=""
work="${REPR_EVAL_WORK:-/tmp/repr-eval}"
while [ $# -gt 0 ]; do
  case "$1" in
    --seed) seed="$2"; shift 2 ;;
    --scale) scale="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --dimensions) dims="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
bin="${SOLR_DEDUP:-}"
if [ -z "$bin" ]; then
  for b in "$root/target/release/solr-dedup" "$root/target/debug/solr-dedup"; do
    if [ -x "$b" ]; then bin="$b"; break; fi
  done
fi
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
  echo "run.sh: no solr-dedup binary (set SOLR_DEDUP or build one)" >&2
  exit 2
fi
data="$work/seed$seed-scale$scale"
mkdir -p "$data"
dim_args=()
[ -n "$dims" ] && dim_args=(--dimensions "$dims")

step() {  # step NAME COMMAND...: run and time
  local name="$1"; shift
  local t0 t1
  t0=$(date +%s.%N)
  echo "== $name"
  "$@"
  t1=$(date +%s.%N)
  awk -v n="$name" -v a="$t0" -v b="$t1" 'BEGIN { printf "   (%s: %.1f s)\n", n, b - a }'
}

decided_by() {  # decided_by REPORT: the report's per-dimension count of the deciding rule
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for name, d in sorted(r.get('dimensions', {}).items()):
    by = d.get('decided_by') or {}
    if by:
        print('   decided_by %-6s %s' % (name, ', '.join('%s %d' % kv for kv in sorted(by.items(), key=lambda kv: (-kv[1], kv[0])))))
PY
}

echo "binary: $bin ($("$bin" --version 2>/dev/null || echo '?'))"
step "simulate --truth-urls" python3 "$root/tools/urls-eval/simulate.py" --seed "$seed" --scale "$scale" \
  --out "$data" --truth-urls --no-checks
if "$bin" run --help 2>/dev/null | grep -q -- '--prefer'; then
  # YaCy's order, as before issue 27 (score.py's replay checks it rule by rule).
  step "solr-dedup run --prefer yacy" "$bin" run --input "$data/crawl.jsonl" --output-format docs \
    --prefer yacy --output "$data/out-yacy.jsonl" --report "$data/report-yacy.json" -q "${dim_args[@]}"
  step "score (YaCy's order)" python3 "$here/score.py" "$data" "$data/out-yacy.jsonl" --name yacy
  decided_by "$data/report-yacy.json"
fi
step "solr-dedup run (default order)" "$bin" run --input "$data/crawl.jsonl" --output-format docs \
  --output "$data/out-default.jsonl" --report "$data/report-default.json" -q "${dim_args[@]}"
step "score (default order)" python3 "$here/score.py" "$data" "$data/out-default.jsonl" --name default
decided_by "$data/report-default.json"

if "$bin" run --help 2>/dev/null | grep -q -- '--rules'; then
  step "solr-dedup urls learn" "$bin" urls learn --input "$data/out-default.jsonl" --out "$data/rules.json"
  step "solr-dedup run --rules" "$bin" run --input "$data/crawl.jsonl" --output-format docs \
    --rules "$data/rules.json" --output "$data/out-rules.jsonl" --report "$data/report-rules.json" -q \
    "${dim_args[@]}"
  step "score (with rules)" python3 "$here/score.py" "$data" "$data/out-rules.jsonl" --name rules
  decided_by "$data/report-rules.json"
else
  echo "run.sh: $bin has no 'run --rules' yet: scored today's order only" >&2
fi
