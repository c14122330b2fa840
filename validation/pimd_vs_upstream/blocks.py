"""Block averages with a decorrelation check, and LAMMPS thermo parsing, for
validation/pimd_vs_upstream (analyze.py, examples.py), on the harness's parsers and block
means (scripts/aisci_run.py)."""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "scripts"))
from aisci_run import block_means, mean_stderr, thermo_runs  # noqa: E402


def read_thermo(path):
    """All thermo rows of a LAMMPS log (every run): dict column -> numpy array; when a
    run has other columns than the one before it, the runs from there on."""
    kept = []
    for run in thermo_runs(path):
        if kept and list(kept[-1]) != list(run):
            kept = []    # another run with other columns: keep the last one
        kept.append(run)
    if not kept:
        return {}
    cols = {h: np.concatenate([np.asarray(r[h], dtype=float) for r in kept]) for h in kept[0]}
    return cols if len(cols["Step"]) else {}


def block_stats(x, nblocks):
    """Mean, standard error from nblocks block means, and the lag-1 autocorrelation of
    the block means (near 0 when the blocks are uncorrelated)."""
    if len(x) // nblocks < 1 or nblocks < 2:
        return float("nan"), float("nan"), float("nan")
    b = np.array(block_means(x, nblocks=nblocks))
    mean, se = mean_stderr(b)
    d = b - mean
    r1 = float((d[:-1] * d[1:]).sum() / (d * d).sum()) if (d * d).sum() > 0 else 0.0
    return mean, se, r1


def decorrelated(x, nblocks):
    """(mean, se, r1, ok): the standard error from nblocks blocks, and whether it has
    converged: the error from half as many (twice as long) blocks is not larger than
    1.5x (the block length exceeds the correlation time) and |r1| < 2/sqrt(nblocks)."""
    m, se, r1 = block_stats(x, nblocks)
    _, se2, _ = block_stats(x, max(2, nblocks // 2))
    ok = (se2 <= 1.5 * se) and abs(r1) < 2.0 / math.sqrt(nblocks)
    return m, se, r1, ok


def zscore(a, sa, b, sb):
    s = math.sqrt(sa * sa + sb * sb)
    return (a - b) / s if s > 0 else float("inf")
