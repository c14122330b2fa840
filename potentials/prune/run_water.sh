#!/bin/sh
# Reproduce the shipped equivariant water models and the pruning table (CPU, 1 thread
# per process, at most 2 processes at once; about 2600 CPU s of training in all:
# full 600 s, fine-tuning 2 x 200 s, from scratch 2 x ~805 s). Run from the
# repository root:
#   sh potentials/prune/run_water.sh [workdir]
# Data: the clean-force labels potentials/data/water_qtip4pf_clean.npz (the default of
# train.py and prune.py; the forces of water_qtip4pf.npz carry thermostat noise, see
# docs/potentials.md). --time-budget / --finetune-budget are CPU seconds.
set -e
PY=/usr/bin/python3
W=${1:-/tmp/equi}
M=potentials/models
D=potentials/data/water_qtip4pf_clean.npz
RUN="env OMP_NUM_THREADS=1 nice -n 10 $PY"
mkdir -p "$W"
$RUN -m potentials.equivariant.train --data $D --out "$W/full.ckpt" --channels 24 12 6 \
    --time-budget 600 --threads 1
$RUN -m potentials.prune.prune --data $D prune "$W/full.ckpt" "$W/pruned50.ckpt" --ratio 0.5 \
    --finetune-budget 200 --export $M/water_equivariant_pruned50.pt &
$RUN -m potentials.prune.prune --data $D prune "$W/full.ckpt" "$W/pruned75.ckpt" --ratio 0.75 \
    --finetune-budget 200 --export $M/water_equivariant_pruned75.pt &
wait
# same sizes as the pruned models, trained from scratch for their whole budget
# (full training + scoring + fine-tuning, read from the pruned checkpoints)
$RUN -m potentials.prune.prune --data $D scratch "$W/pruned50.ckpt" "$W/scratch50.ckpt" \
    --export $M/water_equivariant_scratch50.pt &
$RUN -m potentials.prune.prune --data $D scratch "$W/pruned75.ckpt" "$W/scratch75.ckpt" \
    --export $M/water_equivariant_scratch75.pt &
wait
$RUN -m potentials.equivariant.train --export "$W/full.ckpt" $M/water_equivariant_full.pt
# test errors evaluated on the clean test split (96 frames)
$RUN -m potentials.prune.prune --data $D table potentials/prune/water_table "$W/full.ckpt" \
    "$W/pruned50.ckpt" "$W/pruned75.ckpt" "$W/scratch50.ckpt" "$W/scratch75.ckpt"
