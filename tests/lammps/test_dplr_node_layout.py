"""kspace_style pppm/dplr ... layout node: one solver per node (node-local rank 0, on its
solve thread) does the FFT work of every rank of its node; the other ranks hand their
charge patches over. 64 water molecules with WCs, a toy short-range model, the DW model
water_dw.pt; 20 NVE steps. Per component |a - b| <= 1e-12 max(1, |b|) against overlap no
(layout rank) at the same rank count, at step 0 and after 20 steps (positions, forces,
energies, virial in eV), for
- 1, 2 and 4 ranks on one (real) node, overlap yes and no;
- 4 ranks in pretend nodes of 2 (AISCI_PPPM_RANKS_PER_NODE=2: the FFT across 2 solvers);
and the log states the layout; a bad AISCI_PPPM_RANKS_PER_NODE or layout value is a
clear error."""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aisci_nn_toy as toy  # noqa: E402
import aisci_testlib as T  # noqa: E402
import dplr_systems as S  # noqa: E402

toy.skip_without_torch_wrapper()

workdir = toy.build_dir("dplr_node_layout")
SR_TOY = toy.save(toy.ToyMP(ntypes=2, num_layers=1, cutoff=3.0, seed=11),
                  os.path.join(workdir, "toy_sr.pt"), override={"dplr_beta": "0.4"})
DATA = S.water_data(S.make_dplr_water_box(64, seed=5))

BODY = """group real type 1 2
velocity real create 300.0 991 mom yes rot no dist gaussian loop geom
fix nve real nve
timestep 0.0005
thermo 20
run 0
write_dump all custom first.dump id x y z fx fy fz modify sort id format float %.17g
run 20
write_dump all custom final.dump id x y z fx fy fz modify sort id format float %.17g
"""
TOL = 1e-12
NKTV2P_METAL = 1.6021765e6  # bar A^3 / eV (LAMMPS units metal)


def run(nprocs, overlap, layout, env=None):
    script = S.water_script(sr=SR_TOY, overlap=overlap, accuracy="1e-5", body=BODY,
                            kspace_extra="").replace(
        "overlap %s" % overlap, "overlap %s layout %s" % (overlap, layout))
    r = T.run_lammps(script, nprocs=nprocs, files={"water.data": DATA}, timeout=300, env=env)
    what = "%d ranks overlap %s layout %s%s" % (
        nprocs, overlap, layout, " pretend nodes of %s" % env["AISCI_PPPM_RANKS_PER_NODE"]
        if env else "")
    if not T.check(r.rc == 0, "%s failed:\n%s" % (what, r.output[-1500:])):
        return None
    T.check(("layout = %s" % layout) in r.logs[0], "%s: log states the layout" % what)
    out = [what]
    for name in ("first.dump", "final.dump"):
        d = toy.read_dump(os.path.join(r.workdir, name))
        out.append(np.concatenate([np.stack([d[k] for k in ("x", "y", "z")], 1).ravel(),
                                   np.stack([d[k] for k in ("fx", "fy", "fz")], 1).ravel()]))
    t = r.thermo()
    # the virial in energy units (W = P V / nktv2p, eV): the pressure in bar is the
    # virial times nktv2p / V ~ 800 here, which would scale the tolerance with the box
    for row in (0, -1):
        w = t["Volume"][row] / NKTV2P_METAL
        out.append(np.array([t["PotEng"][row], t["E_long"][row], t["f_dplr"][row]] +
                            [w * t["c_pv[%d]" % k][row] for k in range(1, 7)]))
    return out, r


def compare(res, ref):
    what = res[0]
    worst = 0.0
    for a, b, label in ((res[1], ref[1], "step 0 x/f"), (res[2], ref[2], "step 20 x/f"),
                        (res[3], ref[3], "step 0 energies/virial"),
                        (res[4], ref[4], "step 20 energies/virial")):
        rel = np.abs(a - b) / np.maximum(1.0, np.abs(b))
        err = np.max(rel)
        worst = max(worst, err)
        if err > TOL:
            k = int(np.argmax(rel))
            print("  %s %s: component %d: %.17g vs %.17g" % (what, label, k, a[k], b[k]))
        T.check(err <= TOL, "%s, %s: max |a - b| / max(1, |b|) = %.2e" % (what, label, err))
    print("%s: max |a - b| / max(1, |b|) = %.1e vs overlap no, layout rank" % (what, worst))


for nprocs in [int(v) for v in os.environ.get("NODE_TEST_NP", "1 2 4").split()]:
    ref = run(nprocs, "no", "rank")
    for overlap in ("yes", "no"):
        res = run(nprocs, overlap, "node")
        if ref and res:
            compare(res[0], ref[0])
    if nprocs == 4:
        res = run(4, "yes", "node", env={"AISCI_PPPM_RANKS_PER_NODE": "2"})
        if ref and res:
            compare(res[0], ref[0])
            T.check("layout = node (2 solver ranks" in res[1].logs[0],
                    "pretend nodes: the log names 2 solver ranks")

# errors
script = S.water_script(sr=SR_TOY, overlap="yes", body="run 0").replace(
    "overlap yes", "overlap yes layout nodes")
r = T.run_lammps(script, files={"water.data": DATA}, timeout=120)
T.check(r.rc != 0 and "layout" in r.output and "nodes" in r.output,
        "layout nodes is refused naming the value:\n%s" % r.output[-600:])
script = S.water_script(sr=SR_TOY, overlap="yes", body="run 0").replace(
    "overlap yes", "overlap yes layout node")
r = T.run_lammps(script, files={"water.data": DATA}, timeout=120,
                 env={"AISCI_PPPM_RANKS_PER_NODE": "two"})
T.check(r.rc != 0 and "ERROR: environment variable AISCI_PPPM_RANKS_PER_NODE = 'two' is not a "
        "positive integer (ranks per pretend node)" in r.output,
        "a bad AISCI_PPPM_RANKS_PER_NODE is refused naming the variable:\n%s" % r.output[-600:])

T.summary("test_dplr_node_layout")
