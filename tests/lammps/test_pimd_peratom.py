"""Per-atom output of fix pimd/langevin: columns 1-3 = centroid (unwrapped), column 4 =
the atom's centroid-virial kinetic energy. Checks: the centroid equals the mean of the
beads' unwrapped positions from per-partition dumps (nmpimd and pimd methods), and the
per-atom kinetic energies sum to the global estimator f_ID[7]."""
import os

import aisci_testlib as T
import pimd_systems as S

P = 4
for method in ("nmpimd", "pimd"):
    fix = "fix pimd all pimd/langevin method %s temp 30.0 thermostat PILE_L 3 tau 0.1" % method
    extra = ("f_pimd[7] c_kcv\ncompute kcv all reduce sum f_pimd[4]\n"
             "dump d all custom 100 bead.${ibead} id xu yu zu f_pimd[1] f_pimd[2] f_pimd[3]\n"
             "dump_modify d sort id format float %.15g")
    script = "variable ibead world 0 1 2 3\n" + S.lj_script(fix, nsteps=300, thermo=100, extra=extra)
    # the thermo line must come after the compute; move it
    script = script.replace("thermo_style custom step temp pe f_pimd[7] c_kcv\n", "")
    script = script.replace("compute kcv all reduce sum f_pimd[4]\n",
                            "compute kcv all reduce sum f_pimd[4]\nthermo_style custom step temp pe f_pimd[7] c_kcv\n")
    r = T.run_lammps(script, nprocs=P, partitions="%dx1" % P)
    if not T.check(r.rc == 0, "%s run failed:\n%s" % (method, r.output[-1500:])):
        continue
    th = r.thermo(0)
    T.check(all(abs(a - b) < 1e-9 * max(1.0, abs(a)) for a, b in zip(th["f_pimd[7]"], th["c_kcv"])),
            "%s: per-atom KE sum %s != f_pimd[7] %s" % (method, th["c_kcv"], th["f_pimd[7]"]))
    frames = []
    for b in range(P):
        lines = open(os.path.join(r.workdir, "bead.%d" % b)).read().splitlines()
        last = max(i for i, line in enumerate(lines) if line.startswith("ITEM: ATOMS"))
        frames.append([[float(w) for w in line.split()] for line in lines[last + 1:]])
    worst = 0.0
    for i in range(len(frames[0])):
        for d in range(3):
            mean = sum(frames[b][i][1 + d] for b in range(P)) / P
            for b in range(P):
                worst = max(worst, abs(frames[b][i][4 + d] - mean))
    print("%s: max |centroid - mean of beads| = %.2e A" % (method, worst))
    T.check(len(frames[0]) == 108 and worst < 1e-9, "%s: centroid off by %g" % (method, worst))
T.summary("test_pimd_peratom")
