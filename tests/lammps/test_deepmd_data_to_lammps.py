"""From DeePMD-kit npy data to a model LAMMPS runs: the commands of docs/potentials.md
("From DeePMD-kit data to a LAMMPS run"), run as written there but on small copies of
DeePMD-kit's DFT water (8 frames of data_0 to train on, 4 frames of data_3 to test on)
and with a tiny budget (--epochs 2: 4 steps; --time-budget 600 never binds, so the run
ends by its step count on any machine):
- potentials.common.train exits 0, prints from its first lines what it does (data, graphs,
  training plan), announces and reports its final evaluation, and writes the checkpoint;
- potentials.common.export writes a model file; potentials.common.evaluate on the test
  system prints finite errors for its 4 frames;
- lmp-aisci loads the file with pair_style aisci (pair_coeff * * model.pt O H) on frame 0
  of data_3: the energy of the model evaluated in Python (relative 1e-9), within 1 eV/atom
  of the DFT energy (eV, not another unit: after 4 steps the model is far from trained),
  finite forces; 10 steps of NVE keep every atom.
Skips (77) without ../shared/deepmd-kit or without the torch wrapper."""
import math
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aisci_nn_toy as toy  # noqa: E402
import aisci_testlib as T  # noqa: E402
import deepmd_systems as ds  # noqa: E402

DATA0 = os.path.join(ds.WATER_DFT, "data_0")
DATA3 = os.path.join(ds.WATER_DFT, "data_3")
ds.need(DATA0, DATA3)
toy.skip_without_torch_wrapper()
PY = "/usr/bin/python3"


def subset(src, dst, nframes):
    """A DeePMD npy system of the first nframes of src's set.000."""
    os.makedirs(os.path.join(dst, "set.000"))
    for name in ("type.raw", "type_map.raw"):
        shutil.copy(os.path.join(src, name), dst)
    for name in ("coord", "box", "energy", "force"):
        a = np.load(os.path.join(src, "set.000", name + ".npy"))
        np.save(os.path.join(dst, "set.000", name + ".npy"), a[:nframes])


def run(cmd, work, what, timeout=600):
    p = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=timeout,
                       env=dict(os.environ, PYTHONPATH=T.SOURCE_DIR, OMP_NUM_THREADS="1"))
    T.check(p.returncode == 0, "%s: rc %d\n%s%s" % (what, p.returncode, p.stdout[-3000:],
                                                     p.stderr[-3000:]))
    return p


def python_energy(path):
    """Energy of frame 0 of data_3 by the exported model in Python (float64)."""
    sys.path.insert(0, T.SOURCE_DIR)
    import torch as th  # Debian's torch, as for training
    from potentials.common.evaluate import energy_forces
    from potentials.common.graph import build_graph
    from potentials.common.metadata import load_model
    model, meta = load_model(path)
    x = np.load(os.path.join(DATA3, "set.000", "coord.npy"))[0].reshape(-1, 3).astype(float)
    box = np.load(os.path.join(DATA3, "set.000", "box.npy"))[0].reshape(3, 3).astype(float)
    types = np.loadtxt(os.path.join(DATA3, "type.raw"), dtype=int)
    x = np.mod(x, box[0, 0])
    g = build_graph(x, box, float(meta["cutoff"]), float(meta["cutoff_3body"]))
    e, _ = energy_forces(model, th.tensor(g["edge_vec"]), th.tensor(g["edge_index"]),
                         th.tensor(types), th.tensor(g["triplets"]))
    return float(e[0])


def main():
    work = tempfile.mkdtemp(prefix="aisci_dp2lmp_")
    d = os.path.join(work, "water-dft")
    subset(DATA0, os.path.join(d, "data_0"), 8)
    subset(DATA3, os.path.join(d, "data_3"), 4)
    # docs/potentials.md: train, export, test (budget and epochs cut for the test)
    p = run([PY, "-m", "potentials.common.train", "--arch", "equivariant", "--cutoff", "4.0",
             "--radial", "8", "--eq-channels", "24", "12", "6",
             "--data", "water-dft/data_0", "--test-data", "water-dft/data_3",
             "--out", "water_dft.ckpt", "--time-budget", "600", "--epochs", "2", "--batch", "4",
             "--threads", "1", "--progress-every", "1"], work, "train")
    out = p.stdout
    lines = out.splitlines()
    T.check(len(lines) > 2 and lines[0].startswith("train: equivariant model; reading")
            and lines[1].startswith("data: 12 frames (8 train, 4 test), 192 atoms per frame"),
            "train says what it reads first:\n" + out[:600])
    for text in ("graphs: building 12", "training: up to 4 steps (2 epochs x 2 steps of 4 frames)",
                 "training done: 4 steps", "final evaluation: float64 energies and forces of "
                 "the 8 train frames, then the 4 test frames", "  test frames:  energy RMSE",
                 "wrote water_dft.ckpt"):
        T.check(text in out, "train prints %r:\n%s" % (text, out[-2500:]))
    T.check(os.path.exists(os.path.join(work, "water_dft.ckpt")), "checkpoint written")
    run([PY, "-m", "potentials.common.export", "water_dft.ckpt", "water_dft.pt"], work, "export")
    T.check(os.path.exists(os.path.join(work, "water_dft.pt")), "model file written")
    p = run([PY, "-m", "potentials.common.evaluate", "water_dft.pt", "water-dft/data_3"], work,
            "evaluate")
    words = p.stdout.split()
    if T.check(p.stdout.startswith("all: 4 frames, energy RMSE"), "evaluate output:\n" + p.stdout):
        e, f = float(words[5]), float(words[9])
        T.check(math.isfinite(e) and math.isfinite(f) and f > 0, "finite errors %g %g" % (e, f))

    # the model in LAMMPS: frame 0 of data_3
    frame = os.path.join(work, "frame0.data")
    subprocess.run([PY, os.path.join(T.SOURCE_DIR, "examples", "deepmd_water_pimd", "make_data.py"),
                    os.path.dirname(d), "0", frame], check=True, capture_output=True)
    e_dft = float(np.load(os.path.join(DATA3, "set.000", "energy.npy"))[0])
    script = """units metal
atom_style atomic
atom_modify map yes
read_data %s
pair_style aisci
pair_coeff * * %s O H
neighbor 1.0 bin
compute fmax all reduce max fx fy fz
compute fmin all reduce min fx fy fz
thermo_style custom step pe c_fmax[1] c_fmax[2] c_fmax[3] c_fmin[1] c_fmin[2] c_fmin[3] atoms
thermo_modify format float %%.10g lost error
run 0
velocity all create 300 7 mom yes rot yes
fix 1 all nve
timestep 0.0005
run 10
""" % (frame, os.path.join(work, "water_dft.pt"))
    r = T.run_lammps(script)
    if not T.check(r.rc == 0, "lmp-aisci with the exported model: rc %d\n%s" % (r.rc, r.output[-2000:])):
        return
    th = r.thermo()
    pe = th["PotEng"][0]
    T.check(math.isfinite(pe) and abs(pe - e_dft) / 192 < 1.0,
            "energy %r eV finite, within 1 eV/atom of the DFT %r" % (pe, e_dft))
    e_py = python_energy(os.path.join(work, "water_dft.pt"))
    T.check(abs(pe - e_py) <= 1e-9 * abs(e_py),
            "lmp-aisci energy %r = the model in Python %r" % (pe, e_py))
    f = [th[k][0] for k in th if k.startswith("c_fm")]
    T.check(len(f) == 6 and all(math.isfinite(x) and abs(x) < 100 for x in f),
            "finite forces (extremes %s eV/A)" % f)
    T.check(th["Atoms"][-1] == 192 and all(math.isfinite(x) for x in th["PotEng"]),
            "10 NVE steps keep all atoms, finite energies")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
    T.summary("test_deepmd_data_to_lammps")
