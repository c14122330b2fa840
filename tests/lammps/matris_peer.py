"""MatRIS's own code, driven for our tests and bench (runs in the matris venv only).

    python matris_peer.py make OUT.pth.tar {default|small} SEED [--reference NAME]
    python matris_peer.py eval CHECKPOINT IN.json OUT.json {float64|float32}
    python matris_peer.py crystals OUT.json SEED
    python matris_peer.py md CHECKPOINT IN.json STEPS OUT.json

make: a checkpoint as MatRIS writes one (torch.save of {"config", "state_dict"}) of a
MatRIS(...) with random weights (torch.manual_seed(SEED); every weight, residual and
norm weight perturbed so that no layer is an identity), float32 as MatRIS trains.
eval: MatRISCalculator (MatRIS's ASE calculator) on each structure of IN.json
({"frames": [{"numbers", "positions", "cell"}]}): energy (eV), forces (eV/A), stress
(ASE, eV/A^3) and MatRIS's reference-energy part. The calculator loads models by name
from ~/.cache/matris: HOME is pointed at a temporary directory holding the checkpoint
under the name MatRIS_10M_OAM.pth.tar, so nothing of the user's own cache is touched.
crystals: two many-element crystals built with ASE: (Sr,Ba)(Ti,Zr)O3 perovskite, 2x2x2
cells of 5 atoms (40 atoms, cubic cell), rattled by 0.05 A; a triclinic P1 cell
(a, b, c = 5.1, 5.6, 6.3 A; 78, 85, 71 degrees: no lattice vector as long as a
cutoff, where MatRIS (r <= r_c) and pair_style aisci (r < r_c) count a pair differently) of 12 atoms of Li, Mn, Fe, P, O, F at
random positions at least 1.8 A apart (placed one by one), the whole crystal rotated about (1, 2, 3) by 37
degrees (so that its cell is not in LAMMPS's orientation).
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


def crystals(out, seed):
    from ase.spacegroup import crystal
    rng = np.random.default_rng(seed)
    a = crystal(["Sr", "Ti", "O"], basis=[(0, 0, 0), (0.5, 0.5, 0.5), (0.5, 0.5, 0)],
                spacegroup=221, cellpar=[3.905, 3.905, 3.905, 90, 90, 90]).repeat((2, 2, 2))
    numbers = a.get_atomic_numbers()
    numbers[np.where(numbers == 38)[0][0]] = 56    # one Sr -> Ba
    numbers[np.where(numbers == 22)[0][0]] = 40    # one Ti -> Zr
    a.set_atomic_numbers(numbers)
    a.rattle(0.05, seed=seed)
    species = ["Li", "Li", "Mn", "Fe", "Fe", "P", "P", "O", "O", "O", "O", "F"]
    cellpar = [5.1, 5.6, 6.3, 78, 85, 71]
    from ase import Atoms
    from ase.geometry import cellpar_to_cell
    cell = cellpar_to_cell(cellpar)
    frac = []
    while len(frac) < len(species):     # one atom at a time, >= 1.8 A from the others
        f = rng.random(3)
        d = (np.array(frac) - f) if frac else np.zeros((0, 3))
        d = (d - np.round(d)) @ cell
        if len(d) == 0 or np.linalg.norm(d, axis=1).min() > 1.8:
            frac.append(f)
    b = Atoms(species, scaled_positions=np.array(frac), cell=cell, pbc=True)
    b.rotate(37, (1, 2, 3), rotate_cell=True)
    frames = [{"name": name, "numbers": x.get_atomic_numbers().tolist(),
               "positions": x.get_positions().tolist(), "cell": x.get_cell()[:].tolist()}
              for name, x in (("perovskite", a), ("triclinic", b))]
    json.dump({"frames": frames}, open(out, "w"))


def md(ckpt, inp, steps, out):
    """MatRIS's own molecular dynamics (matris.applications.md.MolecularDynamics, NVE
    velocity Verlet, 0.5 fs, task "ef", MatRIS's float32 model) on the first structure of
    IN.json from 300 K; one thread. Writes the seconds of STEPS steps after 2 warm-up
    steps (the calculator is called once per step)."""
    import time
    torch.set_num_threads(1)
    home = tempfile.mkdtemp(prefix="matris-home-")
    os.makedirs(os.path.join(home, ".cache", "matris"))
    shutil.copy(ckpt, os.path.join(home, ".cache", "matris", "MatRIS_10M_OAM.pth.tar"))
    os.environ["HOME"] = home
    from ase import Atoms
    from matris.applications.md import MolecularDynamics
    fr = json.load(open(inp))["frames"][0]
    atoms = Atoms(numbers=fr["numbers"], positions=fr["positions"], cell=fr["cell"], pbc=True)
    dyn = MolecularDynamics(atoms, model="matris_10m_oam", ensemble="nve", timestep=0.5,
                            starting_temperature=300, task="ef", device="cpu")
    dyn.run(2)
    t0 = time.perf_counter()
    dyn.run(steps)
    dt = time.perf_counter() - t0
    json.dump({"seconds": dt, "steps": steps, "atoms": len(atoms)}, open(out, "w"))
    shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[0] == "make":
        ref = a[a.index("--reference") + 1] if "--reference" in a else None
        make(a[1], a[2], int(a[3]), ref)
    elif a[0] == "md":
        md(a[1], a[2], int(a[3]), a[4])
    elif a[0] == "crystals":
        crystals(a[1], int(a[2]))
    elif a[0] == "eval":
        evaluate(a[1], a[2], a[3], a[4])
    else:
        sys.exit("usage: make|eval ...")
