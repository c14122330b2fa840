"""Helpers for the LAMMPS-level tests: run lmp-aisci (or Debian's lmp) on an input
script, parse thermo tables from log files, and count checks.

Environment (set by ctest): AISCI_LMP (launcher), AISCI_MPIEXEC (mpiexec with flags),
AISCI_SOURCE_DIR, AISCI_BUILD_DIR. Each test prints 'N passed, M failed' and exits 1 on
any failure."""
import os
import re
import shlex
import subprocess
import sys
import tempfile

LMP = os.environ.get("AISCI_LMP", "lmp-aisci")
MPIEXEC = shlex.split(os.environ.get("AISCI_MPIEXEC", "mpiexec --oversubscribe --allow-run-as-root"))
SOURCE_DIR = os.environ.get("AISCI_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
DEBIAN_LMP = "/usr/bin/lmp"

_passed = 0
_failed = 0


def check(cond, what):
    """Record one check; print the failing ones."""
    global _passed, _failed
    if cond:
        _passed += 1
    else:
        _failed += 1
        print("FAILED: " + what, flush=True)
    return cond


SKIP_CODE = 77  # ctest: SKIP_RETURN_CODE (tests/CMakeLists.txt)


def skip(reason):
    """End a test that cannot run here: print why and exit 77, which ctest reports as
    skipped (never as passed)."""
    print("SKIPPED: " + reason, flush=True)
    sys.exit(SKIP_CODE)


def summary(name):
    print("%s: %d passed, %d failed" % (name, _passed, _failed), flush=True)
    sys.exit(0 if _failed == 0 and _passed > 0 else 1)


class Run:
    """Result of one LAMMPS run: return code, combined output, per-partition logs."""

    def __init__(self, rc, output, logs, workdir):
        self.rc = rc
        self.output = output
        self.logs = logs
        self.workdir = workdir

    def thermo(self, partition=0):
        return parse_thermo(self.logs[partition])


def run_lammps(script, nprocs=1, partitions=None, exe=None, timeout=300, extra_args=(),
               files=None, workdir=None, env=None, mpiexec=None):
    """Write `script` to in.test in a fresh directory and run it. partitions = 'PxM';
    mpiexec: the launcher as a list (default AISCI_MPIEXEC), e.g. another MPI's mpirun."""
    exe = exe or LMP
    workdir = workdir or tempfile.mkdtemp(prefix="aisci_lmp_")
    with open(os.path.join(workdir, "in.test"), "w") as f:
        f.write(script)
    for name, text in (files or {}).items():
        with open(os.path.join(workdir, name), "w") as f:
            f.write(text)
    cmd = [exe, "-in", "in.test", "-log", "log.lammps", "-nocite"]
    if partitions:
        cmd += ["-partition"] + partitions.split()
    cmd += list(extra_args)
    if nprocs > 1 or partitions:
        cmd = list(mpiexec or MPIEXEC) + ["-n", str(nprocs)] + cmd
    full_env = dict(os.environ)
    full_env.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")
    full_env.setdefault("OMP_NUM_THREADS", "1")
    if env:
        full_env.update(env)
    try:
        p = subprocess.run(cmd, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, env=full_env)
        rc, out = p.returncode, p.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        rc, out = -999, (e.stdout or b"").decode(errors="replace") + "\nTIMEOUT"
    logs = []
    if partitions:
        words = partitions.split()
        nparts = int(words[0].split("x")[0]) if "x" in words[0] else len(words)
        for i in range(nparts):
            path = os.path.join(workdir, "log.lammps.%d" % i)
            logs.append(open(path).read() if os.path.exists(path) else "")
        out += "".join(logs)
    else:
        path = os.path.join(workdir, "log.lammps")
        logs.append(open(path).read() if os.path.exists(path) else "")
    return Run(rc, out, logs, workdir)


def parse_thermo(log):
    """All thermo blocks of a log, concatenated: dict column -> list of floats."""
    data = {}
    header = None
    for line in log.splitlines():
        words = line.split()
        if not words:
            header = header if header is None else header
            continue
        if words[0] == "Step":
            header = words
            for h in header:
                data.setdefault(h, [])
            continue
        if header is not None:
            if len(words) == len(header) and re.match(r"^-?\d+$", words[0]):
                try:
                    vals = [float(w) for w in words]
                except ValueError:
                    header = None
                    continue
                for h, v in zip(header, vals):
                    data[h].append(v)
            elif words[0] == "Loop":
                header = None
    return data


def mean_and_error(values, blocks=10):
    """Mean and standard error from block averages (correlated samples)."""
    n = len(values) // blocks * blocks
    if n < blocks:
        raise ValueError("too few samples")
    vals = values[len(values) - n:]
    size = n // blocks
    means = [sum(vals[i * size:(i + 1) * size]) / size for i in range(blocks)]
    m = sum(means) / blocks
    var = sum((x - m) ** 2 for x in means) / (blocks - 1)
    return m, (var / blocks) ** 0.5


def loop_time(log):
    m = re.search(r"Loop time of ([0-9.eE+-]+) on", log)
    return float(m.group(1)) if m else None
