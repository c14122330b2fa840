"""MatRIS checkpoints in pair_style aisci, against MatRIS's own ASE calculator.

Checkpoints are made with the matris package itself (its venv, tests/lammps/
matris_peer.py): MatRIS(...) with random weights at its default architecture (6 blocks,
128 features, 6 / 4 A cutoffs, spherical three-body basis, OMat reference energies) and
at a small one (2 blocks, 16 / 16 / 8 features, 5 / 3 A), saved as MatRIS saves them.
Each is converted with `python3 -m potentials.matris.convert` (step 1 in the matris
venv, step 2 here with Debian's torch) and run by lmp-aisci (`run 0`).

Reference: MatRISCalculator (MatRIS.load from a HOME of its own, float64: the model and
MatRIS's graph converter switched to float64) on frame 0 of the DFT water
(water-dft/data_3, 192 atoms), a rattled (Sr,Ba)(Ti,Zr)O3 perovskite (40 atoms) and a
triclinic P1 crystal of Li, Mn, Fe, P, O, F (12 atoms) rotated away from LAMMPS's
orientation (so the comparison also tests rotation covariance: LAMMPS runs it rotated,
forces and virial are rotated back). Checks (float64):
- energy: ours minus the sum of the per-element reference energies against MatRIS's
  energy minus its reference-energy part, to 1e-10 of the total energy; MatRIS's
  reference part itself (computed in float32 by MatRIS even in a float64 model) against
  the float64 sum to 1e-6;
- forces per component to 1e-10 max(1, |f|) eV/A; the virial (compute pressure NULL
  virial x V / nktv2p) against -stress x V of ASE to 1e-10 of its largest component;
- small model: 1, 2 and 4 ranks newton on, 2 ranks newton off (several ranks: the
  ghost exchange of features and of bond partial sums), units metal, and 1 rank units
  real (eV -> kcal/mol by 23.060547830619026); default model: perovskite and triclinic
  on 1 rank, triclinic on 2 ranks (its memory, ~170 kB per angle in float64, rules out
  the water frame here: 134,000 angles);
- translation: the water frame shifted by (1.3, -2.7, 0.4) A gives the same energy
  (1e-12) and forces;
- float32 export of the small model on the water frame: energy to 1e-6 relative,
  forces to 1e-5 max(1, max |f|), virial to 2e-5 of its largest component (float32
  rounding, 6e-8 per operation, of sums over ~100 angle terms per atom in another order;
  measured 3.8e-8, 8.6e-7, 1.4e-6);
- errors: a damaged checkpoint, a non-MatRIS one, a missing weight, an unsupported
  config setting (named), an element beyond the embedding in pair_coeff, more bonds
  than max_bonds_3body at run time;
- a short NVE run (small model, water, 40 steps of 0.25 fs): total energy within
  2e-4 eV/atom of its start.
Skipped (77) with the reason without the matris venv (scripts/install-peers.sh --only
matris)."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from aisci_testlib import check, run_lammps, skip, summary
from deepmd_systems import EV_TO_KCAL_MOL, close, dft_frame, read_dump

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("AISCI_SOURCE_DIR", os.path.join(HERE, "..", ".."))
PEERS = os.environ.get("AISCI_PEERS") or os.path.expanduser("~/.cache/aisci-peers")
PY = os.environ.get("AISCI_MATRIS_PYTHON") or os.path.join(PEERS, "matris", "bin", "python")
if not os.access(PY, os.X_OK):
    skip("needs the matris venv %s (scripts/install-peers.sh --only matris)" % PY)
if subprocess.run([PY, "-c", "import matris"], capture_output=True).returncode != 0:
    skip("%s cannot import matris (scripts/install-peers.sh --only matris)" % PY)

NKTV2P = {"metal": 1.6021765e6, "real": 68568.415}    # LAMMPS: eV/A^3 -> bar, kcal/mol/A^3 -> atm
ELEMENTS = ("H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn "
            "Ga Ge As Se Br Kr Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba").split()
WORK = tempfile.mkdtemp(prefix="aisci_matris_")
PEER = os.path.join(HERE, "matris_peer.py")


def sh(cmd, what, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        print("%s failed (%d):\n%s\n%s" % (what, p.returncode, p.stdout[-2000:], p.stderr[-3000:]))
        summary("test_matris")
        sys.exit(1)
    return p


def convert(ckpt, out, *extra, expect_ok=True):
    cmd = [sys.executable, "-m", "potentials.matris.convert", ckpt, out,
           "--matris-python", PY] + list(extra)
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=SRC,
                       env=dict(os.environ, PYTHONPATH=SRC))
    if expect_ok and p.returncode != 0:
        print(p.stdout[-2000:], p.stderr[-3000:])
        check(False, "convert %s failed" % ckpt)
    return p


def path(name):
    return os.path.join(WORK, name)


# -- checkpoints, structures and MatRIS's own numbers ----------------------------------------
for kind, seed in (("small", 1), ("default", 2)):
    sh([PY, PEER, "make", path(kind + ".pth.tar"), kind, str(seed)], "make " + kind)
sh([PY, PEER, "crystals", path("crystals.json"), "3"], "crystals")
x, t, box = dft_frame(0)
water = {"name": "water", "numbers": np.where(t == 1, 8, 1).tolist(),
         "positions": np.mod(x, box[0, 0]).tolist(), "cell": box.tolist()}
frames = [water] + json.load(open(path("crystals.json")))["frames"]
json.dump({"frames": frames}, open(path("frames.json"), "w"))
json.dump({"frames": frames[1:]}, open(path("crystals_only.json"), "w"))
peer = {}
sh([PY, PEER, "eval", path("small.pth.tar"), path("frames.json"), path("small.json"), "float64"],
   "MatRISCalculator small")
peer["small"] = json.load(open(path("small.json")))["results"]
sh([PY, PEER, "eval", path("default.pth.tar"), path("crystals_only.json"), path("default.json"),
    "float64"], "MatRISCalculator default")
peer["default"] = [None] + json.load(open(path("default.json")))["results"]

models = {}
for kind in ("small", "default"):
    convert(path(kind + ".pth.tar"), path(kind + ".pt"), "--neutral", path(kind + ".npz"))
    models[kind] = path(kind + ".pt")
convert(path("small.npz"), path("small32.pt"), "--dtype", "float32")
reference = {k: np.load(path(k + ".npz"))["w/reference_energy.fc.weight"].astype(float).reshape(-1)
             for k in ("small", "default")}


# -- LAMMPS side ---------------------------------------------------------------------------
def lammps_frame(frame, shift=(0.0, 0.0, 0.0)):
    """(data file text, element names in type order, rotation M with x_lammps = x M)."""
    cell = np.array(frame["cell"], float)
    pos = np.array(frame["positions"], float) + np.array(shift)
    a, b, c = cell
    ax = np.linalg.norm(a)
    ahat = a / ax
    bx = b @ ahat
    by = np.linalg.norm(np.cross(ahat, b))
    cx = c @ ahat
    cy = (b @ c - bx * cx) / by
    cz = np.sqrt(c @ c - cx ** 2 - cy ** 2)
    lcell = np.array([[ax, 0, 0], [bx, by, 0], [cx, cy, cz]])
    m = np.linalg.solve(cell, lcell)
    frac = np.mod(pos @ m @ np.linalg.inv(lcell), 1.0)
    xl = frac @ lcell
    names = sorted(set(ELEMENTS[z - 1] for z in frame["numbers"]), key=ELEMENTS.index)
    lines = ["MatRIS test frame", "", "%d atoms" % len(xl), "%d atom types" % len(names), "",
             "0 %.17g xlo xhi" % ax, "0 %.17g ylo yhi" % by, "0 %.17g zlo zhi" % cz,
             "%.17g %.17g %.17g xy xz yz" % (bx, cx, cy), "", "Masses", ""]
    lines += ["%d 10.0" % (k + 1) for k in range(len(names))]
    lines += ["", "Atoms", ""]
    for i, (p, z) in enumerate(zip(xl, frame["numbers"])):
        lines.append("%d %d %.17g %.17g %.17g" % (i + 1, names.index(ELEMENTS[z - 1]) + 1, *p))
    return "\n".join(lines) + "\n", names, m


SCRIPT = """units {units}
newton {newton}
boundary p p p
atom_style atomic
atom_modify map array
neighbor 1.0 bin
read_data data.lmp
pair_style aisci
pair_coeff * * {model} {names}
compute vir all pressure NULL virial
thermo_style custom step pe vol c_vir[1] c_vir[2] c_vir[3] c_vir[4] c_vir[5] c_vir[6]
thermo_modify format float %.17g
dump 1 all custom 1 dump.txt id fx fy fz
dump_modify 1 format float %.17g
run 0
"""


def ours(model, frame, units="metal", newton="on", nprocs=1, shift=(0.0, 0.0, 0.0), label=""):
    """(energy, forces [N, 3], virial 3x3), in the frame's orientation, or None."""
    data, names, m = lammps_frame(frame, shift)
    r = run_lammps(SCRIPT.format(units=units, newton=newton, model=model, names=" ".join(names)),
                   nprocs=nprocs, files={"data.lmp": data}, timeout=900)
    if not check(r.rc == 0, "%s: run failed:\n%s" % (label, r.output[-3000:])):
        return None
    th = r.thermo()
    d = read_dump(os.path.join(r.workdir, "dump.txt"))
    f = np.column_stack([d["fx"], d["fy"], d["fz"]]) @ m.T
    p = [th["c_vir[%d]" % k][-1] for k in range(1, 7)]
    w = np.array([[p[0], p[3], p[4]], [p[3], p[1], p[5]], [p[4], p[5], p[2]]])
    w = m @ (w * th["Volume"][-1] / NKTV2P[units]) @ m.T
    return th["PotEng"][-1], f, w


def compare(label, got, kind, index, units="metal", tol=(1e-10, 1e-10, 1e-10)):
    if got is None:
        return None
    ref = peer[kind][index]
    frame = frames[index]
    scale = EV_TO_KCAL_MOL if units == "real" else 1.0
    e, f, w = got
    e, f, w = e / scale, f / scale, w / scale
    e_ref_ours = float(sum(reference[kind][z - 1] for z in frame["numbers"]))
    e_peer = ref["energy"] - ref["ref_energy"] + e_ref_ours
    rel_e = abs(e - e_peer) / abs(e_peer)
    fmax = float(np.abs(ref["forces"]).max())
    if tol[1] <= 1e-9:
        ok_f, dev_f = close(f, ref["forces"], tol[1])
    else:
        dev_f = float(np.abs(f - ref["forces"]).max())
        ok_f = dev_f <= tol[1] * max(1.0, fmax)
    w_peer = -np.array(ref["stress"]) * ref["volume"]
    dev_w = float(np.abs(w - w_peer).max() / np.abs(w_peer).max())
    check(rel_e <= tol[0], "%s: energy %.15g vs MatRIS %.15g (rel %.2e > %.0e)"
          % (label, e, e_peer, rel_e, tol[0]))
    check(ok_f, "%s: forces deviate by %.3g eV/A (tolerance %.0e)" % (label, dev_f, tol[1]))
    check(dev_w <= tol[2], "%s: virial deviates by %.2e of its largest component (-stress V)"
          % (label, dev_w))
    ref_rel = abs(ref["ref_energy"] - e_ref_ours) / abs(e_ref_ours)
    check(ref_rel <= 1e-6, "%s: MatRIS's reference energy %.10g vs the float64 sum %.10g"
          % (label, ref["ref_energy"], e_ref_ours))
    print("%-44s energy rel %.1e  force %.1e  virial %.1e  (|f| max %.2g, ref part %.1e)"
          % (label, rel_e, dev_f, dev_w, fmax, ref_rel), flush=True)
    return got


runs = [("small", i, u, nw, n) for i in range(3)
        for (u, nw, n) in (("metal", "on", 1), ("metal", "on", 2), ("metal", "on", 4),
                           ("metal", "off", 2), ("real", "on", 1))]
runs += [("default", 1, "metal", "on", 1), ("default", 2, "metal", "on", 1),
         ("default", 2, "metal", "on", 2)]
first = {}
for kind, i, units, newton, n in runs:
    label = "%s %s %s %d rank(s) newton %s" % (kind, frames[i]["name"], units, n, newton)
    got = compare(label, ours(models[kind], frames[i], units, newton, n, label=label), kind, i,
                  units)
    if n == 1 and units == "metal":
        first[(kind, i)] = got

# translation
base = first.get(("small", 0))
moved = ours(models["small"], water, shift=(1.3, -2.7, 0.4), label="translated")
if base is not None and moved is not None:
    de = abs(moved[0] - base[0]) / abs(base[0])
    df = float(np.abs(moved[1] - base[1]).max())
    check(de <= 1e-12 and df <= 1e-10, "translation changes energy (%.1e) or forces (%.1e)"
          % (de, df))
    print("%-44s energy rel %.1e  force %.1e" % ("small water translated", de, df))

# float32
compare("small float32 water metal 1 rank", ours(path("small32.pt"), water, label="float32"),
        "small", 0, tol=(1e-6, 1e-5, 2e-5))


# -- errors --------------------------------------------------------------------------------
def refused(label, proc_or_run, *words):
    out = proc_or_run.stdout + proc_or_run.stderr if hasattr(proc_or_run, "stderr") \
        else proc_or_run.output
    rc = proc_or_run.returncode if hasattr(proc_or_run, "returncode") else proc_or_run.rc
    ok = rc != 0 and all(w in out for w in words)
    check(ok, "%s: expected a failure naming %s, got rc %s:\n%s" % (label, words, rc, out[-1500:]))
    if ok:
        print("%-44s refused: %s" % (label, [l for l in out.splitlines() if words[0] in l][:1]))


damaged = path("damaged.pth.tar")
with open(path("small.pth.tar"), "rb") as fin, open(damaged, "wb") as fout:
    fout.write(fin.read()[:5000])
refused("damaged checkpoint", convert(damaged, path("x.pt"), expect_ok=False), "cannot be read")
other = path("other.pth.tar")
sh([PY, "-c", "import torch; torch.save({'model': {'w': torch.zeros(2)}}, %r)" % other], "save")
refused("not a MatRIS checkpoint", convert(other, path("x.pt"), expect_ok=False),
        "is not a MatRIS checkpoint")
neutral = dict(np.load(path("small.npz")))
meta = json.loads(str(neutral["__meta__"]))
meta["config"]["is_conservation"] = False
bad = dict(neutral, __meta__=np.array(json.dumps(meta)))
np.savez(path("direct.npz"), **bad)
refused("is_conservation False", convert(path("direct.npz"), path("x.pt"), expect_ok=False),
        "is_conservation")
meta["config"]["is_conservation"] = True
meta["config"]["norm_type"] = "batch"
np.savez(path("batch.npz"), **dict(neutral, __meta__=np.array(json.dumps(meta))))
refused("norm_type batch", convert(path("batch.npz"), path("x.pt"), expect_ok=False),
        "norm_type")
lack = {k: v for k, v in neutral.items() if k != "w/readout_norm.weight"}
np.savez(path("lack.npz"), **lack)
refused("missing weight", convert(path("lack.npz"), path("x.pt"), expect_ok=False),
        "readout_norm.weight")
data, names, _ = lammps_frame(water)
r = run_lammps(SCRIPT.format(units="metal", newton="on", model=models["small"], names="O Am"),
               files={"data.lmp": data})
refused("element beyond the embedding", r, "Am")
convert(path("small.npz"), path("few_slots.pt"), "--max-bonds-3body", "4")
r = run_lammps(SCRIPT.format(units="metal", newton="on", model=path("few_slots.pt"),
                             names=" ".join(names)),
               files={"data.lmp": data})
refused("more bonds than max_bonds_3body", r, "max_bonds_3body")

# -- NVE -----------------------------------------------------------------------------------
nve = SCRIPT.replace("run 0\n", "").format(units="metal", newton="on", model=models["small"],
                                           names=" ".join(names))    # types: 1 = H, 2 = O
nve = nve.replace("thermo_style custom step pe", "thermo_style custom step etotal pe")
nve += ("mass 1 1.008\nmass 2 15.999\nvelocity all create 300 4928 mom yes rot yes\n"
        "fix 1 all nve\ntimestep 0.00025\nthermo 10\nrun 40\n")
r = run_lammps(nve, files={"data.lmp": data}, timeout=900)
if check(r.rc == 0, "NVE run failed:\n%s" % r.output[-2000:]):
    et = np.array(r.thermo()["TotEng"])
    drift = float(np.abs(et - et[0]).max()) / len(water["numbers"])
    check(drift <= 2e-4, "NVE: total energy moves by %.2e eV/atom (> 2e-4)" % drift)
    print("%-44s max |E - E0| = %.2e eV/atom over %d steps" % ("NVE small water", drift, 40))

summary("test_matris")
