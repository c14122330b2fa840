"""fix pimd/langevin on a quantum harmonic oscillator (an analytic reference).

N independent atoms in harmonic wells (fix spring/self, defined before the pimd fix, so
its forces are part of each bead's potential). For P beads the mean potential energy
per degree of freedom has a closed form (pimd_systems.ho_potential_exact), which tends
to the quantum value (hbar w / 4) coth(beta hbar w / 2) as P grows. beta hbar w ~ 5
here, so the quantum value is 2.5x the classical kT/2. Checks: bead-averaged potential
energy and the centroid-virial kinetic-energy estimator match the P-bead value within
statistical error for P = 1, 2, 4, 8, and the values converge towards the exact one.
P = 4 runs again with method pimd (Cartesian beads): its centroid-virial estimator needs
the centroid as the mean of the beads (upstream 4Feb2025 takes bead 0 / sqrt(P) there,
which makes the estimator depend on where the wells sit in the box)."""
import aisci_testlib as T
import pimd_systems as S

NATOMS = 32
NSTEPS = 6000
values = {}
for P, method in ((1, "nmpimd"), (2, "nmpimd"), (4, "nmpimd"), (8, "nmpimd"), (4, "pimd")):
    fix = ("fix pimd all pimd/langevin method %s temp 300 thermostat PILE_L 11 tau 0.01 "
           "fixcom no" % method)
    r = T.run_lammps(S.harmonic_script(fix, nsteps=NSTEPS, natoms=NATOMS,
                                       extra="f_pimd[3] f_pimd[5] f_pimd[7]"),
                     nprocs=P, partitions="%dx1" % P)
    P_ = P
    P = "%d %s" % (P_, method) if method != "nmpimd" else P_
    if not T.check(r.rc == 0, "P=%s run failed:\n%s" % (P, r.output[-2000:])):
        continue
    th = [T.parse_thermo(log) for log in r.logs]
    nrow = len(th[0]["Step"])
    T.check(nrow == NSTEPS // 10 + 1, "P=%s: %d thermo rows" % (P, nrow))
    skip = nrow // 10
    dof = 3.0 * NATOMS
    pot = [sum(t["f_pimd[3]"][i] for t in th) / P_ / dof for i in range(skip, nrow)]
    kcv = [v / dof for v in th[0]["f_pimd[7]"][skip:]]
    kprim = [v / dof for v in th[0]["f_pimd[5]"][skip:]]
    exact = S.ho_potential_exact(P_)
    m_pot, e_pot = T.mean_and_error(pot)
    m_cv, e_cv = T.mean_and_error(kcv)
    m_pr, e_pr = T.mean_and_error(kprim)
    print("P=%s  <V>/dof = %.5f +- %.5f  K_cv/dof = %.5f +- %.5f  K_prim/dof = %.5f +- %.5f  exact(P) = %.5f  quantum = %.5f eV"
          % (P, m_pot, e_pot, m_cv, e_cv, m_pr, e_pr, exact, S.ho_potential_quantum()), flush=True)
    T.check(abs(m_pot - exact) < 4 * e_pot + 0.01 * exact,
            "P=%s potential %.5f vs exact %.5f (err %.5f)" % (P, m_pot, exact, e_pot))
    # for a harmonic oscillator <K_cv> = <V> exactly at every P
    T.check(abs(m_cv - exact) < 4 * e_cv + 0.01 * exact,
            "P=%s centroid-virial KE %.5f vs exact %.5f (err %.5f)" % (P, m_cv, exact, e_cv))
    T.check(abs(m_pr - exact) < 4 * e_pr + 0.02 * exact,
            "P=%s primitive KE %.5f vs exact %.5f (err %.5f)" % (P, m_pr, exact, e_pr))
    if method == "nmpimd":
        values[P_] = m_pot

q = S.ho_potential_quantum()
if len(values) == 4:
    errs = [abs(values[P] - q) for P in (1, 2, 4, 8)]
    T.check(errs[0] > errs[1] > errs[2] > errs[3], "no convergence with P: %s" % errs)
    T.check(errs[3] < 0.06 * q, "P=8 still %.1f%% from the quantum value" % (100 * errs[3] / q))
    T.check(values[8] > 2.0 * values[1], "quantum/classical ratio too small: %s" % values)
T.summary("test_pimd_harmonic")
