"""Errors where users look: the package's errors reach each partition's own log and screen
files (docs/fix_pimd_langevin.md, "Messages in multi-partition runs").

- A setting that differs between partitions (error->universe_all in LAMMPS, which writes
  only to the universe's files): both partitions' log.lammps.N and screen.N carry it, and
  both say first that they wait for all partitions at the fix's first setup.
- An error of one rank that is not its partition's rank 0 (error->one, whose own message
  reaches no partition file from such a rank): a NaN energy on rank 1 of partition 1 of a
  -partition 2x2 run is in log.lammps.1 and screen.1. This part needs the torch wrapper
  and says so when it is not built."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aisci_testlib as T  # noqa: E402
import pimd_systems as S  # noqa: E402

FIX = "fix pimd all pimd/langevin ensemble nvt temp 30 thermostat PILE_L 11"


def files(run, stem, n):
    out = []
    for i in range(n):
        path = os.path.join(run.workdir, "%s.%d" % (stem, i))
        out.append(open(path).read() if os.path.exists(path) else "")
    return out


# --- a setting that differs: the message in every partition's log and screen
script = "variable n world 3 2\n" + S.lj_script(FIX, nsteps=10).replace(
    "block 0 3 0 3 0 3", "block 0 ${n} 0 3 0 3")
r = T.run_lammps(script, nprocs=2, partitions="2x1", timeout=60)
differ = ("ERROR: fix pimd/langevin: partitions (beads) differ in number of atoms: 72 in one "
          "partition, 108 in another")
wait = "fix pimd/langevin: waiting up to 300 s for all 2 partitions to reach the setup of this run"
T.check(r.rc != 0, "differing atom counts: the run fails (rc %d)" % r.rc)
for i, (log, screen) in enumerate(zip(files(r, "log.lammps", 2), files(r, "screen", 2))):
    for name, text in (("log.lammps.%d" % i, log), ("screen.%d" % i, screen)):
        T.check(differ in text, "%s has %r:\n%s" % (name, differ, text[-600:]))
        T.check(text.count(wait) == 1 and text.index(wait) < text.find(differ),
                "%s says once, before the error, %r" % (name, wait))

# --- an error of rank 1 of partition 1 (a NaN energy there only)
base = os.environ.get("AISCI_BUILD_DIR", os.getcwd())
if not os.path.exists(os.path.join(base, "lib", "libaisci_torch.so")):
    print("note: libaisci_torch.so not built: the error->one part was not run")
    T.summary("test_partition_errors")

import aisci_nn_toy as toy  # noqa: E402
import torch  # noqa: E402

d = toy.build_dir("partition_errors")
with open(os.path.join(d, "short_bond_nan.py"), "w") as f:
    f.write('''import torch


class ShortBondNaN(torch.nn.Module):
    """Pair energy log(r - 1): finite beyond 1 A, NaN for an edge shorter than that."""
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(1, dtype=torch.float64))

    def forward(self, edge_vec, edge_index, atom_types, triplets):
        r = torch.linalg.norm(edge_vec, dim=1)
        e = torch.zeros(atom_types.shape[0], dtype=edge_vec.dtype)
        return e.index_add(0, edge_index[0], self.w * torch.log(r - 1.0))
''')
sys.path.insert(0, d)
import short_bond_nan  # noqa: E402

m = short_bond_nan.ShortBondNaN()
m.cutoff, m.cutoff_3body, m.num_layers = 3.0, 0.0, 1
model = os.path.join(d, "short_bond_nan.pt")
torch.jit.save(torch.jit.script(m), model,
               _extra_files={"aisci_metadata": toy.metadata_text(m, ["O", "H"])})

# two ranks per partition split along x (40 A): rank 0 holds a 1.5 A pair near x = 10,
# rank 1 a pair near x = 30 whose length is 1.5 A in partition 0 and 0.8 A in partition 1
script = """variable b world 1.5 0.8
units metal
atom_style atomic
processors 2 1 1
region box block 0 40 0 10 0 10
create_box 2 box
create_atoms 1 single 10.0 5 5
create_atoms 2 single 11.5 5 5
create_atoms 1 single 30.0 5 5
create_atoms 2 single $(30.0 + v_b) 5 5
mass * 1.0
pair_style aisci
pair_coeff * * %s O H
run 0
""" % model
r = T.run_lammps(script, nprocs=4, partitions="2x2", timeout=120)
log, screen = files(r, "log.lammps", 2)[1], files(r, "screen", 2)[1]
expect = "ERROR on proc 1: pair_style aisci: "
for name, text in (("log.lammps.1", log), ("screen.1", screen)):
    line = next((l for l in text.splitlines() if l.startswith(expect)), "")
    T.check(r.rc != 0 and "gave a non-finite energy for atom" in line and model in line,
            "%s has the error of rank 1 (rc %d): %r\n%s" % (name, r.rc, line, r.output[-800:]))
T.summary("test_partition_errors")
