"""Train a MatRIS-style or DPA3-style model on the water data set (energy + force loss).

Usage::

    /usr/bin/python3 -m potentials.common.train --arch matris \
        --data potentials/data/water_qtip4pf_clean.npz --out matris.ckpt --time-budget 480

Loss per batch: w_e * mean((dE / n_atoms)^2) + w_f * mean(dF^2) (eV, eV/A). Adam with a
learning rate decaying exponentially from --lr to --lr-final over the run; the run
length is the smaller of --epochs and --time-budget seconds of CPU time of this process
(the schedule follows whichever is reached first, so a slower machine trains fewer
steps, not a different schedule shape; CPU time, not wall time, so that a machine shared
with other jobs trains as many steps, only later). The per-type energy shift is fitted by least squares on the training
frames before training (minimum-norm solution: in water n_H = 2 n_O, so only the
combination e_O + 2 e_H is determined). The checkpoint holds the architecture, its
config, the state dict (float64), the type names, the split and train/test RMSEs
measured in float64 at the end.
"""

import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from potentials.common.evaluate import (batch_graphs, energy_forces, frame_graph,  # noqa: E402
                                        load_frames, rmse_on_frames, split_frames)

ARCHITECTURES = ("matris", "dpa3")


def build_model(architecture, config):
    if architecture == "matris":
        from potentials.matris.model import build
    elif architecture == "dpa3":
        from potentials.dpa3.model import build
    else:
        raise ValueError("unknown architecture %r (expected one of %s)" % (
            architecture, ", ".join(ARCHITECTURES)))
    return build(config)


def fit_type_energies(frames, indices, num_types):
    counts = np.array([np.bincount(frames[k]["types"], minlength=num_types) for k in indices],
                      dtype=float)
    energies = np.array([frames[k]["energy"] for k in indices])
    shift, *_ = np.linalg.lstsq(counts, energies, rcond=None)
    return shift


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arch", choices=ARCHITECTURES, required=True)
    parser.add_argument("--data", default="potentials/data/water_qtip4pf_clean.npz",
                        help="data set (the clean one: water_qtip4pf.npz has thermostat "
                             "forces in its labels, see docs/potentials.md)")
    parser.add_argument("--out", required=True, help="checkpoint path (.ckpt)")
    parser.add_argument("--type-names", nargs="+", default=["O", "H"])
    parser.add_argument("--cutoff", type=float, default=4.5)
    parser.add_argument("--cutoff-3body", type=float, default=3.0)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--channels", type=int, default=32)
    parser.add_argument("--radial", type=int, default=16, help="Bessel functions")
    parser.add_argument("--angle-channels", type=int, default=16, help="dpa3 only")
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--time-budget", type=float, default=480.0,
                        help="CPU seconds (process time) of training")
    parser.add_argument("--batch", type=int, default=4, help="frames per step")
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--lr-final", type=float, default=1e-4)
    parser.add_argument("--w-energy", type=float, default=100.0)
    parser.add_argument("--w-force", type=float, default=1.0)
    parser.add_argument("--energy-scale", type=float, default=0.0,
                        help="initial readout scale in eV (0: RMS of the training forces "
                             "times 1 A, so that unit network gradients give typical forces)")
    parser.add_argument("--init", default=None,
                        help="start from the weights of this checkpoint (.ckpt) or model "
                             "file (.pt, TorchScript) of the same architecture and config "
                             "(fine-tuning; its type energies and energy scale are kept)")
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float32",
                        help="training precision (the checkpoint is stored in float64)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--split-seed", type=int, default=0)
    parser.add_argument("--test-fraction", type=float, default=0.2)
    args = parser.parse_args(argv)

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    dtype = torch.float32 if args.dtype == "float32" else torch.float64
    t_start = time.time()

    frames = load_frames(args.data)
    train_idx, test_idx = split_frames(len(frames), args.test_fraction, args.split_seed)
    graphs = [frame_graph(f, args.cutoff, args.cutoff_3body) for f in frames]
    n_edges = np.mean([g["edge_vec"].shape[0] / g["n_atoms"] for g in graphs])
    n_short = np.mean([np.sum(np.linalg.norm(g["edge_vec"], axis=1) < args.cutoff_3body)
                       for g in graphs])
    n_trip = np.mean([g["triplets"].shape[0] for g in graphs])
    config = {
        "num_types": len(args.type_names),
        "cutoff": args.cutoff,
        "cutoff_3body": args.cutoff_3body,
        "num_layers": args.layers,
        "channels": args.channels,
        "num_radial": args.radial,
        "lmax": 3,
        # Sums over neighbours are divided by sqrt(mean count), not the mean count: the
        # few stiff intramolecular terms must not be diluted by 1/38.
        "neighbor_norm": float(round(np.sqrt(n_edges), 3)),
    }
    if args.arch == "dpa3":
        config["angle_channels"] = args.angle_channels
        config["angle_norm"] = float(round(np.sqrt(n_trip / max(n_short, 1.0)), 3))
    print("graphs: %.1f s, %.1f neighbours/atom, %.1f triplets per 3-body edge" % (
        time.time() - t_start, n_edges, n_trip / max(n_short, 1.0)), flush=True)

    model = build_model(args.arch, config).to(torch.float64)
    shift = fit_type_energies(frames, train_idx, config["num_types"])
    scale = args.energy_scale
    if scale <= 0.0:
        scale = float(np.sqrt(np.mean(np.concatenate([frames[k]["forces"] for k in train_idx]) ** 2)))
    with torch.no_grad():
        model.readout.type_energy.copy_(torch.tensor(shift))
        model.readout.energy_scale.fill_(scale)
    print("type energies %s eV, energy scale %.3f eV" % (np.round(shift, 4), scale), flush=True)
    if args.init:
        if args.init.endswith(".pt"):
            init_state = torch.jit.load(args.init, map_location="cpu").state_dict()
        else:
            init_state = torch.load(args.init, map_location="cpu")["state_dict"]
        model.load_state_dict({k: v.to(torch.float64) for k, v in init_state.items()})
        print("initial weights from %s (energy scale %.3f eV)" % (
            args.init, float(model.readout.energy_scale)), flush=True)
    model = model.to(dtype)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    steps_per_epoch = int(math.ceil(len(train_idx) / args.batch))
    total_steps = args.epochs * steps_per_epoch
    t_train = time.time()
    cpu_train = time.process_time()
    step = 0
    done = False
    for epoch in range(args.epochs):
        order = rng.permutation(train_idx)
        sum_loss = 0.0
        for s in range(0, len(order), args.batch):
            progress = max(step / total_steps,
                           (time.process_time() - cpu_train) / args.time_budget)
            if progress >= 1.0:
                done = True
                break
            lr = args.lr * (args.lr_final / args.lr) ** progress
            for group in optimizer.param_groups:
                group["lr"] = lr
            sel = order[s:s + args.batch]
            ev, ei, ty, tr, fid, nb = batch_graphs([graphs[k] for k in sel], dtype)
            energy, forces = energy_forces(model, ev, ei, ty, tr, fid, nb, create_graph=True)
            nat = torch.tensor([graphs[k]["n_atoms"] for k in sel], dtype=dtype)
            ref_e = torch.tensor([frames[k]["energy"] for k in sel], dtype=dtype)
            ref_f = torch.tensor(np.concatenate([frames[k]["forces"] for k in sel]), dtype=dtype)
            loss = (args.w_energy * (((energy - ref_e) / nat) ** 2).mean()
                    + args.w_force * ((forces - ref_f) ** 2).mean())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            sum_loss += loss.item()
            step += 1
        print("epoch %3d step %5d lr %.2e loss %.5f (%.0f s CPU, %.0f s wall)" % (
            epoch, step, lr, sum_loss / max(1, steps_per_epoch),
            time.process_time() - cpu_train, time.time() - t_train), flush=True)
        if done:
            break
    train_seconds = time.time() - t_train
    train_cpu_seconds = time.process_time() - cpu_train

    model = model.to(torch.float64)
    rc3 = args.cutoff_3body
    tr_e, tr_f, _ = rmse_on_frames(model, frames, train_idx, args.cutoff, rc3, torch.float64,
                                   graphs=graphs)
    te_e, te_f, _ = rmse_on_frames(model, frames, test_idx, args.cutoff, rc3, torch.float64,
                                   graphs=graphs)
    metrics = {
        "train_rmse_e_mev_per_atom": round(tr_e, 3),
        "train_rmse_f_mev_per_angstrom": round(tr_f, 2),
        "test_rmse_e_mev_per_atom": round(te_e, 3),
        "test_rmse_f_mev_per_angstrom": round(te_f, 2),
        "train_frames": int(len(train_idx)),
        "test_frames": int(len(test_idx)),
        "train_steps": int(step),
        "train_seconds": round(train_seconds, 1),
        "train_cpu_seconds": round(train_cpu_seconds, 1),
        "train_dtype": args.dtype,
        "train_threads": args.threads,
        "train_data": os.path.basename(args.data),
    }
    if args.init:
        metrics["train_init"] = os.path.basename(args.init)
    print(json.dumps(metrics, indent=1), flush=True)
    torch.save({
        "architecture": args.arch,
        "config": config,
        "state_dict": model.state_dict(),
        "type_names": list(args.type_names),
        "metrics": metrics,
        "data": os.path.basename(args.data),
        "split": {"seed": args.split_seed, "test_fraction": args.test_fraction},
    }, args.out)
    print("wrote %s (%.0f s in total)" % (args.out, time.time() - t_start))


if __name__ == "__main__":
    main()
