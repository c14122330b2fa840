#!/usr/bin/env bash
# Make DPLR models (a short-range energy model and a dipole/DW model) with DeePMD-kit
# 3.2.0 itself, from DeePMD-kit's DPLR water example (../shared/deepmd-kit/dplr-water/train:
# dw.json, ener.json, data), for tests/lammps/test_deepmd_dplr_models.py and docs/deepmd.md
# ("DPLR models from DeePMD-kit"). Frozen DeePMD-kit models carry DeePMD-kit's code, so
# they go to a cache outside the clone and are never committed:
#
#   $AISCI_PEERS/models/dplr/        (default ~/.cache/aisci-peers/models/dplr)
#     PyTorch recipe (--only pt; venv $AISCI_PEERS/deepmd, scripts/install-peers.sh
#     --only deepmd), about 4 minutes:
#       dw_pt.pth          dp --pt train dw.json + dp --pt freeze (dipole model)
#       dw_pt.dp           the same model, dp convert-backend (backend-neutral file)
#       data_sr/           the training frames with the long-range part of DPLR taken off
#                          energy, force and virial by DeePMD-kit's dipole_charge code
#                          (pt_expt backend) with dw_pt.dp, as the TensorFlow modifier does
#                          while it trains
#       ener_sr_pt.pth     dp --pt train ener.json without its "modifier" block, on
#                          data_sr, + dp --pt freeze (short-range energy model)
#     TensorFlow recipe (--only tf; venv $AISCI_PEERS/deepmd-tf, made by --install-tf:
#     about 3 minutes and 6.9 GB), about 2 minutes:
#       dw_tf.pb           dp --tf train dw.json + dp --tf freeze
#       ener_tf.pb         dp --tf train ener.json (modifier dipole_charge, dw.pb) + freeze:
#                          DeePMD-kit's DPLR model (short range + dipole model inside)
#       dw_tf_conv.pth     dp convert-backend dw_tf.pb dw_tf_conv.pth
#       ener_sr_tf_conv.pth dp convert-backend ener_tf.pb ener_sr_tf_conv.pth (the
#                          modifier is dropped: the short-range model only)
#     data/ pt-dw/ pt-ener/ tf-dw/ tf-ener/   the data with atomic_dipole on every atom;
#                          the training folders (input.json, lcurve.out, train.log)
#
#   bash scripts/make-deepmd-dplr-models.sh [--steps N] [--only pt|tf] [--install-tf]
#
# Times are for the default --steps 20 (a check of the recipe, not a useful model) on one
# thread of a loaded 2-core machine; both recipes by default, each needs the PyTorch venv
# (it writes the training inputs). Why not `dp --pt train ener.json` as it is: DeePMD-kit
# 3.2.0's PyTorch backend has no dipole_charge modifier ("RuntimeError: Unknown modifier
# type: dipole_charge"), so the long-range part is taken off the labels beforehand.
# Idempotent: a finished model is kept (delete it to redo). CPU only. DeePMD-kit's example
# is read from $AISCI_DEEPMD_DIR (default <source>/../shared/deepmd-kit).
set -euo pipefail

SRC="$(cd "$(dirname "$0")/.." && pwd)"
PEERS_DIR="${AISCI_PEERS:-$HOME/.cache/aisci-peers}"
VENV="$PEERS_DIR/deepmd"
VENV_TF="$PEERS_DIR/deepmd-tf"
OUT="$PEERS_DIR/models/dplr"
SHARED="${AISCI_DEEPMD_DIR:-$SRC/../shared/deepmd-kit}"
STEPS=20
ONLY="pt tf"
INSTALL_TF=0
while [ $# -gt 0 ]; do
  case "$1" in
    --steps)
      if [ $# -lt 2 ] || ! [[ "$2" =~ ^[1-9][0-9]*$ ]]; then
        echo "make-deepmd-dplr-models: --steps needs a positive integer" >&2; exit 2
      fi
      STEPS="$2"; shift 2 ;;
    --only)
      [ $# -ge 2 ] || { echo "make-deepmd-dplr-models: --only needs pt or tf" >&2; exit 2; }
      ONLY="${2//,/ }"; shift 2 ;;
    --install-tf) INSTALL_TF=1; shift ;;
    -h|--help) sed -n '2,38p' "$0"; exit 0 ;;
    *) echo "make-deepmd-dplr-models: unknown argument '$1' (expected --steps N, --only pt|tf," \
            "--install-tf)" >&2
       exit 2 ;;
  esac
done
for m in $ONLY; do
  case "$m" in pt|tf) ;; *)
    echo "make-deepmd-dplr-models: unknown recipe '$m' (expected pt, tf)" >&2; exit 2 ;;
  esac
done
say() { echo "make-deepmd-dplr-models: $*"; }

if [ ! -x "$VENV/bin/dp" ]; then
  echo "make-deepmd-dplr-models: no DeePMD-kit in $VENV; run" \
       "bash scripts/install-peers.sh --only deepmd" >&2
  exit 1
fi
EXAMPLE="$SHARED/dplr-water/train"
if [ ! -f "$EXAMPLE/dw.json" ] || [ ! -f "$EXAMPLE/data/set.000/atomic_dipole.npy" ]; then
  echo "make-deepmd-dplr-models: no DeePMD-kit DPLR example in $EXAMPLE (dw.json, ener.json," \
       "data/)" >&2
  exit 1
fi
EXAMPLE="$(cd "$EXAMPLE" && pwd)"
export OMP_NUM_THREADS=1 DP_INTRA_OP_PARALLELISM_THREADS=1 DP_INTER_OP_PARALLELISM_THREADS=1
export CUDA_VISIBLE_DEVICES="" TF_CPP_MIN_LOG_LEVEL=2
mkdir -p "$OUT"
NICE=(nice -n 19)

# TensorFlow venv: DeePMD-kit 3.2.0 pins tensorflow-cpu 2.21.0 in its "cpu" extra; "torch"
# is needed too, for dp convert-backend to .pth.
if [ "$INSTALL_TF" = 1 ] && [ ! -x "$VENV_TF/bin/dp" ]; then
  say "making $VENV_TF: pip install deepmd-kit[cpu,torch]==3.2.0 nvidia-cuda-runtime-cu12"
  "${AISCI_PEERS_PYTHON:-/usr/bin/python3}" -m venv "$VENV_TF"
  "$VENV_TF/bin/pip" install --no-input -q --upgrade pip
  "${NICE[@]}" "$VENV_TF/bin/pip" install --no-input -q "deepmd-kit[cpu,torch]==3.2.0" \
    nvidia-cuda-runtime-cu12
fi

# train_input SRC_JSON DST_JSON SYSTEM [MODEL_NAME|-]: DeePMD-kit's input with our data
# path and step count; MODEL_NAME sets the modifier's dipole model, '-' removes the block.
train_input() {
  "$VENV/bin/python" - "$@" "$STEPS" <<'EOF'
import json, sys
src, dst, system, model_name, steps = sys.argv[1:]
conf = json.load(open(src))
tr = conf["training"]
tr["training_data"]["systems"] = [system]
tr["numb_steps"] = int(steps)
tr["disp_freq"] = max(1, int(steps) // 2)
tr["save_freq"] = int(steps)
if model_name == "-":
    conf["model"].pop("modifier", None)
elif model_name:
    conf["model"]["modifier"]["model_name"] = model_name
json.dump(conf, open(dst, "w"), indent=1)
EOF
}

# run_dp LOG DP ARGS...: run a dp command niced, log appended; on failure show the log.
run_dp() {
  local log="$1"; shift
  say "  $(printf '%s ' "$@" | sed "s|$PEERS_DIR|\$AISCI_PEERS|g")"
  if ! "${NICE[@]}" "$@" >> "$log" 2>&1; then
    echo "make-deepmd-dplr-models: failed: $* (last lines of $log):" >&2
    tail -n 15 "$log" >&2
    exit 1
  fi
}

# The example's atomic_dipole.npy holds the O atoms only (what the TensorFlow backend
# reads); DeePMD-kit's PyTorch backend wants one vector per atom (zeros on H).
make_data() {
  [ -f "$OUT/data/set.000/atomic_dipole.npy" ] && return 0
  say "data: $EXAMPLE/data -> $OUT/data (atomic_dipole on every atom, zeros on H)"
  "$VENV/bin/python" - "$EXAMPLE/data" "$OUT/data" <<'EOF'
import os, shutil, sys
import numpy as np
src, dst = sys.argv[1:]
os.makedirs(os.path.join(dst, "set.000"), exist_ok=True)
for f in ("type.raw", "type_map.raw"):
    shutil.copy(os.path.join(src, f), dst)
for f in ("coord", "box", "energy", "force", "virial"):
    shutil.copy(os.path.join(src, "set.000", f + ".npy"), os.path.join(dst, "set.000"))
types = np.loadtxt(os.path.join(src, "type.raw"), dtype=int)
dip = np.load(os.path.join(src, "set.000", "atomic_dipole.npy"))
dip = dip.reshape(dip.shape[0], -1, 3)
full = np.zeros((dip.shape[0], len(types), 3))
full[:, types == 0] = dip
np.save(os.path.join(dst, "set.000", "atomic_dipole.npy"), full.reshape(dip.shape[0], -1))
EOF
}

make_pt() {
  local t0=$SECONDS
  make_data
  if [ ! -f "$OUT/dw_pt.pth" ]; then
    mkdir -p "$OUT/pt-dw"
    (cd "$OUT/pt-dw" && rm -f checkpoint model.ckpt*.pt &&
     train_input "$EXAMPLE/dw.json" input.json "$OUT/data" "" &&
     say "PyTorch dipole model: $STEPS steps (log: $OUT/pt-dw/train.log)" &&
     run_dp train.log "$VENV/bin/dp" --pt train input.json &&
     run_dp train.log "$VENV/bin/dp" --pt freeze -o dw_pt.pth && mv dw_pt.pth "$OUT/")
  fi
  if [ ! -f "$OUT/dw_pt.dp" ]; then
    run_dp "$OUT/pt-dw/train.log" "$VENV/bin/dp" convert-backend "$OUT/dw_pt.pth" \
      "$OUT/dw_pt.dp.tmp.dp"
    mv "$OUT/dw_pt.dp.tmp.dp" "$OUT/dw_pt.dp"
  fi
  if [ ! -f "$OUT/data_sr/set.000/energy.npy" ]; then
    say "short-range labels: DPLR long-range part (DeePMD-kit's pt_expt dipole_charge," \
        "ewald_beta and ewald_h of ener.json) taken off energy, force, virial -> $OUT/data_sr"
    "${NICE[@]}" "$VENV/bin/python" - "$OUT/data" "$OUT/data_sr" "$OUT/dw_pt.dp" \
      "$EXAMPLE/ener.json" "$EXAMPLE/dw.json" <<'EOF'
import json, os, shutil, sys
import numpy as np
import torch
from deepmd.pt_expt.modifier.dipole_charge import DipoleChargeModifier
src, dst, dw, ener, dw_json = sys.argv[1:]
mod = json.load(open(ener))["model"]["modifier"]
fit = json.load(open(dw_json))["model"]["fitting_net"]
tf_sel = fit.get("dipole_type", fit.get("sel_type"))
from deepmd.dpmodel.utils.serialization import load_dp_model
from deepmd.pt_expt.model.model import BaseModel
dmodel = BaseModel.deserialize(load_dp_model(dw)["model"])
sel = [int(t) for t in dmodel.get_sel_type()]
# ener.json's model_charge_map follows dw.json's dipole_type ([O]); DeePMD-kit's PyTorch
# dipole models report every type in get_sel_type() (the fitting excludes the others), so
# the types outside dipole_type get WC charge 0.
charge = [mod["model_charge_map"][tf_sel.index(t)] if t in tf_sel else 0.0 for t in sel]
m = DipoleChargeModifier(dw, charge, mod["sys_charge_map"], mod["ewald_h"], mod["ewald_beta"],
                         dipole_model=dmodel)
os.makedirs(os.path.join(dst, "set.000"), exist_ok=True)
for f in ("type.raw", "type_map.raw"):
    shutil.copy(os.path.join(src, f), dst)
s = os.path.join(src, "set.000")
coord = np.load(os.path.join(s, "coord.npy")).astype(np.float64)
box = np.load(os.path.join(s, "box.npy")).astype(np.float64)
atype = torch.tensor(np.loadtxt(os.path.join(src, "type.raw"), dtype=np.int64))[None]
nf = coord.shape[0]
e_lr, f_lr, v_lr = np.zeros(nf), np.zeros_like(coord), np.zeros((nf, 9))
for k in range(nf):
    out = m(torch.tensor(coord[k]).reshape(1, -1, 3), atype, torch.tensor(box[k]).reshape(1, 3, 3))
    e_lr[k] = out["energy"].item()
    f_lr[k] = out["force"].detach().numpy().ravel()
    v_lr[k] = out["virial"].detach().numpy().ravel()
for name, lr in (("energy", e_lr), ("force", f_lr), ("virial", v_lr)):
    a = np.load(os.path.join(s, name + ".npy")).astype(np.float64)
    np.save(os.path.join(dst, "set.000", name + ".npy"), a - lr.reshape(a.shape))
for name in ("coord", "box", "atomic_dipole"):
    shutil.copy(os.path.join(s, name + ".npy"), os.path.join(dst, "set.000"))
print("make-deepmd-dplr-models:   %d frames, long-range energy %.3f .. %.3f eV (sel_type %s, "
      "WC charges %s)" % (nf, e_lr.min(), e_lr.max(), sel, charge))
EOF
  fi
  if [ ! -f "$OUT/ener_sr_pt.pth" ]; then
    mkdir -p "$OUT/pt-ener"
    (cd "$OUT/pt-ener" && rm -f checkpoint model.ckpt*.pt &&
     train_input "$EXAMPLE/ener.json" input.json "$OUT/data_sr" - &&
     say "PyTorch short-range model: $STEPS steps, no modifier, labels of data_sr" \
         "(log: $OUT/pt-ener/train.log)" &&
     run_dp train.log "$VENV/bin/dp" --pt train input.json &&
     run_dp train.log "$VENV/bin/dp" --pt freeze -o ener_sr_pt.pth &&
     mv ener_sr_pt.pth "$OUT/")
  fi
  say "PyTorch recipe done ($((SECONDS - t0)) s): $OUT/dw_pt.pth, $OUT/ener_sr_pt.pth"
}

make_tf() {
  local t0=$SECONDS
  if [ ! -x "$VENV_TF/bin/dp" ]; then
    echo "make-deepmd-dplr-models: no TensorFlow DeePMD-kit in $VENV_TF (pass --install-tf," \
         "or --only pt)" >&2
    exit 1
  fi
  if [ ! -f "$OUT/dw_tf.pb" ]; then
    mkdir -p "$OUT/tf-dw"
    (cd "$OUT/tf-dw" && rm -f checkpoint model.ckpt* &&
     train_input "$EXAMPLE/dw.json" input.json "$EXAMPLE/data" "" &&
     say "TensorFlow dipole model: $STEPS steps (log: $OUT/tf-dw/train.log)" &&
     run_dp train.log "$VENV_TF/bin/dp" --tf train input.json &&
     run_dp train.log "$VENV_TF/bin/dp" --tf freeze -o dw.pb && cp dw.pb "$OUT/dw_tf.pb")
  fi
  if [ ! -f "$OUT/ener_tf.pb" ]; then
    # the modifier names its dipole model relative to the working directory (dw.pb)
    mkdir -p "$OUT/tf-ener"
    (cd "$OUT/tf-ener" && rm -f checkpoint model.ckpt* && cp "$OUT/dw_tf.pb" dw.pb &&
     train_input "$EXAMPLE/ener.json" input.json "$EXAMPLE/data" dw.pb &&
     say "TensorFlow DPLR model (modifier dipole_charge): $STEPS steps" \
         "(log: $OUT/tf-ener/train.log)" &&
     run_dp train.log "$VENV_TF/bin/dp" --tf train input.json &&
     run_dp train.log "$VENV_TF/bin/dp" --tf freeze -o ener.pb && cp ener.pb "$OUT/ener_tf.pb")
  fi
  local pair from to
  for pair in "dw_tf.pb dw_tf_conv.pth" "ener_tf.pb ener_sr_tf_conv.pth"; do
    read -r from to <<< "$pair"
    if [ ! -f "$OUT/$to" ]; then
      run_dp "$OUT/tf-ener/convert.log" "$VENV_TF/bin/dp" convert-backend "$OUT/$from" \
        "$OUT/$to.tmp.pth"
      mv "$OUT/$to.tmp.pth" "$OUT/$to"
    fi
  done
  say "TensorFlow recipe done ($((SECONDS - t0)) s): $OUT/ener_tf.pb, $OUT/dw_tf_conv.pth," \
      "$OUT/ener_sr_tf_conv.pth"
}

for m in $ONLY; do "make_$m"; done
ls -la "$OUT"/*.pth "$OUT"/*.pb "$OUT"/*.dp 2>/dev/null || true
