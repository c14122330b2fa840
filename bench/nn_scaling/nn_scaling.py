"""NN scaling benchmark: ghost-feature exchange against the widened ghost shell for a
6-layer MatRIS-style model, against the number of atoms and of MPI ranks, in one run.

For each water box size N (potentials/data/water_box.py, 1 g/cm^3) and rank count P,
MD through pair_style aisci with

  ghost exchange  the model exchanges ghost-atom features between its layers; ghosts
                  within one cutoff (+ skin); edges of the owned atoms only;
  ghost widen     ghosts within 6 x cutoff + skin; every atom (owned and ghost) is a
                  centre, so each rank evaluates its whole receptive field;

both with `graph ghost` (also on one rank, where LAMMPS's periodic images then play
the role of the other ranks' atoms). Printed per run: atom-steps/s (LAMMPS loop time of
the timed steps; the force evaluation of the run's setup is the warm-up), peak RSS per rank (MB, /usr/bin/time), graph
atoms and edges per rank (from the pair style's log line), the energy of step 0 (both
modes must agree), and per (N, P) the ratio exchange / widened of atom-steps/s.

Runs whose estimated memory (all ranks together) exceeds --max-memory-gb are skipped,
and the skip is printed with its reason. The estimate is from the default model on
this machine: 0.2 GB per rank plus, per rank, 0.3 MB per owned atom (exchange) or
0.24 MB per graph atom, owned or ghost (widened shell: every graph atom is a centre),
half of that with --precision float32.

    /usr/bin/python3 bench/nn_scaling/nn_scaling.py --build build \
        [--sizes 1000 8000 27000 100000] [--ranks 1 2] [--steps 0]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import aisci_run  # noqa: E402
from potentials.common.export import model_metadata, save_model  # noqa: E402
from potentials.common.metadata import state_dict_checksum  # noqa: E402
from potentials.data.water_box import make_water_box  # noqa: E402
from potentials.matris.model import MatrisModel  # noqa: E402

DENSITY = 0.1003    # atoms per A^3 of water at 1 g/cm^3


def export_model(path, cutoff, cutoff_3body, channels, layers):
    """Untrained 6-layer MatRIS-style model with ghost exchange (cost per step is that
    of a trained one)."""
    torch.manual_seed(1)
    config = dict(num_types=2, cutoff=cutoff, cutoff_3body=cutoff_3body, num_layers=layers,
                  channels=channels, num_radial=8, lmax=2)
    model = MatrisModel(ghost_exchange=True, **config).to(torch.float64)
    scripted = torch.jit.script(model)
    meta = model_metadata("matris", config, ["O", "H"], "float64",
                          state_dict_checksum(scripted),
                          {"ghost_exchange": 1, "description": "nn_scaling bench model"})
    save_model(scripted, path, meta)
    return path


def write_data(path, n_atoms, seed=3):
    box = make_water_box(max(1, int(round(n_atoms / 3.0))), 1.0, seed=seed)
    x, t, L = box["positions"], box["types"], box["box"]
    with open(path, "w") as f:
        f.write("water box\n\n%d atoms\n2 atom types\n\n" % len(x))
        for k, a in enumerate("xyz"):
            f.write("0 %.12g %slo %shi\n" % (L[k], a, a))
        f.write("\nMasses\n\n1 15.9994\n2 1.008\n\nAtoms # atomic\n\n")
        for k, p in enumerate(x):
            f.write("%d %d %.10f %.10f %.10f\n" % (k + 1, t[k], p[0], p[1], p[2]))
    return len(x), float(L[0])


def graph_atoms(L, ranks, shell):
    """Estimated graph atoms per rank: sub-domain plus ghost shell (grid P x 1 x 1)."""
    return DENSITY * (L / ranks + 2 * shell) * (L + 2 * shell) ** 2


def memory_gb(n, L, ranks, mode, shell, scale=1.0):
    """Estimated peak memory of all ranks together (see the module docstring); scale 0.5
    for float32."""
    per_rank = scale * (0.3e-3 * n / ranks if mode == "exchange" else
                        0.24e-3 * graph_atoms(L, ranks, shell))
    return ranks * (0.2 + per_rank)


def run(args, data, model, n, ranks, mode, steps, workdir):
    script = """units metal
atom_style atomic
boundary p p p
read_data %s
pair_style aisci threads 1 ghost %s graph ghost precision %s
pair_coeff * * %s O H
neighbor 0.5 bin
neigh_modify every 1 delay 0 check yes
velocity all create 300 4928 loop geom
fix 1 all nve
timestep 0.0005
thermo_style custom step pe
thermo_modify format float %%.15g
%srun %d
""" % (data, mode, args.precision, model, "run %d\n" % args.warmup if args.warmup else "", steps)
    path = os.path.join(workdir, "in.%d.%d.%s" % (n, ranks, mode))
    with open(path, "w") as f:
        f.write(script)
    log = path.replace("in.", "log.")
    lmp = os.path.join(args.build, "bin", "lmp-aisci")
    cmd = ["/usr/bin/time", "-f", "AISCI_PEAK_RSS_KB %M", lmp, "-in", path, "-log", log,
           "-nocite", "-screen", "none"]
    if ranks > 1:
        cmd = [args.mpiexec] + aisci_run.mpi_flags(args.mpiexec, "nn_scaling") + \
            ["-n", str(ranks)] + cmd
    env = dict(os.environ, OMP_NUM_THREADS="1", OMPI_MCA_mpi_yield_when_idle="1")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                       cwd=workdir, timeout=args.timeout)
    out = p.stdout.decode(errors="replace")
    t = aisci_run.loop_time(log)
    rss = [int(v) / 1024.0 for v in re.findall(r"AISCI_PEAK_RSS_KB (\d+)", out)]
    if p.returncode != 0 or t is None:
        return {"error": aisci_run.first_error_in_logs([log]) + " " + out[-300:].replace("\n", " ")}
    text = open(log).read()
    pe = [float(m) for m in re.findall(r"^\s+0\s+(-?[0-9.eE+-]+)\s*$", text, re.M)]
    return {"steps": steps, "rate": n * steps / t, "time": t, "rss": rss, "pe0": pe[0] if pe else None,
            "ghost": (re.findall(r"ghost atom cutoff = ([0-9.]+)", text) or ["?"])[-1]}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 8000, 27000, 100000])
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--modes", nargs="+", default=["exchange", "widen"])
    ap.add_argument("--cutoff", type=float, default=3.5)
    ap.add_argument("--cutoff-3body", type=float, default=2.0)
    ap.add_argument("--channels", type=int, default=16)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--precision", choices=["float64", "float32"], default="float64",
                    help="pair_style aisci precision (float32 halves the memory per atom)")
    ap.add_argument("--steps", type=int, default=0,
                    help="timed steps (0: about 20000 atom-steps per run, 1 to 10, "
                         "1 for the widened shell)")
    ap.add_argument("--warmup", type=int, default=0, help="extra untimed steps")
    ap.add_argument("--max-memory-gb", type=float, default=14.0,
                    help="skip runs whose estimated memory (all ranks) exceeds this")
    ap.add_argument("--timeout", type=float, default=1800)
    args = ap.parse_args(argv)
    args.build = os.path.abspath(args.build)   # the runs work in a temporary folder

    workdir = tempfile.mkdtemp(prefix="aisci_nn_scaling_")
    model = export_model(os.path.join(workdir, "matris6.pt"), args.cutoff, args.cutoff_3body,
                         args.channels, args.layers)
    print("model: MatRIS-style, %d layers, cutoff %g A, 3-body cutoff %g A, %d channels, "
          "%s, 1 thread per rank; work in %s" % (args.layers, args.cutoff, args.cutoff_3body,
                                                 args.channels, args.precision, workdir))
    print("%7s %5s %8s %6s %9s %12s %9s %16s %18s" % (
        "atoms", "ranks", "mode", "steps", "ghost_A", "atom-steps/s", "us/atom", "peak RSS/rank MB",
        "energy0 (eV)"), flush=True)
    results = {}
    for n_req in args.sizes:
        data = os.path.join(workdir, "water_%d.data" % n_req)
        n, L = write_data(data, n_req)
        steps = args.steps or max(1, min(10, int(round(20000 / n))))
        for ranks in args.ranks:
            for mode in args.modes:
                shell = (args.layers if mode == "widen" else 1) * args.cutoff + 0.5
                est = memory_gb(n, L, ranks, mode, shell,
                                0.5 if args.precision == "float32" else 1.0)
                if est > args.max_memory_gb:
                    print("%7d %5d %8s   skipped: estimated %.0f GB (ghost shell %.1f A, ~%.0f "
                          "graph atoms per rank) > --max-memory-gb %g"
                          % (n, ranks, mode, est, shell, graph_atoms(L, ranks, shell),
                             args.max_memory_gb), flush=True)
                    continue
                r = run(args, data, model, n, ranks, mode,
                        steps if mode == "exchange" or args.steps else 1, workdir)
                if "error" in r:
                    print("%7d %5d %8s   failed: %s" % (n, ranks, mode, r["error"]), flush=True)
                    continue
                results[(n, ranks, mode)] = r
                print("%7d %5d %8s %6d %9s %12.1f %9.0f %16s %18.10f" % (
                    n, ranks, mode, r["steps"], r["ghost"], r["rate"], 1e6 / r["rate"] * ranks,
                    "/".join("%.0f" % v for v in r["rss"]), r["pe0"]), flush=True)
    print("\nexchange / widened (atom-steps/s; peak RSS, max over ranks):")
    for (n, ranks, mode), r in sorted(results.items()):
        w = results.get((n, ranks, "widen"))
        if mode != "exchange" or w is None:
            continue
        de = abs(r["pe0"] - w["pe0"]) / abs(w["pe0"])
        print("  %7d atoms, %d rank(s): speed %.2fx, memory %.2fx, energy rel diff %.1e"
              % (n, ranks, r["rate"] / w["rate"], max(r["rss"]) / max(w["rss"]), de))
    print("\nexchange, per atom vs N (us per atom-step x ranks; peak RSS per atom, kB):")
    for (n, ranks, mode), r in sorted(results.items()):
        if mode == "exchange":
            print("  %7d atoms, %d rank(s): %.0f us, %.1f kB" % (
                n, ranks, 1e6 / r["rate"] * ranks, max(r["rss"]) * 1024 * ranks / n))


if __name__ == "__main__":
    main()
