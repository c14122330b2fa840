"""fix dplr: bad input gives its documented error (exact text) and never a crash, hang
or silent default: keywords and values, missing or wrong model files, an energy model as
the DW model, atom styles without charges or bonds, units, type mappings, WCs without
their bond, parents with two or no WCs, bonds of the WC bond type between the wrong
types; setups without their electrostatics (fix dplr without a kspace style, pppm/dplr
with a DPLR short-range model and WCs but no fix dplr), fix dplr twice, a mesh too large
for memory; the warnings for WC atoms in an integrator and for another kspace style.
Every run has a timeout."""
import copy
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aisci_nn_toy as toy  # noqa: E402
import aisci_testlib as T  # noqa: E402
import dplr_systems as S  # noqa: E402

toy.skip_without_torch_wrapper()

workdir = toy.build_dir("dplr_errors")
SR_TOY = toy.save(toy.ToyMP(ntypes=2, num_layers=1, cutoff=3.0, seed=11),
                  os.path.join(workdir, "toy_sr.pt"), override={"dplr_beta": "0.4"})
CORRUPT = os.path.join(workdir, "corrupt.pt")
with open(S.DW, "rb") as f:
    blob = f.read()
with open(CORRUPT, "wb") as f:
    f.write(blob[: len(blob) // 3])
MISSING = os.path.join(workdir, "no_such_model.pt")
BOX = S.make_dplr_water_box(8, seed=2)


def data(edit=None):
    box = copy.deepcopy(BOX)
    if edit:
        edit(box)
    return {"water.data": S.water_data(box)}


def drop_bond(box, k):
    keep = np.arange(len(box["bonds"])) != k
    box["bonds"] = box["bonds"][keep]
    box["bond_types"] = box["bond_types"][keep]


def owc_bond(box, wc):
    """Index of the O-WC bond of WC atom index wc (0-based)."""
    return int(np.nonzero((box["bond_types"] == 2) & (box["bonds"][:, 1] == wc))[0][0])


def remove_wc_without_bond(box):
    drop_bond(box, owc_bond(box, 7))


def second_wc_on_o1(box):
    # an extra WC atom next to O 1, bonded to it: O 1 has two WCs
    for key, value in (("positions", box["positions"][0] + 0.1), ("types", 3),
                       ("charges", 0.0), ("molecule", 1)):
        box[key] = np.concatenate([box[key], [value]])
    box["bonds"] = np.concatenate([box["bonds"], [[0, len(box["types"]) - 1]]])
    box["bond_types"] = np.concatenate([box["bond_types"], [2]])


def delete_wc(box):
    # WC atom index 7 (ID 8) and its bond gone: O ID 5 has no WC
    drop_bond(box, owc_bond(box, 7))
    keep = np.arange(len(box["types"])) != 7
    for key in ("positions", "types", "charges", "molecule"):
        box[key] = box[key][keep]
    b = box["bonds"]
    box["bonds"] = np.where(b > 7, b - 1, b)
    a = box["angles"]
    box["angles"] = np.where(a > 7, a - 1, a)


def oh_as_wc_bond(box):
    # the first O-H bond (O 1 - H 2) given the WC bond type
    box["bond_types"][0] = 2


def wc_bonded_to_h(box):
    # WC ID 4 bonded to H ID 2 instead of O ID 1
    box["bonds"][owc_bond(box, 3)] = [1, 3]


def script(fix="model %s type_associate 1 3 bond_type 2" % S.DW, elements="O H NULL",
           style="full", units="metal", extra="", body="run 0"):
    text = S.water_script(sr=SR_TOY, fix_extra="", elements=elements, units=units,
                          accuracy="1e-4", body=extra + "\n" + body)
    text = text.replace("atom_style full", "atom_style " + style)
    return text.replace("fix dplr all dplr model %s type_associate 1 3 bond_type 2 " % S.DW,
                        "fix dplr all dplr " + fix)


E = "ERROR: fix dplr: "
E1 = "ERROR on proc 0: fix dplr: "    # found by the rank that holds the atom (error->one)
# no pair_style aisci (elements given to the fix), for errors before any pair style check
BARE = """units %%s
atom_style %%s
boundary p p p
read_data %%s
pair_style zero 3.0
pair_coeff * *
fix dplr all dplr model %s type_associate 1 3 bond_type 1 elements O H NULL
run 0
""" % S.DW
CASES = [
    # keywords and values
    (script(fix="type_associate 1 3 bond_type 2"), data(),
     E + "missing keyword model <DW model file>"),
    (script(fix="model %s bond_type 2" % S.DW), data(),
     E + "missing keyword type_associate <parent type> <WC type>"),
    (script(fix="model %s type_associate 1 3" % S.DW), data(),
     E + "missing keyword bond_type <parent-WC bond type>"),
    (script(fix="model %s type_associate 1 5 bond_type 2" % S.DW), data(),
     E + "type_associate WC type must be 1..3, got 5"),
    (script(fix="model %s type_associate 0 3 bond_type 2" % S.DW), data(),
     E + "type_associate parent type must be 1..3, got 0"),
    (script(fix="model %s type_associate 1 1 bond_type 2" % S.DW), data(),
     E + "type_associate: a type cannot be its own WC type (1 1)"),
    (script(fix="model %s type_associate 1 3 2 3 bond_type 2" % S.DW), data(),
     E + "type_associate: type 3 appears twice"),
    (script(fix="model %s type_associate 1 3 bond_type 3" % S.DW), data(),
     E + "bond_type must be 1..2 (the bond types of the data file), got 3"),
    (script(fix="model %s type_associate 1 3 bond_type 2 efield 1 2" % S.DW), data(),
     E + "keyword efield needs 3 values"),
    (script(fix="model %s type_associate 1 3 bond_type 2 efield 1 x 2" % S.DW), data(),
     E + "efield expects a number, got 'x'"),
    (script(fix="model %s type_associate 1 3 bond_type 2 jacobian maybe" % S.DW), data(),
     E + "unknown jacobian value 'maybe' (expected one of: yes, no)"),
    (script(fix="model %s type_associate 1 3 bond_type 2 wannier 3" % S.DW), data(),
     E + "unknown keyword 'wannier' (expected model, type_associate, bond_type, efield, "
         "elements, threads or jacobian)"),
    (script(fix="model %s type_associate 1 3 bond_type 2 threads -1" % S.DW), data(),
     E + "threads must be >= 0 (0: OMP_NUM_THREADS or 1), got -1"),
    # model files
    (script(fix="model %s type_associate 1 3 bond_type 2" % MISSING), data(),
     E + "cannot load DW model file '%s': file input/output error" % MISSING),
    (script(fix="model %s type_associate 1 3 bond_type 2" % CORRUPT), data(),
     E + "cannot load DW model file '%s': invalid file or model format" % CORRUPT),
    (script(fix="model %s type_associate 1 3 bond_type 2" % S.SR), data(),
     E + "model file '%s' is an energy model (metadata output = energy); fix dplr needs a "
         "DW model (output = vector, docs/dplr.md)" % S.SR),
    # atom style, units, mappings
    (BARE % ("metal", "charge", "charges.data"), None,
     E + "needs an atom style with charges and bonds (e.g. atom_style full): WCs are "
         "charged atoms bonded to their parents"),
    (BARE % ("lj", "full", "water.data"), data(),
     "ERROR: fix dplr requires units metal or real (the DW model is in Angstrom), got units lj"),
    (script(elements="O H H"), data(),
     E + "pair_style aisci maps WC type 3 to element H; WCs are not atoms of the short-range "
         "model, map the type to NULL in pair_coeff"),
    (script(fix="model %s type_associate 2 3 bond_type 2" % S.DW), data(),
     E + "parent type 2 is element H, which the DW model does not predict a WC for "
         "(selected_types = O)"),
    (script(fix="model %s type_associate 1 3 bond_type 2 elements O H" % S.DW), data(),
     E + "keyword elements needs 3 values"),
    (script(fix="model %s type_associate 1 3 bond_type 2 elements O Xe NULL" % S.DW), data(),
     E + "atom type 2 (element Xe): element 'Xe' is not in model file '%s' (its type_names "
         "are: O H)" % S.DW),
    # bonds
    (script(), data(remove_wc_without_bond),
     E1 + "WC atom ID 8 (type 3) has 0 bonds of type 2 to a parent; it needs exactly one"),
    (script(), data(second_wc_on_o1),
     E1 + "atom ID 1 (type 1, parent type of WC type 3) has 2 WCs bonded to it by bond "
         "type 2; it needs exactly one"),
    (script(), data(delete_wc),
     E1 + "atom ID 5 (type 1, parent type of WC type 3) has 0 WCs bonded to it by bond "
         "type 2; it needs exactly one"),
    (script(), data(oh_as_wc_bond),
     E1 + "bond type 2 joins atoms ID 1 and 2 (types 1 and 2), neither of which is a WC type "
         "of type_associate"),
    (script(), data(wc_bonded_to_h),
     E1 + "WC atom ID 4 (type 3) is bonded by bond type 2 to atom ID 2 of type 2, but "
         "type_associate makes type 1 its parent"),
]

# setups that would run without the electrostatics (or with the WCs moved twice)
FIX = "fix dplr all dplr model %s type_associate 1 3 bond_type 2\n" % S.DW
KSPACE = "kspace_style pppm/dplr 1e-4 overlap yes\nkspace_modify gewald %g \n" % S.BETA
NO_KSPACE = script().replace(KSPACE, "")
NO_FIX = script().replace(FIX, "").replace("fix_modify dplr virial yes energy yes\n", "").replace(
    " f_dplr", "")
TWICE = script().replace(FIX, FIX + "fix second all dplr model %s type_associate 1 3 "
                         "bond_type 2\n" % S.DW)
assert NO_KSPACE != script() and NO_FIX != script() and TWICE != script()
CASES += [
    (NO_KSPACE, data(),
     "ERROR: fix dplr needs kspace_style pppm/dplr (with kspace_modify gewald <beta>): without "
     "a kspace style the charges of the ions and WCs have no electrostatics"),
    (TWICE, data(),
     E + "fix IDs dplr and second are both fix dplr; only one may place the WCs (unfix one of "
         "them)"),
    (NO_FIX, data(),
     "ERROR: kspace_style pppm/dplr: the pair_style aisci model is a DPLR short-range model "
     "(metadata dplr_beta) and 8 charged atoms of types it maps to NULL (e.g. type 3) look "
     "like Wannier centroids, but there is no fix dplr to place them: add fix dplr"),
    (script().replace("gewald %g " % S.BETA, "gewald %g mesh 5000 5000 5000" % S.BETA), data(),
     "ERROR: kspace_style pppm/dplr: invalid argument: pppm: mesh 5000 x 5000 x 5000 "
     "(1.25e+11 points) needs about 6.52e+03 GiB per node (1 of 1 ranks there, 56 bytes per "
     "point per rank), more than the "),
]

CHARGE_DATA = {"charges.data": S.charges_data(10, np.diag([8.0, 8.0, 8.0]))[0].replace(
    "1 atom types", "3 atom types").replace("1 1.0\n", "1 1.0\n2 1.0\n3 1.0\n")}
for text, files, expected in CASES:
    r = T.run_lammps(text, files=files or CHARGE_DATA, timeout=120)
    line = S.error_line(r.output) or ""
    line = line.split(" (src/")[0]
    ok = r.rc != 0 and line.startswith(expected)
    T.check(ok, "expected %r\n        got %r" % (expected, line))
    if ok:
        print("ok: " + line)

# fix dplr with another kspace style: point charges instead of DPLR's Gaussians, a warning
r = T.run_lammps(script().replace(KSPACE, "kspace_style pppm/aisci 1e-4\nkspace_modify gewald "
                                  "0.4\n"), files=data(), timeout=120)
T.check("WARNING: fix dplr: kspace_style pppm/aisci is not pppm/dplr: the ions and WCs are "
        "point charges, not the Gaussian charges of DPLR" in r.output,
        "other kspace warning:\n" + r.output[-1500:])

# WCs in a time integrator's group: a warning, and the run goes on
r = T.run_lammps(script(extra="fix nve all nve", body="run 2"), files=data(), timeout=120)
T.check(r.rc == 0 and "WARNING: fix dplr: fix nve (nve) integrates 8 WC atoms; fix dplr places "
        "WCs itself, exclude their types from the integrator's group" in r.output,
        "integrator warning:\n" + r.output[-1500:])

T.summary("test_dplr_errors")
