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
sys.path.insert(0, HERE)
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
print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
