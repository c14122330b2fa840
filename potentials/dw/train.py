"""Train and export the DW model of DPLR on the q-TIP4P/F water data.

Usage::

    /usr/bin/python3 -m potentials.dw.train potentials/models/water_dw.pt \
        [--time-budget 240] [--threads 1]

Target: in q-TIP4P/F water the Wannier centroid of each O is the M site,
r_M = gamma r_O + (1 - gamma)/2 (r_H1 + r_H2) with gamma = 0.73612, so
d_O = r_M - r_O = (1 - gamma)/2 ((r_H1 - r_O) + (r_H2 - r_O)), the two O-H vectors taken
from the periodic graph (each O has exactly two H within 1.2 A in this data; checked).
Split: the frames of potentials/data/water_qtip4pf.npz in random order (seed 0), the
last 96 are the test set (the same split as potentials/common/train.py). Training in
float64, Adam, mini-batches of frames; the model is exported with the contract metadata
and checksum through potentials.common.metadata and checked after reloading.

DeePMD-kit data (``--data SYSTEM...``, e.g. ../shared/deepmd-kit/dplr-water/train/data):
the target is the system's atomic_dipole.npy (the displacement r_WC - r_O of the Wannier
centroid of each O, Angstrom; O atoms in their order in the system), read by
potentials/data/deepmd_npy.py. Split: a permutation of the frames (--split-seed), the
last --n-test frames are the test set. The budget (--time-budget) is then CPU seconds of
the whole process and its children (os.times: reading the data, building the graphs,
training, evaluation), the way a peer's whole-process count is taken; with
--checkpoint the run writes its resumable state (model, optimizer, random stream, epoch,
CPU used so far) every --checkpoint-every CPU seconds and continues from it when
restarted with the same settings.
"""

import argparse
import os
import sys
import time

import numpy as np
import torch

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from potentials.common.graph import build_graph  # noqa: E402
from potentials.common.metadata import (EXTRA_FILE, FORMAT_VERSION, load_model,  # noqa: E402
                                        make_metadata_text, state_dict_checksum)
from potentials.dw.model import DWModel  # noqa: E402

GAMMA = 0.73612
OH_BOND_MAX = 1.2
TYPE_NAMES = ["O", "H"]
DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                    "water_qtip4pf.npz")
N_TEST = 96


def load_frames(path=DATA):
    """List of (positions [n,3], types [n] int64 (0 = O, 1 = H), cell [3,3])."""
    d = np.load(path)
    out = []
    for k in range(len(d["n_atoms"])):
        a, n = int(d["offsets"][k]), int(d["n_atoms"][k])
        out.append((d["positions"][a:a + n], d["types"][a:a + n].astype(np.int64), d["cells"][k]))
    return out


def split(n_frames, n_test=N_TEST, seed=0):
    """(train, test) frame indices: a random permutation (seed), test = the last n_test."""
    perm = np.random.RandomState(seed).permutation(n_frames)
    return np.sort(perm[:-n_test]), np.sort(perm[-n_test:])


def msite_displacement(positions, types, cell):
    """d_i = r_M - r_O for every O (zeros for H), from the periodic O-H vectors < 1.2 A."""
    g = build_graph(positions, cell, OH_BOND_MAX)
    i, j = g["edge_index"]
    keep = (types[i] == 0) & (types[j] == 1)
    count = np.bincount(i[keep], minlength=len(types))
    bad = np.nonzero((types == 0) & (count != 2))[0]
    if len(bad):
        raise ValueError("O atom %d has %d H within %.1f A (expected 2)"
                         % (bad[0], count[bad[0]], OH_BOND_MAX))
    d = np.zeros((len(types), 3))
    np.add.at(d, i[keep], 0.5 * (1.0 - GAMMA) * g["edge_vec"][keep])
    return d


def frame_graph(positions, types, cell, cutoff):
    """Tensors (edge_vec, edge_index, atom_types, triplets) of one frame, float64."""
    g = build_graph(positions, cell, cutoff)
    return (torch.tensor(g["edge_vec"]), torch.tensor(g["edge_index"], dtype=torch.int64),
            torch.tensor(types, dtype=torch.int64), torch.zeros((0, 2), dtype=torch.int64))


def batch(graphs):
    """Concatenate frame graphs into one graph (atom indices offset)."""
    vecs, idx, typs, off = [], [], [], 0
    for vec, ei, ty, _ in graphs:
        vecs.append(vec)
        idx.append(ei + off)
        typs.append(ty)
        off += len(ty)
    return (torch.cat(vecs), torch.cat(idx, dim=1), torch.cat(typs),
            torch.zeros((0, 2), dtype=torch.int64))


def rmse(model, graphs, targets):
    """RMSE (Angstrom) over the vector components of the O atoms."""
    se, n = 0.0, 0
    with torch.no_grad():
        for g, t in zip(graphs, targets):
            o = g[2] == 0
            diff = model(*g)[o] - t[o]
            se += float((diff * diff).sum())
            n += int(o.sum()) * 3
    return (se / n) ** 0.5


def process_cpu():
    """CPU seconds of this process and of its waited-for children."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def load_deepmd(systems):
    """Frames of DeePMD npy systems with atomic_dipole: list of (positions, types, cell),
    list of targets [n, 3] (atomic_dipole on the O atoms, zeros on H)."""
    from potentials.data.deepmd_npy import load_systems
    frames = load_systems(systems, type_names=TYPE_NAMES,
                          require=("atomic_dipole",), sel_types=[0])
    geo, targets = [], []
    for f in frames:
        t = np.zeros((len(f["types"]), 3))
        t[f["types"] == 0] = f["atomic_dipole"]
        geo.append((f["positions"], f["types"], f["cell"]))
        targets.append(t)
    return geo, targets


def split_deepmd(n_frames, n_test, seed):
    """(train, test) frame indices of DeePMD data: permutation (seed), test = last n_test."""
    if not 0 < n_test < n_frames:
        raise ValueError("--n-test %d: need 0 < n_test < %d frames" % (n_test, n_frames))
    perm = np.random.RandomState(seed).permutation(n_frames)
    return np.sort(perm[:-n_test]), np.sort(perm[-n_test:])


def lr_at(args, frac):
    """Cosine decay over the budget from --lr to 2 % of it."""
    return args.lr * (0.02 + 0.98 * 0.5 * (1 + np.cos(np.pi * min(1.0, frac))))


def main_deepmd(args):
    """Training on DeePMD npy systems (module docstring), CPU budget of the whole process."""
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    geo, tg = load_deepmd(args.data)
    train_idx, test_idx = split_deepmd(len(geo), args.n_test, args.split_seed)
    graphs = [frame_graph(*g, args.cutoff) for g in geo]
    targets = [torch.tensor(t) for t in tg]
    n_o = int((geo[0][1] == 0).sum())
    print("%d frames (%d train, %d test; %d O per frame: %d train vectors), setup %.1f CPU s"
          % (len(geo), len(train_idx), len(test_idx), n_o, n_o * len(train_idx), process_cpu()),
          flush=True)
    model = DWModel(ntypes=2, cutoff=args.cutoff, hidden=args.hidden, selected=[0]).double()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    rng = np.random.RandomState(args.seed)
    settings = {k: getattr(args, k) for k in ("data", "cutoff", "hidden", "time_budget", "batch",
                                                "lr", "seed", "split_seed", "n_test")}
    cpu_before, epoch, step = 0.0, 0, 0
    if args.checkpoint and os.path.exists(args.checkpoint):
        c = torch.load(args.checkpoint)
        if c["settings"] != settings:
            raise SystemExit("%s: written with other settings %r (now %r); remove it to start "
                             "again" % (args.checkpoint, c["settings"], settings))
        model.load_state_dict(c["model"])
        opt.load_state_dict(c["opt"])
        rng.set_state(c["rng"])
        torch.set_rng_state(c["torch_rng"])
        cpu_before, epoch, step = c["cpu"], c["epoch"], c["step"]
        print("resumed from %s: epoch %d, step %d, %.1f CPU s used" % (
            args.checkpoint, epoch, step, cpu_before), flush=True)
    cpu0 = process_cpu() if cpu_before > 0 else 0.0  # a resumed run's setup is not counted twice

    def used():
        return cpu_before + process_cpu() - cpu0

    def save():
        tmp = args.checkpoint + ".tmp"
        torch.save({"settings": settings, "model": model.state_dict(), "opt": opt.state_dict(),
                    "rng": rng.get_state(), "torch_rng": torch.get_rng_state(), "cpu": used(),
                    "epoch": epoch, "step": step}, tmp)
        os.replace(tmp, args.checkpoint)

    last_save = used()
    while used() < args.time_budget:
        epoch += 1
        for group in opt.param_groups:
            group["lr"] = lr_at(args, used() / args.time_budget)
        order = rng.permutation(train_idx)
        for s in range(0, len(order), args.batch):
            sel = order[s:s + args.batch]
            g = batch([graphs[k] for k in sel])
            t = torch.cat([targets[k] for k in sel])
            o = g[2] == 0
            loss = ((model(*g)[o] - t[o]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
        if epoch % 10 == 0:
            print("epoch %d step %d lr %.2e train-batch rmse %.3e A (%.0f CPU s)"
                  % (epoch, step, opt.param_groups[0]["lr"], loss.item() ** 0.5, used()),
                  flush=True)
        if args.checkpoint and used() - last_save > args.checkpoint_every:
            save()
            last_save = used()
    if args.checkpoint:
        save()
    model.eval()
    tr = rmse(model, [graphs[k] for k in train_idx], [targets[k] for k in train_idx])
    te = rmse(model, [graphs[k] for k in test_idx], [targets[k] for k in test_idx])
    scale = float(torch.cat([targets[k][geo[k][1] == 0] for k in test_idx]).pow(2).mean()) ** 0.5
    cpu_total = used()
    print("RMSE train %.4e A, test %.4e A (zero model on the test frames: %.4e A), %d epochs, "
          "%d steps, %.1f CPU s" % (tr, te, scale, epoch, step, cpu_total), flush=True)
    scripted = torch.jit.script(model)
    data_names = " ".join(os.path.normpath(d) for d in args.data)
    meta = {
        "format_version": FORMAT_VERSION, "architecture": "dw", "cutoff": float(args.cutoff),
        "cutoff_3body": 0.0, "num_layers": 1, "type_names": TYPE_NAMES, "units": "metal",
        "dtype": "float64", "needs_triplets": 0, "checksum": state_dict_checksum(scripted),
        "output": "vector", "selected_types": "O",
        "train_rmse_d": "%.4e" % tr, "test_rmse_d": "%.4e" % te,
        "zero_model_test_rmse_d": "%.4e" % scale,
        "data": data_names,
        "split": "frames %s permuted with seed %d: train %s, test %s" % (
            len(geo), args.split_seed, ",".join(map(str, train_idx)),
            ",".join(map(str, test_idx))),
        "budget_cpu_s": "%.0f (process + children, %d thread(s); used %.1f)" % (
            args.time_budget, args.threads, cpu_total),
        "description": "DPLR DW model: Wannier-centroid displacement of each O (atomic_dipole "
                       "of DeePMD-kit's dplr-water data), potentials/dw",
    }
    text = make_metadata_text(meta)
    torch.jit.save(scripted, args.output, _extra_files={EXTRA_FILE: text})
    reloaded, _ = load_model(args.output)
    g = graphs[test_idx[0]]
    diff = (reloaded(*g) - model(*g)).abs().max().item()
    if diff > 1e-12:
        raise RuntimeError("%s: reloaded model differs from the trained one by %g"
                           % (args.output, diff))
    print("wrote %s (%d bytes)\n%s" % (args.output, os.path.getsize(args.output), text), end="")


def main(argv=None):
    ap = argparse.ArgumentParser(description="Train and export the DPLR DW model on water")
    ap.add_argument("output")
    ap.add_argument("--cutoff", type=float, default=3.0)
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--time-budget", type=float, default=240.0, help="training seconds (with --data: CPU "
                    "seconds of the whole process and its children)")
    ap.add_argument("--batch", type=int, default=8, help="frames per Adam step")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-frames", type=int, default=0,
                    help="use only the first N train and N test frames (quick checks; 0: all)")
    ap.add_argument("--data", nargs="+", default=None,
                    help="DeePMD npy system folders with atomic_dipole.npy (module docstring)")
    ap.add_argument("--n-test", type=int, default=6, help="--data: frames held out")
    ap.add_argument("--split-seed", type=int, default=0, help="--data: split permutation")
    ap.add_argument("--checkpoint", default=None, help="--data: resumable state file")
    ap.add_argument("--checkpoint-every", type=float, default=60.0, help="CPU seconds")
    args = ap.parse_args(argv)
    if args.data:
        return main_deepmd(args)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    t0 = time.time()
    frames = load_frames()
    train_idx, test_idx = split(len(frames))
    if args.max_frames > 0:
        train_idx, test_idx = train_idx[:args.max_frames], test_idx[:args.max_frames]
    used = set(train_idx.tolist()) | set(test_idx.tolist())
    graphs = {k: frame_graph(*frames[k], args.cutoff) for k in used}
    targets = {k: torch.tensor(msite_displacement(*frames[k])) for k in used}
    print("graphs and targets of %d frames: %.1f s" % (len(used), time.time() - t0))

    model = DWModel(ntypes=2, cutoff=args.cutoff, hidden=args.hidden, selected=[0]).double()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    rng = np.random.RandomState(args.seed)
    t1, step, epoch = time.time(), 0, 0
    while time.time() - t1 < args.time_budget:
        epoch += 1
        frac = min(1.0, (time.time() - t1) / args.time_budget)
        for group in opt.param_groups:  # cosine decay over the time budget
            group["lr"] = args.lr * (0.02 + 0.98 * 0.5 * (1 + np.cos(np.pi * frac)))
        order = rng.permutation(train_idx)
        for s in range(0, len(order), args.batch):
            sel = order[s:s + args.batch]
            g = batch([graphs[k] for k in sel])
            t = torch.cat([targets[k] for k in sel])
            o = g[2] == 0
            loss = ((model(*g)[o] - t[o]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
        if epoch % 5 == 0:
            print("epoch %d step %d loss %.3e rmse %.2e A (%.0f s)"
                  % (epoch, step, loss.item(), loss.item() ** 0.5, time.time() - t1))
    model.eval()
    tr = rmse(model, [graphs[k] for k in train_idx], [targets[k] for k in train_idx])
    te = rmse(model, [graphs[k] for k in test_idx], [targets[k] for k in test_idx])
    scale = float(torch.cat([targets[k][graphs[k][2] == 0] for k in used]).pow(2).mean()) ** 0.5
    print("RMSE train %.3e A, test %.3e A (RMS of the target components %.3e A), %d epochs"
          % (tr, te, scale, epoch))

    scripted = torch.jit.script(model)
    meta = {
        "format_version": FORMAT_VERSION, "architecture": "dw", "cutoff": float(args.cutoff),
        "cutoff_3body": 0.0, "num_layers": 1, "type_names": TYPE_NAMES, "units": "metal",
        "dtype": "float64", "needs_triplets": 0, "checksum": state_dict_checksum(scripted),
        "output": "vector", "selected_types": "O",
        "train_rmse_d": "%.4e" % tr, "test_rmse_d": "%.4e" % te,
        "description": "DPLR DW model: M-site displacement of q-TIP4P/F water (gamma %g), "
                       "potentials/dw" % GAMMA,
    }
    text = make_metadata_text(meta)
    torch.jit.save(scripted, args.output, _extra_files={EXTRA_FILE: text})
    reloaded, _ = load_model(args.output)
    g = graphs[test_idx[0]]
    diff = (reloaded(*g) - model(*g)).abs().max().item()
    if diff > 1e-12:
        raise RuntimeError("%s: reloaded model differs from the trained one by %g"
                           % (args.output, diff))
    print("wrote %s (%d bytes)\n%s" % (args.output, os.path.getsize(args.output), text), end="")


if __name__ == "__main__":
    main()
