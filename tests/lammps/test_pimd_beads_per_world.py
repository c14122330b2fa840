"""beads_per_world K: one partition holds K beads, each bead's forces computed by the
normal LAMMPS force evaluation. With the same seed, P = 4 beads as 4 partitions x 1,
2 x 2 and 1 x 4 give the same trajectory (to rounding), in NVT and NPT; 8 beads on 2
partitions reproduce the analytic harmonic-oscillator value; ring polymers far wider than
the neighbor skin change nothing but the cost."""
import aisci_testlib as T
import pimd_systems as S

cols = " ".join("f_pimd[%d]" % i for i in range(4, 11))
for ens in ("nvt", "npt"):
    fix = "fix pimd all pimd/langevin ensemble %s temp 30.0 thermostat PILE_L 77 tau 0.1 iso 100 taup 0.5" % ens
    runs = {}
    for parts, k in ((4, 1), (2, 2), (1, 4)):
        script = S.lj_script(fix + " beads_per_world %d" % k, nsteps=300, thermo=50, extra=cols).replace(
            "lattice fcc 5.3", "lattice fcc 4.45").replace("timestep 0.002", "timestep 0.001")
        r = T.run_lammps(script, nprocs=parts, partitions="%dx1" % parts)
        if T.check(r.rc == 0, "%s %dx%d failed:\n%s" % (ens, parts, k, r.output[-1500:])):
            runs[(parts, k)] = r.thermo(0)
    if len(runs) == 3:
        ref = runs[(4, 1)]
        for key in ((2, 2), (1, 4)):
            for col in ("f_pimd[4]", "f_pimd[5]", "f_pimd[7]", "f_pimd[10]"):
                a, b = ref[col], runs[key][col]
                diff = max(abs(x - y) / max(1.0, abs(x)) for x, y in zip(a, b))
                T.check(len(a) == len(b) and diff < 1e-7,
                        "%s: %s with %d partitions x %d beads differs from 4 x 1 by %.2e" % (ens, col, key[0], key[1], diff))
        print("%s: 4x1, 2x2 and 1x4 agree (total energy %.10g / %.10g / %.10g at the last step)" %
              (ens, ref["f_pimd[4]"][-1], runs[(2, 2)]["f_pimd[4]"][-1], runs[(1, 4)]["f_pimd[4]"][-1]))

# 8 beads on 2 partitions, harmonic oscillator against the analytic 8-bead value
fix = "fix pimd all pimd/langevin temp 300 thermostat PILE_L 11 tau 0.01 fixcom no beads_per_world 4"
r = T.run_lammps(S.harmonic_script(fix, nsteps=6000, extra="f_pimd[3] f_pimd[7]").replace(
    "pair_style zero 2.0", "pair_style zero 2.0\nneighbor 2.0 bin"), nprocs=2, partitions="2x1")
if T.check(r.rc == 0, "harmonic 2x4 failed:\n" + r.output[-1500:]):
    th = [T.parse_thermo(log) for log in r.logs]
    n = len(th[0]["Step"])
    pot = [(th[0]["f_pimd[3]"][i] + th[1]["f_pimd[3]"][i]) / 8 / 96.0 for i in range(n // 10, n)]
    m, e = T.mean_and_error(pot)
    exact = S.ho_potential_exact(8)
    print("harmonic, 8 beads on 2 partitions: <V>/dof = %.5f +- %.5f (exact %.5f)" % (m, e, exact))
    T.check(abs(m - exact) < 4 * e + 0.01 * exact, "8-bead harmonic value %.5f vs %.5f" % (m, exact))

# ring polymers far wider than the skin (P = 4 neon at 30 K, about 0.5 A wide; skin 0.02
# sigma = 0.055 A): the partition's ghost shell widens to cover its beads and a bead beyond
# the first bead's lists gets lists of its own, so 2 x 1 and 2 x 2 (two ranks per
# partition) with beads_per_world 2 follow 4 x 1 over 200 steps
def fcc_data(cells=3, a=5.3):
    """108 atoms on an fcc lattice, as a data file: the same atom IDs in every layout."""
    basis = ((0, 0, 0), (0.5, 0.5, 0), (0.5, 0, 0.5), (0, 0.5, 0.5))
    atoms = [(a * (i + bx), a * (j + by), a * (k + bz)) for i in range(cells) for j in range(cells)
             for k in range(cells) for bx, by, bz in basis]
    lines = ["fcc", "", "%d atoms" % len(atoms), "1 atom types", "",
             "0 %g xlo xhi" % (a * cells), "0 %g ylo yhi" % (a * cells), "0 %g zlo zhi" % (a * cells),
             "", "Masses", "", "1 20.18", "", "Atoms # atomic", ""]
    lines += ["%d 1 %.10f %.10f %.10f" % (n + 1, x, y, z) for n, (x, y, z) in enumerate(atoms)]
    return "\n".join(lines) + "\n"

wide = {}
fix = "fix pimd all pimd/langevin ensemble nvt temp 30.0 thermostat PILE_L 77 tau 0.1 beads_per_world %d"
for parts, procs, k in ((4, 4, 1), (2, 2, 2), (2, 4, 2)):
    script = S.lj_script(fix % k, nsteps=200, thermo=20, extra=cols).replace(
        "region box block 0 3 0 3 0 3\ncreate_box 1 box\ncreate_atoms 1 box\n", "read_data lj.data\n").replace(
        "pair_modify shift yes", "pair_modify shift yes\nneighbor 0.055 bin\nneigh_modify every 1 delay 0 check yes"
        "\nthermo_modify format float %.15g")
    r = T.run_lammps(script, nprocs=procs, partitions="%dx%d" % (parts, procs // parts),
                     files={"lj.data": fcc_data()})
    if T.check(r.rc == 0, "wide beads %dx%d bpw %d failed:\n%s" % (parts, procs // parts, k, r.output[-1500:])):
        wide[(parts, procs)] = (r.thermo(0), r.logs[0])
if len(wide) == 3:
    ref = wide[(4, 4)][0]
    for key, name in (((2, 2), "2x1"), ((2, 4), "2x2")):
        th, log = wide[key]
        # relative to each column's largest value (f_pimd[6] starts at a rounding-level 1e-15)
        diff = max(abs(x - y) / max(abs(v) for v in ref[col])
                   for col in cols.split() for x, y in zip(ref[col], th[col]))
        T.check(len(th["Step"]) == 11 and diff < 1e-10,
                "wide beads: %s with beads_per_world 2 differs from 4x1 by %.2e" % (name, diff))
        widened = [l for l in log.splitlines() if "ghost shell widened" in l]
        T.check(len(widened) > 0, "wide beads %s: the log does not say the ghost shell was widened" % name)
        print("wide beads: %s beads_per_world 2 = 4x1 to %.1e over 200 steps (%s)" %
              (name, diff, widened[-1] if widened else "-"))
# the ghost shell is widened through the single ghost cutoff
r = T.run_lammps(S.lj_script("comm_modify mode multi\nfix pimd all pimd/langevin beads_per_world 2",
                             nsteps=10).replace("pair_modify shift yes", "pair_modify shift yes\nneighbor 1.0 multi"),
                 nprocs=1)
T.check(r.rc != 0 and "beads_per_world > 1 needs comm_modify mode single" in r.output,
        "comm_modify mode multi:\n" + r.output[-500:])
r = T.run_lammps(S.lj_script("fix pimd all pimd/langevin beads_per_world 0", nsteps=10), nprocs=1)
T.check(r.rc != 0 and "beads_per_world must be an integer from 1 to 4096, got 0" in r.output, "bad K:\n" + r.output[-500:])
r = T.run_lammps(S.lj_script("fix pimd all pimd/langevin method pimd beads_per_world 2", nsteps=10), nprocs=1)
T.check(r.rc != 0 and "beads_per_world > 1 needs method nmpimd" in r.output, "pimd + K:\n" + r.output[-500:])
T.summary("test_pimd_beads_per_world")
