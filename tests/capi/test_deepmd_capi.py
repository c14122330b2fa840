"""C API of DeePMD-kit models (include/aisci/model.h, @since 0.5), through ctypes:
aisci_model_format() and aisci_model_compute_extended() on success and on every error path
(exact status). The extended system (the atoms and their periodic images, nlist nearest
first, mapping to the owners) is built here in numpy, independently of pair_style aisci:
deeppot_sea.pth gives DeePMD-kit's published values of the 6-atom water system, and the
DPA2 model through its mapping path (no exchange callbacks) gives its own forward()."""
import ctypes as C
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lammps"))  # test helpers
from deepmd_systems import (DIPOLE, DPA2, SEA, SEA_ATOM_ENERGY, SEA_ATOM_VIRIAL, SEA_FORCE,  # noqa: E402
                            WATER6_BOX, WATER6_TYPES, WATER6_X, close, dft_frame, need)

need(SEA, DPA2, DIPOLE)
import aisci_nn_toy as toy  # noqa: E402

toy.skip_without_torch_wrapper()
import aisci_capi  # noqa: E402
from aisci_capi import ERR_ARG, ERR_MODEL, OK, create, last_error, ptr  # noqa: E402
from aisci_testlib import check, summary  # noqa: E402

lib = aisci_capi.lib
lib.aisci_model_format.argtypes = [C.c_void_p]
lib.aisci_model_format.restype = C.c_char_p
lib.aisci_model_compute_extended.argtypes = [
    C.c_void_p, C.c_int64, C.c_int64, C.c_void_p, C.c_void_p, C.c_int64, C.c_void_p,
    C.c_void_p, C.c_void_p, C.c_void_p, C.c_void_p, C.c_void_p, C.c_void_p]


def extended(x, types, box, rcut):
    """Owned atoms then their images in the 26 neighbouring cells within rcut of an owned
    atom; nlist (nearest first, -1 padded); mapping."""
    n = len(x)
    shifts = [np.array([a, b, c]) for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1)
              if (a, b, c) != (0, 0, 0)]
    ext_x, ext_t, mapping = [p for p in x], list(types), list(range(n))
    for s in shifts:
        for i in range(n):
            p = x[i] + s * box
            if np.min(np.linalg.norm(x - p, axis=1)) < rcut:
                ext_x.append(p)
                ext_t.append(types[i])
                mapping.append(i)
    ext_x = np.array(ext_x)
    rows = []
    for i in range(n):
        r = np.linalg.norm(ext_x - ext_x[i], axis=1)
        js = [j for j in np.argsort(r, kind="stable") if j != i and r[j] < rcut]
        rows.append(js)
    width = max(len(r) for r in rows)
    nlist = -np.ones((n, width), dtype=np.int64)
    for i, js in enumerate(rows):
        nlist[i, :len(js)] = js
    return (np.ascontiguousarray(ext_x), np.array(ext_t, dtype=np.int64), nlist,
            np.array(mapping, dtype=np.int64))


def compute(h, n, ext, with_mapping=True, energy=True):
    ext_x, ext_t, nlist, mapping = ext
    nall = len(ext_x)
    e = C.c_double()
    ea = np.zeros(n)
    f = np.zeros((nall, 3))
    w = np.zeros(9)
    wa = np.zeros((nall, 9))
    st = lib.aisci_model_compute_extended(
        h, n, nall, ptr(ext_t), ptr(ext_x), nlist.shape[1], ptr(nlist),
        ptr(mapping) if with_mapping else None, C.byref(e) if energy else None, ptr(ea),
        ptr(f), ptr(w), ptr(wa))
    return st, e.value, ea, f, w, wa


def reduce(a, mapping, n):
    out = np.zeros((n,) + a.shape[1:])
    np.add.at(out, mapping, a)
    return out


check(lib.aisci_model_format(None) is None, "format(NULL) is NULL")

# --- deeppot_sea.pth: published values -------------------------------------------------------
st, h, msg = create(SEA)
if check(st == OK, "create(%s): %s" % (SEA, msg)):
    check(lib.aisci_model_format(h) == b"deepmd-kit", "format of a DeePMD-kit file")
    types = np.array([t - 1 for t in WATER6_TYPES])
    ext = extended(WATER6_X, types, WATER6_BOX, 6.0)
    st, e, ea, f, w, wa = compute(h, 6, ext)
    if check(st == OK, "compute_extended: %s" % last_error()):
        mapping = ext[3]
        devs = []
        for what, a, b in [("energy", e, SEA_ATOM_ENERGY.sum()), ("atom energies", ea, SEA_ATOM_ENERGY),
                           ("forces", reduce(f, mapping, 6), SEA_FORCE),
                           ("atom virials", reduce(wa, mapping, 6), SEA_ATOM_VIRIAL),
                           ("virial", w, SEA_ATOM_VIRIAL.sum(0))]:
            ok, dev = close(a, b, 1e-8)
            check(ok, "sea %s vs DeePMD-kit's reference: dev %.3g" % (what, dev))
            devs.append(dev)
        print("deeppot_sea.pth through aisci_model_compute_extended: max deviation %.3g"
              % max(devs))
        # without mapping (not needed without message passing): the same numbers
        st2, e2, *_ = compute(h, 6, ext, with_mapping=False)
        check(st2 == OK and e2 == e, "no mapping: same energy")
    # error paths, exact status
    ext_x, ext_t, nlist, mapping = ext
    st, *_ = compute(h, 6, ext, energy=False)
    check(st == ERR_ARG and "model and energy must not be NULL" in last_error(),
          "NULL energy: ERR_ARG (%d: %s)" % (st, last_error()))
    bad = (ext_x, ext_t, np.where(nlist == nlist.max(), len(ext_x), nlist), mapping)
    st, *_ = compute(h, 6, bad)
    check(st == ERR_ARG and "outside [-1, n_all)" in last_error(),
          "nlist entry out of range: ERR_ARG (%d: %s)" % (st, last_error()))
    bad = (ext_x, np.where(ext_t == 1, 2, ext_t), nlist, mapping)
    st, *_ = compute(h, 6, bad)
    check(st == ERR_ARG and "has type 2, outside [0, 2)" in last_error(),
          "type out of range: ERR_ARG (%d: %s)" % (st, last_error()))
    bad = (ext_x, ext_t, nlist, np.where(mapping == 5, 6, mapping))
    st, *_ = compute(h, 6, bad)
    check(st == ERR_ARG and "outside [0, n_local)" in last_error(),
          "mapping out of range: ERR_ARG (%d: %s)" % (st, last_error()))
    e = C.c_double()
    st = lib.aisci_model_compute_extended(h, 7, 6, ptr(ext_t), ptr(ext_x), 0, None, None,
                                          C.byref(e), None, None, None, None)
    check(st == ERR_ARG and "need 0 <= n_local <= n_all" in last_error(),
          "n_local > n_all: ERR_ARG (%d: %s)" % (st, last_error()))
    # the edge-graph API refuses a DeePMD-kit energy model
    ei, ev, tr = aisci_capi.periodic_graph(WATER6_X, np.eye(3) * WATER6_BOX, 6.0, 0.0)
    st, *_ = aisci_capi.compute(h, types.astype(np.int64), ei, ev, tr)
    check(st == ERR_MODEL and "is a DeePMD-kit model: use aisci_model_compute_extended()"
          in last_error(), "compute() on a DeePMD-kit model: ERR_MODEL (%d: %s)"
          % (st, last_error()))
    lib.aisci_model_destroy(h)

# --- a dipole model is not an energy model -------------------------------------------------------
st, h, msg = create(DIPOLE)
if check(st == OK, "create(%s): %s" % (DIPOLE, msg)):
    types = np.array([t - 1 for t in WATER6_TYPES])
    st, *_ = compute(h, 6, extended(WATER6_X, types, WATER6_BOX, 4.0))
    check(st == ERR_MODEL and "is not a DeePMD-kit energy model" in last_error(),
          "compute_extended on a dipole model: ERR_MODEL (%d: %s)" % (st, last_error()))
    lib.aisci_model_destroy(h)

# --- DPA2 through its mapping path (no exchange callbacks) vs its own forward() -------------
try:
    import torch
except ImportError:
    torch = None
    print("torch not importable here: DPA2 mapping-path check left out")
if torch is not None:
    st, h, msg = create(DPA2)
    if check(st == OK, "create(%s): %s" % (DPA2, msg)):
        x, ltypes, box = dft_frame(0)
        L = box[0, 0]
        x = np.mod(x, L)
        types = ltypes - 1
        ext = extended(x, types, L, 6.0)
        st, e, ea, f, w, wa = compute(h, len(x), ext)
        st_nomap, *_ = compute(h, len(x), ext, with_mapping=False)
        check(st_nomap == ERR_ARG and "needs a mapping" in last_error(),
              "DPA2 without mapping or callbacks: ERR_ARG (%d: %s)" % (st_nomap, last_error()))
        # deepmd::border_op is already registered: libaisci_torch (loaded above) shares
        # Debian's libtorch with this python's torch; forward() never calls it.
        model = torch.jit.load(DPA2, map_location="cpu")
        out = model(torch.tensor(x.reshape(1, -1)), torch.tensor(types.reshape(1, -1)),
                    torch.tensor(box.reshape(1, 9)))
        if check(st == OK, "DPA2 compute_extended (mapping): %s" % last_error()):
            ok_e, dev_e = close(e, out["energy"].item(), 1e-10)
            ok_f, dev_f = close(reduce(f, ext[3], len(x)),
                                out["force"].detach().numpy().reshape(-1, 3), 1e-10)
            check(ok_e and ok_f, "DPA2 mapping path vs forward(): energy dev %.3g, force dev "
                  "%.3g" % (dev_e, dev_f))
            print("DPA2 mapping path vs forward(): energy dev %.3g eV, force dev %.3g eV/A"
                  % (dev_e, dev_f))
        lib.aisci_model_destroy(h)
summary("test_deepmd_capi")
