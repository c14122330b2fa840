"""Energies and forces of a contract-v1 model via autograd w.r.t. edge_vec; data sets;
error metrics.

Usage (check an exported model against a data set)::

    /usr/bin/python3 -m potentials.common.evaluate potentials/models/water_matris.pt \
        potentials/data/water_qtip4pf.npz
    /usr/bin/python3 -m potentials.common.evaluate model.pt water-dft/data_3 [more systems]

An .npz data set of ours is split as train.py splits it (--split-seed, --test-fraction)
and both parts are reported; DeePMD-kit npy system folders are evaluated whole (every
frame, e.g. the --test-data of a training run).

Forces: E depends on x only through edge_vec[e] = x_j - x_i (+ shift), so with
g_e = dE/d edge_vec[e]: F_i += g_e, F_j -= g_e; virial W = -sum_e edge_vec_e (x) g_e.
"""

import argparse
import os
import sys

import numpy as np
import torch

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from potentials.common.graph import build_graph  # noqa: E402


def load_frames(path):
    """List of frames (dicts: positions, forces, types, cell, energy, run_id, temperature,
    density) from a data set written by potentials/data/generate_water.py."""
    with np.load(path) as npz:  # read each array once (NpzFile decompresses on access)
        d = {k: npz[k] for k in npz.files}
    frames = []
    for f, (n, o) in enumerate(zip(d["n_atoms"], d["offsets"])):
        frames.append({
            "positions": d["positions"][o:o + n],
            "forces": d["forces"][o:o + n],
            "types": d["types"][o:o + n].astype(np.int64),
            "cell": d["cells"][f],
            "energy": float(d["energies"][f]),
            "run_id": int(d["run_id"][f]),
            "temperature": float(d["temperature"][f]),
            "density": float(d["density"][f]),
        })
    return frames


def split_frames(n_frames, test_fraction=0.2, seed=0):
    """Deterministic random train/test split of frame indices."""
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n_frames)
    n_test = int(round(test_fraction * n_frames))
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def frame_graph(frame, cutoff, cutoff_3body):
    g = build_graph(frame["positions"], frame["cell"], cutoff, cutoff_3body)
    g["types"] = frame["types"]
    g["n_atoms"] = len(frame["types"])
    return g


def batch_graphs(graphs, dtype):
    """Disjoint union of frame graphs as torch tensors: edge_vec, edge_index, atom_types,
    triplets, frame index of every atom, number of frames."""
    ev, ei, ty, tr, fid = [], [], [], [], []
    n_off = 0
    e_off = 0
    for k, g in enumerate(graphs):
        ev.append(g["edge_vec"])
        ei.append(g["edge_index"] + n_off)
        ty.append(g["types"])
        tr.append(g["triplets"] + e_off)
        fid.append(np.full(g["n_atoms"], k))
        n_off += g["n_atoms"]
        e_off += g["edge_vec"].shape[0]
    return (torch.tensor(np.concatenate(ev), dtype=dtype),
            torch.tensor(np.concatenate(ei, axis=1), dtype=torch.int64),
            torch.tensor(np.concatenate(ty), dtype=torch.int64),
            torch.tensor(np.concatenate(tr), dtype=torch.int64).reshape(-1, 2),
            torch.tensor(np.concatenate(fid), dtype=torch.int64),
            len(graphs))


def energy_forces(model, edge_vec, edge_index, atom_types, triplets, frame_index=None,
                  n_frames=1, create_graph=False, virial=False):
    """Frame energies [n_frames], forces [N, 3] (and virial [n_frames, 3, 3] if asked).

    edge_vec must be a leaf or plain tensor; a fresh leaf with requires_grad is made.
    """
    vec = edge_vec.detach().requires_grad_(True)
    n = atom_types.shape[0]
    e_atom = model(vec, edge_index, atom_types, triplets)
    if frame_index is None:
        frame_index = torch.zeros(n, dtype=torch.int64)
    energy = torch.zeros(n_frames, dtype=e_atom.dtype).index_add(0, frame_index, e_atom)
    (grad,) = torch.autograd.grad(energy.sum(), vec, create_graph=create_graph)
    forces = torch.zeros((n, 3), dtype=grad.dtype)
    forces = forces.index_add(0, edge_index[0], grad).index_add(0, edge_index[1], -grad)
    if not virial:
        return energy, forces
    w_edge = -vec.detach().unsqueeze(-1) * grad.detach().unsqueeze(-2)
    frame_of_edge = frame_index[edge_index[0]]
    w = torch.zeros((n_frames, 3, 3), dtype=grad.dtype).index_add(0, frame_of_edge, w_edge)
    return energy, forces, w


def rmse_on_frames(model, frames, indices, cutoff, cutoff_3body, dtype, batch=8, graphs=None):
    """(energy RMSE meV/atom, force RMSE meV/A, n frames) of model on frames[indices]."""
    de, df, nf = [], [], 0
    idx = list(indices)
    for s in range(0, len(idx), batch):
        sel = idx[s:s + batch]
        gs = [graphs[k] if graphs is not None else frame_graph(frames[k], cutoff, cutoff_3body)
              for k in sel]
        ev, ei, ty, tr, fid, nb = batch_graphs(gs, dtype)
        energy, forces = energy_forces(model, ev, ei, ty, tr, fid, nb)
        ref_e = np.array([frames[k]["energy"] for k in sel])
        nat = np.array([len(frames[k]["types"]) for k in sel])
        ref_f = np.concatenate([frames[k]["forces"] for k in sel])
        de.append((energy.detach().double().numpy() - ref_e) / nat)
        df.append((forces.detach().double().numpy() - ref_f).ravel())
        nf += len(sel)
    de = np.concatenate(de)
    df = np.concatenate(df)
    return 1000.0 * np.sqrt(np.mean(de ** 2)), 1000.0 * np.sqrt(np.mean(df ** 2)), nf


def main(argv=None):
    from potentials.common.metadata import load_model

    parser = argparse.ArgumentParser(description="Energy/force RMSE of an exported model")
    parser.add_argument("model")
    parser.add_argument("data", nargs="+",
                        help="an .npz data set of ours, or DeePMD-kit npy system folders")
    parser.add_argument("--split-seed", type=int, default=0)
    parser.add_argument("--test-fraction", type=float, default=0.2)
    args = parser.parse_args(argv)
    model, meta = load_model(args.model)
    dtype = torch.float64 if meta["dtype"] == "float64" else torch.float32
    rc3 = meta["cutoff_3body"] if meta["needs_triplets"] else 0.0
    if len(args.data) == 1 and not os.path.isdir(args.data[0]):
        frames = load_frames(args.data[0])
        train_idx, test_idx = split_frames(len(frames), args.test_fraction, args.split_seed)
        parts = (("train", train_idx), ("test", test_idx))
    else:
        from potentials.data.deepmd_npy import load_systems
        frames = load_systems(args.data, type_names=list(meta["type_names"]))
        parts = (("all", np.arange(len(frames))),)
    for name, idx in parts:
        e, f, n = rmse_on_frames(model, frames, idx, meta["cutoff"], rc3, dtype)
        print("%s: %d frames, energy RMSE %.3f meV/atom, force RMSE %.1f meV/A" % (name, n, e, f))


if __name__ == "__main__":
    main()
