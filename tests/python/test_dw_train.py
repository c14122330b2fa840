"""potentials/dw: a short training run of potentials.dw.train on a few frames of the
water data exports a model file whose metadata and checksum load, whose output is zero
for H and equivariant, and whose M-site error fell below that of a zero model."""
import os
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("AISCI_SOURCE_DIR", os.path.abspath(os.path.join(HERE, "..", "..")))
sys.path.insert(0, os.path.join(HERE, "..", "lammps"))  # test helpers
sys.path.insert(0, SOURCE)
import aisci_nn_toy as toy  # noqa: E402
from potentials.common.graph import build_graph  # noqa: E402
from potentials.common.metadata import load_model  # noqa: E402
from potentials.dw.train import load_frames, msite_displacement  # noqa: E402

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


out = os.path.join(toy.build_dir("dw_train"), "dw_small.pt")
if os.path.exists(out):
    os.remove(out)
run = subprocess.run([sys.executable, "-m", "potentials.dw.train", out, "--time-budget", "5",
                      "--max-frames", "4", "--batch", "2"], cwd=SOURCE,
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
print(run.stdout[-1500:])
check(run.returncode == 0 and os.path.exists(out), "training run exits 0 and writes the file")
model, meta = load_model(out)
check(meta["architecture"] == "dw" and meta["output"] == "vector"
      and meta["selected_types"] == "O" and meta["needs_triplets"] == 0,
      "metadata: dw, output vector, selected_types O, no triplets")
test_rmse = float(meta["test_rmse_d"])
x, types, cell = load_frames()[0]
g = build_graph(x, cell, meta["cutoff"])
args = (torch.tensor(g["edge_vec"]), torch.tensor(g["edge_index"]),
        torch.tensor(types, dtype=torch.int64), torch.zeros((0, 2), dtype=torch.int64))
with torch.no_grad():
    d = model(*args).numpy()
    q, _ = np.linalg.qr(np.random.RandomState(1).normal(size=(3, 3)))
    dq = model(args[0] @ torch.tensor(q).T, *args[1:]).numpy()
target = msite_displacement(x, types, cell)
check(np.all(d[types == 1] == 0), "H atoms get zeros")
check(np.abs(dq - d @ q.T).max() < 1e-10, "equivariant (%.1e)" % np.abs(dq - d @ q.T).max())
zero_rmse = np.sqrt((target[types == 0] ** 2).mean())
check(test_rmse < 0.5 * zero_rmse, "test RMSE %.2e A < half of the zero model's %.2e A"
      % (test_rmse, zero_rmse))

# DeePMD npy data with atomic_dipole (../shared/deepmd-kit/dplr-water): a short run with a
# checkpoint, then the same command again resumes from it (nothing left to train) and
# exports the same model; the test error is below the zero model's.
DPLR = os.path.normpath(os.path.join(SOURCE, "..", "shared", "deepmd-kit", "dplr-water", "train",
                                     "data"))
if os.path.isdir(DPLR):
    out2 = os.path.join(toy.build_dir("dw_train"), "dw_deepmd.pt")
    ck = out2 + ".ckpt"
    for f in (out2, ck):
        if os.path.exists(f):
            os.remove(f)
    cmd = [sys.executable, "-m", "potentials.dw.train", out2, "--data", DPLR, "--time-budget",
           "12", "--cutoff", "4.0", "--checkpoint", ck, "--checkpoint-every", "3"]
    runs = [subprocess.run(cmd, cwd=SOURCE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=300) for _ in range(2)]
    print(runs[0].stdout[-600:] + runs[1].stdout[-600:])
    check(all(r.returncode == 0 for r in runs), "--data runs exit 0")
    check("resumed from" in runs[1].stdout, "the second run resumes from the checkpoint")
    _, m2 = load_model(out2)
    check(float(m2["test_rmse_d"]) < 0.5 * float(m2["zero_model_test_rmse_d"])
          and "seed 0" in m2["split"] and "dplr-water" in m2["data"],
          "--data: test RMSE %s A < half of the zero model's %s A; split and data in the "
          "metadata" % (m2["test_rmse_d"], m2["zero_model_test_rmse_d"]))
    bad = subprocess.run(cmd[:-4] + ["--checkpoint", ck, "--lr", "1e-2"], cwd=SOURCE,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    check(bad.returncode != 0 and "other settings" in bad.stdout,
          "a checkpoint of other settings is refused with a message")
else:
    print("(no %s: DeePMD npy part not run)" % DPLR)
print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
