"""examples/dplr_water at tiny length with the shipped models (water_dplr_sr.pt,
water_dw.pt): run.sh builds the teacher box, runs q-TIP4P/F, converts its last frame to
DPLR data with one WC per molecule (whole molecules: no image-flag warnings), runs DPLR
and compares the RDFs (first O-O peaks near 2.8 A; the full-length comparison is in
docs/dplr.md); without a short-range model file run.sh stops with a message naming it."""
import os
import re
import subprocess
import tempfile

import aisci_testlib as T

EXAMPLE = os.path.join(T.SOURCE_DIR, "examples", "dplr_water")
RUN = os.path.join(EXAMPLE, "run.sh")
SR = os.path.join(T.SOURCE_DIR, "potentials", "models", "water_dplr_sr.pt")

out = tempfile.mkdtemp(prefix="aisci_dplr_example_")
env = dict(os.environ, NMOL="64", TEACHER_EQUIL="200", TEACHER_SAMPLE="100", NEQUIL="40",
           NSAMPLE="40", SR=SR, OMPI_MCA_mpi_yield_when_idle="1")
p = subprocess.run([RUN, T.LMP, out], env=env, capture_output=True, text=True, timeout=600)
if T.check(p.returncode == 0, "run.sh exit code %d:\n%s%s" % (p.returncode, p.stdout[-3000:],
                                                              p.stderr[-3000:])):
    for name in ("rdf.teacher.dat", "rdf.dplr.dat", "rdf_compare.txt", "dplr.data"):
        T.check(os.path.getsize(os.path.join(out, name)) > 0, "run.sh wrote " + name)
    data = open(os.path.join(out, "dplr.data")).read()
    T.check("256 atoms" in data and "192 bonds" in data and "3 atom types" in data,
            "dplr.data has 64 x (O, H, H, WC) and 3 bonds per molecule")
    log = open(os.path.join(out, "log.dplr")).read()
    T.check("Inconsistent image flags" not in log, "no image-flag warning in the DPLR run")
    T.check("fix dplr" in log and "overlap = yes" in log, "DPLR run used fix dplr with overlap")
    text = open(os.path.join(out, "rdf_compare.txt")).read()
    m = re.search(r"^O-O\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)", text, re.M)
    if T.check(m is not None, "O-O line in rdf_compare.txt:\n" + text):
        T.check(2.6 < float(m.group(1)) < 3.0, "teacher O-O first peak near 2.8 A: " + m.group(0))
        T.check(2.5 < float(m.group(3)) < 3.1, "DPLR O-O first peak near 2.8 A: " + m.group(0))

missing = dict(env, SR=os.path.join(out, "no_such_model.pt"))
p = subprocess.run([RUN, T.LMP, out], env=missing, capture_output=True, text=True, timeout=60)
T.check(p.returncode == 2 and "no short-range model at " + missing["SR"] in p.stderr,
        "missing SR model: exit 2 and a message naming it: %d %s" % (p.returncode, p.stderr))
p = subprocess.run([RUN], capture_output=True, text=True, timeout=60)
T.check(p.returncode == 2 and "usage:" in p.stderr, "no launcher: usage message")
T.summary("test_dplr_example")
