"""NVE energy conservation of the full DPLR model (short range water_matris.pt, DW model
water_dw.pt, Gaussian charges by pppm/dplr with the solve overlapped): 32 water
molecules at 300 K, 200 steps of 0.25 fs. The total energy (pe includes E_sr, E_gauss
and nothing else; WCs carry no kinetic energy) must stay within a small fraction of the
kinetic-energy swings; the same run without the DW Jacobian term (fix dplr ... jacobian
no: forces that are not -dE/dx) must fail that bound, so the test can fail."""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aisci_nn_toy as toy  # noqa: E402
import aisci_testlib as T  # noqa: E402
import dplr_systems as S  # noqa: E402

toy.skip_without_torch_wrapper()

BOX = S.make_dplr_water_box(32, seed=3)
DATA = {"water.data": S.water_data(BOX)}
N_REAL = 96
BODY = """group real type 1 2
velocity real create 300.0 4928 mom yes rot no dist gaussian
compute treal real temp
fix nve real nve
timestep 0.00025
thermo_style custom step temp pe ke etotal
thermo_modify format float %.12g temp treal
thermo 5
run 200
"""

result = {}
for jac in ("yes", "no"):
    r = T.run_lammps(S.water_script(accuracy="1e-5", fix_extra="jacobian " + jac, body=BODY),
                     files=DATA, timeout=600)
    if not T.check(r.rc == 0, "NVE run (jacobian %s) failed:\n%s" % (jac, r.output[-1500:])):
        continue
    t = r.thermo()
    etot = np.array(t["TotEng"])
    ke = np.array(t["KinEng"])
    drift = abs(etot[-1] - etot[0]) / N_REAL * 1000.0
    spread = (etot.max() - etot.min()) / N_REAL * 1000.0
    ke_span = (ke.max() - ke.min()) / N_REAL * 1000.0
    result[jac] = (drift, spread, ke_span)
    print("jacobian %s: 50 fs NVE, total energy drift %.4f meV/atom, spread %.4f meV/atom, "
          "kinetic energy swings %.1f meV/atom, T %.0f..%.0f K"
          % (jac, drift, spread, ke_span, min(t["Temp"]), max(t["Temp"])))
    T.check("WARNING: fix dplr" not in r.output, "no fix dplr warning (WCs not integrated)")

# Bound: 2% of the kinetic-energy swings and 0.3 meV/atom.
BOUND_FRACTION, BOUND_ABS = 0.02, 0.3
if "yes" in result:
    drift, spread, ke_span = result["yes"]
    T.check(spread < BOUND_FRACTION * ke_span and spread < BOUND_ABS,
            "DPLR NVE conserves energy: spread %.4f meV/atom (kinetic swings %.1f)"
            % (spread, ke_span))
if "no" in result:
    drift, spread, ke_span = result["no"]
    T.check(not (spread < BOUND_FRACTION * ke_span and spread < BOUND_ABS),
            "without the Jacobian term the bound must fail: spread %.4f meV/atom" % spread)

T.summary("test_dplr_nve")
