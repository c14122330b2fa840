#!/usr/bin/python3
"""bench/pimd_dplr: cost of path-integral MD with DPLR against classical DPLR MD, in one
invocation on the same ranks.

System: DPLR water from frame 0 of DeePMD-kit's DFT water (water-dft/data_3: 64 H2O + 64
Wannier centroids, 12.44 A box; potentials/dplr/deepmd_frame.py), the package's DFT DPLR
pair (water_dplr_dft_sr.pt + water_dplr_dft_dw.pt), kspace_style pppm/dplr 1e-5, 0.5 fs.
On N ranks (-partition Nx1, one rank each; --partitions, default 1):
  classical  N independent classical replicas: fix nve + fix langevin on the nuclei,
             K x nsteps steps (as many force evaluations as the PIMD run, and as long)
  pimd       fix pimd/langevin on the nuclei with beads_per_world K: P = N K beads,
             nsteps steps
Printed per K: the median time of each over interleaved repeats, and
  ratio = (nsteps PIMD steps) / (K nsteps classical steps)
i.e. the cost of the ring-polymer machinery (bead exchanges, mode transforms, the extra
beads' force evaluations with fix dplr placing each bead's WCs) on top of K classical
steps on the same ranks. Target (issue 32): <= 1.05 on an idle machine.

Usage:
  bench/pimd_dplr/pimd_dplr.py /path/to/lmp-aisci [--beads-per-world 4 8] [--partitions 1]
      [--nsteps 100] [--repeat 5] [--workdir DIR] [--mpiexec mpirun]
Prints the load average before and after; a figure taken under load is not a target.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "scripts"))
from aisci_run import first_error_in_logs, loop_time, mpi_flags  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("lmp_aisci")
    p.add_argument("--beads-per-world", type=int, nargs="+", default=[4, 8])
    p.add_argument("--partitions", type=int, default=1)
    p.add_argument("--nsteps", type=int, default=100, help="timed steps per run")
    p.add_argument("--repeat", type=int, default=5, help="interleaved repeats; the median counts")
    p.add_argument("--workdir", default=os.path.join(HERE, "out"))
    p.add_argument("--mpiexec", default="mpirun")
    p.add_argument("--deepmd-data", default=os.path.join(REPO, "..", "shared", "deepmd-kit",
                                                         "water-dft", "data_3"))
    a = p.parse_args(argv)
    lmp = os.path.abspath(a.lmp_aisci)
    if not os.access(lmp, os.X_OK):
        sys.exit("pimd_dplr: %s is not an executable" % lmp)
    os.makedirs(a.workdir, exist_ok=True)
    wd = os.path.abspath(a.workdir)
    env = dict(os.environ, OMP_NUM_THREADS="1", OMPI_MCA_mpi_yield_when_idle="1",
               PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    print("pimd_dplr: making the 64-molecule DPLR water box in %s" % wd, flush=True)
    subprocess.run(["/usr/bin/python3", "-m", "potentials.dplr.deepmd_frame", "dplr64.data",
                    "--data", os.path.abspath(a.deepmd_data)], cwd=wd, env=env, check=True)
    N = a.partitions
    mpi = [a.mpiexec] + mpi_flags(a.mpiexec, "pimd_dplr") + ["--bind-to", "none", "-np", str(N)]
    models = os.path.join(REPO, "potentials", "models")

    def timed(mode, k, tag, nsteps):
        for f in os.listdir(wd):
            if f.startswith("log." + tag):
                os.remove(os.path.join(wd, f))
        cmd = mpi + [lmp, "-partition", "%dx1" % N, "-in", os.path.join(HERE, "in.bench"),
                     "-log", "log." + tag, "-plog", "log." + tag, "-pscreen", "none",
                     "-screen", "none", "-var", "mode", mode, "-var", "bpw", str(k),
                     "-var", "nsteps", str(nsteps), "-var", "models", models]
        t0 = time.time()
        with open(os.path.join(wd, "out." + tag), "w") as out:
            rc = subprocess.run(cmd, cwd=wd, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
        logs = [os.path.join(wd, "log.%s.%d" % (tag, w)) for w in range(N)]
        times = [loop_time(f) for f in logs]
        if rc != 0 or None in times:
            err = first_error_in_logs(logs + [os.path.join(wd, "out." + tag)])
            print("  %-9s K=%-2d %s: FAILED %s" % (mode, k, tag, err), flush=True)
            return None
        t = max(times) / a.nsteps    # per PIMD step (classical: per K steps)
        print("  %-9s K=%-2d %s: %d steps in %.2f s (wall %.0f s)"
              % (mode, k, tag, nsteps, max(times), time.time() - t0), flush=True)
        return t

    load0 = os.getloadavg()
    res = {}
    for rep in range(a.repeat):
        order = ("classical", "pimd") if rep % 2 == 0 else ("pimd", "classical")
        for k in a.beads_per_world:
            for mode in order:
                n = a.nsteps * (k if mode == "classical" else 1)
                res.setdefault((mode, k), []).append(timed(mode, k, "%s.K%d.r%d" % (mode, k, rep), n))
    load1 = os.getloadavg()
    print("\npimd_dplr: 64 H2O + 64 WCs (DFT DPLR pair, pppm/dplr), %d steps of 0.5 fs, %d "
          "rank(s) as -partition %dx1, %d cores, %d interleaved repeats"
          % (a.nsteps, N, N, os.cpu_count(), a.repeat))
    print("load average (1 min) before / after: %.2f / %.2f" % (load0[0], load1[0]))
    print("%-48s %12s %8s" % ("run", "ms per PIMD step", "ratio"))
    for k in a.beads_per_world:
        cls = [t for t in res.get(("classical", k), []) if t]
        vals = [t for t in res.get(("pimd", k), []) if t]
        if not cls or not vals:
            print("K = %d: runs failed" % k)
            continue
        tc, tp = statistics.median(cls), statistics.median(vals)
        print("%-48s %12.1f %8s" % ("classical DPLR MD, %d steps per PIMD step" % k, 1e3 * tc, "-"))
        print("%-48s %12.1f %8.3f   (PIMD step / %d classical steps; P = %d)"
              % ("PIMD + DPLR, beads_per_world %d" % k, 1e3 * tp, tp / tc, k, N * k))


if __name__ == "__main__":
    main()
