"""MatRIS's own molecular dynamics against pair_style aisci on the same MatRIS checkpoint.

    /usr/bin/python3 bench/matris_peer/bench_matris_peer.py [--sizes 192,1536] [--big 5184]
        [--repeats 3] [--results FILE] [--torch-build DIR]

The checkpoint is made with the matris package (tests/lammps/matris_peer.py make ...:
random weights at the small architecture of tests/lammps/test_matris.py, 2 blocks,
16/16/8 features, 5 / 3 A: MatRIS's default architecture took more than this machine's
24 GB in our float64 forces on the 192-atom water frame, ~700 angles per atom) and
converted with potentials.matris.convert (float32, as MatRIS runs, and float64).

Water: frame 0 of the DFT water (water-dft/data_3, 192 atoms) and its 2x2x2 (1536) and
3x3x3 (5184, ours only: --big) replicas (4x4x4, 12288 atoms, was killed for memory at
24 GB in float32). One thread each side:
- peer: matris.applications.md.MolecularDynamics, NVE velocity Verlet 0.5 fs, task
  "ef" (its float32 model, its graph converter every step), in the matris venv;
- ours: lmp-aisci, fix nve 0.5 fs, thermo every 10 steps, the float32 and the float64
  export, with Debian's libtorch (build/) and, if --torch-build is given (a build
  against the venv's torch made by scripts/build-torch-peer.sh), with that one too.
Figures: atom-steps per second of the timed steps (after warm-up steps), peak resident
memory per atom of the whole process; repeats interleaved (peer, ours, ours, ... in turn),
the median kept, the load average printed before and after. Results are appended to
--results (one line per measurement) and the table is printed at the end.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "tests", "lammps"))
sys.path.insert(0, os.path.join(SRC, "scripts"))
import aisci_run  # noqa: E402
from deepmd_systems import data_file, dft_frame  # noqa: E402

PEERS = os.environ.get("AISCI_PEERS") or os.path.expanduser("~/.cache/aisci-peers")
PY = os.environ.get("AISCI_MATRIS_PYTHON") or os.path.join(PEERS, "matris", "bin", "python")
PEER = os.path.join(SRC, "tests", "lammps", "matris_peer.py")


def load():
    return aisci_run.load_average()


def water(reps):
    x, t, box = dft_frame(0)
    L = box[0, 0]
    x = np.mod(x, L)
    shifts = np.array([[i, j, k] for i in range(reps) for j in range(reps) for k in range(reps)])
    xs = np.concatenate([x + s * L for s in shifts])
    ts = np.tile(t, len(shifts))
    return xs, ts, L * reps


def timed(cmd, env=None, cwd=None):
    """(stdout+stderr, peak RSS in kB) of a command run under /usr/bin/time."""
    p = subprocess.run(["/usr/bin/time", "-f", "MAXRSS %M"] + cmd, capture_output=True, text=True,
                       env=env, cwd=cwd)
    out = p.stdout + p.stderr
    if p.returncode != 0:
        raise RuntimeError("%s failed:\n%s" % (" ".join(cmd[:3]), out[-3000:]))
    return out, int(re.findall(r"MAXRSS (\d+)", out)[-1])


def peer_run(ckpt, xs, ts, L, steps, work):
    inp = os.path.join(work, "frame.json")
    json.dump({"frames": [{"numbers": np.where(ts == 1, 8, 1).tolist(), "positions": xs.tolist(),
                           "cell": (np.eye(3) * L).tolist()}]}, open(inp, "w"))
    out = os.path.join(work, "md.json")
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", CUDA_VISIBLE_DEVICES="")
    _, rss = timed([PY, PEER, "md", ckpt, inp, str(steps), out], env=env)
    r = json.load(open(out))
    return r["atoms"] * r["steps"] / r["seconds"], rss


IN = """units metal
atom_style atomic
boundary p p p
read_data data.lmp
mass 1 15.999
mass 2 1.008
pair_style aisci threads 1
pair_coeff * * {model} O H
velocity all create 300 4928 mom yes rot yes
fix 1 all nve
timestep 0.0005
thermo 10
run {warm}
run {steps}
"""


def ours_run(lmp, model, xs, ts, L, steps, work):
    with open(os.path.join(work, "data.lmp"), "w") as f:
        f.write(data_file(xs, ts, L))
    with open(os.path.join(work, "in.bench"), "w") as f:
        f.write(IN.format(model=model, warm=2, steps=steps))
    env = dict(os.environ, OMP_NUM_THREADS="1")
    out, rss = timed([lmp, "-in", "in.bench", "-log", "none", "-nocite"], env=env, cwd=work)
    sec, _, n, atoms = aisci_run.loop_times(out)[-1]
    return int(atoms) * int(n) / float(sec), rss


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="192,1536")
    ap.add_argument("--big", type=int, default=5184,
                    help="ours only (0: none); 5184 = 3x3x3 frames; 12288 (4x4x4) needs more "
                         "than 24 GB in float32")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--results", default=os.path.join(HERE, "results.txt"))
    ap.add_argument("--torch-build", default=None, help="a build against the venv's torch")
    a = ap.parse_args()
    if not os.access(PY, os.X_OK):
        sys.exit("bench_matris_peer: needs the matris venv %s (scripts/install-peers.sh --only "
                 "matris)" % PY)
    work = tempfile.mkdtemp(prefix="aisci_matris_bench_")
    ckpt = os.path.join(work, "small.pth.tar")
    print("bench_matris_peer: making and converting the checkpoint (load %s)" % load(), flush=True)
    subprocess.run([PY, PEER, "make", ckpt, "small", "1"], check=True, capture_output=True)
    models = {}
    for dt in ("float32", "float64"):
        models[dt] = os.path.join(work, "small_%s.pt" % dt)
        subprocess.run([sys.executable, "-m", "potentials.matris.convert", ckpt, models[dt],
                        "--dtype", dt, "--matris-python", PY], check=True, capture_output=True,
                       cwd=SRC, env=dict(os.environ, PYTHONPATH=SRC))
    builds = {"debian": os.path.join(SRC, "build", "bin", "lmp-aisci")}
    if a.torch_build:
        builds["torch-venv"] = os.path.join(a.torch_build, "bin", "lmp-aisci")
    sizes = [int(s) for s in a.sizes.split(",")]
    plan = [(n, "peer", None, None) for n in sizes]
    for n in sizes + ([a.big] if a.big else []):
        for b in builds:
            # the venv-torch build in float32 only (MatRIS runs float32), and not at --big
            for dt in (("float32", "float64") if b == "debian" else ("float32",)):
                if n == a.big and b != "debian":
                    continue
                plan.append((n, "ours", b, dt))
    steps = {192: (20, 40), 1536: (10, 10), 5184: (0, 3), 12288: (0, 3)}
    res = {}
    with open(a.results, "a") as log:
        log.write("# %s  load %s\n" % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), load()))
        for rep in range(a.repeats):
            for n, side, b, dt in plan:
                reps = round((n / 192) ** (1 / 3))
                xs, ts, L = water(reps)
                ps, os_ = steps.get(n, (3, 5))
                d = tempfile.mkdtemp(dir=work)
                if side == "peer":
                    rate, rss = peer_run(ckpt, xs, ts, L, ps, d)
                    key = (n, "MatRIS ASE MD (float32, venv torch)")
                else:
                    key = (n, "lmp-aisci %s %s" % (b, dt))
                    try:
                        rate, rss = ours_run(builds[b], models[dt], xs, ts, L, os_, d)
                    except RuntimeError as exc:   # e.g. killed for memory at --big
                        line = "%6d  %-40s rep %d  failed: %s" % (
                            n, key[1], rep, str(exc).strip().splitlines()[-2:])
                        print(line, flush=True)
                        log.write(line + "\n")
                        continue
                res.setdefault(key, []).append((rate, rss / n))
                line = "%6d  %-40s rep %d  %10.1f atom-steps/s  %8.1f kB/atom  load %s" % (
                    n, key[1], rep, rate, rss / n, load())
                print(line, flush=True)
                log.write(line + "\n")
                log.flush()
    print("\nmedians (load now %s):" % load())
    for n in sorted({k[0] for k in res}):
        peer = res.get((n, "MatRIS ASE MD (float32, venv torch)"))
        if not any(res[k] for k in res if k[0] == n):
            continue
        p_rate = statistics.median(r for r, _ in peer) if peer else None
        for key in sorted(k for k in res if k[0] == n):
            rate = statistics.median(r for r, _ in res[key])
            mem = statistics.median(m for _, m in res[key])
            ratio = ("  %.1fx MatRIS" % (rate / p_rate)) if p_rate and "lmp" in key[1] else ""
            print("%6d  %-40s %10.1f atom-steps/s  %8.1f kB/atom%s" % (n, key[1], rate, mem, ratio))


if __name__ == "__main__":
    main()
