"""DPLR overlap benchmark: the step time of DPLR water MD with the PPPM solve overlapped
with the short-range network, without overlap, and of the two parts alone, in one run.

Four LAMMPS runs of the same box (potentials/dplr/water_wc.py: water with one WC atom
per molecule), one MPI rank, torch with one thread, NVE, interleaved and repeated:

    overlap     pair_style aisci + fix dplr + kspace_style pppm/dplr ... overlap yes
    no-overlap  the same with overlap no
    short       pair_style aisci alone (the short-range part)
    long        pair_style zero + fix dplr + pppm/dplr (the long-range part: DW forward
                and backward, WC placement, charge spreading, solve, interpolation)

It prints the best step time of each (ms/step, LAMMPS loop time / steps), the ratios
overlap / max(short, long) (target <= 1.1) and no-overlap / overlap, the LAMMPS timer
breakdown of the overlap run, and checks that overlap yes and no give the same energies.
The mesh is fixed (--mesh, "fine": a solve comparable to the network) so that both
parts matter.

    /usr/bin/python3 bench/dplr_overlap/dplr_overlap.py --build build \
        [--molecules 512] [--mesh 160] [--steps 10] [--warmup 3] [--repeats 2] [--sr M.pt]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "bench"))
from benchlib import first_error, loop_time  # noqa: E402
from potentials.data.water_box import write_lammps_data  # noqa: E402
from potentials.dplr.water_wc import make_dplr_water_box  # noqa: E402

MODELS = os.path.join(ROOT, "potentials", "models")
MODES = ("overlap", "no-overlap", "short", "long")


def script(mode, sr, dw, mesh, warmup, steps):
    pair = "pair_style zero 4.0\npair_coeff * *" if mode == "long" else \
        "pair_style aisci threads 1\npair_coeff * * %s O H NULL" % sr
    long_range = "" if mode == "short" else """kspace_style pppm/dplr 1e-5 overlap %s
kspace_modify gewald 0.4 mesh %d %d %d order 5
fix dplr all dplr model %s type_associate 1 3 bond_type 2 elements O H NULL threads 1
fix_modify dplr virial yes""" % ("no" if mode == "no-overlap" else "yes", mesh, mesh, mesh, dw)
    return """units metal
atom_style full
boundary p p p
read_data water.data
%s
bond_style zero
bond_coeff *
angle_style zero
angle_coeff *
neighbor 1.0 bin
%s
group real type 1 2
velocity real create 300.0 4928 mom yes rot no dist gaussian
fix nve real nve
timestep 0.0005
thermo_style custom step pe ke etotal
thermo_modify format float %%.15g
thermo %d
run %d
run %d
""" % (pair, long_range, steps, warmup, steps)


def timers(log):
    """LAMMPS timer breakdown (seconds) of the last run."""
    out = {}
    block = log[log.rfind("MPI task timing breakdown"):]
    for name in ("Pair", "Kspace", "Modify", "Neigh", "Comm", "Other"):
        m = re.search(r"^%s\s*\|\s*([0-9.eE+-]+)" % name, block, re.M)
        if m:
            out[name] = float(m.group(1))
    return out


def last_energy(log):
    rows = re.findall(r"^\s*\d+\s+(-?[0-9.eE+-]+)\s+[0-9.eE+-]+\s+(-?[0-9.eE+-]+)\s*$", log,
                      re.M)
    return (float(rows[-1][0]), float(rows[-1][1])) if rows else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--molecules", type=int, default=512)
    ap.add_argument("--mesh", type=int, default=160, help="PPPM mesh points per direction")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--sr", default=None, help="short-range model (default: "
                    "water_dplr_sr.pt if shipped, else water_matris.pt)")
    ap.add_argument("--dw", default=os.path.join(MODELS, "water_dw.pt"))
    args = ap.parse_args()

    lmp = os.path.abspath(os.path.join(args.build, "bin", "lmp-aisci"))
    if not os.path.exists(lmp):
        sys.exit("dplr_overlap: no launcher at %s (build first)" % lmp)
    sr = args.sr or os.path.join(MODELS, "water_dplr_sr.pt")
    if not os.path.exists(sr):
        sr = os.path.join(MODELS, "water_matris.pt")
    workdir = tempfile.mkdtemp(prefix="dplr_overlap_")
    write_lammps_data(os.path.join(workdir, "water.data"),
                      make_dplr_water_box(args.molecules, seed=11))
    env = dict(os.environ, OMP_NUM_THREADS="1", OMPI_MCA_mpi_yield_when_idle="1")
    print("dplr_overlap: %d molecules (%d atoms with WCs), mesh %d^3, %d timed steps after %d, "
          "best of %d\n  short-range model %s\n  DW model %s\n  uptime before: %s" % (
              args.molecules, 4 * args.molecules, args.mesh, args.steps, args.warmup,
              args.repeats, sr, args.dw, os.popen("uptime").read().strip()), flush=True)

    best, logs = {}, {}
    for rep in range(args.repeats):
        for mode in MODES:
            path = os.path.join(workdir, "in." + mode)
            with open(path, "w") as f:
                f.write(script(mode, sr, args.dw, args.mesh, args.warmup, args.steps))
            log = os.path.join(workdir, "log.%s.%d" % (mode, rep))
            subprocess.run([lmp, "-in", path, "-log", log, "-screen", "none", "-nocite"],
                           cwd=workdir, env=env, timeout=3600)
            t = loop_time(log)
            if t is None:
                sys.exit("dplr_overlap: %s run failed: %s" % (mode, first_error([log])))
            ms = 1000.0 * t / args.steps
            print("  repeat %d %-10s %9.1f ms/step" % (rep, mode, ms), flush=True)
            if mode not in best or ms < best[mode]:
                best[mode] = ms
                logs[mode] = open(log).read()

    short, long_, ov, no = best["short"], best["long"], best["overlap"], best["no-overlap"]
    print("\nbest step times (ms/step, 1 rank, torch 1 thread):")
    for mode in MODES:
        print("  %-10s %9.1f" % (mode, best[mode]))
    print("overlap / max(short, long) = %.3f   (target <= 1.1)" % (ov / max(short, long_)))
    print("no-overlap / overlap       = %.3f" % (no / ov))
    print("short + long / overlap     = %.3f" % ((short + long_) / ov))
    for mode in ("overlap", "no-overlap", "long"):
        t = timers(logs[mode])
        print("%-10s timers per step (ms): %s" % (mode, ", ".join(
            "%s %.1f" % (k, 1000.0 * v / args.steps) for k, v in t.items())))
    e_ov, e_no = last_energy(logs["overlap"]), last_energy(logs["no-overlap"])
    same = e_ov is not None and e_ov == e_no
    print("overlap yes/no final pe, etotal: %s / %s -> %s" % (
        e_ov, e_no, "identical" if same else "DIFFERENT"))
    print("uptime after: %s" % os.popen("uptime").read().strip())


if __name__ == "__main__":
    main()
