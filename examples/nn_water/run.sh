#!/bin/sh
# Water with a neural-network potential through pair_style aisci.
#   ./run.sh [build dir (default ../../build)] [model file]
# Makes a 64-molecule box, runs a short NVE check and a short NVT run with an O-O RDF.
# The full-length runs: raise steps/equil with -var (see in.nve, in.nvt_rdf).
set -e
cd "$(dirname "$0")"
BUILD=${1:-../../build}
MODEL=${2:-../../potentials/models/water_matris.pt}
LMP="$BUILD/bin/lmp-aisci"
PY=/usr/bin/python3
[ -x "$LMP" ] || { echo "no launcher at $LMP: build USER-AISCI first" >&2; exit 1; }
[ -f "$MODEL" ] || { echo "no model file $MODEL (see potentials/)" >&2; exit 1; }
$PY make_box.py 64 1.0 water.data
OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} "$LMP" -in in.nve -var model "$MODEL" -var steps 400 -log log.nve
OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} "$LMP" -in in.nvt_rdf -var model "$MODEL" -var equil 400 \
  -var steps 1000 -log log.nvt
echo "outputs: log.nve (energy conservation), log.nvt, rdf_oo.dat (O-O g(r))"
