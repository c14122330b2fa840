"""lmp-aisci knows the second names that the plugin uses where a LAMMPS has its own style
of the plain name (docs/plugin.md): fix pimd/langevin/aisci, fix dplr/aisci,
kspace_style pppm/dplr/aisci. An input written with them runs the same through
lmp-aisci and through `plugin load` anywhere. Checked here: the /aisci names give the same
thermo output, digit for digit, as the plain names (PIMD on LJ; DPLR water)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aisci_testlib as T  # noqa: E402
import pimd_systems as P  # noqa: E402

FIX = "fix pimd all pimd/langevin temp 30.0 thermostat PILE_L 99 tau 0.1 beads_per_world 2"
EXTRA = "ke f_pimd[1] f_pimd[7]\nthermo_modify format float %.17g"
plain = T.run_lammps(P.lj_script(FIX, nsteps=10, thermo=5, extra=EXTRA))
alias = T.run_lammps(P.lj_script(FIX.replace("pimd/langevin", "pimd/langevin/aisci"), nsteps=10,
                                 thermo=5, extra=EXTRA))
if T.check(plain.rc == 0 and alias.rc == 0, "PIMD runs (rc %d, %d):\n%s"
           % (plain.rc, alias.rc, (plain.output + alias.output)[-2000:])):
    T.check(plain.thermo() == alias.thermo() and len(plain.thermo().get("Step", [])) == 3,
            "fix pimd/langevin/aisci = fix pimd/langevin:\n%s\n%s" % (plain.thermo(), alias.thermo()))

if os.path.exists(os.path.join(os.environ.get("AISCI_BUILD_DIR", ""), "lib", "libaisci_torch.so")):
    import dplr_systems as S  # noqa: E402
    files = {"water.data": S.water_data(S.make_dplr_water_box(8, seed=3))}
    script = S.water_script(accuracy="1e-4")
    a = T.run_lammps(script, files=files)
    b = T.run_lammps(script.replace("pppm/dplr", "pppm/dplr/aisci").replace(
        "all dplr model", "all dplr/aisci model"), files=files)
    if T.check(a.rc == 0 and b.rc == 0, "DPLR runs (rc %d, %d):\n%s"
               % (a.rc, b.rc, (a.output + b.output)[-2000:])):
        T.check(a.thermo() == b.thermo() and a.thermo().get("Step") == [0],
                "fix dplr/aisci + pppm/dplr/aisci = fix dplr + pppm/dplr:\n%s\n%s"
                % (a.thermo(), b.thermo()))
else:
    print("DPLR part not run: no libaisci_torch.so in this build", flush=True)

T.summary("test_plugin_aliases")
