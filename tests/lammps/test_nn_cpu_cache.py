"""Caching CPU allocator of libaisci_torch (docs/pair_aisci.md, "Memory").

The shipped MatRIS-style water model on a 2000-atom water frame (triplet tensors of
~60 MB, above glibc's largest mmap threshold, so the default allocator maps and unmaps
them every call) through the C API, each configuration in its own process because the
allocator is chosen once per process:
  * caching (the default) and AISCI_CPU_ALLOCATOR=default give the same energy, forces
    and virial bit for bit, and every repeated call gives them again;
  * steady state: after the first calls, repeated calls page-fault (almost) nothing with
    the cache, where the default allocator faults its working set in every call; the
    memory held by the cache does not grow from call 3 to call 8;
  * bounded: after a call on a 2x larger frame, 9 calls on the small frame give the
    large blocks back (held memory back to the small frame's level);
  * aisci_torch_cpu_cache_release() gives all free blocks back;
  * AISCI_CPU_ALLOCATOR=bogus: aisci_model_create() fails with ERR_ARG naming the
    variable and the accepted values, and lmp-aisci stops with that message.
"""
import json
import os
import resource
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "capi"))  # aisci_capi (ctypes bindings)
import aisci_nn_toy as toy  # noqa: E402

toy.skip_without_torch_wrapper()
from aisci_testlib import LMP, SOURCE_DIR, check, run_lammps, summary  # noqa: E402

MODEL = os.path.join(SOURCE_DIR, "potentials", "models", "water_matris.pt")


def frame(n_molecules, seed):
    sys.path.insert(0, SOURCE_DIR)
    from potentials.data.water_box import make_water_box
    box = make_water_box(n_molecules, seed=seed)
    return box["positions"], np.asarray(box["types"], np.int64) - 1, np.diag(box["box"])


def worker(mode):
    """One process: calls on the frames, prints a JSON summary."""
    import aisci_capi as capi
    st, h, msg = capi.create(MODEL)
    if st != capi.OK:
        print(json.dumps({"status": st, "message": msg}))
        return
    rc, rc3 = capi.lib.aisci_model_cutoff(h), capi.lib.aisci_model_cutoff_3body(h)
    x, t, cell = frame(667, seed=3)
    ei, ev, tr = capi.periodic_graph(x, cell, rc, rc3)
    out = {"status": 0, "allocator": capi.cpu_allocator()[0], "atoms": len(x),
           "triplets": int(tr.shape[0]), "faults": [], "held": [], "same": True}
    first = None
    for k in range(8):
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        st, e, f, w = capi.compute(h, t, ei, ev, tr)
        out["faults"].append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
        _, s = capi.cpu_allocator()
        out["held"].append(s.in_use_bytes + s.cached_bytes)
        if st != capi.OK:
            out["status"] = st
            out["message"] = capi.last_error()
            break
        if first is None:
            first = (e, f.copy(), w.copy())
            out["energy"] = e
            out["forces"] = f.tolist()
            out["virial"] = w.tolist()
        else:
            out["same"] &= bool(e == first[0] and np.array_equal(f, first[1]) and
                                np.array_equal(w, first[2]))
    if mode == "caching":
        # a 2x larger frame once, then the small one again: large blocks are released
        xb, tb, cb = frame(1334, seed=4)
        eib, evb, trb = capi.periodic_graph(xb, cb, rc, rc3)
        capi.compute(h, tb, eib, evb, trb)
        _, s = capi.cpu_allocator()
        out["held_big"] = s.in_use_bytes + s.cached_bytes
        for k in range(9):
            capi.compute(h, t, ei, ev, tr)
        _, s = capi.cpu_allocator()
        out["held_after"] = s.in_use_bytes + s.cached_bytes
        out["peak_held"] = s.peak_held_bytes
        capi.lib.aisci_torch_cpu_cache_release()
        _, s = capi.cpu_allocator()
        out["held_released"] = s.in_use_bytes + s.cached_bytes
    print(json.dumps(out))


def spawn(mode, allocator):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env.pop("AISCI_CPU_ALLOCATOR", None)
    if allocator is not None:
        env["AISCI_CPU_ALLOCATOR"] = allocator
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", mode],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, timeout=600)
    text = p.stdout.decode(errors="replace")
    if p.returncode == 77:   # aisci_capi: this python's torch is not the wrapper's libtorch
        print(text.strip())
        raise SystemExit(77)
    try:
        return json.loads(text.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"status": -1, "message": "worker failed (rc %d): %s" % (p.returncode, text[-2000:])}


def main():
    cache = spawn("caching", None)
    plain = spawn("default", "default")
    ok = check(cache["status"] == 0 and plain["status"] == 0,
               "both workers ran: %s / %s" % (cache.get("message"), plain.get("message")))
    if ok:
        print("frame: %d atoms, %d triplets" % (cache["atoms"], cache["triplets"]))
        check(cache["allocator"] == "caching", "default choice is caching: %s" % cache["allocator"])
        check(plain["allocator"] == "default", "AISCI_CPU_ALLOCATOR=default: %s" % plain["allocator"])
        check(cache["energy"] == plain["energy"], "energy equal: %r vs %r"
              % (cache["energy"], plain["energy"]))
        df = np.abs(np.array(cache["forces"]) - np.array(plain["forces"])).max()
        dw = np.abs(np.array(cache["virial"]) - np.array(plain["virial"])).max()
        check(df == 0.0 and dw == 0.0, "forces and virial equal bit for bit: %g, %g" % (df, dw))
        check(cache["same"] and plain["same"], "repeated calls give the same results")
        fc, fp = cache["faults"], plain["faults"]
        print("minor page faults per call, caching:", fc)
        print("minor page faults per call, default:", fp)
        steady_c, steady_p = max(fc[3:]), min(fp[3:])
        check(steady_p > 10000, "the default allocator faults its working set in every call "
              "(%d faults at least; else this frame does not exercise the cache)" % steady_p)
        check(steady_c * 20 < steady_p, "with the cache, calls 4-8 fault < 5 %% of the default's: "
              "%d vs %d" % (steady_c, steady_p))
        held = cache["held"]
        print("held by the cache after each call (MB):", [round(b / 2**20, 1) for b in held])
        check(held[2] > 0 and held[7] == held[2], "held memory steady from call 3 to 8: %d -> %d"
              % (held[2], held[7]))
        print("held after the 2x frame %.1f MB, after 9 small calls %.1f MB, peak %.1f MB"
              % (cache["held_big"] / 2**20, cache["held_after"] / 2**20,
                 cache["peak_held"] / 2**20))
        check(cache["held_big"] > 1.5 * held[7], "the larger frame needed more blocks")
        check(cache["held_after"] <= 1.01 * held[7],
              "its blocks were given back: %d <= %d" % (cache["held_after"], held[7]))
        check(cache["held_released"] < 0.01 * held[7],
              "aisci_torch_cpu_cache_release() gives the free blocks back: %d bytes left"
              % cache["held_released"])

    bad = spawn("default", "bogus")
    msg = bad.get("message", "")
    check(bad["status"] == 1 and "AISCI_CPU_ALLOCATOR" in msg and "bogus" in msg
          and "caching" in msg and "default" in msg,
          "AISCI_CPU_ALLOCATOR=bogus: ERR_ARG with the accepted values: %s" % msg)

    script = """units metal
atom_style atomic
region b block 0 10 0 10 0 10
create_box 2 b
create_atoms 1 single 1 1 1
create_atoms 2 single 2 1 1
mass * 1.0
pair_style aisci
pair_coeff * * %s O H
run 0
""" % MODEL
    r = run_lammps(script, exe=LMP, env={"AISCI_CPU_ALLOCATOR": "bogus"})
    check(r.rc != 0 and "AISCI_CPU_ALLOCATOR" in r.output and "caching" in r.output,
          "lmp-aisci with AISCI_CPU_ALLOCATOR=bogus stops with the message")
    summary("test_nn_cpu_cache")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        worker(sys.argv[2])
    else:
        main()
