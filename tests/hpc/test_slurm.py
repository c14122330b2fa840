"""The batch scripts of examples/hpc under a real Slurm (issue 21).

1. Dry runs (no scheduler needed): the rank -> node/GPU/core map of nn_gpu.slurm and
   pimd_nn.slurm for 2 nodes x 4 GPUs, the early failures' messages (P not dividing the
   tasks, K not dividing P, threads x tasks > cores, DPLR without a free core, ranks !=
   GPUs, no GPUs), the PBS scripts' maps equal to the Slurm scripts', and the per-rank
   wrapper under mpiexec (each rank's -var device cuda:<node-local rank % GPUs>).
2. A one-node Slurm cluster on localhost (munged with a generated key, slurmctld and
   slurmd with a slurm.conf written into a temporary folder, free ports), running the
   job scripts with tiny inputs through sbatch: PIMD over partitions (2 beads x 2
   ranks), beads_per_world (4 beads on 2 partitions) as a restart chain of two dependent
   jobs (afterok), NN MD on the CPU (1 rank x 2 threads, bound), PIMD + NN, DPLR (1 rank
   x 2 cores). Every job's thermo output equals the same input run directly with
   mpiexec (1e-10 relative); the chain's last step equals one uninterrupted run.
   The node declares max(cores, 4) CPUs (Slurm refuses --ntasks-per-node above the CPU
   count even with --overcommit); jobs with more ranks than cores run unbound
   (AISCI_OVERSUBSCRIBE=1), the NN job (1 rank x 2 threads) is bound by mpiexec.
   The daemons are always stopped (process groups killed in `finally`).
Without Slurm/munge, or not as root (SlurmUser=root), the test exits 77 (skipped)."""
import os
import re
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lammps"))
import aisci_testlib as T  # noqa: E402

SRC = T.SOURCE_DIR
HPC = os.path.join(SRC, "examples", "hpc")
MODELS = os.path.join(SRC, "potentials", "models")
PY = "/usr/bin/python3"
MPIEXEC = T.MPIEXEC[0]
START = time.time()


def elapsed():
    return "%.0f s" % (time.time() - START)


def script_env(extra=None):
    env = dict(os.environ)
    for k in list(env):  # a layout from the caller's environment would change the plan
        if k.startswith(("AISCI_NODES", "AISCI_TASKS", "AISCI_CPUS", "AISCI_GPUS", "AISCI_CORES",
                         "AISCI_BEADS", "AISCI_THREADS", "AISCI_DRY", "AISCI_OVERSUB",
                         "AISCI_INPUT", "AISCI_LMP_ARGS", "AISCI_HPC_DIR", "CUDA_VISIBLE_DEVICES",
                         "SLURM_", "PBS_")):
            del env[k]
    env["AISCI_MPIEXEC"] = MPIEXEC
    env.update(extra or {})
    return env


# the data files the default inputs read from the working directory (a dry run checks that
# they exist): empty stand-ins
DRY_DIR = tempfile.mkdtemp(prefix="aisci_hpc_dry_")
for _name in ("water.data", "dplr.data"):
    open(os.path.join(DRY_DIR, _name), "w").close()


def dry(script, extra=None, cwd=None, args=("--dry-run",)):
    p = subprocess.run(["bash", os.path.join(HPC, script)] + list(args), env=script_env(extra),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60,
                       cwd=cwd or DRY_DIR)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def rank_map(text):
    """rank -> dict(node, local, partition, device, cores) from the printed map."""
    out = {}
    for m in re.finditer(r"^aisci_layout: rank (\d+) node (\d+) local (\d+)(?: partition (\d+) "
                         r"\(beads? [0-9-]+\))? device (\S+) cores (.+)$", text, re.M):
        out[int(m.group(1))] = dict(node=int(m.group(2)), local=int(m.group(3)),
                                    partition=None if m.group(4) is None else int(m.group(4)),
                                    device=m.group(5), cores=m.group(6))
    return out


# ---- 1. dry runs --------------------------------------------------------------------------

rc, out, err = dry("nn_gpu.slurm")
m = rank_map(out)
T.check(rc == 0 and len(m) == 8, "nn_gpu.slurm --dry-run: rc %d\n%s%s" % (rc, out, err))
T.check(all(m.get(r) == dict(node=r // 4, local=r % 4, partition=None, device="cuda:%d" % (r % 4),
                             cores="%d-%d" % (8 * (r % 4), 8 * (r % 4) + 7)) for r in range(8)),
        "nn_gpu.slurm: rank map of 2 nodes x 4 GPUs:\n" + out)
T.check("-n 8 --map-by ppr:4:node:PE=8 --bind-to core" in out and "--rank-exec 4 8 --" in out
        and "aisci_layout: dry run: nothing started" in out, "nn_gpu.slurm command line:\n" + out)
print("nn_gpu.slurm --dry-run (2 nodes x 4 GPUs):\n" + "\n".join(
    l for l in out.splitlines() if " rank " in l or "command" in l), flush=True)

# PIMD + NN, 4 beads x 2 ranks on 2 nodes x 4 GPUs: partition = rank / 2, GPU = local rank
rc, out, err = dry("pimd_nn.slurm", {"AISCI_BEADS": "4", "AISCI_NODES": "2",
                                     "AISCI_TASKS_PER_NODE": "4", "AISCI_GPUS_PER_NODE": "4"})
m = rank_map(out)
T.check(rc == 0 and "-partition 4x2" in out and all(
    m.get(r, {}).get("partition") == r // 2 and m[r]["device"] == "cuda:%d" % (r % 4)
    and m[r]["node"] == r // 4 for r in range(8)), "pimd_nn.slurm 4 beads x 2 ranks:\n" + out + err)

# early failures: exit 2, the reason, and no command line
FAILS = [
    ("pimd_partitions.slurm", {"AISCI_BEADS": "3"},
     "P/K = 3 partitions do not divide the 16 MPI tasks"),
    ("pimd_beads_per_world.slurm", {"AISCI_BEADS": "32", "AISCI_BEADS_PER_WORLD": "5"},
     "beads_per_world K = 5 does not divide P = 32 beads"),
    ("pimd_beads_per_world.slurm", {"AISCI_BEADS": "12", "AISCI_BEADS_PER_WORLD": "4"},
     "P/K = 3 partitions do not divide the 8 MPI tasks"),
    ("nn_cpu.slurm", {"AISCI_CORES_PER_NODE": "16"},
     "threads x tasks > cores: 8 tasks per node x 4 cores per task = 32 > 16 cores per node"),
    ("nn_cpu.slurm", {"AISCI_THREADS": "8"}, "8 threads per rank need 8 cores but a task has 4"),
    ("dplr.slurm", {"AISCI_CPUS_PER_TASK": "1"},
     "DPLR needs a free core per rank for the long-range (PPPM) thread"),
    ("nn_gpu.slurm", {"AISCI_TASKS_PER_NODE": "8"},
     "one rank per GPU: 8 tasks per node but 4 GPUs per node"),
    ("nn_gpu.slurm", {"AISCI_GPUS_PER_NODE": "0"}, "no GPUs in this allocation"),
    ("pimd_nn.slurm", {"AISCI_TASKS_PER_NODE": "6", "AISCI_BEADS": "4"},
     "6 tasks per node do not share 4 GPUs evenly"),
]
for script, env, text in FAILS:
    rc, out, err = dry(script, env)
    T.check(rc == 2 and text in err and "command:" not in out,
            "%s %s: expected exit 2 with '%s', got rc %d\n%s%s" % (script, env, text, rc, out, err))
print("early failures: %d cases checked" % len(FAILS), flush=True)

# on/off variables take 0 or 1 only; the launcher, the input and the files the run reads
# must exist (dry run and real run alike): exit 2 naming the missing one
empty = tempfile.mkdtemp(prefix="aisci_hpc_empty_")
STRICT = [
    ("nn_cpu.slurm", {"AISCI_DRY_RUN": "yes"}, (), None, "AISCI_DRY_RUN must be 0 or 1, got 'yes'"),
    ("nn_cpu.slurm", {"AISCI_OVERSUBSCRIBE": "true"}, ("--dry-run",), None,
     "AISCI_OVERSUBSCRIBE must be 0 or 1, got 'true'"),
    ("nn_cpu.slurm", {"AISCI_LMP": "/nonexistent/lmp-aisci"}, ("--dry-run",), None,
     "launcher '/nonexistent/lmp-aisci' not found or not executable"),
    ("nn_cpu.slurm", {}, ("--dry-run", "in.none"), None, "input file 'in.none' not found"),
    ("nn_cpu.slurm", {"AISCI_DRY_RUN": "0"}, (), empty,
     "file 'water.data' of LAMMPS variable data not found (working directory %s" % empty),
    ("pimd_nn.slurm", {"AISCI_MODEL": "none.pt"}, ("--dry-run",), None,
     "file 'none.pt' of LAMMPS variable model not found"),
    ("dplr.slurm", {}, ("--dry-run",), empty, "data file 'dplr.data' (read_data in "),
    ("nn_cpu.slurm", {"AISCI_NODES": "two"}, ("--dry-run",), None,
     "NODES must be a positive integer, got 'two' (from AISCI_NODES, the scheduler's"),
    ("pimd_nn.slurm", {"AISCI_GPUS_PER_NODE": "-1"}, ("--dry-run",), None,
     "GPUS_PER_NODE must be an integer >= 0, got '-1' (from AISCI_GPUS_PER_NODE"),
    ("pimd_partitions.slurm", {"AISCI_BEADS": "8x"}, ("--dry-run",), None,
     "AISCI_BEADS (P) must be a positive integer, got '8x'"),
    ("nn_cpu.slurm", {"AISCI_THREADS": "0"}, ("--dry-run",), None,
     "AISCI_THREADS must be a positive integer, got '0'"),
]
for script, env, args, cwd, text in STRICT:
    rc, out, err = dry(script, env, cwd=cwd, args=args)
    T.check(rc == 2 and text in err and "nothing started" not in out,
            "%s %s: expected exit 2 with '%s', got rc %d\n%s%s" % (script, env, text, rc, out, err))
print("strict variables and missing files: %d cases checked" % len(STRICT), flush=True)

# PBS scripts: same map as their Slurm twins (directives parsed from #PBS -l select=...)
for name in ("pimd_partitions", "pimd_beads_per_world", "nn_cpu", "nn_gpu", "pimd_nn", "dplr"):
    rc_s, out_s, _ = dry(name + ".slurm")
    rc_p, out_p, err_p = dry(name + ".pbs")
    cmd = [l for l in out_p.splitlines() if "command:" in l]
    T.check(rc_s == 0 and rc_p == 0 and rank_map(out_s) == rank_map(out_p) and len(rank_map(out_p)) > 0
            and cmd and cmd[0] == [l for l in out_s.splitlines() if "command:" in l][0],
            "%s.pbs --dry-run differs from %s.slurm:\n%s%s\n---\n%s" % (name, name, out_p, err_p, out_s))

# restart sets: the newest complete one is chosen, a newer incomplete one is skipped
rdir = tempfile.mkdtemp(prefix="aisci_hpc_restart_")
os.makedirs(os.path.join(rdir, "restart"))
for name in ("pimd.20.1", "pimd.20.2", "pimd.30.1", "pimd.30.2", "pimd.40.1"):
    with open(os.path.join(rdir, "restart", name), "w") as f:
        f.write("x")
rc, out, err = dry("pimd_beads_per_world.slurm", {"AISCI_BEADS": "4", "AISCI_BEADS_PER_WORLD": "2",
                                                  "AISCI_TASKS_PER_NODE": "2"}, cwd=rdir)
T.check(rc == 0 and "resuming from step 30: restart/pimd.30.1 ... restart/pimd.30.2" in out
        and "restart set restart/pimd.40.* is incomplete (not all 2 partitions): skipped" in err
        and "-var restart_stem restart/pimd -var restart_step 30" in out,
        "restart set choice:\n%s%s" % (out, err))
shutil.rmtree(rdir)

# the per-rank wrapper under mpiexec: device from the node-local rank, threads, one line
p = subprocess.run(T.MPIEXEC + ["-n", "3", "bash", os.path.join(HPC, "aisci_layout.sh"), "--rank-exec",
                                "2", "1", "--", "sh", "-c", 'echo "$OMPI_COMM_WORLD_RANK: $*"', "sh"],
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120, env=script_env())
got = dict(re.findall(r"^(\d): (.*)$", p.stdout.decode(), re.M))
T.check(p.returncode == 0 and got == {str(r): "-var device cuda:%d -var threads 1" % (r % 2) for r in range(3)},
        "rank wrapper: %s" % p.stdout.decode())
T.check(len(re.findall(r"aisci_layout: rank \d on \S+ local \d -> device cuda:\d, threads 1, cores",
                       p.stdout.decode())) == 3, "rank wrapper lines:\n" + p.stdout.decode())
print("dry runs done (%s)" % elapsed(), flush=True)
if T._failed:
    T.summary("test_slurm")

# ---- 2. a one-node Slurm cluster ----------------------------------------------------------

TOOLS = ["munged", "slurmctld", "slurmd", "sbatch", "scontrol", "sinfo", "scancel", "squeue"]
missing = [t for t in TOOLS if not shutil.which(t, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")]
if missing:
    T.skip("Slurm/munge not installed (no %s): run scripts/install-slurm.sh; %d dry-run checks passed"
           % (", ".join(missing), T._passed))
if os.geteuid() != 0:
    T.skip("the test cluster runs its daemons as SlurmUser=root: run as root "
           "(%d dry-run checks passed)" % T._passed)


def which(t):
    return shutil.which(t, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")


def free_ports(n):
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


TMP = tempfile.mkdtemp(prefix="aisci_slurm_")
os.chmod(TMP, 0o755)  # munged needs o+x on the socket's folders
for sub in ("key", "run", "state", "spool", "log", "jobs"):
    os.makedirs(os.path.join(TMP, sub))
os.chmod(os.path.join(TMP, "key"), 0o700)
os.chmod(os.path.join(TMP, "run"), 0o755)
KEY = os.path.join(TMP, "key", "munge.key")
SOCKET = os.path.join(TMP, "run", "munge.socket")
with open(KEY, "wb") as f:
    f.write(os.urandom(128))
os.chmod(KEY, stat.S_IRUSR | stat.S_IWUSR)
NCPU = os.cpu_count() or 1
# Slurm refuses --ntasks-per-node above the node's CPUs even with --overcommit, and the
# scripts ask per node: the test node declares at least 4 CPUs (config_overrides makes
# slurmd accept more than the hardware has); jobs with more ranks than cores run with
# AISCI_OVERSUBSCRIBE=1 (no binding, ranks yield while waiting).
SLURM_CPUS = max(NCPU, 4)
CTLD_PORT, SLURMD_PORT = free_ports(2)
CONF = os.path.join(TMP, "slurm.conf")
open(os.path.join(TMP, "plugstack.conf"), "w").close()
with open(CONF, "w") as f:
    f.write("""# written by tests/hpc/test_slurm.py: one node (this machine), no cgroups
ClusterName=aiscitest
SlurmctldHost=localhost
SlurmctldPort={ctld}
SlurmdPort={slurmd}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={socket}
StateSaveLocation={tmp}/state
SlurmdSpoolDir={tmp}/spool
SlurmctldPidFile={tmp}/run/slurmctld.pid
SlurmdPidFile={tmp}/run/slurmd.pid
SlurmctldLogFile={tmp}/log/slurmctld.log
SlurmdLogFile={tmp}/log/slurmd.log
PlugStackConfig={tmp}/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SchedulerType=sched/builtin
InactiveLimit=0
KillWait=5
MinJobAge=600
SlurmctldTimeout=30
SlurmdTimeout=60
SlurmdParameters=config_overrides
NodeName=localhost CPUs={ncpu} State=UNKNOWN
PartitionName=aisci Nodes=localhost Default=YES MaxTime=30 State=UP
""".format(ctld=CTLD_PORT, slurmd=SLURMD_PORT, socket=SOCKET, tmp=TMP, ncpu=SLURM_CPUS))

SENV = script_env({"SLURM_CONF": CONF, "AISCI_HPC_DIR": HPC})
daemons = []


def start(name, cmd):
    log = open(os.path.join(TMP, "log", name + ".out"), "w")
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=SENV, start_new_session=True)
    daemons.append((name, p))
    return p


def logs_tail():
    out = []
    for name in ("munged.out", "munged.log", "slurmctld.out", "slurmctld.log", "slurmd.out", "slurmd.log"):
        path = os.path.join(TMP, "log", name)
        if os.path.exists(path):
            out.append("--- %s\n%s" % (name, "".join(open(path, errors="replace").readlines()[-15:])))
    return "\n".join(out)


def slurm(*args, timeout=60):
    p = subprocess.run([which(args[0])] + list(args[1:]), env=SENV, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=timeout)
    return p.returncode, p.stdout.decode(errors="replace")


def stop_all():
    ctld_up = any(name == "slurmctld" and p.poll() is None for name, p in daemons)
    try:
        if not ctld_up:
            raise RuntimeError("no slurmctld: no jobs to cancel")
        rc, out = slurm("squeue", "-h", "-o", "%i", timeout=20)
        ids = out.split() if rc == 0 else []
        if ids:
            slurm("scancel", *ids, timeout=20)
            for _ in range(20):
                rc, out = slurm("squeue", "-h", "-o", "%i", timeout=20)
                if rc != 0 or not out.split():
                    break
                time.sleep(1)
    except Exception as e:  # the daemons go down below in any case
        if ctld_up:
            print("stopping jobs: %s" % e)
    for name, p in reversed(daemons):
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    for name, p in reversed(daemons):
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=15)


def skip_cluster(reason):
    stop_all()
    T.skip("%s (%d dry-run checks passed)\n%s" % (reason, T._passed, logs_tail()))


# ---- the jobs' inputs and their direct references -------------------------------------

def job_dir(name):
    d = os.path.join(TMP, "jobs", name)
    os.makedirs(d)
    return d


def make_water(d):
    subprocess.run([PY, os.path.join(SRC, "examples", "nn_water", "make_box.py"), "16", "1.0",
                    os.path.join(d, "water.data")], check=True, stdout=subprocess.DEVNULL)


def make_dplr(d):
    code = ("import sys; sys.path.insert(0, %r)\n"
            "from potentials.dplr.water_wc import make_dplr_water_box\n"
            "from potentials.data.water_box import write_lammps_data\n"
            "write_lammps_data('dplr.data', make_dplr_water_box(16, seed=3), title='hpc test')\n" % SRC)
    subprocess.run([PY, "-c", code], cwd=d, check=True)


def direct(d, nprocs, args, threads=1):
    """The job's LAMMPS command, run here with mpiexec (the reference)."""
    cmd = T.MPIEXEC + ["-n", str(nprocs), T.LMP] + args + ["-nocite", "-var", "device", "cpu",
                                                           "-var", "threads", str(threads)]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMPI_MCA_mpi_yield_when_idle="1")
    return subprocess.Popen(cmd, cwd=d, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def sbatch(name, script, d, sargs, env, args, dependency=None):
    cmd = ["sbatch", "--parsable", "--time=10", "--chdir=" + d, "-o", os.path.join(d, "slurm-%s.out" % name),
           "--job-name=" + name] + sargs
    if dependency:
        cmd.append("--dependency=afterok:%s" % dependency)
    cmd += [os.path.join(HPC, script)] + args
    p = subprocess.run([which(cmd[0])] + cmd[1:], env=dict(SENV, **env), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=60)
    out = p.stdout.decode().strip()
    if not T.check(p.returncode == 0 and out.split(";")[0].isdigit(), "sbatch %s: %s" % (name, out)):
        return None
    return out.split(";")[0]


def job_state(jobid):
    rc, out = slurm("scontrol", "show", "job", "-o", jobid, timeout=30)
    state = re.search(r"JobState=(\S+)", out)
    code = re.search(r"ExitCode=(\S+)", out)
    state = state.group(1) if state else "UNKNOWN"
    if state == "PENDING" and "Reason=DependencyNeverSatisfied" in out:
        state = "DEPENDENCY_NEVER_SATISFIED"  # its predecessor failed: it will never run
    return state, (code.group(1) if code else "?")


def compare(tag, got_log, ref_log, steps=None):
    """Thermo rows at the same steps equal to 1e-10 relative."""
    a, b = T.parse_thermo(got_log), T.parse_thermo(ref_log)
    if not T.check(a.get("Step") and b.get("Step"), "%s: no thermo output" % tag):
        return
    rows_a = {int(s): i for i, s in enumerate(a["Step"])}
    rows_b = {int(s): i for i, s in enumerate(b["Step"])}
    steps = steps or sorted(set(rows_a) & set(rows_b))
    worst = 0.0
    for s in steps:
        if not T.check(s in rows_a and s in rows_b, "%s: step %d missing" % (tag, s)):
            return
        for col in a:
            x, y = a[col][rows_a[s]], b[col][rows_b[s]]
            if x != y:
                worst = max(worst, abs(x - y) / max(abs(x), abs(y)))
    print("%s: steps %s, max relative difference to the direct run %.2e" % (tag, steps, worst), flush=True)
    T.check(worst <= 1e-10, "%s differs from the direct mpiexec run by %.3e" % (tag, worst))


def read(path):
    return open(path, errors="replace").read() if os.path.exists(path) else ""


try:
    start("munged", [which("munged"), "--foreground", "--key-file=" + KEY, "--socket=" + SOCKET,
                     "--pid-file=" + os.path.join(TMP, "run", "munged.pid"),
                     "--log-file=" + os.path.join(TMP, "log", "munged.log"),
                     "--seed-file=" + os.path.join(TMP, "key", "munged.seed"), "--num-threads=2"])
    for _ in range(50):
        if os.path.exists(SOCKET):
            break
        time.sleep(0.1)
    else:
        skip_cluster("munged did not start")
    start("slurmctld", [which("slurmctld"), "-D", "-i", "-f", CONF])
    start("slurmd", [which("slurmd"), "-D", "-N", "localhost", "-f", CONF])
    up = False
    for _ in range(60):
        rc, out = slurm("sinfo", "-h", "-o", "%T", timeout=20)
        if rc == 0 and out.strip() in ("idle", "mixed", "allocated"):
            up = True
            break
        if any(p.poll() is not None for _, p in daemons):
            break
        time.sleep(0.5)
    if not up:
        skip_cluster("the one-node Slurm cluster did not come up (sinfo: %s)" % out.strip())
    print("slurm up: localhost, %d CPUs (%d cores), ports %d/%d (%s)" % (SLURM_CPUS, NCPU, CTLD_PORT, SLURMD_PORT, elapsed()),
          flush=True)

    OVER = {"AISCI_OVERSUBSCRIBE": "1"}
    jobs, refs = {}, {}
    model = os.path.join(MODELS, "water_matris.pt")

    # PIMD: 2 beads over 2 partitions of 2 ranks (4 ranks on 2 cores: oversubscribed)
    d = job_dir("pimd_partitions")
    pimd_args = ["-var", "nsteps", "20", "-var", "thermo_every", "10"]
    jobs["pimd_partitions"] = (d, sbatch("pimd_partitions", "pimd_partitions.slurm", d,
                                         ["--nodes=1", "--ntasks-per-node=4", "--cpus-per-task=1"],
                                         dict(OVER, AISCI_BEADS="2"), pimd_args))
    rd = job_dir("ref_pimd_partitions")
    refs["pimd_partitions"] = (rd, direct(rd, 4, ["-in", os.path.join(HPC, "in.pimd_lj"),
                                                  "-partition", "2x2", "-var", "beads_per_world", "1",
                                                  "-var", "restart_stem", "r"] + pimd_args))

    # beads_per_world: 4 beads on 2 partitions of 1 rank, a chain of two 20-step jobs
    d = job_dir("pimd_chain")
    chain_env = dict(OVER, AISCI_BEADS="4", AISCI_BEADS_PER_WORLD="2")
    chain_sargs = ["--nodes=1", "--ntasks-per-node=2", "--cpus-per-task=1"]
    first = sbatch("pimd_chain_1", "pimd_beads_per_world.slurm", d, chain_sargs, chain_env, pimd_args)
    second = sbatch("pimd_chain_2", "pimd_beads_per_world.slurm", d, chain_sargs, chain_env, pimd_args,
                    dependency=first) if first else None
    jobs["pimd_chain_1"] = (d, first)
    jobs["pimd_chain_2"] = (d, second)
    rd = job_dir("ref_pimd_chain")
    refs["pimd_chain"] = (rd, direct(rd, 2, ["-in", os.path.join(HPC, "in.pimd_lj"), "-partition", "2x1",
                                             "-var", "beads_per_world", "2", "-var", "restart_stem", "r",
                                             "-var", "nsteps", "40", "-var", "thermo_every", "10"]))

    # NN MD on the CPU: 1 rank x 2 threads = 2 cores, bound (no oversubscription)
    # 3 steps: TorchScript's profiling executor re-optimizes the model after the first
    # calls, which costs seconds per process
    nn_args = ["-var", "nsteps", "3", "-var", "thermo_every", "1"]
    # fix pimd/langevin with thermo 1 stops at step 1 ("output vector requested on step 1"):
    # thermo every 3 steps
    pimd_nn_args = ["-var", "nsteps", "3", "-var", "thermo_every", "3"]
    d = job_dir("nn_cpu")
    make_water(d)
    jobs["nn_cpu"] = (d, sbatch("nn_cpu", "nn_cpu.slurm", d,
                                ["--nodes=1", "--ntasks-per-node=1", "--cpus-per-task=%d" % min(2, NCPU)],
                                {}, nn_args))
    rd = job_dir("ref_nn_cpu")
    make_water(rd)
    refs["nn_cpu"] = (rd, direct(rd, 1, ["-in", os.path.join(HPC, "in.nn"), "-var", "model", model]
                                 + nn_args, threads=min(2, NCPU)))

    # PIMD + NN on CPUs: 2 beads x 1 rank, no GPUs
    d = job_dir("pimd_nn")
    make_water(d)
    jobs["pimd_nn"] = (d, sbatch("pimd_nn", "pimd_nn.slurm", d,
                                 ["--nodes=1", "--ntasks-per-node=2", "--cpus-per-task=1",
                                  "--gpus-per-node=0"], dict(OVER, AISCI_BEADS="2"), pimd_nn_args))
    rd = job_dir("ref_pimd_nn")
    make_water(rd)
    refs["pimd_nn"] = (rd, direct(rd, 2, ["-in", os.path.join(HPC, "in.pimd_nn"), "-partition", "2x1",
                                          "-var", "beads_per_world", "1", "-var", "model", model]
                                  + pimd_nn_args))

    # DPLR: 1 rank x 2 cores (1 libtorch thread + the PPPM overlap thread)
    dplr_args = ["-var", "nequil", "2", "-var", "nsample", "10"]
    d = job_dir("dplr")
    make_dplr(d)
    dplr_sargs = ["--nodes=1", "--ntasks-per-node=1", "--cpus-per-task=2"]
    dplr_env = OVER if NCPU < 2 else {}
    jobs["dplr"] = (d, sbatch("dplr", "dplr.slurm", d, dplr_sargs, dplr_env, dplr_args))
    rd = job_dir("ref_dplr")
    make_dplr(rd)
    refs["dplr"] = (rd, direct(rd, 1, ["-in", os.path.join(SRC, "examples", "dplr_water", "in.dplr"),
                                       "-var", "sr", os.path.join(MODELS, "water_dplr_sr.pt"),
                                       "-var", "dw", os.path.join(MODELS, "water_dw.pt")] + dplr_args))
    print("submitted %s (%s)" % (", ".join("%s=%s" % (k, v[1]) for k, v in jobs.items()), elapsed()),
          flush=True)

    # references first (they run alongside the jobs), then the jobs, both bounded
    for name, (rd, p) in refs.items():
        try:
            out = p.communicate(timeout=400)[0].decode(errors="replace")
        except subprocess.TimeoutExpired:
            p.kill()
            out = p.communicate()[0].decode(errors="replace") + "\nTIMEOUT"
        T.check(p.returncode == 0, "direct run %s failed:\n%s" % (name, out[-2000:]))
    print("direct runs done (%s)" % elapsed(), flush=True)
    pending = {k: v[1] for k, v in jobs.items() if v[1]}
    states = {}
    deadline = time.time() + 420
    while pending and time.time() < deadline:
        for name, jobid in list(pending.items()):
            state, code = job_state(jobid)
            if state in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
                         "BOOT_FAIL", "DEADLINE", "PREEMPTED", "DEPENDENCY_NEVER_SATISFIED"):
                states[name] = (state, code)
                del pending[name]
        time.sleep(1)
    print("jobs done (%s): %s" % (elapsed(), states), flush=True)
    T.check(not pending, "jobs still pending/running after the bound: %s\n%s" % (pending, logs_tail()))
    for name, (d, jobid) in jobs.items():
        if jobid is None or name not in states:
            continue
        slurm_out = read(os.path.join(d, "slurm-%s.out" % name))
        T.check(states[name] == ("COMPLETED", "0:0"), "job %s (%s) ended %s:\n%s" % (name, jobid, states[name],
                                                                                    slurm_out[-3000:]))
        T.check("aisci_layout: slurm job %s" % jobid in slurm_out, "%s: no layout header:\n%s" % (name, slurm_out[-2000:]))

    # outputs
    d, _ = jobs["pimd_partitions"]
    rd, _ = refs["pimd_partitions"]
    out = read(os.path.join(d, "slurm-pimd_partitions.out"))
    T.check("-partition 2x2" in out and len(re.findall(r"aisci_layout: rank \d on ", out)) == 4,
            "pimd_partitions: layout lines:\n" + out[-2000:])
    for k in range(2):
        compare("pimd_partitions (2 beads x 2 ranks) partition %d" % k,
                read(os.path.join(d, "log.lammps.%d" % k)), read(os.path.join(rd, "log.lammps.%d" % k)))

    d, _ = jobs["pimd_chain_1"]
    rd, _ = refs["pimd_chain"]
    T.check("no restart set restart/pimd.<step>.<partition>: starting fresh" in
            read(os.path.join(d, "slurm-pimd_chain_1.out")), "chain: first job did not start fresh")
    out = read(os.path.join(d, "slurm-pimd_chain_2.out"))
    T.check("resuming from step 20: restart/pimd.20.1 ... restart/pimd.20.2" in out,
            "chain: second job did not resume from step 20:\n" + out[-3000:])
    T.check(os.path.exists(os.path.join(d, "restart", "pimd.40.2")), "chain: no restart set at step 40")
    for k in range(2):
        # log.lammps.k holds the second job (steps 20..40): its last step is the chain's end
        compare("restart chain (4 beads, K = 2) partition %d at step 40" % k,
                read(os.path.join(d, "log.lammps.%d" % k)), read(os.path.join(rd, "log.lammps.%d" % k)),
                steps=[30, 40])

    d, _ = jobs["nn_cpu"]
    rd, _ = refs["nn_cpu"]
    out = read(os.path.join(d, "slurm-nn_cpu.out"))
    threads = min(2, NCPU)
    T.check("--map-by ppr:1:node:PE=%d --bind-to core" % threads in out and
            re.search(r"aisci_layout: rank 0 on \S+ local 0 -> device cpu, threads %d" % threads, out),
            "nn_cpu: binding lines:\n" + out[-2000:])
    compare("nn_cpu (1 rank x %d threads)" % threads, read(os.path.join(d, "log.lammps")),
            read(os.path.join(rd, "log.lammps")))

    d, _ = jobs["pimd_nn"]
    rd, _ = refs["pimd_nn"]
    for k in range(2):
        compare("pimd_nn (2 beads) partition %d" % k, read(os.path.join(d, "log.lammps.%d" % k)),
                read(os.path.join(rd, "log.lammps.%d" % k)))

    d, _ = jobs["dplr"]
    rd, _ = refs["dplr"]
    out = read(os.path.join(d, "slurm-dplr.out"))
    T.check("per rank 1 libtorch threads + 1 PPPM overlap thread on 2 cores" in out,
            "dplr: layout:\n" + out[-2000:])
    compare("dplr (1 rank x 2 cores)", read(os.path.join(d, "log.lammps")), read(os.path.join(rd, "log.lammps")))
finally:
    stop_all()
    alive = [name for name, p in daemons if p.poll() is None]
    T.check(not alive, "daemons still running: %s" % alive)
    if T._failed:
        print("slurm logs:\n" + logs_tail())
    else:
        shutil.rmtree(TMP, ignore_errors=True)
print("total %s" % elapsed())
T.summary("test_slurm")
