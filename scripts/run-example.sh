#!/usr/bin/env bash
# Install the Debian dependencies (skipped when all are present), build (incremental), and
# run the main example: quantum liquid water with the shipped DFT-trained neural-network
# model, classical and 8-bead path-integral MD (examples/nn_quantum_water). Output lands in
# examples/nn_quantum_water/out/ (rdf.png, summary.txt, logs), or in the folder given as
# the first argument. The q-TIP4P/F example runs with
# examples/water_qtip4pf/run.sh build/bin/lmp-aisci.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
echo "run-example: [1/3] Debian packages"
bash "$here/scripts/install-deps.sh"
echo "run-example: [2/3] build"
bash "$here/scripts/build.sh"
build="${AISCI_BUILD_DIR:-$here/build}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
echo "run-example: [3/3] examples/nn_quantum_water (about 5 minutes on 2 cores)"
bash "$here/examples/nn_quantum_water/run.sh" "$build/bin/lmp-aisci" "$@"
