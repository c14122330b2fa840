"""pair_style aisci with a DeePMD-kit DPA3 model (float32, message passing through
deepmd::border_op) made by DeePMD-kit itself: scripts/make-deepmd-models.sh trains it on
water-dft with DeePMD-kit's own input and freezes it (`dp --pt freeze`) into the peer cache
($AISCI_PEERS/models/water_dpa3.pth, default ~/.cache/aisci-peers; AISCI_DEEPMD_DPA3
overrides). A frozen DeePMD-kit file carries DeePMD-kit's code, so the repository keeps no
copy.

Reference: DeePMD-kit's own Python inference (deepmd.infer.DeepPot in the peer virtual
environment, torch 2.11) on a DFT water frame (water-dft/data_3, 192 atoms); Debian's
torch 1.13 cannot run this model's forward() (its neighbour-list code indexes with int32).
Ours on 1, 2 and 4 ranks, and newton off: energy within 1e-8 relative, forces per
component |a - b| <= 1e-5 max(1, |b|) (float32 model, different operation order).

Needs PyPI peers (scripts/install-peers.sh, scripts/make-deepmd-models.sh): without the
model file or the peer environment it prints why and exits 77 (skipped)."""
import json
import os
import subprocess
import sys

import numpy as np

from aisci_testlib import check, run_lammps, summary
from deepmd_systems import close, data_file, dft_frame, need, read_dump

PEERS = os.environ.get("AISCI_PEERS") or os.path.expanduser("~/.cache/aisci-peers")
MODEL = os.environ.get("AISCI_DEEPMD_DPA3") or os.path.join(PEERS, "models", "water_dpa3.pth")
PEER_PY = os.path.join(PEERS, "deepmd", "bin", "python")
for path, what in ((MODEL, "the DPA3 model (make it with scripts/make-deepmd-models.sh)"),
                   (PEER_PY, "DeePMD-kit's virtual environment (scripts/install-peers.sh)")):
    if not os.path.exists(path):
        print("SKIPPED: needs PyPI peers: %s not found: %s" % (path, what), flush=True)
        sys.exit(77)

x, types, box = dft_frame(0)
L = box[0, 0]
x = np.mod(x, L)
# DeePMD-kit's own inference, in its environment (model types = LAMMPS types - 1)
REF = r"""
import json, sys
import numpy as np
from deepmd.infer import DeepPot
a = json.load(sys.stdin)
dp = DeepPot(a["model"])
e, f, v = dp.eval(np.array(a["x"]).reshape(1, -1), np.array(a["box"]).reshape(1, 9),
                  a["types"])
print("REF " + json.dumps({"e": float(np.asarray(e).ravel()[0]), "f": np.asarray(f).ravel().tolist()}))
"""
env = dict(os.environ, OMP_NUM_THREADS="1", DP_INTRA_OP_PARALLELISM_THREADS="1",
           DP_INTER_OP_PARALLELISM_THREADS="1", CUDA_VISIBLE_DEVICES="")
p = subprocess.run([PEER_PY, "-c", REF], input=json.dumps(
    {"model": MODEL, "x": x.ravel().tolist(), "box": box.ravel().tolist(),
     "types": [int(t) - 1 for t in types]}).encode(), stdout=subprocess.PIPE,
    stderr=subprocess.STDOUT, env=env, timeout=600)
out = p.stdout.decode(errors="replace")
line = next((l for l in out.splitlines() if l.startswith("REF ")), None)
if not check(p.returncode == 0 and line is not None,
             "DeePMD-kit's DeepPot.eval failed (rc %d):\n%s" % (p.returncode, out[-2000:])):
    summary("test_deepmd_dpa3")
ref = json.loads(line[4:])
e_ref, f_ref = ref["e"], np.array(ref["f"]).reshape(-1, 3)
print("DeePMD-kit DeepPot: energy %.10f eV" % e_ref, flush=True)

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
files = {"data.lmp": data_file(x, types, L)}
for nprocs, newton in [(1, "on"), (2, "on"), (4, "on"), (2, "off")]:
    label = "DPA3, %d rank(s), newton %s" % (nprocs, newton)
    r = run_lammps(SCRIPT % (newton, MODEL), nprocs=nprocs, files=files, timeout=600)
    if not check(r.rc == 0, "%s: run failed:\n%s" % (label, r.output[-3000:])):
        continue
    e = r.thermo()["PotEng"][-1]
    d = read_dump(os.path.join(r.workdir, "dump.txt"))
    f = np.column_stack([d["fx"], d["fy"], d["fz"]])
    rel_e = abs(e - e_ref) / abs(e_ref)
    check(rel_e <= 1e-8, "%s: energy %.10f vs DeePMD-kit %.10f (rel %.2e)" % (label, e, e_ref, rel_e))
    ok_f, dev_f = close(f, f_ref, 1e-5)
    check(ok_f, "%s: forces deviate from DeePMD-kit's by %.3g eV/A" % (label, dev_f))
    print("%s: energy %.10f (rel dev %.2e), max force deviation %.3g eV/A"
          % (label, e, rel_e, dev_f), flush=True)
summary("test_deepmd_dpa3")
