"""pair_style aisci: every bad input gives a LAMMPS error naming the keyword or file
(missing, corrupt, incomplete or tampered model files, unknown element, bad keywords,
wrong pair_coeff, unsupported units, a library that is not the torch wrapper; metadata
that contradicts the weights or repeats a key, an absurd cutoff, an element the network
has no type for, energies without a gradient, an AISCI_TORCH_LIBRARY that cannot be
loaded) and the DPLR short-range model alone its warning. Every run has a timeout.
Issue 33's silent cases, in one run of several `run 0`: the warning that neigh_modify
exclude is ignored (type and group exclusions; none for a type pair with a NULL type; once
per pair_style command; pair_style deepmd names itself) and the warning that a DeePMD-kit
model's sel is exceeded (toy frozen models with one sel per type and one sel in all,
checked against neighbour counts computed here); and PIMD partitions whose model files
differ in content."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aisci_nn_toy as toy  # noqa: E402

toy.skip_without_torch_wrapper()
import aisci_testlib as T  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

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
    ("too many threads", script(style="pair_style aisci threads 5000"),
     ["threads must be <= 4096, got 5000"], None),
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
    ("not the torch wrapper", script(), ["not a compatible torch wrapper", "has no API version",
                                       "aisci_torch_api_version"],
     {"AISCI_TORCH_LIBRARY": "libm.so.6"}),
]
if not os.path.exists("/dev/nvidia0"):
    cases.append(("cuda without a GPU", script(style="pair_style aisci device cuda:0"),
                  ["cuda:0", "no CUDA"], None))

# Broken or odd model files and loader settings, each checked against its exact message
# (the first ERROR line, without LAMMPS's source location).
dtype_mix = toy.save(model, os.path.join(d, "dtype_mix.pt"), dtype="float32",
                     weights_dtype="float64")
dup_key = toy.save(model, os.path.join(d, "dup_key.pt"), extra_lines="cutoff = 2.5\n")
huge_cut = toy.save(model, os.path.join(d, "huge_cut.pt"), override={"cutoff": "1e30"})
three_names = toy.save(model, os.path.join(d, "three_names.pt"), type_names=("O", "H", "C"))
no_grad = toy.save(toy.ToyMP(ntypes=2, cutoff=3.0, num_layers=1, detach_edges=True),
                   os.path.join(d, "no_grad.pt"))
LOAD = "ERROR: pair_style aisci: cannot load model file '%s': invalid file or model format: "
exact = [
    ("metadata float32, weights float64", script(coeff="pair_coeff * * %s O H" % dtype_mix),
     LOAD % dtype_mix + "model file '%s': metadata key 'dtype' says float32 but the weights "
     "are float64 (tensor 'embed'); export the model with the dtype of its weights" % dtype_mix,
     None),
    ("metadata key twice", script(coeff="pair_coeff * * %s O H" % dup_key),
     LOAD % dup_key + "model file '%s': metadata key 'cutoff' appears twice (lines 3 and 12)"
     % dup_key, None),
    ("cutoff 1e30", script(coeff="pair_coeff * * %s O H" % huge_cut),
     LOAD % huge_cut + "model file '%s': metadata key 'cutoff' must be a number in (0, 100] "
     "(Angstrom), got '1e30'" % huge_cut, None),
    ("element without an embedding row", script(coeff="pair_coeff * * %s O C" % three_names),
     "ERROR: pair_coeff aisci: atom type 2: model evaluation error: element 'C' (type index 2 "
     "of the 3 type_names) cannot be evaluated (does the network know fewer types than "
     "type_names lists?): forward() of model '%s' failed: RuntimeError: index 2 is out of "
     "bounds for dimension 0 with size 2" % three_names, None),
    ("energy without gradient", script(coeff="pair_coeff * * %s O H" % no_grad),
     "ERROR on proc 0: pair_style aisci: model evaluation error: aisci_model_compute: the "
     "per-atom energies of model '%s' do not depend on the edge vectors (no autograd path: "
     "exported under torch.no_grad() or with detach()?); its forces would all be zero"
     % no_grad, None),
    ("DW (vector) model as the pair model",
     script(coeff="pair_coeff * * %s O H" % os.path.join(T.SOURCE_DIR, "potentials", "models",
                                                          "water_dw.pt")),
     "ERROR: pair_style aisci: model file '%s' returns per-atom vectors (metadata output = "
     "vector: a DW model, for fix dplr); pair_style aisci needs an energy model"
     % os.path.join(T.SOURCE_DIR, "potentials", "models", "water_dw.pt"), None),
    ("AISCI_TORCH_LIBRARY missing", script(),
     "ERROR: pair_style aisci: environment variable AISCI_TORCH_LIBRARY = '%s/none.so' cannot "
     "be loaded: %s/none.so: cannot open shared object file: No such file or directory (unset "
     "it to use the torch wrapper of this build)" % (d, d),
     {"AISCI_TORCH_LIBRARY": d + "/none.so"}),
    ("AISCI_TORCH_LIBRARY not a library", script(),
     "ERROR: pair_style aisci: environment variable AISCI_TORCH_LIBRARY = '%s' cannot be "
     "loaded: %s: invalid ELF header (unset it to use the torch wrapper of this build)"
     % (good, good), {"AISCI_TORCH_LIBRARY": good}),
]


def error_line(output):
    """First ERROR line of a run, without LAMMPS's ' (src/...)' location."""
    for line in output.splitlines():
        if line.startswith("ERROR"):
            return line.split(" (src/")[0]
    return None


for what, text, expected, env in exact:
    r = T.run_lammps(text, files={"frame.data": frame}, env=env, timeout=120)
    line = error_line(r.output)
    T.check(r.rc != 0 and line == expected,
            "%s: rc %d\n  expected %r\n  got      %r" % (what, r.rc, expected, line))

# a DPLR short-range model alone: legitimate (e.g. to look at the short-range part),
# so it runs, with the documented warning
sr_only = toy.save(model, os.path.join(d, "sr_only.pt"), override={"dplr_beta": "0.4"})
r = T.run_lammps(script(coeff="pair_coeff * * %s O H" % sr_only), files={"frame.data": frame},
                 timeout=120)
T.check(r.rc == 0 and "WARNING: pair_style aisci: model file '%s' is the short-range part of a "
        "DPLR model (metadata dplr_beta = 0.4); without kspace_style pppm/dplr and fix dplr its "
        "long-range electrostatics are missing" % sr_only in r.output,
        "DPLR short-range model alone: rc %d, output:\n%s" % (r.rc, r.output[-1200:]))

for what, text, words, env in cases:
    r = T.run_lammps(text, files={"frame.data": frame}, env=env, timeout=120)
    found = [w for w in words if w not in r.output]
    T.check(r.rc != 0 and "ERROR" in r.output and not found,
            "%s: rc %d, missing %s in output:\n%s" % (what, r.rc, found, r.output[-1200:]))

# ---- issue 33: cases that ran without a word before ----------------------------------------


sel_type = os.path.join(d, "sel_type.pth")
sel_mixed = os.path.join(d, "sel_mixed.pth")
torch.jit.save(torch.jit.script(toy.ToyDeepmdFrozen([2, 3])), sel_type)
torch.jit.save(torch.jit.script(toy.ToyDeepmdFrozen([4])), sel_mixed)
# 8 atoms (types 1 2 1 2 ...) and a third, NULL-mapped type without atoms
toy.write_data(os.path.join(d, "frame3.data"), x, 7.0, types + 1, 3)
frame3 = open(os.path.join(d, "frame3.data")).read()


def neighbour_counts(rc=6.0, box=7.0):
    """Per atom: neighbours within rc of each model type (periodic images included)."""
    out = []
    shifts = np.array([[a, b, c] for a in range(-1, 2) for b in range(-1, 2) for c in range(-1, 2)])
    for i in range(len(x)):
        c = [0, 0]
        for j in range(len(x)):
            for s_ in shifts:
                if j == i and not s_.any():
                    continue
                if np.linalg.norm(x[j] + box * s_ - x[i]) < rc:
                    c[types[j]] += 1
        out.append(c)
    return out


counts = neighbour_counts()
EXCLUDE = ("WARNING: %s: neigh_modify exclude is ignored (%s): %s builds its own graph of every "
           "atom of a mapped type within the cutoff, so excluded pairs still interact through "
           "the model; remove the exclusion (or map one type of each excluded pair to NULL in "
           "pair_coeff)")
text = """units metal
atom_style atomic
boundary p p p
read_data frame3.data
group g1 type 1
group g2 type 2
pair_style aisci threads 1
pair_coeff * * %s O H NULL
neigh_modify exclude type 1 3
print "CASE null-type exclusion"
run 0
neigh_modify exclude type 1 2
print "CASE type exclusion"
run 0
print "CASE again"
run 0
pair_style aisci threads 1
pair_coeff * * %s O H NULL
neigh_modify exclude none
neigh_modify exclude group g1 g2
print "CASE group exclusion"
run 0
pair_style deepmd %s
pair_coeff * *
neigh_modify exclude none
print "CASE sel per type"
run 0
print "CASE sel per type, next run"
run 0
pair_style deepmd %s
pair_coeff * *
neigh_modify exclude type 2 2
print "CASE sel in all"
run 0
""" % (good, good, sel_type, sel_mixed)
r = T.run_lammps(text, files={"frame3.data": frame3}, timeout=120)
part = {}
for chunk in r.output.split("\nCASE ")[1:]:
    name, _, body = chunk.partition("\n")
    part[name] = [l.split(" (src/")[0] for l in body.splitlines()
                  if l.startswith("WARNING: pair_style")]
T.check(r.rc == 0 and len(part) == 7, "exclusion/sel run: rc %d\n%s" % (r.rc, r.output[-1500:]))
T.check(part.get("null-type exclusion") == [], "type 1 3 with type 3 NULL: no warning, got %s"
        % part.get("null-type exclusion"))
AISCI = "pair_style aisci"
T.check(part.get("type exclusion") == [EXCLUDE % (AISCI, "type 1 2", AISCI)],
        "type exclusion warning: %s" % part.get("type exclusion"))
T.check(part.get("again") == [], "the exclusion warning comes once: %s" % part.get("again"))
T.check(part.get("group exclusion") == [EXCLUDE % (AISCI, "group g1 g2", AISCI)],
        "group exclusion warning: %s" % part.get("group exclusion"))


def sel_warning(lines, sel, per_type, style="pair_style deepmd", model=None):
    """The sel warning among lines: count, limit and type against the largest excess."""
    excess = [(c[t] - sel[t], t) for c in counts for t in range(2)] if per_type else \
        [(sum(c) - sel[0], 0) for c in counts]
    top, _ = max(excess)
    pattern = (re.escape(style + ": atom ID ") + r"(\d+) has (\d+) neighbours" +
               (r" of type (\w+)" if per_type else "()") + re.escape(
                   " within the cutoff (6 A) of DeePMD-kit model '%s', more than its sel "
                   % model) +
               r"(\d+) \(the largest excess, step 0\): the model keeps the nearest \d+ and drops "
               r"the others, as DeePMD-kit does; its energy and forces then depend on that cut "
               r"\(a model with a larger sel avoids it; warned once per run\)")
    found = [re.search(pattern, l) for l in lines]
    found = [m for m in found if m]
    if len(found) != 1:
        return False
    atom, count, tname, limit = found[0].groups()
    c = counts[int(atom) - 1]
    t = ["O", "H"].index(tname) if per_type else 0
    n = c[t] if per_type else sum(c)
    return int(count) == n and int(limit) == sel[t] and n - sel[t] == top


T.check(sel_warning(part.get("sel per type", []), [2, 3], True, model=sel_type),
        "sel warning (per type): %s (counts %s)" % (part.get("sel per type"), counts))
T.check(sel_warning(part.get("sel per type, next run", []), [2, 3], True, model=sel_type),
        "sel warning once per run: %s" % part.get("sel per type, next run"))
last = part.get("sel in all", [])
T.check(sel_warning(last, [4], False, model=sel_mixed)
        and EXCLUDE % ("pair_style deepmd", "type 2 2", "pair_style deepmd") in last,
        "sel warning (one sel) and the exclusion warning of pair_style deepmd: %s" % last)

# partitions with other model files (the same path arguments otherwise): compared by the
# files' contents
other = toy.save(toy.ToyMP(ntypes=2, cutoff=3.0, num_layers=1, seed=2), os.path.join(d, "other.pt"))


def fnv53(path):
    h = 0xcbf29ce484222325
    for b in open(path, "rb").read():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h & ((1 << 53) - 1)


lo, hi = sorted((fnv53(good), fnv53(other)))
r = T.run_lammps("""variable m world %s %s
units metal
atom_style atomic
atom_modify map yes
read_data frame.data
pair_style aisci threads 1
pair_coeff * * ${m} O H
fix pimd all pimd/langevin temp 300 thermostat PILE_L 1 tau 0.1
run 2
""" % (good, other), nprocs=2, partitions="2x1", files={"frame.data": frame}, timeout=120)
expect = ("fix pimd/langevin: partitions (beads) differ in pair_style aisci model file content "
          "(FNV-1a of its bytes) (compared by a hash: %014x in one partition, %014x in another)"
          % (lo, hi))
T.check(r.rc != 0 and expect in r.output and "TIMEOUT" not in r.output,
        "partitions with other model files: expected\n  %s\n(rc %d):\n%s"
        % (expect, r.rc, r.output[-1200:]))

# the good model still runs
r = T.run_lammps(script(), files={"frame.data": frame})
T.check(r.rc == 0, "good model runs: " + r.output[-800:])
# a run without pair aisci never opens the torch wrapper (a broken one goes unnoticed)
r = T.run_lammps(script(style="pair_style lj/cut 3.0", coeff="pair_coeff * * 0.01 2.0"),
                 files={"frame.data": frame}, env={"AISCI_TORCH_LIBRARY": "libm.so.6"})
T.check(r.rc == 0, "pair lj/cut runs without loading the torch wrapper: " + r.output[-800:])
T.summary("test_nn_errors")
