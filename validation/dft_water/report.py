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
    # one colour per model (code and architecture), one line style per CPU budget; the
    # energy panel shows a running median of 5 points (the raw points jump by 10x between
    # neighbours, DeePMD-kit's most: its curve points are lcurve's 3-frame validations)
    colours = {"ours-equivariant": ("tab:red", "ours: equivariant"),
               "ours-matris": ("tab:blue", "ours: MatRIS-style"),
               "ours-dpa3": ("tab:green", "ours: DPA3-style"),
               "deepmd-se_e2_a": ("tab:purple", "DeePMD-kit: se_e2_a"),
               "deepmd-dpa3": ("tab:brown", "DeePMD-kit: DPA3")}
    styles = {900: ":", 3600: "-"}
    fig, ax = plt.subplots(1, 2, figsize=(12, 4.4))
    for r in rows:
        path = os.path.join(args.results, r["job"] + ".curve.csv")
        key = r["job"].rsplit("-", 1)[0]
        if not os.path.exists(path) or key not in colours:
            continue
        with open(path) as f:
            pts = list(csv.DictReader(f))
        x = [float(p["cpu_s"]) for p in pts]
        colour, _ = colours[key]
        ls = styles.get(int(r["budget_cpu_s"]), "--")
        ax[0].plot(x, [float(p["test_rmse_f_mev_per_angstrom"]) for p in pts], ls, color=colour)
        e = [float(p["test_rmse_e_mev_per_atom"]) for p in pts]
        smooth = [sorted(e[max(0, k - 2):k + 3])[len(e[max(0, k - 2):k + 3]) // 2]
                  for k in range(len(e))]
        ax[1].plot(x, smooth, ls, color=colour)
    for a, what in zip(ax, ("test force RMSE (meV/A)",
                            "test energy RMSE (meV/atom),\nrunning median of 5 points")):
        a.set_xlabel("CPU seconds of training (1 thread, setup included)")
        a.set_ylabel(what)
        a.set_yscale("log")
        a.grid(alpha=0.3)
    from matplotlib.lines import Line2D
    handles = [Line2D([], [], color=c, label=l) for c, l in colours.values()]
    handles += [Line2D([], [], color="0.3", ls=ls, label="budget %d CPU s" % b)
                for b, ls in sorted(styles.items())]
    fig.legend(handles=handles, loc="center right", fontsize=9, frameon=False)
    fig.suptitle("DFT water (DeePMD-kit water-dft): trained on data_0-2, tested on data_3 "
                 "(curve points: 8 test frames for ours, 3 for DeePMD-kit)", fontsize=10)
    fig.tight_layout(rect=(0, 0, 0.83, 1))
    fig.savefig(args.png, dpi=110)
    print("\nfigure: %s" % os.path.relpath(args.png, REPO))


if __name__ == "__main__":
    main()
