#!/bin/bash
# validation/water_pimd/run.sh: convergence of q-TIP4P/F water PIMD with the number of
# beads P = 1, 4, 8, 16, 32, 64 at 298 K (fix pimd/langevin, USER-AISCI).
#   validation/water_pimd/run.sh /path/to/lmp-aisci [output folder]
# Makes a 64-molecule box (potentials/data/water_box.py), equilibrates it classically
# (in.equil), then runs in.pimd for every P with all P beads in one process
# (beads_per_world P). Two processes run side by side so that a 2-core machine is
# used evenly: P = 64 in one, P = 1, 4, 8, 16, 32 (61 beads in all) after each other in
# the other. Each run writes log.P<P> (thermo every 20 steps, flushed) and rdf.P<P>.dat as
# it goes, so analyze.py can be run on partial results at any time.
# Environment: NMOL (64), NWARM (1000), NSTEPS (40000 = 10 ps of production; both
#   multiples of 1000), NEQUIL (6000 classical 0.5 fs steps), BEADS_A ("64"),
#   BEADS_B ("1 4 8 16 32"), BOX_SEED (2009), EQUIL_SEED (4928), PIMD_SEED (31415)
#   (docs/validation.md's second set: BOX_SEED=77 EQUIL_SEED=991 PIMD_SEED=2718
#   NSTEPS=20000 BEADS_A=16 BEADS_B=32),
#   PYTHON (/usr/bin/python3), FIGDIR (where analyze.py writes
#   water_pimd_convergence.png/.csv; default docs/figures).
set -euo pipefail
if [ $# -lt 1 ] || [ ! -x "$1" ]; then
  echo "usage: $0 /path/to/lmp-aisci [output folder]" >&2
  exit 2
fi
LMP=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=${2:-$HERE/out}
NMOL=${NMOL:-64}
NWARM=${NWARM:-1000}
NSTEPS=${NSTEPS:-40000}
NEQUIL=${NEQUIL:-6000}
BEADS_A=${BEADS_A:-64}
BEADS_B=${BEADS_B:-1 4 8 16 32}
BOX_SEED=${BOX_SEED:-2009}
EQUIL_SEED=${EQUIL_SEED:-4928}
PIMD_SEED=${PIMD_SEED:-31415}
PYTHON=${PYTHON:-/usr/bin/python3}
FIGDIR=${FIGDIR:-$REPO/docs/figures}
FF=$REPO/examples/water_qtip4pf

if [ $((NWARM % 1000)) -ne 0 ] || [ $((NSTEPS % 1000)) -ne 0 ]; then
  echo "run.sh: NWARM ($NWARM) and NSTEPS ($NSTEPS) must be multiples of 1000 (RDF blocks)" >&2
  exit 2
fi
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cd "$OUT"
if [ ! -f data.equil ]; then
  PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}" "$PYTHON" -m potentials.data.water_box \
    data.water --molecules "$NMOL" --density 0.997 --seed "$BOX_SEED"
  "$LMP" -in "$HERE/in.equil" -var ffdir "$FF" -var nequil "$NEQUIL" -var seed "$EQUIL_SEED" \
    -log log.equil -screen none
fi

run_set() {
  for p in "$@"; do
    start=$(date +%s)
    skin=2.0
    [ "$p" -ge 16 ] && skin=3.0   # H ring polymers reach 1 A at P = 32
    if "$LMP" -in "$HERE/in.pimd" -var ffdir "$FF" -var nbeads "$p" -var skin "$skin" \
        -var nwarm "$NWARM" -var nsteps "$NSTEPS" -var tag "P$p" -var seed "$PIMD_SEED" \
        -log "log.P$p" -screen none; then
      echo "P=$p done in $(( $(date +%s) - start )) s" >> progress.txt
    else
      echo "P=$p FAILED after $(( $(date +%s) - start )) s (see log.P$p)" >> progress.txt
    fi
  done
}
echo "started $(date)  NMOL=$NMOL NWARM=$NWARM NSTEPS=$NSTEPS" >> progress.txt
# shellcheck disable=SC2086
run_set $BEADS_A &
pid_a=$!
# shellcheck disable=SC2086
run_set $BEADS_B
wait "$pid_a"
echo "all done $(date)" >> progress.txt
"$PYTHON" "$HERE/analyze.py" "$OUT" --csv "$FIGDIR/water_pimd_convergence.csv" \
  --png "$FIGDIR/water_pimd_convergence.png"
