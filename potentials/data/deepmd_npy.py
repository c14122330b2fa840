"""Read DeePMD-kit's npy system format (a folder per system) into our frame dicts.

A system folder holds ``type.raw`` (one integer type per atom, the same for every frame),
optionally ``type_map.raw`` (one element name per type index), and one or more ``set.*``
folders with per-frame arrays:

========================  ======================  ==================================
file                      shape                   meaning (DeePMD-kit's units)
========================  ======================  ==================================
coord.npy                 nframes x 3N            positions, Angstrom
box.npy                   nframes x 9             cell vectors a, b, c as rows, Angstrom
energy.npy                nframes (or x 1)        total energy, eV
force.npy                 nframes x 3N            forces, eV/Angstrom
virial.npy (optional)     nframes x 9             virial, eV
atomic_dipole.npy (opt.)  nframes x 3M            per selected atom (e.g. the M oxygens)
========================  ======================  ==================================

``load_system`` returns frames in the form the trainers use (potentials/common/evaluate.py:
positions, forces, types, cell, energy, run_id, temperature, density), plus ``virial`` and
``atomic_dipole`` when present. Every malformed input raises DeepmdDataError naming the
file and what is wrong with it: a missing file, a shape that does not match the atom or
frame count, a non-floating or non-finite array, a type name the caller does not know.
"""

import glob
import os

import numpy as np

__all__ = ["DeepmdDataError", "load_system", "load_systems", "read_type_map"]

# mass in g/mol for the density of a frame (water systems only need O and H; others give nan)
_MASS = {"H": 1.00794, "O": 15.9994, "C": 12.0107, "N": 14.0067, "Na": 22.98977, "Cl": 35.453}


class DeepmdDataError(ValueError):
    """A DeePMD npy system that cannot be read; the message names the file and the reason."""


def _read_raw(path, kind):
    try:
        with open(path) as f:
            words = f.read().split()
    except OSError as e:
        raise DeepmdDataError("%s: cannot read (%s)" % (path, e.strerror)) from None
    if not words:
        raise DeepmdDataError("%s: empty file (expected %s)" % (path, kind))
    return words


def read_type_map(system):
    """Element names of a system's type indices (type_map.raw), or None without that file."""
    path = os.path.join(system, "type_map.raw")
    if not os.path.exists(path):
        return None
    return _read_raw(path, "one element name per type")


def _load_array(path, nframes, ncols, name, required):
    if not os.path.exists(path):
        if required:
            raise DeepmdDataError("%s: missing (needed: %s)" % (path, name))
        return None
    try:
        a = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise DeepmdDataError("%s: not a readable .npy array (%s)" % (path, e)) from None
    if not np.issubdtype(a.dtype, np.floating):
        raise DeepmdDataError("%s: dtype %s, expected float32 or float64" % (path, a.dtype))
    if nframes is None:
        nframes = a.shape[0] if a.ndim >= 1 else -1
    if a.ndim >= 1 and a.shape[0] == nframes and a.size == nframes * ncols:
        a = a.reshape(nframes, ncols)
    else:
        raise DeepmdDataError("%s: shape %s, expected %d frames x %d values (%s)" % (
            path, a.shape, nframes, ncols, name))
    if not np.all(np.isfinite(a)):
        bad = int(np.argwhere(~np.isfinite(a))[0][0])
        raise DeepmdDataError("%s: non-finite value in frame %d" % (path, bad))
    return a.astype(np.float64)


def load_system(system, type_names=None, require=("energy", "force"), sel_types=None,
                run_id=0):
    """Frames of one DeePMD npy system folder.

    type_names: our type order (e.g. ["O", "H"]); atoms are renumbered through the system's
        type_map.raw (required then). None keeps the system's own type indices.
    require: which of "energy", "force", "virial", "atomic_dipole" must be present.
    sel_types: our type indices that carry an atomic_dipole (default: those of "O" when
        type_names has it); needed only to check atomic_dipole's shape.
    """
    if not os.path.isdir(system):
        raise DeepmdDataError("%s: not a directory (expected a DeePMD npy system: type.raw "
                              "and set.*/)" % system)
    words = _read_raw(os.path.join(system, "type.raw"), "one integer type per atom")
    try:
        types = np.array([int(w) for w in words], dtype=np.int64)
    except ValueError:
        raise DeepmdDataError("%s: not integers (%r ...)" % (
            os.path.join(system, "type.raw"), " ".join(words[:4]))) from None
    if types.min() < 0:
        raise DeepmdDataError("%s: negative type %d" % (os.path.join(system, "type.raw"),
                                                       int(types.min())))
    names = read_type_map(system)
    if names is not None and types.max() >= len(names):
        raise DeepmdDataError("%s: type %d has no name in type_map.raw (%d names)" % (
            os.path.join(system, "type.raw"), int(types.max()), len(names)))
    if type_names is not None:
        if names is None:
            raise DeepmdDataError("%s: missing (needed to map the system's types to %s)" % (
                os.path.join(system, "type_map.raw"), " ".join(type_names)))
        lookup = {}
        for k, name in enumerate(names):
            if k in set(types.tolist()) and name not in type_names:
                raise DeepmdDataError("%s: element %s of the system is not among the model's "
                                      "types %s" % (os.path.join(system, "type_map.raw"), name,
                                                    " ".join(type_names)))
            if name in type_names:
                lookup[k] = type_names.index(name)
        types = np.array([lookup[t] for t in types], dtype=np.int64)
        if sel_types is None and "O" in type_names:
            sel_types = [type_names.index("O")]
    labels = type_names if type_names is not None else names
    mass = sum(_MASS.get(labels[t], np.nan) for t in types) if labels else float("nan")
    n = len(types)
    nsel = int(np.isin(types, sel_types).sum()) if sel_types is not None else None
    sets = sorted(d for d in glob.glob(os.path.join(system, "set.*")) if os.path.isdir(d))
    if not sets:
        raise DeepmdDataError("%s: no set.* folder" % system)
    frames = []
    for s in sets:
        coord = _load_array(os.path.join(s, "coord.npy"), None, 3 * n,
                            "coordinates of %d atoms" % n, True)
        nf = coord.shape[0]
        box = _load_array(os.path.join(s, "box.npy"), nf, 9, "cell vectors", True)
        energy = _load_array(os.path.join(s, "energy.npy"), nf, 1, "energy", "energy" in require)
        force = _load_array(os.path.join(s, "force.npy"), nf, 3 * n, "forces of %d atoms" % n,
                            "force" in require)
        virial = _load_array(os.path.join(s, "virial.npy"), nf, 9, "virial", "virial" in require)
        dip_path = os.path.join(s, "atomic_dipole.npy")
        dipole = None
        # an atomic_dipole.npy nobody asked for is read only when its atoms are known
        if "atomic_dipole" in require or (os.path.exists(dip_path) and nsel is not None):
            if nsel is None:
                raise DeepmdDataError("%s: the selected types of atomic_dipole are unknown "
                                      "(give sel_types)" % dip_path)
            dipole = _load_array(dip_path, nf, 3 * nsel, "dipole of %d selected atoms" % nsel,
                                 True)
        for f in range(nf):
            cell = box[f].reshape(3, 3)
            vol = abs(np.linalg.det(cell))
            if not vol > 0:
                raise DeepmdDataError("%s: degenerate cell in frame %d" % (
                    os.path.join(s, "box.npy"), f))
            frame = {
                "positions": coord[f].reshape(n, 3),
                "forces": force[f].reshape(n, 3) if force is not None else None,
                "types": types,
                "cell": cell,
                "energy": float(energy[f, 0]) if energy is not None else float("nan"),
                "run_id": int(run_id),
                "temperature": float("nan"),
                "density": mass / 0.602214076 / vol,  # g/cm^3
            }
            if virial is not None:
                frame["virial"] = virial[f].reshape(3, 3)
            if dipole is not None:
                frame["atomic_dipole"] = dipole[f].reshape(nsel, 3)
            frames.append(frame)
    return frames


def load_systems(systems, **kwargs):
    """Frames of several systems, in order; run_id is the system's position in the list."""
    frames = []
    for k, s in enumerate(systems):
        frames.extend(load_system(s, run_id=k, **kwargs))
    return frames
