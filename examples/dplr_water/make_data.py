#!/usr/bin/python3
"""Data files of the DPLR water example (run with /usr/bin/python3, from any folder).

    make_data.py teacher OUT.data [--molecules 128] [--density 0.997] [--seed 2021]
        random water box for the q-TIP4P/F teacher (potentials/data/water_box.py), and
        next to it teacher_ff.lmp: the teacher's force field, the FORCE_FIELD block of
        potentials/data/generate_water.py that made the training data
    make_data.py dplr START.dump OUT.data
        the teacher's final configuration (write_dump ... id type x y z, O H H per
        molecule in ID order) with one WC atom per molecule (potentials/dplr/water_wc.py:
        types 1 O, 2 H, 3 WC; bond types 1 O-H, 2 O-WC), for in.dplr
"""
import argparse
import os
import sys

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, ROOT)
from potentials.data.generate_water import FORCE_FIELD, QDIST, read_dump  # noqa: E402
from potentials.data.water_box import Q_H, make_water_box, write_lammps_data  # noqa: E402
from potentials.dplr.water_wc import add_wannier_centroids  # noqa: E402


def teacher(args):
    write_lammps_data(args.output, make_water_box(args.molecules, args.density, args.seed),
                      title="DPLR water example: q-TIP4P/F teacher start")
    ff = os.path.join(os.path.dirname(os.path.abspath(args.output)), "teacher_ff.lmp")
    with open(ff, "w") as f:
        f.write("# q-TIP4P/F as in potentials/data/generate_water.py (FORCE_FIELD)\n")
        f.write(FORCE_FIELD.format(qdist=QDIST))


def dplr(args):
    step, bounds, data = read_dump(args.dump)[-1]
    types = data[:, 1].astype(int)
    n = len(types)
    if n % 3 or not (np.all(types[0::3] == 1) and np.all(types[1::3] == 2)
                     and np.all(types[2::3] == 2)):
        sys.exit("make_data.py: %s is not O H H per molecule in ID order" % args.dump)
    if np.any(np.abs(bounds[:, 0]) > 1e-9):
        sys.exit("make_data.py: %s: the box must start at the origin" % args.dump)
    box = {
        "positions": data[:, 2:5],
        "types": types,
        "molecule": np.repeat(np.arange(1, n // 3 + 1), 3),
        "charges": np.tile([-2.0 * Q_H, Q_H, Q_H], n // 3),
        "box": bounds[:, 1] - bounds[:, 0],
        "bonds": np.zeros((0, 2), dtype=int),
        "angles": np.zeros((0, 3), dtype=int),
    }
    write_lammps_data(args.output, add_wannier_centroids(box),
                      title="DPLR water example: teacher step %d with WC atoms" % step)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    t = sub.add_parser("teacher")
    t.add_argument("output")
    t.add_argument("--molecules", type=int, default=128)
    t.add_argument("--density", type=float, default=0.997)
    t.add_argument("--seed", type=int, default=2021)
    d = sub.add_parser("dplr")
    d.add_argument("dump")
    d.add_argument("output")
    args = ap.parse_args()
    (teacher if args.what == "teacher" else dplr)(args)


if __name__ == "__main__":
    main()
