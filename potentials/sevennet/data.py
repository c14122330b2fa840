"""DFT water (DeePMD npy systems, ../shared/deepmd-kit/water-dft): frames and graphs."""

import os

import numpy as np
import torch

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
#: $AISCI_WATER_DFT, else $AISCI_DEEPMD_DIR/water-dft, else ../shared/deepmd-kit/water-dft
#: beside the clone (as the tests and validation/dft_water find it)
DEFAULT_ROOT = os.environ.get("AISCI_WATER_DFT") or os.path.join(
    os.environ.get("AISCI_DEEPMD_DIR") or os.path.join(os.path.dirname(_REPO), "shared",
                                                       "deepmd-kit"), "water-dft")
TRAIN = ("data_0", "data_1", "data_2")
TEST = ("data_3",)


def load_system(path):
    """Frames of one DeePMD system: dicts positions, cell, types (0 = O, 1 = H),
    energy (eV), forces (eV/A)."""
    tmap = open(os.path.join(path, "type_map.raw")).read().split()
    if tmap[:2] != ["O", "H"]:
        raise ValueError("%s: type_map %s, expected O H" % (path, tmap))
    types = np.loadtxt(os.path.join(path, "type.raw"), dtype=np.int64).reshape(-1)
    frames = []
    for s in sorted(d for d in os.listdir(path) if d.startswith("set.")):
        sd = os.path.join(path, s)
        coord = np.load(os.path.join(sd, "coord.npy"))
        box = np.load(os.path.join(sd, "box.npy"))
        energy = np.load(os.path.join(sd, "energy.npy")).reshape(-1)
        force = np.load(os.path.join(sd, "force.npy"))
        for f in range(len(coord)):
            frames.append({"positions": coord[f].reshape(-1, 3), "cell": box[f].reshape(3, 3),
                           "types": types, "energy": float(energy[f]),
                           "forces": force[f].reshape(-1, 3)})
    return frames


def load(names, root=DEFAULT_ROOT):
    out = []
    for n in names:
        out += load_system(os.path.join(root, n))
    return out


def graph(frame, cutoff, dtype=torch.float64):
    """(edge_vec, edge_index, atom_types) tensors of a frame."""
    from potentials.common.graph import build_graph
    g = build_graph(frame["positions"], frame["cell"], cutoff)
    return (torch.tensor(g["edge_vec"], dtype=dtype), torch.tensor(g["edge_index"]),
            torch.tensor(frame["types"], dtype=torch.long))
