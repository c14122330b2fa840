#!/usr/bin/python3
"""Analyse validation/dft_water/pimd: quantum water with our DFT-trained model, against P.

Reads the run folder of run.sh (default
~/.cache/aisci-runs/dft_water_pimd/water_equivariant_dft):
  log.P<P>.seg<k>[.<partition>]   thermo of in.pimd every 20 steps (step, time, temp, pe,
                                  f_pimd[4], v_kO, v_kH: centroid-virial kinetic energy
                                  per O and per H atom, eV); production follows the line
                                  'PRODUCTION START'. Segments (restarts after a stop)
                                  are joined by step; a step seen twice is taken once.
  rdf.P<P>.<partition>.from<step>.dat  O-O, O-H, H-H RDF blocks (one per rdf_block steps)
                                  of the partition's first bead, all pairs (no molecule
                                  information: the intramolecular O-H and H-H peaks are
                                  included; the peak windows pick the intermolecular
                                  ones); at a given step the partitions' blocks are
                                  averaged (they are not independent samples), then
                                  blocks are the samples.
  nve.txt                         the NVE drift of run.sh's stability check
Error bars: standard error of block means (--block steps, default 1000 = 0.5 ps).
Prints the table, writes --csv and --png, and puts the q-TIP4P/F results of the same
analysis (docs/figures/water_pimd_convergence.csv, 64 molecules at 298 K,
validation/water_pimd) beside them.

DPLR runs (run.sh with a DPLR short-range model) are read the same way; --compare
CSV=LABEL (repeatable) draws the rows of another model's CSV of this analysis beside them
(e.g. docs/figures/dft_water_pimd.csv=water_equivariant_dft.pt: K_H, K_O and the first
RDF peaks as markers), and --rdf-csv writes the RDF curves (mean and standard error per P).

Usage: analyze.py [run_folder] [--csv FILE] [--png FILE] [--block 1000]
                  [--compare CSV=LABEL ...] [--rdf-csv FILE]
"""
import argparse
import glob
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(REPO, "validation", "water_pimd"))
from analyze import (PAIRS, block_stats, rdf_blocks_by_step, read_production,  # noqa: E402
                     summarize_rdf)  # the q-TIP4P/F analysis's helpers

KB_EV = 8.617333262e-5
TEMP = 300.0
DT_PS = 0.5e-3
THERMO_EVERY = 20
QTIP4PF_CSV = os.path.join(REPO, "docs", "figures", "water_pimd_convergence.csv")


def thermo_rows(logs):
    """Production rows of all segments of one P (partition 0's logs), joined by step."""
    by_step = {}
    for log in logs:
        th = read_production(log)
        if th is None:
            continue
        for k, step in enumerate(th["Step"]):
            by_step[int(step)] = {c: th[c][k] for c in th}
    steps = sorted(by_step)
    if not steps:
        return None
    return {c: np.array([by_step[s][c] for s in steps]) for c in by_step[steps[0]]}


def analyse_p(folder, P, per):
    logs = [p for p in glob.glob(os.path.join(folder, "log.P%d.seg*" % P))
            if re.search(r"\.seg\d+(\.0)?$", p)]   # partition 0 (or the only one)
    logs.sort(key=lambda p: int(re.search(r"\.seg(\d+)", p).group(1)))
    th = thermo_rows(logs)
    if th is None or len(th["Step"]) < 2 * per:
        return None
    nfull = len(th["Step"]) // per * per
    res = {"P": P, "steps": nfull * THERMO_EVERY,
           "complete": any("RUN COMPLETE" in open(p).read() for p in logs)}
    for key, col in (("kO", "v_kO"), ("kH", "v_kH"), ("temp", "Temp")):
        res[key], res[key + "_err"], res["nblocks"] = block_stats(th[col][:nfull], per)
    parts = {}
    for path in glob.glob(os.path.join(folder, "rdf.P%d.*.from*.dat" % P)):
        w = int(re.search(r"rdf\.P\d+\.(\d+)\.from", path).group(1))
        parts.setdefault(w, {}).update(rdf_blocks_by_step(path))
    if parts:
        common = sorted(set.intersection(*[set(b) for b in parts.values()]))
        blocks = [np.mean([parts[w][s] for w in parts], axis=0) for s in common]
        if len(blocks) >= 2:
            summarize_rdf(res, np.array(blocks))
    return res


def model_name(folder):
    """the model file of the run (its pair_coeff line in a log), else the folder name."""
    for path in sorted(glob.glob(os.path.join(folder, "log.P*"))):
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) >= 4 and p[0] == "pair_coeff" and "$" not in p[3]:
                    return os.path.basename(p[3])
    return os.path.basename(os.path.normpath(folder)) + ".pt"


def read_rows(path):
    """Rows of a CSV of numbers (header line first) as dicts."""
    if not os.path.exists(path):
        return []
    lines = open(path).read().split()
    head = lines[0].split(",")
    return [dict(zip(head, (float(v) for v in l.split(",")))) for l in lines[1:]]


def qtip4pf():
    """The q-TIP4P/F rows of the same analysis (P, K_H meV, err, g peaks)."""
    return read_rows(QTIP4PF_CSV)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?",
                    default=os.path.expanduser(
                        "~/.cache/aisci-runs/dft_water_pimd/water_equivariant_dft"))
    ap.add_argument("--csv", default=os.path.join(REPO, "docs", "figures", "dft_water_pimd.csv"))
    ap.add_argument("--png", default=os.path.join(REPO, "docs", "figures", "dft_water_pimd.png"))
    ap.add_argument("--block", type=int, default=1000, help="block length in steps")
    ap.add_argument("--compare", action="append", default=[], metavar="CSV=LABEL",
                    help="another model's CSV of this analysis, drawn beside (repeatable)")
    ap.add_argument("--rdf-csv", help="write the RDF curves (r, then g and its standard "
                    "error per pair and P)")
    a = ap.parse_args(argv)
    others = []
    for spec in a.compare:
        path, _, label = spec.partition("=")
        rows = read_rows(path)
        if not rows:
            sys.exit("analyze.py: --compare %s: no rows in %s" % (spec, path))
        others.append((label or os.path.basename(path), rows))
    per = a.block // THERMO_EVERY
    ps = sorted({int(m.group(1)) for m in (re.match(r"log\.P(\d+)\.seg", os.path.basename(p))
                                           for p in glob.glob(os.path.join(a.folder, "log.P*")))
                 if m})
    results = [r for r in (analyse_p(a.folder, P, per) for P in ps) if r]
    if not results:
        sys.exit("analyze.py: no production output with two blocks in %s" % a.folder)
    kt = 1.5 * KB_EV * TEMP * 1000.0
    print("classical 3/2 kT at %g K = %.2f meV" % (TEMP, kt))
    head = ("P,production_ps,complete,blocks,T_bead0_K,KE_O_meV,KE_O_err,KE_H_meV,KE_H_err,"
            "gOO_peak,gOO_peak_err,rOO_peak_A,gOH_peak,gOH_peak_err,rOH_peak_A,gHH_peak,"
            "gHH_peak_err,rHH_peak_A,rdf_blocks")
    lines = [head]
    print("%3s %6s %4s %17s %17s %15s %15s %15s" % ("P", "ps", "done", "K_O (meV)", "K_H (meV)",
                                                   "gOO max", "gOH max", "gHH max"))
    for r in results:
        pk = {n: r.get("pk" + n, (float("nan"),) * 4) for n, _, _ in PAIRS}
        vals = [r["P"], r["steps"] * DT_PS, int(r["complete"]), r["nblocks"], r["temp"],
                1e3 * r["kO"], 1e3 * r["kO_err"], 1e3 * r["kH"], 1e3 * r["kH_err"]]
        for n, _, _ in PAIRS:
            vals += [pk[n][0], pk[n][1], pk[n][2]]
        vals.append(r.get("rdf_blocks", 0))
        lines.append(",".join("%.6g" % v if isinstance(v, float) else str(v) for v in vals))
        print("%3d %6.2f %4s %8.2f +- %5.2f %8.2f +- %5.2f " % (
            r["P"], r["steps"] * DT_PS, "yes" if r["complete"] else "no", 1e3 * r["kO"],
            1e3 * r["kO_err"], 1e3 * r["kH"], 1e3 * r["kH_err"])
            + " ".join("%6.3f +- %5.3f" % (pk[n][0], pk[n][1]) for n, _, _ in PAIRS))
    for label, rows in others:
        print("\n%s (same analysis):" % label)
        for row in rows:
            print("%3d K_O %6.1f +- %.1f  K_H %6.1f +- %.1f meV   gOO %.2f  gOH %.2f  gHH %.2f" % (
                row["P"], row["KE_O_meV"], row["KE_O_err"], row["KE_H_meV"], row["KE_H_err"],
                row["gOO_peak"], row["gOH_peak"], row["gHH_peak"]))
    if a.rdf_csv:
        with_r = [r for r in results if "r" in r]
        if with_r:
            cols = [with_r[0]["r"]]
            head = ["r_A"]
            for r in with_r:
                for n, _, _ in PAIRS:
                    cols += [r["g" + n], r["g" + n + "_err"]]
                    head += ["g%s_P%d" % (n.replace("-", ""), r["P"]),
                             "g%s_P%d_err" % (n.replace("-", ""), r["P"])]
            np.savetxt(a.rdf_csv, np.array(cols).T, delimiter=",", header=",".join(head),
                       comments="", fmt="%.6g")
            print("wrote %s" % a.rdf_csv)
    q = qtip4pf()
    if q:
        print("\nq-TIP4P/F, 64 molecules, 298 K (validation/water_pimd, same analysis):")
        for row in q:
            print("%3d K_H %6.1f +- %.1f meV   gOO %.2f  gOH %.2f  gHH %.2f" % (
                row["P"], row["KE_H_meV"], row["KE_H_err_meV"], row["gOO_peak"],
                row["gOH_peak"], row["gHH_peak"]))
    nve = os.path.join(a.folder, "nve.txt")
    if os.path.exists(nve) and os.path.getsize(nve):
        print("\nstability: " + open(nve).read().strip())
    os.makedirs(os.path.dirname(os.path.abspath(a.csv)), exist_ok=True)
    with open(a.csv, "w") as f:
        f.write("\n".join(lines) + "\n")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 5, figsize=(20, 4))
    # K_O against P (the other models beside)
    x = ax[1]
    x.errorbar([r["P"] for r in results], [1e3 * r["kO"] for r in results],
               yerr=[1e3 * r["kO_err"] for r in results], fmt="o-", capsize=4,
               label="%s, 300 K" % model_name(a.folder))
    for k, (label, rows) in enumerate(others):
        x.errorbar([row["P"] for row in rows], [row["KE_O_meV"] for row in rows],
                   yerr=[row["KE_O_err"] for row in rows], fmt="^v"[k % 2] + "-.", capsize=4,
                   label="%s, 300 K" % label)
    x.axhline(1.5 * KB_EV * TEMP * 1000.0, color="gray", ls=":", label="classical 3/2 kT")
    x.set_xscale("log", base=2)
    x.set_xlabel("beads P")
    x.set_ylabel("centroid-virial KE per O (meV)")
    x.legend(fontsize=8)
    x = ax[0]
    x.errorbar([r["P"] for r in results], [1e3 * r["kH"] for r in results],
               yerr=[1e3 * r["kH_err"] for r in results], fmt="o-", capsize=4,
               label="%s, 300 K" % model_name(a.folder))
    marks = ("^", "v", "D")
    for k, (label, rows) in enumerate(others):
        x.errorbar([row["P"] for row in rows], [row["KE_H_meV"] for row in rows],
                   yerr=[row["KE_H_err"] for row in rows], fmt=marks[k % 3] + "-.", capsize=4,
                   label="%s, 300 K" % label)
    if q:
        x.errorbar([row["P"] for row in q], [row["KE_H_meV"] for row in q],
                   yerr=[row["KE_H_err_meV"] for row in q], fmt="s--", capsize=4,
                   label="q-TIP4P/F, 298 K")
    x.axhline(kt, color="gray", ls=":", label="classical 3/2 kT")
    x.set_xscale("log", base=2)
    ticks = sorted({r["P"] for r in results} | {int(row["P"]) for row in q} |
                   {int(row["P"]) for _, rows in others for row in rows})
    for xx in (x, ax[1]):
        xx.set_xticks(ticks)
        xx.set_xticklabels([str(t) for t in ticks])
    x.set_xlabel("beads P")
    x.set_ylabel("centroid-virial KE per H (meV)")
    x.legend(fontsize=8)
    colors = plt.cm.viridis(np.linspace(0, 0.9, len(results)))
    for k, (name, _, _) in enumerate(PAIRS):
        x = ax[k + 2]
        for c, r in zip(colors, results):
            if "r" not in r:
                continue
            g, e = r["g" + name], r["g" + name + "_err"]
            x.plot(r["r"], g, color=c, lw=1.2, label="P = %d" % r["P"])
            x.fill_between(r["r"], g - 2 * e, g + 2 * e, color=c, alpha=0.25, lw=0)
        key = "g%s" % name.replace("-", "")
        for j, (label, rows) in enumerate(others):   # first peaks of the other model
            x.plot([row["r%s_peak_A" % name.replace("-", "")] for row in rows],
                   [row[key + "_peak"] for row in rows], marks[j % 3], mfc="none", color="k",
                   ms=7, ls="none", label="%s first peaks (P = %s)"
                   % (label, ", ".join("%d" % row["P"] for row in rows)))
        x.set_xlim({"O-O": 2.2, "O-H": 1.0, "H-H": 1.0}[name], 6.0)
        if name == "H-H" and "r" in results[0]:   # all pairs: label the intramolecular peak
            r0, g0 = results[0]["r"], results[0]["gH-H"]
            sel = (r0 > 1.3) & (r0 < 1.8)
            i = np.argmax(np.where(sel, g0, -1.0))
            x.annotate("intramolecular H-H\n(the two H of one molecule)", xy=(r0[i], g0[i]),
                       xytext=(r0[i] + 0.45, 0.8 * g0[i]), fontsize=8,
                       arrowprops=dict(arrowstyle="->", lw=0.8),
                       bbox=dict(boxstyle="round", fc="white", ec="0.6"))
        if name == "O-H":   # all pairs (atom_style atomic): the covalent peak is off scale
            x.set_ylim(0.0, 2.5)
            x.set_title("covalent O-H peak (~1 A) off scale", fontsize=8)
        x.set_xlabel("r (A)")
        x.set_ylabel("g_%s(r)" % name)
        x.legend(fontsize=8)
    fig.suptitle("DFT water (64 H2O, %s%s), fix pimd/langevin at 300 K "
                 % (model_name(a.folder), " + DW model, DPLR" if "dplr" in model_name(a.folder)
                    else "") +
                 "(bands: +-2 standard errors of block means)", fontsize=10)
    fig.tight_layout()
    fig.savefig(a.png, dpi=110)
    print("wrote %s and %s" % (a.csv, a.png))
    return 0


if __name__ == "__main__":
    sys.exit(main())
