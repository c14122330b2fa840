"""examples/nn_quantum_water (the main example, scripts/run-example.sh) end to end at tiny
length, with the shipped DFT model potentials/models/water_equivariant_dft.pt:
- run.sh rejects a missing launcher, a missing model file and inconsistent lengths with a
  message and exit code 2; analyze.py on an empty folder fails and names what is missing;
- a short run (2 classical replicas of 10 minimization + 40 + 40 steps, 8-bead PIMD of
  20 + 40 steps, blocks of 20 steps) exits 0 and writes rdf.png, summary.txt, both
  partitions' logs and RDF files, and no atom is lost (thermo_modify lost error);
- the summary's numbers are finite and physically sane: the classical 3/2 kT at 300 K is
  38.78 meV, the classical MD kinetic energy per H within a factor 2 of it, the PIMD
  centroid-virial kinetic energy per H between 1.5 and 4 times it (the 5 ps runs of
  docs/validation.md give 2.84; the estimator reaches ~3 within 20 fs, since it measures
  the ring polymers' spread, which relaxes in a few fs), the classical O-O peak between
  2.5 and 3.2 A with g > 1.5.
Skips (77) without the torch wrapper."""
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aisci_nn_toy as toy  # noqa: E402
import aisci_testlib as T  # noqa: E402

EXAMPLE = os.path.join(T.SOURCE_DIR, "examples", "nn_quantum_water")
RUN = os.path.join(EXAMPLE, "run.sh")
ENV = dict(os.environ, MPIEXEC=T.MPIEXEC[0], OMPI_MCA_mpi_yield_when_idle="1",
           NMIN="10", NEQUIL="40", NSAMPLE="40", NWARM="20", NSTEPS="40", BLOCK="20")
KT32_MEV = 1.5 * 8.617333262e-5 * 300.0 * 1000.0   # 38.78 meV

toy.skip_without_torch_wrapper()


def bad_usage():
    p = subprocess.run([RUN, "/nonexistent/lmp-aisci"], env=ENV, capture_output=True, text=True)
    T.check(p.returncode == 2 and "usage" in p.stderr,
            "run.sh without launcher: usage, rc 2; got %d %s" % (p.returncode, p.stderr))
    out = tempfile.mkdtemp(prefix="aisci_nqw_bad_")
    p = subprocess.run([RUN, T.LMP, out], env=dict(ENV, MODEL="/nonexistent/model.pt"),
                       capture_output=True, text=True)
    T.check(p.returncode == 2 and "no model file '/nonexistent/model.pt'" in p.stderr,
            "run.sh with a missing model: rc 2 and the path; got %d %s" % (p.returncode, p.stderr))
    T.check(not os.path.exists(os.path.join(out, "log.classical.0")), "no run started")
    p = subprocess.run([RUN, T.LMP, out], env=dict(ENV, NSTEPS="30"), capture_output=True,
                       text=True)
    T.check(p.returncode == 2 and "multiples of BLOCK" in p.stderr,
            "run.sh with NSTEPS not a multiple of BLOCK: rc 2; got %d %s" % (p.returncode, p.stderr))
    p = subprocess.run([RUN, T.LMP, out], env=dict(ENV, NBEADS="3"), capture_output=True,
                       text=True)
    T.check(p.returncode == 2 and "NBEADS (3) must be even" in p.stderr,
            "run.sh with odd NBEADS: rc 2; got %d %s" % (p.returncode, p.stderr))
    p = subprocess.run(["/usr/bin/python3", os.path.join(EXAMPLE, "analyze.py"), out],
                       capture_output=True, text=True)
    T.check(p.returncode != 0 and "log.classical" in p.stderr,
            "analyze.py on an empty folder fails naming the missing log; got %d %s"
            % (p.returncode, p.stderr))
    shutil.rmtree(out, ignore_errors=True)


def number(pattern, text, what):
    m = re.search(pattern, text, re.M)
    if not T.check(m is not None, "%s in the summary:\n%s" % (what, text)):
        return None
    vals = [float(g) for g in m.groups()]
    T.check(all(math.isfinite(v) for v in vals), "%s finite: %s" % (what, vals))
    return vals


def short_run():
    out = tempfile.mkdtemp(prefix="aisci_nqw_")
    p = subprocess.run([RUN, T.LMP, out], env=ENV, capture_output=True, text=True, timeout=800)
    if not T.check(p.returncode == 0, "run.sh exit code %d:\n%s%s"
                   % (p.returncode, p.stdout[-3000:], p.stderr[-3000:])):
        return
    for name in ("rdf.png", "summary.txt", "water.data", "data.equil.0", "log.classical.0",
                 "log.classical.1", "log.pimd.0", "log.pimd.1", "rdf.classical.0.dat",
                 "rdf.classical.1.dat", "rdf.pimd.0.dat", "rdf.pimd.1.dat"):
        path = os.path.join(out, name)
        T.check(os.path.exists(path) and os.path.getsize(path) > 0, "run.sh wrote " + name)
    for name in ("log.classical.0", "log.pimd.0"):
        text = open(os.path.join(out, name)).read()
        T.check("RUN COMPLETE" in text and "ERROR" not in text, name + " complete, no error")
    T.check("[4/4] analysis" in p.stdout and "done in" in p.stdout,
            "run.sh announces its stages:\n" + p.stdout[-2000:])
    text = open(os.path.join(out, "summary.txt")).read()
    T.check(text.strip() in p.stdout, "the summary is printed")
    v = number(r"classical, 3/2 kT \(exact\)\s+([0-9.]+)", text, "3/2 kT")
    if v:
        T.check(abs(v[0] - KT32_MEV) < 0.01, "3/2 kT = %.2f meV at 300 K: %s" % (KT32_MEV, v))
    v = number(r"classical MD, 1/2 m v\^2\s+([-0-9.naif]+) \+- ([-0-9.naif]+)", text,
               "classical K_H")
    if v:
        T.check(0.5 * KT32_MEV < v[0] < 2.0 * KT32_MEV, "classical K_H %g meV near 3/2 kT" % v[0])
    v = number(r"quantum, PIMD P=8\s+centroid-virial\s+([-0-9.naif]+) \+- ([-0-9.naif]+)",
               text, "PIMD K_H")
    if v:
        T.check(1.5 * KT32_MEV < v[0] < 4.0 * KT32_MEV,
                "PIMD K_H %g meV between 1.5 and 4 x 3/2 kT" % v[0])
        T.check(v[1] >= 0.0, "PIMD K_H error bar %g >= 0" % v[1])
    v = number(r"^\s+O-O \(window 2.4-3.2 A\)\s+([-0-9.naif]+) \+- ([-0-9.naif]+) at "
               r"([-0-9.naif]+)\s+([-0-9.naif]+) \+- ([-0-9.naif]+) at ([-0-9.naif]+)",
               text, "O-O peaks")
    if v:
        T.check(v[0] > 1.5 and 2.5 < v[2] < 3.2, "classical O-O peak g %g at %g A" % (v[0], v[2]))
        T.check(v[3] > 1.2 and 2.5 < v[5] < 3.2, "quantum O-O peak g %g at %g A" % (v[3], v[5]))
    shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    bad_usage()
    short_run()
    T.summary("test_nn_quantum_water_example")
