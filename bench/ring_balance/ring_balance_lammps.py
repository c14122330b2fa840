#!/usr/bin/python3
"""bench/ring_balance, LAMMPS level: pair_style aisci with and without `balance ring` on a
water slab with vacuum, in one lmp-aisci run per rank count.

System: make_water_slab (potentials/data/water_box.py): N water molecules at 1 g/cm3
filling the lower half of a box twice as tall as wide, `processors 1 1 R`, so that the
upper half of the ranks own (almost) no atoms. NVE from 300 K, `neigh_modify every 1
check yes` (re-neighbouring, hence re-planning, happens during the runs).

Model (default): a 1-layer MatRIS-style network, the first message-passing layer of the
shipped potentials/models/water_matris.pt (the second dropped, same embedding, radial
basis, readout and pair term; cutoff 4.5 A, three-body attention to 3.0 A, 32 channels),
exported through potentials/common/export.py. A 1-layer model is what the ring needs;
this one is a truncation, not a trained 1-layer model: its cost per atom is the
architecture's, its energies are not water's (the runs are short enough to stay stable).
--model takes any other num_layers = 1 model file.

One lmp-aisci run per rank count: a warm-up run, then --rounds pairs of runs of --steps
steps, alternately without (`pair_style aisci threads 1`) and with the ring
(`... balance ring TOL`); the pair style keeps its model between them. compute
aisci/work gives per run: cost (1 + edges + triplets) max/mean before and after the
plan, the model CPU time of every rank (CLOCK_PROCESS_CPUTIME_ID around the model calls:
the work), and the largest exchange wall time. The step time is LAMMPS's Loop time per
step; the best of the rounds is reported for each mode, with the ratio off/ring.

On a machine with fewer idle cores than ranks (this project's 2-core machine at 4
ranks), two ranks share a core and the step time cannot improve: the work is the same,
only its distribution changes. The per-rank model CPU time is then the measurement that
carries over: on dedicated cores the model part of a step lasts as long as the busiest
rank's. At 2 ranks on 2 idle cores the step time itself shows the gain.

Usage:
  bench/ring_balance/ring_balance_lammps.py BUILD_DIR [--ranks 2 4] [--molecules 216]
      [--steps 20] [--rounds 2] [--tolerance 0.05] [--model FILE] [--mpiexec CMD]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, SOURCE)
sys.path.insert(0, os.path.join(SOURCE, "scripts"))
sys.path.insert(0, os.path.join(SOURCE, "tests", "lammps"))

import aisci_run  # noqa: E402


def make_one_layer_matris(path):
    """The first layer of water_matris.pt as a 1-layer model file (see the docstring)."""
    import torch

    from potentials.common.export import export_checkpoint
    from potentials.common.metadata import load_model
    from potentials.matris.model import build

    shipped, meta = load_model(os.path.join(SOURCE, "potentials", "models", "water_matris.pt"))
    sd = shipped.state_dict()
    config = {"num_types": len(meta["type_names"]), "cutoff": meta["cutoff"],
              "cutoff_3body": meta["cutoff_3body"], "num_layers": 1,
              "channels": sd["embedding.weight"].shape[1], "num_radial": sd["rbf.freq"].shape[0],
              "lmax": int(shipped.lmax),
              "neighbor_norm": 1.0 / float(getattr(shipped.layers, "0").inv_neighbor_norm)}
    model = build(config).to(torch.float64)
    keep = {k: v for k, v in sd.items() if not k.startswith("layers.") or k.startswith("layers.0.")}
    model.load_state_dict(keep)
    ckpt = path + ".ckpt"
    torch.save({"architecture": "matris", "config": config, "state_dict": model.state_dict(),
                "type_names": meta["type_names"]}, ckpt)
    export_checkpoint(ckpt, path, "float64", description=(
        "bench/ring_balance: layer 1 of water_matris.pt alone (num_layers = 1), for timing"))
    os.remove(ckpt)
    return config


SCRIPT = """units metal
atom_style atomic
boundary p p p
processors 1 1 {ranks}
read_data slab.data
pair_style aisci threads 1
pair_coeff * * {model} O H
neighbor 1.0 bin
neigh_modify every 1 delay 0 check yes
velocity all create 300 4928 loop geom
fix 1 all nve
timestep 0.0002
compute work all aisci/work
thermo_style custom step pe c_work[1] c_work[2] c_work[4] c_work[5] c_work[6] c_work[7] c_work[8] {cpu}
thermo {steps}
run {warm}
{rounds}
"""


def run_blocks(log):
    """(last thermo row as a dict, loop time) of every run in a log."""
    return [({h: v[-1] for h, v in run.items()} if run["Step"] else None, loop[0])
            for run, loop in zip(aisci_run.thermo_runs(log), aisci_run.loop_times(log))]


def bench(args, ranks, model, data, workdir):
    cpu = " ".join("c_work[%d][3]" % (r + 1) for r in range(ranks))
    rounds = ""
    for _ in range(args.rounds):
        rounds += "pair_style aisci threads 1\nrun %d\n" % args.steps
        rounds += "pair_style aisci threads 1 balance ring %g\nrun %d\n" % (args.tolerance, args.steps)
    script = SCRIPT.format(ranks=ranks, model=model, steps=args.steps, warm=args.warm, cpu=cpu,
                           rounds=rounds)
    d = os.path.join(workdir, "np%d" % ranks)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "in.ring"), "w") as f:
        f.write(script)
    with open(os.path.join(d, "slab.data"), "w") as f:
        f.write(data)
    cmd = aisci_run.mpiexec_command(args.mpiexec, "ring_balance_lammps") + ["-n", str(ranks), args.lmp, "-in", "in.ring", "-log",
                                       "log.lammps", "-screen", "none", "-nocite"]
    env = dict(os.environ, OMP_NUM_THREADS="1", OMPI_MCA_mpi_yield_when_idle="1")
    p = subprocess.run(cmd, cwd=d, env=env, timeout=args.timeout)
    log_path = os.path.join(d, "log.lammps")
    log = open(log_path).read() if os.path.exists(log_path) else ""
    blocks = run_blocks(log)
    if p.returncode != 0 or len(blocks) != 1 + 2 * args.rounds:
        sys.exit("ring_balance_lammps: lmp-aisci failed at %d ranks (%s), see %s"
                 % (ranks, aisci_run.first_error_in_logs([log_path]), d))
    plan = re.findall(r"balance ring: .*", log)
    modes = {"off": blocks[1::2], "ring": blocks[2::2]}
    best = {}
    for mode, runs in modes.items():
        # the round with the shortest loop time; CPU times are per step
        row, loop = min(runs, key=lambda b: b[1])
        calls = row["c_work[6]"]    # model evaluations of the run (setup + steps)
        per_rank = [row["c_work[%d][3]" % (r + 1)] / calls for r in range(ranks)]
        best[mode] = dict(step=loop / args.steps, cost=row["c_work[2]"],
                          cpu=per_rank, cpu_ratio=max(per_rank) / (sum(per_rank) / ranks),
                          exchange=row["c_work[8]"] / calls, moved=row["c_work[7]"],
                          all_steps=[b[1] / args.steps for b in runs])
    off, ring = best["off"], best["ring"]
    natoms = int(re.search(r"(\d+) atoms\n", log).group(1))
    print("\n%d ranks (processors 1 1 %d), %d atoms, %d steps per run, best of %d rounds"
          % (ranks, ranks, natoms, args.steps, args.rounds))
    if plan:
        print("  log: " + plan[0])
    print("  cost (1 + edges + triplets) max/mean: off %.4f, ring %.4f (target <= 1.05), "
          "%d atoms computed on another rank" % (off["cost"], ring["cost"], ring["moved"]))
    fmt = lambda v: "[" + ", ".join("%.4f" % x for x in v) + "]"  # noqa: E731
    print("  model CPU time per rank and step (s): off %s, ring %s" % (fmt(off["cpu"]), fmt(ring["cpu"])))
    print("  model CPU time max/mean: off %.3f, ring %.3f; busiest rank: off %.4f s, ring "
          "%.4f s per step, ratio off/ring %.2f" % (off["cpu_ratio"], ring["cpu_ratio"],
                                                    max(off["cpu"]), max(ring["cpu"]),
                                                    max(off["cpu"]) / max(ring["cpu"])))
    print("  wall time in send_work + return_results (waiting for the other ranks included), "
          "largest rank: %.4f s per step"
          % ring["exchange"])
    print("  step time (s): off %.4f, ring %.4f, ratio off/ring %.2f   (all rounds: off %s, ring %s)"
          % (off["step"], ring["step"], off["step"] / ring["step"], fmt(off["all_steps"]),
             fmt(ring["all_steps"])))
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build_dir")
    ap.add_argument("--ranks", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--molecules", type=int, default=216)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warm", type=int, default=3, help="warm-up steps (TorchScript profiling)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tolerance", type=float, default=0.05)
    ap.add_argument("--model", default=None, help="a num_layers = 1 model file")
    ap.add_argument("--mpiexec", default=None)
    ap.add_argument("--timeout", type=int, default=1200)
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args()

    args.lmp = os.path.join(os.path.abspath(args.build_dir), "bin", "lmp-aisci")
    if not os.path.exists(args.lmp):
        sys.exit("ring_balance_lammps: no %s (build the project first)" % args.lmp)
    workdir = args.workdir or tempfile.mkdtemp(prefix="ring_balance_lammps_")
    os.makedirs(workdir, exist_ok=True)

    import aisci_nn_toy as toy
    from potentials.data.water_box import make_water_slab

    model = args.model
    if model is None:
        model = os.path.join(workdir, "matris_1layer.pt")
        config = make_one_layer_matris(model)
        what = ("1-layer MatRIS-style (layer 1 of water_matris.pt, cutoff %g A, 3-body %g A, "
                "%d channels), float64" % (config["cutoff"], config["cutoff_3body"], config["channels"]))
    else:
        what = model
    slab = make_water_slab(args.molecules, seed=1)
    path = os.path.join(workdir, "slab.data")
    toy.write_data(path, slab["positions"], slab["box"], slab["types"], 2, masses=[15.9994, 1.008])
    data = open(path).read()
    print("ring_balance (LAMMPS): water slab of %d molecules, box %.2f x %.2f x %.2f A (water in "
          "the lower half), model %s, 1 torch thread per rank, tolerance %g; workdir %s"
          % (args.molecules, *slab["box"], what, args.tolerance, workdir))
    print("load average before: " + aisci_run.load_average())
    for ranks in args.ranks:
        bench(args, ranks, model, data, workdir)
    print("\nload average after: " + aisci_run.load_average())


if __name__ == "__main__":
    main()
