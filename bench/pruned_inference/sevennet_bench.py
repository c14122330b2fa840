"""SevenNet-0 (a), its pruned versions (b) and our model (d) through pair_style aisci, in one run.

The first frame of the DFT water test system (data_3 of ../shared/deepmd-kit/water-dft,
192 atoms, 12.44 A box) runs NVE MD in ONE lmp-aisci process (1 rank: the periodic
graph, no 5-layer ghost shell); the pair style is re-issued for each model in turn,
each gets `warmup` untimed steps and `steps` timed ones, and the cycle is repeated
`repeats` times, interleaved, so that all models see the same machine load; the median
over repeats is printed, as atom-steps/s of the loop's wall time and of its CPU time
(LAMMPS's "% CPU use"), and the ratio to the first model (a).

    /usr/bin/python3 bench/pruned_inference/sevennet_bench.py --build build \
        [--models CACHE/water_sevennet0.pt CACHE/water_sevennet_pruned50_init.pt ...]

Without --models: water_sevennet0.pt, water_sevennet_pruned50_init.pt and
water_sevennet_pruned25_init.pt of the cache folder made by potentials/sevennet
(potentials/sevennet/model.py: $AISCI_SEVENN_CACHE or
$AISCI_PEERS/models/sevenn-pruned/v2), rows (a) and (b) of docs/equivariant.md ((c) has
(b)'s architectures, hence its cost), and our own equivariant DFT-water model,
potentials/models/water_equivariant_dft.pt, row (d). The cache files carry SevenNet-0's
weights and licence and are never in the repository; exit 77 (skip) when they are missing.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import aisci_run  # noqa: E402
OURS = os.path.join(ROOT, "potentials", "models", "water_equivariant_dft.pt")
DATA = os.environ.get("AISCI_WATER_DFT",
                      os.path.join(ROOT, "..", "shared", "deepmd-kit", "water-dft"))


def cache_dir():
    d = os.environ.get("AISCI_SEVENN_CACHE")
    if not d:
        peers = os.environ.get("AISCI_PEERS", os.path.expanduser("~/.cache/aisci-peers"))
        d = os.path.join(peers, "models", "sevenn-pruned", "v2")
    return d


def read_metadata(path):
    import torch
    extra = {"aisci_metadata": ""}
    torch.jit.load(path, _extra_files=extra)
    text = extra["aisci_metadata"]
    text = text.decode() if isinstance(text, bytes) else text
    return dict((k.strip(), v.strip()) for k, v in
                (l.split("=", 1) for l in text.splitlines() if "=" in l))


def write_frame(path, system=os.path.join(DATA, "data_3"), frame=0):
    x = np.load(os.path.join(system, "set.000", "coord.npy"))[frame].reshape(-1, 3)
    box = np.load(os.path.join(system, "set.000", "box.npy"))[frame].reshape(3, 3)
    t = np.loadtxt(os.path.join(system, "type.raw"), dtype=int).reshape(-1) + 1
    L = np.diag(box)
    x = x - np.floor(x / L) * L
    with open(path, "w") as f:
        f.write("DFT water frame\n\n%d atoms\n2 atom types\n\n" % len(x))
        f.write("0 %.16g xlo xhi\n0 %.16g ylo yhi\n0 %.16g zlo zhi\n\n" % tuple(L))
        f.write("Masses\n\n1 15.999\n2 1.008\n\nAtoms # atomic\n\n")
        for k in range(len(x)):
            f.write("%d %d %.16g %.16g %.16g\n" % (k + 1, t[k], *x[k]))
    return len(x)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--lmp", default=None)
    ap.add_argument("--models", nargs="+", default=None)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    lmp = os.path.abspath(args.lmp or os.path.join(args.build, "bin", "lmp-aisci"))
    models = args.models or [os.path.join(cache_dir(), n) for n in (
        "water_sevennet0.pt", "water_sevennet_pruned50_init.pt",
        "water_sevennet_pruned25_init.pt")] + [OURS]
    for m in models:
        if not os.path.exists(m):
            print("SKIPPED: model not found: %s (make it with potentials/sevennet/make_models.py)"
                  % m)
            sys.exit(77)
    work = tempfile.mkdtemp(prefix="aisci_sevennet_bench_")
    natoms = write_frame(os.path.join(work, "water.data"))
    lines = ["units metal", "atom_style atomic", "boundary p p p", "read_data water.data",
             "neighbor 1.0 bin", "velocity all create 300 12345 loop geom", "fix 1 all nve",
             "timestep 0.0005", "thermo %d" % args.steps]
    order = []
    for _ in range(args.repeats):
        for m in models:
            lines += ["pair_style aisci threads %d" % args.threads,
                      "pair_coeff * * %s O H" % os.path.abspath(m),
                      "run %d" % args.warmup, "run %d" % args.steps]
            order.append(m)
    with open(os.path.join(work, "in.bench"), "w") as f:
        f.write("\n".join(lines) + "\n")
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    print("running %d models x %d repeats (%d + %d steps each) in one lmp-aisci run; "
          "follow it in %s" % (len(models), args.repeats, args.warmup, args.steps,
                               os.path.join(work, "log.bench")), flush=True)
    p = subprocess.run([lmp, "-in", "in.bench", "-log", "log.bench", "-nocite"], cwd=work,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    out = p.stdout.decode(errors="replace")
    if p.returncode != 0:
        sys.exit("lmp-aisci failed:\n" + out[-3000:])
    timed = [(t, n, c) for (t, _, n, _), c in zip(aisci_run.loop_times(out),
                                                    aisci_run.cpu_use(out))][1::2]
    rates = {}
    for m, (t, n, c) in zip(order, timed):
        rates.setdefault(m, []).append((natoms * n / t, natoms * n / (t * c / 100.0)))
    print("DFT water frame: %d atoms, %d timed steps x %d interleaved repeats per model, "
          "%d thread(s), float64, one lmp-aisci run (%s); load before: %s"
          % (natoms, args.steps, args.repeats, args.threads, lmp,
             aisci_run.load_average().split()[0]))
    print("%-40s %-42s %11s %11s %7s %7s" % ("model", "node irreps x_1 .. x_4",
                                             "atom-step/s", "(CPU time)", "speed", "(CPU)"))
    ref = None
    for m in models:
        meta = read_metadata(m)
        ir = meta.get("irreps", "?").split()
        wall = float(np.median([r[0] for r in rates[m]]))
        cpur = float(np.median([r[1] for r in rates[m]]))
        if ref is None:
            ref = (wall, cpur)
        print("%-40s %-42s %11.1f %11.1f %7.2f %7.2f" % (
            os.path.basename(m), ",".join(ir[1:5])[:42], wall, cpur, wall / ref[0], cpur / ref[1]))
    print("median of %d interleaved repeats; speed = ratio to the first model; load after: %s"
          % (args.repeats, aisci_run.load_average().split()[0]))


if __name__ == "__main__":
    main()
