"""O-O radial distribution function of the teacher (q-TIP4P/F, Debian's LAMMPS) for
comparison with MD runs of the neural-network potentials.

Usage (Debian's interpreter and LAMMPS ``lmp``)::

    /usr/bin/python3 -m potentials.data.teacher_rdf --out potentials/data/teacher_rdf_300K.txt

The force field is the one of generate_water.py (``FORCE_FIELD``, PPPM electrostatics).
Each of ``--runs`` independent runs builds a random box of ``--molecules`` molecules at
``--density`` (water_box.py), minimises it, equilibrates it for ``--equil`` steps of 0.5
fs under a Langevin thermostat (100 fs), then samples the O-O g(r) (``compute rdf``,
``--bins`` bins to ``--rmax``) every ``--every`` steps over ``--steps`` steps of Nose-Hoover
NVT (50 fs). The output is the mean over the runs and its standard error (spread of the
run means / sqrt(runs)), plus the first-peak figures of ``rdf_peak``.

Output (text): ``#`` comment lines with the settings and the first peak, then columns
r (A, bin centre), g_OO, standard error of g_OO.

``rdf_peak``, ``compare_rdf``, ``read_rdf``, ``model_start_frame`` and ``model_rdf_input`` are shared with tests/lammps/test_potentials_rdf.py and
the figure script (docs/figures/nn_water_rdf.py).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from potentials.data.generate_water import FORCE_FIELD, QDIST  # noqa: E402
from potentials.data.water_box import make_water_box, write_lammps_data  # noqa: E402

RDF_INPUT = """\
units real
atom_style full
boundary p p p
read_data data.water
""" + FORCE_FIELD + """\
thermo 1000
min_style cg
minimize 1.0e-4 1.0e-6 200 2000
reset_timestep 0
timestep 0.5
velocity all create {temp} {seed} mom yes rot yes dist gaussian
fix nve all nve
fix thermostat all langevin {temp} {temp} 100.0 {seed2} zero yes
run {equil}
unfix thermostat
unfix nve
fix thermostat all nvt temp {temp} {temp} 50.0
reset_timestep 0
compute rdf all rdf {bins} 1 1 cutoff {rmax}
fix rdf all ave/time {every} {nsamples} {steps} c_rdf[*] file rdf.dat mode vector
run {steps}
"""


MODEL_RDF_INPUT = """units metal
atom_style atomic
boundary p p p
read_data frame.data
pair_style aisci threads 1
pair_coeff * * {model} O H
neighbor 1.0 bin
neigh_modify every 1 delay 0 check yes
velocity all create 300.0 {seed} mom yes rot yes dist gaussian
fix 1 all nvt temp 300.0 300.0 0.05
timestep 0.0005
thermo_style custom step temp pe etotal
thermo {thermo}
run {equil}
reset_timestep 0
comm_modify cutoff 7.5
compute rdf all rdf 120 1 1 cutoff 6.0
fix rdf all ave/time {every} {n} {steps} c_rdf[*] file rdf_oo.dat mode vector
run {steps}
"""


def model_rdf_input(model, seed, equil, steps, every, thermo):
    """lmp-aisci input of a model's NVT run at 300 K (0.5 fs) sampling g_OO like the
    teacher reference (120 bins to 6 A) into rdf_oo.dat; reads frame.data
    (``model_start_frame``)."""
    return MODEL_RDF_INPUT.format(model=model, seed=seed, equil=equil, steps=steps,
                                  every=every, n=steps // every, thermo=thermo)


def model_start_frame(frames):
    """The last 64-molecule frame at 300 K and 1.0 g/cm3 of the data set (``frames`` from
    potentials.common.evaluate.load_frames) as a LAMMPS data file (atom_style atomic,
    types O H). Returns (data text, O number density in 1/A^3)."""
    sel = [f for f in frames if len(f["types"]) == 192 and f["temperature"] == 300.0
           and f["density"] == 1.0]
    if not sel:
        raise ValueError("no 64-molecule frame at 300 K, 1.0 g/cm3 in the data set")
    frame = sel[-1]
    L = frame["cell"][0, 0]
    lines = ["q-TIP4P/F water frame (potentials/data/water_qtip4pf_clean.npz)", "",
             "%d atoms" % len(frame["types"]), "2 atom types", "",
             "0 %.17g xlo xhi" % L, "0 %.17g ylo yhi" % L, "0 %.17g zlo zhi" % L, "",
             "Masses", "", "1 15.9994", "2 1.008", "", "Atoms # atomic", ""]
    lines += ["%d %d %.17g %.17g %.17g" % (k + 1, t + 1, p[0], p[1], p[2])
              for k, (t, p) in enumerate(zip(frame["types"], frame["positions"]))]
    return "\n".join(lines) + "\n", (len(frame["types"]) // 3) / L ** 3


def read_ave_time_rdf(path):
    """(r, g) of the last block of a ``fix ave/time ... mode vector`` file of compute rdf
    (rows: index r g(r) coord(r))."""
    rows = []
    with open(path) as f:
        for ln in f:
            s = ln.split()
            if not s or s[0].startswith("#"):
                continue
            if len(s) == 2:  # block header: timestep, number of rows
                rows = []
                continue
            rows.append([float(v) for v in s])
    a = np.array(rows)
    return a[:, 1], a[:, 2]


def read_rdf(path):
    """(r, g, g_sem, header lines) of a file written by this script."""
    header = [ln.rstrip("\n") for ln in open(path) if ln.startswith("#")]
    a = np.loadtxt(path, comments="#")
    return a[:, 0], a[:, 1], a[:, 2], header


def rdf_peak(r, g, rmin=2.4, rmax=3.2):
    """Position and height of the first O-O peak: parabola through the highest bin in
    [rmin, rmax] and its two neighbours (sub-bin position)."""
    sel = np.where((r >= rmin) & (r <= rmax))[0]
    k = sel[np.argmax(g[sel])]
    y0, y1, y2 = g[k - 1], g[k], g[k + 1]
    h = r[k + 1] - r[k]
    den = y0 - 2.0 * y1 + y2
    if den >= 0.0:  # not a maximum of the parabola: take the bin
        return float(r[k]), float(y1)
    d = 0.5 * (y0 - y2) / den
    return float(r[k] + d * h), float(y1 - 0.25 * (y0 - y2) * d)


def compare_rdf(r, g, g_ref, number_density, rcut=3.3, rmin=2.3, rmax=6.0):
    """Figures of a g(r) against a reference on the same bins: dict with the first-peak
    position and height of both (``rdf_peak``), coordination numbers to ``rcut``
    (4 pi rho sum g r^2 dr, rho = O atoms per A^3) and the mean absolute difference of g
    over [rmin, rmax]."""
    dr = r[1] - r[0]
    inner = r < rcut
    band = (r >= rmin) & (r <= rmax)
    p, h = rdf_peak(r, g)
    p_ref, h_ref = rdf_peak(r, g_ref)
    coord = 4.0 * np.pi * number_density * dr
    return {"peak_r": p, "peak_g": h, "peak_r_ref": p_ref, "peak_g_ref": h_ref,
            "coord": float(coord * np.sum(g[inner] * r[inner] ** 2)),
            "coord_ref": float(coord * np.sum(g_ref[inner] * r[inner] ** 2)),
            "mad": float(np.mean(np.abs(g[band] - g_ref[band])))}


def run_teacher(lmp, n_molecules, density, temperature, seed, equil, steps, every, bins, rmax,
                workdir):
    box = make_water_box(n_molecules, density, seed=seed)
    write_lammps_data(os.path.join(workdir, "data.water"), box)
    script = RDF_INPUT.format(qdist=QDIST, temp=temperature, seed=3000 + seed,
                              seed2=4000 + seed, equil=equil, steps=steps, every=every,
                              nsamples=steps // every, bins=bins, rmax=rmax)
    with open(os.path.join(workdir, "in.rdf"), "w") as f:
        f.write(script)
    proc = subprocess.run([lmp, "-in", "in.rdf", "-log", "log.lammps", "-screen", "none"],
                          cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    if proc.returncode != 0:
        raise RuntimeError("lmp failed (exit %d):\n%s" % (proc.returncode, proc.stdout[-2000:]))
    return read_ave_time_rdf(os.path.join(workdir, "rdf.dat"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="teacher_rdf_300K.txt")
    parser.add_argument("--lmp", default=os.environ.get("AISCI_TEACHER_LMP", "lmp"))
    parser.add_argument("--molecules", type=int, default=64)
    parser.add_argument("--density", type=float, default=1.0)
    parser.add_argument("--temperature", type=float, default=300.0)
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--equil", type=int, default=10000, help="steps of 0.5 fs")
    parser.add_argument("--steps", type=int, default=40000, help="sampled steps of 0.5 fs")
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--bins", type=int, default=120)
    parser.add_argument("--rmax", type=float, default=6.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    lmp = shutil.which(args.lmp)
    if lmp is None:
        sys.exit("teacher_rdf: LAMMPS executable '%s' not found (apt-get install lammps)"
                 % args.lmp)
    t0 = time.time()
    gs = []
    for k in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="aisci_rdf_") as work:
            r, g = run_teacher(lmp, args.molecules, args.density, args.temperature,
                               args.seed * 7919 + k, args.equil, args.steps, args.every,
                               args.bins, args.rmax, work)
        gs.append(g)
        pos, height = rdf_peak(r, g)
        print("run %d: first peak %.3f A, g = %.3f (%.0f s elapsed)" % (
            k, pos, height, time.time() - t0), flush=True)
    gs = np.array(gs)
    g = gs.mean(axis=0)
    sem = gs.std(axis=0, ddof=1) / np.sqrt(len(gs)) if len(gs) > 1 else np.zeros_like(g)
    pos, height = rdf_peak(r, g)
    peaks = np.array([rdf_peak(r, x) for x in gs])
    header = [
        "O-O g(r) of q-TIP4P/F water (teacher of potentials/), Debian LAMMPS %s" % lmp,
        "generated by: /usr/bin/python3 -m potentials.data.teacher_rdf %s" % " ".join(
            argv if argv is not None else sys.argv[1:]),
        "%d molecules, %.3f g/cm3, %.1f K, %d runs of %d equilibration + %d sampled steps "
        "of 0.5 fs (Langevin 100 fs, then Nose-Hoover 50 fs), sampled every %d steps"
        % (args.molecules, args.density, args.temperature, args.runs, args.equil, args.steps,
           args.every),
        "first peak: r = %.4f A, g = %.4f (spread over runs: r %.4f A, g %.4f)"
        % (pos, height, peaks[:, 0].std(), peaks[:, 1].std()),
        "columns: r (A, bin centre)  g_OO  standard error of g_OO over the runs",
    ]
    with open(args.out, "w") as f:
        for ln in header:
            f.write("# " + ln + "\n")
        for x, y, s in zip(r, g, sem):
            f.write("%.4f %.6f %.6f\n" % (x, y, s))
    print("wrote %s: first peak %.4f A, g = %.4f, %.0f s" % (args.out, pos, height,
                                                           time.time() - t0))


if __name__ == "__main__":
    main()
