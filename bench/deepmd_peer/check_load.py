"""Does a DeePMD-kit PyTorch frozen model load (and run) in this Python's torch?

Run with Debian's /usr/bin/python3 (torch 1.13) on a model frozen by a newer DeePMD-kit
and torch (scripts/make-deepmd-models.sh does, for water_dpa3.pth), and with the peer
venv's Python for the reference. Registers a placeholder deepmd::border_op with
DeePMD-kit's schema first when this torch does not have one (torch.jit.load resolves
operators by name; forward() without comm_dict never calls it), then loads the file and
evaluates forward() on frame 0 of water-dft/data_3, in float64 coordinates.

    python3 bench/deepmd_peer/check_load.py MODEL.pth DATA_DIR

Prints the deepmd:: operators that the file's code names, then "loads: yes|no", the
torch version, and the energy or the error."""
import os
import re
import sys
import zipfile

import numpy as np
import torch


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[-2])
    path, data = sys.argv[1:]
    with zipfile.ZipFile(path) as z:
        ops = sorted({m.decode() for n in z.namelist() if n.endswith(".py") and "/code/" in n
                      for m in re.findall(rb"ops\.deepmd\.(\w+)", z.read(n))})
    print("custom operators the file's code names: %s"
          % (", ".join("deepmd::" + o for o in ops) or "none"))
    try:    # in DeePMD-kit's venv: its own operator library
        import deepmd.pt.cxx_op  # noqa: F401
    except ImportError:
        pass
    lib = None
    try:
        torch.ops.deepmd.border_op
    except (AttributeError, RuntimeError):
        lib = torch.library.Library("deepmd", "DEF")
        lib.define("border_op(Tensor sendlist, Tensor sendproc, Tensor recvproc, "
                   "Tensor sendnum, Tensor recvnum, Tensor g1, Tensor communicator, "
                   "Tensor nlocal, Tensor nghost) -> Tensor[]")
    where = "torch %s (%s)" % (torch.__version__, os.path.dirname(torch.__file__))
    try:
        model = torch.jit.load(path, map_location="cpu")
    except Exception as e:    # report the library's reason verbatim
        print("loads: no; %s; %s: %s" % (where, type(e).__name__, str(e).strip().splitlines()[-1][:600]))
        return 1
    coord = np.load(os.path.join(data, "set.000", "coord.npy"))[:1]
    box = np.load(os.path.join(data, "set.000", "box.npy"))[:1]
    atype = np.loadtxt(os.path.join(data, "type.raw"), dtype=np.int64)[None, :]
    try:
        out = model(torch.tensor(coord, dtype=torch.float64), torch.tensor(atype),
                    torch.tensor(box, dtype=torch.float64))
        energy = float(out["energy"].detach().sum())
        fmax = float(out["force"].detach().abs().max())
    except Exception as e:
        print("loads: yes, forward() fails; %s; %s: %s"
              % (where, type(e).__name__, str(e).strip().splitlines()[-1][:600]))
        return 2
    print("loads: yes; %s; forward() on data_3 frame 0: energy %.10f eV, max |F| %.6f eV/A"
          % (where, energy, fmax))
    del lib
    return 0


if __name__ == "__main__":
    sys.exit(main())
