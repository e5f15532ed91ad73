#!/usr/bin/env bash
# One test printing 2 GiB (BENCH_OUTPUT_MIB to change it): ranktest's peak
# memory, and its throughput against the same test writing straight to a
# file and against `head -c` copying the same bytes (the disk's pace).
# Usage: bench/big_output.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export BENCH_OUTPUT_MIB=${BENCH_OUTPUT_MIB:-2048}
binary=$PWD/build/bench/print_bytes
[[ -x $binary ]] || { echo "bench: build first (scripts/build.sh)" >&2; exit 2; }
work=$(mktemp -d -p "${BENCH_DIR:-$PWD/build}")
trap 'rm -rf "$work"' EXIT
bytes=$((BENCH_OUTPUT_MIB * 1024 * 1024))
now() { date +%s.%N; }

start=$(now); head -c "$bytes" /dev/zero > "$work/copy"; copy=$(echo "$(now) - $start" | bc)
rm -f "$work/copy"
start=$(now); "$binary" > "$work/direct"; direct=$(echo "$(now) - $start" | bc)
rm -f "$work/direct"
start=$(now)
/usr/bin/time -f '%M' -o "$work/rss" build/ranktest run --state-dir "$work/state" \
  --no-tests=fail "$binary" > "$work/ranktest.out"
through=$(echo "$(now) - $start" | bc)
rss_kib=$(tail -1 "$work/rss")

printf 'one test printing %d MiB:\n' "$BENCH_OUTPUT_MIB"
printf '  head -c to a file      %6.2f s\n' "$copy"
printf '  the test to a file     %6.2f s\n' "$direct"
printf '  the test via ranktest  %6.2f s   %.2fx the test alone, %.2fx head -c\n' "$through" \
  "$(echo "$through / $direct" | bc -l)" "$(echo "$through / $copy" | bc -l)"
printf 'peak RSS of ranktest and its test: %.1f MiB (goal: <= 64 MiB)\n' "$(echo "$rss_kib / 1024" | bc -l)"
tail -1 "$work/ranktest.out"
