"""pair_style deepmd (DeePMD-kit's syntax, pair_deepmd_alias.cpp): the forms DeePMD-kit
documents run and give the same energy, forces and virial as pair_style aisci with the
same model (deeppot_sea.pth and, on 2 ranks, the DPA2 example model on one DFT water
frame); `pair_coeff * *` without names maps LAMMPS types to the model's type_map in order
and leaves types beyond it out (DeePMD-kit's virtual atoms); the model-deviation keywords
are accepted; keywords that need something pair_style aisci does not do are refused by
name with their reason; several models and TensorFlow models are refused."""

import numpy as np

from aisci_testlib import check, run_lammps, summary
from deepmd_systems import (DPA2, SEA, WATER6_BOX, WATER6_TYPES, WATER6_X, close, data_file,
                            dft_frame, need, run0_result, run0_script)

need(SEA, DPA2)
TOL = 1e-10


def result(label, pair, files, nprocs=1):
    r = run_lammps(run0_script(pair), nprocs=nprocs, files=files)
    if not check(r.rc == 0, "%s: run failed:\n%s" % (label, r.output[-3000:])):
        return None
    return run0_result(r) + (r,)


def same(label, a, b):
    if a is None or b is None:
        return
    for name, x, y in (("energy", a[0], b[0]), ("forces", a[1], b[1]), ("virial", a[2], b[2])):
        ok, dev = close(x, y, TOL)
        check(ok, "%s: %s differ from pair_style aisci by %.3g" % (label, name, dev))


# --- accepted forms on DeePMD-kit's 6-atom water: equal to pair_style aisci ---------------
water6 = {"data.lmp": data_file(WATER6_X, WATER6_TYPES, WATER6_BOX)}
ref = result("aisci", "pair_style aisci\npair_coeff * * %s O H" % SEA, water6)
accepted = [
    ("no names", "pair_style deepmd %s\npair_coeff * *" % SEA),
    ("names", "pair_style deepmd %s\npair_coeff * * O H" % SEA),
    ("model deviation keywords", "pair_style deepmd %s out_freq 10 out_file md.out atomic "
     "relative 1.0 relative_v 0.5\npair_coeff * *" % SEA),
    ("aisci keyword", "pair_style deepmd %s threads 1\npair_coeff * * O H" % SEA),
]
for label, pair in accepted:
    res = result(label, pair, water6)
    same(label, res, ref)
    if label == "no names" and res:
        check("type mapping 1->O 2->H" in res[3].logs[0],
              "no names: log does not show the type_map mapping 1->O 2->H")
    if label == "model deviation keywords" and res:
        check("accepted without effect" in res[3].logs[0],
              "model deviation keywords: no note that they have no effect with one model")
same("2 ranks", result("2 ranks", accepted[0][1], water6, nprocs=2), ref)

# types in the other order: names map through the type map, as in DeePMD-kit
swapped = {"data.lmp": data_file(WATER6_X, [3 - t for t in WATER6_TYPES], WATER6_BOX)}
same("names H O", result("names H O", "pair_style deepmd %s\npair_coeff * * H O" % SEA, swapped),
     result("aisci H O", "pair_style aisci\npair_coeff * * %s H O" % SEA, swapped))

# a third type beyond the model's type_map (a DPLR Wannier centroid): left out
x3 = np.vstack([WATER6_X, [[7.0, 9.0, 9.0]]])
three = {"data.lmp": data_file(x3, WATER6_TYPES + [3], WATER6_BOX, ntypes=3,
                               masses=(16.0, 2.0, 16.0))}
r3 = result("virtual type", "pair_style deepmd %s\npair_coeff * *" % SEA, three)
r3ref = result("aisci NULL", "pair_style aisci\npair_coeff * * %s O H NULL" % SEA, three)
same("virtual type", r3, r3ref)
if r3:
    check("3->NULL" in r3[3].logs[0], "virtual type: log does not map type 3 to NULL")

# DPA2 (message passing, deepmd::border_op) on a DFT water frame, 2 ranks
x, types, box = dft_frame(0)
dft = {"data.lmp": data_file(x % np.diag(box), types, box[0, 0])}
same("dpa2 2 ranks", result("dpa2 deepmd", "pair_style deepmd %s\npair_coeff * *" % DPA2, dft,
                            nprocs=2),
     result("dpa2 aisci", "pair_style aisci\npair_coeff * * %s O H" % DPA2, dft, nprocs=2))

# --- refused forms: each error names the keyword and says why -------------------------------
refused = [
    ("fparam", "pair_style deepmd %s fparam 1.2" % SEA, ["keyword fparam is not supported",
                                                         "frame parameters"]),
    ("aparam", "pair_style deepmd %s aparam 0.5" % SEA, ["keyword aparam is not supported",
                                                         "atomic parameters"]),
    ("fparam_from_compute", "pair_style deepmd %s fparam_from_compute TEMP" % SEA,
     ["keyword fparam_from_compute is not supported"]),
    ("fparam_from_fix", "pair_style deepmd %s fparam_from_fix F 1" % SEA,
     ["keyword fparam_from_fix is not supported"]),
    ("aparam_from_compute", "pair_style deepmd %s aparam_from_compute 1" % SEA,
     ["keyword aparam_from_compute is not supported"]),
    ("ttm", "pair_style deepmd %s ttm T" % SEA, ["keyword ttm is not supported", "fix ttm"]),
    ("virtual_type", "pair_style deepmd %s virtual_type 3" % SEA,
     ["keyword virtual_type is not supported"]),
    ("several models", "pair_style deepmd %s %s out_freq 10" % (SEA, SEA),
     ["2 models given", "model deviation"]),
    ("TensorFlow model", "pair_style deepmd graph.pb", ["graph.pb", "TensorFlow",
                                                        "PyTorch frozen models"]),
    ("no model", "pair_style deepmd out_freq 10", ["expected a model file first"]),
    ("unknown keyword", "pair_style deepmd %s speed 3" % SEA, ["unknown keyword 'speed'",
                                                               "refused: fparam"]),
    ("missing value", "pair_style deepmd %s out_freq" % SEA, ["keyword out_freq needs 1 value"]),
    ("bad out_freq", "pair_style deepmd %s out_freq -1" % SEA, ["out_freq must be >= 0"]),
    ("bad aisci keyword value", "pair_style deepmd %s threads many" % SEA,
     ["threads expects an integer"]),
    ("pair_coeff not * *", "pair_style deepmd %s\npair_coeff 1 2" % SEA,
     ["Incorrect args for pair coefficients"]),
    ("pair_coeff unknown element", "pair_style deepmd %s\npair_coeff * * O Xx" % SEA,
     ["element 'Xx'"]),
]
for label, pair, expect in refused:
    if "pair_coeff" not in pair:
        pair += "\npair_coeff * *"
    r = run_lammps(run0_script(pair), files=water6)
    check(r.rc != 0, "%s: expected an error, the run succeeded" % label)
    for text in expect:
        check(text in r.output, "%s: error output lacks '%s':\n%s"
              % (label, text, r.output[-1500:]))

summary("test_deepmd_alias")
