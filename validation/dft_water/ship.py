#!/usr/bin/env python3
"""Export a finished DFT-water job of ours as a shipped model file (potentials/models).

    /usr/bin/python3 validation/dft_water/ship.py ours-matris-3600 [--out PATH]

Reads the job's checkpoint ($AISCI_RUNS/dft_water/<job>/model.ckpt, written by
run_queue.py) and its summary (results/<job>.json), and writes a contract-v1 model file
(float64, through potentials.common.export) whose metadata names the data, the split, the
CPU budget and the job, besides the train/test errors the checkpoint carries. Default
output: potentials/models/water_<arch>_dft.pt.
"""
import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, SOURCE)
RUNS = os.path.join(os.environ.get("AISCI_RUNS", os.path.expanduser("~/.cache/aisci-runs")),
                    "dft_water")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("job", help="a finished job of ours, e.g. ours-matris-3600")
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    if not a.job.startswith("ours-"):
        sys.exit("ship.py: %s is not a job of ours (ours-<arch>-<budget>)" % a.job)
    ckpt_path = os.path.join(RUNS, a.job, "model.ckpt")
    summary_path = os.path.join(HERE, "results", a.job + ".json")
    for p, what in ((ckpt_path, "checkpoint"), (summary_path, "summary")):
        if not os.path.exists(p):
            sys.exit("ship.py: %s: no %s (run run_queue.py --only %s first)" % (p, what, a.job))
    import torch
    from potentials.common.export import export_checkpoint

    summary = json.load(open(summary_path))
    ckpt = torch.load(ckpt_path, map_location="cpu")
    arch = ckpt["architecture"]
    out = a.out or os.path.join(SOURCE, "potentials", "models", "water_%s_dft.pt" % arch)
    m = ckpt["metrics"]
    m.update({
        "data": "DeePMD-kit water-dft (../shared/deepmd-kit/water-dft): ab initio liquid "
                "water, 64 H2O per frame",
        "split": "train data_0 data_1 data_2 (%d frames), test data_3 (%d frames)" % (
            m["train_frames"], m["test_frames"]),
        "budget_cpu_s": int(summary["budget_cpu_s"]),
        "job": "validation/dft_water/run_queue.py %s" % a.job,
    })
    desc = ("%s-style water potential (USER-AISCI potentials/) trained on DFT liquid water "
            "(DeePMD-kit water-dft data_0-2, tested on data_3) for %d CPU s on one thread"
            % (arch, int(summary["budget_cpu_s"])))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.ckpt")
        torch.save(ckpt, path)
        print(export_checkpoint(path, out, "float64", desc))
    print("wrote %s" % out)


if __name__ == "__main__":
    main()
