#!/usr/bin/python3
"""docs/figures/nn_water_rdf.png: O-O g(r) of water MD with the shipped models
(pair_style aisci, lmp-aisci) against the teacher's (potentials/data/teacher_rdf_300K.txt).

Usage (Debian's interpreter with matplotlib; from the repository root)::

    /usr/bin/python3 docs/figures/nn_water_rdf.py --lmp build/bin/lmp-aisci \
        [--equil 2000] [--steps 4000] [--workdir /tmp/nn_rdf] [--reuse]

Each model: 64 molecules at 1.0 g/cm3 and 300 K, starting from the last 64-molecule
frame of potentials/data/water_qtip4pf_clean.npz at that state point (teacher MD),
Nose-Hoover NVT (50 fs), 0.5 fs steps, ``--equil`` steps of equilibration, then g_OO sampled
every 5 steps over ``--steps`` steps. The models run at the same time (one process each,
one thread). Writes nn_water_rdf.png and nn_water_rdf.csv (r, teacher g and its standard
error, the models' g) next to this script and prints the comparison figures
(potentials.data.teacher_rdf.compare_rdf)."""

import argparse
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from potentials.common.evaluate import load_frames  # noqa: E402
from potentials.data.teacher_rdf import (compare_rdf, model_rdf_input,  # noqa: E402
                                         model_start_frame, read_ave_time_rdf, read_rdf)

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ("matris", "dpa3")
LABELS = {"matris": "MatRIS-style (water_matris.pt)", "dpa3": "DPA3-style (water_dpa3.pt)"}

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lmp", default=os.path.join(ROOT, "build", "bin", "lmp-aisci"))
    ap.add_argument("--equil", type=int, default=2000)
    ap.add_argument("--steps", type=int, default=4000)
    ap.add_argument("--workdir", default="/tmp/nn_water_rdf")
    ap.add_argument("--reuse", action="store_true", help="plot existing runs in --workdir")
    args = ap.parse_args()

    data, rho = model_start_frame(
        load_frames(os.path.join(ROOT, "potentials", "data", "water_qtip4pf_clean.npz")))
    procs = {}
    for k, m in enumerate(MODELS):
        wd = os.path.join(args.workdir, m)
        os.makedirs(wd, exist_ok=True)
        if args.reuse:
            continue
        with open(os.path.join(wd, "frame.data"), "w") as f:
            f.write(data)
        with open(os.path.join(wd, "in.rdf"), "w") as f:
            f.write(model_rdf_input(os.path.join(ROOT, "potentials", "models", "water_%s.pt" % m),
                                    seed=4711 + k, equil=args.equil, steps=args.steps,
                                    every=5, thermo=500))
        env = dict(os.environ, OMP_NUM_THREADS="1")
        procs[m] = subprocess.Popen([args.lmp, "-in", "in.rdf", "-log", "log.lammps",
                                     "-screen", "none", "-nocite"], cwd=wd, env=env)
    for m, p in procs.items():
        if p.wait() != 0:
            sys.exit("%s: lmp-aisci failed, see %s" % (m, os.path.join(args.workdir, m)))

    r_t, g_t, sem_t, header = read_rdf(os.path.join(ROOT, "potentials", "data",
                                                    "teacher_rdf_300K.txt"))
    curves = {}
    for m in MODELS:
        r, g = read_ave_time_rdf(os.path.join(args.workdir, m, "rdf_oo.dat"))
        curves[m] = g
        c = compare_rdf(r, g, g_t, rho)
        print("%-6s first peak %.3f A g %.3f (teacher %.3f A g %.3f), coordination to 3.3 A "
              "%.2f (teacher %.2f), mean |dg| 2.3-6 A %.4f"
              % (m, c["peak_r"], c["peak_g"], c["peak_r_ref"], c["peak_g_ref"], c["coord"],
                 c["coord_ref"], c["mad"]))
    np.savetxt(os.path.join(HERE, "nn_water_rdf.csv"),
               np.column_stack([r_t, g_t, sem_t] + [curves[m] for m in MODELS]),
               fmt="%.6f", delimiter=",",
               header="r_A,g_teacher,sem_teacher,g_matris,g_dpa3 (64 molecules, 1.0 g/cm3, "
                      "300 K; models: %d + %d steps of 0.5 fs)" % (args.equil, args.steps))

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax, bx) = plt.subplots(2, 1, figsize=(6.4, 6.0), sharex=True,
                                 gridspec_kw={"height_ratios": [3, 1]})
    ax.fill_between(r_t, g_t - 2 * sem_t, g_t + 2 * sem_t, color="0.8", lw=0)
    ax.plot(r_t, g_t, "k-", lw=1.8, label="teacher q-TIP4P/F (Debian LAMMPS, 6 x 20 ps)")
    for m, style in zip(MODELS, ("C0--", "C3-.")):
        ax.plot(r_t, curves[m], style, lw=1.4,
                label="%s, %.1f ps" % (LABELS[m], args.steps * 0.0005))
        bx.plot(r_t, curves[m] - g_t, style, lw=1.2)
    bx.fill_between(r_t, -2 * sem_t, 2 * sem_t, color="0.8", lw=0)
    bx.axhline(0.0, color="k", lw=0.8)
    ax.set_xlim(2.0, 6.0)
    ax.set_ylabel("g_OO(r)")
    bx.set_ylabel("model - teacher")
    bx.set_xlabel("r (A)")
    ax.set_title("Water, 64 molecules, 1.0 g/cm3, 300 K (NVT)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "nn_water_rdf.png"), dpi=110)
    print("wrote %s" % os.path.join(HERE, "nn_water_rdf.png"))


if __name__ == "__main__":
    main()
