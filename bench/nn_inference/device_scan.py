"""Throughput and device memory of pair_style aisci over system sizes, precisions and
devices: NVE MD of water boxes through lmp-aisci on one MPI rank, no Python driver.

    python3 bench/nn_inference/device_scan.py --build BUILD [--model M.pt]
        [--device cuda] [--sizes 1000 8000 27000 64000 100000]
        [--cpu-sizes 1000 8000 16000] [--dtypes float32 float64] [--csv out.csv]

For each precision: the sizes on --device, then the --cpu-sizes on one CPU core
(threads 1; float32 CPU runs stop at 8k atoms, float64 ones go to the largest
--cpu-size). atom-steps/s from LAMMPS's loop time of the timed run (after warm-up steps
in a first run command, which also take libtorch's first slow profiling calls). On a
CUDA device the GPU's used memory is sampled with nvidia-smi every 0.1 s while lmp-aisci
runs (--gpu-mem, on by default for cuda): peak minus the value before the start, and per
atom; the slope between sizes leaves out the CUDA context. A size that fails (out of
memory) ends that precision's scan on that device: the row says why, and the largest
size that ran is printed at the end. Then GPU / one-core speed-up at the sizes both ran.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aisci_run  # noqa: E402


class GpuMemory:
    """Peak used memory (MiB) of one GPU while a block runs, from nvidia-smi."""

    def __init__(self, index):
        self.index = index
        self.peak = 0.0

    def read(self):
        try:
            out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used",
                                  "--format=csv,noheader,nounits", "-i", str(self.index)],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=5)
            return float(out.stdout.decode().split()[0])
        except Exception:
            return float("nan")

    def __enter__(self):
        self.base = self.read()
        self.stop = False
        self.thread = threading.Thread(target=self.poll, daemon=True)
        self.thread.start()
        return self

    def poll(self):
        while not self.stop:
            v = self.read()
            if v == v:
                self.peak = max(self.peak, v)
            time.sleep(0.1)

    def __exit__(self, *exc):
        self.stop = True
        self.thread.join()


def run_md(lmp, wd, model, device, dtype, warmup, steps):
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
thermo %d
run %d
run %d
""" % (device, dtype, model, steps, warmup, steps)
    with open(os.path.join(wd, "in.scan"), "w") as f:
        f.write(script)
    p = subprocess.run([lmp, "-in", "in.scan", "-log", "log.scan", "-nocite"], cwd=wd,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       env=dict(os.environ, OMP_NUM_THREADS="1"))
    out = p.stdout.decode(errors="replace")
    if p.returncode != 0:
        lines = [l for l in out.splitlines() if "ERROR" in l] or out.splitlines()[-1:]
        return None, (lines[-1] if lines else "exit %d" % p.returncode)[:200]
    t, _, n, _ = aisci_run.loop_times(out)[-1]
    return t / n, ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--model", default=os.path.join(ROOT, "potentials", "models",
                                                    "water_matris.pt"))
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 8000, 27000, 64000, 100000])
    ap.add_argument("--cpu-sizes", type=int, nargs="*", default=[1000, 8000, 16000])
    ap.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    ap.add_argument("--cpu-float32-max", type=int, default=8000)
    ap.add_argument("--warmup", type=int, default=3, help="warm-up steps on the device")
    ap.add_argument("--cpu-warmup", type=int, default=1, help="warm-up steps on the CPU")
    ap.add_argument("--steps", type=int, default=10, help="timed steps on the device")
    ap.add_argument("--cpu-steps", type=int, default=2, help="timed steps on the CPU")
    ap.add_argument("--gpu-mem", choices=["on", "off"], default=None,
                    help="sample GPU memory with nvidia-smi (default: on for cuda)")
    ap.add_argument("--csv", default=None, help="also write the rows here")
    args = ap.parse_args()
    lmp = os.path.join(os.path.abspath(args.build), "bin", "lmp-aisci")
    model = os.path.abspath(args.model)
    gpu_mem = (args.gpu_mem or ("on" if args.device.startswith("cuda") else "off")) == "on"
    gpu_index = int(args.device.split(":")[1]) if ":" in args.device else 0
    from potentials.data.water_box import make_water_box
    from nn_inference import write_atomic_data

    workroot = tempfile.mkdtemp(prefix="aisci_devscan_")
    data = {}

    def data_dir(n):
        if n not in data:
            wd = os.path.join(workroot, "n%d" % n)
            os.makedirs(wd)
            box = make_water_box(n // 3, 1.0, seed=5)
            write_atomic_data(os.path.join(wd, "water.data"), box)
            data[n] = (wd, len(box["positions"]))
        return data[n]

    print("model %s; device %s; work dir %s" % (model, args.device, workroot), flush=True)
    print("%-8s %-8s %8s %14s %12s %12s %12s  %s" % ("device", "dtype", "atoms", "atom-steps/s",
                                                    "ms/step", "peak MiB", "KiB/atom", "note"))
    rows = []
    for dtype in args.dtypes:
        plan = [(args.device, n, args.steps, args.warmup) for n in args.sizes]
        if args.device != "cpu":
            cpu_max = max(args.cpu_sizes or [0]) if dtype == "float64" else args.cpu_float32_max
            plan += [("cpu", n, args.cpu_steps, args.cpu_warmup) for n in args.cpu_sizes
                     if n <= cpu_max]
        failed = set()
        for dev, n, steps, warmup in plan:
            if dev in failed:
                continue
            wd, natoms = data_dir(n)
            mem = None
            if dev.startswith("cuda") and gpu_mem:
                with GpuMemory(gpu_index) as m:
                    t, why = run_md(lmp, wd, model, dev, dtype, warmup, steps)
                mem = m.peak - m.base
            else:
                t, why = run_md(lmp, wd, model, dev, dtype, warmup, steps)
            if t is None:
                failed.add(dev)
                rows.append((dev, dtype, natoms, None, None, mem))
                print("%-8s %-8s %8d %14s %12s %12s %12s  failed: %s" % (
                    dev, dtype, natoms, "-", "-", "-" if mem is None else "%.0f" % mem, "-",
                    why), flush=True)
                continue
            rows.append((dev, dtype, natoms, natoms / t, t, mem))
            print("%-8s %-8s %8d %14.1f %12.3f %12s %12s" % (
                dev, dtype, natoms, natoms / t, 1e3 * t,
                "-" if mem is None else "%.0f" % mem,
                "-" if mem is None else "%.2f" % (1024.0 * mem / natoms)), flush=True)
    print("summary:")
    for dtype in args.dtypes:
        dev_rows = [r for r in rows if r[0] == args.device and r[1] == dtype and r[3]]
        if dev_rows:
            print("  %s on %s: largest system that ran: %d atoms" % (dtype, args.device,
                                                                    dev_rows[-1][2]))
            mem_rows = [r for r in dev_rows if r[5] is not None]
            if len(mem_rows) > 1:
                a, b = mem_rows[0], mem_rows[-1]
                print("    device memory slope %d -> %d atoms: %.2f KiB/atom" % (
                    a[2], b[2], 1024.0 * (b[5] - a[5]) / (b[2] - a[2])))
        for r in dev_rows:
            cpu = [c for c in rows if c[0] == "cpu" and c[1] == dtype and c[2] == r[2] and c[3]]
            if cpu and args.device != "cpu":
                print("    %d atoms: %s / one CPU core = %.1fx" % (r[2], args.device,
                                                                   r[3] / cpu[0][3]))
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("device,dtype,atoms,atom_steps_per_s,s_per_step,gpu_peak_mib\n")
            for r in rows:
                f.write(",".join("" if v is None else str(v) for v in r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
