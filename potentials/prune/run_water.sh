#!/bin/sh
# Reproduce the shipped equivariant water models and the pruning table (CPU, 1 thread
# per process, at most 2 processes at once; about 7000 CPU s of training in all:
# full 600 + 800 s (continued), iterative fine-tuning 2 x 200 s, from scratch
# ~1610 + ~1815 s). Run from the repository root:
#   sh potentials/prune/run_water.sh [workdir]
# Data: the clean-force labels potentials/data/water_qtip4pf_clean.npz (the default of
# train.py and prune.py; the forces of water_qtip4pf.npz carry thermostat noise, see
# docs/potentials.md). --time-budget / --finetune-budget are CPU seconds.
# Fairness rule: a from-scratch model of a pruned size gets the pruned model's whole
# budget (full training + scoring + fine-tuning, read from the pruned checkpoint).
# (The shipped scratch50 is the earlier 804 CPU s one, see docs/equivariant.md: there
# was no CPU left for its 1610 s rerun; this script trains the fair one.)
set -e
PY=/usr/bin/python3
W=${1:-/tmp/equi}
M=potentials/models
D=potentials/data/water_qtip4pf_clean.npz
RUN="env OMP_NUM_THREADS=1 nice -n 10 $PY"
mkdir -p "$W"
# full model: 600 CPU s (Adam 3e-3 -> 1e-4), then continued 800 CPU s (new Adam,
# 1e-3 -> 3e-5)
$RUN -m potentials.equivariant.train --data $D --out "$W/full600.ckpt" --channels 24 12 6 \
    --time-budget 600 --threads 1
$RUN -m potentials.equivariant.train --data $D --init "$W/full600.ckpt" --out "$W/full.ckpt" \
    --time-budget 800 --lr 1e-3 --lr-final 3e-5 --threads 1
# iterative pruning, channel counts of the earlier one-shot cuts at 50 % / 75 % FLOPs:
# 24/12/6 -> 18/9/5 -> 11/6/3 (2 x 100 s fine-tuning), then -> 8/5/2 -> 4/4/1
# (2 x 100 s more), re-scoring the saliency before every cut
$RUN -m potentials.prune.prune --data $D prune "$W/full.ckpt" "$W/pruned50.ckpt" \
    --channels 11 6 3 --steps 2 --finetune-budget 200 --lr 1e-3 --lr-final 3e-5 \
    --export $M/water_equivariant_pruned50.pt
$RUN -m potentials.prune.prune --data $D scratch "$W/pruned50.ckpt" "$W/scratch50.ckpt" \
    --lr 3e-3 --lr-final 3e-5 --export $M/water_equivariant_scratch50.pt &
$RUN -m potentials.prune.prune --data $D prune "$W/pruned50.ckpt" "$W/pruned75.ckpt" \
    --channels 4 4 1 --steps 2 --finetune-budget 200 --lr 1e-3 --lr-final 3e-5 \
    --export $M/water_equivariant_pruned75.pt
$RUN -m potentials.prune.prune --data $D scratch "$W/pruned75.ckpt" "$W/scratch75.ckpt" \
    --lr 3e-3 --lr-final 3e-5 --export $M/water_equivariant_scratch75.pt
wait
$RUN -m potentials.equivariant.train --export "$W/full.ckpt" $M/water_equivariant_full.pt
# test errors evaluated on the clean test split (96 frames)
$RUN -m potentials.prune.prune --data $D table potentials/prune/water_table "$W/full.ckpt" \
    "$W/pruned50.ckpt" "$W/pruned75.ckpt" "$W/scratch50.ckpt" "$W/scratch75.ckpt" \
    "$W/full600.ckpt"
