#!/usr/bin/python3
"""Analyse validation/water_pimd: convergence of q-TIP4P/F water PIMD with the bead number.

Reads, in the run folder written by run.sh (default validation/water_pimd/out), for every
P that has output:
  log.P<P>      thermo of in.pimd: step, f_pimd[4], f_pimd[7] (centroid-virial kinetic
                energy, kcal/mol), v_kO, v_kH (the same per O and per H atom), c_roh
                (mean O-H bond length, A), every 20 steps; the production part follows
                the line 'PRODUCTION START'
  rdf.P<P>.dat  O-O, O-H, H-H RDFs, one record per 1000 production steps
Runs that are still going are used up to their last complete block; several runs of one
P (log.P<P>.<label>, rdf.P<P>.<label>.dat) are pooled.
Error bars: standard error of block averages (blocks of --block steps, default 1000 =
0.25 ps; the centroid thermostat time is 0.1 ps and the scalars decorrelate faster),
sigma = std(block means) / sqrt(nblocks); --check-blocks prints the errors for blocks of
500, 1000 and 2000 steps so that the choice can be judged.
Writes --csv (table) and --png (figure) and prints the table.

Usage: analyze.py [run_folder] [--csv FILE] [--png FILE] [--block 1000]
Needs numpy and matplotlib (/usr/bin/python3 on Debian).
"""
import argparse
import glob
import math
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "scripts"))
from aisci_run import block_means, mean_stderr, thermo_runs_after  # noqa: E402
KB = 0.0019872043        # Boltzmann constant, kcal/mol/K
KCAL_TO_MEV = 43.36411   # 1 kcal/mol per particle in meV
TEMP = 298.0
THERMO_EVERY = 20        # in.pimd default
# compute rdf with three pairs: columns r, then (g, coordination) per pair
PAIRS = (("O-O", 1, (2.4, 3.2)), ("O-H", 3, (1.5, 2.3)), ("H-H", 5, (2.0, 2.8)))


def read_production(path):
    """Production thermo rows of log.P<P> -> dict column -> array (may be partial): the
    first thermo block after the line 'PRODUCTION START'."""
    runs = thermo_runs_after(path, "PRODUCTION START")
    if not runs or len(runs[0]["Step"]) < 2:
        return None
    # the first row repeats the last warm-up step
    return {h: np.array(v[1:]) for h, v in runs[0].items()}


def rdf_blocks_by_step(path):
    """fix ave/time mode vector file -> {timestep: array (nbins, ncols)}, complete blocks
    only (in file order)."""
    out, rows, left, step = {}, [], 0, None
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            vals = line.split()
            if left == 0:
                step, left, rows = int(vals[0]), int(vals[1]), []
                continue
            rows.append([float(v) for v in vals[1:]])
            left -= 1
            if left == 0:
                out[step] = np.array(rows)
    return out


def read_rdf_blocks(path):
    """fix ave/time mode vector file -> array (nblocks, nbins, ncols), complete blocks only."""
    blocks = list(rdf_blocks_by_step(path).values())
    return np.array(blocks) if blocks else None


def block_stats(values, per_block):
    """Mean and standard error of the block means (complete blocks only)."""
    nb = len(values) // per_block
    if nb < 2:
        return float(np.mean(values)), float("nan"), nb
    mean, err = mean_stderr(block_means(values, per_block=per_block))
    if err < 1e-12 * abs(mean):   # a constant (P = 1 kinetic energy): rounding only
        err = 0.0
    return mean, err, nb


def peak(r, g_blocks, window):
    """First-peak height (max of g in the window) and position, mean and error over blocks.
    The position is refined by a parabola through the maximum bin and its neighbours."""
    sel = np.where((r >= window[0]) & (r <= window[1]))[0]
    heights, positions = [], []
    for g in g_blocks:
        i = sel[np.argmax(g[sel])]
        y0, y1, y2 = g[i - 1], g[i], g[i + 1]
        den = y0 - 2 * y1 + y2
        shift = 0.5 * (y0 - y2) / den if den != 0 else 0.0
        heights.append(y1 - 0.25 * (y0 - y2) * shift)
        positions.append(r[i] + shift * (r[1] - r[0]))
    nb = len(heights)
    err = (lambda x: float(np.std(x, ddof=1) / math.sqrt(nb)) if nb > 1 else float("nan"))
    return (float(np.mean(heights)), err(heights), float(np.mean(positions)), err(positions))


def summarize_rdf(res, rdf):
    """From RDF blocks (nblocks, nbins, columns of compute rdf): res gets r, rdf_blocks and,
    per pair of PAIRS, the mean g, its standard error and the first-peak statistics."""
    res["r"] = rdf[0, :, 0]
    res["rdf_blocks"] = len(rdf)
    for name, col, window in PAIRS:
        g = rdf[:, :, col]
        res["g" + name] = g.mean(axis=0)
        res["g" + name + "_err"] = g.std(axis=0, ddof=1) / math.sqrt(len(g))
        res["pk" + name] = peak(res["r"], g, window)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", nargs="?", default=os.path.join(HERE, "out"))
    p.add_argument("--csv", default=os.path.join(REPO, "docs", "figures", "water_pimd_convergence.csv"))
    p.add_argument("--png", default=os.path.join(REPO, "docs", "figures", "water_pimd_convergence.png"))
    p.add_argument("--block", type=int, default=1000, help="block length in steps")
    p.add_argument("--check-blocks", action="store_true")
    a = p.parse_args(argv)

    # Runs of one P: log.P<P> and any log.P<P>.<label> (independent runs, e.g. a run cut
    # short and its restart with another seed) with rdf.P<P>[.<label>].dat; their blocks
    # are pooled (blocks from different runs are independent).
    runs = {}
    for log in glob.glob(os.path.join(a.folder, "log.P*")):
        m = re.match(r"log\.P(\d+)(\.[\w-]+)?$", os.path.basename(log))
        if m:
            runs.setdefault(int(m.group(1)), []).append((log, m.group(2) or ""))
    per = a.block // THERMO_EVERY
    results = []
    for nb in sorted(runs):
        series = {"v_kO": [], "v_kH": [], "c_roh": []}
        nsamples, rdf_blocks = 0, []
        for log, label in sorted(runs[nb]):
            th = read_production(log)
            if th is None:
                continue
            nfull = len(th["Step"]) // per * per
            for col in series:
                series[col].append(th[col][:nfull])
            nsamples += nfull
            rdf_path = os.path.join(a.folder, f"rdf.P{nb}{label}.dat")
            rdf = read_rdf_blocks(rdf_path) if os.path.exists(rdf_path) else None
            if rdf is not None:
                rdf_blocks.extend(list(rdf))
        if nsamples < 2 * per:
            print(f"P={nb}: fewer than two production blocks yet")
            continue
        res = {"P": nb, "steps": nsamples * THERMO_EVERY, "runs": len(series["v_kO"])}
        for key, col in (("kO", "v_kO"), ("kH", "v_kH"), ("roh", "c_roh")):
            vals = np.concatenate(series[col])
            res[key], res[key + "_err"], res["nblocks"] = block_stats(vals, per)
            if a.check_blocks:
                errs = [block_stats(vals, b // THERMO_EVERY)[1] for b in (500, 1000, 2000)]
                print(f"P={nb} {key}: errors for blocks of 500/1000/2000 steps: "
                      + " / ".join(f"{e:.2g}" for e in errs))
        if len(rdf_blocks) >= 2:
            summarize_rdf(res, np.array(rdf_blocks))
        results.append(res)

    if not results:
        sys.exit(f"analyze.py: no production output in {a.folder}")

    kt32 = 1.5 * KB * TEMP
    head = ("P,production_ps,blocks,KE_O_kcal_mol,KE_O_err,KE_H_kcal_mol,KE_H_err,KE_H_meV,"
            "KE_H_err_meV,r_OH_A,r_OH_err,gOO_peak,gOO_peak_err,rOO_peak_A,gOH_peak,"
            "gOH_peak_err,rOH_peak_A,gHH_peak,gHH_peak_err,rHH_peak_A,rdf_blocks")
    lines = [head]
    print(f"classical 3/2 kT at {TEMP:g} K = {kt32:.4f} kcal/mol = {kt32 * KCAL_TO_MEV:.2f} meV")
    print(f"{'P':>3s} {'ps':>5s} {'KE_O (kcal/mol)':>17s} {'KE_H (kcal/mol)':>17s} "
          f"{'KE_H (meV)':>13s} {'<r_OH> (A)':>18s} {'gOO max':>14s} {'gOH max':>14s} {'gHH max':>14s}")
    for r in results:
        pk = {n: r.get("pk" + n, (float("nan"),) * 4) for n, _, _ in PAIRS}
        vals = [r["P"], r["steps"] * 0.25e-3, r["nblocks"], r["kO"], r["kO_err"], r["kH"],
                r["kH_err"], r["kH"] * KCAL_TO_MEV, r["kH_err"] * KCAL_TO_MEV, r["roh"],
                r["roh_err"], pk["O-O"][0], pk["O-O"][1], pk["O-O"][2], pk["O-H"][0],
                pk["O-H"][1], pk["O-H"][2], pk["H-H"][0], pk["H-H"][1], pk["H-H"][2],
                r.get("rdf_blocks", 0)]
        lines.append(",".join(f"{v:.6g}" if isinstance(v, float) else str(v) for v in vals))
        print(f"{r['P']:3d} {r['steps'] * 0.25e-3:5.2f} {r['kO']:8.4f} +- {r['kO_err']:6.4f} "
              f"{r['kH']:8.4f} +- {r['kH_err']:6.4f} {r['kH'] * KCAL_TO_MEV:6.1f} +- "
              f"{r['kH_err'] * KCAL_TO_MEV:4.1f} {r['roh']:8.5f} +- {r['roh_err']:7.5f} "
              + " ".join(f"{pk[n][0]:6.3f} +- {pk[n][1]:5.3f}" for n, _, _ in PAIRS))
    os.makedirs(os.path.dirname(os.path.abspath(a.csv)), exist_ok=True)
    with open(a.csv, "w") as f:
        f.write("\n".join(lines) + "\n")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(2, 3, figsize=(13, 7.5))
    ps = [r["P"] for r in results]
    for k, (key, label) in enumerate((("kH", "centroid-virial KE per H (kcal/mol)"),
                                      ("kO", "centroid-virial KE per O (kcal/mol)"),
                                      ("roh", "mean O-H bond length (Å)"))):
        x = ax[0, k]
        x.errorbar(ps, [r[key] for r in results], yerr=[r[key + "_err"] for r in results],
                   fmt="o-", capsize=4)
        if key != "roh":
            x.axhline(kt32, color="gray", ls="--", label="classical 3/2 kT")
            x.legend(loc="center right")
        x.set_xscale("log", base=2)
        x.set_xticks(ps)
        x.set_xticklabels([str(q) for q in ps])
        x.set_xlabel("beads P")
        x.set_ylabel(label)
    colors = plt.cm.viridis(np.linspace(0, 0.9, len(results)))
    for k, (name, _, window) in enumerate(PAIRS):
        x = ax[1, k]
        for c, r in zip(colors, results):
            if "r" not in r:
                continue
            g, e = r["g" + name], r["g" + name + "_err"]
            x.plot(r["r"], g, color=c, lw=1.2, label=f"P = {r['P']}")
            x.fill_between(r["r"], g - 2 * e, g + 2 * e, color=c, alpha=0.25, lw=0)
        x.set_xlim(1.0 if name != "O-O" else 2.2, 6.0)
        x.set_xlabel("r (Å)")
        x.set_ylabel(f"g_{name}(r)")
        x.legend(fontsize=8)
    ax[1, 0].set_title("bands: ±2 standard errors (block averages)", fontsize=9)
    fig.suptitle("q-TIP4P/F water, 64 molecules, 298 K, fix pimd/langevin: convergence with P "
                 "(error bars: 1 standard error, block averages)", fontsize=11)
    fig.tight_layout()
    fig.savefig(a.png, dpi=110)
    print(f"wrote {a.csv} and {a.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
