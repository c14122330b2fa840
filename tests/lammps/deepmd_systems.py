"""Shared pieces of the tests/lammps/test_deepmd_*.py tests: where DeePMD-kit's models and
data are (../shared/deepmd-kit next to the source tree), the 6-atom water system of
DeePMD-kit's own tests with its published reference values, LAMMPS data files, dumps.

The models and data are third-party reference material (LGPL-3.0, DeePMD-kit) that the
repository does not carry: a test without them exits 77 (ctest: skipped) and says why."""
import os
import sys

import numpy as np

SHARED = os.environ.get("AISCI_DEEPMD_DIR") or os.path.join(
    os.environ.get("AISCI_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")),
    "..", "shared", "deepmd-kit")
MODELS = os.path.join(SHARED, "models")
SEA = os.path.join(MODELS, "deeppot_sea.pth")
DPA2 = os.path.join(MODELS, "water_dpa2_frozen_model.pth")
DIPOLE = os.path.join(MODELS, "deepdipole_pt.pth")
WATER_DFT = os.path.join(SHARED, "water-dft")

SKIP = 77


def need(*paths):
    """Exit 77 (skipped) naming the first missing file."""
    for p in paths:
        if not os.path.exists(p):
            print("SKIPPED: %s not found (DeePMD-kit's models and data are expected at "
                  "$AISCI_SOURCE_DIR/../shared/deepmd-kit, or set AISCI_DEEPMD_DIR)" % p,
                  flush=True)
            sys.exit(SKIP)


# DeePMD-kit's 6-atom water system in a 13 A cubic box (source/lmp/tests/test_lammps_pt.py
# and source/api_cc/tests): types O H H O H H (model types 0 1 1 0 1 1).
WATER6_BOX = 13.0
WATER6_X = np.array([[12.83, 2.56, 2.18], [12.09, 2.87, 2.74], [0.25, 3.32, 1.68],
                     [3.36, 3.00, 1.81], [3.51, 2.51, 2.60], [4.27, 3.22, 1.56]])
WATER6_TYPES = [1, 2, 2, 1, 2, 2]    # LAMMPS types: 1 = O, 2 = H

# Published reference values of deeppot_sea.pth on that system (DeePMD-kit,
# source/lmp/tests/test_lammps_pt.py): per-atom energies (eV), forces (eV/A), and the
# model's per-atom virials (eV, row-major 3x3, the model's atom_virial; the LAMMPS test
# there stores their negatives).
SEA_ATOM_ENERGY = np.array([-93.016873944029, -185.923296645958, -185.927096544970,
                            -93.019371018039, -185.926179995548, -185.924351901852])
SEA_FORCE = np.array([
    0.006277522211, -0.001117962774, 0.000618580445, 0.009928999655, 0.003026035654,
    -0.006941982227, 0.000667853212, -0.002449963843, 0.006506463508, -0.007284129115,
    0.000530662205, -0.000028806821, 0.000068097781, 0.006121331983, -0.009019754602,
    -0.009658343745, -0.006110103225, 0.008865499697]).reshape(6, 3)
SEA_ATOM_VIRIAL = np.array([
    -0.000155238009, 0.000116605516, -0.007869862476, 0.000465578340, 0.008182547185,
    -0.002398713212, -0.008112887338, -0.002423738425, 0.007210716605, -0.019203504012,
    0.001724938709, 0.009909211091, 0.001153857542, -0.001600015103, -0.000560024090,
    0.010727836276, -0.001034836404, -0.007973454377, -0.021517399106, -0.004064359664,
    0.004866398692, -0.003360038617, -0.007241406162, 0.005920941051, 0.004899151657,
    0.006290788591, -0.006478820311, 0.001921504710, 0.001313470921, -0.000304091236,
    0.001684345981, 0.004124109256, -0.006396084465, -0.000701095618, -0.006356507032,
    0.009818550859, -0.015230664587, -0.000110244376, 0.000690319396, 0.000045953023,
    -0.005726548770, 0.008769818495, -0.000572380210, 0.008860603423, -0.013819348050,
    -0.021227082558, -0.004977781343, 0.006646239696, -0.005987066507, -0.002767831232,
    0.003746502525, 0.007697590397, 0.003746130152, -0.005172634748]).reshape(6, 9)

# Published reference of deepdipole_pt.pth on the same system (DeePMD-kit,
# source/api_cc/tests/test_deepdipole_pt.cc): the vector of each O (atoms 1 and 4), A.
DIPOLE_O = {1: np.array([-0.1808925408386811, 0.3190798607195795, 0.04760079958216837]),
            4: np.array([0.4147029447879755, -0.08206913353381971, 0.1858497008385067])}

# 1 eV in kcal/mol (the conversion pair_style aisci uses for units real)
EV_TO_KCAL_MOL = 23.060547830619026


def close(a, b, tol):
    """Per component |a - b| <= tol * max(1, |b|); returns (ok, max deviation)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    dev = np.abs(a - b)
    return bool(np.all(dev <= tol * np.maximum(1.0, np.abs(b)))), float(dev.max())


def data_file(x, types, box, ntypes=2, masses=(16.0, 2.0)):
    """LAMMPS data file text (atom_style atomic, orthogonal box [0, box])."""
    lines = ["DeePMD-kit test system", "", "%d atoms" % len(x), "%d atom types" % ntypes, ""]
    for d in "xyz":
        lines.append("0 %.16g %slo %shi" % (box, d, d))
    lines += ["", "Masses", ""]
    lines += ["%d %g" % (t + 1, m) for t, m in enumerate(masses)]
    lines += ["", "Atoms", ""]
    for i, (p, t) in enumerate(zip(x, types)):
        lines.append("%d %d %.16g %.16g %.16g" % (i + 1, t, p[0], p[1], p[2]))
    return "\n".join(lines) + "\n"


def read_dump(path):
    """Last frame of a custom dump sorted by id: dict column -> array."""
    with open(path) as f:
        lines = f.read().splitlines()
    start = max(i for i, l in enumerate(lines) if l.startswith("ITEM: ATOMS"))
    cols = lines[start].split()[2:]
    rows = np.array([[float(w) for w in l.split()] for l in lines[start + 1:] if l.strip()])
    rows = rows[np.argsort(rows[:, 0])]
    return {c: rows[:, k] for k, c in enumerate(cols)}


def run0_script(pair, units="metal", newton="on", neighbor=2.0, data="data.lmp"):
    """A `run 0` input for `pair` (pair_style and pair_coeff lines) that records what
    run0_result() reads: potential energy and virial (compute pressure NULL virial) in the
    thermo output, forces in dump.txt, all to 17 digits."""
    return """units %s
newton %s
boundary p p p
atom_style atomic
neighbor %g bin
read_data %s
%s
compute vir all pressure NULL virial
thermo_style custom step pe c_vir[1] c_vir[2] c_vir[3] c_vir[4] c_vir[5] c_vir[6]
thermo_modify format float %%.17g
dump 1 all custom 1 dump.txt id fx fy fz
dump_modify 1 format float %%.17g
run 0
""" % (units, newton, neighbor, data, pair)


def run0_result(run):
    """(energy, forces [N, 3] by atom ID, virial [6]) of a finished run0_script run."""
    th = run.thermo()
    d = read_dump(os.path.join(run.workdir, "dump.txt"))
    virial = np.array([th["c_vir[%d]" % k][-1] for k in range(1, 7)])
    return th["PotEng"][-1], np.column_stack([d["fx"], d["fy"], d["fz"]]), virial


def dft_frame(index=0, system="data_3"):
    """One frame of DeePMD-kit's DFT water data: positions (A), LAMMPS types, box (A)."""
    base = os.path.join(WATER_DFT, system)
    need(os.path.join(base, "set.000", "coord.npy"))
    coord = np.load(os.path.join(base, "set.000", "coord.npy"))[index].reshape(-1, 3)
    box = np.load(os.path.join(base, "set.000", "box.npy"))[index].reshape(3, 3)
    types = np.loadtxt(os.path.join(base, "type.raw"), dtype=int)
    return coord.astype(float), types + 1, box
