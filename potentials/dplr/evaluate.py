"""Full DPLR energy and forces of water frames in Python, as LAMMPS computes them with
pair_style aisci (SR model) + fix dplr (DW model) + kspace_style pppm/dplr: the SR model
plus the Gaussian electrostatics (potentials/dplr/ewald.py) of O 0, H +0.5564 and one
WC -1.1128 per O at r_O + d_O(DW model), with the DW Jacobian in the forces.

Usage (errors against the teacher on the test split)::

    /usr/bin/python3 -m potentials.dplr.evaluate [--sr potentials/models/water_dplr_sr.pt]
        [--dw potentials/models/water_dw.pt] [--data potentials/data/water_qtip4pf_clean.npz]
        [--labels <SR labels .npz of potentials/dplr/labels.py>]

Prints the SR-label RMSEs (train/test, when --labels is given) and the test-split RMSEs
of the full DPLR energy/forces against the teacher's clean labels, with the same numbers
for the exact M site (DW error excluded) for comparison.
"""

import argparse
import os
import sys

import numpy as np
import torch

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from potentials.common.evaluate import (energy_forces, load_frames, rmse_on_frames,  # noqa: E402
                                        split_frames)
from potentials.common.graph import build_graph  # noqa: E402
from potentials.common.metadata import load_model  # noqa: E402
from potentials.dplr.ewald import QQRD2E_METAL, gaussian_ewald  # noqa: E402
from potentials.dplr.labels import BETA, DATA, Q_H, Q_M, long_range  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.path.join(REPO, "potentials", "models")


class DPLR:
    """SR + DW models loaded once; __call__(positions, types (0 = O, 1 = H), cell) ->
    dict(e_sr, f_sr, e_lr, f_lr, e, f, wc)."""

    def __init__(self, sr_path, dw_path, beta=BETA, qqrd2e=QQRD2E_METAL):
        self.sr, self.sr_meta = load_model(sr_path)
        self.dw, self.dw_meta = load_model(dw_path)
        self.beta, self.qqrd2e = beta, qqrd2e

    def sr_terms(self, x, types, cell):
        m = self.sr_meta
        rc3 = m["cutoff_3body"] if m["needs_triplets"] else 0.0
        g = build_graph(x, cell, m["cutoff"], rc3)
        e, f = energy_forces(self.sr, torch.tensor(g["edge_vec"]), torch.tensor(g["edge_index"]),
                             torch.tensor(types), torch.tensor(g["triplets"]).reshape(-1, 2))
        return float(e.sum()), f.detach().numpy()

    def lr_terms(self, x, types, cell):
        g = build_graph(x, cell, self.dw_meta["cutoff"])
        vec = torch.tensor(g["edge_vec"]).requires_grad_(True)
        ei = torch.tensor(g["edge_index"])
        d = self.dw(vec, ei, torch.tensor(types), torch.zeros((0, 2), dtype=torch.int64))
        o = np.nonzero(types == 0)[0]
        wc = x[o] + d.detach().numpy()[o]
        q = np.where(types == 1, Q_H, 0.0)
        e, f, _ = gaussian_ewald(np.concatenate([x, wc]), np.concatenate([q, np.full(len(o), Q_M)]),
                                 cell, self.beta, self.qqrd2e)
        n = len(x)
        forces = f[:n].copy()
        forces[o] += f[n:]
        # WC = x_O + d(x): the DW Jacobian term dF_i = d(F_WC . d)/dx_i (F_WC fixed)
        fw = torch.zeros((n, 3), dtype=torch.float64)
        fw[o] = torch.tensor(f[n:])
        (grad,) = torch.autograd.grad((d * fw).sum(), vec)
        jac = torch.zeros((n, 3), dtype=torch.float64)
        jac.index_add_(0, ei[0], -grad)
        jac.index_add_(0, ei[1], grad)
        return e, forces + jac.numpy(), wc

    def __call__(self, positions, types, cell):
        x = np.asarray(positions, dtype=float)
        types = np.asarray(types, dtype=np.int64)
        e_sr, f_sr = self.sr_terms(x, types, cell)
        e_lr, f_lr, wc = self.lr_terms(x, types, cell)
        return {"e_sr": e_sr, "f_sr": f_sr, "e_lr": e_lr, "f_lr": f_lr, "e": e_sr + e_lr,
                "f": f_sr + f_lr, "wc": wc}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sr", default=os.path.join(MODELS, "water_dplr_sr.pt"))
    parser.add_argument("--dw", default=os.path.join(MODELS, "water_dw.pt"))
    parser.add_argument("--data", default=DATA)
    parser.add_argument("--labels", default=None)
    parser.add_argument("--frames", type=int, default=0, help="first N test frames only (0: all)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    frames = load_frames(args.data)
    train_idx, test_idx = split_frames(len(frames), 0.2, 0)
    dplr = DPLR(args.sr, args.dw)
    if args.labels:
        lf = load_frames(args.labels)
        m = dplr.sr_meta
        for name, idx in (("train", train_idx), ("test", test_idx)):
            e, f, n = rmse_on_frames(dplr.sr, lf, idx, m["cutoff"], m["cutoff_3body"], torch.float64)
            print("SR labels %s: %d frames, energy RMSE %.3f meV/atom, force RMSE %.1f meV/A"
                  % (name, n, e, f), flush=True)
    idx = test_idx[:args.frames] if args.frames else test_idx
    de, df, de_x, df_x, dwc = [], [], [], [], []
    for k in idx:
        fr = frames[k]
        r = dplr(fr["positions"], fr["types"], fr["cell"])
        n = len(fr["types"])
        de.append((r["e"] - fr["energy"]) / n)
        df.append((r["f"] - fr["forces"]).ravel())
        e_x, f_x, _ = long_range(fr["positions"], fr["types"], fr["cell"], dplr.beta)
        de_x.append((r["e_sr"] + e_x - fr["energy"]) / n)
        df_x.append((r["f_sr"] + f_x - fr["forces"]).ravel())
    rms = lambda a: 1e3 * float(np.sqrt(np.mean(np.concatenate([np.atleast_1d(v) for v in a]) ** 2)))  # noqa: E731
    print("full DPLR (SR + LR at DW WCs) vs teacher, %d test frames: energy RMSE %.3f meV/atom, "
          "force RMSE %.1f meV/A" % (len(idx), rms(de), rms(df)))
    print("SR + LR at the exact M sites vs teacher: energy RMSE %.3f meV/atom, force RMSE "
          "%.1f meV/A" % (rms(de_x), rms(df_x)))


if __name__ == "__main__":
    main()
