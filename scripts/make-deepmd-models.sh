#!/usr/bin/env bash
# Make DeePMD-kit models that the repository must not carry (frozen DeePMD-kit models
# are TorchScript with DeePMD-kit's code in them), with DeePMD-kit itself from the peer
# venv (scripts/install-peers.sh --only deepmd), into a cache outside the clone:
#
#   $AISCI_PEERS/models/            (default ~/.cache/aisci-peers/models)
#     water_dpa3.pth                DPA3 trained by DeePMD-kit on water-dft data_0-2
#                                   (validation data_3), input bench/deepmd_peer/
#                                   dpa3_input.json (DeePMD-kit's examples/water/dpa3/
#                                   input_torch.json with our paths and step count),
#                                   `dp --pt freeze`
#     water_dpa2_cpu.pth            DeePMD-kit's example DPA2 model re-frozen on the CPU
#                                   (bench/deepmd_peer/refreeze_cpu.py: the shared file
#                                   names cuda:0 in its message-passing branch, which
#                                   DeePMD-kit's LAMMPS takes)
#     dpa3-train/                   training folder (checkpoints, lcurve.out, logs)
#
#   bash scripts/make-deepmd-models.sh [--steps N] [--only dpa3|dpa2]
#
# Resumable: a finished model is kept; an interrupted training restarts from its last
# checkpoint (save_freq 100). One thread (OMP_NUM_THREADS=1, DP_*_PARALLELISM_THREADS=1),
# CPU only (CUDA_VISIBLE_DEVICES=""). DeePMD-kit's data and models are read from
# $AISCI_DEEPMD_DIR (default <source>/../shared/deepmd-kit).
set -euo pipefail

SRC="$(cd "$(dirname "$0")/.." && pwd)"
PEERS_DIR="${AISCI_PEERS:-$HOME/.cache/aisci-peers}"
VENV="$PEERS_DIR/deepmd"
OUT="$PEERS_DIR/models"
SHARED="${AISCI_DEEPMD_DIR:-$SRC/../shared/deepmd-kit}"
STEPS=300
ONLY="dpa3 dpa2"
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) STEPS="$2"; shift 2 ;;
    --only) ONLY="${2//,/ }"; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "make-deepmd-models: unknown argument '$1' (expected --steps N, --only dpa3|dpa2)" >&2
       exit 2 ;;
  esac
done
if [ ! -x "$VENV/bin/dp" ]; then
  echo "make-deepmd-models: no DeePMD-kit in $VENV; run scripts/install-peers.sh --only deepmd" >&2
  exit 1
fi
if [ ! -d "$SHARED/water-dft/data_0" ]; then
  echo "make-deepmd-models: no DeePMD-kit water data in $SHARED/water-dft" >&2
  exit 1
fi
SHARED="$(cd "$SHARED" && pwd)"
mkdir -p "$OUT"
export OMP_NUM_THREADS=1 DP_INTRA_OP_PARALLELISM_THREADS=1 DP_INTER_OP_PARALLELISM_THREADS=1
export CUDA_VISIBLE_DEVICES=""

make_dpa3() {
  local work="$OUT/dpa3-train" model="$OUT/water_dpa3.pth"
  if [ -f "$model" ]; then
    echo "make-deepmd-models: $model exists (delete it to retrain)"
    return 0
  fi
  mkdir -p "$work"
  "$VENV/bin/python" - "$SRC/bench/deepmd_peer/dpa3_input.json" "$work/input.json" \
    "$SHARED/water-dft" "$STEPS" <<'EOF'
import json, sys
src, dst, data, steps = sys.argv[1:]
text = open(src).read().replace("@DATA@", data)
conf = json.loads(text)
conf["training"]["numb_steps"] = int(steps)
for key in ("save_freq", "disp_freq"):    # a checkpoint and a line of lcurve.out by the end
    conf["training"][key] = min(conf["training"][key], int(steps))
json.dump(conf, open(dst, "w"), indent=2)
EOF
  cd "$work"
  local t0=$SECONDS restart=()
  if [ -f checkpoint ]; then
    restart=(--restart "$(cat checkpoint)")
    echo "make-deepmd-models: DPA3: restarting from $(cat checkpoint)"
  fi
  if [ ! -f "model.ckpt-$STEPS.pt" ]; then
    echo "make-deepmd-models: DPA3: dp --pt train, $STEPS steps, 1 thread (log: $work/train.log)"
    "$VENV/bin/dp" --pt train input.json "${restart[@]}" >> train.log 2>&1 ||
      { tail -n 20 train.log >&2; exit 1; }
  fi
  "$VENV/bin/dp" --pt freeze -o water_dpa3.pth >> train.log 2>&1 ||
    { tail -n 20 train.log >&2; exit 1; }
  mv water_dpa3.pth "$model"
  echo "make-deepmd-models: DPA3: $model ($((SECONDS - t0)) s); last lcurve.out line:"
  tail -n 1 lcurve.out
  cd "$SRC"
}

make_dpa2() {
  local model="$OUT/water_dpa2_cpu.pth"
  if [ -f "$model" ]; then
    echo "make-deepmd-models: $model exists"
    return 0
  fi
  "$VENV/bin/python" "$SRC/bench/deepmd_peer/refreeze_cpu.py" \
    "$SHARED/models/water_dpa2_frozen_model.pth" "$model.tmp" "$SHARED/water-dft/data_3"
  mv "$model.tmp" "$model"
}

for m in $ONLY; do
  case "$m" in
    dpa3) make_dpa3 ;;
    dpa2) make_dpa2 ;;
    *) echo "make-deepmd-models: unknown model '$m' (expected dpa3, dpa2)" >&2; exit 2 ;;
  esac
done
ls -la "$OUT"/*.pth
# Does each model load in Debian's torch 1.13 (what lmp-aisci uses)? Informational.
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  for m in "$OUT"/*.pth; do
    echo "make-deepmd-models: $(basename "$m") in Debian's torch:"
    /usr/bin/python3 "$SRC/bench/deepmd_peer/check_load.py" "$m" "$SHARED/water-dft/data_3" |
      sed 's/^/  /' || true
  done
fi
