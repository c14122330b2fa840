#!/usr/bin/python3
"""Compare what two builds of lmp-aisci compute: the same PIMD, NN, ring-balanced NN and
DPLR inputs through both, every thermo value (17 digits) and every dump value compared.

For a change that should not change numbers (a refactoring): the report says, per case,
"identical" or which files differ, by how much at most, and from which step on. Cases
(inputs made from the test suite's own systems, tests/lammps/*_systems.py):
  pimd_lj          fix pimd/langevin, 4 beads on 4 partitions (108 LJ atoms, nmpimd, PILE_L)
  pimd_lj_bpw      the same, beads_per_world 2 on 2 partitions
  pimd_lj_npt      the same at constant pressure (iso, BZP barostat), 4 partitions
  nn_pair          pair_style aisci, a 1-layer 3-body toy model, water slab, 2 ranks, NVE
  nn_ring          the same with balance ring 0.05 on 4 ranks
  nn_exchange      a 2-layer toy model (ghost exchange), 2 ranks
  dplr             fix dplr + pppm/dplr + pair_style aisci, 16 water, 2 ranks, NVE
  pimd_dplr        quantum DPLR water: fix pimd/langevin on the nuclei, 2 partitions
  pimd_dplr_bpw    the same with beads_per_world 2 (one partition, two beads)

Usage:
  scripts/compare_outputs.py --before-lmp OLD/bin/lmp-aisci --after-lmp build/bin/lmp-aisci
  scripts/compare_outputs.py --before-rev REV [--after-lmp ...]   (builds REV in a git
      worktree under --workdir with scripts/build.sh first: ~5 min on 2 cores)
  [--cases pimd_lj,nn_ring] [--workdir DIR] [--list]
Exit status 0 when every case is identical, 1 otherwise (the differences are printed:
a difference may be right, but then it must be explained), 2 on a failed run.
Needs Debian's python3 with torch (the toy models) and numpy; takes ~3 min on 2 cores."""
import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "lammps"))
import aisci_run as R  # noqa: E402

# ---------------------------------------------------------------------------- the cases

def pimd_lj(fix_extra="", partitions="4x1", nsteps=40):
    import pimd_systems as S
    fix = ("fix pimd all pimd/langevin method nmpimd integrator obabo temp 30.0 "
           "thermostat PILE_L 975 tau 1.0 " + fix_extra)
    cols = " ".join("f_pimd[%d]" % i for i in range(1, 11))
    script = S.lj_script(fix, nsteps=nsteps, thermo=5, extra=cols)
    script = script.replace("thermo 5", "thermo 5\nthermo_modify format float %%.17g\n"
                            "dump d all custom %d bead.${p}.dump id x y z vx vy vz fx fy fz\n"
                            "dump_modify d sort id format float %%.17g" % nsteps)
    return "variable p uloop 64\n" + script, {}, 4 if partitions == "4x1" else 2, partitions


def pimd_lj_npt():
    script, files, n, parts = pimd_lj()
    script = script.replace("pimd/langevin method nmpimd",
                            "pimd/langevin ensemble npt iso 100.0 barostat BZP taup 1.0 "
                            "method nmpimd")
    script = script.replace("thermo_style custom step temp pe", "thermo_style custom step temp pe vol")
    return script, files, n, parts


def toy_models(workdir):
    import aisci_nn_toy as toy
    rc, rc3 = 4.0, 2.5
    return {
        "3body": toy.save(toy.ToyMP(ntypes=2, cutoff=rc, num_layers=1, cutoff_3body=rc3, seed=6,
                                    local_3body=True), os.path.join(workdir, "toy_3body.pt")),
        "deep": toy.save(toy.ToyMP(ntypes=2, cutoff=rc, num_layers=2, seed=7),
                         os.path.join(workdir, "toy_deep.pt")),
    }


def slab_files(workdir):
    import aisci_nn_toy as toy
    sys.path.insert(0, ROOT)
    from potentials.data.water_box import make_water_slab
    slab = make_water_slab(64, seed=3)
    path = os.path.join(workdir, "slab.data")
    toy.write_data(path, slab["positions"], slab["box"], slab["types"], 2)
    return {"slab.data": open(path).read()}


MD = """run 0
velocity all create 2500 4928 loop geom
fix 1 all nve
neigh_modify every 1 delay 0 check yes
timestep 0.0005
run 10"""


def nn(model, nprocs, balance, workdir):
    import aisci_nn_toy as toy
    style = "threads 1" + (" balance " + balance if balance else "")
    grid = "processors 1 1 %d\n" % nprocs
    script = toy.frame_script(toy_models(workdir)[model], run=MD, style_args=style,
                              data="slab.data").replace("read_data", grid + "read_data")
    script = script.replace("dump d all custom 1 f.dump", "dump d all custom 5 f.dump")
    return script, slab_files(workdir), nprocs, None


def dplr(workdir):
    import dplr_systems as D
    box, files = D.pimd_water_box()
    body = ("velocity all create 300 4928 dist gaussian loop geom\nfix nve all nve\n"
            "timestep 0.00025\nthermo 2\n"
            "dump d all custom 10 f.dump id type x y z fx fy fz\n"
            "dump_modify d sort id format float %.17g\nrun 10\n")
    return D.water_script(body=body), files, 2, None


def pimd_dplr(k, partitions, workdir):
    import dplr_systems as D
    box, files = D.pimd_water_box()
    dump = ("variable p uloop 64\n"
            "dump d all custom 10 bead.${p}.dump id type x y z fx fy fz\n"
            "dump_modify d sort id format float %.17g\n")
    body = D.pimd_water_body(k=k, steps=10, thermo=2, run_extra=dump)
    return D.water_script(body=body), files, 2, partitions


CASES = {
    "pimd_lj": lambda w: pimd_lj(),
    "pimd_lj_bpw": lambda w: pimd_lj("beads_per_world 2", "2x1"),
    "pimd_lj_npt": lambda w: pimd_lj_npt(),
    "nn_pair": lambda w: nn("3body", 2, "", w),
    "nn_ring": lambda w: nn("3body", 4, "ring 0.05", w),
    "nn_exchange": lambda w: nn("deep", 2, "", w),
    "dplr": lambda w: dplr(w),
    "pimd_dplr": lambda w: pimd_dplr(1, "2x1", w),
    "pimd_dplr_bpw": lambda w: pimd_dplr(2, None, w),
}


# ---------------------------------------------------------------------------- comparing

def thermo_lines(text):
    """The thermo tables of a log (aisci_run.thermo_runs), all runs in order, as lines: the
    header, then the rows with every value written back exactly (repr of the double that
    the 17 printed digits give), so that equal lines mean equal numbers."""
    out = []
    for block in R.thermo_runs(text):
        cols = list(block)
        out.append(" ".join(cols))
        out += [" ".join(repr(v) for v in row) for row in zip(*(block[c] for c in cols))]
    return out


def diff_lines(a, b):
    """(number of differing lines, first differing line index, largest absolute and
    relative difference of the numbers in them)."""
    ndiff, first, dabs, drel = 0, None, 0.0, 0.0
    if len(a) != len(b):
        return max(len(a), len(b)), min(len(a), len(b)), float("inf"), float("inf")
    for k, (x, y) in enumerate(zip(a, b)):
        if x == y:
            continue
        ndiff += 1
        first = k if first is None else first
        for u, v in zip(x.split(), y.split()):
            if u == v:
                continue
            try:
                fu, fv = float(u), float(v)
            except ValueError:
                dabs = drel = float("inf")
                continue
            dabs = max(dabs, abs(fu - fv))
            drel = max(drel, abs(fu - fv) / max(abs(fu), abs(fv), 1e-300))
    return ndiff, first, dabs, drel


def outputs(workdir):
    """{file name: comparable lines} of a finished run's folder."""
    out = {}
    for name in sorted(os.listdir(workdir)):
        path = os.path.join(workdir, name)
        if name.startswith("log.lammps"):
            out[name + " (thermo)"] = thermo_lines(open(path, errors="replace").read())
        elif name.endswith(".dump"):
            out[name] = open(path).read().splitlines()
    return out


def run_case(name, lmp, workdir):
    os.makedirs(workdir, exist_ok=True)
    script, files, nprocs, partitions = CASES[name](workdir)
    r = R.run_lammps(script, nprocs=nprocs, partitions=partitions, exe=lmp, files=files,
                     workdir=workdir, timeout=900)
    if r.rc != 0:
        err = R.first_error(r.output) or r.output[-1500:]
        raise RuntimeError("%s with %s failed (rc %d): %s" % (name, lmp, r.rc, err))
    return outputs(workdir)


def build_revision(rev, workdir):
    tree = os.path.join(workdir, "before-" + rev)
    if not os.path.isdir(tree):
        subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", tree, rev], check=True)
    env = dict(os.environ, AISCI_BUILD_DIR=os.path.join(tree, "build"))
    subprocess.run(["bash", os.path.join(tree, "scripts", "build.sh")], check=True, env=env)
    return os.path.join(tree, "build", "bin", "lmp-aisci")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before-lmp")
    ap.add_argument("--before-rev")
    ap.add_argument("--after-lmp", default=os.path.join(ROOT, "build", "bin", "lmp-aisci"))
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--workdir")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        print("\n".join(CASES))
        return 0
    if bool(a.before_lmp) == bool(a.before_rev):
        ap.error("give one of --before-lmp and --before-rev")
    cases = [c for c in a.cases.split(",") if c]
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        ap.error("unknown case(s) %s; the cases are %s" % (", ".join(unknown), ", ".join(CASES)))
    work = a.workdir or tempfile.mkdtemp(prefix="aisci_compare_")
    before = a.before_lmp or build_revision(a.before_rev, work)
    for exe in (before, a.after_lmp):
        if not os.access(exe, os.X_OK):
            ap.error("not an executable: %s" % exe)
    print("before: %s\nafter:  %s\nworkdir: %s" % (before, a.after_lmp, work), flush=True)
    print("load average: %s" % R.load_average())
    all_same = True
    for name in cases:
        try:
            ob = run_case(name, before, os.path.join(work, name, "before"))
            oa = run_case(name, a.after_lmp, os.path.join(work, name, "after"))
        except RuntimeError as e:
            print("%-14s FAILED RUN: %s" % (name, e), flush=True)
            return 2
        notes = []
        for f in sorted(set(ob) | set(oa)):
            if f not in ob or f not in oa:
                notes.append("%s only %s" % (f, "after" if f in oa else "before"))
                continue
            if not ob[f] and not oa[f]:
                continue    # the universe log of a multi-partition run has no thermo
            nd, first, dabs, drel = diff_lines(ob[f], oa[f])
            if nd:
                notes.append("%s: %d lines differ from line %d on, max |d| %.3g (rel %.3g)"
                             % (f, nd, first, dabs, drel))
        nvals = sum(len(l.split()) for lines in ob.values() for l in lines)
        if notes:
            all_same = False
            print("%-14s DIFFERENT:\n    %s" % (name, "\n    ".join(notes)), flush=True)
        else:
            print("%-14s identical (%d files, %d values)" % (name, len(ob), nvals), flush=True)
    return 0 if all_same else 1


if __name__ == "__main__":
    sys.exit(main())
