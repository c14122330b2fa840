"""DPLR water from one frame of DeePMD-kit npy data: a LAMMPS data file (atom_style full)
with one Wannier-centroid (WC) atom per molecule, for fix dplr with the DFT DPLR models
(potentials/models/water_dplr_dft_{sr,dw}.pt: charges O +6, H +1, WC -8).

    /usr/bin/python3 -m potentials.dplr.deepmd_frame OUT.data \\
        [--data ../shared/deepmd-kit/water-dft/data_3] [--frame 0] [--charges 6 1 -8]

Molecules: each O with its two nearest H (minimum image; an H claimed by two O is an
error). Layout as potentials/dplr/water_wc.py: atoms O, H, H, WC per molecule, types 1 =
O, 2 = H, 3 = WC, bond types 1 = O-H, 2 = O-WC (fix dplr ... bond_type 2), the WC at the
M site (fix dplr moves it to the DW model's prediction at step 0)."""
import argparse
import os
import sys

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from potentials.data.water_box import write_lammps_data  # noqa: E402
from potentials.dplr.water_wc import add_wannier_centroids  # noqa: E402

DEFAULT_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                            "shared", "deepmd-kit", "water-dft", "data_3")


def molecules_from_frame(data_dir, frame=0):
    """(positions in O, H, H order per molecule, cubic box length) of a DeePMD frame."""
    types = np.loadtxt(os.path.join(data_dir, "type.raw"), dtype=int)
    tmap = open(os.path.join(data_dir, "type_map.raw")).read().split()
    coord = np.load(os.path.join(data_dir, "set.000", "coord.npy"))[frame].reshape(-1, 3)
    box = np.load(os.path.join(data_dir, "set.000", "box.npy"))[frame].reshape(3, 3)
    length = np.diag(box).astype(float)
    if not np.allclose(box, np.diag(length)):
        raise SystemExit("deepmd_frame: %s frame %d has a non-orthogonal box" % (data_dir, frame))
    o_idx = np.where(types == tmap.index("O"))[0]
    h_idx = np.where(types == tmap.index("H"))[0]
    if len(h_idx) != 2 * len(o_idx):
        raise SystemExit("deepmd_frame: %d O and %d H are not water" % (len(o_idx), len(h_idx)))
    x = coord.astype(float)
    d = x[h_idx][None, :, :] - x[o_idx][:, None, :]
    d -= length * np.round(d / length)
    r = np.linalg.norm(d, axis=2)
    nearest = np.argsort(r, axis=1)[:, :2]
    if len(np.unique(nearest)) != len(h_idx):
        raise SystemExit("deepmd_frame: the two nearest H of each O do not give every H one O")
    pos = np.zeros((3 * len(o_idx), 3))
    for m, o in enumerate(o_idx):
        pos[3 * m] = np.mod(x[o], length)
        for k in range(2):
            pos[3 * m + 1 + k] = pos[3 * m] + d[m, nearest[m, k]]
    return pos, length, float(r[np.arange(len(o_idx))[:, None], nearest].max())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--data", default=DEFAULT_DATA, help="a DeePMD system folder")
    ap.add_argument("--frame", type=int, default=0)
    ap.add_argument("--charges", type=float, nargs=3, default=[6.0, 1.0, -8.0],
                    metavar=("O", "H", "WC"))
    a = ap.parse_args()
    pos, length, rmax = molecules_from_frame(a.data, a.frame)
    n = len(pos) // 3
    water = add_wannier_centroids({"positions": pos, "box": length})
    water["charges"] = np.tile([a.charges[0], a.charges[1], a.charges[1], a.charges[2]], n)
    write_lammps_data(a.out, water, title="DPLR water: %s frame %d, %d H2O + %d WCs "
                      "(potentials/dplr/deepmd_frame.py)" % (os.path.basename(os.path.normpath(a.data)),
                                                              a.frame, n, n))
    print("deepmd_frame: wrote %s: %d molecules + %d WCs, box %.4f A, longest O-H %.3f A, "
          "charges O %g H %g WC %g" % (a.out, n, n, length[0], rmax, *a.charges))


if __name__ == "__main__":
    main()
