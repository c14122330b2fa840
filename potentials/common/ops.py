"""The custom operator ``torch.ops.aisci.ghost_exchange`` for Python and export.

A model exported with ghost exchange (``potentials/common/export.py --ghost-exchange``,
metadata ``ghost_exchange = 1``) calls ``torch.ops.aisci.ghost_exchange(h)`` on its atom
features between message-passing layers. Inside LAMMPS, libaisci_torch implements the
operator (src/USER-AISCI/torch/model.cpp): forward it copies the features of owned atoms
to their ghost images through LAMMPS's forward communication, backward it sums the
ghost gradients back into the owners (reverse communication). In Python there are no
ghost atoms (graphs are periodic), and the operator is the identity.

Importing this module defines the operator's schema ``ghost_exchange(Tensor features)
-> Tensor`` with that identity implementation, so that ``torch.jit.script`` can compile
models that call it and ``torch.jit.load`` can read their files. If the operator
exists already (libaisci_torch loaded in this process, e.g. through ctypes), nothing is
defined: its version is the identity too when no exchange callbacks are set.
"""

import torch
from torch import nn

_LIBRARY = None


def _defined():
    try:
        torch.ops.aisci.ghost_exchange
    except (AttributeError, RuntimeError):
        return False
    return True


def _identity(features):
    return features.clone()


def register():
    """Define aisci::ghost_exchange (identity) unless it exists; idempotent."""
    global _LIBRARY
    if _LIBRARY is not None or _defined():
        return
    lib = torch.library.Library("aisci", "DEF")
    lib.define("ghost_exchange(Tensor features) -> Tensor")
    # CompositeImplicitAutograd: autograd differentiates the implementation (clone).
    lib.impl("ghost_exchange", _identity, "CompositeImplicitAutograd")
    _LIBRARY = lib


register()


class GhostExchange(nn.Module):
    """h -> torch.ops.aisci.ghost_exchange(h) (atom features [N, C]); no parameters."""

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return torch.ops.aisci.ghost_exchange(h)
