"""Per-atom output of fix pimd/langevin: columns 1-3 = centroid (unwrapped), column 4 =
the atom's centroid-virial kinetic energy, columns 5.. 4 + 3K = unwrapped positions of the
K beads a partition holds. Checks: the centroid equals the mean of the beads' unwrapped
positions from per-partition dumps (nmpimd and pimd methods), the per-atom kinetic
energies sum to the global estimator f_ID[7], a partition's own bead columns equal its
dumped xu yu zu, and with beads_per_world 4 on one partition the four bead columns
equal the per-partition dumps of the same run on 4 partitions (same seed)."""
import os

import aisci_testlib as T
import pimd_systems as S

P = 4


def last_frame(path):
    lines = open(path).read().splitlines()
    last = max(i for i, line in enumerate(lines) if line.startswith("ITEM: ATOMS"))
    return [[float(w) for w in line.split()] for line in lines[last + 1:]]


bead_runs = None
for method in ("nmpimd", "pimd"):
    fix = "fix pimd all pimd/langevin method %s temp 30.0 thermostat PILE_L 3 tau 0.1" % method
    extra = ("f_pimd[7] c_kcv\ncompute kcv all reduce sum f_pimd[4]\n"
             "dump d all custom 100 bead.${ibead} id xu yu zu f_pimd[1] f_pimd[2] f_pimd[3] "
             "f_pimd[5] f_pimd[6] f_pimd[7]\n"
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
    frames = [last_frame(os.path.join(r.workdir, "bead.%d" % b)) for b in range(P)]
    if method == "nmpimd":
        bead_runs = frames
    own = max(abs(fr[i][1 + d] - fr[i][7 + d]) for fr in frames for i in range(len(fr)) for d in range(3))
    T.check(own < 1e-12, "%s: bead columns differ from xu yu zu by %g" % (method, own))
    worst = 0.0
    for i in range(len(frames[0])):
        for d in range(3):
            mean = sum(frames[b][i][1 + d] for b in range(P)) / P
            for b in range(P):
                worst = max(worst, abs(frames[b][i][4 + d] - mean))
    print("%s: max |centroid - mean of beads| = %.2e A" % (method, worst))
    T.check(len(frames[0]) == 108 and worst < 1e-9, "%s: centroid off by %g" % (method, worst))

# the same run with the 4 beads in one partition: bead columns 5..16 = the 4 dumps above
fix = "fix pimd all pimd/langevin method nmpimd temp 30.0 thermostat PILE_L 3 tau 0.1 beads_per_world 4"
cols = " ".join("f_pimd[%d]" % c for c in range(5, 17))
extra = ("f_pimd[7]\ndump d all custom 100 beads.all id f_pimd[1] f_pimd[2] f_pimd[3] %s\n"
         "dump_modify d sort id format float %%.15g" % cols)
script = S.lj_script(fix, nsteps=300, thermo=100, extra=extra)
r = T.run_lammps(script, nprocs=1)
if T.check(r.rc == 0 and bead_runs is not None, "beads_per_world 4 run failed:\n" + r.output[-1500:]):
    packed = last_frame(os.path.join(r.workdir, "beads.all"))
    worst = max(abs(packed[i][4 + 3 * b + d] - bead_runs[b][i][1 + d])
                for b in range(P) for i in range(len(packed)) for d in range(3))
    print("beads_per_world 4: max |bead column - per-partition dump| = %.2e A" % worst)
    T.check(len(packed) == 108 and worst < 1e-7, "beads_per_world 4: bead columns off by %g" % worst)
T.summary("test_pimd_peratom")
