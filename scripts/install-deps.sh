#!/usr/bin/env bash
# Installs what ranktest needs, from Debian 12's packages. Idempotent:
# installs only what is missing. Needs root (or sudo).
#   scripts/install-deps.sh demo   what the build and the example suite need
#   scripts/install-deps.sh        that, and what ranktest's own tests and
#                                  benchmarks need besides
set -euo pipefail

packages=(
  g++ cmake make pkg-config
  libcli11-dev libfmt-dev libtomlplusplus-dev nlohmann-json3-dev libpugixml-dev
  libgtest-dev libgmock-dev
  libsqlite3-dev  # the history database
  libgloo-dev     # the multi-rank examples run real collectives on Gloo
  gdb             # stacks of hung tests, taken at the timeout
  python3 python3-pytest  # pytest suites (ranktest's plugin needs nothing else)
  python3-torch   # the distributed pytest examples: PyTorch on CPU with gloo
)
if [ "${1:-all}" != demo ]; then
  packages+=(
    libbenchmark-dev        # bench/: the micro-benchmarks
    libxml2-utils           # xmllint: the tests validate the JUnit report with it
    python3-pytest-xdist    # bench/: the pytest comparison runs pytest -n 2
    python3-pyflakes python3-psutil  # bench/real_suites.sh quick: their own suites of millisecond tests
    python3-jsonschema      # a test validates emitted events against docs/events.schema.json
    python3-pytest-timeout python3-pytest-rerunfailures  # a test checks their marks mean what they mean under pytest
    chromium                # a test opens the HTML report in headless Chromium
    bc                      # bench/ scripts compute their ratios with it
    openmpi-bin             # launcher = "mpirun": the tests start ranks with mpirun
    slurm-wlm munge         # launcher = "slurm": the tests start a single-node cluster
    iproute2 util-linux     # ... and a simulated one of several nodes (ip netns, nsenter, unshare)
    python3-numpy python3-hypothesis  # the conformance check runs numpy's own tests
    libtorch-test           # the conformance check runs torch's ATen/c10 test binaries
  )
fi

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: run as root, or install sudo" >&2; exit 1; }
  sudo=(sudo)
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
