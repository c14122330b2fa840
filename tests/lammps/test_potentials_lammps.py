#!/usr/bin/python3
"""Shipped water models (potentials/models/*.pt) through pair_style aisci:
energies and forces of a data-set frame equal the same model evaluated from Python
(float64), and a short NVE run with water_matris.pt conserves energy."""

import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aisci_nn_toy as toy  # noqa: E402
import aisci_testlib as T  # noqa: E402

sys.path.insert(0, T.SOURCE_DIR)
from potentials.common.evaluate import (batch_graphs, energy_forces, frame_graph,  # noqa: E402
                                        load_frames, split_frames)
from potentials.common.metadata import load_model  # noqa: E402

toy.skip_without_torch_wrapper()
torch.set_num_threads(1)

MODELS = os.path.join(T.SOURCE_DIR, "potentials", "models")
frames = load_frames(os.path.join(T.SOURCE_DIR, "potentials", "data", "water_qtip4pf.npz"))
_, test_idx = split_frames(len(frames))
frame = frames[[k for k in test_idx if len(frames[k]["types"]) == 192][0]]
L = frame["cell"][0, 0]


def data_file(x, types):
    lines = ["water frame from potentials/data/water_qtip4pf.npz", "",
             "%d atoms" % len(x), "2 atom types", "",
             "0 %.17g xlo xhi" % L, "0 %.17g ylo yhi" % L, "0 %.17g zlo zhi" % L, "",
             "Masses", "", "1 15.9994", "2 1.008", "", "Atoms # atomic", ""]
    lines += ["%d %d %.17g %.17g %.17g" % (k + 1, types[k] + 1, p[0], p[1], p[2])
              for k, p in enumerate(x)]
    return "\n".join(lines) + "\n"


def frame_script(model):
    return """units metal
atom_style atomic
boundary p p p
read_data frame.data
pair_style aisci threads 1
pair_coeff * * %s O H
neighbor 1.0 bin
thermo_style custom step pe
thermo_modify format float %%.17g
dump d all custom 1 f.dump id fx fy fz
dump_modify d sort id format float %%.17g
run 0
""" % model


for arch in ("matris", "dpa3"):
    path = os.path.join(MODELS, "water_%s.pt" % arch)
    module, meta = load_model(path)
    g = frame_graph(frame, meta["cutoff"], meta["cutoff_3body"])
    ev, ei, ty, tr, fid, nb = batch_graphs([g], torch.float64)
    e_ref, f_ref = energy_forces(module, ev, ei, ty, tr, fid, nb)
    e_ref = e_ref.item()
    f_ref = f_ref.numpy()
    r = T.run_lammps(frame_script(path), files={"frame.data": data_file(frame["positions"],
                                                                         frame["types"])})
    if not T.check(r.rc == 0, "%s: LAMMPS run failed:\n%s" % (arch, r.output[-2000:])):
        continue
    e = r.thermo()["PotEng"][-1]
    d = toy.read_dump(os.path.join(r.workdir, "f.dump"))
    f = np.stack([d["fx"], d["fy"], d["fz"]], 1)
    T.check(abs(e - e_ref) < 1e-10 * abs(e_ref), "%s: pair style energy %.12f eV vs Python %.12f"
            % (arch, e, e_ref))
    T.check(np.abs(f - f_ref).max() < 1e-9, "%s: forces vs Python, max diff %.2e eV/A"
            % (arch, np.abs(f - f_ref).max()))
    err_f = 1000 * np.sqrt(np.mean((f - frame["forces"]) ** 2))
    print("%s: energy %.4f eV (teacher %.4f), force RMSE vs teacher %.1f meV/A on this frame"
          % (arch, e, frame["energy"], err_f))

# NVE: 120 steps of 0.25 fs from the frame at 300 K with the MatRIS-style model.
path = os.path.join(MODELS, "water_matris.pt")
nve = """units metal
atom_style atomic
boundary p p p
read_data frame.data
pair_style aisci threads 1
pair_coeff * * %s O H
neighbor 1.0 bin
timestep 0.00025
velocity all create 300.0 4928 mom yes rot no dist gaussian
fix 1 all nve
thermo_style custom step temp pe ke etotal
thermo_modify format float %%.12g
thermo 10
run 120
""" % path
r = T.run_lammps(nve, files={"frame.data": data_file(frame["positions"], frame["types"])},
                 timeout=600)
if T.check(r.rc == 0, "NVE run failed:\n%s" % r.output[-2000:]):
    t = r.thermo()
    etot = np.array(t["TotEng"])
    n = len(frame["types"])
    drift = abs(etot[-1] - etot[0]) / n * 1000
    spread = (etot.max() - etot.min()) / n * 1000
    ke_span = (max(t["KinEng"]) - min(t["KinEng"])) / n * 1000
    print("NVE 30 fs: total energy drift %.4f meV/atom, spread %.4f meV/atom, kinetic energy "
          "swings %.1f meV/atom, T %.0f..%.0f K" % (drift, spread, ke_span, min(t["Temp"]),
                                                    max(t["Temp"])))
    T.check(spread < 0.05 * ke_span and spread < 1.0,
            "NVE conserves energy: spread %.4f meV/atom vs kinetic swings %.1f" % (spread, ke_span))

T.summary("test_potentials_lammps")
