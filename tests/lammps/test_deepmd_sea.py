"""pair_style aisci with DeePMD-kit's frozen se_e2_a model (deeppot_sea.pth) on DeePMD-kit's
6-atom water system in a 13 A box: total and per-atom energies, forces and per-atom virials
equal DeePMD-kit's published reference values (deepmd_systems.py) to 1e-8 per component
(|a - b| <= 1e-8 max(1, |b|)), in units metal and, after conversion, real; with newton
on and off, on 1 and 2 ranks, with the element order swapped (H O), and with a NULL type
under pair_style hybrid/overlay. The log says that the file was recognised."""
import os

import numpy as np

from aisci_testlib import check, run_lammps, summary
from deepmd_systems import (EV_TO_KCAL_MOL, SEA, SEA_ATOM_ENERGY, SEA_ATOM_VIRIAL, SEA_FORCE,
                            WATER6_BOX, WATER6_TYPES, WATER6_X, close, data_file, need,
                            read_dump)

need(SEA)
TOL = 1e-8
# LAMMPS's nktv2p (29Sep2021, update.cpp): stress/atom = -vatom * nktv2p
NKTV2P = {"metal": 1.6021765e6, "real": 68568.415}


def script(units, newton, elements, extra_types=0, hybrid=False):
    pair = "pair_style aisci\npair_coeff * * %s %s\n" % (SEA, elements)
    if hybrid:
        pair = ("pair_style hybrid/overlay aisci zero 6.0\n"
                "pair_coeff * * aisci %s %s\npair_coeff * * zero\n" % (SEA, elements))
    return """units %s
newton %s
boundary p p p
atom_style atomic
neighbor 2.0 bin
read_data data.lmp
%s
compute pe all pe/atom
compute st all stress/atom NULL pair
compute vir all pressure NULL virial
variable W1 equal c_vir[1]*vol
variable W4 equal c_vir[4]*vol
thermo_style custom step pe v_W1 v_W4
thermo_modify format float %%.15g
dump 1 all custom 1 dump.txt id fx fy fz c_pe c_st[1] c_st[2] c_st[3] c_st[4] c_st[5] c_st[6]
dump_modify 1 format float %%.15g
run 0
""" % (units, newton, pair)


def check_run(label, units, newton="on", nprocs=1, elements="O H", types=WATER6_TYPES,
              hybrid=False):
    x = WATER6_X
    ntypes = 2
    if hybrid:    # a third type (NULL for the model), one atom far from the water
        x = np.vstack([x, [[7.0, 9.0, 9.0]]])
        types = list(types) + [3]
        ntypes = 3
    files = {"data.lmp": data_file(x, types, WATER6_BOX, ntypes=ntypes,
                                   masses=(16.0, 2.0, 1.0)[:ntypes])}
    r = run_lammps(script(units, newton, elements, hybrid=hybrid), nprocs=nprocs, files=files)
    if not check(r.rc == 0, "%s: run failed:\n%s" % (label, r.output[-3000:])):
        return
    check("is a DeePMD-kit frozen model" in r.logs[0], "%s: log does not say the file was "
          "recognised as a DeePMD-kit model" % label)
    scale = EV_TO_KCAL_MOL if units == "real" else 1.0
    th = r.thermo()
    d = read_dump(os.path.join(r.workdir, "dump.txt"))
    n = 6
    ok, dev = close(th["PotEng"][-1], scale * SEA_ATOM_ENERGY.sum(), TOL)
    check(ok, "%s: total energy %.15g vs %.15g (dev %.3g)" % (label, th["PotEng"][-1],
                                                               scale * SEA_ATOM_ENERGY.sum(), dev))
    devs = [dev]
    ok, dev = close(d["c_pe"][:n], scale * SEA_ATOM_ENERGY, TOL)
    check(ok, "%s: per-atom energies deviate by %.3g" % (label, dev))
    devs.append(dev)
    f = np.column_stack([d["fx"], d["fy"], d["fz"]])[:n]
    ok, dev = close(f, scale * SEA_FORCE, TOL)
    check(ok, "%s: forces deviate by %.3g" % (label, dev))
    devs.append(dev)
    if hybrid:
        check(np.all(d["c_pe"][n:] == 0.0) and np.all(f[n:] == 0.0) if len(f) > n else True,
              "%s: the NULL-type atom got energy or force" % label)
    # per-atom virial (LAMMPS xx yy zz xy xz yz) = the model's atom_virial elements
    # 0, 4, 8, 3, 6, 7 (row-major 3x3, DeePMD-kit's ordering)
    vatom = -np.column_stack([d["c_st[%d]" % k] for k in range(1, 7)])[:n] / NKTV2P[units]
    ref = scale * SEA_ATOM_VIRIAL[:, [0, 4, 8, 3, 6, 7]]
    ok, dev = close(vatom, ref, TOL)
    check(ok, "%s: per-atom virials deviate by %.3g" % (label, dev))
    devs.append(dev)
    # the per-atom virials sum to the global virial
    w = np.array([th["v_W1"][-1], th["v_W4"][-1]]) / NKTV2P[units]
    ok, dev = close(w, [ref[:, 0].sum(), ref[:, 3].sum()], TOL)
    check(ok, "%s: global virial xx, xy %s vs the sums of the per-atom virials (dev %.3g)"
          % (label, w, dev))
    print("%s: max deviation %.3g" % (label, max(devs)), flush=True)


check_run("metal newton on", "metal")
check_run("metal newton off", "metal", newton="off")
check_run("real", "real")
check_run("metal 2 ranks", "metal", nprocs=2)
check_run("metal newton off 2 ranks", "metal", newton="off", nprocs=2)
# LAMMPS types 1 = H, 2 = O: the names map through the model's type map (O H)
check_run("type order H O", "metal", elements="H O", types=[3 - t for t in WATER6_TYPES])
check_run("hybrid/overlay with NULL", "metal", elements="O H NULL", hybrid=True)
summary("test_deepmd_sea")
