"""Our plugin on LAMMPS_PLUGIN_PATH (issue 22, docs/plugin.md "Load it"): LAMMPS from
4May2022 on loads every *plugin.so in the folders of that variable when it starts, and again
after `clear` (src/PLUGIN/plugin.cpp, plugin_auto_load, called from LAMMPS::create()), so
an input needs no `plugin load` line. Per LAMMPS version (AISCI_PLUGIN_VERSION):

4Feb2025 (auto-loads):
1. with LAMMPS_PLUGIN_PATH = the plugin's folder and no `plugin load`, LAMMPS says
   "Loaded 1 plugins from <folder>", `plugin list` shows our styles, and fix
   pimd/langevin/aisci runs with the same thermo output, digit for digit, as after an
   explicit `plugin load`;
2. after `clear` the styles are there again (auto-loaded anew) and give the same output;
3. LAMMPS_PLUGIN_PATH and an explicit `plugin load` of the same file: our styles are not
   registered twice; one log line says they were already loaded; the run is the same.
29Sep2021 (no auto-load): LAMMPS_PLUGIN_PATH is ignored: our style is unknown
   ("Unrecognized fix style 'pimd/langevin/aisci'"), and `plugin load` is needed.

Skipped (77) when that LAMMPS or the plugin built against it is not built."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aisci_testlib as T  # noqa: E402
import plugin_route as R  # noqa: E402

LMP, SO = R.need()
FOLDER = os.path.dirname(os.path.abspath(SO))
ENV = {"LAMMPS_PLUGIN_PATH": FOLDER}

LJ = R.LJ_PIMD_RUN
N_ROWS = 3  # steps 0, 2, 4

ref = R.run_plugin(LMP, SO, LJ)
if not T.check(ref.rc == 0 and len(ref.thermo().get("Step", [])) == N_ROWS,
               "reference run with plugin load (rc %d):\n%s" % (ref.rc, ref.output[-2000:])):
    T.summary("test_plugin_path")
REF = ref.thermo()
loaded = "Loaded 1 plugins from %s" % FOLDER

if R.HAS["plugin_path"]:
    # 1. no plugin load line
    r = T.run_lammps("plugin list\n" + LJ, exe=LMP, env=ENV)
    T.check(r.rc == 0, "run with LAMMPS_PLUGIN_PATH=%s and no plugin load (rc %d):\n%s"
            % (FOLDER, r.rc, r.output[-2000:]))
    T.check(loaded in r.output, "LAMMPS says '%s':\n%s" % (loaded, r.output[-2000:]))
    for kind, name in (("pair", "aisci"), ("fix", "pimd/langevin/aisci"), ("fix", "dplr/aisci"),
                       ("compute", "aisci/cost"), ("kspace", "pppm/dplr/aisci")):
        T.check("%s style plugin %s\n" % (kind, name) in r.output,
                "plugin list shows %s style %s after auto-load" % (kind, name))
    T.check(r.thermo() == REF, "auto-loaded = plugin load, thermo digit for digit:\n%s\n%s"
            % (r.thermo(), REF))
    print("auto-load: %d thermo rows equal to plugin load's" % len(REF["Step"]), flush=True)

    # 2. clear: auto-loaded again
    r = T.run_lammps(LJ + "clear\n" + LJ, exe=LMP, env=ENV)
    T.check(r.rc == 0, "auto-load, run, clear, run again (rc %d):\n%s" % (r.rc, r.output[-2000:]))
    T.check(r.output.count(loaded) == 2, "'%s' at start-up and after clear (%d times)"
            % (loaded, r.output.count(loaded)))
    th = r.thermo()
    T.check(len(th.get("Step", [])) == 2 * N_ROWS
            and {k: v[N_ROWS:] for k, v in th.items()} == REF,
            "the run after clear gives the same thermo output:\n%s\n%s" % (th, REF))

    # 3. auto-loaded and loaded again with plugin load
    r = R.run_plugin(LMP, SO, LJ, env=ENV)
    T.check(r.rc == 0, "LAMMPS_PLUGIN_PATH + plugin load (rc %d):\n%s" % (r.rc, r.output[-2000:]))
    lines = [l for l in R.plugin_lines(r.output) if "already loaded from this plugin" in l]
    T.check(len(lines) == 1, "one log line says the styles were already loaded; got %s"
            % R.plugin_lines(r.output))
    T.check("Ignoring load" not in r.output and "Overriding" not in r.output,
            "nothing registered twice, nothing replaced:\n" + r.output[-2000:])
    T.check(r.thermo() == REF, "same thermo output:\n%s\n%s" % (r.thermo(), REF))
else:
    r = T.run_lammps(LJ, exe=LMP, env=ENV)
    T.check(r.rc != 0 and "Unrecognized fix style 'pimd/langevin/aisci'" in r.output
            and "Loaded 1 plugins" not in r.output,
            "LAMMPS %s ignores LAMMPS_PLUGIN_PATH (no auto-load before 4May2022): the style "
            "stays unknown:\n%s" % (R.VERSION, r.output[-2000:]))
    print("LAMMPS %s: LAMMPS_PLUGIN_PATH ignored, as documented" % R.VERSION, flush=True)

T.summary("test_plugin_path")
