"""fix pimd/langevin in NVT reaches the target temperature: every normal mode's kinetic
energy averages 3 N P kT / 2 (the ring polymer is thermostatted at P T), in metal and lj
units, for obabo and baoab; with one bead the thermo temperature averages T."""
import aisci_testlib as T
import pimd_systems as S

KB_METAL = 8.617343e-5
for units, temp, integ in (("metal", 30.0, "obabo"), ("metal", 30.0, "baoab"), ("lj", 0.8, "obabo")):
    P = 4
    fix = "fix pimd all pimd/langevin temp %g thermostat PILE_L 21 tau %s integrator %s" % (
        temp, "0.1" if units == "metal" else "0.5", integ)
    script = S.lj_script(fix, nsteps=4000, thermo=10, extra="f_pimd[1]", units=units)
    if units == "lj":
        # lj units normalise extensive thermo output by N unless told otherwise
        script = script.replace("create 1.0", "create %g" % temp).replace(
            "thermo 10\n", "thermo 10\nthermo_modify norm no\n")
    r = T.run_lammps(script, nprocs=P, partitions="%dx1" % P)
    if not T.check(r.rc == 0, "%s %s run failed:\n%s" % (units, integ, r.output[-1500:])):
        continue
    kT = (KB_METAL if units == "metal" else 1.0) * temp
    th = [T.parse_thermo(log) for log in r.logs]
    n = len(th[0]["Step"])
    target = 1.5 * 108 * P * kT
    ratio = [sum(t["f_pimd[1]"][i] for t in th) / P / target for i in range(n // 5, n)]
    m, e = T.mean_and_error(ratio)
    print("%s %s: <mode kinetic energy> / (3 N P kT / 2) = %.4f +- %.4f" % (units, integ, m, e))
    T.check(abs(m - 1.0) < 4 * e + 0.01, "%s %s: mode temperature ratio %.4f +- %.4f" % (units, integ, m, e))

r = T.run_lammps(S.lj_script("fix pimd all pimd/langevin temp 30.0 thermostat PILE_L 5 tau 0.1",
                             nsteps=6000, thermo=10), nprocs=1)
if T.check(r.rc == 0, "P=1 run failed:\n" + r.output[-1500:]):
    temps = r.thermo()["Temp"]
    m, e = T.mean_and_error(temps[len(temps) // 5:])
    print("P=1: <T> = %.2f +- %.2f K (target 30)" % (m, e))
    # fixcom removes 3 of 3N degrees of freedom, which thermo's temp already excludes
    T.check(abs(m - 30.0) < 4 * e + 0.3, "classical temperature %.2f +- %.2f" % (m, e))
T.summary("test_pimd_nvt")
