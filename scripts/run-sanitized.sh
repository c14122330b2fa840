#!/usr/bin/env bash
# Build the C core and its unit and mpi tests with AddressSanitizer and
# UndefinedBehaviorSanitizer (-DAISCI_SANITIZE=ON) into build-asan/ (or
# $AISCI_SANITIZE_BUILD_DIR) and run the unit and mpi labels. A report from our code
# fails the test; tests/sanitizers/ lists the suppressed reports of other libraries.
# Needs the Debian packages of scripts/install-deps.sh. Called by .ci/run.
set -euo pipefail
[[ "${AISCI_JOBS:-2}" =~ ^[1-9][0-9]*$ ]] ||
  { echo "AISCI_JOBS must be a positive integer, got '${AISCI_JOBS}'" >&2; exit 2; }
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${AISCI_SANITIZE_BUILD_DIR:-$here/build-asan}"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DAISCI_SANITIZE=ON \
  -DAISCI_ENABLE_LAMMPS=OFF -DAISCI_ENABLE_TORCH=OFF -DAISCI_BUILD_PLUGIN=OFF >/dev/null
ninja -C "$build" -j "${AISCI_JOBS:-2}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
ctest --test-dir "$build" --output-on-failure -j "${AISCI_JOBS:-2}" -L 'unit|mpi' "$@"
