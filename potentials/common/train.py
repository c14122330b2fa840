"""Train a MatRIS-style, DPA3-style or equivariant model on a water data set (energy + force loss).

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

ARCHITECTURES = ("matris", "dpa3", "equivariant", "matris_arch")


def build_model(architecture, config):
    if architecture == "matris":
        from potentials.matris.model import build
    elif architecture == "dpa3":
        from potentials.dpa3.model import build
    elif architecture == "equivariant":
        from potentials.equivariant.model import build
    elif architecture == "matris_arch":   # MatRIS's own architecture (potentials/matris/arch.py)
        from potentials.matris.arch import build
    else:
        raise ValueError("unknown architecture %r (expected one of %s)" % (
            architecture, ", ".join(ARCHITECTURES)))
    return build(config)


def load_data(paths, type_names):
    """Frames of one .npz data set of ours, or of DeePMD-kit npy system folders."""
    if len(paths) == 1 and not os.path.isdir(paths[0]):
        return load_frames(paths[0])
    from potentials.data.deepmd_npy import load_systems
    return load_systems(paths, type_names=list(type_names))


def process_cpu():
    """CPU seconds of this process and of its waited-for children."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def fit_type_energies(frames, indices, num_types):
    counts = np.array([np.bincount(frames[k]["types"], minlength=num_types) for k in indices],
                      dtype=float)
    energies = np.array([frames[k]["energy"] for k in indices])
    shift, *_ = np.linalg.lstsq(counts, energies, rcond=None)
    return shift


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arch", choices=ARCHITECTURES, required=True)
    parser.add_argument("--data", nargs="+", default=["potentials/data/water_qtip4pf_clean.npz"],
                        help="data set: one .npz of ours (the clean one: water_qtip4pf.npz has "
                             "thermostat forces in its labels, see docs/potentials.md) or "
                             "DeePMD-kit npy system folders (potentials/data/deepmd_npy.py)")
    parser.add_argument("--test-data", nargs="+", default=None,
                        help="test frames from these (same formats); without it a random "
                             "--test-fraction of --data is held out")
    parser.add_argument("--out", required=True, help="checkpoint path (.ckpt)")
    parser.add_argument("--type-names", nargs="+", default=["O", "H"])
    parser.add_argument("--cutoff", type=float, default=4.5)
    parser.add_argument("--cutoff-3body", type=float, default=3.0)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--channels", type=int, default=32)
    parser.add_argument("--radial", type=int, default=16, help="Bessel functions")
    parser.add_argument("--angle-channels", type=int, default=16, help="dpa3 only")
    parser.add_argument("--eq-channels", type=int, nargs=3, default=[24, 12, 6],
                        metavar=("L0", "L1", "L2"),
                        help="equivariant only: channels of orders l = 0, 1, 2 (the shipped "
                             "water_equivariant_full.pt has 24 12 6); it has no 3-body "
                             "edges, so --cutoff-3body is ignored")
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
    parser.add_argument("--budget-includes-setup", action="store_true",
                        help="count the CPU time of reading the data and building the graphs "
                             "in --time-budget (as a whole-process count of a peer does)")
    parser.add_argument("--checkpoint", default=None,
                        help="resumable state (model, optimizer, random streams, position in "
                             "the schedule, CPU used): written every --checkpoint-every CPU "
                             "seconds; if it exists, training resumes from it")
    parser.add_argument("--checkpoint-every", type=float, default=120.0)
    parser.add_argument("--curve", default=None,
                        help="learning curve CSV: CPU seconds, step, lr, energy and force RMSE "
                             "on --curve-frames test frames (the evaluation counts in the budget)")
    parser.add_argument("--curve-every", type=float, default=0.0,
                        help="CPU seconds between curve points (0: budget / 20)")
    parser.add_argument("--curve-frames", type=int, default=8)
    parser.add_argument("--progress-every", type=float, default=10.0,
                        help="wall seconds between progress lines (step, loss, CPU budget, ETA)")
    args = parser.parse_args(argv)

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    dtype = torch.float32 if args.dtype == "float32" else torch.float64
    t_start = time.time()

    print("train: %s model; reading %s" % (args.arch, " ".join(args.data + (args.test_data or []))),
          flush=True)
    frames = load_data(args.data, args.type_names)
    if args.test_data:
        test_frames = load_data(args.test_data, args.type_names)
        train_idx = np.arange(len(frames))
        test_idx = np.arange(len(frames), len(frames) + len(test_frames))
        frames = frames + test_frames
    else:
        train_idx, test_idx = split_frames(len(frames), args.test_fraction, args.split_seed)
    print("data: %d frames (%d train, %d test), %.0f atoms per frame, read in %.1f s" % (
        len(frames), len(train_idx), len(test_idx),
        np.mean([len(f["types"]) for f in frames]), time.time() - t_start), flush=True)
    if args.arch == "equivariant":
        args.cutoff_3body = 0.0    # no triplets: the angles are in its l = 1, 2 features
    print("graphs: building %d (cutoff %g A, 3-body %g A) ..." % (
        len(frames), args.cutoff, args.cutoff_3body), flush=True)
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
    if args.arch == "equivariant":
        config = {"num_types": len(args.type_names), "cutoff": args.cutoff, "cutoff_3body": 0.0,
                  "num_layers": args.layers, "channels": [int(c) for c in args.eq_channels],
                  "num_radial": args.radial, "radial_hidden": 16, "readout_hidden": 16,
                  "neighbor_norm": config["neighbor_norm"]}
    if args.arch in ("dpa3", "matris_arch"):
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
    # CPU counted against the budget: from here, or (--budget-includes-setup) from the start
    # of the process; a resumed run adds what the earlier runs used
    cpu_zero = 0.0 if args.budget_includes_setup else process_cpu()
    cpu_before = 0.0
    curve_every = args.curve_every if args.curve_every > 0 else args.time_budget / 20.0
    curve_idx = test_idx[np.linspace(0, len(test_idx) - 1, min(args.curve_frames, len(test_idx))).astype(int)] \
        if len(test_idx) else []
    curve_rows = []
    step, epoch, pos, order = 0, 0, 0, None
    signature = {"arch": args.arch, "config": config, "data": list(args.data),
                 "test_data": args.test_data, "time_budget": args.time_budget,
                 "epochs": args.epochs, "batch": args.batch, "dtype": args.dtype,
                 "seed": args.seed, "budget_includes_setup": args.budget_includes_setup}
    if args.checkpoint and os.path.exists(args.checkpoint):
        state = torch.load(args.checkpoint, map_location="cpu")
        if state["signature"] != signature:
            diff = sorted(k for k in signature if state["signature"].get(k) != signature[k])
            raise SystemExit("train: %s was written by a run with other settings (%s): remove it "
                             "or rerun with the same arguments" % (args.checkpoint, ", ".join(diff)))
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        rng.bit_generator.state = state["numpy_rng"]
        torch.set_rng_state(state["torch_rng"])
        step, epoch, pos, order = state["step"], state["epoch"], state["pos"], state["order"]
        cpu_before, curve_rows = state["cpu_used"], state["curve"]
        print("resumed from %s: step %d, epoch %d, %.0f CPU s used" % (
            args.checkpoint, step, epoch, cpu_before), flush=True)

    def cpu_used():
        return cpu_before + process_cpu() - cpu_zero

    def save_state():
        if not args.checkpoint:
            return
        tmp = args.checkpoint + ".tmp"
        torch.save({"signature": signature, "model": model.state_dict(),
                    "optimizer": optimizer.state_dict(), "numpy_rng": rng.bit_generator.state,
                    "torch_rng": torch.get_rng_state(), "step": step, "epoch": epoch, "pos": pos,
                    "order": order, "cpu_used": cpu_used(), "curve": curve_rows}, tmp)
        os.replace(tmp, args.checkpoint)  # a stop while writing keeps the previous state

    def curve_point(lr):
        if not args.curve or not len(curve_idx):
            return
        c = cpu_used()
        e, f, _ = rmse_on_frames(model, frames, curve_idx, args.cutoff, args.cutoff_3body, dtype,
                                 graphs=graphs)
        curve_rows.append((round(c, 1), step, lr, e, f))
        with open(args.curve, "w") as fh:
            fh.write("cpu_s,step,lr,test_rmse_e_mev_per_atom,test_rmse_f_mev_per_angstrom\n")
            for r in curve_rows:
                fh.write("%.1f,%d,%.3e,%.4f,%.3f\n" % r)

    print("training: up to %d steps (%d epochs x %d steps of %d frames) or %.0f CPU s, "
          "whichever ends first; lr %.1e -> %.1e; %s; a progress line every %g s" % (
              total_steps, args.epochs, steps_per_epoch, args.batch, args.time_budget,
              args.lr, args.lr_final, args.dtype, args.progress_every), flush=True)
    p_zero, next_progress, recent = None, time.time() + args.progress_every, []

    def progress_line(progress, lr):
        """step, running loss, CPU budget used and left, and an ETA from this run's rate."""
        wall = time.time() - t_train
        rate = (progress - p_zero) / wall if wall > 0 and progress > p_zero else 0.0
        eta = "%.0f s" % ((1.0 - progress) / rate) if rate > 0 else "?"
        print("  step %d (epoch %d), loss %.5f (last %d steps), lr %.2e, CPU %.0f of %.0f s "
              "(%.0f left), %.0f%% done, ETA %s" % (
                  step, epoch, np.mean(recent) if recent else float("nan"), len(recent), lr,
                  cpu_used(), args.time_budget, max(0.0, args.time_budget - cpu_used()),
                  100 * progress, eta), flush=True)

    next_save = cpu_used() + args.checkpoint_every
    next_curve = (curve_rows[-1][0] + curve_every) if curve_rows else 0.0
    lr = args.lr
    done = False
    while epoch < args.epochs and not done:
        if order is None:
            order = rng.permutation(train_idx)
            pos = 0
        sum_loss, nsteps = 0.0, 0
        while pos < len(order):
            progress = max(step / total_steps, cpu_used() / args.time_budget)
            if p_zero is None:
                p_zero = progress
            if progress >= 1.0:
                done = True
                break
            if time.time() >= next_progress:
                progress_line(progress, lr)
                recent = []
                next_progress = time.time() + args.progress_every
            lr = args.lr * (args.lr_final / args.lr) ** progress
            if cpu_used() >= next_curve:
                curve_point(lr)
                next_curve = cpu_used() + curve_every
            for group in optimizer.param_groups:
                group["lr"] = lr
            sel = order[pos:pos + args.batch]
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
            recent.append(loss.item())
            nsteps += 1
            step += 1
            pos += args.batch
            if cpu_used() >= next_save:
                save_state()
                next_save = cpu_used() + args.checkpoint_every
        if nsteps:
            print("epoch %3d step %5d lr %.2e loss %.5f (%.0f s CPU, %.0f s wall)" % (
                epoch, step, lr, sum_loss / nsteps, cpu_used(), time.time() - t_train),
                flush=True)
        if not done:
            epoch += 1
            order = None
    curve_point(lr)
    save_state()
    train_seconds = time.time() - t_train
    train_cpu_seconds = cpu_used()

    print("training done: %d steps, %.0f CPU s, %.0f s wall" % (
        step, train_cpu_seconds, train_seconds), flush=True)

    model = model.to(torch.float64)
    rc3 = args.cutoff_3body
    t_eval = time.time()
    print("final evaluation: float64 energies and forces of the %d train frames, then the %d "
          "test frames ..." % (len(train_idx), len(test_idx)), flush=True)
    tr_e, tr_f, _ = rmse_on_frames(model, frames, train_idx, args.cutoff, rc3, torch.float64,
                                   graphs=graphs)
    print("  train frames: energy RMSE %.3f meV/atom, force RMSE %.2f meV/A (%.0f s)" % (
        tr_e, tr_f, time.time() - t_eval), flush=True)
    te_e, te_f, _ = rmse_on_frames(model, frames, test_idx, args.cutoff, rc3, torch.float64,
                                   graphs=graphs)
    print("  test frames:  energy RMSE %.3f meV/atom, force RMSE %.2f meV/A (%.0f s in all)" % (
        te_e, te_f, time.time() - t_eval), flush=True)
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
        "train_data": " ".join(os.path.basename(os.path.normpath(d)) for d in args.data),
        "test_data": (" ".join(os.path.basename(os.path.normpath(d)) for d in args.test_data)
                      if args.test_data else "random %.2f of train_data" % args.test_fraction),
        "budget_includes_setup": bool(args.budget_includes_setup),
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
        "data": [os.path.normpath(d) for d in args.data],
        "split": {"seed": args.split_seed, "test_fraction": args.test_fraction},
    }, args.out)
    print("wrote %s (%.0f s in total)" % (args.out, time.time() - t_start))


if __name__ == "__main__":
    main()
