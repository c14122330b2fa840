#!/bin/sh
# Quantum DPLR water, 8 beads: 2 MPI ranks, 2 partitions of 4 beads each (beads_per_world 4).
#   ./run.sh [build dir (default ../../build)] [DeePMD-kit dir (default ../../../shared/deepmd-kit)]
#   STEPS=400 ./run.sh            # longer (default 200 steps of 0.5 fs)
#   OUT=q8 ./run.sh               # output folder (default out/ here; relative to the current folder)
# The DeePMD-kit dir must hold dplr-water/lmp/conf.lmp (DeePMD-kit's
# examples/water/dplr/lmp/conf.lmp); see README.md.
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "${1:-$HERE/../../build}" 2>/dev/null && pwd) || { echo "run.sh: no build folder ${1:-$HERE/../../build}" >&2; exit 1; }
DEEPMD=${2:-$HERE/../../../shared/deepmd-kit}
LMP="$BUILD/bin/lmp-aisci"
CONF="$DEEPMD/dplr-water/lmp/conf.lmp"
[ -x "$LMP" ] || { echo "run.sh: no launcher at $LMP: build USER-AISCI first (bash scripts/build.sh)" >&2; exit 1; }
[ -f "$CONF" ] || { echo "run.sh: no $CONF (DeePMD-kit's examples/water/dplr/lmp/conf.lmp; see README.md)" >&2; exit 1; }
CONF=$(cd "$(dirname "$CONF")" && pwd)/conf.lmp
OUT=${OUT:-$HERE/out}
mkdir -p "$OUT" && cd "$OUT"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
echo "run.sh: 8-bead PIMD of DPLR water (128 H2O + 128 WCs), ${STEPS:-200} steps on 2 ranks, in $OUT"
start=$(date +%s)
${MPIRUN:-mpirun --oversubscribe --bind-to none} -np 2 "$LMP" -partition 2x1 -in "$HERE/in.pimd" \
  -var conf "$CONF" -var models "$HERE/../../potentials/models" -var steps "${STEPS:-200}" \
  -log log.pimd -screen none
echo "run.sh: done in $(( $(date +%s) - start )) s"
/usr/bin/python3 - <<'PY'
rows = []
for line in open("log.pimd.0"):
    w = line.split()
    if len(w) == 9 and w[0].isdigit():
        try:
            rows.append([float(x) for x in w])
        except ValueError:
            pass
first, last = rows[0], rows[-1]
half = rows[len(rows) // 2:]
mean = lambda k: sum(r[k] for r in half) / len(half)
print("step %d -> %d (%.3f ps): potential energy %.2f -> %.2f eV"
      % (first[0], last[0], last[1], first[2], last[2]))
print("quantum kinetic energy (centroid virial, 2nd half of the run): O %.1f meV, H %.1f meV "
      "per atom (classical 3/2 kT at 300 K: 38.8 meV)" % (1000 * mean(6), 1000 * mean(7)))
PY
