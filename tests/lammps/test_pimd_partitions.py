"""fix pimd/langevin when partitions (beads) disagree, and inputs that used to crash, hang
or pass silently (issue 13). Every run has a timeout. Each bad input must stop every
partition with its exact error text; each valid one must run and give sane values.

1. Settings that must be equal in every partition, made to differ with a world-style
   variable (thermo interval, run length, the fix's keywords, masses, time step, box,
   fixes defined, ...): "partitions (beads) differ in <setting>: <a> in one partition,
   <b> in another". Before: thermo 5 vs 3 crashed inside Open MPI, run 10 vs 20 hung.
2. fix shake / fix rattle with several beads (water, atom_style full): refused by name
   (before: ran 10 steps and hung); with one bead they still run.
3. iso and aniso together: an error (before: aniso won silently).
4. Valid inputs that were rejected: thermo 1 with f_pimd in thermo_style, fix ave/time
   off the thermo steps, minimize before run: they run, and the estimators equal those
   of a run with thermo 5 on the common steps (the output steps do not change the
   trajectory).
5. An atom lost in one partition only: the error names it, its partition and the causes.
"""
import math
import os
import subprocess
import sys
import tempfile

import aisci_testlib as T
import pimd_systems as S

FIX = "fix pimd all pimd/langevin temp 30.0 thermostat PILE_L 1 tau 0.1"
TAIL = "; every partition must run the same input (docs/fix_pimd_langevin.md lists the settings compared)"


def differ(setting, a, b):
    return "partitions (beads) differ in %s: %s in one partition, %s in another" % (setting, a, b) + TAIL


def expect_error(script, expect, what, nprocs=2, partitions="2x1", files=None, timeout=60):
    r = T.run_lammps(script, nprocs=nprocs, partitions=partitions, files=files, timeout=timeout)
    ok = r.rc != 0 and "TIMEOUT" not in r.output and ("ERROR: fix pimd/langevin: " + expect) in r.output
    T.check(ok, "%s: expected error '%s' (rc %d):\n%s" % (what, expect, r.rc, r.output[-1200:]))
    return r


def lj(fix=FIX, nsteps=10, thermo=5, extra="", pre="", post=""):
    return pre + S.lj_script(fix, nsteps=nsteps, thermo=thermo, extra=extra).replace(
        "run %d\n" % nsteps, post + "run %d\n" % nsteps)


# ---- 1. settings compared across partitions --------------------------------------------
mismatches = [
    # (what, script, expected setting text)
    ("thermo 5 vs 3", "variable t world 5 3\n" + lj(thermo="${t}"), differ("thermo interval", 3, 5)),
    ("run 10 vs 20", "variable n world 10 20\n" + lj(nsteps=10).replace("run 10", "run ${n}"),
     differ("run end step", 10, 20)),
    ("run 10 vs 0", "variable n world 10 0\n" + lj(nsteps=10).replace("run 10", "run ${n}"),
     differ("run end step", 0, 10)),
    ("run start/stop", "variable s world 20 30\n" + lj(nsteps=10).replace("run 10", "run 10 stop ${s}"),
     differ("run stop keyword (last step of the runs)", 20, 30)),
    ("ensemble", "variable e world nvt nve\n" + lj(fix=FIX + " ensemble ${e}"), differ("ensemble", "nve", "nvt")),
    ("method", "variable m world nmpimd pimd\n" + lj(fix=FIX + " method ${m}"), differ("method", "nmpimd", "pimd")),
    ("integrator", "variable m world obabo baoab\n" + lj(fix=FIX + " integrator ${m}"),
     differ("integrator", "obabo", "baoab")),
    ("fmmode", "variable m world physical normal\n" + lj(fix=FIX + " fmmode ${m}"),
     differ("fmmode", "physical", "normal")),
    ("temp", "variable x world 30 40\n" + lj(fix=FIX + " temp ${x}"), differ("temp", 30, 40)),
    ("tau", "variable x world 0.1 0.2\n" + lj(fix=FIX + " tau ${x}"), differ("tau", 0.1, 0.2)),
    ("scale", "variable x world 1 2\n" + lj(fix=FIX + " scale ${x}"), differ("scale", 1, 2)),
    ("fmass", "variable x world 1 2\n" + lj(fix=FIX + " fmass ${x}"), differ("fmass", 1, 2)),
    ("sp", "variable x world 1 2\n" + lj(fix=FIX + " sp ${x}"), differ("sp", 1, 2)),
    ("fixcom", "variable x world yes no\n" + lj(fix=FIX + " fixcom ${x}"), differ("fixcom", "no", "yes")),
    ("lj", "variable x world 1 2\n" + lj(fix=FIX + " lj 1 1 1 ${x} 1"), differ("lj planck", 1, 2)),
    ("iso vs aniso", "variable x world iso aniso\n" + lj(fix=FIX + " ensemble npt ${x} 1.0"),
     differ("iso/aniso (cell coupling)", "iso", "aniso")),
    ("pressure", "variable x world 1 2\n" + lj(fix=FIX + " ensemble npt iso ${x}"),
     differ("iso/aniso (external pressure)", 1, 2)),
    ("barostat", "variable x world BZP MTTK\n" + lj(fix=FIX + " ensemble nph iso 1 barostat ${x}"),
     differ("barostat", "BZP", "MTTK")),
    ("taup", "variable x world 1 2\n" + lj(fix=FIX + " ensemble npt iso 1 taup ${x}"), differ("taup", 1, 2)),
    ("mass", "variable x world 20.18 22.0\n" + lj(post="mass 1 ${x}\n"), differ("mass of atom type 1", 20.18, 22)),
    ("timestep", "variable x world 0.002 0.001\n" + lj(post="timestep ${x}\n"), differ("timestep", 0.001, 0.002)),
    ("box", "variable x world 0 0.5\n" + lj(post="change_box all x final ${x} 15.9 units box\n"),
     differ("box xlo", 0, 0.5)),
    ("fixes defined", "variable x world 1 2\n" + lj(post="fix s${x} all spring/self 0.1\n"),
     "partitions (beads) differ in fixes defined (IDs and styles, in order) (compared by a hash: "),
    ("dumps", "variable x world 5 10\n" + lj(post="dump d all atom ${x} dump.${x}\n"),
     "partitions (beads) differ in dump intervals (compared by a hash: "),
]
for what, script, expect in mismatches:
    expect_error(script, expect, what)

# per-partition thermostat seeds (as upstream's examples/PACKAGES/pimd inputs give them):
# accepted, partition 0's seed serves the whole ring polymer, with a warning
r = T.run_lammps("variable x world 5 6\n" + lj(fix=FIX + " thermostat PILE_L ${x}"), nprocs=2,
                 partitions="2x1", timeout=120)
T.check(r.rc == 0 and "thermostat seeds differ between partitions; the noise of the ring polymer is "
        "one stream, all partitions use partition 0's seed 5" in r.output,
        "per-partition seeds: expected a warning and a finished run (rc %d):\n%s" % (r.rc, r.output[-1200:]))

# a partition that never reaches the setup (the fix, or the run, only in partition 0): the
# waiting partition gives up after AISCI_PIMD_SYNC_TIMEOUT seconds instead of hanging
WAIT = ("partition 0 waited 5 s at the setup of a run on step 0 for the other partitions: some partition "
        "does not run this input (a run, minimize or fix pimd/langevin command missing or extra in it?); "
        "every partition must run the same input (AISCI_PIMD_SYNC_TIMEOUT sets this wait in seconds)")
for what, script in (
        ("fix in partition 0 only", "variable p world 0 1\n" + lj(fix='if "${p} == 0" then "%s"' % FIX)),
        ("run in partition 0 only", "variable p world 0 1\n" + lj().replace("run 10", 'if "${p} == 0" then "run 10"'))):
    r = T.run_lammps(script, nprocs=2, partitions="2x1", timeout=60, env={"AISCI_PIMD_SYNC_TIMEOUT": "5"})
    T.check(r.rc != 0 and r.rc != -999 and ("ERROR on proc 0: fix pimd/langevin: " + WAIT) in r.output,
            "%s: expected error '%s' (rc %d):\n%s" % (what, WAIT, r.rc, r.output[-1200:]))

# the same fixes, but a consumer of the estimators in one partition only (fix print of
# f_pimd[7] in partition 0, of the step in partition 1): partition 0 asks LAMMPS for
# energy and virial on step 3, partition 1 does not; before, the estimator exchange of one
# partition met the next step's exchange of the other
MEASURE = ("partitions (beads) differ on whether step 3 computes the estimators: LAMMPS tallied energy and "
           "virial in some partitions only, because what asks for them (thermo output, fix ave/time, fix print, "
           "dumps or variables using f_pimd or the energy or pressure) differs between partitions; every "
           "partition must run the same input")
for k, parts, nprocs in ((1, "2x1", 2), (1, "2x2", 4)):
    expect_error("variable e world f_pimd[7] step\n" + lj(fix=FIX + " beads_per_world %d" % k, post=
                 'variable x equal ${e}\nfix pr all print 3 "x ${x}"\n'), MEASURE,
                 "consumer in one partition, %s" % parts, nprocs=nprocs, partitions=parts)

# differing atom counts and beads_per_world
expect_error("variable n world 3 2\n" + lj().replace("block 0 3 0 3 0 3", "block 0 ${n} 0 3 0 3"),
             differ("number of atoms", 72, 108), "atom counts")
expect_error("variable k world 1 2\n" + lj(fix=FIX + " beads_per_world ${k}"), differ("beads_per_world", 1, 2),
             "beads_per_world")

# beads_per_world with several ranks per partition and per-partition thermo variables
expect_error("variable t world 5 3\n" + lj(fix=FIX + " beads_per_world 2", thermo="${t}"),
             differ("thermo interval", 3, 5), "thermo mismatch, 2 x 2 ranks, 2 beads each", nprocs=4,
             partitions="2x2")

# the same input in every partition passes these checks (run 0 and a second run too)
r = T.run_lammps(lj(extra="f_pimd[5]").replace("run 10", "run 0\nrun 10"), nprocs=2, partitions="2x1", timeout=60)
T.check(r.rc == 0 and len(r.thermo(0).get("Step", [])) >= 3, "identical partitions must run:\n" + r.output[-800:])

# ---- 3. iso and aniso exclude each other ------------------------------------------------
expect_error(lj(fix=FIX + " ensemble npt iso 1.0 aniso 1.0"),
             "keywords iso and aniso exclude each other (one cell coupling), got both", "iso + aniso")

# ---- 4. valid inputs: thermo 1, fix ave/time off thermo steps, minimize ------------------
cols = " ".join("f_pimd[%d]" % i for i in range(1, 11))
runs = {}
for name, thermo, post, pre_run in (
        ("thermo 5", 5, "", ""),
        ("thermo 1", 1, "", ""),
        ("ave/time every 3", 5, "variable k equal f_pimd[7]\nfix av all ave/time 3 1 3 v_k file ave.txt\n", ""),
        ("minimize first", 5, "", "minimize 0 0 0 0\nreset_timestep 0\n")):
    script = lj(nsteps=10, thermo=thermo, extra=cols, post=post)
    if pre_run:
        script = script.replace(FIX, FIX + "\n" + pre_run)
    r = T.run_lammps(script, nprocs=2, partitions="2x1", timeout=60)
    if T.check(r.rc == 0 and "TIMEOUT" not in r.output, "%s must run:\n%s" % (name, r.output[-1200:])):
        runs[name] = (r.thermo(0), r)
if "thermo 5" in runs:
    ref = runs["thermo 5"][0]
    T.check(ref.get("Step") == [0.0, 5.0, 10.0] and all(math.isfinite(v) for v in ref["f_pimd[7]"]) and
            0.3 < ref["f_pimd[7]"][0] < 3.0, "thermo 5: steps %s, f_pimd[7] %s" % (ref.get("Step"), ref.get("f_pimd[7]")))
    for name in ("thermo 1", "ave/time every 3"):
        if name not in runs:
            continue
        th = runs[name][0]
        rows = {int(s): i for i, s in enumerate(th["Step"])}
        diff = 0.0
        for j, step in enumerate(ref["Step"]):
            for c in range(1, 11):
                col = "f_pimd[%d]" % c
                a, b = ref[col][j], th[col][rows[int(step)]]
                diff = max(diff, abs(a - b) / max(1e-3, abs(a)))
        T.check(diff < 1e-9, "%s: estimators differ from the thermo 5 run by %.2e" % (name, diff))
    if "thermo 1" in runs:
        T.check(len(runs["thermo 1"][0]["Step"]) == 11, "thermo 1 prints 11 rows")
    if "ave/time every 3" in runs:
        lines = [l.split() for l in open(os.path.join(runs["ave/time every 3"][1].workdir, "ave.txt"))
                 if l.strip() and not l.startswith("#")]
        T.check([int(l[0]) for l in lines] == [0, 3, 6, 9] and all(math.isfinite(float(l[1])) and float(l[1]) > 0
                                                               for l in lines),
                "fix ave/time of f_pimd[7] every 3 steps: %s" % lines)
if "minimize first" in runs:
    th, r = runs["minimize first"]
    T.check("does not act during minimization" in r.output, "minimize: warning that the fix is idle")
    T.check(th["Step"][-1] == 10 and all(math.isfinite(v) for v in th["f_pimd[7]"]),
            "minimize then run: %s" % th.get("f_pimd[7]"))

# ---- 5. an atom lost in one partition only -----------------------------------------------
# atom 1 sits near the top of a box closed in z; in partition 1 its mode-1 velocity is
# large, so its bead 0 (partition 0) leaves through the top on step 2 while bead 1 is
# still inside
lost = lj(nsteps=20, thermo=10, post="group one id 1\nvariable vz world 0.0 1000.0\n"
          "velocity one set 0.0 0.0 ${vz} units box\nneigh_modify every 1 delay 0 check yes\n").replace(
    "units metal", "units metal\nboundary p p f").replace(
    "create_atoms 1 box", "create_atoms 1 box\nchange_box all z final -2.0 18.0 units box\nset atom 1 z 15.5")
expect_error(lost, "atoms were lost: atom ID 1 is missing in partition 0 (bead 0) on step 2 but present in another. "
             "Atoms get lost when they leave a non-periodic box or move too far in one step, usually because "
             "the time step is too large or the potential is bad (overlapping atoms, a wrong model or units); "
             "check them. thermo_modify lost ignore cannot help here: every bead must hold every atom", "lost atom")
# the same with 2 ranks per partition (the exchange's point-to-point path)
expect_error(lost, "atoms were lost: atom ID 1 is missing in partition 0 (bead 0) on step 2 but present in another.",
             "lost atom, 2 x 2 ranks", nprocs=4, partitions="2x2")

# ---- 2. fix shake / rattle with several beads -------------------------------------------
work = tempfile.mkdtemp(prefix="aisci_pimd_shake_")
env = dict(os.environ, PYTHONPATH=T.SOURCE_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
gen = subprocess.run([sys.executable, "-m", "potentials.data.water_box", "data.water", "--molecules", "8",
                      "--density", "0.997", "--seed", "11"], cwd=work, env=env, capture_output=True, text=True)
if T.check(gen.returncode == 0, "water box generator failed: " + gen.stderr[-800:]):
    data = {"data.water": open(os.path.join(work, "data.water")).read()}

    def water(constraint, k=1):
        return """units real
atom_style full
atom_modify map yes
read_data data.water
pair_style lj/cut/coul/cut 5.0
pair_coeff 1 1 0.1852 3.1589
pair_coeff * 2 0.0 1.0
bond_style harmonic
bond_coeff 1 500.0 0.9572
angle_style harmonic
angle_coeff 1 50.0 104.52
velocity all create 300.0 5 dist gaussian
%s
fix pimd all pimd/langevin temp 300 thermostat PILE_L 3 tau 100 beads_per_world %d
timestep 0.5
thermo 5
run 20
""" % (constraint, k)

    msg = ("fix %s (%s) is not supported with more than one bead (P = %d): bond constraints in "
           "path-integral MD are future work; use flexible bonds (or P = 1)")
    expect_error(water("fix c all shake 1e-6 100 0 b 1 a 1"), msg % ("c", "shake", 2), "shake, 2 partitions",
                 files=data)
    expect_error(water("fix c all rattle 1e-6 100 0 b 1 a 1"), msg % ("c", "rattle", 2), "rattle, 2 partitions",
                 files=data)
    expect_error(water("fix c all shake 1e-6 100 0 b 1 a 1", k=3), msg % ("c", "shake", 3),
                 "shake, 1 partition x 3 beads", nprocs=1, partitions=None, files=data)
    # one bead: a classical run with constraints (the fix's business is not to refuse it)
    r = T.run_lammps(water("fix c all shake 1e-6 100 0 b 1 a 1"), files=data, timeout=60)
    T.check(r.rc == 0 and len(r.thermo().get("Step", [])) == 5, "shake with one bead must run:\n" + r.output[-800:])

T.summary("test_pimd_partitions")
