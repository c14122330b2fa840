"""`clear`, `plugin unload`, `plugin list` and loading again (issue 22, docs/plugin.md
"clear, plugin unload, plugin load again"), per LAMMPS version (AISCI_PLUGIN_VERSION).
LAMMPS's `clear` unloads every plugin (LAMMPS::destroy() calls plugin_clear(), in 29Sep2021
and 4Feb2025 alike), so:

1. `plugin load`, run, `clear`, the same input again without `plugin load`: LAMMPS stops
   with its "Unrecognized fix style 'pimd/langevin/aisci'", and `plugin list` after `clear`
   lists none of ours;
2. `plugin load`, run, `clear`, `plugin load` of the same file again, run: works, and the
   second run's thermo output equals the first's digit for digit (same seeds);
3. `plugin unload fix pimd/langevin/aisci`: that style is gone (LAMMPS deletes the fix in
   use; using the name again stops with "Unrecognized fix style"); `plugin load` again
   brings back that name and leaves the others (one log line says so), and the run is the
   same as before;
4. with a model (pair_style aisci, this repository's water_matris.pt, libtorch loaded):
   run, `clear`, `plugin load`, run: the same thermo output (libtorch and our libraries
   stay mapped across `clear`: -z nodelete);
5. where kspace styles come through the plugin (4Feb2025): kspace_style pppm/aisci in use
   at `clear` (LAMMPS's plugin_unload does not delete a kspace instance; it is deleted
   after the plugin's dlclose), then `plugin load` and the same run: same output.

Skipped (77) when that LAMMPS or the plugin built against it is not built."""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aisci_testlib as T  # noqa: E402
import plugin_route as R  # noqa: E402

LMP, SO = R.need()
LOAD = "plugin load %s\n" % SO

LJ = R.LJ_PIMD_RUN
N_ROWS = 3  # steps 0, 2, 4


def halves(th, n):
    """(first n rows, the rest) of a thermo dict."""
    return ({k: v[:n] for k, v in th.items()}, {k: v[n:] for k, v in th.items()})


def same_twice(label, r, n):
    """r ran the same input twice: rc 0 and the two thermo tables equal digit for digit."""
    if not T.check(r.rc == 0, "%s (rc %d):\n%s" % (label, r.rc, r.output[-2000:])):
        return
    th = r.thermo()
    a, b = halves(th, n)
    T.check(len(th.get("Step", [])) == 2 * n and a == b,
            "%s: the second run gives the same thermo output as the first:\n%s\n%s"
            % (label, a, b))
    print("%s: %d thermo rows equal" % (label, n), flush=True)


# 1. clear unloads the plugin
r = T.run_lammps(LOAD + LJ + "clear\nplugin list\n" + LJ, exe=LMP)
T.check(r.rc != 0 and "Unrecognized fix style 'pimd/langevin/aisci'" in r.output,
        "after clear our style is unknown until plugin load:\n" + r.output[-2000:])
after = r.output.split("Currently loaded plugins", 1)[-1]
T.check("Currently loaded plugins" in r.output
        and not re.search(r"^ *\d+: \w+ style plugin ", after, re.M),
        "plugin list after clear lists no plugin:\n" + after[:1500])

# 2. clear + plugin load again
same_twice("plugin load, run, clear, plugin load, run", T.run_lammps(
    LOAD + LJ + "clear\n" + LOAD + LJ, exe=LMP), N_ROWS)

# 3. plugin unload one style, load again
r = T.run_lammps(LOAD + LJ + "plugin unload fix pimd/langevin/aisci\n"
                 "plugin list\nfix p all pimd/langevin/aisci temp 1.0\n", exe=LMP)
T.check(r.rc != 0 and "Unrecognized fix style 'pimd/langevin/aisci'" in r.output
        and "fix style plugin pimd/langevin/aisci" not in r.output.split("Unloading", 1)[-1],
        "plugin unload fix pimd/langevin/aisci removes it:\n" + r.output[-2000:])
r = T.run_lammps(LOAD + LJ + "plugin unload fix pimd/langevin/aisci\n" + LOAD + "clear\n"
                 + LOAD + LJ, exe=LMP)
same_twice("plugin unload + plugin load again", r, N_ROWS)
lines = [l for l in R.plugin_lines(r.output) if "already loaded from this plugin" in l]
T.check(len(lines) == 1, "the second plugin load says the other styles were already loaded; "
        "got %s" % R.plugin_lines(r.output))
T.check("Ignoring load" not in r.output, "nothing registered twice:\n" + r.output[-2000:])

# 4. with a model and libtorch
MATRIS = os.path.join(T.SOURCE_DIR, "potentials", "models", "water_matris.pt")
if os.path.exists(os.path.join(R.BUILD_DIR, "lib", "libaisci_torch.so")):
    import deepmd_systems as D  # noqa: E402
    WATER6 = """units metal
boundary p p p
atom_style atomic
atom_modify map yes
read_data data.lmp
pair_style aisci threads 1
pair_coeff * * %s O H
velocity all create 300.0 8642 mom yes rot no dist gaussian
fix nve all nve
timestep 0.0005
thermo_style custom step pe ke press
thermo_modify format float %%.17g
thermo 5
run 10
""" % MATRIS
    r = T.run_lammps(LOAD + WATER6 + "clear\n" + LOAD + WATER6, exe=LMP,
                     files={"data.lmp": D.data_file(D.WATER6_X, D.WATER6_TYPES, D.WATER6_BOX)})
    same_twice("pair_style aisci (libtorch), clear, plugin load, again", r, 3)
else:
    print("part 4 not run: no libaisci_torch.so in %s/lib" % R.BUILD_DIR, flush=True)

# 5. a kspace style of ours in use at clear
if R.HAS["kspace"]:
    CHARGED = """units real
atom_style charge
lattice sc 3.0
region box block 0 4 0 4 0 4
create_box 1 box
create_atoms 1 box
mass 1 10.0
variable q atom 0.5-((floor(x/3.0+0.5)+floor(y/3.0+0.5)+floor(z/3.0+0.5))%2)
set group all charge v_q
pair_style lj/cut/coul/long 6.0
pair_coeff * * 0.1 2.5
kspace_style pppm/aisci 1e-4
velocity all create 300.0 55 loop geom
fix nve all nve
thermo_style custom step pe elong press
thermo_modify format float %.17g
thermo 5
run 10
"""
    r = T.run_lammps(LOAD + CHARGED + "clear\n" + LOAD + CHARGED, exe=LMP)
    same_twice("kspace_style pppm/aisci in use at clear, plugin load, again", r, 3)
else:
    print("part 5 not run: LAMMPS %s loads no kspace plugins" % R.VERSION, flush=True)

T.summary("test_plugin_clear")
