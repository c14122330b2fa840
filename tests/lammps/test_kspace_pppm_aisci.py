"""kspace_style pppm/aisci against Debian's kspace_style pppm and ewald on the same point
charges (300 random charges, atom_style charge, pair_style coul/long 8):
- same mesh, order and g_ewald: elong, pressure and forces agree far inside the accuracy;
- automatic parameters at accuracy 1e-4 and 1e-5: both agree with a converged Ewald sum
  (same g) within the accuracy, orthogonal and triclinic cells;
- 1 and 4 ranks give the same result to rounding; a charged system matches pppm's
  neutralising-background energy;
- bad input gives the documented errors."""
import math
import os
import random

import aisci_testlib as T

N = 300
QQRD2E = 332.06371  # real units


def data_file(tilt, net_charge=0.0, seed=7):
    rnd = random.Random(seed)
    lx, ly, lz = 18.0, 17.0, 19.0
    xy, xz, yz = tilt
    q = [rnd.uniform(-1.0, 1.0) for _ in range(N)]
    mean = sum(q) / N
    q = [v - mean + net_charge / N for v in q]
    lines = ["random point charges", "", "%d atoms" % N, "1 atom types", "",
             "0 %.1f xlo xhi" % lx, "0 %.1f ylo yhi" % ly, "0 %.1f zlo zhi" % lz]
    if tilt != (0.0, 0.0, 0.0):
        lines.append("%.2f %.2f %.2f xy xz yz" % tilt)
    lines += ["", "Masses", "", "1 1.0", "", "Atoms # charge", ""]
    for i in range(N):
        s = [rnd.random() for _ in range(3)]
        x = s[0] * lx + s[1] * xy + s[2] * xz
        y = s[1] * ly + s[2] * yz
        z = s[2] * lz
        lines.append("%d 1 %.15f %.10f %.10f %.10f" % (i + 1, q[i], x, y, z))
    return "\n".join(lines) + "\n"


def script(kspace, modify="", cut=8.0):
    return """units real
atom_style charge
boundary p p p
read_data data.charges
pair_style coul/long %.1f
pair_coeff * *
kspace_style %s
%s
thermo_style custom step pe ecoul elong press pxx pyy pzz pxy pxz pyz
thermo_modify format float %%.12g
dump f all custom 1 forces.dump id fx fy fz
dump_modify f sort id format float %%.15g
run 0
""" % (cut, kspace, modify)


def forces(workdir):
    out = {}
    with open(os.path.join(workdir, "forces.dump")) as f:
        lines = f.read().splitlines()
    start = lines.index("ITEM: ATOMS id fx fy fz") + 1
    for line in lines[start:start + N]:
        w = line.split()
        out[int(w[0])] = [float(v) for v in w[1:4]]
    return out


def run(kspace, modify="", exe=None, nprocs=1, tilt=(0.0, 0.0, 0.0), net=0.0, cut=8.0):
    r = T.run_lammps(script(kspace, modify, cut), exe=exe, nprocs=nprocs,
                     files={"data.charges": data_file(tilt, net)})
    if not T.check(r.rc == 0, "%s run failed:\n%s" % (kspace, r.output[-1500:])):
        return None
    th = r.thermo()
    return {k: v[0] for k, v in th.items()}, forces(r.workdir), r.logs[0]


def rms_diff(fa, fb):
    return math.sqrt(sum((fa[i][d] - fb[i][d]) ** 2 for i in fa for d in range(3)) / len(fa))


def g_from_log(log):
    for line in log.splitlines():
        if "G vector" in line:
            return float(line.split("=")[1])
    return None


ORTHO = (0.0, 0.0, 0.0)
TRI = (3.0, -2.0, 2.5)

# 1. identical parameters: the two PPPMs differ only in details of the influence function
for tilt in (ORTHO, TRI):
    mod = "kspace_modify mesh 24 24 25 order 5 gewald 0.32"
    a = run("pppm/aisci 1e-5", mod, tilt=tilt)
    d = run("pppm 1e-5", mod, exe=T.DEBIAN_LMP, tilt=tilt)
    if a and d:
        ferr = rms_diff(a[1], d[1]) / QQRD2E
        de = abs(a[0]["E_long"] - d[0]["E_long"])
        dp = max(abs(a[0][k] - d[0][k]) for k in ("Pxx", "Pyy", "Pzz", "Pxy", "Pxz", "Pyz"))
        print("same mesh/g, tilt %s: elong %.10g vs %.10g (diff %.2e), rms force diff %.2e "
              "(relative), max pressure diff %.2e atm" % (tilt, a[0]["E_long"], d[0]["E_long"],
                                                         de, ferr, dp), flush=True)
        T.check(ferr < 1e-6, "same parameters: force difference %.3g" % ferr)
        T.check(de < 1e-5 * abs(d[0]["E_long"]), "same parameters: elong differs by %.3g" % de)
        T.check(a[0]["E_coul"] == d[0]["E_coul"], "pair part must be identical")
        T.check(dp < 1e-3 * max(1.0, abs(d[0]["Press"])), "pressure differs by %.3g" % dp)

# 1b. ad differentiation, same parameters as Debian's pppm with kspace_modify diff ad
# (both use an optimal ad influence function and a self-force correction, each its own);
# Debian's pppm has no triclinic ad, so the tilted cell is compared with Ewald only
for tilt in (ORTHO, TRI):
    mod = "kspace_modify mesh 24 24 25 order 5 gewald 0.32 diff ad"
    a = run("pppm/aisci 1e-5", mod, tilt=tilt)
    d = run("pppm 1e-5", mod, exe=T.DEBIAN_LMP, tilt=tilt) if tilt == ORTHO else None
    ref = run("ewald 1e-10", "kspace_modify gewald 0.32", exe=T.DEBIAN_LMP, tilt=tilt)
    if a and ref:
        ea = rms_diff(a[1], ref[1]) / QQRD2E
        line = "ad, same mesh/g, tilt %s: rms force err vs Ewald %.2e" % (tilt, ea)
        T.check(ea <= 1e-5, "ad force error %.3g" % ea)
        if d:
            ed = rms_diff(d[1], ref[1]) / QQRD2E
            dad = rms_diff(a[1], d[1]) / QQRD2E
            line += " (Debian pppm ad %.2e), ours vs Debian %.2e; elong %.10g vs %.10g" % (
                ed, dad, a[0]["E_long"], d[0]["E_long"])
            T.check(ea <= 1.5 * ed, "ad force error %.3g vs Debian's %.3g" % (ea, ed))
            T.check(dad <= 1e-5, "ad: ours vs Debian %.3g" % dad)
        print(line, flush=True)

# 2. automatic parameters, each against a converged Ewald sum at its own g. The g values
# differ: pppm/aisci keeps the real-space (Kolafa-Perram) choice, Debian's pppm then moves
# g to balance real and k-space errors for the grid it picked.
for tilt in (ORTHO, TRI):
    for acc in (1e-4, 1e-5):
        a = run("pppm/aisci %g" % acc, tilt=tilt)
        d = run("pppm %g" % acc, exe=T.DEBIAN_LMP, tilt=tilt)
        if not (a and d):
            continue
        ga, gd = g_from_log(a[2]), g_from_log(d[2])
        ref_a = run("ewald 1e-10", "kspace_modify gewald %.12g" % ga, exe=T.DEBIAN_LMP, tilt=tilt)
        ref_d = run("ewald 1e-10", "kspace_modify gewald %.12g" % gd, exe=T.DEBIAN_LMP, tilt=tilt)
        if not (ref_a and ref_d):
            continue
        ea = rms_diff(a[1], ref_a[1]) / QQRD2E
        ed = rms_diff(d[1], ref_d[1]) / QQRD2E
        grid = [l.split("=")[1].strip() for l in a[2].splitlines() if "grid =" in l]
        dgrid = [l.split("=")[1].strip() for l in d[2].splitlines() if "grid =" in l]
        print("acc %.0e tilt %s: pppm/aisci g %.4f grid %s rms force err %.2e | Debian pppm g "
              "%.4f grid %s err %.2e | elong - ewald: %.2e / %.2e kcal/mol"
              % (acc, tilt, ga, grid[0] if grid else "?", ea, gd, dgrid[0] if dgrid else "?", ed,
                 a[0]["E_long"] - ref_a[0]["E_long"], d[0]["E_long"] - ref_d[0]["E_long"]),
              flush=True)
        T.check(ea <= acc, "pppm/aisci force error %.3g above accuracy %g" % (ea, acc))
        T.check(rms_diff(a[1], d[1]) / QQRD2E <= 2.0 * acc, "pppm/aisci vs pppm beyond accuracy")
        T.check(abs(a[0]["E_long"] - ref_a[0]["E_long"]) <= acc * QQRD2E * N / 3.0,
                "energy vs Ewald: %.8g vs %.8g" % (a[0]["E_long"], ref_a[0]["E_long"]))

# 3. ranks, and a charged cell (background term as in Debian's pppm)
mod = "kspace_modify mesh 24 24 25 order 5 gewald 0.32"
one = run("pppm/aisci 1e-5", mod, tilt=TRI)
four = run("pppm/aisci 1e-5", mod, tilt=TRI, nprocs=4)
if one and four:
    df = max(abs(one[1][i][d] - four[1][i][d]) for i in one[1] for d in range(3))
    fmax = max(abs(one[1][i][d]) for i in one[1] for d in range(3))
    print("1 vs 4 ranks: elong %.15g vs %.15g, max force diff %.2e of max" % (
        one[0]["E_long"], four[0]["E_long"], df / fmax), flush=True)
    T.check(df <= 1e-10 * fmax, "4 ranks differ from 1: %.3g" % df)
    T.check(abs(one[0]["E_long"] - four[0]["E_long"]) <= 1e-10 * abs(one[0]["E_long"]),
            "4-rank energy differs")
# Charged cell: the energy includes the background term -pi Q^2/(2 V g^2) like Debian's
# pppm. Its volume derivative is part of our virial (so the pressure does not depend on
# g), while Debian's pppm leaves it out: compare pressures at two g values (cutoff 12
# and a fine mesh, so that neither real- nor k-space truncation moves the pressure).
press = {}
for g in (0.32, 0.40):
    m = "kspace_modify mesh 40 40 40 order 7 gewald %.2f" % g
    a = run("pppm/aisci 1e-5", m, tilt=ORTHO, net=3.0, cut=12.0)
    d = run("pppm 1e-5", m, exe=T.DEBIAN_LMP, tilt=ORTHO, net=3.0, cut=12.0)
    if a and d:
        press[g] = (a[0]["Press"], d[0]["Press"])
        print("net charge +3, g %.2f: elong %.10g vs Debian %.10g; press %.6g vs Debian %.6g atm"
              % (g, a[0]["E_long"], d[0]["E_long"], a[0]["Press"], d[0]["Press"]), flush=True)
        T.check(abs(a[0]["E_long"] - d[0]["E_long"]) < 1e-6 * abs(d[0]["E_long"]),
                "charged system energy differs")
if T.check(len(press) == 2, "charged runs"):
    pa = abs(press[0.32][0] - press[0.40][0])
    pd = abs(press[0.32][1] - press[0.40][1])
    print("pressure change between g 0.32 and 0.40: pppm/aisci %.3g atm, Debian pppm %.3g atm"
          % (pa, pd), flush=True)
    T.check(pa < 0.1 * pd, "pressure of the charged cell should not depend on g")

# 4. bad input
BAD = [
    ("pppm/aisci 0", "", "accuracy must be > 0"),
    ("pppm/aisci -1e-5", "", "accuracy must be > 0"),
    ("pppm/aisci abc", "", "accuracy expects a number"),
    ("pppm/aisci", "", "expected one argument"),
    ("pppm/aisci 1e-5", "kspace_modify order 8", "order must be 2..7"),
    ("pppm/aisci 1e-5", "kspace_modify mesh 3 24 24", "below order"),
]
for kspace, modify, text in BAD:
    r = T.run_lammps(script(kspace, modify), files={"data.charges": data_file(ORTHO)})
    T.check(r.rc != 0 and text in r.output, "'%s / %s' should fail with '%s':\n%s" % (
        kspace, modify, text, r.output[-600:]))
r = T.run_lammps(script("pppm/aisci 1e-5").replace("coul/long 8.0", "lj/cut 8.0").replace(
    "pair_coeff * *", "pair_coeff * * 0.0 1.0"), files={"data.charges": data_file(ORTHO)})
T.check(r.rc != 0 and "long-range Coulomb cutoff" in r.output,
        "pair without coul: " + r.output[-600:])
r = T.run_lammps(script("pppm/aisci 1e-5").replace("boundary p p p", "boundary p p f"),
                 files={"data.charges": data_file(ORTHO)})
T.check(r.rc != 0 and "periodic boundaries" in r.output, "non-periodic: " + r.output[-600:])
# exact messages: an uncharged system (as LAMMPS's pppm: it needs gewald, and we also
# need the mesh, which no charges can size) and meshes beyond the documented limits
ZERO = data_file(ORTHO).splitlines()
first = ZERO.index("Atoms # charge") + 2
for k in range(first, first + N):    # id type q x y z: every q set to 0
    w = ZERO[k].split()
    ZERO[k] = " ".join(w[:2] + ["0.0"] + w[3:])
ZERO = "\n".join(ZERO) + "\n"
NOCHARGE = ("ERROR: kspace_style pppm/aisci: the system has no charge (every atom has q = 0), "
            "so there is no long-range Coulomb term: remove the kspace_style, or give both "
            "kspace_modify gewald and mesh to run it anyway")
EXACT = [
    ("pppm/aisci 1e-5", "", ZERO, NOCHARGE),
    ("pppm/aisci 1e-5", "kspace_modify gewald 0.3", ZERO, NOCHARGE),
    ("pppm/aisci 1e-5", "kspace_modify mesh 5000 5000 5000", data_file(ORTHO),
     "ERROR: kspace_style pppm/aisci: invalid argument: pppm: mesh 5000 x 5000 x 5000 "
     "(1.25e+11 points) needs about 6.52e+03 GiB per node (1 of 1 ranks there, 56 bytes per "
     "point per rank), more than the "),
    ("pppm/aisci 1e-5", "kspace_modify mesh 20000 24 24", data_file(ORTHO),
     "ERROR: kspace_style pppm/aisci: invalid argument: pppm: mesh 20000 x 24 x 24: size 20000 "
     "along cell vector 0 is above the limit 16384"),
]
for kspace, modify, data, expected in EXACT:
    r = T.run_lammps(script(kspace, modify), files={"data.charges": data}, timeout=120)
    line = next((l.split(" (src/")[0] for l in r.output.splitlines() if l.startswith("ERROR")),
                "")
    T.check(r.rc != 0 and line.startswith(expected), "'%s / %s':\n  expected %r\n  got      %r"
            % (kspace, modify, expected, line))
# with both gewald and mesh the uncharged system runs (zero long-range energy), with
# LAMMPS's own warning
r = T.run_lammps(script("pppm/aisci 1e-5", "kspace_modify gewald 0.3 mesh 16 16 16"),
                 files={"data.charges": ZERO}, timeout=120)
T.check(r.rc == 0 and "Using kspace solver on system with no charge" in r.output and
        r.thermo()["E_long"][0] == 0.0, "uncharged, gewald and mesh given:\n" + r.output[-800:])
T.summary("test_kspace_pppm_aisci")
