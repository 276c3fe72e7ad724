#!/usr/bin/env bash
# Near-duplicate signing speed, solr-dedup against its Python peers, on the same 5 KB generated pages
# in one run (BENCHMARKS.md, "Near-duplicate signatures"). Needs Python 3 and the package index.
#
#   bash tools/near-bench/run.sh [DOCS]
set -euo pipefail
cd "$(dirname "$0")/../.."
docs="${1:-2000}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q datasketch==2.0.0 rensa==0.5.0
cargo run -q --release --example gen_corpus -- --docs "$docs" --seed 7 --page-kb 5 --out "$work/pages.jsonl"
echo "solr-dedup (one core):"
NEAR_SPEED_PARTS=1 taskset -c 0 cargo run -q --release --example near_speed -- "$work/pages.jsonl" --rounds 5
echo "peers (one core):"
taskset -c 0 "$work/venv/bin/python" tools/near-bench/peers.py "$work/pages.jsonl"
