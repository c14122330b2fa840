"""DPLR water: LAMMPS data files with one Wannier-centroid (WC) atom per molecule, and a
Python reference of the DPLR energy (short-range model + Gaussian electrostatics of
the ions and the WCs that the DW model places).

Data file layout (atom_style full, for ``fix dplr`` and ``kspace_style pppm/dplr``)::

    /usr/bin/python3 -m potentials.dplr.water_wc data.dplr --molecules 64 --seed 1

- atom types 1 = O (charge 0), 2 = H (+0.5564 e), 3 = WC (-1.1128 e, mass 1 g/mol,
  never integrated: fix dplr places it every step);
- bond types 1 = O-H, 2 = O-WC (``bond_style zero``; ``fix dplr ... bond_type 2``);
  one angle type H-O-H;
- atoms molecule by molecule: O, H, H, WC; the WC starts at the q-TIP4P/F M site
  r_M = gamma r_O + (1 - gamma)/2 (r_H1 + r_H2) (fix dplr moves it to the DW model's
  prediction at step 0 anyway).

The charges are those of q-TIP4P/F with the M-site charge on the WC, the exact DPLR
decomposition of that force field (docs/dplr.md).
"""

import argparse
import os
import sys

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from potentials.data.water_box import MASS_H, MASS_O, Q_H, make_water_box, write_lammps_data  # noqa: E402

Q_WC = -2.0 * Q_H
MASS_WC = 1.0
TYPE_O, TYPE_H, TYPE_WC = 1, 2, 3
BOND_OH, BOND_OWC = 1, 2


def add_wannier_centroids(box, gamma=0.73612):
    """Box of make_water_box (O, H, H per molecule) -> the same water with one WC atom per
    molecule after its H atoms, at the M site of the minimum-image molecule. Molecules are
    written whole (H and WC at the minimum image of their O, possibly outside the box:
    read_data wraps them and sets consistent image flags). Returns a new dict with the
    keys of make_water_box plus ``masses`` and ``bond_types``."""
    pos = box["positions"]
    n_mol = len(pos) // 3
    length = np.asarray(box["box"], dtype=float)
    o = pos[0::3]
    h1 = o + _min_image(pos[1::3] - o, length)
    h2 = o + _min_image(pos[2::3] - o, length)
    m_site = gamma * o + 0.5 * (1.0 - gamma) * (h1 + h2)
    new_pos = np.zeros((4 * n_mol, 3))
    for k, part in enumerate((o, h1, h2, m_site)):
        new_pos[k::4] = part
    base = 4 * np.arange(n_mol)
    bonds = np.concatenate([np.stack([base, base + 1], 1), np.stack([base, base + 2], 1),
                            np.stack([base, base + 3], 1)])
    bond_types = np.repeat([BOND_OH, BOND_OH, BOND_OWC], n_mol)
    order = np.argsort(np.concatenate([3 * np.arange(n_mol), 3 * np.arange(n_mol) + 1,
                                       3 * np.arange(n_mol) + 2]), kind="stable")
    return {
        "positions": new_pos,
        "types": np.tile([TYPE_O, TYPE_H, TYPE_H, TYPE_WC], n_mol),
        "molecule": np.repeat(np.arange(1, n_mol + 1), 4),
        "charges": np.tile([0.0, Q_H, Q_H, Q_WC], n_mol),
        "box": length.copy(),
        "bonds": bonds[order],
        "bond_types": bond_types[order],
        "angles": np.stack([base + 1, base, base + 2], axis=1),
        "masses": [MASS_O, MASS_H, MASS_WC],
    }


def _min_image(d, length):
    return d - length * np.round(d / length)


def make_dplr_water_box(n_molecules, density=1.0, seed=0, **kwargs):
    """make_water_box(...) with a WC atom per molecule (add_wannier_centroids)."""
    return add_wannier_centroids(make_water_box(n_molecules, density=density, seed=seed,
                                                **kwargs))


# --- Python reference of the DPLR energy (tests, examples) --------------------------------

def dw_displacements(dw_path, positions, model_types, cell):
    """d_i of every atom (zeros for non-selected types) from a DW model file, on the
    periodic graph of the atoms. model_types: indices into the model's type_names."""
    import torch

    from potentials.common.graph import build_graph
    from potentials.common.metadata import load_model

    model, meta = load_model(dw_path)
    g = build_graph(positions, cell, meta["cutoff"])
    with torch.no_grad():
        d = model(torch.tensor(g["edge_vec"]), torch.tensor(g["edge_index"]),
                  torch.tensor(np.asarray(model_types, dtype=np.int64)),
                  torch.zeros((0, 2), dtype=torch.int64))
    return d.double().numpy()


def sr_energy(sr_path, positions, model_types, cell):
    """Energy (eV) of a contract-v1 energy model on the periodic atoms."""
    import torch

    from potentials.common.evaluate import energy_forces
    from potentials.common.graph import build_graph
    from potentials.common.metadata import load_model

    model, meta = load_model(sr_path)
    rc3 = meta["cutoff_3body"] if meta["needs_triplets"] else 0.0
    g = build_graph(positions, cell, meta["cutoff"], rc3)
    dtype = torch.float64 if meta["dtype"] == "float64" else torch.float32
    energy, _ = energy_forces(model, torch.tensor(g["edge_vec"], dtype=dtype),
                              torch.tensor(g["edge_index"]),
                              torch.tensor(np.asarray(model_types, dtype=np.int64)),
                              torch.tensor(g["triplets"]).reshape(-1, 2))
    return float(energy.sum())


def dplr_reference(box, dw_path, beta, sr_path=None, qqrd2e=None):
    """DPLR energy of a box of add_wannier_centroids (any WC positions: they are replaced
    by the DW model's). Returns dict: e_sr (eV, if sr_path), e_elec (qqrd2e units, metal
    by default), wc (WC positions [n_mol, 3]), forces_elec on ions+WCs at those WCs."""
    from potentials.dplr.ewald import QQRD2E_METAL, gaussian_ewald

    qqrd2e = QQRD2E_METAL if qqrd2e is None else qqrd2e
    types = np.asarray(box["types"])
    real = types != TYPE_WC
    x = np.asarray(box["positions"])[real]
    model_types = np.where(types[real] == TYPE_O, 0, 1)
    cell = np.diag(np.asarray(box["box"], dtype=float))
    d = dw_displacements(dw_path, x, model_types, cell)
    wc = x[model_types == 0] + d[model_types == 0]
    q = np.asarray(box["charges"])
    charges = np.concatenate([q[real], np.full(len(wc), Q_WC)])
    e, f, w = gaussian_ewald(np.concatenate([x, wc]), charges, cell, beta, qqrd2e)
    out = {"e_elec": e, "wc": wc, "forces_elec": f, "virial_elec": w, "d": d}
    if sr_path:
        out["e_sr"] = sr_energy(sr_path, x, model_types, cell)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description="Write a DPLR water box (one WC atom per "
                                                 "molecule) as a LAMMPS data file")
    parser.add_argument("output")
    parser.add_argument("--molecules", type=int, default=64)
    parser.add_argument("--density", type=float, default=1.0, help="g/cm^3")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    write_lammps_data(args.output, make_dplr_water_box(args.molecules, args.density, args.seed),
                      title="DPLR water box, WC atoms of type 3 (potentials/dplr/water_wc.py)")


if __name__ == "__main__":
    main()
