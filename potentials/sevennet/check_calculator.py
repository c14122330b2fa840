"""Check the contract wrapper against sevenn's own ASE calculator (SevenNet-0, float32).

    $AISCI_PEERS/sevenn/bin/python -m potentials.sevennet.check_calculator
Measured: energy identical, forces within 1.1e-6 eV/A (24-atom water box).
"""
import numpy as np, torch, ase
from sevenn.calculator import SevenNetCalculator
from potentials.sevennet import model as M, export as X
from potentials.data.water_box import make_water_box
torch.set_num_threads(1)
box = make_water_box(8, 1.0, seed=11)
at = ase.Atoms(numbers=[8 if t == 1 else 1 for t in box["types"]], positions=box["positions"], cell=np.diag(box["box"]), pbc=True)
calc = SevenNetCalculator("7net-0", device="cpu")
at.calc = calc
e_ref, f_ref = at.get_potential_energy(), at.get_forces()
m, cfg = M.load_sevennet0()
em = M.wrap(cfg, m.state_dict(), torch.float32)
g = X.check_graph()
e, f = M.energy_forces(em, g[0].float(), g[1], g[2])
print("ours vs sevenn calculator (float32): dE/E %.2e, max dF %.2e eV/A (|F|max %.2f)" % (abs(e.item()-e_ref)/abs(e_ref), np.abs(f.numpy()-f_ref).max(), np.abs(f_ref).max()))
