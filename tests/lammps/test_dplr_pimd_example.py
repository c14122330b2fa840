"""examples/dplr_water_pimd runs as its README says (run.sh, 10 steps instead of 200): exit
0, both partitions' logs, the quantum kinetic energy printed, every one of the 512 sites
kept, and the estimator f_1[7] counts the 384 nuclei (3/2 N kT at step 0, beads started
together). Exit 77 (skipped) without DeePMD-kit's conf.lmp (../shared/deepmd-kit) or the
torch wrapper."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aisci_testlib as T  # noqa: E402

base = os.environ.get("AISCI_BUILD_DIR", os.path.join(T.SOURCE_DIR, "build"))
deepmd = os.path.join(T.SOURCE_DIR, "..", "shared", "deepmd-kit")
if not os.path.exists(os.path.join(base, "lib", "libaisci_torch.so")):
    T.skip("%s/lib/libaisci_torch.so not built (AISCI_ENABLE_TORCH=OFF?)" % base)
if not os.path.exists(os.path.join(deepmd, "dplr-water", "lmp", "conf.lmp")):
    T.skip("no DeePMD-kit DPLR example system at %s/dplr-water/lmp/conf.lmp" % deepmd)
out = tempfile.mkdtemp(prefix="aisci_dplr_pimd_")
env = dict(os.environ, STEPS="10", OUT=out,
           MPIRUN=" ".join(T.MPIEXEC))
p = subprocess.run(["sh", os.path.join(T.SOURCE_DIR, "examples", "dplr_water_pimd", "run.sh"), base,
                    deepmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, timeout=900)
text = p.stdout.decode(errors="replace")
print(text)
if T.check(p.returncode == 0, "run.sh failed (rc %d)" % p.returncode):
    T.check("quantum kinetic energy" in text, "run.sh prints the quantum kinetic energy")
    logs = [open(os.path.join(out, "log.pimd.%d" % w)).read() for w in (0, 1)]
    t = T.parse_thermo(logs[0])
    T.check(t.get("Step") == [0.0, 10.0], "thermo at steps 0 and 10: %s" % t.get("Step"))
    T.check(all("Loop time" in log and "with 512 atoms" in log for log in logs),
            "both partitions ran to the end with 512 atoms")
    k = t["f_1[7]"][0]
    expect = 1.5 * 384 * 8.617343e-5 * 300.0
    print("f_1[7] at step 0: %.6f eV, 3/2 N kT for 384 nuclei: %.6f eV" % (k, expect))
    T.check(abs(k - expect) < 1e-4 * expect, "f_1[7] = %.6f, expected %.6f" % (k, expect))
T.summary("test_dplr_pimd_example")
