#!/usr/bin/env bash
# The cost of network = "isolated": one generated GoogleTest binary with
# 1,000 trivial tests, each in a process of its own, two at a time, run by
# ranktest with network = "host" and with network = "isolated" (a network
# namespace per test, lo up), plainly and forked from a fork server. The
# runs alternate, so both see the same machine. Prints the median wall
# time and CPU time (ranktest and its tests) of several runs of each, the
# ratio isolated/host, and the extra time per test. The kernel frees each
# namespace later in a worker thread, whose CPU time is not counted.
# Usage: bench/network_isolation.sh [runs] (default 3). BENCH_TESTS=N
# changes the number of tests, BENCH_JOBS=N how many run at once (default
# 2). Needs root or unprivileged user namespaces.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
tests=${BENCH_TESTS:-1000}
jobs=${BENCH_JOBS:-2}
ranktest=$PWD/build/ranktest
[[ -x $ranktest ]] || { echo "bench: build first (scripts/build.sh)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source bench/trivial_gtest.sh
build_trivial_gtest "$work" "$tests"

# Runs "$@" and prints its wall time and the CPU time (user + system) of
# ranktest and every process it reaped (tests, fork servers), in seconds;
# fails if it failed. The CPU time is what a loaded machine changes least.
measure() {
  local start end usage
  start=$(date +%s.%N)
  # `times` in the very shell that waited for ranktest (not in a pipe's
  # subshell): its second line is that shell's children's times.
  usage=$("$@" > "$work/last.log" 2>&1 && times) ||
    { tail -20 "$work/last.log" >&2; echo "bench: '$*' failed" >&2; exit 1; }
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" -v u="$usage" 'BEGIN {
    split(u, lines, "\n"); split(lines[2], t, /[ms ]+/); printf "%.3f %.3f\n", b - a, t[1] * 60 + t[2] + t[3] * 60 + t[4] }'
}

# run MODE NETWORK: the whole binary, every test passing, and (isolated)
# every test said isolated by run-started.
run() {
  rm -rf "$work/state"
  printf 'network = "%s"\n[[source]]\npaths = ["%s"]\nmode = "%s"\n' "$2" "$binary" "$1" \
    > "$work/$1-$2.toml"
  "$ranktest" run -j"$jobs" --state-dir "$work/state" --config "$work/$1-$2.toml"
  local isolated
  isolated=$(head -1 "$work/state/runs/latest/events.jsonl" |
             python3 -c 'import json,sys; print(len(json.load(sys.stdin)["network_isolated"]))')
  [[ $2 == host && $isolated == 0 || $2 == isolated && $isolated == "$tests" ]]
  ! grep -q "cannot fork tests" "$work/last.log" 2>/dev/null
}

declare -A wall cpu
for _ in $(seq "$runs"); do
  for mode in plain fork-server; do
    for network in host isolated; do
      read -r w c < <(measure run "$mode" "$network")
      wall[$mode-$network]+="$w "
      cpu[$mode-$network]+="$c "
    done
  done
done
printf 'network = "isolated": %d trivial gtest tests, a process each, %d at a time (median of %d runs)\n' \
  "$tests" "$jobs" "$runs"
for mode in plain fork-server; do
  for what in wall cpu; do
    declare -n times=$what
    host=$(printf '%s\n' ${times[$mode-host]} | median)
    isolated=$(printf '%s\n' ${times[$mode-isolated]} | median)
    awk -v m="$mode" -v w="$what" -v h="$host" -v i="$isolated" -v n="$tests" 'BEGIN {
      printf "  mode = %-13s %-4s host %7.2f s   isolated %7.2f s   ratio %.2fx   %+.2f ms per test\n",
             "\"" m "\"", w, h, i, i / h, (i - h) * 1000 / n }'
    unset -n times
  done
done
