"""pair_style aisci with DeePMD-kit's frozen DPA2 model (message passing, calls
deepmd::border_op), and a DPA3 model when one exists (AISCI_DEEPMD_DPA3, or a file
models/*dpa3*.pth next to the DPA2 model), on frames of DeePMD-kit's DFT water data (water-dft/data_3, 192 atoms):
energy and forces equal the model's own Python forward() (Debian's torch 1.13, float64) to
1e-10 per component (|a - b| <= 1e-10 max(1, |b|)) on 1, 2 and 4 ranks, and with newton
off. In Python, forward() without comm_dict never calls the operator; a placeholder of
that name is registered so that torch.jit.load accepts the file."""
import glob
import os
import sys

import numpy as np

from aisci_testlib import check, run_lammps, summary
from deepmd_systems import DPA2, close, data_file, dft_frame, need, read_dump

need(DPA2)
MODELS = [("DPA2", DPA2)]
_dpa3 = os.environ.get("AISCI_DEEPMD_DPA3") or next(
    iter(sorted(glob.glob(os.path.join(os.path.dirname(DPA2), "*dpa3*.pth")))), None)
if _dpa3 and os.path.exists(_dpa3):
    MODELS.append(("DPA3", _dpa3))
else:
    print("DPA3: no model file (set AISCI_DEEPMD_DPA3 or put models/*dpa3*.pth next to the "
          "DPA2 model); checking DPA2 only", flush=True)
try:
    import torch
except ImportError as e:
    print("SKIPPED: the reference needs torch in this python (%s): %s" % (sys.executable, e))
    sys.exit(77)

TOL = 1e-10
FRAMES = [0, 40]


_loaded = {}


def python_reference(path, x, types, box):
    """Energy and forces of forward() on the periodic frame (model types = LAMMPS - 1)."""
    if not hasattr(python_reference, "lib"):
        lib = torch.library.Library("deepmd", "DEF")
        lib.define("border_op(Tensor sendlist, Tensor sendproc, Tensor recvproc, "
                   "Tensor sendnum, Tensor recvnum, Tensor g1, Tensor communicator, "
                   "Tensor nlocal, Tensor nghost) -> Tensor[]")
        python_reference.lib = lib    # forward() without comm_dict never calls it
    if path not in _loaded:
        _loaded[path] = torch.jit.load(path, map_location="cpu")
    out = _loaded[path](torch.tensor(x.reshape(1, -1)),
                                 torch.tensor(np.asarray(types).reshape(1, -1) - 1),
                                 torch.tensor(box.reshape(1, 9)))
    return out["energy"].item(), out["force"].detach().numpy().reshape(-1, 3)


SCRIPT = """units metal
newton %s
boundary p p p
atom_style atomic
neighbor 1.0 bin
read_data data.lmp
pair_style aisci
pair_coeff * * %s O H
thermo_style custom step pe
thermo_modify format float %%.15g
dump 1 all custom 1 dump.txt id fx fy fz
dump_modify 1 format float %%.17g
run 0
"""

for (name, model), frame in [(m, f) for m in MODELS for f in FRAMES]:
    x, types, box = dft_frame(frame)
    L = box[0, 0]
    check(np.allclose(box, np.diag([L, L, L])), "frame %d: box not cubic" % frame)
    x = np.mod(x, L)
    e_ref, f_ref = python_reference(model, x, types, box)
    files = {"data.lmp": data_file(x, types, L)}
    for nprocs, newton in [(1, "on"), (2, "on"), (4, "on"), (2, "off")]:
        label = "%s frame %d, %d rank(s), newton %s" % (name, frame, nprocs, newton)
        r = run_lammps(SCRIPT % (newton, model), nprocs=nprocs, files=files, timeout=600)
        if not check(r.rc == 0, "%s: run failed:\n%s" % (label, r.output[-3000:])):
            continue
        check("deepmd::border_op exchanges ghost features" in r.logs[0],
              "%s: log does not report the border_op exchange" % label)
        e = r.thermo()["PotEng"][-1]
        d = read_dump(os.path.join(r.workdir, "dump.txt"))
        f = np.column_stack([d["fx"], d["fy"], d["fz"]])
        ok_e, dev_e = close(e, e_ref, TOL)
        check(ok_e, "%s: energy %.15g vs forward() %.15g" % (label, e, e_ref))
        ok_f, dev_f = close(f, f_ref, TOL)
        check(ok_f, "%s: forces deviate from forward() by %.3g" % (label, dev_f))
        print("%s: energy %.12f (dev %.3g), max force deviation %.3g"
              % (label, e, dev_e, dev_f), flush=True)
summary("test_deepmd_dpa2")
