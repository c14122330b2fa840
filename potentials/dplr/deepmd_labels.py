"""Short-range (SR) labels of DPLR from DeePMD-kit npy data with Wannier centroids, the way
DeePMD-kit's ``dipole_charge`` modifier makes them, with our DW model.

Usage::

    /usr/bin/python3 -m potentials.dplr.deepmd_labels --data ../shared/deepmd-kit/dplr-water/train/data \\
        --dw water_dplr_dft_dw.pt --out /tmp/sr_labels [--n-test 6 --split-seed 0] [--check]

DeePMD-kit's convention (its ener.json ``modifier``: type dipole_charge, model_charge_map
[-8], sys_charge_map [6, 1], ewald_beta 0.4, ewald_h 1; read in deepmd/dpmodel/modifier/
dipole_charge.py and deepmd/pt_expt/modifier/dipole_charge.py of DeePMD-kit 3): point
charges on the ions (O +6, H +1) and on one Wannier centroid per O (-8) at
r_WC = r_O + d(r), d the displacement that the dipole (DW) model predicts; the long-range
energy is the reciprocal-space Ewald sum of these charges,

    E_LR = qqrd2e / (2 pi V) sum_{m != 0} exp(-pi^2 m^2 / beta^2) / m^2 |S(m)|^2

(the Gaussian-charge interaction with kernel erf(beta r)/r including the intramolecular
pairs), and the forces are -dE_LR/dr of the ions with the centroids moving with them:
F_j = F_ion_j + F_WC(j) + sum_i (dd_i/dr_j)^T F_WC_i, the forces on the centroids passed to
their O and, through the DW model's Jacobian, to every atom of its environment. The
training labels are the data's energy and forces minus E_LR and F_LR (the virial likewise;
our SR trainer does not fit virials, so they are not written).

Ours differ from DeePMD-kit's labels only by a constant energy per frame: E_LR here is
potentials/dplr/ewald.py:gaussian_ewald, which removes the self energy of each Gaussian
(-qqrd2e beta / sqrt(pi) sum q^2, the same for every frame of a system) as PPPM does, so
that the labels match what ``kspace_style pppm/dplr`` adds at MD time; DeePMD-kit's
reciprocal sum keeps it (its pppm/dplr removes it at MD time; a per-frame constant is
absorbed in the per-type energies either way). Its k-space sum is truncated on a grid of
spacing ewald_h (|m_a| <= 9 for this 16.4 A box), ours at exp(-k^2/4 beta^2) < 1e-14;
the terms left out by its grid are below 1e-7 of the largest.

Output: ``<out>/train`` and ``<out>/test``, DeePMD npy systems (type.raw, type_map.raw,
set.000/{coord,box,energy,force}.npy) with the SR labels of the split frames (the same
permutation as potentials/dw/train.py --data), and ``<out>/summary.json`` (RMS of the
forces of the data, of F_LR and of the SR labels, E_LR per frame). --check compares F_LR
of one frame with central finite differences of E_LR (atoms moved, centroids following
through the DW model) and exits non-zero above 1e-6 relative.
"""

import argparse
import json
import math
import os
import sys

import numpy as np
import torch

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from potentials.common.graph import build_graph  # noqa: E402
from potentials.common.metadata import load_model  # noqa: E402
from potentials.dplr.ewald import QQRD2E_METAL, gaussian_ewald  # noqa: E402

TYPE_NAMES = ["O", "H"]
SYS_CHARGE = {"O": 6.0, "H": 1.0}   # sys_charge_map of DeePMD-kit's ener.json
WC_CHARGE = -8.0                    # model_charge_map
BETA = 0.4                          # ewald_beta, 1/A


def predict_wc(dw, meta, positions, types, cell, need_grad=False):
    """(d [n, 3] numpy, graph tensors): displacements of the DW model (zeros for H)."""
    g = build_graph(positions, cell, float(meta["cutoff"]))
    vec = torch.tensor(g["edge_vec"], dtype=torch.float64, requires_grad=need_grad)
    ei = torch.tensor(g["edge_index"], dtype=torch.int64)
    d = dw(vec, ei, torch.tensor(types, dtype=torch.int64), torch.zeros((0, 2), dtype=torch.int64))
    return d, vec, ei


def long_range(dw, meta, positions, types, cell, beta=BETA, qqrd2e=QQRD2E_METAL):
    """(E_LR eV, F_LR [n, 3] eV/A, WC positions [n_O, 3]) of one frame (module docstring)."""
    x = np.asarray(positions, dtype=float)
    d, vec, ei = predict_wc(dw, meta, x, types, cell, need_grad=True)
    o = np.nonzero(types == 0)[0]
    wc = x[o] + d.detach().numpy()[o]
    q_ion = np.array([SYS_CHARGE[TYPE_NAMES[t]] for t in types])
    e, f, _ = gaussian_ewald(np.concatenate([x, wc]),
                             np.concatenate([q_ion, np.full(len(o), WC_CHARGE)]),
                             cell, beta, qqrd2e)
    n = len(x)
    forces = f[:n].copy()
    f_wc = np.zeros((n, 3))
    f_wc[o] = f[n:]
    forces += f_wc                                     # r_WC moves with its O
    # Jacobian of the DW model: sum_i F_WC_i . dd_i/d(edge_vec_e), then edge_vec = x_j - x_i
    (g,) = torch.autograd.grad(d, vec, grad_outputs=torch.tensor(f_wc))
    g = g.numpy()
    np.add.at(forces, ei[1].numpy(), g)
    np.add.at(forces, ei[0].numpy(), -g)
    return e, forces, wc


def finite_difference_check(dw, meta, positions, types, cell, h=1e-4, atoms=(0, 1, 130, 200)):
    """Max relative |F_LR - F_fd| / max|F_LR| over the chosen atoms and directions."""
    _, f, _ = long_range(dw, meta, positions, types, cell)
    worst, scale = 0.0, np.max(np.abs(f))
    for a in atoms:
        for k in range(3):
            xp, xm = positions.copy(), positions.copy()
            xp[a, k] += h
            xm[a, k] -= h
            fd = -(long_range(dw, meta, xp, types, cell)[0]
                   - long_range(dw, meta, xm, types, cell)[0]) / (2 * h)
            worst = max(worst, abs(fd - f[a, k]) / scale)
    return worst


def split(n_frames, n_test, seed):
    """The split of potentials/dw/train.py --data (permutation, test = the last n_test)."""
    perm = np.random.RandomState(seed).permutation(n_frames)
    return np.sort(perm[:-n_test]), np.sort(perm[-n_test:])


def write_system(path, frames, energies, forces):
    os.makedirs(os.path.join(path, "set.000"), exist_ok=True)
    types = frames[0]["types"]
    with open(os.path.join(path, "type.raw"), "w") as f:
        f.write("\n".join(str(int(t)) for t in types) + "\n")
    with open(os.path.join(path, "type_map.raw"), "w") as f:
        f.write("\n".join(TYPE_NAMES) + "\n")
    s = os.path.join(path, "set.000")
    np.save(os.path.join(s, "coord.npy"), np.array([fr["positions"].reshape(-1) for fr in frames]))
    np.save(os.path.join(s, "box.npy"), np.array([fr["cell"].reshape(-1) for fr in frames]))
    np.save(os.path.join(s, "energy.npy"), np.asarray(energies, dtype=np.float64))
    np.save(os.path.join(s, "force.npy"), np.array([f.reshape(-1) for f in forces]))


def make_labels(data, dw_path, out, n_test=6, split_seed=0, beta=BETA):
    from potentials.data.deepmd_npy import load_systems
    dw, meta = load_model(dw_path)
    frames = load_systems(data, type_names=TYPE_NAMES)
    e_lr, f_lr = [], []
    for fr in frames:
        e, f, _ = long_range(dw, meta, fr["positions"], fr["types"], fr["cell"], beta)
        e_lr.append(e)
        f_lr.append(f)
    e_sr = [fr["energy"] - e for fr, e in zip(frames, e_lr)]
    f_sr = [fr["forces"] - f for fr, f in zip(frames, f_lr)]
    train_idx, test_idx = split(len(frames), n_test, split_seed)
    for name, idx in (("train", train_idx), ("test", test_idx)):
        write_system(os.path.join(out, name), [frames[k] for k in idx], [e_sr[k] for k in idx],
                     [f_sr[k] for k in idx])
    f_all = np.concatenate([fr["forces"] for fr in frames])
    q = np.array([SYS_CHARGE[TYPE_NAMES[t]] for t in frames[0]["types"]])
    n_o = int((frames[0]["types"] == 0).sum())
    summary = {
        "data": [os.path.normpath(d) for d in data], "dw": dw_path, "beta": beta,
        "charges": "O %+g H %+g WC %+g" % (SYS_CHARGE["O"], SYS_CHARGE["H"], WC_CHARGE),
        "frames": len(frames), "train": train_idx.tolist(), "test": test_idx.tolist(),
        "e_lr_mean_eV": float(np.mean(e_lr)), "e_lr_std_eV": float(np.std(e_lr)),
        "self_energy_removed_eV": -QQRD2E_METAL * beta / math.sqrt(math.pi)
        * float(np.sum(q * q) + n_o * WC_CHARGE ** 2),
        "rms_f_data_meV_A": 1e3 * float(np.sqrt(np.mean(f_all ** 2))),
        "rms_f_lr_meV_A": 1e3 * float(np.sqrt(np.mean(np.concatenate(f_lr) ** 2))),
        "rms_f_sr_meV_A": 1e3 * float(np.sqrt(np.mean(np.concatenate(f_sr) ** 2))),
        "std_e_data_eV": float(np.std([fr["energy"] for fr in frames])),
        "std_e_sr_eV": float(np.std(e_sr)),
    }
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    return summary


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", nargs="+", required=True, help="DeePMD npy system folders")
    ap.add_argument("--dw", required=True, help="our DW model file (potentials/dw/train.py)")
    ap.add_argument("--out", default="/tmp/dplr_sr_labels")
    ap.add_argument("--n-test", type=int, default=6)
    ap.add_argument("--split-seed", type=int, default=0)
    ap.add_argument("--beta", type=float, default=BETA)
    ap.add_argument("--check", action="store_true", help="finite-difference check only")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    if args.check:
        from potentials.data.deepmd_npy import load_system
        fr = load_system(args.data[0], type_names=TYPE_NAMES)[0]
        dw, meta = load_model(args.dw)
        err = finite_difference_check(dw, meta, fr["positions"], fr["types"], fr["cell"])
        print("F_LR vs finite differences of E_LR (DW Jacobian included): max relative "
              "error %.2e" % err)
        return 0 if err < 1e-6 else 1
    s = make_labels(args.data, args.dw, args.out, args.n_test, args.split_seed, args.beta)
    print(json.dumps(s, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
