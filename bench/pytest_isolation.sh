#!/usr/bin/env bash
# 200 trivial pytest tests, each isolated in a process of its own by
# ranktest (fork server with isolation = "test", and plain), and run in
# ranktest's worker processes (isolation = "worker", the default), against
# pytest-xdist (`pytest -n 2`,
# tests share two worker processes) and a shell loop starting
# `python -m pytest <nodeid>` per test, two at a time (what scripts do), and
# against forking a child per test with no runner (the floor of isolation
# by fork on this machine).
# Prints the median of several runs of each, and ratios to ranktest's fork
# server. Usage: bench/pytest_isolation.sh [runs] (default 3).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
python=${PYTHON:-/usr/bin/python3}
ranktest=$PWD/build/ranktest
[[ -x $ranktest ]] || { echo "bench: build first (scripts/build.sh)" >&2; exit 2; }
"$python" -c "import xdist" 2>/dev/null || { echo "bench: needs python3-pytest-xdist" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/suite"
for f in $(seq 0 9); do
  for t in $(seq 0 19); do
    printf 'def test_%d():\n    assert %d + 1 == %d\n\n' "$t" "$t" "$((t + 1))"
  done > "$work/suite/test_gen_$f.py"
done
for config in fork-server:test plain:test fork-server:worker; do
  mode=${config%:*} isolation=${config#*:}
  cat > "$work/$mode-$isolation.toml" <<TOML
state-dir = "$work/state-$mode-$isolation"
isolation = "$isolation"
[[source]]
kind = "pytest"
python = "$python"
paths = ["suite"]
mode = "$mode"
TOML
done
"$python" -m pytest --collect-only -q -p no:cacheprovider "$work/suite" 2>/dev/null |
  grep '::' > "$work/nodeids"

seconds() {  # runs "$@" and prints how long it took, failing if it failed
  local start end
  start=$(date +%s.%N)
  "$@" > "$work/last.log" 2>&1 || { cat "$work/last.log" >&2; echo "bench: '$*' failed" >&2; exit 1; }
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }

declare -A time
measure() {  # name command...
  local name=$1 samples=()
  shift
  for _ in $(seq "$runs"); do samples+=("$(seconds "$@")"); done
  time[$name]=$(printf '%s\n' "${samples[@]}" | median)
}
measure ranktest_fork_server "$ranktest" run --config "$work/fork-server-test.toml" -j2
measure ranktest_plain "$ranktest" run --config "$work/plain-test.toml" -j2
measure ranktest_workers "$ranktest" run --config "$work/fork-server-worker.toml" -j2
measure pytest_xdist "$python" -m pytest -n 2 -q -p no:cacheprovider "$work/suite"
measure per_test_loop bash -c "cd '$work/suite' && xargs -P2 -I{} '$python' -m pytest -q -p no:cacheprovider {} < '$work/nodeids'"
# What isolation costs with no runner at all (bench/pytest_fork_floor.py):
# pytest collects, then forks a child per test, two alive at a time, that
# exits at once (fork_floor) or runs the test first (fork_and_run).
floor() { PYTHONPATH=$PWD/bench BENCH_FORK_RUN=$1 "$python" -m pytest -q -p no:cacheprovider \
            -p pytest_fork_floor "$work/suite"; }
measure fork_floor floor 0
measure fork_and_run floor 1

echo "200 trivial pytest tests, 2 at a time, median of $runs runs ($(nproc) CPUs):"
for name in ranktest_fork_server ranktest_plain ranktest_workers pytest_xdist per_test_loop fork_floor fork_and_run; do
  printf '  %-22s %7.2f s   %5.2fx the fork server\n' "$name" "${time[$name]}" \
    "$(echo "${time[$name]} / ${time[ranktest_fork_server]}" | bc -l)"
done
printf 'worker processes (isolation = "worker") / xdist: %.2f (goal: <= 1.0)\n' \
  "$(echo "${time[ranktest_workers]} / ${time[pytest_xdist]}" | bc -l)"
printf 'fork server, a process per test / xdist: %.2f\n' \
  "$(echo "${time[ranktest_fork_server]} / ${time[pytest_xdist]}" | bc -l)"
printf 'per-test loop / fork server: %.2f (goal: >= 5)\n' \
  "$(echo "${time[per_test_loop]} / ${time[ranktest_fork_server]}" | bc -l)"
printf 'per-test loop / forking and running each test with no runner: %.2f (the most any fork server reaches here)\n' \
  "$(echo "${time[per_test_loop]} / ${time[fork_and_run]}" | bc -l)"
printf 'fork server / forking and running each test with no runner: %.2f\n' \
  "$(echo "${time[ranktest_fork_server]} / ${time[fork_and_run]}" | bc -l)"
printf 'forking alone (children that exit at once) / xdist: %.2f (above 1: isolation by fork cannot meet the xdist goal here)\n' \
  "$(echo "${time[fork_floor]} / ${time[pytest_xdist]}" | bc -l)"
