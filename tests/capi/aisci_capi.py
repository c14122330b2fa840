"""ctypes bindings of the C API for the tests: libaisci_torch (include/aisci/model.h) and
the periodic graph of libaisci_core (include/aisci/graph.h), loaded from
$AISCI_BUILD_DIR/lib. One place for the signatures, so that a test declares none."""
import ctypes as C
import os
import sys

import numpy as np

OK, ERR_ARG, ERR_MODEL, ERR_IO, ERR_FORMAT = 0, 1, 5, 6, 7

BUILD = os.environ.get("AISCI_BUILD_DIR", os.getcwd())


class CacheStats(C.Structure):
    _fields_ = [("in_use_bytes", C.c_size_t), ("cached_bytes", C.c_size_t),
                ("peak_in_use_bytes", C.c_size_t), ("peak_held_bytes", C.c_size_t),
                ("calls", C.c_uint64)]


def _skip_on_torch_mismatch():
    """Exit 77 (skipped) when this process imported a torch of another version than the
    one libaisci_torch was built against (e.g. Debian's 1.13 in /usr/bin/python3 and a
    build against PyPI's 2.11, scripts/build-torch-peer.sh): torch's libraries are then
    loaded twice, the first copy's symbols global, and the second crashes. lmp-aisci is
    not affected (it loads no torch of its own)."""
    torch = sys.modules.get("torch")
    try:
        with open(os.path.join(BUILD, "lib", "aisci_torch_version.txt")) as f:
            built = f.read().strip()
    except OSError:
        return
    have = torch.__version__.split("+")[0] if torch is not None else built
    if have.split(".")[:2] != built.split(".")[:2]:
        print("SKIPPED: this python imported torch %s, libaisci_torch is built against "
              "libtorch %s; run this test with a python whose torch is %s" % (have, built, built))
        raise SystemExit(77)


def _load():
    _skip_on_torch_mismatch()
    lib = C.CDLL(os.path.join(BUILD, "lib", "libaisci_torch.so"))
    core = C.CDLL(os.path.join(BUILD, "lib", "libaisci_core.so"))
    core.aisci_last_error.restype = C.c_char_p
    lib.aisci_model_create.argtypes = [C.c_char_p, C.c_char_p, C.c_char_p, C.c_int,
                                       C.POINTER(C.c_void_p)]
    lib.aisci_model_destroy.argtypes = [C.c_void_p]
    lib.aisci_model_cutoff.argtypes = lib.aisci_model_cutoff_3body.argtypes = [C.c_void_p]
    lib.aisci_model_cutoff.restype = lib.aisci_model_cutoff_3body.restype = C.c_double
    lib.aisci_model_compute.argtypes = [
        C.c_void_p, C.c_int64, C.c_void_p, C.c_int64, C.c_void_p, C.c_void_p, C.c_int64,
        C.c_void_p, C.c_int64, C.POINTER(C.c_double), C.c_void_p, C.c_void_p, C.c_void_p,
        C.c_void_p]
    lib.aisci_torch_cpu_allocator.argtypes = [C.POINTER(CacheStats)]
    lib.aisci_torch_cpu_allocator.restype = C.c_char_p
    lib.aisci_torch_cpu_cache_release.argtypes = []
    lib.aisci_torch_cpu_cache_release.restype = None
    core.aisci_graph_create.argtypes = [C.POINTER(C.c_void_p)]
    core.aisci_graph_destroy.argtypes = [C.c_void_p]
    core.aisci_graph_build_periodic.argtypes = [C.c_void_p, C.c_int, C.c_void_p, C.c_void_p,
                                                C.c_void_p, C.c_double, C.c_double]
    for name, rt in [("edge_index", C.POINTER(C.c_int64)), ("edge_vec", C.POINTER(C.c_double)),
                     ("triplets", C.POINTER(C.c_int64)), ("num_edges", C.c_int64),
                     ("num_triplets", C.c_int64)]:
        fn = getattr(core, "aisci_graph_" + name)
        fn.argtypes = [C.c_void_p]
        fn.restype = rt
    return lib, core


lib, core = _load()


def last_error():
    return core.aisci_last_error().decode()


def ptr(a):
    return a.ctypes.data if a is not None and a.size else None


def create(path, device="cpu", precision="auto", nthreads=1):
    """(status, handle, message)."""
    h = C.c_void_p()
    st = lib.aisci_model_create(path.encode(), device.encode(), precision.encode(), nthreads,
                                C.byref(h))
    return st, h, (last_error() if st else "")


def compute(h, types, ei, vec, tr, n_energy=None):
    """(status, energy, forces [n, 3], virial [3, 3]) from one aisci_model_compute()."""
    n = len(types)
    n_energy = n if n_energy is None else n_energy
    e = C.c_double()
    f = np.zeros((n, 3))
    w = np.zeros(9)
    st = lib.aisci_model_compute(h, n, ptr(types), ei.shape[1], ptr(ei), ptr(vec),
                                 tr.shape[0], ptr(tr), n_energy, C.byref(e), None, ptr(f),
                                 ptr(w), None)
    return st, e.value, f, w.reshape(3, 3)


def cpu_allocator():
    """(name, CacheStats) of aisci_torch_cpu_allocator()."""
    s = CacheStats()
    name = lib.aisci_torch_cpu_allocator(C.byref(s))
    return name.decode(), s


def periodic_graph(x, cell, cutoff, cutoff_3body):
    """Edges (2, E) int64, edge vectors (E, 3) and triplets (T, 2) of a periodic frame,
    built by the C core (copies)."""
    g = C.c_void_p()
    core.aisci_graph_create(C.byref(g))
    x = np.ascontiguousarray(x, dtype=np.float64)
    cell = np.ascontiguousarray(cell, dtype=np.float64)
    pbc = (C.c_int * 3)(1, 1, 1)
    st = core.aisci_graph_build_periodic(g, len(x), x.ctypes.data, cell.ctypes.data, pbc,
                                         cutoff, cutoff_3body)
    if st != 0:
        core.aisci_graph_destroy(g)
        raise RuntimeError(last_error())
    ne, nt = core.aisci_graph_num_edges(g), core.aisci_graph_num_triplets(g)
    ei = np.ctypeslib.as_array(core.aisci_graph_edge_index(g), (2, ne)).copy()
    ev = np.ctypeslib.as_array(core.aisci_graph_edge_vec(g), (ne, 3)).copy()
    tr = np.ctypeslib.as_array(core.aisci_graph_triplets(g), (nt, 2)).copy() if nt else \
        np.zeros((0, 2), np.int64)
    core.aisci_graph_destroy(g)
    return ei, ev, tr
