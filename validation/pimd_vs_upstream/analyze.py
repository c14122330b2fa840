#!/usr/bin/python3
"""Analyse validation/pimd_vs_upstream (run.py): ours against upstream LAMMPS's fix
pimd/langevin on q-TIP4P/F water, P = 8, 298 K.

Per code, from the production chunks (those after --nwarm steps; partial runs are used up
to their last finished chunk): the estimators of the output vector (partition 0's log;
they are sums over all beads, the same in every partition) and the intermolecular O-H RDF
of bead 0 (rdf.<code>.c<k>.0.dat, one record per 1000 steps).
Compared, ours vs upstream (see docs/validation.md for the definitions):
  primitive KE          f[5] vs f[5]
  centroid-virial KE    f[7] vs f[7]
  primitive pressure    f[8] vs 2 f[5] / (3V) + <W>/(3V): upstream's f[8] is
                        (N P kT - 2 E_spring / 3) / V, which leaves out the potential
                        virial and counts the spring energy P times where its own primitive
                        KE f[5] = 3 N P kT / 2 - E_spring / P divides it by P (checked on
                        every sample below); the textbook estimator is rebuilt from f[5] and
                        <W>/(3V), recovered from upstream's f[9] = (sum_j KE_j + sum_j W_j)
                        / (3V) (no 1/P, KE not converted to pressure units):
                        <W>/(3V) = (f[9] - sum_j KE_j / (3V)) / P, sum_j KE_j = sum of f[1]
                        over the partitions
  thermodynamic press.  f[9] vs f[10] (upstream's f[10] is this estimator: 2 K_centroid
                        + <W> - sum (x - xc).f / P)
  centroid-virial press f[10] vs f[10] (same mean as the thermodynamic one)
  O-H RDF peak          position and height (parabola through the highest bin of 1.5-2.3 A
                        and its neighbours)
Error bars: standard error of --nblocks block means (default 16: 0.25 ps blocks for 4 ps);
the decorrelation check recomputes it from half as many blocks (must not grow by more
than 1.5x) and needs the lag-1 correlation of the block means below 2/sqrt(nblocks).
Agreement: |difference| < 3 combined standard errors.

Usage: analyze.py [run_folder] [--nblocks 16] [--csv FILE] [--png FILE]
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
sys.path.insert(0, HERE)
from blocks import decorrelated, read_thermo, zscore  # noqa: E402

P = 8
NATOMS = 648                    # 216 molecules
KB = 0.0019872067               # kcal/mol/K (LAMMPS real units)
NKTV2P = 68568.415              # (kcal/mol/A^3) -> atm
TEMP = 298.0


def settings(wd):
    s = {"nwarm": 4000, "nprod": 16000, "chunk": 2000, "rdf_block": 1000}
    path = os.path.join(wd, "settings.txt")
    if os.path.exists(path):
        for line in open(path):
            k, v = line.split()
            s[k] = int(v)
    return s


def chunks_done(wd, code):
    out = []
    for path in glob.glob(os.path.join(wd, f"restart.{code}.c*.0")):
        out.append(int(re.search(r"\.c(\d+)\.0$", path).group(1)))
    return sorted(out)


def read_rdf(path):
    """Records of a fix ave/time vector file of compute rdf, each put on the common grid of
    common_rdf(): list of (r, g, N) arrays."""
    recs, cur, nrows = [], [], None
    for line in open(path):
        if line.startswith("#"):
            continue
        w = line.split()
        if len(w) == 2:
            if cur:
                recs.append(np.array(cur))
            cur, nrows = [], int(w[1])
            continue
        cur.append([float(v) for v in w[1:4]])
        if nrows is not None and len(cur) == nrows:
            recs.append(np.array(cur))
            cur = []
    return [common_rdf(c[:, 0], c[:, 1], c[:, 2]) for c in recs if len(c)]


RDF_BIN = 0.05                  # common bin width (A)
RDF_MAX = 6.0


def common_rdf(r, g, coord):
    """g(r) and the running coordination number N(r) on bins of RDF_BIN up to RDF_MAX,
    from one compute rdf record. The two LAMMPS versions bin differently (upstream
    4Feb2025's compute rdf takes its bin width from the pair cutoff even when the
    `cutoff` keyword is given: 9.29 A / 300 bins instead of 6 A / 300), so each record's
    running coordination number, which compute rdf gives at the outer edge of every bin,
    is interpolated to the common edges and differentiated there; the pair density
    that turns counts back into g is the record's own (counts / (shell volume x g))."""
    h = r[1] - r[0]
    edges = np.concatenate(([0.0], r + 0.5 * h))
    cum = np.concatenate(([0.0], coord))
    shell = 4.0 * np.pi / 3.0 * (edges[1:] ** 3 - edges[:-1] ** 3)
    counts = np.diff(cum)
    ok = (g > 0.5) & (r < RDF_MAX)
    rho = np.median(counts[ok] / (shell[ok] * g[ok]))
    e = np.arange(0.0, RDF_MAX + 1e-9, RDF_BIN)
    n = np.interp(e, edges, cum)
    gc = np.diff(n) / (rho * 4.0 * np.pi / 3.0 * (e[1:] ** 3 - e[:-1] ** 3))
    return 0.5 * (e[1:] + e[:-1]), gc, n[1:]


def peak(r, g, lo=1.5, hi=2.3):
    m = (r >= lo) & (r <= hi)
    idx = np.where(m)[0]
    i = idx[np.argmax(g[idx])]
    y0, y1, y2 = g[i - 1], g[i], g[i + 1]
    h = r[1] - r[0]
    den = y0 - 2 * y1 + y2
    d = 0.5 * (y0 - y2) / den if den != 0 else 0.0
    return r[i] + d * h, y1 - 0.25 * (y0 - y2) * d


def collect(wd, code, s):
    first = s["nwarm"] // s["chunk"]
    done = [c for c in chunks_done(wd, code) if c >= first]
    if not done:
        return None
    cols, rdf = {}, []
    for c in done:
        t0 = read_thermo(os.path.join(wd, f"log.{code}.c{c}.0"))
        # the first row of a chunk repeats the previous chunk's last step
        sl = slice(1, None) if c > first else slice(None)
        ke = None
        for path in sorted(glob.glob(os.path.join(wd, f"log.{code}.c{c}.*"))):
            if re.search(r"\.c\d+\.\d+$", path):
                t = read_thermo(path)
                ke = t["f_pimd[1]"] if ke is None else ke + t["f_pimd[1]"]
        t0["sumKE"] = ke
        for k, v in t0.items():
            cols.setdefault(k, []).append(v[sl])
        rdf += read_rdf(os.path.join(wd, f"rdf.{code}.c{c}.0.dat"))
    cols = {k: np.concatenate(v) for k, v in cols.items()}
    cols["pvir"] = (cols["f_pimd[9]"] - cols["sumKE"] / (3.0 * cols["Volume"])) / P
    return {"cols": cols, "rdf": rdf, "nchunks": len(done), "steps": len(done) * s["chunk"]}


QUANTS = (
    ("primitive KE (kcal/mol)", "f_pimd[5]", "f_pimd[5]"),
    ("centroid-virial KE (kcal/mol)", "f_pimd[7]", "f_pimd[7]"),
    ("primitive pressure (atm)", "f_pimd[8]", "p_prim_corrected"),
    ("thermodynamic pressure (atm)", "f_pimd[9]", "f_pimd[10]"),
    ("centroid-virial pressure (atm)", "f_pimd[10]", "f_pimd[10]"),
)


def pooled(per_run):
    """Pool replicate runs: per_run = [(mean, se, r1, ok), ...] from each run's blocks.
    Returns (mean, se, birge, ok): the mean of the run means, its standard error from the
    runs' block errors, multiplied by the Birge ratio sqrt(chi2 / (R - 1)) of the run
    means about their mean when that exceeds 1 (the runs scatter more than their block
    errors say: the blocks were correlated on a longer time than the check could see)."""
    m = np.array([x[0] for x in per_run])
    e = np.array([x[1] for x in per_run])
    ok = all(x[3] for x in per_run)
    mean = float(m.mean())
    se = float(math.sqrt((e * e).sum()) / len(m))
    birge = 1.0
    if len(m) > 1 and (e > 0).all():
        chi2 = float((((m - mean) / e) ** 2).sum())
        birge = math.sqrt(chi2 / (len(m) - 1))
    return mean, se * max(1.0, birge), birge, ok


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("workdirs", nargs="*", default=[os.path.join(HERE, "out")],
                   help="run folders of run.py: one, or several replicates (other --seed)")
    p.add_argument("--nblocks", type=int, default=16)
    p.add_argument("--csv", default=os.path.join(REPO, "docs", "figures", "pimd_vs_upstream_water.csv"))
    p.add_argument("--png", default=os.path.join(REPO, "docs", "figures", "pimd_vs_upstream_water.png"))
    a = p.parse_args(argv)
    runs = {c: [] for c in ("aisci", "upstream")}
    for wd in a.workdirs:
        s = settings(wd)
        for c in runs:
            d = collect(wd, c, s)
            print(f"{wd}: {c}: " + (f"{d['nchunks']} production chunks ({d['steps'] * 0.25 / 1000:.2f} ps), "
                                    f"{len(d['cols']['Step'])} samples, {len(d['rdf'])} RDF records"
                                    if d else "no production yet"))
            if d:
                runs[c].append(d)
    for u in (d["cols"] for d in runs["upstream"]):
        vol = u["Volume"]
        u["p_prim_corrected"] = 2.0 * u["f_pimd[5]"] * NKTV2P / (3.0 * vol) + u["pvir"]
        # upstream's f[8] as described above, from its own f[5]
        spring = P * (1.5 * NATOMS * P * KB * TEMP - u["f_pimd[5]"])
        model = (NATOMS * P * KB * TEMP - 2.0 * spring / 3.0) / vol * NKTV2P
        dev = np.max(np.abs(model - u["f_pimd[8]"]) / np.abs(u["f_pimd[8]"]))
        print(f"upstream's f[8] = (N P kT - 2 E_spring/3)/V with E_spring = P (3 N P kT/2 - f[5]): "
              f"largest relative deviation over {len(vol)} samples {dev:.2e}; its own mean "
              f"{float(np.mean(u['f_pimd[8]'])):.1f} atm")

    def series_stats(c, get, nblocks):
        per = []
        for d in runs[c]:
            x = get(d)
            if x is None or len(x) < 4:
                return None
            nb = nblocks if len(x) >= 4 * nblocks else max(2, len(x) // 4)
            per.append(decorrelated(x, nb))
        if not per:
            return None
        return pooled(per), [x[0] for x in per]

    rows = []
    for label, ko, ku in QUANTS:
        rows.append((label, series_stats("aisci", lambda d: d["cols"][ko], a.nblocks),
                     series_stats("upstream", lambda d: d["cols"][ku], a.nblocks)))

    def rdf_values(what):
        def get(d):
            if len(d["rdf"]) < 4:
                return None
            if what == "N_OH":
                return [float(np.interp(2.4 - 0.5 * RDF_BIN, r, n)) for r, g, n in d["rdf"]]
            return [peak(r, g)[0 if what == "position" else 1] for r, g, _ in d["rdf"]]
        return get
    for what, label in (("position", "O-H RDF peak position (A)"), ("height", "O-H RDF peak height"),
                        ("N_OH", "H-bond coordination N_OH(2.4 A)")):
        rows.append((label, series_stats("aisci", rdf_values(what), 8),
                     series_stats("upstream", rdf_values(what), 8)))
    nrun = {c: len(runs[c]) for c in runs}
    lines = ["quantity,ours,ours_se,ours_birge,ours_decorrelated,ours_runs,upstream,upstream_se,"
             "upstream_birge,upstream_decorrelated,upstream_runs,z"]
    print(f"runs pooled: ours {nrun['aisci']}, upstream {nrun['upstream']}; errors: block standard "
          f"errors of each run, times the Birge ratio of the run means where it exceeds 1")
    print(f"{'quantity':34s} {'ours':>20s} {'upstream':>20s} {'z':>6s}  Birge ours/upstream  "
          f"run means ours | upstream")
    zrows = []
    for lab, o, u in rows:
        if o is None or u is None:
            print(f"{lab:34s} incomplete")
            continue
        (m1, s1, b1, ok1), ms1 = o
        (m2, s2, b2, ok2), ms2 = u
        z = zscore(m1, s1, m2, s2)
        zrows.append((lab, z))
        print(f"{lab:34s} {m1:10.4g} +- {s1:7.3g} {m2:10.4g} +- {s2:7.3g} {z:6.2f}  {b1:5.2f}/{b2:5.2f}"
              f"  {' '.join(f'{x:.4g}' for x in ms1)} | {' '.join(f'{x:.4g}' for x in ms2)}"
              + ("" if ok1 and ok2 else "  (a run failed the block decorrelation check)"))
        lines.append(",".join(str(x) for x in (lab, m1, s1, b1, ok1, len(ms1), m2, s2, b2, ok2,
                                               len(ms2), z)))
    os.makedirs(os.path.dirname(a.csv), exist_ok=True)
    with open(a.csv, "w") as f:
        f.write("\n".join(lines) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("analyze.py: no matplotlib, figure skipped")
        return 0
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.8))
    for c, style in (("aisci", "-"), ("upstream", "--")):
        recs = [x for d in runs[c] for x in d["rdf"]]
        if recs:
            r = recs[0][0]
            g = np.mean([x[1] for x in recs], axis=0)
            ps = sum(d["steps"] for d in runs[c]) * 0.25 / 1000
            ax[0].plot(r, g, style, label=f"{'ours' if c == 'aisci' else 'upstream'} "
                       f"({len(runs[c])} runs, {ps:.0f} ps)")
    ax[0].set_xlim(1.0, 6.0)
    ax[0].set_xlabel("r (A)")
    ax[0].set_ylabel("g_OH(r), intermolecular")
    ax[0].legend()
    ax[0].set_title("q-TIP4P/F, P = 8, 298 K")
    if zrows:
        ax[1].barh([z[0] for z in zrows], [z[1] for z in zrows])
        ax[1].axvline(-3, color="k", ls=":")
        ax[1].axvline(3, color="k", ls=":")
        ax[1].set_xlabel("(ours - upstream) / combined standard error")
    fig.tight_layout()
    fig.savefig(a.png, dpi=110)
    print(f"wrote {a.csv} and {a.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
