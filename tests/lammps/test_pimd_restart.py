"""Restarts of fix pimd/langevin restore the whole state, thermostat noise included: a
200-step NVT run equals 100 steps + write_restart + (new process) read_restart + 100
steps, and equals two consecutive `run 100` commands, to rounding."""

import aisci_testlib as T
import pimd_systems as S

P = 2
head, system, dump, second_script = S.restart_scripts()

whole = T.run_lammps(head + system + "run 200\n" + dump, nprocs=P, partitions="%dx1" % P)
twice = T.run_lammps(head + system + "run 100\nrun 100\n" + dump, nprocs=P, partitions="%dx1" % P)
first = T.run_lammps(head + system + "run 100\nwrite_restart state.${ibead}\n", nprocs=P,
                     partitions="%dx1" % P)
second = T.run_lammps(second_script, nprocs=P, partitions="%dx1" % P, workdir=first.workdir)

ok = all(T.check(r.rc == 0, "%s failed:\n%s" % (name, r.output[-2000:]))
         for name, r in (("whole", whole), ("twice", twice), ("first", first), ("second", second)))
if ok:
    for bead in range(P):
        for name, run in (("two runs", twice), ("restart", second)):
            diff = S.final_dump_difference(whole, run, bead)
            if not T.check(diff is not None, "%s: dump of bead %d missing" % (name, bead)):
                continue
            print("bead %d, %s: max |difference| in x, v = %.3e" % (bead, name, diff))
            T.check(diff < 1e-9, "bead %d: %s differs from the continuous run by %g" % (bead, name, diff))
    # the thermostat really acted (a restart without the noise counter would differ)
    final_whole, final_first = S.read_final_dump(whole.workdir, 0), S.read_final_dump(first.workdir, 0)
    moved = final_whole[0][4] != final_first if final_first else True
    T.check(moved, "no dynamics")
T.summary("test_pimd_restart")
