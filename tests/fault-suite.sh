#!/usr/bin/env bash
# Runs the fault suite (tests/integration/faults_test.cpp) N times in a row,
# stopping at the first run where any misbehaviour gives another outcome or
# leaves a process behind. Usage: tests/fault-suite.sh [N] (default 20).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
binary=build/tests/ranktest_integration_tests
[[ -x $binary ]] || { echo "fault-suite: build first (scripts/build.sh)" >&2; exit 2; }
for ((i = 1; i <= runs; i++)); do
  if ! "$binary" --gtest_filter='FaultSuite.*' > /tmp/fault-suite-$$.log 2>&1; then
    cat /tmp/fault-suite-$$.log
    echo "fault-suite: run $i of $runs failed" >&2
    exit 1
  fi
  echo "fault-suite: run $i of $runs passed"
done
rm -f /tmp/fault-suite-$$.log
echo "fault-suite: all $runs runs gave every expected outcome with no surviving process"
