"""One harness for every run of lmp-aisci (or another LAMMPS binary) and every reading of
its logs: the tests (tests/*/), the benches (bench/*/) and the validation scripts
(validation/*/) import it from here, the repository's scripts/ folder:

    sys.path.insert(0, os.path.join(<repository root>, "scripts"))
    import aisci_run as R

Running: `mpiexec_command` decides the MPI launcher and its flags in one place (Open MPI's
--oversubscribe, and --allow-run-as-root when run as root; ctest passes its own choice in
AISCI_MPIEXEC); `lammps_command` builds a LAMMPS command line; `run_lammps` writes an input
script into a fresh folder, runs it on N ranks or partitions and returns a `Run` with the
output and the per-partition logs.

Logs (each function takes a log text or the path of a log file): `thermo_runs` /
`thermo_runs_after` / `parse_thermo` (thermo blocks, columns by name), `loop_times` / `loop_time`,
`cpu_use`, `timing_sections` (the Pair/Kspace/Modify/... breakdown), `first_error`,
and block averages: `block_means`, `mean_stderr`, `mean_and_error`. `load_average` is
the line the benches print before and after a measurement.

Plain Python (no numpy), so that any python3 can import it. Importing it line-buffers
stdout: scripts print a line per stage, and each line then appears when it is printed,
also when the output goes to a file or a pipe.

Environment: AISCI_LMP (the launcher, default lmp-aisci on PATH), AISCI_MPIEXEC (the MPI
launcher with its flags), AISCI_SOURCE_DIR (the repository, default the parent of this
folder), AISCI_PEERS (peer installations, default ~/.cache/aisci-peers)."""
import math
import os
import re
import shlex
import subprocess
import sys
import tempfile

if hasattr(sys.stdout, "reconfigure"):
    sys.stdout.reconfigure(line_buffering=True)

SOURCE_DIR = os.environ.get("AISCI_SOURCE_DIR",
                            os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))
LMP = os.environ.get("AISCI_LMP", "lmp-aisci")
DEBIAN_LMP = "/usr/bin/lmp"
TIMEOUT_RC = -999  # Run.rc of a run killed at its timeout


# ---------------------------------------------------------------------------------------
# MPI launcher

_open_mpi = {}


def is_open_mpi(mpiexec, who="aisci_run"):
    """Whether `mpiexec` (a program name) is Open MPI's launcher; exits naming `who` when
    it cannot be run at all."""
    if mpiexec not in _open_mpi:
        try:
            out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True).stdout
        except OSError:
            sys.exit(f"{who}: cannot run {mpiexec}")
        _open_mpi[mpiexec] = "Open MPI" in out or "OpenRTE" in out
    return _open_mpi[mpiexec]


def mpi_flags(mpiexec, who="aisci_run"):
    """The flags our runs need from the launcher `mpiexec` (a program name): Open MPI needs
    --oversubscribe for more ranks than cores, and --allow-run-as-root as root."""
    flags = []
    if is_open_mpi(mpiexec, who):
        flags.append("--oversubscribe")
        if os.geteuid() == 0:
            flags.append("--allow-run-as-root")
    return flags


def mpiexec_command(mpiexec=None, who="aisci_run"):
    """The MPI launcher as an argument list. `mpiexec` (a string or a list) is a launcher
    with or without flags: the flags it lacks are added. Without it: AISCI_MPIEXEC as given
    (ctest sets it with its flags), else 'mpiexec' with its flags."""
    if mpiexec is None:
        if os.environ.get("AISCI_MPIEXEC"):
            return shlex.split(os.environ["AISCI_MPIEXEC"])
        mpiexec = "mpiexec"
    cmd = shlex.split(mpiexec) if isinstance(mpiexec, str) else list(mpiexec)
    return cmd + [f for f in mpi_flags(cmd[0], who) if f not in cmd]


def lammps_command(exe=None, input_file="in.test", nprocs=1, partitions=None, variables=None,
                   log="log.lammps", screen=None, extra_args=(), mpiexec=None, nocite=True,
                   use_mpi=None):
    """A LAMMPS command line: [launcher -n N] exe -in FILE -log LOG [-nocite] [-screen S]
    [-partition ...] [-var NAME VALUE ...] extra_args. partitions: 'PxM' or 'M1 M2 ...';
    variables: {name: value or list of values}; the launcher is used when nprocs > 1,
    with partitions, or when use_mpi is true."""
    cmd = [exe or LMP, "-in", input_file, "-log", log]
    if nocite:
        cmd.append("-nocite")
    if screen is not None:
        cmd += ["-screen", screen]
    if partitions:
        cmd += ["-partition"] + partitions.split()
    for name, value in (variables or {}).items():
        values = value if isinstance(value, (list, tuple)) else [value]
        cmd += ["-var", name] + [str(v) for v in values]
    cmd += list(extra_args)
    if use_mpi is None:
        use_mpi = nprocs > 1 or bool(partitions)
    if use_mpi:
        cmd = mpiexec_command(mpiexec) + ["-n", str(nprocs)] + cmd
    return cmd


def partition_logs(workdir, partitions=None, log="log.lammps"):
    """The log files of a run: log, or log.0 ... log.(P-1) with partitions."""
    if not partitions:
        return [os.path.join(workdir, log)]
    words = partitions.split()
    nparts = int(words[0].split("x")[0]) if "x" in words[0] else len(words)
    return [os.path.join(workdir, "%s.%d" % (log, i)) for i in range(nparts)]


def run_env(env=None):
    """The environment of a run: ours, with OMP_NUM_THREADS=1 and Open MPI yielding when
    idle unless already set, then `env` on top."""
    full = dict(os.environ)
    full.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")
    full.setdefault("OMP_NUM_THREADS", "1")
    if env:
        full.update(env)
    return full


class Run:
    """Result of one LAMMPS run: return code (TIMEOUT_RC at a timeout), the output
    (stdout and stderr, then the partition logs when there are partitions), the
    per-partition log texts and the folder it ran in."""

    def __init__(self, rc, output, logs, workdir):
        self.rc = rc
        self.output = output
        self.logs = logs
        self.workdir = workdir

    def thermo(self, partition=0):
        return parse_thermo(self.logs[partition])


def run_lammps(script, nprocs=1, partitions=None, exe=None, timeout=300, extra_args=(),
               files=None, workdir=None, env=None, mpiexec=None, variables=None, screen=None):
    """Write `script` to in.test in `workdir` (default a fresh folder), with `files`
    ({name: text}) beside it, and run it (see lammps_command); mpiexec: another launcher,
    a string or a list (default mpiexec_command()). Returns a Run."""
    workdir = workdir or tempfile.mkdtemp(prefix="aisci_lmp_")
    with open(os.path.join(workdir, "in.test"), "w") as f:
        f.write(script)
    for name, text in (files or {}).items():
        with open(os.path.join(workdir, name), "w") as f:
            f.write(text)
    cmd = lammps_command(exe, "in.test", nprocs, partitions, variables, "log.lammps", screen,
                         extra_args, mpiexec)
    try:
        p = subprocess.run(cmd, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, env=run_env(env))
        rc, out = p.returncode, p.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        rc, out = TIMEOUT_RC, (e.stdout or b"").decode(errors="replace") + "\nTIMEOUT"
    logs = [read_log(path) for path in partition_logs(workdir, partitions)]
    if partitions:
        out += "".join(logs)
    return Run(rc, out, logs, workdir)


# ---------------------------------------------------------------------------------------
# Logs

def read_log(path):
    """The text of a log file, '' when it does not exist."""
    if not os.path.exists(path):
        return ""
    with open(path, errors="replace") as f:
        return f.read()


def _text(log):
    """A log text as given, or the text of the file when `log` is the path of one (one
    line naming an existing file; a path that does not exist holds no log lines)."""
    if "\n" not in log and os.path.isfile(log):
        return read_log(log)
    return log


_INT = re.compile(r"^-?\d+$")


def thermo_runs(log):
    """The thermo blocks of a log text, one per run: a list of dicts column -> list of
    floats. A block starts at its 'Step ...' header and ends at 'Loop time'; lines of
    another length inside it (warnings) are skipped, a line of the right length that is
    not numbers ends it."""
    log = _text(log)
    runs, header = [], None
    for line in log.splitlines():
        words = line.split()
        if not words:
            continue
        if words[0] == "Step":
            header = words
            runs.append({h: [] for h in header})
            continue
        if header is None:
            continue
        if len(words) == len(header) and _INT.match(words[0]):
            try:
                vals = [float(w) for w in words]
            except ValueError:
                header = None
                continue
            for h, v in zip(header, vals):
                runs[-1][h].append(v)
        elif words[0] == "Loop":
            header = None
    return runs


def thermo_runs_after(log, marker):
    """thermo_runs of the part of a log after its first line that starts with `marker`
    (e.g. a 'PRODUCTION START' line that an input script prints); [] without one."""
    log = _text(log)
    m = re.search("^" + re.escape(marker) + ".*$", log, re.M)
    return thermo_runs(log[m.end():]) if m else []


def parse_thermo(log):
    """All thermo blocks of a log text, concatenated: dict column -> list of floats."""
    data = {}
    for run in thermo_runs(log):
        for h, vals in run.items():
            data.setdefault(h, []).extend(vals)
    return data


_LOOP = re.compile(r"Loop time of ([0-9.eE+-]+) on (\d+) procs for (\d+) steps"
                   r"(?: with (\d+) atoms)?")


def loop_times(log):
    """Every run's 'Loop time' line of a log text: a list of (seconds, procs, steps,
    atoms), atoms None where the line has none."""
    log = _text(log)
    return [(float(m.group(1)), int(m.group(2)), int(m.group(3)),
             int(m.group(4)) if m.group(4) else None) for m in _LOOP.finditer(log)]


def loop_time(log):
    """The last run's 'Loop time' (seconds) of a log text, or None."""
    loops = loop_times(log)
    return loops[-1][0] if loops else None


def cpu_use(log):
    """Every run's 'N% CPU use' figure of a log text: a list of floats (percent)."""
    log = _text(log)
    return [float(v) for v in re.findall(r"([0-9.]+)% CPU use", log)]


_SECTION = re.compile(r"^(\w+)\s*\|\s*[0-9.eE+-]*\s*\|\s*([0-9.eE+-]+)\s*\|")


def timing_sections(log):
    """The last run's 'MPI task timing breakdown' of a log text as {section: average
    seconds} (Pair, Bond, Kspace, Neigh, Comm, Output, Modify, Other) plus "nbuild" (its
    'Neighbor list builds'); {} when absent."""
    log = _text(log)
    out = {}
    for line in log.splitlines():
        if line.startswith("MPI task timing breakdown"):
            out = {}
        m = _SECTION.match(line)
        if m and m.group(1) != "Section":
            out[m.group(1)] = float(m.group(2))
        m = re.match(r"Neighbor list builds\s*=\s*([0-9]+)", line)
        if m:
            out["nbuild"] = int(m.group(1))
    return out


def first_error(text, crashes=False):
    """The first line of a text that starts with 'ERROR', or None; with crashes, also the
    first line that tells of a crash (a segmentation fault, a rank that exited on a
    signal)."""
    text = _text(text)
    for line in text.splitlines():
        if line.startswith("ERROR") or (crashes and ("Segmentation fault" in line or
                                                     ("signal" in line and "exited" in line))):
            return line.strip()
    return None


def first_error_in_logs(paths):
    """The first ERROR or crash line in the given log files, or 'no Loop time in the
    logs' (what a bench reports for a run that ended without one)."""
    for path in paths:
        err = first_error(read_log(path), crashes=True)
        if err:
            return err
    return "no Loop time in the logs"


# ---------------------------------------------------------------------------------------
# Block averages

def block_means(values, nblocks=None, per_block=None, from_end=False):
    """Means of contiguous blocks: nblocks blocks of len(values) // nblocks samples, or
    blocks of per_block samples (as many as fit). The samples left over are dropped at the
    end, or at the start with from_end (keeps the latest samples)."""
    values = [float(v) for v in values]
    if nblocks is None:
        nblocks = len(values) // per_block
    else:
        per_block = len(values) // nblocks if nblocks > 0 else 0
    n = nblocks * per_block
    if n == 0:
        return []
    vals = values[len(values) - n:] if from_end else values[:n]
    return [sum(vals[i * per_block:(i + 1) * per_block]) / per_block for i in range(nblocks)]


def mean_stderr(samples):
    """Mean and standard error of the mean of independent samples (error nan below 2)."""
    samples = [float(s) for s in samples]
    n = len(samples)
    if n == 0:
        return float("nan"), float("nan")
    m = sum(samples) / n
    if n < 2:
        return m, float("nan")
    var = sum((x - m) ** 2 for x in samples) / (n - 1)
    return m, math.sqrt(var / n)


def mean_and_error(values, blocks=10):
    """Mean and standard error from `blocks` block averages of correlated samples (the
    latest samples when they do not divide evenly); ValueError below `blocks` samples."""
    if len(values) < blocks:
        raise ValueError("too few samples")
    return mean_stderr(block_means(values, nblocks=blocks, from_end=True))


def load_average():
    """The 1, 5 and 15 minute load averages as 'a b c' (benches print it before and
    after a measurement: a figure taken under load is not a target)."""
    return "%.2f %.2f %.2f" % os.getloadavg()


# ---------------------------------------------------------------------------------------
# Other LAMMPS binaries

def peers_dir():
    """$AISCI_PEERS, default ~/.cache/aisci-peers (scripts/install-peers.sh)."""
    return os.environ.get("AISCI_PEERS", os.path.expanduser("~/.cache/aisci-peers"))


def upstream_lmp():
    """Upstream LAMMPS 4Feb2025 (scripts/build-lammps.sh): $LAMMPS_UPSTREAM, else
    $AISCI_PEERS/lammps-4Feb2025/{bin/lmp,build/lmp,lmp} once its .complete marker is
    there. Returns (path, None) or (None, reason)."""
    exe = os.environ.get("LAMMPS_UPSTREAM")
    if exe:
        if os.path.isfile(exe) and os.access(exe, os.X_OK):
            return exe, None
        return None, f"LAMMPS_UPSTREAM={exe} is not an executable"
    root = os.path.join(peers_dir(), "lammps-4Feb2025")
    if not os.path.exists(os.path.join(root, ".complete")):
        return None, (f"upstream LAMMPS 4Feb2025 not built ({root}/.complete missing; run "
                      "scripts/build-lammps.sh or set LAMMPS_UPSTREAM)")
    for rel in ("bin/lmp", "build/lmp", "lmp"):
        exe = os.path.join(root, rel)
        if os.path.isfile(exe) and os.access(exe, os.X_OK):
            return exe, None
    return None, f"no lmp executable under {root}"
