"""Small systems shared by the fix pimd/langevin tests."""
import math
import os

# metal units constants (LAMMPS update.cpp values)
BOLTZ = 8.617343e-5          # eV/K
HPLANCK = 4.135667403e-3     # eV ps
HBAR = HPLANCK / (2.0 * math.pi)
MVV2E = 1.0364269e-4         # (g/mol)(A/ps)^2 -> eV

HO_MASS = 1.008              # g/mol
HO_K = 4.0                   # eV/A^2 (fix spring/self)
HO_TEMP = 300.0


def ho_omega():
    return math.sqrt(HO_K / (HO_MASS * MVV2E))    # 1/ps


def ho_potential_exact(nbeads, temp=HO_TEMP):
    """<V> per degree of freedom of a P-bead ring polymer of a harmonic oscillator.

    Normal mode k of the ring polymer (sampled at beta_P = beta/P) has frequency
    w_k^2 = w^2 + w_P^2 lambda_k, so <x^2> = (1/P) sum_k 1/(beta_P m w_k^2) and
    <V> = (w^2 / (2 beta)) sum_k 1/(w^2 + w_P^2 lambda_k). P -> infinity gives
    (hbar w / 4) coth(beta hbar w / 2)."""
    beta = 1.0 / (BOLTZ * temp)
    w = ho_omega()
    wp = nbeads / (beta * HBAR)
    s = 0.0
    for k in range(nbeads):
        lam = 4.0 * math.sin(math.pi * k / nbeads) ** 2
        s += 1.0 / (w * w + wp * wp * lam)
    return w * w / (2.0 * beta) * s


def ho_potential_quantum(temp=HO_TEMP):
    beta = 1.0 / (BOLTZ * temp)
    x = beta * HBAR * ho_omega()
    return HBAR * ho_omega() / 4.0 / math.tanh(x / 2.0)


def read_final_dump(workdir, bead):
    """Rows (id xu yu zu vx vy vz) of the file final.<bead> that the restart tests write
    with write_dump, or None when it is missing."""
    path = os.path.join(workdir, "final.%d" % bead)
    if not os.path.exists(path):
        return None
    lines = open(path).read().splitlines()
    start = lines.index("ITEM: ATOMS id xu yu zu vx vy vz") + 1
    return [[float(w) for w in line.split()] for line in lines[start:]]


def restart_scripts():
    """The LJ scenario of the restart tests (P = 2 as -partition 2x1, NVT): (head, system,
    dump, second). head defines the partition variable ibead; system is everything before
    the run; dump writes final.<ibead> (id xu yu zu vx vy vz); second is a whole script
    that reads state.<ibead>, defines the fix again and runs 100 steps, then dumps."""
    fix = "fix pimd all pimd/langevin temp 30.0 thermostat PILE_L 4321 tau 0.05"
    system = lj_script(fix, nsteps=0, thermo=50).split("run 0")[0]
    dump = ("write_dump all custom final.${ibead} id xu yu zu vx vy vz modify sort id "
            "format float %.15g\n")
    head = "variable ibead world 0 1\n"
    second = head + """
atom_modify map yes
read_restart state.${ibead}
pair_style lj/cut 7.0
pair_coeff 1 1 0.0031 2.74
pair_modify shift yes
""" + fix + "\ntimestep 0.002\nthermo 50\nrun 100\n" + dump
    return head, system, dump, second


def final_dump_difference(ref_run, run, bead):
    """Largest |difference| between the final.<bead> dumps (x and v) of two runs, or None
    when either is missing or they differ in length."""
    ref, got = read_final_dump(ref_run.workdir, bead), read_final_dump(run.workdir, bead)
    if ref is None or got is None or len(ref) != len(got):
        return None
    return max(abs(a - b) for ra, rb in zip(ref, got) for a, b in zip(ra, rb))


def harmonic_script(fix_line, nsteps=4000, natoms=32, thermo=10, extra=""):
    """natoms independent atoms in harmonic wells (fix spring/self), metal units."""
    return f"""
units metal
atom_style atomic
atom_modify map yes
region box block 0 20 0 20 0 20
create_box 1 box
create_atoms 1 random {natoms} 4242 box
mass 1 {HO_MASS}
pair_style zero 2.0
pair_coeff * *
fix well all spring/self {HO_K}
fix_modify well energy yes
velocity all create {HO_TEMP} 9876 dist gaussian
{fix_line}
timestep 0.0005
thermo_style custom step pe {extra}
thermo {thermo}
run {nsteps}
"""


def lj_script(fix_line, nsteps=1000, thermo=100, extra="", units="metal"):
    """108 neon-like Lennard-Jones atoms (fcc), shifted potential."""
    if units == "metal":
        head = "units metal\nlattice fcc 5.3\nmass 1 20.18\npair_style lj/cut 7.0\npair_coeff 1 1 0.0031 2.74\n"
        vel = "velocity all create 30.0 1234 dist gaussian loop geom\n"
        ts = "timestep 0.002\n"
    else:
        head = "units lj\nlattice fcc 0.9\nmass 1 1.0\npair_style lj/cut 2.5\npair_coeff 1 1 1.0 1.0\n"
        vel = "velocity all create 1.0 1234 dist gaussian loop geom\n"
        ts = "timestep 0.002\n"
    lat, rest = head.split("\n", 2)[1], head.split("\n", 2)[2]
    return f"""
{head.splitlines()[0]}
atom_style atomic
atom_modify map yes
{lat}
region box block 0 3 0 3 0 3
create_box 1 box
create_atoms 1 box
{rest}pair_modify shift yes
{vel}{fix_line}
{ts}thermo_style custom step temp pe {extra}
thermo {thermo}
run {nsteps}
"""
