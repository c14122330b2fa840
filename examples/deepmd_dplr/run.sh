#!/bin/sh
# DPLR water with DeePMD-kit's dipole (DW) and se_e2_a (short-range) PyTorch models, NVE.
#   ./run.sh [build dir (default ../../build)] [DeePMD-kit dir]
# The DeePMD-kit dir holds models/{deeppot_sea,deepdipole_pt}.pth and dplr-water/lmp/
# (default ../../../shared/deepmd-kit; see README.md). Prints the energy drift.
set -e
cd "$(dirname "$0")"
BUILD=${1:-../../build}
DEEPMD=${2:-../../../shared/deepmd-kit}
LMP="$BUILD/bin/lmp-aisci"
[ -x "$LMP" ] || { echo "no launcher at $LMP: build USER-AISCI first" >&2; exit 1; }
for f in models/deeppot_sea.pth models/deepdipole_pt.pth dplr-water/lmp/conf.lmp; do
  [ -f "$DEEPMD/$f" ] || { echo "missing $DEEPMD/$f (see README.md)" >&2; exit 1; }
done
OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} "$LMP" -in in.dplr -var deepmd "$DEEPMD" \
  -var steps ${STEPS:-200} -log log.dplr
/usr/bin/python3 - <<'PY'
import re
rows, head = [], None
for line in open("log.dplr"):
    w = line.split()
    if w[:1] == ["Step"]:
        head = w
    elif head and len(w) == len(head) and re.match(r"^\d+$", w[0]):
        rows.append(dict(zip(head, map(float, w))))
    elif w[:1] == ["Loop"]:
        head = None
e = [r["TotEng"] for r in rows]
ke = [r["KinEng"] for r in rows]
t_ps = rows[-1]["Time"] - rows[0]["Time"]
print("NVE: %d steps (%.3f ps), total energy %.6f -> %.6f eV, max |E - E0| = %.2e eV "
      "(%.2e eV per atom; mean kinetic energy %.3f eV)"
      % (len(rows) and int(rows[-1]["Step"]), t_ps, e[0], e[-1],
         max(abs(x - e[0]) for x in e), max(abs(x - e[0]) for x in e) / 384,
         sum(ke) / len(ke)))
PY
