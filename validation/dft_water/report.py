#!/usr/bin/env python3
"""Table and learning-curve figure of the DFT-water comparison (run_queue.py's results).

  /usr/bin/python3 validation/dft_water/report.py [--results DIR] [--png FILE]

Prints a Markdown table (test RMSE on data_3 against the CPU budget, per model) and draws
the learning curves (test force RMSE against CPU seconds; energy in a second panel)."""
import argparse
import csv
import glob
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", default=os.path.join(HERE, "results"))
    ap.add_argument("--png", default=os.path.join(REPO, "docs", "figures", "dft_water_curves.png"))
    args = ap.parse_args()
    rows = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(args.results, "*.json")))]
    if not rows:
        raise SystemExit("report: no results in %s (run run_queue.py first)" % args.results)
    rows.sort(key=lambda r: (r["budget_cpu_s"], r["job"]))
    print("| job | code | model | budget (CPU s) | CPU used (s) | steps | test E RMSE (meV/atom) "
          "| test F RMSE (meV/A) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %s | %s | %d | %.0f | %s | %.3f | %.1f |" % (
            r["job"], "ours" if r["job"].startswith("ours") else "DeePMD-kit", r["model"],
            r["budget_cpu_s"], r["cpu_s"], r.get("steps"), r["test_rmse_e_mev_per_atom"],
            r["test_rmse_f_mev_per_angstrom"]))
    for b in sorted({r["budget_cpu_s"] for r in rows}):
        at = [r for r in rows if r["budget_cpu_s"] == b]
        ours = [r for r in at if r["job"].startswith("ours")]
        peer = [r for r in at if not r["job"].startswith("ours")]
        if ours and peer:
            bo = min(ours, key=lambda r: r["test_rmse_f_mev_per_angstrom"])
            bp = min(peer, key=lambda r: r["test_rmse_f_mev_per_angstrom"])
            print("\nbudget %d CPU s: best ours %s %.1f meV/A, best DeePMD-kit %s %.1f meV/A: "
                  "ours/peer = %.3f (target <= 1)" % (
                      b, bo["job"], bo["test_rmse_f_mev_per_angstrom"], bp["job"],
                      bp["test_rmse_f_mev_per_angstrom"],
                      bo["test_rmse_f_mev_per_angstrom"] / bp["test_rmse_f_mev_per_angstrom"]))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib missing: no figure)")
        return
    fig, ax = plt.subplots(1, 2, figsize=(11, 4.2))
    for r in rows:
        path = os.path.join(args.results, r["job"] + ".curve.csv")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            pts = list(csv.DictReader(f))
        x = [float(p["cpu_s"]) for p in pts]
        style = "-" if r["job"].startswith("ours") else "--"
        ax[0].plot(x, [float(p["test_rmse_f_mev_per_angstrom"]) for p in pts], style,
                   label=r["job"])
        ax[1].plot(x, [float(p["test_rmse_e_mev_per_atom"]) for p in pts], style,
                   label=r["job"])
    for a, what in zip(ax, ("force RMSE (meV/A)", "energy RMSE (meV/atom)")):
        a.set_xlabel("CPU seconds (process + children, 1 thread)")
        a.set_ylabel("test " + what)
        a.set_yscale("log")
        a.grid(alpha=0.3)
    ax[0].legend(fontsize=7)
    fig.suptitle("DFT water (DeePMD-kit water-dft): trained on data_0-2, tested on data_3")
    fig.tight_layout()
    fig.savefig(args.png, dpi=110)
    print("\nfigure: %s" % os.path.relpath(args.png, REPO))


if __name__ == "__main__":
    main()
