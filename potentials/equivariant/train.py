"""Train (or fine-tune) the equivariant model on the water data set; export it.

Usage::

    /usr/bin/python3 -m potentials.equivariant.train --out eq.ckpt --channels 16 8 4 \
        --time-budget 600
    # continue training a checkpoint (new Adam, lr --lr -> --lr-final over the budget)
    /usr/bin/python3 -m potentials.equivariant.train --init eq.ckpt --out eq2.ckpt \
        --time-budget 1400 --lr 1e-3 --lr-final 3e-5
    /usr/bin/python3 -m potentials.equivariant.train --export eq.ckpt water_equivariant_full.pt

The data handling, graphs, batching, autograd forces, type-energy fit and RMSE come from
potentials.common (evaluate.py, train.py); the loss and schedule are the ones of
potentials/common/train.py (w_e * mean((dE/n)^2) + w_f * mean(dF^2); Adam with an
exponential learning-rate decay over the smaller of --epochs and --time-budget CPU
seconds). The loop itself is here because potentials/common/train.py builds only its
own architectures and cannot start from given weights (needed for fine-tuning pruned
models); ``fit`` is the only training loop of this package (prune.py uses it too).

Export goes through potentials.common.export.export_checkpoint (metadata contract v1,
checksum, reload check); potentials.common.train.build_model knows this architecture, so
``potentials.common.train --arch equivariant`` also trains it (resumable, DeePMD-kit npy
data: the DFT-water queue uses that).
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
import potentials.common.train as common_train  # noqa: E402
from potentials.common.evaluate import (batch_graphs, energy_forces, frame_graph,  # noqa: E402
                                        load_frames, rmse_on_frames, split_frames)
from potentials.equivariant.model import build  # noqa: E402

ARCH = "equivariant"
#: Training data: the thermostat-free forces of the water frames (water_qtip4pf.npz has
#: the same frames, energies and split, but its forces carry the Langevin thermostat's
#: noise of RMS 834 meV/A, see docs/potentials.md).
DEFAULT_DATA = "potentials/data/water_qtip4pf_clean.npz"


def load_data(path, cutoff, test_fraction=0.2, split_seed=0):
    frames = load_frames(path)
    train_idx, test_idx = split_frames(len(frames), test_fraction, split_seed)
    graphs = [frame_graph(f, cutoff, 0.0) for f in frames]
    return frames, graphs, train_idx, test_idx


def make_config(graphs, channels, cutoff=4.0, layers=2, num_radial=8, radial_hidden=16,
                readout_hidden=16, num_types=2):
    n_edges = np.mean([g["edge_vec"].shape[0] / g["n_atoms"] for g in graphs])
    return {
        "num_types": num_types, "cutoff": cutoff, "cutoff_3body": 0.0, "num_layers": layers,
        "channels": [int(c) for c in channels], "num_radial": num_radial,
        "radial_hidden": radial_hidden, "readout_hidden": readout_hidden,
        "neighbor_norm": float(round(np.sqrt(n_edges), 3)),
    }


def init_model(config, frames, train_idx, seed=0):
    """New float64 model with the per-type energies fitted and the readout scale set to
    the force RMS of the training frames (as potentials/common/train.py does)."""
    torch.manual_seed(seed)
    model = build(config).to(torch.float64)
    shift = common_train.fit_type_energies(frames, train_idx, config["num_types"])
    scale = float(np.sqrt(np.mean(np.concatenate([frames[k]["forces"] for k in train_idx]) ** 2)))
    with torch.no_grad():
        model.readout.type_energy.copy_(torch.tensor(shift))
        model.readout.energy_scale.fill_(scale)
    return model


def batch_loss(model, frames, graphs, sel, dtype, w_energy=100.0, w_force=1.0):
    """Energy + force loss of the frames ``sel`` (graph kept for a second derivative)."""
    ev, ei, ty, tr, fid, nb = batch_graphs([graphs[k] for k in sel], dtype)
    energy, forces = energy_forces(model, ev, ei, ty, tr, fid, nb, create_graph=True)
    nat = torch.tensor([graphs[k]["n_atoms"] for k in sel], dtype=dtype)
    ref_e = torch.tensor([frames[k]["energy"] for k in sel], dtype=dtype)
    ref_f = torch.tensor(np.concatenate([frames[k]["forces"] for k in sel]), dtype=dtype)
    return (w_energy * (((energy - ref_e) / nat) ** 2).mean()
            + w_force * ((forces - ref_f) ** 2).mean())


def fit(model, frames, graphs, train_idx, time_budget, epochs=1000, batch=4, lr=3e-3,
        lr_final=1e-4, dtype=torch.float32, seed=0, log=print):
    """Adam on the energy + force loss for min(epochs, time_budget CPU seconds); returns
    (model in float64, steps, wall seconds, CPU seconds)."""
    rng = np.random.default_rng(seed)
    model = model.to(dtype)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    total_steps = epochs * int(math.ceil(len(train_idx) / batch))
    t0, c0 = time.time(), time.process_time()
    step = 0
    done = False
    for epoch in range(epochs):
        order = rng.permutation(train_idx)
        sum_loss, n = 0.0, 0
        for s in range(0, len(order), batch):
            progress = max(step / total_steps, (time.process_time() - c0) / time_budget)
            if progress >= 1.0:
                done = True
                break
            for group in optimizer.param_groups:
                group["lr"] = lr * (lr_final / lr) ** progress
            loss = batch_loss(model, frames, graphs, order[s:s + batch], dtype)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            sum_loss += loss.item()
            n += 1
            step += 1
        log("epoch %3d step %5d loss %.5f (%.0f s CPU, %.0f s wall)" % (
            epoch, step, sum_loss / max(n, 1), time.process_time() - c0, time.time() - t0))
        if done:
            break
    return model.to(torch.float64), step, time.time() - t0, time.process_time() - c0


def evaluate(model, frames, graphs, train_idx, test_idx, cutoff):
    """RMSE metrics (float64) in the key names of potentials/common/train.py."""
    tr_e, tr_f, _ = rmse_on_frames(model, frames, train_idx, cutoff, 0.0, torch.float64,
                                   graphs=graphs)
    te_e, te_f, _ = rmse_on_frames(model, frames, test_idx, cutoff, 0.0, torch.float64,
                                   graphs=graphs)
    return {"train_rmse_e_mev_per_atom": round(tr_e, 3),
            "train_rmse_f_mev_per_angstrom": round(tr_f, 2),
            "test_rmse_e_mev_per_atom": round(te_e, 3),
            "test_rmse_f_mev_per_angstrom": round(te_f, 2),
            "train_frames": int(len(train_idx)), "test_frames": int(len(test_idx))}


def save_checkpoint(path, model, config, metrics, data, extra=None):
    ckpt = {"architecture": ARCH, "config": config,
            "state_dict": {k: v.detach().to(torch.float64) if v.is_floating_point() else v
                           for k, v in model.state_dict().items()},
            "type_names": ["O", "H"], "metrics": metrics, "data": data,
            "split": {"seed": 0, "test_fraction": 0.2}}
    ckpt.update(extra or {})
    torch.save(ckpt, path)


def export(ckpt_path, out_path, dtype="float64", description=None):
    """Contract-v1 model file from a checkpoint, through potentials.common.export."""
    from potentials.common.export import export_checkpoint

    ckpt = torch.load(ckpt_path, map_location="cpu")
    if description is None:
        c = ckpt["config"]["channels"]
        note = ckpt.get("note") or "trained from scratch for %.0f CPU s" % float(
            ckpt.get("metrics", {}).get("train_cpu_seconds", 0.0))
        description = ("O(3)-equivariant water potential (potentials/equivariant), channels "
                       "l0/l1/l2 = %d/%d/%d, %s" % (c[0], c[1], c[2], note))
    return export_checkpoint(ckpt_path, out_path, dtype, description.strip())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=DEFAULT_DATA,
                        help="training data (default: the clean-force labels)")
    parser.add_argument("--out", help="checkpoint to write")
    parser.add_argument("--channels", type=int, nargs=3, default=[16, 8, 4],
                        metavar=("C0", "C1", "C2"))
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--cutoff", type=float, default=4.0)
    parser.add_argument("--time-budget", type=float, default=600.0, help="CPU seconds")
    parser.add_argument("--epochs", type=int, default=1000)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--lr-final", type=float, default=1e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--export", nargs=2, metavar=("CKPT", "MODEL_PT"),
                        help="only export a checkpoint to a model file")
    parser.add_argument("--init", metavar="CKPT", default=None,
                        help="continue training the model of this checkpoint (its config; "
                             "--channels/--layers/--cutoff are ignored); a new Adam and a "
                             "new lr schedule --lr -> --lr-final over --time-budget; the "
                             "checkpoint written records the CPU seconds of both")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.export:
        print(export(*args.export), end="")
        return
    if not args.out:
        parser.error("--out is required for training")
    parent_cpu, extra = 0.0, {}
    if args.init:
        ckpt = torch.load(args.init, map_location="cpu")
        if ckpt.get("architecture") != ARCH:
            parser.error("--init %s: not an equivariant checkpoint (architecture %r)"
                         % (args.init, ckpt.get("architecture")))
        config = dict(ckpt["config"])
        args.cutoff = config["cutoff"]
        parent_cpu = float(ckpt.get("total_cpu_seconds",
                                    ckpt["metrics"].get("train_cpu_seconds", 0.0)))
    frames, graphs, train_idx, test_idx = load_data(args.data, args.cutoff)
    if args.init:
        model = build(config).to(torch.float64)
        model.load_state_dict(ckpt["state_dict"])
        before = evaluate(model, frames, graphs, train_idx, test_idx, args.cutoff)
        print("continuing %s (%.0f CPU s): test RMSE %.3f meV/atom, %.2f meV/A"
              % (args.init, parent_cpu, before["test_rmse_e_mev_per_atom"],
                 before["test_rmse_f_mev_per_angstrom"]), flush=True)
    else:
        config = make_config(graphs, args.channels, args.cutoff, args.layers)
        model = init_model(config, frames, train_idx, args.seed)
    model, steps, wall, cpu = fit(model, frames, graphs, train_idx, args.time_budget,
                                  epochs=args.epochs, lr=args.lr, lr_final=args.lr_final,
                                  seed=args.seed, log=lambda m: print(m, flush=True))
    metrics = evaluate(model, frames, graphs, train_idx, test_idx, args.cutoff)
    metrics.update({"train_steps": steps, "train_seconds": round(wall, 1),
                    "train_cpu_seconds": round(parent_cpu + cpu, 1), "train_dtype": "float32",
                    "train_data": os.path.basename(args.data)})
    if args.init:
        metrics.update({"continued_from": os.path.basename(args.init),
                        "continued_from_cpu_seconds": round(parent_cpu, 1),
                        "continuation_cpu_seconds": round(cpu, 1),
                        "continuation_lr": [args.lr, args.lr_final],
                        "before_continuation_test_rmse_f_mev_per_angstrom":
                            before["test_rmse_f_mev_per_angstrom"]})
        extra = {"total_cpu_seconds": parent_cpu + cpu,
                 "note": "trained from scratch for %.0f CPU s, continued for %.0f CPU s "
                         "(lr %g -> %g)" % (parent_cpu, cpu, args.lr, args.lr_final)}
    print(json.dumps(metrics, indent=1), flush=True)
    save_checkpoint(args.out, model, config, metrics, os.path.basename(args.data), extra)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
