"""C API on a device against the CPU: energy, forces and virial of shipped models through
libaisci_torch (ctypes, tests/capi/aisci_capi.py), same graph, same precision.

    python3 bench/gpu/capi_device_check.py --build BUILD [--device cuda] [--atoms 300]

Per component |a - b| <= tol * max(1, |b|), a on --device, b on the CPU; tol 1e-10 in
float64 and 1e-5 in float32 (both computed in the model's arithmetic, compared after the
C API's float64 sums). Prints one line per model and precision and exits 1 when any
comparison fails. With --device cpu (bench/gpu/run_gpu.sh --dry-run) it checks the
script and the library, not a device. Needs numpy only (no torch in this process, so a
libaisci_torch built against another libtorch than the interpreter's loads alone).
"""
import argparse
import os
import sys

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOL = {"float64": 1e-10, "float32": 1e-5}
MODELS = ["water_matris.pt", "water_dpa3.pt", "water_equivariant_pruned50.pt"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--atoms", type=int, default=300, help="water box size (atoms)")
    args = ap.parse_args()
    os.environ["AISCI_BUILD_DIR"] = os.path.abspath(args.build)
    sys.path.insert(0, os.path.join(ROOT, "tests", "lammps"))
    sys.path.insert(0, os.path.join(ROOT, "tests", "capi"))
    sys.path.insert(0, ROOT)
    import aisci_capi as capi
    from potentials.data.water_box import make_water_box

    box = make_water_box(args.atoms // 3, 1.0, seed=11)
    x = np.asarray(box["positions"], dtype=np.float64)
    types = np.asarray(box["types"], dtype=np.int64) - 1
    cell = np.diag(np.asarray(box["box"], dtype=np.float64))
    failures = 0
    print("%-32s %-8s %12s %12s %12s %9s %s" % ("model", "dtype", "max|dE|rel", "max|dF|rel",
                                                 "max|dW|rel", "tol", "result"))
    for name in MODELS:
        path = os.path.join(ROOT, "potentials", "models", name)
        if not os.path.exists(path):
            print("%-32s missing, skipped" % name)
            continue
        for dtype in ("float64", "float32"):
            results = []
            for dev in ("cpu", args.device):
                st, h, msg = capi.create(path, dev, dtype, 1)
                if st:
                    print("%-32s %-8s create on %s failed: %s" % (name, dtype, dev, msg))
                    failures += 1
                    break
                rc = capi.lib.aisci_model_cutoff(h)
                rc3 = capi.lib.aisci_model_cutoff_3body(h)
                ei, ev, tr = capi.periodic_graph(x, cell, rc, rc3)
                st, e, f, w = capi.compute(h, types, ei, ev, tr)
                capi.lib.aisci_model_destroy(h)
                if st:
                    print("%-32s %-8s compute on %s failed: %s" % (name, dtype, dev,
                                                                     capi.last_error()))
                    failures += 1
                    break
                results.append((e, f, w))
            if len(results) != 2:
                continue
            (eb, fb, wb), (ea, fa, wa) = results
            rel = lambda a, b: float(np.max(np.abs(np.asarray(a) - np.asarray(b)) /   # noqa: E731
                                            np.maximum(1.0, np.abs(np.asarray(b)))))
            de, df, dw = rel(ea, eb), rel(fa, fb), rel(wa, wb)
            ok = max(de, df, dw) <= TOL[dtype]
            failures += not ok
            print("%-32s %-8s %12.2e %12.2e %12.2e %9.0e %s" % (name, dtype, de, df, dw,
                                                                 TOL[dtype],
                                                                 "ok" if ok else "FAIL"),
                  flush=True)
    print("capi_device_check: %s on %s against cpu, %d atoms" %
          ("PASS" if failures == 0 else "FAIL (%d)" % failures, args.device, len(x)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
