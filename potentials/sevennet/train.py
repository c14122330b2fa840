"""Resumable equal-budget training queue for the SevenNet-derived water models.

    $AISCI_PEERS/sevenn/bin/python -m potentials.sevennet.train run --budget 3600 [--chunk 240]
        (start it twice, one process per core; the runs are locked one by one)
    $AISCI_PEERS/sevenn/bin/python -m potentials.sevennet.train report [--test-every 10] \
        [--figures docs/figures/sevennet_pruning]
        (rows a-c, and d: our equivariant DFT model, potentials/models/water_equivariant_dft.pt)
    $AISCI_PEERS/sevenn/bin/python -m potentials.sevennet.train export NAME

Runs (files in ``model.cache_dir()``; made by make_models):
  a_full      base.init.pt fine-tuned whole          (Adam 5e-4 -> 1e-5)
  b_pruned50  pruned50.init.pt fine-tuned            (Adam 5e-4 -> 1e-5)
  b_pruned25  pruned25.init.pt fine-tuned            (Adam 5e-4 -> 1e-5)
  c_scratch50 pruned50's architecture, random init   (Adam 1e-3 -> 1e-5)
  c_scratch25 pruned25's architecture, random init   (Adam 1e-3 -> 1e-5)

Budget: CPU seconds of the training loop (os.times: user + system of the process and its
children), counted after pruning; model loading/saving is not counted. The runner is
round-robin: it always advances the run with the least CPU used by one chunk, saves its
state (weights, Adam, data order, step, CPU used) atomically, and moves on, so a stop
(SIGTERM, or the session ending) loses at most one chunk and the runs stay within one
chunk of each other; ``run`` again continues. Runs are locked one by one, so one queue
process per core may share them (start the same command twice).
Loss per frame: 100 (dE/N)^2 + mean |dF|^2
(eV, eV/A), one frame per step, float32, 1 thread, gradient norm clipped at 10.
Training data data_0-2 (320 frames), test data_3 (80 frames).
"""

import argparse
import json
import os
import signal
import sys
import time

import numpy as np
import torch

from potentials.sevennet import data as D
from potentials.sevennet import model as M
from potentials.sevennet import prune as P

RUNS = {
    "a_full": ("base.init.pt", False, 5e-4),
    "b_pruned50": ("pruned50.init.pt", False, 5e-4),
    "b_pruned25": ("pruned25.init.pt", False, 5e-4),
    "c_scratch50": ("pruned50.init.pt", True, 1e-3),
    "c_scratch25": ("pruned25.init.pt", True, 1e-3),
}
LR_FINAL = 1e-5
W_E = 100.0
STOP = False


def cpu():
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def log(*a):
    print(*a, flush=True)


def _path(n):
    return os.path.join(M.cache_dir(), n)


def init_state(name, frames):
    src, scratch, lr = RUNS[name]
    d = torch.load(_path(src), weights_only=False)
    cfg = d["config"]
    if scratch:
        torch.manual_seed(0)
        model = M.build(cfg, None, torch.float32)
        st = {k: v.clone() for k, v in model.state_dict().items()}
        # sevenn's builder leaves the convolution denominators (avg. neighbour count) at
        # 0 for a checkpoint to fill: take them from the pruned model (an architecture
        # constant of SevenNet-0), as the fine-tuned runs have them
        for k, v in d["state"].items():
            if k.endswith("denominator"):
                st[k] = v.to(torch.float32).clone()
        # data statistics, not SevenNet-0's: shift = mean energy per atom, scale = force RMS
        e = np.mean([f["energy"] / len(f["types"]) for f in frames])
        frms = np.sqrt(np.mean([np.mean(f["forces"] ** 2) for f in frames]))
        st["rescale_atomic_energy.shift"][:] = float(e)
        st["rescale_atomic_energy.scale"][:] = float(frms)
    else:
        st = {k: v.to(torch.float32) if v.is_floating_point() else v for k, v in d["state"].items()}
    return {"name": name, "config": cfg, "state": st, "optimizer": None, "step": 0, "cpu": 0.0,
            "order": np.random.default_rng(0).permutation(len(frames)).tolist(), "pos": 0,
            "lr0": lr, "scratch": scratch, "source": src, "history": []}


def save_atomic(obj, path):
    tmp = path + ".tmp"
    torch.save(obj, tmp)
    os.replace(tmp, path)


def train_chunk(s, frames, graphs, chunk, budget):
    cfg = s["config"]
    seq = M.build(cfg, s["state"], torch.float32)
    model = M.ExportModel(seq, M.type_to_onehot(cfg)).to(torch.float32).train()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=s["lr0"])
    if s["optimizer"] is not None:
        opt.load_state_dict(s["optimizer"])
    t0 = cpu()
    target = min(chunk, budget - s["cpu"])
    losses = []
    while cpu() - t0 < target and not STOP:
        frac = min(1.0, (s["cpu"] + cpu() - t0) / budget)
        for gr in opt.param_groups:
            gr["lr"] = s["lr0"] * (1 - frac) + LR_FINAL * frac
        i = s["order"][s["pos"]]
        s["pos"] += 1
        if s["pos"] == len(s["order"]):
            s["pos"] = 0
            s["order"] = np.random.default_rng(s["step"]).permutation(len(frames)).tolist()
        ev, ei, at = graphs[i]
        e, f = M.energy_forces(model, ev, ei, at, create_graph=True)
        n = at.shape[0]
        loss = W_E * ((e - frames[i]["energy"]) / n) ** 2 + \
            ((f - torch.as_tensor(frames[i]["forces"], dtype=f.dtype)) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 10.0)
        opt.step()
        s["step"] += 1
        losses.append(loss.item())
    s["cpu"] += cpu() - t0
    s["state"] = {k: v.detach().clone() for k, v in seq.state_dict().items()}
    s["optimizer"] = opt.state_dict()
    s["history"].append((s["step"], s["cpu"], float(np.mean(losses)) if losses else None))
    log("%-12s step %5d  cpu %7.1f / %.0f s  mean loss %s" % (s["name"], s["step"], s["cpu"], budget,
        "%.4f" % np.mean(losses) if losses else "-"))


def run(a):
    global STOP

    def stop(signum, frame):
        global STOP
        STOP = True
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    torch.set_num_threads(1)
    import fcntl

    def try_lock(n):
        # one lock per run, so that several queue processes (one per core) share the runs
        fd = os.open(_path(n + ".lock"), os.O_CREAT | os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except OSError:
            os.close(fd)
            return None

    def used(n):
        p = _path(n + ".state.pt")
        return torch.load(p, weights_only=False)["cpu"] if os.path.exists(p) else 0.0

    frames = D.load(D.TRAIN)
    graphs = None
    names = a.runs or list(RUNS)
    while not STOP:
        todo = sorted((u, n) for n in names for u in [used(n)] if u < a.budget - 1.0)
        if not todo:
            log("all runs reached %.0f CPU s" % a.budget)
            break
        fd = None
        for _, n in todo:
            fd = try_lock(n)
            if fd is not None:
                break
        if fd is None:          # every unfinished run is being advanced by another process
            time.sleep(10)
            continue
        p = _path(n + ".state.pt")
        s = torch.load(p, weights_only=False) if os.path.exists(p) else init_state(n, frames)
        if s["cpu"] < a.budget - 1.0:
            if graphs is None:
                graphs = [D.graph(f, s["config"]["cutoff"], torch.float32) for f in frames]
            train_chunk(s, frames, graphs, a.chunk, a.budget)
            save_atomic(s, p)
        os.close(fd)


def evaluate(cfg, state, frames, dtype=torch.float32):
    model = M.wrap(cfg, state, dtype)
    de, df, nf = [], [], 0
    for f in frames:
        ev, ei, at = D.graph(f, cfg["cutoff"], dtype)
        e, fo = M.energy_forces(model, ev, ei, at)
        de.append((e.item() - f["energy"]) / len(at))
        df.append(((fo.detach().double().numpy() - f["forces"]) ** 2).sum())
        nf += f["forces"].size
    return 1000 * float(np.sqrt(np.mean(np.square(de)))), 1000 * float(np.sqrt(np.sum(df) / nf))


def report(a):
    torch.set_num_threads(1)
    test = D.load(D.TEST)[::a.test_every]
    rows = []
    for n in (a.runs or list(RUNS)):
        p = _path(n + ".state.pt")
        if n == "a_full_zeroshot":
            d = torch.load(_path("base.init.pt"), weights_only=False)
            st, cfg, step, used = d["state"], d["config"], 0, 0.0
        elif not os.path.exists(p):
            continue
        else:
            s = torch.load(p, weights_only=False)
            st, cfg, step, used = s["state"], s["config"], s["step"], s["cpu"]
        e, f = evaluate(cfg, st, test)
        row = {"run": n, "irreps": " ".join(cfg["irreps_manual"]), "steps": step,
               "train_cpu_s": round(used, 1), "test_frames": len(test),
               "test_rmse_e_mev_per_atom": round(e, 3), "test_rmse_f_mev_per_angstrom": round(f, 1)}
        rows.append(row)
        log(json.dumps(row))
    if not a.runs or "d_ours" in a.runs:
        rows.append(report_ours(test))
    with open(_path("report.json"), "w") as fh:
        json.dump(rows, fh, indent=1)
    if a.figures:
        figures(rows, a.figures)


def figures(rows, prefix):
    """PREFIX.csv (the table) and PREFIX_curves.png (mean training loss of each chunk
    against the CPU seconds used, runs a-c)."""
    keys = ["run", "irreps", "steps", "train_cpu_s", "test_frames", "test_rmse_e_mev_per_atom",
            "test_rmse_f_mev_per_angstrom"]
    with open(prefix + ".csv", "w") as fh:
        fh.write(",".join(keys) + "\n")
        for r in rows:
            fh.write(",".join('"%s"' % r[k] if k == "irreps" else str(r[k]) for k in keys) + "\n")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    labels = {"a_full": "(a) SevenNet-0, fine-tuned whole",
              "b_pruned50": "(b) pruned to 1/2 cost, fine-tuned",
              "b_pruned25": "(b) pruned to 1/4 cost, fine-tuned",
              "c_scratch50": "(c) 1/2-cost architecture,\n     from scratch",
              "c_scratch25": "(c) 1/4-cost architecture,\n     from scratch"}
    fig, ax = plt.subplots(figsize=(9.2, 4.2))
    for n in RUNS:
        p = _path(n + ".state.pt")
        if not os.path.exists(p):
            continue
        h = [x for x in torch.load(p, weights_only=False)["history"] if x[2] is not None]
        ax.plot([x[1] for x in h], [x[2] for x in h], "-" if n.startswith(("a", "b")) else "--",
                label=labels.get(n, n))
    ax.set_yscale("log")
    ax.set_xlabel("training CPU s (one thread)")
    ax.set_ylabel("training loss, mean over each chunk (eV$^2$ units)")
    ax.set_title("SevenNet-0 on DFT water: fine-tuned (a, b) vs from scratch (c)")
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.55), fontsize=8.5, frameon=False)
    fig.tight_layout()
    fig.savefig(prefix + "_curves.png", dpi=110)
    log("wrote %s.csv and %s_curves.png" % (prefix, prefix))


def report_ours(test):
    """Row (d): our equivariant model trained from scratch on the same data for 1 CPU-hour
    (the shipped potentials/models/water_equivariant_dft.pt, validation/dft_water job
    ours-equivariant-3600), evaluated on the same test frames, in float64."""
    from potentials.common.evaluate import rmse_on_frames
    from potentials.common.metadata import load_model
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
        __file__)))), "potentials", "models", "water_equivariant_dft.pt")
    model, meta = load_model(path)
    e, f, _ = rmse_on_frames(model, test, range(len(test)), float(meta["cutoff"]),
                             float(meta["cutoff_3body"]), torch.float64)
    row = {"run": "d_ours", "irreps": "ours: l = 0/1/2 channels 24/12/6, cutoff %s A"
           % meta["cutoff"], "steps": int(meta["train_steps"]),
           "train_cpu_s": float(meta["train_cpu_seconds"]), "test_frames": len(test),
           "test_rmse_e_mev_per_atom": round(e, 3), "test_rmse_f_mev_per_angstrom": round(f, 1)}
    log(json.dumps(row))
    return row


def export(a):
    from potentials.sevennet import export as X
    s = torch.load(_path(a.name + ".state.pt"), weights_only=False)
    st = {k: v.double() if v.is_floating_point() else v for k, v in s["state"].items()}
    out = _path("water_sevennet_%s.pt" % a.name)
    meta, res = X.export(s["config"], st, out, "%s after %.0f CPU s of training (SevenNet-0 derived; "
                         "SevenNet licence (GPL-3.0); not for the repository)" % (a.name, s["cpu"]),
                         {"train_cpu_seconds": round(s["cpu"], 1), "train_steps": s["step"]})
    log("export: %s (Debian torch %s: dE %.1e dF %.1e)" % (out, res["torch"], res["de_rel"], res["df_rel"]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--budget", type=float, default=3600.0)
    r.add_argument("--chunk", type=float, default=120.0)
    r.add_argument("--runs", nargs="*")
    r = sub.add_parser("report")
    r.add_argument("--test-every", type=int, default=10)
    r.add_argument("--figures", default=None,
                   help="write PREFIX.csv and PREFIX_curves.png (e.g. docs/figures/sevennet_pruning)")
    r.add_argument("--runs", nargs="*")
    r = sub.add_parser("export")
    r.add_argument("name")
    a = ap.parse_args(argv)
    {"run": run, "report": report, "export": export}[a.cmd](a)


if __name__ == "__main__":
    main()
