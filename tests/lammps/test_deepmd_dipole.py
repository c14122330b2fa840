"""DeePMD-kit's frozen dipole model (deepdipole_pt.pth) as the Wannier (DW) model of DPLR:
- through the C API (aisci_model_compute_vector, which hides the file kind): recognised as
  a DeePMD-kit vector model; on DeePMD-kit's 6-atom water system (13 A box) the vectors of
  the two O atoms equal DeePMD-kit's published reference values to 1e-8 per component
  (|a - b| <= 1e-8 max(1, |b|)) and the H atoms get zeros;
- in fix dplr (short range: deeppot_sea.pth; neither model is trained for this system, the
  test is about the mechanics) on a 32-molecule DPLR water box: the WCs sit at O + the
  vectors of the C API on the periodic graph (to 1e-9 A), and the forces equal central
  differences of the DPLR energy (short range + Gaussian electrostatics + field), which
  needs the model's Jacobian (vector-Jacobian product through autograd: the model does not
  detach its output from the coordinates)."""
import ctypes as C
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "capi"))  # aisci_capi (ctypes bindings)
import aisci_testlib as T  # noqa: E402
from deepmd_systems import (DIPOLE, DIPOLE_O, SEA, WATER6_BOX, WATER6_TYPES, WATER6_X,  # noqa: E402
                            close, need, read_dump)

need(DIPOLE, SEA)
import aisci_nn_toy as toy  # noqa: E402

toy.skip_without_torch_wrapper()
import aisci_capi  # noqa: E402
import dplr_systems as S  # noqa: E402
from potentials.dplr.water_wc import TYPE_WC  # noqa: E402

lib = aisci_capi.lib
lib.aisci_model_output_is_vector.argtypes = [C.c_void_p]
lib.aisci_model_format.argtypes = [C.c_void_p]
lib.aisci_model_format.restype = C.c_char_p
lib.aisci_model_metadata.argtypes = [C.c_void_p, C.c_char_p]
lib.aisci_model_metadata.restype = C.c_char_p
lib.aisci_model_compute_vector.argtypes = [
    C.c_void_p, C.c_int64, C.c_void_p, C.c_int64, C.c_void_p, C.c_void_p, C.c_int64,
    C.c_void_p, C.c_void_p]
TOL = 1e-8

# --- C API: the published reference ------------------------------------------------------
st, h, msg = aisci_capi.create(DIPOLE)
if T.check(st == aisci_capi.OK, "create(%s): %s" % (DIPOLE, msg)):
    T.check(lib.aisci_model_format(h) == b"deepmd-kit", "format is deepmd-kit")
    T.check(lib.aisci_model_output_is_vector(h) == 1, "a vector model")
    T.check(lib.aisci_model_metadata(h, b"selected_types") == b"O H",
            "selected_types from get_sel_type(): %s" % lib.aisci_model_metadata(h, b"selected_types"))
    ei, ev, _ = aisci_capi.periodic_graph(WATER6_X, np.eye(3) * WATER6_BOX, 4.0, 0.0)
    types = np.array([t - 1 for t in WATER6_TYPES], dtype=np.int64)
    d = np.zeros((6, 3))
    st = lib.aisci_model_compute_vector(h, 6, aisci_capi.ptr(types), ei.shape[1],
                                        aisci_capi.ptr(ei), aisci_capi.ptr(ev), 0, None,
                                        aisci_capi.ptr(d))
    if T.check(st == aisci_capi.OK, "compute_vector: %s" % aisci_capi.last_error()):
        ok, dev = close(np.array([d[0], d[3]]), np.array([DIPOLE_O[1], DIPOLE_O[4]]), TOL)
        T.check(ok, "O vectors vs DeePMD-kit's reference: max deviation %.3g" % dev)
        T.check(np.all(d[[1, 2, 4, 5]] == 0.0), "H atoms get zero vectors")
        print("deepdipole_pt.pth on the 6-atom system: O vectors deviate from DeePMD-kit's "
              "published values by at most %.3g A" % dev, flush=True)
    lib.aisci_model_destroy(h)

# --- fix dplr ---------------------------------------------------------------------------------
BOX = S.make_dplr_water_box(32, seed=3)
DATA = {"water.data": S.water_data(BOX)}
DUMP = """dump d all custom 1 d.dump id type q x y z xu yu zu fx fy fz
dump_modify d sort id format float %.17g
"""
EFIELD = (0.02, -0.015, 0.03)
H = 1e-4
ATOMS = (1, 3, 9, 14)


def script(body, fix_extra=""):
    return S.water_script(sr=SEA, dw=DIPOLE, accuracy="1e-7", fix_extra=fix_extra, body=body)


def fd_body():
    lines = [DUMP, "run 0", "undump d", "variable e equal pe"]
    for k, aid in enumerate(ATOMS):
        lines.append("group g%d id %d" % (k, aid))
        for c, vec in enumerate(("%g 0 0", "0 %g 0", "0 0 %g")):
            lines += ["displace_atoms g%d move %s" % (k, vec % H), "run 0",
                      'print "EPLUS %d %d ${e}"' % (aid, c),
                      "displace_atoms g%d move %s" % (k, vec % (-2 * H)), "run 0",
                      'print "EMINUS %d %d ${e}"' % (aid, c),
                      "displace_atoms g%d move %s" % (k, vec % H)]
    return "\n".join(lines)


r = T.run_lammps(script(fd_body(), "efield %g %g %g" % EFIELD), files=DATA, timeout=600)
if T.check(r.rc == 0, "fix dplr run failed:\n" + r.output[-2000:]):
    d = read_dump(os.path.join(r.workdir, "d.dump"))
    typ = d["type"].astype(int)
    x = np.stack([d["x"], d["y"], d["z"]], 1)
    L = np.diag(np.asarray(BOX["box"]) * np.ones(3)) if np.ndim(BOX["box"]) < 2 else BOX["box"]
    L = np.asarray(L, float)
    atoms = typ != TYPE_WC
    # the same model through the C API on the periodic graph of the O/H atoms (checked
    # against DeePMD-kit's reference above; the model's Python forward() does not run in
    # torch 1.13: its neighbour-list code indexes with int32)
    st, h, msg = aisci_capi.create(DIPOLE)
    ei, ev, _ = aisci_capi.periodic_graph(x[atoms], L, 4.0, 0.0)
    mt = (typ[atoms] - 1).astype(np.int64)
    dip = np.zeros((len(mt), 3))
    st = lib.aisci_model_compute_vector(h, len(mt), aisci_capi.ptr(mt), ei.shape[1],
                                        aisci_capi.ptr(ei), aisci_capi.ptr(ev), 0, None,
                                        aisci_capi.ptr(dip))
    T.check(st == aisci_capi.OK, "compute_vector on the water box: %s" % aisci_capi.last_error())
    lib.aisci_model_destroy(h)
    o_rows = np.where(typ[atoms] == 1)[0]
    wc = x[typ == TYPE_WC]
    o_pos = x[atoms][o_rows]
    dwc = wc - (o_pos + dip[o_rows])
    lengths = np.diag(L)
    dwc -= lengths * np.round(dwc / lengths)
    T.check(np.abs(dwc).max() < 1e-9, "WCs at O + C-API vectors: max error %.2e A"
            % np.abs(dwc).max())
    print("WC positions vs the C API's vectors: max error %.2e A" % np.abs(dwc).max())
    f = np.stack([d["fx"], d["fy"], d["fz"]], 1)
    plus = {(int(a), int(c)): e for a, c, e in S.printed(r.logs[0], "EPLUS")}
    minus = {(int(a), int(c)): e for a, c, e in S.printed(r.logs[0], "EMINUS")}
    err = np.array([abs(-(ep - minus[(a, c)]) / (2 * H) - f[a - 1, c])
                    for (a, c), ep in plus.items()])
    T.check(len(err) == 3 * len(ATOMS), "all finite differences printed")
    if len(err):
        print("forces vs central differences of the DPLR energy (h = %g A, field on): max "
              "error %.2e eV/A" % (H, err.max()), flush=True)
        T.check(err.max() < 2e-5, "forces = -dE/dx: max error %.2e eV/A" % err.max())
    r2 = T.run_lammps(script(DUMP + "run 0", "efield %g %g %g jacobian no" % EFIELD),
                      files=DATA)
    if T.check(r2.rc == 0, "jacobian no run failed:\n" + r2.output[-1500:]) and len(err):
        d2 = read_dump(os.path.join(r2.workdir, "d.dump"))
        f2 = np.stack([d2["fx"], d2["fy"], d2["fz"]], 1)
        err2 = max(abs(-(ep - minus[(a, c)]) / (2 * H) - f2[a - 1, c])
                   for (a, c), ep in plus.items())
        print("without the Jacobian term: max error %.2e eV/A" % err2)
        T.check(err2 > 10 * err.max(), "the Jacobian term matters (%.2e vs %.2e eV/A)"
                % (err2, err.max()))

# --- the same forces on 2 ranks (the DW vectors of each rank's owned parents) -------------
r1 = T.run_lammps(script(DUMP + "run 0"), files=DATA)
r2 = T.run_lammps(script(DUMP + "run 0"), files=DATA, nprocs=2)
if T.check(r1.rc == 0 and r2.rc == 0, "1/2-rank runs failed:\n" + r2.output[-1500:]):
    d1 = read_dump(os.path.join(r1.workdir, "d.dump"))
    d2 = read_dump(os.path.join(r2.workdir, "d.dump"))
    f1 = np.stack([d1["fx"], d1["fy"], d1["fz"]], 1)
    f2 = np.stack([d2["fx"], d2["fy"], d2["fz"]], 1)
    x1 = np.stack([d1["x"], d1["y"], d1["z"]], 1)
    x2 = np.stack([d2["x"], d2["y"], d2["z"]], 1)
    dev_f, dev_x = np.abs(f1 - f2).max(), np.abs(x1 - x2).max()
    print("2 ranks vs 1: forces to %.2e eV/A, WC positions to %.2e A" % (dev_f, dev_x))
    T.check(dev_f < 1e-9 and dev_x < 1e-12, "2 ranks = 1 rank (forces %.2e, positions %.2e)"
            % (dev_f, dev_x))
T.summary("test_deepmd_dipole")
