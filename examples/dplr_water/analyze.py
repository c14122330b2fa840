#!/usr/bin/python3
"""Compare the RDFs of the DPLR water run with the q-TIP4P/F teacher's.

Reads rdf.teacher.dat (in.teacher) and rdf.dplr.dat (in.dplr), fix ave/time files of
compute rdf with the pairs O-O, O-H, H-H, in the run folder (default: the current one);
averages each over its blocks and writes rdf_compare.txt (per pair: first-peak position
and height of both, and the RMS difference of g(r) over 2-6 A) and, when matplotlib is
there, rdf.png. Prints the summary.

Usage: analyze.py [run_folder]
"""
import importlib.util
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
# the RDF file reader and column layout of examples/water_qtip4pf/analyze.py
_spec = importlib.util.spec_from_file_location(
    "qtip4pf_analyze", os.path.join(HERE, "..", "water_qtip4pf", "analyze.py"))
_qtip4pf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_qtip4pf)
PAIRS, read_ave_time_vector = _qtip4pf.PAIRS, _qtip4pf.read_ave_time_vector


def first_peak(r, g, rmin):
    sel = r > rmin
    k = int(np.argmax(g[sel]))
    return r[sel][k], g[sel][k]


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "."
    rdf = {}
    for name in ("teacher", "dplr"):
        blocks = read_ave_time_vector(os.path.join(folder, "rdf.%s.dat" % name))
        rdf[name] = blocks.mean(axis=0)    # rows: bin, columns r, g1, c1, g2, c2, g3, c3
    r = rdf["teacher"][:, 0]
    lines = ["DPLR water vs q-TIP4P/F teacher: radial distribution functions",
             "pair   first peak teacher (r A, g)   first peak DPLR (r A, g)   "
             "RMS diff of g over 2-6 A"]
    window = (r > 2.0) & (r < 6.0)
    for label, col in PAIRS:
        # O-H and H-H: skip the intramolecular peaks (below 1.3 and 1.9 A)
        rmin = {"O-O": 2.0, "O-H": 1.3, "H-H": 1.9}[label]
        gt, gd = rdf["teacher"][:, col], rdf["dplr"][:, col]
        pt, pd = first_peak(r, gt, rmin), first_peak(r, gd, rmin)
        rms = float(np.sqrt(np.mean((gt[window] - gd[window]) ** 2)))
        lines.append("%-5s  %5.2f  %5.2f                  %5.2f  %5.2f               %.3f"
                     % (label, pt[0], pt[1], pd[0], pd[1], rms))
    text = "\n".join(lines) + "\n"
    with open(os.path.join(folder, "rdf_compare.txt"), "w") as f:
        f.write(text)
    print(text, end="")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("analyze.py: no matplotlib, rdf.png not drawn")
        return
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.5))
    for ax, (label, col) in zip(axes, PAIRS):
        ax.plot(r, rdf["teacher"][:, col], "k-", label="q-TIP4P/F teacher")
        ax.plot(r, rdf["dplr"][:, col], "r--", label="DPLR")
        ax.set_title(label)
        ax.set_xlabel("r (A)")
        ax.set_xlim(0.5, 6.0)
    axes[0].set_ylabel("g(r)")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "rdf.png"), dpi=120)


if __name__ == "__main__":
    main()
