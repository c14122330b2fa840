"""DPLR on DeePMD-kit's Wannier data (issue 17): our DW model and DeePMD-kit's dipole model
on the same frames and CPU budget, then our short-range model on the SR labels.

Usage (from anywhere; resumable: rerun after a stop and it continues where it was)::

    /usr/bin/python3 validation/dplr_water/run.py [--dw-budget 200] [--sr-budget 480]
        [--stage all|dw_ours|dw_deepmd|sr|export]

Data: ../shared/deepmd-kit/dplr-water/train/data (30 frames of 128 waters, 384 atoms,
16.42 A box; atomic_dipole.npy = r_WC - r_O of each O, A). Split: a permutation of the 30
frames with seed 0, the last 6 are the test set (24 train frames = 3072 O vectors and
27648 force components; 6 test frames = 768 vectors: a small set, the errors below carry
the sampling noise of 6 frames from one trajectory).

Stages (each is skipped once its result file exists; the trainings checkpoint and resume):

dw_ours    potentials/dw/train.py --data (cutoff 4 A, float64, 1 thread), --dw-budget CPU
           seconds of the whole process and its children;
dw_deepmd  DeePMD-kit's dipole model with its example input (examples/water/dplr/train/
           dw.json, committed here as deepmd_dw.json; changed: paths, numb_steps, disp and
           save frequencies): a calibration run (not counted) measures setup and CPU per
           step, numb_steps is set so that setup + steps end at --dw-budget; decay_steps
           stays the example's 5000, which DeePMD-kit replaces by its default (100 when
           numb_steps / 10 > 100, else numb_steps // 100 + 1) as it does for the example's
           2000 steps, so that the learning rate still goes from start_lr 1e-2 to stop_lr
           1e-7 at the last step. One thread (OMP/DP_*_PARALLELISM 1, NUM_WORKERS 0, no
           GPU); CPU of the process and its children from /proc while it runs and from
           wait4 at its end; `dp --pt train --restart` after a stop. Then `dp --pt freeze`
           and the RMSE of its displacements on the 6 test frames, computed with DeePMD-kit's
           own DeepDipole in its venv (same metric as ours: RMS over the x, y, z components
           of the 768 O vectors), plus `dp --pt test`'s log;
sr         SR labels with our DW model (potentials/dplr/deepmd_labels.py: the dipole_charge
           convention of DeePMD-kit, charges O +6, H +1, WC -8, beta 0.4 1/A), then our
           matris-style model on them with potentials/common/train.py (float32, batch 1, 1 thread,
           --sr-budget CPU seconds including setup, checkpointed);
export     potentials/models/water_dplr_dft_dw.pt and water_dplr_dft_sr.pt with metadata
           (data, split, budget, test errors, dplr_beta), and results/summary.json.

Work files: $AISCI_RUNS/dplr_water (default ~/.cache/aisci-runs/dplr_water); logs and
result JSON files: validation/dplr_water/results/.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.relpath(os.path.normpath(os.path.join(SOURCE, "..", "shared", "deepmd-kit",
                                                     "dplr-water", "train", "data")), SOURCE)
PEERS = os.environ.get("AISCI_PEERS", os.path.expanduser("~/.cache/aisci-peers"))
RUNS = os.path.join(os.environ.get("AISCI_RUNS", os.path.expanduser("~/.cache/aisci-runs")),
                    "dplr_water")
RESULTS = os.path.join(HERE, "results")
MODELS = os.path.join(SOURCE, "potentials", "models")
PY = "/usr/bin/python3"
N_TEST, SPLIT_SEED = 6, 0
sys.path.insert(0, os.path.dirname(HERE))
from cpu_budget import (ONE_THREAD, dp_bin, lcurve_rows, load_json, log,  # noqa: E402
                        run_watched, save_json)
DW_OURS_ARGS = ["--cutoff", "4.0", "--hidden", "32", "--batch", "4", "--lr", "3e-3"]
SR_ARGS = ["--arch", "matris", "--dtype", "float32", "--batch", "1", "--lr", "3e-3",
           "--lr-final", "1e-4", "--epochs", "100000", "--curve-frames", "6",
           "--curve-every", "60"]


def run_logged(cmd, cwd, logpath, env=None):
    with open(logpath, "a") as out:
        out.write("\n### %s: %s\n" % (time.strftime("%Y-%m-%d %H:%M:%S"), " ".join(cmd)))
        out.flush()
        r = subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                           env=dict(os.environ, **ONE_THREAD, **(env or {})))
    if r.returncode != 0:
        raise RuntimeError("%s exited with %d (log %s); rerun to resume"
                           % (" ".join(cmd[:4]), r.returncode, logpath))


# ------------------------------------------------------------------ DW, ours
def stage_dw_ours(budget):
    work = os.path.join(RUNS, "dw_ours")
    os.makedirs(work, exist_ok=True)
    result = os.path.join(RESULTS, "dw_ours.json")
    if os.path.exists(result):
        return load_json(result)
    out = os.path.join(work, "dw.pt")
    logpath = os.path.join(RESULTS, "dw_ours.log")
    run_logged([PY, "-m", "potentials.dw.train", out, "--data", DATA, "--n-test", str(N_TEST),
                "--split-seed", str(SPLIT_SEED), "--time-budget", str(budget), "--checkpoint",
                os.path.join(work, "dw.ckpt"), "--checkpoint-every", "30"] + DW_OURS_ARGS,
               SOURCE, logpath)
    with open(logpath) as f:
        text = f.read()
    m = re.findall(r"RMSE train ([0-9.e+-]+) A, test ([0-9.e+-]+) A \(zero model on the test "
                   r"frames: ([0-9.e+-]+) A\), (\d+) epochs, (\d+) steps, ([0-9.]+) CPU s", text)
    if not m:
        raise RuntimeError("no RMSE line in %s" % logpath)
    tr, te, zero, epochs, steps, cpu = m[-1]
    res = {"code": "ours (potentials/dw, DWModel cutoff 4 A, hidden 32, float64)",
           "budget_cpu_s": budget, "cpu_s": float(cpu), "steps": int(steps),
           "epochs": int(epochs), "train_rmse_A": float(tr), "test_rmse_A": float(te),
           "zero_model_test_rmse_A": float(zero), "model": out}
    save_json(result, res)
    return res


# ------------------------------------------------------------------ DW, DeePMD-kit
def write_dipole_systems(work):
    """train/ and test/ DeePMD systems (coord, box, atomic_dipole) of the split frames.
    atomic_dipole is written for every atom (nframes x 3 natoms, zeros on H): DeePMD-kit's
    PyTorch backend wants that layout; with the example's selected-atom layout (nframes x
    3 n_O, the TensorFlow backend's) `dp --pt train` 3.2.0 stops in its output statistics
    with "shape '[2, 3]' is invalid for input of size 2"."""
    sys.path.insert(0, SOURCE)
    import numpy as np
    from potentials.dw.train import split_deepmd
    src = os.path.join(SOURCE, DATA)
    sets = os.path.join(src, "set.000")
    n = np.load(os.path.join(sets, "coord.npy")).shape[0]
    train_idx, test_idx = split_deepmd(n, N_TEST, SPLIT_SEED)
    for name, idx in (("train", train_idx), ("test", test_idx)):
        d = os.path.join(work, "data", name)
        os.makedirs(os.path.join(d, "set.000"), exist_ok=True)
        for f in ("type.raw", "type_map.raw"):
            shutil.copy(os.path.join(src, f), d)
        for f in ("coord", "box"):
            a = np.load(os.path.join(sets, f + ".npy"))
            np.save(os.path.join(d, "set.000", f + ".npy"), a[idx])
        types = np.loadtxt(os.path.join(src, "type.raw"), dtype=int)
        a = np.load(os.path.join(sets, "atomic_dipole.npy"))[idx].reshape(len(idx), -1, 3)
        full = np.zeros((len(idx), len(types), 3))
        full[:, types == 0] = a
        np.save(os.path.join(d, "set.000", "atomic_dipole.npy"), full.reshape(len(idx), -1))
    return train_idx.tolist(), test_idx.tolist()


def dp_input(workdir, numb_steps, disp, save):
    with open(os.path.join(HERE, "deepmd_dw.json")) as f:
        conf = json.load(f)
    tr = conf["training"]
    tr["training_data"]["systems"] = [os.path.join(RUNS, "dw_deepmd", "data", "train")]
    tr["numb_steps"] = int(numb_steps)
    tr["disp_freq"] = int(disp)
    tr["save_freq"] = int(save)
    path = os.path.join(workdir, "input.json")
    save_json(path, conf)
    return path


EVAL_DEEPDIPOLE = r"""
import sys, json, numpy as np
from deepmd.infer.deep_dipole import DeepDipole
m = DeepDipole(sys.argv[1])
d = sys.argv[2]
types = np.loadtxt(d + "/type.raw", dtype=int)
c = np.load(d + "/set.000/coord.npy"); b = np.load(d + "/set.000/box.npy")
t = np.load(d + "/set.000/atomic_dipole.npy").reshape(len(c), -1, 3)
p = m.eval(c, b, types, atomic=True)
p = np.asarray(p).reshape(len(c), -1, 3)
if p.shape[1] == len(types):
    p = p[:, types == 0]
if t.shape[1] == len(types):
    t = t[:, types == 0]
print(json.dumps({"test_rmse_A": float(np.sqrt(np.mean((p - t) ** 2))),
                  "zero_model_test_rmse_A": float(np.sqrt(np.mean(t ** 2))),
                  "vectors": int(t.shape[0] * t.shape[1])}))
"""


def stage_dw_deepmd(budget):
    result = os.path.join(RESULTS, "dw_deepmd.json")
    if os.path.exists(result):
        return load_json(result)
    dp = dp_bin()
    work = os.path.join(RUNS, "dw_deepmd")
    os.makedirs(work, exist_ok=True)
    state_path = os.path.join(work, "runner.json")
    state = load_json(state_path, {})
    if "split" not in state:
        state["split"] = write_dipole_systems(work)
        save_json(state_path, state)
    if "calib" not in state:
        cdir = os.path.join(work, "calib")
        shutil.rmtree(cdir, ignore_errors=True)
        os.makedirs(cdir)
        inp = dp_input(cdir, 40, 5, 10 ** 6)
        seen = []

        def poll_c(st):
            rows = lcurve_rows(os.path.join(cdir, "lcurve.out"))
            if rows and (not seen or seen[-1][1] != rows[-1][0]):
                seen.append((st["cpu"], rows[-1][0]))
        rc, seg, _ = run_watched([dp, "--pt", "train", inp], cdir,
                                 os.path.join(RESULTS, "dw_deepmd_calib.log"), 0.0, 0, {},
                                 os.path.join(cdir, "runner.json"), poll_c)
        if rc != 0 or len(seen) < 3:
            raise RuntimeError("DeePMD-kit calibration failed (rc %s, %d lcurve points)"
                               % (rc, len(seen)))
        # the first point is at step 0 (before any step); use the points after it
        per_step = (seen[-1][0] - seen[1][0]) / (seen[-1][1] - seen[1][1])
        setup = max(0.0, seen[1][0] - per_step * seen[1][1])
        state["calib"] = {"cpu_per_step": per_step, "setup_cpu": setup, "total_cpu": seg,
                          "points": seen}
        n = max(100, int((budget - setup) / per_step))
        state.update(numb_steps=n, disp=max(1, n // 40), save=max(1, int(30.0 / per_step)),
                     cpu=0.0, segments=[], map=[])
        save_json(state_path, state)
        log("DeePMD-kit dipole: %.3f CPU s per step, %.1f s setup: numb_steps %d"
            % (per_step, setup, n))
    tdir = os.path.join(work, "train")
    os.makedirs(tdir, exist_ok=True)
    while not state.get("trained"):
        inp = dp_input(tdir, state["numb_steps"], state["disp"], state["save"])
        ckpt = os.path.join(tdir, "model.ckpt.pt")
        cmd = [dp, "--pt", "train", inp]
        if os.path.exists(ckpt):
            cmd += ["--restart", ckpt]
        elif state["segments"]:  # stopped before its first checkpoint: count anew
            state["cpu"], state["segments"], state["map"] = 0.0, [], []

        def poll(st):
            rows = lcurve_rows(os.path.join(tdir, "lcurve.out"))
            if rows and (not st["map"] or st["map"][-1][1] != rows[-1][0]):
                st["map"].append((st["cpu"], rows[-1][0]))
        rc, seg, stopped = run_watched(cmd, tdir, os.path.join(RESULTS, "dw_deepmd_train.log"),
                                       state["cpu"], budget, state, state_path, poll)
        state["segments"].append({"rc": rc, "cpu": seg, "restart": "--restart" in cmd})
        if rc == 0 or stopped:
            state["trained"], state["stopped_by_watchdog"] = True, stopped
        save_json(state_path, state)
        if not state.get("trained"):
            raise RuntimeError("dp train exited with %d; rerun to resume" % rc)
    frozen = os.path.join(work, "frozen_dw.pth")
    if not os.path.exists(frozen):
        run_logged([dp, "--pt", "freeze", "-o", frozen], tdir,
                   os.path.join(RESULTS, "dw_deepmd_freeze.log"))
    test_sys = os.path.join(work, "data", "test")
    subprocess.run([dp, "--pt", "test", "-m", frozen, "-s", test_sys, "-n", "1000"], cwd=work,
                   stdout=open(os.path.join(RESULTS, "dw_deepmd_dptest.log"), "w"),
                   stderr=subprocess.STDOUT, env=dict(os.environ, **ONE_THREAD))
    py = os.path.join(os.path.dirname(dp), "python")
    r = subprocess.run([py, "-c", EVAL_DEEPDIPOLE, frozen, test_sys], capture_output=True,
                       text=True, env=dict(os.environ, **ONE_THREAD))
    if r.returncode != 0:
        raise RuntimeError("DeepDipole evaluation failed: %s" % r.stderr[-1500:])
    ev = json.loads(r.stdout.strip().splitlines()[-1])
    rows = lcurve_rows(os.path.join(tdir, "lcurve.out"))
    res = {"code": "DeePMD-kit %s, dp --pt train, its dw.json (se_e2_a rcut 6, dipole fitting)"
                   % subprocess.run([dp, "--version"], capture_output=True,
                                    text=True).stdout.strip().splitlines()[-1],
           "budget_cpu_s": budget, "cpu_s": round(state["cpu"], 1),
           "numb_steps": state["numb_steps"], "steps": int(rows[-1][0]) if rows else None,
           "stopped_by_watchdog": state.get("stopped_by_watchdog"),
           "calibration": {k: state["calib"][k] for k in ("cpu_per_step", "setup_cpu")},
           "segments": state["segments"], "split": state["split"], **ev}
    save_json(result, res)
    return res


# ------------------------------------------------------------------ SR
def dw_model_file():
    """Our DW model: the dw_ours stage's work file, or (on a machine where that cache is
    gone) the shipped potentials/models/water_dplr_dft_dw.pt, which the export stage copied
    from it unchanged."""
    work = os.path.join(RUNS, "dw_ours", "dw.pt")
    return work if os.path.exists(work) else os.path.join(MODELS, "water_dplr_dft_dw.pt")


def stage_sr(budget, name="sr"):
    """SR labels and training; `name` keys the result JSON, logs, curve and work folder
    (sr: the first, 360-s model; sr3600: the one-CPU-hour model)."""
    result = os.path.join(RESULTS, name + ".json")
    if os.path.exists(result):
        return load_json(result)
    work = os.path.join(RUNS, name)
    os.makedirs(work, exist_ok=True)
    dw = dw_model_file()
    labels = os.path.join(work, "labels")
    if not os.path.exists(os.path.join(labels, "summary.json")):
        run_logged([PY, "-m", "potentials.dplr.deepmd_labels", "--data", DATA, "--dw", dw,
                    "--out", labels, "--n-test", str(N_TEST), "--split-seed", str(SPLIT_SEED)],
                   SOURCE, os.path.join(RESULTS, name + "_labels.log"))
    ckpt = os.path.join(work, "sr.ckpt")
    if not os.path.exists(ckpt):
        run_logged([PY, "-m", "potentials.common.train"] + SR_ARGS +
                   ["--data", os.path.join(labels, "train"), "--test-data",
                    os.path.join(labels, "test"), "--out", ckpt, "--time-budget", str(budget),
                    "--budget-includes-setup", "--checkpoint", os.path.join(work, "state.pt"),
                    "--checkpoint-every", "60", "--curve",
                    os.path.join(RESULTS, name + "_curve.csv")],
                   SOURCE, os.path.join(RESULTS, name + "_train.log"))
    import torch
    c = torch.load(ckpt, map_location="cpu")
    res = {"name": name, "budget_cpu_s": budget, "labels": load_json(os.path.join(labels, "summary.json")),
           **c["metrics"]}
    save_json(result, res)
    return res


# ------------------------------------------------------------------ export
def stage_export(dw_res, sr_res, dpres):
    sys.path.insert(0, SOURCE)
    import torch
    from potentials.common.export import export_checkpoint
    from potentials.dplr.deepmd_labels import BETA, SYS_CHARGE, WC_CHARGE
    dw_out = os.path.join(MODELS, "water_dplr_dft_dw.pt")
    if os.path.abspath(dw_model_file()) != os.path.abspath(dw_out):
        shutil.copy(dw_model_file(), dw_out)
    ckpt = os.path.join(RUNS, sr_res.get("name", "sr"), "sr.ckpt")
    c = torch.load(ckpt, map_location="cpu")
    m = c["metrics"]
    m["dplr_beta"] = BETA
    m["dplr_charges"] = "O %g H %g WC %g" % (SYS_CHARGE["O"], SYS_CHARGE["H"], WC_CHARGE)
    m["dplr_dw_model"] = "water_dplr_dft_dw.pt"
    m["data"] = DATA
    m["split"] = ("30 frames permuted with seed 0, test = last 6 (frames %s), train = the other "
                  "24" % ",".join(map(str, sr_res["labels"]["test"])))
    m["budget_cpu_s"] = "%g (process + children, 1 thread, setup included)" % sr_res["budget_cpu_s"]
    if sr_res.get("stopped_at_cpu_s"):
        m["budget_cpu_s"] += "; stopped at %.1f (%s)" % (sr_res["stopped_at_cpu_s"],
                                                       sr_res.get("stop_reason", ""))
    c["data"] = DATA
    tmp = os.path.join(RUNS, sr_res.get("name", "sr"), "sr_export.ckpt")
    torch.save(c, tmp)
    desc = ("DPLR short-range water model (USER-AISCI potentials/dplr), matris-style, trained on "
            "DeePMD-kit's dplr-water data (30 frames, 24 train) minus the Gaussian "
            "electrostatics (beta %g 1/A) of O %+g, H %+g and a WC %+g at r_O + d of "
            "water_dplr_dft_dw.pt; use with fix dplr + kspace_style pppm/dplr, kspace_modify "
            "gewald %g" % (BETA, SYS_CHARGE["O"], SYS_CHARGE["H"], WC_CHARGE, BETA))
    export_checkpoint(tmp, os.path.join(MODELS, "water_dplr_dft_sr.pt"), "float64", desc)
    summary = {"data": DATA, "frames": 30, "train_frames": 24, "test_frames": 6,
               "dw_ours": dw_res, "dw_deepmd": dpres, "sr": sr_res}
    save_json(os.path.join(RESULTS, "summary.json"), summary)
    return summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dw-budget", type=float, default=200.0)
    ap.add_argument("--sr-budget", type=float, default=480.0)
    ap.add_argument("--sr-name", default="sr",
                    help="name of the SR run (result JSON, logs, curve, work folder): sr is "
                         "the first 360-s model, sr3600 the one-CPU-hour one")
    ap.add_argument("--stage", default="all",
                    choices=("all", "dw_ours", "dw_deepmd", "sr", "export"))
    args = ap.parse_args()
    os.makedirs(RESULTS, exist_ok=True)
    os.makedirs(RUNS, exist_ok=True)
    dw = dp = sr = None
    todo = [n for n, stages in (("DW ours", ("all", "dw_ours", "sr", "export")),
                                ("SR", ("all", "sr", "export")),
                                ("DW DeePMD-kit", ("all", "dw_deepmd", "export")),
                                ("export", ("all", "export"))) if args.stage in stages]

    def announce(name):
        log("stage %d of %d: %s (a stage done before is read from results/)" % (
            todo.index(name) + 1, len(todo), name))

    if args.stage in ("all", "dw_ours", "sr", "export"):
        announce("DW ours")
        dw = stage_dw_ours(args.dw_budget)
        log("DW ours: test RMSE %.4e A (%s CPU s)" % (dw["test_rmse_A"], dw["cpu_s"]))
    if args.stage in ("all", "sr", "export"):
        announce("SR")
        sr = stage_sr(args.sr_budget, args.sr_name)
        log("SR: test RMSE E %s meV/atom, F %s meV/A" % (sr["test_rmse_e_mev_per_atom"],
                                                        sr["test_rmse_f_mev_per_angstrom"]))
    if args.stage in ("all", "dw_deepmd", "export"):
        announce("DW DeePMD-kit")
        dp = stage_dw_deepmd(args.dw_budget)
        log("DW DeePMD-kit: test RMSE %.4e A (%s CPU s)" % (dp["test_rmse_A"], dp.get("cpu_s", dp.get("cpu_s_at_checkpoint"))))
    if args.stage in ("all", "export"):
        announce("export")
        s = stage_export(dw, sr, dp)
        log("exported; %s" % os.path.join(RESULTS, "summary.json"))
        del s


if __name__ == "__main__":
    main()
