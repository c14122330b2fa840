"""The MatRIS architecture, our implementation (contract v1, TorchScript).

This module computes the function defined by MatRIS (Zhou et al., arXiv:2603.02002;
the reference implementation is the PyPI package ``matris``, ``matris.model.model.
MatRIS``) so that its checkpoints run in ``pair_style aisci``. It was written here from
the paper and by reading that package for behaviour; it contains none of its code. The
weights come in through ``potentials.matris.convert`` (a neutral npz + JSON file made
from the checkpoint), never through the ``matris`` package.

Not to be confused with ``potentials/matris/model.py``, our own small MatRIS-*style*
model (separable three-body attention), which is a different network.

The function (names as in the paper: atoms with features h, undirected bonds with
features e, angles, i.e. pairs of bonds of one centre atom, with features t):

* Bonds are the undirected pairs closer than ``pairwise_cutoff``; the line graph holds
  the bonds shorter than ``three_body_cutoff``, its edges are the angles (ordered pairs
  of two different such bonds at one centre). A bond knows both of its directed edges.
* Embedding: h = SiLU(W z_onehot); radial basis rbf(r) (Bessel sin(f_n r / r_c) / r
  times a polynomial envelope of exponent p, learnable f_n; or Gaussians) at the
  pairwise cutoff and, for the line graph, at the three-body cutoff;
  e = SiLU(W3 LN(W2 W1 rbf(r))); t = SiLU(W_a B(theta)) with B the spherical
  (Bessel x Legendre) or Fourier basis of the bond angle theta.
* Each of ``num_layers`` interaction blocks: attention on the line graph (bonds as
  nodes, angles as edges), attention on the atom graph, refinement on the line graph,
  refinement on the atom graph. Attention: an edge message m = G([edge, node_t,
  node_s]); two channel-wise softmax weights of the edge feature, over the edges of
  the target node and over the edges of the source node; node update
  G([node, sum ta m, sum sa m]) + w_n node; edge feature = m (averaged over the two
  directions of a bond) + w_e edge. Refinement: message G([edge, (centre atom,) node_t,
  node_s]) times a learned envelope of the radial basis (for angles: the product over
  both bonds), node update FFN(sum) + w_n node, edge update FFN(message) + w_e edge.
  G is a gated MLP (SiLU core x sigmoid gate, each normalised) or an MLP + norm.
* Energy: E_i = MLP(RMSNorm(h_i)) + e_ref[Z_i] (the per-element reference energies
  of the checkpoint); forces and virial by autograd on the edge vectors (the caller).

Inputs (contract v1): edge_vec [E, 3] = x_j - x_i for directed edges (i, j) closer
than the pairwise cutoff, both directions present; triplets [T, 2] = pairs of directed
edges of one centre both shorter than the three-body cutoff, both orders. The reverse
of every directed edge must be in the graph (true for the periodic graph and for the
ghost-atom graph with every atom a centre); a missing one is an error.

Atom type index = atomic number - 1 (``type_names`` lists the 94 elements H..Pu).
"""

import math
from typing import List, Optional, Tuple

import numpy as np
import torch
from torch import nn

import potentials.common.ops  # noqa: F401  (defines aisci::ghost_exchange)

ELEMENTS = (
    "H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn Ga Ge "
    "As Se Br Kr Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr Nd Pm "
    "Sm Eu Gd Tb Dy Ho Er Tm Yb Lu Hf Ta W Re Os Ir Pt Au Hg Tl Pb Bi Po At Rn Fr Ra Ac Th "
    "Pa U Np Pu").split()

ACTIVATIONS = ("silu", "relu", "gelu", "softplus", "sigmoid", "tanh")
NORMS = ("layer", "rms")


def activation(x: torch.Tensor, name: str) -> torch.Tensor:
    if name == "silu":
        return torch.nn.functional.silu(x)
    if name == "relu":
        return torch.relu(x)
    if name == "gelu":
        return torch.nn.functional.gelu(x)
    if name == "softplus":
        return torch.nn.functional.softplus(x)
    if name == "sigmoid":
        return torch.sigmoid(x)
    return torch.tanh(x)


class Norm(nn.Module):
    """LayerNorm (eps 1e-5, affine) or RMSNorm (eps = machine epsilon of the dtype,
    weight only): x / sqrt(mean(x^2) + eps) * w."""

    def __init__(self, kind: str, dim: int):
        super().__init__()
        self.kind = kind
        self.weight = nn.Parameter(torch.ones(dim, dtype=torch.float64))
        self.bias = nn.Parameter(torch.zeros(dim if kind == "layer" else 0, dtype=torch.float64))
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.kind == "layer":
            return torch.nn.functional.layer_norm(x, [self.dim], self.weight, self.bias, 1e-5)
        eps = 2.220446049250313e-16 if x.dtype == torch.float64 else 1.1920928955078125e-07
        scale = torch.rsqrt(torch.pow(x, 2).mean(-1, keepdim=True) + eps)
        return (x * scale) * self.weight


class Linear(nn.Module):
    """y = x W^T (+ b); bias optional (as the checkpoint has it)."""

    def __init__(self, n_in: int, n_out: int, bias: bool):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(n_out, n_in, dtype=torch.float64))
        self.bias = nn.Parameter(torch.zeros(n_out if bias else 0, dtype=torch.float64))
        self.has_bias = bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.has_bias:
            return torch.nn.functional.linear(x, self.weight, self.bias)
        return torch.nn.functional.linear(x, self.weight)


class MLP(nn.Module):
    """Linear layers with the activation between them (none after the last)."""

    def __init__(self, dims: List[int], bias: bool, act: str):
        super().__init__()
        self.layers = nn.ModuleList([Linear(dims[k], dims[k + 1], bias)
                                     for k in range(len(dims) - 1)])
        self.act = act

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = len(self.layers)
        k = 0
        for layer in self.layers:
            x = layer(x)
            if k < n - 1:
                x = activation(x, self.act)
            k += 1
        return x


class Update(nn.Module):
    """The nonlinear update G: gated (act(N(core(x))) * sigmoid(N(gate(x)))) or plain
    (N(MLP(x)))."""

    def __init__(self, gated: bool, dims: List[int], bias: bool, act: str, norm: str):
        super().__init__()
        self.gated = gated
        # The gated form always has biases (as MatRIS builds it); the plain one as asked.
        self.core = MLP(dims, True if gated else bias, act)
        self.gate = MLP(dims if gated else [], True, act)
        self.core_norm = Norm(norm, dims[-1])
        self.gate_norm = Norm(norm, dims[-1] if gated else 0)
        self.act = act

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.gated:
            core = activation(self.core_norm(self.core(x)), self.act)
            gate = torch.sigmoid(self.gate_norm(self.gate(x)))
            return core * gate
        return self.core_norm(self.core(x))

    def reverse(self, fwd: torch.Tensor, e: torch.Tensor, h: torch.Tensor, tgt: torch.Tensor,
                src: torch.Tensor, rev: torch.Tensor, lone: torch.Tensor) -> torch.Tensor:
        """G([e, h_j, h_i]) of each DE (i, j): the message of its reverse DE. Taken from
        fwd (= G([e, h_i, h_j]) of every DE) where the reverse DE is in the graph (a
        bond's state is the same on both of its DEs); computed for the DEs whose reverse
        is not (edges to ghost atoms when only owned atoms are centres)."""
        back = fwd.index_select(0, rev.clamp(min=0))
        if lone.size(0) > 0:
            own = self.forward(torch.cat([e.index_select(0, lone),
                                          h.index_select(0, src.index_select(0, lone)),
                                          h.index_select(0, tgt.index_select(0, lone))], 1))
            back = back.index_copy(0, lone, own)
        return back


def segment_sum(x: torch.Tensor, segment: torch.Tensor, n: int) -> torch.Tensor:
    """Row sums by segment (scatter_add: on CPUs much faster than index_add for the few
    channels of small models)."""
    idx = segment.unsqueeze(1).expand(-1, x.size(1))
    return torch.zeros((n, x.size(1)), dtype=x.dtype, device=x.device).scatter_add(0, idx, x)


def segment_softmax(x: torch.Tensor, segment: torch.Tensor, n: int) -> torch.Tensor:
    """Channel-wise softmax of the rows of x over the rows of each segment."""
    idx = segment.unsqueeze(1).expand(-1, x.size(1))
    top = torch.full((n, x.size(1)), -math.inf, dtype=x.dtype, device=x.device)
    top = top.scatter_reduce(0, idx, x.detach(), reduce="amax", include_self=False)
    w = torch.exp(x - top.index_select(0, segment))
    return w / segment_sum(w, segment, n).index_select(0, segment)


# A softmax group without members has the running maximum -1e30 (finite: exchanged and
# multiplied by zero safely).


def softmax_partial(x: torch.Tensor, msg: torch.Tensor, segment: torch.Tensor, n: int
                    ) -> torch.Tensor:
    """One end's part of a channel-wise softmax-weighted sum over a group split between
    the two ends of a bond: [max (detached), sum exp(x - max), sum exp(x - max) msg] per
    segment, [n, 3C]; -1e30 / 0 / 0 for a segment without rows."""
    c = x.size(1)
    idx = segment.unsqueeze(1).expand(-1, c)
    top = torch.full((n, c), -1.0e30, dtype=x.dtype, device=x.device)
    top = top.scatter_reduce(0, idx, x.detach(), reduce="amax", include_self=True)
    w = torch.exp(x - top.index_select(0, segment))
    return torch.cat([top, segment_sum(w, segment, n), segment_sum(w * msg, segment, n)], dim=1)


def softmax_combine(mine: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """sum_k softmax_k msg_k over both ends (symmetric in the two ends)."""
    c = mine.size(1) // 3
    m1, z1, n1 = mine[:, :c], mine[:, c:2 * c], mine[:, 2 * c:]
    m2, z2, n2 = other[:, :c], other[:, c:2 * c], other[:, 2 * c:]
    top = torch.maximum(m1, m2)
    s1 = torch.exp(m1 - top)
    s2 = torch.exp(m2 - top)
    z = z1 * s1 + z2 * s2
    num = n1 * s1 + n2 * s2
    return num / torch.where(z > 0, z, torch.ones_like(z))


class Attention(nn.Module):
    """The attention layer of the atom graph (atoms; directed edges) or of the line
    graph (bonds; angles): the updates G of nodes and edges, the two softmax weights
    and the residual weights."""

    def __init__(self, node_dim: int, edge_dim: int, hidden: int, gated: bool, bias: bool,
                 act: str, norm: str):
        super().__init__()
        self.source_weight = Linear(edge_dim, edge_dim, False)
        self.target_weight = Linear(edge_dim, edge_dim, False)
        self.node_update = Update(gated, [edge_dim * 2 + node_dim, hidden, node_dim], bias, act,
                                  norm)
        self.edge_update = Update(gated, [node_dim * 2 + edge_dim, hidden, edge_dim], bias, act,
                                  norm)
        self.node_res = nn.Parameter(torch.ones(1, node_dim, dtype=torch.float64))
        self.edge_res = nn.Parameter(torch.ones(1, edge_dim, dtype=torch.float64))


class Refinement(nn.Module):
    """The refinement layer of the atom graph (line=False) or the line graph (line=True)."""

    def __init__(self, node_dim: int, edge_dim: int, hidden: int, num_basis: int, atom_dim: int,
                 line: bool, smoothed_delta: bool, gated: bool, bias: bool, act: str, norm: str):
        super().__init__()
        n_in = 2 * node_dim + edge_dim + (atom_dim if line else 0)
        self.smoothed_delta = smoothed_delta and not line
        self.edge_update = Update(gated, [n_in, hidden, edge_dim], bias, act, norm)
        self.node_ffn = MLP([edge_dim, node_dim, node_dim], bias, "silu")
        self.edge_ffn = MLP([edge_dim, edge_dim, edge_dim], bias, "silu")
        self.envelope = Linear(num_basis, edge_dim, False)
        self.node_res = nn.Parameter(torch.ones(1, node_dim, dtype=torch.float64))
        self.edge_res = nn.Parameter(torch.ones(1, edge_dim, dtype=torch.float64))


def exchange(x: torch.Tensor) -> torch.Tensor:
    """Ghost rows <- their owners' rows (identity without LAMMPS exchange callbacks)."""
    return torch.ops.aisci.ghost_exchange(x)


class Block(nn.Module):
    def __init__(self, cfg: dict):
        super().__init__()
        nd, ed, td = cfg["node_feat_dim"], cfg["edge_feat_dim"], cfg["three_body_feat_dim"]
        g, b, a, m = cfg["gated"], cfg["use_bias"], cfg["activation_type"], cfg["norm_type"]
        self.line_attention = Attention(ed, td, ed, g, b, a, m)
        self.atom_attention = Attention(nd, ed, nd, g, b, a, m)
        self.line_refinement = Refinement(ed, td, ed, cfg["num_angular"], nd, True, False, g, b,
                                          a, m)
        self.atom_refinement = Refinement(nd, ed, nd, cfg["num_radial"], nd, False,
                                          cfg["use_smoothed_for_delta_edge"], g, b, a, m)

    def forward(self, h: torch.Tensor, e: torch.Tensor, t: torch.Tensor, rbf: torch.Tensor,
                rbf3: torch.Tensor, tgt: torch.Tensor, src: torch.Tensor, a1: torch.Tensor,
                a2: torch.Tensor, centre: torch.Tensor, slot_of: torch.Tensor,
                slot_index: torch.Tensor, partner: torch.Tensor, ghost_index: torch.Tensor,
                n_slots: int, first: bool, rev: torch.Tensor, lone: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        n = h.size(0)
        n_de = e.size(0)
        td = self.line_attention.source_weight.weight.size(0)
        if not first:
            h = exchange(h)
        # -- line graph attention: bonds (held by their DEs) and angles
        la = self.line_attention
        if t.size(0) > 0:
            msg = la.edge_update(torch.cat([t, e.index_select(0, a1), e.index_select(0, a2)], 1))
            part = torch.cat([softmax_partial(la.target_weight(t), msg, a1, n_de),
                              softmax_partial(la.source_weight(t), msg, a2, n_de)], dim=1)
            part = part.index_select(0, slot_of)
            other = self.partner_rows(part, slot_index, partner, ghost_index, n, n_slots)
            w = td * 3
            from_t = softmax_combine(part[:, :w], other[:, :w])
            from_s = softmax_combine(part[:, w:], other[:, w:])
            zero = torch.zeros((n_de, td), dtype=e.dtype, device=e.device)
            from_t = zero.index_copy(0, slot_of, from_t)
            from_s = zero.index_copy(0, slot_of, from_s)
            t = msg + la.edge_res * t
        else:
            from_t = torch.zeros((n_de, td), dtype=e.dtype, device=e.device)
            from_s = from_t
        e = la.node_update(torch.cat([e, from_t, from_s], 1)) + la.node_res * e
        # -- atom graph attention: atoms and their directed edges
        aa = self.atom_attention
        fwd = aa.edge_update(torch.cat([e, h.index_select(0, tgt), h.index_select(0, src)], 1))
        back = aa.edge_update.reverse(fwd, e, h, tgt, src, rev, lone)
        ta = segment_softmax(aa.target_weight(e), tgt, n)
        sa = segment_softmax(aa.source_weight(e), tgt, n)
        from_t = segment_sum(ta * fwd, tgt, n)
        from_s = segment_sum(sa * back, tgt, n)
        h = aa.node_update(torch.cat([h, from_t, from_s], 1)) + aa.node_res * h
        e = (fwd + back) / 2.0 + aa.edge_res * e
        h = exchange(h)
        # -- line graph refinement
        lr = self.line_refinement
        if t.size(0) > 0:
            env = lr.envelope(rbf3)
            weight = env.index_select(0, a2) * env.index_select(0, a1)
            msg = lr.edge_update(torch.cat([t, h.index_select(0, centre), e.index_select(0, a1),
                                            e.index_select(0, a2)], 1))
            part = segment_sum(msg * weight, a1, n_de).index_select(0, slot_of)
            other = self.partner_rows(part, slot_index, partner, ghost_index, n, n_slots)
            agg = torch.zeros((n_de, td), dtype=e.dtype, device=e.device).index_copy(
                0, slot_of, part + other)
            t = lr.edge_ffn(msg) + lr.edge_res * t
        else:
            agg = torch.zeros((n_de, td), dtype=e.dtype, device=e.device)
        e = lr.node_ffn(agg) + lr.node_res * e
        # -- atom graph refinement
        ar = self.atom_refinement
        weight = ar.envelope(rbf)
        fwd = ar.edge_update(torch.cat([e, h.index_select(0, tgt), h.index_select(0, src)], 1))
        back = ar.edge_update.reverse(fwd, e, h, tgt, src, rev, lone)
        agg = segment_sum(fwd * weight, tgt, n)
        if ar.smoothed_delta:
            delta = (ar.edge_ffn(fwd * weight) + ar.edge_ffn(back * weight)) / 2.0
        else:
            delta = (ar.edge_ffn(fwd) + ar.edge_ffn(back)) / 2.0
        h = ar.node_ffn(agg) + ar.node_res * h
        e = delta + ar.edge_res * e
        return h, e, t

    def partner_rows(self, part: torch.Tensor, slot_index: torch.Tensor, partner: torch.Tensor,
                     ghost_index: torch.Tensor, n: int, n_slots: int) -> torch.Tensor:
        """For each slot DE (the DEs shorter than the three-body cutoff, rows of part),
        the row the other end of its bond computed: the reverse DE's row when that DE is
        in this graph, otherwise the slot row of the ghost neighbour, filled by its owner
        through the ghost exchange (partner indexes [part; gathered ghost rows])."""
        width = part.size(1)
        table = torch.zeros((n * n_slots, width), dtype=part.dtype, device=part.device)
        table = table.index_copy(0, slot_index, part)
        table = exchange(table.view(n, n_slots * width)).view(n * n_slots, width)
        rows = torch.cat([part, table.index_select(0, ghost_index)], dim=0)
        return rows.index_select(0, partner)


def reverse_edges(edge_index: torch.Tensor, edge_vec: torch.Tensor, n: int) -> torch.Tensor:
    """Index of the reverse (j, i, -v) of every directed edge (i, j, v); -1 where it is
    not in the graph (an edge to a ghost atom when only owned atoms are centres)."""
    e = edge_index.size(1)
    key = edge_index[0] * n + edge_index[1]
    rkey = edge_index[1] * n + edge_index[0]
    skey, order = torch.sort(key, stable=True)
    lo = torch.searchsorted(skey, rkey)
    hi = torch.searchsorted(skey, rkey, right=True)
    vec = edge_vec.detach()
    rev = torch.full((e,), -1, dtype=torch.int64, device=edge_vec.device)
    best = torch.full((e,), math.inf, dtype=vec.dtype, device=edge_vec.device)
    span = int((hi - lo).max().item()) if e > 0 else 0
    tol = 1e-6 * (vec.abs().sum(1) + 1.0)
    for k in range(span):
        pos = lo + k
        ok = pos < hi
        cand = order.index_select(0, pos.clamp(max=e - 1))
        dev = (vec.index_select(0, cand) + vec).abs().sum(1)
        better = ok & (dev < best) & (dev < tol)
        rev = torch.where(better, cand, rev)
        best = torch.where(better, dev, best)
    return rev


class Readout(nn.Module):
    """Per-type energies (a checkpoint's reference energies) and an output scale (1 for
    MatRIS checkpoints; set by potentials/common/train.py when we train one)."""

    def __init__(self, n_types: int):
        super().__init__()
        self.register_buffer("type_energy", torch.zeros(n_types, dtype=torch.float64))
        self.register_buffer("energy_scale", torch.ones((), dtype=torch.float64))


class MatrisArch(nn.Module):
    """MatRIS energy model; ``cfg`` = the checkpoint's config, completed by
    ``potentials.matris.convert.our_config`` (see there for the keys)."""

    def __init__(self, cfg: dict, sh_coef: Optional[np.ndarray] = None):
        super().__init__()
        nd, ed, td = cfg["node_feat_dim"], cfg["edge_feat_dim"], cfg["three_body_feat_dim"]
        self.cutoff = float(cfg["pairwise_cutoff"])
        self.cutoff_3body = float(cfg["three_body_cutoff"])
        self.num_radial = int(cfg["num_radial"])
        self.bessel = cfg["distance_expansion"] == "bessel"
        self.p = float(cfg["envelope_exponent"])
        self.sh = cfg["three_body_expansion"] == "sh"
        self.max_l = int(cfg["max_l"])
        self.max_n = int(cfg["max_n"])
        self.max_f = (int(cfg["num_angular"]) - 1) // 2
        self.gauss_coeff = float(cfg.get("gauss_coeff", 0.0))
        self.gauss_coeff3 = float(cfg.get("gauss_coeff3", 0.0))
        self.max_slots = int(cfg.get("max_bonds_3body", 48))
        n_types = int(cfg.get("num_types", 94))
        self.species = nn.Parameter(torch.zeros(n_types, nd, dtype=torch.float64))
        self.species_linear = Linear(nd, nd, False)
        nr = self.num_radial
        self.frequencies = nn.Parameter(torch.zeros(nr if self.bessel else 0, dtype=torch.float64))
        self.frequencies3 = nn.Parameter(torch.zeros(nr if self.bessel else 0,
                                                     dtype=torch.float64))
        self.register_buffer("offsets", torch.zeros(0 if self.bessel else nr, dtype=torch.float64))
        self.register_buffer("offsets3", torch.zeros(0 if self.bessel else nr,
                                                     dtype=torch.float64))
        self.edge_linear1 = Linear(nr, ed, False)
        self.edge_linear2 = Linear(ed, ed, False)
        self.edge_norm = Norm("layer", ed)
        self.edge_linear3 = Linear(ed, ed, False)
        n_ang = self.max_n * self.max_l if self.sh else 2 * self.max_f + 1
        self.angle_frequencies = nn.Parameter(torch.zeros(0 if self.sh else self.max_f,
                                                          dtype=torch.float64))
        self.register_buffer("sh_factor", torch.zeros((), dtype=torch.float64))
        self.register_buffer("sh_coef", torch.tensor(
            sh_coef if sh_coef is not None else spherical_bessel_table(), dtype=torch.float64))
        self.angle_linear1 = Linear(n_ang, td, False)
        self.angle_linear2 = Linear(td, td, False)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(int(cfg["num_layers"]))])
        self.readout_norm = Norm(cfg["norm_type"], nd)
        hidden = cfg["mlp_hidden_dims"]
        hidden = [hidden] if isinstance(hidden, int) else list(hidden)
        self.energy_mlp = MLP([nd] + hidden + [1], True, cfg["activation_type"])
        self.readout = Readout(n_types)

    def radial(self, r: torch.Tensor, freq: torch.Tensor, offsets: torch.Tensor, cutoff: float,
               coeff: float) -> torch.Tensor:
        if self.bessel:
            d = r.unsqueeze(1)
            out = (2.0 * (1.0 / cutoff)) ** 0.5 * torch.sin(freq * (d * (1.0 / cutoff))) / d
            p = self.p
            x = d / cutoff
            a = -(p + 1.0) * (p + 2.0) / 2.0
            b = p * (p + 2.0)
            c = -p * (p + 1.0) / 2.0
            env = 1.0 + a * torch.pow(x, p) + b * torch.pow(x, p + 1.0) + c * torch.pow(x, p + 2.0)
            env = torch.where(x < 1.0, env, torch.zeros_like(x))
            return env * out
        d = r.unsqueeze(1) - offsets.unsqueeze(0)
        return torch.exp(coeff * torch.pow(d, 2))

    def angle_basis(self, cos_theta: torch.Tensor, unit_len: torch.Tensor) -> torch.Tensor:
        theta = torch.acos(cos_theta * (1.0 - 1e-6))
        if self.sh:
            d = unit_len / self.cutoff
            c = self.sh_coef
            rad: List[torch.Tensor] = []
            for j in range(self.max_l):
                rad.append(torch.sin(c[0, 0, j] * d) / d)
            if self.max_n > 1:
                for j in range(self.max_l):
                    rad.append((c[1, 0, j] * d * torch.cos(c[1, 1, j] * d)
                                + c[1, 2, j] * torch.sin(c[1, 3, j] * d)) / torch.pow(d, 2))
            if self.max_n > 2:
                for j in range(self.max_l):
                    rad.append((c[2, 0, j] * torch.pow(d, 2) * torch.sin(c[2, 1, j] * d)
                                - c[2, 2, j] * d * torch.cos(c[2, 3, j] * d)
                                + c[2, 4, j] * torch.sin(c[2, 5, j] * d)) / torch.pow(d, 3))
            if self.max_n > 3:
                for j in range(self.max_l):
                    rad.append((c[3, 0, j] * torch.pow(d, 3) * torch.cos(c[3, 1, j] * d)
                                - c[3, 2, j] * torch.pow(d, 2) * torch.sin(c[3, 3, j] * d)
                                - c[3, 4, j] * d * torch.cos(c[3, 5, j] * d)
                                + c[3, 6, j] * torch.sin(c[3, 7, j] * d)) / torch.pow(d, 4))
            radial = torch.stack(rad, dim=-1) * self.sh_factor
            x = torch.cos(theta)
            leg: List[torch.Tensor] = [torch.ones_like(x) * (0.5 * math.sqrt(1.0 / math.pi))]
            if self.max_l > 1:
                leg.append(math.sqrt(3.0 / (4.0 * math.pi)) * x)
            if self.max_l > 2:
                leg.append(math.sqrt(5.0 / (16.0 * math.pi)) * (3.0 * torch.pow(x, 2) - 1.0))
            if self.max_l > 3:
                leg.append(math.sqrt(7.0 / (16.0 * math.pi)) * x * (5.0 * torch.pow(x, 2) - 3.0))
            angular = torch.stack(leg, dim=-1).repeat_interleave(self.max_n, dim=1)
            return radial * angular
        # Fourier: [1/sqrt(2) (as float32), sin(k theta), cos(k theta)] / sqrt(pi)
        first = (1.0 / torch.sqrt(torch.tensor([2.0], dtype=torch.float32))).to(theta.dtype)
        arg = torch.outer(theta, self.angle_frequencies)
        out = torch.cat([first.expand(theta.size(0)).unsqueeze(1), torch.sin(arg),
                         torch.cos(arg)], dim=1)
        return out / math.sqrt(math.pi)

    def forward(self, edge_vec: torch.Tensor, edge_index: torch.Tensor, atom_types: torch.Tensor,
                triplets: torch.Tensor) -> torch.Tensor:
        n = atom_types.size(0)
        n_de = edge_index.size(1)
        dev = edge_vec.device
        tgt = edge_index[0]
        src = edge_index[1]
        rev = reverse_edges(edge_index, edge_vec, n)
        lone = torch.nonzero(rev < 0).reshape(-1)     # DEs whose reverse is not here
        length = torch.norm(edge_vec, dim=1)
        rbf = self.radial(length, self.frequencies, self.offsets, self.cutoff, self.gauss_coeff)
        rbf3 = self.radial(length, self.frequencies3, self.offsets3, self.cutoff_3body,
                           self.gauss_coeff3)

        # Slots: the DEs shorter than the three-body cutoff (the bonds of the line graph),
        # numbered per centre atom; a bond's two ends exchange their partial sums by slot.
        k_max = self.max_slots
        slot_of = torch.nonzero(length.detach() < self.cutoff_3body).reshape(-1)
        n_slot = slot_of.size(0)
        slot_atom = tgt.index_select(0, slot_of)
        counts = torch.bincount(slot_atom, minlength=n)
        if n_slot > 0 and int(counts.max().item()) > k_max:
            raise RuntimeError("matris: an atom has " + str(int(counts.max().item())) +
                               " neighbours closer than the three-body cutoff, more than "
                               "the model's max_bonds_3body = " + str(k_max) +
                               " (convert the checkpoint again with a larger "
                               "--max-bonds-3body)")
        order = torch.sort(slot_atom, stable=True)[1]
        starts = torch.cumsum(counts, 0) - counts
        rank = torch.zeros(n_slot, dtype=torch.int64, device=dev)
        rank[order] = torch.arange(n_slot, dtype=torch.int64, device=dev) - \
            starts.index_select(0, slot_atom.index_select(0, order))
        slot_index = slot_atom * k_max + rank
        vec = edge_vec.detach()
        keys = torch.zeros((n * k_max, 4), dtype=vec.dtype, device=dev)
        keys = keys.index_copy(0, slot_index, torch.cat(
            [vec.index_select(0, slot_of), torch.ones((n_slot, 1), dtype=vec.dtype,
                                                      device=dev)], 1))
        keys = exchange(keys.view(n, k_max * 4)).detach().view(n, k_max, 4)
        where_slot = torch.full((n_de,), -1, dtype=torch.int64, device=dev)
        where_slot[slot_of] = torch.arange(n_slot, dtype=torch.int64, device=dev)
        rev_slot = rev.index_select(0, slot_of)
        partner = where_slot.index_select(0, rev_slot.clamp(min=0))
        ghost = torch.nonzero(rev_slot < 0).reshape(-1)
        ghost_de = slot_of.index_select(0, ghost)
        ghost_atom = src.index_select(0, ghost_de)
        cand = keys.index_select(0, ghost_atom)
        miss = (cand[:, :, :3] + vec.index_select(0, ghost_de).unsqueeze(1)).abs().sum(2) + \
            (1.0 - cand[:, :, 3]) * 1.0e30
        ghost_index = ghost_atom * k_max
        if ghost.size(0) > 0:
            best, pick = miss.min(1)
            if bool((best > 1e-6 * (vec.index_select(0, ghost_de).abs().sum(1) + 1.0)).any()):
                raise RuntimeError("matris: the other end of a bond (a ghost atom) does not "
                                   "hold it: the ghost shell is too thin or the graph lacks "
                                   "reverse edges")
            ghost_index = ghost_index + pick
        partner = partner.index_copy(0, ghost, n_slot + torch.arange(
            ghost.size(0), dtype=torch.int64, device=dev))

        h = torch.nn.functional.silu(self.species_linear(self.species.index_select(0, atom_types)))
        e = self.edge_norm(self.edge_linear2(self.edge_linear1(rbf)))
        e = torch.nn.functional.silu(self.edge_linear3(e))

        a1 = triplets[:, 0]
        a2 = triplets[:, 1]
        centre = tgt.index_select(0, a1)
        if triplets.size(0) > 0:
            unit = edge_vec / length.unsqueeze(1)
            u1 = unit.index_select(0, a1)
            u2 = unit.index_select(0, a2)
            basis = self.angle_basis((u1 * u2).sum(1), torch.norm(u2, dim=1))
            t = torch.nn.functional.silu(self.angle_linear2(self.angle_linear1(basis)))
        else:
            t = torch.zeros((0, self.angle_linear2.weight.size(0)), dtype=edge_vec.dtype,
                            device=dev)

        first = True
        for block in self.blocks:
            h, e, t = block(h, e, t, rbf, rbf3, tgt, src, a1, a2, centre, slot_of, slot_index,
                            partner, ghost_index, k_max, first, rev, lone)
            first = False

        energy = self.energy_mlp(self.readout_norm(h)).squeeze(1) * self.readout.energy_scale
        return energy + self.readout.type_energy.index_select(0, atom_types)


def build(config: dict) -> MatrisArch:
    """Our MatRIS architecture from a training config of potentials/common/train.py
    (--arch matris_arch): the given sizes, MatRIS's defaults otherwise, the spherical
    three-body basis with max_l 3, max_n 2, model types = the data's type names."""
    cfg = {
        "num_types": config["num_types"], "num_layers": config["num_layers"],
        "node_feat_dim": config["channels"], "edge_feat_dim": config["channels"],
        "three_body_feat_dim": config.get("angle_channels", config["channels"]),
        "mlp_hidden_dims": [config["channels"], config["channels"]],
        "num_radial": config["num_radial"], "num_angular": config["num_radial"],
        "max_l": 3, "max_n": 2, "envelope_exponent": 8, "distance_expansion": "bessel",
        "three_body_expansion": "sh", "gated": True, "use_bias": False,
        "activation_type": "silu", "norm_type": "rms", "pairwise_cutoff": config["cutoff"],
        "three_body_cutoff": config["cutoff_3body"], "use_smoothed_for_delta_edge": False,
        "max_bonds_3body": config.get("max_bonds_3body", 48),
    }
    model = MatrisArch(cfg)
    # MatRIS's initialisation in spirit: default Linear init, unit norms and residual
    # weights, Bessel frequencies n pi, the spherical factor sqrt(2 / r_c^3)
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, Linear):
                bound = 1.0 / math.sqrt(max(1, mod.weight.size(1)))
                mod.weight.uniform_(-bound, bound)
                if mod.has_bias:
                    mod.bias.uniform_(-bound, bound)
        model.species.normal_()
        nr = cfg["num_radial"]
        model.frequencies.copy_(math.pi * torch.arange(1, nr + 1, dtype=torch.float64))
        model.frequencies3.copy_(math.pi * torch.arange(1, nr + 1, dtype=torch.float64))
        model.sh_factor.fill_(math.sqrt(2.0 / cfg["pairwise_cutoff"] ** 3))
    return model


def spherical_bessel_table() -> np.ndarray:
    """Our own [4, 9, 4] table of the spherical-basis constants (zeros z_ln of the
    spherical Bessel functions j_l and the coefficients of j_l(z d) expanded in sin/cos,
    normalised by 1/|j_{l+1}(z_ln)|), laid out as the SH expansion above reads it. A
    checkpoint's own table (from its implementation) replaces it at conversion."""
    from scipy.optimize import brentq
    from scipy.special import spherical_jn

    table = np.zeros((4, 9, 4))
    for l in range(4):
        zs = []
        x = 0.5
        while len(zs) < 4:
            if spherical_jn(l, x) * spherical_jn(l, x + 0.05) < 0:
                zs.append(brentq(lambda s: spherical_jn(l, s), x, x + 0.05, xtol=1e-15))
            x += 0.05
        z = np.array(zs)
        nrm = 1.0 / np.abs(spherical_jn(l + 1, z))
        if l == 0:
            table[0, 0] = z
        elif l == 1:   # j1(zd) = (sin - zd cos) / (zd)^2
            table[1, :4] = [-nrm / z, z, nrm / z ** 2, z]
        elif l == 2:   # j2(zd) = ((3 - (zd)^2) sin - 3 zd cos) / (zd)^3
            table[2, :6] = [-nrm / z, z, 3 * nrm / z ** 2, z, 3 * nrm / z ** 3, z]
        else:          # j3(zd) = ((15 - 6 (zd)^2) sin - (15 zd - (zd)^3) cos) / (zd)^4
            table[3, :8] = [nrm / z, z, 6 * nrm / z ** 2, z, 15 * nrm / z ** 3, z,
                            15 * nrm / z ** 4, z]
    return table.astype(np.float32).astype(np.float64)
