#!/usr/bin/env bash
# The README's first command: install, build, and run ranktest on the example
# suite. The examples fail on purpose (an assertion, two crashes, a timeout),
# so this exits 1 after printing the report.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh demo
scripts/build.sh -DRANKTEST_BUILD_TESTS=OFF -DRANKTEST_BUILD_BENCHMARKS=OFF
exec build/ranktest run --config examples/ranktest.toml "$@"
