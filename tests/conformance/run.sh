#!/usr/bin/env bash
# The outcome conformance check: ranktest must report, test by test, the
# outcome the framework itself reports, on real suites nobody here wrote.
#
#   tests/conformance/run.sh RANKTEST SCRATCH WHAT
#
# RANKTEST: the ranktest binary (its helpers and plugin found beside it, as
# installed or built). SCRATCH: a folder for the configurations, references
# and run folders (made if missing; each workload writes SCRATCH/<what>/,
# emptied first, and its runs go to SCRATCH/numpy-state or
# SCRATCH/torch-state, whose runs/latest is the last one). WHAT: one of
#
#   numpy-fork   numpy's own tests (NUMPY_FOLDERS below, >= 3,000 tests),
#                pytest in one process vs ranktest's fork server, every test,
#                in worker processes (the default isolation); a test that
#                failed after others in a worker and passed alone is
#                counted apart (order-dependent), not as a difference
#   numpy-fork-test  their share hash:NUMPY_TEST_PARTITION with isolation =
#                "test": a forked process per test
#   numpy-plain  the same tests' share hash:NUMPY_PLAIN_PARTITION, ranktest
#                plain (a fresh interpreter per test) vs the same reference
#   torch-fork   libtorch-test's GoogleTest binaries (ATen, c10), each binary
#                run in one process vs ranktest's gtest fork server with
#                isolation = "test", a forked process per test (fork-exit
#                as by default), their share hash:TORCH_FORK_PARTITION
#   torch-worker their share hash:TORCH_WORKER_PARTITION in ranktest's
#                default configuration: worker processes, each running a
#                share of its binary's tests through GoogleTest's own loop;
#                a test labelled order-dependent is counted apart, as for
#                numpy
#   torch-plain  their share hash:TORCH_PLAIN_PARTITION, ranktest plain with
#                isolation = "test" (a fresh process per test)
#   all          the six, references computed once
#   fast-path    ranktest's own small suites of what a forked or worker test
#                used to get wrong (tests/python_fast_path: a conftest that
#                sets the environment, lone surrogates in messages) against
#                pytest in one process, in the default configuration and
#                with isolation = "test"; and a GoogleTest binary of
#                SUCCEED(), RecordProperty and GTEST_SKIP()
#                (CONFORMANCE_GTEST_FIXTURE: fixture_parts) against the
#                binary alone, in workers (mode plain and fork-server)
#
# Prints the timing of each phase and, per workload, compare_outcomes.py's
# count line and one "DIFF <id>: reference <x>, ranktest <y> (<reason>)" per
# difference. Exit 0 when every workload agrees (or is skipped: a line
# starting "SKIP:" says why: numpy or libtorch-test not installed), 1 on any
# difference, 2 on a usage error or a broken setup.
set -u -o pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 RANKTEST SCRATCH numpy-fork|numpy-fork-test|numpy-plain|torch-fork|torch-worker|torch-plain|all|fast-path" >&2
  exit 2
fi
RANKTEST=$(readlink -f "$1")
SCRATCH=$2
WHAT=$3
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PYTHON=${CONFORMANCE_PYTHON:-/usr/bin/python3}
JOBS=${CONFORMANCE_JOBS:-2}
TORCH_DIR=${TORCH_TEST_DIR:-/usr/lib/libtorch-test}
# numpy 1.24's ma, matrixlib and typing (4,864 tests; README.md: the
# candidates and their timings): ma is the fastest folder of more than
# 3,000 tests; matrixlib (tests inherited from linalg's test classes) and
# typing (skips decided at run time, an xfail) cost seconds, and a set of
# several folders, each with its own setup.py, gives pytest another rootdir
# for one file than for the set.
NUMPY_FOLDERS=${NUMPY_FOLDERS:-ma matrixlib typing}
NUMPY_MIN_TESTS=${NUMPY_MIN_TESTS:-3000}
# More pytest arguments for both sides (words split on spaces), e.g.
# "--deselect core/tests/test_mem_policy.py::test_new_policy".
read -r -a numpy_args <<< "${NUMPY_PYTEST_ARGS:-}"
# 106 of the 4,864 (numpy 1.24.2): 7 skipped, an xfail, 3 of matrixlib's
# inherited tests.
NUMPY_PLAIN_PARTITION=${NUMPY_PLAIN_PARTITION:-26/40}
# A third of them forked one per test (about 1,600 tests, a minute and a
# half here; all of them took five minutes on a slow day): numpy-fork runs
# every test in workers.
NUMPY_TEST_PARTITION=${NUMPY_TEST_PARTITION:-1/3}
TORCH_PLAIN_PARTITION=${TORCH_PLAIN_PARTITION:-1/24}
# Half of the 1,785 tests forked one per test (857: a minute here, with the
# default fast exit; a full exit ran libtorch's static destructors, about
# 0.35 s a test at -j 2). TORCH_FORK_PARTITION=1/1 runs every test.
TORCH_FORK_PARTITION=${TORCH_FORK_PARTITION:-1/2}
# A third of the 1,785 tests in the default configuration: every binary
# still starts, and shares of several tests still form (about 1 minute here).
TORCH_WORKER_PARTITION=${TORCH_WORKER_PARTITION:-1/3}
COMPARE="$PYTHON $HERE/compare_outcomes.py"

case $WHAT in
  numpy-fork | numpy-fork-test | numpy-plain | torch-fork | torch-worker | torch-plain | all | fast-path) ;;
  *) echo "$0: unknown workload '$WHAT'" >&2; exit 2 ;;
esac
if [ ! -x "$RANKTEST" ]; then
  echo "$0: $1 is not an executable" >&2
  exit 2
fi
mkdir -p "$SCRATCH" || exit 2
SCRATCH=$(cd "$SCRATCH" && pwd)

now() { echo $(($(date +%s%N) / 1000000)); }  # milliseconds
# phase NAME START: prints how long the phase took.
phase() {
  local ms=$(($(now) - $2))
  printf '  %-34s %4d.%d s\n' "$1" $((ms / 1000)) $((ms % 1000 / 100))
}

status=0

# --- numpy ----------------------------------------------------------------------

numpy_paths=()
numpy_ready() {
  local numpy
  if ! numpy=$("$PYTHON" -c 'import os, numpy, pytest; print(os.path.dirname(numpy.__file__))' \
      2>/dev/null); then
    echo "SKIP: numpy workloads: $PYTHON cannot import numpy and pytest (Debian: python3-numpy, python3-pytest)"
    return 1
  fi
  numpy_paths=()
  for folder in $NUMPY_FOLDERS; do
    if [ ! -d "$numpy/$folder/tests" ]; then
      echo "SKIP: numpy workloads: numpy at $numpy has no $folder/tests (its tests are not installed)"
      return 1
    fi
    numpy_paths+=("$numpy/$folder/tests")
  done
}

# pytest_toml DIR MODE [ISOLATION]: a ranktest.toml for the numpy folders.
pytest_toml() {
  {
    echo 'timeout = "5m"'
    [ -n "${3:-}" ] && echo "isolation = \"$3\""
    echo '[[source]]'
    echo 'kind = "pytest"'
    echo "python = \"$PYTHON\""
    printf 'paths = ['
    local first=1
    for path in "${numpy_paths[@]}"; do
      [ $first = 1 ] || printf ', '
      printf '"%s"' "$path"
      first=0
    done
    echo ']'
    echo "mode = \"$2\""
    if [ ${#numpy_args[@]} -gt 0 ]; then
      printf 'args = ['
      first=1
      for arg in "${numpy_args[@]}"; do
        [ $first = 1 ] || printf ', '
        printf '"%s"' "$arg"
        first=0
      done
      echo ']'
    fi
  } > "$1/ranktest.toml"
}

numpy_reference=
# The reference: pytest itself, one process, from the same folder and with
# the same path arguments as ranktest collects with (so the same rootdir and
# node ids), -p no:cacheprovider as ranktest; past collection errors, as
# ranktest goes on (a file that fails to import is one failing test).
# numpy_reference_run [PARTITION]: with a partition (hash:K/N), only that
# share's tests run (record_pytest_outcomes.py deselects the others).
numpy_reference_run() {
  local partition=${1:-}
  [ -n "$numpy_reference" ] && return 0
  local dir=$SCRATCH/numpy-reference${partition:+-partition} start
  rm -rf "$dir" && mkdir -p "$dir"
  start=$(now)
  (cd "$dir" && PYTHONPATH="$HERE${PYTHONPATH:+:$PYTHONPATH}" \
      RECORD_PYTEST_OUTCOMES="$dir/reference.json" RECORD_PYTEST_PARTITION="$partition" \
      timeout 1800 "$PYTHON" -m pytest -p no:cacheprovider -p record_pytest_outcomes -q \
      --continue-on-collection-errors ${numpy_args[@]+"${numpy_args[@]}"} \
      "${numpy_paths[@]}" > "$dir/pytest.log" 2>&1)
  local code=$?
  phase "pytest in-process (reference${partition:+, $partition})" "$start"
  if [ ! -s "$dir/reference.json" ]; then
    echo "FAIL: pytest wrote no reference (exit code $code); see $dir/pytest.log"
    tail -5 "$dir/pytest.log"
    return 1
  fi
  echo "  pytest: $(tail -1 "$dir/pytest.log")"
  local count
  count=$("$PYTHON" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' \
    "$dir/reference.json")
  if [ -z "$partition" ] && [ "$count" -lt "$NUMPY_MIN_TESTS" ]; then
    echo "FAIL: the reference holds $count tests, fewer than $NUMPY_MIN_TESTS: set NUMPY_FOLDERS to more of numpy's test folders"
    return 1
  fi
  # Only a reference of the whole set serves another workload.
  [ -z "$partition" ] && numpy_reference=$dir/reference.json
  current_reference=$dir/reference.json
}

# ranktest_run DIR STATE_DIR [ARGS...]: runs ranktest on DIR/ranktest.toml.
# The fork and plain workloads of a suite share a state folder: ranktest
# caches pytest's collection and the gtest listings there (30 s of listing
# for libtorch-test's 90 binaries).
run_dir=
ranktest_run() {
  local dir=$1 state=$2 start code
  shift 2
  start=$(now)
  (cd "$dir" && timeout "${CONFORMANCE_RUN_TIMEOUT:-1200}" "$RANKTEST" run \
      --config "$dir/ranktest.toml" --state-dir "$state" -j "$JOBS" \
      --status-level none --final-status-level none "$@" > "$dir/ranktest.log" 2>&1)
  code=$?
  phase "ranktest (exit code $code)" "$start"
  grep -E '^ranktest: (running|[0-9]+ tests in|[0-9]+ passed)|warning|error' "$dir/ranktest.log" |
    head -8 | sed 's/^/  /'
  run_dir=$(readlink -f "$state/runs/latest")
  if [ ! -f "$run_dir/events.jsonl" ]; then
    echo "FAIL: ranktest wrote no run folder; see $dir/ranktest.log"
    tail -5 "$dir/ranktest.log"
    return 1
  fi
}

# compare REFERENCE RUN_DIR [--partition P]
compare() {
  local start code
  start=$(now)
  $COMPARE compare "$@"
  code=$?
  phase "compare" "$start"
  return $code
}

numpy_workload() {  # numpy-fork | numpy-fork-test | numpy-plain
  local what=$1 dir=$SCRATCH/$1 start mode partition=() isolation=
  start=$(now)
  echo "== $what"
  numpy_ready || return 0
  if [ "$what" != numpy-plain ]; then
    mode=fork-server
    if [ "$what" = numpy-fork-test ]; then
      isolation=test
      partition=(--partition "hash:$NUMPY_TEST_PARTITION")
    fi
    numpy_reference_run || return 1
  else
    mode=plain
    partition=(--partition "hash:$NUMPY_PLAIN_PARTITION")
    if [ -n "$numpy_reference" ]; then
      current_reference=$numpy_reference
    else
      numpy_reference_run "hash:$NUMPY_PLAIN_PARTITION" || return 1
    fi
  fi
  rm -rf "$dir" && mkdir -p "$dir"
  pytest_toml "$dir" "$mode" "$isolation"
  ranktest_run "$dir" "$SCRATCH/numpy-state" "${partition[@]}" || return 1
  compare "$current_reference" "$run_dir" "${partition[@]}" || return 1
  phase "$what, all phases" "$start"
}

# --- libtorch-test --------------------------------------------------------------

torch_binaries=()
torch_ready() {
  torch_binaries=()
  if [ ! -d "$TORCH_DIR" ]; then
    echo "SKIP: torch workloads: $TORCH_DIR does not exist (Debian: libtorch-test)"
    return 1
  fi
  # Every GoogleTest binary there: those that know --gtest_list_tests (the
  # others are benchmarks and plain programs).
  for binary in "$TORCH_DIR"/*; do
    [ -f "$binary" ] && [ -x "$binary" ] || continue
    grep -q -a -m1 gtest_list_tests "$binary" && torch_binaries+=("$binary")
  done
  if [ ${#torch_binaries[@]} = 0 ]; then
    echo "SKIP: torch workloads: no GoogleTest binary in $TORCH_DIR"
    return 1
  fi
}

gtest_toml() {  # DIR MODE [ISOLATION]
  {
    echo 'timeout = "5m"'
    echo '[[source]]'
    echo 'kind = "gtest"'
    printf 'paths = ['
    local first=1 path
    # Those with at least one test: some list none (their tests are
    # static_asserts), which ranktest calls an error.
    while read -r path; do
      [ $first = 1 ] || printf ', '
      printf '"%s"' "$path"
      first=0
    done < "$torch_with_tests"
    echo ']'
    [ -n "$2" ] && echo "mode = \"$2\""
    [ -n "${3:-}" ] && echo "isolation = \"$3\""
  } > "$1/ranktest.toml"
}

torch_reference=
torch_with_tests=
torch_reference_run() {
  [ -n "$torch_reference" ] && return 0
  local dir=$SCRATCH/torch-reference start
  rm -rf "$dir" && mkdir -p "$dir"
  start=$(now)
  timeout 1200 $COMPARE gtest-reference --out "$dir/reference.json" -j "$JOBS" \
    --binaries-out "$dir/binaries.txt" --scratch "$dir" "${torch_binaries[@]}" 2>&1 |
    sed 's/^/  /'
  phase "binaries in-process (reference)" "$start"
  if [ ! -s "$dir/reference.json" ] || [ ! -s "$dir/binaries.txt" ]; then
    echo "FAIL: no gtest reference was written"
    return 1
  fi
  torch_reference=$dir/reference.json
  torch_with_tests=$dir/binaries.txt
}

torch_workload() {  # torch-fork | torch-worker | torch-plain
  local what=$1 dir=$SCRATCH/$1 start mode partition=() isolation=
  start=$(now)
  echo "== $what"
  torch_ready || return 0
  torch_reference_run || return 1
  rm -rf "$dir" && mkdir -p "$dir"
  if [ "$what" = torch-fork ]; then
    mode=fork-server
    isolation=test
    [ "$TORCH_FORK_PARTITION" = 1/1 ] || partition=(--partition "hash:$TORCH_FORK_PARTITION")
  elif [ "$what" = torch-worker ]; then
    mode=  # the default configuration
    partition=(--partition "hash:$TORCH_WORKER_PARTITION")
  else
    mode=plain
    isolation=test
    partition=(--partition "hash:$TORCH_PLAIN_PARTITION")
  fi
  gtest_toml "$dir" "$mode" "$isolation"
  ranktest_run "$dir" "$SCRATCH/torch-state" "${partition[@]}" || return 1
  compare "$torch_reference" "$run_dir" "${partition[@]}" || return 1
  phase "$what, all phases" "$start"
}

# --- ranktest's own fast-path suites ----------------------------------------------

FAST_PATH_SUITES="session_environment surrogates"
# What the session_environment suite's source gives (its test checks the
# conftest's setdefault keeps one and its pop removes the other).
FAST_PATH_ENV=(FAST_PATH_DEFAULTED="from the source" FAST_PATH_REMOVED=x)

fast_path_workload() {
  local dir=$SCRATCH/fast-path start isolation suite
  start=$(now)
  echo "== fast-path"
  "$PYTHON" -c 'import pytest' 2>/dev/null || {
    echo "SKIP: fast-path: $PYTHON cannot import pytest (Debian: python3-pytest)"
    return 0
  }
  rm -rf "$dir" && mkdir -p "$dir/suite"
  for suite in $FAST_PATH_SUITES; do
    cp -r "$HERE/../python_fast_path/$suite" "$dir/suite/" || return 1
  done
  (cd "$dir/suite" && env "${FAST_PATH_ENV[@]}" PYTHONPATH="$HERE${PYTHONPATH:+:$PYTHONPATH}" \
      RECORD_PYTEST_OUTCOMES="$dir/pytest-reference.json" \
      "$PYTHON" -m pytest -p no:cacheprovider -p record_pytest_outcomes -q \
      --continue-on-collection-errors $FAST_PATH_SUITES > "$dir/pytest.log" 2>&1)
  echo "  pytest: $(tail -1 "$dir/pytest.log")"
  [ -s "$dir/pytest-reference.json" ] || { echo "FAIL: pytest wrote no reference"; return 1; }
  for isolation in "" test; do
    {
      [ -n "$isolation" ] && echo "isolation = \"$isolation\""
      echo '[[source]]'
      echo 'kind = "pytest"'
      echo "python = \"$PYTHON\""
      printf 'paths = ['
      local first=1
      for suite in $FAST_PATH_SUITES; do
        [ $first = 1 ] || printf ', '
        printf '"%s"' "$suite"
        first=0
      done
      echo ']'
      echo 'env = { FAST_PATH_DEFAULTED = "from the source", FAST_PATH_REMOVED = "x" }'
    } > "$dir/suite/ranktest.toml"
    echo "  pytest suites, ${isolation:-default} isolation"
    ranktest_run "$dir/suite" "$dir/state-pytest-${isolation:-default}" || return 1
    compare "$dir/pytest-reference.json" "$run_dir" || return 1
  done
  local binary=${CONFORMANCE_GTEST_FIXTURE:-}
  if [ -z "$binary" ] || [ ! -x "$binary" ]; then
    echo "SKIP: fast-path gtest: CONFORMANCE_GTEST_FIXTURE names no binary (build/tests/fixtures/fixture_parts)"
    return 0
  fi
  $COMPARE gtest-reference --out "$dir/gtest-reference.json" --scratch "$dir" "$binary" 2>&1 |
    sed 's/^/  /'
  [ -s "$dir/gtest-reference.json" ] || { echo "FAIL: no gtest reference was written"; return 1; }
  local mode
  for mode in plain fork-server; do
    mkdir -p "$dir/gtest-$mode"
    {
      echo '[[source]]'
      echo 'kind = "gtest"'
      echo "paths = [\"$binary\"]"
      echo 'isolation = "worker"'
      echo "mode = \"$mode\""
    } > "$dir/gtest-$mode/ranktest.toml"
    echo "  gtest binary in workers, mode $mode"
    ranktest_run "$dir/gtest-$mode" "$dir/state-gtest-$mode" || return 1
    compare "$dir/gtest-reference.json" "$run_dir" || return 1
  done
  phase "fast-path, all phases" "$start"
}

run_one() {
  case $1 in
    numpy-*) numpy_workload "$1" || status=1 ;;
    torch-*) torch_workload "$1" || status=1 ;;
    fast-path) fast_path_workload || status=1 ;;
  esac
}

total=$(now)
echo "conformance: $WHAT with $RANKTEST, -j $JOBS; load average $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$WHAT" = all ]; then
  for what in numpy-fork numpy-fork-test numpy-plain torch-fork torch-worker torch-plain fast-path; do
    run_one "$what"
  done
  phase "all workloads" "$total"
else
  run_one "$WHAT"
fi
exit $status
