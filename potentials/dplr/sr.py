"""Train and export the short-range (SR) model of DPLR water, potentials/models/water_dplr_sr.pt.

Usage::

    nice -n 10 env OMP_NUM_THREADS=1 /usr/bin/python3 -m potentials.dplr.sr \
        --work /tmp/dplrsr --out potentials/models/water_dplr_sr.pt --time-budget 1000

Steps:

1. SR labels (potentials/dplr/labels.py): clean q-TIP4P/F teacher minus the Gaussian
   electrostatics (beta = 0.4 1/A) of O 0, H +0.5564 and the exact M site -1.1128, the
   term that fix dplr + kspace_style pppm/dplr add at MD time;
2. initial weights: those of potentials/models/water_matris.pt (a MatRIS-style model of
   the whole teacher, the same architecture and config: cutoff 4.5 A, 3-body 3.0 A, 2
   layers) with its O type energy raised by the mean -E_LR per molecule of the training
   frames (6.028 eV; type energies are buffers that training does not move);
3. fine-tuning on the SR labels with potentials/common/train.py (float64, same split:
   seed 0, 384 train / 96 test frames; energy + force loss);
4. the checkpoint's metadata gains ``dplr_beta`` (checked by kspace_style pppm/dplr
   against kspace_modify gewald) and a description of the charges, then it is exported
   with potentials/common/export.py (contract v1, float64).
"""

import argparse
import os
import sys

import numpy as np
import torch

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from potentials.common import train as common_train  # noqa: E402
from potentials.common.evaluate import split_frames  # noqa: E402
from potentials.common.export import export_checkpoint  # noqa: E402
from potentials.dplr.labels import BETA, GAMMA, Q_H, Q_M, make_labels  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DESCRIPTION = ("DPLR short-range water model (USER-AISCI potentials/dplr): matris-style, trained "
               "on q-TIP4P/F clean labels minus Gaussian electrostatics (beta %g 1/A) of O 0, "
               "H %+.4f, WC %+.4f at the M site (gamma %.5f); use with fix dplr + "
               "kspace_style pppm/dplr, kspace_modify gewald %g" % (BETA, Q_H, Q_M, GAMMA, BETA))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", default="/tmp/dplrsr", help="folder for labels and checkpoints")
    parser.add_argument("--out", default=os.path.join(REPO, "potentials", "models",
                                                      "water_dplr_sr.pt"))
    parser.add_argument("--init", default=os.path.join(REPO, "potentials", "models",
                                                       "water_matris.pt"))
    parser.add_argument("--time-budget", type=float, default=1000.0, help="CPU seconds")
    parser.add_argument("--epochs", type=int, default=400)
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--lr-final", type=float, default=5e-5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--export-only", action="store_true",
                        help="only step 4, from <work>/sr.ckpt")
    args = parser.parse_args(argv)
    os.makedirs(args.work, exist_ok=True)
    labels = os.path.join(args.work, "water_dplr_sr_labels.npz")
    ckpt = os.path.join(args.work, "sr.ckpt")

    if not args.export_only:
        d = make_labels(out=labels)
        train_idx, _ = split_frames(len(d["n_atoms"]), 0.2, 0)
        shift = float(np.mean(-d["e_lr"][train_idx] / (d["n_atoms"][train_idx] / 3)))
        state = torch.jit.load(args.init, map_location="cpu").state_dict()
        state = {k: v.detach().clone().to(torch.float64) for k, v in state.items()}
        state["readout.type_energy"][0] += shift
        init = os.path.join(args.work, "init.ckpt")
        torch.save({"state_dict": state}, init)
        print("labels %s; init %s (O type energy + %.4f eV)" % (labels, init, shift), flush=True)
        common_train.main(["--arch", "matris", "--data", labels, "--out", ckpt,
                           "--init", init, "--dtype", "float64",
                           "--time-budget", str(args.time_budget), "--epochs", str(args.epochs),
                           "--batch", str(args.batch), "--lr", str(args.lr),
                           "--lr-final", str(args.lr_final), "--threads", str(args.threads)])

    c = torch.load(ckpt, map_location="cpu")
    c["metrics"]["dplr_beta"] = BETA
    c["metrics"]["dplr_charges"] = "O 0 H %.4f WC %.4f" % (Q_H, Q_M)
    c["metrics"]["dplr_msite_gamma"] = GAMMA
    c["data"] = "water_qtip4pf_clean.npz minus E_gauss"
    torch.save(c, ckpt)
    text = export_checkpoint(ckpt, args.out, "float64", DESCRIPTION)
    print("wrote %s\n%s" % (args.out, text), end="")


if __name__ == "__main__":
    main()
