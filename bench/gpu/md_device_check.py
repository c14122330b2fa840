"""pair_style aisci MD on a device against the CPU, through lmp-aisci on 1 and 2 MPI ranks
(the ranks share the device): forces, potential energy and pressure at step 0 and after
20 NVE steps.

    python3 bench/gpu/md_device_check.py --build BUILD [--device cuda] [--mpiexec mpirun]

Reference: the CPU on the same number of ranks in the same precision (same domain
decomposition, so the same atoms and edges in the same order: what differs is the
device's arithmetic). Per component |a - b| <= tol * max(1, |b|), tol 1e-10 in float64
and 1e-5 in float32. Rank invariance on the CPU (2 ranks against 1) is printed too and
judged in float64 only: in float32 a different decomposition sums the same edges in
another order, which moved forces by up to 6e-5 relative on a 192-atom box here.
Exits 1 when any judged comparison fails. With --device cpu (run_gpu.sh --dry-run) only
the CPU runs and the rank-invariance rows are made.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "bench", "nn_inference"))
import aisci_run  # noqa: E402
TOL = {"float64": 1e-10, "float32": 1e-5}


def run(args, wd, device, dtype, ranks):
    script = """units metal
atom_style atomic
boundary p p p
read_data water.data
pair_style aisci threads 1 device %s precision %s
pair_coeff * * %s O H
neighbor 1.0 bin
velocity all create 300 12345 loop geom
fix 1 all nve
timestep 0.0005
thermo_style custom step pe press
thermo_modify format float %%.17g
thermo %d
dump d all custom %d forces.dump id fx fy fz
dump_modify d sort id format float %%.17g
run %d
""" % (device, dtype, args.model, args.steps, args.steps, args.steps)
    tag = "%s_%s_np%d" % (device.replace(":", ""), dtype, ranks)
    with open(os.path.join(wd, "in." + tag), "w") as f:
        f.write(script.replace("forces.dump", "forces." + tag))
    cmd = aisci_run.mpiexec_command(args.mpiexec, "md_device_check") + ["-n", str(ranks), args.lmp, "-in", "in." + tag,
                                       "-log", "log." + tag, "-nocite", "-screen", "none"]
    p = subprocess.run(cmd, cwd=wd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       env=dict(os.environ, OMP_NUM_THREADS="1"))
    log = open(os.path.join(wd, "log." + tag)).read() if os.path.exists(
        os.path.join(wd, "log." + tag)) else ""
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s\n%s" % (" ".join(cmd), p.returncode,
                                                          p.stdout.decode()[-2000:], log[-2000:]))
    thermo = {}
    for m in re.finditer(r"^\s*(\d+)\s+(\S+)\s+(\S+)\s*$", log, re.M):
        thermo[int(m.group(1))] = np.array([float(m.group(2)), float(m.group(3))])
    frames, lines = {}, open(os.path.join(wd, "forces." + tag)).read().splitlines()
    k = 0
    while k < len(lines):
        step, n = int(lines[k + 1]), int(lines[k + 3])
        frames[step] = np.array([[float(v) for v in l.split()[1:]]
                                 for l in lines[k + 9:k + 9 + n]])
        k += 9 + n
    return thermo, frames


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--mpiexec", default="mpirun")
    ap.add_argument("--atoms", type=int, default=300)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--model", default=os.path.join(ROOT, "potentials", "models",
                                                    "water_matris.pt"))
    args = ap.parse_args()
    args.lmp = os.path.join(os.path.abspath(args.build), "bin", "lmp-aisci")
    from potentials.data.water_box import make_water_box
    from nn_inference import write_atomic_data

    wd = tempfile.mkdtemp(prefix="aisci_mdcheck_")
    write_atomic_data(os.path.join(wd, "water.data"), make_water_box(args.atoms // 3, 1.0,
                                                                     seed=5))
    failures = 0
    print("%-8s %-10s %5s %-10s %6s %12s %12s %12s %s" % (
        "dtype", "device", "ranks", "against", "step", "max|dF|rel", "|dpe|rel", "|dpress|rel",
        "result"))

    def compare(label, ranks, against, got, ref, judged):
        nonlocal failures
        for step in (0, args.steps):
            rel = lambda a, b: float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b))))  # noqa
            df = rel(got[1][step], ref[1][step])
            de = rel(got[0][step][0], ref[0][step][0])
            dp = rel(got[0][step][1], ref[0][step][1])
            ok = max(df, de, dp) <= TOL[label[0]]
            failures += judged and not ok
            print("%-8s %-10s %5d %-10s %6d %12.2e %12.2e %12.2e %s" % (
                label[0], label[1], ranks, against, step, df, de, dp,
                ("ok" if ok else "FAIL") if judged else "(info)"), flush=True)

    for dtype in ("float64", "float32"):
        ref = {ranks: run(args, wd, "cpu", dtype, ranks) for ranks in (1, 2)}
        compare((dtype, "cpu"), 2, "cpu np1", ref[2], ref[1], dtype == "float64")
        if args.device == "cpu":
            continue
        for ranks in (1, 2):
            try:
                got = run(args, wd, args.device, dtype, ranks)
            except RuntimeError as e:
                print("%-8s %-10s %5d run failed: %s" % (dtype, args.device, ranks, e))
                failures += 1
                continue
            compare((dtype, args.device), ranks, "cpu np%d" % ranks, got, ref[ranks], True)
    print("md_device_check: %s (%s against the cpu, %d atoms, tol 1e-10 float64 / 1e-5 "
          "float32; work dir %s)" % ("PASS" if failures == 0 else "FAIL (%d)" % failures,
                                     args.device, args.atoms, wd))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
