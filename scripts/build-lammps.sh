#!/usr/bin/env bash
# Build LAMMPS from Debian's source packages, OUTSIDE the clone, for the plugin route
# (libaisci_plugin.so loaded with `plugin load`, issue 22) and for the upstream PIMD
# comparison (upstream's own fix pimd/langevin, issue 15). One build serves both.
#
#   bash scripts/build-lammps.sh                       # 4Feb2025 (the default)
#   bash scripts/build-lammps.sh --version 29Sep2021   # the launcher's LAMMPS line, with PLUGIN
#   bash scripts/build-lammps.sh --version all         # both
#   bash scripts/build-lammps.sh --force               # rebuild even if complete
#   bash scripts/build-lammps.sh --print-prefix        # print the install prefix, build nothing
#
# Versions (Debian source package -> LAMMPS release):
#   4Feb2025   lammps_20250204+dfsg.1-2                (trixie)
#   29Sep2021  lammps_20220106.git7586adbb6a+ds1-2     (bookworm; the 29Sep2021 stable line,
#                                                       the same as the launcher's liblammps0)
# Sources: $AISCI_PEERS/src/debian-lammps-<debver>/ (the .orig.tar.xz and .debian.tar.xz);
# when absent they are fetched with `apt-get source` from the deb-src list kept in
# $AISCI_PEERS/apt/<suite>/ (created here if missing; needs the package registry only).
#
# Build: CMake + Ninja against Debian's Open MPI (mpicxx), FFTW3, shared liblammps.so + lmp,
# packages $AISCI_LAMMPS_PACKAGES (default: KSPACE MOLECULE CLASS2 REPLICA RIGID MISC PLUGIN;
# enough for upstream's examples/PACKAGES/pimd, our tests and, MISC, fix ipi for
# bench/pimd_vs_ipi's upstream clients), ccache when present
# (CCACHE_BASEDIR=$AISCI_PEERS so caches survive moving the tree), -j$AISCI_LAMMPS_JOBS
# (default 2). Installs into $AISCI_PEERS/lammps-<version>/ (bin/lmp, lib/liblammps.so,
# include/lammps/, lib/cmake/LAMMPS/ for find_package(LAMMPS)), then writes
# $AISCI_PEERS/lammps-<version>/.complete LAST (version, settings, build seconds). A prefix
# with a .complete whose settings match is left alone (idempotent); otherwise it rebuilds
# (the build folder $AISCI_PEERS/build/lammps-<version> and ccache make that incremental).
#
# Use:  $AISCI_PEERS/lammps-4Feb2025/bin/run-lmp -in in.lmp     (sets LD_LIBRARY_PATH)
# Log:  $AISCI_PEERS/logs/build-lammps-<version>.log
set -euo pipefail

PEERS_DIR="${AISCI_PEERS:-$HOME/.cache/aisci-peers}"
JOBS="${AISCI_LAMMPS_JOBS:-2}"
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] ||
  { echo "AISCI_LAMMPS_JOBS must be a positive integer, got '$JOBS'" >&2; exit 2; }
PACKAGES="${AISCI_LAMMPS_PACKAGES:-KSPACE MOLECULE CLASS2 REPLICA RIGID MISC PLUGIN}"
VERSIONS=()
FORCE=0
PRINT_PREFIX=0
while [ $# -gt 0 ]; do
  case "$1" in
    --version)
      [ $# -ge 2 ] || { echo "build-lammps: --version needs 4Feb2025, 29Sep2021 or all" >&2; exit 2; }
      case "$2" in
        all) VERSIONS+=(4Feb2025 29Sep2021) ;;
        4Feb2025|29Sep2021) VERSIONS+=("$2") ;;
        *) echo "build-lammps: unknown version '$2' (expected 4Feb2025, 29Sep2021 or all)" >&2; exit 2 ;;
      esac
      shift 2 ;;
    --force) FORCE=1; shift ;;
    --print-prefix) PRINT_PREFIX=1; shift ;;
    -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
    *) echo "build-lammps: unknown argument '$1' (expected --version V, --force, --print-prefix)" >&2; exit 2 ;;
  esac
done
[ ${#VERSIONS[@]} -gt 0 ] || VERSIONS=(4Feb2025)

# version -> Debian suite, source package version, upstream tarball top folder
deb_info() {
  case "$1" in
    4Feb2025)  SUITE=trixie;   DEBVER=20250204+dfsg.1-2;                UPVER=20250204+dfsg.1 ;;
    29Sep2021) SUITE=bookworm; DEBVER=20220106.git7586adbb6a+ds1-2;     UPVER=20220106.git7586adbb6a+ds1 ;;
  esac
}

if [ "$PRINT_PREFIX" = 1 ]; then
  for v in "${VERSIONS[@]}"; do echo "$PEERS_DIR/lammps-$v"; done
  exit 0
fi

mkdir -p "$PEERS_DIR/logs" "$PEERS_DIR/src" "$PEERS_DIR/build"

# fetch_source V: make sure $PEERS_DIR/src/debian-lammps-$DEBVER holds the tarballs.
fetch_source() {
  local dir="$PEERS_DIR/src/debian-lammps-$DEBVER"
  if ls "$dir"/lammps_"$UPVER".orig.tar.* >/dev/null 2>&1; then return 0; fi
  echo "build-lammps: [$1] fetching Debian source lammps=$DEBVER ($SUITE) with apt-get source"
  local apt="$PEERS_DIR/apt/$SUITE"
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$dir"
  [ -f "$apt/sources.list" ] || echo "deb-src http://deb.debian.org/debian $SUITE main" > "$apt/sources.list"
  local opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
              -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
              -o "APT::Get::AllowUnauthenticated=true" -o "Acquire::AllowInsecureRepositories=true")
  if ! ls "$apt/lists/"*Sources* >/dev/null 2>&1; then apt-get "${opts[@]}" update; fi
  (cd "$dir" && apt-get "${opts[@]}" source --download-only "lammps=$DEBVER")
}

# unpack_source V: $PEERS_DIR/src/lammps-V (upstream tree + Debian's patches), marker last.
unpack_source() {
  local tree="$PEERS_DIR/src/lammps-$1" dir="$PEERS_DIR/src/debian-lammps-$DEBVER"
  if [ -f "$tree/.unpacked" ]; then return 0; fi
  rm -rf "$tree" "$tree.tmp"
  echo "build-lammps: [$1] unpacking $dir into $tree"
  if [ -f "$dir/lammps_$DEBVER.dsc" ] && command -v dpkg-source >/dev/null; then
    # dpkg-source applies Debian's patches (potential-file paths, docs); no signature check
    # offline.
    dpkg-source --no-check -x "$dir/lammps_$DEBVER.dsc" "$tree.tmp" >/dev/null
  else
    mkdir -p "$tree.tmp"
    tar -xf "$dir"/lammps_"$UPVER".orig.tar.* -C "$tree.tmp" --strip-components=1
  fi
  mv "$tree.tmp" "$tree"
  touch "$tree/.unpacked"
}

build_one() {
  local v="$1"
  deb_info "$v"
  local prefix="$PEERS_DIR/lammps-$v" bdir="$PEERS_DIR/build/lammps-$v"
  local log="$PEERS_DIR/logs/build-lammps-$v.log"
  local pkgflags=() p
  for p in $PACKAGES; do pkgflags+=("-DPKG_$p=ON"); done
  local settings="debian=$DEBVER packages=$PACKAGES mpi=$(mpicxx --showme:version 2>&1 | head -1)"
  if [ "$FORCE" = 0 ] && [ -f "$prefix/.complete" ] && grep -qxF "settings: $settings" "$prefix/.complete"; then
    echo "build-lammps: [$v] already built: $prefix ($(grep '^built:' "$prefix/.complete"))"
    return 0
  fi
  rm -f "$prefix/.complete"
  fetch_source "$v"
  unpack_source "$v"
  local tree="$PEERS_DIR/src/lammps-$v"
  local launcher=()
  if command -v ccache >/dev/null; then
    export CCACHE_BASEDIR="$PEERS_DIR"
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  local gen=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  [ "$FORCE" = 1 ] && rm -rf "$bdir"
  local t0=$SECONDS
  echo "build-lammps: [$v] configuring $tree/cmake -> $bdir (packages: $PACKAGES; log $log)"
  {
    echo "== $(date -u) build-lammps $v: $settings; load: $(cut -d" " -f1-3 /proc/loadavg)"
    cmake -S "$tree/cmake" -B "$bdir" "${gen[@]}" "${launcher[@]}" \
      -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_INSTALL_PREFIX="$prefix" \
      -DCMAKE_INSTALL_LIBDIR=lib \
      -DCMAKE_INSTALL_RPATH="$prefix/lib" \
      -DBUILD_SHARED_LIBS=ON -DBUILD_MPI=ON -DBUILD_OMP=OFF \
      -DLAMMPS_EXCEPTIONS=ON -DFFT=FFTW3 \
      -DWITH_JPEG=OFF -DWITH_PNG=OFF -DWITH_GZIP=ON -DWITH_FFMPEG=OFF \
      -DBUILD_TOOLS=OFF -DBUILD_LAMMPS_SHELL=OFF -DBUILD_DOC=OFF \
      "${pkgflags[@]}"
  } >> "$log" 2>&1 || { echo "build-lammps: [$v] cmake failed; last lines of $log:" >&2; tail -n 30 "$log" >&2; return 1; }
  echo "build-lammps: [$v] compiling with -j$JOBS (~15 CPU-minutes; a progress line every 30 s)"
  cmake --build "$bdir" --parallel "$JOBS" >> "$log" 2>&1 &
  local bpid=$! at n=0
  while kill -0 "$bpid" 2>/dev/null; do
    sleep 2
    n=$((n + 1))
    [ $((n % 15)) -eq 0 ] || continue
    # the last progress mark of the build tool in the log: ninja [k/N] or make [ p%]
    at=$(grep -aoE '^\[ *[0-9]+%\]|^\[[0-9]+/[0-9]+\]' "$log" | tail -n 1 || true)
    kill -0 "$bpid" 2>/dev/null && echo "build-lammps: [$v] compiling ${at:-(starting)}, $((SECONDS - t0)) s"
  done
  if ! wait "$bpid" || ! cmake --install "$bdir" >> "$log" 2>&1; then
    echo "build-lammps: [$v] build failed; last lines of $log:" >&2
    tail -n 30 "$log" >&2
    return 1
  fi
  # run-lmp: lmp with this prefix's liblammps first on the library path.
  cat > "$prefix/bin/run-lmp" <<EOF
#!/bin/sh
LD_LIBRARY_PATH="$prefix/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "$prefix/bin/lmp" "\$@"
EOF
  chmod +x "$prefix/bin/run-lmp"
  # smoke test: the binary starts and lists the PLUGIN package
  # (the help text goes to a file first: `lmp -h | grep -q` fails under pipefail when grep
  # exits before lmp has written everything)
  if ! echo 'info configuration' | "$prefix/bin/run-lmp" -log none -screen none >/dev/null 2>&1 \
       || ! "$prefix/bin/run-lmp" -h > "$bdir/lmp-help.txt" 2>&1 \
       || ! grep -qw PLUGIN "$bdir/lmp-help.txt"; then
    echo "build-lammps: [$v] $prefix/bin/lmp does not start or lacks PLUGIN" >&2
    return 1
  fi
  local secs=$((SECONDS - t0))
  {
    echo "version: $v"
    echo "settings: $settings"
    echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) in ${secs}s with -j$JOBS (load before/after: see $log)"
    echo "lmp: $prefix/bin/lmp"
    echo "cmake: $prefix/lib/cmake/LAMMPS"
  } > "$prefix/.complete.tmp"
  mv "$prefix/.complete.tmp" "$prefix/.complete"
  echo "== $(date -u) done in ${secs}s; load: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$log"
  echo "build-lammps: [$v] done in ${secs}s: $prefix (lmp: $prefix/bin/run-lmp)"
}

echo "build-lammps: load before: $(cut -d' ' -f1-3 /proc/loadavg)"
rc=0
k=0
for v in "${VERSIONS[@]}"; do
  k=$((k + 1))
  echo "build-lammps: version $k of ${#VERSIONS[@]}: $v"
  build_one "$v" || rc=1
done
echo "build-lammps: load after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $rc
