"""DPLR under MPI and with the overlap thread: 64 water molecules with WCs, a toy
one-layer short-range model (tests/lammps/aisci_nn_toy.py, cheap on ghost atoms), the
DW model water_dw.pt and pppm/dplr; 20 NVE steps. Positions, forces, energies and the
pressure after the run agree to rounding between
- 1, 2 and 4 ranks, overlap yes and overlap no;
- newton_bond on (the O-WC bond stored with one atom) and off (stored with both), and
  with the bonds listed WC first in the data file;
and the log reports the overlap state."""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aisci_nn_toy as toy  # noqa: E402
import aisci_testlib as T  # noqa: E402
import dplr_systems as S  # noqa: E402

toy.skip_without_torch_wrapper()

workdir = toy.build_dir("dplr_parallel")
SR_TOY = toy.save(toy.ToyMP(ntypes=2, num_layers=1, cutoff=3.0, seed=11),
                  os.path.join(workdir, "toy_sr.pt"), override={"dplr_beta": "0.4"})
BOX = S.make_dplr_water_box(64, seed=5)
DATA = S.water_data(BOX)
# the same file with every bond written WC/H first (bond stored with the other atom)
lines = DATA.splitlines()
start = lines.index("Bonds") + 2
for k in range(start, len(lines)):
    w = lines[k].split()
    if len(w) != 4:
        break
    lines[k] = "%s %s %s %s" % (w[0], w[1], w[3], w[2])
DATA_SWAPPED = "\n".join(lines) + "\n"

BODY = """group real type 1 2
velocity real create 300.0 991 mom yes rot no dist gaussian loop geom
fix nve real nve
timestep 0.0005
thermo 10
run 20
write_dump all custom final.dump id x y z fx fy fz modify sort id format float %.17g
"""


def run(nprocs, overlap, newton="on", data=DATA):
    script = S.water_script(sr=SR_TOY, overlap=overlap, accuracy="1e-5", body=BODY,
                            pre="newton %s" % newton)
    r = T.run_lammps(script, nprocs=nprocs, files={"water.data": data}, timeout=300)
    what = "%d ranks overlap %s newton %s%s" % (nprocs, overlap, newton,
                                                " swapped" if data is not DATA else "")
    if not T.check(r.rc == 0, "%s failed:\n%s" % (what, r.output[-1500:])):
        return None
    T.check(("overlap = %s" % overlap) in r.logs[0], "%s: log states overlap = %s" % (what,
                                                                                   overlap))
    d = toy.read_dump(os.path.join(r.workdir, "final.dump"))
    t = r.thermo()
    return (what, np.stack([d["x"], d["y"], d["z"]], 1), np.stack([d["fx"], d["fy"], d["fz"]], 1),
            np.array([t["PotEng"][-1], t["E_long"][-1]] +
                     [t["c_pv[%d]" % k][-1] for k in range(1, 7)]))


ref = run(1, "no")
cases = [(1, "yes", "on", DATA), (2, "yes", "on", DATA), (2, "no", "on", DATA),
         (4, "yes", "on", DATA), (4, "no", "on", DATA), (2, "yes", "on off", DATA),
         (1, "yes", "on", DATA_SWAPPED), (2, "yes", "on off", DATA_SWAPPED)]
for nprocs, overlap, newton, data in cases:
    res = run(nprocs, overlap, newton, data)
    if ref is None or res is None:
        continue
    what, x, f, e = res
    dx = np.abs(x - ref[1]).max()
    df = np.abs(f - ref[2]).max() / np.abs(ref[2]).max()
    de = np.abs(e - ref[3]).max() / np.abs(ref[3]).max()
    print("%s: positions to %.1e A, forces to %.1e, energies/pressure to %.1e of 1 rank "
          "overlap no" % (what, dx, df, de))
    T.check(dx < 1e-9 and df < 1e-8 and de < 1e-9,
            "%s: dx %.2e, df %.2e, de %.2e" % (what, dx, df, de))

T.summary("test_dplr_parallel")
