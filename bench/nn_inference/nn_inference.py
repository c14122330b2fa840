"""NN inference benchmark: MD through pair_style aisci against the same TorchScript
model driven from Python on the same frames, with the same number of threads.

For water boxes of the requested sizes (default about 1k and 8k atoms; add 64000 with
--sizes, it needs several GB for triplet models), this script

1. writes the box (potentials/data/water_box.py) as a LAMMPS data file;
2. runs NVE MD with lmp-aisci on one MPI rank (pair_style aisci threads T), warm-up
   steps first, then `steps` timed steps, dumping positions and forces every step;
3. evaluates the same model file in Python on every dumped frame of the timed run:
   periodic graph from the C core (libaisci_core, ctypes), forward, one backward pass
   to the edge vectors, forces by index_add (what a Python MD driver would do), with
   torch.set_num_threads(T) and the same TorchScript executor setting as the C API
   (graph executor optimisation off);
4. prints atom-steps per second of both (MD: LAMMPS loop time without the dump's
   output time), their ratio (pair style / Python; >= 1 means the pair style adds no
   overhead), the same ratio from CPU times (LAMMPS: process CPU time minus that of a
   run without the timed steps; best of the repeats; the meaningful figure on a shared
   machine), the share of the MD time spent in the pair style, the Python-side graph
   share, the largest force
   difference between the two (a correctness check), and the scaling with N.

Run with Debian's /usr/bin/python3 (torch + numpy):

    /usr/bin/python3 bench/nn_inference/nn_inference.py --build build [--model M.pt]
        [--sizes 1000 8000] [--threads 1] [--steps 10]

Without --model it uses the first shipped model in potentials/models/ (matris first),
or, if none is shipped yet, an untrained MatRIS-style model exported on the fly (same
cost per step as a trained one).
"""
import argparse
import ctypes as C
import glob
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import aisci_run  # noqa: E402


def find_model(path, workdir):
    if path:
        return path
    shipped = sorted(glob.glob(os.path.join(ROOT, "potentials", "models", "*.pt")),
                     key=lambda p: ("matris" not in p, p))
    if shipped:
        return shipped[0]
    from potentials.common.export import model_metadata, save_model
    from potentials.common.metadata import state_dict_checksum
    from potentials.common.train import build_model
    config = {"cutoff": 4.5, "cutoff_3body": 3.0, "num_layers": 2}
    model = build_model("matris", config).to(torch.float64).eval()
    scripted = torch.jit.script(model)
    out = os.path.join(workdir, "matris_untrained.pt")
    meta = model_metadata("matris", config, ["O", "H"], "float64",
                          state_dict_checksum(scripted), {"description": "untrained (bench)"})
    save_model(scripted, out, meta)
    return out


def read_metadata(path):
    extra = {"aisci_metadata": ""}
    torch.jit.load(path, _extra_files=extra)
    text = extra["aisci_metadata"]
    text = text.decode() if isinstance(text, bytes) else text
    return dict((k.strip(), v.strip()) for k, v in
                (l.split("=", 1) for l in text.splitlines() if "=" in l))


def write_atomic_data(path, box):
    x, t, L = box["positions"], box["types"], box["box"]
    with open(path, "w") as f:
        f.write("water box\n\n%d atoms\n2 atom types\n\n" % len(x))
        f.write("0 %.16g xlo xhi\n0 %.16g ylo yhi\n0 %.16g zlo zhi\n\n" % tuple(L))
        f.write("Masses\n\n1 15.999\n2 1.008\n\nAtoms # atomic\n\n")
        for k in range(len(x)):
            f.write("%d %d %.16g %.16g %.16g\n" % (k + 1, t[k], *x[k]))


def run_lammps(lmp, workdir, model, threads, warmup, steps, device="cpu", allocator=None):
    script = """units metal
atom_style atomic
boundary p p p
read_data water.data
pair_style aisci threads %d device %s
pair_coeff * * %s O H
neighbor 1.0 bin
velocity all create 300 12345 loop geom
fix 1 all nve
timestep 0.0005
thermo %d
run %d
%s
""" % (threads, device, model, steps, warmup, "" if steps == 0 else
       "dump d all custom 1 frames.dump id type x y z fx fy fz\n"
       "dump_modify d sort id format float %%.17g\nrun %d" % steps)
    with open(os.path.join(workdir, "in.bench"), "w") as f:
        f.write(script)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    if allocator:
        env["AISCI_CPU_ALLOCATOR"] = allocator
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([lmp, "-in", "in.bench", "-log", "log.bench", "-nocite"], cwd=workdir,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    out = p.stdout.decode(errors="replace")
    if p.returncode != 0:
        raise RuntimeError("lmp-aisci failed:\n" + out[-3000:])
    rss = r1.ru_maxrss / 1024.0   # MB, largest child so far (sizes run in ascending order)
    if steps == 0:
        return None, 0, None, cpu, rss
    t, _, n, _ = aisci_run.loop_times(out)[-1]
    # The dump that hands the frames to Python is not part of MD: subtract its time
    # (the "Output" row of LAMMPS's timing breakdown).
    sections = aisci_run.timing_sections(out)
    t_md = t - sections["Output"]
    return t_md, n, sections["Pair"], cpu, rss


def read_frames(path):
    frames = []
    text = open(path).read().split("ITEM: TIMESTEP")[1:]
    for block in text:
        lines = block.splitlines()
        n = int(lines[3])
        data = np.array([[float(v) for v in l.split()] for l in lines[9:9 + n]])
        frames.append(data)
    return frames


class CoreGraph:
    def __init__(self, build):
        self.lib = C.CDLL(os.path.join(build, "lib", "libaisci_core.so"))
        self.lib.aisci_graph_edge_index.restype = C.POINTER(C.c_int64)
        self.lib.aisci_graph_edge_vec.restype = C.POINTER(C.c_double)
        self.lib.aisci_graph_triplets.restype = C.POINTER(C.c_int64)
        self.lib.aisci_graph_num_edges.restype = C.c_int64
        self.lib.aisci_graph_num_triplets.restype = C.c_int64
        self.lib.aisci_last_error.restype = C.c_char_p
        self.g = C.c_void_p()
        self.lib.aisci_graph_create(C.byref(self.g))

    def build(self, x, cell, rc, rc3):
        x = np.ascontiguousarray(x, dtype=np.float64)
        cell = np.ascontiguousarray(cell, dtype=np.float64)
        pbc = (C.c_int * 3)(1, 1, 1)
        st = self.lib.aisci_graph_build_periodic(self.g, C.c_int(len(x)), C.c_void_p(x.ctypes.data),
                                                 C.c_void_p(cell.ctypes.data), pbc,
                                                 C.c_double(rc), C.c_double(rc3))
        if st != 0:
            raise RuntimeError(self.lib.aisci_last_error().decode())
        ne = self.lib.aisci_graph_num_edges(self.g)
        nt = self.lib.aisci_graph_num_triplets(self.g)
        ei = np.ctypeslib.as_array(self.lib.aisci_graph_edge_index(self.g), (2, ne)) if ne else \
            np.zeros((2, 0), np.int64)
        ev = np.ctypeslib.as_array(self.lib.aisci_graph_edge_vec(self.g), (ne, 3)) if ne else \
            np.zeros((0, 3))
        tr = np.ctypeslib.as_array(self.lib.aisci_graph_triplets(self.g), (nt, 2)) if nt else \
            np.zeros((0, 2), np.int64)
        # copies: the graph's storage is reused by the next build
        return torch.from_numpy(ei.copy()), torch.from_numpy(ev.copy()), torch.from_numpy(tr.copy())


def python_driver(model, frames, cell, rc, rc3, needs_triplets, dtype, graph, device="cpu"):
    t_graph = t_total = t_cpu = 0.0
    max_df = 0.0
    for data in frames:
        types = torch.from_numpy(data[:, 1].astype(np.int64) - 1).to(device)
        x = data[:, 2:5]
        c0 = time.process_time()
        t0 = time.perf_counter()
        ei, ev, tr = graph.build(x, cell, rc, rc3 if needs_triplets else 0.0)
        t1 = time.perf_counter()
        ei, tr = ei.to(device), tr.to(device)
        vec = ev.to(device=device, dtype=dtype).requires_grad_(True)
        e = model(vec, ei, types, tr).sum()
        (g,) = torch.autograd.grad([e], [vec])
        g = g.to(device="cpu", dtype=torch.float64)   # synchronises a GPU
        ei = ei.cpu()
        f = torch.zeros(len(x), 3, dtype=torch.float64)
        f.index_add_(0, ei[0], g)
        f.index_add_(0, ei[1], -g)
        t2 = time.perf_counter()
        t_cpu += time.process_time() - c0
        t_graph += t1 - t0
        t_total += t2 - t0
        max_df = max(max_df, float(np.abs(f.numpy() - data[:, 5:8]).max()))
    return t_total, t_graph, max_df, t_cpu


def install_caching_allocator(build, model_path):
    """Create (and drop) one model through the C API in this process: that installs the
    caching CPU allocator into the libtorch this Python shares (libc10.so), so that the
    Python driver allocates as the pair style does (docs/pair_aisci.md, "Memory")."""
    lib = C.CDLL(os.path.join(build, "lib", "libaisci_torch.so"))
    lib.aisci_model_create.argtypes = [C.c_char_p, C.c_char_p, C.c_char_p, C.c_int,
                                       C.POINTER(C.c_void_p)]
    lib.aisci_model_destroy.argtypes = [C.c_void_p]
    lib.aisci_torch_cpu_allocator.argtypes = [C.c_void_p]
    lib.aisci_torch_cpu_allocator.restype = C.c_char_p
    h = C.c_void_p()
    if lib.aisci_model_create(model_path.encode(), b"cpu", b"auto", 0, C.byref(h)) != 0:
        raise RuntimeError("aisci_model_create failed for " + model_path)
    lib.aisci_model_destroy(h)
    name = lib.aisci_torch_cpu_allocator(None).decode()
    if name != "caching":
        print("note: the C API chose the %r allocator (AISCI_CPU_ALLOCATOR)" % name)
    lib.aisci_torch_cpu_cache_release.restype = None
    return lib.aisci_torch_cpu_cache_release


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--model", default=None)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 8000])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=0, help="timed steps (0: by size)")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--device", default="cpu",
                    help="cpu, cuda or cuda:N, for pair_style aisci and the Python driver alike")
    ap.add_argument("--python-allocator", choices=["caching", "default"], default="caching",
                    help="CPU allocator of the Python driver: caching = the one the C API "
                         "installs (like for like: the ratio is the pair style's overhead); "
                         "default = libtorch's own (what plain Python gets)")
    ap.add_argument("--allocator-peer", action="store_true",
                    help="also run the same MD with AISCI_CPU_ALLOCATOR=default (libtorch's "
                         "own allocator) and print caching / default")
    ap.add_argument("--repeat", type=int, default=2,
                    help="alternate LAMMPS and Python this many times, keep the best of each "
                         "(the machine may be shared)")
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    lmp = os.path.join(args.build, "bin", "lmp-aisci")
    workroot = tempfile.mkdtemp(prefix="aisci_nnbench_")
    model_path = os.path.abspath(find_model(args.model, workroot))
    meta = read_metadata(model_path)
    rc, rc3 = float(meta["cutoff"]), float(meta["cutoff_3body"])
    needs3 = meta["needs_triplets"] == "1"
    dtype = torch.float64 if meta["dtype"] == "float64" else torch.float32

    torch.set_num_threads(args.threads)
    torch._C._set_graph_executor_optimize(False)
    release = lambda: None   # noqa: E731
    if args.python_allocator == "caching":
        release = install_caching_allocator(args.build, model_path)
    model = torch.jit.load(model_path, map_location=args.device).eval()
    graph = CoreGraph(args.build)
    from potentials.data.water_box import make_water_box

    print("model %s: %s, %s layers, cutoff %g/%g A, %s; %d thread(s); work dir %s"
          % (model_path, meta["architecture"], meta["num_layers"], rc, rc3, meta["dtype"],
             args.threads, workroot), flush=True)
    print("Python driver allocator: %s; lmp MB: peak RSS of the lmp-aisci process"
          % args.python_allocator)
    print("%8s %6s %14s %14s %7s %9s %7s %7s %10s %8s"
          % ("atoms", "steps", "MD atom-st/s", "py atom-st/s", "ratio", "cpu-ratio", "pair%",
             "graph%", "max|dF|", "lmp MB"))
    rows = []
    for n_atoms in args.sizes:
        steps = args.steps or max(2, min(20, 20000 // n_atoms))
        wd = os.path.join(workroot, "n%d" % n_atoms)
        os.makedirs(wd)
        box = make_water_box(n_atoms // 3, 1.0, seed=5)
        write_atomic_data(os.path.join(wd, "water.data"), box)
        n = len(box["positions"])
        best_lmp = best_py = best_lmp_cpu = best_py_cpu = None
        # CPU time of the timed steps = CPU of the whole process minus that of the same
        # run without them (start-up, libtorch loading, setup, warm-up): on a shared
        # machine wall time measures the other users as much as us.
        cpu_base = min(run_lammps(lmp, wd, model_path, args.threads, args.warmup, 0, args.device)[3]
                       for _ in range(args.repeat))
        for _ in range(args.repeat):
            res = run_lammps(lmp, wd, model_path, args.threads, args.warmup, steps, args.device)
            if best_lmp is None or res[0] < best_lmp[0]:
                best_lmp = res
            cpu = res[3] - cpu_base
            best_lmp_cpu = cpu if best_lmp_cpu is None else min(best_lmp_cpu, cpu)
            frames = read_frames(os.path.join(wd, "frames.dump"))[1:]   # timed steps only
            python_driver(model, frames[:1], np.diag(box["box"]), rc, rc3, needs3, dtype, graph,
                          args.device)
            res = python_driver(model, frames, np.diag(box["box"]), rc, rc3, needs3, dtype, graph,
                                args.device)
            release()   # the Python driver's blocks: not held while lmp-aisci runs again
            if best_py is None or res[0] < best_py[0]:
                best_py = res
            best_py_cpu = res[3] if best_py_cpu is None else min(best_py_cpu, res[3])
        t_lmp, nsteps, t_pair, _, rss = best_lmp
        t_py, t_gr, max_df, _ = best_py
        a_lmp = n * nsteps / t_lmp
        a_py = n * len(frames) / t_py
        # the timed run's setup evaluates the model once more than its nsteps steps
        cpu_ratio = (best_py_cpu / len(frames)) / (best_lmp_cpu / (nsteps + 1))
        rows.append((n, a_lmp, a_py))
        print("%8d %6d %14.1f %14.1f %7.3f %9.3f %6.1f%% %6.1f%% %10.2e %8.0f"
              % (n, nsteps, a_lmp, a_py, a_lmp / a_py, cpu_ratio, 100 * t_pair / t_lmp,
                 100 * t_gr / t_py, max_df, rss), flush=True)
        if args.allocator_peer:
            t_def = min(run_lammps(lmp, wd, model_path, args.threads, args.warmup, steps,
                                   args.device, "default")[0] for _ in range(args.repeat))
            a_def = n * nsteps / t_def
            print("%8s same MD with AISCI_CPU_ALLOCATOR=default: %.1f atom-steps/s; "
                  "caching / default = %.3f" % ("", a_def, a_lmp / a_def), flush=True)
    if len(rows) > 1:
        n0, l0, p0 = rows[0]
        print("scaling (atom-steps/s relative to %d atoms; 1.0 = linear in N):" % n0)
        for n, a_l, a_p in rows[1:]:
            print("  %8d atoms: pair style %.3f, python %.3f" % (n, a_l / l0, a_p / p0))


if __name__ == "__main__":
    main()
