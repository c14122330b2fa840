"""O(3)-equivariant message-passing potential with features up to l = 2 (plain PyTorch).

NequIP/MACE-like in spirit, written in Cartesian form (no e3nn): every atom carries
three irreducible blocks, each a stack of channels,

- l = 0: scalars            s [N, C0]
- l = 1: vectors            v [N, C1, 3]
- l = 2: traceless symmetric 3x3 tensors t [N, C2, 9] (row-major 3x3)

so a channel of order l is a whole irreducible representation and can be removed as a
block without breaking equivariance (potentials/prune relies on this). C1 = 0 or C2 = 0
drops that order entirely.

Edge e = (i, j): r = |edge_vec|, unit vector u, and the Cartesian "spherical harmonics"
Y0 = 1, Y1 = u, Y2 = u u^T - I/3. Radial weights come from a Bessel basis with a C2
polynomial envelope (potentials.common.blocks), through a small MLP, times the envelope
again (so every message and its first two derivatives vanish at the cutoff).

Tensor products (the Cartesian equivalents of the Clebsch-Gordan couplings
l_in x l_f -> l_out, up to normalisation), one "path" each:

  0x0->0 s              1x1->0 v.u            2x2->0 u^T t u
  0x1->1 s u            1x0->1 v              1x2->1 Y2 v          2x1->1 t u
  0x2->2 s Y2           2x0->2 t              1x1->2 {v u^T}        2x2->2 {t Y2}

where {A} = (A + A^T)/2 - tr(A) I/3. No cross product is used, so the model is
equivariant under improper rotations too (energy O(3)-invariant, forces O(3)-
equivariant). Each path p has its own channel mixing W_p [C_lout, C_lin] (applied on the
nodes before gathering, which is cheap) and radial weights R_p(r) [C_lout] per edge
("uvu"-like: mix first, then an element-wise radial weight per output channel):

  m_i^(lout) = 1/norm sum_j sum_{p -> lout} R_p(r_ij) * TP_p(W_p x_j^(lin), Y(u_ij)).

Node update (residual, gated nonlinearity): the invariants q = [m0, |m1_c|^2, |m2_c|^2]
feed s += W_b silu(W_a q) (hidden width C0) and the gates g = sigmoid(W_g q):
v_c += g_c (W_v m1)_c, t_c += g_c (W_t m2)_c (a scalar gate times an l > 0 block keeps
equivariance). The first layer sees only scalars (v = t = 0 at the start); the last layer
updates only the scalars. Per-atom energy: E_i = type_energy[type_i] + energy_scale *
MLP(s_i) (l = 0 channels only).

The buffers ``mask0/1/2`` (ones, one per channel of each order) multiply the features
after every layer and the summed messages; they do nothing in a trained model. With
mask_c = 0 the model equals, to rounding, the smaller model without channel c (which
potentials/prune builds and tests), so dLoss/dmask_c is the first-order Taylor
saliency of removing channel c.

Contract v1 forward(edge_vec, edge_index, atom_types, triplets) -> per-atom energies;
triplets are ignored (needs_triplets = 0).
"""

from typing import List

import torch
from torch import nn

from potentials.common.blocks import MLP, BesselBasis, smooth_envelope

#: Paths (l_in, l_filter, l_out), in the order their rows are stored.
PATHS = ((0, 0, 0), (1, 1, 0), (2, 2, 0),
         (0, 1, 1), (1, 0, 1), (1, 2, 1), (2, 1, 1),
         (0, 2, 2), (2, 0, 2), (1, 1, 2), (2, 2, 2))


def _sym_traceless(a: torch.Tensor) -> torch.Tensor:
    """(A + A^T)/2 - tr(A)/3 I for a [..., 3, 3]."""
    s = 0.5 * (a + a.transpose(-1, -2))
    tr = s.diagonal(dim1=-2, dim2=-1).sum(-1) / 3.0
    return s - tr[..., None, None] * torch.eye(3, dtype=a.dtype, device=a.device)


class EquivariantLayer(nn.Module):
    """One interaction: messages over edges, then the gated node update.

    cin, cout: channels per order [C0, C1, C2] of the input and output features (an
    order with 0 channels is absent)."""

    def __init__(self, cin: List[int], cout: List[int], num_radial: int, radial_hidden: int,
                 neighbor_norm: float):
        super().__init__()
        self.cin = [int(c) for c in cin]
        self.cout = [int(c) for c in cout]
        active: List[int] = []
        for p, (li, lf, lo) in enumerate(PATHS):
            if self.cin[li] > 0 and self.cout[lo] > 0:
                active.append(p)
        self.active = active
        self.path_in: List[int] = [q[0] for q in PATHS]
        self.path_filter: List[int] = [q[1] for q in PATHS]
        self.path_out: List[int] = [q[2] for q in PATHS]
        # Row offsets of each path in the per-l_in mixing weights and in the radial output.
        in_off = [0, 0, 0]
        self.row_in: List[int] = [-1] * len(PATHS)
        self.row_rad: List[int] = [-1] * len(PATHS)
        rad = 0
        for p in active:
            li, lf, lo = PATHS[p]
            self.row_in[p] = in_off[li]
            in_off[li] += self.cout[lo]
            self.row_rad[p] = rad
            rad += self.cout[lo]
        self.n_rad = rad
        self.w_in0 = nn.Parameter(torch.randn(in_off[0], self.cin[0]) / max(1, self.cin[0]) ** 0.5)
        self.w_in1 = nn.Parameter(torch.randn(in_off[1], self.cin[1]) / max(1, self.cin[1]) ** 0.5)
        self.w_in2 = nn.Parameter(torch.randn(in_off[2], self.cin[2]) / max(1, self.cin[2]) ** 0.5)
        self.radial1 = nn.Linear(num_radial, radial_hidden)
        self.radial2 = nn.Linear(radial_hidden, max(rad, 1))
        n_inv = self.cout[0] + self.cout[1] + self.cout[2]
        n_gate = self.cout[1] + self.cout[2]
        self.update_a = nn.Linear(n_inv, self.cout[0])
        self.update_b = nn.Linear(self.cout[0], self.cout[0])
        self.gate = nn.Linear(n_inv, max(n_gate, 1))
        self.w_v = nn.Parameter(torch.randn(self.cout[1], self.cout[1]) / max(1, self.cout[1]) ** 0.5)
        self.w_t = nn.Parameter(torch.randn(self.cout[2], self.cout[2]) / max(1, self.cout[2]) ** 0.5)
        self.inv_norm = 1.0 / float(neighbor_norm)

    def forward(self, s: torch.Tensor, v: torch.Tensor, t: torch.Tensor, rbf: torch.Tensor,
                env: torch.Tensor, u: torch.Tensor, y2: torch.Tensor, edge_index: torch.Tensor,
                mask0: torch.Tensor, mask1: torch.Tensor, mask2: torch.Tensor):
        n = s.size(0)
        ne = u.size(0)
        i = edge_index[0]
        j = edge_index[1]
        c0 = self.cout[0]
        c1 = self.cout[1]
        c2 = self.cout[2]
        radial = self.radial2(torch.nn.functional.silu(self.radial1(rbf))) * env.unsqueeze(-1)
        # Channel mixing on the nodes, then gather at the neighbour j.
        hs = torch.matmul(s, self.w_in0.t()).index_select(0, j)
        hv = torch.matmul(self.w_in1, v).index_select(0, j) if self.cin[1] > 0 else v
        ht = torch.matmul(self.w_in2, t).index_select(0, j) if self.cin[2] > 0 else t
        ue = u.unsqueeze(1)                      # [E, 1, 3]
        y2f = y2.reshape(ne, 1, 9)               # [E, 1, 9]
        m0 = torch.zeros((ne, c0), dtype=s.dtype, device=s.device)
        m1 = torch.zeros((ne, c1, 3), dtype=s.dtype, device=s.device)
        m2 = torch.zeros((ne, c2, 9), dtype=s.dtype, device=s.device)
        for p in self.active:
            li = self.path_in[p]
            lo = self.path_out[p]
            a = self.row_in[p]
            w = radial[:, self.row_rad[p]:self.row_rad[p] + self.cout[lo]]
            if li == 0:
                x0 = hs[:, a:a + self.cout[lo]]
                if lo == 0:
                    m0 = m0 + w * x0
                elif lo == 1:
                    m1 = m1 + (w * x0).unsqueeze(-1) * ue
                else:
                    m2 = m2 + (w * x0).unsqueeze(-1) * y2f
            elif li == 1:
                x1 = hv[:, a:a + self.cout[lo]]
                if lo == 0:
                    m0 = m0 + w * (x1 * ue).sum(-1)
                elif lo == 1:
                    if self.path_filter[p] == 0:
                        m1 = m1 + w.unsqueeze(-1) * x1
                    else:   # Y2 v = u (u.v) - v/3
                        m1 = m1 + w.unsqueeze(-1) * ((x1 * ue).sum(-1, keepdim=True) * ue - x1 / 3.0)
                else:       # {v u^T}
                    outer = x1.unsqueeze(-1) * ue.unsqueeze(-2)
                    m2 = m2 + w.unsqueeze(-1) * _sym_traceless(outer).reshape(ne, -1, 9)
            else:
                x2 = ht[:, a:a + self.cout[lo]].reshape(ne, -1, 3, 3)
                if lo == 0:     # u^T t u
                    tu = torch.matmul(x2, u.reshape(ne, 1, 3, 1)).squeeze(-1)
                    m0 = m0 + w * (tu * ue).sum(-1)
                elif lo == 1:   # t u
                    m1 = m1 + w.unsqueeze(-1) * torch.matmul(x2, u.reshape(ne, 1, 3, 1)).squeeze(-1)
                elif self.path_filter[p] == 0:
                    m2 = m2 + w.unsqueeze(-1) * x2.reshape(ne, -1, 9)
                else:           # {t Y2}
                    prod = torch.matmul(x2, y2.unsqueeze(1))
                    m2 = m2 + w.unsqueeze(-1) * _sym_traceless(prod).reshape(ne, -1, 9)
        # Sum over neighbours (centre i); the masks (ones) make a channel removable as a
        # whole: with mask_c = 0 the model equals the one without channel c.
        m0 = torch.zeros((n, c0), dtype=s.dtype, device=s.device).index_add(0, i, m0) * (
            self.inv_norm * mask0)
        inv: List[torch.Tensor] = [m0]
        if c1 > 0:
            m1 = torch.zeros((n, c1, 3), dtype=s.dtype, device=s.device).index_add(0, i, m1) * (
                self.inv_norm * mask1.unsqueeze(-1))
            inv.append((m1 * m1).sum(-1))
        if c2 > 0:
            m2 = torch.zeros((n, c2, 9), dtype=s.dtype, device=s.device).index_add(0, i, m2) * (
                self.inv_norm * mask2.unsqueeze(-1))
            inv.append((m2 * m2).sum(-1))
        q = torch.cat(inv, dim=-1)
        # the hidden unit c of the scalar update belongs to l = 0 channel c (same mask)
        s = s + self.update_b(torch.nn.functional.silu(self.update_a(q)) * mask0)
        if c1 + c2 > 0:
            g = torch.sigmoid(self.gate(q))
            if c1 > 0:
                upd = g[:, :c1].unsqueeze(-1) * torch.matmul(self.w_v, m1)
                v = upd if self.cin[1] == 0 else v + upd
            if c2 > 0:
                upd = g[:, c1:c1 + c2].unsqueeze(-1) * torch.matmul(self.w_t, m2)
                t = upd if self.cin[2] == 0 else t + upd
        return s, v, t


class Readout(nn.Module):
    """Per-atom energy from the l = 0 channels: type_energy[type] + energy_scale * MLP(s)."""

    def __init__(self, channels: int, hidden: int, num_types: int):
        super().__init__()
        self.mlp = MLP(channels, hidden, 1)
        self.register_buffer("type_energy", torch.zeros(num_types, dtype=torch.float64))
        self.register_buffer("energy_scale", torch.ones(1, dtype=torch.float64))

    def forward(self, s: torch.Tensor, atom_types: torch.Tensor) -> torch.Tensor:
        return self.type_energy[atom_types] + self.energy_scale * self.mlp(s).squeeze(-1)


class EquivariantModel(nn.Module):
    """See the module docstring. channels = [C0, C1, C2] (C0 >= 1; C1, C2 >= 0)."""

    def __init__(self, num_types: int = 2, cutoff: float = 4.0, num_layers: int = 2,
                 channels: List[int] = (16, 8, 4), num_radial: int = 8, radial_hidden: int = 16,
                 readout_hidden: int = 16, neighbor_norm: float = 5.0):
        super().__init__()
        channels = [int(c) for c in channels]
        if len(channels) != 3 or channels[0] < 1 or min(channels) < 0:
            raise ValueError("EquivariantModel: channels must be [C0 >= 1, C1 >= 0, C2 >= 0], "
                             "got %r" % (channels,))
        if num_layers < 1:
            raise ValueError("EquivariantModel: num_layers must be >= 1, got %r" % num_layers)
        self.cutoff = float(cutoff)
        self.channels = channels
        self.embedding = nn.Embedding(num_types, channels[0])
        self.rbf = BesselBasis(cutoff, num_radial)
        layers = []
        for k in range(num_layers):
            cin = [channels[0], 0, 0] if k == 0 else channels
            cout = [channels[0], 0, 0] if k == num_layers - 1 else channels
            layers.append(EquivariantLayer(cin, cout, num_radial, radial_hidden, neighbor_norm))
        self.layers = nn.ModuleList(layers)
        self.readout = Readout(channels[0], readout_hidden, num_types)
        self.register_buffer("mask0", torch.ones(channels[0], dtype=torch.float64))
        self.register_buffer("mask1", torch.ones(channels[1], dtype=torch.float64))
        self.register_buffer("mask2", torch.ones(channels[2], dtype=torch.float64))

    def forward(self, edge_vec: torch.Tensor, edge_index: torch.Tensor,
                atom_types: torch.Tensor, triplets: torch.Tensor) -> torch.Tensor:
        r = torch.linalg.norm(edge_vec, dim=-1)
        u = edge_vec / r.unsqueeze(-1)
        eye = torch.eye(3, dtype=edge_vec.dtype, device=edge_vec.device)
        y2 = u.unsqueeze(-1) * u.unsqueeze(-2) - eye / 3.0
        env = smooth_envelope(r / self.cutoff)
        rbf = self.rbf(r)
        n = atom_types.size(0)
        s = self.embedding(atom_types) * self.mask0
        v = torch.zeros((n, 0, 3), dtype=edge_vec.dtype, device=edge_vec.device)
        t = torch.zeros((n, 0, 9), dtype=edge_vec.dtype, device=edge_vec.device)
        for layer in self.layers:
            s, v, t = layer(s, v, t, rbf, env, u, y2, edge_index, self.mask0, self.mask1,
                            self.mask2)
            s = s * self.mask0
            if v.size(1) > 0:
                v = v * self.mask1.unsqueeze(-1)
            if t.size(1) > 0:
                t = t * self.mask2.unsqueeze(-1)
        return self.readout(s, atom_types)


CONFIG_KEYS = ("num_types", "cutoff", "num_layers", "channels", "num_radial", "radial_hidden",
               "readout_hidden", "neighbor_norm")


def build(config: dict) -> EquivariantModel:
    """Model from a config dict (the ``config`` entry of a checkpoint)."""
    return EquivariantModel(**{k: config[k] for k in CONFIG_KEYS if k in config})
