"""Torch C API (include/aisci/model.h) driven through ctypes: load, metadata, compute
against the same model evaluated in Python, and every documented error path with its
status and message. Toy models are written into the build tree by this test."""
import ctypes as C
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lammps"))  # test helpers
import aisci_nn_toy as toy  # noqa: E402

toy.skip_without_torch_wrapper()

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


import aisci_capi  # noqa: E402  (ctypes bindings of libaisci_torch / libaisci_core)
lib, core = aisci_capi.lib, aisci_capi.core
from aisci_capi import OK, ERR_ARG, ERR_MODEL, ERR_IO, ERR_FORMAT, create, ptr  # noqa: E402
for name, rt in [("cutoff", C.c_double), ("cutoff_3body", C.c_double),
                 ("num_layers", C.c_int), ("num_types", C.c_int),
                 ("needs_triplets", C.c_int), ("dtype", C.c_char_p),
                 ("architecture", C.c_char_p), ("units", C.c_char_p),
                 ("device", C.c_char_p)]:
    fn = getattr(lib, "aisci_model_" + name)
    fn.argtypes = [C.c_void_p]
    fn.restype = rt
lib.aisci_model_type_name.argtypes = [C.c_void_p, C.c_int]
lib.aisci_model_type_name.restype = C.c_char_p
lib.aisci_model_type_index.argtypes = [C.c_void_p, C.c_char_p, C.POINTER(C.c_int)]
lib.aisci_model_metadata.argtypes = [C.c_void_p, C.c_char_p]
lib.aisci_model_metadata.restype = C.c_char_p


def compute(h, types, ei, vec, tr, n_energy, want_atom=True):
    n = len(types)
    e = C.c_double()
    pe = np.zeros(n) if want_atom else None
    f = np.zeros((n, 3))
    w = np.zeros(9)
    pv = np.zeros((n, 9)) if want_atom else None
    st = lib.aisci_model_compute(h, n, ptr(types), ei.shape[1], ptr(ei), ptr(vec),
                                 tr.shape[0], ptr(tr), n_energy, C.byref(e), ptr(pe),
                                 ptr(f), ptr(w), ptr(pv))
    return st, e.value, pe, f, w.reshape(3, 3), pv


d = toy.build_dir("capi")
torch.manual_seed(0)
model = toy.ToyMP(ntypes=2, cutoff=3.0, num_layers=2, cutoff_3body=2.5)
good = toy.save(model, os.path.join(d, "toy.pt"))

# --- success: metadata ---
st, h, msg = create(good)
check(st == OK and h.value, "create a valid model: " + msg)
check(abs(lib.aisci_model_cutoff(h) - 3.0) < 1e-15, "cutoff")
check(abs(lib.aisci_model_cutoff_3body(h) - 2.5) < 1e-15, "cutoff_3body")
check(lib.aisci_model_num_layers(h) == 2, "num_layers")
check(lib.aisci_model_num_types(h) == 2, "num_types")
check(lib.aisci_model_needs_triplets(h) == 1, "needs_triplets")
check(lib.aisci_model_type_name(h, 1) == b"H", "type_name(1) == H")
check(lib.aisci_model_type_name(h, 2) is None, "type_name out of range is NULL")
idx = C.c_int()
check(lib.aisci_model_type_index(h, b"O", C.byref(idx)) == OK and idx.value == 0,
      "type_index(O) == 0")
st2 = lib.aisci_model_type_index(h, b"Xx", C.byref(idx))
m2 = core.aisci_last_error().decode()
check(st2 == ERR_ARG and "Xx" in m2 and "O H" in m2, "unknown type name: ERR_ARG: " + m2)
check(lib.aisci_model_dtype(h) == b"float64", "dtype auto -> float64")
check(lib.aisci_model_architecture(h) == b"toy", "architecture")
check(lib.aisci_model_units(h) == b"metal", "units")
check(lib.aisci_model_device(h) == b"cpu", "device")
check(lib.aisci_model_metadata(h, b"description") == b"test toy model", "optional key")
check(lib.aisci_model_metadata(h, b"nope") is None, "absent key is NULL")

# --- success: compute against Python on a periodic frame ---
box = 8.0
x, types = toy.random_frame(24, box, seed=5)
ei, sh, tr = toy.periodic_graph(x, box, 3.0, 2.5)
vec = np.ascontiguousarray(x[ei[1]] - x[ei[0]] + sh)
ei = np.ascontiguousarray(ei, dtype=np.int64)
types = np.ascontiguousarray(types, dtype=np.int64)
e_ref, f_ref, w_ref = toy.reference(model, x, box, types, 3.0, 2.5)
st, e, pe, f, w, pv = compute(h, types, ei, vec, tr, len(types))
check(st == OK, "compute status " + core.aisci_last_error().decode())
check(abs(e - e_ref) < 1e-10 * max(1, abs(e_ref)), "energy %.15g vs python %.15g" % (e, e_ref))
check(np.abs(f - f_ref).max() < 1e-10, "forces match python (max diff %.2e)"
      % np.abs(f - f_ref).max())
check(np.abs(w - w_ref).max() < 1e-10, "virial matches python (max diff %.2e)"
      % np.abs(w - w_ref).max())
check(abs(pe.sum() - e) < 1e-10, "per-atom energies sum to the energy")
check(np.abs(pv.sum(0) - w.reshape(9)).max() < 1e-10, "per-atom virials sum to the virial")
check(abs(f.sum(0)).max() < 1e-10, "forces sum to zero")
# energy over a prefix of the atoms only
st, e5, _, _, _, _ = compute(h, types, ei, vec, tr, 5)
check(st == OK and abs(e5 - pe[:5].sum()) < 1e-12, "n_energy_atoms sums a prefix")
# float32 evaluation of the same model
st32, h32, msg = create(good, precision="float32")
check(st32 == OK and lib.aisci_model_dtype(h32) == b"float32", "precision float32: " + msg)
st, e32, _, f32, _, _ = compute(h32, types, ei, vec, tr, len(types))
check(st == OK and abs(e32 - e_ref) < 1e-4 * max(1, abs(e_ref))
      and np.abs(f32 - f_ref).max() < 1e-3, "float32 close to float64")
lib.aisci_model_destroy(h32)
# bad arguments to compute
bad_types = types.copy()
bad_types[3] = 7
st, *_ = compute(h, bad_types, ei, vec, tr, len(types))
check(st == ERR_ARG and "type 7" in core.aisci_last_error().decode(), "type out of range")
bad_ei = ei.copy()
bad_ei[1, 0] = 999
st, *_ = compute(h, types, bad_ei, vec, tr, len(types))
check(st == ERR_ARG and "atom 999" in core.aisci_last_error().decode(), "edge index out of range")
# degenerate inputs: no atoms at all; atoms without edges (isolated: zero forces)
empty_i = np.zeros(0, dtype=np.int64)
st, e0, _, _, _, _ = compute(h, empty_i, np.zeros((2, 0), dtype=np.int64), np.zeros((0, 3)),
                             np.zeros((0, 2), dtype=np.int64), 0)
check(st == OK and e0 == 0.0, "zero atoms: status %d energy %g" % (st, e0))
st, e1, pe1, f1, w1, _ = compute(h, types[:3], np.zeros((2, 0), dtype=np.int64),
                                 np.zeros((0, 3)), np.zeros((0, 2), dtype=np.int64), 3)
check(st == OK and np.all(f1 == 0) and np.all(w1 == 0) and abs(pe1.sum() - e1) < 1e-12,
      "isolated atoms: energies, zero forces and virial (status %d)" % st)
lib.aisci_model_destroy(h)
lib.aisci_model_destroy(None)
check(True, "destroy(NULL) is safe")

# --- error paths of create: each status and message ---
def expect(path, status, words, what, **kw):
    st, h, msg = create(path, **kw)
    good_msg = all(wd in msg for wd in words)
    check(st == status and not h.value and good_msg, "%s: status %d, '%s'" % (what, st, msg))


expect(os.path.join(d, "missing.pt"), ERR_IO, ["missing.pt", "not found"], "missing file")
raw = open(good, "rb").read()
trunc = os.path.join(d, "truncated.pt")
open(trunc, "wb").write(raw[: len(raw) // 2])
expect(trunc, ERR_FORMAT, ["truncated.pt", "TorchScript"], "truncated file")
empty = os.path.join(d, "empty.pt")
open(empty, "wb").close()
expect(empty, ERR_FORMAT, ["empty.pt"], "empty file")
garbage = os.path.join(d, "garbage.pt")
open(garbage, "wb").write(b"this is not a model\n" * 50)
expect(garbage, ERR_FORMAT, ["garbage.pt"], "garbage file")

nometa = os.path.join(d, "nometa.pt")
torch.jit.save(torch.jit.script(model), nometa)
expect(nometa, ERR_FORMAT, ["nometa.pt", "aisci_metadata"], "no metadata")
for key in ["cutoff", "num_layers", "type_names"]:
    p = toy.save(model, os.path.join(d, "no_%s.pt" % key), drop=(key,))
    expect(p, ERR_FORMAT, ["no_%s.pt" % key, "'%s'" % key, "missing"], "missing key " + key)
# no checksum: loads unverified (the LAMMPS styles log that; test_model_integrity.py)
p = toy.save(model, os.path.join(d, "no_checksum.pt"), drop=("checksum",))
st, h, msg = create(p)
check(st == 0 and bool(h.value), "missing key checksum: loads (status %d, '%s')" % (st, msg))
if h.value:
    lib.aisci_model_destroy(h)
p = toy.save(model, os.path.join(d, "badver.pt"), override={"format_version": "2"})
expect(p, ERR_FORMAT, ["format_version"], "format_version 2")
p = toy.save(model, os.path.join(d, "badcut.pt"), override={"cutoff": "abc"})
expect(p, ERR_FORMAT, ["cutoff", "abc"], "non-numeric cutoff")
p = toy.save(model, os.path.join(d, "badunits.pt"), override={"units": "real"})
expect(p, ERR_FORMAT, ["units", "metal"], "units real")
p = toy.save(model, os.path.join(d, "badsum.pt"), override={"checksum": "0123456789abcdef"})
expect(p, ERR_FORMAT, ["badsum.pt", "is damaged", "checksum mismatch", "expected 0123456789abcdef"],
       "checksum mismatch")
# flipped bytes inside the weights: TorchScript loads them, the checksum catches them
flip = bytearray(raw)
needle = model.w_out.detach().numpy().tobytes()[:8]
at = raw.find(needle)
check(at > 0, "weights located in the archive")
flip[at + 3] ^= 0xFF
flipped = os.path.join(d, "flipped.pt")
open(flipped, "wb").write(bytes(flip))
expect(flipped, ERR_FORMAT, ["flipped.pt", "checksum"], "flipped weight bytes")
expect(good, ERR_ARG, ["gpu"], "unknown device", device="gpu")
expect(good, ERR_ARG, ["float16"], "unknown precision", precision="float16")
expect(good, ERR_ARG, ["threads"], "negative threads", nthreads=-2)

# --- models that load but misbehave: wrong output shape, NaN energies ---
src = os.path.join(d, "bad_models.py")
with open(src, "w") as f:
    f.write("""import torch
class WrongShape(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(1, dtype=torch.float64))
    def forward(self, edge_vec, edge_index, atom_types, triplets):
        return (edge_vec * self.w).sum().reshape(1, 1)
class NaNEnergy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(1, dtype=torch.float64))
    def forward(self, edge_vec, edge_index, atom_types, triplets):
        e = torch.zeros(atom_types.shape[0], dtype=edge_vec.dtype)
        e = e.index_add(0, edge_index[0], torch.log(-self.w * torch.linalg.norm(edge_vec, dim=1)))
        return e
""")
sys.path.insert(0, d)
import bad_models  # noqa: E402

for cls, words in [(bad_models.WrongShape, ["shape [1, 1]", "expected per-atom"]),
                   (bad_models.NaNEnergy, ["non-finite"])]:
    m = cls()
    m.cutoff, m.cutoff_3body, m.num_layers = 3.0, 0.0, 1
    p = os.path.join(d, cls.__name__ + ".pt")
    scripted = torch.jit.script(m)
    torch.jit.save(scripted, p, _extra_files={"aisci_metadata": toy.metadata_text(m, ["O", "H"])})
    st, h, msg = create(p)
    check(st == OK, cls.__name__ + " loads: " + msg)
    st, *_ = compute(h, types, ei, vec, np.zeros((0, 2), dtype=np.int64), len(types))
    msg = core.aisci_last_error().decode()
    check(st == ERR_MODEL and all(w in msg for w in words), "%s: status %d '%s'"
          % (cls.__name__, st, msg))
    lib.aisci_model_destroy(h)

# --- aisci_model_check_type: success and both error statuses ---
lib.aisci_model_check_type.argtypes = [C.c_void_p, C.c_int]
st, h, msg = create(good)
check(lib.aisci_model_check_type(h, 0) == OK and lib.aisci_model_check_type(h, 1) == OK,
      "check_type: both types of the toy evaluate")
st = lib.aisci_model_check_type(h, 2)
check(st == ERR_ARG and "type index 2 outside [0, 2)" in core.aisci_last_error().decode(),
      "check_type index out of range: ERR_ARG: " + core.aisci_last_error().decode())
check(lib.aisci_model_check_type(None, 0) == ERR_ARG, "check_type NULL model: ERR_ARG")
three = toy.save(toy.ToyMP(ntypes=2, cutoff=3.0, num_layers=1), os.path.join(d, "three.pt"),
                 type_names=("O", "H", "C"))
st, h3, msg = create(three)
check(st == OK, "a model whose type_names outnumber its embedding rows loads: " + msg)
st = lib.aisci_model_check_type(h3, 2)
m3 = core.aisci_last_error().decode()
check(st == ERR_MODEL and m3 == "element 'C' (type index 2 of the 3 type_names) cannot be "
      "evaluated (does the network know fewer types than type_names lists?): forward() of "
      "model '%s' failed: RuntimeError: index 2 is out of bounds for dimension 0 with size 2"
      % three, "check_type of a type without embedding: " + m3)
lib.aisci_model_destroy(h3)
lib.aisci_model_destroy(h)

# --- energies without an autograd path to the edge vectors: ERR_MODEL, not zero forces ---
nog = toy.save(toy.ToyMP(ntypes=2, cutoff=3.0, num_layers=2, cutoff_3body=2.5,
                         detach_edges=True), os.path.join(d, "no_grad.pt"))
st, hn, msg = create(nog)
st, e, _, f, _, _ = compute(hn, types, ei, vec, tr, len(types))
mn = core.aisci_last_error().decode()
check(st == ERR_MODEL and mn == "aisci_model_compute: the per-atom energies of model '%s' do "
      "not depend on the edge vectors (no autograd path: exported under torch.no_grad() or "
      "with detach()?); its forces would all be zero" % nog, "no-gradient model: " + mn)
# without edges (or energy atoms) nothing can depend on them: not an error
e0 = np.zeros((2, 0), dtype=np.int64)
st, e, _, f, _, _ = compute(hn, types, e0, np.zeros((0, 3)), np.zeros((0, 2), dtype=np.int64),
                            len(types))
check(st == OK and not f.any(), "no-gradient model without edges: OK, zero forces")
st, e, _, f, _, _ = compute(hn, types, ei, vec, tr, 0)
check(st == OK, "no-gradient model, no energy atoms: OK")
lib.aisci_model_destroy(hn)

print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
