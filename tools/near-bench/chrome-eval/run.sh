#!/usr/bin/env bash
# Chrome-removal evaluation (issue 29, BENCHMARKS.md "Chrome removal"): generate a corpus, learn a
# model with `chrome learn`, run with and without it, score both against the seed formula.
#
#   bash tools/near-bench/chrome-eval/run.sh [SEED] [BIN]     (BIN default target/debug/solr-dedup)
#   GEN_ARGS=--page-lines bash tools/near-bench/chrome-eval/run.sh 1   (a title and a date inside the template)
set -euo pipefail
cd "$(dirname "$0")/../../.."
seed="${1:-1}"
bin="${2:-target/debug/solr-dedup}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
here=tools/near-bench/chrome-eval
python3 "$here/gen.py" --seed "$seed" --out "$work" ${GEN_ARGS:-}
"$bin" chrome learn --input "$work/corpus.jsonl" --out "$work/model.json" ${CHROME_LEARN_ARGS:-}
"$bin" run --input "$work/corpus.jsonl" --dimensions near --output-format docs --output "$work/plain.jsonl" --quiet
"$bin" run --input "$work/corpus.jsonl" --dimensions near --output-format docs --output "$work/chrome.jsonl" --quiet --chrome "$work/model.json"
cat "$work/corpus.jsonl" "$work/bodies.jsonl" > "$work/with-bodies.jsonl"
"$bin" run --input "$work/with-bodies.jsonl" --dimensions near --output-format docs --output "$work/exact.jsonl" --quiet --chrome "$work/model.json"
echo "== without a chrome model"
python3 "$here/score.py" "$work" "$work/plain.jsonl"
echo "== with the model of chrome learn"
python3 "$here/score.py" "$work" "$work/chrome.jsonl" --exact "$work/exact.jsonl"
