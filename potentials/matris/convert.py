"""Convert a MatRIS checkpoint into a model file that pair_style aisci runs.

    python3 -m potentials.matris.convert CHECKPOINT OUT.pt [--dtype float64|float32]
        [--matris-python PATH] [--neutral FILE.npz] [--description TEXT]

CHECKPOINT is a MatRIS ``.pth.tar`` (a ``torch.save``d dict with ``config``, the
constructor arguments, and ``state_dict``), e.g. ``~/.cache/matris/MatRIS_10M_OAM.pth.tar``,
or a neutral ``.npz`` already made by step 1.

Two steps, and no MatRIS code in what is written:

1. ``potentials.matris.read_checkpoint`` runs in the Python that has the ``matris``
   package (``--matris-python``, default ``$AISCI_MATRIS_PYTHON`` or
   ``$AISCI_PEERS/matris/bin/python``, made by ``scripts/install-peers.sh --only
   matris``) and only reads the checkpoint into a neutral npz (weights by name, config,
   the constants of the spherical basis). ``--neutral`` keeps that file.
2. Here (Debian's python3 and torch): our implementation of the architecture
   (``potentials.matris.arch``) is built from the config, the weights are loaded by
   name (every weight of the checkpoint must find its place, every place its weight),
   the model is scripted and saved with its metadata (contract v1): all 94 elements of
   the embedding as ``type_names``, ``cutoff`` = pairwise cutoff, ``cutoff_3body`` =
   three-body cutoff, ``num_layers`` = 2 x the interaction blocks (each block passes
   messages twice: the receptive field of an atom grows by up to two cutoffs per
   block), the reference energies inside the network (per atom), intensive or
   extensive energy recorded. The file is reloaded and checked like every export.

Unsupported (an error naming the setting): ``is_conservation = False`` (direct force and
stress heads: pair_style aisci takes forces from the energy), ``norm_type = batch``,
``graph_conv_mlp`` other than GateMLP/MLP, an activation outside silu, relu, gelu,
softplus, sigmoid, tanh, ``max_l`` or ``max_n`` above 4, an extensive model with a
reference energy (MatRIS adds the per-atom mean of the reference energies then, which is
not size-extensive). The magnetic-moment head is not converted (energies, forces and
stress only).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from potentials.common.export import model_metadata, save_model  # noqa: E402
from potentials.common.metadata import load_model, state_dict_checksum  # noqa: E402
from potentials.matris.arch import ACTIVATIONS, ELEMENTS, NORMS, MatrisArch  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# MatRIS's constructor defaults (what a config that omits a key means).
DEFAULTS = {
    "num_layers": 6, "node_feat_dim": 128, "edge_feat_dim": 128, "three_body_feat_dim": 128,
    "mlp_hidden_dims": [128, 128], "dropout": 0.0, "use_bias": False,
    "distance_expansion": "Bessel", "three_body_expansion": "SH", "num_radial": 7,
    "num_angular": 7, "max_l": 4, "max_n": 4, "envelope_exponent": 8,
    "graph_conv_mlp": "GateMLP", "activation_type": "silu", "norm_type": "rms",
    "pairwise_cutoff": 6.0, "three_body_cutoff": 4.0, "use_smoothed_for_delta_edge": False,
    "learnable_basis": True, "is_intensive": True, "is_conservation": True,
    "reference_energy": None,
}


class ConvertError(ValueError):
    pass


def our_config(config):
    """Checked, completed config for MatrisArch (raises ConvertError naming the key)."""
    unknown = sorted(set(config) - set(DEFAULTS))
    if unknown:
        raise ConvertError("config key(s) %s are not MatRIS 0.1 constructor arguments: "
                           "not supported" % ", ".join(unknown))
    cfg = dict(DEFAULTS)
    cfg.update({k: v for k, v in config.items()})

    def choice(key, allowed, value):
        if value not in allowed:
            raise ConvertError("config %s = %r is not supported (supported: %s)"
                               % (key, config.get(key, DEFAULTS[key]), ", ".join(allowed)))
        return value

    cfg["distance_expansion"] = choice("distance_expansion", ("bessel", "gaussian"),
                                       str(cfg["distance_expansion"]).lower())
    cfg["three_body_expansion"] = choice("three_body_expansion", ("sh", "fourier"),
                                         str(cfg["three_body_expansion"]).lower())
    mlp = choice("graph_conv_mlp", ("gatemlp", "mlp"), str(cfg["graph_conv_mlp"]).lower())
    cfg["gated"] = mlp == "gatemlp"
    cfg["activation_type"] = choice("activation_type", ACTIVATIONS,
                                    str(cfg["activation_type"]).lower())
    cfg["norm_type"] = choice("norm_type", NORMS, str(cfg["norm_type"]).lower())
    if not cfg["is_conservation"]:
        raise ConvertError("config is_conservation = False (direct force and stress heads) is "
                           "not supported: pair_style aisci takes forces and virial from the "
                           "energy")
    if cfg["three_body_expansion"] == "sh" and not (1 <= int(cfg["max_l"]) <= 4
                                                    and 1 <= int(cfg["max_n"]) <= 4):
        raise ConvertError("config max_l = %r, max_n = %r: the spherical basis takes 1..4"
                           % (cfg["max_l"], cfg["max_n"]))
    if cfg["three_body_expansion"] == "fourier" and int(cfg["num_angular"]) % 2 != 1:
        raise ConvertError("config num_angular = %r must be odd with the Fourier basis"
                           % cfg["num_angular"])
    if cfg["reference_energy"] is not None and not cfg["is_intensive"]:
        raise ConvertError("config is_intensive = False with reference_energy = %r is not "
                           "supported: MatRIS then adds the mean, not the sum, of the "
                           "per-atom reference energies (not size-extensive)"
                           % cfg["reference_energy"])
    if not 0 < float(cfg["three_body_cutoff"]) <= float(cfg["pairwise_cutoff"]):
        raise ConvertError("config three_body_cutoff = %r must be in (0, pairwise_cutoff = %r]"
                           % (cfg["three_body_cutoff"], cfg["pairwise_cutoff"]))
    for key in ("num_layers", "node_feat_dim", "edge_feat_dim", "three_body_feat_dim",
                "num_radial", "num_angular"):
        if int(cfg[key]) < 1:
            raise ConvertError("config %s = %r must be >= 1" % (key, cfg[key]))
        cfg[key] = int(cfg[key])
    return cfg


def _linear_indices(weights, prefix):
    """Sorted indices K of '<prefix>.K.weight' (the Linear layers of an nn.Sequential)."""
    ks = set()
    for name in weights:
        if name.startswith(prefix + ".") and name.endswith(".weight"):
            mid = name[len(prefix) + 1:-len(".weight")]
            if mid.isdigit():
                ks.add(int(mid))
    return sorted(ks)


def name_map(weights, cfg):
    """{checkpoint weight name: our parameter/buffer name} for every weight we use, and
    the list of checkpoint names that are deliberately not used (other heads)."""
    out = {}
    ignored = []

    def same(src, dst):
        for suffix in ("weight", "bias"):
            if "%s.%s" % (src, suffix) in weights:
                out["%s.%s" % (src, suffix)] = "%s.%s" % (dst, suffix)

    def mlp(src, dst):
        for idx, k in enumerate(_linear_indices(weights, src)):
            same("%s.%d" % (src, k), "%s.layers.%d" % (dst, idx))

    def update(src, dst):
        if cfg["gated"]:
            mlp(src + ".mlp_core.layers", dst + ".core")
            mlp(src + ".mlp_gate.layers", dst + ".gate")
            same(src + ".core_norm", dst + ".core_norm")
            same(src + ".gate_norm", dst + ".gate_norm")
        else:
            mlp(src + ".0.layers", dst + ".core")
            same(src + ".1", dst + ".core_norm")

    out["atom_embedding.embedding.weight"] = "species"
    same("atom_embedding.atom_swish_layer.linear", "species_linear")
    e = "edge_embedding."
    if cfg["distance_expansion"] == "bessel":
        out[e + "pairwise_rbf_expansion.frequencies"] = "frequencies"
        out[e + "threebody_rbf_expansion.frequencies"] = "frequencies3"
    else:
        out[e + "pairwise_rbf_expansion.offset"] = "offsets"
        out[e + "threebody_rbf_expansion.offset"] = "offsets3"
    same(e + "edge_linear1", "edge_linear1")
    same(e + "edge_linear2", "edge_linear2")
    same(e + "edge_init_norm", "edge_norm")
    same(e + "swish_layer.linear", "edge_linear3")
    t = "three_body_embedding."
    if cfg["three_body_expansion"] == "sh":
        out[t + "expansion.factor"] = "sh_factor"
    else:
        out[t + "expansion.frequencies"] = "angle_frequencies"
    same(t + "angle_embedding", "angle_linear1")
    same(t + "swish_layer.linear", "angle_linear2")
    for k in range(cfg["num_layers"]):
        for src, dst in (("attn_block_line_graph", "line_attention"),
                         ("attn_block_atom_graph", "atom_attention")):
            s, d = "interaction_block.%d.%s" % (k, src), "blocks.%d.%s" % (k, dst)
            same(s + ".source_weight_linear", d + ".source_weight")
            same(s + ".target_weight_linear", d + ".target_weight")
            out[s + ".node_res_weight"] = d + ".node_res"
            out[s + ".edge_res_weight"] = d + ".edge_res"
            update(s + ".node_nonlinear_update", d + ".node_update")
            update(s + ".edge_nonlinear_update", d + ".edge_update")
        for src, dst in (("refine_block_line_graph", "line_refinement"),
                         ("refine_block_atom_graph", "atom_refinement")):
            s, d = "interaction_block.%d.%s" % (k, src), "blocks.%d.%s" % (k, dst)
            update(s + ".edge_nonlinear_update", d + ".edge_update")
            mlp(s + ".node_FFN.layers", d + ".node_ffn")
            mlp(s + ".edge_FFN.layers", d + ".edge_ffn")
            same(s + ".learnable_envelope", d + ".envelope")
            out[s + ".node_res_weight"] = d + ".node_res"
            out[s + ".edge_res_weight"] = d + ".edge_res"
    same("readout_norm", "readout_norm")
    mlp("energy_head.energy_head.layers", "energy_mlp")
    if "reference_energy.fc.weight" in weights:
        out["reference_energy.fc.weight"] = "readout.type_energy"
    for name in weights:
        if name not in out and name.split(".")[0] in ("magmom_head", "force_stress_head"):
            ignored.append(name)
    return out, ignored


def read_neutral(path):
    data = np.load(path, allow_pickle=False)
    if "__meta__" not in data.files:
        raise ConvertError("'%s' is not a neutral MatRIS file (no __meta__ entry)" % path)
    meta = json.loads(str(data["__meta__"]))
    weights = {k[2:]: data[k] for k in data.files if k.startswith("w/")}
    return meta, weights


def build(meta, weights):
    """Our MatrisArch with the checkpoint's weights (float64), and the config used."""
    cfg = our_config(meta["config"])
    if cfg["distance_expansion"] == "gaussian":
        for key, src in (("gauss_coeff", "pairwise"), ("gauss_coeff3", "threebody")):
            off = np.asarray(weights["edge_embedding.%s_rbf_expansion.offset" % src], np.float32)
            step = float(np.float32(off[1] - off[0]))
            cfg[key] = -0.5 / (2.0 * step) ** 2
    cfg["max_bonds_3body"] = int(meta.get("max_bonds_3body", 48))
    table = meta.get("sh_coef")
    model = MatrisArch(cfg, None if table is None else np.asarray(table, dtype=np.float64))
    mapping, ignored = name_map(weights, cfg)
    ours = model.state_dict()
    unused = sorted(set(weights) - set(mapping) - set(ignored))
    if unused:
        raise ConvertError("checkpoint weight(s) %s have no place in the MatRIS architecture "
                           "(config %s): not a MatRIS 0.1 checkpoint, or a config this "
                           "converter does not know" % (", ".join(unused[:5]),
                                                         json.dumps(meta["config"])))
    # not in checkpoints: the basis table (from step 1 or ours), the output scale (1),
    # the reference energies of a model without them (0)
    missing = sorted(k for k, v in ours.items() if v.numel() > 0 and k not in mapping.values()
                     and k not in ("sh_coef", "readout.energy_scale", "readout.type_energy"))
    if missing:
        inv = {v: k for k, v in mapping.items()}
        raise ConvertError("the checkpoint lacks weight(s) for %s (damaged or not a MatRIS "
                           "checkpoint)" % ", ".join(inv.get(m, m) for m in missing[:5]))
    new = {}
    for src, dst in mapping.items():
        value = torch.from_numpy(np.asarray(weights[src])).to(torch.float64)
        if dst == "readout.type_energy":
            value = value.reshape(-1)
        if dst not in ours:
            raise ConvertError("internal: no parameter %s for %s" % (dst, src))
        if tuple(value.shape) != tuple(ours[dst].shape):
            raise ConvertError("checkpoint weight %s has shape %s, the config %s needs %s"
                               % (src, tuple(value.shape), json.dumps(meta["config"]),
                                  tuple(ours[dst].shape)))
        if not torch.isfinite(value).all():
            raise ConvertError("checkpoint weight %s is not finite (damaged checkpoint)" % src)
        new[dst] = value
    for k, v in ours.items():
        if k not in new:
            new[k] = v
    model.load_state_dict(new)
    return model, cfg, ignored


def step1(checkpoint, neutral, python):
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [python, "-m", "potentials.matris.read_checkpoint", checkpoint, neutral]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    sys.stderr.write(proc.stderr)
    if proc.returncode != 0:
        raise ConvertError((proc.stderr.strip().splitlines() or ["step 1 failed"])[-1])
    print(proc.stdout.strip())


def default_python():
    env = os.environ.get("AISCI_MATRIS_PYTHON")
    if env:
        return env
    peers = os.environ.get("AISCI_PEERS", os.path.expanduser("~/.cache/aisci-peers"))
    return os.path.join(peers, "matris", "bin", "python")


def _check_frame(cutoff, cutoff_3body, dtype):
    """A small periodic water frame (4 molecules at 0.5 g/cm^3: few angles, so that the
    check stays cheap for MatRIS's default architecture), types as Z - 1."""
    from potentials.common.graph import build_graph
    from potentials.data.water_box import make_water_box

    box = make_water_box(4, 0.5, seed=11)
    g = build_graph(box["positions"], np.diag(box["box"]), cutoff, cutoff_3body)
    types = torch.tensor(box["types"] - 1, dtype=torch.int64)
    return (torch.tensor(g["edge_vec"], dtype=dtype), torch.tensor(g["edge_index"]),
            torch.where(types == 0, 7, 0), torch.tensor(g["triplets"]).reshape(-1, 2))


def convert(checkpoint, out, dtype_name="float64", python=None, neutral=None,
            description=None, max_bonds_3body=48):
    """Both steps; returns the metadata dict written."""
    dtype = {"float64": torch.float64, "float32": torch.float32}.get(dtype_name)
    if dtype is None:
        raise ConvertError("--dtype must be float64 or float32, got %r" % dtype_name)
    if not os.path.isfile(checkpoint):
        raise ConvertError("checkpoint '%s' does not exist" % checkpoint)
    print("convert: step 1/2: reading %s" % checkpoint, flush=True)
    if checkpoint.endswith(".npz"):
        neutral = checkpoint
    else:
        python = python or default_python()
        if not os.path.exists(python):
            raise ConvertError("step 1 needs the Python of the matris venv: '%s' does not exist "
                               "(bash scripts/install-peers.sh --only matris, or "
                               "--matris-python / AISCI_MATRIS_PYTHON)" % python)
        if neutral is None:
            tmp = tempfile.mkdtemp(prefix="aisci-matris-")
            neutral = os.path.join(tmp, "checkpoint.npz")
        step1(checkpoint, neutral, python)
    meta, weights = read_neutral(neutral)
    print("convert: step 2/2: building our MatRIS implementation (%d weights)" % len(weights),
          flush=True)
    if int(max_bonds_3body) < 1:
        raise ConvertError("--max-bonds-3body must be >= 1, got %r" % max_bonds_3body)
    meta = dict(meta)
    meta["max_bonds_3body"] = int(max_bonds_3body)
    model, cfg, ignored = build(meta, weights)
    model = model.to(dtype).eval()
    scripted = torch.jit.script(model)
    extra = {
        "ghost_exchange": 1,
        "max_bonds_3body": cfg["max_bonds_3body"],
        "matris_blocks": cfg["num_layers"],
        "is_intensive": int(bool(cfg["is_intensive"])),
        "reference_energy": str(cfg["reference_energy"]),
        "source": meta.get("source", os.path.basename(checkpoint)),
        "matris_version": meta.get("matris_version", "unknown"),
        "description": description or (
            "MatRIS checkpoint %s converted by potentials.matris.convert (USER-AISCI's own "
            "implementation of the MatRIS architecture)" % meta.get("source", "?")),
    }
    arch_cfg = {"cutoff": cfg["pairwise_cutoff"], "cutoff_3body": cfg["three_body_cutoff"],
                "num_layers": 2 * cfg["num_layers"]}
    md = model_metadata("MatRIS", arch_cfg, ELEMENTS, dtype_name,
                        state_dict_checksum(scripted), extra)
    save_model(scripted, out, md)
    reloaded, _ = load_model(out)
    from potentials.common.evaluate import energy_forces
    # the check frame (dense water) may have more bonds per atom than a small
    # max_bonds_3body allows: the check raises the limit of both models it compares
    model.max_slots = max(model.max_slots, 64)
    reloaded.max_slots = max(int(reloaded.max_slots), 64)
    args = _check_frame(cfg["pairwise_cutoff"], cfg["three_body_cutoff"], dtype)
    e0, f0 = energy_forces(model, *args)
    e1, f1 = energy_forces(reloaded, *args)
    tol = 1e-10 if dtype == torch.float64 else 1e-4
    if not (torch.allclose(e0, e1, rtol=tol, atol=tol) and torch.allclose(f0, f1, rtol=tol,
                                                                           atol=tol)):
        raise ConvertError("%s: the reloaded model differs from the built one" % out)
    if ignored:
        print("convert: not converted (other heads): %s" % ", ".join(
            sorted({n.split(".")[0] for n in ignored})))
    print("convert: wrote %s (%s, %d blocks, cutoffs %g / %g A, %d elements)"
          % (out, dtype_name, cfg["num_layers"], cfg["pairwise_cutoff"],
             cfg["three_body_cutoff"], len(ELEMENTS)))
    return md


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoint")
    ap.add_argument("out")
    ap.add_argument("--dtype", default="float64")
    ap.add_argument("--matris-python", default=None)
    ap.add_argument("--neutral", default=None, help="keep step 1's npz here")
    ap.add_argument("--description", default=None)
    ap.add_argument("--max-bonds-3body", type=int, default=48,
                    help="most bonds shorter than the three-body cutoff at one atom (the slots "
                         "a bond's two ends exchange partial sums by; default 48)")
    a = ap.parse_args(argv)
    try:
        convert(a.checkpoint, a.out, a.dtype, a.matris_python, a.neutral, a.description,
                a.max_bonds_3body)
    except ConvertError as exc:
        print("convert: error: %s" % exc, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
