"""DPA3-style line-graph potential: message passing on the atom graph and on its line
graph, interleaved.

Inspired by DPA3 (Zhang et al., "A Graph Neural Network for the Era of Large Atomistic
Models", arXiv:2506.01686), whose RepFlow layers update node, edge and angle features
together. This is our own small implementation of that idea, not DeePMD-kit's code;
the details below are our choices.

Graphs (contract v1 inputs):
- atom graph G: atoms are nodes, directed edges e = (i, j) within ``cutoff``;
- line graph L(G): the edges shorter than ``cutoff_3body`` are its nodes ("bond
  nodes"), and each triplet t = (e1, e2) (two bonds of the same centre atom) is one of
  its edges ("angle edges"), carrying angle features a_t.

Features: atoms h [N, C], edges e [E, C], angles a [T, Ca]. Smooth cut-offs: u_e =
u(r_e / r_c) gates every edge-to-atom message, w_e = u(r_e / r_3) gates every
angle-to-edge message (C2 polynomial envelope), so the energy is C2 in the positions.

Each of ``num_layers`` layers does, in this order:
1. angle update (line-graph edges): a_t += MLP([a_t, E_a e_e1, E_a e_e2, H_a h_i]);
2. bond update from angles (message passing on the line graph):
   e_e1 += MLP([e_e1, sum_t w_e1 w_e2 (A a_t) * (B e_e2) / angle_norm]);
3. edge update from atoms (atom graph): e += MLP([e, h_i, h_j]);
4. atom update: h_i += MLP([h_i, sum_j u_ij (W_e e_ij) * (W_h h_j) / neighbor_norm]).
Initial angle features a = MLP(Legendre P_0..P_L(cos theta_t)), edge features from a
Bessel basis times (A h_i + B h_j). Energy: E_i = type_energy[type_i] + scale (MLP(h_i) + 0.5 sum_j phi_{t_i t_j}(r_ij)),
phi a learned combination of the radial basis per type pair (a direct two-body path).
"""

from typing import List, Tuple

import torch
from torch import nn

from potentials.common.blocks import (MLP, BesselBasis, EnergyReadout, PairEnergy, legendre,
                                      scatter_sum)
from potentials.common.blocks import smooth_envelope
from potentials.common.ops import GhostExchange


class RepFlowLayer(nn.Module):
    def __init__(self, channels: int, angle_channels: int, neighbor_norm: float,
                 angle_norm: float):
        super().__init__()
        ca = angle_channels
        self.angle_from_edge = nn.Linear(channels, ca, bias=False)
        self.angle_from_node = nn.Linear(channels, ca, bias=False)
        self.angle_update = MLP(4 * ca, ca, ca)
        self.bond_angle = nn.Linear(ca, channels)
        self.bond_partner = nn.Linear(channels, channels, bias=False)
        self.bond_update = MLP(2 * channels, channels, channels)
        self.edge_update = MLP(3 * channels, channels, channels)
        self.edge_msg = nn.Linear(channels, channels)
        self.node_msg = nn.Linear(channels, channels, bias=False)
        self.node_update = MLP(2 * channels, channels, channels)
        self.inv_neighbor_norm = 1.0 / neighbor_norm
        self.inv_angle_norm = 1.0 / angle_norm

    def forward(self, h: torch.Tensor, e: torch.Tensor, a: torch.Tensor,
                edge_index: torch.Tensor, triplets: torch.Tensor, env: torch.Tensor,
                w3: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        i = edge_index[0]
        j = edge_index[1]
        e1 = triplets[:, 0]
        e2 = triplets[:, 1]
        # 1. angle features from the two bonds and the centre atom
        ea = self.angle_from_edge(e)
        centre = i.index_select(0, e1)
        a = a + self.angle_update(torch.cat(
            [a, ea.index_select(0, e1), ea.index_select(0, e2),
             self.angle_from_node(h).index_select(0, centre)], dim=-1))
        # 2. line-graph message passing: angles -> bonds
        wt = (w3.index_select(0, e1) * w3.index_select(0, e2)).unsqueeze(-1)
        msg3 = self.bond_angle(a) * self.bond_partner(e).index_select(0, e2) * wt
        agg3 = scatter_sum(msg3, e1, e.size(0)) * self.inv_angle_norm
        e = e + self.bond_update(torch.cat([e, agg3], dim=-1))
        # 3. atom graph: atoms -> edges
        hi = h.index_select(0, i)
        hj = h.index_select(0, j)
        e = e + self.edge_update(torch.cat([e, hi, hj], dim=-1))
        # 4. edges -> atoms
        msg = self.edge_msg(e) * self.node_msg(hj) * env.unsqueeze(-1)
        agg = scatter_sum(msg, i, h.size(0)) * self.inv_neighbor_norm
        h = h + self.node_update(torch.cat([h, agg], dim=-1))
        return h, e, a


class Dpa3Model(nn.Module):
    """DPA3-style model; see the module docstring. Contract v1 forward."""

    def __init__(self, num_types: int = 2, cutoff: float = 4.5, cutoff_3body: float = 3.0,
                 num_layers: int = 2, channels: int = 32, angle_channels: int = 16,
                 num_radial: int = 8, lmax: int = 3, neighbor_norm: float = 6.0,
                 angle_norm: float = 3.0, ghost_exchange: bool = False):
        super().__init__()
        if not 0.0 < cutoff_3body <= cutoff:
            raise ValueError("Dpa3Model: need 0 < cutoff_3body <= cutoff, got %r, %r"
                             % (cutoff_3body, cutoff))
        self.cutoff = float(cutoff)
        self.cutoff_3body = float(cutoff_3body)
        self.lmax = int(lmax)
        self.embedding = nn.Embedding(num_types, channels)
        self.rbf = BesselBasis(cutoff, num_radial)
        self.edge_radial = nn.Linear(num_radial, channels)
        self.edge_src = nn.Linear(channels, channels, bias=False)
        self.edge_dst = nn.Linear(channels, channels)
        self.angle_embed = MLP(lmax + 1, angle_channels, angle_channels)
        self.layers = nn.ModuleList(
            [RepFlowLayer(channels, angle_channels, neighbor_norm, angle_norm)
             for _ in range(num_layers)])
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
        a = self.angle_embed(legendre(cos_t, self.lmax))
        h = self.embedding(atom_types)
        i = edge_index[0]
        j = edge_index[1]
        rbf = self.rbf(r)
        e = torch.nn.functional.silu(self.edge_radial(rbf)) * (
            self.edge_src(h.index_select(0, i)) + self.edge_dst(h.index_select(0, j)))
        for k, layer in enumerate(self.layers):
            if k > 0:
                h = self.exchange(h)
            h, e, a = layer(h, e, a, edge_index, triplets, env, w3)
        return self.readout(h, atom_types, self.pair(rbf, edge_index, atom_types))


def build(config: dict) -> Dpa3Model:
    """Model from a config dict (the ``config`` entry of a checkpoint)."""
    keys: List[str] = ["num_types", "cutoff", "cutoff_3body", "num_layers", "channels",
                       "angle_channels", "num_radial", "lmax", "neighbor_norm", "angle_norm",
                       "ghost_exchange"]
    return Dpa3Model(**{k: config[k] for k in keys if k in config})
