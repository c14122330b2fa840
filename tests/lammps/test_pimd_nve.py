"""fix pimd/langevin in NVE: conserved ring-polymer energy, P = 1 equals fix nve,
and the same trajectory with 1 or 2 ranks per bead (-partition 4x1 vs 4x2)."""
import aisci_testlib as T
import pimd_systems as S

extra = "f_pimd[1] f_pimd[2] f_pimd[3] f_pimd[4] f_pimd[5] f_pimd[6] f_pimd[7] f_pimd[8] f_pimd[9] f_pimd[10]"
fix = "fix pimd all pimd/langevin ensemble nve temp 30.0"

# energy conservation, 4 beads (metal units) and lj units
for units in ("metal", "lj"):
    r = T.run_lammps(S.lj_script(fix if units == "metal" else fix.replace("30.0", "1.0"), nsteps=1000, extra=extra, units=units),
                     nprocs=4, partitions="4x1")
    if T.check(r.rc == 0, "%s NVE run failed:\n%s" % (units, r.output[-2000:])):
        e = r.thermo(0)["f_pimd[4]"]
        drift = max(abs(x - e[0]) for x in e) / abs(e[0])
        print("%s units: total energy %.8g, max relative deviation %.2e" % (units, e[0], drift))
        T.check(drift < (2e-5 if units == "metal" else 1e-4), "%s: energy drift %.2e" % (units, drift))
        # total energy is the same number in every partition's log
        e3 = r.thermo(3)["f_pimd[4]"]
        T.check(max(abs(a - b) for a, b in zip(e, e3)) < 1e-9 * abs(e[0]), "total energy differs between partitions")
        T.check(all(abs(x) < 1e-12 for x in r.thermo(0)["f_pimd[2]"]), "mode 0 has spring energy")

# one bead is classical velocity Verlet: identical to fix nve
base = S.lj_script("FIX", nsteps=300, thermo=50, extra="etotal")
a = T.run_lammps(base.replace("FIX", fix))
b = T.run_lammps(base.replace("FIX", "fix 1 all nve"), exe=T.DEBIAN_LMP)
if T.check(a.rc == 0 and b.rc == 0, "P=1 comparison runs failed:\n%s\n%s" % (a.output[-1500:], b.output[-1500:])):
    pa, pb = a.thermo()["PotEng"], b.thermo()["PotEng"]
    T.check(len(pa) == len(pb) and max(abs(x - y) for x, y in zip(pa, pb)) < 1e-9,
            "P=1 pimd/langevin nve differs from fix nve: %s vs %s" % (pa[-1], pb[-1]))

# decomposition invariance: 4 beads x 1 rank vs 4 beads x 2 ranks
runs = [T.run_lammps(S.lj_script(fix, nsteps=400, thermo=100, extra=extra), nprocs=4 * m, partitions="4x%d" % m)
        for m in (1, 2)]
if T.check(all(r.rc == 0 for r in runs), "4x1/4x2 runs failed:\n%s" % runs[-1].output[-2000:]):
    for col in ("f_pimd[4]", "f_pimd[5]", "f_pimd[7]"):
        x, y = runs[0].thermo(1)[col], runs[1].thermo(1)[col]
        T.check(max(abs(p - q) for p, q in zip(x, y)) < 1e-6 * max(1.0, abs(x[0])),
                "%s differs between 4x1 and 4x2: %s vs %s" % (col, x[-1], y[-1]))
T.summary("test_pimd_nve")
