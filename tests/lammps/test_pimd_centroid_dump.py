"""The centroid trajectory in one file, as docs/fix_pimd_langevin.md says to write it: one
partition dumps f_pimd[1..3] to the file, the others the same dump to /dev/null (every
partition must define the same dumps). Checked: one file with every dumped step, its
centroids equal to the mean of the bead positions dumped by each partition on the same
steps, for P = 4 as 4 partitions and as 2 partitions with beads_per_world 2."""
import os

import aisci_testlib as T
import pimd_systems as S


def read_frames(path, ncols):
    """{step: {id: [values]}} of a LAMMPS custom dump with `ncols` values after id type."""
    frames, lines, i = {}, open(path).read().splitlines(), 0
    while i < len(lines):
        if lines[i].startswith("ITEM: TIMESTEP"):
            step, n = int(lines[i + 1]), int(lines[i + 3])
            rows = [ln.split() for ln in lines[i + 9:i + 9 + n]]
            frames[step] = {int(r[0]): [float(v) for v in r[2:2 + ncols]] for r in rows}
            i += 9 + n
        else:
            i += 1
    return frames


DUMPS = """
variable ibead uloop 16 pad
partition yes 1 dump cent all custom 10 centroid.lammpstrj id type f_pimd[1] f_pimd[2] f_pimd[3]
partition no 1 dump cent all custom 10 /dev/null id type f_pimd[1] f_pimd[2] f_pimd[3]
dump beads all custom 10 beads_${ibead}.lammpstrj id type %s
"""
for parts, k in ((4, 1), (2, 2)):
    cols = " ".join("f_pimd[%d]" % c for c in range(5, 5 + 3 * k))
    fix = "fix pimd all pimd/langevin temp 30.0 thermostat PILE_L 5 tau 0.1 beads_per_world %d" % k
    script = S.lj_script(fix + DUMPS % cols, nsteps=30, thermo=10)
    r = T.run_lammps(script, nprocs=parts, partitions="%dx1" % parts)
    if not T.check(r.rc == 0, "%dx1 bpw %d failed:\n%s" % (parts, k, r.output[-1500:])):
        continue
    files = sorted(f for f in os.listdir(r.workdir) if f.endswith(".lammpstrj"))
    T.check(files == ["beads_%02d.lammpstrj" % (w + 1) for w in range(parts)] + ["centroid.lammpstrj"],
            "%dx1: files written %s" % (parts, files))
    cent = read_frames(os.path.join(r.workdir, "centroid.lammpstrj"), 3)
    beads = [read_frames(os.path.join(r.workdir, "beads_%02d.lammpstrj" % (w + 1)), 3 * k)
             for w in range(parts)]
    T.check(sorted(cent) == [0, 10, 20, 30] and all(len(f) == 108 for f in cent.values()),
            "%dx1: centroid file steps %s" % (parts, sorted(cent)))
    worst, moved = 0.0, 0.0
    for step, frame in cent.items():
        for tag, c in frame.items():
            xs = [b[step][tag][3 * l:3 * l + 3] for b in beads for l in range(k)]
            mean = [sum(x[d] for x in xs) / len(xs) for d in range(3)]
            worst = max(worst, max(abs(c[d] - mean[d]) for d in range(3)))
            moved = max(moved, max(abs(x[d] - mean[d]) for x in xs for d in range(3)))
    # the dump prints 6 significant digits (box ~16 A): 1e-4 A; the beads spread ~0.1 A
    T.check(worst < 2e-4 and moved > 1e-2,
            "%dx1: centroid differs from the beads' mean by %.2e A (beads spread %.2e A)" %
            (parts, worst, moved))
    print("P = 4 as %dx1 (beads_per_world %d): one centroid file, 4 frames x 108 atoms, "
          "= mean of the beads to %.1e A (beads up to %.2f A from it)" % (parts, k, worst, moved))
T.summary("test_pimd_centroid_dump")
