#!/usr/bin/env bash
# Real suites nobody here wrote, each against its reference measured in the
# same run (docs/benchmarks.md, "Real suites"):
#   torch   the ATen/c10 gtest binaries of Debian's libtorch-test: each binary
#           run in-process one after another, against ranktest -j2 with every
#           test isolated in a forked process (mode = "fork-server"); and
#           ranktest's listing of them, cold and again with nothing changed.
#           torch's test_api too: python3-torch ships it as torch/bin/test_api
#           (TORCH_TEST_API names another build).
#   numpy   numpy's installed linalg and lib tests (python3-numpy): pytest -n 2
#           (xdist, no isolation), against ranktest -j2 with the default fork
#           server and, for linalg, plain mode (a fresh interpreter per test).
# A suite that is not installed is skipped with a line saying so.
#   quick   pyflakes' and psutil's own tests (thousands of millisecond tests).
# numpy and quick run pytest in one process, pytest -n 2 and ranktest in
# both isolations (a process per test, and isolation = "worker").
# Usage: bench/real_suites.sh [torch|test_api|numpy|quick|all]
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
ranktest=$PWD/build/ranktest
[[ -x $ranktest ]] || { echo "bench: build first (scripts/build.sh)" >&2; exit 2; }
python=/usr/bin/python3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

seconds() {  # seconds COMMAND...: wall time of the command, its output dropped
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1 || true
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
ratio() { echo "scale=2; $1 / $2" | bc; }

torch_binaries() {
  # Every gtest binary of the package: not the benchmark, and not the ones
  # that register no test.
  for binary in /usr/lib/libtorch-test/*; do
    [[ $binary == *benchmark* ]] && continue
    "$binary" --gtest_list_tests 2>/dev/null | grep -q '^  ' && echo "$binary"
  done
}

if [[ $what == torch || $what == all ]]; then
  if [[ ! -d /usr/lib/libtorch-test ]]; then
    echo "torch: SKIP (libtorch-test is not installed: apt-get install libtorch-test)"
  else
    mapfile -t binaries < <(torch_binaries)
    folder=$scratch/torch
    mkdir -p "$folder"
    {
      echo '[[source]]'
      printf 'paths = ['
      printf '"%s", ' "${binaries[@]}"
      echo ']'
      echo 'mode = "fork-server"'
    } > "$folder/ranktest.toml"
    # In the scratch folder: some of them write files where they run
    # (a serialization test leaves output.zip).
    in_process=$(cd "$folder" && seconds bash -c 'for b in "$@"; do "$b"; done' _ "${binaries[@]}")
    cold=$(seconds "$ranktest" list --config "$folder/ranktest.toml")
    warm=$(seconds "$ranktest" list --config "$folder/ranktest.toml")
    run=$(seconds "$ranktest" run -j2 --config "$folder/ranktest.toml" --status-level none)
    # The count line ("ranktest: N tests (M skipped)") is on stderr.
    tests=$("$ranktest" list --config "$folder/ranktest.toml" 2>&1 >/dev/null | tail -1)
    echo "torch: ${#binaries[@]} binaries, $tests"
    echo "torch: in-process, one binary after another: ${in_process} s"
    echo "torch: ranktest -j2 fork server, every test isolated: ${run} s = $(ratio "$run" "$in_process")x in-process (goal <= 2x)"
    echo "torch: listing cold ${cold} s, again unchanged ${warm} s (goal <= 3 s)"
    first=$(echo "$cold + $run" | bc)
    echo "torch: a first run, listing cold: ${first} s = $(ratio "$first" "$in_process")x in-process"
  fi
fi

# wall and CPU seconds of a command, its output dropped: "WALL CPU"
timed() {
  /usr/bin/time -o "$scratch/time" -f '%e %U %S' "$@" >/dev/null 2>&1 || true
  local wall user sys
  read -r wall user sys < <(tail -1 "$scratch/time")
  echo "$wall $(echo "$user + $sys" | bc)"
}

# torch's test_api (the C++ frontend's tests): python3-torch ships it in
# torch/bin, not libtorch-test; TORCH_TEST_API names another build. The
# binary alone against ranktest -j2 with a process forked per test (its
# exit full: libtorch's teardown in every test; and fast) and with worker
# processes (isolation = "worker": each runs a share of the
# binary's tests through GoogleTest's own loop), plain and forked.
if [[ $what == torch || $what == test_api || $what == all ]]; then
  test_api=${TORCH_TEST_API:-/usr/lib/python3/dist-packages/torch/bin/test_api}
  if [[ ! -x $test_api ]]; then
    echo "torch test_api: SKIP ($test_api is not there: install python3-torch, or set TORCH_TEST_API=/path/to/test_api)"
  else
    folder=$scratch/test_api
    mkdir -p "$folder"
    # "default default default": no setting but the path, as a new user
    # runs it (workers; the mode chosen by the binary's start-up).
    # fork-exit = "full" last: each forked test runs libtorch's teardown
    # (minutes).
    setups=("default default default" "test fork-server fast" "worker plain full"
            "worker fork-server full" "test fork-server full")
    for setup in "${setups[@]}"; do
      read -r isolation mode exit <<<"$setup"
      if [[ $isolation == default ]]; then
        printf '[[source]]\npaths = ["%s"]\n' "$test_api" > "$folder/$isolation-$mode-$exit.toml"
      else
        printf '[[source]]\npaths = ["%s"]\nmode = "%s"\nisolation = "%s"\nfork-exit = "%s"\n' \
          "$test_api" "$mode" "$isolation" "$exit" > "$folder/$isolation-$mode-$exit.toml"
      fi
      "$ranktest" list --config "$folder/$isolation-$mode-$exit.toml" >/dev/null 2>&1 || true  # listing cached
    done
    read -r alone alone_cpu < <(cd "$folder" && timed "$test_api")
    echo "torch test_api: the binary alone ${alone} s (cpu ${alone_cpu} s)"
    for setup in "${setups[@]}"; do
      read -r isolation mode exit <<<"$setup"
      goal=$([[ $isolation == test ]] && echo "1.5x" || echo "0.7x")
      read -r run run_cpu < <(timed "$ranktest" run -j2 --config "$folder/$isolation-$mode-$exit.toml" --status-level none)
      what="isolation = \"$isolation\", $mode, fork-exit = \"$exit\""
      [[ $isolation == default ]] && what="no configuration (the defaults)"
      echo "torch test_api: ranktest -j2 $what: ${run} s = $(ratio "$run" "$alone")x the binary alone (goal <= $goal), cpu ${run_cpu} s"
    done
  fi
fi


# pytest_suite NAME TESTS: pytest in one process, pytest -n 2 (xdist, no
# isolation), and ranktest -j2 in both isolations: a process per test
# (forked from the fork server) and worker processes (isolation =
# "worker"), each in a folder of its own (its own history), collection
# cached. Worker isolation runs twice: the first run tries each test that
# fails in a worker alone as a fresh process; the second, with the first's
# history, does not for a test that failed the same way alone.
pytest_suite() {
  local name=$1 tests=$2 folder=$scratch/pytest-$1 isolation
  for isolation in test worker; do
    mkdir -p "$folder/$isolation"
    printf 'isolation = "%s"\n[[source]]\nkind = "pytest"\npython = "%s"\npaths = ["%s"]\n' \
      "$isolation" "$python" "$tests" > "$folder/$isolation/ranktest.toml"
    "$ranktest" list --config "$folder/$isolation/ranktest.toml" >/dev/null 2>&1 || true
  done
  local one xdist test worker again
  read -r one one_cpu < <(timed "$python" -m pytest -q -p no:cacheprovider "$tests")
  read -r xdist xdist_cpu < <(timed "$python" -m pytest -q -n 2 -p no:cacheprovider "$tests")
  # The floor of test isolation: forking a child per test, two at a time,
  # with no runner (bench/pytest_fork_floor.py), the child running the
  # test's protocol alone, or the whole hook as ranktest's forked test does.
  read -r floor floor_cpu < <(PYTHONPATH=$PWD/bench BENCH_FORK_RUN=1 timed "$python" -m pytest -q \
    -p no:cacheprovider -p pytest_fork_floor "$tests")
  read -r hook hook_cpu < <(PYTHONPATH=$PWD/bench BENCH_FORK_RUN=hook timed "$python" -m pytest -q \
    -p no:cacheprovider -p pytest_fork_floor "$tests")
  read -r test test_cpu < <(timed "$ranktest" run -j2 --config "$folder/test/ranktest.toml" --status-level none)
  read -r worker worker_cpu < <(timed "$ranktest" run -j2 --config "$folder/worker/ranktest.toml" --status-level none)
  read -r again again_cpu < <(timed "$ranktest" run -j2 --config "$folder/worker/ranktest.toml" --status-level none)
  local counts
  counts=$("$ranktest" report "$folder/worker/.ranktest/runs/latest" 2>&1 | tail -1 || true)
  echo "$name: pytest ${one} s (cpu ${one_cpu} s); pytest -n 2 ${xdist} s (cpu ${xdist_cpu} s)"
  echo "$name: forking each test with no runner ${floor} s (cpu ${floor_cpu} s), running the whole hook ${hook} s (cpu ${hook_cpu} s)"
  echo "$name: ranktest -j2 isolation = \"test\" ${test} s = $(ratio "$test" "$xdist")x xdist wall, $(ratio "$test" "$floor")x the fork floor (goal <= 1.15x), $(ratio "$test" "$hook")x with the hook; cpu ${test_cpu} s = $(ratio "$test_cpu" "$xdist_cpu")x xdist"
  echo "$name: ranktest -j2 isolation = \"worker\" ${worker} s = $(ratio "$worker" "$xdist")x xdist wall (goal <= 1.0x), cpu ${worker_cpu} s = $(ratio "$worker_cpu" "$xdist_cpu")x (goal <= 1.2x)"
  echo "$name: the same again, with its history ${again} s = $(ratio "$again" "$xdist")x xdist wall, cpu ${again_cpu} s = $(ratio "$again_cpu" "$xdist_cpu")x; ${counts}"
}

numpy_run() {  # numpy_run NAME FOLDER
  local name=$1 tests=$2 folder=$scratch/numpy-$1
  pytest_suite "numpy $name" "$tests"
  if [[ $name == linalg ]]; then
    mkdir -p "$folder"
    printf '[[source]]\nkind = "pytest"\npython = "%s"\npaths = ["%s"]\nmode = "plain"\n' \
      "$python" "$tests" > "$folder/ranktest.toml"
    local plain xdist
    xdist=$(seconds "$python" -m pytest -q -n 2 -p no:cacheprovider "$tests")
    plain=$(seconds "$ranktest" run -j2 --config "$folder/ranktest.toml" --status-level none)
    echo "numpy $name: ranktest plain ${plain} s = $(ratio "$plain" "$xdist")x xdist"
  fi
}

if [[ $what == numpy || $what == all ]]; then
  numpy=/usr/lib/python3/dist-packages/numpy
  if [[ ! -d $numpy/linalg/tests ]] || ! "$python" -c 'import xdist' 2>/dev/null; then
    echo "numpy: SKIP (needs python3-numpy and python3-pytest-xdist)"
  else
    numpy_run linalg "$numpy/linalg/tests"
    numpy_run lib "$numpy/lib/tests"
  fi
fi

# Suites of many millisecond tests, where a process per test costs most.
if [[ $what == quick || $what == all ]]; then
  for suite in pyflakes psutil; do
    folder=/usr/lib/python3/dist-packages/$suite
    tests=$folder/test
    [[ -d $tests ]] || tests=$folder/tests
    if [[ ! -d $tests ]] || ! "$python" -c 'import xdist' 2>/dev/null; then
      echo "$suite: SKIP (needs python3-$suite and python3-pytest-xdist)"
    else
      pytest_suite "$suite" "$tests"
    fi
  done
fi
