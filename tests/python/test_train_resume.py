"""potentials/common/train.py: DeePMD npy systems as data, exact resume after a kill.

A small synthetic system in DeePMD-kit's npy layout (written here) is trained for a fixed
number of steps three ways: uninterrupted; killed (SIGKILL) at some point after the first
checkpoint and resumed from --checkpoint; the final weights of the two must be bit for bit
equal (model, optimizer, random streams and position in the epoch all restored). A rerun
with other settings on the same checkpoint must be refused naming the setting; the
learning-curve CSV must have its header and rows in step order."""
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lammps"))  # test helpers
import aisci_testlib as t  # noqa: E402

import torch  # noqa: E402


def write_system(path, nframes, seed):
    rng = np.random.default_rng(seed)
    os.makedirs(os.path.join(path, "set.000"))
    types = [0] * 4 + [1] * 8
    with open(os.path.join(path, "type.raw"), "w") as f:
        f.write("\n".join(str(x) for x in types) + "\n")
    with open(os.path.join(path, "type_map.raw"), "w") as f:
        f.write("O\nH\n")
    n = len(types)
    np.save(os.path.join(path, "set.000", "coord.npy"), rng.uniform(0, 6, (nframes, 3 * n)))
    np.save(os.path.join(path, "set.000", "box.npy"), np.tile(np.eye(3).ravel() * 6.0, (nframes, 1)))
    np.save(os.path.join(path, "set.000", "energy.npy"), rng.normal(size=nframes) - 10.0)
    np.save(os.path.join(path, "set.000", "force.npy"), rng.normal(size=(nframes, 3 * n)))


tmp = tempfile.mkdtemp(prefix="aisci_train_")
write_system(os.path.join(tmp, "train"), 12, 1)
write_system(os.path.join(tmp, "test"), 4, 2)
base = [sys.executable, "-m", "potentials.common.train", "--arch", "matris",
        "--data", os.path.join(tmp, "train"), "--test-data", os.path.join(tmp, "test"),
        "--channels", "8", "--layers", "1", "--radial", "4", "--batch", "2", "--epochs", "4",
        "--time-budget", "1e6", "--cutoff", "3.0", "--cutoff-3body", "2.0"]
env = dict(os.environ, PYTHONPATH=t.SOURCE_DIR, OMP_NUM_THREADS="1")


def run(extra, **kw):
    return subprocess.run(base + extra, cwd=t.SOURCE_DIR, env=env, capture_output=True,
                          text=True, timeout=600, **kw)


ref = run(["--out", os.path.join(tmp, "ref.ckpt")])
t.check(ref.returncode == 0, "uninterrupted run: rc %d %s" % (ref.returncode, ref.stderr[-500:]))

state = os.path.join(tmp, "state.pt")
curve = os.path.join(tmp, "curve.csv")
args = ["--out", os.path.join(tmp, "resumed.ckpt"), "--checkpoint", state,
        "--checkpoint-every", "0", "--curve", curve, "--curve-every", "1e-9"]
proc = subprocess.Popen(base + args, cwd=t.SOURCE_DIR, env=env, stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL, start_new_session=True)
deadline = time.time() + 300
killed_at = None
while time.time() < deadline and proc.poll() is None:
    if os.path.exists(state):
        try:
            killed_at = torch.load(state)["step"]
        except Exception:  # noqa: BLE001 (being replaced right now)
            time.sleep(0.05)
            continue
        if killed_at >= 3:
            os.killpg(proc.pid, signal.SIGKILL)
            break
    time.sleep(0.05)
proc.wait()
t.check(proc.returncode == -signal.SIGKILL,
        "first run killed after its checkpoint of step %s (rc %s)" % (killed_at, proc.returncode))
t.check(not os.path.exists(os.path.join(tmp, "resumed.ckpt")), "killed run wrote no final model")

res = run(args)
t.check(res.returncode == 0 and "resumed from" in res.stdout,
        "resumed run: rc %d, says it resumed: %s" % (res.returncode, res.stdout[:300]))
a = torch.load(os.path.join(tmp, "ref.ckpt"))
b = torch.load(os.path.join(tmp, "resumed.ckpt"))
same = all(torch.equal(a["state_dict"][k], b["state_dict"][k]) for k in a["state_dict"])
t.check(same and a["metrics"]["train_steps"] == b["metrics"]["train_steps"],
        "kill + resume gives the weights of the uninterrupted run bit for bit (%d steps)"
        % a["metrics"]["train_steps"])
t.check(b["metrics"]["train_data"] == "train" and b["metrics"]["test_data"] == "test",
        "metrics name the DeePMD systems: %s / %s" % (b["metrics"]["train_data"],
                                                       b["metrics"]["test_data"]))

bad = subprocess.run(base[:base.index("--batch")] + ["--batch", "3"] + base[base.index("--batch") + 2:]
                     + args, cwd=t.SOURCE_DIR, env=env, capture_output=True, text=True, timeout=600)
t.check(bad.returncode != 0 and "batch" in bad.stderr and state in bad.stderr,
        "a checkpoint of other settings is refused naming the setting: %s" % bad.stderr.strip()[-200:])

rows = open(curve).read().splitlines()
steps = [int(r.split(",")[1]) for r in rows[1:]]
t.check(rows[0].startswith("cpu_s,step,lr,") and len(steps) >= 3 and steps == sorted(steps),
        "learning curve: header and %d rows in step order" % len(steps))
# the equivariant architecture through the same trainer (the DFT-water queue's third model
# of ours), then exported through potentials.common.export (which rebuilds it by name)
eq = subprocess.run([sys.executable, "-m", "potentials.common.train", "--arch", "equivariant",
                     "--data", os.path.join(tmp, "train"), "--test-data", os.path.join(tmp, "test"),
                     "--eq-channels", "4", "2", "2", "--layers", "1", "--radial", "4",
                     "--batch", "2", "--epochs", "2", "--time-budget", "1e6", "--cutoff", "3.0",
                     "--out", os.path.join(tmp, "eq.ckpt")],
                    cwd=t.SOURCE_DIR, env=env, capture_output=True, text=True, timeout=600)
t.check(eq.returncode == 0, "--arch equivariant trains: rc %d %s" % (eq.returncode, eq.stderr[-500:]))
if eq.returncode == 0:
    c = torch.load(os.path.join(tmp, "eq.ckpt"))
    t.check(c["architecture"] == "equivariant" and c["config"]["channels"] == [4, 2, 2]
            and c["config"]["cutoff_3body"] == 0.0 and c["metrics"]["train_steps"] == 12,
            "equivariant checkpoint: %s, channels %s, 3-body cutoff %s, %d steps" % (
                c["architecture"], c["config"]["channels"], c["config"]["cutoff_3body"],
                c["metrics"]["train_steps"]))
    ex = subprocess.run([sys.executable, "-m", "potentials.equivariant.train", "--export",
                         os.path.join(tmp, "eq.ckpt"), os.path.join(tmp, "eq.pt")],
                        cwd=t.SOURCE_DIR, env=env, capture_output=True, text=True, timeout=600)
    t.check(ex.returncode == 0 and os.path.getsize(os.path.join(tmp, "eq.pt")) > 0,
            "the equivariant checkpoint exports to a model file: rc %d %s" % (
                ex.returncode, ex.stderr[-300:]))

import shutil  # noqa: E402
shutil.rmtree(tmp, ignore_errors=True)
t.summary("test_train_resume")
