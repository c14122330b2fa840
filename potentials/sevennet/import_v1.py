"""Re-evaluate and export a state file of the earlier session's lost code (cache v1).

    $AISCI_PEERS/sevenn/bin/python -m potentials.sevennet.import_v1 b_pruned25

The v1 files hold {"desc": {"config": sevenn config, "keep": ...}, "state": state_dict of
a wrapper whose keys start with "blocks."}. Our code rebuilds the model from the config,
evaluates its test RMSE (train.evaluate) and exports it like ours (export.export, with
the Debian-torch reload check). Its training cannot be reproduced (the code is lost):
the numbers are labelled as such in docs/equivariant.md.
"""
import json
import os
import sys

import torch

from potentials.sevennet import data as D
from potentials.sevennet import export as X
from potentials.sevennet import model as M
from potentials.sevennet.train import evaluate

V1 = os.path.dirname(M.cache_dir().rstrip("/"))


def main():
    name = sys.argv[1]
    torch.set_num_threads(1)
    s = torch.load(os.path.join(V1, name + ".state.pt"), weights_only=False)
    init = torch.load(os.path.join(V1, s["args"]["init"].split("/")[-1]), weights_only=False)
    cfg = init["desc"]["config"]
    st = {k[7:]: v for k, v in s["state"].items() if k.startswith("blocks.")}
    e, f = evaluate(cfg, st, D.load(D.TEST)[::10])
    print(json.dumps({"v1": name, "steps": s["step"], "cpu": s["cpu_used"], "ours_8_frames": [e, f],
                      "v1_json": s.get("test")}), flush=True)
    st64 = {k: v.double() if v.is_floating_point() else v for k, v in st.items()}
    out = os.path.join(M.cache_dir(), "water_sevennet_v1_%s.pt" % name)
    meta, res = X.export(cfg, st64, out, "v1 %s: %d steps, %.0f CPU s by an earlier session's "
                         "lost code (SevenNet-0 derived; SevenNet licence (GPL-3.0); not for the "
                         "repository)" % (name, s["step"], s["cpu_used"]))
    print("export: %s, Debian torch %s: dE %.1e dF %.1e" % (out, res["torch"], res["de_rel"], res["df_rel"]))


if __name__ == "__main__":
    main()
