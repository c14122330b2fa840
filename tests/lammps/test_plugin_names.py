"""What `plugin load libaisci_plugin.so` does with names that another package also uses
(issue 22, docs/plugin.md), in each LAMMPS built by scripts/build-lammps.sh (with REPLICA;
AISCI_PLUGIN_VERSION, plugin_route.FEATURES):

1. Loaded alone: every style comes through the plugin (`plugin list`), the kspace styles
   pppm/aisci and pppm/dplr included where the loader takes kspace styles (4Feb2025); in
   29Sep2021 they are not registered and the log names them in one line. Where REPLICA
   has its own fix pimd/langevin (4Feb2025) it stays REPLICA's (it refuses our keyword
   beads_per_world) and ours is fix pimd/langevin/aisci (it runs), the log says so in one
   line; where it has none (29Sep2021) the plain name is ours and runs. LAMMPS's
   "Overriding built-in style" replacement never happens.
2. After DeePMD-kit's plugin (a stand-in registering the same three names, built here):
   pair_style deepmd, fix dplr and kspace_style pppm/dplr stay DeePMD-kit's, the log
   names each, and ours are pair_style aisci, fix dplr/aisci and pppm/dplr/aisci.
3. DeePMD-kit's plugin loaded after ours: LAMMPS's loader keeps ours under the plain names
   and says so ("Ignoring load of ... must unload existing ... plugin first"); after
   `plugin unload fix dplr` DeePMD-kit's fix dplr loads, ours stays fix dplr/aisci.
   (In 29Sep2021 the kspace parts are left out: neither plugin's pppm/dplr loads there.)

Skipped (77) when that LAMMPS or the plugin built against it is not built."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aisci_testlib as T  # noqa: E402
import plugin_route as R  # noqa: E402

LMP, SO = R.need()

LJ = R.LJ_BOX
PIMD = "fix p all %s temp 1.0 thermostat PILE_L 7 tau 0.1 lj 1 1 1 1 1 beads_per_world 2\nrun 2\n"

# ---- 1. alone -----------------------------------------------------------------------------
r = R.run_plugin(LMP, SO, "plugin list\n")
T.check(r.rc == 0, "plugin load failed (rc %d):\n%s" % (r.rc, r.output[-2000:]))
lines = R.plugin_lines(r.output)
expect = []
if R.HAS["replica_pimd_langevin"]:
    expect.append("fix style pimd/langevin: this LAMMPS has its own, kept; ours is fix style "
                  "pimd/langevin/aisci")
if not R.HAS["kspace"]:
    expect.append(R.kspace_line())
T.check(lines == expect, "log lines %s; got %s" % (expect, lines))
T.check("Overriding" not in r.output, "no style of this LAMMPS is replaced:\n" + r.output[-2000:])
KSPACE = (("kspace", "pppm/aisci"), ("kspace", "pppm/dplr"), ("kspace", "pppm/dplr/aisci"))
for kind, name in (("pair", "aisci"), ("pair", "deepmd"), ("fix", "pimd/langevin/aisci"),
                   ("fix", "dplr"), ("fix", "dplr/aisci"), ("compute", "aisci/cost"),
                   ("command", "aisci_info")) + KSPACE:
    listed = ("%s style plugin %s\n" % (kind, name)) in r.output
    if kind == "kspace" and not R.HAS["kspace"]:
        T.check(not listed, "plugin list does not show %s style %s (LAMMPS %s cannot load "
                "kspace plugins)" % (kind, name, R.VERSION))
    else:
        T.check(listed, "plugin list shows %s style %s" % (kind, name))
plain_listed = "fix style plugin pimd/langevin\n" in r.output
if R.HAS["replica_pimd_langevin"]:
    T.check(not plain_listed, "fix pimd/langevin is not ours in a LAMMPS with REPLICA's own")
else:
    T.check(plain_listed, "fix pimd/langevin is ours where REPLICA has none")

r = R.run_plugin(LMP, SO, LJ + PIMD % "pimd/langevin")
if R.HAS["replica_pimd_langevin"]:
    T.check(r.rc != 0 and "Unknown keyword beads_per_world for fix pimd/langevin" in r.output,
            "plain fix pimd/langevin is REPLICA's (refuses beads_per_world):\n"
            + r.output[-1500:])
else:
    T.check(r.rc == 0, "plain fix pimd/langevin is ours (runs):\n" + r.output[-1500:])
# aisci_info (lists our styles) leaves the names as the loader set them
r = R.run_plugin(LMP, SO, "aisci_info\n" + LJ + PIMD % "pimd/langevin")
T.check("USER-AISCI styles:" in r.output, "aisci_info lists our styles:\n" + r.output[-1500:])
if R.HAS["replica_pimd_langevin"]:
    T.check(r.rc != 0 and "Unknown keyword beads_per_world for fix pimd/langevin" in r.output,
            "after aisci_info fix pimd/langevin is still REPLICA's:\n" + r.output[-1500:])
if not R.HAS["kspace"]:
    r = R.run_plugin(LMP, SO, LJ + "kspace_style pppm/aisci 1e-4\nrun 0\n")
    T.check(r.rc != 0 and "nrecognized kspace style" in r.output
            and R.kspace_line() in R.plugin_lines(r.output),
            "kspace_style pppm/aisci is unknown through the plugin in %s, after the log line "
            "naming it:\n%s" % (R.VERSION, r.output[-1500:]))
r = R.run_plugin(LMP, SO, LJ + PIMD % "pimd/langevin/aisci")
T.check(r.rc == 0, "fix pimd/langevin/aisci runs:\n" + r.output[-1500:])

# ---- 2./3. with a stand-in for DeePMD-kit's plugin ------------------------------------------
work = tempfile.mkdtemp(prefix="aisci_fake_deepmd_")
fake = os.path.join(work, "libfake_deepmd.so")
inc = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(LMP))), "include", "lammps")
if not os.path.isdir(inc):
    inc = os.path.join(R.PREFIX, "include", "lammps")
cmd = ["mpicxx", "-std=c++17", "-O0", "-fPIC", "-shared", "-DLAMMPS_SMALLBIG", "-I" + inc]
if not os.path.exists(os.path.join(inc, "fmt", "format.h")):
    # 29Sep2021 installs utils.h but not the fmt headers it includes: the declarations
    # that our adapters use too (src/USER-AISCI/lammps/shim)
    cmd.append("-I" + os.path.join(T.SOURCE_DIR, "src", "USER-AISCI", "lammps", "shim"))
cmd += [os.path.join(HERE, "plugin_fake_deepmd.cpp"), "-o", fake]
p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
if not T.check(p.returncode == 0, "building the DeePMD-kit stand-in: %s\n%s"
               % (" ".join(cmd), p.stdout.decode(errors="replace")[-2000:])):
    T.summary("test_plugin_names")

# DeePMD-kit's first, then ours
r = T.run_lammps("plugin load %s\nplugin load %s\nplugin list\n" % (fake, SO), exe=LMP)
T.check(r.rc == 0, "both plugins load (rc %d):\n%s" % (r.rc, r.output[-2000:]))
lines = R.plugin_lines(r.output)
expects = ["pair style deepmd not registered: this LAMMPS has its own (DeePMD-kit's); "
           "pair_style aisci reads the same PyTorch models",
           "fix style dplr: this LAMMPS has its own, kept; ours is fix style dplr/aisci"]
if R.HAS["kspace"]:
    expects.append("kspace style pppm/dplr: this LAMMPS has its own, kept; ours is kspace style "
                   "pppm/dplr/aisci")
else:
    expects.append(R.kspace_line())
for expect in expects:
    T.check(expect in lines, "log line '%s'; got %s" % (expect, lines))
T.check("Overriding" not in r.output, "loading ours replaces nothing:\n" + r.output[-2000:])
# pair_style deepmd is the stand-in's (pair zero: takes a cutoff, needs no model file)
r = T.run_lammps("plugin load %s\nplugin load %s\n" % (fake, SO) + LJ.replace(
    "pair_style lj/cut 2.5\npair_coeff 1 1 1.0 1.0", "pair_style deepmd 2.5\npair_coeff * *")
    + "run 0\n", exe=LMP)
T.check(r.rc == 0, "pair_style deepmd stays DeePMD-kit's:\n" + r.output[-1500:])

# ours first, then DeePMD-kit's: LAMMPS's loader keeps the names already loaded from a
# plugin (ours) and says so; `plugin unload` of ours first lets DeePMD-kit's in
r = T.run_lammps("plugin load %s\nplugin load %s\nplugin list\n" % (SO, fake), exe=LMP)
T.check(r.rc == 0, "both plugins load (rc %d):\n%s" % (r.rc, r.output[-2000:]))
for kind, name in (("pair", "deepmd"), ("fix", "dplr"), ("kspace", "pppm/dplr"))[
        :3 if R.HAS["kspace"] else 2]:
    T.check("Ignoring load of %s style %s: must unload existing %s plugin first" % (kind, name, name)
            in r.output, "LAMMPS says it keeps our %s style %s:\n%s" % (kind, name, r.output[-2000:]))
T.check("Overriding" not in r.output, "nothing replaced silently:\n" + r.output[-2000:])
r = T.run_lammps("plugin load %s\nplugin unload fix dplr\nplugin load %s\nplugin list\n"
                 % (SO, fake), exe=LMP)
T.check(r.rc == 0 and "fix style plugin dplr\n" in r.output
        and "fix style plugin dplr/aisci\n" in r.output
        and "Ignoring load of fix style dplr" not in r.output,
        "after plugin unload fix dplr, DeePMD-kit's fix dplr loads and ours stays as "
        "dplr/aisci:\n" + r.output[-2000:])

T.summary("test_plugin_names")
