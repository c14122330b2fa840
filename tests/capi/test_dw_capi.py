"""DPLR DW model through the torch C API (aisci_model_compute_vector and
aisci_model_vector_backward, driven through ctypes): the shipped
potentials/models/water_dw.pt reproduces the q-TIP4P/F M-site displacement on held-out
frames, its output is rotation-equivariant, the backward pass equals finite differences
of E = sum_i g_i . d_i(x), and every error path returns its status and message."""
import ctypes as C
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lammps"))  # test helpers
SOURCE = os.environ.get("AISCI_SOURCE_DIR", os.path.abspath(os.path.join(HERE, "..", "..")))
sys.path.insert(0, SOURCE)
import aisci_nn_toy as toy  # noqa: E402
from potentials.common.graph import build_graph  # noqa: E402
from potentials.common.metadata import EXTRA_FILE, state_dict_checksum  # noqa: E402
from potentials.dw.train import load_frames, msite_displacement, split  # noqa: E402

toy.skip_without_torch_wrapper()

# Held-out M-site RMSE bound (Angstrom). The shipped model measured 2.9e-4 A on the 96
# test frames (potentials/models/README.md); the RMS of the target components is 9e-2 A
# (a zero model) and the O-M distance 0.152 A on average. An error of 2e-3 A in M moves
# the molecular dipole (1.1128 e x ~0.41 A = 0.46 e A) by ~0.5%, and the bound is ~7x
# the measured error: a retrained model of the same quality passes, a broken one fails.
RMSE_BOUND = 2e-3
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


import aisci_capi  # noqa: E402  (ctypes bindings of libaisci_torch / libaisci_core)
lib, core = aisci_capi.lib, aisci_capi.core
from aisci_capi import OK, ERR_ARG, ERR_MODEL, ERR_FORMAT, create, ptr  # noqa: E402
lib.aisci_model_output_is_vector.argtypes = [C.c_void_p]
lib.aisci_model_architecture.argtypes = [C.c_void_p]
lib.aisci_model_architecture.restype = C.c_char_p
lib.aisci_model_metadata.argtypes = [C.c_void_p, C.c_char_p]
lib.aisci_model_metadata.restype = C.c_char_p
lib.aisci_model_compute_vector.argtypes = [
    C.c_void_p, C.c_int64, C.c_void_p, C.c_int64, C.c_void_p, C.c_void_p, C.c_int64,
    C.c_void_p, C.c_void_p]
lib.aisci_model_vector_backward.argtypes = [C.c_void_p, C.c_void_p, C.c_void_p, C.c_void_p]


last = aisci_capi.last_error


def vector(h, types, ei, vec):
    d = np.zeros((len(types), 3))
    st = lib.aisci_model_compute_vector(h, len(types), ptr(types), ei.shape[1], ptr(ei),
                                        ptr(vec), 0, None, ptr(d))
    return st, d


def backward(h, g, forces=None, virial=None):
    return lib.aisci_model_vector_backward(h, ptr(g), ptr(forces), ptr(virial))


def graph(x, cell, cutoff):
    gr = build_graph(x, cell, cutoff)
    return (np.ascontiguousarray(gr["edge_index"], dtype=np.int64),
            np.ascontiguousarray(gr["edge_vec"]), gr["shifts"] @ cell)


MODEL = os.path.join(SOURCE, "potentials", "models", "water_dw.pt")
st, h, msg = create(MODEL)
check(st == OK and h.value, "create water_dw.pt: " + msg)
check(lib.aisci_model_output_is_vector(h) == 1, "output_is_vector == 1")
check(lib.aisci_model_architecture(h) == b"dw", "architecture dw")
check(lib.aisci_model_metadata(h, b"selected_types") == b"O", "selected_types = O")
rc = lib.aisci_model_cutoff(h)

# --- accuracy on held-out frames: M-site displacement of q-TIP4P/F ---
frames = load_frames()
_, test_idx = split(len(frames))
py_model = torch.jit.load(MODEL)
se, n = 0.0, 0
for k in test_idx[:8]:
    x, types, cell = frames[k]
    types = np.ascontiguousarray(types, dtype=np.int64)
    ei, vec, _ = graph(x, cell, rc)
    st, d = vector(h, types, ei, vec)
    target = msite_displacement(x, types, cell)
    o = types == 0
    se += ((d[o] - target[o]) ** 2).sum()
    n += 3 * o.sum()
    if k == test_idx[0]:
        check(st == OK, "compute_vector status: " + (last() if st else ""))
        with torch.no_grad():
            d_py = py_model(torch.tensor(vec), torch.tensor(ei), torch.tensor(types),
                            torch.zeros((0, 2), dtype=torch.int64)).numpy()
        check(np.abs(d - d_py).max() < 1e-12, "C API equals the Python module (max %.1e)"
              % np.abs(d - d_py).max())
        check(np.all(d[~o] == 0.0), "H atoms (not selected) get zero vectors")
rmse = (se / n) ** 0.5
check(rmse < RMSE_BOUND, "held-out M-site RMSE %.2e A < %.0e A (8 test frames)"
      % (rmse, RMSE_BOUND))

# --- rotation equivariance (float64) ---
x, types, cell = frames[test_idx[0]]
types = np.ascontiguousarray(types, dtype=np.int64)
ei, vec, shift = graph(x, cell, rc)
q, _ = np.linalg.qr(np.random.RandomState(3).normal(size=(3, 3)))
st0, d0 = vector(h, types, ei, vec)
st1, d1 = vector(h, types, ei, np.ascontiguousarray(vec @ q.T))
err = np.abs(d1 - d0 @ q.T).max()
check(st0 == OK and st1 == OK and err < 1e-10, "d(Q r) = Q d(r) to %.1e" % err)

# --- backward = finite differences of E = sum_i g_i . d_i(x) (float64) ---
g = np.random.RandomState(4).normal(size=(len(types), 3))


def energy(xx):
    v = np.ascontiguousarray(xx[ei[1]] - xx[ei[0]] + shift)
    st, d = vector(h, types, ei, v)
    assert st == OK, last()
    return (g * d).sum()


st, _ = vector(h, types, ei, vec)
f = np.ones((len(types), 3))  # accumulated onto 1
w = np.ones(9)
st_b = backward(h, g, f, w)
check(st_b == OK, "vector_backward status: " + (last() if st_b else ""))
f -= 1.0
w -= 1.0
f2 = np.zeros((len(types), 3))
check(backward(h, g, f2, None) == OK and np.abs(f2 - f).max() < 1e-14,
      "a second backward on the same forward gives the same forces (graph kept)")
check(np.abs(f.sum(0)).max() < 1e-10, "forces sum to zero (translation invariance)")
hstep, worst = 1e-5, 0.0
for a in [0, 1, 2, 3, 30, 61]:
    for c in range(3):
        xp, xm = x.copy(), x.copy()
        xp[a, c] += hstep
        xm[a, c] -= hstep
        fd = -(energy(xp) - energy(xm)) / (2 * hstep)
        worst = max(worst, abs(fd - f[a, c]) / max(1.0, abs(f[a, c])))
check(worst < 1e-7, "forces = -dE/dx by central differences (worst %.1e)" % worst)
# virial: W_ab = -dE/d(eps_ba) under the homogeneous strain r -> (I + eps) r
wfd = np.zeros((3, 3))
for a in range(3):
    for b in range(3):
        e = np.zeros((3, 3))
        e[b, a] = hstep
        ep = (g * vector(h, types, ei, np.ascontiguousarray(vec @ (np.eye(3) + e).T))[1]).sum()
        em = (g * vector(h, types, ei, np.ascontiguousarray(vec @ (np.eye(3) - e).T))[1]).sum()
        wfd[a, b] = -(ep - em) / (2 * hstep)
err = np.abs(w.reshape(3, 3) - wfd).max() / max(1.0, np.abs(wfd).max())
check(err < 1e-7, "virial = -dE/d(strain) by central differences (%.1e)" % err)

# --- float32 evaluation of the same file: close to float64 ---
h32 = C.c_void_p()
st = lib.aisci_model_create(MODEL.encode(), b"cpu", b"float32", 1, C.byref(h32))
st_v, d32 = vector(h32, types, ei, vec)
f32 = np.zeros((len(types), 3))
st_b = backward(h32, g, f32, None)
check(st == OK and st_v == OK and st_b == OK and np.abs(d32 - d0).max() < 1e-5
      and np.abs(f32 - f).max() < 1e-4 * max(1.0, np.abs(f).max()),
      "float32: vectors within 1e-5 A (%.1e), forces within 1e-4 relative (%.1e)"
      % (np.abs(d32 - d0).max(), np.abs(f32 - f).max()))
lib.aisci_model_destroy(h32)

# --- error paths ---
empty = np.zeros((2, 0), dtype=np.int64)
e = C.c_double()
st = lib.aisci_model_compute(h, len(types), ptr(types), 0, None, None, 0, None, len(types),
                             C.byref(e), None, None, None, None)
check(st == ERR_MODEL and "water_dw.pt" in last() and "compute_vector" in last(),
      "vector model in aisci_model_compute: ERR_MODEL: " + last())
check(backward(h, g, f2, None) == ERR_ARG and "compute_vector() first" in last(),
      "aisci_model_compute released the graph: backward ERR_ARG: " + last())
st = lib.aisci_model_compute_vector(h, len(types), ptr(types), ei.shape[1], ptr(ei), ptr(vec),
                                    0, None, None)
check(st == ERR_ARG and "vectors" in last(), "NULL vectors: ERR_ARG: " + last())
st, _ = vector(h, types, ei, vec)
check(backward(h, None, f2, None) == ERR_ARG and "grad_out" in last(),
      "NULL grad_out: ERR_ARG: " + last())
bad_types = types.copy()
bad_types[5] = 2
st, _ = vector(h, bad_types, ei, vec)
check(st == ERR_ARG and "type 2" in last(), "type out of range: ERR_ARG: " + last())
check(backward(h, g, f2, None) == ERR_ARG, "a failed forward leaves no graph: " + last())
st, d = vector(h, types[:3], np.zeros((2, 0), dtype=np.int64), np.zeros((0, 3)))
f3 = np.zeros((3, 3))
check(st == OK and np.all(d == 0) and backward(h, g[:3], f3, None) == OK and np.all(f3 == 0),
      "atoms without edges: zero vectors, zero forces")
lib.aisci_model_destroy(h)

energy_model = os.path.join(SOURCE, "potentials", "models", "water_matris.pt")
st, he, msg = create(energy_model)
check(st == OK, "create an energy model: " + msg)
st, _ = vector(he, types, ei, vec)
check(st == ERR_MODEL and "water_matris.pt" in last() and "energies" in last(),
      "energy model in compute_vector: ERR_MODEL: " + last())
check(backward(he, g, f2, None) == ERR_MODEL and "water_matris.pt" in last(),
      "energy model in vector_backward: ERR_MODEL: " + last())
lib.aisci_model_destroy(he)

scratch = toy.build_dir("dw_capi")
extra = {EXTRA_FILE: ""}
m = torch.jit.load(MODEL, _extra_files=extra)
text = extra[EXTRA_FILE].decode() if isinstance(extra[EXTRA_FILE], bytes) else extra[EXTRA_FILE]
bad = os.path.join(scratch, "bad_output.pt")
torch.jit.save(m, bad, _extra_files={EXTRA_FILE: text.replace("output = vector",
                                                              "output = tensor")})
st, hb, msg = create(bad)
check(st == ERR_FORMAT and "'output'" in msg and "bad_output.pt" in msg and not hb.value,
      "output = tensor: ERR_FORMAT: " + msg)


class WrongShape(torch.nn.Module):
    def forward(self, edge_vec: torch.Tensor, edge_index: torch.Tensor,
                atom_types: torch.Tensor, triplets: torch.Tensor) -> torch.Tensor:
        return torch.zeros(atom_types.shape[0], dtype=edge_vec.dtype)


ws = torch.jit.script(WrongShape())
wrong = os.path.join(scratch, "wrong_shape.pt")
text2 = "\n".join(ln for ln in text.splitlines() if not ln.startswith("checksum"))
torch.jit.save(ws, wrong, _extra_files={EXTRA_FILE: text2 + "\nchecksum = %s\n"
                                        % state_dict_checksum(ws)})
st, hw, msg = create(wrong)
check(st == OK, "wrong-shape vector model loads: " + msg)
st, _ = vector(hw, types, ei, vec)
check(st == ERR_MODEL and "expected per-atom vectors" in last() and "wrong_shape.pt" in last(),
      "forward returning [N]: ERR_MODEL: " + last())
lib.aisci_model_destroy(hw)

print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
