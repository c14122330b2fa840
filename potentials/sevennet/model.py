"""SevenNet-0 as a contract-v1 model: load, rebuild with other irreps, wrap.

SevenNet-0 (``sevenn`` 0.13.0 ships ``pretrained_potentials/SevenNet_0__11Jul2024/
checkpoint_sevennet_0.pth``) is a NequIP-style e3nn model: 5 interaction layers,
node features 128x0e -> 4 x (128x0e+64x1e+32x2e) -> 128x0e, cutoff 5 A, radial Bessel
basis (8) with an XPLOR cutoff, per-species energy shift/scale. ``build(config)`` rebuilds
it with sevenn's own builder (``irreps_manual`` gives the pruned node irreps), so a
derived model is (config, state_dict): the format of the cache files.

``ExportModel`` wraps a built model in the contract-v1 signature
``forward(edge_vec, edge_index, atom_types, triplets) -> E_i`` (edge_index row 0 = the
centre i, row 1 = the neighbour j, edge_vec = x_j - x_i: sevenn's convention too).
"""

import os
from typing import List

import torch

CACHE_ENV = "AISCI_SEVENN_CACHE"
#: Contract type names of the water models and their atomic numbers.
TYPE_NAMES = ("O", "H")
ATOMIC_NUMBERS = (8, 1)


def cache_dir():
    """Folder for SevenNet-0-derived files (never the repository):
    $AISCI_SEVENN_CACHE or $AISCI_PEERS/models/sevenn-pruned/v2 (v1: the
    lost code of an earlier session, not used)."""
    d = os.environ.get(CACHE_ENV)
    if not d:
        peers = os.environ.get("AISCI_PEERS", os.path.expanduser("~/.cache/aisci-peers"))
        d = os.path.join(peers, "models", "sevenn-pruned", "v2")
    os.makedirs(d, exist_ok=True)
    return d


def sevennet0_path():
    import sevenn
    p = os.path.join(os.path.dirname(sevenn.__file__), "pretrained_potentials",
                     "SevenNet_0__11Jul2024", "checkpoint_sevennet_0.pth")
    if not os.path.exists(p):
        raise FileNotFoundError("SevenNet-0 checkpoint not in the sevenn package: %s" % p)
    return p


def load_sevennet0():
    """(model, config) of SevenNet-0 from the installed sevenn package (float32, eval)."""
    import sevenn.util
    model, config = sevenn.util.model_from_checkpoint(sevennet0_path())
    return model.eval(), dict(config)


def build(config, state=None, dtype=None):
    """sevenn model from ``config`` (irreps_manual = node irreps, or False), cast to
    ``dtype`` (default: the state's floating dtype, else float32) before ``state`` is
    loaded (loading float64 weights into a float32 model would round them)."""
    from sevenn.model_build import build_E3_equivariant_model
    model = build_E3_equivariant_model(dict(config))
    if dtype is None and state is not None:
        dtype = next((v.dtype for v in state.values() if v.is_floating_point()), None)
    if dtype is not None:
        model = model.to(dtype)
    if state is not None:
        model.load_state_dict(state)
    return model


def type_to_onehot(config):
    """Indices of O and H in the model's one-hot species embedding."""
    tm = config["_type_map"]
    return [int(tm[z]) for z in ATOMIC_NUMBERS]


SKIP = ("onehot_idx_to_onehot", "reduce_total_enegy", "force_output")


class ExportModel(torch.nn.Module):
    """Contract-v1 wrapper: per-atom energies (eV) from edge vectors (A)."""

    def __init__(self, seq, onehot: List[int]):
        super().__init__()
        self.type_to_onehot = onehot
        self.onehot = seq._modules["onehot_idx_to_onehot"]
        self.blocks = torch.nn.ModuleList(
            [m for name, m in seq._modules.items() if name not in SKIP])

    def forward(self, edge_vec: torch.Tensor, edge_index: torch.Tensor,
                atom_types: torch.Tensor, triplets: torch.Tensor) -> torch.Tensor:
        onehot = torch.tensor(self.type_to_onehot, dtype=torch.long, device=atom_types.device)
        data = {"x": onehot[atom_types], "edge_vec": edge_vec, "edge_index": edge_index}
        data = self.onehot(data)
        data["x"] = data["x"].to(edge_vec.dtype)
        data["node_attr"] = data["node_attr"].to(edge_vec.dtype)
        for b in self.blocks:
            data = b(data)
        return data["atomic_energy"].reshape(-1)


def exact_w3j(seq):
    """Replace the Wigner-3j buffers of the tensor products (stored in float32 in
    SevenNet-0's checkpoint: their rounding breaks equivariance at ~1e-9 in float64) by
    e3nn's values computed in the buffers' dtype."""
    import re
    from e3nn import o3
    for name, buf in list(seq.named_buffers()):
        m = re.search(r"_w3j_(\d+)_(\d+)_(\d+)$", name)
        if m:
            w = o3.wigner_3j(*(int(g) for g in m.groups()), dtype=torch.float64)
            with torch.no_grad():
                buf.copy_(w.to(buf.dtype).reshape(buf.shape))
    return seq


def wrap(config, state, dtype=torch.float64):
    """ExportModel of (config, state) in ``dtype`` (eval mode)."""
    seq = exact_w3j(build(config, state, dtype))
    return ExportModel(seq, type_to_onehot(config)).to(dtype).eval()


def energy_forces(model, edge_vec, edge_index, atom_types, create_graph=False):
    """Total energy and forces [N, 3] (contract convention: F_i += g, F_j -= g)."""
    ev = edge_vec.detach().clone().requires_grad_(True)
    e_i = model(ev, edge_index, atom_types, torch.zeros(0, 2, dtype=torch.long))
    e = e_i.sum()
    (g,) = torch.autograd.grad(e, ev, create_graph=create_graph)
    n = atom_types.shape[0]
    f = torch.zeros(n, 3, dtype=g.dtype).index_add(0, edge_index[0], g)
    f = f.index_add(0, edge_index[1], -g)
    return e, f
