"""1 ps of NVE with a MatRIS checkpoint in pair_style aisci: energy conservation.

    /usr/bin/python3 validation/matris_nve/run.py [--steps 2000] [--timestep 0.5]
        [--out validation/matris_nve/results.txt]

The checkpoint is made by the matris package (tests/lammps/matris_peer.py make: random
weights at the small architecture of tests/lammps/test_matris.py, 2 blocks, 5 / 3 A,
OMat reference energies) and converted in float64. Water: frame 0 of the DFT water
(water-dft/data_3, 192 atoms), velocities at 300 K, fix nve, 0.5 fs, 2000 steps (1 ps),
one rank, thermo every 10 steps. Reported: the drift of the total energy (slope of a
least-squares line, meV/atom/ps), its largest excursion from the start and its standard
deviation next to that of the kinetic energy, and the largest single-interval jump of the
total energy (MatRIS's energy is not smooth where a pair crosses a cutoff: its attention
weights do not vanish there). Needs the matris venv (scripts/install-peers.sh --only
matris). The summary is appended to --out.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "tests", "lammps"))
sys.path.insert(0, os.path.join(SRC, "scripts"))
from aisci_run import first_error, parse_thermo, peers_dir  # noqa: E402
from deepmd_systems import data_file, dft_frame  # noqa: E402

PEERS = peers_dir()
PY = os.environ.get("AISCI_MATRIS_PYTHON") or os.path.join(PEERS, "matris", "bin", "python")
LMP = os.environ.get("AISCI_LMP") or os.path.join(SRC, "build", "bin", "lmp-aisci")

IN = """units metal
atom_style atomic
boundary p p p
read_data data.lmp
mass 1 15.999
mass 2 1.008
pair_style aisci threads {threads}
pair_coeff * * model.pt O H
velocity all create 300 4928 mom yes rot yes
fix 1 all nve
timestep {dt}
thermo_style custom step time temp ke pe etotal
thermo_modify format float %.12g
thermo 10
run {steps}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--timestep", type=float, default=0.5, help="fs")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--max-bonds-3body", type=int, default=48,
                    help="the converter's --max-bonds-3body (a run stops with an error naming "
                         "it when an atom has more bonds within the three-body cutoff)")
    ap.add_argument("--out", default=os.path.join(HERE, "results.txt"))
    a = ap.parse_args()
    if not os.access(PY, os.X_OK):
        sys.exit("run.py: needs the matris venv %s (scripts/install-peers.sh --only matris)" % PY)
    work = tempfile.mkdtemp(prefix="aisci_matris_nve_")
    print("matris_nve: making and converting the checkpoint in %s" % work, flush=True)
    ckpt = os.path.join(work, "small.pth.tar")
    subprocess.run([PY, os.path.join(SRC, "tests", "lammps", "matris_peer.py"), "make", ckpt,
                    "small", "1"], check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "potentials.matris.convert", ckpt,
                    os.path.join(work, "model.pt"), "--matris-python", PY,
                    "--max-bonds-3body", str(a.max_bonds_3body)], check=True,
                   capture_output=True, cwd=SRC, env=dict(os.environ, PYTHONPATH=SRC))
    x, t, box = dft_frame(0)
    with open(os.path.join(work, "data.lmp"), "w") as f:
        f.write(data_file(np.mod(x, box[0, 0]), t, box[0, 0]))
    with open(os.path.join(work, "in.nve"), "w") as f:
        f.write(IN.format(threads=a.threads, dt=a.timestep / 1000.0, steps=a.steps))
    print("matris_nve: %d steps of %.2f fs on 192 atoms (log: %s/log.lammps)"
          % (a.steps, a.timestep, work), flush=True)
    t0 = time.time()
    r = subprocess.run([LMP, "-in", "in.nve", "-log", "log.lammps", "-screen", "none"],
                       cwd=work, env=dict(os.environ, OMP_NUM_THREADS=str(a.threads)))
    wall = time.time() - t0
    log = open(os.path.join(work, "log.lammps")).read()
    th = parse_thermo(log)
    stopped = ""
    if r.returncode != 0:
        # a stopped run is still summarised, up to its last thermo line, with the reason
        err = first_error(log) or "exit status %d" % r.returncode
        stopped = " STOPPED at step %d (%s)" % (th["Step"][-1] if th.get("Step") else 0, err)
    n = len(t)
    tps = np.array(th["Time"])          # ps
    et = np.array(th["TotEng"]) / n
    ke = np.array(th["KinEng"]) / n
    slope = np.polyfit(tps - tps[0], et, 1)[0] * 1000.0
    excursion = float(np.abs(et - et[0]).max()) * 1000.0
    jump = float(np.abs(np.diff(et)).max()) * 1000.0
    line = ("%s  192 water, %d x %.2f fs, wall %.0f s: drift %+.4f meV/atom/ps, max |E-E0| "
            "%.4f meV/atom, std E_tot %.4f vs std E_kin %.3f meV/atom, largest 10-step change "
            "%.4f meV/atom, T %.0f -> %.0f K, max_bonds_3body %d%s" % (
                time.strftime("%Y-%m-%d", time.gmtime()), a.steps, a.timestep, wall, slope,
                excursion, et.std() * 1000, ke.std() * 1000, jump, th["Temp"][0], th["Temp"][-1],
                a.max_bonds_3body, stopped))
    print(line)
    with open(a.out, "a") as f:
        f.write(line + "\n")
    if stopped:
        sys.exit(1)


if __name__ == "__main__":
    main()
