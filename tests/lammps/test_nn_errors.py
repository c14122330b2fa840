"""pair_style aisci: every bad input gives a LAMMPS error naming the keyword or file
(missing, corrupt, incomplete or tampered model files, unknown element, bad keywords,
wrong pair_coeff, unsupported units, a library that is not the torch wrapper)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aisci_nn_toy as toy  # noqa: E402

toy.skip_without_torch_wrapper()
import aisci_testlib as T  # noqa: E402

d = toy.build_dir("errors")
model = toy.ToyMP(ntypes=2, cutoff=3.0, num_layers=1)
good = toy.save(model, os.path.join(d, "good.pt"))
raw = open(good, "rb").read()
corrupt = os.path.join(d, "corrupt.pt")
open(corrupt, "wb").write(raw[: len(raw) // 3])
nokey = toy.save(model, os.path.join(d, "nokey.pt"), drop=("num_layers",))
badsum = toy.save(model, os.path.join(d, "badsum.pt"), override={"checksum": "00000000deadbeef"})
x, types = toy.random_frame(8, 7.0, seed=1)
toy.write_data(os.path.join(d, "frame.data"), x, 7.0, types + 1, 2)
frame = open(os.path.join(d, "frame.data")).read()


def script(style="pair_style aisci", coeff="pair_coeff * * %s O H" % good, units="metal"):
    return """units %s
atom_style atomic
read_data frame.data
%s
%s
run 0
""" % (units, style, coeff)


cases = [
    ("missing model file", script(coeff="pair_coeff * * %s/none.pt O H" % d),
     ["none.pt", "not found"], None),
    ("corrupt model file", script(coeff="pair_coeff * * %s O H" % corrupt),
     ["corrupt.pt", "not a readable TorchScript archive"], None),
    ("missing metadata key", script(coeff="pair_coeff * * %s O H" % nokey),
     ["nokey.pt", "metadata key 'num_layers' is missing"], None),
    ("checksum mismatch", script(coeff="pair_coeff * * %s O H" % badsum),
     ["badsum.pt", "checksum mismatch"], None),
    ("unknown element", script(coeff="pair_coeff * * %s O Xx" % good),
     ["atom type 2", "element 'Xx' is not in model file", "O H"], None),
    ("too few elements", script(coeff="pair_coeff * * %s O" % good),
     ["pair_coeff aisci", "2 element names"], None),
    ("not * *", script(coeff="pair_coeff 1 * %s O H" % good),
     ["Incorrect args for pair coefficients"], None),
    ("all NULL", script(coeff="pair_coeff * * %s NULL NULL" % good),
     ["every atom type is NULL"], None),
    ("unknown keyword", script(style="pair_style aisci speed 3"),
     ["unknown keyword 'speed'"], None),
    ("missing value", script(style="pair_style aisci threads"),
     ["keyword threads needs 1 value"], None),
    ("bad threads", script(style="pair_style aisci threads many"),
     ["threads expects an integer", "many"], None),
    ("negative threads", script(style="pair_style aisci threads -1"),
     ["threads must be >= 0"], None),
    ("bad device", script(style="pair_style aisci device gpu0"),
     ["unknown device value 'gpu0'", "cpu, cuda, cuda:N"], None),
    ("bad precision", script(style="pair_style aisci precision half"),
     ["unknown precision value 'half'", "auto, float32, float64"], None),
    ("bad graph", script(style="pair_style aisci graph tree"),
     ["unknown graph value 'tree'", "auto, ghost"], None),
    ("comm mode multi",
     script(style="neighbor 1.0 multi\ncomm_modify mode multi\npair_style aisci graph ghost"),
     ["needs comm_modify mode single"], None),
    ("units lj", script(units="lj"), ["requires units metal or real", "units lj"], None),
    ("not the torch wrapper", script(), ["not a compatible torch wrapper", "aisci_model_create"],
     {"AISCI_TORCH_LIBRARY": "libm.so.6"}),
]
if not os.path.exists("/dev/nvidia0"):
    cases.append(("cuda without a GPU", script(style="pair_style aisci device cuda:0"),
                  ["cuda:0", "no CUDA"], None))

for what, text, words, env in cases:
    r = T.run_lammps(text, files={"frame.data": frame}, env=env)
    found = [w for w in words if w not in r.output]
    T.check(r.rc != 0 and "ERROR" in r.output and not found,
            "%s: rc %d, missing %s in output:\n%s" % (what, r.rc, found, r.output[-1200:]))

# the good model still runs
r = T.run_lammps(script(), files={"frame.data": frame})
T.check(r.rc == 0, "good model runs: " + r.output[-800:])
# a run without pair aisci never opens the torch wrapper (a broken one goes unnoticed)
r = T.run_lammps(script(style="pair_style lj/cut 3.0", coeff="pair_coeff * * 0.01 2.0"),
                 files={"frame.data": frame}, env={"AISCI_TORCH_LIBRARY": "libm.so.6"})
T.check(r.rc == 0, "pair lj/cut runs without loading the torch wrapper: " + r.output[-800:])
T.summary("test_nn_errors")
