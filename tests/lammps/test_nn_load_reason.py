"""pair_style aisci: a model file that libtorch refuses for a reason other than a damaged
archive keeps libtorch's reason in the error. The test makes a TorchScript model that
calls an operator (aisci_test::scale) registered only in the Python process that saved
it, as a DeePMD-kit model calls its own operators: loading it in lmp-aisci must name the
operator, not call the file "truncated or corrupt". A truncated copy of the same file is
still called a damaged archive, with libtorch's reason after it. Exits 77 (skipped) when
the torch wrapper is not built."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aisci_nn_toy as toy  # noqa: E402

toy.skip_without_torch_wrapper()
import aisci_testlib as T  # noqa: E402

d = toy.build_dir("load_reason")
model = os.path.join(d, "unknown_op.pt")
# TorchScript needs the module's source in a file
with open(os.path.join(d, "unknown_op_model.py"), "w") as f:
    f.write('''import torch
lib = torch.library.Library("aisci_test", "DEF")
lib.define("scale(Tensor x) -> Tensor")
lib.impl("scale", lambda x: 2.0 * x, "CPU")


class UnknownOp(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.aisci_test.scale(x)
''')
p = subprocess.run(["/usr/bin/python3", "-c",
                    "import sys, torch; sys.path.insert(0, %r); import unknown_op_model as u; "
                    "torch.jit.save(torch.jit.script(u.UnknownOp()), %r)" % (d, model)],
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
if not T.check(p.returncode == 0 and os.path.exists(model),
               "could not make the test model:\n" + p.stdout.decode(errors="replace")[-1500:]):
    T.summary("test_nn_load_reason")

files = toy.small_frame_files(d)
SCRIPT = toy.SMALL_FRAME_SCRIPT
expected = ("ERROR: pair_style aisci: cannot load model file '%s': invalid file or model "
            "format: model file '%s' needs the TorchScript operator aisci_test::scale, which "
            "libaisci_torch does not provide (libtorch: unknown builtin op aisci_test::scale)"
            % (model, model))
r = T.run_lammps(SCRIPT % model, files=files, timeout=120)
line = next((l.split(" (src/")[0] for l in r.output.splitlines() if l.startswith("ERROR")), None)
T.check(r.rc != 0 and line == expected,
        "unknown operator: rc %d\n  expected %r\n  got      %r" % (r.rc, expected, line))

# a truncated archive is still called one, with libtorch's reason after it
cut = os.path.join(d, "cut.pt")
with open(model, "rb") as f:
    blob = f.read()
with open(cut, "wb") as f:
    f.write(blob[: len(blob) // 2])
r = T.run_lammps(SCRIPT % cut, files=files, timeout=120)
line = next((l.split(" (src/")[0] for l in r.output.splitlines() if l.startswith("ERROR")), "")
prefix = ("ERROR: pair_style aisci: cannot load model file '%s': invalid file or model format: "
          "model file '%s' is not a readable TorchScript archive (truncated or corrupt?): "
          "PytorchStreamReader failed" % (cut, cut))
T.check(r.rc != 0 and line.startswith(prefix),
        "truncated file: rc %d\n  expected %r...\n  got      %r" % (r.rc, prefix, line))
T.summary("test_nn_load_reason")
