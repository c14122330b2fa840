#!/bin/bash
# Quantum liquid water with a neural-network potential, end to end; builds nothing.
#   examples/nn_quantum_water/run.sh /path/to/lmp-aisci [output folder]
# 64 H2O at 300 K with the shipped DFT-trained model (pair_style aisci), classical and
# 8-bead path-integral (fix pimd/langevin), then analyze.py: O-O, O-H, H-H RDFs classical
# against quantum, and the quantum kinetic energy of H against the classical 3/2 kT, with
# block-averaged error bars (rdf.png, summary.txt). Output goes to
# examples/nn_quantum_water/out unless a folder is given. About 5 minutes on 2 idle cores
# at the default lengths (README.md). Environment variables:
#   MODEL    model file (default potentials/models/water_equivariant_dft.pt)
#   NEQUIL   classical equilibration steps, 0.5 fs (default 400)
#   NSAMPLE  classical production steps, 0.5 fs (default 400)
#   NWARM    PIMD thermalization steps, 0.5 fs (default 100)
#   NSTEPS   PIMD production steps, 0.5 fs (default 400)
#   BLOCK    RDF and error-bar block, steps (default 100; NSAMPLE and NSTEPS multiples)
#   NBEADS   beads (default 8, even)    NMIN  minimization iterations (default 50)
#   MPIEXEC  MPI launcher (default mpirun)        PYTHON  (default /usr/bin/python3)
# Two ranks: classical = 2 independent replicas (one rank each), PIMD = NBEADS beads on 2
# partitions of NBEADS/2 beads.
set -euo pipefail

if [ $# -lt 1 ] || [ ! -x "$1" ]; then
  echo "usage: $0 /path/to/lmp-aisci [output folder]" >&2
  exit 2
fi
LMP=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=${2:-$HERE/out}
MODEL=${MODEL:-$REPO/potentials/models/water_equivariant_dft.pt}
NEQUIL=${NEQUIL:-400}
NSAMPLE=${NSAMPLE:-400}
NWARM=${NWARM:-100}
NSTEPS=${NSTEPS:-400}
BLOCK=${BLOCK:-100}
NBEADS=${NBEADS:-8}
NMIN=${NMIN:-50}
MPIEXEC=${MPIEXEC:-mpirun}
PYTHON=${PYTHON:-/usr/bin/python3}

[ -f "$MODEL" ] || { echo "run.sh: no model file '$MODEL' (MODEL=; shipped: potentials/models/)" >&2; exit 2; }
MODEL=$(cd "$(dirname "$MODEL")" && pwd)/$(basename "$MODEL")
if [ $((NSAMPLE % BLOCK)) -ne 0 ] || [ $((NSTEPS % BLOCK)) -ne 0 ] || [ $((BLOCK % 10)) -ne 0 ]; then
  echo "run.sh: NSAMPLE ($NSAMPLE) and NSTEPS ($NSTEPS) must be multiples of BLOCK ($BLOCK), BLOCK of 10" >&2
  exit 2
fi
if [ "$NBEADS" -lt 2 ] || [ $((NBEADS % 2)) -ne 0 ]; then
  echo "run.sh: NBEADS ($NBEADS) must be even and >= 2 (2 partitions)" >&2
  exit 2
fi
if ! "$PYTHON" -c "import numpy, matplotlib" 2>/dev/null; then
  echo "run.sh: $PYTHON lacks numpy/matplotlib (Debian: python3-numpy python3-matplotlib)" >&2
  exit 2
fi

# Open MPI: allow more ranks than cores, let waiting ranks yield the CPU, allow root.
MPIFLAGS=()
if "$MPIEXEC" --version 2>/dev/null | grep -q "Open MPI"; then
  MPIFLAGS+=(--oversubscribe)
  [ "$(id -u)" -eq 0 ] && MPIFLAGS+=(--allow-run-as-root)
  export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}
fi
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

# run_lmp LOG TOTAL_STEPS ARGS...: lmp-aisci on 2 partitions in the background, a progress
# line every 20 s from partition 0's log, the exit status of the run.
run_lmp() {
  local log=$1 total=$2; shift 2
  "$MPIEXEC" "${MPIFLAGS[@]}" -np 2 "$LMP" -partition 2x1 -log "$log" -screen none \
    -pscreen none "$@" &
  local pid=$! t0=$SECONDS n=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 2
    n=$((n + 1))
    if [ $((n % 10)) -eq 0 ] && [ -f "$log.0" ]; then
      local step
      step=$(awk '$1 ~ /^[0-9]+$/ && NF >= 5 {s = $1} END {print s + 0}' "$log.0")
      echo "   ... step $step of $total, $((SECONDS - t0)) s"
    fi
  done
  wait "$pid"
}

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cd "$OUT"
rm -f log.classical* log.pimd* rdf.classical.*.dat rdf.pimd.*.dat data.equil.* summary.txt rdf.png
start=$SECONDS
echo "== [1/4] box: 64 H2O at 0.995 g/cm3 (12.44 A) -> $OUT/water.data"
"$PYTHON" "$REPO/examples/nn_water/make_box.py" 64 0.995 water.data

echo "== [2/4] classical MD: 2 replicas x ($NMIN minimization + $NEQUIL + $NSAMPLE steps of 0.5 fs), model $(basename "$MODEL")"
t0=$SECONDS
run_lmp log.classical $((NEQUIL + NSAMPLE)) -in "$HERE/in.classical" -var nparts 2 \
  -var model "$MODEL" -var nmin "$NMIN" -var nequil "$NEQUIL" -var nsteps "$NSAMPLE" \
  -var block "$BLOCK"
echo "   classical wall time $((SECONDS - t0)) s"

echo "== [3/4] PIMD: $NBEADS beads on 2 ranks ($NWARM + $NSTEPS steps of 0.5 fs)"
t0=$SECONDS
run_lmp log.pimd $((NWARM + NSTEPS)) -in "$HERE/in.pimd" -var nparts 2 -var nbeads "$NBEADS" \
  -var model "$MODEL" -var data data.equil.0 -var nwarm "$NWARM" -var nsteps "$NSTEPS" \
  -var block "$BLOCK"
echo "   PIMD wall time $((SECONDS - t0)) s"

echo "== [4/4] analysis"
"$PYTHON" "$HERE/analyze.py" "$OUT" --block "$BLOCK" --nbeads "$NBEADS"
echo "== done in $((SECONDS - start)) s: $OUT/rdf.png, $OUT/summary.txt, logs log.classical.*, log.pimd.*"
