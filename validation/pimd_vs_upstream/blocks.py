"""Block averages with a decorrelation check, and LAMMPS thermo parsing, for
validation/pimd_vs_upstream (analyze.py, examples.py)."""
import math

import numpy as np


def read_thermo(path):
    """All thermo rows of a LAMMPS log (every run): dict column -> numpy array."""
    header, rows, cols = None, [], None
    with open(path) as f:
        for line in f:
            w = line.split()
            if w and w[0] == "Step":
                header = w
                if cols is not None and cols != w:
                    rows = []    # another run with other columns: keep the last one
                cols = w
                continue
            if header is None:
                continue
            if len(w) != len(header):
                if line.startswith("Loop time"):
                    header = None
                continue
            try:
                rows.append([float(v) for v in w])
            except ValueError:
                header = None
    if not rows:
        return {}
    arr = np.array(rows)
    return {h: arr[:, k] for k, h in enumerate(cols)}


def block_stats(x, nblocks):
    """Mean, standard error from nblocks block means, and the lag-1 autocorrelation of
    the block means (near 0 when the blocks are uncorrelated)."""
    x = np.asarray(x, dtype=float)
    n = len(x) // nblocks
    if n < 1 or nblocks < 2:
        return float("nan"), float("nan"), float("nan")
    b = x[: n * nblocks].reshape(nblocks, n).mean(axis=1)
    mean = float(b.mean())
    se = float(b.std(ddof=1) / math.sqrt(nblocks))
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
