"""Ghost-feature exchange: the C API (aisci_model_set_exchange, aisci_model_ghost_exchange,
driven through ctypes with exchange callbacks written in Python) and every bad input
with its exact status or LAMMPS error text.

C API success: a 3-layer MatRIS-style model exported with ghost exchange, evaluated on
the owned atoms of a periodic frame plus all 26 periodic images as "ghost" atoms (edges
of owned centres only), with callbacks that copy owner rows to ghost rows (forward) and
sum ghost rows into owners (reverse), gives the energy, forces (ghost forces summed into
their owners) and virial of the periodic graph without callbacks (relative 1e-10); and
the same model without callbacks equals the model exported without exchange."""
import ctypes as C
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "capi"))  # aisci_capi
import aisci_nn_toy as toy  # noqa: E402

toy.skip_without_torch_wrapper()
import aisci_testlib as T  # noqa: E402

sys.path.insert(0, T.SOURCE_DIR)
from potentials.common.export import model_metadata, save_model  # noqa: E402
from potentials.common.metadata import state_dict_checksum  # noqa: E402
from potentials.matris.model import MatrisModel  # noqa: E402

d = toy.build_dir("exchange_errors")
RC, RC3 = 3.0, 2.0


def export(path, layers, ghost_exchange, seed=4, meta_value=None):
    torch.manual_seed(seed)
    config = dict(num_types=2, cutoff=RC, cutoff_3body=RC3, num_layers=layers, channels=8,
                  num_radial=4, lmax=2)
    model = MatrisModel(ghost_exchange=ghost_exchange, **config).to(torch.float64)
    scripted = torch.jit.script(model)
    extra = {}
    if ghost_exchange or meta_value is not None:
        extra["ghost_exchange"] = 1 if meta_value is None else meta_value
    meta = model_metadata("matris", config, ["O", "H"], "float64",
                          state_dict_checksum(scripted), extra)
    save_model(scripted, path, meta)
    return path


x3 = export(os.path.join(d, "x3.pt"), 3, True)
plain3 = export(os.path.join(d, "plain3.pt"), 3, False)
x1 = export(os.path.join(d, "x1.pt"), 1, True)
bad_meta = export(os.path.join(d, "badmeta.pt"), 3, False, meta_value=2)

# --- C API ---------------------------------------------------------------------------
import aisci_capi  # noqa: E402  (ctypes bindings of libaisci_torch / libaisci_core)
lib, core = aisci_capi.lib, aisci_capi.core
from aisci_capi import OK, ERR_ARG, ERR_MODEL, ERR_FORMAT, create, ptr  # noqa: E402
lib.aisci_model_ghost_exchange.argtypes = [C.c_void_p]
CALLBACK = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_int64, C.c_int64, C.POINTER(C.c_double))
lib.aisci_model_set_exchange.argtypes = [C.c_void_p, C.c_void_p, C.c_void_p, C.c_void_p]
def compute(h, types, ei, vec, tr, n_energy):
    n = len(types)
    e, f, w = C.c_double(), np.zeros((n, 3)), np.zeros(9)
    st = lib.aisci_model_compute(h, n, ptr(types), ei.shape[1], ptr(ei), ptr(vec), tr.shape[0],
                                 ptr(tr), n_energy, C.byref(e), None, ptr(f), ptr(w), None)
    return st, e.value, f, w.reshape(3, 3)


box = 8.0
x, types = toy.random_frame(24, box, seed=5, rmin=1.1)
n = len(x)
types = np.ascontiguousarray(types, dtype=np.int64)
ei, sh, tr = toy.periodic_graph(x, box, RC, RC3)
vec = np.ascontiguousarray(x[ei[1]] - x[ei[0]] + sh)
ei = np.ascontiguousarray(ei, dtype=np.int64)

# owned atoms, then 26 images of every atom as ghosts; edges of owned centres only
shifts = [np.array(s) * box for s in np.ndindex(3, 3, 3) if s != (1, 1, 1)]
shifts = [s - box for s in shifts]
xg = np.concatenate([x] + [x + s for s in shifts])
owner = np.arange(len(xg)) % n
tg = np.ascontiguousarray(types[owner])
dv = xg[None, :, :] - x[:, None, :]
r = np.linalg.norm(dv, axis=2)
ci, nj = np.nonzero((r < RC) & (r > 0))
eg = np.ascontiguousarray(np.stack([ci, nj]), dtype=np.int64)
vg = np.ascontiguousarray(dv[ci, nj])
rg = r[ci, nj]
trip = [(a, b) for c in range(n) for a in np.nonzero((ci == c) & (rg < RC3))[0]
        for b in np.nonzero((ci == c) & (rg < RC3))[0] if a != b]
tg3 = np.ascontiguousarray(np.array(trip, dtype=np.int64).reshape(-1, 2))
calls = {"forward": 0, "reverse": 0}


@CALLBACK
def forward_cb(user, rows, width, buf):
    a = np.ctypeslib.as_array(buf, shape=(rows, width))
    a[n:] = a[owner[n:]]
    calls["forward"] += 1
    return 0


@CALLBACK
def reverse_cb(user, rows, width, buf):
    a = np.ctypeslib.as_array(buf, shape=(rows, width))
    np.add.at(a, owner[n:], a[n:])
    a[n:] = 0.0
    calls["reverse"] += 1
    return 0


@CALLBACK
def failing_cb(user, rows, width, buf):
    return 7


st, hx, msg = create(x3)
T.check(st == OK, "create exchange model: " + msg)
st, hp, msg = create(plain3)
T.check(st == OK and lib.aisci_model_ghost_exchange(hx) == 1
        and lib.aisci_model_ghost_exchange(hp) == 0 and lib.aisci_model_ghost_exchange(None) == 0,
        "aisci_model_ghost_exchange: 1, 0, 0 for NULL")
st, e_p, f_p, w_p = compute(hp, types, ei, vec, tr, n)
st2, e_x, f_x, w_x = compute(hx, types, ei, vec, tr, n)
T.check(st == OK and st2 == OK and e_x == e_p and np.array_equal(f_x, f_p),
        "no callbacks: the operator is the identity (same bits as the model without it)")

T.check(lib.aisci_model_set_exchange(hx, forward_cb, reverse_cb, None) == OK, "set callbacks")
st, e_g, f_g, w_g = compute(hx, tg, eg, vg, tg3, n)
T.check(st == OK, "compute with ghosts: " + core.aisci_last_error().decode())
f_sum = np.zeros((n, 3))
np.add.at(f_sum, owner, f_g)


def rel(a, b):
    return np.abs(np.asarray(a) - np.asarray(b)).max() / max(np.abs(b).max(), 1e-300)


T.check(rel(e_g, e_p) < 1e-10 and rel(f_sum, f_p) < 1e-10 and rel(w_g, w_p) < 1e-10,
        "exchange over images == periodic graph: energy %.2e forces %.2e virial %.2e"
        % (rel(e_g, e_p), rel(f_sum, f_p), rel(w_g, w_p)))
T.check(calls == {"forward": 2, "reverse": 2}, "3 layers: 2 forward and 2 reverse calls, got %s"
        % calls)
print("C API exchange over images vs periodic: energy %.1e forces %.1e virial %.1e"
      % (rel(e_g, e_p), rel(f_sum, f_p), rel(w_g, w_p)))

# without exchange the truncated ghost graph is wrong: the test can fail
T.check(lib.aisci_model_set_exchange(hx, None, None, None) == OK, "clear callbacks")
st, e_n, _, _ = compute(hx, tg, eg, vg, tg3, n)
T.check(st == OK and rel(e_n, e_p) > 1e-6, "without callbacks the ghost graph differs "
        "(%.2e): the exchange matters" % rel(e_n, e_p))

# error paths, each with its status and message
api_cases = [
    ("NULL model", lambda: lib.aisci_model_set_exchange(None, forward_cb, reverse_cb, None),
     ERR_ARG, ["model is NULL"]),
    ("forward only", lambda: lib.aisci_model_set_exchange(hx, forward_cb, None, None),
     ERR_ARG, ["both the forward and the reverse callback, or neither"]),
    ("model without exchange",
     lambda: lib.aisci_model_set_exchange(hp, forward_cb, reverse_cb, None), ERR_MODEL,
     ["plain3.pt", "ghost_exchange = 1", "--ghost-exchange"]),
]
for what, call, want, words in api_cases:
    got = call()
    text = core.aisci_last_error().decode()
    T.check(got == want and all(w in text for w in words),
            "%s: status %d (want %d), message %r" % (what, got, want, text))
T.check(lib.aisci_model_set_exchange(hp, None, None, None) == OK,
        "clearing callbacks of a model without exchange is fine")
T.check(lib.aisci_model_set_exchange(hx, failing_cb, reverse_cb, None) == OK, "set failing cb")
st, _, _, _ = compute(hx, tg, eg, vg, tg3, n)
text = core.aisci_last_error().decode()
T.check(st == ERR_MODEL and "forward callback failed (code 7)" in text,
        "failing callback: status %d, message %r" % (st, text))
st, _, msg = create(bad_meta)
T.check(st == ERR_FORMAT and "metadata key 'ghost_exchange' must be 0 or 1, got '2'" in msg,
        "ghost_exchange = 2: status %d, %r" % (st, msg))
lib.aisci_model_destroy(hx)
lib.aisci_model_destroy(hp)

# --- LAMMPS input errors ------------------------------------------------------------
xf, tf = toy.random_frame(16, 7.0, seed=1, rmin=1.1)
toy.write_data(os.path.join(d, "frame.data"), xf, 7.0, tf + 1, 2)
frame = open(os.path.join(d, "frame.data")).read()


def script(style, model=x3):
    return """units metal
atom_style atomic
read_data frame.data
%s
pair_coeff * * %s O H
run 0
""" % (style, model)


cases = [
    ("bad ghost value", script("pair_style aisci ghost deep"),
     ["pair_style aisci: unknown ghost value 'deep' (expected one of: auto, exchange, widen)"]),
    ("missing ghost value", script("pair_style aisci ghost"), ["keyword ghost needs 1 value"]),
    ("exchange without an exchange model", script("pair_style aisci ghost exchange", plain3),
     ["pair_style aisci: ghost exchange needs a model exported with ghost-feature exchange "
      "(metadata ghost_exchange = 1, potentials/common/export.py --ghost-exchange), but "
      "model file '%s' has none (use ghost auto or ghost widen)" % plain3]),
    ("exchange and balance ring",
     script("pair_style aisci graph ghost ghost exchange balance ring 0.05", x1),
     ["pair_style aisci: balance ring cannot be combined with ghost exchange"]),
    ("ghost auto chooses exchange, with balance ring",
     script("pair_style aisci graph ghost balance ring 0.05", x3),
     ["pair_style aisci: balance ring cannot be combined with ghost exchange"]),
    ("bad metadata value", script("pair_style aisci", bad_meta),
     ["metadata key 'ghost_exchange' must be 0 or 1, got '2'"]),
]
for what, text, words in cases:
    r = T.run_lammps(text, files={"frame.data": frame})
    found = [w for w in words if w not in r.output]
    T.check(r.rc != 0 and "ERROR" in r.output and not found,
            "%s: rc %d, missing %s in output:\n%s" % (what, r.rc, found, r.output[-1200:]))

# the good settings run: widen with an exchange model, exchange on 1 rank with ghosts
for style in ("pair_style aisci ghost widen graph ghost", "pair_style aisci ghost exchange graph ghost",
              "pair_style aisci ghost exchange graph ghost balance off"):
    r = T.run_lammps(script(style), files={"frame.data": frame})
    T.check(r.rc == 0, style + ": runs\n" + r.output[-800:])
T.summary("test_nn_exchange_errors")
