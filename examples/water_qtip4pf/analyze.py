#!/usr/bin/python3
"""Analyse the q-TIP4P/F PIMD example: bead-averaged RDFs, a figure, estimator summary.

Reads, in the run folder (default: the current one):
  rdf.bead<b>.dat     per-bead O-O, O-H, H-H RDFs (fix ave/time of compute rdf, in.pimd)
  rdf.classical.dat   classical RDFs from in.classical (optional, drawn for comparison)
  log.lammps.0        thermo output of partition 0 with the fix pimd/langevin estimators
Writes rdf_pimd.dat (bead-averaged RDFs), rdf.png and estimators.txt, and prints the
summary. Needs numpy and matplotlib (Debian: /usr/bin/python3).

Usage: analyze.py [run_folder] [--log log.lammps.0] [--nmol 216]
"""
import argparse
import glob
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from aisci_run import block_means, mean_stderr, read_log, thermo_runs  # noqa: E402

# Columns of compute rdf with three pairs: r, then g(r) and coordination for each pair.
PAIRS = (("O-O", 1), ("O-H", 3), ("H-H", 5))
# fix pimd/langevin output vector (nve/nvt), in the order of upstream LAMMPS.
ESTIMATORS = (
    ("f_pimd[1]", "bead kinetic energy (this bead)", "kcal/mol"),
    ("f_pimd[2]", "spring energy (this bead)", "kcal/mol"),
    ("f_pimd[3]", "bead potential energy (this bead)", "kcal/mol"),
    ("f_pimd[4]", "total energy", "kcal/mol"),
    ("f_pimd[5]", "primitive kinetic energy estimator", "kcal/mol"),
    ("f_pimd[6]", "virial kinetic energy estimator", "kcal/mol"),
    ("f_pimd[7]", "centroid-virial kinetic energy estimator", "kcal/mol"),
    ("f_pimd[8]", "primitive pressure estimator", "atm"),
    ("f_pimd[9]", "thermodynamic pressure estimator", "atm"),
    ("f_pimd[10]", "centroid-virial pressure estimator", "atm"),
)
KB_KCAL = 0.0019872043  # Boltzmann constant, kcal/mol/K


def read_ave_time_vector(path):
    """Blocks of a fix ave/time 'mode vector' file -> array (nblocks, nrows, ncols)."""
    blocks, rows, nrows = [], [], 0
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            vals = line.split()
            if nrows == 0:
                nrows = int(vals[1])
                rows = []
                continue
            rows.append([float(v) for v in vals[1:]])
            nrows -= 1
            if nrows == 0:
                blocks.append(rows)
    if not blocks:
        raise ValueError(f"{path}: no complete data block (run too short for one "
                         "RDF block?)")
    return np.array(blocks)


def read_thermo(path):
    """Thermo tables of a LAMMPS log -> list of (column names, rows as float arrays).

    Also returns the production start step from in.pimd's 'PRODUCTION START step N'."""
    m = re.search(r"^PRODUCTION START step (\d+)", read_log(path), re.M)
    runs = [(list(run), np.array(list(zip(*run.values())), dtype=float))
            for run in thermo_runs(path)]
    return runs, int(m.group(1)) if m else None


def block_error(x, nblocks=5):
    """Standard error of the mean from nblocks contiguous blocks (0 if too few samples)."""
    if len(x) // nblocks < 1:
        return float("nan")
    return mean_stderr(block_means(x, nblocks=nblocks))[1]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", nargs="?", default=".")
    p.add_argument("--log", default="log.lammps.0", help="partition log with estimators")
    p.add_argument("--nmol", type=int, default=216, help="water molecules in the box")
    p.add_argument("--temp", type=float, default=298.0, help="target temperature, K")
    a = p.parse_args(argv)
    os.chdir(a.folder)

    # ---- RDFs: every production block of every bead, averaged.
    files = sorted(glob.glob("rdf.bead*.dat"),
                   key=lambda s: int(re.search(r"bead(\d+)", s).group(1)))
    if not files:
        sys.exit("analyze.py: no rdf.bead*.dat in " + os.getcwd())
    blocks = [read_ave_time_vector(fn) for fn in files]
    nblocks = min(len(b) for b in blocks)
    per_bead = np.array([b[:nblocks].mean(axis=0) for b in blocks])
    rdf = per_bead.mean(axis=0)
    r = rdf[:, 0]
    header = "r(A) " + " ".join(f"g_{n} n_{n}" for n, _ in PAIRS)
    np.savetxt("rdf_pimd.dat", rdf, fmt="%.6g",
               header=f"bead-averaged RDFs over {len(files)} beads\n{header}")
    classical = None
    if os.path.exists("rdf.classical.dat"):
        classical = read_ave_time_vector("rdf.classical.dat")[-1]

    lines = [f"RDFs averaged over {len(files)} beads x {nblocks} blocks -> rdf_pimd.dat"]
    for name, col in PAIRS:
        g = rdf[:, col]
        first = np.argmax(g > 0.5)          # skip the excluded-volume region
        # Locate the first peak of each pair (the O-H and H-H ones are hydrogen bonds).
        lo = first
        hi = min(len(g), lo + int(1.2 / (r[1] - r[0])))
        k = lo + int(np.argmax(g[lo:hi]))
        msg = f"  {name}: first peak g = {g[k]:.3f} at r = {r[k]:.2f} A"
        if classical is not None:
            gc = classical[:, col]
            kc = lo + int(np.argmax(gc[lo:hi]))
            msg += f" (classical {gc[kc]:.3f} at {r[kc]:.2f} A)"
        lines.append(msg)

    # ---- Figure.
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8), sharex=True)
    for ax, (name, col) in zip(axes, PAIRS):
        ax.plot(r, rdf[:, col], color="C0", lw=1.6, label=f"PIMD, {len(files)} beads")
        if classical is not None:
            ax.plot(classical[:, 0], classical[:, col], color="C3", lw=1.0, ls="--",
                    label="classical")
        ax.axhline(1.0, color="0.7", lw=0.6)
        ax.set_title(f"{name} (intermolecular)")
        ax.set_xlabel("r (Å)")
        ax.set_xlim(0.0, r[-1])
    axes[0].set_ylabel("g(r)")
    axes[0].legend(frameon=False)
    fig.suptitle(f"q-TIP4P/F water, {a.nmol} molecules, {a.temp:g} K")
    fig.tight_layout()
    fig.savefig("rdf.png", dpi=120)
    lines.append("figure -> rdf.png")

    # ---- Estimators from the production run of partition 0.
    if os.path.exists(a.log):
        runs, start = read_thermo(a.log)
        prod = [(h, d) for h, d in runs if "f_pimd[5]" in h and len(d)]
        if prod:
            h, d = prod[-1]
            if start is not None:
                d = d[d[:, h.index("Step")] > start]
            lines.append(f"Estimators, production run ({len(d)} samples of {a.log}; "
                         "error: 5-block standard error):")
            for col, text, unit in ESTIMATORS:
                if col not in h or not len(d):
                    continue
                x = d[:, h.index(col)]
                lines.append(f"  {col:11s} {x.mean():14.4f} +- {block_error(x):10.4f} "
                             f"{unit:9s} {text}")
            classical_ke = 1.5 * 3 * a.nmol * KB_KCAL * a.temp
            for col, text in (("f_pimd[5]", "primitive"), ("f_pimd[7]", "centroid-virial")):
                if col in h and len(d):
                    ke = d[:, h.index(col)].mean()
                    lines.append(f"  {text} KE per molecule {ke / a.nmol:.3f} kcal/mol = "
                                 f"{ke / classical_ke:.3f} x classical (9/2 kT = "
                                 f"{classical_ke / a.nmol:.3f})")
        else:
            lines.append(f"no thermo rows with f_pimd[5] in {a.log}")
    else:
        lines.append(f"{a.log} not found: no estimator summary")

    text = "\n".join(lines) + "\n"
    with open("estimators.txt", "w") as f:
        f.write(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
