#!/usr/bin/python3
"""Equivariant models through pair_style aisci (unchanged), float64:

- the shipped pruned model (potentials/models/water_equivariant_pruned50.pt; a randomly
  initialised pruned model exported on the fly when it is not shipped) on a 192-atom
  water frame of the data set: energy, forces, virial and per-atom energy sum equal the
  model evaluated from Python on the same frame (relative 1e-10);
- MPI invariance: the same at 2 ranks (ghost-shell graph) equals 1 rank (periodic
  graph) to relative 1e-10;
- the shipped full model, 1 rank, equals Python too.
"""
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aisci_nn_toy as toy  # noqa: E402
import aisci_testlib as T  # noqa: E402

toy.skip_without_torch_wrapper()
sys.path.insert(0, T.SOURCE_DIR)
from potentials.common.evaluate import load_frames, split_frames  # noqa: E402
from potentials.common.export import model_metadata, save_model  # noqa: E402
from potentials.common.metadata import load_model, state_dict_checksum  # noqa: E402
from potentials.equivariant.model import build  # noqa: E402
from potentials.prune.prune import prune_model  # noqa: E402

torch.set_num_threads(1)
d = toy.build_dir("equivariant")
MODELS = os.path.join(T.SOURCE_DIR, "potentials", "models")
# clean-force labels (the forces of water_qtip4pf.npz carry thermostat noise)
frames = load_frames(os.path.join(T.SOURCE_DIR, "potentials", "data",
                                  "water_qtip4pf_clean.npz"))
_, test_idx = split_frames(len(frames))
frame = frames[[k for k in test_idx if len(frames[k]["types"]) == 192][0]]
L = float(frame["cell"][0, 0])
x, types = frame["positions"], frame["types"]
toy.write_data(os.path.join(d, "frame.data"), x, L, types + 1, 2, masses=[15.9994, 1.008])
data = open(os.path.join(d, "frame.data")).read()


def pruned_model_path():
    path = os.path.join(MODELS, "water_equivariant_pruned50.pt")
    if os.path.exists(path):
        return path
    print("note: %s not shipped, using a random pruned model" % path)
    cfg = {"num_types": 2, "cutoff": 4.0, "num_layers": 2, "channels": [8, 4, 3],
           "num_radial": 8, "radial_hidden": 16, "readout_hidden": 16, "neighbor_norm": 5.0}
    torch.manual_seed(1)
    full = build(cfg).to(torch.float64)
    full._aisci_config = cfg
    small, scfg = prune_model(full, [[0, 2, 3, 5, 7], [1, 2], []])
    scripted = torch.jit.script(small.eval())
    out = os.path.join(d, "random_pruned.pt")
    save_model(scripted, out, model_metadata("equivariant", scfg, ["O", "H"], "float64",
                                              state_dict_checksum(scripted)))
    return out


def lammps(path, nprocs):
    script = toy.frame_script(path, style_args="threads 1")
    r = T.run_lammps(script, nprocs=nprocs, files={"frame.data": data})
    if not T.check(r.rc == 0, "%s np %d: LAMMPS failed\n%s" % (path, nprocs, r.output[-2000:])):
        return None
    e, w, spe, _, _ = toy.thermo_results(r)
    dmp = toy.read_dump(os.path.join(r.workdir, "f.dump"))
    f = np.stack([dmp["fx"], dmp["fy"], dmp["fz"]], 1)
    return e, f, w, spe


def rel(a, b):
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / np.abs(np.asarray(b)).max())


def against_python(path, tag):
    module, meta = load_model(path)
    e_ref, f_ref, w_ref = toy.reference(module, x, L, types, meta["cutoff"])
    one = lammps(path, 1)
    if one is None:
        return None
    e, f, w, spe = one
    T.check(rel(e, e_ref) < 1e-10, "%s: energy %.12f vs Python %.12f" % (tag, e, e_ref))
    T.check(rel(spe, e_ref) < 1e-10, "%s: per-atom energy sum %.12f" % (tag, spe))
    T.check(rel(f, f_ref) < 1e-10, "%s: forces vs Python, rel %.2e" % (tag, rel(f, f_ref)))
    T.check(rel(w, w_ref) < 1e-9, "%s: virial vs Python, rel %.2e" % (tag, rel(w, w_ref)))
    err = 1000 * np.sqrt(np.mean((f - frame["forces"]) ** 2))
    print("%s (%s): 1 rank = Python (energy rel %.1e, forces rel %.1e, virial rel %.1e); "
          "force RMSE vs clean q-TIP4P/F forces on this frame %.1f meV/A" % (
              tag, os.path.basename(path), rel(e, e_ref), rel(f, f_ref), rel(w, w_ref), err))
    return one


pruned = pruned_model_path()
one = against_python(pruned, "pruned")
two = lammps(pruned, 2)
if one is not None and two is not None:
    T.check(rel(two[0], one[0]) < 1e-10, "pruned: energy 2 ranks %.12f vs 1 rank %.12f"
            % (two[0], one[0]))
    T.check(rel(two[1], one[1]) < 1e-10, "pruned: forces 2 ranks vs 1, rel %.2e"
            % rel(two[1], one[1]))
    T.check(rel(two[2], one[2]) < 1e-10, "pruned: virial 2 ranks vs 1, rel %.2e"
            % rel(two[2], one[2]))
    print("pruned: 2 ranks vs 1 rank: energy rel %.1e, forces rel %.1e, virial rel %.1e"
          % (rel(two[0], one[0]), rel(two[1], one[1]), rel(two[2], one[2])))

full = os.path.join(MODELS, "water_equivariant_full.pt")
# the full model is shipped in potentials/models: missing is a failure, not a skip
if T.check(os.path.exists(full), "shipped model missing: " + full):
    against_python(full, "full")

T.summary("test_equivariant_lammps")
