"""kspace_style pppm/dplr against the independent reference potentials/dplr/ewald.py
(Ewald reciprocal sum of Gaussian charges, no mesh) on fixed random charges:
- forces: RMS error within the requested accuracy (relative to two unit charges at
  1 Angstrom), metal and real units, orthogonal and triclinic cells, a charged cell;
- energy (self and background terms included) and virial within the accuracy bounds of
  docs/pppm_core.md;
- 1 and 4 ranks, overlap yes and no (no fix dplr: the solve then runs in compute) give
  the same numbers;
- the dplr_beta check against the pair_style aisci model and the bad-input errors."""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aisci_nn_toy as toy  # noqa: E402
import aisci_testlib as T  # noqa: E402
import dplr_systems as S  # noqa: E402
from potentials.dplr.ewald import gaussian_ewald  # noqa: E402

N = 120
CELLS = {
    "ortho": np.diag([13.0, 12.0, 14.0]),
    "triclinic": np.array([[13.0, 0.0, 0.0], [2.5, 12.0, 0.0], [-1.5, 3.0, 14.0]]),
}


def script(units, accuracy, extra=""):
    return """units %s
atom_style charge
boundary p p p
read_data charges.data
pair_style zero 3.0
pair_coeff * *
kspace_style pppm/dplr %s
kspace_modify gewald %g
%s
compute pv all pressure NULL virial
thermo_style custom step pe elong c_pv[1] c_pv[2] c_pv[3] c_pv[4] c_pv[5] c_pv[6] vol
thermo_modify format float %%.17g
dump f all custom 1 f.dump id fx fy fz
dump_modify f sort id format float %%.17g
run 0
""" % (units, accuracy, S.BETA, extra)


def run(units, cell, accuracy, net=0.0, nprocs=1, extra=""):
    text, x, q = S.charges_data(N, cell, net)
    r = T.run_lammps(script(units, accuracy, extra), nprocs=nprocs,
                     files={"charges.data": text})
    if not T.check(r.rc == 0, "run failed:\n" + r.output[-1500:]):
        return None
    t = {k: v[-1] for k, v in r.thermo().items()}
    d = toy.read_dump(os.path.join(r.workdir, "f.dump"))
    f = np.stack([d["fx"], d["fy"], d["fz"]], 1)
    p = np.array([t["c_pv[%d]" % k] for k in range(1, 7)])
    w6 = p * t["Volume"] / toy.NKTV2P[units]
    return t, f, w6, x, q, r.logs[0]


for units in ("metal", "real"):
    for name, cell in CELLS.items():
        for accuracy in (1e-4, 1e-5):
            for net in ((0.0, 1.5) if name == "triclinic" and accuracy == 1e-5 else (0.0,)):
                res = run(units, cell, accuracy, net)
                if res is None:
                    continue
                t, f, w6, x, q, log = res
                qqrd2e = S.QQRD2E[units]
                e_ref, f_ref, w_ref = gaussian_ewald(x, q, cell, S.BETA, qqrd2e)
                rms = np.sqrt(np.mean(np.sum((f - f_ref) ** 2, 1)))
                rel = rms / qqrd2e
                q2 = float(np.sum(q * q))
                e_err = abs(t["E_long"] - e_ref) / (qqrd2e * q2)
                w_ref6 = np.array([w_ref[0, 0], w_ref[1, 1], w_ref[2, 2], w_ref[0, 1],
                                   w_ref[0, 2], w_ref[1, 2]])
                w_err = np.abs(w6 - w_ref6).max() / (qqrd2e * q2)
                what = "%s %s accuracy %g net %g" % (units, name, accuracy, net)
                print("%s: force RMS error %.2e (relative), energy %.6f vs %.6f (%.1e per "
                      "qqrd2e sum q^2), virial %.1e" % (what, rel, t["E_long"], e_ref, e_err,
                                                       w_err))
                T.check(rel < accuracy, "%s: force error %.3g above the accuracy" % (what, rel))
                T.check(rel > 1e-3 * accuracy, "%s: force error %.3g suspiciously small"
                        % (what, rel))
                T.check(e_err < accuracy, "%s: energy error %.3g" % (what, e_err))
                T.check(w_err < 5 * accuracy, "%s: virial error %.3g" % (what, w_err))
                T.check(abs(t["E_long"] - t["PotEng"]) < 1e-12 * abs(e_ref),
                        "%s: pe = elong (pair zero)" % what)
                T.check("Gaussian charges: beta = 0.4" in log and "overlap = yes" in log,
                        "%s: log states beta and overlap" % what)

# --- 1 vs 4 ranks, overlap yes vs no -------------------------------------------------------
cell = CELLS["triclinic"]
base = run("metal", cell, 1e-5)
NO = "kspace_style pppm/dplr 1e-5 overlap no\nkspace_modify gewald %g" % S.BETA
for nprocs, extra in ((4, ""), (1, NO), (4, NO)):
    res = run("metal", cell, 1e-5, nprocs=nprocs, extra=extra)
    if base is None or res is None:
        continue
    df = np.abs(res[1] - base[1]).max() / np.abs(base[1]).max()
    de = abs(res[0]["E_long"] - base[0]["E_long"]) / abs(base[0]["E_long"])
    what = "%d ranks, overlap %s" % (nprocs, "no" if extra else "yes")
    print("%s: forces to %.1e, energy to %.1e of 1 rank" % (what, df, de))
    T.check(df < 1e-12 and de < 1e-12, "%s: forces %.2e energy %.2e" % (what, df, de))
    if "overlap no" in extra:
        T.check("overlap = no" in res[5], "log says overlap = no")

# --- dplr_beta of the short-range model ----------------------------------------------------
workdir = toy.build_dir("dplr_pppm")
toy.save(toy.ToyMP(ntypes=1, num_layers=1, cutoff=2.5), os.path.join(workdir, "beta35.pt"),
         type_names=("X",), override={"dplr_beta": "0.35"})
toy.save(toy.ToyMP(ntypes=1, num_layers=1, cutoff=2.5), os.path.join(workdir, "beta40.pt"),
         type_names=("X",), override={"dplr_beta": "0.4"})
toy.save(toy.ToyMP(ntypes=1, num_layers=1, cutoff=2.5), os.path.join(workdir, "betabad.pt"),
         type_names=("X",), override={"dplr_beta": "wide"})
text, _, _ = S.charges_data(N, CELLS["ortho"])


def sr_script(model, kspace="pppm/dplr 1e-4", modify="gewald 0.4"):
    return """units metal
atom_style charge
boundary p p p
read_data charges.data
pair_style aisci threads 1
pair_coeff * * %s X
kspace_style %s
kspace_modify %s
run 0
""" % (model, kspace, modify)


r = T.run_lammps(sr_script(os.path.join(workdir, "beta40.pt")), files={"charges.data": text})
T.check(r.rc == 0 and "dplr_beta metadata" not in r.output,
        "matching dplr_beta runs without warning:\n" + r.output[-800:])

CASES = [
    (sr_script(os.path.join(workdir, "beta35.pt")),
     "ERROR: kspace_style pppm/dplr: kspace_modify gewald 0.4 differs from the dplr_beta = "
     "0.35 of the pair_style aisci model; set kspace_modify gewald 0.35"),
    (sr_script(os.path.join(workdir, "betabad.pt")),
     "ERROR: pair_style aisci: model file '%s' has a malformed dplr_beta metadata value "
     "'wide'" % os.path.join(workdir, "betabad.pt")),
    (sr_script(os.path.join(workdir, "beta40.pt"), modify="order 5"),
     "ERROR: kspace_style pppm/dplr: needs the Gaussian charge parameter beta as "
     "kspace_modify gewald <beta> (1/Angstrom, > 0; the dplr_beta of the short-range model)"),
    (sr_script(os.path.join(workdir, "beta40.pt"), kspace="pppm/dplr 1e-4 overlap maybe"),
     "ERROR: kspace_style pppm/dplr: unknown overlap value 'maybe' (expected one of: yes, no)"),
    (sr_script(os.path.join(workdir, "beta40.pt"), kspace="pppm/dplr 1e-4 solve thread"),
     "ERROR: kspace_style pppm/dplr: unknown keyword 'solve' (expected overlap or layout)"),
    (sr_script(os.path.join(workdir, "beta40.pt"), kspace="pppm/dplr 1e-4 layout nodes"),
     "ERROR: kspace_style pppm/dplr: unknown layout value 'nodes' (expected one of: rank, node)"),
    (sr_script(os.path.join(workdir, "beta40.pt"), kspace="pppm/dplr 1e-4 layout"),
     "ERROR: kspace_style pppm/dplr: keyword layout needs 1 value"),
    (sr_script(os.path.join(workdir, "beta40.pt"), kspace="pppm/dplr 1e-4 overlap"),
     "ERROR: kspace_style pppm/dplr: keyword overlap needs 1 value"),
    (sr_script(os.path.join(workdir, "beta40.pt"), kspace="pppm/dplr"),
     "ERROR: kspace_style pppm/dplr: expected <accuracy> [overlap yes|no] [layout rank|node], got no arguments"),
    (sr_script(os.path.join(workdir, "beta40.pt"), kspace="pppm/dplr -1"),
     "ERROR: kspace_style pppm/dplr: accuracy must be > 0, got -1"),
    (sr_script(os.path.join(workdir, "beta40.pt"), modify="gewald 0.4 slab 3.0"),
     "ERROR: kspace_style pppm/dplr: kspace_modify slab is not supported"),
]
for text_in, expected in CASES:
    r = T.run_lammps(text_in, files={"charges.data": text})
    line = S.error_line(r.output)
    T.check(r.rc != 0 and line is not None and line.startswith(expected),
            "expected %r, got %r" % (expected, line))

T.summary("test_dplr_pppm")
