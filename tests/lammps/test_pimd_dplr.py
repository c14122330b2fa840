"""fix pimd/langevin with a fix that acts in pre_force (fix dplr places the Wannier
centroids before the forces): P = 2 beads held by one process (beads_per_world 2) must
give the same ring polymer as the same input on two partitions (-partition 2x1), to
1e-12 relative over 10 steps, for every estimator (f_pimd[4] .. f_pimd[10]) on every
step (thermo 1). Before the fix ran pre_force fixes for its extra beads, the second bead
saw the first bead's Wannier centroids and the total energy differed in the 4th digit.
DPLR water: 16 molecules, short-range model water_matris.pt, DW model water_dw.pt,
pppm/dplr (tests/lammps/dplr_systems.py). Exit 77 (skipped) without the torch wrapper."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aisci_testlib as T  # noqa: E402

base = os.environ.get("AISCI_BUILD_DIR", os.getcwd())
if not os.path.exists(os.path.join(base, "lib", "libaisci_torch.so")):
    print("SKIPPED: %s/lib/libaisci_torch.so not built (AISCI_ENABLE_TORCH=OFF?)" % base)
    sys.exit(77)
try:
    import dplr_systems as S  # noqa: E402  (needs numpy and torch)
except ImportError as e:
    print("SKIPPED: %s" % e)
    sys.exit(77)

BOX = S.make_dplr_water_box(16, seed=3)
DATA = {"water.data": S.water_data(BOX)}
COLS = " ".join("f_pimd[%d]" % i for i in range(1, 11))


def script(k):
    body = """fix pimd all pimd/langevin temp 300 thermostat PILE_L 71 tau 0.05 beads_per_world %d
timestep 0.00025
thermo_style custom step pe %s
thermo_modify format float %%.17g
thermo 1
run 10
""" % (k, COLS)
    return S.water_script(accuracy="1e-5", body=body, pre="atom_modify map yes")


runs = {}
for name, k, nprocs, parts in (("2x1 partitions", 1, 2, "2x1"), ("beads_per_world 2", 2, 1, None)):
    r = T.run_lammps(script(k), nprocs=nprocs, partitions=parts, files=DATA, timeout=600)
    if T.check(r.rc == 0 and "TIMEOUT" not in r.output, "%s failed:\n%s" % (name, r.output[-1500:])):
        runs[name] = r.thermo(0)

if len(runs) == 2:
    a, b = runs["2x1 partitions"], runs["beads_per_world 2"]
    T.check(a["Step"] == b["Step"] and len(a["Step"]) == 11, "steps %s / %s" % (a["Step"], b["Step"]))
    worst = (0.0, "")
    for c in range(4, 11):
        col = "f_pimd[%d]" % c
        for s, x, y in zip(a["Step"], a[col], b[col]):
            d = abs(x - y) / max(abs(x), 1e-30)
            if d > worst[0]:
                worst = (d, "%s step %d: %.17g vs %.17g" % (col, s, x, y))
    print("largest relative difference between the layouts: %.3g (%s)" % worst)
    T.check(worst[0] < 1e-12, "beads_per_world 2 differs from -partition 2x1: %.3g (%s)" % worst)
    # the energy changed over the run (the test compares dynamics, not a frozen state)
    T.check(a["f_pimd[4]"][0] != a["f_pimd[4]"][-1], "the ring polymer moved")

T.summary("test_pimd_dplr")
