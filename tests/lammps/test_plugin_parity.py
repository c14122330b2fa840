"""The plugin route gives what lmp-aisci gives (issue 22): the same inputs run through
`plugin load libaisci_plugin.so` in a LAMMPS from scripts/build-lammps.sh (4Feb2025 or
29Sep2021: AISCI_PLUGIN_VERSION; the plugin built against it by this build,
plugin-<version>/) and through lmp-aisci (Debian's 29Sep2021). Every thermo column and every dumped per-atom column (positions, velocities,
forces) at step 0 and after 20 steps, fixed seeds, must agree per component within
|a - b| <= 1e-10 x max(1, |b|):

1. fix pimd/langevin (PILE_L, nmpimd) on 108 LJ atoms: 4 beads in one partition
   (beads_per_world 4) and 2 beads on 2 partitions (-partition 2x1). LAMMPS 4Feb2025 has
   REPLICA's own fix pimd/langevin, so the plugin run names ours pimd/langevin/aisci;
   29Sep2021 has none, so there the plugin run uses the plain name.
2. pair_style aisci with this repository's water_matris.pt, and with DeePMD-kit's
   deeppot_sea.pth as pair_style aisci and as pair_style deepmd (DeePMD-kit's syntax): the
   6-atom water of DeePMD-kit's tests, NVE (skipped parts say so when ../shared/deepmd-kit
   is absent).
3. DPLR water (16 molecules + WCs): pair_style aisci + kspace_style pppm/dplr + fix dplr,
   NVE; the kspace style comes through the plugin (LAMMPS >= 2022 loads kspace plugins).
   In 29Sep2021, whose loader cannot load kspace styles, checked instead: the log names
   pppm/aisci and pppm/dplr as needing lmp-aisci and the input stops with LAMMPS's
   "Unrecognized kspace style 'pppm/dplr'".

Skipped (77) when that LAMMPS or the plugin built against it is not built."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import plugin_route as R  # noqa: E402

LMP, SO = R.need()
import aisci_nn_toy as toy  # noqa: E402
import aisci_testlib as T  # noqa: E402

toy.skip_without_torch_wrapper()
import deepmd_systems as D  # noqa: E402
import dplr_systems as S  # noqa: E402

STEPS = (0, 20)
DUMP = R.DUMP


def both(label, script, plugin_script=None, dumps=("f.dump",), **kw):
    """Run through the plugin and through lmp-aisci; compare at STEPS."""
    ours = R.run_plugin(LMP, SO, plugin_script or script, **kw)
    theirs = T.run_lammps(script, **kw)
    R.compare_runs(label, ours, theirs, STEPS, dumps)
    return ours


# ---- 1. fix pimd/langevin ----------------------------------------------------------------
def pimd(fix_extra, partitions=None):
    script = R.lj_pimd_script(fix_extra, partitions=bool(partitions))
    plugin_script = script
    if R.HAS["replica_pimd_langevin"]:
        plugin_script = script.replace("pimd/langevin", "pimd/langevin/aisci")
    return script, plugin_script


s, ps = pimd("beads_per_world 4")
both("pimd 4 beads in 1 partition", s, ps)
s, ps = pimd("", partitions="2x1")
ours = R.run_plugin(LMP, SO, ps, nprocs=2, partitions="2x1")
theirs = T.run_lammps(s, nprocs=2, partitions="2x1")
R.compare_runs("pimd 2 partitions", ours, theirs, STEPS, ("f.0.dump", "f.1.dump"))

# ---- 2. pair_style aisci / deepmd --------------------------------------------------------
WATER6 = R.water6_files()
water6 = R.water6_script

MATRIS = os.path.join(T.SOURCE_DIR, "potentials", "models", "water_matris.pt")
both("pair aisci water_matris.pt", water6("pair_style aisci threads 1\npair_coeff * * %s O H"
                                          % MATRIS), files=WATER6)
if os.path.exists(D.SEA):
    both("pair aisci deeppot_sea.pth", water6("pair_style aisci threads 1\npair_coeff * * %s O H"
                                              % D.SEA), files=WATER6)
    both("pair deepmd deeppot_sea.pth", water6("pair_style deepmd %s\npair_coeff * * O H" % D.SEA),
         files=WATER6)
else:
    print("pair aisci/deepmd with DeePMD-kit's deeppot_sea.pth: not run (%s not found; "
          "DeePMD-kit's models are expected at ../shared/deepmd-kit or AISCI_DEEPMD_DIR)"
          % D.SEA, flush=True)

# ---- 3. DPLR -----------------------------------------------------------------------------
BOX = S.make_dplr_water_box(16, seed=3)
BODY = """group real type 1 2
velocity real create 300.0 4928 mom yes rot no dist gaussian
fix nve real nve
timestep 0.00025
thermo 20
%srun 20
""" % DUMP.format(file="f.dump")
DPLR_FILES = {"water.data": S.water_data(BOX)}
if R.HAS["kspace"]:
    r = both("dplr water", S.water_script(accuracy="1e-5", body=BODY), files=DPLR_FILES)
    T.check("kspace" not in " ".join(R.plugin_lines(r.output)),
            "pppm/dplr came through the plugin: %s" % R.plugin_lines(r.output))
else:
    r = R.run_plugin(LMP, SO, S.water_script(accuracy="1e-5", body=BODY), files=DPLR_FILES)
    T.check(r.rc != 0 and "Unrecognized kspace style 'pppm/dplr'" in r.output
            and R.kspace_line() in R.plugin_lines(r.output),
            "LAMMPS %s: DPLR through the plugin stops at kspace_style pppm/dplr, after the log "
            "line naming it:\n%s" % (R.VERSION, r.output[-2000:]))
    print("dplr water: not comparable in LAMMPS %s (no kspace plugins); the log says to use "
          "lmp-aisci" % R.VERSION, flush=True)

T.summary("test_plugin_parity")
