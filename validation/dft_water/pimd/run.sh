#!/bin/bash
# validation/dft_water/pimd/run.sh: quantum water with our DFT-trained model.
#   validation/dft_water/pimd/run.sh /path/to/lmp-aisci MODEL.pt [output folder]
# (default output folder: ~/.cache/aisci-runs/dft_water_pimd/<model file name without .pt>,
# so that runs of different models never mix; the docs use water_equivariant_dft.pt)
# 64 H2O (frame 0 of DeePMD-kit's water-dft/data_3), 300 K, fix pimd/langevin NVT with
# P = 1, 8, 16 (env PLIST): P = 1 on one rank, P >= 2 on 2 partitions of one rank with
# beads_per_world P/2. (Not P = 1 on 2 ranks: in this 12.4 A box a 2-layer model needs a
# ghost shell of 2 x (cutoff + skin) per rank, which costs ~17 x the work of one rank's
# periodic graph; docs/pair_aisci.md.)
# SKIN (2.0 A): the neighbor skin, as for one bead per partition (fix pimd/langevin widens
# the ghost shell and builds per-bead lists when a partition's beads are further apart).
# NWARM (1000) + NSTEPS (10000) steps of 0.5 fs (0.5 ps + 5 ps; nmpimd integrates the free
# ring polymer exactly); RDF_BLOCK (1000) steps per RDF block. Resumable: restart files
# every 1000 steps; rerun the same command after a stop and each P continues where it
# stopped (logs log.P<P>.seg<k>.*); a P whose log says RUN COMPLETE is skipped.
# Then a stability check: classical NVE (0.5 fs, 2000 steps after 1000 NVT steps) of the
# same model, energy drift in nve.txt. Analysis: analyze.py in this folder (table, figure,
# the q-TIP4P/F results of validation/water_pimd beside them).
# DPLR: a short-range model of a DPLR pair (file name with "dplr" and "_sr", e.g.
# potentials/models/water_dplr_dft_sr.pt) runs in.pimd_dplr / in.nve_dplr instead: the
# same frame with one Wannier centroid per molecule (potentials/dplr/deepmd_frame.py),
# the DW model DW (default: the file name with _sr -> _dw), pppm/dplr, fix pimd/langevin
# on the nuclei.
set -euo pipefail
[ $# -ge 2 ] && [ -x "$1" ] && [ -f "$2" ] || { echo "usage: $0 lmp-aisci MODEL.pt [out]" >&2; exit 2; }
LMP=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
MODEL=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
OUT=${3:-$HOME/.cache/aisci-runs/dft_water_pimd/$(basename "$MODEL" .pt)}
PLIST=${PLIST:-1 8 16}
NWARM=${NWARM:-1000}
NSTEPS=${NSTEPS:-10000}
SKIN=${SKIN:-2.0}
SHARED=${AISCI_SHARED:-$REPO/../shared/deepmd-kit}
IN_PIMD=in.pimd; IN_NVE=in.nve; DATA=water192.data; DWVAR=()
case "$(basename "$MODEL")" in
  *dplr*_sr*)
    DW=${DW:-$(dirname "$MODEL")/$(basename "$MODEL" | sed 's/_sr/_dw/')}
    [ -f "$DW" ] || { echo "$0: DPLR short-range model $MODEL needs its DW model (DW=, tried $DW)" >&2; exit 2; }
    DW=$(cd "$(dirname "$DW")" && pwd)/$(basename "$DW")
    IN_PIMD=in.pimd_dplr; IN_NVE=in.nve_dplr; DATA=dplr64.data; DWVAR=(-var dw "$DW")
    echo "DPLR: short-range $MODEL, DW $DW";;
esac
MPIEXEC=${MPIEXEC:-mpiexec --oversubscribe --allow-run-as-root --bind-to none}
export OMP_NUM_THREADS=1 OMPI_MCA_mpi_yield_when_idle=1
mkdir -p "$OUT"; cd "$OUT"
if [ "$DATA" = water192.data ]; then
  [ -f water192.data ] || /usr/bin/python3 "$REPO/examples/deepmd_water_pimd/make_data.py" "$SHARED" 0 water192.data
else
  [ -f "$DATA" ] || (cd "$REPO" && /usr/bin/python3 -m potentials.dplr.deepmd_frame "$OUT/$DATA" --data "$SHARED/water-dft/data_3")
fi
for P in $PLIST; do
  if grep -qs "RUN COMPLETE" log.P$P.seg*.0 log.P$P.seg*; then echo "P=$P: complete"; continue; fi
  seg=$( (ls log.P$P.seg* 2>/dev/null || true) | sed -n 's/.*seg\([0-9]*\).*/\1/p' | sort -n | tail -1)
  seg=$(( ${seg:--1} + 1 ))
  resume=0; [ -f restart.P$P.0 ] && resume=1
  if [ "$P" = 1 ]; then np=1; parts=1; bpw=1; part=(); else np=2; parts=2; bpw=$((P / 2)); part=(-partition 2x1); fi
  echo "P=$P: segment $seg (resume $resume) $(date -u +%H:%M:%S); a progress line every 2 minutes"
  $MPIEXEC -n $np "$LMP" "${part[@]}" -in "$HERE/$IN_PIMD" -var model "$MODEL" "${DWVAR[@]}" -var nbeads "$P" \
    -var bpw "$bpw" -var nparts "$parts" -var nwarm "$NWARM" -var nsteps "$NSTEPS" \
    -var resume "$resume" -var skin "$SKIN" -var rdf_block "${RDF_BLOCK:-1000}" -var tag "P$P" -log "log.P$P.seg$seg" -screen none &
  pid=$! n=0
  while kill -0 $pid 2>/dev/null; do   # the last thermo step of partition 0's log
    sleep 5; n=$((n + 1)); [ $((n % 24)) -eq 0 ] || continue
    log=log.P$P.seg$seg; [ -f "$log.0" ] && log=$log.0
    step=$(awk '$1 ~ /^[0-9]+$/ && NF >= 7 {s = $1} END {print s + 0}' "$log" 2>/dev/null || echo 0)
    echo "P=$P: step $step of $((NWARM + NSTEPS)) $(date -u +%H:%M:%S)"
  done
  wait $pid
done
if [ ! -f nve.txt ]; then
  $MPIEXEC -n 1 "$LMP" -in "$HERE/$IN_NVE" -var model "$MODEL" "${DWVAR[@]}" -log log.nve -screen none
  /usr/bin/python3 - <<'PY' > nve.txt
import re
rows = []
for line in open("log.nve"):
    p = line.split()
    if len(p) == 5 and p[0].isdigit() and rows is not None:
        try:
            rows.append([float(x) for x in p])
        except ValueError:
            pass
nve = [r for r in rows if r[0] >= 1000]
t = [(r[0] - 1000) * 0.0005 for r in nve]   # ps
e = [r[4] for r in nve]
n = len(t)
mt, me = sum(t) / n, sum(e) / n
slope = sum((a - mt) * (b - me) for a, b in zip(t, e)) / sum((a - mt) ** 2 for a in t)
print("NVE 0.5 fs, %d steps: etotal drift %.3e eV/ps = %.3e meV/atom/ps; max-min %.3e eV"
      % (nve[-1][0] - 1000, slope, slope / 192 * 1000, max(e) - min(e)))   # 192 nuclei
PY
  cat nve.txt
fi
