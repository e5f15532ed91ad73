#!/usr/bin/env bash
# Configures and builds ranktest, its examples and its tests into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
# Extra arguments go to cmake (demo.sh: no tests, no benchmarks).
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build build -j "$(nproc)"
