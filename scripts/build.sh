#!/usr/bin/env bash
# Configure and build USER-AISCI into ./build (or $AISCI_BUILD_DIR). Idempotent.
set -euo pipefail
[[ "${AISCI_JOBS:-2}" =~ ^[1-9][0-9]*$ ]] ||
  { echo "AISCI_JOBS must be a positive integer, got '${AISCI_JOBS}'" >&2; exit 2; }
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${AISCI_BUILD_DIR:-$here/build}"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$build" -j "${AISCI_JOBS:-2}"
