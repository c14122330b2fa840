"""Periodic boxes of water molecules and LAMMPS data files (atom_style full).

Reusable by other parts of the project (tests, benchmarks, examples)::

    from potentials.data.water_box import make_water_box, write_lammps_data
    box = make_water_box(n_molecules=64, density=1.0, seed=7)
    write_lammps_data("data.water", box)

Conventions:
- Lengths in Angstrom, density in g/cm^3, cubic orthogonal box [0, L)^3.
- LAMMPS atom type 1 = O, type 2 = H (so model type_names "O H" map one to one).
- Atoms are stored molecule by molecule: O, H, H. Molecule ids start at 1.
- Charges of q-TIP4P/F: qH on each H and -2 qH on O, which pair lj/cut/tip4p/long
  moves to the massless M site on the bisector (the oxygen itself carries none in
  the physics), so the box is neutral.
- One bond type (O-H) and one angle type (H-O-H, the oxygen in the middle).

Placement: molecule centres on the smallest SC/BCC/FCC lattice that holds all molecules
(a random subset of its sites), a small random jitter and a uniformly random
orientation per molecule. A molecule whose atoms come closer than ``min_dist`` to an
already placed atom (minimum image) is re-oriented; the generator raises ValueError
when it cannot place a molecule after ``max_tries`` orientations. Boxes of 20k
molecules take a few seconds.
"""

import math

import numpy as np

AVOGADRO = 6.02214076e23
MASS_O = 15.9994
MASS_H = 1.008
MASS_WATER = MASS_O + 2.0 * MASS_H  # g/mol

# q-TIP4P/F equilibrium geometry (Habershon, Markland, Manolopoulos 2009).
R_OH_EQ = 0.9419  # Angstrom
THETA_HOH_EQ = 107.4  # degrees
Q_H = 0.5564  # e


def box_length(n_molecules, density):
    """Edge (Angstrom) of the cubic box holding n_molecules at density (g/cm^3)."""
    if n_molecules <= 0:
        raise ValueError("n_molecules must be > 0, got %r" % (n_molecules,))
    if not density > 0.0:
        raise ValueError("density must be > 0 g/cm^3, got %r" % (density,))
    volume_cm3 = n_molecules * MASS_WATER / AVOGADRO / density
    return (volume_cm3 * 1e24) ** (1.0 / 3.0)


def _random_rotation(rng):
    """Uniform random rotation matrix (from a random unit quaternion)."""
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def molecule_template(r_oh=R_OH_EQ, theta_deg=THETA_HOH_EQ):
    """Body-frame coordinates (3 x 3: O, H, H) of one molecule, O at the origin."""
    half = math.radians(theta_deg) / 2.0
    return np.array(
        [
            [0.0, 0.0, 0.0],
            [r_oh * math.sin(half), 0.0, r_oh * math.cos(half)],
            [-r_oh * math.sin(half), 0.0, r_oh * math.cos(half)],
        ]
    )


def _lattice_sites(n_molecules, length):
    """Fractional sites of the smallest SC, BCC or FCC lattice with >= n_molecules sites.

    Returns (sites [M, 3] in units of the box edge, nearest-neighbour distance / edge).
    """
    bases = {
        "sc": (np.zeros((1, 3)), 1.0),
        "bcc": (np.array([[0, 0, 0], [0.5, 0.5, 0.5]]), math.sqrt(3.0) / 2.0),
        "fcc": (np.array([[0, 0, 0], [0.5, 0.5, 0], [0.5, 0, 0.5], [0, 0.5, 0.5]]),
                1.0 / math.sqrt(2.0)),
    }
    best = None
    for basis, nn in bases.values():
        k = max(1, int(math.ceil((n_molecules / len(basis)) ** (1.0 / 3.0) - 1e-9)))
        count = len(basis) * k ** 3
        if best is None or count < best[0]:
            best = (count, basis, k, nn)
    _, basis, k, nn = best
    cells = np.array([(a, b, c) for a in range(k) for b in range(k) for c in range(k)], float)
    sites = (cells[:, None, :] + basis[None, :, :] + 0.25).reshape(-1, 3) / k
    return sites, nn / k


class _AtomGrid:
    """Placed atoms binned on a periodic grid of cells no smaller than min_dist."""

    def __init__(self, length, min_dist):
        self.length = length
        self.nbin = max(1, int(length // min_dist))
        self.bins = {}

    def _key(self, x):
        return tuple((np.floor(x / self.length * self.nbin).astype(int)) % self.nbin)

    def min_distance(self, xyz):
        near = []
        for x in xyz:
            b = np.array(self._key(x))
            for d in np.ndindex(3, 3, 3):
                near.extend(self.bins.get(tuple((b + np.array(d) - 1) % self.nbin), ()))
        if not near:
            return np.inf
        d = xyz[:, None, :] - np.array(near)[None, :, :]
        d -= self.length * np.round(d / self.length)
        return float(np.sqrt((d * d).sum(-1)).min())

    def add(self, xyz):
        for x in xyz:
            self.bins.setdefault(self._key(x), []).append(x.copy())


def make_water_box(n_molecules, density=1.0, seed=0, min_dist=1.5, jitter=0.15,
                   max_tries=500):
    """Random water box.

    Molecule centres sit on the smallest simple-cubic, body-centred or face-centred
    cubic lattice with at least n_molecules sites (a random subset when larger), with a
    small random jitter and a uniformly random orientation; orientations are redrawn
    until no atom is closer than min_dist to an atom of another molecule.

    Returns a dict with keys ``positions`` (3n x 3, Angstrom), ``types`` (3n, 1 = O,
    2 = H), ``molecule`` (3n, from 1), ``charges`` (3n, e), ``box`` (3,, edge lengths),
    ``bonds`` (2n x 2, 0-based atom indices O-H), ``angles`` (n x 3, H-O-H, 0-based).
    Cost is linear in n_molecules (a periodic cell grid for the overlap check).
    """
    rng = np.random.default_rng(seed)
    length = box_length(n_molecules, density)
    sites, _ = _lattice_sites(n_molecules, length)
    chosen = rng.permutation(len(sites))[:n_molecules]
    template = molecule_template()
    centre = template.mean(axis=0)
    grid = _AtomGrid(length, min_dist)
    positions = np.zeros((3 * n_molecules, 3))
    for m, site in enumerate(chosen):
        origin = sites[site] * length
        for _ in range(max_tries):
            rot = _random_rotation(rng)
            shift = rng.uniform(-jitter, jitter, size=3)
            xyz = np.mod((template - centre) @ rot.T + origin + shift, length)
            if grid.min_distance(xyz) >= min_dist:
                break
        else:
            raise ValueError(
                "make_water_box: could not place molecule %d of %d at density %g "
                "(min_dist %g A); lower the density or min_dist" % (m + 1, n_molecules,
                                                                  density, min_dist))
        positions[3 * m:3 * m + 3] = xyz
        grid.add(xyz)
    types = np.tile([1, 2, 2], n_molecules)
    molecule = np.repeat(np.arange(1, n_molecules + 1), 3)
    # The O atom carries -2 qH: LAMMPS tip4p styles move it to the M site.
    charges = np.tile([-2.0 * Q_H, Q_H, Q_H], n_molecules)
    base = 3 * np.arange(n_molecules)
    bonds = np.stack([np.repeat(base, 2), (base[:, None] + np.array([1, 2])).ravel()], axis=1)
    angles = np.stack([base + 1, base, base + 2], axis=1)
    return {
        "positions": positions,
        "types": types,
        "molecule": molecule,
        "charges": charges,
        "box": np.array([length, length, length]),
        "bonds": bonds,
        "angles": angles,
    }


def make_water_slab(n_molecules, density=1.0, height_factor=2.0, seed=0, bottom=0.5, **kwargs):
    """Water slab with vacuum: the water of make_water_box (same arguments) in a box of the
    same width whose height is height_factor times the water's edge L.

    Molecules are made whole along z (each H next to its O), then shifted so that the
    lowest atom is at z = ``bottom``: the water fills the lower part of the box, and the
    vacuum above it (periodic along z too) is about (height_factor - 1) L thick.
    Under a decomposition into slices along z (LAMMPS ``processors 1 1 *``) the upper
    ranks own vacuum only: the inhomogeneous case of docs/ringlb.md. Returns the dict of
    make_water_box with ``box`` = (L, L, height_factor L).
    """
    if not height_factor > 1.0:
        raise ValueError("height_factor must be > 1, got %r" % (height_factor,))
    box = make_water_box(n_molecules, density=density, seed=seed, **kwargs)
    length = box["box"][0]
    pos = box["positions"].copy()
    oxygen_z = np.repeat(pos[0::3, 2], 3)
    pos[:, 2] -= length * np.round((pos[:, 2] - oxygen_z) / length)
    pos[:, 2] += bottom - pos[:, 2].min()
    box["positions"] = pos
    box["box"] = np.array([length, length, height_factor * length])
    return box


def write_lammps_data(path, box, title="water box (USER-AISCI potentials/data/water_box.py)"):
    """Write ``box`` (from make_water_box) as a LAMMPS data file for atom_style full.

    Optional keys for boxes with more atom or bond types (e.g. the DPLR water of
    potentials/dplr/water_wc.py): ``masses`` (one per atom type, default O, H) and
    ``bond_types`` (one per bond, from 1; default all 1)."""
    pos = box["positions"]
    n = len(pos)
    lx, ly, lz = box["box"]
    masses = box.get("masses", [MASS_O, MASS_H])
    bond_types = box.get("bond_types", np.ones(len(box["bonds"]), dtype=int))
    lines = [
        "# " + title,
        "",
        "%d atoms" % n,
        "%d bonds" % len(box["bonds"]),
        "%d angles" % len(box["angles"]),
        "%d atom types" % len(masses),
        "%d bond types" % max(1, int(np.max(bond_types, initial=1))),
        "1 angle types",
        "",
        "0.0 %.10f xlo xhi" % lx,
        "0.0 %.10f ylo yhi" % ly,
        "0.0 %.10f zlo zhi" % lz,
        "",
        "Masses",
        "",
    ]
    lines += ["%d %.4f" % (t + 1, m) for t, m in enumerate(masses)]
    lines += [
        "",
        "Atoms # full",
        "",
    ]
    for i in range(n):
        lines.append("%d %d %d %.6f %.10f %.10f %.10f" % (
            i + 1, box["molecule"][i], box["types"][i], box["charges"][i],
            pos[i, 0], pos[i, 1], pos[i, 2]))
    lines += ["", "Bonds", ""]
    for k, (a, b) in enumerate(box["bonds"]):
        lines.append("%d %d %d %d" % (k + 1, bond_types[k], a + 1, b + 1))
    lines += ["", "Angles", ""]
    for k, (a, b, c) in enumerate(box["angles"]):
        lines.append("%d 1 %d %d %d" % (k + 1, a + 1, b + 1, c + 1))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Write a random water box as a LAMMPS data file")
    parser.add_argument("output")
    parser.add_argument("--molecules", type=int, default=64)
    parser.add_argument("--density", type=float, default=1.0, help="g/cm^3")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    write_lammps_data(args.output, make_water_box(args.molecules, args.density, args.seed))
