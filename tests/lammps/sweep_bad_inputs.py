"""Sweep of bad (and a few legitimate but unusual) inputs over pair_style aisci,
compute aisci/cost and aisci/work, fix dplr, kspace_style pppm/dplr and pppm/aisci
(issue 13: bad input never crashes, hangs or passes silently).

Not a ctest (109 LAMMPS runs, 5-8 minutes on 2 cores); run it by hand
from the build folder after a build:

    AISCI_LMP=bin/lmp-aisci AISCI_BUILD_DIR=$PWD AISCI_SOURCE_DIR=.. \\
        /usr/bin/python3 ../tests/lammps/sweep_bad_inputs.py [-v] [name-filter]

Each input runs with a timeout and is classified:
  clean      an expected error whose first ERROR line contains every expected word
  unclear    an expected error whose message lacks one of the expected words
  silent     an expected error that did not happen (the run succeeded)
  crash      no ERROR line and a non-zero exit (signal, abort, uncaught exception)
  hang       the timeout expired
  ok         a legitimate input that ran (and printed its expected warning, if any)
  rejected   a legitimate input that failed
Prints one line per input and the counts; exits 1 if anything is not clean or ok."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aisci_nn_toy as toy  # noqa: E402
import aisci_testlib as T  # noqa: E402
import dplr_systems as S  # noqa: E402

toy.skip_without_torch_wrapper()
VERBOSE = "-v" in sys.argv
FILTER = [a for a in sys.argv[1:] if a != "-v"]
TIMEOUT = 120

d = toy.build_dir("sweep")
P = lambda name: os.path.join(d, name)  # noqa: E731
m1 = toy.ToyMP(ntypes=2, cutoff=3.0, num_layers=1)
m2 = toy.ToyMP(ntypes=2, cutoff=3.0, num_layers=2)
m3 = toy.ToyMP(ntypes=2, cutoff=3.0, num_layers=2, cutoff_3body=2.5)
GOOD = toy.save(m1, P("good.pt"))
GOOD2 = toy.save(m2, P("good2.pt"))
GOOD3 = toy.save(m3, P("good3.pt"))
raw = open(GOOD, "rb").read()
open(P("corrupt.pt"), "wb").write(raw[: len(raw) // 3])
open(P("empty.pt"), "wb").close()
os.makedirs(P("dir.pt"), exist_ok=True)
open(P("text.pt"), "w").write("units metal\n")
import numpy as np  # noqa: E402
import torch  # noqa: E402
torch.jit.save(torch.jit.script(m1), P("nometa.pt"))
BAD_MODELS = {
    "nokey": dict(drop=("num_layers",)),
    "badsum": dict(override={"checksum": "00000000deadbeef"}),
    "dtype_mix": dict(dtype="float32", weights_dtype="float64"),
    "dtype_mix2": dict(dtype="float64", weights_dtype="float32"),
    "dup_key": dict(extra_lines="cutoff = 2.5\n"),
    "cut_huge": dict(override={"cutoff": "1e30"}),
    "cut_neg": dict(override={"cutoff": "-1"}),
    "cut_text": dict(override={"cutoff": "far"}),
    "cut3_big": dict(override={"cutoff_3body": "4.0"}),
    "version2": dict(override={"format_version": "2"}),
    "units_real": dict(override={"units": "real"}),
    "bad_line": dict(extra_lines="just words\n"),
    "three_names": dict(type_names=("O", "H", "C")),
    "sr_beta": dict(override={"dplr_beta": "0.4"}),
}
for name, kw in BAD_MODELS.items():
    toy.save(m1, P(name + ".pt"), **kw)
toy.save(toy.ToyMP(ntypes=2, cutoff=3.0, num_layers=1, detach_edges=True), P("no_grad.pt"))

x, types = toy.random_frame(16, 8.0, seed=1)
toy.write_data(P("frame.data"), x, 8.0, types + 1, 2)
toy.write_data(P("frame3.data"), x, 8.0, types + 1, 3)
xs, ts = toy.random_frame(6, 40.0, rmin=6.0, seed=2)   # no two atoms within the cutoff
toy.write_data(P("sparse.data"), xs, 40.0, ts + 1, 2)
toy.write_data(P("empty.data"), np.zeros((0, 3)), 8.0, [], 2)
xt, tt = toy.random_frame(2, 2.5, rmin=1.0, seed=4)   # box 2.5 A, cutoff 3 A
toy.write_data(P("small.data"), xt, 2.5, tt + 1, 2)
toy.write_data(P("tri.data"), x, 8.0, types + 1, 2, tilt=(1.0, -0.5, 0.8))
FILES = {n: open(P(n)).read() for n in ("frame.data", "frame3.data", "sparse.data",
                                        "empty.data", "small.data", "tri.data")}
WATER = S.water_data(S.make_dplr_water_box(8, seed=2))
CHARGES = S.charges_data(40, np.diag([12.0, 12.0, 12.0]))[0]
FILES.update({"water.data": WATER, "charges.data": CHARGES})
zl = CHARGES.splitlines()
first = zl.index("Atoms # charge") + 2
for k in range(first, len(zl)):
    w = zl[k].split()
    zl[k] = " ".join(w[:2] + ["0.0"] + w[3:])
FILES["zero.data"] = "\n".join(zl) + "\n"


def pair(coeff="%s O H" % GOOD, style="pair_style aisci", units="metal", data="frame.data",
         pre="", post="", run="run 0"):
    return ("units %s\natom_style atomic\n%s\nread_data %s\n%s\npair_coeff * * %s\n%s\n%s\n"
            % (units, pre, data, style, coeff, post, run))


def kspace(ks="pppm/aisci 1e-4", modify="", data="charges.data", pair_style="coul/long 5.0",
           units="metal", style="charge", pre=""):
    return ("units %s\natom_style %s\nboundary p p p\n%s\nread_data %s\npair_style %s\n"
            "pair_coeff * *\nkspace_style %s\n%s\nrun 0\n"
            % (units, style, pre, data, pair_style, ks, modify))


SRM = os.path.join(S.MODELS, "water_dplr_sr.pt")
FIX = "fix dplr all dplr model %s type_associate 1 3 bond_type 2\n" % S.DW
KS = "kspace_style pppm/dplr 1e-4 overlap yes\nkspace_modify gewald %g \n" % S.BETA


def dplr(edit=lambda s: s, units="metal", pre=""):
    s = S.water_script(sr=SRM, accuracy="1e-4", units=units, pre=pre)
    s = s.replace("fix dplr all dplr model %s type_associate 1 3 bond_type 2 \n" % S.DW, FIX)
    return edit(s)


def no_fix(s):
    return s.replace(FIX, "").replace("fix_modify dplr virial yes energy yes\n", "").replace(
        " f_dplr", "")


OK = None
# (name, script, nprocs, env, expected): expected = None (runs), "warn:TEXT" (runs and warns),
# or a list of words the first ERROR line must contain
CASES = [
    # --- pair_style aisci: legitimate inputs --------------------------------------------
    ("pair ok metal", pair(), 1, None, OK),
    ("pair ok real", pair(units="real"), 1, None, OK),
    ("pair ok newton off 2 ranks", pair(pre="newton off"), 2, None, OK),
    ("pair ok 4 ranks 2 layers", pair("%s O H" % GOOD2), 4, None, OK),
    ("pair ok 2 ranks triplets", pair("%s O H" % GOOD3), 2, None, OK),
    ("pair ok hybrid/overlay NULL", pair("aisci %s O H NULL" % GOOD, data="frame3.data",
                                         style="pair_style hybrid/overlay aisci zero 3.0",
                                         post="pair_coeff * * zero"), 1, None, OK),
    ("pair ok hybrid/overlay 2 ranks", pair("aisci %s O NULL H" % GOOD, data="frame3.data",
                                            style="pair_style hybrid/overlay aisci zero 3.0",
                                            post="pair_coeff * * zero"), 2, None, OK),
    ("pair ok no edges", pair(data="sparse.data"), 1, None, OK),
    ("pair ok no edges 2 ranks", pair(data="sparse.data"), 2, None, OK),
    ("pair ok precision float32", pair(style="pair_style aisci precision float32"), 1, None, OK),
    ("pair ok balance ring 2 ranks", pair(style="pair_style aisci balance ring 0.05",
                                          run="run 3"), 2, None, OK),
    ("pair ok AISCI_TORCH_LIBRARY empty", pair(), 1, {"AISCI_TORCH_LIBRARY": ""}, OK),
    ("pair ok DPLR short-range alone", pair("%s O H" % P("sr_beta.pt")), 1, None,
     "warn:is the short-range part of a DPLR model"),
    ("pair ok md 10 steps", pair(post="velocity all create 300 1\nfix 1 all nve",
                                 run="run 10"), 2, None, OK),
    ("pair ok no atoms", pair(data="empty.data"), 1, None, OK),
    ("pair ok no atoms 2 ranks", pair(data="empty.data"), 2, None, OK),
    ("pair ok box below cutoff", pair(data="small.data"), 1, None, OK),
    ("pair ok box below cutoff 2 ranks", pair(data="small.data"), 2, None, OK),
    ("pair ok triclinic 2 ranks", pair(data="tri.data"), 2, None, OK),
    ("pair ok NULL type alone", pair("%s O H NULL" % GOOD, data="frame3.data"), 1, None, OK),
    ("pair ok pair_coeff twice", pair(post="pair_coeff * * %s H O" % GOOD2), 2, None, OK),
    ("pair ok minimize", pair(run="minimize 1e-6 1e-6 5 50"), 1, None, OK),
    ("pair ok restart", pair(post="run 0\nwrite_restart r.restart\nclear\n"
                             "read_restart r.restart\npair_style aisci\n"
                             "pair_coeff * * %s O H" % GOOD), 1, None, OK),
    ("pair cuda without GPU", pair(style="pair_style aisci device cuda:0"), 1, None,
     ["cuda:0", "CUDA"]),
    # --- pair_style aisci: bad keywords and values ----------------------------------------
    ("pair units lj", pair(units="lj"), 1, None, ["units metal or real", "lj"]),
    ("pair threads 0.5", pair(style="pair_style aisci threads 0.5"), 1, None,
     ["threads", "0.5"]),
    ("pair threads huge", pair(style="pair_style aisci threads 100000"), 1, None,
     ["threads", "100000"]),
    ("pair device tpu", pair(style="pair_style aisci device tpu"), 1, None, ["device", "tpu"]),
    ("pair ghost sideways", pair(style="pair_style aisci ghost sideways"), 1, None,
     ["ghost", "sideways"]),
    ("pair ghost exchange, model without", pair(style="pair_style aisci ghost exchange"), 2,
     None, ["ghost_exchange"]),
    ("pair balance ring no tol", pair(style="pair_style aisci balance ring"), 1, None,
     ["balance ring", "tolerance"]),
    ("pair balance ring -1", pair(style="pair_style aisci balance ring -1"), 1, None,
     ["tolerance", "-1"]),
    ("pair balance ring 2 layers", pair("%s O H" % GOOD2,
                                        style="pair_style aisci balance ring 0.05"), 2, None,
     ["num_layers", "good2.pt"]),
    ("pair coeff unknown element", pair("%s O Xx" % GOOD), 1, None, ["Xx", "O H"]),
    ("pair coeff too many", pair("%s O H H" % GOOD), 1, None, ["2 element names"]),
    ("pair coeff all NULL", pair("%s NULL NULL" % GOOD), 1, None, ["NULL"]),
    ("pair no pair_coeff", "units metal\natom_style atomic\nread_data frame.data\n"
     "pair_style aisci\nrun 0\n", 1, None, ["pair coeffs are not set"]),
    ("pair hybrid all NULL", pair("aisci %s NULL NULL NULL" % GOOD, data="frame3.data",
                                  style="pair_style hybrid/overlay aisci zero 3.0",
                                  post="pair_coeff * * zero"), 1, None, ["every atom type is NULL"]),
    ("pair AISCI_TORCH_LIBRARY missing", pair(), 1, {"AISCI_TORCH_LIBRARY": P("none.so")},
     ["AISCI_TORCH_LIBRARY", "none.so", "No such file"]),
    ("pair AISCI_TORCH_LIBRARY text", pair(), 1, {"AISCI_TORCH_LIBRARY": P("frame.data")},
     ["AISCI_TORCH_LIBRARY", "frame.data", "ELF"]),
    ("pair AISCI_TORCH_LIBRARY libm", pair(), 1, {"AISCI_TORCH_LIBRARY": "libm.so.6"},
     ["libm.so.6", "aisci_model_create"]),
    # --- pair_style aisci: model files ----------------------------------------------------
    ("model missing", pair("%s O H" % P("none.pt")), 1, None, ["none.pt", "not found"]),
    ("model empty", pair("%s O H" % P("empty.pt")), 1, None, ["empty.pt"]),
    ("model directory", pair("%s O H" % P("dir.pt")), 1, None, ["dir.pt", "not a file"]),
    ("model corrupt", pair("%s O H" % P("corrupt.pt")), 1, None, ["corrupt.pt", "truncated"]),
    ("model text file", pair("%s O H" % P("text.pt")), 1, None, ["text.pt"]),
    ("model no metadata", pair("%s O H" % P("nometa.pt")), 1, None,
     ["nometa.pt", "aisci_metadata"]),
    ("model no metadata 2 ranks", pair("%s O H" % P("nometa.pt")), 2, None,
     ["nometa.pt", "aisci_metadata"]),
    ("model missing key", pair("%s O H" % P("nokey.pt")), 1, None, ["nokey.pt", "num_layers"]),
    ("model bad checksum", pair("%s O H" % P("badsum.pt")), 1, None, ["badsum.pt", "checksum"]),
    ("model dtype f32/f64", pair("%s O H" % P("dtype_mix.pt")), 1, None,
     ["dtype_mix.pt", "'dtype'", "float32", "float64"]),
    ("model dtype f64/f32", pair("%s O H" % P("dtype_mix2.pt")), 1, None,
     ["dtype_mix2.pt", "'dtype'", "float32", "float64"]),
    ("model key twice", pair("%s O H" % P("dup_key.pt")), 1, None,
     ["dup_key.pt", "'cutoff'", "twice"]),
    ("model cutoff 1e30", pair("%s O H" % P("cut_huge.pt")), 1, None,
     ["cut_huge.pt", "'cutoff'", "1e30"]),
    ("model cutoff -1", pair("%s O H" % P("cut_neg.pt")), 1, None, ["cut_neg.pt", "'cutoff'"]),
    ("model cutoff text", pair("%s O H" % P("cut_text.pt")), 1, None,
     ["cut_text.pt", "'cutoff'", "far"]),
    ("model cutoff_3body > cutoff", pair("%s O H" % P("cut3_big.pt")), 1, None,
     ["cut3_big.pt", "cutoff_3body"]),
    ("model format_version 2", pair("%s O H" % P("version2.pt")), 1, None,
     ["version2.pt", "format_version"]),
    ("model units real", pair("%s O H" % P("units_real.pt")), 1, None,
     ["units_real.pt", "'units'"]),
    ("model metadata line", pair("%s O H" % P("bad_line.pt")), 1, None,
     ["bad_line.pt", "just words"]),
    ("model type without embedding", pair("%s O C" % P("three_names.pt")), 1, None,
     ["three_names.pt", "'C'", "out of bounds"]),
    ("model no gradient", pair("%s O H" % P("no_grad.pt")), 1, None,
     ["no_grad.pt", "do not depend on the edge vectors"]),
    ("model no gradient 2 ranks", pair("%s O H" % P("no_grad.pt")), 2, None,
     ["no_grad.pt", "do not depend on the edge vectors"]),
    ("model DW as pair", pair("%s O H" % S.DW), 1, None,
     ["ERROR: pair_style aisci", "water_dw.pt", "per-atom vectors", "energy model"]),
    # --- compute aisci/cost, aisci/work ---------------------------------------------------
    ("cost ok", pair(post="compute c all aisci/cost\ncompute s all reduce sum c_c\n"
                     "thermo_style custom step pe c_s"), 2, None, OK),
    ("work ok", pair(post="compute w all aisci/work\nthermo_style custom step c_w[1]"), 2,
     None, OK),
    ("cost without pair aisci", "units metal\natom_style atomic\nread_data frame.data\n"
     "pair_style zero 3.0\npair_coeff * *\ncompute c all aisci/cost\n"
     "compute s all reduce sum c_c\nthermo_style custom step c_s\nrun 0\n", 1, None,
     ["aisci/cost", "requires pair_style aisci"]),
    ("cost bad keyword", pair(post="compute c all aisci/cost bond 2"), 1, None,
     ["aisci/cost", "bond"]),
    ("cost negative weight", pair(post="compute c all aisci/cost edge -1"), 1, None,
     ["edge", "-1"]),
    ("cost missing value", pair(post="compute c all aisci/cost edge"), 1, None,
     ["edge", "needs 1 value"]),
    ("work zero weights", pair(post="compute w all aisci/work atom 0 edge 0 triplet 0"), 1,
     None, ["weights are all 0"]),
    # --- kspace_style pppm/aisci ----------------------------------------------------------
    ("pppm ok", kspace(), 1, None, OK),
    ("pppm ok 4 ranks ad", kspace(modify="kspace_modify diff ad"), 4, None, OK),
    ("pppm ok real", kspace(units="real"), 1, None, OK),
    ("pppm no charge", kspace(data="zero.data"), 1, None, ["no charge", "gewald and mesh"]),
    ("pppm no charge gewald", kspace(data="zero.data", modify="kspace_modify gewald 0.3"), 1,
     None, ["no charge", "gewald and mesh"]),
    ("pppm ok no charge gewald mesh", kspace(data="zero.data",
                                             modify="kspace_modify gewald 0.3 mesh 8 8 8"), 1,
     None, "warn:Using kspace solver on system with no charge"),
    ("pppm mesh 5000^3", kspace(modify="kspace_modify mesh 5000 5000 5000"), 1, None,
     ["mesh 5000 x 5000 x 5000", "GiB"]),
    ("pppm mesh 5000^3 2 ranks", kspace(modify="kspace_modify mesh 5000 5000 5000"), 2, None,
     ["mesh 5000 x 5000 x 5000", "GiB"]),
    ("pppm mesh 20000", kspace(modify="kspace_modify mesh 20000 8 8"), 1, None,
     ["mesh 20000 x 8 x 8", "16384"]),
    ("pppm accuracy 1e-30", kspace(ks="pppm/aisci 1e-30"), 1, None,
     ["accuracy 1e-30", "grid beyond"]),
    ("pppm order 1", kspace(modify="kspace_modify order 1"), 1, None, ["order"]),
    ("pppm mesh below order", kspace(modify="kspace_modify mesh 3 8 8"), 1, None,
     ["below order"]),
    ("pppm no q", kspace(style="atomic", data="frame.data", pair_style="zero 5.0",
                         modify="kspace_modify gewald 0.3"), 1, None, ["charges"]),
    ("pppm no coul cutoff", kspace(pair_style="zero 5.0"), 1, None,
     ["long-range Coulomb cutoff", "gewald"]),
    ("pppm slab", kspace(pre="", modify="kspace_modify slab 3.0"), 1, None, ["slab"]),
    ("pppm nonperiodic", kspace().replace("boundary p p p", "boundary p p f"), 1, None,
     ["periodic"]),
    ("pppm accuracy text", kspace(ks="pppm/aisci tight"), 1, None, ["accuracy", "tight"]),
    # --- fix dplr, kspace_style pppm/dplr -------------------------------------------------
    ("dplr ok", dplr(), 1, None, OK),
    ("dplr ok 2 ranks", dplr(), 2, None, OK),
    ("dplr ok 4 ranks newton bond off", dplr(pre="newton on off"), 4, None, OK),
    ("dplr ok real", dplr(units="real"), 1, None, OK),
    ("dplr no kspace", dplr(lambda s: s.replace(KS, "")), 1, None,
     ["fix dplr", "kspace_style pppm/dplr"]),
    ("dplr twice", dplr(lambda s: s.replace(FIX, FIX + FIX.replace("fix dplr", "fix two"))),
     1, None, ["dplr", "two", "both"]),
    ("dplr pppm/dplr without fix", dplr(no_fix), 1, None,
     ["no fix dplr", "Wannier", "dplr_beta"]),
    ("dplr pppm/dplr without gewald", dplr(lambda s: s.replace("kspace_modify gewald 0.4", "")),
     1, None, ["gewald"]),
    ("dplr gewald mismatch", dplr(lambda s: s.replace("gewald 0.4", "gewald 0.3")), 1, None,
     ["0.3", "dplr_beta", "0.4"]),
    ("dplr mesh 5000^3", dplr(lambda s: s.replace("gewald 0.4", "gewald 0.4 mesh 5000 5000 5000")),
     1, None, ["mesh 5000 x 5000 x 5000"]),
    ("dplr DW missing", dplr(lambda s: s.replace(FIX, FIX.replace(S.DW, P("none.pt")))), 1,
     None, ["none.pt", "not found"]),
    ("dplr energy model as DW", dplr(lambda s: s.replace(FIX, FIX.replace(S.DW, GOOD))), 1,
     None, ["good.pt", "energy model"]),
    ("dplr comm multi", dplr(lambda s: s.replace("neighbor 1.0 bin", "neighbor 1.0 multi\n"
                                                 "comm_modify mode multi")), 1, None,
     ["comm_modify mode single"]),
    ("dplr bond_type 0", dplr(lambda s: s.replace("bond_type 2\n", "bond_type 0\n")), 1, None,
     ["bond_type", "0"]),
    ("dplr elements short", dplr(lambda s: s.replace("bond_type 2\n", "bond_type 2 elements O\n")),
     1, None, ["elements", "3 values"]),
    ("dplr WC mapped", dplr(lambda s: s.replace("O H NULL", "O H H")), 1, None,
     ["WC type 3", "NULL"]),
    ("dplr pppm/aisci instead", dplr(lambda s: s.replace(
        KS, "kspace_style pppm/aisci 1e-4\nkspace_modify gewald 0.4\n")), 1, None,
     "warn:is not pppm/dplr"),
    ("dplr lj units", dplr(units="lj"), 1, None, ["units metal or real"]),
    ("dplr ok kspace compute no", dplr(lambda s: s.replace("gewald 0.4", "gewald 0.4 compute no")),
     1, None, OK),
    ("dplr ok minimize", dplr(lambda s: s.replace("run 0", "minimize 1e-6 1e-6 3 30")), 1, None,
     OK),
    ("dplr ok overlap no 2 ranks", dplr(lambda s: s.replace("overlap yes", "overlap no")), 2,
     None, OK),
    # --- issue 33: silent before, a warning or an error now ------------------------------
    ("pair neigh_modify exclude type", pair(post="neigh_modify exclude type 1 2"), 1, None,
     "warn:neigh_modify exclude is ignored (type 1 2)"),
    ("pair neigh_modify exclude group", pair(pre="", post="group g1 type 1\ngroup g2 type 2\n"
                                             "neigh_modify exclude group g1 g2"), 1, None,
     "warn:neigh_modify exclude is ignored (group g1 g2)"),
    ("dplr ok exclusion of the NULL type", dplr(lambda s: s.replace(
        "neighbor 1.0 bin", "neighbor 1.0 bin\nneigh_modify exclude type 1 3")), 1, None, OK),
    ("dplr AISCI_PPPM_RANKS_PER_NODE two", dplr(lambda s: s.replace("overlap yes", "overlap yes layout node")),
     2, {"AISCI_PPPM_RANKS_PER_NODE": "two"}, ["AISCI_PPPM_RANKS_PER_NODE", "two", "positive integer"]),
]


def classify(r, expected):
    out = r.output
    err = next((l for l in out.splitlines() if l.startswith("ERROR")), None)
    if r.rc == -999:
        return "hang", "timeout after %d s" % TIMEOUT
    if err is None and r.rc != 0:
        return "crash", "rc %d: %s" % (r.rc, out.strip().splitlines()[-1] if out.strip() else "")
    if expected is None or isinstance(expected, str):
        if r.rc != 0:
            return "rejected", err or "rc %d" % r.rc
        if isinstance(expected, str) and expected[5:] not in out:
            return "silent", "no warning '%s'" % expected[5:]
        return "ok", ""
    if r.rc == 0:
        return "silent", "ran without error"
    missing = [w for w in expected if w not in err]
    return ("unclear" if missing else "clean"), err + ("  [missing %s]" % missing if missing else "")


counts = {}
for name, script, nprocs, env, expected in CASES:
    if FILTER and not any(f in name for f in FILTER):
        continue
    r = T.run_lammps(script, nprocs=nprocs, env=env, timeout=TIMEOUT, files=FILES)
    kind, detail = classify(r, expected)
    counts[kind] = counts.get(kind, 0) + 1
    print("%-9s %-40s %s" % (kind, name + " (np %d)" % nprocs,
                             detail if (VERBOSE or kind not in ("ok", "clean")) else ""),
          flush=True)
print("sweep: %d inputs: %s" % (sum(counts.values()),
                                ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
sys.exit(0 if set(counts) <= {"ok", "clean"} else 1)
