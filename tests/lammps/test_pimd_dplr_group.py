"""fix pimd/langevin on a group of nuclei with fix dplr's Wannier centroids (WCs) outside
it (DPLR water, 16 molecules: 48 nuclei, 16 WCs; tests/lammps/dplr_systems.py):
1. P = 1, ensemble nve: the trajectory of fix nve on the same group (the WCs placed by
   fix dplr in both) to 1e-9 A after 20 steps, in units metal and units real, and with
   method pimd (Cartesian beads);
2. P = 2 (-partition 2x1), beads started together: the centroid-virial kinetic estimator
   f_pimd[7] at step 0 is 3/2 N k_B T with N = 48 nuclei (the WCs are not counted), in
   metal and real; per-atom output: the WCs have kinetic energy 0 and their bead position;
3. a restart in the middle continues bit for bit (2x1, NVT; neighbor lists rebuilt every
   step so that both runs build them on the same steps), and a restart record read with
   another method or another group is refused by name;
4. ensemble npt with the WCs: the cell moves, every atom stays, each WC within 1 A of its
   O (the WCs follow their parents);
5. errors, each naming the remedy (and partitions whose fix dplr reads other DW model
   files): the WC type in the group (group all and a named
   group), fix dplr defined after fix pimd/langevin, atoms outside the group that nothing
   places.
Exit 77 (skipped) without the torch wrapper."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aisci_testlib as T  # noqa: E402

try:
    import aisci_nn_toy as toy  # noqa: E402  (these need numpy and torch)
    import dplr_systems as S  # noqa: E402
except ImportError as e:
    T.skip(str(e))
toy.skip_without_torch_wrapper()

BOX, DATA = S.pimd_water_box()
L = float(BOX["box"][0])
PRE = "atom_modify map yes"
KB = {"metal": 8.617343e-5, "real": 0.0019872067}    # LAMMPS's force->boltz
DT = {"metal": "0.00025", "real": "0.25"}
END = ("write_dump all custom end.dump id type x y z modify sort id format float %.17g\n")


def script(units, body):
    return S.water_script(units=units, pre=PRE, body=body.replace("timestep 0.00025",
                                                                  "timestep " + DT[units]))


def positions(run, name="end.dump"):
    _, rows = S.read_dump(os.path.join(run.workdir, name))
    return rows


def ok(run, what):
    return T.check(run.rc == 0 and "TIMEOUT" not in run.output,
                   "%s failed:\n%s" % (what, run.output[-2500:]))


# ---------------------------------------------------------------- 1. P = 1 NVE = fix nve
# (method nmpimd in metal and real; method pimd, the Cartesian path, in metal)
for units, method in (("metal", "nmpimd"), ("real", "nmpimd"), ("metal", "pimd")):
    pimd = T.run_lammps(script(units, S.pimd_water_body(pimd="ensemble nve method " + method,
                                                        thermo=10, run_extra="") + END),
                        files=DATA, timeout=300)
    nve = T.run_lammps(script(units, S.NUCLEI +
                              "velocity nuclei create 300 4928 dist gaussian loop geom\n"
                              "fix 1 nuclei nve\ntimestep 0.00025\nthermo 10\nrun 20\n" + END),
                       files=DATA, timeout=300)
    if ok(pimd, "%s P = 1 nve" % units) and ok(nve, "%s fix nve" % units):
        a, b = positions(pimd), positions(nve)
        dx = max(abs(p - q) for i in a for p, q in zip(a[i][2:], b[i][2:]))
        wc = max(abs(p - q) for i in a if a[i][1] == 3 for p, q in zip(a[i][2:], b[i][2:]))
        print("%s, method %s: P = 1 nve vs fix nve after 20 steps: max |dx| %.3g A (WCs %.3g A)"
              % (units, method, dx, wc))
        T.check(len(a) == 64 and dx <= 1e-9,
                "%s, method %s: P = 1 nve differs from fix nve by %g A" % (units, method, dx))
        moved = max(abs(a[i][2] - float(BOX["positions"][i - 1][0]) % L) for i in a
                    if a[i][1] == 1)
        T.check(moved > 1e-4, "%s: the nuclei moved (%g A)" % (units, moved))

# ------------------------------------------ 2. P = 2 started together: f[7] = 3/2 N kT
for units in ("metal", "real"):
    dumps = ("dump pa all custom 100 peratom.${w} id type f_pimd[1] f_pimd[2] f_pimd[3] "
             "f_pimd[4]\ndump_modify pa sort id format float %.17g\n")
    r = T.run_lammps("variable w world 0 1\n" + script(units, S.pimd_water_body(
        steps=0, velocity=False, run_extra=dumps)), nprocs=2, partitions="2x1", files=DATA,
        timeout=300)
    if ok(r, "%s P = 2 step 0" % units):
        k_cv = r.thermo(0)["f_pimd[7]"][0]
        expect = 1.5 * 48 * KB[units] * 300.0
        print("%s: f_pimd[7] at step 0 = %.12g, 3/2 N kT (N = 48 nuclei) = %.12g, "
              "with the 64 sites it would be %.12g" % (units, k_cv, expect, expect * 64 / 48))
        T.check(abs(k_cv - expect) <= 1e-9 * expect,
                "%s: f_pimd[7] = %.12g, expected %.12g" % (units, k_cv, expect))
        cols, pa = S.read_dump(os.path.join(r.workdir, "peratom.0"))
        wcs = [row for row in pa.values() if row[1] == 3]
        nuc = [row for row in pa.values() if row[1] != 3]
        T.check(len(wcs) == 16 and all(row[5] == 0.0 for row in wcs),
                "%s: per-atom kinetic energy of the WCs is 0" % units)
        T.check(all(abs(row[5] - 1.5 * KB[units] * 300.0) < 1e-9 for row in nuc),
                "%s: per-atom kinetic energy of the nuclei is 3/2 kT at step 0" % units)

# ----------------------------------------------------------------- 3. restart, bitwise
NVT = "temp 300 thermostat PILE_L 71 tau 0.05"
REBUILD = "neigh_modify every 1 delay 0 check no\n"
HEAD = "variable w world 0 1\n"
FINAL = ("write_dump all custom final.${w} id x y z vx vy vz modify sort id "
         "format float %.17g\n")
fix_line = "fix pimd nuclei pimd/langevin %s beads_per_world 1\n" % NVT
whole = T.run_lammps(HEAD + script("metal", REBUILD + S.pimd_water_body(
    pimd=NVT, steps=20, thermo=10) + FINAL), nprocs=2, partitions="2x1", files=DATA, timeout=300)
first = T.run_lammps(HEAD + script("metal", REBUILD + S.pimd_water_body(
    pimd=NVT, steps=10, thermo=10) + "write_restart state.${w}\n"), nprocs=2,
    partitions="2x1", files=DATA, timeout=300)


def second_script(fix=fix_line, group=S.NUCLEI):
    s = script("metal", REBUILD + group + fix + "timestep 0.00025\nthermo 10\nrun 10\n" + FINAL)
    return HEAD + s.replace("read_data water.data", "read_restart state.${w}")


if ok(whole, "continuous run") and ok(first, "first half"):
    second = T.run_lammps(second_script(), nprocs=2, partitions="2x1", workdir=first.workdir,
                          timeout=300)
    if ok(second, "second half"):
        for w in (0, 1):
            a = open(os.path.join(whole.workdir, "final.%d" % w)).read().split("ITEM: ATOMS")[1]
            b = open(os.path.join(second.workdir, "final.%d" % w)).read().split("ITEM: ATOMS")[1]
            T.check(a == b, "bead %d: the restarted run equals the continuous one bit for bit" % w)
    bad = T.run_lammps(second_script(fix=fix_line.replace("pimd/langevin", "pimd/langevin method pimd")),
                       nprocs=2, partitions="2x1", workdir=first.workdir, timeout=300)
    T.check(bad.rc != 0 and "restart file was written with method nmpimd, but this fix has "
            "method pimd" in bad.output, "restart with another method:\n" + bad.output[-1200:])
    bad = T.run_lammps(second_script(fix=fix_line.replace("nuclei", "oxygen"),
                                     group="group oxygen type 1\n"),
                       nprocs=2, partitions="2x1", workdir=first.workdir, timeout=300)
    T.check(bad.rc != 0 and "restart file has 48 ring-polymer atoms (the fix's group), but "
            "group oxygen holds 16 now" in bad.output,
            "restart with another group:\n" + bad.output[-1200:])

# ------------------------------------------------------------- 4. npt: WCs follow the cell
r = T.run_lammps(HEAD + script("metal", S.pimd_water_body(
    pimd="ensemble npt iso 1.0 barostat BZP taup 0.02 temp 300 thermostat PILE_L 7 tau 0.05",
    steps=40, thermo=40, run_extra="thermo_style custom step vol f_pimd[4]\n"
    "thermo_modify format float %.17g lost error\n") + END), nprocs=2, partitions="2x1",
    files=DATA, timeout=300)
if ok(r, "npt"):
    t = r.thermo(0)
    end = positions(r)
    T.check(len(t["Volume"]) == 2 and t["Volume"][1] != t["Volume"][0],
            "npt: the cell moved (volume %s)" % t.get("Volume"))
    T.check(len(end) == 64, "npt: all 64 atoms kept")
    far = 0.0
    for i, row in end.items():
        if row[1] == 3:
            d = [row[2 + a] - end[i - 3][2 + a] for a in range(3)]
            far = max(far, sum((x - L * round(x / L)) ** 2 for x in d) ** 0.5)
    print("npt: volume %.6f -> %.6f A^3; largest WC-O distance after 40 steps %.3f A"
          % (t["Volume"][0], t["Volume"][-1], far))
    T.check(far < 1.0, "npt: every WC within 1 A of its O (%.3f)" % far)

# --------------------------------------------------------------------------- 5. errors
DPLR_LINE = ("fix dplr all dplr model %s type_associate 1 3 bond_type 2 \n"
             "fix_modify dplr virial yes energy yes\n" % S.DW)
errors = [
    ("group all", S.pimd_water_body(fix_group="all", steps=0),
     "fix pimd/langevin: group all holds 16 Wannier centroids of fix dplr (atom type(s) 3; "
     "e.g. atom ID 4, type 3): they would be ring polymers, integrated, thermostatted and "
     "counted in every estimator; apply fix pimd to the nuclei only, e.g. 'group nuclei "
     "type 1 2' and 'fix pimd nuclei pimd/langevin ...'"),
    ("WC type in a group", "group sites type 1 2 3\n" + S.pimd_water_body(fix_group="sites",
                                                                          steps=0),
     "group sites holds 16 Wannier centroids of fix dplr"),
    ("fix dplr after", "unfix dplr\n" + S.pimd_water_body(steps=0).replace(
        "timestep", DPLR_LINE + "timestep"),
     "fix pimd/langevin: fix dplr (dplr) is defined after fix pimd; define it before: its "
     "forces on the Wannier centroids must reach their parent atoms before fix pimd turns "
     "each bead's forces into ring-polymer forces"),
    ("H outside", "group oxygen type 1\n" + S.pimd_water_body(fix_group="oxygen", steps=0),
     "fix pimd/langevin: 32 atoms are outside group oxygen (e.g. atom ID 2, type 2) and "
     "nothing places them for each bead: only the Wannier centroids of a fix dplr defined "
     "before fix pimd may stay outside the group; put these atoms in it"),
]
# each partition with another DW model (another file content) for fix dplr
errors.append(("DW model differs", S.pimd_water_body(steps=0),
               "fix pimd/langevin: partitions (beads) differ in fix dplr DW model file content"))
OTHER_DW = os.path.join(S.MODELS, "water_dplr_dft_dw.pt")
for name, body, expect in errors:
    text = script("metal", body)
    if name == "DW model differs":
        text = "variable dw world %s %s\n" % (S.DW, OTHER_DW) + text.replace(S.DW, "${dw}")
    r = T.run_lammps(HEAD + text, nprocs=2, partitions="2x1", files=DATA,
                     timeout=300)
    T.check(r.rc != 0 and expect in r.output and "TIMEOUT" not in r.output,
            "%s: expected error '%s' (rc %d):\n%s" % (name, expect, r.rc, r.output[-1500:]))

T.summary("test_pimd_dplr_group")
