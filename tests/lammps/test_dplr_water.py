"""fix dplr + kspace_style pppm/dplr on a small DPLR water box (32 molecules, one WC atom
per molecule; short-range model water_matris.pt as a stand-in for the DPLR one, the DW
model water_dw.pt):
- step 0 (no step taken): WCs where the DW model evaluated in Python puts them, and
  pe = E_sr (the model in Python) + E_gauss (potentials/dplr/ewald.py at those WCs);
- real units give the metal numbers times the unit factors;
- forces = -dE/dx by central differences of the total energy (short range, Gaussian
  electrostatics, DW Jacobian, uniform field), and the virial = -dE/d(strain) for all
  six strains of a triclinic cell; both fail without the Jacobian term (jacobian no);
- the field energy f_dplr = -sum q E . x_unwrapped over ions and WCs."""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aisci_nn_toy as toy  # noqa: E402
import aisci_testlib as T  # noqa: E402
import dplr_systems as S  # noqa: E402
from potentials.dplr.water_wc import TYPE_WC, dplr_reference  # noqa: E402

toy.skip_without_torch_wrapper()

BOX = S.make_dplr_water_box(32, seed=3)
DATA = {"water.data": S.water_data(BOX)}
EFIELD = (0.02, -0.015, 0.03)    # V/Angstrom
DUMP = """dump d all custom 1 d.dump id type q x y z xu yu zu fx fy fz
dump_modify d sort id format float %.17g
"""

# --- step 0 against the Python reference ---------------------------------------------------
ref = dplr_reference(BOX, S.DW, S.BETA, sr_path=S.SR)
res = {}
for units in ("metal", "real"):
    r = T.run_lammps(S.water_script(units=units, accuracy="1e-6", body=DUMP + "run 0"),
                     files=DATA)
    if not T.check(r.rc == 0, "%s step 0 run failed:\n%s" % (units, r.output[-1500:])):
        continue
    t = {k: v[0] for k, v in r.thermo().items()}
    d = toy.read_dump(os.path.join(r.workdir, "d.dump"))
    res[units] = (t, d)
if "metal" in res:
    t, d = res["metal"]
    wc = np.stack([d["x"], d["y"], d["z"]], 1)[d["type"] == TYPE_WC]
    dwc = wc - ref["wc"]
    dwc -= BOX["box"] * np.round(dwc / BOX["box"])
    q2 = float(np.sum(np.asarray(BOX["charges"]) ** 2))
    e_err = abs(t["E_long"] - ref["e_elec"])
    print("step 0: WCs at the Python DW positions to %.1e A; E_sr %.10f vs %.10f eV; E_long "
          "%.8f vs ewald.py %.8f eV (diff %.1e); pe %.8f vs %.8f"
          % (np.abs(dwc).max(), t["E_vdwl"], ref["e_sr"], t["E_long"], ref["e_elec"], e_err,
             t["PotEng"], ref["e_sr"] + ref["e_elec"]))
    T.check(np.abs(dwc).max() < 1e-9, "WC positions at step 0: %.2e A" % np.abs(dwc).max())
    T.check(abs(t["E_vdwl"] - ref["e_sr"]) < 1e-9 * abs(ref["e_sr"]), "E_sr at step 0")
    T.check(e_err < 1e-6 * S.QQRD2E["metal"] * q2, "E_long at step 0 vs ewald.py: %.2e" % e_err)
    T.check(abs(t["PotEng"] - ref["e_sr"] - ref["e_elec"]) < 1e-6 * S.QQRD2E["metal"] * q2,
            "pe at step 0 = E_sr + E_gauss")
    T.check(t["f_dplr"] == 0.0, "no field: f_dplr = 0")
if "metal" in res and "real" in res:
    (tm, dm), (tr, dr) = res["metal"], res["real"]
    fm = np.stack([dm["fx"], dm["fy"], dm["fz"]], 1)
    fr = np.stack([dr["fx"], dr["fy"], dr["fz"]], 1)
    ratio_e = tr["PotEng"] / tm["PotEng"]
    df = np.abs(fr / toy.EV_TO_KCAL_MOL - fm).max() / np.abs(fm).max()
    print("real / metal: pe ratio %.8f (eV -> kcal/mol %.8f), forces to %.1e" % (
        ratio_e, toy.EV_TO_KCAL_MOL, df))
    T.check(abs(ratio_e / toy.EV_TO_KCAL_MOL - 1) < 1e-5, "real pe = metal pe x 23.0605")
    T.check(df < 1e-5, "real forces = metal forces x 23.0605: %.2e" % df)

# --- forces against central differences of the total energy (with a field) ------------------
H = 1e-4
ATOMS = (1, 3, 9, 14)    # O, H, O, H (atom IDs; WCs are not degrees of freedom)
field = "efield %g %g %g" % EFIELD


def fd_body():
    lines = [DUMP, "run 0", "undump d", "variable e equal pe"]
    for k, aid in enumerate(ATOMS):
        lines.append("group g%d id %d" % (k, aid))
        for c, vec in enumerate(("%g 0 0", "0 %g 0", "0 0 %g")):
            lines += ["displace_atoms g%d move %s" % (k, vec % H), "run 0",
                      'print "EPLUS %d %d ${e}"' % (aid, c),
                      "displace_atoms g%d move %s" % (k, vec % (-2 * H)), "run 0",
                      'print "EMINUS %d %d ${e}"' % (aid, c),
                      "displace_atoms g%d move %s" % (k, vec % H)]
    return "\n".join(lines)


r = T.run_lammps(S.water_script(accuracy="1e-7", fix_extra=field, body=fd_body()), files=DATA,
                 timeout=600)
if T.check(r.rc == 0, "finite-difference run failed:\n" + r.output[-1500:]):
    d = toy.read_dump(os.path.join(r.workdir, "d.dump"))
    f = np.stack([d["fx"], d["fy"], d["fz"]], 1)
    plus = {(int(a), int(c)): e for a, c, e in S.printed(r.logs[0], "EPLUS")}
    minus = {(int(a), int(c)): e for a, c, e in S.printed(r.logs[0], "EMINUS")}
    err = []
    for (aid, c), ep in plus.items():
        fd = -(ep - minus[(aid, c)]) / (2 * H)
        err.append(abs(fd - f[aid - 1, c]))
    err = np.array(err)
    fscale = np.abs(f[[a - 1 for a in ATOMS]]).max()
    print("forces vs central differences (h = %g A, %d components, field on): max error "
          "%.1e eV/A (largest force component %.2f)" % (H, len(err), err.max(), fscale))
    T.check(len(err) == 3 * len(ATOMS), "all finite differences printed")
    T.check(err.max() < 2e-5, "forces = -dE/dx: max error %.2e eV/A" % err.max())
    # field energy: -sum q E . x_unwrapped (ions and WCs)
    xu = np.stack([d["xu"], d["yu"], d["zu"]], 1)
    e_field = -np.sum(d["q"] * (xu @ np.array(EFIELD)))
    t0 = {k: v[0] for k, v in r.thermo().items()}
    T.check(abs(t0["f_dplr"] - e_field) < 1e-10 * max(1.0, abs(e_field)),
            "f_dplr %.12f = -sum q E . x_u %.12f" % (t0["f_dplr"], e_field))
    T.check(abs(t0["PotEng"] - t0["E_vdwl"] - t0["E_long"] - t0["f_dplr"]) < 1e-9,
            "pe includes the field energy (fix_modify energy yes)")

    # without the Jacobian term the same differences disagree
    r2 = T.run_lammps(S.water_script(accuracy="1e-7", fix_extra=field + " jacobian no",
                                     body=DUMP + "run 0"), files=DATA)
    if T.check(r2.rc == 0, "jacobian no run failed:\n" + r2.output[-1500:]):
        d2 = toy.read_dump(os.path.join(r2.workdir, "d.dump"))
        f2 = np.stack([d2["fx"], d2["fy"], d2["fz"]], 1)
        err2 = max(abs(-(ep - minus[(a, c)]) / (2 * H) - f2[a - 1, c]) for (a, c), ep in
                   plus.items())
        print("without the Jacobian term: max error %.3f eV/A" % err2)
        T.check(err2 > 1e-2, "jacobian no fails the force check (%.3g eV/A)" % err2)

# --- virial against strain derivatives of a triclinic cell ----------------------------------
HS = 1e-5
STRAINS = [("xx", "x scale %.17g" % (1 + HS), "x scale %.17g" % ((1 - HS) / (1 + HS)),
            "x scale %.17g" % (1 / (1 - HS)), 1),
           ("yy", "y scale %.17g" % (1 + HS), "y scale %.17g" % ((1 - HS) / (1 + HS)),
            "y scale %.17g" % (1 / (1 - HS)), 2),
           ("zz", "z scale %.17g" % (1 + HS), "z scale %.17g" % ((1 - HS) / (1 + HS)),
            "z scale %.17g" % (1 / (1 - HS)), 3)]
for name, num, axis in (("xy", 4, "ly"), ("xz", 5, "lz"), ("yz", 6, "lz")):
    # x_a += eps x_b: tilt a-b grows by eps times the length along b
    STRAINS.append((name, "%s delta $(%g*%s)" % (name, HS, axis),
                    "%s delta $(%g*%s)" % (name, -2 * HS, axis),
                    "%s delta $(%g*%s)" % (name, HS, axis), num))


def strain_body():
    lines = ["change_box all triclinic", "run 0", "variable e equal pe"]
    for name, up, down, back, _ in STRAINS:
        lines += ["change_box all %s remap" % up, "run 0", 'print "SPLUS %d ${e}"' % _,
                  "change_box all %s remap" % down, "run 0", 'print "SMINUS %d ${e}"' % _,
                  "change_box all %s remap" % back]
    return "\n".join(lines)


for jac in ("yes", "no"):
    r = T.run_lammps(S.water_script(accuracy="1e-7", fix_extra=field + " jacobian " + jac,
                                    body=strain_body()), files=DATA, timeout=600)
    if not T.check(r.rc == 0, "strain run failed:\n" + r.output[-1500:]):
        continue
    t0 = {k: v[0] for k, v in r.thermo().items()}
    w = np.array([t0["c_pv[%d]" % k] for k in range(1, 7)]) * t0["Volume"] / toy.NKTV2P["metal"]
    plus = {int(k): e for k, e in S.printed(r.logs[0], "SPLUS")}
    minus = {int(k): e for k, e in S.printed(r.logs[0], "SMINUS")}
    fd = np.array([-(plus[k] - minus[k]) / (2 * HS) for k in range(1, 7)])
    err = np.abs(w - fd).max()
    print("jacobian %s: virial %s eV vs strain derivatives %s: max error %.1e eV"
          % (jac, np.array2string(w, precision=5), np.array2string(fd, precision=5), err))
    if jac == "yes":
        T.check(err < 1e-5 * max(1.0, np.abs(fd).max()), "virial = -dE/d(strain): %.2e" % err)
    else:
        T.check(err > 1e-2, "jacobian no fails the virial check (%.3g eV)" % err)

T.summary("test_dplr_water")
