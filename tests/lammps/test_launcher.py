"""The lmp-aisci launcher: lists our styles with -h, keeps them after `clear`, reads
input from stdin, runs partitions under MPI, and the plugin exports its entry point."""
import os
import subprocess

import aisci_testlib as T
import pimd_systems as S

p = subprocess.run([T.LMP, "-h"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
out = p.stdout.decode()
T.check(p.returncode == 0, "-h failed")
T.check("pimd/langevin" in out and "aisci_info" in out, "-h does not list our styles:\n" + out[:500])
T.check("List of individual style options" in out or "Large-scale Atomic" in out, "-h lost LAMMPS's help")

# clear drops Force/Modify; our styles must come back
script = "aisci_info\nclear\n" + S.lj_script("fix pimd all pimd/langevin temp 30 thermostat PILE_L 3", nsteps=20)
r = T.run_lammps(script)
T.check(r.rc == 0 and "Loop time" in r.output, "fix after clear failed:\n" + r.output[-1500:])

# stdin input, as with lmp < in.file
p = subprocess.run([T.LMP, "-log", "none", "-nocite"], input=b"aisci_info\nprint 'stdin works'\n",
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
T.check(p.returncode == 0 and b"stdin works" in p.stdout and b"pimd/langevin" in p.stdout,
        "stdin input failed:\n" + p.stdout.decode()[-800:])

# -var and -partition under MPI: each partition gets its own log
r = T.run_lammps("variable b world A B\nprint 'partition ${b} ${x}'\n", nprocs=2, partitions="2x1",
                 extra_args=["-var", "x", "42"])
T.check(r.rc == 0 and "partition A 42" in r.logs[0] and "partition B 42" in r.logs[1],
        "-partition/-var failed:\n" + r.output[-800:])

# the plugin module exports lammpsplugin_init
plugin = os.path.join(os.environ.get("AISCI_BUILD_DIR", ""), "lib", "libaisci_plugin.so")
if os.path.exists(plugin):
    nm = subprocess.run(["nm", "-D", "--defined-only", plugin], stdout=subprocess.PIPE).stdout.decode()
    T.check("lammpsplugin_init" in nm, "plugin does not export lammpsplugin_init")
T.summary("test_launcher")
