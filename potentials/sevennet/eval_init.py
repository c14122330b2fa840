"""Test RMSE of the cached models before any training (zero-shot SevenNet-0 with the
refitted offset, and the pruned models right after surgery).

    $AISCI_PEERS/sevenn/bin/python -m potentials.sevennet.eval_init [--test-every 10]
"""
import argparse
import json
import os

import torch

from potentials.sevennet import data as D
from potentials.sevennet import model as M
from potentials.sevennet.train import evaluate


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--test-every", type=int, default=10)
    a = ap.parse_args()
    torch.set_num_threads(1)
    test = D.load(D.TEST)[::a.test_every]
    rows = []
    for n in ("base", "pruned50", "pruned25"):
        d = torch.load(os.path.join(M.cache_dir(), n + ".init.pt"), weights_only=False)
        e, f = evaluate(d["config"], d["state"], test)
        row = {"model": n, "irreps": " ".join(d["config"]["irreps_manual"]),
               "measured_time_ratio": d.get("measured_time_ratio", 1.0), "test_frames": len(test),
               "test_rmse_e_mev_per_atom": round(e, 3), "test_rmse_f_mev_per_angstrom": round(f, 1)}
        print(json.dumps(row), flush=True)
        rows.append(row)
    with open(os.path.join(M.cache_dir(), "init_report.json"), "w") as fh:
        json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
