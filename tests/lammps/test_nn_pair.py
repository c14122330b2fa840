"""pair_style aisci on one periodic frame, against the same toy model evaluated in
Python: energy, forces, virial, per-atom energy/virial sums; newton on vs off; units
real vs metal; finite-difference forces through the pair style (run 0 on displaced
atoms); float32 precision and threads keywords; a NULL type under hybrid/overlay."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aisci_nn_toy as toy  # noqa: E402

toy.skip_without_torch_wrapper()
import aisci_testlib as T  # noqa: E402

d = toy.build_dir("pair")
RC, RC3, BOX = 3.0, 2.5, 9.0
model = toy.ToyMP(ntypes=2, cutoff=RC, num_layers=2, cutoff_3body=RC3, seed=2)
model_path = toy.save(model, os.path.join(d, "toy.pt"))
x, types = toy.random_frame(30, BOX, seed=4)
toy.write_data(os.path.join(d, "frame.data"), x, BOX, types + 1, 2)
frame = open(os.path.join(d, "frame.data")).read()
e_ref, f_ref, w_ref = toy.reference(model, x, BOX, types, RC, RC3)


def run(**kw):
    r = T.run_lammps(toy.frame_script(model_path, **kw), files={"frame.data": frame})
    ok = T.check(r.rc == 0, "LAMMPS run %s: rc %d\n%s" % (kw, r.rc, r.output[-2000:]))
    if not ok:
        T.summary("test_nn_pair")
    return r


# --- metal, newton on: against Python ---
r_on = run()
e, w, spe, svir, _ = toy.thermo_results(r_on)
dmp = toy.read_dump(os.path.join(r_on.workdir, "f.dump"))
f = np.stack([dmp["fx"], dmp["fy"], dmp["fz"]], 1)
T.check(abs(e - e_ref) < 1e-11 * abs(e_ref), "energy %.17g vs python %.17g" % (e, e_ref))
T.check(np.abs(f - f_ref).max() < 1e-10, "forces vs python: max diff %.2e"
        % np.abs(f - f_ref).max())
T.check(np.abs(w - w_ref).max() < 1e-6 * np.abs(w_ref).max(), "virial vs python:\n%s\n%s"
        % (w, w_ref))
T.check(abs(spe - e) < 1e-11 * abs(e), "sum of pe/atom %.17g == pe %.17g" % (spe, e))
wd = np.array([w_ref[0, 0], w_ref[1, 1], w_ref[2, 2], w_ref[0, 1], w_ref[0, 2], w_ref[1, 2]])
T.check(np.abs(svir - wd).max() < 1e-6 * np.abs(wd).max(),
        "sum of stress/atom == virial: %s vs %s" % (svir, wd))
T.check("type mapping 1->O 2->H" in r_on.output, "type mapping printed")

# --- the ghost-atom graph (what several ranks use) on one rank: same results ---
r_gh = run(style_args="threads 1 graph ghost")
T.check("ghost atom cutoff = 6.5" in r_gh.output, "graph ghost: ghost shell 2 x 3.0 + skin 0.5")
T.check("ghost atom cutoff = 6.5" not in r_on.output, "graph auto on one rank: no wide shell")
eg, wg = toy.thermo_results(r_gh)[:2]
dg = toy.read_dump(os.path.join(r_gh.workdir, "f.dump"))
fg = np.stack([dg["fx"], dg["fy"], dg["fz"]], 1)
T.check(abs(eg - e) < 1e-12 * abs(e) and np.abs(fg - f).max() < 1e-12
        and np.abs(wg - w).max() < 1e-10 * np.abs(w).max(),
        "graph ghost == periodic graph: dF %.2e" % np.abs(fg - f).max())
sa_gh = np.stack([dg["c_sa[%d]" % k] for k in range(1, 7)], 1)
sa_p = np.stack([dmp["c_sa[%d]" % k] for k in range(1, 7)], 1)
T.check(np.abs(dg["c_pea"] - dmp["c_pea"]).max() < 1e-12
        and np.abs(sa_gh - sa_p).max() < 1e-9 * np.abs(sa_p).max(),
        "graph ghost (newton on, LAMMPS reverse comm): pe/atom and stress/atom == periodic")

# --- newton off (ghost graph, own reverse communication): identical results ---
r_off = run(newton="off", style_args="threads 1 graph ghost")
e2, w2, spe2, svir2, _ = toy.thermo_results(r_off)
d2 = toy.read_dump(os.path.join(r_off.workdir, "f.dump"))
f2 = np.stack([d2["fx"], d2["fy"], d2["fz"]], 1)
T.check(abs(e2 - e) < 1e-12 * abs(e), "newton off energy == newton on")
T.check(np.abs(f2 - f).max() < 1e-12, "newton off forces == newton on: %.2e"
        % np.abs(f2 - f).max())
T.check(np.abs(w2 - w).max() < 1e-10 * np.abs(w).max(), "newton off virial == newton on")
T.check(np.abs(d2["c_pea"] - dmp["c_pea"]).max() < 1e-12, "newton off pe/atom == newton on")
sa_on = np.stack([dmp["c_sa[%d]" % k] for k in range(1, 7)], 1)
sa_off = np.stack([d2["c_sa[%d]" % k] for k in range(1, 7)], 1)
T.check(np.abs(sa_off - sa_on).max() < 1e-9 * np.abs(sa_on).max(),
        "newton off stress/atom == newton on: %.2e" % np.abs(sa_off - sa_on).max())

# --- units real: energies and forces in kcal/mol(/A), same virial in energy units ---
r_real = run(units="real")
e3, w3, _, _, _ = toy.thermo_results(r_real, "real")
d3 = toy.read_dump(os.path.join(r_real.workdir, "f.dump"))
f3 = np.stack([d3["fx"], d3["fy"], d3["fz"]], 1)
s = toy.EV_TO_KCAL_MOL
T.check(abs(e3 - s * e) < 1e-11 * abs(s * e), "real energy %.17g == %.17g x metal" % (e3, s))
T.check(np.abs(f3 - s * f).max() < 1e-9, "real forces == s x metal forces")
T.check(np.abs(w3 - s * w).max() < 1e-6 * np.abs(s * w).max(), "real virial == s x metal")

# --- finite differences through the pair style: E(x +- h) for a few atoms ---
h = 1e-4
picks = [(0, 0), (3, 1), (7, 2), (12, 0), (25, 1)]
lines = ["variable e equal pe", "run 0"]
for k, (atom, dim) in enumerate(picks):
    mv = [0.0, 0.0, 0.0]
    mv[dim] = h
    lines += ["group g%d id %d" % (k, atom + 1),
              "displace_atoms g%d move %g %g %g units box" % (k, *mv), "run 0",
              "print 'FD %d plus ${e}'" % k,
              "displace_atoms g%d move %g %g %g units box" % (k, *[-2 * v for v in mv]), "run 0",
              "print 'FD %d minus ${e}'" % k,
              "displace_atoms g%d move %g %g %g units box" % (k, *mv)]
r_fd = run(run="\n".join(lines), extra="")
vals = {}
for line in r_fd.output.splitlines():
    words = line.split()
    if len(words) == 4 and words[0] == "FD":
        vals[(int(words[1]), words[2])] = float(words[3])
for k, (atom, dim) in enumerate(picks):
    if not T.check((k, "plus") in vals and (k, "minus") in vals, "FD energies printed"):
        continue
    f_fd = -(vals[(k, "plus")] - vals[(k, "minus")]) / (2 * h)
    T.check(abs(f_fd - f[atom, dim]) < 1e-6, "FD force atom %d dim %d: %.10g vs %.10g"
            % (atom, dim, f_fd, f[atom, dim]))

# --- precision float32 and threads 2 ---
r32 = run(style_args="precision float32")
e32 = toy.thermo_results(r32)[0]
d32 = toy.read_dump(os.path.join(r32.workdir, "f.dump"))
f32 = np.stack([d32["fx"], d32["fy"], d32["fz"]], 1)
T.check("float32 on cpu" in r32.output, "precision float32 reported")
T.check(abs(e32 - e) < 1e-5 * abs(e) and np.abs(f32 - f).max() < 1e-4,
        "float32 close to float64: dE %.2e, dF %.2e" % (abs(e32 - e), np.abs(f32 - f).max()))
# re-issuing pair_style with other settings reloads the model at the next run
r_re = run(run="run 0\npair_style aisci precision float32\nrun 0")
pe_re = r_re.thermo()["PotEng"]
T.check("float32 on cpu" in r_re.output and len(pe_re) == 2 and pe_re[0] == e
        and pe_re[1] != e and abs(pe_re[1] - e) < 1e-5 * abs(e),
        "pair_style re-issued with precision float32 reloads the model: %s" % pe_re)
r_t2 = run(style_args="threads 2 device cpu precision auto")
dt2 = toy.read_dump(os.path.join(r_t2.workdir, "f.dump"))
ft2 = np.stack([dt2["fx"], dt2["fy"], dt2["fz"]], 1)
T.check(np.abs(ft2 - f).max() < 1e-12, "threads 2 gives the same forces")

# --- a NULL type under hybrid/overlay: type-3 atoms are invisible to the model ---
types3 = types.copy()
types3[::5] = 2                                   # every 5th atom becomes LAMMPS type 3
toy.write_data(os.path.join(d, "frame3.data"), x, BOX, types3 + 1, 3)
keep = types3 < 2
e_k, f_k, _ = toy.reference(model, x[keep], BOX, types3[keep], RC, RC3)
script = toy.frame_script(model_path, data="frame3.data").replace(
    "pair_style aisci threads 1\npair_coeff * * %s O H" % model_path,
    "pair_style hybrid/overlay aisci zero 3.0\npair_coeff * * aisci %s O H NULL\n"
    "pair_coeff * * zero" % model_path)
r_null = T.run_lammps(script, files={"frame3.data": open(os.path.join(d, "frame3.data")).read()})
if T.check(r_null.rc == 0, "hybrid/overlay with NULL type runs:\n" + r_null.output[-1500:]):
    en = toy.thermo_results(r_null)[0]
    dn = toy.read_dump(os.path.join(r_null.workdir, "f.dump"))
    fn = np.stack([dn["fx"], dn["fy"], dn["fz"]], 1)
    T.check(abs(en - e_k) < 1e-11 * abs(e_k), "NULL type: energy of the mapped atoms only")
    T.check(np.abs(fn[keep] - f_k).max() < 1e-10 and np.abs(fn[~keep]).max() == 0.0,
            "NULL type: forces on mapped atoms match, none on NULL atoms")

# --- the box changes between neighbor-list rebuilds (fix deform without remap, atoms
# not integrated): edge vectors of the periodic graph follow the cell through their
# integer images. Forces of step 10 are computed in the box of step 9 (fix deform acts
# at the end of a step). ---
scales = np.array([1.02, 0.99, 1.01])
deform = """fix 2 all deform 1 x scale 1.02 y scale 0.99 z scale 1.01 remap none
neigh_modify every 1 delay 0 check yes
run 10"""
r_def = run(run=deform)
dd = toy.read_dump(os.path.join(r_def.workdir, "f.dump"))
fdef = np.stack([dd["fx"], dd["fy"], dd["fz"]], 1)
cell_d = np.diag(BOX * (1 + (scales - 1) * 0.9))
_, f_dref, _ = toy.reference(model, x, cell_d, types, RC, RC3)
T.check(np.abs(fdef - f_dref).max() < 1e-10, "forces after fix deform vs python: %.2e"
        % np.abs(fdef - f_dref).max())
T.check("Neighbor list builds = 0" in r_def.logs[0].split("Loop time")[-1],
        "fix deform run reused the step-0 graph")

# --- mixed boundaries (p s f): the periodic graph (pbc flags) equals the ghost graph ---
mixed = []
for graph in ("auto", "ghost"):
    script = toy.frame_script(model_path, style_args="threads 1 graph " + graph).replace(
        "boundary p p p", "boundary p s f")
    rm = T.run_lammps(script, files={"frame.data": frame})
    if T.check(rm.rc == 0, "boundary p s f, graph %s:\n%s" % (graph, rm.output[-1500:])):
        dm = toy.read_dump(os.path.join(rm.workdir, "f.dump"))
        mixed.append((toy.thermo_results(rm)[0], np.stack([dm["fx"], dm["fy"], dm["fz"]], 1)))
if len(mixed) == 2:
    T.check(abs(mixed[0][0] - mixed[1][0]) < 1e-12 * abs(mixed[0][0])
            and np.abs(mixed[0][1] - mixed[1][1]).max() < 1e-12
            and abs(mixed[0][0] - e) > 1e-6,
            "boundary p s f: periodic graph == ghost graph, and differs from p p p")

# --- a triclinic cell ---
tilt = (2.0, -1.5, 1.0)
cell = np.array([[BOX, 0, 0], [tilt[0], BOX, 0], [tilt[1], tilt[2], BOX]])
frac = np.random.default_rng(9).uniform(0, 1, (30, 3))
xt = frac @ cell
xt_types = np.arange(30) % 2
toy.write_data(os.path.join(d, "tri.data"), xt, BOX, xt_types + 1, 2, tilt=tilt)
e_t, f_t, w_t = toy.reference(model, xt, cell, xt_types, RC, RC3)
r_tri = T.run_lammps(toy.frame_script(model_path, data="tri.data"),
                     files={"tri.data": open(os.path.join(d, "tri.data")).read()})
if T.check(r_tri.rc == 0, "triclinic run:\n" + r_tri.output[-1500:]):
    et, wt = toy.thermo_results(r_tri)[:2]
    dt = toy.read_dump(os.path.join(r_tri.workdir, "f.dump"))
    ft = np.stack([dt["fx"], dt["fy"], dt["fz"]], 1)
    T.check(abs(et - e_t) < 1e-11 * abs(e_t), "triclinic energy %.15g vs python %.15g"
            % (et, e_t))
    T.check(np.abs(ft - f_t).max() < 1e-10, "triclinic forces vs python: %.2e"
            % np.abs(ft - f_t).max())
    T.check(np.abs(wt - w_t).max() < 1e-6 * np.abs(w_t).max(), "triclinic virial vs python")

T.summary("test_nn_pair")
