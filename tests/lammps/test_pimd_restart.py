"""Restarts of fix pimd/langevin restore the whole state, thermostat noise included: a
200-step NVT run equals 100 steps + write_restart + (new process) read_restart + 100
steps, and equals two consecutive `run 100` commands, to rounding."""

import aisci_testlib as T
import pimd_systems as S

P = 2
fix = "fix pimd all pimd/langevin temp 30.0 thermostat PILE_L 4321 tau 0.05"
system = S.lj_script(fix, nsteps=0, thermo=50).split("run 0")[0]
dump = "write_dump all custom final.${ibead} id xu yu zu vx vy vz modify sort id format float %.15g\n"
head = "variable ibead world 0 1\n"

whole = T.run_lammps(head + system + "run 200\n" + dump, nprocs=P, partitions="%dx1" % P)
twice = T.run_lammps(head + system + "run 100\nrun 100\n" + dump, nprocs=P, partitions="%dx1" % P)
first = T.run_lammps(head + system + "run 100\nwrite_restart state.${ibead}\n", nprocs=P,
                     partitions="%dx1" % P)
second_script = head + """
atom_modify map yes
read_restart state.${ibead}
pair_style lj/cut 7.0
pair_coeff 1 1 0.0031 2.74
pair_modify shift yes
""" + fix + "\ntimestep 0.002\nthermo 50\nrun 100\n" + dump
second = T.run_lammps(second_script, nprocs=P, partitions="%dx1" % P, workdir=first.workdir)


def read_dump(run, bead):
    return S.read_final_dump(run.workdir, bead)


ok = all(T.check(r.rc == 0, "%s failed:\n%s" % (name, r.output[-2000:]))
         for name, r in (("whole", whole), ("twice", twice), ("first", first), ("second", second)))
if ok:
    for bead in range(P):
        ref = read_dump(whole, bead)
        for name, run in (("two runs", twice), ("restart", second)):
            got = read_dump(run, bead)
            if not T.check(ref is not None and got is not None and len(ref) == len(got),
                           "%s: dump of bead %d missing" % (name, bead)):
                continue
            diff = max(abs(a - b) for ra, rb in zip(ref, got) for a, b in zip(ra, rb))
            print("bead %d, %s: max |difference| in x, v = %.3e" % (bead, name, diff))
            T.check(diff < 1e-9, "bead %d: %s differs from the continuous run by %g" % (bead, name, diff))
    # the thermostat really acted (a restart without the noise counter would differ)
    moved = read_dump(whole, 0)[0][4] != read_dump(first, 0) if read_dump(first, 0) else True
    T.check(moved, "no dynamics")
T.summary("test_pimd_restart")
