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
#     compress/<name>/              --only compress: one folder per bench/deepmd_peer/
#                                   compress/<name>.json (se_e2_a, se_e2_a_f32, se_e2_r,
#                                   se_e3, se_e3_tebd, dpa1, dpa2): input.json (that file
#                                   with our paths), m.pth (`dp --pt train` for the
#                                   file's numb_steps, 50, or 20 for se_e3, se_e3_tebd
#                                   and dpa2, on data_0, validation data_3, then
#                                   `dp --pt freeze -o m.pth`), mc.pth (`dp --pt
#                                   compress -i m.pth -o mc.pth -t input.json`, default
#                                   step 0.01 and extrapolate 5), train.log, freeze.log,
#                                   compress.log, lcurve.out, checkpoints, times.txt
#                                   (wall seconds of train, freeze, compress)
#     compress-bench/<name>/        --only bench: as compress/, from bench/deepmd_peer/
#                                   compress-bench/<name>.json: se_e2_a and DPA2 at the
#                                   sizes of DeePMD-kit's water examples (10 and 5 training
#                                   steps), the inputs of bench/deepmd_peer (sea-f, sea-c,
#                                   dpa2-f, dpa2-c)
#     compress/energies.txt         potential energy of each m.pth and mc.pth in
#                                   DeePMD-kit's LAMMPS on frame 0 of water-dft/data_3
#                                   (192 atoms, `run 0`), and their relative difference
#
#   bash scripts/make-deepmd-models.sh [--steps N] [--only dpa3|dpa2|compress|bench]
#
# --only takes a list (`--only dpa3,compress`); the default is dpa3 dpa2. compress is not
# in the default: its seven models take about 10 minutes on one core (train + freeze +
# compress, s: se_e2_a 54, se_e2_a_f32 53, se_e2_r 47, se_e3 63, se_e3_tebd 117, dpa1 51,
# dpa2 113, then 100 s of LAMMPS checks), and only tests/lammps/test_deepmd_compressed.py
# needs them. --steps sets the training steps of DPA3 (default 300) and of every compress
# model (default: the numb_steps of its json).
#
# What DeePMD-kit 3.2.0 compresses (deepmd/pt/model/descriptor/*.py, enable_compression):
# se_e2_a, se_e2_r, se_e3 (tabulated embedding nets); se_e3_tebd with tebd_input_mode
# strip; DPA1/se_atten with tebd_input_mode strip (type embedding tabulated) and
# attn_layer 0 (geometric part tabulated too; with attention layers only the type
# embedding is); DPA2 with repinit tebd_input_mode strip and resnet_dt false: only the
# two-body repinit is tabulated, the three-body repinit branch (use_three_body) and the
# repformer layers run as trained. The embedding nets need an activation that the tables
# know (tanh, gelu, relu, relu6, softplus, sigmoid, silu, linear) and resnet_dt false.
# DPA3 is refused ("Compression is unsupported for DPA3"); tebd_input_mode concat is
# refused ("Type embedding compression only works in strip mode"). All seven models here
# compress; if `dp compress` refuses one, the script keeps m.pth, writes the reason to
# compress/<name>/compress.refused and goes on. With the default step the tables follow
# the nets of these small models closely: m.pth and mc.pth give the same energy to the
# last digit (forces to 1e-14 eV/A), se_e3 (10x the strides) to 1.4e-8 relative; see
# compress/energies.txt.
#
# Resumable: a finished model is kept (delete its file or folder to remake it); an
# interrupted DPA3 training restarts from its last checkpoint (save_freq 100), a compress
# model saves at its last step only. One thread (OMP_NUM_THREADS=1,
# DP_*_PARALLELISM_THREADS=1), CPU only (CUDA_VISIBLE_DEVICES=""). DeePMD-kit's data and
# models are read from $AISCI_DEEPMD_DIR (default <source>/../shared/deepmd-kit).
set -euo pipefail

SRC="$(cd "$(dirname "$0")/.." && pwd)"
PEERS_DIR="${AISCI_PEERS:-$HOME/.cache/aisci-peers}"
VENV="$PEERS_DIR/deepmd"
OUT="$PEERS_DIR/models"
SHARED="${AISCI_DEEPMD_DIR:-$SRC/../shared/deepmd-kit}"
STEPS=""
ONLY="dpa3 dpa2"
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) STEPS="$2"; shift 2 ;;
    --only) ONLY="${2//,/ }"; shift 2 ;;
    -h|--help) sed -n '2,66p' "$0"; exit 0 ;;
    *) echo "make-deepmd-models: unknown argument '$1'" \
         "(expected --steps N, --only dpa3|dpa2|compress|bench)" >&2
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
  local work="$OUT/dpa3-train" model="$OUT/water_dpa3.pth" STEPS="${STEPS:-300}"
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

# One model of bench/deepmd_peer/compress/<name>.json: train, freeze (m.pth), compress
# (mc.pth, or compress.refused with DeePMD-kit's reason)
make_compress_one() {
  local name="$1" set="${2:-compress}" steps t0 t_train="-" t_freeze="-" t_compress="-"
  local work="$OUT/$set/$1"
  mkdir -p "$work"
  steps=$("$VENV/bin/python" - "$SRC/bench/deepmd_peer/$set/$name.json" \
    "$work/input.json" "$SHARED/water-dft" "$STEPS" <<'EOF'
import json, sys
src, dst, data, steps = sys.argv[1:]
conf = json.loads(open(src).read().replace("@DATA@", data))
t = conf["training"]
if steps:
    t["numb_steps"] = int(steps)
for key in ("save_freq", "disp_freq"):    # a checkpoint and a line of lcurve.out by the end
    t[key] = min(t[key], t["numb_steps"])
json.dump(conf, open(dst, "w"), indent=2)
print(t["numb_steps"])
EOF
  )
  cd "$work"
  if [ ! -f m.pth ]; then
    local restart=()
    if [ -f checkpoint ]; then
      restart=(--restart "$(cat checkpoint)")
      echo "make-deepmd-models: $set/$name: restarting from $(cat checkpoint)"
    fi
    if [ ! -f "model.ckpt-$steps.pt" ]; then
      echo "make-deepmd-models: $set/$name: dp --pt train, $steps steps (log: $work/train.log)"
      t0=$SECONDS
      "$VENV/bin/dp" --pt train input.json "${restart[@]}" >> train.log 2>&1 ||
        { tail -n 20 train.log >&2; exit 1; }
      t_train=$((SECONDS - t0))
    fi
    t0=$SECONDS
    "$VENV/bin/dp" --pt freeze -o m.tmp.pth >> freeze.log 2>&1 ||
      { tail -n 20 freeze.log >&2; exit 1; }
    mv m.tmp.pth m.pth
    t_freeze=$((SECONDS - t0))
  fi
  if [ ! -f mc.pth ] && [ ! -f compress.refused ]; then
    t0=$SECONDS
    if "$VENV/bin/dp" --pt compress -i m.pth -o mc.tmp.pth -t input.json >> compress.log 2>&1
    then
      mv mc.tmp.pth mc.pth
    else
      rm -f mc.tmp.pth
      { grep -E "Error|error:|Exception" compress.log || true; } | tail -n 1 > compress.refused
      [ -s compress.refused ] || tail -n 1 compress.log > compress.refused
      echo "make-deepmd-models: $set/$name: dp compress refused: $(cat compress.refused)" >&2
    fi
    t_compress=$((SECONDS - t0))
  fi
  if [ "$t_train$t_freeze$t_compress" != "---" ]; then
    echo "train_s $t_train freeze_s $t_freeze compress_s $t_compress" >> times.txt
  fi
  echo "make-deepmd-models: $set/$name: $(ls m.pth mc.pth 2>/dev/null | tr '\n' ' ')" \
    "(s: train $t_train, freeze $t_freeze, compress $t_compress); last lcurve.out line:"
  tail -n 1 lcurve.out
  cd "$SRC"
}

# Every m.pth and mc.pth in DeePMD-kit's LAMMPS (pair_style deepmd, one rank, one thread)
# on frame 0 of water-dft/data_3: potential energy of `run 0`
check_compress_lammps() {
  local dir="$OUT/compress" name m pe pe_m
  mkdir -p "$dir/lammps"
  AISCI_DEEPMD_DIR="$SHARED" "$VENV/bin/python" - "$SRC/tests/lammps" \
    "$dir/lammps/water.data" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import deepmd_systems as d
x, types, box = d.dft_frame(0, "data_3")
open(sys.argv[2], "w").write(d.data_file(x % box[0, 0], types, box[0, 0]))
EOF
  : > "$dir/energies.txt.tmp"
  for name in $(cd "$dir" && ls -d */ | tr -d /); do
    [ -f "$dir/$name/m.pth" ] || continue
    pe_m=""
    for m in m mc; do
      [ -f "$dir/$name/$m.pth" ] || continue
      cat > "$dir/lammps/in.$name.$m" <<EOF
units metal
atom_style atomic
boundary p p p
read_data water.data
pair_style deepmd $dir/$name/$m.pth
pair_coeff * *
thermo_style custom step pe
run 0
print "PE \$(pe:%.17g)"
EOF
      pe=$(cd "$dir/lammps" && "$VENV/bin/lmp" -in "in.$name.$m" -log "log.$name.$m" \
             -nocite -screen none > /dev/null 2>&1 &&
           sed -n 's/^PE //p' "log.$name.$m") || pe=""
      if [ -z "$pe" ]; then
        pe="failed (see $dir/lammps/log.$name.$m)"
      elif [ "$m" = m ]; then
        pe_m=$pe
      elif [ -n "$pe_m" ]; then
        pe="$pe rel_diff $(awk -v a="$pe" -v b="$pe_m" 'BEGIN { d = (a - b) / b;
          printf "%.3e", (d < 0 ? -d : d) + 0 }')"
      fi
      echo "$name/$m.pth $pe" | tee -a "$dir/energies.txt.tmp"
    done
  done
  mv "$dir/energies.txt.tmp" "$dir/energies.txt"
}

make_compress() {
  local f
  for f in "$SRC"/bench/deepmd_peer/compress/*.json; do
    make_compress_one "$(basename "$f" .json)"
  done
  echo "make-deepmd-models: energies in DeePMD-kit's LAMMPS, 192 atoms, eV" \
    "($OUT/compress/energies.txt):"
  check_compress_lammps
}

for m in $ONLY; do
  case "$m" in
    dpa3) make_dpa3 ;;
    dpa2) make_dpa2 ;;
    compress) make_compress ;;
    bench)
      for f in "$SRC"/bench/deepmd_peer/compress-bench/*.json; do
        make_compress_one "$(basename "$f" .json)" compress-bench
      done ;;
    *) echo "make-deepmd-models: unknown model '$m' (expected dpa3, dpa2, compress, bench)" >&2
       exit 2 ;;
  esac
done
compgen -G "$OUT/*.pth" > /dev/null || exit 0
ls -la "$OUT"/*.pth
# Does each model load in Debian's torch 1.13 (what lmp-aisci uses)? Informational.
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  for m in "$OUT"/*.pth; do
    echo "make-deepmd-models: $(basename "$m") in Debian's torch:"
    /usr/bin/python3 "$SRC/bench/deepmd_peer/check_load.py" "$m" "$SHARED/water-dft/data_3" |
      sed 's/^/  /' || true
  done
fi
