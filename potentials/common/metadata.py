"""Model file metadata (contract v1): writing, parsing, checking, and the weight checksum.

A model file is a TorchScript module saved with
``torch.jit.save(module, path, _extra_files={"aisci_metadata": text})``; ``text`` holds
one ``key = value`` per line. See docs/potentials.md and the contract for the keys.
"""

import numpy as np
import torch

FORMAT_VERSION = 1
EXTRA_FILE = "aisci_metadata"
#: Largest cutoff accepted, Angstrom (AISCI_MODEL_MAX_CUTOFF of the C API).
MAX_CUTOFF = 100.0

#: Required keys, in the order they are written.
REQUIRED_KEYS = (
    "format_version",
    "architecture",
    "cutoff",
    "cutoff_3body",
    "num_layers",
    "type_names",
    "units",
    "dtype",
    "needs_triplets",
    "checksum",
)
#: Written by every exporter but optional when reading: a file without a checksum loads
#: unverified (the C++ loader logs that it has none), like the C API (docs/pair_aisci.md).
OPTIONAL_WHEN_READ = ("checksum",)

FNV64_OFFSET = 0xCBF29CE484222325
FNV64_PRIME = 0x100000001B3
_MASK64 = 0xFFFFFFFFFFFFFFFF


class MetadataError(ValueError):
    """A model's metadata is missing a key, has a bad value, or does not match the model."""


def fnv1a64(data, h=FNV64_OFFSET):
    """FNV-1a 64-bit hash of ``data`` (bytes), continuing from ``h``."""
    # FNV-1a is sequential: a plain loop over the bytes on Python ints (about 0.05 s
    # for the 300 kB shipped models).
    for b in data:
        h = ((h ^ b) * FNV64_PRIME) & _MASK64
    return h


def state_dict_checksum(module):
    """Contract checksum: FNV-1a 64 over the raw bytes of every tensor of
    ``module.state_dict()`` in sorted key order (contiguous, own dtype, native
    little-endian bytes). Returns 16 lowercase hex digits."""
    sd = module.state_dict()
    h = FNV64_OFFSET
    for key in sorted(sd.keys()):
        t = sd[key].detach().cpu().contiguous()
        if t.numel() == 0:
            continue
        raw = t.numpy().tobytes() if t.dtype != torch.bfloat16 else t.view(torch.int16).numpy().tobytes()
        h = fnv1a64(raw, h)
    return "%016x" % h


def _fmt_value(value):
    if isinstance(value, (list, tuple)):
        return " ".join(str(v) for v in value)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def make_metadata_text(meta):
    """``key = value`` lines from a dict; required keys first (in contract order), then
    the optional ones sorted. Raises MetadataError naming any missing required key."""
    missing = [k for k in REQUIRED_KEYS if k not in meta]
    if missing:
        raise MetadataError("model metadata is missing required key(s): %s" % ", ".join(missing))
    lines = []
    for key in list(REQUIRED_KEYS) + sorted(k for k in meta if k not in REQUIRED_KEYS):
        value = _fmt_value(meta[key])
        if "\n" in value or "=" in key or "\n" in key or not key.strip():
            raise MetadataError("metadata key %r has a value or name that cannot be stored "
                                "on one line" % (key,))
        lines.append("%s = %s" % (key, value))
    text = "\n".join(lines) + "\n"
    check_metadata(parse_metadata(text))
    return text


def parse_metadata(text):
    """Dict of strings from ``key = value`` lines (blank lines and # comments skipped)."""
    meta = {}
    seen = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if "=" not in s:
            raise MetadataError("metadata line %d has no '=': %r" % (lineno, line))
        key, value = s.split("=", 1)
        key = key.strip()
        if key in seen:
            raise MetadataError("metadata key '%s' appears twice (lines %d and %d)" % (
                key, seen[key], lineno))
        seen[key] = lineno
        meta[key] = value.strip()
    return meta


def check_metadata(meta, where="model metadata"):
    """Check a parsed (string-valued) metadata dict; returns typed values.

    Raises MetadataError naming the key and the file (``where``) on the first problem.
    """
    for key in REQUIRED_KEYS:
        if key not in meta and key not in OPTIONAL_WHEN_READ:
            raise MetadataError("%s: missing required key '%s'" % (where, key))

    def num(key, kind):
        try:
            return kind(meta[key])
        except ValueError:
            raise MetadataError("%s: key '%s' must be %s, got %r" % (
                where, key, "an integer" if kind is int else "a number", meta[key])) from None

    out = dict(meta)
    out["format_version"] = num("format_version", int)
    if out["format_version"] != FORMAT_VERSION:
        raise MetadataError("%s: format_version %d is not supported (expected %d)" % (
            where, out["format_version"], FORMAT_VERSION))
    out["cutoff"] = num("cutoff", float)
    out["cutoff_3body"] = num("cutoff_3body", float)
    out["num_layers"] = num("num_layers", int)
    out["needs_triplets"] = num("needs_triplets", int)
    if not (np.isfinite(out["cutoff"]) and 0 < out["cutoff"] <= MAX_CUTOFF):
        raise MetadataError("%s: cutoff must be in (0, %g] Angstrom, got %r" % (
            where, MAX_CUTOFF, meta["cutoff"]))
    if not (0 <= out["cutoff_3body"] <= out["cutoff"]):
        raise MetadataError("%s: cutoff_3body must be in [0, cutoff], got %r" % (
            where, meta["cutoff_3body"]))
    if out["num_layers"] < 1:
        raise MetadataError("%s: num_layers must be >= 1, got %r" % (where, meta["num_layers"]))
    if out["needs_triplets"] not in (0, 1):
        raise MetadataError("%s: needs_triplets must be 0 or 1, got %r" % (
            where, meta["needs_triplets"]))
    if out["needs_triplets"] == 1 and out["cutoff_3body"] <= 0:
        raise MetadataError("%s: needs_triplets = 1 requires cutoff_3body > 0" % where)
    if out["units"] != "metal":
        raise MetadataError("%s: units must be 'metal', got %r" % (where, meta["units"]))
    if out["dtype"] not in ("float64", "float32"):
        raise MetadataError("%s: dtype must be float64 or float32, got %r" % (
            where, meta["dtype"]))
    names = meta["type_names"].split()
    if not names or len(set(names)) != len(names):
        raise MetadataError("%s: type_names must be distinct element names, got %r" % (
            where, meta["type_names"]))
    out["type_names"] = names
    if "checksum" in meta:
        ck = meta["checksum"].lower()
        if len(ck) != 16 or any(c not in "0123456789abcdef" for c in ck):
            raise MetadataError("%s: checksum must be 16 hex digits, got %r" % (
                where, meta["checksum"]))
        out["checksum"] = ck
    if not out["architecture"]:
        raise MetadataError("%s: architecture is empty" % where)
    return out


def load_model(path, map_location="cpu", verify_checksum=True):
    """Load a model file, parse and check its metadata, (by default) its checksum when it
    has one, and that its weights are finite.

    Returns (module, metadata dict with typed values). Raises MetadataError or the
    error of torch.jit.load with the file name in the message.
    """
    # models exported with ghost exchange call torch.ops.aisci.ghost_exchange: define it
    from potentials.common import ops  # noqa: F401  (import for its side effect)

    extra = {EXTRA_FILE: ""}
    try:
        module = torch.jit.load(path, map_location=map_location, _extra_files=extra)
    except Exception as exc:  # torch raises RuntimeError/ValueError for bad archives
        raise RuntimeError("%s: cannot load TorchScript model: %s" % (path, exc)) from exc
    text = extra[EXTRA_FILE]
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    if not text:
        raise MetadataError("%s: no '%s' entry (not a USER-AISCI model file?)" % (path, EXTRA_FILE))
    meta = check_metadata(parse_metadata(text), where=path)
    if verify_checksum and "checksum" in meta:
        actual = state_dict_checksum(module)
        if actual != meta["checksum"]:
            raise MetadataError("%s is damaged: weight checksum mismatch (expected %s from its "
                                "metadata, found %s in its weights)" % (path, meta["checksum"],
                                                                        actual))
    bad = sum(int((~torch.isfinite(t)).sum()) for t in module.state_dict().values()
              if t.is_floating_point())
    if bad:
        raise MetadataError("model file %s has non-finite weights (%d values): the file is "
                            "damaged" % (path, bad))
    want = torch.float64 if meta["dtype"] == "float64" else torch.float32
    for name, t in module.state_dict().items():
        if t.is_floating_point() and t.dtype != want:
            raise MetadataError("%s: tensor '%s' is %s but metadata dtype is %s" % (
                path, name, t.dtype, meta["dtype"]))
    return module, meta
