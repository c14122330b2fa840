"""DPLR overlap benchmark: the step time of DPLR water MD with the PPPM solve overlapped
with the short-range network, without overlap, and of the two parts alone, in one run.

LAMMPS runs of the same box (potentials/dplr/water_wc.py: water with one WC atom per
molecule), one MPI rank, torch with one thread, NVE, interleaved and repeated:

    overlap     pair_style aisci + fix dplr + kspace_style pppm/dplr ... overlap yes
    node        the same with layout node (1 network rank + its node's solver thread)
    no-overlap  the same with overlap no
    short       pair_style aisci alone (the short-range part)
    long        pair_style zero + fix dplr + pppm/dplr (the long-range part: DW forward
                and backward, WC placement, charge spreading, solve, interpolation)
  diagnosis (--diagnose): the short-range run with a second process beside it, which
  shows what slows the network when another core is busy:
    beside         the long-range run, looping
    beside-spin    a pure CPU spin (no memory traffic)
    beside-stream  a memory stream (numpy copies of 64 MiB arrays: bandwidth)

It prints the environment that decides the result (OMP_NUM_THREADS and the other thread
variables, torch threads, CPU affinity, kernel.sched_autogroup_enabled, the load), the
best step time of each mode (ms/step, LAMMPS loop time / steps), the ratios
overlap / max(short, long) and node / max(short, long) (target <= 1.1), the LAMMPS
timer breakdowns, and for one run of each mode the CPU time, the last CPU and the CPU
affinity of every thread of the LAMMPS process (from /proc, sampled while it runs); it
checks that overlap yes and no give the same energies. --omp unset|N runs with
OMP_NUM_THREADS unset or set to N (default 1).
The mesh is fixed (--mesh, "fine": a solve comparable to the network) so that both
parts matter.

    /usr/bin/python3 bench/dplr_overlap/dplr_overlap.py --build build \
        [--molecules 512] [--mesh 160] [--steps 10] [--warmup 3] [--repeats 2] [--sr M.pt]
        [--omp unset|N] [--diagnose]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from aisci_run import first_error_in_logs, load_average, loop_time, timing_sections  # noqa: E402
from potentials.data.water_box import write_lammps_data  # noqa: E402
from potentials.dplr.water_wc import make_dplr_water_box  # noqa: E402

MODELS = os.path.join(ROOT, "potentials", "models")
MODES = ("overlap", "node", "no-overlap", "short", "long")
BESIDE = ("beside", "beside-spin", "beside-stream")
SPIN = "while True: pass"
STREAM = ("import numpy as np\na = np.ones(8 << 20); b = np.empty_like(a)\n"
          "while True: np.copyto(b, a); np.copyto(a, b)")


def script(mode, sr, dw, mesh, warmup, steps):
    pair = "pair_style zero 4.0\npair_coeff * *" if mode == "long" else \
        "pair_style aisci threads 1\npair_coeff * * %s O H NULL" % sr
    kspace = {"no-overlap": "overlap no", "node": "overlap yes layout node"}.get(
        mode, "overlap yes")
    long_range = "" if mode == "short" or mode.startswith("beside") else \
        """kspace_style pppm/dplr 1e-5 %s
kspace_modify gewald 0.4 mesh %d %d %d order 5
fix dplr all dplr model %s type_associate 1 3 bond_type 2 elements O H NULL threads 1
fix_modify dplr virial yes""" % (kspace, mesh, mesh, mesh, dw)
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
    """LAMMPS timer breakdown (seconds) of the last run: the sections this bench prints."""
    sections = timing_sections(log)
    return {name: sections[name] for name in ("Pair", "Kspace", "Modify", "Neigh", "Comm",
                                                "Other") if name in sections}


def last_energy(log):
    rows = re.findall(r"^\s*\d+\s+(-?[0-9.eE+-]+)\s+[0-9.eE+-]+\s+(-?[0-9.eE+-]+)\s*$", log,
                      re.M)
    return (float(rows[-1][0]), float(rows[-1][1])) if rows else None


def read_threads(pid):
    """{tid: (name, cpu seconds, last cpu, allowed cpus)} of a running process."""
    out = {}
    tick = os.sysconf("SC_CLK_TCK")
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    try:
        with open("/proc/%d/stat" % pid) as f:
            w = f.read().rsplit(")", 1)[1].split()
        # the whole process, exited threads included (the solve thread lives one step)
        out["total"] = ("process total", (int(w[11]) + int(w[12])) / tick, int(w[36]),
                        "-")
    except (OSError, ValueError, IndexError):
        pass
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                st = f.read()
            name = st[st.index("(") + 1:st.rindex(")")]
            w = st[st.rindex(")") + 2:].split()
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                allowed = re.search(r"Cpus_allowed_list:\s*(\S+)", f.read()).group(1)
            out[tid] = (name, (int(w[11]) + int(w[12])) / tick, int(w[36]), allowed)
        except (OSError, ValueError, IndexError, AttributeError):
            continue
    return out


def run_sampled(cmd, cwd, env):
    """Run cmd; sample its threads every 0.2 s; return (rc, last sample, seconds)."""
    t0 = time.time()
    p = subprocess.Popen(cmd, cwd=cwd, env=env)
    last = {}
    while p.poll() is None:
        snap = read_threads(p.pid)
        if snap:
            last.update(snap)
        time.sleep(0.2)
    return p.returncode, last, time.time() - t0


def environment(env):
    keys = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "GOMP_SPINCOUNT",
            "OMP_WAIT_POLICY", "OMPI_MCA_mpi_yield_when_idle", "AISCI_PPPM_RANKS_PER_NODE")
    lines = ["  " + ", ".join("%s=%s" % (k, env.get(k, "(unset)")) for k in keys)]
    try:
        auto = open("/proc/sys/kernel/sched_autogroup_enabled").read().strip()
    except OSError:
        auto = "?"
    lines.append("  torch threads: pair_style aisci threads 1, fix dplr threads 1; CPUs online "
                 "%d, this process may use CPUs %s; kernel.sched_autogroup_enabled=%s%s" % (
                     os.cpu_count(), sorted(os.sched_getaffinity(0)), auto,
                     " (nice does not shield the bench from other sessions)"
                     if auto == "1" else ""))
    lines.append("  load: %s" % load_average())
    return "\n".join(lines)


def scan(args, lmp, sr, workdir, env):
    """Long-range part alone (overlap no) at several meshes: step, Kspace (spread + solve
    + interpolate) and Modify (DW, WCs) per step, and the short-range part once."""
    print("mesh   grid          step ms   Kspace ms   Modify ms   (long-range part, overlap no,"
          " best of %d)" % args.repeats)
    for mesh in args.scan_mesh.split(","):
        best = None
        for rep in range(args.repeats):
            text = script("no-overlap", sr, args.dw, 160, args.warmup, args.steps).replace(
                "pair_style aisci threads 1\npair_coeff * * %s O H NULL" % sr,
                "pair_style zero 4.0\npair_coeff * *")
            text = text.replace("mesh 160 160 160 ", "" if mesh == "auto" else
                                "mesh %s %s %s " % (mesh, mesh, mesh))
            path = os.path.join(workdir, "in.scan")
            with open(path, "w") as f:
                f.write(text)
            log = os.path.join(workdir, "log.scan")
            subprocess.run([lmp, "-in", path, "-log", log, "-screen", "none", "-nocite"],
                           cwd=workdir, env=env, timeout=3600)
            t = loop_time(log)
            if t is None:
                sys.exit("dplr_overlap: scan run failed: %s" % first_error_in_logs([log]))
            text = open(log).read()
            grid = re.search(r"grid = (\d+ \d+ \d+)", text).group(1)
            tm = timers(text)
            row = (1000 * t / args.steps, 1000 * tm.get("Kspace", 0) / args.steps,
                   1000 * tm.get("Modify", 0) / args.steps)
            if best is None or row[0] < best[0]:
                best = row
        print("%-6s %-12s %9.1f %11.1f %11.1f" % ((mesh, grid) + best), flush=True)
    print("load after: %s" % load_average())


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
    ap.add_argument("--omp", default="1", help="OMP_NUM_THREADS: 'unset' or a number")
    ap.add_argument("--diagnose", action="store_true", help="also the beside* modes")
    ap.add_argument("--scan-mesh", default="", help="comma-separated meshes: only time the "
                    "long-range part with overlap no at each (the costs of docs/dplr.md's "
                    "step-time model); 'auto' = the mesh pppm/dplr 1e-5 chooses")
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
    env = dict(os.environ, OMPI_MCA_mpi_yield_when_idle="1")
    if args.omp == "unset":
        env.pop("OMP_NUM_THREADS", None)
    else:
        env["OMP_NUM_THREADS"] = args.omp
    print("dplr_overlap: %d molecules (%d atoms with WCs), mesh %d^3, %d timed steps after %d, "
          "best of %d\n  short-range model %s\n  DW model %s\n%s" % (
              args.molecules, 4 * args.molecules, args.mesh, args.steps, args.warmup,
              args.repeats, sr, args.dw, environment(env)), flush=True)

    if args.scan_mesh:
        scan(args, lmp, sr, workdir, env)
        return
    modes = MODES + (BESIDE if args.diagnose else ())
    best, logs, threads = {}, {}, {}
    for rep in range(args.repeats):
        for mode in modes:
            path = os.path.join(workdir, "in." + mode)
            with open(path, "w") as f:
                f.write(script(mode, sr, args.dw, args.mesh, args.warmup, args.steps))
            helper = None
            if mode == "beside":
                # the long-range part, looping, in its own process
                with open(os.path.join(workdir, "in.loop"), "w") as f:
                    f.write(script("long", sr, args.dw, args.mesh, 0, 100000))
                helper = subprocess.Popen([lmp, "-in", "in.loop", "-log", "none", "-screen",
                                           "none", "-nocite"], cwd=workdir, env=env)
                time.sleep(5.0)  # past its setup
            elif mode in ("beside-spin", "beside-stream"):
                helper = subprocess.Popen([sys.executable, "-c",
                                           SPIN if mode == "beside-spin" else STREAM], env=env)
                time.sleep(1.0)
            log = os.path.join(workdir, "log.%s.%d" % (mode, rep))
            rc, snap, wall = run_sampled([lmp, "-in", path, "-log", log, "-screen", "none",
                                       "-nocite"], workdir, env)
            if helper:
                helper.kill()
                helper.wait()
            if mode not in threads:
                snap["wall"] = ("elapsed", wall, -1, "-")
                threads[mode] = snap
            t = loop_time(log)
            if t is None:
                sys.exit("dplr_overlap: %s run failed: %s" % (mode, first_error_in_logs([log])))
            ms = 1000.0 * t / args.steps
            print("  repeat %d %-10s %9.1f ms/step" % (rep, mode, ms), flush=True)
            if mode not in best or ms < best[mode]:
                best[mode] = ms
                logs[mode] = open(log).read()

    short, long_, ov, no = best["short"], best["long"], best["overlap"], best["no-overlap"]
    print("\nbest step times (ms/step, 1 rank, torch 1 thread, OMP_NUM_THREADS %s):" %
          env.get("OMP_NUM_THREADS", "unset"))
    for mode in modes:
        print("  %-13s %9.1f" % (mode, best[mode]))
    print("overlap / max(short, long) = %.3f   (target <= 1.1)" % (ov / max(short, long_)))
    print("node / max(short, long)    = %.3f   (target <= 1.1)" % (
        best["node"] / max(short, long_)))
    print("no-overlap / overlap       = %.3f" % (no / ov))
    print("short + long / overlap     = %.3f" % ((short + long_) / ov))
    for mode in modes:
        if mode.startswith("beside"):
            print("%-13s / short = %.3f" % (mode, best[mode] / short))
    print("\nthreads of the LAMMPS process (first repeat; CPU s over the whole run incl. "
          "setup, last CPU, allowed CPUs; 'process total' includes exited threads, e.g. "
          "the per-step aisci-solve thread; elapsed wall s):")
    for mode in modes:
        rows = sorted(threads.get(mode, {}).values(), key=lambda r: -r[1])
        print("  %-13s %s" % (mode, "; ".join("%s %.2fs cpu%d [%s]" % r for r in rows
                                                if r[1] > 0.005) or "(no sample)"))
    for mode in ("overlap", "node", "no-overlap", "short", "long"):
        t = timers(logs[mode])
        print("%-10s timers per step (ms): %s" % (mode, ", ".join(
            "%s %.1f" % (k, 1000.0 * v / args.steps) for k, v in t.items())))
    e_ov, e_no = last_energy(logs["overlap"]), last_energy(logs["no-overlap"])
    same = e_ov is not None and e_ov == e_no
    print("overlap yes/no final pe, etotal: %s / %s -> %s" % (
        e_ov, e_no, "identical" if same else "DIFFERENT"))
    print("load after: %s" % load_average())


if __name__ == "__main__":
    main()
