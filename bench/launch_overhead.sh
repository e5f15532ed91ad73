#!/usr/bin/env bash
# Launch overhead: one generated GoogleTest binary with 2,000 trivial tests,
# two at a time, by
#   - ranktest run -j2 in its default configuration (no ranktest.toml):
#     workers, each running a share of the binary through GoogleTest's own
#     loop, the mode chosen by the binary's start-up
#   - ranktest run -j2 with isolation = "test" (a fresh process per test)
#   - ranktest run -j2 with isolation = "test" and mode = "fork-server"
#     (the binary started once, each test a fork of it after its static
#     initialisation)
#   - ctest -j2, the binary registered with gtest_discover_tests
#   - ranktest run -j2 with that CTest build folder as a kind = "ctest" source
#   - the floor: xargs -P2 starting the binary once per test with
#     --gtest_filter (no result parsing, no isolation beyond the process)
# Prints the median of several runs of each and the ratios.
# Usage: bench/launch_overhead.sh [runs] (default 3). BENCH_TESTS=N changes
# the number of tests.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
tests=${BENCH_TESTS:-2000}
ranktest=$PWD/build/ranktest
[[ -x $ranktest ]] || { echo "bench: build first (scripts/build.sh)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source bench/trivial_gtest.sh
build_trivial_gtest "$work" "$tests"
"$binary" --gtest_list_tests | awk '/^[^ ]/{suite=$1} /^  /{print suite $1}' > "$work/names"
[[ $(wc -l < "$work/names") -eq $tests ]] || { echo "bench: listing gave the wrong count" >&2; exit 1; }

seconds() {  # runs "$@" and prints how long it took, failing if it failed
  local start end
  start=$(date +%s.%N)
  "$@" > "$work/last.log" 2>&1 || { tail -20 "$work/last.log" >&2; echo "bench: '$*' failed" >&2; exit 1; }
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f\n", b - a }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", a / b }'; }

# Each ranktest run gets a state folder of its own, and none is deleted
# before the end: deleting a run's thousands of files just before the next
# run makes creating files slow on an ext4 without a journal (it probes
# every inode freed in the last minutes before reusing one), which would
# measure the disk, not the runner; ctest writes no file per test.
state=
new_state() { state=$(mktemp -d "$work/state.XXXX"); }
# The runner's own CPU per test (run-finished's runner_cpu_ms), last run.
runner_cpu() {
  grep -o '"runner_cpu_ms":[0-9]*' "$state/runs/latest/events.jsonl" | cut -d: -f2
}
run_default() {
  new_state
  "$ranktest" run -j2 --state-dir "$state" "$binary"
  runner_cpu > "$work/cpu.default"
}
run_ranktest() {
  new_state
  printf 'isolation = "test"\n[[source]]\npaths = ["%s"]\nmode = "plain"\n' "$binary" > "$work/plain.toml"
  "$ranktest" run -j2 --state-dir "$state" --config "$work/plain.toml"
  runner_cpu > "$work/cpu.plain"
}
run_forkserver() {
  new_state
  printf 'isolation = "test"\n[[source]]\npaths = ["%s"]\nmode = "fork-server"\n' "$binary" > "$work/forkserver.toml"
  "$ranktest" run -j2 --state-dir "$state" --config "$work/forkserver.toml"
  runner_cpu > "$work/cpu.forkserver"
  # Every test forked, none fell back to a fresh process.
  ! grep -q "cannot fork tests" "$work/last.log" 2>/dev/null
}
run_ctest() { (cd "$work/build" && ctest -j2 --output-on-failure); }
# The same CTest project as a kind = "ctest" source: the commands ctest
# would run, listed by ctest itself, under ranktest's supervision.
run_ctestsource() {
  new_state
  printf '[[source]]\nkind = "ctest"\npaths = ["%s"]\n' "$work/build" > "$work/ctest.toml"
  "$ranktest" run -j2 --state-dir "$state" --config "$work/ctest.toml"
}
run_floor() { xargs -P2 -I{} "$binary" --gtest_filter={} < "$work/names"; }

# Round by round, every tool once per round: a machine that gets busier or
# quieter meanwhile weighs on every tool alike.
tools=(floor default ranktest forkserver ctest ctestsource)
declare -A samples times
for _ in $(seq "$runs"); do
  for tool in "${tools[@]}"; do samples[$tool]+="$(seconds "run_$tool") "; done
done
for tool in "${tools[@]}"; do
  times[$tool]=$(printf '%s\n' ${samples[$tool]} | median)
done
printf 'launch overhead: %d trivial gtest tests, 2 at a time (median of %d runs)\n' \
  "$tests" "$runs"
printf '  %-44s %8.2f s\n' "floor: xargs -P2 <binary> --gtest_filter=<test>" "${times[floor]}"
printf '  %-44s %8.2f s   %.3fx ctest -j2   (goal <= 0.2x)\n' "ranktest run -j2, default (workers)" \
  "${times[default]}" "$(ratio "${times[default]}" "${times[ctest]}")"
printf '  %-44s %8.2f s   %.2fx the floor   (goal <= 1.10x)\n' 'ranktest run -j2, isolation = "test"' \
  "${times[ranktest]}" "$(ratio "${times[ranktest]}" "${times[floor]}")"
printf '  %-44s %8.2f s   %.2fx the floor; %.1fx faster than the floor\n' \
  '  the same, mode = "fork-server"' "${times[forkserver]}" \
  "$(ratio "${times[forkserver]}" "${times[floor]}")" "$(ratio "${times[floor]}" "${times[forkserver]}")"
printf '  %-44s %8.2f s   %.2fx the floor; ranktest is %.2fx faster   (goal >= 2x)\n' \
  "ctest -j2 (gtest_discover_tests)" "${times[ctest]}" \
  "$(ratio "${times[ctest]}" "${times[floor]}")" "$(ratio "${times[ctest]}" "${times[ranktest]}")"
printf '  %-44s %8.2f s   %.2fx the floor; %.2fx faster than ctest -j2 on its own project\n' \
  'ranktest run -j2, kind = "ctest" source' "${times[ctestsource]}" \
  "$(ratio "${times[ctestsource]}" "${times[floor]}")" "$(ratio "${times[ctest]}" "${times[ctestsource]}")"
# The machine's speed drifts by more than the margins measured here: the
# ratio of two tools within each round (run one after the other) drifts
# less than either time, so its median, its range and how many rounds each
# tool won are printed too.
paired() {  # paired A B: "median M (min..max), A slower in K of N rounds"
  paste -d' ' <(printf '%s\n' ${samples[$1]}) <(printf '%s\n' ${samples[$2]}) |
    awk '{ r = $1 / $2; print r }' | sort -g |
    awk '{ a[NR] = $1; if ($1 > 1) won++ }
         END { printf "median %.2fx (%.2f..%.2f), faster in %d of %d rounds",
                      a[int((NR + 1) / 2)], a[1], a[NR], won, NR }'
}
printf '  %-44s %s\n' "  per round, ctest -j2 / kind = \"ctest\":" "$(paired ctest ctestsource)"
printf '  %-44s %s\n' "  per round, ctest -j2 / ranktest run -j2:" "$(paired ctest ranktest)"
per_test() { awk -v ms="$(cat "$1")" -v n="$tests" 'BEGIN { printf "%.2f", ms / n }'; }
printf '  runner CPU per test (its own, not the tests'"'"'): default %s ms, plain %s ms, fork server %s ms   (goal <= 0.3 ms)\n' \
  "$(per_test "$work/cpu.default")" "$(per_test "$work/cpu.plain")" "$(per_test "$work/cpu.forkserver")"
