"""Model-file integrity (docs/pair_aisci.md, "Damaged model files"), on copies of the
largest shipped model (potentials/models/water_dpa3.pt), rewritten with Python's zipfile
so that the archive's CRCs match the changed bytes and only the weight checksum can tell:

- every shipped model carries a weight checksum and loads with it verified;
- a flipped mantissa bit in one weight: the load fails, "model file '<copy>' is damaged"
  with the expected and found checksums (C API, pair_style aisci in LAMMPS, and
  potentials.common.metadata.load_model);
- the checksum key removed: the file loads, and pair_style aisci logs one line saying that
  it has no weight checksum;
- a NaN weight (checksum removed, or kept): the load fails naming the file ("has non-finite
  weights (1 values)", or "is damaged");
- a DeePMD-kit frozen model with a NaN weight (when the peer models are present): refused
  at load the same way;
- load time of water_dpa3.pt with and without the checksum key (printed, not checked: the
  cost of the verification is the difference; docs/pair_aisci.md quotes it).
Exits 77 (skipped) when the torch wrapper is not built."""
import os
import struct
import sys
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "capi"))  # aisci_capi
import aisci_nn_toy as toy  # noqa: E402

toy.skip_without_torch_wrapper()
import aisci_capi  # noqa: E402
import aisci_testlib as T  # noqa: E402
import deepmd_systems  # noqa: E402

sys.path.insert(0, T.SOURCE_DIR)
from potentials.common.metadata import MetadataError, load_model  # noqa: E402

MODELS = os.path.join(T.SOURCE_DIR, "potentials", "models")
LARGEST = os.path.join(MODELS, "water_dpa3.pt")
ERR_FORMAT = aisci_capi.ERR_FORMAT
d = toy.build_dir("model_integrity")


def rewrite(src, dst, change):
    """Copy the zip archive src to dst, entry by entry (stored, CRCs recomputed);
    change(name, bytes) returns the new bytes of an entry."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, change(info.filename, zin.read(info.filename)))
    return dst


def largest_data_entry(path):
    with zipfile.ZipFile(path) as z:
        return max((i for i in z.infolist() if "/data/" in i.filename),
                   key=lambda i: i.file_size).filename


def in_entry(entry, fn):
    return lambda name, data: fn(data) if name == entry else data


def flip_mantissa(data):
    b = bytearray(data)
    b[1] ^= 0x10    # bit 12 of the first float64: a relative change of ~1e-12
    return bytes(b)


def set_nan(data):
    return struct.pack("<d", float("nan")) + data[8:]


def without_checksum(name, data):
    if not name.endswith("/extra/aisci_metadata"):
        return data
    text = data.decode()
    return "".join(l for l in text.splitlines(True) if not l.startswith("checksum")).encode()


def load(path):
    st, h, msg = aisci_capi.create(path)
    if h.value:
        aisci_capi.lib.aisci_model_destroy(h)
    return st, msg


# every shipped model has a checksum, verified at load
for name in sorted(os.listdir(MODELS)):
    if not name.endswith(".pt"):
        continue
    path = os.path.join(MODELS, name)
    st, msg = load(path)
    with zipfile.ZipFile(path) as z:
        meta = z.read(next(n for n in z.namelist() if n.endswith("/extra/aisci_metadata")))
    T.check(st == 0 and b"\nchecksum = " in meta,
            "%s: loads with its checksum verified (status %d, %s)" % (name, st, msg))

entry = largest_data_entry(LARGEST)
flipped = rewrite(LARGEST, os.path.join(d, "flipped.pt"), in_entry(entry, flip_mantissa))
unsummed = rewrite(LARGEST, os.path.join(d, "no_checksum.pt"), without_checksum)
nan_unsummed = rewrite(unsummed, os.path.join(d, "nan_no_checksum.pt"), in_entry(entry, set_nan))
nan_summed = rewrite(LARGEST, os.path.join(d, "nan.pt"), in_entry(entry, set_nan))

with zipfile.ZipFile(LARGEST) as z:
    want = next(l.split("=")[1].strip() for l in z.read(
        next(n for n in z.namelist() if n.endswith("/extra/aisci_metadata"))).decode().splitlines()
        if l.startswith("checksum"))
st, msg = load(flipped)
damaged = ("model file '%s' is damaged: weight checksum mismatch (expected %s from its "
           "metadata, found " % (flipped, want))
T.check(st == ERR_FORMAT and msg.startswith(damaged),
        "flipped mantissa bit: status %d, '%s'" % (st, msg))
st, msg = load(unsummed)
T.check(st == 0, "checksum removed: loads (status %d, '%s')" % (st, msg))
st, msg = load(nan_unsummed)
T.check(st == ERR_FORMAT and msg == "model file '%s' has non-finite weights (1 values): the file "
        "is damaged" % nan_unsummed, "NaN weight, no checksum: status %d, '%s'" % (st, msg))
st, msg = load(nan_summed)
T.check(st == ERR_FORMAT and "model file '%s' is damaged" % nan_summed in msg,
        "NaN weight under the old checksum: status %d, '%s'" % (st, msg))

# the same in Python
for path, words in ((flipped, ["is damaged", "checksum mismatch", want]),
                    (nan_unsummed, ["has non-finite weights (1 values)", "damaged"])):
    try:
        load_model(path)
        msg = None
    except MetadataError as exc:
        msg = str(exc)
    T.check(msg is not None and path in msg and all(w in msg for w in words),
            "load_model(%s): %s" % (os.path.basename(path), msg))
T.check(load_model(unsummed)[1].get("checksum") is None, "load_model: no checksum, loads")

# DeePMD-kit frozen model with a NaN weight (no metadata of ours: finiteness only)
SEA = deepmd_systems.SEA
if os.path.exists(SEA):
    bad = rewrite(SEA, os.path.join(d, "sea_nan.pth"), in_entry(largest_data_entry(SEA), set_nan))
    st0, msg0 = load(SEA)
    st, msg = load(bad)
    T.check(st0 == 0 and st == ERR_FORMAT and msg.startswith(
        "model file '%s' has non-finite weights (1 values)" % bad),
        "DeePMD-kit model with a NaN weight: status %d/%d, '%s' '%s'" % (st0, st, msg0, msg))
else:
    print("note: DeePMD-kit model %s absent, its NaN check not run" % SEA)

# in LAMMPS: the damaged copy stops pair_coeff; the copy without checksum runs and says so
frame = toy.small_frame_files(d)
SCRIPT = toy.SMALL_FRAME_SCRIPT
r = T.run_lammps(SCRIPT % flipped, files=frame, timeout=120)
T.check(r.rc != 0 and ("ERROR: pair_style aisci: cannot load model file '%s': invalid file or "
                       "model format: model file '%s' is damaged: weight checksum mismatch"
                       % (flipped, flipped)) in r.output,
        "LAMMPS, flipped bit: rc %d\n%s" % (r.rc, r.output[-800:]))
# the unverified copy, then the shipped file: one line, for the copy only
r = T.run_lammps((SCRIPT % unsummed).replace("run 0", "pair_coeff * * %s O H\nrun 0" % LARGEST),
                 files=frame, timeout=120)
note = ("pair_style aisci: model file %s has no weight checksum (metadata key checksum): its "
        "weights were not verified" % unsummed)
T.check(r.rc == 0 and r.logs[0].count(note) == 1 and r.logs[0].count("no weight checksum") == 1,
        "LAMMPS, no checksum: rc %d, expected one log line %r\n%s" % (r.rc, note, r.output[-800:]))

# load time with and without the verification (the finiteness check runs in both):
# interleaved loads, the fastest of each (the machine may be shared)
times = {LARGEST: [], unsummed: []}
for _ in range(8):
    for path in times:
        t0 = time.perf_counter()
        load(path)
        times[path].append(1e3 * (time.perf_counter() - t0))
with_ms, without_ms = min(times[LARGEST]), min(times[unsummed])
print("load time of %s (fastest of 8): %.2f ms with the checksum verified, %.2f ms without "
      "(difference %.2f ms)"
      % (os.path.basename(LARGEST), with_ms, without_ms, with_ms - without_ms))
T.summary("test_model_integrity")
