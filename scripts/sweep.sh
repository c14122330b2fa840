#!/usr/bin/env bash
# The package's robustness sweep over every style (not part of ctest: ~15-25 minutes on 2
# cores). After a build (scripts/build.sh):
#     bash scripts/sweep.sh [build dir]
# runs
#   tests/lammps/sweep_pimd_inputs.py  bad and valid inputs of fix pimd/langevin
#   tests/lammps/sweep_bad_inputs.py   bad and valid inputs of pair_style aisci (and the
#                                      DeePMD-kit alias), compute aisci/cost, fix dplr,
#                                      kspace_style pppm/dplr and pppm/aisci
#   tests/lammps/sweep_faults.py       faults (killed ranks, interrupts, damaged files,
#                                      lost atoms, a partition that never runs) and the
#                                      same input on other MPI layouts
# and prints each one's counts. Pass: no crash, hang, silent acceptance, unclear message,
# rejected valid input or layout difference (exit 0); otherwise exit 1.
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-${AISCI_BUILD_DIR:-$here/build}}" && pwd)"
[ -x "$build/bin/lmp-aisci" ] || { echo "sweep: no $build/bin/lmp-aisci (run scripts/build.sh)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
export AISCI_LMP="$build/bin/lmp-aisci" AISCI_BUILD_DIR="$build" AISCI_SOURCE_DIR="$here"
export AISCI_MPIEXEC="${AISCI_MPIEXEC:-mpiexec --oversubscribe --allow-run-as-root}"
status=0
summary=()
for s in sweep_pimd_inputs sweep_bad_inputs sweep_faults; do
  echo "== $s"
  log=$(mktemp)
  if [ "$s" = sweep_pimd_inputs ] || [ "$s" = sweep_faults ]; then
    /usr/bin/python3 "$here/tests/lammps/$s.py" "$build" | tee "$log"; rc=${PIPESTATUS[0]}
  else
    /usr/bin/python3 "$here/tests/lammps/$s.py" | tee "$log"; rc=${PIPESTATUS[0]}
  fi
  summary+=("$s: $(grep -E '(inputs|cases):' "$log" | tail -1) (exit $rc)")
  [ "$rc" = 0 ] || status=1
  rm -f "$log"
done
echo "== sweep summary"
printf '%s\n' "${summary[@]}"
[ "$status" = 0 ] && echo "sweep: pass" || echo "sweep: FAIL (see the lines above that are not clean, ok, warned or consistent)"
exit $status
