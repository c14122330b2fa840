#!/bin/sh
# Reproduce the shipped equivariant water models and the pruning table (CPU, ~20 CPU
# minutes in all, 1 thread per process). Run from the repository root:
#   sh potentials/prune/run_water.sh [workdir]
set -e
PY=/usr/bin/python3
W=${1:-/tmp/equi}
M=potentials/models
mkdir -p "$W"
$PY -m potentials.equivariant.train --out "$W/full.ckpt" --channels 24 12 6 --time-budget 330
$PY -m potentials.prune.prune prune "$W/full.ckpt" "$W/pruned50.ckpt" --ratio 0.5 \
    --finetune-budget 90 --export $M/water_equivariant_pruned50.pt &
$PY -m potentials.prune.prune prune "$W/full.ckpt" "$W/pruned75.ckpt" --ratio 0.75 \
    --finetune-budget 90 --export $M/water_equivariant_pruned75.pt &
wait
# same sizes as the pruned models, trained from scratch for their whole budget
# (full training + scoring + fine-tuning, read from the pruned checkpoints)
$PY -m potentials.prune.prune scratch "$W/pruned50.ckpt" "$W/scratch50.ckpt" \
    --export $M/water_equivariant_scratch50.pt &
$PY -m potentials.prune.prune scratch "$W/pruned75.ckpt" "$W/scratch75.ckpt" \
    --export $M/water_equivariant_scratch75.pt &
wait
$PY -m potentials.equivariant.train --export "$W/full.ckpt" $M/water_equivariant_full.pt
$PY -m potentials.prune.prune table potentials/prune/water_table "$W/full.ckpt" \
    "$W/pruned50.ckpt" "$W/pruned75.ckpt" "$W/scratch50.ckpt" "$W/scratch75.ckpt"
