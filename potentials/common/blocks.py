"""Building blocks shared by the models (plain PyTorch, TorchScript-able).

All blocks take and return tensors in the model dtype (float64 or float32); nothing
here creates a tensor of a fixed dtype.
"""

import math
from typing import List

import torch
from torch import nn


def smooth_envelope(x: torch.Tensor, p: int = 6) -> torch.Tensor:
    """C2-smooth cutoff u(x) for x = r / r_c: 1 at x = 0, u, u', u'' = 0 at x = 1, 0 beyond.

    u(x) = 1 - (p+1)(p+2)/2 x^p + p(p+2) x^(p+1) - p(p+1)/2 x^(p+2).
    """
    a = (p + 1.0) * (p + 2.0) / 2.0
    b = p * (p + 2.0)
    c = p * (p + 1.0) / 2.0
    xp = torch.pow(x, p)
    u = 1.0 - a * xp + b * xp * x - c * xp * x * x
    return torch.where(x < 1.0, u, torch.zeros_like(x))


class BesselBasis(nn.Module):
    """Radial basis sqrt(2/r_c) sin(n pi r / r_c) / r, n = 1..num, times the envelope.

    Input r [E]; output [E, num]. The frequencies are trainable (a common choice).
    """

    def __init__(self, cutoff: float, num: int = 8):
        super().__init__()
        self.cutoff = float(cutoff)
        self.prefactor = math.sqrt(2.0 / cutoff)
        self.freq = nn.Parameter(torch.arange(1, num + 1, dtype=torch.float64) * math.pi / cutoff)

    def forward(self, r: torch.Tensor) -> torch.Tensor:
        env = smooth_envelope(r / self.cutoff)
        rr = r.unsqueeze(-1)
        return self.prefactor * torch.sin(self.freq * rr) / rr * env.unsqueeze(-1)


def legendre(x: torch.Tensor, lmax: int) -> torch.Tensor:
    """Legendre polynomials P_0..P_lmax of x [T]; output [T, lmax + 1]."""
    out: List[torch.Tensor] = [torch.ones_like(x)]
    if lmax >= 1:
        out.append(x)
    for l in range(1, lmax):
        out.append(((2.0 * l + 1.0) * x * out[l] - l * out[l - 1]) / (l + 1.0))
    return torch.stack(out, dim=-1)


class MLP(nn.Module):
    """Linear -> SiLU -> Linear (-> SiLU if act_last)."""

    def __init__(self, n_in: int, n_hidden: int, n_out: int, act_last: bool = False):
        super().__init__()
        self.lin1 = nn.Linear(n_in, n_hidden)
        self.lin2 = nn.Linear(n_hidden, n_out)
        self.act_last = act_last

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.lin2(torch.nn.functional.silu(self.lin1(x)))
        if self.act_last:
            y = torch.nn.functional.silu(y)
        return y


def scatter_sum(src: torch.Tensor, index: torch.Tensor, size: int) -> torch.Tensor:
    """Sum rows of src [M, C] into [size, C] at index [M] (differentiable twice)."""
    out = torch.zeros((size, src.size(1)), dtype=src.dtype, device=src.device)
    return out.index_add(0, index, src)


class PairEnergy(nn.Module):
    """Direct two-body energy of every atom: 0.5 sum_j phi_{t_i t_j}(r_ij), phi a linear
    combination of the (enveloped) radial basis per ordered type pair. Zero at start.

    A short, linear path from the radial basis to the energy: the stiff intramolecular
    O-H stretch is learned in a few hundred steps instead of through the message
    passing. Input rbf [E, R]; output [N].
    """

    def __init__(self, num_types: int, num_radial: int):
        super().__init__()
        self.num_types = num_types
        self.weight = nn.Parameter(torch.zeros(num_types * num_types, num_radial,
                                               dtype=torch.float64))

    def forward(self, rbf: torch.Tensor, edge_index: torch.Tensor,
                atom_types: torch.Tensor) -> torch.Tensor:
        ti = atom_types.index_select(0, edge_index[0])
        tj = atom_types.index_select(0, edge_index[1])
        phi = (rbf * self.weight.index_select(0, ti * self.num_types + tj)).sum(-1)
        out = torch.zeros(atom_types.size(0), dtype=rbf.dtype, device=rbf.device)
        return 0.5 * out.index_add(0, edge_index[0], phi)


class EnergyReadout(nn.Module):
    """Per-atom energy: type_energy[type] + energy_scale * (MLP(h) + pair term)."""

    def __init__(self, channels: int, num_types: int):
        super().__init__()
        self.mlp = MLP(channels, channels, 1)
        self.register_buffer("type_energy", torch.zeros(num_types, dtype=torch.float64))
        self.register_buffer("energy_scale", torch.ones(1, dtype=torch.float64))

    def forward(self, h: torch.Tensor, atom_types: torch.Tensor,
                pair: torch.Tensor) -> torch.Tensor:
        return self.type_energy[atom_types] + self.energy_scale * (self.mlp(h).squeeze(-1) + pair)
