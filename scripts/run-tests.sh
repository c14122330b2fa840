#!/usr/bin/env bash
# Install the Debian dependencies (skipped when all are present), build (incremental), and
# run the whole test suite with ctest.
# This is the README's test command and what CI (.ci/run) calls.
set -euo pipefail
[[ "${AISCI_JOBS:-2}" =~ ^[1-9][0-9]*$ ]] ||
  { echo "AISCI_JOBS must be a positive integer, got '${AISCI_JOBS}'" >&2; exit 2; }
here="$(cd "$(dirname "$0")/.." && pwd)"
echo "run-tests: [1/3] Debian packages"
bash "$here/scripts/install-deps.sh"
echo "run-tests: [2/3] build"
bash "$here/scripts/build.sh"
build="${AISCI_BUILD_DIR:-$here/build}"
# OpenMPI as root in containers and with more ranks than cores
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
echo "run-tests: [3/3] ctest, one line per test as it ends"
ctest --test-dir "$build" --output-on-failure -j "${AISCI_JOBS:-2}" "$@"
