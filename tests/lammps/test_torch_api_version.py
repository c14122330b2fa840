"""The torch wrapper's API version is checked when lmp-aisci loads it: a libaisci_torch of
another release (AISCI_TORCH_LIBRARY) is refused with an error that names both versions,
one without a version names what it lacks, and the wrapper of this build loads. The
foreign wrappers are small C libraries made here, each exporting what an old or future
release would. Exits 77 (skipped) when the torch wrapper is not built."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aisci_nn_toy as toy  # noqa: E402

toy.skip_without_torch_wrapper()
import aisci_testlib as T  # noqa: E402

d = toy.build_dir("torch_api_version")
SRC = T.SOURCE_DIR
header = open(os.path.join(SRC, "src/USER-AISCI/torch/include/aisci/model.h")).read()
ours = header.split('#define AISCI_TORCH_API_VERSION "')[1].split('"')[0]
major, minor = (int(v) for v in ours.split(".")[:2])

FAKE = r"""
const char *aisci_torch_api_version(int *major, int *minor, int *patch)
{
  if (major) *major = %d;
  if (minor) *minor = %d;
  if (patch) *patch = 0;
  return "%d.%d.0";
}
"""


def fake(name, body):
    c = os.path.join(d, name + ".c")
    so = os.path.join(d, "lib" + name + ".so")
    with open(c, "w") as f:
        f.write(body)
    p = subprocess.run(["cc", "-shared", "-fPIC", "-o", so, c], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    if p.returncode != 0:
        print("could not compile %s:\n%s" % (c, p.stdout.decode(errors="replace")))
        sys.exit(1)
    return so


# an incompatible next release: 0.x -> 0.(x+1) while the major is 0, else (major+1).0
nxt = (major, minor + 1) if major == 0 else (major + 1, 0)
libs = {
    "future": (fake("future", FAKE % (nxt[0], nxt[1], nxt[0], nxt[1])), "%d.%d.0" % nxt),
    "old": (fake("old", "int aisci_model_create(void) { return 0; }\n"), None),
}

files = toy.small_frame_files(d)
SCRIPT = toy.SMALL_FRAME_SCRIPT % os.path.join(SRC, "potentials/models/water_dpa3.pt")


def error_line(r):
    return next((l.split(" (src/")[0] for l in r.output.splitlines() if l.startswith("ERROR")), "")


needs = "%d.%d.x" % (major, minor) if major == 0 else "%d.x with x >= %d" % (major, minor)
for kind, (so, version) in libs.items():
    env = dict(os.environ, AISCI_TORCH_LIBRARY=so)
    r = T.run_lammps(SCRIPT, files=files, timeout=120, env=env)
    line = error_line(r)
    if version:
        expected = ("ERROR: pair_style aisci: library %s is torch wrapper API version %s, but "
                    "this USER-AISCI was built against torch wrapper API %s and needs %s"
                    % (so, version, ours, needs))
    else:
        expected = ("ERROR: pair_style aisci: library %s is not a compatible torch wrapper: it "
                    "has no API version (symbol aisci_torch_api_version not found" % so)
    T.check(r.rc != 0 and line.startswith(expected),
            "%s wrapper: rc %d\n  expected %r...\n  got      %r" % (kind, r.rc, expected, line))
    T.check("unset AISCI_TORCH_LIBRARY" in line, "%s wrapper: no remedy in %r" % (kind, line))

# the wrapper of this build passes the check and the model runs
r = T.run_lammps(SCRIPT, files=files, timeout=300)
T.check(r.rc == 0 and "Loop time" in r.output,
        "this build's wrapper: rc %d, %s" % (r.rc, error_line(r) or r.output[-800:]))
T.summary("test_torch_api_version")
