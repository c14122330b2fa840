#!/usr/bin/env bash
# GPU check, prepared but NOT run in this project yet (no GPU was lent): configure
# USER-AISCI with a CUDA libtorch (Torch_DIR), build, run bench/nn_inference with
# device cuda and the MPI-invariance tests (test_nn_mpi, test_nn_exchange), and record
# atom-steps/s. Usage: TORCH_DIR=/path/libtorch/share/cmake/Torch bash bench/gpu/run_gpu.sh
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
build="${AISCI_BUILD_DIR:-$here/build-gpu}"
out="${OUT:-$build/gpu_results}"
mkdir -p "$out"
: "${TORCH_DIR:?set TORCH_DIR to the Torch cmake folder of a CUDA libtorch}"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTorch_DIR="$TORCH_DIR"
ninja -C "$build" -j "$(nproc)"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || true
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# inference benchmark on the GPU (the script passes its style arguments to pair_style)
/usr/bin/python3 "$here/bench/nn_inference/nn_inference.py" --build "$build" --sizes 1000 8000 \
    --device cuda 2>&1 | tee "$out/nn_inference_cuda.txt" || \
  echo "nn_inference: see the log (does this version take --device?)" | tee -a "$out/nn_inference_cuda.txt"
# MPI invariance (CPU default of the tests) and ghost exchange
ctest --test-dir "$build" -R "nn_mpi|nn_exchange" --output-on-failure 2>&1 | tee "$out/ctest.txt"
echo "results in $out"
