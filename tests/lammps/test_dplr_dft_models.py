"""The DPLR pair trained on DeePMD-kit's Wannier data (potentials/models/water_dplr_dft_dw.pt
and water_dplr_dft_sr.pt, validation/dplr_water/run.py) in LAMMPS, on DeePMD-kit's DPLR
example system (../shared/deepmd-kit/dplr-water/lmp/conf.lmp: 128 H2O + 128 WCs, 16.42 A
box, charges O +6, H +1, WC -8, bond type 1 = O-WC):
- the metadata names the data, split, budget and test errors, and the SR model carries
  dplr_beta 0.4;
- step 0: the WCs sit at r_O + d of the DW model evaluated in Python, E_sr (evdwl) is the
  SR model's energy in Python, and elong is the Gaussian electrostatics of
  potentials/dplr/deepmd_labels.py at those WCs (the convention the SR labels were made
  with);
- 40 steps of NVE (0.25 fs) through fix dplr + pppm/dplr: no lost atoms and a total energy
  that stays within a small fraction of the kinetic-energy swings.
Skips (77) without ../shared/deepmd-kit or without the torch wrapper."""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aisci_nn_toy as toy  # noqa: E402
import aisci_testlib as T  # noqa: E402

sys.path.insert(0, T.SOURCE_DIR)
CONF = os.path.normpath(os.path.join(T.SOURCE_DIR, "..", "shared", "deepmd-kit", "dplr-water",
                                     "lmp", "conf.lmp"))
MODELS = os.path.join(T.SOURCE_DIR, "potentials", "models")
DW = os.path.join(MODELS, "water_dplr_dft_dw.pt")
SR = os.path.join(MODELS, "water_dplr_dft_sr.pt")
if not os.path.exists(CONF):
    print("SKIPPED: %s not found (DeePMD-kit's DPLR example data, ../shared/deepmd-kit)" % CONF)
    sys.exit(77)
toy.skip_without_torch_wrapper()

import torch  # noqa: E402
from potentials.common.evaluate import energy_forces  # noqa: E402
from potentials.common.graph import build_graph  # noqa: E402
from potentials.common.metadata import load_model  # noqa: E402
from potentials.dplr.deepmd_labels import long_range, predict_wc  # noqa: E402

torch.set_num_threads(1)
dw, dw_meta = load_model(DW)
sr, sr_meta = load_model(SR)
T.check(dw_meta["architecture"] == "dw" and "dplr-water" in dw_meta.get("data", "")
        and "test_rmse_d" in dw_meta and "seed" in dw_meta.get("split", "")
        and "budget_cpu_s" in dw_meta, "DW metadata names data, split, budget, test error")
T.check(abs(float(sr_meta.get("dplr_beta", 0)) - 0.4) < 1e-12
        and "dplr-water" in sr_meta.get("data", "") and "test_rmse_f_mev_per_angstrom" in sr_meta
        and "budget_cpu_s" in sr_meta, "SR metadata: dplr_beta 0.4, data, test errors, budget")

# conf.lmp: id mol type q x y z; types 1 O, 2 H, 3 WC
lines = open(CONF).read().splitlines()
start = next(i for i, l in enumerate(lines) if l.strip() == "Atoms") + 2
rows = []
for l in lines[start:]:
    if not l.strip():
        break
    rows.append(l.split())
rows.sort(key=lambda w: int(w[0]))
typ = np.array([int(w[2]) for w in rows])
xyz = np.array([[float(v) for v in w[4:7]] for w in rows])
L = float(next(l.split()[1] for l in lines if l.endswith("xlo xhi")))
cell = np.eye(3) * L
real = typ < 3
x, types = xyz[real], typ[real] - 1
d, _, _ = predict_wc(dw, dw_meta, x, types, cell)
wc_ref = x[types == 0] + d.detach().numpy()[types == 0]
e_lr, _, _ = long_range(dw, dw_meta, x, types, cell)
g = build_graph(x, cell, float(sr_meta["cutoff"]), float(sr_meta["cutoff_3body"]))
e_sr, _ = energy_forces(sr, torch.tensor(g["edge_vec"]), torch.tensor(g["edge_index"]),
                        torch.tensor(types), torch.tensor(g["triplets"]))
e_sr = float(e_sr[0])


def script(accuracy, body):
    return """units metal
boundary p p p
atom_style full
read_data %s
group real_atom type 1 2
pair_style aisci threads 1
pair_coeff * * %s O H NULL
bond_style zero
bond_coeff *
neighbor 2.0 bin
neigh_modify every 1 delay 0 check yes
kspace_style pppm/dplr %s
kspace_modify gewald 0.4
fix dplr all dplr model %s type_associate 1 3 bond_type 1
fix_modify dplr virial yes energy yes
compute real_temp real_atom temp
thermo_style custom step temp pe evdwl elong ke etotal atoms
thermo_modify temp real_temp format float %%.12g lost error
%s
""" % (CONF, SR, accuracy, DW, body)


r = T.run_lammps(script("1e-6", """dump d all custom 1 d.dump id type x y z
dump_modify d sort id format float %.17g
run 0"""), timeout=300)
if T.check(r.rc == 0, "step 0 run failed:\n" + r.output[-1500:]):
    t = {k: v[0] for k, v in r.thermo().items()}
    dd = toy.read_dump(os.path.join(r.workdir, "d.dump"))
    wc = np.stack([dd["x"], dd["y"], dd["z"]], 1)[dd["type"] == 3]
    dwc = wc - wc_ref
    dwc -= L * np.round(dwc / L)
    q2 = 128 * (36 + 1 + 1 + 64)
    print("step 0: WCs at the Python DW positions to %.1e A; E_sr %.8f vs %.8f eV; E_long %.6f "
          "vs deepmd_labels.long_range %.6f eV" % (np.abs(dwc).max(), t["E_vdwl"], e_sr,
                                                  t["E_long"], e_lr))
    T.check(np.abs(dwc).max() < 1e-8, "WC positions at step 0: %.1e A" % np.abs(dwc).max())
    T.check(abs(t["E_vdwl"] - e_sr) < 1e-8 * abs(e_sr), "E_sr at step 0 = the model in Python")
    T.check(abs(t["E_long"] - e_lr) < 1e-6 * 14.399645 * q2,
            "E_long at step 0 = the labels' electrostatics: diff %.2e eV" % abs(t["E_long"] - e_lr))

r = T.run_lammps(script("1e-5", """velocity real_atom create 300.0 23456784 mom yes rot yes dist gaussian temp real_temp
fix md real_atom nve
timestep 0.00025
thermo 4
run 40"""), timeout=300)
if T.check(r.rc == 0, "NVE run failed:\n" + r.output[-1500:]):
    t = r.thermo()
    etot, ke = np.array(t["TotEng"]), np.array(t["KinEng"])
    spread = (etot.max() - etot.min()) / 384 * 1000.0
    swing = (ke.max() - ke.min()) / 384 * 1000.0
    print("NVE 10 fs, 384 atoms: total energy spread %.4f meV/atom, kinetic swings %.2f "
          "meV/atom, T %.0f..%.0f K" % (spread, swing, min(t["Temp"]), max(t["Temp"])))
    T.check(min(t["Atoms"]) == 512 and max(t["Atoms"]) == 512, "no lost atoms")
    T.check(np.all(np.isfinite(etot)), "finite energies")
    T.check(spread < 0.05 * swing and spread < 0.5,
            "energy conserved: spread %.4f < 5%% of swings %.2f meV/atom" % (spread, swing))
T.summary("test_dplr_dft_models")
