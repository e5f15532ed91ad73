#!/usr/bin/env bash
# The README's second command: install, build, and run the project's whole
# test suite (unit and integration tests) with ranktest itself. Ends with
# ranktest's summary line; exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh -DRANKTEST_BUILD_TESTS=ON -DRANKTEST_BUILD_BENCHMARKS=ON
exec build/ranktest run --config tests/ranktest.toml "$@"
