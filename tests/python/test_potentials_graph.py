#!/usr/bin/python3
"""potentials/: Python graph builder against a brute-force reference, water boxes, and
the shipped q-TIP4P/F data set. Run with /usr/bin/python3 (numpy, torch)."""

import itertools
import os
import sys

import numpy as np

SRC = os.environ.get("AISCI_SOURCE_DIR",
                     os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, SRC)

from potentials.common.graph import build_graph, build_triplets  # noqa: E402
from potentials.data.water_box import box_length, make_water_box, write_lammps_data  # noqa: E402

FAILURES = []


def check(cond, what):
    print("%s: %s" % ("ok" if cond else "FAIL", what))
    if not cond:
        FAILURES.append(what)


def reference_edges(x, cell, cutoff, nmax=3):
    """Every (i, j, S) with |x_j - x_i + S.cell| < cutoff, by brute force over images."""
    out = []
    for i in range(len(x)):
        for j in range(len(x)):
            for s in itertools.product(range(-nmax, nmax + 1), repeat=3):
                if i == j and s == (0, 0, 0):
                    continue
                v = x[j] - x[i] + np.array(s) @ cell
                if np.linalg.norm(v) < cutoff:
                    out.append((i, j) + s)
    return sorted(out)


def test_graph_vs_reference():
    rng = np.random.default_rng(4)
    cell = np.array([[5.0, 0.0, 0.0], [1.3, 4.6, 0.0], [-0.7, 0.9, 4.2]])  # triclinic
    x = rng.uniform(-2.0, 8.0, size=(9, 3))  # atoms outside the cell too
    for method in ("brute", "kdtree"):
        # scipy (Debian's python3-scipy, installed by scripts/install-deps.sh) is
        # needed for method kdtree: an ImportError fails the test
        g = build_graph(x, cell, 4.9, 2.6, method=method)
        got = [tuple(int(v) for v in (i, j) + tuple(s))
               for i, j, s in zip(g["edge_index"][0], g["edge_index"][1], g["shifts"])]
        ref = reference_edges(x, cell, 4.9)
        check(got == ref, "%s: edges (%d) equal the brute-force reference (%d), same order"
              % (method, len(got), len(ref)))
        vec = x[g["edge_index"][1]] - x[g["edge_index"][0]] + g["shifts"] @ cell
        check(np.allclose(vec, g["edge_vec"], atol=1e-12), "%s: edge_vec = x_j - x_i + S.cell" % method)
        r = np.linalg.norm(g["edge_vec"], axis=1)
        tr = g["triplets"]
        ok = all(g["edge_index"][0, a] == g["edge_index"][0, b] and a != b
                 and r[a] < 2.6 and r[b] < 2.6 for a, b in tr)
        pairs = set(map(tuple, tr))
        ok_sym = all((b, a) in pairs for a, b in pairs)
        nshort = np.bincount(g["edge_index"][0][r < 2.6], minlength=len(x))
        check(ok and ok_sym and len(tr) == int((nshort * (nshort - 1)).sum()),
              "%s: %d triplets, same centre, both orders, all pairs of short edges"
              % (method, len(tr)))
        check(len(tr) == 0 or np.all(np.diff(tr[:, 0] * 10**6 + tr[:, 1]) > 0),
              "%s: triplets sorted by e1 then e2" % method)


def test_tiny_cell():
    # cutoff larger than the cell: an atom is its own neighbour through images
    cell = np.eye(3) * 2.0
    x = np.array([[0.1, 0.2, 0.3]])
    g = build_graph(x, cell, 3.0)
    ref = reference_edges(x, cell, 3.0)
    check(len(g["edge_vec"]) == len(ref) == 18, "1 atom in a 2 A cube, cutoff 3: 6 + 12 image edges")


def test_triplets_helper():
    tr = build_triplets(np.array([0, 0, 0, 1, 1]), np.array([1.0, 2.0, 5.0, 1.0, 1.5]), 3.0)
    check(tr.tolist() == [[0, 1], [1, 0], [3, 4], [4, 3]], "build_triplets on a hand example")


def test_water_box(tmp):
    for n, rho in ((32, 1.1), (64, 0.9), (100, 1.0)):
        box = make_water_box(n, rho, seed=5)
        x = box["positions"]
        L = box["box"][0]
        check(abs(L - box_length(n, rho)) < 1e-12 and np.all((x >= 0) & (x < L)),
              "box of %d molecules at %.1f g/cm3: edge %.3f A, atoms inside" % (n, rho, L))
        d = x[:, None, :] - x[None, :, :]
        d -= L * np.round(d / L)
        r = np.sqrt((d * d).sum(-1))
        mol = box["molecule"]
        inter = r[mol[:, None] != mol[None, :]]
        oh = np.linalg.norm(x[box["bonds"][:, 1]] - x[box["bonds"][:, 0]]
                            - L * np.round((x[box["bonds"][:, 1]] - x[box["bonds"][:, 0]]) / L), axis=1)
        check(inter.min() >= 1.5 and np.allclose(oh, 0.9419),
              "no intermolecular pair closer than 1.5 A (min %.2f), O-H 0.9419 A" % inter.min())
        check(abs(box["charges"].sum()) < 1e-12, "box is neutral")
    path = os.path.join(tmp, "data.water")
    write_lammps_data(path, make_water_box(8, 1.0, seed=1))
    text = open(path).read()
    check("24 atoms" in text and "16 bonds" in text and "8 angles" in text and "Atoms # full" in text,
          "LAMMPS data file has atoms, bonds, angles, atom_style full")


def test_dataset():
    path = os.path.join(SRC, "potentials", "data", "water_qtip4pf.npz")
    d = np.load(path)
    n = d["n_atoms"]
    check(len(n) >= 100 and d["positions"].shape == (n.sum(), 3) and d["forces"].shape == (n.sum(), 3),
          "data set: %d frames, %d atoms" % (len(n), n.sum()))
    net = max(np.abs(d["forces"][o:o + k].sum(0)).max() for o, k in zip(d["offsets"], n))
    check(net < 1e-6, "net force per frame ~ 0 (max %.1e eV/A)" % net)
    e_mol = d["energies"] / (n / 3)
    check(np.all((e_mol > -0.6) & (e_mol < -0.2)),
          "potential energy per molecule in [-0.6, -0.2] eV (%.3f..%.3f)" % (e_mol.min(), e_mol.max()))
    check(set(np.unique(d["types"])) == {0, 1} and np.all(d["types"][d["offsets"]] == 0),
          "types are 0 = O, 1 = H, frames start with O")


if __name__ == "__main__":
    import tempfile

    test_graph_vs_reference()
    test_tiny_cell()
    test_triplets_helper()
    with tempfile.TemporaryDirectory() as tmp:
        test_water_box(tmp)
    test_dataset()
    if FAILURES:
        print("%d check(s) failed" % len(FAILURES))
        sys.exit(1)
    print("all checks passed")
