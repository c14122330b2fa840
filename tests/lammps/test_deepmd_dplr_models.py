"""DPLR models trained and frozen by DeePMD-kit itself (scripts/make-deepmd-dplr-models.sh,
into $AISCI_PEERS/models/dplr, default ~/.cache/aisci-peers) in DeePMD-kit's own LAMMPS
setup (pair_style deepmd + fix dplr + kspace_style pppm/dplr, its DPLR water example), on
frame 0 of the example's training data (../shared/deepmd-kit/dplr-water/train/data: 128
waters + 128 WCs, 16.42 A box), on 1 and 2 ranks, against DeePMD-kit's own Python
inference run by subprocess in its virtual environment. Each model pair that exists:
- PyTorch recipe: ener_sr_pt.pth and dw_pt.pth (dp --pt freeze); references DeepPot and
  DeepDipole on the same files ($AISCI_PEERS/deepmd), and the long-range part from
  deepmd.pt_expt's dipole_charge modifier on dw_pt.dp;
- TensorFlow recipe: ener_sr_tf_conv.pth and dw_tf_conv.pth (dp convert-backend); references
  the TensorFlow originals ($AISCI_PEERS/deepmd-tf): DeepPot(ener_tf.pb, skip_modifier) for
  the short range, DeepDipole(dw_tf.pb), DeepPot(ener_tf.pb) with its modifier for DPLR.

Checks and tolerances:
- short range (pair_style deepmd alone): energy to 1e-9 relative; forces per component
  |a - b| <= 1e-9 max(1, |b|); virial (from compute pressure NULL virial) to 1e-9 of its
  largest component: it sums 384 atomic virials of up to ~1e2 eV in another order, so its
  small components carry round-off of the large ones;
- WCs (fix dplr): WC - O (minimum image) equals DeepDipole's O vector to 1e-9 A;
- DPLR (+ pppm/dplr, mesh 64, 1e-8): forces on O and H to 1e-4 eV/A and energy to 5e-4 eV
  (measured 2e-5 eV/A and 5e-5 eV: the reference's Ewald sum on its own grid), after the
  Gaussian self-energy -beta/sqrt(pi) sum q^2 qqrd2e, which our pppm/dplr includes and
  DeePMD-kit leaves out (its Python modifier and its LAMMPS pppm/dplr), is taken off ours.

Without DeePMD-kit's example data, its virtual environments or the models, the test prints
why and exits 77 (skipped)."""
import json
import os
import shutil
import subprocess
import tempfile

import numpy as np

from aisci_testlib import check, loop_times, run_lammps, skip, summary
from deepmd_systems import SHARED, close, read_dump

PEERS = os.environ.get("AISCI_PEERS") or os.path.expanduser("~/.cache/aisci-peers")
MODELS = os.path.join(PEERS, "models", "dplr")
EXAMPLE = os.path.join(SHARED, "dplr-water", "train")
DATA = os.path.join(EXAMPLE, "data")
NKTV2P = 1.6021765e6    # LAMMPS metal units (29Sep2021, update.cpp)
QQRD2E = 14.399645      # LAMMPS metal units
TOL_SR, TOL_WC, TOL_DPLR_F, TOL_DPLR_E = 1e-9, 1e-9, 1e-4, 5e-4

# (label, venv, LAMMPS files, reference files): sr/dw for LAMMPS; ref_sr, ref_dw, ref_full
# for DeePMD-kit (ref_full: "pt_expt" = pt_expt's dipole_charge on dw_pt.dp, "tf" = the
# TensorFlow DPLR model with its modifier)
PAIRS = [
    ("PyTorch (dp --pt freeze)", "deepmd",
     {"sr": "ener_sr_pt.pth", "dw": "dw_pt.pth"},
     {"sr": "ener_sr_pt.pth", "dw": "dw_pt.pth", "full": "dw_pt.dp", "kind": "pt_expt"}),
    ("TensorFlow, dp convert-backend", "deepmd-tf",
     {"sr": "ener_sr_tf_conv.pth", "dw": "dw_tf_conv.pth"},
     {"sr": "ener_tf.pb", "dw": "dw_tf.pb", "full": "ener_tf.pb", "kind": "tf"}),
]

if not os.path.exists(os.path.join(DATA, "set.000", "coord.npy")):
    skip("DeePMD-kit's DPLR example data not found at %s (or set AISCI_DEEPMD_DIR)" % DATA)
todo, why = [], []
for label, venv, lmp_files, ref_files in PAIRS:
    py = os.path.join(PEERS, venv, "bin", "python")
    paths = [os.path.join(MODELS, f) for f in list(lmp_files.values()) +
             [ref_files["sr"], ref_files["dw"], ref_files["full"]]]
    missing = [p for p in [py] + paths if not os.path.exists(p)]
    if missing:
        why.append("%s: %s not found" % (label, missing[0]))
    else:
        todo.append((label, py, lmp_files, ref_files))
for w in why:
    print("not tested: " + w, flush=True)
if not todo:
    skip("no DPLR model pair with its DeePMD-kit environment (%s); make them with "
         "scripts/install-peers.sh --only deepmd and scripts/make-deepmd-dplr-models.sh"
         % "; ".join(why))

# frame 0; the charges and beta of the example's ener.json modifier
modifier = json.load(open(os.path.join(EXAMPLE, "ener.json")))["model"]["modifier"]
dw_fit = json.load(open(os.path.join(EXAMPLE, "dw.json")))["model"]["fitting_net"]
dw_types = dw_fit.get("dipole_type", dw_fit.get("sel_type"))
beta = float(modifier["ewald_beta"])
q_sys = [float(q) for q in modifier["sys_charge_map"]]          # O, H
q_wc = float(modifier["model_charge_map"][0])                    # WC of O
box = np.load(os.path.join(DATA, "set.000", "box.npy"))[0].astype(float).reshape(3, 3)
L = box[0, 0]
if not np.allclose(box, np.eye(3) * L):
    skip("frame 0 of %s is not a cubic box" % DATA)
x = np.mod(np.load(os.path.join(DATA, "set.000", "coord.npy"))[0].astype(float).reshape(-1, 3), L)
types = np.loadtxt(os.path.join(DATA, "type.raw"), dtype=int)   # 0 = O, 1 = H
n = len(types)
o_atoms = np.where(types == dw_types[0])[0]
q = np.array([q_sys[t] for t in types] + [q_wc] * len(o_atoms))
self_energy = -beta / np.sqrt(np.pi) * np.sum(q ** 2) * QQRD2E

# LAMMPS data file: O/H as types 1/2 with their ionic charges, one WC (type 3) per O bonded
# to it (bond type 1); the WCs start at their O and fix dplr places them
lines = ["DPLR water, frame 0 of DeePMD-kit's example data", "",
         "%d atoms" % (n + len(o_atoms)), "3 atom types", "%d bonds" % len(o_atoms),
         "1 bond types", ""]
lines += ["0 %.17g %slo %shi" % (L, d, d) for d in "xyz"]
lines += ["", "Masses", "", "1 16", "2 2", "3 16", "", "Atoms # full", ""]
lines += ["%d 1 %d %g %.17g %.17g %.17g" % (i + 1, types[i] + 1, q[i], *x[i]) for i in range(n)]
lines += ["%d 1 3 %g %.17g %.17g %.17g" % (n + k + 1, q_wc, *x[i]) for k, i in enumerate(o_atoms)]
lines += ["", "Bonds", ""]
lines += ["%d 1 %d %d" % (k + 1, i + 1, n + k + 1) for k, i in enumerate(o_atoms)]
FILES = {"frame.data": "\n".join(lines) + "\n"}

# DeePMD-kit's script: run 0 of the short range alone, then with fix dplr and pppm/dplr
SCRIPT = """units metal
boundary p p p
atom_style full
neighbor 2.0 bin
neigh_modify every 10 delay 0 check no exclude type 1 3
read_data frame.data
pair_style deepmd %(sr)s
pair_coeff * *
bond_style zero
bond_coeff *
special_bonds lj/coul 1 1 1 angle no
compute pv all pressure NULL virial
thermo_style custom step pe c_pv[1] c_pv[2] c_pv[3] c_pv[4] c_pv[5] c_pv[6]
thermo_modify format float %%.15g
dump d all custom 1 sr.dump id type x y z fx fy fz
dump_modify d sort id format float %%.17g
run 0
undump d
kspace_style pppm/dplr 1e-8
kspace_modify gewald %(beta)g diff ik mesh 64 64 64
fix 0 all dplr model %(dw)s type_associate 1 3 bond_type 1
fix_modify 0 virial yes
dump d all custom 1 dplr.dump id type x y z fx fy fz
dump_modify d sort id format float %%.17g
run 0
"""

# DeePMD-kit's own inference (stdin: JSON job; stdout: a line "REF {json}")
REF = r"""
import json, os, sys
import numpy as np
a = json.load(sys.stdin)
from deepmd.infer.deep_pot import DeepPot
from deepmd.infer.deep_dipole import DeepDipole
coord = np.array(a["x"]).reshape(1, -1)
box = np.array(a["box"]).reshape(1, 9)
atype = np.array(a["types"])
out = {}
e, f, v = DeepPot(a["sr"], **a["sr_kw"]).eval(coord, box, atype)[:3]
out["e_sr"] = float(np.ravel(e)[0])
out["f_sr"], out["v_sr"] = np.ravel(f).tolist(), np.ravel(v).tolist()
dw = DeepDipole(a["dw"])
out["dipole"] = np.ravel(dw.eval(coord, box, atype)).tolist()
if a["kind"] == "tf":
    # the TensorFlow modifier loads its dipole model by the name it was trained with (dw.pb),
    # relative to the working directory
    os.chdir(a["workdir"])
    e, f = DeepPot(a["full"]).eval(coord, box, atype)[:2]
    out["e_full"], out["f_full"] = float(np.ravel(e)[0]), np.ravel(f).tolist()
else:
    import torch
    from deepmd.pt_expt.modifier.dipole_charge import DipoleChargeModifier
    # DeePMD-kit's PyTorch dipole models list every type in get_sel_type(): the types
    # outside dw.json's dipole_type get WC charge 0
    sel = [int(t) for t in dw.get_sel_type()]
    charge = [a["q_wc"] if t in a["dw_types"] else 0.0 for t in sel]
    mod = DipoleChargeModifier(a["full"], charge, a["q_sys"], a["ewald_h"], a["beta"])
    lr = mod(torch.tensor(coord).reshape(1, -1, 3), torch.tensor(atype)[None],
             torch.tensor(box).reshape(1, 3, 3))
    out["e_full"] = out["e_sr"] + lr["energy"].item()
    out["f_full"] = (np.array(out["f_sr"]) + lr["force"].detach().numpy().ravel()).tolist()
print("REF " + json.dumps(out))
"""


def reference(py, ref_files):
    workdir = tempfile.mkdtemp(prefix="aisci_dplr_ref_")
    if ref_files["kind"] == "tf":
        os.symlink(os.path.join(MODELS, ref_files["dw"]), os.path.join(workdir, "dw.pb"))
    job = {"x": x.ravel().tolist(), "box": box.ravel().tolist(), "types": types.tolist(),
           "sr": os.path.join(MODELS, ref_files["sr"]),
           "sr_kw": {"skip_modifier": True} if ref_files["kind"] == "tf" else {},
           "dw": os.path.join(MODELS, ref_files["dw"]),
           "full": os.path.join(MODELS, ref_files["full"]), "kind": ref_files["kind"],
           "workdir": workdir, "q_wc": q_wc, "q_sys": q_sys, "dw_types": dw_types,
           "beta": beta, "ewald_h": float(modifier["ewald_h"])}
    env = dict(os.environ, OMP_NUM_THREADS="1", DP_INTRA_OP_PARALLELISM_THREADS="1",
               DP_INTER_OP_PARALLELISM_THREADS="1", CUDA_VISIBLE_DEVICES="",
               TF_CPP_MIN_LOG_LEVEL="2")
    p = subprocess.run([py, "-c", REF], input=json.dumps(job).encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, env=env, timeout=600)
    shutil.rmtree(workdir, ignore_errors=True)
    out = p.stdout.decode(errors="replace")
    line = next((l for l in out.splitlines() if l.startswith("REF ")), None)
    if not check(p.returncode == 0 and line is not None, "DeePMD-kit's inference failed (rc %d):"
                 "\n%s" % (p.returncode, out[-2000:])):
        return None
    r = json.loads(line[4:])
    return {k: np.array(v) for k, v in r.items()}


def virial_from_pressure(th, step):
    """Virial (eV; xx yy zz xy xz yz) from the virial part of the pressure tensor (bar)."""
    return np.array([th["c_pv[%d]" % k][step] for k in range(1, 7)]) * L ** 3 / NKTV2P


for label, py, lmp_files, ref_files in todo:
    ref = reference(py, ref_files)
    if ref is None:
        continue
    print("%s: DeePMD-kit short-range energy %.10f eV, DPLR energy %.6f eV"
          % (label, ref["e_sr"], ref["e_full"]), flush=True)
    v9 = ref["v_sr"].reshape(3, 3)
    v_ref = np.array([v9[0, 0], v9[1, 1], v9[2, 2], v9[0, 1], v9[0, 2], v9[1, 2]])
    dip_ref = ref["dipole"].reshape(-1, 3)[o_atoms]
    for nprocs in (1, 2):
        tag = "%s, %d rank(s)" % (label, nprocs)
        r = run_lammps(SCRIPT % {"sr": os.path.join(MODELS, lmp_files["sr"]), "beta": beta,
                                 "dw": os.path.join(MODELS, lmp_files["dw"])},
                       nprocs=nprocs, files=FILES)
        if not check(r.rc == 0, "%s: lmp-aisci failed:\n%s" % (tag, r.output[-3000:])):
            continue
        check(any(loop[1] == nprocs for loop in loop_times(r.logs[0])),
              "%s: the log says %d procs" % (tag, nprocs))
        th = r.thermo()
        if not check(len(th.get("PotEng", [])) == 2, "%s: two thermo blocks" % tag):
            continue
        sr = read_dump(os.path.join(r.workdir, "sr.dump"))
        f = np.stack([sr["fx"], sr["fy"], sr["fz"]], 1)[:n]
        de = abs(th["PotEng"][0] - ref["e_sr"])
        ok_f, df = close(f, ref["f_sr"].reshape(-1, 3), TOL_SR)
        dv = np.abs(virial_from_pressure(th, 0) - v_ref).max()
        print("  %s: short range: energy %.2e eV, forces %.2e eV/A, virial %.2e eV"
              % (tag, de, df, dv), flush=True)
        check(de <= TOL_SR * abs(ref["e_sr"]), "%s: short-range energy %.12f vs %.12f"
              % (tag, th["PotEng"][0], ref["e_sr"]))
        check(ok_f, "%s: short-range forces deviate by %.3g eV/A" % (tag, df))
        check(dv <= TOL_SR * np.abs(v_ref).max(), "%s: short-range virial deviates by %.3g eV"
              % (tag, dv))
        d = read_dump(os.path.join(r.workdir, "dplr.dump"))
        xd = np.stack([d["x"], d["y"], d["z"]], 1)
        disp = xd[n:] - xd[o_atoms]
        disp -= L * np.round(disp / L)
        dwc = np.abs(disp - dip_ref).max()
        fd = np.stack([d["fx"], d["fy"], d["fz"]], 1)[:n]
        dfd = np.abs(fd - ref["f_full"].reshape(-1, 3)).max()
        ded = abs(th["PotEng"][1] - self_energy - ref["e_full"])
        print("  %s: WC - O vs DeepDipole %.2e A; DPLR forces %.2e eV/A, energy %.2e eV "
              "(ours %.6f eV with the self-energy %.6f eV)"
              % (tag, dwc, dfd, ded, th["PotEng"][1], self_energy), flush=True)
        check(dwc <= TOL_WC, "%s: WC positions deviate by %.3g A" % (tag, dwc))
        check(dfd <= TOL_DPLR_F, "%s: DPLR forces deviate by %.3g eV/A" % (tag, dfd))
        check(ded <= TOL_DPLR_E, "%s: DPLR energy deviates by %.3g eV" % (tag, ded))
summary("test_deepmd_dplr_models")
