"""Recompute the q-TIP4P/F forces of the water data set without the thermostat.

generate_water.py dumps ``fx fy fz`` from a run under ``fix langevin``; LAMMPS applies
the thermostat's friction and random forces in post_force, before the dump, so the
stored forces of potentials/data/water_qtip4pf.npz contain the Langevin forces (RMS
1.36 eV/A per component on O, 0.35 eV/A on H, growing as sqrt(T)); the energies (pe)
are clean. This script re-evaluates every stored frame with the same force field and
no fix (LAMMPS ``rerun`` of the stored positions, one LAMMPS call per MD run) and
writes a copy of the data set with the clean forces. The energies it recomputes agree
with the stored ones to ~1e-7 eV; it checks that.

Usage (Debian's interpreter and LAMMPS ``lmp``, ~20 s)::

    /usr/bin/python3 -m potentials.data.relabel_water \
        potentials/data/water_qtip4pf.npz potentials/data/water_qtip4pf_clean.npz
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from potentials.data.generate_water import FORCE_FIELD, KCAL_PER_MOL_IN_EV, QDIST, read_dump  # noqa: E402
from potentials.data.water_box import make_water_box, write_lammps_data  # noqa: E402

RERUN_INPUT = """\
units real
atom_style full
boundary p p p
read_data data.water
""" + FORCE_FIELD + """\
thermo_style custom step pe
thermo_modify norm no format float %.12g
thermo 1
dump f all custom 1 out.dump id type x y z fx fy fz
dump_modify f sort id format float %.12g
rerun in.dump dump x y z box yes
"""


def _thermo_pe(log_path):
    pe = {}
    active = False
    for line in open(log_path):
        tok = line.split()
        if tok[:2] == ["Step", "PotEng"]:
            active = True
        elif active and not line.startswith("WARNING"):
            try:
                pe[int(tok[0])] = float(tok[1])
            except (ValueError, IndexError):
                active = False
    return pe


def relabel(src, dst, lmp, seed=1):
    d = {k: v for k, v in np.load(src).items()}
    forces = d["forces"].copy()
    energies = d["energies"].copy()
    for run in np.unique(d["run_id"]):
        idx = np.nonzero(d["run_id"] == run)[0]
        n = int(d["n_atoms"][idx[0]])
        # Topology (molecule ids, bonds, angles, charges) of that run, as generate_water made it.
        box = dict(make_water_box(n // 3, float(d["density"][idx[0]]), seed=seed * 10007 + int(run)))
        o0 = d["offsets"][idx[0]]
        if not np.array_equal(box["types"] - 1, d["types"][o0:o0 + n]):
            raise RuntimeError("run %d: atom types differ from the regenerated topology" % run)
        box["positions"] = d["positions"][o0:o0 + n]
        box["box"] = np.diag(d["cells"][idx[0]])
        with tempfile.TemporaryDirectory(prefix="aisci_relabel_") as work:
            write_lammps_data(os.path.join(work, "data.water"), box)
            with open(os.path.join(work, "in.dump"), "w") as f:
                for step, k in enumerate(idx, start=1):
                    o = d["offsets"][k]
                    f.write("ITEM: TIMESTEP\n%d\nITEM: NUMBER OF ATOMS\n%d\n"
                            "ITEM: BOX BOUNDS pp pp pp\n" % (step, n))
                    for length in np.diag(d["cells"][k]):
                        f.write("0.0 %.12f\n" % length)
                    f.write("ITEM: ATOMS id type x y z\n")
                    for i in range(n):
                        x = d["positions"][o + i]
                        f.write("%d %d %.12f %.12f %.12f\n" % (i + 1, d["types"][o + i] + 1,
                                                               x[0], x[1], x[2]))
            with open(os.path.join(work, "in.rerun"), "w") as f:
                f.write(RERUN_INPUT.format(qdist=QDIST))
            proc = subprocess.run([lmp, "-in", "in.rerun", "-log", "log.lammps", "-screen", "none"],
                                  cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  universal_newlines=True)
            if proc.returncode != 0:
                raise RuntimeError("lmp rerun failed for run %d:\n%s" % (run, proc.stdout[-2000:]))
            pe = _thermo_pe(os.path.join(work, "log.lammps"))
            for step, _, data in read_dump(os.path.join(work, "out.dump")):
                k = idx[step - 1]
                o = d["offsets"][k]
                forces[o:o + n] = data[:, 5:8] * KCAL_PER_MOL_IN_EV
                energies[k] = pe[step] * KCAL_PER_MOL_IN_EV
        de = np.abs(energies[idx] - d["energies"][idx]).max()
        if de > 1e-5:
            raise RuntimeError("run %d: recomputed energy differs by %.3g eV" % (run, de))
        sl = slice(o0, d["offsets"][idx[-1]] + n)
        print("run %2d: max |dE| %.1e eV, RMS of the removed thermostat force %.3f eV/A"
              % (run, de, np.sqrt(np.mean((forces[sl] - d["forces"][sl]) ** 2))), flush=True)
    d["forces"] = forces
    d["info"] = np.array(str(d["info"]) + "; forces recomputed without the Langevin "
                         "thermostat (potentials/data/relabel_water.py)")
    np.savez_compressed(dst, **d)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("src")
    parser.add_argument("dst")
    parser.add_argument("--lmp", default=os.environ.get("AISCI_TEACHER_LMP", "lmp"))
    parser.add_argument("--seed", type=int, default=1, help="--seed of generate_water")
    args = parser.parse_args(argv)
    lmp = shutil.which(args.lmp)
    if lmp is None:
        sys.exit("relabel_water: LAMMPS executable '%s' not found" % args.lmp)
    relabel(args.src, args.dst, lmp, args.seed)


if __name__ == "__main__":
    main()
