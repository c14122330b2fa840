"""compute aisci/cost as the weight of LAMMPS's own load balancer (docs/compute_aisci_cost.md,
docs/ringlb.md), for a 2-layer toy model with a three-body term (the case the ring cannot
handle) on a water slab with vacuum (192 atoms in the lower half of a box twice as tall
as wide), 4 ranks:

* the per-atom cost equals an independent count (1 rank and 4 ranks: a + b x edges within
  the cutoff + c x ordered pairs of edges within the 3-body cutoff, brute force in numpy);
* one-off rebalancing: the static `balance 1.0 shift z ... weight var` (brick,
  `processors 1 1 4`, costs frozen by fix store/state) and `fix balance 1000 1.0 rcb
  weight var w` (comm_style tiled) at the setup of a run: the cost max/mean of compute
  aisci/work falls from ~2 to <= 1.1; LAMMPS's own imbalance before/after equals compute
  aisci/work's (same weights); energy, forces, virial unchanged (1e-10);
* dynamic `fix balance 10 1.05 shift z 10 1.01 weight var w` from a fresh start (no ghost
  atoms yet at the first balancing) over 30 NVE steps, for the 2-layer model and a
  1-layer one: the trajectory equals the unbalanced one; on every step where the fix
  rebalanced (after the ghost-less first one) the true cost max/mean (compute aisci/work,
  after the exchange of atoms) equals the fix's own "after" figure within 0.02 and is
  <= 1.1. The cost at the end of the run is printed, not asserted: fix balance decides
  in pre_exchange, before atoms that drifted across a cut since the last reneighboring
  change rank, so a step where it sees 1.047 < 1.05 does not rebalance and the exchange
  that follows can leave 1.18 (docs/compute_aisci_cost.md). Model CPU times are printed
  only (no timing in tests: bench/ measures them);
* bad input: unknown keyword, missing value, bad number, negative weight, all weights 0,
  no pair_style aisci, each with its exact message."""
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

d = toy.build_dir("cost_balance")
RC, RC3 = 4.0, 2.5
# local_3body: the three-body sum enters after the layers, so that the receptive field is
# 2 x RC, within the ghost shell 2 x RC + skin (before the layers it would reach 2 RC + RC3)
deep = toy.save(toy.ToyMP(ntypes=2, cutoff=RC, num_layers=2, cutoff_3body=RC3, seed=8,
                          local_3body=True), os.path.join(d, "deep3.pt"))
one_layer = toy.save(toy.ToyMP(ntypes=2, cutoff=RC, num_layers=1, cutoff_3body=RC3, seed=9,
                               local_3body=True), os.path.join(d, "one3.pt"))
slab = make_water_slab(64, seed=3)
toy.write_data(os.path.join(d, "slab.data"), slab["positions"], slab["box"], slab["types"], 2)
frame = open(os.path.join(d, "slab.data")).read()
FILES = {"slab.data": frame}

HEAD = """units metal
atom_style atomic
boundary p p p
%s
read_data slab.data
pair_style aisci threads 1
pair_coeff * * %s O H
neighbor 0.5 bin
compute cost all aisci/cost
compute costw all aisci/cost atom 2 edge 0.5 triplet 0.25
compute work all aisci/work
variable w atom c_cost
compute pv all pressure NULL virial
thermo_modify format float %%.17g
dump d all custom 1 f.dump id type x y z fx fy fz c_cost c_costw
dump_modify d sort id format float %%.17g
"""
# aisci/work: [1] cost max/mean, [3] model CPU time max/mean, [4] its max, [5] its mean
THERMO = ("thermo_style custom step pe c_pv[1] c_pv[2] c_pv[3] c_pv[4] c_pv[5] c_pv[6] vol "
          "c_work[1] c_work[3] c_work[4] c_work[5]%s\nthermo_modify format float %%.17g\n")
# a dump writes one snapshot per time step: a second run 0 needs a dump of its own
REDUMP = """undump d
dump d2 all custom 1 f2.dump id type x y z fx fy fz c_cost c_costw
dump_modify d2 sort id format float %.17g
"""


def snapshots(workdir):
    """Every snapshot of f.dump (then f2.dump): list of arrays (rows sorted by id)."""
    text = []
    for name in ("f.dump", "f2.dump"):
        if os.path.exists(os.path.join(workdir, name)):
            text += open(os.path.join(workdir, name)).read().split("ITEM: TIMESTEP")[1:]
    return [np.array([[float(v) for v in l.split()] for l in b.splitlines()[9:] if l.strip()])
            for b in text]


def lammps(body, grid, tag, model=None):
    r = T.run_lammps(HEAD % (grid, model or deep) + body, nprocs=4, files=FILES, timeout=300)
    if not T.check(r.rc == 0, tag + ": rc %d\n%s" % (r.rc, r.output[-2500:])):
        return None, None, None
    return r, r.thermo(), snapshots(r.workdir)


def rel(a, b):
    return np.abs(np.asarray(a) - np.asarray(b)).max() / max(np.abs(b).max(), 1e-300)


def same_physics(t, k, snap, t0, k0, snap0, what, tol=1e-10):
    e = rel(t["PotEng"][k], t0["PotEng"][k0])
    w = rel([t["c_pv[%d]" % c][k] for c in range(1, 7)], [t0["c_pv[%d]" % c][k0] for c in range(1, 7)])
    f = rel(snap[:, 5:8], snap0[:, 5:8])
    x = rel(snap[:, 2:5], snap0[:, 2:5])
    T.check(max(e, w, f, x) < tol, "%s: rel diff energy %.1e virial %.1e forces %.1e x %.1e"
            % (what, e, w, f, x))
    return "energy %.1e, virial %.1e, forces %.1e, x %.1e" % (e, w, f, x)


# ---- 1. the per-atom cost against a brute-force count (1 and 4 ranks) -------------------
x, box = slab["positions"], np.asarray(slab["box"])
ei, _, trip = toy.periodic_graph(np.mod(x, box), box, RC, RC3)
edges = np.bincount(ei[0], minlength=len(x))
triplets = np.bincount(ei[0][trip[:, 0]], minlength=len(x)) if len(trip) else np.zeros(len(x))
expect = 1.0 + edges + triplets
expect_w = 2.0 + 0.5 * edges + 0.25 * triplets
single = None
for nprocs, grid in ((1, ""), (4, "processors 1 1 4")):
    r = T.run_lammps(HEAD % (grid, deep) + THERMO % "" + "run 0\n", nprocs=nprocs, files=FILES)
    if T.check(r.rc == 0, "cost np %d: rc %d\n%s" % (nprocs, r.rc, r.output[-2500:])):
        s = snapshots(r.workdir)[0]
        if single is None:
            single = (r.thermo(), s)
        else:
            print("4 ranks vs 1: " + same_physics(r.thermo(), 0, s, single[0], 0, single[1],
                                                  "4 ranks vs 1"))
        T.check(np.array_equal(s[:, 8], expect) and np.allclose(s[:, 9], expect_w, rtol=1e-14),
                "np %d: per-atom cost differs from the brute-force count in %d / %d atoms"
                % (nprocs, np.count_nonzero(s[:, 8] != expect), len(expect)))
print("per-atom cost (1 + edges + triplets): min %g, mean %.1f, max %g over %d atoms "
      "(%.1f edges, %.1f triplets per atom)" % (expect.min(), expect.mean(), expect.max(),
                                                 len(expect), edges.mean(), triplets.mean()))

# ---- 2. one-off rebalancing between runs -------------------------------------------------
# static balance: the command re-initialises LAMMPS, after which a compute is "not current",
# so the costs are frozen by fix store/state (in the setup of a run) (docs/compute_aisci_cost.md);
# fix balance with a long period balances at the setup of the run and reads c_cost directly
STATIC = """fix c0 all store/state 0 c_cost
run 0 post no
variable w0 atom f_c0
balance 1.0 shift z 20 1.0 weight var w0
"""
for name, grid, cmds, thermo in (
        ("balance shift z", "processors 1 1 4", STATIC, ""),
        ("fix balance rcb", "comm_style tiled",
         "run 0 post no\nfix bal all balance 1000 1.0 rcb weight var w\n", " f_bal[3] f_bal")):
    body = THERMO % "" + cmds + REDUMP + THERMO % thermo + "run 0\n"
    r, t, snaps = lammps(body, grid, name)
    if r is None:
        continue
    before, after = t["c_work[1]"][0], t["c_work[1]"][1]
    if thermo:
        lb_before, lb_after = t["f_bal[3]"][-1], t["f_bal"][-1]
    else:
        m = re.search(r"initial/final imbalance factor\s+= (\S+) (\S+)", r.output)
        if not T.check(m is not None, name + ": imbalance factors in the log\n" + r.output[-2000:]):
            continue
        lb_before, lb_after = float(m.group(1)), float(m.group(2))
    T.check(before > 1.8 and after <= 1.1, "%s: cost max/mean %.4f -> %.4f" % (name, before, after))
    # LAMMPS prints its factors with 6 significant digits
    T.check(abs(lb_before - before) < 2e-5 * before and abs(lb_after - after) < 2e-5 * after,
            "%s: LAMMPS's imbalance %.6f -> %.6f, compute aisci/work's %.6f -> %.6f"
            % (name, lb_before, lb_after, before, after))
    print("%s: cost max/mean %.4f -> %.4f (LAMMPS's imbalance factor: %.4f -> %.4f); "
          "balanced vs not: %s" % (name, before, after, lb_before, lb_after,
                                   same_physics(t, 1, snaps[-1], t, 0, snaps[0], name)),
          flush=True)

# ---- 3. dynamic balancing during MD from a fresh start ----------------------------------
# The work is the model CPU time per rank. A one-cutoff model evaluates the owned atoms'
# edges only, so it follows the cost and must fall; a 2-layer model also evaluates every
# ghost atom's edges (the widened ghost shell), work that thinner sub-domains increase,
# so its numbers are printed only (docs/compute_aisci_cost.md).
MD = """velocity all create 300 4928 loop geom
fix 1 all nve
timestep 0.0005
thermo 10
run 30
"""
for label, model in (("1-layer", one_layer), ("2-layer", deep)):
    runs = {}
    for name, fix in (("unbalanced", ""),
                      ("fix balance", "fix bal all balance 10 1.05 shift z 10 1.01 weight var w")):
        extra = " f_bal[3] f_bal c_work[9]" if fix else " c_work[9]"
        runs[name] = lammps(fix + "\n" + THERMO % extra + MD, "processors 1 1 4",
                            label + " " + name, model)
    if runs["unbalanced"][0] is None or runs["fix balance"][0] is None:
        continue
    (_, t0, s0), (_, t1, s1) = runs["unbalanced"], runs["fix balance"]
    print("%s, 30 MD steps, balanced vs not: %s" % (
        label, same_physics(t1, -1, s1[-1], t0, -1, s0[-1], label + " MD", tol=1e-8)))
    T.check(min(t0["c_work[1]"]) > 1.8, "%s MD: unbalanced cost max/mean stays > 1.8, min %.4f"
            % (label, min(t0["c_work[1]"])))
    T.check(t1["f_bal[3]"][0] > 1.8 and t1["f_bal"][0] <= 1.1,
            "%s MD: first balancing (no ghosts yet) %.4f -> %.4f"
            % (label, t1["f_bal[3]"][0], t1["f_bal"][0]))
    # thermo every 10 steps = the fix's period: a row whose (before, after) pair differs
    # from the previous row's is a step on which the fix rebalanced
    rebalanced = [k for k in range(1, len(t1["Step"]))
                  if (t1["f_bal[3]"][k], t1["f_bal"][k]) != (t1["f_bal[3]"][k - 1], t1["f_bal"][k - 1])]
    T.check(len(rebalanced) >= 1, "%s MD: fix balance rebalanced during the run" % label)
    for k in rebalanced:
        true, own = t1["c_work[1]"][k], t1["f_bal"][k]
        T.check(true <= 1.1 and abs(true - own) <= 0.02,
                "%s MD step %d: true cost max/mean %.4f after rebalancing, the fix's own %.4f"
                % (label, int(t1["Step"][k]), true, own))
    cpu0, cpu1 = t0["c_work[3]"][-1], t1["c_work[3]"][-1]
    print("%s MD: rebalanced at steps %s: true cost max/mean %s, fix balance's own %s"
          % (label, [int(t1["Step"][k]) for k in rebalanced],
             ["%.4f" % t1["c_work[1]"][k] for k in rebalanced],
             ["%.4f" % t1["f_bal"][k] for k in rebalanced]), flush=True)
    print("%s MD: cost max/mean at step 30: %.4f without, %.4f with fix balance (its first "
          "balancing at step 0: %.4f -> %.4f, %.4f with the ghosts); whole graph (ghost centres included) max/mean "
          "%.3f -> %.3f; model CPU time over the 31 force calls: max/mean %.3f -> %.3f, max "
          "%.3f s -> %.3f s, mean %.3f s -> %.3f s"
          % (label, t0["c_work[1]"][-1], t1["c_work[1]"][-1], t1["f_bal[3]"][0], t1["f_bal"][0],
             t1["c_work[1]"][0], t0["c_work[9]"][-1], t1["c_work[9]"][-1], cpu0, cpu1, t0["c_work[4]"][-1],
             t1["c_work[4]"][-1], t0["c_work[5]"][-1], t1["c_work[5]"][-1]), flush=True)

# ---- 4. bad input: exact messages --------------------------------------------------------
BAD = """units metal
atom_style atomic
read_data slab.data
%s
%s
run 0
"""
PAIR = "pair_style aisci threads 1\npair_coeff * * %s O H" % deep
cases = [
    ("unknown keyword", PAIR, "compute c all aisci/cost neighbor 1",
     "compute aisci/cost: unknown keyword 'neighbor' (expected atom, edge or triplet)"),
    ("missing value", PAIR, "compute c all aisci/cost edge",
     "compute aisci/cost: keyword edge needs 1 value"),
    ("bad number", PAIR, "compute c all aisci/work triplet many",
     "compute aisci/work: triplet expects a number, got 'many'"),
    ("negative weight", PAIR, "compute c all aisci/cost atom -1",
     "compute aisci/cost: atom weight must be >= 0, got -1"),
    ("all weights 0", PAIR, "compute c all aisci/cost atom 0 edge 0 triplet 0",
     "compute aisci/cost: the atom, edge and triplet weights are all 0"),
    ("no pair_style aisci", "pair_style zero 4.0\npair_coeff * *", "compute c all aisci/cost",
     "compute aisci/cost requires pair_style aisci (alone or in a hybrid style)"),
]
for what, pair, compute, message in cases:
    r = T.run_lammps(BAD % (pair, compute), files=FILES)
    T.check(r.rc != 0 and "ERROR: " + message in r.output,
            "%s: rc %d, expected '%s' in:\n%s" % (what, r.rc, message, r.output[-1200:]))
T.summary("test_nn_cost_balance")
