#!/usr/bin/env python3
"""Ab initio water: our models and DeePMD-kit's on the same DFT frames and CPU budget.

Runs a queue of trainings, one at a time, each on ../shared/deepmd-kit/water-dft
(data_0-2 train, data_3 test), one thread, CPU time counted as the process's own plus its
children's (data-loader workers 0), then evaluates each on data_3 and writes
validation/dft_water/results/<job>.json and <job>.curve.csv (learning curve against CPU
seconds). Every job is resumable: a stop (kill, reboot, end of a session) loses at most one
checkpoint interval, and rerunning this script continues where it stopped.

Jobs (--budgets 900 3600 by default, i.e. 0.25 and 1 CPU-hour):
  ours-matris-B, ours-dpa3-B, ours-equivariant-B, ours-matris_arch-B
                               potentials/common/train.py --budget-includes-setup --checkpoint
  deepmd-se_e2_a-B             DeePMD-kit examples/water/se_e2_a/input_torch.json values
  deepmd-dpa3-B                DeePMD-kit examples/water/dpa3/input_torch.json values
For DeePMD-kit, whose schedule is in steps, a short calibration run (not counted) measures
the CPU seconds of its setup and of one step; numb_steps is then set so that setup +
steps fit the budget, and decay_steps keeps the example's ratio numb_steps / decay_steps so
that the learning rate reaches the example's stop_lr at the end of the budget. A watchdog
stops a run at 1.1 x the budget (then the last checkpoint is the result).

Usage:
  /usr/bin/python3 validation/dft_water/run_queue.py [--budgets 900 3600] [--only JOB...]
  /usr/bin/python3 validation/dft_water/run_queue.py --status
Peers: DeePMD-kit from scripts/install-peers.sh ($AISCI_PEERS/deepmd, default
~/.cache/aisci-peers). Work files (checkpoints, frozen models, full logs) go to
$AISCI_RUNS/dft_water (default ~/.cache/aisci-runs/dft_water), never into the clone.
"""

import argparse
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.normpath(os.path.join(SOURCE, "..", "shared", "deepmd-kit", "water-dft"))
RUNS = os.path.join(os.environ.get("AISCI_RUNS", os.path.expanduser("~/.cache/aisci-runs")),
                    "dft_water")
RESULTS = os.path.join(HERE, "results")
sys.path.insert(0, os.path.dirname(HERE))
from cpu_budget import (ONE_THREAD, dp_bin, lcurve_rows, load_json, log,  # noqa: E402
                        run_watched, save_json)

# our models: the settings of the shipped models (docs/potentials.md), DFT data instead
OURS = {
    "matris": ["--arch", "matris"],
    "dpa3": ["--arch", "dpa3"],
    # the settings of the shipped water_equivariant_full.pt (channels l0/l1/l2 24/12/6,
    # cutoff 4 A, 8 Bessel functions)
    "equivariant": ["--arch", "equivariant", "--cutoff", "4.0", "--radial", "8",
                    "--eq-channels", "24", "12", "6"],
    # MatRIS's own architecture (potentials/matris/arch.py) at the MatRIS-style model's
    # sizes: 2 blocks, 32 features (16 for angles), 4.5 / 3 A, 16 Bessel functions
    "matris_arch": ["--arch", "matris_arch"],
}
# DeePMD-kit inputs (ours, with the values of its examples; see the json files)
DEEPMD = {
    "se_e2_a": (os.path.join(HERE, "deepmd_se_e2_a.json"), 40, 10),   # template, calib steps, disp
    "dpa3": (os.path.join(SOURCE, "bench", "deepmd_peer", "dpa3_input.json"), 3, 1),
}
# numb_steps / decay_steps of the examples (100000 / 5000 and 1000000 / 5000)
DECAYS = {"se_e2_a": 20, "dpa3": 200}


# --------------------------------------------------------------------------- ours
def job_ours(name, arch, budget, work):
    os.makedirs(work, exist_ok=True)
    out = os.path.join(work, "model.ckpt")
    result = os.path.join(RESULTS, name + ".json")
    if not os.path.exists(out):
        cmd = [sys.executable, "-m", "potentials.common.train"] + OURS[arch] + [
            "--data"] + [os.path.join(DATA, "data_%d" % i) for i in range(3)] + [
            "--test-data", os.path.join(DATA, "data_3"), "--out", out,
            "--time-budget", str(budget), "--budget-includes-setup",
            "--checkpoint", os.path.join(work, "state.pt"), "--checkpoint-every", "60",
            "--curve", os.path.join(work, "curve.csv"), "--curve-every", str(budget / 30.0),
            "--threads", "1"]
        state = {}
        rc, _, _ = run_watched(cmd, SOURCE, os.path.join(work, "train.log"), 0.0, 0, state,
                               os.path.join(work, "runner.json"))
        if rc != 0:
            raise RuntimeError("%s: train.py exited with %d (log %s)" % (name, rc, work))
    import torch  # noqa: E402 (Debian's, as for training)
    m = torch.load(out, map_location="cpu")["metrics"]
    shutil.copy(os.path.join(work, "curve.csv"), os.path.join(RESULTS, name + ".curve.csv"))
    save_json(result, {
        "job": name, "code": "USER-AISCI potentials/common/train.py", "model": arch,
        "budget_cpu_s": budget, "cpu_s": m["train_cpu_seconds"], "steps": m["train_steps"],
        "test_frames": m["test_frames"],
        "test_rmse_e_mev_per_atom": m["test_rmse_e_mev_per_atom"],
        "test_rmse_f_mev_per_angstrom": m["test_rmse_f_mev_per_angstrom"],
        "train_rmse_f_mev_per_angstrom": m.get("train_rmse_f_mev_per_angstrom"),
        "parameters": m.get("parameters"), "work": work})
    log("%s: test E %.3f meV/atom, F %.1f meV/A after %.0f CPU s" % (
        name, m["test_rmse_e_mev_per_atom"], m["test_rmse_f_mev_per_angstrom"],
        m["train_cpu_seconds"]))


# --------------------------------------------------------------------------- DeePMD-kit
def dp_input(template, workdir, numb_steps, decay_steps, disp, save):
    with open(template) as f:
        conf = json.load(f)
    tr = conf["training"]
    tr["training_data"]["systems"] = [os.path.join(DATA, "data_%d" % i) for i in range(3)]
    tr["validation_data"]["systems"] = [os.path.join(DATA, "data_3")]
    tr["numb_steps"] = int(numb_steps)
    tr["disp_freq"] = int(disp)
    tr["save_freq"] = int(save)
    tr["stat_file"] = os.path.join(workdir, "stat.hdf5")
    conf["learning_rate"]["decay_steps"] = int(decay_steps)
    path = os.path.join(workdir, "input.json")
    save_json(path, conf)
    return path


def job_deepmd(name, kind, budget, work):
    dp = dp_bin()
    template, ncal, caldisp = DEEPMD[kind]
    os.makedirs(work, exist_ok=True)
    state_path = os.path.join(work, "runner.json")
    state = load_json(state_path, {})
    calib = state.get("calib")
    if calib is None:
        cdir = os.path.join(work, "calib")
        shutil.rmtree(cdir, ignore_errors=True)
        os.makedirs(cdir)
        inp = dp_input(template, cdir, ncal, max(1, ncal // DECAYS[kind]), caldisp, 10 ** 6)
        seen = []  # (cpu, last lcurve step)

        def poll(st):
            rows = lcurve_rows(os.path.join(cdir, "lcurve.out"))
            if rows and (not seen or seen[-1][1] != rows[-1][0]):
                seen.append((st["cpu"], rows[-1][0]))
        cst = {}
        rc, seg, _ = run_watched([dp, "--pt", "train", inp], cdir, os.path.join(work, "calib.log"),
                                 0.0, 0, cst, os.path.join(cdir, "runner.json"), poll)
        if rc != 0 or len(seen) < 2:
            raise RuntimeError("%s: calibration run failed (rc %s, %d lcurve points; log %s)"
                               % (name, rc, len(seen), os.path.join(work, "calib.log")))
        per_step = (seen[-1][0] - seen[0][0]) / (seen[-1][1] - seen[0][1])
        setup = seen[0][0] - per_step * seen[0][1]
        calib = {"cpu_per_step": per_step, "setup_cpu": max(0.0, setup), "total_cpu": seg,
                 "points": seen}
        state["calib"] = calib
        save_json(state_path, state)
        log("%s: calibration: %.2f CPU s per step, %.0f s setup" % (name, per_step, setup))
    if "numb_steps" not in state:
        n = max(1, int((budget - calib["setup_cpu"]) / calib["cpu_per_step"]))
        state.update(numb_steps=n, decay_steps=max(1, n // DECAYS[kind]),
                     disp=max(1, n // 40), save=max(1, int(60.0 / calib["cpu_per_step"])),
                     cpu=0.0, segments=[], map=[])
        save_json(state_path, state)
    tdir = os.path.join(work, "train")
    os.makedirs(tdir, exist_ok=True)
    while not state.get("trained"):
        inp = dp_input(template, tdir, state["numb_steps"], state["decay_steps"], state["disp"],
                       state["save"])
        ckpt = os.path.join(tdir, "model.ckpt.pt")
        cmd = [dp, "--pt", "train", inp]
        if os.path.exists(ckpt):
            cmd += ["--restart", ckpt]
        elif state["segments"]:  # stopped before its first checkpoint: start again, count anew
            state["cpu"], state["segments"], state["map"] = 0.0, [], []
            for f in ("lcurve.out",):
                if os.path.exists(os.path.join(tdir, f)):
                    os.remove(os.path.join(tdir, f))

        def poll(st):
            rows = lcurve_rows(os.path.join(tdir, "lcurve.out"))
            if rows and (not st["map"] or st["map"][-1][1] != rows[-1][0]):
                st["map"].append((st["cpu"], rows[-1][0]))
        rc, seg, stopped = run_watched(cmd, tdir, os.path.join(work, "train.log"), state["cpu"],
                                       budget, state, state_path, poll)
        state["segments"].append({"rc": rc, "cpu": seg, "restart": "--restart" in cmd})
        if rc == 0 or stopped:
            state["trained"] = True
            state["stopped_by_watchdog"] = stopped
        save_json(state_path, state)
        if not state.get("trained"):
            raise RuntimeError("%s: dp train exited with %d (log %s); rerun to resume"
                               % (name, rc, os.path.join(work, "train.log")))
    frozen = os.path.join(work, "frozen.pth")
    if not os.path.exists(frozen):
        r = subprocess.run([dp, "--pt", "freeze", "-o", frozen], cwd=tdir, capture_output=True,
                           text=True, env=dict(os.environ, **ONE_THREAD))
        if r.returncode != 0:
            raise RuntimeError("%s: dp freeze failed: %s" % (name, r.stderr[-800:]))
    if "test" not in state:
        r = subprocess.run([dp, "--pt", "test", "-m", frozen, "-s", os.path.join(DATA, "data_3"),
                            "-n", "100000"], cwd=work, capture_output=True, text=True,
                           # one frame per inference batch: DPA3 on all 80 frames at once
                           # took 24 GB and was killed by the OOM killer
                           env=dict(os.environ, DP_INFER_BATCH_SIZE="192", **ONE_THREAD))
        text = r.stdout + r.stderr
        with open(os.path.join(work, "test.log"), "w") as f:
            f.write(text)
        e = re.search(r"Energy RMSE/Natoms\s*:\s*([0-9.eE+-]+)\s*eV", text)
        fo = re.search(r"Force\s+RMSE\s*:\s*([0-9.eE+-]+)\s*eV/", text)
        nf = re.search(r"number of test data\s*:\s*(\d+)", text)
        if r.returncode != 0 or not e or not fo:
            raise RuntimeError("%s: dp test failed (rc %d%s) or printed no RMSE: %s" % (
                name, r.returncode, ", killed: out of memory?" if r.returncode == -9 else "",
                text[-800:]))
        state["test"] = {"e": float(e.group(1)) * 1000.0, "f": float(fo.group(1)) * 1000.0,
                         "frames": int(nf.group(1)) if nf else None}
        save_json(state_path, state)
    # learning curve: lcurve.out validation columns against CPU (interpolated from the map)
    rows = lcurve_rows(os.path.join(tdir, "lcurve.out"))
    cmap = sorted(state["map"], key=lambda x: x[1])
    with open(os.path.join(RESULTS, name + ".curve.csv"), "w") as f:
        f.write("cpu_s,step,lr,test_rmse_e_mev_per_atom,test_rmse_f_mev_per_angstrom\n")
        for r in rows:
            cpu = next((c for c, s in cmap if s >= r[0]), state["cpu"])
            f.write("%.1f,%d,%.3e,%.4f,%.3f\n" % (cpu, r[0], r[-1], r[3] * 1000.0, r[5] * 1000.0))
    steps_done = int(rows[-1][0]) if rows else None
    save_json(os.path.join(RESULTS, name + ".json"), {
        "job": name, "code": "DeePMD-kit (dp --pt train), %s" % subprocess.run(
            [dp, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1],
        "model": kind, "budget_cpu_s": budget, "cpu_s": round(state["cpu"], 1),
        "numb_steps": state["numb_steps"], "decay_steps": state["decay_steps"],
        "steps": steps_done, "calibration": {k: calib[k] for k in ("cpu_per_step", "setup_cpu")},
        "stopped_by_watchdog": state.get("stopped_by_watchdog", False),
        "segments": len(state["segments"]), "test_frames": state["test"]["frames"],
        "test_rmse_e_mev_per_atom": round(state["test"]["e"], 4),
        "test_rmse_f_mev_per_angstrom": round(state["test"]["f"], 3), "work": work,
        "curve_note": "curve points are DeePMD-kit's lcurve validation columns (%s frames of "
                      "data_3 per point), the table's figures are dp test on all of data_3"
                      % ("3" if kind == "se_e2_a" else "1")})
    log("%s: test E %.3f meV/atom, F %.1f meV/A after %.0f CPU s (%s steps)" % (
        name, state["test"]["e"], state["test"]["f"], state["cpu"], steps_done))


def jobs(budgets):
    out = []
    for b in budgets:
        for code, model in (("ours", "matris"), ("deepmd", "se_e2_a"), ("ours", "dpa3"),
                            ("deepmd", "dpa3"), ("ours", "equivariant"), ("ours", "matris_arch")):
            out.append(("%s-%s-%d" % (code, model, b), code, model, b))
    return out


def main():
    global RESULTS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budgets", type=float, nargs="+", default=[900, 3600])
    ap.add_argument("--only", nargs="+", default=None, help="job names to run")
    ap.add_argument("--status", action="store_true", help="print what is done and exit")
    ap.add_argument("--results", default=RESULTS, help="where the job summaries go")
    args = ap.parse_args()
    RESULTS = os.path.abspath(args.results)
    if not os.path.isdir(os.path.join(DATA, "data_3")):
        sys.exit("run_queue: DFT water not found at %s (../shared/deepmd-kit/water-dft)" % DATA)
    os.makedirs(RUNS, exist_ok=True)
    os.makedirs(RESULTS, exist_ok=True)
    todo = [j for j in jobs([int(b) for b in args.budgets]) if not args.only or j[0] in args.only]
    if args.status:
        for name, _, _, _ in todo:
            r = load_json(os.path.join(RESULTS, name + ".json"))
            st = load_json(os.path.join(RUNS, name, "runner.json"), {})
            print("%-24s %s" % (name, "done: F %.1f meV/A, %.0f CPU s" % (
                r["test_rmse_f_mev_per_angstrom"], r["cpu_s"]) if r else
                "pending (%.0f CPU s so far)" % st.get("cpu", 0.0)))
        return
    for k, (name, code, model, budget) in enumerate(todo):
        if os.path.exists(os.path.join(RESULTS, name + ".json")):
            log("job %d of %d, %s: done before (results/%s.json)" % (k + 1, len(todo), name, name))
            continue
        work = os.path.join(RUNS, name)
        os.makedirs(work, exist_ok=True)
        lock = open(os.path.join(work, "job.lock"), "w")  # several runners may share a queue
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            log("%s: another runner has it; next job" % name)
            continue
        log("job %d of %d, %s: start (budget %d CPU s; progress in %s/train.log)" % (
            k + 1, len(todo), name, budget, work))
        if code == "ours":
            job_ours(name, model, budget, work)
        else:
            job_deepmd(name, model, budget, work)


if __name__ == "__main__":
    main()
