"""Helpers shared by the bench/ scripts: MPI launcher flags, LAMMPS loop times and the
first error line of failed runs; importing it line-buffers stdout."""
import os
import re
import subprocess
import sys

# Every bench prints a line per stage; line buffering makes each line appear when it is
# printed, also when the output goes to a file or a pipe (tee), not at the end of the run.
sys.stdout.reconfigure(line_buffering=True)


def mpi_flags(mpiexec, who="bench"):
    """Open MPI needs --oversubscribe for more ranks than cores (and root permission)."""
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True).stdout
    except OSError:
        sys.exit(f"{who}: cannot run {mpiexec}")
    flags = []
    if "Open MPI" in out or "OpenRTE" in out:
        flags.append("--oversubscribe")
        if os.geteuid() == 0:
            flags.append("--allow-run-as-root")
    return flags


def loop_time(path):
    """'Loop time' of the last run in a LAMMPS log, or None."""
    t = None
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                m = re.match(r"Loop time of ([0-9.eE+-]+) on", line)
                if m:
                    t = float(m.group(1))
    return t


def timing_sections(path):
    """The last run's "MPI task timing breakdown" of a LAMMPS log as {section: average
    seconds} plus "nbuild" (its "Neighbor list builds"); {} when absent."""
    out = {}
    if os.path.exists(path):
        with open(path, errors="replace") as f:
            for line in f:
                if line.startswith("MPI task timing breakdown"):
                    out = {}
                m = re.match(r"(\w+)\s*\|\s*[0-9.eE+-]*\s*\|\s*([0-9.eE+-]+)\s*\|", line)
                if m and m.group(1) != "Section":
                    out[m.group(1)] = float(m.group(2))
                m = re.match(r"Neighbor list builds\s*=\s*([0-9]+)", line)
                if m:
                    out["nbuild"] = int(m.group(1))
    return out


def first_error(paths):
    """The first LAMMPS error or crash line found in the given logs."""
    for path in paths:
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    if line.startswith("ERROR") or "Segmentation fault" in line \
                            or ("signal" in line and "exited" in line):
                        return line.strip()
    return "no Loop time in the logs"


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
