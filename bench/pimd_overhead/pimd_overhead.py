#!/usr/bin/python3
"""bench/pimd_overhead: cost of the PIMD machinery on q-TIP4P/F water, in one invocation.

On the same 216-molecule q-TIP4P/F box (examples/water_qtip4pf), for each bead count P
it runs, with P MPI ranks and -partition Px1 (one rank per replica/bead):
  classical   P independent classical replicas (fix nve + fix langevin), lmp-aisci
  aisci       fix pimd/langevin (USER-AISCI), nmpimd, OBABO, PILE_L, lmp-aisci
  debian      Debian LAMMPS's REPLICA fix pimd, method nmpimd, Debian's lmp
  upstream    upstream LAMMPS's REPLICA fix pimd/langevin (4Feb2025 from scripts/
              build-lammps.sh, or --upstream-lmp), the same fix line as ours, P ranks
  baseline    ours again, from another build (--baseline-lmp: e.g. the previous commit's
              build/bin/lmp-aisci), the same input and layout; "ours / baseline" printed
With --aisci-partitions N (issue 15: 2), ours runs P > N beads on N ranks (-partition Nx1,
beads_per_world P/N), the layout upstream lacks; the other modes keep one bead per rank.
"ours / upstream" is printed per P.
all with the same number of steps and time step (0.25 fs) and the same thermo output
(every 100 steps). It reads the "Loop time" of every partition log (the slowest
partition counts) and prints the time per step and the ratio
(PIMD step time) / (P-replica classical step time): with one replica per rank that is
the issue's "PIMD step / (P x classical step)" measured under the same contention.

Usage:
  bench/pimd_overhead/pimd_overhead.py /path/to/lmp-aisci [--nsteps 1000] [--beads 4 8]
      [--repeat 1] [--debian-lmp lmp] [--workdir DIR] [--mpiexec mpirun]
Machines with fewer cores than ranks run oversubscribed (Open MPI --oversubscribe);
OMPI_MCA_mpi_yield_when_idle=1 is set for every run alike. Needs /usr/bin/python3 with
numpy (for the water box generator in potentials/data).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "scripts"))
from aisci_run import first_error_in_logs, loop_time, mpi_flags, upstream_lmp  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
EXAMPLE = os.path.join(REPO, "examples", "water_qtip4pf")
MODES = (("classical", "P classical replicas"),
         ("aisci", "fix pimd/langevin (ours)"),
         ("debian", "Debian fix pimd nmpimd"),
         ("upstream", "upstream fix pimd/langevin"),
         ("baseline", "ours, --baseline-lmp build"))




def run(cmd, cwd, env, log_path):
    """Run cmd, stdout+stderr to log_path; return (exit code, seconds)."""
    t0 = time.time()
    with open(log_path, "w") as f:
        rc = subprocess.run(cmd, cwd=cwd, env=env, stdout=f, stderr=subprocess.STDOUT).returncode
    return rc, time.time() - t0






def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("lmp_aisci", help="path to build/bin/lmp-aisci")
    p.add_argument("--debian-lmp", default=shutil.which("lmp") or "/usr/bin/lmp",
                   help="Debian's LAMMPS binary (default: lmp in PATH)")
    p.add_argument("--nsteps", type=int, default=1000, help="timed steps per run")
    p.add_argument("--beads", type=int, nargs="+", default=[4, 8])
    p.add_argument("--repeat", type=int, default=1,
                   help="runs per configuration, interleaved; the median counts")
    p.add_argument("--nequil", type=int, default=2000,
                   help="classical equilibration steps (0.5 fs) of the starting box")
    p.add_argument("--workdir", default=os.path.join(HERE, "out"))
    p.add_argument("--mpiexec", default="mpirun")
    p.add_argument("--modes", nargs="+", default=["classical", "aisci", "debian", "upstream"],
                   choices=[m for m, _ in MODES])
    p.add_argument("--upstream-lmp", help="upstream LAMMPS lmp (default: as scripts/aisci_run.py finds it)")
    p.add_argument("--baseline-lmp", help="another lmp-aisci for the baseline mode")
    p.add_argument("--upstream-mpiexec", help="launcher for the upstream lmp (default --mpiexec)")
    p.add_argument("--aisci-partitions", type=int, default=0,
                   help="run ours on this many partitions with beads_per_world P / N "
                        "(0: one bead per partition)")
    p.add_argument("--debian-fallback-temp", type=float, default=100.0,
                   help="when Debian's fix pimd fails at 298 K, time it once more at this "
                        "temperature (K; 0: do not retry). Its Nose-Hoover time scale "
                        "1/omega_P is shorter than the 0.25 fs step at 298 K for P > 4.")
    a = p.parse_args(argv)

    lmp_aisci = os.path.abspath(a.lmp_aisci)
    up = a.upstream_lmp
    if "upstream" in a.modes and not up:
        up, why = upstream_lmp()
        if not up:
            print(f"pimd_overhead: upstream mode skipped: {why}", flush=True)
            a.modes = [m for m in a.modes if m != "upstream"]
    up_exec = a.upstream_mpiexec or a.mpiexec
    if "baseline" in a.modes and not a.baseline_lmp:
        sys.exit("pimd_overhead: the baseline mode needs --baseline-lmp")
    baseline = os.path.abspath(a.baseline_lmp) if a.baseline_lmp else None
    for exe in (lmp_aisci, a.debian_lmp):
        if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
            sys.exit(f"pimd_overhead: {exe} is not an executable")
    if "classical" not in a.modes:
        sys.exit("pimd_overhead: the classical mode is the reference and cannot be left out")
    os.makedirs(a.workdir, exist_ok=True)
    wd = os.path.abspath(a.workdir)
    env = dict(os.environ, OMPI_MCA_mpi_yield_when_idle="1", MPIR_CVAR_POLLS_BEFORE_YIELD="100",
               MPIR_CVAR_ENABLE_HEAVY_YIELD="1")
    mpi = [a.mpiexec] + mpi_flags(a.mpiexec, "pimd_overhead")
    started = time.time()

    # ---- The box: potentials/data/water_box.py, relaxed and equilibrated classically.
    genv = dict(env, PYTHONPATH=REPO + os.pathsep + env.get("PYTHONPATH", ""))
    subprocess.run([sys.executable, "-m", "potentials.data.water_box", "data.water",
                    "--molecules", "216", "--density", "0.997", "--seed", "2009"],
                   cwd=wd, env=genv, check=True, stdout=subprocess.DEVNULL)
    print(f"pimd_overhead: equilibrating the 216-molecule box ({a.nequil} steps) in {wd}",
          flush=True)
    rc, _ = run(mpi + ["-np", "2", lmp_aisci, "-in", os.path.join(EXAMPLE, "in.classical"),
                       "-log", "log.equil", "-screen", "none", "-var", "ffdir", EXAMPLE,
                       "-var", "nequil", str(a.nequil), "-var", "nsample", "10"],
                wd, env, os.path.join(wd, "out.equil"))
    if rc != 0 or not os.path.exists(os.path.join(wd, "data.equil")):
        sys.exit(f"pimd_overhead: equilibration failed, see {wd}/log.equil")

    # ---- Timed runs, interleaved over repeats.
    load_before = os.getloadavg()
    results = {}      # (P, mode) -> list of seconds per step, or error text
    fallback = {}     # P -> temperature at which Debian's fix pimd was timed instead

    def timed_run(nb, mode, tag, extra):
        """One timed run; returns seconds per step (slowest partition) or error text."""
        exe = {"debian": a.debian_lmp, "upstream": up, "baseline": baseline}.get(mode, lmp_aisci)
        launcher = [up_exec] + mpi_flags(up_exec, "pimd_overhead") if mode == "upstream" else mpi
        nparts = nb
        if mode in ("aisci", "baseline") and 0 < a.aisci_partitions < nb:
            if nb % a.aisci_partitions:
                return f"P = {nb} is not a multiple of --aisci-partitions {a.aisci_partitions}"
            nparts = a.aisci_partitions
            extra = extra + ["-var", "bpw", str(nb // nparts)]
        cmd = launcher + ["-np", str(nparts), exe, "-partition", f"{nparts}x1",
                     "-in", os.path.join(HERE, "in.bench"),
                     "-plog", f"log.{tag}", "-pscreen", "none",
                     "-log", f"log.{tag}", "-var", "mode",
                     "aisci" if mode == "baseline" else mode,
                     "-var", "nsteps", str(a.nsteps), "-var", "ffdir", EXAMPLE] + extra
        for stale in os.listdir(wd):
            if stale.startswith(f"log.{tag}") or stale == "tmp.lammps.variable":
                os.remove(os.path.join(wd, stale))
        rc, wall = run(cmd, wd, env, os.path.join(wd, f"out.{tag}"))
        times = [loop_time(os.path.join(wd, f"log.{tag}.{k}")) for k in range(nparts)]
        if rc == 0 and all(t is not None for t in times):
            res = max(times) / a.nsteps
            msg = f"{1e3 * res:.2f} ms/step"
        else:
            res = first_error_in_logs([os.path.join(wd, f"log.{tag}.{k}") for k in range(nparts)]
                              + [os.path.join(wd, f"out.{tag}")])
            msg = "FAILED: " + res
        print(f"  P={nb} {mode:9s} {tag.split('.')[-1]}: {msg} (wall {wall:.1f} s)",
              flush=True)
        return res

    for rep in range(a.repeat):
        for nb in a.beads:
            for mode in a.modes:
                extra = []
                if mode == "debian" and nb in fallback:
                    extra = ["-var", "debian_temp", str(fallback[nb])]
                res = timed_run(nb, mode, f"{mode}.P{nb}.r{rep}", extra)
                if (mode == "debian" and not isinstance(res, float) and nb not in fallback
                        and a.debian_fallback_temp > 0):
                    fallback[nb] = a.debian_fallback_temp
                    results[(nb, "debian_298")] = res
                    res = timed_run(nb, mode, f"{mode}.P{nb}.r{rep}.T{a.debian_fallback_temp:g}",
                                    ["-var", "debian_temp", str(a.debian_fallback_temp)])
                results.setdefault((nb, mode), []).append(res)
    load_after = os.getloadavg()

    # ---- Table.
    lines = [f"pimd_overhead: 216 q-TIP4P/F water molecules (648 atoms), {a.nsteps} steps "
             f"of 0.25 fs, one rank per bead/replica, {os.cpu_count()} cores",
             f"load average before/after: {load_before[0]:.2f} / {load_after[0]:.2f}",
             f"{'P':>3s}  {'run':34s} {'ms/step':>9s} {'ratio':>7s}"]
    for nb in a.beads:
        ref = [x for x in results.get((nb, "classical"), []) if isinstance(x, float)]
        ref_t = statistics.median(ref) if ref else None
        for mode, label in MODES:
            if mode not in a.modes:
                continue
            vals = results.get((nb, mode), [])
            ok = [x for x in vals if isinstance(x, float)]
            if mode == "debian" and nb in fallback:
                label = f"{label} at {fallback[nb]:g} K*"
            if mode in ("aisci", "baseline") and 0 < a.aisci_partitions < nb:
                label = f"{label}, {a.aisci_partitions}x1 bpw {nb // a.aisci_partitions}"
            if ok and len(ok) == len(vals):
                t = statistics.median(ok)
                ratio = f"{t / ref_t:7.3f}" if ref_t else "    n/a"
                lines.append(f"{nb:3d}  {label:34s} {1e3 * t:9.2f} {ratio}")
            else:
                err = next((x for x in vals if not isinstance(x, float)), "not run")
                lines.append(f"{nb:3d}  {label:34s} {'failed':>9s} {'-':>7s}  ({err})")
        ours = [x for x in results.get((nb, "aisci"), []) if isinstance(x, float)]
        ups = [x for x in results.get((nb, "upstream"), []) if isinstance(x, float)]
        if ours and ups:
            lines.append(f"{nb:3d}  ours / upstream: {statistics.median(ours) / statistics.median(ups):.3f}")
        base = [x for x in results.get((nb, "baseline"), []) if isinstance(x, float)]
        if ours and base:
            lines.append(f"{nb:3d}  ours / baseline: {statistics.median(ours) / statistics.median(base):.3f}"
                         f" (per repeat: {', '.join(f'{o / b:.3f}' for o, b in zip(ours, base))})")
    lines.append("ratio = step time / step time of the P classical replicas (same P, "
                 "one replica per rank)")
    for nb, temp in sorted(fallback.items()):
        lines.append(f"* P={nb}: Debian's fix pimd failed at 298 K ({results[(nb, 'debian_298')]});"
                     f" timed at {temp:g} K instead (same box, steps and time step).")
    lines.append(f"total wall time {time.time() - started:.0f} s; logs in {wd}")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(wd, "results.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
