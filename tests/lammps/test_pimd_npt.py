"""fix pimd/langevin at constant pressure (4 beads, 108 Lennard-Jones neon atoms, metal
units): the enthalpy-like conserved quantity is conserved in NPH (BZP and MTTK, iso and
aniso), the mean pressure equals the target in NPT (all three pressure estimators), and
an NPT run split by a restart equals the continuous run (cell momentum restored)."""
import os

import aisci_testlib as T
import pimd_systems as S


def script(fix, nsteps, thermo, extra):
    return S.lj_script(fix, nsteps=nsteps, thermo=thermo, extra=extra).replace(
        "lattice fcc 5.3", "lattice fcc 4.45").replace("timestep 0.002", "timestep 0.001")


iso = " ".join("f_pimd[%d]" % i for i in range(1, 16)) + " vol"
aniso = " ".join("f_pimd[%d]" % i for i in range(1, 18)) + " lx ly lz"

# NPH: conserved quantity (column 15 iso / 17 aniso) while energy and volume change a lot
for baro, style, cols, last in (("BZP", "iso", iso, 15), ("MTTK", "iso", iso, 15), ("BZP", "aniso", aniso, 17)):
    fix = "fix pimd all pimd/langevin ensemble nph temp 30.0 %s 100.0 barostat %s taup 1.0" % (style, baro)
    r = T.run_lammps(script(fix, 2000, 100, cols), nprocs=4, partitions="4x1")
    if not T.check(r.rc == 0, "NPH %s %s failed:\n%s" % (baro, style, r.output[-1500:])):
        continue
    th = r.thermo(0)
    h, e = th["f_pimd[%d]" % last], th["f_pimd[4]"]
    drift = max(abs(x - h[0]) for x in h)
    swing = max(e) - min(e)
    vol = th["Volume"] if "Volume" in th else [a * b * c for a, b, c in zip(th["Lx"], th["Ly"], th["Lz"])]
    print("NPH %-4s %-5s: conserved quantity within %.2e eV while E_rp swings %.3f eV and V %.0f..%.0f A^3"
          % (baro, style, drift, swing, min(vol), max(vol)), flush=True)
    T.check(drift < 0.005 * swing, "NPH %s %s: drift %.3g vs swing %.3g" % (baro, style, drift, swing))
    T.check(max(vol) - min(vol) > 0.05 * min(vol), "NPH %s %s: the cell did not move" % (baro, style))
    if style == "aniso":
        T.check(len(set(round(x, 6) for x in th["Lx"])) > 3, "aniso: Lx constant")

# NPT: mean pressure = target within statistical error
for baro, nsteps in (("BZP", 10000),):
    fix = ("fix pimd all pimd/langevin ensemble npt temp 30.0 iso 100.0 barostat %s taup 1.0 "
           "thermostat PILE_L 7 tau 0.2" % baro)
    r = T.run_lammps(script(fix, nsteps, 100, iso), nprocs=4, partitions="4x1")
    if not T.check(r.rc == 0, "NPT %s failed:\n%s" % (baro, r.output[-1500:])):
        continue
    th = r.thermo(0)
    k = len(th["Step"]) // 5
    for col, name in ((8, "primitive"), (9, "thermodynamic"), (10, "centroid-virial")):
        m, err = T.mean_and_error(th["f_pimd[%d]" % col][k:])
        print("NPT %s: <P_%s> = %.1f +- %.1f bar (target 100)" % (baro, name, m, err), flush=True)
        T.check(abs(m - 100.0) < 4 * err + 5.0, "NPT %s: %s pressure %.1f +- %.1f" % (baro, name, m, err))

# restart of an NPT run equals the continuous run
fix = "fix pimd all pimd/langevin ensemble npt temp 30.0 iso 100.0 taup 0.5 thermostat PILE_L 9 tau 0.2"
body = script(fix, 0, 50, "vol").split("run 0")[0]
dump = "write_dump all custom final.${ibead} id xu yu zu vx vy vz modify sort id format float %.15g\nprint 'VOLUME $(vol:%.15g)'\n"
head = "variable ibead world 0 1\n"
whole = T.run_lammps(head + body + "run 200\n" + dump, nprocs=2, partitions="2x1")
first = T.run_lammps(head + body + "run 100\nwrite_restart state.${ibead}\n", nprocs=2, partitions="2x1")
second = T.run_lammps(head + "atom_modify map yes\nread_restart state.${ibead}\npair_style lj/cut 7.0\n"
                      "pair_coeff 1 1 0.0031 2.74\npair_modify shift yes\n" + fix +
                      "\ntimestep 0.001\nthermo 50\nrun 100\n" + dump, nprocs=2, partitions="2x1",
                      workdir=first.workdir)
if T.check(whole.rc == 0 and first.rc == 0 and second.rc == 0, "NPT restart runs failed:\n" + second.output[-1500:]):
    def vol(run):
        return [line for line in run.logs[0].splitlines() if line.startswith("VOLUME")][-1]
    T.check(vol(whole) == vol(second), "volume after restart: %s vs %s" % (vol(whole), vol(second)))
    a = open(os.path.join(whole.workdir, "final.0")).read().splitlines()[9:]
    b = open(os.path.join(second.workdir, "final.0")).read().splitlines()[9:]
    diff = max(abs(float(x) - float(y)) for la, lb in zip(a, b) for x, y in zip(la.split(), lb.split()))
    print("NPT restart: max |difference| %.2e" % diff)
    T.check(len(a) == 108 and diff < 1e-8, "NPT restart differs by %g" % diff)
T.summary("test_pimd_npt")
