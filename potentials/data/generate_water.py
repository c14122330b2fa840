"""Generate the q-TIP4P/F water data set (energies, forces) with Debian's LAMMPS.

Usage (Debian's interpreter, LAMMPS executable ``lmp`` from the ``lammps`` package)::

    /usr/bin/python3 -m potentials.data.generate_water --out potentials/data/water_qtip4pf.npz

Teacher model: q-TIP4P/F (S. Habershon, T. E. Markland, D. E. Manolopoulos, J. Chem.
Phys. 131, 024501 (2009)) in LAMMPS ``units real``:

- O-H bond: the paper's quartic expansion of a Morse potential,
  D_r [a^2 dr^2 - a^3 dr^3 + 7/12 a^4 dr^4] with D_r = 116.09 kcal/mol,
  a = 2.287 / A, r_eq = 0.9419 A; ``bond_style class2`` with K2 = 607.19, K3 = -1388.65,
  K4 = 1852.58 kcal/mol/A^n.
- H-O-H angle: (k_theta / 2) (theta - theta_eq)^2 with k_theta = 87.85 kcal/mol/rad^2,
  theta_eq = 107.4 deg; ``angle_style harmonic`` uses K (theta - theta0)^2, so K = 43.93.
- LJ between O: epsilon = 0.1852 kcal/mol, sigma = 3.1589 A; charges qH = 0.5564 e,
  qM = -1.1128 e. The paper puts M at gamma r_O + (1 - gamma)(r_H1 + r_H2)/2 with
  gamma = 0.73612. LAMMPS' tip4p styles place M at r_O + alpha (d_1 + d_2)/2 (d = O-H
  vectors) with the constant alpha = qdist / (r_eq cos(theta_eq / 2)) taken from the bond
  and angle coefficients, so qdist = (1 - gamma) r_eq cos(theta_eq / 2) = 0.1471 A gives
  alpha = 1 - gamma: the paper's construction exactly, also for flexed molecules.
- ``pair_style lj/cut/tip4p/long`` (real-space cutoff 7 A) + ``kspace_style pppm/tip4p``
  (relative force accuracy 1e-5); special_bonds 0 0 0 (no intramolecular nonbonded terms).

MD: NVE with a Langevin thermostat (damping 100 fs) for equilibration, then a Nose-Hoover
thermostat (fix nvt, 50 fs) for production, so that the dumped forces
are the force field's alone (fix langevin adds its friction and noise forces to the
force array, which is what made water_qtip4pf.npz noisy; water_qtip4pf_clean.npz was
recomputed without them by relabel_water.py). Time step 0.5 fs, random boxes from
``water_box.py``: short minimisation, velocity init, equilibration, then one frame every
``--every`` steps. Energies and forces are converted to eV and eV/A (1 kcal/mol =
0.0433641 eV). The total potential energy includes the long-range (k-space) part, which a
short-range model cannot represent exactly.

Output .npz keys (F frames, A atoms per frame, every frame has a cubic orthogonal box):
    n_atoms [F] int32            atoms in frame f (3 x molecules)
    offsets [F] int64            start of frame f in the concatenated per-atom arrays
    positions [sum A, 3] float64 Angstrom (wrapped into the box)
    forces [sum A, 3] float64    eV/A
    types [sum A] int8           0 = O, 1 = H (model type index, type_names = O H)
    cells [F, 3, 3] float64      lattice vectors as rows, Angstrom
    energies [F] float64         total potential energy, eV
    temperature [F], density [F] float64  state point (K, g/cm^3)
    run_id [F] int32             which MD run (state point + size) a frame came from
and ``info`` (a string describing the generator settings).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from potentials.data.water_box import make_water_box, write_lammps_data  # noqa: E402

KCAL_PER_MOL_IN_EV = 4184.0 / 6.02214076e23 / 1.602176634e-19  # 0.0433641...

GAMMA_M = 0.73612
R_EQ = 0.9419
THETA_EQ_DEG = 107.4
QDIST = (1.0 - GAMMA_M) * R_EQ * np.cos(np.radians(THETA_EQ_DEG) / 2.0)

# the q-TIP4P/F force field (LAMMPS input lines after read_data; {qdist} to format),
# shared with relabel_water.py
FORCE_FIELD = """\
pair_style lj/cut/tip4p/long 1 2 1 1 {qdist:.6f} 7.0
pair_coeff 1 1 0.1852 3.1589
pair_coeff 1 2 0.0 1.0
pair_coeff 2 2 0.0 1.0
bond_style class2
bond_coeff 1 0.9419 607.19 -1388.65 1852.58
angle_style harmonic
angle_coeff 1 43.93 107.4
kspace_style pppm/tip4p 1.0e-5
special_bonds lj/coul 0.0 0.0 0.0
neighbor 2.0 bin
neigh_modify every 1 delay 0 check yes
"""

LAMMPS_INPUT = """\
units real
atom_style full
boundary p p p
read_data {data}
""" + FORCE_FIELD + """\
thermo_modify norm no
thermo 1000
min_style cg
minimize 1.0e-4 1.0e-6 200 2000
reset_timestep 0
timestep 0.5
velocity all create {temp} {seed} mom yes rot yes dist gaussian
fix nve all nve
fix thermostat all langevin {temp} {temp} 100.0 {seed2} zero yes
run {equil}
# production: Nose-Hoover (fix nvt) scales velocities and leaves the forces alone, so the
# dumped forces are the force field's (fix langevin adds its friction and noise to them)
unfix thermostat
unfix nve
fix thermostat all nvt temp {temp} {temp} 50.0
reset_timestep 0
dump frames all custom {every} frames.dump id type x y z fx fy fz
dump_modify frames sort id format float %.12g
fix energies all print {every} "$(step) $(pe:%.12g)" file energies.txt screen no
run {nsteps}
"""


def read_dump(path):
    """Frames of a LAMMPS custom dump (id type x y z fx fy fz, sorted by id)."""
    frames = []
    with open(path) as f:
        lines = f.read().splitlines()
    k = 0
    while k < len(lines):
        if lines[k].startswith("ITEM: TIMESTEP"):
            step = int(lines[k + 1])
            natoms = int(lines[k + 3])
            bounds = np.array([[float(v) for v in lines[k + 5 + d].split()[:2]] for d in range(3)])
            data = np.array([[float(v) for v in ln.split()] for ln in lines[k + 9:k + 9 + natoms]])
            frames.append((step, bounds, data))
            k += 9 + natoms
        else:
            k += 1
    return frames


def run_state_point(lmp, n_molecules, density, temperature, seed, equil, frames, every, workdir):
    box = make_water_box(n_molecules, density, seed=seed)
    write_lammps_data(os.path.join(workdir, "data.water"), box)
    script = LAMMPS_INPUT.format(data="data.water", qdist=QDIST, temp=temperature,
                                 seed=1000 + seed, seed2=2000 + seed, equil=equil,
                                 every=every, nsteps=every * frames)
    with open(os.path.join(workdir, "in.water"), "w") as f:
        f.write(script)
    proc = subprocess.run([lmp, "-in", "in.water", "-log", "log.lammps", "-screen", "none"],
                          cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    if proc.returncode != 0:
        tail = ""
        logp = os.path.join(workdir, "log.lammps")
        if os.path.exists(logp):
            tail = "".join(open(logp).readlines()[-20:])
        raise RuntimeError("lmp failed (exit %d) for N=%d rho=%g T=%g:\n%s%s" % (
            proc.returncode, n_molecules, density, temperature, proc.stdout[-2000:], tail))
    energies = {}
    for ln in open(os.path.join(workdir, "energies.txt")):
        if ln.startswith("#") or not ln.strip():
            continue
        step, pe = ln.split()
        energies[int(step)] = float(pe)
    out = []
    for step, bounds, data in read_dump(os.path.join(workdir, "frames.dump")):
        if step == 0:
            continue  # the first frame is the last one of equilibration: skip it
        lo = bounds[:, 0]
        lengths = bounds[:, 1] - bounds[:, 0]
        pos = np.mod(data[:, 2:5] - lo, lengths)
        types = data[:, 1].astype(np.int8) - 1
        forces = data[:, 5:8] * KCAL_PER_MOL_IN_EV
        out.append((pos, forces, types, np.diag(lengths), energies[step] * KCAL_PER_MOL_IN_EV))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="water_qtip4pf.npz")
    parser.add_argument("--lmp", default=os.environ.get("AISCI_TEACHER_LMP", "lmp"),
                        help="LAMMPS executable with KSPACE, MOLECULE, CLASS2 (Debian's lmp)")
    parser.add_argument("--molecules", type=int, nargs="+", default=[32, 64])
    parser.add_argument("--temperatures", type=float, nargs="+", default=[250, 300, 350, 400])
    parser.add_argument("--densities", type=float, nargs="+", default=[0.9, 1.0, 1.1])
    parser.add_argument("--frames", type=int, default=20, help="frames per MD run")
    parser.add_argument("--every", type=int, default=200, help="MD steps between frames")
    parser.add_argument("--equil", type=int, default=2000, help="equilibration steps")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    lmp = shutil.which(args.lmp)
    if lmp is None:
        sys.exit("generate_water: LAMMPS executable '%s' not found (apt-get install lammps)"
                 % args.lmp)
    cols = {k: [] for k in ("pos", "frc", "typ", "cell", "e", "t", "rho", "run", "n")}
    t0 = time.time()
    run_id = 0
    for n_mol in args.molecules:
        for rho in args.densities:
            for temp in args.temperatures:
                seed = args.seed * 10007 + run_id
                with tempfile.TemporaryDirectory(prefix="aisci_water_") as work:
                    frames = run_state_point(lmp, n_mol, rho, temp, seed, args.equil,
                                             args.frames, args.every, work)
                for pos, frc, typ, cell, e in frames:
                    cols["pos"].append(pos)
                    cols["frc"].append(frc)
                    cols["typ"].append(typ)
                    cols["cell"].append(cell)
                    cols["e"].append(e)
                    cols["t"].append(temp)
                    cols["rho"].append(rho)
                    cols["run"].append(run_id)
                    cols["n"].append(len(pos))
                print("run %2d: %3d molecules rho %.2f T %5.1f: %d frames, %.1f s elapsed"
                      % (run_id, n_mol, rho, temp, len(frames), time.time() - t0), flush=True)
                run_id += 1
    n_atoms = np.array(cols["n"], dtype=np.int32)
    offsets = np.concatenate([[0], np.cumsum(n_atoms)[:-1]]).astype(np.int64)
    info = ("q-TIP4P/F water from Debian LAMMPS (units real, converted to eV and eV/A); "
            "molecules %s, densities %s g/cm3, temperatures %s K, %d frames per run every "
            "%d steps of 0.5 fs after %d equilibration steps, Langevin 100 fs, seed %d"
            % (args.molecules, args.densities, args.temperatures, args.frames, args.every,
               args.equil, args.seed))
    np.savez_compressed(
        args.out,
        n_atoms=n_atoms,
        offsets=offsets,
        positions=np.concatenate(cols["pos"]),
        forces=np.concatenate(cols["frc"]),
        types=np.concatenate(cols["typ"]).astype(np.int8),
        cells=np.array(cols["cell"]),
        energies=np.array(cols["e"]),
        temperature=np.array(cols["t"], dtype=float),
        density=np.array(cols["rho"], dtype=float),
        run_id=np.array(cols["run"], dtype=np.int32),
        info=np.array(info),
    )
    print("wrote %s: %d frames, %d atoms in total, %.1f s" % (
        args.out, len(n_atoms), int(n_atoms.sum()), time.time() - t0))


if __name__ == "__main__":
    main()
