"""Configuring without libtorch fails with a message that names the remedies, unless
-DAISCI_ENABLE_TORCH=OFF is given explicitly (then it succeeds). CMake is run with
find_package(Torch) disabled, on a scratch build folder; nothing is compiled."""
import os
import shutil
import subprocess
import sys
import tempfile

src = os.environ["AISCI_SOURCE_DIR"]
passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAILED: " + what, flush=True)


def configure(*extra):
    d = tempfile.mkdtemp(prefix="aisci_cfg_")
    p = subprocess.run(["cmake", "-S", src, "-B", d, "-G", "Ninja", "-DAISCI_BUILD_TESTS=OFF",
                        "-DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON"] + list(extra),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    shutil.rmtree(d, ignore_errors=True)
    return p.returncode, p.stdout.decode(errors="replace")


rc, out = configure()
flat = " ".join(out.split())
check(rc != 0 and "libtorch not found" in flat and "-DAISCI_ENABLE_TORCH=OFF" in flat
      and "Torch_DIR" in flat, "configure without libtorch must fail naming the remedies "
      "(rc %d):\n%s" % (rc, out[-1500:]))
rc, out = configure("-DAISCI_ENABLE_TORCH=OFF")
check(rc == 0, "configure with -DAISCI_ENABLE_TORCH=OFF (rc %d):\n%s" % (rc, out[-1500:]))
print("test_configure: %d passed, %d failed" % (passed, failed))
sys.exit(0 if failed == 0 and passed > 0 else 1)
