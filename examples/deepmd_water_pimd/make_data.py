"""LAMMPS data file of one frame of DeePMD-kit's DFT water data (water-dft/data_3:
64 H2O, cubic 12.44 A box), atoms wrapped into the box; types 1 = O, 2 = H.
Usage: /usr/bin/python3 make_data.py DEEPMD_DIR [frame] [output]"""
import os
import sys

import numpy as np

shared = sys.argv[1]
frame = int(sys.argv[2]) if len(sys.argv) > 2 else 0
out = sys.argv[3] if len(sys.argv) > 3 else "water192.data"
base = os.path.join(shared, "water-dft", "data_3")
x = np.load(os.path.join(base, "set.000", "coord.npy"))[frame].reshape(-1, 3).astype(float)
box = np.load(os.path.join(base, "set.000", "box.npy"))[frame].reshape(3, 3).astype(float)
types = np.loadtxt(os.path.join(base, "type.raw"), dtype=int) + 1
L = box[0, 0]
assert np.allclose(box, np.diag([L, L, L])), "expected a cubic box"
x = np.mod(x, L)
with open(out, "w") as f:
    f.write("DeePMD-kit water-dft/data_3 frame %d (examples/deepmd_water_pimd)\n\n" % frame)
    f.write("%d atoms\n2 atom types\n\n" % len(x))
    for d in "xyz":
        f.write("0 %.10f %slo %shi\n" % (L, d, d))
    f.write("\nMasses\n\n1 15.9994\n2 1.00794\n\nAtoms # atomic\n\n")
    for i, (p, t) in enumerate(zip(x, types)):
        f.write("%d %d %.10f %.10f %.10f\n" % (i + 1, t, p[0], p[1], p[2]))
print("wrote %s: %d atoms, box %.4f A" % (out, len(x), L))
