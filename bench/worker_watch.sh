#!/usr/bin/env bash
# What watching the workers of pytest tests costs (watch-workers, on by
# default): the same suite run by ranktest with the watch and without it
# (watch-workers = false), in the fork server, as this user (the kernel's
# process events where they can be had) and, when run as root, as the user
# nobody too (the watch inside pytest, as in most CI). The suite: 200
# trivial tests and 20 that each start two multiprocessing workers, plus,
# with `real`, numpy's linalg tests from Debian's python3-numpy.
# Prints the median of several runs of each and the ratio with/without
# (goal: <= 1.02). Usage: bench/worker_watch.sh [runs] [real] (default 5).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
real=${2:-}
python=${PYTHON:-/usr/bin/python3}
ranktest=$PWD/build/ranktest
[[ -x $ranktest ]] || { echo "bench: build first (scripts/build.sh)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 0777 "$work"
mkdir -p "$work/suite"
for f in $(seq 0 9); do
  for t in $(seq 0 19); do
    printf 'def test_%d():\n    assert %d + 1 == %d\n\n' "$t" "$t" "$((t + 1))"
  done > "$work/suite/test_gen_$f.py"
done
{
  echo 'import multiprocessing'
  echo
  echo 'def work(n):'
  echo '    return n * n'
  echo
  for t in $(seq 0 19); do
    printf 'def test_workers_%d():\n' "$t"
    printf '    with multiprocessing.get_context("fork").Pool(2) as pool:\n'
    printf '        assert pool.map(work, range(4)) == [0, 1, 4, 9]\n\n'
  done
} > "$work/suite/test_workers.py"
suites=("suite:$work/suite")
if [[ $real == real ]]; then
  numpy_tests=$("$python" -c 'import numpy, os; print(os.path.join(os.path.dirname(numpy.__file__), "linalg", "tests"))')
  suites+=("numpy-linalg:$numpy_tests")
fi
chmod -R a+rwX "$work"

seconds() {  # runs "$@" and prints how long it took, failing if it failed
  local start end
  start=$(date +%s.%N)
  "$@" > "$work/last.log" 2>&1 || { cat "$work/last.log" >&2; echo "bench: '$*' failed" >&2; exit 1; }
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }

as_nobody=()
if [[ $(id -u) == 0 ]] && setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
  as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups env "HOME=$work")
fi

echo "pytest suites in the fork server, -j 2, median of $runs runs ($(nproc) CPUs):"
for entry in "${suites[@]}"; do
  name=${entry%%:*}
  path=${entry#*:}
  for watch in true false; do
    cat > "$work/$name-$watch.toml" <<TOML
state-dir = "$work/state-$name-$watch"
watch-workers = $watch
[[source]]
kind = "pytest"
python = "$python"
paths = ["$path"]
TOML
  done
  users=("$(id -un)")
  [[ ${#as_nobody[@]} -gt 0 ]] && users+=(nobody)
  for user in "${users[@]}"; do
    prefix=()
    [[ $user == nobody ]] && prefix=("${as_nobody[@]}")
    chmod -R a+rwX "$work"  # the state folders root's runs made
    declare -A time=()
    # Alternated, so that a machine getting busier weighs on both alike.
    declare -A samples=([true]="" [false]="")
    for _ in $(seq "$runs"); do
      for watch in true false; do
        samples[$watch]+="$(cd "$work" && seconds "${prefix[@]}" "$ranktest" run -j2 \
                              --config "$work/$name-$watch.toml")"$'\n'
      done
    done
    for watch in true false; do time[$watch]=$(printf '%s' "${samples[$watch]}" | median); done
    # Which watch it was: the run says so when it is the one inside pytest.
    (cd "$work" && "${prefix[@]}" "$ranktest" run -j2 --config "$work/$name-true.toml" \
       > "$work/probe.log" 2>&1) || true
    how="the kernel's process events"
    grep -q "watched from inside pytest" "$work/probe.log" && how="inside pytest"
    printf '  %-13s as %-7s watched %7.2f s, not watched %7.2f s: %.3fx (%s; goal <= 1.02)\n' \
      "$name" "$user" "${time[true]}" "${time[false]}" \
      "$(echo "${time[true]} / ${time[false]}" | bc -l)" "$how"
  done
done
