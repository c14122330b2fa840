"""Sweep of bad (and borderline valid) inputs over fix pimd/langevin (issue 13): each input
runs through lmp-aisci with a timeout and is classified as
  clean    - stopped with a LAMMPS ERROR line (the expected text, when one is given)
  unclear  - stopped with an ERROR line that does not carry the expected text
  crash    - non-zero exit without an ERROR line (signal, MPI abort)
  hang     - hit the timeout
  silent   - a bad input that ran to the end without an error
  rejected - a valid input that stopped with an error
  ok       - a valid input that ran and printed finite thermo values
  insane   - a valid input that ran but printed no thermo rows or non-finite values
  warned   - an input with an ignored keyword that ran and said so in a warning
Not a ctest test (no test_ prefix): run it by hand after a build,
  /usr/bin/python3 tests/lammps/sweep_pimd_inputs.py [build dir]
and read the table it prints (SWEEP_ONLY=name,name,... runs only those inputs); exits 1
unless every input is clean, ok or warned. scripts/sweep.sh runs it with the others."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "build"))
os.environ.setdefault("AISCI_LMP", os.path.join(build, "bin", "lmp-aisci"))
os.environ.setdefault("AISCI_PIMD_SYNC_TIMEOUT", "10")
import aisci_testlib as T  # noqa: E402
import pimd_systems as S  # noqa: E402

FIX = "fix pimd all pimd/langevin temp 30.0 thermostat PILE_L 1 tau 0.1"
BAD, OK, WARN = "bad", "ok", "warn"    # warn: runs, but must say what it ignores


def lj(fix=FIX, nsteps=10, thermo=5, extra="", pre="", post="", units="metal"):
    s = S.lj_script(fix, nsteps=nsteps, thermo=thermo, extra=extra, units=units)
    return pre + s.replace("run %d\n" % nsteps, post + "run %d\n" % nsteps)


def F(args):
    return lj(fix="fix pimd all pimd/langevin " + args)


cases = [
    # name, kind, script, expected text (None: any ERROR), nprocs, partitions
    ("temp 0", BAD, F("temp 0"), "temp must be > 0, got 0"),
    ("tau -1", BAD, F("tau -1"), "tau must be > 0, got -1"),
    ("temp abc", BAD, F("temp abc"), "temp expects a number, got 'abc'"),
    ("fmass 0", BAD, F("fmass 0"), "fmass must be > 0, got 0"),
    ("sp -1", BAD, F("sp -1"), "sp must be > 0, got -1"),
    ("scale 0", BAD, F("scale 0"), "scale must be > 0, got 0"),
    ("beads_per_world 0", BAD, F("beads_per_world 0"), "beads_per_world must be an integer from 1 to 4096, got 0"),
    ("beads_per_world abc", BAD, F("beads_per_world abc"), "beads_per_world"),
    ("beads_per_world 2 method pimd", BAD, F("beads_per_world 2 method pimd"), "beads_per_world > 1 needs method nmpimd"),
    ("lj with 4 values", BAD, F("lj 1 1 1 1"), "keyword lj needs 5 values"),
    ("lj planck 0", BAD, F("lj 1 1 1 0 1"), "lj planck must be > 0, got 0"),
    ("seed 1.5", BAD, F("thermostat PILE_L 1.5"), "thermostat seed"),
    ("seed -4", BAD, F("thermostat PILE_L -4"), "thermostat seed must be a positive integer, got -4"),
    ("iso and aniso", BAD, F("ensemble npt iso 1 aniso 1"), "keywords iso and aniso exclude each other"),
    ("iso with nvt", WARN, F("ensemble nvt iso 5.0"), "keyword(s) iso ignored: ensemble nvt has no barostat"),
    ("barostat with nve", WARN, F("ensemble nve barostat MTTK"),
     "keyword(s) barostat ignored: ensemble nve has no thermostat or barostat"),
    ("tau with nve", WARN, F("ensemble nve tau 0.5"), "keyword(s) tau ignored: ensemble nve has no thermostat or barostat"),
    ("unknown keyword", BAD, F("tmep 30"), "unknown keyword 'tmep'"),
    ("method cmd", BAD, F("method cmd"), "method cmd is not supported"),
    ("group not all", BAD, lj(fix="group half id 1:10\nfix pimd half pimd/langevin"),
     "atoms are outside group half (e.g. atom ID 11, type 1) and nothing places them"),
    ("no atom map", BAD, lj().replace("atom_modify map yes\n", ""), "requires an atom map"),
    ("npt non-periodic", BAD, F("ensemble npt iso 1").replace("units metal", "units metal\nboundary p p f"),
     "needs a box periodic in x, y and z"),
    ("npt triclinic", BAD, F("ensemble npt iso 1").replace("create_atoms 1 box", "create_atoms 1 box\nchange_box all triclinic"),
     "orthogonal boxes only"),
    # partitions that disagree
    ("thermo 5 vs 3", BAD, "variable t world 5 3\n" + lj(thermo="${t}"), "differ in thermo interval: 3 in one partition, 5 in another"),
    ("run 10 vs 20", BAD, "variable n world 10 20\n" + lj().replace("run 10", "run ${n}"), "differ in run end step: 10 in one partition, 20 in another"),
    ("run 10 vs 0", BAD, "variable n world 10 0\n" + lj().replace("run 10", "run ${n}"), "differ in run end step: 0 in one partition, 10 in another"),
    ("masses differ", BAD, "variable m world 20.18 4.0\n" + lj(post="mass 1 ${m}\n"), "differ in mass of atom type 1: 4 in one partition, 20.18 in another"),
    ("ensemble differs", BAD, "variable e world nvt nve\n" + F("temp 30 ensemble ${e}"), "differ in ensemble: nve in one partition, nvt in another"),
    ("atom count differs", BAD, "variable n world 3 2\n" + lj().replace("block 0 3 0 3 0 3", "block 0 ${n} 0 3 0 3"), "differ in number of atoms: 72 in one partition, 108 in another"),
    ("beads_per_world differs", BAD, "variable k world 1 2\n" + F("temp 30 beads_per_world ${k}"), "differ in beads_per_world: 1 in one partition, 2 in another"),
    ("unequal partition sizes", BAD, lj(), "same number of ranks", 3, "1 2"),
    ("extra fix in one partition", BAD, "variable p world 0 1\n" + lj(post='if "${p} == 0" then "fix sp all spring/self 0.1"\n'),
     "differ in number of fixes: 1 in one partition, 2 in another"),
    ("fix pimd in one partition only", BAD, "variable p world 0 1\n" + lj(fix='if "${p} == 0" then "' + FIX + '"'),
     "waited 10 s at the setup of a run"),
    ("run in one partition only", BAD, "variable p world 0 1\n" + lj().replace("run 10", 'if "${p} == 0" then "run 10"'),
     "waited 10 s at the setup of a run"),
    ("timestep differs", BAD, "variable d world 0.002 0.001\n" + lj(post="timestep ${d}\n"), "differ in timestep"),
    ("units differ", BAD, "variable u world metal real\n" + lj().replace("units metal", "units ${u}"), None),
    ("consumer in one partition", BAD, "variable e world f_pimd[7] step\n" + lj(
        post='variable x equal ${e}\nfix pr all print 3 "x ${x}"\n'), "differ on whether step 3 computes the estimators"),
    ("atom lost in one partition", BAD, lj(nsteps=20, thermo=10, post="group one id 1\nvariable vz world 0.0 1000.0\n"
        "velocity one set 0.0 0.0 ${vz} units box\nneigh_modify every 1 delay 0 check yes\n").replace(
        "units metal", "units metal\nboundary p p f").replace(
        "create_atoms 1 box", "create_atoms 1 box\nchange_box all z final -2.0 18.0 units box\nset atom 1 z 15.5"),
     "atoms were lost: atom ID 1 is missing in partition 0 (bead 0) on step 2"),
    ("thermo 5 vs 3 (2x2 ranks)", BAD, "variable t world 5 3\n" + lj(thermo="${t}"), "differ in thermo interval", 4, "2x2"),
    ("run 10 vs 20 (beads_per_world 2)", BAD, "variable n world 10 20\n" + F("temp 30 beads_per_world 2").replace(
        "run 10", "run ${n}"), "differ in run end step"),
    # other fixes
    ("fix nve too", BAD, lj(fix="fix 1 all nve\n" + FIX), "also integrates the atoms"),
    ("fix shake", BAD, None, "(shake) is not supported with more than one bead"),
    ("fix rattle", BAD, None, "(rattle) is not supported with more than one bead"),
    ("fix langevin before", BAD, lj(fix="fix lg all langevin 30 30 0.1 5\n" + FIX), None),
    ("fix temp/rescale", BAD, lj(post="fix tr all temp/rescale 1 30 30 1 1\n"), None),
    ("fix box/relax in run (inert in MD)", OK, lj(post="fix br all box/relax iso 0.0\n"), None),
    ("fix deform", BAD, lj(post="fix df all deform 1 x scale 1.01 remap x\n"), None),
    ("fix npt too", BAD, lj(post="fix np all npt temp 30 30 0.1 iso 0 0 1\n"), "also integrates the atoms"),
    ("fix_modify energy", BAD, lj(post="fix_modify pimd energy yes\n"), None),
    ("vector out of range", BAD, lj(extra="f_pimd[11]"), None),
    # valid inputs
    ("plain run", OK, lj(extra="f_pimd[7]"), None),
    ("run 0", OK, lj(extra="f_pimd[7]").replace("run 10", "run 0"), None),
    ("two runs", OK, lj(extra="f_pimd[7]").replace("run 10", "run 5\nrun 5"), None),
    ("thermo 1", OK, lj(thermo=1, extra="f_pimd[7]"), None),
    ("thermo 0", OK, lj(thermo=0, extra="f_pimd[7]"), None),
    ("thermo variable", OK, "variable t equal stride(0,100,3)\n" + lj(thermo="v_t", extra="f_pimd[7]"), None),
    ("ave/time every 3", OK, lj(post="variable k equal f_pimd[7]\nfix av all ave/time 3 1 3 v_k\n"), None),
    ("fix print every 2", OK, lj(post='variable k equal f_pimd[7]\nfix pr all print 2 "k ${k}"\n'), None),
    ("print after run", OK, lj(post="variable k equal f_pimd[7]\n") + 'print "k = ${k}"\n', None),
    ("minimize then run", OK, lj(fix=FIX + "\nminimize 0 0 10 10\nreset_timestep 0", extra="f_pimd[7]"), None),
    ("minimize only", OK, lj(extra="f_pimd[7]").replace("run 10", "minimize 0 0 10 10"), None),
    ("reset_timestep", OK, lj(extra="f_pimd[7]").replace("run 10", "run 5\nreset_timestep 0\nrun 5"), None),
    ("timestep change", OK, lj(extra="f_pimd[7]").replace("run 10", "run 5\ntimestep 0.001\nrun 5"), None),
    ("run every", OK, lj(post="variable k equal f_pimd[7]\n").replace("run 10", 'run 10 every 5 "print ${k}"'), None),
    ("run start/stop", OK, lj().replace("run 10", "run 5 start 0 stop 10\nrun 5 start 0 stop 10"), None),
    ("write/read restart", OK, lj(post="").replace("run 10", "run 5\nwrite_restart r.${w}\nclear\nread_restart r.${w}\n"
                                                   "pair_style lj/cut 7.0\npair_coeff 1 1 0.0031 2.74\n" + FIX + "\nrun 5"), None),
    ("write_data", OK, lj() + "write_data d.${w}\n", None),
    ("rerun", OK, lj(post="dump d all custom 5 dump.${w} id type x y z\n") + "undump d\nrerun dump.${w} dump x y z\n", None),
    ("units real", OK, lj(units="metal").replace("units metal", "units real").replace("0.0031 2.74", "0.07 2.74").replace(
        "timestep 0.002", "timestep 2.0"), None),
    ("units lj", OK, lj(units="lj", fix=FIX.replace("temp 30.0", "temp 1.0") + " lj 1 1 1 0.1 1"), None),
    ("npt iso", OK, F("ensemble npt temp 30 iso 1.0 taup 1.0"), None),
    ("nph aniso MTTK", OK, F("ensemble nph temp 30 aniso 1.0 barostat MTTK"), None),
    ("beads_per_world 2", OK, F("temp 30 beads_per_world 2"), None),
    ("one partition, P = 1", OK, lj(), None, 1, None),
    ("shake with P = 1", OK, None, None, 1, None),
    ("fix efield after", OK, lj(post="fix ef all efield 0.0 0.0 0.01\n").replace("atom_style atomic", "atom_style charge").replace(
        "mass 1 20.18", "mass 1 20.18\nset type 1 charge 0.1"), None),
    ("dump per-atom columns", OK, lj(post="dump d all custom 5 d.${w} id f_pimd[1] f_pimd[4] f_pimd[5]\n"), None),
    # issue 33: silent before, refused now
    ("fix momentum, P = 2", BAD, lj(post="fix m all momentum 5 linear 1 1 1\n"), "use the fixcom keyword"),
    ("fix recenter, P = 2", BAD, lj(post="fix r all recenter INIT INIT INIT\n"), "(recenter) is not supported"),
    ("fix wall/reflect, P = 2", BAD, lj(post="fix wr all wall/reflect zlo EDGE zhi EDGE\n").replace(
        "units metal", "units metal\nboundary p p f"), "use a wall that acts as a force"),
    ("pair style differs", BAD, "variable ps world lj/cut lj/cut/opt\n" + lj().replace(
        "pair_style lj/cut", "pair_style ${ps}"), "differ in pair style"),
    ("pair coefficients differ", BAD, "variable e world 0.0031 0.0032\n" + lj().replace(
        "pair_coeff 1 1 0.0031", "pair_coeff 1 1 ${e}"), "differ in pair coefficients"),
    ("other atom IDs in one partition", BAD, "variable p world 0 1\n" + lj().replace(
        "velocity all", 'if "${p} == 1" then "group del id 5" "delete_atoms group del compress no" '
        '"create_atoms 1 single 0.5 0.5 0.5"\nvelocity all'), "holds other atom IDs than partition 0"),
    ("restart with the other method", BAD, lj().replace("run 10", "run 5\nwrite_restart r.${w}\nclear\n"
        "read_restart r.${w}\npair_style lj/cut 7.0\npair_coeff 1 1 0.0031 2.74\n" + FIX + " method pimd\nrun 5"),
     "restart file was written with method nmpimd"),
    # valid: ring polymers far wider than the skin, the centroid trajectory in one file
    ("beads_per_world 2, skin 0.01 A", OK, F("temp 30 beads_per_world 2").replace(
        "pair_modify shift yes", "pair_modify shift yes\nneighbor 0.01 bin").replace("run 10", "run 100"), None),
    ("centroid dump from one partition", OK, lj(post="partition yes 1 dump c all custom 5 cent.dump id f_pimd[1] "
        "f_pimd[2] f_pimd[3]\npartition no 1 dump c all custom 5 /dev/null id f_pimd[1] f_pimd[2] f_pimd[3]\n"),
     None),
]


def water(constraint):
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
fix pimd all pimd/langevin temp 300 thermostat PILE_L 3 tau 100
timestep 0.5
thermo 5
run 20
""" % constraint


def main():
    import subprocess
    import tempfile
    work = tempfile.mkdtemp(prefix="aisci_sweep_")
    env = dict(os.environ, PYTHONPATH=T.SOURCE_DIR)
    subprocess.run(["/usr/bin/python3", "-m", "potentials.data.water_box", "data.water", "--molecules", "8",
                    "--density", "0.997", "--seed", "11"], cwd=work, env=env, check=True, capture_output=True)
    data = {"data.water": open(os.path.join(work, "data.water")).read()}
    counts = {}
    rows = []
    only = [w for w in os.environ.get("SWEEP_ONLY", "").split(",") if w]    # names to run (all if empty)
    for case in cases:
        name, kind, script, expect = case[:4]
        if only and name not in only:
            continue
        nprocs = case[4] if len(case) > 4 else 2
        parts = case[5] if len(case) > 5 else "2x1"
        files = None
        if name in ("fix shake", "shake with P = 1"):
            script, files = water("fix c all shake 1e-6 100 0 b 1 a 1"), data
        elif name == "fix rattle":
            script, files = water("fix c all rattle 1e-6 100 0 b 1 a 1"), data
        if parts and "${w}" in script:
            script = "variable w world " + " ".join(str(i) for i in range(int(parts.split("x")[0]))) + "\n" + script
        elif "${w}" in script:
            script = "variable w index 0\n" + script
        r = T.run_lammps(script, nprocs=nprocs, partitions=parts, files=files, timeout=60)
        err = next((l for l in r.output.splitlines() if l.startswith("ERROR")), None)
        if r.rc == -999:
            cls = "hang"
        elif r.rc != 0 and err is None:
            cls = "crash"
        elif kind == WARN:
            cls = ("warned" if expect in r.output else "silent") if r.rc == 0 else "rejected"
        elif kind == BAD:
            cls = "silent" if r.rc == 0 else ("clean" if expect is None or expect in r.output else "unclear")
        else:
            cls = "ok" if r.rc == 0 else "rejected"
            if cls == "ok":
                # sane: thermo rows printed, every value finite
                th = r.thermo(0)
                vals = [v for col in th.values() for v in col]
                if not th.get("Step") or any(v != v or abs(v) == float("inf") for v in vals):
                    cls = "insane"
        warn = next((l for l in r.output.splitlines() if l.startswith("WARNING") and "pimd" in l), "")
        counts[cls] = counts.get(cls, 0) + 1
        rows.append((name, cls, (err or warn or "")[:150]))
        print("%-32s %-9s %s" % rows[-1], flush=True)
    print("\n%d inputs: %s" % (len(rows), ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
    return 0 if set(counts) <= {"clean", "ok", "warned"} else 1


if __name__ == "__main__":
    sys.exit(main())
