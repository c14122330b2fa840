#!/usr/bin/python3
"""potentials/: MatRIS-style and DPA3-style models (untrained, small) in float64 and
float32: forces = -dE/dx by central finite differences through edge_vec autograd,
rotation / translation / permutation invariance, smooth cutoff, TorchScript.
Run with /usr/bin/python3 (torch 1.13, numpy)."""

import os
import sys

import numpy as np
import torch

SRC = os.environ.get("AISCI_SOURCE_DIR",
                     os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, SRC)

from potentials.common.evaluate import energy_forces  # noqa: E402
from potentials.common.graph import build_graph  # noqa: E402
from potentials.common.train import build_model  # noqa: E402
from potentials.data.water_box import make_water_box  # noqa: E402

FAILURES = []
CUTOFF, CUTOFF3 = 4.0, 2.8


def check(cond, what):
    print("%s: %s" % ("ok" if cond else "FAIL", what))
    if not cond:
        FAILURES.append(what)


def small_model(arch, dtype=torch.float64):
    torch.manual_seed(3)
    config = {"num_types": 2, "cutoff": CUTOFF, "cutoff_3body": CUTOFF3, "num_layers": 2,
              "channels": 8, "num_radial": 6, "lmax": 3, "neighbor_norm": 30.0,
              "angle_channels": 8, "angle_norm": 8.0}
    model = build_model(arch, config).to(torch.float64)
    with torch.no_grad():  # an untrained model is nearly flat: scale it to forces ~0.1 eV/A
        model.readout.energy_scale.fill_(300.0)
        model.pair.weight.normal_(0.0, 1e-3)  # the two-body term starts at zero in training
    return torch.jit.script(model.to(dtype))


def evaluate(model, x, cell, types, dtype=torch.float64, per_atom=False):
    g = build_graph(x, cell, CUTOFF, CUTOFF3)
    args = (torch.tensor(g["edge_vec"], dtype=dtype), torch.tensor(g["edge_index"]),
            torch.tensor(types), torch.tensor(g["triplets"]).reshape(-1, 2))
    if per_atom:
        return model(*args).detach().double().numpy()
    e, f, w = energy_forces(model, *args, virial=True)
    return e.item(), f.detach().double().numpy(), w[0].detach().double().numpy()


def system():
    box = make_water_box(8, 1.0, seed=2)
    rng = np.random.default_rng(0)
    x = box["positions"] + rng.normal(scale=0.05, size=box["positions"].shape)
    return x, np.diag(box["box"]), (box["types"] - 1).astype(np.int64)


def test_finite_differences(arch):
    model = small_model(arch)
    x, cell, types = system()
    e0, f, w = evaluate(model, x, cell, types)
    h = 1e-4
    fscale = np.abs(f).max()
    worst = 0.0
    rng = np.random.default_rng(1)
    for a in rng.choice(len(x), size=6, replace=False):
        for d in range(3):
            xp = x.copy()
            xm = x.copy()
            xp[a, d] += h
            xm[a, d] -= h
            fd = -(evaluate(model, xp, cell, types)[0] - evaluate(model, xm, cell, types)[0]) / (2 * h)
            worst = max(worst, abs(fd - f[a, d]) / fscale)
    check(fscale > 0.01 and worst < 1e-6,
          "%s float64: forces = -dE/dx by finite differences (max |F| %.2f eV/A, worst error "
          "%.1e of it)" % (arch, fscale, worst))
    # virial: -dE/d(strain) for a homogeneous deformation x -> (1 + eps) x, cell likewise
    eps = 1e-5
    wscale = np.abs(w).max()
    worst_w = 0.0
    for a, b in ((0, 0), (1, 2), (2, 1)):
        strain = np.eye(3)
        strain[a, b] += eps
        ep = evaluate(model, x @ strain.T, cell @ strain.T, types)[0]
        strain[a, b] -= 2 * eps
        em = evaluate(model, x @ strain.T, cell @ strain.T, types)[0]
        fd = -(ep - em) / (2 * eps)
        worst_w = max(worst_w, abs(fd - w[a, b]) / wscale)
    check(worst_w < 1e-6, "%s float64: virial = -dE/dstrain by finite differences (max |W| "
          "%.2f eV, worst error %.1e of it)" % (arch, wscale, worst_w))


def test_invariance(arch):
    model = small_model(arch)
    x, cell, types = system()
    e0, f0, _ = evaluate(model, x, cell, types)
    # translation (atoms leave the cell: the graph uses image shifts)
    e1, f1, _ = evaluate(model, x + np.array([3.3, -7.1, 0.4]), cell, types)
    tol = 1e-12 * max(1.0, abs(e0))
    check(abs(e1 - e0) < tol and np.abs(f1 - f0).max() < 1e-10,
          "%s: translation invariance (dE %.1e)" % (arch, abs(e1 - e0)))
    # rotation of atoms and cell
    q = np.linalg.qr(np.random.default_rng(7).normal(size=(3, 3)))[0]
    if np.linalg.det(q) < 0:
        q[:, 0] *= -1
    e2, f2, _ = evaluate(model, x @ q.T, cell @ q.T, types)
    check(abs(e2 - e0) < tol and np.abs(f2 - f0 @ q.T).max() < 1e-10,
          "%s: rotation invariance of E, covariance of F (dE %.1e)" % (arch, abs(e2 - e0)))
    # permutation of atoms: per-atom energies permute
    perm = np.random.default_rng(8).permutation(len(x))
    ea = evaluate(model, x, cell, types, per_atom=True)
    eb = evaluate(model, x[perm], cell, types[perm], per_atom=True)
    e3, f3, _ = evaluate(model, x[perm], cell, types[perm])
    check(np.abs(eb - ea[perm]).max() < 1e-10 and abs(e3 - e0) < tol
          and np.abs(f3 - f0[perm]).max() < 1e-10,
          "%s: permutation equivariance of per-atom energies and forces" % arch)
    # inversion (rotation invariance is proper rotations; an invariant model is also
    # inversion invariant since it sees only lengths and angles)
    e4, _, _ = evaluate(model, -x, -cell, types)
    check(abs(e4 - e0) < tol, "%s: inversion invariance" % arch)


def test_smooth_cutoff(arch):
    """Energy and slope continuous across cutoff_3body and cutoff. One H moves along y
    through r = r_c; at r_c -/+ d: a step in E shows in E(+d) - E(-d) - d (E'(-d) + E'(+d))
    (O(d^3) when smooth); a kink in E' keeps |E'(+d) - E'(-d)| finite as d -> 0, while
    for a smooth E it shrinks like d (compared at d = 1e-4 and 1e-6)."""
    model = small_model(arch)
    cell = np.eye(3) * 30.0
    types = np.array([0, 1, 1], dtype=np.int64)

    def around(rc, d):
        e, slope = [], []
        for r in (rc - d, rc + d):
            x = np.array([[10.0, 10.0, 10.0], [10.95, 10.0, 10.0], [10.0, 10.0 + r, 10.0]])
            energy, forces, _ = evaluate(model, x, cell, types)
            e.append(energy)
            slope.append(-forces[2, 1])
        return abs(e[1] - e[0] - d * (slope[0] + slope[1])), abs(slope[1] - slope[0]), slope[0]

    for name, rc in (("cutoff_3body", CUTOFF3), ("cutoff", CUTOFF)):
        step, kink_wide, slope = around(rc, 1e-4)
        _, kink_narrow, _ = around(rc, 1e-6)
        check(step < 1e-10 and kink_narrow < 0.05 * kink_wide + 1e-9,
              "%s: E and dE/dr continuous across %s (step %.1e eV; slope change %.1e eV/A over "
              "2e-4 A, %.1e over 2e-6 A; slope %.1e eV/A)"
              % (arch, name, step, kink_wide, kink_narrow, abs(slope)))


def test_float32(arch):
    m64 = small_model(arch, torch.float64)
    m32 = small_model(arch, torch.float32)
    x, cell, types = system()
    e64, f64, _ = evaluate(m64, x, cell, types, torch.float64)
    e32, f32, _ = evaluate(m32, x, cell, types, torch.float32)
    out = m32(torch.zeros((1, 3), dtype=torch.float32) + 1.0, torch.tensor([[0], [1]]),
              torch.tensor([0, 1]), torch.zeros((0, 2), dtype=torch.int64))
    check(out.dtype == torch.float32 and abs(e32 - e64) < 1e-5 * abs(e64)
          and np.abs(f32 - f64).max() < 1e-3 * np.abs(f64).max(),
          "%s: float32 model agrees with float64 (dE %.1e, dF %.1e), returns float32"
          % (arch, abs(e32 - e64), np.abs(f32 - f64).max()))


if __name__ == "__main__":
    torch.set_num_threads(1)
    for arch in ("matris", "dpa3"):
        test_finite_differences(arch)
        test_invariance(arch)
        test_smooth_cutoff(arch)
        test_float32(arch)
    if FAILURES:
        print("%d check(s) failed" % len(FAILURES))
        sys.exit(1)
    print("all checks passed")
