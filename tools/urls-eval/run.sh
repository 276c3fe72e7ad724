#!/usr/bin/env bash
# URL rules against MaybeDont on a simulated crawl (tools/urls-eval/README.md).
#
#   bash tools/urls-eval/run.sh [--scale F] [--seed N] [--ours-only] [--check] [--work DIR] [--build] [--chrome]
#
#   --scale F     size of the simulated crawl (1: about 14,000 pages, 4,000 queries)
#   --seed N      simulation seed (default 1)
#   --ours-only   skip MaybeDont
#   --check       exit 1 unless ours has ROC AUC >= 0.97 and precision >= 0.99 at recall >= 0.9
#   --work DIR    data and venv (default $URLS_EVAL_WORK or /tmp/urls-eval)
#   --build       cargo build --release even when the binary exists
#   --chrome      ours with each site's chrome learnt first (chrome learn, run --chrome): print
#                 views then cluster with their pages
#
# Builds target/release/solr-dedup only when it is missing (or with --build). MaybeDont runs in
# a venv under the work dir (python3 -m venv; pip install MaybeDont==0.1.1 w3lib).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
scale=1 seed=1 ours_only=0 check=0 build=0 chrome=0
work="${URLS_EVAL_WORK:-/tmp/urls-eval}"
while [ $# -gt 0 ]; do
  case "$1" in
    --scale) scale="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --ours-only) ours_only=1; shift ;;
    --check) check=1; shift ;;
    --build) build=1; shift ;;
    --chrome) chrome=1; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
data="$work/seed$seed-scale$scale"
bin="$root/target/release/solr-dedup"
venv="$work/venv"
mkdir -p "$data"

timings=()
step() {  # step NAME COMMAND...: run, time, remember
  local name="$1"; shift
  local t0 t1
  t0=$(date +%s.%N)
  echo "== $name"
  "$@"
  t1=$(date +%s.%N)
  timings+=("$(awk -v n="$name" -v a="$t0" -v b="$t1" 'BEGIN { printf "%-26s %8.2f s", n, b - a }')")
}

if [ ! -x "$bin" ] || [ "$build" = 1 ]; then
  step "cargo build --release" bash -c "cd '$root' && cargo build --release --bin solr-dedup"
fi
have_urls=1
"$bin" urls --help >/dev/null 2>&1 || have_urls=0
if [ "$have_urls" = 0 ]; then
  if [ "$ours_only" = 1 ] || [ "$check" = 1 ]; then
    echo "run.sh: $bin has no 'urls' subcommand; rebuild it (run.sh --build)" >&2
    exit 2
  fi
  echo "run.sh: $bin has no 'urls' subcommand yet: scoring MaybeDont only (run.sh --build to rebuild)" >&2
fi

step "simulate" python3 "$here/simulate.py" --seed "$seed" --scale "$scale" --out "$data"

scores=()
if [ "$have_urls" = 1 ]; then
  chrome_args=()
  if [ "$chrome" = 1 ]; then
    step "solr-dedup chrome learn" "$bin" chrome learn --input "$data/crawl.jsonl" --out "$data/chrome.json" -q
    chrome_args=(--chrome "$data/chrome.json")
  fi
  step "solr-dedup run (sign)" "$bin" run --input "$data/crawl.jsonl" --output "$data/signed.jsonl" \
    --output-format docs -q "${chrome_args[@]}"
  step "solr-dedup urls learn" "$bin" urls learn --input "$data/signed.jsonl" --out "$data/rules.json"
  predict() { "$bin" urls predict --rules "$data/rules.json" --input "$data/signed.jsonl" - \
    < "$data/query-urls.txt" > "$data/ours.jsonl"; }
  step "solr-dedup urls predict" predict
  step "score ours" python3 "$here/score.py" "$data" "$data/ours.jsonl" --name ours --docs "$data/signed.jsonl"
  scores+=("$data/score-ours.json")
fi

if [ "$ours_only" = 0 ]; then
  if ! "$venv/bin/python" -c 'import maybedont, w3lib' >/dev/null 2>&1; then
    setup_venv() {
      python3 -m venv "$venv"
      "$venv/bin/pip" install -q --disable-pip-version-check MaybeDont==0.1.1 w3lib
    }
    step "venv (MaybeDont 0.1.1)" setup_venv
  fi
  step "MaybeDont learn+predict" env PYTHONHASHSEED=0 "$venv/bin/python" "$here/maybedont_run.py" "$data"
  step "score MaybeDont" python3 "$here/score.py" "$data" "$data/maybedont.jsonl" --name maybedont
  scores+=("$data/score-maybedont.json")
fi

echo
echo "== side by side ($data)"
python3 "$here/compare.py" "${scores[@]}"
echo
echo "== timings"
printf '%s\n' "${timings[@]}"
if [ "$check" = 1 ]; then
  python3 "$here/compare.py" --check "$data/score-ours.json"
fi
