"""Structural pruning of SevenNet-0 by saliency: channels per irrep and whole orders.

Node features between layers are x_0 (128x0e), x_1..x_4 (128x0e+64x1e+32x2e), x_5
(128x0e); the readout hidden layer h has dim(x_5)/2 scalars. A *channel* is one
multiplicity index u of one irrep (all its 2l+1 components), so removing it keeps
the model exactly equivariant; removing all channels of an order at a boundary
removes that order there (sevenn's builder then drops the tensor-product paths and
gates that used it).

1. Saliency: a mask m_c = 1 multiplies each channel of x_k (and of the layer-k input
   projection ``self_interaction_1``, whose irreps sevenn ties to x_k's) and of h; the
   first-order Taylor estimate of the loss change on removing c is |dL/dm_c| (L =
   energy + force loss on water frames, the gradient goes through the force term),
   accumulated as the mean of |dL/dm_c| over frames.
2. Selection: channels are ranked by saliency per unit cost (2l+1 components, so an
   l = 2 channel must be 5x as salient as a scalar to stay) and kept greedily until a
   cost fraction f is reached (at least 4 scalars per boundary); f is bisected until
   the measured CPU time of one energy+force call (a 192-atom water frame) is the
   target fraction of the unpruned model's.
3. Surgery: sevenn builds the smaller model (``irreps_manual``) and every weight is
   sliced: e3nn ``Linear`` blocks per instruction (rows = kept input channels, columns
   = kept output channels, times the ratio of the path normalisations, since e3nn
   divides by sqrt(fan-in)), the tensor-product weights of the radial networks'
   last layer per path (uvu: output channel = input channel), gates with their gated
   channels. ``check_equal_masked`` verifies the pruned model equals the masked
   unpruned one.
"""

import math

import numpy as np
import torch
from e3nn import o3

from potentials.sevennet import model as M

NLAYER = 5


# ---------------------------------------------------------------- channel spaces
def _irreps_keys(irreps):
    return [str(ir) for _, ir in irreps]


def boundary_irreps(config):
    return [o3.Irreps(s) for s in config["irreps_manual"]]


def full_keep(irreps):
    """keep dict (entry key -> channel indices) keeping everything."""
    return {str(ir): list(range(mul)) for mul, ir in irreps}


def keep_to_irreps(full_irreps, keep):
    return o3.Irreps([(len(keep[str(ir)]), ir) for _, ir in full_irreps
                      if len(keep.get(str(ir), [])) > 0])


def channel_list(irreps):
    """[(entry key, l, u)] in the layout order of ``irreps``."""
    out = []
    for mul, ir in irreps:
        out += [(str(ir), ir.l, u) for u in range(mul)]
    return out


def expand_mask(irreps, m):
    """Channel mask [C] -> component mask [dim] for the e3nn layout (u major)."""
    parts, c = [], 0
    for mul, ir in irreps:
        parts.append(m[c:c + mul].repeat_interleave(ir.dim))
        c += mul
    return torch.cat(parts)


# ---------------------------------------------------------------- masks (saliency)
class Masks:
    """Channel masks on x_0..x_5, on each self_interaction_1 output, and on h."""

    def __init__(self, seq, config, dtype=torch.float64):
        self.irreps = boundary_irreps(config)
        self.hidden = o3.Irreps("%dx0e" % (self.irreps[-1].dim // 2))
        self.m = [torch.ones(ir.num_irreps, dtype=dtype, requires_grad=True) for ir in self.irreps]
        self.mh = torch.ones(self.hidden.num_irreps, dtype=dtype, requires_grad=True)
        self.handles = []
        mods = seq._modules
        producers = ["onehot_to_feature_x"] + ["%d_equivariant_gate" % t for t in range(NLAYER)]
        for k, name in enumerate(producers):
            self.handles.append(mods[name].register_forward_hook(self._hook(k)))
        for t in range(NLAYER):
            self.handles.append(mods["%d_self_interaction_1" % t].register_forward_hook(self._hook(t)))
        self.handles.append(mods["reduce_input_to_hidden"].register_forward_hook(self._hook(-1)))

    def _hook(self, k):
        def f(module, inp, out):
            if k == -1:
                mask = expand_mask(self.hidden, self.mh)
            else:
                mask = expand_mask(self.irreps[k], self.m[k])
            out["x"] = out["x"] * mask.to(out["x"].dtype)
            return out
        return f

    def params(self):
        return self.m + [self.mh]

    def remove(self):
        for h in self.handles:
            h.remove()


def loss_fn(model, g, frame, w_e=1.0, w_f=1.0, create_graph=True):
    """Per-atom energy MSE + force MSE (eV, eV/A) of one frame."""
    ev, ei, at = g
    e, f = M.energy_forces(model, ev, ei, at, create_graph=create_graph)
    n = at.shape[0]
    ref_f = torch.as_tensor(frame["forces"], dtype=f.dtype)
    return w_e * ((e - frame["energy"]) / n) ** 2 + w_f * ((f - ref_f) ** 2).mean()


def saliency(config, state, frames, graphs, dtype=torch.float64):
    """Mean |dL/dm| per channel for x_0..x_5 and h."""
    seq = M.build(config, state, dtype)
    model = M.ExportModel(seq, M.type_to_onehot(config)).to(dtype)
    masks = Masks(seq, config, dtype)
    acc = [torch.zeros_like(p) for p in masks.params()]
    for fr, g in zip(frames, graphs):
        loss = loss_fn(model, g, fr)
        grads = torch.autograd.grad(loss, masks.params())
        for a, gr in zip(acc, grads):
            a += gr.abs() / len(frames)
    masks.remove()
    return [a.detach().numpy() for a in acc]


# ---------------------------------------------------------------- selection
def select(config, sal, fraction, min_scalars=4):
    """keep lists for x_0..x_5 and h: channels ranked by saliency / (2l+1), kept
    greedily until the kept cost is ``fraction`` of the total cost (x_0 and x_5
    count like the others; h follows x_5: dim(x_5)/2 most salient units)."""
    irreps = boundary_irreps(config)
    items = []  # (score, k, key, u, cost)
    total = 0.0
    for k, ir in enumerate(irreps):
        for c, (key, l, u) in enumerate(channel_list(ir)):
            cost = 2 * l + 1
            total += cost
            items.append((sal[k][c] / cost, k, key, u, cost))
    keep = [{str(i): [] for _, i in ir} for ir in irreps]
    used = 0.0
    # the min_scalars most salient scalars of each boundary first
    chosen = set()
    for k, ir in enumerate(irreps):
        sc = sorted([it for it in items if it[1] == k and it[2] == "0e"], key=lambda t: -t[0])
        for it in sc[:min_scalars]:
            chosen.add((it[1], it[2], it[3]))
            used += it[4]
    for it in sorted(items, key=lambda t: -t[0]):
        if (it[1], it[2], it[3]) in chosen:
            continue
        if used + it[4] > fraction * total:
            continue
        chosen.add((it[1], it[2], it[3]))
        used += it[4]
    for k, key, u in chosen:
        keep[k][key].append(u)
    for kk in keep:
        for key in kk:
            kk[key].sort()
    n5 = sum(len(v) for v in keep[-1].values())
    hs = np.argsort(-sal[-1], kind="stable")[: n5 // 2]
    return keep, sorted(int(i) for i in hs)


def pruned_config(config, keep):
    irreps = boundary_irreps(config)
    cfg = dict(config)
    cfg["irreps_manual"] = [str(keep_to_irreps(ir, kk)) for ir, kk in zip(irreps, keep)]
    return cfg


# ---------------------------------------------------------------- surgery
def _linear_copy(lf, lp, keys_in_f, keys_in_p, keys_out_f, keys_out_p, keep_in, keep_out):
    """Copy e3nn Linear lf (full) into lp (pruned), instruction by instruction."""
    def blocks(lin):
        out, off = {}, 0
        for ins in lin.instructions:
            n = ins.path_shape[0] * ins.path_shape[1]
            out[ins.i_in, ins.i_out] = (off, ins)
            off += n
        return out
    bf = {(keys_in_f[i], keys_out_f[o]): v for (i, o), v in blocks(lf).items()}
    w = torch.zeros_like(lp.weight)
    for (i, o), (off, ins) in blocks(lp).items():
        key = (keys_in_p[i], keys_out_p[o])
        offf, insf = bf[key]
        wf = lf.weight[offf:offf + insf.path_shape[0] * insf.path_shape[1]].view(insf.path_shape)
        ki = torch.tensor(keep_in[key[0]])
        ko = torch.tensor(keep_out[key[1]])
        blk = wf[ki][:, ko] * (insf.path_weight / ins.path_weight)
        w[off:off + blk.numel()] = blk.reshape(-1)
    with torch.no_grad():
        lp.weight.copy_(w)


def _gate_keep(keep_next, irreps_next):
    """keep over the gate input (scalars + gates merged into 0e, then gated) of a layer
    whose output keeps ``keep_next``."""
    n0 = dict((str(ir), mul) for mul, ir in irreps_next)
    out = {"0e": list(keep_next.get("0e", []))}
    off = n0.get("0e", 0)
    for mul, ir in irreps_next:
        if ir.l == 0:
            continue
        out["0e"] += [off + u for u in keep_next[str(ir)]]
        off += mul
    for mul, ir in irreps_next:
        if ir.l > 0:
            out[str(ir)] = list(keep_next[str(ir)])
    return out


def _tp_keys(tp):
    """Entry keys of a convolution's output (irreps_mid): (l_in1, l_in2, l_out) per path."""
    keys = [None] * len(tp.irreps_out)
    for ins in tp.instructions:
        keys[ins.i_out] = "%s|%s|%s" % (tp.irreps_in1[ins.i_in1].ir, tp.irreps_in2[ins.i_in2].ir,
                                        tp.irreps_out[ins.i_out].ir)
    return keys


def surgery(config, state, keep, keep_h):
    """(pruned config, pruned state_dict) keeping ``keep`` (x_0..x_5) and ``keep_h``."""
    # in float64: the normalisation ratios would otherwise round the float32 weights
    full = M.build(config, state).double()
    pcfg = pruned_config(config, keep)
    pr = M.build(pcfg).double()
    F, P = full._modules, pr._modules
    irf = boundary_irreps(config)
    psd = pr.state_dict()
    fsd = full.state_dict()
    # everything not touched below (edge embedding, rescale, denominators) is copied as is
    for k, v in fsd.items():
        if k in psd and psd[k].shape == v.shape:
            psd[k] = v.clone()
    pr.load_state_dict(psd)

    def keys(irreps):
        return _irreps_keys(irreps)

    with torch.no_grad():
        lf, lp = F["onehot_to_feature_x"].linear, P["onehot_to_feature_x"].linear
        _linear_copy(lf, lp, keys(lf.irreps_in), keys(lp.irreps_in), keys(lf.irreps_out),
                     keys(lp.irreps_out), full_keep(lf.irreps_in), keep[0])
        for t in range(NLAYER):
            kx = keep[t]
            gate_f = F["%d_equivariant_gate" % t].gate
            kg = _gate_keep(keep[t + 1], irf[t + 1])
            # self connection: x_t -> gate input
            lf, lp = F["%d_self_connection_intro" % t].linear, P["%d_self_connection_intro" % t].linear
            _linear_copy(lf, lp, keys(lf.irreps_in), keys(lp.irreps_in), keys(lf.irreps_out),
                         keys(lp.irreps_out), kx, kg)
            # input projection x_t -> x_t-shaped (tied to x_t's keep)
            lf, lp = F["%d_self_interaction_1" % t].linear, P["%d_self_interaction_1" % t].linear
            _linear_copy(lf, lp, keys(lf.irreps_in), keys(lp.irreps_in), keys(lf.irreps_out),
                         keys(lp.irreps_out), kx, kx)
            # convolution: radial network's last layer, per path and kept channel
            cf, cp = F["%d_convolution" % t], P["%d_convolution" % t]
            tf, tpp = cf.convolution, cp.convolution
            kf, kp = _tp_keys(tf), _tp_keys(tpp)
            offs, off = {}, 0
            for ins in tf.instructions:
                offs[kf[ins.i_out]] = off
                off += ins.path_shape[0]
            cols = []
            kmid = {}
            for ins in tpp.instructions:
                key = kp[ins.i_out]
                ku = kx[str(tpp.irreps_in1[ins.i_in1].ir)]
                cols += [offs[key] + u for u in ku]
                kmid[key] = ku
                if abs(ins.path_weight - [i for i in tf.instructions if kf[i.i_out] == key][0].path_weight) > 1e-12:
                    raise RuntimeError("path weight of %s changed by pruning" % key)
            names = [n for n, _ in cf.weight_nn.named_parameters()]
            last = names[-1]
            for n, p in cp.weight_nn.named_parameters():
                src = dict(cf.weight_nn.named_parameters())[n]
                p.copy_(src[:, cols] if n == last else src)
            # output projection: convolution output -> gate input
            lf, lp = F["%d_self_interaction_2" % t].linear, P["%d_self_interaction_2" % t].linear
            # (sevenn's linear sees the path outputs merged by irrep, in path order)
            offf, o = {}, {}
            for e, (mul, ir) in enumerate(tf.irreps_out):
                offf[kf[e]] = o.get(str(ir), 0)
                o[str(ir)] = o.get(str(ir), 0) + mul
            kin = {}
            for e, (mul, ir) in enumerate(tpp.irreps_out):
                kin.setdefault(str(ir), []).extend(offf[kp[e]] + u for u in kmid[kp[e]])
            _linear_copy(lf, lp, keys(lf.irreps_in), keys(lp.irreps_in), keys(lf.irreps_out),
                         keys(lp.irreps_out), kin, kg)
            del gate_f
        # readout
        lf, lp = F["reduce_input_to_hidden"].linear, P["reduce_input_to_hidden"].linear
        _linear_copy(lf, lp, keys(lf.irreps_in), keys(lp.irreps_in), keys(lf.irreps_out),
                     keys(lp.irreps_out), keep[-1], {"0e": keep_h})
        lf, lp = F["reduce_hidden_to_energy"].linear, P["reduce_hidden_to_energy"].linear
        _linear_copy(lf, lp, keys(lf.irreps_in), keys(lp.irreps_in), keys(lf.irreps_out),
                     keys(lp.irreps_out), {"0e": keep_h}, full_keep(lf.irreps_out))
    return pcfg, pr.state_dict()


def masked_energy_forces(config, state, keep, keep_h, g):
    """Energy and forces of the unpruned model with the removed channels masked (the
    same exact float64 Wigner-3j coefficients as M.wrap gives the pruned model)."""
    seq = M.exact_w3j(M.build(config, state).double())
    model = M.ExportModel(seq, M.type_to_onehot(config)).to(torch.float64)
    masks = Masks(seq, config)
    with torch.no_grad():
        for k, ir in enumerate(masks.irreps):
            m = torch.zeros_like(masks.m[k])
            for c, (key, l, u) in enumerate(channel_list(ir)):
                if u in keep[k].get(key, []):
                    m[c] = 1.0
            masks.m[k].copy_(m)
        mh = torch.zeros_like(masks.mh)
        mh[torch.tensor(keep_h, dtype=torch.long)] = 1.0
        masks.mh.copy_(mh)
    e, f = M.energy_forces(model, *g)
    masks.remove()
    return e.detach(), f.detach()


def check_equal_masked(config, state, pcfg, pstate, keep, keep_h, g):
    """max relative difference (energy, forces) pruned vs masked, float64."""
    e0, f0 = masked_energy_forces(config, state, keep, keep_h, g)
    e1, f1 = M.energy_forces(M.wrap(pcfg, pstate), *g)
    return (abs(e1.item() - e0.item()) / abs(e0.item()),
            ((f1 - f0).abs().max() / f0.abs().max()).item())


def cpu_time_call(config, state, g, repeats=2):
    """Median CPU seconds of one float64 energy+force call (after one warm-up)."""
    import time
    model = M.wrap(config, state)
    M.energy_forces(model, *g)
    ts = []
    for _ in range(repeats):
        t = time.process_time()
        M.energy_forces(model, *g)
        ts.append(time.process_time() - t)
    return float(np.median(ts))
