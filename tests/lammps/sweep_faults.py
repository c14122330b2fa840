"""Sweep of faults and layout consistency (scripts/sweep.sh runs it with the two input
sweeps; not a ctest: about 40 LAMMPS runs, 3-6 minutes on 2 cores):

  faults  a rank killed, the job interrupted, damaged files (model, data, restart), atoms
          that fly away, a partition that never reaches the run: each must end the job
          with a clean error (an ERROR line naming the problem) or, for a killed rank or
          an interrupt, end it within FAULT_END seconds, never hang.
  layout  the same input on other MPI layouts must give the same numbers: pair aisci
          (1, 2, 4 ranks), fix dplr + pppm/dplr (1, 2 ranks), pppm/aisci (1, 2 ranks),
          fix pimd/langevin with P = 4 as 4x1, 2x1 and 1x1 with beads_per_world, at a
          skin far below the ring polymers' width.

Run from anywhere after a build:
    /usr/bin/python3 tests/lammps/sweep_faults.py [build dir] [-v] [name filter ...]
Prints one line per case and the counts; exits 1 unless every case is clean, ok or
consistent."""
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
ARGS = [a for a in sys.argv[1:] if a != "-v"]
build = os.path.abspath(ARGS[0] if ARGS and os.path.isdir(ARGS[0]) else
                        os.path.join(HERE, "..", "..", "build"))
FILTER = [a for a in ARGS if a != build and not os.path.isdir(a)]
VERBOSE = "-v" in sys.argv
os.environ.setdefault("AISCI_LMP", os.path.join(build, "bin", "lmp-aisci"))
os.environ.setdefault("AISCI_BUILD_DIR", build)
# MPI launcher flags (oversubscription, root): T.MPIEXEC (scripts/aisci_run.py)
for k, v in (("OMPI_MCA_mpi_yield_when_idle", "1"), ("AISCI_PIMD_SYNC_TIMEOUT", "10")):
    os.environ.setdefault(k, v)
import aisci_testlib as T  # noqa: E402
import pimd_systems as PS  # noqa: E402

try:
    import aisci_nn_toy as toy  # noqa: E402
    import dplr_systems as DS  # noqa: E402
    HAVE_TORCH = os.path.exists(os.path.join(build, "lib", "libaisci_torch.so"))
except ImportError:
    HAVE_TORCH = False

FAULT_END = 20.0    # seconds a job may take to end after a rank dies or is interrupted
counts, rows = {}, []


def record(name, kind, detail=""):
    counts[kind] = counts.get(kind, 0) + 1
    rows.append((name, kind, detail))
    print("%-10s %-46s %s" % (kind, name, detail if (VERBOSE or kind not in ("clean", "ok",
                                                                           "consistent")) else ""),
          flush=True)


def wanted(name):
    return not FILTER or any(f in name for f in FILTER)


def expect_error(name, r, words):
    """A fault that must stop with an ERROR line containing every word."""
    err = T.first_error(r.output)
    if r.rc == -999:
        record(name, "hang", "timeout")
    elif r.rc == 0:
        record(name, "silent", "ran without error")
    elif err is None:
        record(name, "crash", "rc %d: %s" % (r.rc, r.output.strip().splitlines()[-1:]))
    else:
        missing = [w for w in words if w not in err]
        record(name, "unclear" if missing else "clean",
               err[:160] + ("  [missing %s]" % missing if missing else ""))


LJ_FIX = "fix pimd all pimd/langevin temp 30.0 thermostat PILE_L 5 tau 0.1"

# ------------------------------------------------------------------------------ faults


def killed_rank(name, sig, nprocs, parts, which):
    """Start a long run, send `sig` to one lmp-aisci process (`which`: index among them, or
    None for mpiexec itself) after it has started, and time the job's end."""
    if not wanted(name):
        return
    import tempfile
    work = tempfile.mkdtemp(prefix="aisci_fault_")
    with open(os.path.join(work, "in.test"), "w") as f:
        f.write(PS.lj_script(LJ_FIX, nsteps=10000000, thermo=1000))
    cmd = T.MPIEXEC + ["-n", str(nprocs), T.LMP, "-in", "in.test", "-partition", parts,
                       "-log", "log.lammps"]
    p = subprocess.Popen(cmd, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    time.sleep(4.0)
    kids = subprocess.run(["pgrep", "-s", str(p.pid), "-f", "lmp-aisci -in in.test"],
                          capture_output=True, text=True).stdout.split()
    kids = sorted(int(k) for k in kids if int(k) != p.pid)
    if p.poll() is not None or (which is not None and len(kids) < nprocs):
        record(name, "crash", "run ended or ranks missing before the fault (rc %s)" % p.poll())
        return
    target = p.pid if which is None else kids[which]
    t0 = time.time()
    os.kill(target, sig)
    try:
        p.wait(timeout=FAULT_END)
        took = time.time() - t0
        record(name, "clean", "job ended %.1f s after the fault (rc %d)" % (took, p.returncode))
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        record(name, "hang", "still running %.0f s after the fault" % FAULT_END)
    shutil.rmtree(work, ignore_errors=True)


killed_rank("rank killed (SIGKILL), 2x1 partitions", signal.SIGKILL, 2, "2x1", 1)
killed_rank("rank killed (SIGKILL), 2x2 partitions", signal.SIGKILL, 4, "2x2", 2)
killed_rank("rank interrupted (SIGTERM), 2x1", signal.SIGTERM, 2, "2x1", 0)
killed_rank("job interrupted (SIGINT to mpiexec), 2x1", signal.SIGINT, 2, "2x1", None)


def fault(name, script, words, nprocs=1, parts=None, files=None, env=None, timeout=120):
    if wanted(name):
        expect_error(name, T.run_lammps(script, nprocs=nprocs, partitions=parts, files=files,
                                        env=env, timeout=timeout), words)


lj = PS.lj_script(LJ_FIX, nsteps=20, thermo=10)
# atoms that fly away (a huge velocity on one atom): lost atoms, named
fault("atom flies away (v = 1e6 A/ps)", lj.replace("run 20", "velocity all set 1e6 0 0 sum yes\nrun 20"),
      ["atoms"], nprocs=2, parts="2x1")
fault("fix pimd/langevin in one partition only", "variable p world 0 1\n" +
      PS.lj_script('if "${p} == 0" then "%s"' % LJ_FIX, nsteps=20, thermo=10),
      ["partition"], nprocs=2, parts="2x1", env={"AISCI_PIMD_SYNC_TIMEOUT": "5"})
fault("run in one partition only", "variable p world 0 1\n" +
      lj.replace("run 20", 'if "${p} == 0" then "run 20"'), ["partition"], nprocs=2, parts="2x1",
      env={"AISCI_PIMD_SYNC_TIMEOUT": "5"})

# damaged files: a data file and a restart file cut in half
if wanted("file cut in half"):
    r = T.run_lammps(PS.lj_script(LJ_FIX, nsteps=10, thermo=10) + "write_data lj.data\n"
                     "write_restart lj.restart\n", nprocs=1)
    if r.rc == 0:
        txt = open(os.path.join(r.workdir, "lj.data")).read()
        raw = open(os.path.join(r.workdir, "lj.restart"), "rb").read()
        fault("data file cut in half", "units metal\natom_style atomic\natom_modify map yes\n"
              "read_data cut.data\nrun 0\n", [], files={"cut.data": txt[: len(txt) // 2]})
        import tempfile
        w = tempfile.mkdtemp(prefix="aisci_fault_")
        open(os.path.join(w, "cut.restart"), "wb").write(raw[: len(raw) // 2])
        expect_error("restart file cut in half",
                     T.run_lammps("read_restart cut.restart\n%s\nrun 5\n" % LJ_FIX, workdir=w), [])
    else:
        record("data/restart files for the cut-file cases", "crash",
               T.first_error(r.output) or "rc %d" % r.rc)

if HAVE_TORCH:
    d = toy.build_dir("sweep_faults")
    good = os.path.join(DS.MODELS, "water_matris.pt")
    raw = open(good, "rb").read()
    cut = os.path.join(d, "cut_model.pt")
    open(cut, "wb").write(raw[: len(raw) // 2])
    BOX, DATA = DS.pimd_water_box()
    water = DS.water_script(sr=cut)
    fault("model file cut in half", water, ["cut_model.pt"], files=DATA)
    missing = os.path.join(d, "no_such_model.pt")
    fault("model file missing", DS.water_script(sr=missing), ["no_such_model.pt"], files=DATA)
    fault("DW model file cut in half", DS.water_script(dw=cut), ["cut_model.pt"], files=DATA)

# ------------------------------------------------------------------------------ layouts


def consistent(name, runs, cols, tol, partition=0):
    """runs: {layout: TestRun}; compare thermo columns of each against the first."""
    if not wanted(name):
        return
    items = list(runs.items())
    for lay, r in items:
        if r.rc != 0:
            record(name, "crash" if T.first_error(r.output) is None else "rejected",
                   "%s: %s" % (lay, (T.first_error(r.output) or r.output[-300:])[:160]))
            return
    ref_lay, ref = items[0][0], items[0][1].thermo(partition)
    worst = 0.0
    for lay, r in items[1:]:
        th = r.thermo(partition)
        for c in cols:
            scale = max(abs(v) for v in ref[c]) or 1.0
            if len(th[c]) != len(ref[c]):
                worst = float("inf")
                continue
            worst = max(worst, max(abs(a - b) for a, b in zip(ref[c], th[c])) / scale)
    record(name, "consistent" if worst <= tol else "differ",
           "%s vs %s: largest difference %.2e (tolerance %.0e)" %
           (ref_lay, ", ".join(l for l, _ in items[1:]), worst, tol))


FMT = "thermo_modify format float %.15g\n"
if wanted("fix pimd/langevin P = 4 layouts, skin 0.055 A"):
    cols = ["f_pimd[%d]" % i for i in range(4, 11)]
    fix = "fix pimd all pimd/langevin temp 30.0 thermostat PILE_L 77 tau 0.1 beads_per_world %d"
    runs = {}
    for parts, k, procs in (("4x1", 1, 4), ("2x1", 2, 2), ("1x1", 4, 1)):
        s = PS.lj_script(fix % k, nsteps=100, thermo=20, extra=" ".join(cols)).replace(
            "pair_modify shift yes", "pair_modify shift yes\nneighbor 0.055 bin\n"
            "neigh_modify every 1 delay 0 check yes\n" + FMT)    # LAMMPS's delay 10: dangerous
        runs["%s bpw %d" % (parts, k)] = T.run_lammps(s, nprocs=procs, partitions=parts)
    consistent("fix pimd/langevin P = 4 layouts, skin 0.055 A", runs, cols, 1e-10)

name = "pair aisci + fix dplr + pppm/dplr water, 1/2/4 ranks"
if HAVE_TORCH and wanted(name):
    BOX, DATA = DS.pimd_water_box()
    runs = {}
    for n in (1, 2, 4):
        s = DS.water_script(body=DS.NUCLEI + "velocity nuclei create 300 5 loop geom\n"
                            "fix nve nuclei nve\ntimestep 0.0005\nthermo 5\nrun 10\n")
        runs["%d rank%s" % (n, "s" if n > 1 else "")] = T.run_lammps(s, nprocs=n, files=DATA)
    consistent(name, runs, ["PotEng", "E_vdwl", "E_long", "f_dplr", "c_pv[1]", "c_pv[4]"], 1e-10)

print("\nsweep_faults: %d cases: %s" % (len(rows), ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
sys.exit(0 if set(counts) <= {"clean", "ok", "consistent"} else 1)
