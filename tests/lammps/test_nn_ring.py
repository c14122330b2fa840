"""pair_style aisci balance ring: on a water slab with vacuum (192 atoms in the lower half
of a box twice as tall as wide, `processors 1 1 N`, so half of the ranks own no atoms),
the ring moves atomic environments between ranks and the results equal the unbalanced
run to rounding (relative difference < 1e-10, float64): energy, forces, global virial,
per-atom energies and virials (and, in runs without per-atom outputs, energy and global
virial), at step 0 and after 8 NVE steps with re-neighbouring
(re-planning), at 4 ranks (newton on and off) and 2 ranks, for a 1-layer toy model
without triplets and one with a local three-body term. The log line of the plan gives
cost max/mean before ~2 and after <= 1.05; compute aisci/work reports the same numbers.
Bad input: a multi-layer model, a bad or negative tolerance, a missing value, an
unknown balance value, each with its exact message."""
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aisci_nn_toy as toy  # noqa: E402

toy.skip_without_torch_wrapper()
import aisci_testlib as T  # noqa: E402

sys.path.insert(0, T.SOURCE_DIR)
from potentials.data.water_box import make_water_slab  # noqa: E402

d = toy.build_dir("ring")
RC, RC3 = 4.0, 2.5
models = {
    "pair": toy.save(toy.ToyMP(ntypes=2, cutoff=RC, num_layers=1, seed=5),
                     os.path.join(d, "ring_pair.pt")),
    "3body": toy.save(toy.ToyMP(ntypes=2, cutoff=RC, num_layers=1, cutoff_3body=RC3, seed=6,
                                local_3body=True), os.path.join(d, "ring_3body.pt")),
}
deep = toy.save(toy.ToyMP(ntypes=2, cutoff=RC, num_layers=2, seed=7), os.path.join(d, "deep.pt"))
slab = make_water_slab(64, seed=3)
toy.write_data(os.path.join(d, "slab.data"), slab["positions"], slab["box"], slab["types"], 2)
frame = open(os.path.join(d, "slab.data")).read()

MD = """run 0
velocity all create 2500 4928 loop geom
fix 1 all nve
neigh_modify every 1 delay 0 check yes
timestep 0.0005
run 8"""


def one(model, nprocs, newton="on", balance="", extra_run=MD):
    grid = "processors 1 1 %d\n" % nprocs if nprocs > 1 else ""
    style = "threads 1" + (" balance " + balance if balance else "")
    # compute aisci/work: [1] cost max/mean, [2] after the ring
    extra = """compute cost all aisci/work
thermo_style custom step pe c_spe c_pv[1] c_pv[2] c_pv[3] c_pv[4] c_pv[5] c_pv[6] &
  c_ssa[1] c_ssa[2] c_ssa[3] c_ssa[4] c_ssa[5] c_ssa[6] vol c_cost[1] c_cost[2]
thermo_modify format float %.17g"""
    script = toy.frame_script(models[model], newton=newton, run=extra_run, style_args=style,
                              data="slab.data", extra=extra).replace("read_data",
                                                                     grid + "read_data")
    r = T.run_lammps(script, nprocs=nprocs, files={"slab.data": frame}, timeout=300)
    tag = "%s np %d newton %s balance '%s'" % (model, nprocs, newton, balance)
    if not T.check(r.rc == 0, tag + ": rc %d\n%s" % (r.rc, r.output[-2500:])):
        return None
    t = r.thermo()
    vol = t["Volume"][0]
    text = open(os.path.join(r.workdir, "f.dump")).read().split("ITEM: TIMESTEP")
    snaps = []
    for block in (text[1], text[-1]):
        rows = np.array([[float(v) for v in l.split()] for l in block.splitlines()[9:] if l.strip()])
        snaps.append(rows)
    res = {"tag": tag, "out": r.output, "t": t}
    for name, k, rows in (("0", 0, snaps[0]), ("end", -1, snaps[1])):
        res["e" + name] = t["PotEng"][k]
        res["w" + name] = np.array([t["c_pv[%d]" % c][k] for c in range(1, 7)]) * vol
        res["x" + name] = rows[:, 2:5]
        res["f" + name] = rows[:, 5:8]
        res["pea" + name] = rows[:, 8]
        res["sa" + name] = rows[:, 9:15]
    return res


def rel(a, b):
    return np.abs(np.asarray(a) - np.asarray(b)).max() / max(np.abs(b).max(), 1e-300)


def compare(r, base, when, tol=1e-10):
    parts = []
    for key in ("e", "f", "w", "pea", "sa") + (("x",) if when == "end" else ()):
        err = rel(r[key + when], base[key + when])
        parts.append("%s %.1e" % (key, err))
        T.check(err < tol, "%s vs %s at %s: %s rel diff %.2e" % (r["tag"], base["tag"], when, key, err))
    return ", ".join(parts)


for model in models:
    base1 = one(model, 1)
    base4 = one(model, 4)
    if base1 is None or base4 is None:
        continue
    print("%s: unbalanced 4 ranks vs 1 rank: step 0: %s" % (model, compare(base4, base1, "0")))
    for nprocs, newton in [(4, "on"), (4, "off"), (2, "on")]:
        r = one(model, nprocs, newton, "ring 0.05")
        if r is None:
            continue
        m = re.search(r"balance ring: (\d+) ranks, cost \(1 \+ edges \+ triplets\) max/mean "
                      r"([0-9.]+) -> ([0-9.]+) \(tolerance 0.05\), (\d+) atoms computed on "
                      r"another rank", r["out"])
        if T.check(m is not None, r["tag"] + ": balance statistics in the log"):
            before, after, moved = float(m.group(2)), float(m.group(3)), int(m.group(4))
            T.check(int(m.group(1)) == nprocs and before > 1.8 and after <= 1.05 and moved > 0,
                    r["tag"] + ": cost max/mean %.4f -> %.4f, %d moved" % (before, after, moved))
            c1, c2 = r["t"]["c_cost[1]"][0], r["t"]["c_cost[2]"][0]
            T.check(abs(c1 - before) < 1e-3 and abs(c2 - after) < 1e-3,
                    r["tag"] + ": compute aisci/work gives %.4f -> %.4f" % (c1, c2))
            print("%s: cost max/mean %.4f -> %.4f, %d atoms moved" % (r["tag"], before, after, moved))
        builds = int(re.findall(r"Neighbor list builds = (\d+)", r["out"])[-1])
        T.check(builds > 0, r["tag"] + ": the MD re-neighbours (re-plans): %d builds" % builds)
        ref = base4 if nprocs == 4 else base1
        print("%s vs %s: step 0: %s" % (r["tag"], ref["tag"], compare(r, ref, "0")))
        # 8 MD steps: rounding may grow a little through the dynamics
        print("   after 8 steps: %s" % compare(r, ref, "end", tol=1e-8), flush=True)

# without per-atom outputs: the ring then returns the item virial only (thermo steps)
# or no virial at all (the other steps); energy and pressure after 8 steps unchanged
GLOBAL_ONLY = """units metal
atom_style atomic
boundary p p p
processors 1 1 4
read_data slab.data
pair_style aisci threads 1 %s
pair_coeff * * %s O H
neighbor 0.5 bin
compute pv all pressure NULL virial
thermo_style custom step pe c_pv[1] c_pv[2] c_pv[3] c_pv[4] c_pv[5] c_pv[6]
thermo_modify format float %%.17g
thermo 4
""" + MD + "\n"
for model in models:
    got = []
    for balance in ("", "balance ring 0.05"):
        r = T.run_lammps(GLOBAL_ONLY % (balance, models[model]), nprocs=4,
                         files={"slab.data": frame}, timeout=300)
        if T.check(r.rc == 0, "%s global only '%s': rc %d\n%s" % (model, balance, r.rc, r.output[-2000:])):
            t = r.thermo()
            got.append(np.array([t[c] for c in ["PotEng"] + ["c_pv[%d]" % k for k in range(1, 7)]]))
    if len(got) == 2:
        err = np.abs(got[1] - got[0]).max() / np.abs(got[0]).max()
        T.check(err < 1e-10, "%s global only: ring vs off rel diff %.2e" % (model, err))
        print("%s, no per-atom outputs, 8 steps, thermo every 4: ring vs off: energy and "
              "virial rel diff %.1e" % (model, err))

# bad input: exact messages
BAD = """units metal
atom_style atomic
read_data slab.data
pair_style aisci %s
pair_coeff * * %s O H
run 0
"""
cases = [
    ("multi-layer model", "balance ring 0.05", deep,
     "pair_style aisci: balance ring needs a one-cutoff model (num_layers = 1), but model file "
     "'%s' has num_layers = 2" % deep),
    ("missing tolerance", "balance ring", models["pair"],
     "pair_style aisci: balance ring needs a tolerance value (e.g. balance ring 0.05)"),
    ("missing value", "balance", models["pair"], "pair_style aisci: keyword balance needs 1 value"),
    ("bad tolerance", "balance ring tight", models["pair"],
     "pair_style aisci: balance ring tolerance expects a number, got 'tight'"),
    ("negative tolerance", "balance ring -0.1", models["pair"],
     "pair_style aisci: balance ring tolerance must be >= 0, got -0.1"),
    ("unknown value", "balance spiral 0.05", models["pair"],
     "pair_style aisci: unknown balance value 'spiral' (expected one of: off, ring)"),
]
for what, args, model, message in cases:
    r = T.run_lammps(BAD % (args, model), files={"slab.data": frame})
    T.check(r.rc != 0 and "ERROR: " + message in r.output,
            "%s: rc %d, expected '%s' in:\n%s" % (what, r.rc, message, r.output[-1200:]))
# one rank: nothing to balance, said once; 'balance off' after 'ring' goes back
r = T.run_lammps(BAD % ("balance ring 0.05", models["pair"]) +
                 "pair_style aisci balance off\nrun 0\n", files={"slab.data": frame})
T.check(r.rc == 0 and r.output.count("balance ring: one MPI rank, nothing to balance") == 1,
        "one rank: " + r.output[-1200:])
T.summary("test_nn_ring")
