#!/usr/bin/env bash
# Configure and build USER-AISCI into ./build (or $AISCI_BUILD_DIR). Idempotent and
# incremental: a configured build folder is not configured again (ninja re-runs CMake by
# itself when a CMakeLists.txt changed), and ninja rebuilds only what changed.
set -euo pipefail
[[ "${AISCI_JOBS:-2}" =~ ^[1-9][0-9]*$ ]] ||
  { echo "AISCI_JOBS must be a positive integer, got '${AISCI_JOBS}'" >&2; exit 2; }
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${AISCI_BUILD_DIR:-$here/build}"
if [ ! -f "$build/build.ninja" ]; then
  echo "build: configuring $build (CMake, Ninja, RelWithDebInfo)"
  cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
echo "build: ninja -C $build -j ${AISCI_JOBS:-2} (a first build takes ~5 minutes on 2 cores)"
ninja -C "$build" -j "${AISCI_JOBS:-2}"
