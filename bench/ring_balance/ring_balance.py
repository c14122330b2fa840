#!/usr/bin/python3
"""bench/ring_balance: the ring balancer of the C core (aisci/ringlb.h) on a water slab
with vacuum: cost max/mean, model CPU time per rank and step time without and with the
ring, bytes exchanged, and a bit-for-bit check of the results (see ring_balance.c).

Compiles ring_balance.c with mpicc against the libaisci_core of a build directory and
runs it under mpiexec.

Usage:
  bench/ring_balance/ring_balance.py BUILD_DIR [--ranks 4] [--nx 10] [--steps 5]
      [--rc 6.0] [--features 32] [--hidden 64] [--tolerance 0.05] [--mpiexec CMD]
"""
import argparse
import glob
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "scripts"))
from aisci_run import mpiexec_command  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build_dir")
    ap.add_argument("--ranks", type=int, nargs="+", default=[4])
    ap.add_argument("--nx", type=int, default=10, help="molecules per box edge (3 nx^3 atoms)")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--rc", type=float, default=6.0)
    ap.add_argument("--features", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--tolerance", type=float, default=0.05)
    ap.add_argument("--mpiexec", default=None,
                    help="MPI launcher (default mpiexec; scripts/aisci_run.py adds its flags)")
    ap.add_argument("--workdir", default=os.path.join(HERE, "out"))
    args = ap.parse_args()

    libs = glob.glob(os.path.join(args.build_dir, "**", "libaisci_core.so"), recursive=True)
    if not libs:
        sys.exit("ring_balance: no libaisci_core.so under %s (build the project first)" % args.build_dir)
    libdir = os.path.dirname(os.path.abspath(libs[0]))
    os.makedirs(args.workdir, exist_ok=True)
    exe = os.path.join(args.workdir, "ring_balance")
    cmd = ["mpicc", "-O2", "-std=c11", "-D_GNU_SOURCE",
           "-I", os.path.join(SOURCE, "src", "USER-AISCI", "core", "include"),
           # the transport calls one by one: exported for tests and benches only
           "-I", os.path.join(SOURCE, "src", "USER-AISCI", "core", "testing"),
           os.path.join(HERE, "ring_balance.c"), "-o", exe,
           "-L", libdir, "-laisci_core", "-Wl,-rpath," + libdir, "-lm"]
    subprocess.run(cmd, check=True)
    status = 0
    for n in args.ranks:
        run = mpiexec_command(args.mpiexec, "ring_balance") + ["-n", str(n), exe, str(args.nx), str(args.steps),
                                           str(args.rc), str(args.features), str(args.hidden),
                                           str(args.tolerance)]
        r = subprocess.run(run)
        status = status or r.returncode
    sys.exit(status)


if __name__ == "__main__":
    main()
