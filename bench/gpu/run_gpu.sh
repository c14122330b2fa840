#!/usr/bin/env bash
# GPU check of USER-AISCI on a lent machine that has a CUDA torch but no LAMMPS, no Open
# MPI and no FFTW (bench/gpu/README.md): Debian 12's packages travel as .deb files in
# .gpu-debs/ (scripts: see README), are unpacked with dpkg -x into a prefix (never into
# /), and USER-AISCI is built against that prefix and the machine's torch. Then, in one
# run of <= 8 minutes:
#   1. the C API on cuda against the CPU (bench/gpu/capi_device_check.py);
#   2. pair_style aisci MD on cuda through lmp-aisci, 1 and 2 ranks sharing the GPU,
#      against the CPU (bench/gpu/md_device_check.py);
#   3. atom-steps/s and GPU memory per atom, 1k to 100k atoms, float32 and float64,
#      against one CPU core (bench/nn_inference/device_scan.py).
# Results go to $OUT (at most 8 files).
#
# Usage: bash bench/gpu/run_gpu.sh [--dry-run | --fetch-debs]
#   --fetch-debs  here (Debian 12, network): apt-get download bench/gpu/debs.txt into .gpu-debs/
#   --dry-run  every step but the GPU ones, here: torch from $AISCI_TORCH_PYTHON (default
#              the peer venv's python, then python3), the .debs unpacked into a temporary
#              prefix and the build made against it exactly as on the GPU machine, the
#              CPU side of the checks on small systems, and the size of what a run carries.
# Environment: OUT (results; default build-gpu/results), AISCI_GPU_BUILD_DIR (build-gpu),
#   AISCI_GPU_PREFIX (where the .debs go; default a fresh temporary folder),
#   AISCI_TORCH_PYTHON (python3 whose torch is built against), AISCI_JOBS (nproc).
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
dry=0
[ "${1:-}" = "--dry-run" ] && dry=1
debs="$here/.gpu-debs"
if [ "${1:-}" = "--fetch-debs" ]; then   # here, once: the packages of bench/gpu/debs.txt
  mkdir -p "$debs"
  excl="$(cd "$here" && git rev-parse --git-path info/exclude)"
  grep -qx "/.gpu-debs/" "$excl" 2>/dev/null || echo "/.gpu-debs/" >> "$excl"
  (cd "$debs" && apt-get download $(grep -v '^#' "$here/bench/gpu/debs.txt"))
  du -sh "$debs"
  exit 0
fi
build="${AISCI_GPU_BUILD_DIR:-$here/build-gpu}"
out="${OUT:-$build/results}"
mkdir -p "$out"
jobs="${AISCI_JOBS:-$(nproc)}"
t0=$(date +%s)
step() { echo "== [$(( $(date +%s) - t0 )) s] $*"; }

# --- what travels: the working tree (tracked + untracked-not-ignored) plus .gpu-debs ---
ls "$debs"/*.deb >/dev/null 2>&1 || { echo "no .deb files in $debs (see bench/gpu/README.md)"; exit 1; }
if [ $dry = 1 ]; then
  step "size of what a run carries"
  tree_bytes=$(cd "$here" && git ls-files -co --exclude-standard -z | xargs -0 du -cb 2>/dev/null | awk 'END{print $1}')
  deb_bytes=$(du -cb "$debs"/*.deb | awk 'END{print $1}')
  total=$(( tree_bytes + deb_bytes ))
  echo "working tree $(( tree_bytes / 1048576 )) MiB + .gpu-debs $(( deb_bytes / 1048576 )) MiB = $(( total / 1048576 )) MiB (limit 64 MiB)" | tee "$out/carry_size.txt"
  [ $total -lt $(( 64 * 1048576 )) ] || { echo "too large to carry"; exit 1; }
fi

command -v c++ >/dev/null || command -v g++ >/dev/null || { echo "no C++ compiler (c++/g++) on this machine"; exit 1; }

# --- torch ---
py="${AISCI_TORCH_PYTHON:-}"
if [ -z "$py" ]; then
  py=python3
  [ $dry = 1 ] && [ -x "$HOME/.cache/aisci-peers/deepmd/bin/python" ] && py="$HOME/.cache/aisci-peers/deepmd/bin/python"
fi
torch_dir="$("$py" -c 'import torch; print(torch.utils.cmake_prefix_path)')/Torch"
step "torch $("$py" -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda)') at $torch_dir"

# --- Debian 12's LAMMPS, Open MPI, FFTW, pkgconf: unpacked into a prefix ---
prefix="${AISCI_GPU_PREFIX:-$(mktemp -d /tmp/aisci-debs.XXXXXX)}"
step "unpacking $(ls "$debs"/*.deb | wc -l) .deb files into $prefix"
for f in "$debs"/*.deb; do
  if command -v dpkg >/dev/null; then
    dpkg -x "$f" "$prefix"
  else   # no dpkg there: the same with ar + tar
    (d=$(mktemp -d) && cd "$d" && ar x "$f" && tar -xf data.tar.* -C "$prefix" && rm -rf "$d")
  fi
done
P="$prefix/usr"
lib="$P/lib/x86_64-linux-gnu"
export OPAL_PREFIX="$P"                       # Open MPI finds its parts under the prefix
export PMIX_INSTALL_PREFIX="$P"               # and PMIx its plugins
export PMIX_MCA_mca_base_component_path="$lib/pmix2/lib/pmix"
export PATH="$P/bin:$PATH"
export LD_LIBRARY_PATH="$lib:$lib/openmpi/lib:$lib/pmix2/lib:$prefix/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PKG_CONFIG_LIBDIR="$lib/pkgconfig:$P/share/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$prefix"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_plm_rsh_agent=false
mpiexec="$P/bin/orterun"
{
  echo "prefix $prefix"
  "$P/bin/ompi_info" --path all | grep -E "Prefix|Libdir|Pkglibdir|Pkgdatadir" || true
  echo "mpicxx: $("$P/bin/mpicxx.openmpi" -showme:compile)"
  echo "pkgconf fftw3: $("$P/bin/pkgconf" --cflags --libs fftw3)"
} > "$out/prefix.txt" 2>&1
cat "$out/prefix.txt"
grep -q "Libdir: $P/" "$out/prefix.txt" || { echo "Open MPI does not relocate into $P"; exit 1; }

# --- build against the prefix and the machine's torch ---
step "configure + build in $build (-j$jobs)"
python_bin="$(command -v "$py")"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTorch_DIR="$torch_dir" \
  -DCMAKE_PREFIX_PATH="$P;$lib/cmake" -DLAMMPS_DIR="$lib/cmake/LAMMPS" \
  -DMPI_C_COMPILER="$P/bin/mpicc.openmpi" -DMPI_CXX_COMPILER="$P/bin/mpicxx.openmpi" \
  -DPKG_CONFIG_EXECUTABLE="$P/bin/pkgconf" -DAISCI_PYTHON="$python_bin" \
  -DAISCI_BUILD_TESTS=OFF > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
# Nothing may come from the host's /usr (on the GPU machine it has none of these; here the
# dry run would not notice): every library found at configure time lies in the prefix.
leaks=$(grep -E '^(FFTW3_MPI_LIBRARY|MPI_[A-Za-z_]+_LIBRARY|LAMMPS_DIR|PKG_CONFIG_EXECUTABLE)[:A-Z]*=' \
  "$build/CMakeCache.txt" | grep -v "=$prefix/" || true)
[ -z "$leaks" ] || { echo "found outside the prefix $prefix:"; echo "$leaks"; exit 1; }
ninja -C "$build" -j "$jobs" >> "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
grep -E "libaisci_torch: libtorch" "$out/build.log"
ldd "$build/bin/lmp-aisci" | grep -E "lammps|libmpi|fftw|not found" | tee -a "$out/build.log"
if ldd "$build/bin/lmp-aisci" "$build/lib/libaisci_torch.so" | grep -q "not found"; then
  echo "unresolved libraries (see $out/build.log)"; exit 1
fi

# --- the checks ---
if [ $dry = 1 ]; then
  dev=cpu
  capi_args=(--atoms 96)
  md_args=(--atoms 96 --steps 5)
  scan_args=(--sizes 96 --cpu-sizes --dtypes float32 --steps 2 --warmup 1)
else
  dev=cuda
  nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || true
  capi_args=(--atoms 300)
  md_args=(--atoms 300 --steps 20)
  scan_args=(--sizes 1000 8000 27000 64000 100000 --cpu-sizes 1000 8000 16000)
fi
rc=0
step "C API on $dev against cpu"
"$py" "$here/bench/gpu/capi_device_check.py" --build "$build" --device $dev "${capi_args[@]}" \
  2>&1 | tee "$out/capi.txt" || rc=1
step "pair_style aisci MD on $dev, 1 and 2 ranks, against cpu"
"$py" "$here/bench/gpu/md_device_check.py" --build "$build" --device $dev --mpiexec "$mpiexec" \
  "${md_args[@]}" 2>&1 | tee "$out/md.txt" || rc=1
step "throughput and memory on $dev"
"$py" "$here/bench/nn_inference/device_scan.py" --build "$build" --device $dev \
  "${scan_args[@]}" --csv "$out/scan.csv" 2>&1 | tee "$out/scan.txt" || rc=1
step "done (rc $rc); results in $out"
[ -z "${AISCI_GPU_PREFIX:-}" ] && rm -rf "$prefix"
exit $rc
