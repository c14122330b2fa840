#!/usr/bin/env bash
# Install the Debian dependencies, build, and run the main example: quantum (8-bead
# path-integral) q-TIP4P/F liquid water with fix pimd/langevin. Output lands in
# examples/water_qtip4pf/out/ (log files, estimators, rdf.png).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bash "$here/scripts/install-deps.sh"
bash "$here/scripts/build.sh"
build="${AISCI_BUILD_DIR:-$here/build}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
bash "$here/examples/water_qtip4pf/run.sh" "$build/bin/lmp-aisci" "$@"
