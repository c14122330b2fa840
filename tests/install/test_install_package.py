"""`cmake --install` gives an installation another project can use: the public headers
(no testing header), the libraries with their SOVERSION, lmp-aisci that runs from the
prefix, and a CMake package: a project outside this tree (tests/install/consumer) finds
it with find_package(AISCI), builds against AISCI::core (C) and AISCI::torch (C++) and
runs; asking for an incompatible version fails. Also the API face: at most 80 functions
in the core's public headers, each with its `@since`, and the same for aisci/model.h.
Environment (set by ctest): AISCI_BUILD_DIR, AISCI_SOURCE_DIR."""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

BUILD = os.environ["AISCI_BUILD_DIR"]
SRC = os.environ["AISCI_SOURCE_DIR"]
sys.path.insert(0, os.path.join(SRC, "tests", "lammps"))
import aisci_testlib as T  # noqa: E402

check = T.check


def resolved(ldd_output, name):
    """The real path ldd gives for library `name`, or ''."""
    for line in ldd_output.splitlines():
        parts = line.split()
        if parts and parts[0] == name and len(parts) > 2 and parts[1] == "=>":
            return os.path.realpath(parts[2])
    return ""


def run(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kw)
    return p.returncode, p.stdout.decode(errors="replace")


tmp = tempfile.mkdtemp(prefix="aisci_install_")
prefix = os.path.join(tmp, "prefix")
rc, out = run(["cmake", "--install", BUILD, "--prefix", prefix])
check(rc == 0, "cmake --install failed:\n" + out[-2000:])

# 1. headers: exactly the public ones
inc = os.path.join(prefix, "include", "aisci")
public_core = sorted(os.path.basename(h) for h in
                     glob.glob(os.path.join(SRC, "src/USER-AISCI/core/include/aisci/*.h")))
torch_built = os.path.exists(os.path.join(BUILD, "lib", "libaisci_torch.so"))
expected = sorted(public_core + (["model.h"] if torch_built else []))
installed = sorted(os.listdir(inc)) if os.path.isdir(inc) else []
check(installed == expected, "installed headers %s, expected %s" % (installed, expected))
check(not glob.glob(os.path.join(prefix, "include", "aisci_testing*")),
      "a testing header was installed")

# 2. libraries with SOVERSION
libdir = os.path.join(prefix, "lib")
for lib in ["aisci_core"] + (["aisci_torch"] if torch_built else []):
    so = os.path.join(libdir, "lib%s.so" % lib)
    check(os.path.islink(so) and os.path.exists(so + ".0"),
          "lib%s.so is not a link to a versioned lib%s.so.0" % (lib, lib))
    rc, out = run(["objdump", "-p", so])
    check("SONAME               lib%s.so.0" % lib in out, "lib%s.so has no SONAME .so.0" % lib)

# 3. API face: core <= 80 functions, every public function with @since
decl = re.compile(r"((?:/\*\*(?:(?!\*/).)*?\*/\s*)?)AISCI_API[^;(]*?\b(aisci_\w+)\s*\(", re.S)
n_core = 0
for h in expected:
    text = open(os.path.join(inc, h)).read()
    for doc, name in decl.findall(text):
        if h != "model.h":
            n_core += 1
        check("@since" in doc, "%s: %s has no @since in its comment" % (h, name))
check(0 < n_core <= 80, "the core's public headers declare %d functions (at most 80)" % n_core)
print("public functions of the core: %d" % n_core)

# 4. a consumer project
cb = os.path.join(tmp, "consumer-build")
consumer = os.path.join(SRC, "tests/install/consumer")
env = dict(os.environ)
env.pop("LD_LIBRARY_PATH", None)
rc, out = run(["cmake", "-S", consumer, "-B", cb, "-DCMAKE_PREFIX_PATH=" + prefix], env=env)
check(rc == 0, "consumer configure failed:\n" + out[-3000:])
rc, out = run(["cmake", "--build", cb], env=env)
check(rc == 0, "consumer build failed:\n" + out[-3000:])
rc, out = run([os.path.join(cb, "consumer_core")], env=env)
ver = open(os.path.join(SRC, "src/USER-AISCI/core/include/aisci/version.h")).read()
core_version = ver.split('#define AISCI_CORE_API_VERSION "')[1].split('"')[0]
check(rc == 0 and out.strip().endswith("core %s %s" % (core_version, core_version)),
      "consumer_core: rc %d, %s" % (rc, out[-1500:]))
if torch_built:
    rc, out = run([os.path.join(cb, "consumer_torch"), os.path.join(tmp, "missing.pt")], env=env)
    check(rc == 0 and out.strip().startswith("torch "),
          "consumer_torch: rc %d, %s" % (rc, out[-1500:]))
    # the library it ran with is the installed one
    rc, out = run(["ldd", os.path.join(cb, "consumer_torch")], env=env)
    check(resolved(out, "libaisci_torch.so.0") ==
          os.path.realpath(os.path.join(libdir, "libaisci_torch.so.0")),
          "consumer_torch does not use the installed libaisci_torch:\n" + out)

# an incompatible version is refused by find_package
cb2 = os.path.join(tmp, "consumer-build-next")
major, minor = (int(v) for v in core_version.split(".")[:2])
want = "%d.%d" % (major, minor + 1) if major == 0 else "%d.0" % (major + 1)
rc, out = run(["cmake", "-S", consumer, "-B", cb2, "-DCMAKE_PREFIX_PATH=" + prefix,
               "-DAISCI_WANT=" + want], env=env)
check(rc != 0 and "AISCI" in out and want in out,
      "find_package(AISCI %s) should fail against %s: rc %d\n%s" % (want, core_version, rc,
                                                                     out[-1500:]))

# 5. lmp-aisci runs from the prefix (its libraries found through its RUNPATH)
lmp = os.path.join(prefix, "bin", "lmp-aisci")
work = os.path.join(tmp, "run")
os.makedirs(work)
with open(os.path.join(work, "in.lj"), "w") as f:
    f.write("units lj\nlattice fcc 0.8442\nregion b block 0 3 0 3 0 3\ncreate_box 1 b\n"
            "create_atoms 1 box\nmass 1 1.0\npair_style lj/cut 2.5\npair_coeff 1 1 1.0 1.0\n"
            "velocity all create 1.0 1\nfix 1 all nve\nrun 10\n")
rc, out = run([lmp, "-in", "in.lj", "-log", "none"], cwd=work, env=env)
check(rc == 0 and "Loop time" in out, "installed lmp-aisci: rc %d\n%s" % (rc, out[-1500:]))
rc, out = run(["ldd", lmp], env=env)
check(resolved(out, "libaisci_core.so.0") ==
      os.path.realpath(os.path.join(libdir, "libaisci_core.so.0")),
      "installed lmp-aisci does not use the installed libaisci_core:\n" + out)

shutil.rmtree(tmp, ignore_errors=True)
T.summary("test_install_package")
