"""MatRIS's own code, driven for our tests and bench (runs in the matris venv only).

    python matris_peer.py make OUT.pth.tar {default|small} SEED [--reference NAME]
    python matris_peer.py eval CHECKPOINT IN.json OUT.json {float64|float32}

make: a checkpoint as MatRIS writes one (torch.save of {"config", "state_dict"}) of a
MatRIS(...) with random weights (torch.manual_seed(SEED); every weight, residual and
norm weight perturbed so that no layer is an identity), float32 as MatRIS trains.
eval: MatRISCalculator (MatRIS's ASE calculator) on each structure of IN.json
({"frames": [{"numbers", "positions", "cell"}]}): energy (eV), forces (eV/A), stress
(ASE, eV/A^3) and MatRIS's reference-energy part. The calculator loads models by name
from ~/.cache/matris: HOME is pointed at a temporary directory holding the checkpoint
under the name MatRIS_10M_OAM.pth.tar, so nothing of the user's own cache is touched.
float64: the model (not its reference-energy layer, which MatRIS feeds float32) and
MatRIS's graph converter are switched to float64.
"""
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import torch

SMALL = dict(num_layers=2, node_feat_dim=16, edge_feat_dim=16, three_body_feat_dim=8,
             mlp_hidden_dims=[16, 16], num_radial=7, num_angular=7, max_l=3, max_n=2,
             pairwise_cutoff=5.0, three_body_cutoff=3.0, reference_energy="omat")


def make(out, kind, seed, reference=None):
    from matris.model.model import MatRIS
    torch.manual_seed(seed)
    cfg = dict(SMALL) if kind == "small" else dict(reference_energy="omat")
    if reference is not None:
        cfg["reference_energy"] = None if reference == "none" else reference
    model = MatRIS(**cfg)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.startswith("reference_energy"):
                continue
            p.add_(0.1 * torch.randn_like(p))
    torch.save({"config": model.config, "state_dict": model.state_dict()}, out)
    print(json.dumps({"out": out, "params": model.get_params()}))


def evaluate(ckpt, inp, out, dtype):
    home = tempfile.mkdtemp(prefix="matris-home-")
    os.makedirs(os.path.join(home, ".cache", "matris"))
    shutil.copy(ckpt, os.path.join(home, ".cache", "matris", "MatRIS_10M_OAM.pth.tar"))
    os.environ["HOME"] = home
    import matris.graph.converter as conv
    from ase import Atoms
    from matris.applications.base import MatRISCalculator
    calc = MatRISCalculator(model="matris_10m_oam", task="efs", device="cpu")
    if dtype == "float64":
        conv.datatype = torch.float64
        calc.model = calc.model.double()
        if calc.model.reference_energy is not None:
            calc.model.reference_energy.float()
    frames = json.load(open(inp))["frames"]
    res = []
    for fr in frames:
        atoms = Atoms(numbers=fr["numbers"], positions=fr["positions"], cell=fr["cell"], pbc=True)
        atoms.calc = calc
        e = float(atoms.get_potential_energy())
        f = atoms.get_forces().tolist()
        s = atoms.get_stress(voigt=False).tolist()
        # MatRIS's reference-energy part: its layer's float32 output per atom (the
        # calculator's own product with N is float32 too), times N in float64.
        ref = 0.0
        if calc.model.reference_energy is not None:
            from pymatgen.io.ase import AseAtomsAdaptor
            graph = calc.model.graph_converter(AseAtomsAdaptor.get_structure(atoms))
            ref = float(calc.model.reference_energy([graph]).reshape(-1)[0].item()) * len(atoms)
        res.append({"energy": e, "forces": f, "stress": s, "ref_energy": ref,
                    "volume": float(atoms.get_volume())})
    json.dump({"results": res}, open(out, "w"))
    shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[0] == "make":
        ref = a[a.index("--reference") + 1] if "--reference" in a else None
        make(a[1], a[2], int(a[3]), ref)
    elif a[0] == "eval":
        evaluate(a[1], a[2], a[3], a[4])
    else:
        sys.exit("usage: make|eval ...")
