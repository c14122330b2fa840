"""Re-freeze a DeePMD-kit PyTorch frozen model on the CPU, with the installed DeePMD-kit.

DeePMD-kit's example DPA2 model (examples/water/dpa2/frozen_model.pth) was frozen on a
GPU machine: its message-passing branch (the one LAMMPS takes, with comm_dict) creates
tensors on torch.device("cuda:0"), so DeePMD-kit's own LAMMPS stops with "Found no
NVIDIA driver" on a CPU-only machine. This script rebuilds the model from the file's
own model_def_script and weights and scripts it again (devices then follow the inputs'),
then checks that both give the same energy and forces on a water frame (forward(), the
path that does not touch cuda). Buffers that newer DeePMD-kit versions add and that the
old file lacks (compression tables, type-embedding caches: unused unless the model is
compressed) keep their defaults; any other missing or unexpected weight is an error.

Run with the peer venv's Python (scripts/make-deepmd-models.sh does):

    $AISCI_PEERS/deepmd/bin/python bench/deepmd_peer/refreeze_cpu.py IN.pth OUT.pth DATA_DIR
"""
import json
import os
import sys
import zipfile

import numpy as np
import torch


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.split("\n\n")[-1])
    src, dst, data = sys.argv[1:]
    from deepmd.pt.model.model import get_model

    old = torch.jit.load(src, map_location="cpu")
    params = json.loads(old.model_def_script)
    model = get_model(params).to("cpu")
    res = model.load_state_dict(old.state_dict(), strict=False)
    optional = ("type_embd_data", "compress_info", "compress_data")
    bad = [k for k in res.missing_keys if not k.endswith(optional) and
           not any(o + "." in k for o in optional)]
    if bad or res.unexpected_keys:
        sys.exit("refreeze_cpu: weights do not match: missing %s, unexpected %s"
                 % (bad, res.unexpected_keys))
    model.eval()
    new = torch.jit.script(model)
    torch.jit.save(new, dst)
    new = torch.jit.load(dst, map_location="cpu")

    coord = np.load(os.path.join(data, "set.000", "coord.npy"))[:1]
    box = np.load(os.path.join(data, "set.000", "box.npy"))[:1]
    atype = np.loadtxt(os.path.join(data, "type.raw"), dtype=np.int64)[None, :]
    args = (torch.tensor(coord, dtype=torch.float64), torch.tensor(atype),
            torch.tensor(box, dtype=torch.float64))
    e_old = old(*args)
    e_new = new(*args)
    de = float(abs(e_old["energy"] - e_new["energy"]).max().detach())
    df = float(abs(e_old["force"] - e_new["force"]).max().detach())
    print("refreeze_cpu: %s -> %s: energy %.10f eV, |dE| %.2e eV, max |dF| %.2e eV/A"
          % (src, dst, float(e_new["energy"].sum().detach()), de, df))
    if de > 1e-8 or df > 1e-8:
        sys.exit("refreeze_cpu: the re-frozen model differs from the original")
    with zipfile.ZipFile(dst) as z:
        cuda = [n for n in z.namelist() if "/code/" in n and n.endswith(".py") and
                b"cuda:0" in z.read(n)]
    if cuda:
        sys.exit("refreeze_cpu: %s still names cuda in %s" % (dst, ", ".join(cuda)))


if __name__ == "__main__":
    main()
