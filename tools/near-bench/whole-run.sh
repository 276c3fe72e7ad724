#!/usr/bin/env bash
# A first run in file mode with the near dimension and without it, on the same generated corpus,
# interleaved (BENCHMARKS.md, "Near-duplicates in whole runs"). Prints wall time, CPU and peak RSS
# of every run.
#
#   bash tools/near-bench/whole-run.sh [DOCS] [ROUNDS] [WORKDIR]
#
# DOCS 100000 by default (540 MB of JSON Lines); 1000000 for the memory figures (5.4 GB).
set -euo pipefail
cd "$(dirname "$0")/../.."
docs="${1:-100000}"
rounds="${2:-3}"
work="${3:-$(mktemp -d)}"
mkdir -p "$work"
cargo build -q --release --bin solr-dedup --example gen_corpus
corpus="$work/c$docs.jsonl"
[ -s "$corpus" ] || target/release/examples/gen_corpus --docs "$docs" --seed 1 --out "$corpus"
six=exact,fuzzy,title,description,www,http
for r in $(seq "$rounds"); do
  for dims in "$six" "$six,near"; do
    label=$([ "$dims" = "$six" ] && echo "six " || echo "near")
    /usr/bin/time -f "$label round $r: %e s wall, %U s user, %S s sys, %M KB peak" \
      target/release/solr-dedup run --input "$corpus" --output "$work/u.jsonl" -q \
      --dimensions "$dims" --report "$work/r-$label-$r.json"
  done
done
