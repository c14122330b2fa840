"""Step 1 of the MatRIS conversion: read a MatRIS checkpoint into a neutral file.

    <matris venv>/bin/python -m potentials.matris.read_checkpoint CHECKPOINT OUT.npz

Runs in the Python that has the ``matris`` package (scripts/install-peers.sh --only
matris). It only reads: the checkpoint's ``config`` (the constructor arguments of
``MatRIS``) and its ``state_dict`` (weights by name), and, from the matris package, the
table of constants of its spherical three-body basis (not stored in checkpoints; the
weights were trained with it). It writes one npz file: every weight as an array in its
own dtype, and ``__meta__``, a JSON text with the config, that table, the package
version and the checkpoint's name. Nothing of the matris package's code is written.

Exit status 2 with a message naming the problem for a file that is not a readable
checkpoint or not a MatRIS one (no ``config`` / ``state_dict``).
"""

import json
import os
import sys


def fail(msg):
    print("read_checkpoint: " + msg, file=sys.stderr)
    sys.exit(2)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        fail("usage: read_checkpoint CHECKPOINT OUT.npz")
    src, out = argv
    import numpy as np
    import torch

    if not os.path.isfile(src):
        fail("checkpoint '%s' does not exist" % src)
    try:
        ckpt = torch.load(src, map_location="cpu", weights_only=True)
    except Exception as exc:  # pickled objects beyond tensors and plain types
        try:
            ckpt = torch.load(src, map_location="cpu", weights_only=False)
        except Exception as exc2:
            fail("checkpoint '%s' cannot be read by torch.load (damaged or not a torch "
                 "file?): %s" % (src, str(exc2).splitlines()[0] if str(exc2) else exc))
    if not isinstance(ckpt, dict) or "config" not in ckpt or "state_dict" not in ckpt:
        keys = sorted(ckpt.keys()) if isinstance(ckpt, dict) else type(ckpt).__name__
        fail("'%s' is not a MatRIS checkpoint: expected a dict with 'config' and "
             "'state_dict' (as MatRIS.from_dict reads), found %s" % (src, keys))
    config = dict(ckpt["config"])
    state = ckpt["state_dict"]
    if not isinstance(state, dict) or not state:
        fail("'%s': its 'state_dict' is empty or not a dict of tensors" % src)
    if not any(k.startswith("interaction_block.") for k in state):
        fail("'%s' is not a MatRIS checkpoint: its state_dict has no interaction_block.* "
             "weights" % src)
    arrays = {}
    for name, value in state.items():
        if not torch.is_tensor(value):
            fail("'%s': state_dict entry '%s' is not a tensor" % (src, name))
        arrays["w/" + name] = value.detach().cpu().numpy()

    table = None
    version = "unknown"
    try:
        import importlib.metadata as md
        version = md.version("matris")
        from matris.model.basis_function import SphericalExpansion

        sh = SphericalExpansion(max_n=int(config.get("max_n", 4)), max_l=int(config.get("max_l", 4)),
                                cutoff=float(config.get("pairwise_cutoff", 6)))
        table = sh.coef.detach().cpu().numpy().astype(np.float64).tolist()
    except Exception as exc:  # no matris package: the converter uses its own table
        print("read_checkpoint: matris package not usable (%s); the spherical-basis "
              "constants of our own implementation will be used" % exc, file=sys.stderr)

    def plain(v):
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if hasattr(v, "item"):
            return v.item()
        return v

    meta = {"config": {k: plain(v) for k, v in config.items()},
            "sh_coef": table, "matris_version": version,
            "source": os.path.basename(src)}
    arrays["__meta__"] = np.array(json.dumps(meta))
    np.savez(out, **arrays)
    print("read_checkpoint: %s -> %s (%d weights, matris %s)" % (src, out, len(state), version))


if __name__ == "__main__":
    main()
