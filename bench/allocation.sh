#!/usr/bin/env bash
# A suite across a Slurm allocation: 40 tests of 1.5 s each (the fixture
# tests/fixtures/steps.cpp) on a simulated cluster of three nodes of 8 CPUs
# (tests/slurm/cluster.sh), run by ranktest inside `salloc --nodes=3`
# (each test a job step on a node with a free slot, 24 at once) and inside
# `salloc --nodes=1` with -j 8 (one node's CPUs: the tests run on the batch
# node, no step at all, which favours it). The runs alternate. Prints the
# median wall time of each and the ratio three nodes / one node: the ideal
# is 2 rounds of 24 against 5 rounds of 8, 0.40, plus what each job step
# costs. Usage: bench/allocation.sh [runs] (default 3). Needs root, the
# packages scripts/install-deps.sh installs and a built tree (the
# fixtures: scripts/build.sh -DRANKTEST_BUILD_TESTS=ON).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
ranktest=$PWD/build/ranktest
steps=$PWD/build/tests/fixtures/fixture_steps
[[ -x $ranktest && -x $steps ]] ||
  { echo "bench: build first (scripts/build.sh -DRANKTEST_BUILD_TESTS=ON)" >&2; exit 2; }

work=$(mktemp -d)
exec 9>/tmp/ranktest-simulated-cluster.lock
flock 9  # the integration tests' simulated clusters share the bridge's addresses
trap 'bash tests/slurm/cluster.sh stop "$work/cluster" >/dev/null 2>&1; rm -rf "$work"' EXIT
SLURM_CONF=$(bash tests/slurm/cluster.sh start "$work/cluster" 3)
export SLURM_CONF
printf '[[source]]\nkind = "gtest"\npaths = ["%s"]\n' "$steps" > "$work/ranktest.toml"

# run NODES [ranktest args]: the wall time of one run, every test passing.
run() {
  local nodes=$1 start end
  shift
  rm -rf "$work/state"
  start=$(date +%s.%N)
  (cd "$work" && salloc --nodes="$nodes" --exclusive --job-name=ranktest-bench -- \
     "$ranktest" run --state-dir "$work/state" "$@" > "$work/last.log" 2>&1) ||
    { tail -20 "$work/last.log" >&2; echo "bench: the run on $nodes node(s) failed" >&2; exit 1; }
  end=$(date +%s.%N)
  grep -q '^ranktest: 40 passed, 0 failed' "$work/last.log" ||
    { tail -5 "$work/last.log" >&2; echo "bench: not every test passed" >&2; exit 1; }
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f\n", b - a }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

one=() three=()
for _ in $(seq "$runs"); do
  one+=("$(run 1 -j 8)")
  three+=("$(run 3)")
done
m1=$(printf '%s\n' "${one[@]}" | median)
m3=$(printf '%s\n' "${three[@]}" | median)
echo "40 tests of 1.5 s, median of $runs runs on $(nproc) CPUs:"
printf '  one node, -j 8 (no job steps)     %6.2f s   (runs: %s)\n' "$m1" "${one[*]}"
printf '  three nodes, 24 slots (job steps) %6.2f s   (runs: %s)\n' "$m3" "${three[*]}"
awk -v a="$m3" -v b="$m1" 'BEGIN { printf "  ratio three nodes / one node       %6.2f   (ideal 0.40: 2 rounds of 24 against 5 of 8)\n", a / b }'
