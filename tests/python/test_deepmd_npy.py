"""potentials/data/deepmd_npy: DeePMD npy systems read into our frames.

Success: the DFT water of ../shared/deepmd-kit (data_0-3: 400 frames, 64 O + 128 H) and
DPLR water (30 frames, atomic_dipole of the 128 O) read with the values of the raw arrays,
types renumbered through type_map.raw (also in the reversed order H O); a small system
written here in float32 and float64, with (nframes, N, 3) coordinates, reads the same.
Errors (each must raise DeepmdDataError naming the file and the reason): not a folder, no
type.raw, non-integer types, no set.*, missing coord.npy / force.npy, a coordinate count
that does not match type.raw, a frame count that differs between files, an integer
array, a NaN, an element the model does not have, type names without type_map.raw, a
wrong atomic_dipole size, a degenerate cell."""
import os
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lammps"))  # test helpers
import aisci_testlib as t  # noqa: E402
import deepmd_systems as ds  # noqa: E402

sys.path.insert(0, t.SOURCE_DIR)
from potentials.data.deepmd_npy import DeepmdDataError, load_system, load_systems  # noqa: E402


def write_system(path, n_o=2, n_h=4, nframes=3, dtype=np.float64, coord_3d=False, seed=1):
    rng = np.random.default_rng(seed)
    os.makedirs(os.path.join(path, "set.000"))
    types = [0] * n_o + [1] * n_h
    with open(os.path.join(path, "type.raw"), "w") as f:
        f.write("\n".join(str(x) for x in types) + "\n")
    with open(os.path.join(path, "type_map.raw"), "w") as f:
        f.write("O\nH\n")
    n = n_o + n_h
    coord = rng.uniform(0, 5, (nframes, n, 3)).astype(dtype)
    np.save(os.path.join(path, "set.000", "coord.npy"), coord if coord_3d else coord.reshape(nframes, -1))
    np.save(os.path.join(path, "set.000", "box.npy"), np.tile(np.eye(3).ravel() * 5.0, (nframes, 1)).astype(dtype))
    np.save(os.path.join(path, "set.000", "energy.npy"), rng.normal(size=nframes).astype(dtype))
    np.save(os.path.join(path, "set.000", "force.npy"), rng.normal(size=(nframes, 3 * n)).astype(dtype))
    np.save(os.path.join(path, "set.000", "atomic_dipole.npy"), rng.normal(size=(nframes, 3 * n_o)).astype(dtype))
    return coord.reshape(nframes, n, 3).astype(np.float64)


def expect_error(what, fn, *needles):
    try:
        fn()
    except DeepmdDataError as e:
        msg = str(e)
        ok = all(s in msg for s in needles)
        t.check(ok, "%s: message names %s: '%s'" % (what, needles, msg))
        return
    except Exception as e:  # noqa: BLE001
        t.check(False, "%s: raised %s (%s), not DeepmdDataError" % (what, type(e).__name__, e))
        return
    t.check(False, "%s: accepted" % what)


tmp = tempfile.mkdtemp(prefix="aisci_npy_")
try:
    # --- small systems written here: dtypes and coordinate layouts
    for dtype, layout in ((np.float32, False), (np.float64, False), (np.float64, True)):
        p = os.path.join(tmp, "ok_%s_%d" % (np.dtype(dtype).name, layout))
        ref = write_system(p, dtype=dtype, coord_3d=layout)
        fr = load_system(p, type_names=["O", "H"], require=("energy", "force", "atomic_dipole"))
        t.check(len(fr) == 3 and fr[0]["positions"].shape == (6, 3)
                and np.array_equal(fr[2]["positions"], ref[2])
                and fr[0]["atomic_dipole"].shape == (2, 3) and fr[0]["positions"].dtype == np.float64,
                "%s, 3-d coord %s: 3 frames, positions and dipoles as written" % (np.dtype(dtype).name, layout))
    p = os.path.join(tmp, "ok_float64_0")
    fr_hO = load_system(p, type_names=["H", "O"])
    t.check(list(fr_hO[0]["types"]) == [1, 1, 0, 0, 0, 0], "type names H O renumber the types")
    fr_raw = load_system(p, type_names=None)
    t.check(list(fr_raw[0]["types"]) == [0, 0, 1, 1, 1, 1], "no type names: the system's own types")

    def broken(name, edit):
        q = os.path.join(tmp, name)
        write_system(q)
        edit(q)
        return q

    s0 = os.path.join("set.000", "")
    expect_error("not a folder", lambda: load_system(os.path.join(tmp, "nowhere")), "nowhere", "not a directory")
    q = broken("no_type", lambda q: os.remove(os.path.join(q, "type.raw")))
    expect_error("no type.raw", lambda: load_system(q), "type.raw", "cannot read")
    q = broken("bad_type", lambda q: open(os.path.join(q, "type.raw"), "w").write("0 1 x\n"))
    expect_error("non-integer types", lambda: load_system(q), "type.raw", "not integers")
    q = broken("no_set", lambda q: shutil.rmtree(os.path.join(q, "set.000")))
    expect_error("no set.*", lambda: load_system(q), "no set.* folder")
    q = broken("no_coord", lambda q: os.remove(os.path.join(q, s0 + "coord.npy")))
    expect_error("missing coord.npy", lambda: load_system(q), "coord.npy", "missing")
    q = broken("no_force", lambda q: os.remove(os.path.join(q, s0 + "force.npy")))
    expect_error("missing force.npy", lambda: load_system(q), "force.npy", "missing")
    t.check(len(load_system(q, require=("energy",))) == 3, "force.npy not required: reads without it")
    q = broken("short_coord", lambda q: np.save(os.path.join(q, s0 + "coord.npy"), np.zeros((3, 15))))
    expect_error("coordinates of 5 atoms for 6 types", lambda: load_system(q), "coord.npy", "(3, 15)", "6 atoms")
    q = broken("frames", lambda q: np.save(os.path.join(q, s0 + "energy.npy"), np.zeros(2)))
    expect_error("2 energies for 3 frames", lambda: load_system(q), "energy.npy", "3 frames")
    q = broken("int", lambda q: np.save(os.path.join(q, s0 + "box.npy"), np.zeros((3, 9), dtype=np.int32)))
    expect_error("integer box", lambda: load_system(q), "box.npy", "dtype int32")

    def put_nan(q):
        f = np.load(os.path.join(q, s0 + "force.npy"))
        f[1, 4] = np.nan
        np.save(os.path.join(q, s0 + "force.npy"), f)
    q = broken("nan", put_nan)
    expect_error("NaN force", lambda: load_system(q), "force.npy", "non-finite", "frame 1")
    q = broken("element", lambda q: None)
    expect_error("element not in the model", lambda: load_system(q, type_names=["O", "C"]), "type_map.raw", "element H")
    q = broken("no_map", lambda q: os.remove(os.path.join(q, "type_map.raw")))
    expect_error("type names without type_map.raw", lambda: load_system(q, type_names=["O", "H"]),
                 "type_map.raw", "missing")
    q = broken("dipole", lambda q: np.save(os.path.join(q, s0 + "atomic_dipole.npy"), np.zeros((3, 18))))
    expect_error("dipole for every atom, not the O", lambda: load_system(q, type_names=["O", "H"]),
                 "atomic_dipole.npy", "2 selected atoms")
    q = broken("cell", lambda q: np.save(os.path.join(q, s0 + "box.npy"), np.zeros((3, 9))))
    expect_error("zero cell", lambda: load_system(q), "box.npy", "degenerate cell", "frame 0")

    # --- DeePMD-kit's own data (skipped as a whole when ../shared is absent)
    if not os.path.isdir(ds.WATER_DFT):
        t.skip("DeePMD-kit's data not found at %s (../shared/deepmd-kit next to the source, "
               "or AISCI_DEEPMD_DIR); the synthetic part passed %d checks" % (ds.WATER_DFT, t._passed))
    systems = [os.path.join(ds.WATER_DFT, "data_%d" % k) for k in range(4)]
    frames = load_systems(systems, type_names=["O", "H"])
    raw_f = np.load(os.path.join(systems[3], "set.000", "force.npy"))
    raw_e = np.load(os.path.join(systems[3], "set.000", "energy.npy"))
    t.check(len(frames) == 400 and all(f["positions"].shape == (192, 3) for f in frames),
            "water-dft: 400 frames of 192 atoms")
    t.check(sum(int((f["types"] == 0).sum()) for f in frames[:1]) == 64, "64 O per frame")
    t.check(np.array_equal(frames[320]["forces"].ravel(), raw_f[0].astype(np.float64))
            and frames[399]["energy"] == float(raw_e[79]), "data_3 forces and energies as stored")
    t.check([f["run_id"] for f in frames[::80]] == [0, 1, 1, 2, 3], "run_id = system index "
            "(data_1 has two sets of 80 frames)")
    t.check(all(0.9 < f["density"] < 1.1 for f in frames), "density of liquid water (g/cm^3)")
    dplr = load_system(os.path.join(ds.SHARED, "dplr-water", "train", "data"), type_names=["O", "H"],
                       require=("energy", "force", "virial", "atomic_dipole"))
    t.check(len(dplr) == 30 and dplr[0]["atomic_dipole"].shape == (128, 3) and dplr[0]["virial"].shape == (3, 3),
            "dplr-water: 30 frames, 128 dipoles, virial 3x3")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
t.summary("test_deepmd_npy")
