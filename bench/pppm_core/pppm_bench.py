#!/usr/bin/python3
"""bench/pppm_core: kspace_style pppm/aisci (USER-AISCI core PPPM) against Debian's
kspace_style pppm, same system, same mesh, order and g_ewald, in one invocation.

System: a simple-cubic lattice of +q/-q point charges (random signs, displaced at
random), units real, pair_style coul/long 10, atoms held still (no fix: every step
recomputes forces). For each rank count it runs both styles and prints the KSpace time
per step (LAMMPS timing breakdown, average over ranks) and the RMS difference of the
forces (relative to the force between unit charges 1 A apart).

Usage:
  bench/pppm_core/pppm_bench.py /path/to/lmp-aisci [--cells 16] [--mesh 45] [--order 5]
      [--gewald 0.30] [--nsteps 20] [--ranks 1 2 4] [--debian-lmp /usr/bin/lmp]
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "scripts"))
from aisci_run import loop_times, mpiexec_command, timing_sections  # noqa: E402

INPUT = """units real
atom_style charge
boundary p p p
lattice sc 3.1
region box block 0 {cells} 0 {cells} 0 {cells}
create_box 2 box
create_atoms 1 box
mass * 1.0
set group all type/fraction 2 0.5 4321
set type 1 charge 0.8
set type 2 charge -0.8
displace_atoms all random 0.5 0.5 0.5 4321
pair_style coul/long 10.0
pair_coeff * *
kspace_style {kspace} 1e-5
kspace_modify mesh {mesh} {mesh} {mesh} order {order} gewald {gewald}
thermo_style custom step pe elong
dump f all custom {nsteps} forces.dump id fx fy fz
dump_modify f sort id format float %.12g
run {nsteps}
"""


def run(exe, kspace, nprocs, args, mpiexec):
    work = tempfile.mkdtemp(prefix="pppm_bench_")
    with open(os.path.join(work, "in.bench"), "w") as f:
        f.write(INPUT.format(kspace=kspace, cells=args.cells, mesh=args.mesh, order=args.order,
                             gewald=args.gewald, nsteps=args.nsteps))
    cmd = [exe, "-in", "in.bench", "-log", "log.lammps", "-screen", "none", "-nocite"]
    if nprocs > 1:
        cmd = mpiexec + ["-n", str(nprocs)] + cmd
    env = dict(os.environ, OMP_NUM_THREADS="1", OMPI_MCA_mpi_yield_when_idle="1")
    subprocess.run(cmd, cwd=work, env=env, check=True)
    log = open(os.path.join(work, "log.lammps")).read()
    kspace_time = timing_sections(log).get("Kspace", float("nan"))
    loop_seconds, _, _, natoms = loop_times(log)[0]
    forces = {}
    lines = open(os.path.join(work, "forces.dump")).read().splitlines()
    idx = [i for i, l in enumerate(lines) if l.startswith("ITEM: ATOMS")][-1]
    for l in lines[idx + 1:idx + 1 + natoms]:
        w = l.split()
        forces[int(w[0])] = [float(v) for v in w[1:4]]
    return kspace_time / args.nsteps, loop_seconds / args.nsteps, forces, natoms


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("lmp_aisci")
    ap.add_argument("--cells", type=int, default=16)
    ap.add_argument("--mesh", type=int, default=45)
    ap.add_argument("--order", type=int, default=5)
    ap.add_argument("--gewald", type=float, default=0.30)
    ap.add_argument("--nsteps", type=int, default=20)
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--debian-lmp", default="/usr/bin/lmp")
    ap.add_argument("--mpiexec", default=None,
                    help="MPI launcher (default mpiexec; scripts/aisci_run.py adds its flags)")
    args = ap.parse_args()
    mpiexec = mpiexec_command(args.mpiexec, "pppm_bench")
    qqrd2e = 332.06371
    print("%d^3 charges, mesh %d^3, order %d, g_ewald %.3f, %d steps"
          % (args.cells, args.mesh, args.order, args.gewald, args.nsteps))
    print("%6s %22s %22s %9s %14s" % ("ranks", "pppm/aisci ms/step", "Debian pppm ms/step",
                                       "speed-up", "rms dF (rel)"))
    for n in args.ranks:
        ka, la, fa, natoms = run(os.path.abspath(args.lmp_aisci), "pppm/aisci", n, args, mpiexec)
        kd, ld, fd, _ = run(args.debian_lmp, "pppm", n, args, mpiexec)
        rms = (sum((fa[i][d] - fd[i][d]) ** 2 for i in fa for d in range(3)) / natoms) ** 0.5
        print("%6d %10.2f (loop %6.2f) %10.2f (loop %6.2f) %9.2f %14.2e"
              % (n, 1e3 * ka, 1e3 * la, 1e3 * kd, 1e3 * ld, kd / ka, rms / qqrd2e), flush=True)


if __name__ == "__main__":
    main()
