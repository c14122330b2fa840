"""pair_style aisci under MPI: a 3-layer toy model with triplets gives the same energy,
forces and virial at 1, 2 and 4 ranks, with two processor grids and newton on/off
(relative difference < 1e-10, float64). One rank uses the periodic graph; several ranks
(and 'graph ghost' on one rank) the ghost shell of 3 x 3.0 + skin, deeper than the
sub-domains at 4 ranks, so ghosts come from several swaps. Then 8 NVE steps with
re-neighbouring stay rank-independent and equal to Python on the final frame."""
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aisci_nn_toy as toy  # noqa: E402

toy.skip_without_torch_wrapper()
import aisci_testlib as T  # noqa: E402

d = toy.build_dir("mpi")
RC, RC3, BOX = 3.0, 2.5, 10.0
model = toy.ToyMP(ntypes=2, cutoff=RC, num_layers=3, cutoff_3body=RC3, seed=7)
model_path = toy.save(model, os.path.join(d, "toy3.pt"))
x, types = toy.random_frame(64, BOX, seed=11, rmin=1.1)
toy.write_data(os.path.join(d, "frame.data"), x, BOX, types + 1, 2)
frame = open(os.path.join(d, "frame.data")).read()
e_ref, f_ref, w_ref = toy.reference(model, x, BOX, types, RC, RC3)

MD = """run 0
velocity all create 2500 4928 loop geom
fix 1 all nve
neigh_modify every 1 delay 0 check yes
timestep 0.0005
run 8"""


def one(nprocs, newton="on", grid="", graph="auto"):
    extra = "" if not grid else "processors " + grid
    script = toy.frame_script(model_path, newton=newton, run=MD,
                              style_args="threads 1 graph " + graph).replace(
        "read_data", extra + "\nread_data")
    r = T.run_lammps(script, nprocs=nprocs, files={"frame.data": frame})
    tag = "np %d newton %s grid '%s' graph %s" % (nprocs, newton, grid, graph)
    if not T.check(r.rc == 0, tag + ": rc %d\n%s" % (r.rc, r.output[-2000:])):
        return None
    t = r.thermo()
    vol = t["Volume"][0]
    w0 = np.array([t["c_pv[%d]" % k][0] for k in range(1, 7)]) * vol / toy.NKTV2P["metal"]
    dmp = toy.read_dump(os.path.join(r.workdir, "f.dump"))
    # the dump's first snapshot is the run-0 frame
    lines = open(os.path.join(r.workdir, "f.dump")).read().split("ITEM: TIMESTEP")[1]
    rows = np.array([[float(v) for v in l.split()] for l in lines.splitlines()[9:] if l.strip()])
    f0 = rows[:, 5:8]
    return {"tag": tag, "e0": t["PotEng"][0], "w0": w0, "f0": f0,
            "e_end": t["PotEng"][-1], "x_end": np.stack([dmp["x"], dmp["y"], dmp["z"]], 1),
            "f_end": np.stack([dmp["fx"], dmp["fy"], dmp["fz"]], 1),
            "ghost": r.output}


base = one(1)
if base is None:
    T.summary("test_nn_mpi")
T.check(abs(base["e0"] - e_ref) < 1e-11 * abs(e_ref), "1 rank energy vs python")
T.check(np.abs(base["f0"] - f_ref).max() < 1e-10, "1 rank forces vs python: %.2e"
        % np.abs(base["f0"] - f_ref).max())
# between neighbor-list rebuilds the graph comes from the candidate edges of the last
# rebuild (cutoff + skin): forces must still equal a fresh evaluation in Python
e_end, f_end, _ = toy.reference(model, base["x_end"], BOX, types, RC, RC3)
T.check(abs(base["e_end"] - e_end) < 1e-9 * abs(e_end), "energy after MD vs python")
T.check(np.abs(base["f_end"] - f_end).max() < 1e-9, "forces after MD vs python: %.2e"
        % np.abs(base["f_end"] - f_end).max())
builds = int(re.findall(r"Neighbor list builds = (\d+)", base["ghost"])[-1])
T.check(0 < builds < 8, "MD had %d rebuilds: graphs both rebuilt and reused" % builds)


def rel(a, b):
    return np.abs(np.asarray(a) - np.asarray(b)).max() / max(np.abs(b).max(), 1e-300)


# one rank uses the periodic graph (no ghosts in the model); several ranks the ghost
# shell; "graph ghost" forces the ghost shell on one rank too
for nprocs, newton, grid, graph in [(1, "off", "", "ghost"), (2, "on", "", "auto"),
                                    (2, "off", "", "auto"), (4, "on", "", "auto"),
                                    (4, "off", "", "auto"), (4, "on", "1 1 4", "auto")]:
    r = one(nprocs, newton, grid, graph)
    if r is None:
        continue
    T.check("ghost atom cutoff = 9.5" in r["ghost"], r["tag"] + ": ghost shell 3 x 3.0 + 0.5")
    T.check(rel(r["e0"], base["e0"]) < 1e-10, r["tag"] + ": energy rel diff %.2e"
            % rel(r["e0"], base["e0"]))
    T.check(rel(r["f0"], base["f0"]) < 1e-10, r["tag"] + ": forces rel diff %.2e"
            % rel(r["f0"], base["f0"]))
    T.check(rel(r["w0"], base["w0"]) < 1e-10, r["tag"] + ": virial rel diff %.2e"
            % rel(r["w0"], base["w0"]))
    # 8 MD steps with re-neighbouring and atoms changing owner: round-off may grow a
    # little through the dynamics, so a looser bound.
    T.check(rel(r["x_end"], base["x_end"]) < 1e-9 and rel(r["f_end"], base["f_end"]) < 1e-8,
            r["tag"] + ": after 8 NVE steps: x rel diff %.2e, f rel diff %.2e"
            % (rel(r["x_end"], base["x_end"]), rel(r["f_end"], base["f_end"])))
    print("%s: energy %.2e forces %.2e virial %.2e | after MD x %.2e f %.2e"
          % (r["tag"], rel(r["e0"], base["e0"]), rel(r["f0"], base["f0"]),
             rel(r["w0"], base["w0"]), rel(r["x_end"], base["x_end"]),
             rel(r["f_end"], base["f_end"])), flush=True)

T.summary("test_nn_mpi")
