"""Short-range (SR) labels of DPLR water: the q-TIP4P/F teacher minus the long-range term
that ``fix dplr`` + ``kspace_style pppm/dplr`` add at MD time.

Usage::

    /usr/bin/python3 -m potentials.dplr.labels [--data potentials/data/water_qtip4pf_clean.npz]
        [--out /tmp/water_dplr_sr_labels.npz] [--beta 0.4] [--check]

Long-range term (the DPLR decomposition of q-TIP4P/F, docs/dplr.md): periodic Gaussian
charges with pair kernel erf(beta r)/r (potentials/dplr/ewald.py, all pairs including the
intramolecular ones, self energy removed) of O (0), H (+0.5564 e) and the M site

    r_M = gamma r_O + (1 - gamma)/2 (r_H1 + r_H2),  gamma = 0.73612,  q_M = -1.1128 e,

the exact Wannier centroid that the DW model (potentials/models/water_dw.pt) learned.
Its forces on the atoms include the M-site chain rule: O gets F_O + gamma F_M, each of
its H F_H + (1 - gamma)/2 F_M. Molecules: each O and the two H within 1.2 A of it on the
periodic graph (potentials/dw/train.py:msite_displacement; checked on every frame).

The output has the layout of the input data set (same positions, cells, split keys) with
energies and forces replaced by E_teacher - E_LR and F_teacher - F_LR, plus ``e_lr``
[frames] and ``f_lr`` [atoms, 3]. --check compares the LR forces of one frame with
central finite differences of the LR energy (displacing O and H atoms, M site moving
with them) and exits non-zero if they differ by more than 1e-6 relative.
"""

import argparse
import os
import sys

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from potentials.common.graph import build_graph  # noqa: E402
from potentials.dplr.ewald import QQRD2E_METAL, gaussian_ewald  # noqa: E402

GAMMA = 0.73612
Q_H = 0.5564
Q_M = -2.0 * Q_H
BETA = 0.4  # 1/A: kspace_modify gewald of examples/dplr_water/in.dplr, metadata dplr_beta
OH_BOND_MAX = 1.2
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.path.dirname(HERE), "data", "water_qtip4pf_clean.npz")


def molecules(positions, types, cell):
    """(o [n_mol], h1 [n_mol], h2 [n_mol], v1 [n_mol, 3], v2 [n_mol, 3]): atom indices of
    each molecule and the minimum-image O->H vectors, from the O-H edges < 1.2 A. Types:
    0 = O, 1 = H. Raises ValueError unless every O has two H and every H one O."""
    g = build_graph(positions, cell, OH_BOND_MAX)
    i, j = g["edge_index"]
    keep = (types[i] == 0) & (types[j] == 1)
    i, j, vec = i[keep], j[keep], g["edge_vec"][keep]
    o_atoms = np.nonzero(types == 0)[0]
    count_o = np.bincount(i, minlength=len(types))
    count_h = np.bincount(j, minlength=len(types))
    bad = o_atoms[count_o[o_atoms] != 2]
    if len(bad):
        raise ValueError("O atom %d has %d H within %.1f A (expected 2)"
                         % (bad[0], count_o[bad[0]], OH_BOND_MAX))
    h_atoms = np.nonzero(types == 1)[0]
    bad = h_atoms[count_h[h_atoms] != 1]
    if len(bad):
        raise ValueError("H atom %d has %d O within %.1f A (expected 1)"
                         % (bad[0], count_h[bad[0]], OH_BOND_MAX))
    order = np.argsort(i, kind="stable")  # edges are sorted by centre already
    i, j, vec = i[order], j[order], vec[order]
    return i[0::2], j[0::2], j[1::2], vec[0::2], vec[1::2]


def msite_positions(positions, types, cell, gamma=GAMMA):
    """M site of every molecule (at the minimum image of its O) and molecules()."""
    mol = molecules(positions, types, cell)
    o, _, _, v1, v2 = mol
    return positions[o] + 0.5 * (1.0 - gamma) * (v1 + v2), mol


def long_range(positions, types, cell, beta=BETA, gamma=GAMMA, qqrd2e=QQRD2E_METAL):
    """(E_LR eV, F_LR [n, 3] eV/A on the O and H atoms, virial [3, 3]) of one frame."""
    x = np.asarray(positions, dtype=float)
    m, (o, h1, h2, v1, v2) = msite_positions(x, types, cell, gamma)
    q = np.where(types == 1, Q_H, 0.0)
    e, f, w = gaussian_ewald(np.concatenate([x, m]), np.concatenate([q, np.full(len(m), Q_M)]),
                             cell, beta, qqrd2e)
    n = len(x)
    forces = f[:n].copy()
    fm = f[n:]
    np.add.at(forces, o, gamma * fm)
    np.add.at(forces, h1, 0.5 * (1.0 - gamma) * fm)
    np.add.at(forces, h2, 0.5 * (1.0 - gamma) * fm)
    # w: virial of the charges at (ions, M sites); not used for the labels
    return e, forces, w


def finite_difference_check(positions, types, cell, beta=BETA, h=1e-4, atoms=(0, 1, 2, 5),
                            rtol=1e-6):
    """Max relative |F - F_fd| / max|F| over the chosen atoms and the 3 directions."""
    _, f, _ = long_range(positions, types, cell, beta)
    worst = 0.0
    scale = np.max(np.abs(f))
    for a in atoms:
        for d in range(3):
            xp = positions.copy()
            xp[a, d] += h
            xm = positions.copy()
            xm[a, d] -= h
            fd = -(long_range(xp, types, cell, beta)[0] - long_range(xm, types, cell, beta)[0]) / (2 * h)
            worst = max(worst, abs(fd - f[a, d]) / scale)
    return worst


def make_labels(data=DATA, out=None, beta=BETA):
    with np.load(data) as npz:
        d = {k: npz[k] for k in npz.files}
    n_frames = len(d["n_atoms"])
    e_lr = np.zeros(n_frames)
    f_lr = np.zeros_like(d["forces"])
    for k in range(n_frames):
        a, n = int(d["offsets"][k]), int(d["n_atoms"][k])
        types = d["types"][a:a + n].astype(np.int64)
        e_lr[k], f_lr[a:a + n], _ = long_range(d["positions"][a:a + n], types, d["cells"][k], beta)
    d["e_lr"] = e_lr
    d["f_lr"] = f_lr
    d["energies"] = d["energies"] - e_lr
    d["forces"] = d["forces"] - f_lr
    d["info"] = np.array(str(d.get("info", "")) + " | DPLR SR labels (potentials/dplr/labels.py):"
                         " teacher - Gaussian electrostatics of O 0, H +0.5564, M -1.1128,"
                         " beta %.6g 1/A, gamma %.5f" % (beta, GAMMA))
    if out:
        np.savez_compressed(out, **d)
    return d


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=DATA)
    parser.add_argument("--out", default="/tmp/water_dplr_sr_labels.npz")
    parser.add_argument("--beta", type=float, default=BETA)
    parser.add_argument("--check", action="store_true", help="finite-difference check only")
    args = parser.parse_args(argv)
    if args.check:
        with np.load(args.data) as npz:
            n = int(npz["n_atoms"][0])
            x, t, c = npz["positions"][:n], npz["types"][:n].astype(np.int64), npz["cells"][0]
        err = finite_difference_check(x, t, c, args.beta)
        print("LR forces vs finite differences: max relative error %.2e" % err)
        return 0 if err < 1e-6 else 1
    d = make_labels(args.data, args.out, args.beta)
    f_t = d["forces"] + d["f_lr"]
    print("wrote %s: %d frames; E_LR %.3f +- %.3f eV/frame; RMS F: teacher %.1f, LR %.1f, "
          "SR %.1f meV/A" % (args.out, len(d["e_lr"]), d["e_lr"].mean(), d["e_lr"].std(),
                              1e3 * np.sqrt(np.mean(f_t ** 2)), 1e3 * np.sqrt(np.mean(d["f_lr"] ** 2)),
                              1e3 * np.sqrt(np.mean(d["forces"] ** 2))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
