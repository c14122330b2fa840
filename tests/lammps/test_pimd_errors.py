"""Bad input to fix pimd/langevin: each case must stop with a clear LAMMPS error that
names the keyword or the remedy, never crash or hang. Among them the cases that ran
without a word before issue 33: fix momentum, recenter and wall/reflect with P > 1,
partitions with another pair style, other pair coefficients or other atom IDs, and an
unreadable AISCI_PIMD_SYNC_TIMEOUT."""
import aisci_testlib as T
import pimd_systems as S

GOOD = "fix pimd all pimd/langevin temp 30.0 thermostat PILE_L 1 tau 0.1"
cases = [
    # (fix line or script change, expected text)
    ("fix pimd all pimd/langevin temp 30.0 bogus 1", "unknown keyword 'bogus'"),
    ("fix pimd all pimd/langevin method xyz", "unknown method value 'xyz' (expected one of: nmpimd, pimd, cmd)"),
    ("fix pimd all pimd/langevin method cmd", "method cmd is not supported"),
    ("fix pimd all pimd/langevin integrator verlet", "unknown integrator value 'verlet'"),
    ("fix pimd all pimd/langevin ensemble npt method pimd", "ensemble npt needs method nmpimd"),
    ("fix pimd all pimd/langevin ensemble nph iso abc", "iso expects a number, got 'abc'"),
    ("fix pimd all pimd/langevin ensemble npt taup -1", "taup must be > 0, got -1"),
    ("fix pimd all pimd/langevin ensemble npt barostat BZP aniso", "keyword aniso needs 1 value"),
    ("fix pimd all pimd/langevin ensemble foo", "unknown ensemble value 'foo'"),
    ("fix pimd all pimd/langevin fmmode weird", "unknown fmmode value 'weird'"),
    ("fix pimd all pimd/langevin ensemble npt aniso 1.0 iso 1.0",
     "keywords iso and aniso exclude each other (one cell coupling), got both"),
    ("fix pimd all pimd/langevin temp -3", "temp must be > 0, got -3"),
    ("fix pimd all pimd/langevin tau 0", "tau must be > 0, got 0"),
    ("fix pimd all pimd/langevin fmass abc", "fmass expects a number, got 'abc'"),
    ("fix pimd all pimd/langevin fmass", "keyword fmass needs 1 value"),
    ("fix pimd all pimd/langevin thermostat PILE_L 0", "thermostat seed must be a positive integer, got 0"),
    ("fix pimd all pimd/langevin thermostat PILE_G 5", "unknown thermostat value 'PILE_G' (expected one of: PILE_L)"),
    ("fix pimd all pimd/langevin thermostat PILE_L", "keyword thermostat needs 2 values"),
    ("fix pimd all pimd/langevin fixcom maybe", "unknown fixcom value 'maybe'"),
    ("fix pimd all pimd/langevin barostat XYZ", "unknown barostat value 'XYZ'"),
    ("fix pimd all pimd/langevin lj 1 -1 1 1 1", "lj sigma must be > 0, got -1"),
    ("fix pimd all pimd/langevin method pimd fmmode normal", "fmmode normal needs method nmpimd"),
    # a group other than all: the atoms outside it must be placed by a fix dplr
    ("group half id 1:10\nfix pimd half pimd/langevin",
     "98 atoms are outside group half (e.g. atom ID 11, type 1) and nothing places them for "
     "each bead: only the Wannier centroids of a fix dplr defined before fix pimd may stay "
     "outside the group; put these atoms in it (or use group all)"),
    ("group none id 0\nfix pimd none pimd/langevin", "group none has no atoms"),
    ("fix 1 all nve\n" + GOOD, "also integrates the atoms"),
]
for fix, expect in cases:
    r = T.run_lammps(S.lj_script(fix, nsteps=10), nprocs=2, partitions="2x1", timeout=60)
    T.check(r.rc != 0 and expect in r.output and "TIMEOUT" not in r.output,
            "expected error '%s' (rc %d):\n%s" % (expect, r.rc, r.output[-800:]))

# constant pressure needs a fully periodic, orthogonal box
r = T.run_lammps(S.lj_script("fix pimd all pimd/langevin ensemble npt iso 1.0", nsteps=10).replace(
    "units metal", "units metal\nboundary p p f"), nprocs=2, partitions="2x1", timeout=60)
T.check(r.rc != 0 and "needs a box periodic in x, y and z" in r.output, "npt non-periodic:\n" + r.output[-800:])

# no atom map
r = T.run_lammps(S.lj_script(GOOD, nsteps=10).replace("atom_modify map yes", ""), nprocs=2,
                 partitions="2x1", timeout=60)
T.check(r.rc != 0 and "requires an atom map" in r.output, "missing atom map:\n" + r.output[-800:])

# partitions with different atom counts
script = "variable n world 3 2\n" + S.lj_script(GOOD, nsteps=10).replace("block 0 3 0 3 0 3", "block 0 ${n} 0 3 0 3")
r = T.run_lammps(script, nprocs=2, partitions="2x1", timeout=60)
T.check(r.rc != 0 and "partitions (beads) differ in number of atoms: 72 in one partition, 108 in another" in r.output
        and "TIMEOUT" not in r.output,
        "unequal partitions:\n" + r.output[-800:])

# partitions with different numbers of ranks
r = T.run_lammps(S.lj_script(GOOD, nsteps=10), nprocs=3, partitions="1 2", timeout=60)
T.check(r.rc != 0 and "same number of ranks" in r.output and "TIMEOUT" not in r.output,
        "unequal partition sizes:\n" + r.output[-800:])

# issue 33: cases that ran without a word before. Each: (script, environment, expected text)
lj = S.lj_script(GOOD, nsteps=10)
fixes = "fix pimd all pimd/langevin temp 30.0 thermostat PILE_L 1 tau 0.1"
silent = [
    # fixes that move one bead's atoms (or flip mode velocities) with P > 1
    (S.lj_script("fix m all momentum 5 linear 1 1 1\n" + GOOD, nsteps=10), None,
     "ERROR: fix pimd/langevin: fix m (momentum) is not supported with more than one bead (P = 2): "
     "it moves the atoms of each bead (partition) by that bead's own centre of mass, which "
     "splits the ring polymers; use the fixcom keyword of fix pimd (fixcom yes removes the "
     "centroids' centre-of-mass motion)"),
    (S.lj_script("fix r all recenter INIT INIT INIT\n" + GOOD, nsteps=10), None,
     "ERROR: fix pimd/langevin: fix r (recenter) is not supported with more than one bead (P = 2)"),
    (S.lj_script("fix w all wall/reflect zlo EDGE zhi EDGE\n" + GOOD, nsteps=10).replace(
        "units metal", "units metal\nboundary p p f"), None,
     "ERROR: fix pimd/langevin: fix w (wall/reflect) is not supported with more than one bead "
     "(P = 2): it reverses the velocities of single beads, which hold normal-mode velocities "
     "here; use a wall that acts as a force, e.g. fix wall/harmonic or fix wall/lj93"),
    # partitions with another force field or other atoms
    ("variable ps world lj/cut lj/cut/opt\n" + lj.replace("pair_style lj/cut", "pair_style ${ps}"),
     None, "fix pimd/langevin: partitions (beads) differ in pair style: lj/cut in partition 0, "
     "lj/cut/opt in partition 1; every partition must run the same input"),
    ("variable eps world 0.0031 0.0032\n"
     + lj.replace("pair_coeff 1 1 0.0031", "pair_coeff 1 1 ${eps}"),
     None, "fix pimd/langevin: partitions (beads) differ in pair coefficients (as written to "
     "restart files) (compared by a hash: "),
    ("variable p world 0 1\n" + lj.replace(
        "velocity all", 'if "${p} == 1" then "group del id 5" "delete_atoms group del compress no" '
        '"create_atoms 1 single 0.5 0.5 0.5"\nvelocity all'), None,
     "fix pimd/langevin: partition 1 holds other atom IDs than partition 0 (the same number of "
     "atoms, 108); every partition must hold the same atoms"),
    # the environment variable is read strictly
    (lj, {"AISCI_PIMD_SYNC_TIMEOUT": "abc"},
     "ERROR: environment variable AISCI_PIMD_SYNC_TIMEOUT = 'abc' is not a number of seconds "
     ">= 0 (0 = no limit)"),
]
for script, env, expect in silent:
    r = T.run_lammps(script, nprocs=2, partitions="2x1", timeout=60, env=env)
    T.check(r.rc not in (0, -999) and expect in r.output,
            "expected error '%s' (rc %d):\n%s" % (expect, r.rc, r.output[-800:]))
# with one bead (P = 1) fix momentum stays allowed
r = T.run_lammps(S.lj_script("fix m all momentum 5 linear 1 1 1\n" + GOOD, nsteps=10), timeout=60)
T.check(r.rc == 0, "fix momentum with P = 1 runs:\n" + r.output[-800:])

T.summary("test_pimd_errors")
