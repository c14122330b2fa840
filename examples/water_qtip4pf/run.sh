#!/bin/bash
# Runs the q-TIP4P/F quantum water example end to end; builds nothing.
#   examples/water_qtip4pf/run.sh /path/to/lmp-aisci [output folder]
# Steps: make the 216-molecule box (potentials/data/water_box.py), classical NVT equilibration and classical RDFs
# (in.classical), 8-bead PIMD with fix pimd/langevin (in.pimd), analysis (analyze.py:
# bead-averaged RDFs, rdf.png, estimators.txt). Output goes to examples/water_qtip4pf/out
# unless a folder is given.
# The default length takes a few minutes on a 2-core laptop. Environment variables:
#   NBEADS   beads = partitions (default 8)       NP      MPI ranks (default NBEADS)
#   NEQUIL   classical equilibration steps, 0.5 fs (default 4000)
#   NSAMPLE  classical RDF sampling steps, 0.5 fs (default 4000)
#   NWARM    PIMD thermalization steps, 0.25 fs (default 2000)
#   NSTEPS   PIMD production steps, 0.25 fs (default 4000; e.g. NSTEPS=80000 for 20 ps)
#   RDF_BLOCK  RDF averaging block, steps (default 1000; NWARM and NSTEPS multiples of it)
#   MPIEXEC  MPI launcher (default mpirun)        PYTHON  (default /usr/bin/python3)
set -euo pipefail

if [ $# -lt 1 ] || [ ! -x "$1" ]; then
  echo "usage: $0 /path/to/lmp-aisci [output folder]" >&2
  exit 2
fi
LMP=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=${2:-$HERE/out}
NBEADS=${NBEADS:-8}
NP=${NP:-$NBEADS}
NEQUIL=${NEQUIL:-4000}
NSAMPLE=${NSAMPLE:-4000}
NWARM=${NWARM:-2000}
NSTEPS=${NSTEPS:-4000}
RDF_BLOCK=${RDF_BLOCK:-1000}
MPIEXEC=${MPIEXEC:-mpirun}
PYTHON=${PYTHON:-/usr/bin/python3}

if [ $((NWARM % RDF_BLOCK)) -ne 0 ] || [ $((NSTEPS % RDF_BLOCK)) -ne 0 ]; then
  echo "run.sh: NWARM ($NWARM) and NSTEPS ($NSTEPS) must be multiples of RDF_BLOCK ($RDF_BLOCK)" >&2
  exit 2
fi
if [ $((NSAMPLE % 10)) -ne 0 ]; then
  echo "run.sh: NSAMPLE ($NSAMPLE) must be a multiple of 10" >&2
  exit 2
fi
if [ $((NP % NBEADS)) -ne 0 ]; then
  echo "run.sh: NP ($NP) must be a multiple of NBEADS ($NBEADS)" >&2
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
NCLASSICAL=$(( NP < 2 ? NP : 2 ))

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cd "$OUT"
rm -f rdf.bead*.dat log.lammps* tmp.lammps.variable
echo "== box: 216 molecules at 0.997 g/cm3 -> $OUT/data.water"
PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}" "$PYTHON" -m potentials.data.water_box \
  data.water --molecules 216 --density 0.997 --seed 2009

echo "== classical equilibration ($NEQUIL + $NSAMPLE steps of 0.5 fs, $NCLASSICAL ranks)"
"$MPIEXEC" "${MPIFLAGS[@]}" -np "$NCLASSICAL" "$LMP" -in "$HERE/in.classical" \
  -log log.classical -screen none -var ffdir "$HERE" \
  -var nequil "$NEQUIL" -var nsample "$NSAMPLE"

echo "== PIMD: $NBEADS beads on $NP ranks ($NWARM + $NSTEPS steps of 0.25 fs)"
start=$(date +%s)
"$MPIEXEC" "${MPIFLAGS[@]}" -np "$NP" "$LMP" -partition "${NBEADS}x$((NP / NBEADS))" \
  -in "$HERE/in.pimd" -pscreen none -var ffdir "$HERE" \
  -var nwarm "$NWARM" -var nsteps "$NSTEPS" -var rdf_block "$RDF_BLOCK"
echo "   PIMD wall time $(( $(date +%s) - start )) s"

echo "== analysis"
"$PYTHON" "$HERE/analyze.py" "$OUT"
echo "== done: $OUT/rdf.png, $OUT/estimators.txt, $OUT/log.lammps.* "
