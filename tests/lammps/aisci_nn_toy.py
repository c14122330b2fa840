"""Tiny TorchScript models obeying model-file contract v1, for the tests of the torch
C API and of pair_style aisci (so they do not depend on the shipped potentials).

Run with /usr/bin/python3 (Debian's, which has torch). TorchScript needs the model
source in a .py file, which is why this helper is a module and not inline test code.

ToyMP: an invariant message-passing network with num_layers layers (receptive field
num_layers x cutoff), an optional three-body term over the triplet list, smooth cosine
cutoffs. Random weights: good enough to test plumbing, forces and parallel invariance.
With local_3body=True the three-body sum of an atom is added to its own features after
the layers (not before them, where it reaches the neighbours' messages), so that a
1-layer model has a one-cutoff receptive field: the energy of an atom depends only on
its own edges and triplets (what balance ring needs). Without it (the default) the
three-body sum enters the first layer's features, so the receptive field is
num_layers x cutoff + cutoff_3body, more than the num_layers x cutoff the metadata
declares and the ghost shell covers: on several ranks such a model's results then depend
slightly on the decomposition (seen in test_nn_cost_balance: 7.7e-7 relative in the forces
of a 2-layer model after an rcb rebalancing; that test therefore uses local_3body).
"""
import math
import os

import numpy as np
import torch
from typing import Dict, List, Optional


class ToyMP(torch.nn.Module):
    def __init__(self, ntypes: int = 2, cutoff: float = 3.0, num_layers: int = 2,
                 width: int = 8, nrbf: int = 6, cutoff_3body: float = 0.0, seed: int = 1,
                 local_3body: bool = False, detach_edges: bool = False):
        super().__init__()
        gen = torch.Generator().manual_seed(seed)

        def rnd(*shape, scale=1.0):
            return torch.nn.Parameter(scale * torch.randn(*shape, generator=gen,
                                                          dtype=torch.float64))

        self.cutoff = cutoff
        self.cutoff_3body = cutoff_3body
        self.num_layers = num_layers
        self.use_triplets = cutoff_3body > 0.0
        self.local_3body = local_3body
        # a broken model for the error tests: energies without an autograd path to the
        # edge vectors (as if exported under torch.no_grad()), so all forces are zero
        self.detach_edges = detach_edges
        self.embed = rnd(ntypes, width, scale=0.5)
        self.w_radial = rnd(num_layers, nrbf, width, scale=0.5)
        self.w_update = rnd(num_layers, width, width, scale=1.0 / math.sqrt(width))
        self.w_3body = rnd(width, scale=0.5)
        self.w_out = rnd(width, scale=0.3)
        self.e_ref = rnd(ntypes)
        self.register_buffer("mu", torch.linspace(0.5, cutoff, nrbf, dtype=torch.float64))

    def forward(self, edge_vec: torch.Tensor, edge_index: torch.Tensor,
                atom_types: torch.Tensor, triplets: torch.Tensor) -> torch.Tensor:
        n = atom_types.shape[0]
        if self.detach_edges:
            edge_vec = edge_vec.detach()
        centre = edge_index[0]
        neigh = edge_index[1]
        r = torch.linalg.norm(edge_vec, dim=1)
        fc = 0.5 * (torch.cos(math.pi * r / self.cutoff) + 1.0)
        rbf = torch.exp(-4.0 * (r.unsqueeze(1) - self.mu) ** 2) * fc.unsqueeze(1)
        h = self.embed[atom_types]
        s3 = torch.zeros(n, dtype=edge_vec.dtype, device=edge_vec.device)
        if self.use_triplets and triplets.shape[0] > 0:
            e1 = triplets[:, 0]
            e2 = triplets[:, 1]
            cos = (edge_vec[e1] * edge_vec[e2]).sum(1) / (r[e1] * r[e2])
            f3 = 0.5 * (torch.cos(math.pi * r / self.cutoff_3body) + 1.0)
            t = f3[e1] * f3[e2] * (1.0 + cos) ** 2
            s3 = s3.index_add(0, centre[e1], t)
            if not self.local_3body:
                h = h + s3.unsqueeze(1) * self.w_3body
        for layer in range(self.num_layers):
            msg = torch.matmul(rbf, self.w_radial[layer]) * h[neigh]
            m = torch.zeros_like(h).index_add(0, centre, msg)
            h = h + torch.tanh(torch.matmul(m, self.w_update[layer]))
        if self.local_3body:
            h = h + torch.tanh(s3.unsqueeze(1) * self.w_3body)
        return torch.matmul(h, self.w_out) + self.e_ref[atom_types]


def checksum(module):
    """FNV-1a 64 over the raw bytes of the state dict tensors in sorted key order."""
    h = 0xcbf29ce484222325
    sd = module.state_dict()
    for key in sorted(sd.keys()):
        data = sd[key].detach().cpu().contiguous().numpy().tobytes()
        for b in data:
            h ^= b
            h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def metadata_text(model, type_names, dtype="float64", drop=(), override=None):
    meta = {
        "format_version": "1",
        "architecture": "toy",
        "cutoff": repr(model.cutoff),
        "cutoff_3body": repr(model.cutoff_3body),
        "num_layers": str(model.num_layers),
        "type_names": " ".join(type_names),
        "units": "metal",
        "dtype": dtype,
        "needs_triplets": "1" if model.cutoff_3body > 0 else "0",
        "checksum": checksum(model),
        "description": "test toy model",
    }
    meta.update(override or {})
    return "".join("%s = %s\n" % (k, v) for k, v in meta.items() if k not in drop)


def save(model, path, type_names=("O", "H"), dtype="float64", drop=(), override=None,
         weights_dtype=None, extra_lines=""):
    """Script and save a model with its metadata; returns the path. For broken files:
    weights_dtype casts the weights to another dtype than the metadata's, extra_lines
    are appended to the metadata text as they are (e.g. a repeated key)."""
    weights_dtype = weights_dtype or dtype
    model = model.to(torch.float64 if weights_dtype == "float64" else torch.float32)
    scripted = torch.jit.script(model)
    text = metadata_text(model, type_names, dtype, drop, override) + extra_lines
    torch.jit.save(scripted, path, _extra_files={"aisci_metadata": text})
    return path


def periodic_graph(x, box, cutoff, cutoff_3body=0.0):
    """Brute-force periodic graph of an orthogonal box with every side > 2 cutoff.

    Returns edge_index [2,E], shift [E,3] (so edge_vec = x[j] - x[i] + shift), triplets."""
    n = len(x)
    d = x[None, :, :] - x[:, None, :]
    shift = -box * np.round(d / box)
    v = d + shift
    r = np.linalg.norm(v, axis=2)
    i, j = np.nonzero((r < cutoff) & ~np.eye(n, dtype=bool))
    edge_index = np.stack([i, j])
    sh = shift[i, j]
    trip = []
    if cutoff_3body > 0:
        rr = r[i, j]
        for c in range(n):
            es = [e for e in np.nonzero(i == c)[0] if rr[e] < cutoff_3body]
            trip += [(a, b) for a in es for b in es if a != b]
    triplets = np.array(trip, dtype=np.int64).reshape(-1, 2)
    return edge_index, sh, triplets


def periodic_graph_cell(x, cell, cutoff, cutoff_3body=0.0):
    """Brute-force periodic graph of a triclinic cell (rows = lattice vectors) whose
    perpendicular widths all exceed the cutoff: the 27 nearest images suffice."""
    n = len(x)
    ii, jj, shifts = [], [], []
    for s in np.array(np.meshgrid([-1, 0, 1], [-1, 0, 1], [-1, 0, 1])).reshape(3, -1).T:
        shift = s @ cell
        v = x[None, :, :] - x[:, None, :] + shift
        r = np.linalg.norm(v, axis=2)
        mask = r < cutoff
        if not s.any():
            mask &= ~np.eye(n, dtype=bool)
        i, j = np.nonzero(mask)
        ii.append(i)
        jj.append(j)
        shifts.append(np.repeat(shift[None, :], len(i), 0))
    i, j, sh = np.concatenate(ii), np.concatenate(jj), np.concatenate(shifts)
    order = np.lexsort((j, i))
    i, j, sh = i[order], j[order], sh[order]
    trip = []
    if cutoff_3body > 0:
        rr = np.linalg.norm(x[j] - x[i] + sh, axis=1)
        for c in range(n):
            es = [e for e in np.nonzero(i == c)[0] if rr[e] < cutoff_3body]
            trip += [(a, b) for a in es for b in es if a != b]
    return np.stack([i, j]), sh, np.array(trip, dtype=np.int64).reshape(-1, 2)


def reference(module, x, box, types, cutoff, cutoff_3body=0.0):
    """Energy (eV), forces (N x 3) and virial (3 x 3) of a periodic frame, from the
    model in Python (forces from autograd with respect to the positions). box is the
    side of a cubic box or a 3 x 3 cell (rows = lattice vectors)."""
    if np.ndim(box) == 2:
        ei, sh, tr = periodic_graph_cell(x, np.asarray(box, dtype=float), cutoff, cutoff_3body)
    else:
        ei, sh, tr = periodic_graph(x, box, cutoff, cutoff_3body)
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    eit = torch.tensor(ei, dtype=torch.int64)
    vec = xt[eit[1]] - xt[eit[0]] + torch.tensor(sh, dtype=torch.float64)
    vec.retain_grad()
    e = module(vec, eit, torch.tensor(types, dtype=torch.int64),
               torch.tensor(tr, dtype=torch.int64)).sum()
    e.backward()
    f = -xt.grad.numpy()
    w = -(vec.detach().numpy().T @ vec.grad.numpy())
    return e.item(), f, w


def random_frame(n, box, types=(0, 1), rmin=1.0, seed=3):
    """n atoms in a cubic box with no pair closer than rmin; types cycle through types."""
    rng = np.random.default_rng(seed)
    x = []
    while len(x) < n:
        p = rng.uniform(0, box, 3)
        ok = True
        for q in x:
            d = p - q
            d -= box * np.round(d / box)
            if np.linalg.norm(d) < rmin:
                ok = False
                break
        if ok:
            x.append(p)
    t = np.array([types[k % len(types)] for k in range(n)])
    return np.array(x), t


def write_data(path, x, box, lmp_types, ntypes, masses=None, tilt=None):
    """LAMMPS data file (atom_style atomic) of an orthogonal box [0, box)^3 (box a number)
    or [0, lx) x [0, ly) x [0, lz) (box = (lx, ly, lz)), or a triclinic one with
    tilt = (xy, xz, yz)."""
    sides = (box, box, box) if np.ndim(box) == 0 else tuple(box)
    with open(path, "w") as f:
        f.write("toy frame\n\n%d atoms\n%d atom types\n\n" % (len(x), ntypes))
        f.write("0 %.16g xlo xhi\n0 %.16g ylo yhi\n0 %.16g zlo zhi\n" % sides)
        if tilt is not None:
            f.write("%.16g %.16g %.16g xy xz yz\n" % tuple(tilt))
        f.write("\nMasses\n\n")
        for t in range(ntypes):
            f.write("%d %g\n" % (t + 1, (masses or [16.0, 1.0, 12.0, 14.0])[t % 4]))
        f.write("\nAtoms # atomic\n\n")
        for k, p in enumerate(x):
            f.write("%d %d %.17g %.17g %.17g\n" % (k + 1, lmp_types[k], p[0], p[1], p[2]))


def skip_without_torch_wrapper():
    """Skip the test (exit 77, reported as skipped by ctest) when the build has no
    libaisci_torch (configured with -DAISCI_ENABLE_TORCH=OFF): nothing to test then."""
    base = os.environ.get("AISCI_BUILD_DIR", os.getcwd())
    if not os.path.exists(os.path.join(base, "lib", "libaisci_torch.so")):
        print("SKIPPED: %s/lib/libaisci_torch.so not built (configured with "
              "-DAISCI_ENABLE_TORCH=OFF?)" % base, flush=True)
        raise SystemExit(77)


def build_dir(name):
    """A scratch folder for one test inside the build tree (or the current folder)."""
    base = os.environ.get("AISCI_BUILD_DIR", os.getcwd())
    d = os.path.join(base, "tests", "nn_scratch", name)
    os.makedirs(d, exist_ok=True)
    return d


# A 6-atom O/H frame and the input that loads one model on it (pair_coeff * * MODEL O H,
# run 0): the set-up of the loader's tests (load reasons, weight integrity, API version).
SMALL_FRAME_SCRIPT = ("units metal\natom_style atomic\nread_data frame.data\npair_style aisci\n"
                      "pair_coeff * * %s O H\nrun 0\n")


def small_frame_files(d):
    """{"frame.data": text} of a 6-atom random O/H frame in a 7 A box (written in d too)."""
    x, types = random_frame(6, 7.0, seed=1)
    path = os.path.join(d, "frame.data")
    write_data(path, x, 7.0, types + 1, 2)
    return {"frame.data": open(path).read()}


# LAMMPS unit constants (29Sep2021, update.cpp): pressure x volume / nktv2p = energy.
NKTV2P = {"metal": 1.6021765e6, "real": 68568.415}
EV_TO_KCAL_MOL = 23.060547830619026


def frame_script(model, units="metal", newton="on", style_args="threads 1", elements="O H",
                 extra="", run="run 0", data="frame.data"):
    """Input script: read a frame, evaluate pair aisci, print energy, pressure virial,
    per-atom sums (thermo), and dump forces, per-atom energy and virial (f.dump)."""
    return """units %s
atom_style atomic
boundary p p p
newton %s
read_data %s
pair_style aisci %s
pair_coeff * * %s %s
neighbor 0.5 bin
compute pea all pe/atom
compute sa all stress/atom NULL virial
compute spe all reduce sum c_pea
compute ssa all reduce sum c_sa[1] c_sa[2] c_sa[3] c_sa[4] c_sa[5] c_sa[6]
compute pv all pressure NULL virial
thermo_style custom step pe c_spe c_pv[1] c_pv[2] c_pv[3] c_pv[4] c_pv[5] c_pv[6] &
  c_ssa[1] c_ssa[2] c_ssa[3] c_ssa[4] c_ssa[5] c_ssa[6] vol
thermo_modify format float %%.17g
%s
dump d all custom 1 f.dump id type x y z fx fy fz c_pea c_sa[1] c_sa[2] c_sa[3] c_sa[4] c_sa[5] c_sa[6]
dump_modify d sort id format float %%.17g
%s
""" % (units, newton, data, style_args, model, elements, extra, run)


def read_dump(path):
    """Last snapshot of a custom dump: dict column -> numpy array (sorted by id)."""
    lines = open(path).read().splitlines()
    start = max(k for k, l in enumerate(lines) if l.startswith("ITEM: ATOMS"))
    cols = lines[start].split()[2:]
    rows = np.array([[float(w) for w in l.split()] for l in lines[start + 1:] if l.strip()])
    return {c: rows[:, k] for k, c in enumerate(cols)}


def thermo_results(run, units="metal"):
    """Energy, virial W (3x3, energy unit), per-atom energy and stress sums from a run."""
    t = run.thermo()
    vol = t["Volume"][-1]
    p = [t["c_pv[%d]" % k][-1] for k in range(1, 7)]
    w6 = np.array(p) * vol / NKTV2P[units]
    w = np.array([[w6[0], w6[3], w6[4]], [w6[3], w6[1], w6[5]], [w6[4], w6[5], w6[2]]])
    ssa = np.array([t["c_ssa[%d]" % k][-1] for k in range(1, 7)])
    return t["PotEng"][-1], w, t["c_spe"][-1], -ssa / NKTV2P[units], w6


class ToyDeepmdFrozen(torch.nn.Module):
    """The methods pair_style aisci reads from a DeePMD-kit frozen model (rcut 6 A, type map
    O H, the given sel, frame and atomic parameter counts), with zero energy, forces and
    virials: for tests of what pair_style aisci reads from such a file and refuses."""

    def __init__(self, sel: List[int] = (46, 92), dim_fparam: int = 0, dim_aparam: int = 0):
        super().__init__()
        self.sel = list(sel)
        self.dim_fparam = dim_fparam
        self.dim_aparam = dim_aparam
        self.w = torch.nn.Parameter(torch.ones(1, dtype=torch.float64))

    def forward(self, coord: torch.Tensor) -> torch.Tensor:
        return coord

    @torch.jit.export
    def forward_lower(self, extended_coord: torch.Tensor, extended_atype: torch.Tensor,
                      nlist: torch.Tensor, mapping: Optional[torch.Tensor] = None,
                      fparam: Optional[torch.Tensor] = None,
                      aparam: Optional[torch.Tensor] = None, do_atomic_virial: bool = False,
                      comm_dict: Optional[Dict[str, torch.Tensor]] = None
                      ) -> Dict[str, torch.Tensor]:
        nall = extended_coord.shape[1]
        nloc = nlist.shape[1]
        z = extended_coord.new_zeros([1])
        return {"energy": (extended_coord * 0.0).sum().reshape(1, 1) * self.w,
                "atom_energy": z.new_zeros([1, nloc, 1]),
                "extended_force": z.new_zeros([1, nall, 3]),
                "virial": z.new_zeros([1, 9]), "extended_virial": z.new_zeros([1, nall, 9])}

    @torch.jit.export
    def get_type_map(self) -> List[str]:
        return ["O", "H"]

    @torch.jit.export
    def get_rcut(self) -> float:
        return 6.0

    @torch.jit.export
    def get_sel(self) -> List[int]:
        return self.sel

    @torch.jit.export
    def get_dim_fparam(self) -> int:
        return self.dim_fparam

    @torch.jit.export
    def get_dim_aparam(self) -> int:
        return self.dim_aparam

    @torch.jit.export
    def has_message_passing(self) -> bool:
        return False

    @torch.jit.export
    def model_output_type(self) -> List[str]:
        return ["energy"]
