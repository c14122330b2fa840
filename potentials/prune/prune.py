"""Structural pruning of the equivariant model: whole channels of each order l (an
irreducible block each: 1, 3 or 5 components), down to dropping an order entirely.

Usage::

    # score, prune at a FLOP-reduction ratio, fine-tune, write a checkpoint (+ model file)
    /usr/bin/python3 -m potentials.prune.prune prune full.ckpt pruned50.ckpt --ratio 0.5 \
        --finetune-budget 60 [--export water_equivariant_pruned50.pt]
    # same size as a pruned checkpoint, trained from scratch
    /usr/bin/python3 -m potentials.prune.prune scratch pruned50.ckpt scratch50.ckpt \
        --time-budget 390
    # table (markdown + csv) of parameters, FLOPs, errors and timings
    /usr/bin/python3 -m potentials.prune.prune table out_prefix full.ckpt pruned50.ckpt ...

Method.

1. Saliency. Every channel c of order l has a mask m_lc (a buffer of ones in the model
   that multiplies the channel's features after each layer and its summed messages;
   with m_lc = 0 the model is exactly the one without that channel). The first-order
   Taylor estimate of the loss change when the channel is removed is
   |dL/dm_lc| (m = 1), with L the training loss (energy + forces, so the gradient
   goes through the force term's second derivative). It is averaged, as an absolute
   value per batch, over --score-batches batches of training frames.
2. Selection. Removing channels is ranked by saliency per FLOP saved (an l = 2 channel
   costs about 9x an l = 0 one on every edge); channels are removed greedily, cheapest
   first, until the analytic FLOP count is <= (1 - ratio) x the full model's. At least
   --min-scalars l = 0 channels are kept; l = 1 and l = 2 may go to zero channels.
3. Surgery. A new, smaller model is built with channels [C0', C1', C2'] and every
   weight sliced (rows of the output channels kept, columns of the input channels
   kept; per tensor-product path, per radial output block). Before fine-tuning it is
   checked to equal the full model with the removed channels' masks set to 0.
4. Fine-tuning with potentials.equivariant.train.fit (same loss, a lower starting
   learning rate) for --finetune-budget CPU seconds; then RMSEs and export.

FLOPs are counted analytically (multiply-adds x 2 of the forward pass, per atom at the
mean neighbour count of the data set); the autograd force pass costs roughly twice that
with the same proportions. The table also gives a measured time per energy+force call
from Python (one thread) as a proxy check.
"""

import argparse
import csv
import json
import os
import sys
import time

import numpy as np
import torch

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from potentials.common.evaluate import (batch_graphs, energy_forces, frame_graph,  # noqa: E402
                                        load_frames, rmse_on_frames, split_frames)
from potentials.equivariant import train as eqt  # noqa: E402
from potentials.equivariant.model import PATHS, build  # noqa: E402

DIM = (1, 3, 9)  # stored components per channel of order l (l = 2: 3x3 traceless symmetric)
# Multiply-adds per output channel and edge of each path (TP, radial weight, accumulate).
PATH_COST = {(0, 0, 0): 2, (1, 1, 0): 5, (2, 2, 0): 14, (0, 1, 1): 7, (1, 0, 1): 6,
             (1, 2, 1): 12, (2, 1, 1): 15, (0, 2, 2): 19, (2, 0, 2): 18, (1, 1, 2): 27,
             (2, 2, 2): 54}


def layer_dims(config):
    """(cin, cout) channels per order of every layer, as EquivariantModel builds them."""
    c = list(config["channels"])
    nl = int(config["num_layers"])
    out = []
    for k in range(nl):
        cin = [c[0], 0, 0] if k == 0 else c
        cout = [c[0], 0, 0] if k == nl - 1 else c
        out.append((cin, cout))
    return out


def flops_per_atom(config, neighbours):
    """Analytic forward FLOPs (2 x multiply-adds) per atom with ``neighbours`` edges per
    atom."""
    nr, hr, ho = config["num_radial"], config["radial_hidden"], config["readout_hidden"]
    macs = neighbours * nr * 4.0  # Bessel basis and envelope
    for cin, cout in layer_dims(config):
        active = [p for p in PATHS if cin[p[0]] > 0 and cout[p[2]] > 0]
        rows = [sum(cout[p[2]] for p in active if p[0] == l) for l in range(3)]
        n_rad = sum(cout[p[2]] for p in active)
        macs += sum(rows[l] * cin[l] * DIM[l] for l in range(3))            # node mixing
        macs += neighbours * (nr * hr + hr * n_rad)                          # radial MLP
        macs += neighbours * sum(cout[p[2]] * PATH_COST[p] for p in active)  # products
        macs += neighbours * sum(cout[l] * DIM[l] for l in range(3))         # scatter
        n_inv = sum(cout)
        macs += n_inv * cout[0] + cout[0] * cout[0] + n_inv * (cout[1] + cout[2])
        macs += cout[1] * cout[1] * 3 + cout[2] * cout[2] * 9 + 3 * cout[1] + 9 * cout[2]
    c0 = config["channels"][0]
    macs += c0 * ho + ho
    return 2.0 * macs


def count_params(model):
    return int(sum(p.numel() for p in model.parameters()))


def taylor_saliency(model, frames, graphs, indices, batches=8, batch=4, seed=1):
    """Mean over batches of |dL/dmask| per channel: list of 3 numpy arrays (l = 0, 1, 2)."""
    rng = np.random.default_rng(seed)
    model = model.to(torch.float64)
    masks = [model.mask0, model.mask1, model.mask2]
    for m in masks:
        m.requires_grad_(True)
    acc = [np.zeros(m.numel()) for m in masks]
    order = rng.permutation(indices)
    for b in range(batches):
        sel = order[b * batch:(b + 1) * batch]
        loss = eqt.batch_loss(model, frames, graphs, sel, torch.float64)
        grads = torch.autograd.grad(loss, [m for m in masks if m.numel() > 0])
        k = 0
        for l, m in enumerate(masks):
            if m.numel() > 0:
                acc[l] += np.abs(grads[k].detach().numpy())
                k += 1
    for m in masks:
        m.requires_grad_(False)
    return [a / batches for a in acc]


def select_channels(config, saliency, ratio, neighbours, min_scalars=2):
    """Kept channel indices per order: greedy removal by saliency per FLOP saved until
    the FLOPs are <= (1 - ratio) x full. Returns (keep lists, removal log)."""
    full = flops_per_atom(config, neighbours)
    target = (1.0 - ratio) * full
    keep = [list(range(c)) for c in config["channels"]]
    log = []

    def cfg_of(k):
        c = dict(config)
        c["channels"] = [len(x) for x in k]
        return c

    while flops_per_atom(cfg_of(keep), neighbours) > target:
        best = None
        current = flops_per_atom(cfg_of(keep), neighbours)
        for l in range(3):
            if l == 0 and len(keep[0]) <= min_scalars:
                continue
            for c in keep[l]:
                trial = [list(x) for x in keep]
                trial[l].remove(c)
                saved = current - flops_per_atom(cfg_of(trial), neighbours)
                score = saliency[l][c] / max(saved, 1e-30)
                if best is None or score < best[0]:
                    best = (score, l, c)
        if best is None:
            break
        keep[best[1]].remove(best[2])
        log.append((best[1], best[2], float(saliency[best[1]][best[2]])))
    return keep, log


def _path_rows(layer, p, keep_out):
    return [layer.row_in[p] + c for c in keep_out], [layer.row_rad[p] + c for c in keep_out]


def prune_model(model, keep):
    """Smaller model keeping channels ``keep`` = [K0, K1, K2] (index lists), weights
    sliced from ``model``; returns (new model float64, new config)."""
    old_cfg = dict(model._aisci_config)
    cfg = dict(old_cfg)
    cfg["channels"] = [len(k) for k in keep]
    new = build(cfg).to(torch.float64)
    new._aisci_config = cfg
    K = [torch.tensor(k, dtype=torch.int64) for k in keep]
    sd_old = {k: v.detach().to(torch.float64) for k, v in model.state_dict().items()}
    sd = {}
    sd["embedding.weight"] = sd_old["embedding.weight"][:, K[0]]
    sd["rbf.freq"] = sd_old["rbf.freq"]
    for name in ("readout.type_energy", "readout.energy_scale", "readout.mlp.lin1.bias",
                 "readout.mlp.lin2.weight", "readout.mlp.lin2.bias"):
        sd[name] = sd_old[name]
    sd["readout.mlp.lin1.weight"] = sd_old["readout.mlp.lin1.weight"][:, K[0]]
    for l in range(3):
        sd["mask%d" % l] = torch.ones(len(keep[l]), dtype=torch.float64)
    for k, (lo_old, lnew) in enumerate(zip(model.layers, new.layers)):
        pre = "layers.%d." % k
        w_in = [sd_old[pre + "w_in%d" % l] for l in range(3)]
        new_w_in = [torch.zeros_like(getattr(lnew, "w_in%d" % l)) for l in range(3)]
        rad_w = sd_old[pre + "radial2.weight"]
        rad_b = sd_old[pre + "radial2.bias"]
        new_rad_w = torch.zeros_like(lnew.radial2.weight)
        new_rad_b = torch.zeros_like(lnew.radial2.bias)
        for p in lnew.active:
            li, _, lo = PATHS[p]
            rows_in, rows_rad = _path_rows(lo_old, p, keep[lo])
            a, b = lnew.row_in[p], lnew.row_rad[p]
            n = len(keep[lo])
            new_w_in[li][a:a + n] = w_in[li][rows_in][:, K[li]]
            new_rad_w[b:b + n] = rad_w[rows_rad]
            new_rad_b[b:b + n] = rad_b[rows_rad]
        for l in range(3):
            sd[pre + "w_in%d" % l] = new_w_in[l]
        sd[pre + "radial2.weight"] = new_rad_w
        sd[pre + "radial2.bias"] = new_rad_b
        sd[pre + "radial1.weight"] = sd_old[pre + "radial1.weight"]
        sd[pre + "radial1.bias"] = sd_old[pre + "radial1.bias"]
        co = lo_old.cout
        # invariants q = [m0 (C0), |m1|^2 (C1), |m2|^2 (C2)] of the output orders present
        inv_cols = list(keep[0])
        if co[1] > 0:
            inv_cols += [co[0] + c for c in keep[1]]
        if co[2] > 0:
            inv_cols += [co[0] + co[1] + c for c in keep[2]]
        inv_cols = torch.tensor(inv_cols, dtype=torch.int64)
        sd[pre + "update_a.weight"] = sd_old[pre + "update_a.weight"][K[0]][:, inv_cols]
        sd[pre + "update_a.bias"] = sd_old[pre + "update_a.bias"][K[0]]
        sd[pre + "update_b.weight"] = sd_old[pre + "update_b.weight"][K[0]][:, K[0]]
        sd[pre + "update_b.bias"] = sd_old[pre + "update_b.bias"][K[0]]
        gate_rows = []
        if co[1] > 0:
            gate_rows += list(keep[1])
        if co[2] > 0:
            gate_rows += [co[1] + c for c in keep[2]]
        if gate_rows:
            g = torch.tensor(gate_rows, dtype=torch.int64)
            sd[pre + "gate.weight"] = sd_old[pre + "gate.weight"][g][:, inv_cols]
            sd[pre + "gate.bias"] = sd_old[pre + "gate.bias"][g]
        else:  # no l > 0 output: the gate is unused
            sd[pre + "gate.weight"] = torch.zeros_like(lnew.gate.weight)
            sd[pre + "gate.bias"] = torch.zeros_like(lnew.gate.bias)
        if co[1] > 0:
            sd[pre + "w_v"] = sd_old[pre + "w_v"][K[1]][:, K[1]]
        else:
            sd[pre + "w_v"] = torch.zeros_like(lnew.w_v)
        if co[2] > 0:
            sd[pre + "w_t"] = sd_old[pre + "w_t"][K[2]][:, K[2]]
        else:
            sd[pre + "w_t"] = torch.zeros_like(lnew.w_t)
    new.load_state_dict(sd)
    return new, cfg


def masked_copy(model, keep):
    """The full model with the masks of the channels not in ``keep`` set to 0."""
    cfg = model._aisci_config
    m = build(cfg).to(torch.float64)
    m.load_state_dict(model.state_dict())
    with torch.no_grad():
        for l, mask in enumerate((m.mask0, m.mask1, m.mask2)):
            mask.zero_()
            mask[keep[l]] = 1.0
    return m


def load_ckpt(path):
    ckpt = torch.load(path, map_location="cpu")
    if ckpt.get("architecture") != eqt.ARCH:
        raise ValueError("%s: not an equivariant checkpoint (architecture %r)"
                         % (path, ckpt.get("architecture")))
    model = build(ckpt["config"]).to(torch.float64)
    model.load_state_dict(ckpt["state_dict"])
    model._aisci_config = dict(ckpt["config"])
    return model, ckpt


def mean_neighbours(graphs):
    return float(np.mean([g["edge_vec"].shape[0] / g["n_atoms"] for g in graphs]))


def time_per_call(model, graph, repeats=5):
    """Median CPU seconds of one energy+force evaluation (float64, scripted, 1 thread;
    CPU time of this process, so that other jobs on a shared machine do not count)."""
    sm = torch.jit.script(model.to(torch.float64).eval())
    args = batch_graphs([graph], torch.float64)
    for _ in range(3):
        energy_forces(sm, *args)
    ts = []
    for _ in range(repeats):
        t0 = time.process_time()
        energy_forces(sm, *args)
        ts.append(time.process_time() - t0)
    return float(np.median(ts))


def select_counts(saliency, counts):
    """Kept channel indices per order with fixed counts: the ``counts[l]`` most salient
    channels of each order l (every channel of one order costs the same FLOPs)."""
    keep = []
    for l, n in enumerate(counts):
        order = np.argsort(-np.asarray(saliency[l]), kind="stable")
        keep.append(sorted(int(c) for c in order[:int(n)]))
    return keep


def step_targets(start, final, steps):
    """Intermediate channel counts of an iterative prune from ``start`` to ``final``:
    linear in the count per order, the last one exactly ``final``."""
    return [[int(round(a - (a - b) * k / steps)) for a, b in zip(start, final)]
            for k in range(1, steps + 1)]


def test_rmse(model, frames, graphs, test_idx, cutoff):
    e, f, _ = rmse_on_frames(model, frames, test_idx, cutoff, 0.0, torch.float64,
                             graphs=graphs)
    return e, f


def cmd_prune(args):
    model, ckpt = load_ckpt(args.checkpoint)
    cfg = ckpt["config"]
    # FLOPs reference: the unpruned model (so --ratio means the same when a pruned
    # checkpoint is pruned further)
    ref_cfg = dict(ckpt.get("reference_config", cfg))
    origin = [list(x) for x in ckpt.get("kept_channels",
                                        [list(range(c)) for c in cfg["channels"]])]
    frames, graphs, train_idx, test_idx = eqt.load_data(args.data, cfg["cutoff"])
    nbr = mean_neighbours(graphs)
    ref_flops = flops_per_atom(ref_cfg, nbr)
    start_ratio = 1.0 - flops_per_atom(cfg, nbr) / ref_flops
    if args.channels:
        if any(b > a for a, b in zip(cfg["channels"], args.channels)):
            raise ValueError("--channels %s: more than the checkpoint's %s"
                             % (args.channels, cfg["channels"]))
        targets = step_targets(cfg["channels"], args.channels, args.steps)
    else:
        if args.ratio <= start_ratio:
            raise ValueError("--ratio %g: the checkpoint is already pruned by %.3f"
                             % (args.ratio, start_ratio))
        targets = [start_ratio + (args.ratio - start_ratio) * k / args.steps
                   for k in range(1, args.steps + 1)]
    parent_data = ckpt["metrics"].get("train_data", ckpt.get("data", "?"))
    train_data = os.path.basename(args.data)
    if parent_data != train_data:
        train_data = "%s (full model), %s (fine-tuning)" % (parent_data, train_data)
        print("note: the full model was trained on %s, fine-tuning on %s"
              % (parent_data, os.path.basename(args.data)), flush=True)
    parent_cpu = float(ckpt.get("total_cpu_seconds",
                                ckpt["metrics"].get("train_cpu_seconds", 0.0)))
    removed = list(ckpt.get("removed", []))
    history = list(ckpt.get("prune_steps", []))
    t_score = cpu_ft = 0.0
    steps_ft = 0
    wall_ft = 0.0
    sal = None
    for k, target in enumerate(targets):
        cur_cfg = model._aisci_config
        t0 = time.process_time()
        sal = taylor_saliency(model, frames, graphs, train_idx, args.score_batches,
                              seed=args.seed + 1 + k)
        if args.channels:
            keep = select_counts(sal, target)
            log = [(l, c, float(sal[l][c])) for l in range(3)
                   for c in range(cur_cfg["channels"][l]) if c not in keep[l]]
        else:
            keep, log = select_channels(cur_cfg, sal, 1.0 - (1.0 - target) * ref_flops
                                        / flops_per_atom(cur_cfg, nbr), nbr, args.min_scalars)
        t_score += time.process_time() - t0
        small, new_cfg = prune_model(model, keep)
        # the pruned model must equal the model with the removed channels masked out
        ref = masked_copy(model, keep)
        args_ = batch_graphs([graphs[test_idx[0]]], torch.float64)
        e_ref, f_ref = energy_forces(ref, *args_)
        e_new, f_new = energy_forces(small, *args_)
        diff = max(abs(e_ref - e_new).item(), (f_ref - f_new).abs().max().item())
        if diff > 1e-8:
            raise RuntimeError("pruned model differs from the masked model by %.3g" % diff)
        removed += [(l, origin[l][c], s_) for l, c, s_ in log]
        origin = [[origin[l][c] for c in keep[l]] for l in range(3)]
        _, before_f = test_rmse(small, frames, graphs, test_idx, cfg["cutoff"])
        print("step %d/%d: kept channels %s (FLOPs %.0f -> %.0f per atom, %.3f of the "
              "reference), before fine-tuning: test F RMSE %.1f meV/A"
              % (k + 1, len(targets), new_cfg["channels"], flops_per_atom(cur_cfg, nbr),
                 flops_per_atom(new_cfg, nbr), flops_per_atom(new_cfg, nbr) / ref_flops,
                 before_f), flush=True)
        small, n, wall, cpu = eqt.fit(small, frames, graphs, train_idx,
                                      args.finetune_budget / len(targets), lr=args.lr,
                                      lr_final=args.lr_final, seed=args.seed + k,
                                      log=lambda m: print(m, flush=True))
        small._aisci_config = new_cfg
        cpu_ft += cpu
        wall_ft += wall
        steps_ft += n
        _, after_f = test_rmse(small, frames, graphs, test_idx, cfg["cutoff"])
        print("step %d/%d: after %.0f CPU s of fine-tuning: test F RMSE %.1f meV/A"
              % (k + 1, len(targets), cpu, after_f), flush=True)
        history.append({"channels": new_cfg["channels"], "finetune_cpu_seconds": round(cpu, 1),
                        "before_finetune_test_rmse_f_mev_per_angstrom": round(before_f, 2),
                        "after_finetune_test_rmse_f_mev_per_angstrom": round(after_f, 2)})
        model = small
    metrics = eqt.evaluate(model, frames, graphs, train_idx, test_idx, cfg["cutoff"])
    ratio = 1.0 - flops_per_atom(new_cfg, nbr) / ref_flops
    metrics.update({"train_steps": steps_ft, "train_cpu_seconds": round(cpu_ft, 1),
                    "train_seconds": round(wall_ft, 1), "train_dtype": "float32",
                    "train_data": train_data,
                    "prune_ratio": round(ratio, 3), "prune_steps": len(targets),
                    "score_cpu_seconds": round(t_score, 1),
                    "pruned_from": os.path.basename(args.checkpoint),
                    "before_finetune_test_rmse_f_mev_per_angstrom":
                        history[len(history) - len(targets)][
                            "before_finetune_test_rmse_f_mev_per_angstrom"]})
    print(json.dumps(metrics, indent=1), flush=True)
    rc = ref_cfg["channels"]
    note = ("pruned %.0f%% of the FLOPs of %d/%d/%d in %d step(s) (%s), fine-tuned %.0f "
            "CPU s" % (100 * ratio, rc[0], rc[1], rc[2], len(history),
                       " -> ".join("%d/%d/%d" % tuple(h["channels"]) for h in history),
                       sum(h["finetune_cpu_seconds"] for h in history)))
    eqt.save_checkpoint(args.output, model, new_cfg, metrics, train_data,
                        extra={"kept_channels": origin,
                               "reference_config": ref_cfg,
                               "saliency": [s_.tolist() for s_ in sal],
                               "removed": removed,
                               "prune_steps": history,
                               "total_cpu_seconds": parent_cpu + t_score + cpu_ft,
                               "note": note})
    print("wrote", args.output)
    if args.export:
        print(eqt.export(args.output, args.export), end="")


def cmd_scratch(args):
    _, ckpt = load_ckpt(args.like)
    cfg = dict(ckpt["config"])
    if args.channels:
        cfg["channels"] = list(args.channels)
    frames, graphs, train_idx, test_idx = eqt.load_data(args.data, cfg["cutoff"])
    budget = args.time_budget or float(ckpt.get("total_cpu_seconds", 600.0))
    model = eqt.init_model(cfg, frames, train_idx, args.seed)
    model, steps, wall, cpu = eqt.fit(model, frames, graphs, train_idx, budget,
                                      lr=args.lr, lr_final=args.lr_final,
                                      seed=args.seed, log=lambda m: print(m, flush=True))
    metrics = eqt.evaluate(model, frames, graphs, train_idx, test_idx, cfg["cutoff"])
    metrics.update({"train_steps": steps, "train_cpu_seconds": round(cpu, 1),
                    "train_seconds": round(wall, 1), "train_dtype": "float32",
                    "train_data": os.path.basename(args.data)})
    print(json.dumps(metrics, indent=1), flush=True)
    eqt.save_checkpoint(args.output, model, cfg, metrics, os.path.basename(args.data),
                        extra={"total_cpu_seconds": cpu,
                               "note": "channels %d/%d/%d trained from scratch for %.0f CPU s"
                                       % (tuple(cfg["channels"]) + (cpu,))})
    print("wrote", args.output)
    if args.export:
        print(eqt.export(args.output, args.export), end="")


def cmd_table(args):
    """One row per checkpoint. The test errors are evaluated here, on the test split of
    --data (so every row is measured against the same labels, whatever the checkpoint
    recorded); the train error is the checkpoint's own (on its train_data)."""
    rows = []
    graphs_cache = {}
    frames = load_frames(args.data)
    _, test_idx = split_frames(len(frames))
    eval_data = os.path.basename(args.data)
    for path in args.checkpoints:
        model, ckpt = load_ckpt(path)
        cfg = ckpt["config"]
        if cfg["cutoff"] not in graphs_cache:  # graphs of the test frames only (cheap)
            graphs_cache[cfg["cutoff"]] = {k: frame_graph(frames[k], cfg["cutoff"], 0.0)
                                           for k in test_idx}
        graphs = graphs_cache[cfg["cutoff"]]
        nbr = mean_neighbours(list(graphs.values()))
        big = max(graphs.values(), key=lambda g: g["n_atoms"])
        m = ckpt["metrics"]
        te_e, te_f, _ = rmse_on_frames(model, frames, test_idx, cfg["cutoff"], 0.0,
                                       torch.float64, graphs=graphs)
        rows.append({
            "model": os.path.splitext(os.path.basename(path))[0],
            "channels_l0_l1_l2": "%d/%d/%d" % tuple(cfg["channels"]),
            "params": count_params(model),
            "flops_per_atom": int(round(flops_per_atom(cfg, nbr))),
            "train_data": m.get("train_data", ckpt.get("data", "?")),
            "test_rmse_e_mev_per_atom": round(te_e, 3),
            "test_rmse_f_mev_per_angstrom": round(te_f, 2),
            "train_rmse_f_mev_per_angstrom": m["train_rmse_f_mev_per_angstrom"],
            "training_cpu_seconds": round(float(ckpt.get("total_cpu_seconds",
                                                         m.get("train_cpu_seconds", 0))), 0),
            "ms_per_force_call_192_atoms": round(1000 * time_per_call(model, big), 1),
            "note": ckpt.get("note", "trained from scratch"),
        })
    full_flops = rows[0]["flops_per_atom"]
    full_params = rows[0]["params"]
    for r in rows:
        r["flops_vs_first"] = round(r["flops_per_atom"] / full_flops, 3)
        r["params_vs_first"] = round(r["params"] / full_params, 3)
        r["f_rmse_vs_first"] = round(r["test_rmse_f_mev_per_angstrom"]
                                     / rows[0]["test_rmse_f_mev_per_angstrom"], 3)
    keys = list(rows[0].keys())
    with open(args.prefix + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    cols = ["model", "channels_l0_l1_l2", "params", "params_vs_first", "flops_per_atom",
            "flops_vs_first", "train_data", "test_rmse_e_mev_per_atom",
            "test_rmse_f_mev_per_angstrom", "f_rmse_vs_first",
            "train_rmse_f_mev_per_angstrom", "training_cpu_seconds",
            "ms_per_force_call_192_atoms"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(str(r[c]) for c in cols) + " |")
    text = "\n".join(lines) + "\n\nTest errors: %d test frames of %s (split seed 0), " \
        "float64, evaluated by the table; train_data: the labels the model was trained " \
        "(and fine-tuned) on; train_rmse_f: recorded at training, on train_data. " \
        "FLOPs: analytic forward count (2 x multiply-adds) per atom " \
        "at %.1f neighbours/atom; ms: measured CPU time of one energy+force call from " \
        "Python (192 atoms, float64, 1 thread).\n" % (len(test_idx), eval_data, nbr)
    if args.note:
        text += "\n" + args.note.strip() + "\n"
    with open(args.prefix + ".md", "w") as f:
        f.write(text)
    print(text)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=eqt.DEFAULT_DATA,
                        help="data set: training, fine-tuning, and the test split the "
                             "table evaluates (default: the clean-force labels)")
    parser.add_argument("--threads", type=int, default=1)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prune", help="score, prune, fine-tune, (export)")
    p.add_argument("checkpoint")
    p.add_argument("output")
    p.add_argument("--ratio", type=float, default=None,
                   help="fraction of the unpruned model's FLOPs to remove (greedy by "
                        "saliency per FLOP)")
    p.add_argument("--channels", type=int, nargs=3, default=None, metavar=("C0", "C1", "C2"),
                   help="instead of --ratio: channels per order to keep (the most salient "
                        "of each order)")
    p.add_argument("--steps", type=int, default=1,
                   help="iterative pruning: prune a fraction, fine-tune (--finetune-budget "
                        "/ steps CPU s), re-score, repeat (default 1: one-shot)")
    p.add_argument("--score-batches", type=int, default=8)
    p.add_argument("--min-scalars", type=int, default=2)
    p.add_argument("--finetune-budget", type=float, default=60.0,
                   help="CPU seconds of fine-tuning in all (split evenly over the steps)")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--lr-final", type=float, default=1e-4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--export", default=None, help="also write a model file")
    p = sub.add_parser("scratch", help="train a model of the size of a checkpoint from scratch")
    p.add_argument("like")
    p.add_argument("output")
    p.add_argument("--time-budget", type=float, default=0.0,
                   help="CPU seconds (0: the total of the checkpoint: training + pruning + "
                        "fine-tuning)")
    p.add_argument("--channels", type=int, nargs=3, default=None, metavar=("C0", "C1", "C2"),
                   help="channels instead of those of the checkpoint")
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--lr-final", type=float, default=1e-4)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--export", default=None)
    p = sub.add_parser("table", help="markdown + csv table of checkpoints (first = reference)")
    p.add_argument("prefix")
    p.add_argument("checkpoints", nargs="+")
    p.add_argument("--note", default="", help="text appended below the markdown table")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.cmd == "prune":
        if (args.ratio is None) == (args.channels is None):
            parser.error("prune: give one of --ratio or --channels")
        if args.ratio is not None and not 0.0 < args.ratio < 1.0:
            parser.error("--ratio must be in (0, 1), got %r" % args.ratio)
        if args.channels is not None and (min(args.channels) < 0 or args.channels[0] < 1):
            parser.error("--channels: C0 >= 1 and C1, C2 >= 0, got %s" % args.channels)
        if args.steps < 1:
            parser.error("--steps must be >= 1, got %r" % args.steps)
    {"prune": cmd_prune, "scratch": cmd_scratch, "table": cmd_table}[args.cmd](args)


if __name__ == "__main__":
    main()
