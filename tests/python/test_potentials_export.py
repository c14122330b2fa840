#!/usr/bin/python3
"""potentials/: export of model files (contract v1) and the shipped water models.

- an exported model reloads with torch.jit.load and gives the same numbers;
- metadata has every required key; the checksum is recomputed here independently;
- error paths: a missing metadata key, tampered weights, a checkpoint without config;
- shipped models load, are small, carry their RMSEs, and reproduce them on test frames.
Run with /usr/bin/python3 (torch 1.13, numpy)."""

import os
import sys
import tempfile

import numpy as np
import torch

SRC = os.environ.get("AISCI_SOURCE_DIR",
                     os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, SRC)

from potentials.common.evaluate import (energy_forces, load_frames, rmse_on_frames,  # noqa: E402
                                        split_frames)
from potentials.common.export import export_checkpoint, model_metadata, save_model  # noqa: E402
from potentials.common.graph import build_graph  # noqa: E402
from potentials.common.metadata import REQUIRED_KEYS, MetadataError, load_model  # noqa: E402
from potentials.common.train import build_model  # noqa: E402
from potentials.data.water_box import make_water_box  # noqa: E402

FAILURES = []


def check(cond, what):
    print("%s: %s" % ("ok" if cond else "FAIL", what))
    if not cond:
        FAILURES.append(what)


def independent_checksum(module):
    """FNV-1a 64 written out again from the contract text, on numpy bytes."""
    h = 0xCBF29CE484222325
    sd = module.state_dict()
    for key in sorted(sd):
        for byte in sd[key].detach().contiguous().numpy().astype(
                sd[key].detach().numpy().dtype.newbyteorder("<")).tobytes():
            h ^= byte
            h = (h * 0x100000001B3) % (1 << 64)
    return format(h, "016x")


def read_metadata(path):
    extra = {"aisci_metadata": ""}
    module = torch.jit.load(path, _extra_files=extra)
    text = extra["aisci_metadata"]
    text = text.decode() if isinstance(text, bytes) else text
    meta = dict((k.strip(), v.strip()) for k, v in
                (line.split("=", 1) for line in text.splitlines() if line.strip()))
    return module, meta


def small_checkpoint(path, arch):
    torch.manual_seed(5)
    config = {"num_types": 2, "cutoff": 4.0, "cutoff_3body": 2.8, "num_layers": 2,
              "channels": 8, "num_radial": 6, "lmax": 3, "neighbor_norm": 30.0,
              "angle_channels": 8, "angle_norm": 8.0}
    model = build_model(arch, config).to(torch.float64)
    torch.save({"architecture": arch, "config": config, "state_dict": model.state_dict(),
                "type_names": ["O", "H"], "metrics": {"train_rmse_e_mev_per_atom": 1.0}}, path)
    return model


def water_inputs(cutoff, cutoff_3body, dtype=torch.float64, n=8):
    box = make_water_box(n, 1.0, seed=3)
    g = build_graph(box["positions"], np.diag(box["box"]), cutoff, cutoff_3body)
    return (torch.tensor(g["edge_vec"], dtype=dtype), torch.tensor(g["edge_index"]),
            torch.tensor(box["types"] - 1, dtype=torch.int64),
            torch.tensor(g["triplets"]).reshape(-1, 2))


def test_export_roundtrip(tmp, arch):
    ckpt = os.path.join(tmp, arch + ".ckpt")
    eager = small_checkpoint(ckpt, arch)
    for dtype_name, dtype in (("float64", torch.float64), ("float32", torch.float32)):
        out = os.path.join(tmp, "%s_%s.pt" % (arch, dtype_name))
        export_checkpoint(ckpt, out, dtype_name)
        module, meta = read_metadata(out)
        missing = [k for k in REQUIRED_KEYS if k not in meta]
        check(not missing and meta["architecture"] == arch and meta["dtype"] == dtype_name
              and meta["type_names"] == "O H" and meta["units"] == "metal"
              and meta["needs_triplets"] == "1" and float(meta["cutoff"]) == 4.0
              and float(meta["cutoff_3body"]) == 2.8 and meta["num_layers"] == "2"
              and meta["format_version"] == "1",
              "%s %s: metadata has every required key with the right values" % (arch, dtype_name))
        check(meta["checksum"] == independent_checksum(module),
              "%s %s: checksum %s recomputed independently" % (arch, dtype_name, meta["checksum"]))
        check(all(t.dtype == dtype for t in module.state_dict().values() if t.is_floating_point()),
              "%s %s: all floating tensors stored in the model dtype" % (arch, dtype_name))
        args = water_inputs(4.0, 2.8, dtype)
        e1, f1 = energy_forces(module, *args)
        e0, f0 = energy_forces(eager.to(dtype), *args)
        tol = 1e-12 if dtype == torch.float64 else 1e-5
        check(abs(e1.item() - e0.item()) <= tol * abs(e0.item())
              and (f1 - f0).abs().max().item() <= tol * 10 * max(1e-3, f0.abs().max().item()),
              "%s %s: torch.jit.load'ed model gives the eager model's energy and forces "
              "(dE %.1e)" % (arch, dtype_name, abs(e1.item() - e0.item())))
        per_atom = module(*args)
        check(per_atom.shape == (args[2].shape[0],) and per_atom.dtype == dtype,
              "%s %s: forward returns per-atom energies [N] in the model dtype" % (arch, dtype_name))
        eager = eager.to(torch.float64)


def test_error_paths(tmp):
    ckpt = os.path.join(tmp, "matris.ckpt")
    model = small_checkpoint(ckpt, "matris")
    scripted = torch.jit.script(model)
    meta = model_metadata("matris", {"cutoff": 4.0, "cutoff_3body": 2.8, "num_layers": 2},
                          ["O", "H"], "float64", "0123456789abcdef")
    for key in ("cutoff", "type_names", "checksum"):
        bad = dict(meta)
        del bad[key]
        path = os.path.join(tmp, "missing_%s.pt" % key)
        try:
            save_model(scripted, path, bad)
            msg = None
        except MetadataError as exc:
            msg = str(exc)
        check(msg is not None and "'" + key + "'" in msg or (msg and key in msg)
              and not os.path.exists(path),
              "export without metadata key '%s' raises MetadataError: %s" % (key, msg))
    # a file written by someone else with a key missing: the loader names key and file
    path = os.path.join(tmp, "no_units.pt")
    text = "".join("%s = %s\n" % (k, v) for k, v in
                   (("format_version", 1), ("architecture", "matris"), ("cutoff", 4.0),
                    ("cutoff_3body", 2.8), ("num_layers", 2), ("type_names", "O H"),
                    ("dtype", "float64"), ("needs_triplets", 1), ("checksum", "0" * 16)))
    torch.jit.save(scripted, path, _extra_files={"aisci_metadata": text})
    try:
        load_model(path)
        msg = None
    except MetadataError as exc:
        msg = str(exc)
    check(msg is not None and "'units'" in msg and path in msg,
          "loading a model without 'units' names the key and file: %s" % msg)
    # tampered weights under valid metadata: the checksum catches them
    good = os.path.join(tmp, "good.pt")
    export_checkpoint(ckpt, good)
    module, meta_text = read_metadata(good)
    with torch.no_grad():
        module.readout.mlp.lin2.bias.add_(1e-9)
    tampered = os.path.join(tmp, "tampered.pt")
    torch.jit.save(module, tampered, _extra_files={
        "aisci_metadata": "".join("%s = %s\n" % kv for kv in meta_text.items())})
    try:
        load_model(tampered)
        msg = None
    except MetadataError as exc:
        msg = str(exc)
    check(msg is not None and "checksum mismatch" in msg,
          "weights changed by 1e-9 after export: checksum mismatch reported: %s" % msg)
    # a checkpoint without a config
    ck = torch.load(ckpt)
    del ck["config"]
    torch.save(ck, os.path.join(tmp, "noconfig.ckpt"))
    try:
        export_checkpoint(os.path.join(tmp, "noconfig.ckpt"), os.path.join(tmp, "x.pt"))
        msg = None
    except MetadataError as exc:
        msg = str(exc)
    check(msg is not None and "'config'" in msg, "checkpoint without config: %s" % msg)


def test_shipped_models():
    datasets = {}
    for arch in ("matris", "dpa3"):
        path = os.path.join(SRC, "potentials", "models", "water_%s.pt" % arch)
        if not os.path.exists(path):
            check(False, "shipped model %s exists" % path)
            continue
        module, meta = load_model(path)
        # The RMSEs in the metadata were measured on the data set the description names
        # (water_qtip4pf_clean.npz: the same frames with the thermostat forces removed).
        name = "water_qtip4pf_clean.npz" if "water_qtip4pf_clean.npz" in meta.get(
            "description", "") else "water_qtip4pf.npz"
        if name not in datasets:
            datasets[name] = load_frames(os.path.join(SRC, "potentials", "data", name))
        frames = datasets[name]
        _, test_idx = split_frames(len(frames))
        size = os.path.getsize(path)
        check(size < 2 * 1024 * 1024 and meta["architecture"] == arch
              and meta["type_names"] == ["O", "H"] and meta["needs_triplets"] == 1,
              "%s: loads, checksum verified, %d bytes, type_names O H, needs triplets"
              % (path, size))
        keys = ("train_rmse_e_mev_per_atom", "train_rmse_f_mev_per_angstrom",
                "test_rmse_e_mev_per_atom", "test_rmse_f_mev_per_angstrom")
        check(all(k in meta for k in keys), "%s: metadata carries train/test RMSEs" % arch)
        if not all(k in meta for k in keys):
            continue
        dtype = torch.float64 if meta["dtype"] == "float64" else torch.float32
        sel = test_idx[:6]
        e, f, _ = rmse_on_frames(module, frames, sel, meta["cutoff"], meta["cutoff_3body"], dtype)
        ref_f = float(meta["test_rmse_f_mev_per_angstrom"])
        check(f < 2.0 * ref_f and f > ref_f / 2.0,
              "%s: force RMSE on 6 test frames %.1f meV/A, metadata says %.1f over all test "
              "frames" % (arch, f, ref_f))


if __name__ == "__main__":
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        for arch in ("matris", "dpa3"):
            test_export_roundtrip(tmp, arch)
        test_error_paths(tmp)
    test_shipped_models()
    if FAILURES:
        print("%d check(s) failed" % len(FAILURES))
        sys.exit(1)
    print("all checks passed")
