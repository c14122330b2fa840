"""pair_style aisci with ghost-feature exchange (ghost exchange): a 6-layer MatRIS-style
model (random weights, float64, cutoff 3 A, exported with ghost exchange) gives the same
energy, forces, virial, per-atom energies and per-atom virials (relative 1e-10) as

  - the model in Python on the periodic graph (the reference),
  - 1 rank (periodic graph, no ghosts), and 1 rank with ghosts (graph ghost: exchange
    with the rank's own periodic images),
  - the widened ghost shell (ghost widen: 6 x 3 A + skin = 18.5 A of ghosts, deeper than
    the box, so ghosts come from several swaps),

at 1, 2 and 4 ranks, newton on and off. Then: a slab with empty ranks (ranks without
owned atoms, or without edges, still take part in every exchange), 6 NVE steps with
re-neighbouring at 4 ranks, and a 3-layer DPA3-style model at 2 ranks. The peak RSS per
rank of exchange and widened shell is printed (the memory figure of docs/scaling.md)."""
import os
import re
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aisci_nn_toy as toy  # noqa: E402

toy.skip_without_torch_wrapper()
import aisci_testlib as T  # noqa: E402

sys.path.insert(0, T.SOURCE_DIR)
from potentials.common.export import model_metadata, save_model  # noqa: E402
from potentials.common.metadata import state_dict_checksum  # noqa: E402
from potentials.dpa3.model import Dpa3Model  # noqa: E402
from potentials.matris.model import MatrisModel  # noqa: E402

d = toy.build_dir("exchange")
RC, RC3, BOX = 3.0, 2.0, 10.0


def export(cls, architecture, path, seed, **config):
    """A random-weight model with ghost exchange, saved as a contract-v1 file."""
    torch.manual_seed(seed)
    model = cls(ghost_exchange=True, **config).to(torch.float64)
    with torch.no_grad():
        model.pair.weight.normal_(0.0, 0.3)    # zero at start: give the pair term weight
    scripted = torch.jit.script(model)
    meta = model_metadata(architecture, config, ["O", "H"], "float64",
                          state_dict_checksum(scripted), {"ghost_exchange": 1})
    save_model(scripted, path, meta)
    return model, path


matris, matris_path = export(MatrisModel, "matris", os.path.join(d, "matris6.pt"), 5,
                             num_types=2, cutoff=RC, cutoff_3body=RC3, num_layers=6,
                             channels=16, num_radial=6, lmax=2)

# /usr/bin/time reports each rank's peak RSS (kB) on stderr
launcher = os.path.join(d, "lmp_time.sh")
with open(launcher, "w") as f:
    f.write('#!/bin/sh\nexec /usr/bin/time -f "AISCI_PEAK_RSS_KB %%M" %s "$@"\n' % T.LMP)
os.chmod(launcher, 0o755)
have_time = os.access("/usr/bin/time", os.X_OK)


def rel(a, b):
    return np.abs(np.asarray(a) - np.asarray(b)).max() / max(np.abs(b).max(), 1e-300)


def run(model_path, frame, nprocs, ghost="auto", graph="auto", newton="on", grid="",
        run_cmd="run 0"):
    extra = "processors " + grid if grid else ""
    script = toy.frame_script(model_path, newton=newton, run=run_cmd,
                              style_args="threads 1 ghost %s graph %s" % (ghost, graph))
    script = script.replace("read_data", extra + "\nread_data")
    r = T.run_lammps(script, nprocs=nprocs, files={"frame.data": frame},
                     exe=launcher if have_time else None)
    tag = "np %d ghost %s graph %s newton %s %s" % (nprocs, ghost, graph, newton, grid)
    if not T.check(r.rc == 0, tag + ": rc %d\n%s" % (r.rc, r.output[-2500:])):
        return None
    e, w, _, _, _ = toy.thermo_results(r)
    snaps = open(os.path.join(r.workdir, "f.dump")).read().split("ITEM: TIMESTEP")[1:]
    first = np.array([[float(v) for v in l.split()] for l in snaps[0].splitlines()[9:]
                      if l.strip()])
    last = toy.read_dump(os.path.join(r.workdir, "f.dump"))
    rss = [int(v) / 1024.0 for v in re.findall(r"AISCI_PEAK_RSS_KB (\d+)", r.output)]
    shell = re.findall(r"ghost atom cutoff = ([0-9.]+)", r.output)
    return {"tag": tag, "e": e, "w": w, "f": first[:, 5:8], "pea": first[:, 8],
            "pv": first[:, 9:15], "x_end": np.stack([last["x"], last["y"], last["z"]], 1),
            "e_end": r.thermo()["PotEng"][-1], "rss": rss, "shell": shell[-1] if shell else "",
            "log": r.output}


def compare(r, ref, what, tol=1e-10):
    if r is None or ref is None:
        return
    errs = {"energy": rel(r["e"], ref["e"]), "forces": rel(r["f"], ref["f"]),
            "virial": rel(r["w"], ref["w"]), "per-atom energy": rel(r["pea"], ref["pea"]),
            "per-atom virial": rel(r["pv"], ref["pv"])}
    for k, v in errs.items():
        T.check(v < tol, "%s vs %s: %s rel diff %.2e" % (r["tag"], what, k, v))
    print("%-48s vs %-10s energy %.1e forces %.1e virial %.1e pe/atom %.1e pv/atom %.1e"
          % (r["tag"], what, *errs.values()), flush=True)


# --- 1. dense random frame, 64 atoms ------------------------------------------------------
x, types = toy.random_frame(64, BOX, seed=11, rmin=1.1)
toy.write_data(os.path.join(d, "frame.data"), x, BOX, types + 1, 2)
frame = open(os.path.join(d, "frame.data")).read()
e_py, f_py, w_py = toy.reference(matris, x, BOX, types, RC, RC3)

base = run(matris_path, frame, 1)
if base is None:
    T.summary("test_nn_exchange")
T.check(rel(base["e"], e_py) < 1e-10 and rel(base["f"], f_py) < 1e-10
        and rel(base["w"], w_py) < 1e-10,
        "1 rank vs Python: energy %.2e forces %.2e virial %.2e"
        % (rel(base["e"], e_py), rel(base["f"], f_py), rel(base["w"], w_py)))
print("1 rank periodic vs Python: energy %.1e forces %.1e virial %.1e"
      % (rel(base["e"], e_py), rel(base["f"], f_py), rel(base["w"], w_py)))

memory = []
for nprocs, newton, graph in [(1, "off", "ghost"), (2, "on", "auto"), (2, "off", "auto"),
                              (4, "on", "auto"), (4, "off", "auto")]:
    ex = run(matris_path, frame, nprocs, "exchange", graph, newton)
    if ex is None:
        continue
    T.check(ex["shell"] == "3.5" and "ghost exchange of features" in ex["log"],
            ex["tag"] + ": ghost shell one cutoff + skin (3.5), got " + ex["shell"])
    compare(ex, base, "1 rank")
    if newton == "on" or nprocs == 1:
        wd = run(matris_path, frame, nprocs, "widen", graph, newton)
        if wd is None:
            continue
        T.check(wd["shell"] == "18.5", wd["tag"] + ": widened shell 6 x 3 + 0.5, got "
                + wd["shell"])
        compare(ex, wd, "widened")
        memory.append((nprocs, ex["rss"], wd["rss"]))

# --- 2. slab: ranks without atoms or without edges ---------------------------------------
# 40 atoms in x < 4.5 of a 12 A box on a 4 x 1 x 1 grid (3 A slices): the rank of
# [6, 9) owns no atom but holds ghosts, the one of [9, 12) owns none either.
xs, ts = toy.random_frame(160, 12.0, seed=3, rmin=1.1)
keep = xs[:, 0] < 4.5
xs, ts = xs[keep][:40], ts[keep][:40]
toy.write_data(os.path.join(d, "slab.data"), xs, 12.0, ts + 1, 2)
slab = open(os.path.join(d, "slab.data")).read()
sb = run(matris_path, slab, 1)
for newton in ("on", "off"):
    compare(run(matris_path, slab, 4, "exchange", newton=newton, grid="4 1 1"), sb,
            "1 rank (slab)")

# --- 3. dynamics: 6 NVE steps, atoms move and change owner ------------------------------
MD = """run 0
velocity all create 3000 4928 loop geom
fix 1 all nve
neigh_modify every 1 delay 0 check yes
timestep 0.0005
run 6"""
m1 = run(matris_path, frame, 1, run_cmd=MD)
m4 = run(matris_path, frame, 4, "exchange", run_cmd=MD)
if m1 and m4:
    T.check(rel(m4["x_end"], m1["x_end"]) < 1e-10 and rel(m4["e_end"], m1["e_end"]) < 1e-9,
            "after 6 NVE steps, 4 ranks exchange vs 1 rank: x %.2e, energy %.2e"
            % (rel(m4["x_end"], m1["x_end"]), rel(m4["e_end"], m1["e_end"])))
    builds = re.findall(r"Neighbor list builds = (\d+)", m4["log"])
    T.check(builds and int(builds[-1]) > 0, "MD re-neighboured (%s builds)" % builds)
    print("after 6 NVE steps: x %.1e energy %.1e" % (rel(m4["x_end"], m1["x_end"]),
                                                       rel(m4["e_end"], m1["e_end"])))

# --- 4. DPA3-style model, 3 layers -------------------------------------------------------
dpa3, dpa3_path = export(Dpa3Model, "dpa3", os.path.join(d, "dpa3_3.pt"), 9, num_types=2,
                         cutoff=RC, cutoff_3body=RC3, num_layers=3, channels=12,
                         angle_channels=8, num_radial=6, lmax=2)
d1 = run(dpa3_path, frame, 1)
e_d, f_d, _ = toy.reference(dpa3, x, BOX, types, RC, RC3)
if d1:
    T.check(rel(d1["e"], e_d) < 1e-10 and rel(d1["f"], f_d) < 1e-10, "dpa3 1 rank vs Python")
for ghost in ("exchange", "widen"):
    compare(run(dpa3_path, frame, 2, ghost), d1, "1 rank (dpa3)")

print("peak RSS per rank, MB (6-layer model, 64 atoms, exchange vs widened shell):")
for nprocs, rx, rw in memory:
    print("  %d rank(s): exchange %s | widened %s" % (
        nprocs, " ".join("%.0f" % v for v in rx), " ".join("%.0f" % v for v in rw)))
    if rx and rw:
        T.check(max(rx) < max(rw), "%d rank(s): exchange uses less memory than widened"
                % nprocs)
T.summary("test_nn_exchange")
