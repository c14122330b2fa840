"""Export a SevenNet-derived (config, state) file as a contract-v1 model (cache only).

TorchScript written by the sevenn venv's torch (2.x) is loaded by Debian's libtorch
1.13 (checked by ``check_debian_load``: /usr/bin/python3 loads the file and compares
energies and forces with the eager model, 1e-10 relative in float64).
"""

import json
import os
import subprocess
import sys
import warnings

import numpy as np
import torch

from potentials.common.metadata import make_metadata_text, state_dict_checksum
from potentials.sevennet import model as M

# the sevenn venv's torch (2.15) warns at every jit.script/save call that TorchScript is
# deprecated; the contract is TorchScript (it must load in Debian's libtorch 1.13), so
# each of those warnings is shown once
warnings.filterwarnings("once", category=FutureWarning, module=r"torch\.jit")

DEBIAN_PYTHON = "/usr/bin/python3"


def check_graph():
    from potentials.common.graph import build_graph
    from potentials.data.water_box import make_water_box
    box = make_water_box(8, 1.0, seed=11)
    g = build_graph(box["positions"], np.diag(box["box"]), 5.0)
    return (torch.tensor(g["edge_vec"]), torch.tensor(g["edge_index"]),
            torch.tensor(box["types"] - 1))


def export(config, state, out, description, extra=None):
    model = M.wrap(config, state, torch.float64)
    import e3nn.util.jit
    scripted = e3nn.util.jit.script(model)  # e3nn modules need their own compile modes
    meta = {"format_version": 1, "architecture": "sevennet", "cutoff": float(config["cutoff"]),
            "cutoff_3body": 0.0, "num_layers": int(config["num_convolution_layer"]),
            "type_names": list(M.TYPE_NAMES), "units": "metal", "dtype": "float64",
            "needs_triplets": 0, "checksum": state_dict_checksum(scripted),
            "description": description,
            "irreps": " ".join(config["irreps_manual"])}
    meta.update(extra or {})
    torch.jit.save(scripted, out, _extra_files={"aisci_metadata": make_metadata_text(meta)})
    g = check_graph()
    e, f = M.energy_forces(model, *g)
    ref = out + ".check.npz"
    np.savez(ref, edge_vec=g[0].numpy(), edge_index=g[1].numpy(), types=g[2].numpy(),
             energy=e.item(), forces=f.detach().numpy())
    res = check_debian_load(out, ref)
    os.remove(ref)
    return meta, res


CHECK = r"""
import sys, json, numpy as np, torch
m = torch.jit.load(sys.argv[1])
d = np.load(sys.argv[2])
ev = torch.tensor(d["edge_vec"], requires_grad=True)
ei = torch.tensor(d["edge_index"]); t = torch.tensor(d["types"])
e = m(ev, ei, t, torch.zeros(0, 2, dtype=torch.long)).sum()
g, = torch.autograd.grad(e, ev)
f = torch.zeros(len(t), 3, dtype=g.dtype).index_add(0, ei[0], g).index_add(0, ei[1], -g)
print(json.dumps({"torch": torch.__version__,
                  "de_rel": abs(e.item() - float(d["energy"])) / abs(float(d["energy"])),
                  "df_rel": float(np.abs(f.numpy() - d["forces"]).max() / np.abs(d["forces"]).max())}))
"""


def check_debian_load(path, ref):
    """Load ``path`` with Debian's torch 1.13 and compare with the reference npz."""
    p = subprocess.run([DEBIAN_PYTHON, "-c", CHECK, path, ref], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("Debian torch could not run %s:\n%s" % (path, p.stderr[-2000:]))
    res = json.loads(p.stdout.strip().splitlines()[-1])
    if not (res["de_rel"] < 1e-10 and res["df_rel"] < 1e-10):
        raise RuntimeError("%s: Debian torch differs from the eager model: %s" % (path, res))
    return res
