#!/usr/bin/env bash
# Build USER-AISCI a second time, against another libtorch (the "peer"; default: the
# PyPI torch of the peer virtual environment ~/.cache/aisci-peers/deepmd, 2.11), into
# ./build-torch211, and run the LAMMPS-level tests that go through the torch wrapper.
# The default build (./build, Debian's libtorch 1.13) is untouched.
#
#   bash scripts/build-torch-peer.sh [--no-tests] [-- extra ctest arguments]
#
# Environment: AISCI_TORCH_PYTHON (a python whose torch to build against),
#   AISCI_TORCH_DIR (a Torch cmake folder instead), AISCI_BUILD_DIR (build-torch211),
#   AISCI_JOBS (2), AISCI_PEER_TESTS (ctest -R regex; default the torch-using tests).
# The tests keep making their models with /usr/bin/python3 and Debian's torch 1.13:
# TorchScript files saved by 1.13 load in 2.x.
set -euo pipefail
[[ "${AISCI_JOBS:-2}" =~ ^[1-9][0-9]*$ ]] ||
  { echo "AISCI_JOBS must be a positive integer, got '${AISCI_JOBS}'" >&2; exit 2; }
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${AISCI_BUILD_DIR:-$here/build-torch211}"
tests=1
[ "${1:-}" = "--no-tests" ] && { tests=0; shift; }
[ "${1:-}" = "--" ] && shift
torch_dir="${AISCI_TORCH_DIR:-}"
if [ -z "$torch_dir" ]; then
  py="${AISCI_TORCH_PYTHON:-$HOME/.cache/aisci-peers/deepmd/bin/python}"
  [ -x "$py" ] || { echo "no peer python at $py: set AISCI_TORCH_PYTHON or AISCI_TORCH_DIR"; exit 1; }
  torch_dir="$("$py" -c 'import torch; print(torch.utils.cmake_prefix_path)')/Torch"
fi
[ -f "$torch_dir/TorchConfig.cmake" ] || { echo "no TorchConfig.cmake in $torch_dir"; exit 1; }
echo "building against $torch_dir into $build"
mkdir -p "$build"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTorch_DIR="$torch_dir" \
  > "$build/configure.log" 2>&1 || { tail -30 "$build/configure.log"; exit 1; }
grep "libaisci_torch: libtorch" "$build/configure.log"
ninja -C "$build" -j "${AISCI_JOBS:-2}"
[ $tests = 1 ] || exit 0
regex="${AISCI_PEER_TESTS:-nn_|dw_|deepmd|dplr|equivariant|potentials}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
rc=0
(cd "$build" && ctest -L 'lammps|python|capi' -R "$regex" --output-on-failure "$@") || rc=1
# The ctypes tests import torch into the process that loads libaisci_torch: under
# /usr/bin/python3 (torch 1.13) they skip against a 2.x build (aisci_capi.py says why),
# so run them again with a python whose torch is the one built against, if there is one.
if [ -n "${py:-}" ] && "$py" -c 'import numpy, torch' 2>/dev/null; then
  export AISCI_LMP="$build/bin/lmp-aisci" AISCI_BUILD_DIR="$build" AISCI_SOURCE_DIR="$here"
  for t in test_nn_capi test_dw_capi test_nn_exchange_errors test_nn_cpu_cache test_deepmd_capi \
           test_deepmd_dipole; do
    f="$here/tests/capi/$t.py"; [ -f "$f" ] || f="$here/tests/lammps/$t.py"
    if (cd "$build/tests" && "$py" "$f" > "$build/peer_python.$t.log" 2>&1); then
      echo "$t with $py: passed"
    else
      echo "$t with $py: FAILED (exit $?; $build/peer_python.$t.log)"; rc=1
    fi
  done
fi
exit $rc
