"""Our deepmd::tabulate_fusion_* operators (src/USER-AISCI/torch/table_ops.cpp), the
tabulated embeddings that DeePMD-kit's `dp compress` puts in a model, called through
torch.ops from Debian's python3-torch with libaisci_torch loaded.

Tables are built here the way a compressed model's are: per interval and channel a
quintic in the offset t that matches value, first and second derivative of a known
smooth function f_k at both ends of the interval (quintic Hermite). Checks:
- inside the table every operator equals the untabulated formula with f_k itself to the
  interpolation error (analytic reference: se_a, se_atten, se_t, se_t_tebd, se_r);
- outside it the value continues linearly with the end slope (both ends);
- gradients against central finite differences (torch.autograd.gradcheck, float64) for
  em_x, em and two_embed, inside and outside the table;
- the sorted-padding fold of se_a/se_atten gives the unfolded sum;
- float32 agrees with float64 to float32 rounding;
- errors name the problem: table shape, em's last axis, table_info, a second derivative.
Skipped (77) where libaisci_torch is not built or this python's torch is not the one
libaisci_torch was built against."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lammps"))  # test helpers
from aisci_testlib import check, skip, summary  # noqa: E402

try:
    import torch
except ImportError:
    skip("this python has no torch (Debian's python3-torch, scripts/install-deps.sh)")
BUILD = os.environ.get("AISCI_BUILD_DIR", os.getcwd())
LIB = os.path.join(BUILD, "lib", "libaisci_torch.so")
if not os.path.exists(LIB):
    skip("%s not built (configured without libtorch)" % LIB)
try:
    with open(os.path.join(BUILD, "lib", "aisci_torch_version.txt")) as f:
        built = f.read().strip()
except OSError:
    built = torch.__version__
if torch.__version__.split("+")[0].split(".")[:2] != built.split(".")[:2]:
    skip("this python's torch is %s, libaisci_torch is built against %s" % (torch.__version__, built))
torch.ops.load_library(LIB)
ops = torch.ops.deepmd
torch.manual_seed(7)
D = torch.float64
N = 5  # channels (last_layer_size)


def f(x, k):
    """Channel k's embedding and its first two derivatives."""
    a, b = 0.7 + 0.3 * k, 0.1 * k
    return (torch.sin(a * x) + b * x * x, a * torch.cos(a * x) + 2 * b * x,
            -a * a * torch.sin(a * x) + 2 * b)


def quintic(y0, d0, s0, y1, d1, s1, h):
    """Coefficients of the quintic in t on [0, h] with the given value, slope, curvature
    at both ends."""
    a0, a1, a2 = y0, d0, s0 / 2
    # remaining a3 t^3 + a4 t^4 + a5 t^5 matches the residuals at t = h
    r0 = y1 - (a0 + a1 * h + a2 * h * h)
    r1 = d1 - (a1 + 2 * a2 * h)
    r2 = s1 - 2 * a2
    a3 = (20 * r0 - 8 * r1 * h + r2 * h * h) / (2 * h ** 3)
    a4 = (-30 * r0 + 14 * r1 * h - 2 * r2 * h * h) / (2 * h ** 4)
    a5 = (12 * r0 - 6 * r1 * h + r2 * h * h) / (2 * h ** 5)
    return [a0, a1, a2, a3, a4, a5]


def make_table(lower, upper, xmax, s0, s1, angular):
    """(table, table_info, edges): edges[i] is the left end of interval i."""
    edges = []
    if angular:
        x = -xmax
        while x < lower - 1e-12:
            edges.append((x, s1))
            x += s1
    for i in range(int(round((upper - lower) / s0))):
        edges.append((lower + i * s0, s0))
    for i in range(int(round((xmax - upper) / s1))):
        edges.append((upper + i * s1, s1))
    rows = []
    for x0, h in edges:
        row = []
        for k in range(N):
            v0 = [float(t) for t in f(torch.tensor(x0, dtype=D), k)]
            v1 = [float(t) for t in f(torch.tensor(x0 + h, dtype=D), k)]
            row += quintic(*v0, *v1, h)
        rows.append(row)
    table = torch.tensor(rows, dtype=D)
    info = torch.tensor([lower, upper, xmax, s0, s1, -1.0], dtype=D)
    return table, info


def g_exact(x):
    """[..., N] the embedding at x, continued linearly beyond the table (set by caller)."""
    return torch.stack([f(x, k)[0] for k in range(N)], dim=-1)


def g_extrap(x, lo, hi):
    """Untabulated embedding with DeePMD-kit's linear continuation outside [lo, hi]."""
    inside = g_exact(x.clamp(lo, hi))
    slope_lo = torch.stack([f(torch.tensor(lo, dtype=x.dtype), k)[1] for k in range(N)])
    slope_hi = torch.stack([f(torch.tensor(hi, dtype=x.dtype), k)[1] for k in range(N)])
    below = (x - lo).clamp(max=0).unsqueeze(-1) * slope_lo
    above = (x - hi).clamp(min=0).unsqueeze(-1) * slope_hi
    return inside + below + above


def rel(a, b):
    return float((a - b).abs().max() / max(1e-300, float(b.abs().max())))


# ------------------------------------------------------------------ radial tables
LO, UP, MX = 0.0, 1.0, 2.0
tab, info = make_table(LO, UP, MX, 0.01, 0.02, False)
nloc, nnei = 3, 7
em_x = torch.rand(nloc * nnei, 1, dtype=D) * 1.8 + 0.05          # inside the table
em = torch.randn(nloc, nnei, 4, dtype=D)
two = torch.randn(nloc * nnei, N, dtype=D) * 0.3

out = ops.tabulate_fusion_se_a(tab, info, em_x, em, N)[0]
ref = torch.einsum("ijm,ijk->imk", em, g_exact(em_x.view(nloc, nnei)))
check(out.shape == (nloc, 4, N), "se_a output shape %s" % (tuple(out.shape),))
e = rel(out, ref)
check(e < 1e-8, "se_a inside the table: relative deviation %.2e from the untabulated sum" % e)
print("se_a: table vs untabulated %.2e" % e, flush=True)

out = ops.tabulate_fusion_se_atten(tab, info, em_x, em, two, N, False)[0]
ref = torch.einsum("ijm,ijk->imk", em, g_exact(em_x.view(nloc, nnei)) * (1 + two.view(nloc, nnei, N)))
e = rel(out, ref)
check(e < 1e-8, "se_atten inside the table: relative deviation %.2e" % e)

r = torch.rand(nloc, nnei, dtype=D) * 1.8 + 0.05
out = ops.tabulate_fusion_se_r(tab, info, r, N)[0]
check(out.shape == (nloc, nnei, N), "se_r output shape %s" % (tuple(out.shape),))
e = rel(out, g_exact(r))
check(e < 1e-8, "se_r inside the table: relative deviation %.2e" % e)

# outside the table, both ends: linear continuation with the end slope
xo = torch.tensor([[-0.4, -0.05, 2.0, 2.3, 3.5]], dtype=D)
out = ops.tabulate_fusion_se_r(tab, info, xo, N)[0]
e = rel(out, g_extrap(xo, LO, MX))
check(e < 1e-8, "se_r outside the table: relative deviation %.2e from the linear continuation" % e)
print("se_r: outside the table vs linear continuation %.2e" % e, flush=True)

# ------------------------------------------------------------------ angular tables
# strides that divide the ranges exactly in binary (as DeePMD-kit's tables are laid out)
ALO, AUP, AMX = -0.5, 0.75, 1.5
atab, ainfo = make_table(ALO, AUP, AMX, 1 / 128, 1 / 32, True)
ni, nj = 4, 3
xa = torch.rand(nloc, ni, nj, dtype=D) * 2.8 - 1.4
out = ops.tabulate_fusion_se_t(atab, ainfo, xa, xa, N)[0]
ref = (xa.unsqueeze(-1) * g_exact(xa)).sum(dim=(1, 2))
check(out.shape == (nloc, N), "se_t output shape %s" % (tuple(out.shape),))
e = rel(out, ref)
check(e < 1e-8, "se_t inside the table: relative deviation %.2e" % e)
out = ops.tabulate_fusion_se_t_tebd(atab, ainfo, xa, xa, N)[0]
check(out.shape == (nloc, ni, nj, N), "se_t_tebd output shape %s" % (tuple(out.shape),))
e = rel(out, g_exact(xa))
check(e < 1e-8, "se_t_tebd inside the table: relative deviation %.2e" % e)
xo = torch.tensor([[[-2.0, -1.5, 1.5], [1.9, 0.0, -0.6]]], dtype=D)
out = ops.tabulate_fusion_se_t_tebd(atab, ainfo, xo, xo, N)[0]
e = rel(out, g_extrap(xo, -AMX, AMX))
check(e < 1e-8, "se_t_tebd outside the table: relative deviation %.2e" % e)

# ------------------------------------------------------------------ gradients
def gradcheck(name, fn, inputs):
    try:
        ok = torch.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-6, rtol=1e-5)
    except Exception as exc:  # gradcheck raises with the mismatching Jacobians
        print(str(exc)[:2000])
        ok = False
    check(ok, "%s: analytic gradient differs from finite differences" % name)


for label, lo_hi in (("inside", (0.05, 1.95)), ("outside", (-0.5, 2.6))):
    x = (torch.rand(2 * 4, 1, dtype=D) * (lo_hi[1] - lo_hi[0]) + lo_hi[0]).requires_grad_()
    m = torch.randn(2, 4, 4, dtype=D).requires_grad_()
    t = (torch.randn(2 * 4, N, dtype=D) * 0.3).requires_grad_()
    gradcheck("se_a " + label, lambda a, b: ops.tabulate_fusion_se_a(tab, info, a, b, N)[0], (x, m))
    gradcheck("se_atten " + label,
              lambda a, b, c: ops.tabulate_fusion_se_atten(tab, info, a, b, c, N, False)[0], (x, m, t))
    rr = (torch.rand(2, 4, dtype=D) * (lo_hi[1] - lo_hi[0]) + lo_hi[0]).requires_grad_()
    gradcheck("se_r " + label, lambda a: ops.tabulate_fusion_se_r(tab, info, a, N)[0], (rr,))
    xt = (torch.rand(2, 3, 2, dtype=D) * 4.0 - 2.0).requires_grad_()
    gradcheck("se_t " + label, lambda a: ops.tabulate_fusion_se_t(atab, ainfo, a, a, N)[0], (xt,))
    # as DeePMD-kit's se_e3 calls it: em_x flat [pairs, 1], em [atoms, nei, nei], one source
    gradcheck("se_t flat em_x " + label,
              lambda a: ops.tabulate_fusion_se_t(atab, ainfo, a.reshape(-1, 1), a, N)[0], (xt,))
    gradcheck("se_t_tebd flat em_x " + label,
              lambda a: ops.tabulate_fusion_se_t_tebd(atab, ainfo, a.reshape(-1, 1), a, N)[0], (xt,))
    gradcheck("se_t_tebd " + label,
              lambda a: ops.tabulate_fusion_se_t_tebd(atab, ainfo, a, a, N)[0], (xt,))

# ------------------------------------------------------------------ sorted padding fold
# atom 0: 3 real neighbours then 4 padding entries (same input, zero direction)
x = torch.tensor([0.9, 0.6, 0.3, 0.0, 0.0, 0.0, 0.0], dtype=D).view(-1, 1)
m = torch.randn(1, 7, 4, dtype=D)
m[0, 3:, 1:] = 0
m[0, 3:, 0] = 0.25
t = torch.randn(7, N, dtype=D) * 0.2
t[3:] = t[3]
folded = ops.tabulate_fusion_se_atten(tab, info, x, m, t, N, True)[0]
plain = ops.tabulate_fusion_se_atten(tab, info, x, m, t, N, False)[0]
e = rel(folded, plain)
check(e < 1e-13, "se_atten sorted padding fold: %.2e from the unfolded sum" % e)
e = rel(ops.tabulate_fusion_se_a(tab, info, x, m, N)[0],
        torch.einsum("ijm,ijk->imk", m, g_exact(x.view(1, 7))))
check(e < 1e-8, "se_a with padding: %.2e from the untabulated sum" % e)

# ------------------------------------------------------------------ float32
out32 = ops.tabulate_fusion_se_a(tab.float(), info.float(), em_x.float(), em.float(), N)[0]
out64 = ops.tabulate_fusion_se_a(tab, info, em_x, em, N)[0]
e = rel(out32.double(), out64)
check(out32.dtype == torch.float32 and e < 1e-5, "se_a float32 vs float64: %.2e" % e)
print("se_a: float32 vs float64 %.2e" % e, flush=True)


# ------------------------------------------------------------------ errors
def refused(what, fn, words):
    try:
        fn()
    except Exception as exc:
        msg = str(exc)
        check(all(w in msg for w in words), "%s: message lacks %s: %s" % (what, words, msg[:300]))
        return
    check(False, "%s: accepted" % what)


refused("table with a wrong width", lambda: ops.tabulate_fusion_se_a(tab[:, :-1], info, em_x, em, N),
        ["tabulate_fusion_se_a", "table has shape"])
refused("em with 5 columns",
        lambda: ops.tabulate_fusion_se_a(tab, info, em_x, torch.randn(nloc, nnei, 5, dtype=D), N),
        ["em's last axis is 5"])
refused("table_info beyond the table",
        lambda: ops.tabulate_fusion_se_r(tab, torch.tensor([0.0, 1.0, 9.0, 0.01, 0.02, -1.0], dtype=D), r, N),
        ["table_info describes", "rows"])
refused("mixed precision", lambda: ops.tabulate_fusion_se_r(tab, info, r.float(), N), ["em is", "Float"])
x = em_x.clone().requires_grad_()
refused("second derivative",
        lambda: torch.autograd.grad(ops.tabulate_fusion_se_a(tab, info, x, em, N)[0].pow(2).sum(), x,
                                    create_graph=True),
        ["second derivatives", "tabulate_fusion_se_a"])
summary("test_deepmd_table_ops")
