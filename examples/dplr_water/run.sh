#!/bin/bash
# DPLR water example end to end; builds nothing.
#   examples/dplr_water/run.sh /path/to/lmp-aisci [output folder]
# Steps: a random box (make_data.py teacher), q-TIP4P/F teacher NVT and its RDFs
# (in.teacher, Debian's lmp if installed, else lmp-aisci), the teacher's final
# configuration with one WC atom per molecule (make_data.py dplr), DPLR NVT and its RDFs
# (in.dplr: pair_style aisci + fix dplr + kspace_style pppm/dplr), comparison
# (analyze.py: rdf_compare.txt, rdf.png). Output goes to examples/dplr_water/out unless a
# folder is given. Environment variables:
#   SR       short-range model (default potentials/models/water_dplr_sr.pt)
#   DW       DW model (default potentials/models/water_dw.pt)
#   NMOL     molecules (default 128)
#   TEACHER_EQUIL, TEACHER_SAMPLE   teacher steps of 0.5 fs (default 2000, 4000)
#   NEQUIL, NSAMPLE                 DPLR steps of 0.5 fs (default 1000, 4000)
#   THREADS  libtorch threads (default 1)     PYTHON  (default /usr/bin/python3)
#   TEACHER_LMP  LAMMPS for the teacher (default /usr/bin/lmp, else the launcher)
# The sample lengths must be multiples of 10.
set -euo pipefail

if [ $# -lt 1 ] || [ ! -x "$1" ]; then
  echo "usage: $0 /path/to/lmp-aisci [output folder]" >&2
  exit 2
fi
LMP=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=${2:-$HERE/out}
SR=${SR:-$REPO/potentials/models/water_dplr_sr.pt}
DW=${DW:-$REPO/potentials/models/water_dw.pt}
NMOL=${NMOL:-128}
TEACHER_EQUIL=${TEACHER_EQUIL:-2000}
TEACHER_SAMPLE=${TEACHER_SAMPLE:-4000}
NEQUIL=${NEQUIL:-1000}
NSAMPLE=${NSAMPLE:-4000}
THREADS=${THREADS:-1}
PYTHON=${PYTHON:-/usr/bin/python3}
if [ -z "${TEACHER_LMP:-}" ]; then
  if [ -x /usr/bin/lmp ]; then TEACHER_LMP=/usr/bin/lmp; else TEACHER_LMP=$LMP; fi
fi

if [ ! -f "$SR" ]; then
  cat >&2 <<MSG
run.sh: no short-range model at $SR.
  The DPLR short-range model (trained on E_teacher - E_gauss(beta = 0.4 1/A) with charges
  O 0, H +0.5564, WC -1.1128 at the M site; metadata dplr_beta = 0.4) is shipped as
  potentials/models/water_dplr_sr.pt; retrain it with
  /usr/bin/python3 -m potentials.dplr.sr (docs/dplr.md) or give its path in SR=.
MSG
  exit 2
fi
[ -f "$DW" ] || { echo "run.sh: no DW model at $DW" >&2; exit 2; }
for n in "$TEACHER_SAMPLE" "$NSAMPLE"; do
  if [ $((n % 10)) -ne 0 ]; then
    echo "run.sh: TEACHER_SAMPLE ($TEACHER_SAMPLE) and NSAMPLE ($NSAMPLE) must be multiples of 10" >&2
    exit 2
  fi
done
"$PYTHON" -c "import numpy, torch" 2>/dev/null ||
  { echo "run.sh: $PYTHON lacks numpy/torch (Debian: python3-numpy python3-torch)" >&2; exit 2; }

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cd "$OUT"
rm -f rdf.teacher.dat rdf.dplr.dat start.dump log.teacher log.dplr
export OMP_NUM_THREADS=$THREADS

echo "== box: $NMOL molecules -> $OUT/teacher.data, teacher_ff.lmp"
"$PYTHON" "$HERE/make_data.py" teacher teacher.data --molecules "$NMOL"

echo "== q-TIP4P/F teacher ($TEACHER_LMP): $TEACHER_EQUIL + $TEACHER_SAMPLE steps of 0.5 fs"
"$TEACHER_LMP" -in "$HERE/in.teacher" -log log.teacher -screen none -nocite \
  -var nequil "$TEACHER_EQUIL" -var nsample "$TEACHER_SAMPLE"

echo "== DPLR data: teacher's last frame + WC atoms -> dplr.data"
"$PYTHON" "$HERE/make_data.py" dplr start.dump dplr.data

echo "== DPLR ($SR, $DW): $NEQUIL + $NSAMPLE steps of 0.5 fs"
start=$(date +%s)
"$LMP" -in "$HERE/in.dplr" -log log.dplr -screen none -nocite -var sr "$SR" -var dw "$DW" \
  -var nequil "$NEQUIL" -var nsample "$NSAMPLE" -var threads "$THREADS"
echo "   DPLR wall time $(( $(date +%s) - start )) s"

echo "== analysis"
"$PYTHON" "$HERE/analyze.py" "$OUT"
echo "== done: $OUT/rdf_compare.txt, $OUT/rdf.png, log.teacher, log.dplr"
