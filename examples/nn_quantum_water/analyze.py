#!/usr/bin/python3
"""Analyse the NN quantum-water example: classical against quantum RDFs and kinetic energy.

Reads, in the run folder of run.sh:
  log.classical.<w>       thermo of in.classical, replica w = 0, 1 (v_kH: kinetic energy
                          per H atom, eV); production follows 'PRODUCTION START'
  rdf.classical.<w>.dat   O-O, O-H, H-H RDF blocks of replica w (fix ave/time)
  log.pimd.0              thermo of in.pimd, partition 0 (v_kH, v_kO: centroid-virial
                          kinetic energy per H and per O atom, eV)
  rdf.pimd.<w>.dat        RDF blocks of partition w's first bead
Error bars: standard error of block means (--block steps). Classical blocks of both
replicas are independent samples; the PIMD partitions hold beads of the same ring
polymers, so their RDFs are averaged block by block first.
Writes rdf.png (RDFs and the kinetic energy of H) and summary.txt, and prints the summary.
Where docs/figures/dft_water_pimd.csv exists (the 5 ps runs of docs/validation.md with
water_equivariant_dft.pt), its values are printed beside ours for scale.

Usage: analyze.py [run_folder] [--block 100] [--nbeads 8] [--temp 300]
"""
import argparse
import glob
import math
import os
import sys

import numpy as np

KB_EV = 8.617333262e-5          # Boltzmann constant, eV/K
DT_PS = 0.5e-3                  # time step of in.classical and in.pimd, ps
THERMO_EVERY = 10               # thermo interval of both inputs, steps
# compute rdf columns (r, then g and coordination per pair) and the windows of the first
# intermolecular peaks; atom_style atomic has no molecules, so the RDFs also hold the
# intramolecular O-H (~1 A) and H-H (~1.55 A) peaks, which the figure marks and cuts
PAIRS = (("O-O", 1, (2.4, 3.2)), ("O-H", 3, (1.5, 2.3)), ("H-H", 5, (2.0, 2.8)))
INTRA = {"O-H": (0.7, 1.3, "intramolecular O-H bond"),
         "H-H": (1.2, 1.85, "intramolecular H-H")}
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
from aisci_run import block_means, mean_stderr, thermo_runs_after  # noqa: E402
REFERENCE = os.path.join(HERE, "..", "..", "docs", "figures", "dft_water_pimd.csv")


def read_production(path):
    """Production thermo rows of a log -> dict column -> array, or None."""
    runs = thermo_runs_after(path, "PRODUCTION START")
    if not runs or len(runs[0]["Step"]) < 2:
        return None
    # the first row repeats the last warm-up step
    return {h: np.array(v[1:]) for h, v in runs[0].items()}


def rdf_blocks(path):
    """fix ave/time mode vector file -> {step: array (nbins, ncols)}, complete blocks."""
    out, rows, left, step = {}, [], 0, None
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            v = line.split()
            if left == 0:
                step, left, rows = int(v[0]), int(v[1]), []
                continue
            rows.append([float(x) for x in v[1:]])
            left -= 1
            if left == 0:
                out[step] = np.array(rows)
    return out


def mean_err(samples):
    """Mean and standard error of independent samples (nan error below 2), and their number."""
    return mean_stderr(samples) + (len(samples),)


def peak(r, blocks, window):
    """First-peak height and position in the window, mean and error over blocks."""
    sel = np.where((r >= window[0]) & (r <= window[1]))[0]
    h, pos = [], []
    for g in blocks:
        i = sel[np.argmax(g[sel])]
        h.append(g[i])
        pos.append(r[i])
    return mean_err(h), mean_err(pos)


def need(paths, what):
    if not paths:
        sys.exit("analyze.py: no %s in the run folder (did run.sh finish?)" % what)
    return paths


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", default=os.path.join(HERE, "out"))
    ap.add_argument("--block", type=int, default=100, help="block length, steps")
    ap.add_argument("--nbeads", type=int, default=8)
    ap.add_argument("--temp", type=float, default=300.0, help="K")
    a = ap.parse_args(argv)
    os.chdir(a.folder)
    per = a.block // THERMO_EVERY
    k_classical = 1.5 * KB_EV * a.temp * 1000.0         # meV

    # kinetic energy of H: classical MD (1/2 m v^2) and PIMD (centroid virial), meV
    kc_blocks = []
    for log in need(sorted(glob.glob("log.classical.[0-9]")), "log.classical.<w>"):
        th = read_production(log)
        if th is not None:
            kc_blocks += list(block_means(th["v_kH"] * 1000.0, per_block=per))
    th = read_production(need(glob.glob("log.pimd.0"), "log.pimd.0")[0])
    if th is None:
        sys.exit("analyze.py: log.pimd.0 has no production rows")
    kq = mean_err(block_means(th["v_kH"] * 1000.0, per_block=per))
    ko = mean_err(block_means(th["v_kO"] * 1000.0, per_block=per))
    kc = mean_err(kc_blocks)
    t_ps = (th["Step"] - th["Step"][0] + THERMO_EVERY) * DT_PS

    # RDFs: classical blocks of both replicas; PIMD blocks averaged over the partitions
    cl = []
    for path in need(sorted(glob.glob("rdf.classical.[0-9].dat")), "rdf.classical.<w>.dat"):
        cl += list(rdf_blocks(path).values())
    parts = [rdf_blocks(p) for p in need(sorted(glob.glob("rdf.pimd.[0-9].dat")),
                                         "rdf.pimd.<w>.dat")]
    steps = sorted(set.intersection(*[set(p) for p in parts]))
    qu = [np.mean([p[s] for p in parts], axis=0) for s in steps]
    if not cl or not qu:
        sys.exit("analyze.py: no complete RDF block (runs shorter than --block?)")
    cl, qu = np.array(cl), np.array(qu)
    r = cl[0, :, 0]

    if not (np.isfinite([kq[0], ko[0], kc[0]]).all() and np.isfinite(cl).all()
            and np.isfinite(qu).all()):
        sys.exit("analyze.py: non-finite results (see the logs)")

    ref = {}
    if os.path.exists(REFERENCE):
        rows = open(REFERENCE).read().split()
        head = rows[0].split(",")
        for line in rows[1:]:
            d = dict(zip(head, (float(v) for v in line.split(","))))
            ref[int(d["P"])] = d

    nc = len(cl)
    lines = [
        "NN quantum water: 64 H2O, %g K, pair_style aisci, model water_equivariant_dft.pt"
        % a.temp,
        "classical: %d replica blocks of %g ps; PIMD: %d beads, %d blocks of %g ps"
        % (nc, a.block * DT_PS, a.nbeads, kq[2], a.block * DT_PS),
        "",
        "Kinetic energy per H atom (meV; +- standard error of block means):",
        "  classical, 3/2 kT (exact)                  %8.2f" % k_classical,
        "  classical MD, 1/2 m v^2                    %8.2f +- %.2f" % kc[:2],
        "  quantum, PIMD P=%-2d centroid-virial         %8.2f +- %.2f  = %.2f x classical"
        % (a.nbeads, kq[0], kq[1], kq[0] / k_classical),
        "  (per O atom: %.2f +- %.2f, classical %.2f)" % (ko[0], ko[1], k_classical),
    ]
    if a.nbeads in ref:
        d = ref[a.nbeads]
        lines.append("  reference, 5 ps at P=%d (docs/validation.md): K_H %.1f +- %.1f, K_O %.1f"
                     % (a.nbeads, d["KE_H_meV"], d["KE_H_err"], d["KE_O_meV"]))
    lines += ["", "First intermolecular RDF peaks, height g at r (A):   classical          quantum"]
    peaks = {}
    for name, col, window in PAIRS:
        (hc, hce, _), (pc, _, _) = peak(r, cl[:, :, col], window)
        (hq, hqe, _), (pq, _, _) = peak(r, qu[:, :, col], window)
        ratio = hq / hc
        peaks[name] = (ratio, ratio * math.hypot(hqe / hq, hce / hc))
        lines.append("  %-3s (window %.1f-%.1f A)              %5.2f +- %.2f at %.2f   %5.2f +- %.2f at %.2f"
                     % (name, window[0], window[1], hc, hce, pc, hq, hqe, pq))
    if 1 in ref and a.nbeads in ref:
        lines.append("  reference O-O, 5 ps (docs/validation.md):    %5.2f              %5.2f"
                     % (ref[1]["gOO_peak"], ref[a.nbeads]["gOO_peak"]))
    lines += ["", "Quantum nuclei: the kinetic energy of H is %.1f x its classical value (zero-point"
              % (kq[0] / k_classical),
              "motion of the O-H stretch and bend). First-peak heights, quantum / classical (below",
              "1: structure softened): "
              + ", ".join("%s %.2f +- %.2f" % (n, peaks[n][0], peaks[n][1]) for n, _, _ in PAIRS)
              + ".", "Short runs: first numbers, not converged ones (README.md).",
              "Files: %s/rdf.png, summary.txt" % os.getcwd()]
    text = "\n".join(lines) + "\n"
    open("summary.txt", "w").write(text)
    print(text, end="")
    plot(r, cl, qu, t_ps, th["v_kH"] * 1000.0, kq, kc, k_classical, a, ref)


def plot(r, cl, qu, t_ps, kh, kq, kc, k_classical, a, ref):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, 2, figsize=(10, 7.5))
    colours = {"classical": "tab:blue", "quantum": "tab:red"}
    for ax, (name, col, window) in zip(axes.flat, PAIRS):
        top = 0.0
        for label, blocks in (("classical", cl), ("quantum, P=%d" % a.nbeads, qu)):
            g = blocks[:, :, col]
            m = g.mean(axis=0)
            e = g.std(axis=0, ddof=1) / math.sqrt(len(g)) if len(g) > 1 else 0 * m
            c = colours[label.split(",")[0]]
            ax.plot(r, m, color=c, label=label)
            ax.fill_between(r, m - e, m + e, color=c, alpha=0.25, lw=0)
            inter = r > (INTRA[name][1] if name in INTRA else 0.0)
            top = max(top, m[inter].max())
        ax.set_ylim(0, 1.25 * top)
        if name in INTRA:
            lo, hi, what = INTRA[name]
            ax.axvspan(lo, hi, color="0.85", lw=0)
            gmax = cl[:, (r > lo) & (r < hi), col].mean(axis=0).max()
            ax.annotate("%s\n(classical peak g = %.0f, cut)" % (what, gmax),
                        xy=(hi, 1.15 * top), xytext=(hi + 0.15, 1.15 * top), ha="left",
                        va="center", fontsize=8, arrowprops=dict(arrowstyle="->", lw=0.8),
                        bbox=dict(boxstyle="round", fc="white", ec="0.7", alpha=0.9))
        ax.set_xlim(0.6, 6.0)
        ax.set_xlabel("r (A)")
        ax.set_ylabel("g(r)")
        ax.set_title("%s radial distribution function" % name)
        ax.legend(loc="lower right", fontsize=8)
    ax = axes[1, 1]
    ax.plot(t_ps, kh, color=colours["quantum"], lw=0.6, alpha=0.5,
            label="PIMD P=%d, centroid-virial estimator" % a.nbeads)
    ax.axhspan(kq[0] - kq[1], kq[0] + kq[1], color=colours["quantum"], alpha=0.3, lw=0)
    ax.axhline(kq[0], color=colours["quantum"],
               label="PIMD mean %.1f +- %.1f meV" % (kq[0], kq[1]))
    ax.axhline(k_classical, color=colours["classical"], ls="--",
               label="classical 3/2 kT = %.1f meV (MD: %.1f +- %.1f)" % (k_classical, kc[0], kc[1]))
    if a.nbeads in ref:
        d = ref[a.nbeads]
        ax.axhline(d["KE_H_meV"], color="0.3", ls=":",
                   label="5 ps reference at P=%d: %.1f meV" % (a.nbeads, d["KE_H_meV"]))
    ax.set_ylim(0, max(kh.max(), kq[0] * 1.3))
    ax.set_xlabel("production time (ps)")
    ax.set_ylabel("kinetic energy per H atom (meV)")
    ax.set_title("Quantum kinetic energy of H")
    ax.legend(loc="center right", fontsize=8, framealpha=0.9)
    fig.suptitle("Liquid water, 64 H2O, %g K, DFT-trained NN (water_equivariant_dft.pt): "
                 "classical vs quantum nuclei" % a.temp, fontsize=10)
    fig.tight_layout()
    fig.savefig("rdf.png", dpi=110)


if __name__ == "__main__":
    main()
