"""MatRIS-style invariant potential with separable (linear-cost) three-body attention.

Inspired by MatRIS (Zhou et al., "MatRIS: Toward Reliable and Efficient Pretrained
Machine Learning Interatomic Potentials", arXiv:2603.02002): an invariant model whose
edge features are refined by attention over bond angles, with a cost linear in the
number of triplets. This is our own small implementation of that idea, not the
authors' code; the details below are our choices.

Inputs follow the model file contract v1 (forward(edge_vec, edge_index, atom_types,
triplets) -> per-atom energies): geometry enters only through edge_vec.

Features: atoms h [N, C], directed edges e [E, C].
- Radial: Bessel basis of r times a C2 polynomial envelope at ``cutoff``; the three-body
  weight of an edge is the same envelope at ``cutoff_3body``: w_e = u(r_e / r_3).
- Edge init: e = SiLU(W_r rbf) * (A h_i + B h_j).
- Each of ``num_layers`` layers:
  1. three-body separable attention on the triplets (e1, e2) (the line graph):
     q = phi(W_q e), k = phi(W_k e) with phi = elu + 1 > 0, v = W_v e,
     g_t = W_a P(cos theta_t) (Legendre P_0..P_L of the angle at the centre);
     per channel c: s_tc = q_{e1,c} k_{e2,c} w_e1 w_e2 (channel-separable scores,
     no softmax over pairs of triplets), m_{e1,c} = sum_t s_tc v_{e2,c} g_tc /
     (1 + sum_t s_tc). Cost O(T C): linear in the number of triplets.
  2. edge update: e += MLP([e, m, h_i, h_j]).
  3. atom update (two-body, gated by the envelope so the energy is C2 at the cutoff):
     h_i += MLP([h_i, sum_j u(r_ij / r_c) (W_e e_ij) * (W_h h_j) / neighbor_norm]).
- Energy: E_i = type_energy[type_i] + energy_scale * (MLP(h_i) + 0.5 sum_j phi_{t_i t_j}(r_ij)),
  phi a learned combination of the radial basis per type pair (a direct two-body path).
"""

from typing import List, Tuple

import torch
from torch import nn

from potentials.common.blocks import (MLP, BesselBasis, EnergyReadout, PairEnergy, legendre,
                                      scatter_sum)
from potentials.common.blocks import smooth_envelope
from potentials.common.ops import GhostExchange


class ThreeBodyAttention(nn.Module):
    def __init__(self, channels: int, lmax: int):
        super().__init__()
        self.query = nn.Linear(channels, channels)
        self.key = nn.Linear(channels, channels)
        self.value = nn.Linear(channels, channels)
        self.angle = nn.Linear(lmax + 1, channels)

    def forward(self, e: torch.Tensor, triplets: torch.Tensor, angular: torch.Tensor,
                w3: torch.Tensor) -> torch.Tensor:
        e1 = triplets[:, 0]
        e2 = triplets[:, 1]
        q = torch.nn.functional.elu(self.query(e)) + 1.0
        k = torch.nn.functional.elu(self.key(e)) + 1.0
        v = self.value(e)
        score = q.index_select(0, e1) * k.index_select(0, e2) * (w3[e1] * w3[e2]).unsqueeze(-1)
        msg = score * v.index_select(0, e2) * self.angle(angular)
        num = scatter_sum(msg, e1, e.size(0))
        den = scatter_sum(score, e1, e.size(0))
        return num / (1.0 + den)


class MatrisLayer(nn.Module):
    def __init__(self, channels: int, lmax: int, neighbor_norm: float):
        super().__init__()
        self.attention = ThreeBodyAttention(channels, lmax)
        self.edge_update = MLP(4 * channels, channels, channels)
        self.edge_msg = nn.Linear(channels, channels)
        self.node_msg = nn.Linear(channels, channels, bias=False)
        self.node_update = MLP(2 * channels, channels, channels)
        self.inv_neighbor_norm = 1.0 / neighbor_norm

    def forward(self, h: torch.Tensor, e: torch.Tensor, edge_index: torch.Tensor,
                triplets: torch.Tensor, angular: torch.Tensor, w3: torch.Tensor,
                env: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        i = edge_index[0]
        j = edge_index[1]
        m3 = self.attention(e, triplets, angular, w3)
        hi = h.index_select(0, i)
        hj = h.index_select(0, j)
        e = e + self.edge_update(torch.cat([e, m3, hi, hj], dim=-1))
        msg = self.edge_msg(e) * self.node_msg(hj) * env.unsqueeze(-1)
        agg = scatter_sum(msg, i, h.size(0)) * self.inv_neighbor_norm
        h = h + self.node_update(torch.cat([h, agg], dim=-1))
        return h, e


class MatrisModel(nn.Module):
    """MatRIS-style model; see the module docstring. Contract v1 forward."""

    def __init__(self, num_types: int = 2, cutoff: float = 4.5, cutoff_3body: float = 3.0,
                 num_layers: int = 2, channels: int = 32, num_radial: int = 8, lmax: int = 3,
                 neighbor_norm: float = 6.0, ghost_exchange: bool = False):
        super().__init__()
        if not 0.0 < cutoff_3body <= cutoff:
            raise ValueError("MatrisModel: need 0 < cutoff_3body <= cutoff, got %r, %r"
                             % (cutoff_3body, cutoff))
        self.cutoff = float(cutoff)
        self.cutoff_3body = float(cutoff_3body)
        self.lmax = int(lmax)
        self.embedding = nn.Embedding(num_types, channels)
        self.rbf = BesselBasis(cutoff, num_radial)
        self.edge_radial = nn.Linear(num_radial, channels)
        self.edge_src = nn.Linear(channels, channels, bias=False)
        self.edge_dst = nn.Linear(channels, channels)
        self.layers = nn.ModuleList(
            [MatrisLayer(channels, lmax, neighbor_norm) for _ in range(num_layers)])
        self.pair = PairEnergy(num_types, num_radial)
        self.readout = EnergyReadout(channels, num_types)
        # Opt-in (export --ghost-exchange): between layers the atom features h of ghost
        # atoms are replaced by their owners' (torch.ops.aisci.ghost_exchange; identity in
        # Python). No parameters: state_dicts are the same either way.
        self.exchange = GhostExchange() if ghost_exchange else nn.Identity()

    def forward(self, edge_vec: torch.Tensor, edge_index: torch.Tensor,
                atom_types: torch.Tensor, triplets: torch.Tensor) -> torch.Tensor:
        r = torch.linalg.norm(edge_vec, dim=-1)
        unit = edge_vec / r.unsqueeze(-1)
        env = smooth_envelope(r / self.cutoff)
        w3 = smooth_envelope(r / self.cutoff_3body)
        cos_t = (unit.index_select(0, triplets[:, 0]) * unit.index_select(0, triplets[:, 1])).sum(-1)
        angular = legendre(cos_t, self.lmax)
        h = self.embedding(atom_types)
        i = edge_index[0]
        j = edge_index[1]
        rbf = self.rbf(r)
        e = torch.nn.functional.silu(self.edge_radial(rbf)) * (
            self.edge_src(h.index_select(0, i)) + self.edge_dst(h.index_select(0, j)))
        for k, layer in enumerate(self.layers):
            if k > 0:
                h = self.exchange(h)
            h, e = layer(h, e, edge_index, triplets, angular, w3, env)
        return self.readout(h, atom_types, self.pair(rbf, edge_index, atom_types))


def build(config: dict) -> MatrisModel:
    """Model from a config dict (the ``config`` entry of a checkpoint)."""
    keys: List[str] = ["num_types", "cutoff", "cutoff_3body", "num_layers", "channels",
                       "num_radial", "lmax", "neighbor_norm", "ghost_exchange"]
    return MatrisModel(**{k: config[k] for k in keys if k in config})
