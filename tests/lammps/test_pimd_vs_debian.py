"""fix pimd/langevin vs Debian's own fix pimd (method nmpimd, Nose-Hoover chains) on the
same system: 32 atoms in harmonic wells, 4 beads, 300 K. The bead-averaged potential
energy must agree between the two within statistical error (and both with the analytic
4-bead value)."""
import aisci_testlib as T
import pimd_systems as S

P = 4
NSTEPS = 20000
results = {}
for name, exe, fix in (
        ("aisci", None, "fix pimd all pimd/langevin temp 300 thermostat PILE_L 5 tau 0.01 fixcom no"),
        ("debian", T.DEBIAN_LMP, "fix pimd all pimd method nmpimd fmass 1.0 sp 1.0 temp 300 nhc 4")):
    # Debian's fix pimd busy-waits in MPI: 4 ranks on 2 busy cores can take minutes
    r = T.run_lammps(S.harmonic_script(fix, nsteps=NSTEPS, thermo=20), nprocs=P,
                     partitions="%dx1" % P, exe=exe, timeout=700)
    if not T.check(r.rc == 0, "%s run failed:\n%s" % (name, r.output[-2000:])):
        continue
    th = [T.parse_thermo(log) for log in r.logs]
    n = len(th[0]["Step"])
    pot = [sum(t["PotEng"][i] for t in th) / P / 96.0 for i in range(n // 10, n)]
    results[name] = T.mean_and_error(pot, blocks=20)
    print("%-7s <V>/dof = %.5f +- %.5f eV   (analytic 4-bead value %.5f)"
          % (name, results[name][0], results[name][1], S.ho_potential_exact(P)), flush=True)

if T.check(len(results) == 2, "both runs needed"):
    (ma, ea), (md, ed) = results["aisci"], results["debian"]
    T.check(abs(ma - md) < 4.0 * (ea * ea + ed * ed) ** 0.5,
            "pimd/langevin %.5f vs Debian fix pimd %.5f differ beyond error" % (ma, md))
    exact = S.ho_potential_exact(P)
    T.check(abs(md - exact) < 4.0 * ed + 0.01 * exact, "Debian fix pimd off the analytic value")
    T.check(ea < ed, "expected PILE-L to sample faster than Nose-Hoover chains (errors %g vs %g)" % (ea, ed))
T.summary("test_pimd_vs_debian")
