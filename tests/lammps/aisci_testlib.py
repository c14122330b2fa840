"""Test bookkeeping for the Python tests (tests/lammps, tests/python, tests/capi, tests/hpc):
check(), skip() and summary(). Running LAMMPS and reading its logs come from the one
harness, scripts/aisci_run.py; its names are re-exported here so that a test needs one
import (`import aisci_testlib as T`; T.run_lammps, T.parse_thermo, T.mean_and_error, ...).

Environment (set by ctest): AISCI_LMP (launcher), AISCI_MPIEXEC (mpiexec with flags),
AISCI_SOURCE_DIR, AISCI_BUILD_DIR. Each test prints 'N passed, M failed' and exits 1 on
any failure, 77 when it cannot run here."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import aisci_run  # noqa: E402
from aisci_run import (DEBIAN_LMP, LMP, SOURCE_DIR, TIMEOUT_RC, Run, first_error,  # noqa: E402,F401
                       loop_time, loop_times, mean_and_error, parse_thermo, read_log,
                       run_lammps, thermo_runs, timing_sections)

MPIEXEC = aisci_run.mpiexec_command()

__all__ = ["DEBIAN_LMP", "LMP", "MPIEXEC", "SOURCE_DIR", "TIMEOUT_RC", "Run", "first_error",
           "loop_time", "loop_times", "mean_and_error", "parse_thermo", "read_log",
           "run_lammps", "thermo_runs", "timing_sections", "check", "skip", "summary",
           "SKIP_CODE"]

_passed = 0
_failed = 0


def check(cond, what):
    """Record one check; print the failing ones."""
    global _passed, _failed
    if cond:
        _passed += 1
    else:
        _failed += 1
        print("FAILED: " + what, flush=True)
    return cond


SKIP_CODE = 77  # ctest: SKIP_RETURN_CODE (tests/CMakeLists.txt)


def skip(reason):
    """End a test that cannot run here: print why and exit 77, which ctest reports as
    skipped (never as passed)."""
    print("SKIPPED: " + reason, flush=True)
    sys.exit(SKIP_CODE)


def summary(name):
    print("%s: %d passed, %d failed" % (name, _passed, _failed), flush=True)
    sys.exit(0 if _failed == 0 and _passed > 0 else 1)
