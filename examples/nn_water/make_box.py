"""Write a random liquid-water box as a LAMMPS data file (atom_style atomic, type 1 = O,
type 2 = H) for pair_style aisci, from potentials/data/water_box.py.

    /usr/bin/python3 make_box.py [n_molecules=64] [density=1.0] [out=water.data]
"""
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, ROOT)
from potentials.data.water_box import make_water_box  # noqa: E402

n_mol = int(sys.argv[1]) if len(sys.argv) > 1 else 64
density = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
out = sys.argv[3] if len(sys.argv) > 3 else "water.data"
box = make_water_box(n_mol, density, seed=2026)
x, t, L = box["positions"], box["types"], box["box"]
with open(out, "w") as f:
    f.write("%d water molecules at %g g/cm^3 (examples/nn_water/make_box.py)\n\n" % (n_mol, density))
    f.write("%d atoms\n2 atom types\n\n" % len(x))
    f.write("0 %.10f xlo xhi\n0 %.10f ylo yhi\n0 %.10f zlo zhi\n\n" % tuple(L))
    f.write("Masses\n\n1 15.9994\n2 1.008\n\nAtoms # atomic\n\n")
    for k in range(len(x)):
        f.write("%d %d %.10f %.10f %.10f\n" % (k + 1, t[k], *x[k]))
print("wrote %s: %d atoms, box %.4f A" % (out, len(x), L[0]))
