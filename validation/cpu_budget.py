"""Shared by the validation queues (dft_water/run_queue.py, dplr_water/run.py): run a
training at one thread with its CPU (process + waited-for children) counted against a
budget, state saved atomically, DeePMD-kit's dp and lcurve.out located and read."""
import json
import os
import signal
import subprocess
import time

TICK = os.sysconf("SC_CLK_TCK")
ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
              "DP_INTRA_OP_PARALLELISM_THREADS": "1", "DP_INTER_OP_PARALLELISM_THREADS": "1",
              "NUM_WORKERS": "0", "CUDA_VISIBLE_DEVICES": ""}
PEERS = os.environ.get("AISCI_PEERS", os.path.expanduser("~/.cache/aisci-peers"))


def log(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def load_json(path, default=None):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def save_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)
    os.replace(tmp, path)  # a stop while writing keeps the previous state


def proc_cpu(pid):
    """CPU seconds of a live process and of its waited-for children, from /proc."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return sum(int(x) for x in fields[11:15]) / TICK
    except (OSError, IndexError, ValueError):
        return None


def run_watched(cmd, cwd, logpath, cpu_before, budget, state, state_path, poll=None):
    """Run cmd at one thread, its output appended to logpath; keep state['cpu'] =
    cpu_before + its CPU (process + children) up to date in state_path (every 5 s), call
    poll(state) each second and once at the end, stop it (SIGTERM) past 1.1 x budget
    (budget 0: no limit). Returns (returncode, CPU of this segment, stopped)."""
    with open(logpath, "a") as out:
        out.write("\n### %s: %s\n" % (time.strftime("%Y-%m-%d %H:%M:%S"), " ".join(cmd)))
        out.flush()
        p = subprocess.Popen(cmd, cwd=cwd, env=dict(os.environ, **ONE_THREAD), stdout=out,
                             stderr=subprocess.STDOUT)
        seg, stopped, last = 0.0, False, 0.0
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid == p.pid:
                seg = ru.ru_utime + ru.ru_stime  # includes its waited-for children
                rc = os.waitstatus_to_exitcode(status)
                break
            c = proc_cpu(p.pid)
            if c is not None:
                seg = c
            state["cpu"] = cpu_before + seg
            if poll:
                poll(state)
            if time.time() - last > 5:
                save_json(state_path, state)
                last = time.time()
            if budget and state["cpu"] > 1.1 * budget and not stopped:
                log("watchdog: %.0f CPU s > 1.1 x budget %.0f: stopping" % (state["cpu"], budget))
                p.send_signal(signal.SIGTERM)
                stopped = True
            time.sleep(1.0)
    state["cpu"] = cpu_before + seg
    if poll:
        poll(state)
    save_json(state_path, state)
    return rc, seg, stopped


def dp_bin():
    dp = os.environ.get("AISCI_DP", os.path.join(PEERS, "deepmd", "bin", "dp"))
    if not os.access(dp, os.X_OK):
        raise RuntimeError("DeePMD-kit not found at %s: run scripts/install-peers.sh "
                           "(or set AISCI_DP)" % dp)
    return dp


def lcurve_rows(path):
    """Numeric rows of a DeePMD-kit lcurve.out ([] while it is missing or half written)."""
    rows = []
    try:
        with open(path) as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    rows.append([float(x) for x in line.split()])
    except (OSError, ValueError):
        pass
    return rows
