"""Export a training checkpoint as a contract-v1 model file (TorchScript + metadata).

Usage::

    /usr/bin/python3 -m potentials.common.export model.ckpt out.pt [--dtype float64] \
        [--ghost-exchange]

Steps: rebuild the model from the checkpoint's architecture and config, load its
weights, cast to --dtype, script it with torch.jit.script (no freezing: freezing can
change autograd forces), compute the FNV-1a checksum of the scripted module's
state_dict, write the metadata as the ``aisci_metadata`` extra file, then reload the
file with torch.jit.load, check the metadata and checksum, and check on a small water
box that the scripted and reloaded models agree with the eager one (relative 1e-10 in
float64, 1e-4 in float32).

--ghost-exchange (MatRIS- and DPA3-style models): the exported model calls
torch.ops.aisci.ghost_exchange on its atom features between message-passing layers
(potentials/common/ops.py) and its metadata says ``ghost_exchange = 1``; pair_style
aisci then needs ghosts within one cutoff instead of num_layers x cutoff
(docs/pair_aisci.md). Same weights and checksum; in Python the operator is the identity.
"""

import argparse
import os
import sys

import numpy as np
import torch

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from potentials.common.metadata import (EXTRA_FILE, FORMAT_VERSION, MetadataError,  # noqa: E402
                                        load_model, make_metadata_text, state_dict_checksum)

DTYPES = {"float64": torch.float64, "float32": torch.float32}


def model_metadata(architecture, config, type_names, dtype_name, checksum, extra=None):
    """Metadata dict of a model (all required keys + optional ``extra`` ones)."""
    meta = {
        "format_version": FORMAT_VERSION,
        "architecture": architecture,
        "cutoff": float(config["cutoff"]),
        "cutoff_3body": float(config.get("cutoff_3body", 0.0)),
        "num_layers": int(config["num_layers"]),
        "type_names": list(type_names),
        "units": "metal",
        "dtype": dtype_name,
        "needs_triplets": 1 if float(config.get("cutoff_3body", 0.0)) > 0 else 0,
        "checksum": checksum,
    }
    for k, v in (extra or {}).items():
        meta[k] = v
    return meta


def save_model(scripted, path, meta):
    """Save ``scripted`` with ``meta`` (dict; a missing required key raises
    MetadataError naming it, and nothing is written)."""
    text = make_metadata_text(meta)
    torch.jit.save(scripted, path, _extra_files={EXTRA_FILE: text})
    return text


def _check_box(cutoff, cutoff_3body, dtype):
    from potentials.common.graph import build_graph
    from potentials.data.water_box import make_water_box

    box = make_water_box(8, 1.0, seed=11)
    g = build_graph(box["positions"], np.diag(box["box"]), cutoff, cutoff_3body)
    return (torch.tensor(g["edge_vec"], dtype=dtype), torch.tensor(g["edge_index"]),
            torch.tensor(box["types"] - 1, dtype=torch.int64),
            torch.tensor(g["triplets"]).reshape(-1, 2))


def export_checkpoint(ckpt_path, out_path, dtype_name="float64", description=None,
                      ghost_exchange=False):
    """Export a checkpoint; returns the metadata text written. ghost_exchange: export
    the model with ghost-feature exchange between its layers (metadata
    ghost_exchange = 1)."""
    from potentials.common.evaluate import energy_forces
    from potentials.common.train import build_model

    if dtype_name not in DTYPES:
        raise ValueError("dtype must be float64 or float32, got %r" % (dtype_name,))
    ckpt = torch.load(ckpt_path, map_location="cpu")
    for key in ("architecture", "config", "state_dict", "type_names"):
        if key not in ckpt:
            raise MetadataError("%s: checkpoint has no '%s' entry" % (ckpt_path, key))
    dtype = DTYPES[dtype_name]
    config = dict(ckpt["config"])
    if ghost_exchange:
        if ckpt["architecture"] not in ("matris", "dpa3"):
            raise ValueError("--ghost-exchange: architecture %r has no ghost exchange "
                             "(matris and dpa3 have)" % (ckpt["architecture"],))
        config["ghost_exchange"] = True
    model = build_model(ckpt["architecture"], config).to(torch.float64)
    model.load_state_dict(ckpt["state_dict"])
    model = model.to(dtype).eval()
    scripted = torch.jit.script(model)
    extra = dict(ckpt.get("metrics", {}))
    if ghost_exchange:
        extra["ghost_exchange"] = 1
    data = ckpt.get("data", "")
    if isinstance(data, (list, tuple)):
        data = " ".join(os.path.basename(os.path.normpath(d)) for d in data)
    source = ("q-TIP4P/F data %s" % data) if "qtip4pf" in data else ("DeePMD npy systems %s" % data)
    extra["description"] = description or (
        "%s-style water potential (USER-AISCI potentials/), trained on %s"
        % (ckpt["architecture"], source))
    meta = model_metadata(ckpt["architecture"], ckpt["config"], ckpt["type_names"], dtype_name,
                          state_dict_checksum(scripted), extra)
    text = save_model(scripted, out_path, meta)

    reloaded, _ = load_model(out_path)
    args = _check_box(meta["cutoff"], meta["cutoff_3body"], dtype)
    # Eager, scripted and reloaded graphs may order floating-point sums differently
    # (the TorchScript executor fuses and reorders after its profiling runs).
    tol = 1e-10 if dtype == torch.float64 else 1e-4
    e0, f0 = energy_forces(model, *args)
    for name, other in (("scripted", scripted), ("reloaded", reloaded)):
        e1, f1 = energy_forces(other, *args)
        if not (torch.allclose(e0, e1, rtol=tol, atol=tol)
                and torch.allclose(f0, f1, rtol=tol, atol=tol)):
            raise RuntimeError("%s: %s model differs from the eager one (energy %r vs %r)"
                               % (out_path, name, e1.item(), e0.item()))
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(description="Export a checkpoint as a USER-AISCI model file")
    parser.add_argument("checkpoint")
    parser.add_argument("output")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="float64")
    parser.add_argument("--description", default=None)
    parser.add_argument("--ghost-exchange", action="store_true",
                        help="exchange ghost-atom features between layers (metadata "
                             "ghost_exchange = 1; needs one cutoff of ghosts in LAMMPS)")
    args = parser.parse_args(argv)
    text = export_checkpoint(args.checkpoint, args.output, args.dtype, args.description,
                             args.ghost_exchange)
    print("wrote %s (%d bytes)\n%s" % (args.output, os.path.getsize(args.output), text), end="")


if __name__ == "__main__":
    main()
