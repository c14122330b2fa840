"""Atom graphs for training and checking the potentials (numpy), matching contract v1.

The conventions are the ones of the C core (src/USER-AISCI/core/include/aisci/graph.h):

- an edge e = (i, j, S) has centre i (row 0 of edge_index), neighbour j (row 1), and
  edge_vec[e] = x_j - x_i + S . cell with |edge_vec[e]| < cutoff (strict); every
  directed pair appears, i == j only through a nonzero image shift S;
- edges are sorted by i, then j, then S lexicographically;
- a triplet (e1, e2) pairs two different edges with the same centre, both shorter than
  cutoff_3body (strict); both orders appear; sorted by e1 then e2.

Positions are used as given (not wrapped): edge_vec is exactly x_j - x_i + S . cell.
Cost: brute force over image shifts and atom pairs, in chunks of centres (fine for the
few-hundred-atom training frames). For large boxes, scipy's cKDTree is used when it is
importable (Debian's python3-scipy), which makes the build O(N log N).
"""

import numpy as np


def _image_range(cell, pbc, cutoff):
    """Largest |S_d| needed along each lattice direction for the given cutoff."""
    cell = np.asarray(cell, dtype=float)
    volume = abs(np.linalg.det(cell))
    n = np.zeros(3, dtype=int)
    for d in range(3):
        if pbc[d]:
            cross = np.cross(cell[(d + 1) % 3], cell[(d + 2) % 3])
            height = volume / np.linalg.norm(cross)
            n[d] = int(np.ceil(cutoff / height))
    return n


def _pairs_bruteforce(xw, shifts_cart, cutoff, chunk):
    """(i, j, shift index) of all pairs of wrapped positions with distance < cutoff."""
    n = len(xw)
    out_i, out_j, out_s = [], [], []
    for start in range(0, n, chunk):
        xi = xw[start:start + chunk]
        for s, sc in enumerate(shifts_cart):
            d = xw[None, :, :] + sc - xi[:, None, :]
            r2 = (d * d).sum(-1)
            ii, jj = np.nonzero(r2 < cutoff * cutoff)
            out_i.append(ii + start)
            out_j.append(jj)
            out_s.append(np.full(len(ii), s))
    return np.concatenate(out_i), np.concatenate(out_j), np.concatenate(out_s)


def _pairs_kdtree(xw, shifts_cart, cutoff):
    from scipy.spatial import cKDTree

    n = len(xw)
    images = (xw[None, :, :] + shifts_cart[:, None, :]).reshape(-1, 3)
    tree_c = cKDTree(xw)
    tree_i = cKDTree(images)
    pairs = tree_c.sparse_distance_matrix(tree_i, cutoff, output_type="ndarray")
    k = pairs["j"]
    return pairs["i"].astype(np.int64), (k % n).astype(np.int64), (k // n).astype(np.int64)


def build_graph(positions, cell, cutoff, cutoff_3body=0.0, pbc=(1, 1, 1), method="auto",
                chunk=256):
    """Directed edges (and triplets) of a periodic frame.

    Parameters: positions [N, 3] (Angstrom), cell [3, 3] lattice vectors as rows, cutoff
    and cutoff_3body (0 for no triplets), pbc flags per lattice direction, method
    "auto" | "brute" | "kdtree".

    Returns a dict: ``edge_index`` [2, E] int64, ``edge_vec`` [E, 3] float64,
    ``shifts`` [E, 3] int64 (S), ``triplets`` [T, 2] int64 (shape [0, 2] without
    cutoff_3body).
    """
    x = np.asarray(positions, dtype=float)
    cell = np.asarray(cell, dtype=float)
    if x.ndim != 2 or x.shape[1] != 3:
        raise ValueError("positions must be N x 3, got shape %s" % (x.shape,))
    if not (np.isfinite(cutoff) and cutoff > 0):
        raise ValueError("cutoff must be finite and > 0, got %r" % (cutoff,))
    if not (0 <= cutoff_3body <= cutoff):
        raise ValueError("cutoff_3body must be in [0, cutoff], got %r" % (cutoff_3body,))
    pbc = np.array([1 if p else 0 for p in pbc])
    n = len(x)
    empty = {
        "edge_index": np.zeros((2, 0), dtype=np.int64),
        "edge_vec": np.zeros((0, 3)),
        "shifts": np.zeros((0, 3), dtype=np.int64),
        "triplets": np.zeros((0, 2), dtype=np.int64),
    }
    if n == 0:
        return empty
    # Wrap along periodic directions: x = xw + w . cell with integer w.
    frac = x @ np.linalg.inv(cell)
    wrap = np.where(pbc[None, :] == 1, np.floor(frac), 0.0)
    xw = (frac - wrap) @ cell
    nimg = _image_range(cell, pbc, cutoff)
    grid = np.array(np.meshgrid(*[np.arange(-k, k + 1) for k in nimg], indexing="ij"))
    shifts_w = grid.reshape(3, -1).T  # image shifts between wrapped positions
    shifts_cart = shifts_w @ cell
    if method == "auto":
        method = "kdtree" if n * len(shifts_w) > 20000 else "brute"
        if method == "kdtree":
            try:
                import scipy.spatial  # noqa: F401
            except ImportError:
                method = "brute"
    if method == "kdtree":
        ii, jj, ss = _pairs_kdtree(xw, shifts_cart, cutoff)
    elif method == "brute":
        ii, jj, ss = _pairs_bruteforce(xw, shifts_cart, cutoff, chunk)
    else:
        raise ValueError("method must be auto, brute or kdtree, got %r" % (method,))
    # x = xw + w.cell, so x_j - x_i + S.cell = xw_j - xw_i + S'.cell for S = S' - w_j + w_i.
    shift = shifts_w[ss] - wrap[jj].astype(np.int64) + wrap[ii].astype(np.int64)
    shift = shift.astype(np.int64)
    vec = x[jj] - x[ii] + shift @ cell
    r = np.sqrt((vec * vec).sum(-1))
    keep = (r < cutoff) & ~((ii == jj) & np.all(shift == 0, axis=1))
    ii, jj, shift, vec, r = ii[keep], jj[keep], shift[keep], vec[keep], r[keep]
    order = np.lexsort((shift[:, 2], shift[:, 1], shift[:, 0], jj, ii))
    ii, jj, shift, vec, r = ii[order], jj[order], shift[order], vec[order], r[order]
    out = {
        "edge_index": np.stack([ii, jj]).astype(np.int64),
        "edge_vec": vec,
        "shifts": shift,
        "triplets": build_triplets(ii, r, cutoff_3body) if cutoff_3body > 0 else empty["triplets"],
    }
    return out


def build_triplets(centres, lengths, cutoff_3body):
    """All ordered pairs (e1, e2), e1 != e2, of edges with the same centre and length
    < cutoff_3body; ``centres`` must be sorted (as build_graph returns them)."""
    short = np.nonzero(np.asarray(lengths) < cutoff_3body)[0]
    if len(short) == 0:
        return np.zeros((0, 2), dtype=np.int64)
    c = np.asarray(centres)[short]
    if np.any(np.diff(c) < 0):
        raise ValueError("build_triplets: edges must be sorted by centre")
    starts = np.concatenate([[0], np.nonzero(np.diff(c))[0] + 1])
    counts = np.diff(np.concatenate([starts, [len(c)]]))
    group = np.repeat(np.arange(len(starts)), counts)
    reps = counts[group]  # each short edge pairs with every edge of its group
    e1 = np.repeat(np.arange(len(c)), reps)
    first = np.repeat(starts[group], reps)
    offset = np.arange(len(e1)) - np.repeat(np.cumsum(reps) - reps, reps)
    e2 = first + offset
    keep = e1 != e2
    return np.stack([short[e1[keep]], short[e2[keep]]], axis=1).astype(np.int64)


def forces_from_edge_grad(grad, edge_index, n_atoms):
    """Atomic forces from dE/d(edge_vec) (numpy or torch): F_i += g_e, F_j -= g_e."""
    import torch

    if isinstance(grad, torch.Tensor):
        f = torch.zeros((n_atoms, 3), dtype=grad.dtype, device=grad.device)
        f.index_add_(0, edge_index[0], grad)
        f.index_add_(0, edge_index[1], -grad)
        return f
    f = np.zeros((n_atoms, 3))
    np.add.at(f, edge_index[0], grad)
    np.add.at(f, edge_index[1], -grad)
    return f
