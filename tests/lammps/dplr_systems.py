"""Shared pieces of the DPLR tests (tests/lammps/test_dplr_*.py): data files of random
Gaussian charges and of DPLR water (one WC atom per molecule, potentials/dplr/water_wc.py),
the input script of a DPLR water run, and dump/log readers."""
import os
import re
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aisci_testlib as T  # noqa: E402

sys.path.insert(0, T.SOURCE_DIR)
from potentials.dplr.water_wc import make_dplr_water_box  # noqa: E402,F401
from potentials.data.water_box import write_lammps_data  # noqa: E402

MODELS = os.path.join(T.SOURCE_DIR, "potentials", "models")
DW = os.path.join(MODELS, "water_dw.pt")
SR = os.path.join(MODELS, "water_matris.pt")
QQRD2E = {"metal": 14.399645, "real": 332.06371}
BETA = 0.4


def lammps_cell(cell):
    """Cell rows (a, b, c) -> (xhi, yhi, zhi, xy, xz, yz) of a LAMMPS box from the origin
    (the rows must already be in LAMMPS's lower-triangular form)."""
    return cell[0, 0], cell[1, 1], cell[2, 2], cell[1, 0], cell[2, 0], cell[2, 1]


def charges_data(n, cell, net=0.0, seed=5):
    """Random charges in [-1, 1] (sum = net) at random positions of a cell (rows a, b, c,
    lower-triangular). Returns (data file text for atom_style charge, x, q)."""
    rng = np.random.default_rng(seed)
    q = rng.uniform(-1.0, 1.0, n)
    q += (net - q.sum()) / n
    x = rng.random((n, 3)) @ cell
    lx, ly, lz, xy, xz, yz = lammps_cell(cell)
    lines = ["random Gaussian charges (tests/lammps/dplr_systems.py)", "", "%d atoms" % n,
             "1 atom types", "", "0 %.17g xlo xhi" % lx, "0 %.17g ylo yhi" % ly,
             "0 %.17g zlo zhi" % lz]
    if xy or xz or yz:
        lines.append("%.17g %.17g %.17g xy xz yz" % (xy, xz, yz))
    lines += ["", "Masses", "", "1 1.0", "", "Atoms # charge", ""]
    lines += ["%d 1 %.17g %.17g %.17g %.17g" % (i + 1, q[i], *x[i]) for i in range(n)]
    return "\n".join(lines) + "\n", x, q


def water_data(box):
    """Text of the LAMMPS data file of a make_dplr_water_box() box."""
    fd, path = tempfile.mkstemp(suffix=".data")
    os.close(fd)
    write_lammps_data(path, box, title="DPLR water (tests/lammps/dplr_systems.py)")
    text = open(path).read()
    os.remove(path)
    return text


def water_script(sr=SR, dw=DW, units="metal", accuracy="1e-6", overlap="yes", fix_extra="",
                 kspace_extra="", body="run 0", elements="O H NULL", sr_style="threads 1",
                 pre=""):
    """Input script of DPLR water: pair_style aisci (short range, WCs NULL), bond and angle
    styles zero, pppm/dplr at beta = BETA, fix dplr (O = 1 -> WC = 3, bond type 2)."""
    return """units %s
atom_style full
boundary p p p
%s
read_data water.data
pair_style aisci %s
pair_coeff * * %s %s
bond_style zero
bond_coeff *
angle_style zero
angle_coeff *
neighbor 1.0 bin
kspace_style pppm/dplr %s overlap %s
kspace_modify gewald %g %s
fix dplr all dplr model %s type_associate 1 3 bond_type 2 %s
fix_modify dplr virial yes energy yes
compute pv all pressure NULL virial
thermo_style custom step pe evdwl elong f_dplr c_pv[1] c_pv[2] c_pv[3] c_pv[4] c_pv[5] c_pv[6] vol
thermo_modify format float %%.17g
%s
""" % (units, pre, sr_style, sr, elements, accuracy, overlap, BETA, kspace_extra, dw,
       fix_extra, body)


def printed(log, key):
    """Values of the lines 'key v1 v2 ...' printed by the input script (not the echo)."""
    out = []
    for m in re.finditer(r"^%s((?: \S+)+)\s*$" % re.escape(key), log, re.M):
        try:
            out.append([float(v) for v in m.group(1).split()])
        except ValueError:
            continue
    return out


def error_line(output):
    """The first 'ERROR...' line of a run's output (None if there is none)."""
    for line in output.splitlines():
        if line.startswith("ERROR"):
            return line
    return None


# --- quantum DPLR water: fix pimd/langevin on the nuclei, fix dplr placing the WCs -------

NUCLEI = "group nuclei type 1 2\n"


def pimd_water_box():
    """The 16-molecule DPLR water box of the PIMD + DPLR tests and its data file:
    (box of make_dplr_water_box, {"water.data": text})."""
    box = make_dplr_water_box(16, seed=3)
    return box, {"water.data": water_data(box)}


def pimd_water_body(pimd="temp 300 thermostat PILE_L 71 tau 0.05", k=1, steps=20, thermo=1,
                    extra="", run_extra="", fix_group="nuclei", velocity=True):
    """Body of a water_script() for fix pimd/langevin (ID pimd) on the nuclei (O, H) with
    fix dplr (defined before it, by water_script) placing the WCs: velocities of the nuclei
    (loop geom: the same in every layout), `extra` commands before the fix, thermo of the
    ten output values every `thermo` steps in 17 digits, `run_extra` (dumps) before the
    run."""
    cols = " ".join("f_pimd[%d]" % i for i in range(1, 11))
    vel = "velocity nuclei create 300 4928 dist gaussian loop geom\n" if velocity else ""
    return (NUCLEI + vel + extra +
            "fix pimd %s pimd/langevin %s beads_per_world %d\n" % (fix_group, pimd, k) +
            "timestep 0.00025\n"
            "thermo_style custom step pe %s\n"
            "thermo_modify format float %%.17g\n"
            "thermo %d\n%s"
            "run %d\n" % (cols, thermo, run_extra, steps))


def read_dump(path):
    """The last snapshot of a LAMMPS text dump: (column names, {atom id: [values]})."""
    with open(path) as f:
        lines = f.read().splitlines()
    start = max(i for i, line in enumerate(lines) if line.startswith("ITEM: ATOMS"))
    cols = lines[start].split()[2:]
    rows = {}
    for line in lines[start + 1:]:
        words = line.split()
        if len(words) == len(cols):
            rows[int(words[0])] = [float(w) for w in words]
    return cols, rows
