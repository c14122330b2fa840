"""Pruned vs full equivariant models through pair_style aisci, in one LAMMPS run.

A water box (potentials/data/water_box.py, default 256 molecules = 768 atoms) runs NVE
MD in ONE lmp-aisci process; the pair style is re-issued for each model in turn
(full, pruned ..., from-scratch ...), each model gets `warmup` untimed steps, then
`steps` timed ones, and the whole cycle is repeated `repeats` times (best loop time per
model kept), so that all models see the same machine load. Printed per model:
atom-steps/s from the wall-clock loop time and from the loop's CPU time (LAMMPS's
"% CPU use"; with one thread the meaningful figure on a shared machine), the speed-up
over the first model, and beside it the model's test-set force RMSE against the
q-TIP4P/F teacher and its ratio to the first model's. The RMSE is evaluated here, after
the LAMMPS run (so it does not disturb the timings), from Python in float64 on the 96
test frames (split seed 0) of --data, by default the clean-force labels
potentials/data/water_qtip4pf_clean.npz; the data set each model was trained on
(metadata train_data) is printed below the table.

    /usr/bin/python3 bench/pruned_inference/pruned_bench.py --build build \
        [--models potentials/models/water_equivariant_full.pt ...] [--molecules 256]
        [--steps 20] [--threads 1] [--data potentials/data/water_qtip4pf_clean.npz]

Without --models: the shipped water_equivariant_{full,pruned*,scratch*}.pt, full first.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import aisci_run  # noqa: E402


def read_metadata(path):
    import torch
    extra = {"aisci_metadata": ""}
    torch.jit.load(path, _extra_files=extra)
    text = extra["aisci_metadata"]
    text = text.decode() if isinstance(text, bytes) else text
    return dict((k.strip(), v.strip()) for k, v in
                (l.split("=", 1) for l in text.splitlines() if "=" in l))


def test_force_rmse(path, data):
    """Force RMSE (meV/A) of a model file on the test split of ``data``."""
    import torch
    from potentials.common.evaluate import load_frames, rmse_on_frames, split_frames
    from potentials.common.metadata import load_model

    torch.set_num_threads(1)
    module, meta = load_model(path)
    frames = load_frames(data)
    _, test_idx = split_frames(len(frames))
    rc3 = float(meta["cutoff_3body"]) if int(meta["needs_triplets"]) else 0.0
    return rmse_on_frames(module, frames, test_idx, float(meta["cutoff"]), rc3,
                          torch.float64)[1]


def default_models():
    d = os.path.join(ROOT, "potentials", "models")
    full = os.path.join(d, "water_equivariant_full.pt")
    rest = sorted(glob.glob(os.path.join(d, "water_equivariant_pruned*.pt")))
    rest += sorted(glob.glob(os.path.join(d, "water_equivariant_scratch*.pt")))
    return [full] + rest


def write_data(path, box):
    x, t, L = box["positions"], box["types"], box["box"]
    with open(path, "w") as f:
        f.write("water box\n\n%d atoms\n2 atom types\n\n" % len(x))
        f.write("0 %.16g xlo xhi\n0 %.16g ylo yhi\n0 %.16g zlo zhi\n\n" % tuple(L))
        f.write("Masses\n\n1 15.999\n2 1.008\n\nAtoms # atomic\n\n")
        for k in range(len(x)):
            f.write("%d %d %.16g %.16g %.16g\n" % (k + 1, t[k], *x[k]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--lmp", default=None, help="launcher (default BUILD/bin/lmp-aisci)")
    ap.add_argument("--models", nargs="+", default=None)
    ap.add_argument("--molecules", type=int, default=256)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--data", default=os.path.join(ROOT, "potentials", "data",
                                                   "water_qtip4pf_clean.npz"),
                    help="data set whose test split gives the force RMSE")
    args = ap.parse_args()
    from potentials.data.water_box import make_water_box

    lmp = os.path.abspath(args.lmp or os.path.join(args.build, "bin", "lmp-aisci"))
    models = args.models or default_models()
    for m in models:
        if not os.path.exists(m):
            sys.exit("model not found: %s" % m)
    work = tempfile.mkdtemp(prefix="aisci_pruned_bench_")
    box = make_water_box(args.molecules, 1.0, seed=7)
    write_data(os.path.join(work, "water.data"), box)
    natoms = len(box["positions"])
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
    best = {}
    for m, (t, n, c) in zip(order, timed):
        wall = natoms * n / t
        cpu_rate = natoms * n / (t * c / 100.0)
        b = best.get(m, (0.0, 0.0))
        best[m] = (max(b[0], wall), max(b[1], cpu_rate))
    print("water box: %d atoms, %d timed steps x %d repeats per model, %d thread(s), one "
          "lmp-aisci run (%s)" % (natoms, args.steps, args.repeats, args.threads, lmp))
    hdr = "%-34s %-10s %12s %12s %8s %8s %10s %8s" % (
        "model", "l0/l1/l2", "atom-step/s", "(CPU time)", "speed", "(CPU)", "F RMSE", "F ratio")
    print(hdr)
    print("%-34s %-10s %12s %12s %8s %8s %10s %8s" % ("", "", "wall", "", "vs 1st", "vs 1st",
                                                       "meV/A", "vs 1st"))
    ref = None
    trained_on = []
    for m in models:
        meta = read_metadata(m)
        ch = re.search(r"l0/l1/l2 = (\d+/\d+/\d+)", meta.get("description", ""))
        frmse = test_force_rmse(m, args.data)
        trained_on.append("%s: %s" % (os.path.basename(m), meta.get("train_data", "?")))
        wall, cpu_rate = best[m]
        if ref is None:
            ref = (wall, cpu_rate, frmse)
        print("%-34s %-10s %12.0f %12.0f %8.2f %8.2f %10.1f %8.3f" % (
            os.path.basename(m), ch.group(1) if ch else "?", wall, cpu_rate, wall / ref[0],
            cpu_rate / ref[1], frmse, frmse / ref[2]))
    print("F RMSE: test split of %s (float64, Python); trained on: %s"
          % (os.path.basename(args.data), "; ".join(trained_on)))


if __name__ == "__main__":
    main()
