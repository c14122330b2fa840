#!/bin/sh
# 8-bead PIMD of 192-atom DFT water with DeePMD-kit's DPA2 model, 2 ranks (2 partitions of
# 4 beads each).   ./run.sh [build dir (default ../../build)] [DeePMD-kit dir]
# The DeePMD-kit dir holds models/water_dpa2_frozen_model.pth and water-dft/ (default
# ../../../shared/deepmd-kit; see README.md for where to get them).
set -e
cd "$(dirname "$0")"
BUILD=${1:-../../build}
DEEPMD=${2:-../../../shared/deepmd-kit}
LMP="$BUILD/bin/lmp-aisci"
MODEL="$DEEPMD/models/water_dpa2_frozen_model.pth"
[ -x "$LMP" ] || { echo "no launcher at $LMP: build USER-AISCI first" >&2; exit 1; }
[ -f "$MODEL" ] || { echo "no model file $MODEL (see README.md)" >&2; exit 1; }
/usr/bin/python3 make_data.py "$DEEPMD" 0 water192.data
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
${MPIRUN:-mpirun --oversubscribe} -np 2 "$LMP" -partition 2x1 -in in.pimd -var model "$MODEL" \
  -var steps ${STEPS:-20} -log log.pimd -screen none
echo "outputs: log.pimd.0, log.pimd.1 (thermo of each partition; f_1[1..3]: estimators)"
tail -n 8 log.pimd.0
