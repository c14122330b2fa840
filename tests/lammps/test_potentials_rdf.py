#!/usr/bin/python3
"""Water MD with a shipped model through pair_style aisci: the O-O radial distribution
function agrees with the teacher's (q-TIP4P/F, Debian's LAMMPS).

64 molecules at 1.0 g/cm3 and 300 K (a frame of potentials/data/water_qtip4pf_clean.npz
from the teacher's MD at that state point), Nose-Hoover NVT with water_matris.pt, 0.5 fs,
a short equilibration, then g_OO(r) sampled over 0.4 ps. Reference:
potentials/data/teacher_rdf_300K.txt (potentials/data/teacher_rdf.py: the same box size
and state point, 6 runs of 20 ps). Checks: first peak position within 0.1 A and height
within 25 %, coordination number to 3.3 A within 10 %, and the mean absolute difference
of g over 2.3-6 A below 0.12 (the run is short: sampling noise of a few %). A model that
lost the hydrogen-bond structure (a simple liquid peaks near 3.1-3.2 A with 10-12
neighbours) fails all of them."""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aisci_nn_toy as toy  # noqa: E402
import aisci_testlib as T  # noqa: E402

sys.path.insert(0, T.SOURCE_DIR)
from potentials.common.evaluate import load_frames  # noqa: E402
from potentials.data.teacher_rdf import (compare_rdf, model_rdf_input,  # noqa: E402
                                         model_start_frame, read_ave_time_rdf, read_rdf)

toy.skip_without_torch_wrapper()

MODEL = os.path.join(T.SOURCE_DIR, "potentials", "models", "water_matris.pt")
DATA = os.path.join(T.SOURCE_DIR, "potentials", "data")
EQUIL = 100     # steps of 0.5 fs
STEPS = 800     # sampled steps (0.4 ps)
EVERY = 4

data, rho = model_start_frame(load_frames(os.path.join(DATA, "water_qtip4pf_clean.npz")))
script = model_rdf_input(MODEL, seed=4711, equil=EQUIL, steps=STEPS, every=EVERY, thermo=100)

r_t, g_t, sem_t, _ = read_rdf(os.path.join(DATA, "teacher_rdf_300K.txt"))
run = T.run_lammps(script, files={"frame.data": data}, timeout=600)
if T.check(run.rc == 0, "NVT run failed:\n%s" % run.output[-2000:]):
    th = run.thermo()
    r, g = read_ave_time_rdf(os.path.join(run.workdir, "rdf_oo.dat"))
    T.check(len(r) == len(r_t) and np.allclose(r, r_t, atol=1e-3),
            "RDF bins match the teacher file (%d vs %d bins)" % (len(r), len(r_t)))
    c = compare_rdf(r, g, g_t, rho)
    p_nn, h_nn, p_t, h_t = c["peak_r"], c["peak_g"], c["peak_r_ref"], c["peak_g_ref"]
    n_nn, n_t, mad = c["coord"], c["coord_ref"], c["mad"]
    print("%s, %d + %d steps of 0.5 fs, T %.0f K (mean of the sampled part's thermo)"
          % (os.path.basename(MODEL), EQUIL, STEPS, np.mean(th["Temp"][len(th["Temp"]) // 2:])))
    print("first O-O peak: model %.3f A, g %.3f; teacher %.3f A, g %.3f"
          % (p_nn, h_nn, p_t, h_t))
    print("coordination number to 3.3 A: model %.2f, teacher %.2f" % (n_nn, n_t))
    print("mean |g_model - g_teacher| over 2.3-6 A: %.4f" % mad)
    T.check(abs(p_nn - p_t) < 0.1, "peak position %.3f vs teacher %.3f A" % (p_nn, p_t))
    T.check(abs(h_nn - h_t) < 0.25 * h_t, "peak height %.3f vs teacher %.3f" % (h_nn, h_t))
    T.check(abs(n_nn - n_t) < 0.1 * n_t, "coordination %.2f vs teacher %.2f" % (n_nn, n_t))
    T.check(mad < 0.12, "mean |g - g_teacher| = %.4f over 2.3-6 A" % mad)

T.summary("test_potentials_rdf")
