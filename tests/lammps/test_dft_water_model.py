"""The shipped DFT-water models (potentials/models/water_matris_dft.pt and
water_equivariant_dft.pt, issue 17: trained by validation/dft_water/run_queue.py on
DeePMD-kit's water-dft data_0-2) in LAMMPS, each:
- its metadata names the data, the split, the CPU budget and the test errors;
- on frame 0 of data_3 (192 atoms, a test frame), pair_style aisci on 1 and on 2 ranks
  gives the energy and forces of the model evaluated in Python (relative 1e-10);
- against the DFT labels of that frame the errors are of the size the metadata states
  (energy within 5 meV/atom, force RMSE below twice the test RMSE): the file is the DFT
  model, in eV and A;
- 40 steps of NVE (0.5 fs, 300 K start) on one rank: no lost atoms, total energy conserved
  (one rank: on two, this 12.4 A box needs a ghost shell of 2 x (cutoff + skin) = 13 A
  per rank, about 17 x the atoms, docs/pair_aisci.md).
Skips (77) without ../shared/deepmd-kit or without the torch wrapper."""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aisci_nn_toy as toy  # noqa: E402
import aisci_testlib as T  # noqa: E402

import deepmd_systems as ds  # noqa: E402

sys.path.insert(0, T.SOURCE_DIR)
DATA3 = os.path.join(ds.WATER_DFT, "data_3")
# the shipped DFT-water models: MatRIS-style and equivariant (the better one, issue 17)
MODELS = [("water_matris_dft.pt", "matris"), ("water_equivariant_dft.pt", "equivariant")]
ds.need(DATA3)
toy.skip_without_torch_wrapper()

import torch  # noqa: E402
from potentials.common.evaluate import energy_forces  # noqa: E402
from potentials.common.graph import build_graph  # noqa: E402
from potentials.common.metadata import load_model  # noqa: E402

torch.set_num_threads(1)

# frame 0 of data_3 (the test set), wrapped into its cubic box
x = np.load(os.path.join(DATA3, "set.000", "coord.npy"))[0].reshape(-1, 3).astype(float)
box = np.load(os.path.join(DATA3, "set.000", "box.npy"))[0].reshape(3, 3).astype(float)
e_dft = float(np.load(os.path.join(DATA3, "set.000", "energy.npy"))[0])
f_dft = np.load(os.path.join(DATA3, "set.000", "force.npy"))[0].reshape(-1, 3).astype(float)
types = np.loadtxt(os.path.join(DATA3, "type.raw"), dtype=int)
type_map = open(os.path.join(DATA3, "type_map.raw")).read().split()
T.check(type_map[:2] == ["O", "H"], "data_3 type map O H: %s" % type_map)
L = box[0, 0]
x = np.mod(x, L)
n = len(x)


def check_model(name, arch):
    model_path = os.path.join(T.SOURCE_DIR, "potentials", "models", name)
    print("== %s" % name)
    model, meta = load_model(model_path)
    T.check(meta["architecture"] == arch and "water-dft" in meta.get("data", "")
            and "data_3" in meta.get("split", "") and int(meta.get("budget_cpu_s", 0)) > 0
            and float(meta.get("test_rmse_f_mev_per_angstrom", 0)) > 0,
            "metadata names data, split, budget and test errors: %s" % {
                k: meta.get(k) for k in ("data", "split", "budget_cpu_s",
                                         "test_rmse_f_mev_per_angstrom")})
    test_f = float(meta["test_rmse_f_mev_per_angstrom"])

    g = build_graph(x, box, float(meta["cutoff"]), float(meta["cutoff_3body"]))
    e_py, f_py = energy_forces(model, torch.tensor(g["edge_vec"]), torch.tensor(g["edge_index"]),
                               torch.tensor(types), torch.tensor(g["triplets"]))
    e_py = float(e_py[0])
    f_py = f_py.detach().numpy()

    work = toy.build_dir("dft_water_model_" + arch)
    toy.write_data(os.path.join(work, "frame.data"), x, [L, L, L], types + 1, 2,
                   masses=[15.9994, 1.00794])
    for nprocs in (1, 2):
        r = T.run_lammps(toy.frame_script(model_path, data=os.path.join(work, "frame.data")),
                         nprocs=nprocs, timeout=300)
        if not T.check(r.rc == 0, "%d rank(s): run 0 failed:\n%s" % (nprocs, r.output[-1500:])):
            continue
        e_l = r.thermo()["PotEng"][-1]
        d = toy.read_dump(os.path.join(r.workdir, "f.dump"))
        f_l = np.stack([d["fx"], d["fy"], d["fz"]], 1)
        de = abs(e_l - e_py) / abs(e_py)
        df = np.abs(f_l - f_py).max() / np.abs(f_py).max()
        print("%d rank(s): E %.10f eV (Python %.10f), max force diff %.2e relative" % (
            nprocs, e_l, e_py, df))
        T.check(de < 1e-10 and df < 1e-10,
                "%d rank(s): LAMMPS = the model in Python (E %.1e, F %.1e relative)" % (nprocs, de, df))

    de_atom = abs(e_py - e_dft) / n * 1000.0
    rmse_f = float(np.sqrt(np.mean((f_py - f_dft) ** 2))) * 1000.0
    print("against DFT (data_3 frame 0): energy %.3f meV/atom, force RMSE %.1f meV/A "
          "(metadata test RMSE %.1f; force RMS of the labels %.0f meV/A)" % (
              de_atom, rmse_f, test_f, 1000.0 * np.sqrt(np.mean(f_dft ** 2))))
    T.check(de_atom < 5.0, "energy within 5 meV/atom of DFT: %.3f" % de_atom)
    T.check(rmse_f < 2.0 * test_f, "force RMSE %.1f < 2 x the stated test RMSE %.1f meV/A"
            % (rmse_f, test_f))

    r = T.run_lammps("""units metal
    atom_style atomic
    boundary p p p
    read_data %s
    pair_style aisci threads 1
    pair_coeff * * %s O H
    neighbor 2.0 bin
    neigh_modify every 1 delay 0 check yes
    velocity all create 300.0 4928459 mom yes rot yes dist gaussian
    fix md all nve
    timestep 0.0005
    thermo 4
    thermo_style custom step temp pe ke etotal atoms
    thermo_modify format float %%.12g lost error
    run 40
    """ % (os.path.join(work, "frame.data"), model_path), nprocs=1, timeout=600)
    if T.check(r.rc == 0, "NVE run failed:\n" + r.output[-1500:]):
        t = r.thermo()
        etot, ke = np.array(t["TotEng"]), np.array(t["KinEng"])
        spread = (etot.max() - etot.min()) / n * 1000.0
        swing = (ke.max() - ke.min()) / n * 1000.0
        print("NVE 20 fs: total energy spread %.4f meV/atom, kinetic swings %.2f meV/atom" % (
            spread, swing))
        T.check(min(t["Atoms"]) == n and max(t["Atoms"]) == n, "no lost atoms")
        T.check(np.all(np.isfinite(etot)), "finite energies")
        T.check(spread < 0.05 * swing, "energy conserved: spread %.4f < 5%% of swings %.2f meV/atom"
                % (spread, swing))


for name, arch in MODELS:
    check_model(name, arch)
T.summary("test_dft_water_model")
