#!/usr/bin/python3
"""validation/pimd_vs_upstream/examples.py: upstream LAMMPS's own example inputs for fix
pimd/langevin (examples/PACKAGES/pimd of LAMMPS 4Feb2025) through both codes.

  reduced     langevin_reduced_units/in.lmp: LJ (argon in reduced units), 200 atoms,
              P = 2, nmpimd, nvt, OBABO, PILE_L, the lj keyword
  metal_nvt   langevin_metal_units/in.pimd-langevin.metal: argon, 200 atoms, P = 4,
              method pimd (Cartesian), nvt
  metal_npt   langevin_metal_units/in.langevin.metal: the same, nmpimd, npt, iso 1 bar, BZP

The inputs are taken from the Debian source package of LAMMPS 4Feb2025 in $AISCI_PEERS/src
(scripts/install-peers.sh), or from --examples DIR (a copy of examples/PACKAGES/pimd), and
run unchanged except for the run length (--nsteps, default 50000) and the thermo interval
(--thermo, default 10): ours through lmp-aisci, upstream through its lmp (as run.py finds
it). The ensemble averages of the output vector f_1[1..N] (partition 0's log, which holds
bead/mode 0 in both codes), the temperature, the volume and the pressure are compared
after dropping the first --discard fraction (default 0.2): standard errors of --nblocks
block means (default 10) with the decorrelation check of blocks.py; |difference| < 3
combined standard errors counts as agreement. Entries whose definitions differ between
the codes are marked (see docs/validation.md).

Usage: examples.py build/bin/lmp-aisci [--workdir DIR] [--only reduced metal_nvt metal_npt]
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "scripts"))
from aisci_run import mpi_flags, peers_dir  # noqa: E402
from blocks import decorrelated, read_thermo, zscore  # noqa: E402
from run import find_upstream  # noqa: E402

EXAMPLES = {
    "reduced": ("langevin_reduced_units", "in.lmp", 2),
    "metal_nvt": ("langevin_metal_units", "in.pimd-langevin.metal", 4),
    "metal_npt": ("langevin_metal_units", "in.langevin.metal", 4),
}
# output-vector entries whose definitions differ (docs/validation.md)
DIFFERENT = {
    6: "virial KE: -sum x.f/(2P) depends on the unwrapped positions' origin",
    8: "upstream's primitive pressure omits the potential virial",
    9: "upstream's f[9] is (sum KE + sum W)/(3V), not a pressure estimator",
}

# upstream 4Feb2025 errors found by this comparison, per example (docs/validation.md):
# with method pimd (Cartesian beads) its collect_xc() still takes the centroid as
# x / sqrt(P) of replica 0, which is the centroid only for normal-mode coordinates, so
# the centroid-virial estimators use bead 0 / sqrt(P) as the centroid; and its primitive
# pressure is only recomputed on the nmpimd path, so with method pimd it keeps its
# setup value
UPSTREAM_WRONG = {
    "metal_nvt": {
        7: "upstream bug (method pimd): its centroid is bead 0 / sqrt(P), not the bead mean",
        10: "upstream bug (method pimd): centroid-virial pressure from that centroid",
        8: "upstream bug (method pimd): primitive pressure never updated after setup",
    },
}


def find_examples(a, wd):
    if a.examples:
        return a.examples
    dest = os.path.join(wd, "upstream-examples")
    if os.path.isdir(dest):
        return dest
    tars = glob.glob(os.path.join(peers_dir(), "src", "debian-lammps-20250204*", "*.orig.tar.*"))
    if not tars:
        sys.exit("examples.py: no LAMMPS 4Feb2025 source package in $AISCI_PEERS/src "
                 "(scripts/install-peers.sh) and no --examples given")
    with tarfile.open(tars[0]) as t:
        members = [m for m in t.getmembers() if "/examples/PACKAGES/pimd/langevin_" in m.name]
        t.extractall(os.path.join(wd, "tmp-extract"), members=members)
    src = glob.glob(os.path.join(wd, "tmp-extract", "*", "examples", "PACKAGES", "pimd"))[0]
    shutil.move(src, dest)
    shutil.rmtree(os.path.join(wd, "tmp-extract"))
    return dest


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("lmp_aisci")
    p.add_argument("--workdir", default=os.path.join(HERE, "out-examples"))
    p.add_argument("--examples")
    p.add_argument("--only", nargs="+", choices=list(EXAMPLES), default=list(EXAMPLES))
    p.add_argument("--nsteps", type=int, default=50000)
    p.add_argument("--thermo", type=int, default=10)
    p.add_argument("--discard", type=float, default=0.2)
    p.add_argument("--nblocks", type=int, default=10)
    p.add_argument("--upstream-lmp")
    p.add_argument("--upstream-mpirun")
    p.add_argument("--analyze-only", action="store_true")
    p.add_argument("--seed", type=int, help="replace the example's thermostat seed (the word "
                   "after PILE_L) by this one, for a replicate run")
    a = p.parse_args(argv)
    os.makedirs(a.workdir, exist_ok=True)
    wd = os.path.abspath(a.workdir)
    src = find_examples(a, wd)
    up, up_mpirun, why = find_upstream(a)
    print(f"examples.py: upstream: {up} ({why})", flush=True)
    env = dict(os.environ, OMPI_MCA_mpi_yield_when_idle="1", OMP_NUM_THREADS="1",
               MPIR_CVAR_POLLS_BEFORE_YIELD="100", MPIR_CVAR_ENABLE_HEAVY_YIELD="1")
    codes = {"aisci": (os.path.abspath(a.lmp_aisci), "mpirun")}
    if up:
        codes["upstream"] = (up, up_mpirun)
    report = []
    for name in a.only:
        folder, infile, nparts = EXAMPLES[name]
        results = {}
        for code, (exe, mpirun) in codes.items():
            rd = os.path.join(wd, f"{name}.{code}")
            if not a.analyze_only:
                if os.path.isdir(rd):
                    shutil.rmtree(rd)
                shutil.copytree(os.path.join(src, folder), rd)
                text = open(os.path.join(rd, infile)).read()
                text = re.sub(r"^run\s+\d+", f"run {a.nsteps}", text, flags=re.M)
                text = re.sub(r"^thermo\s+\d+", f"thermo {a.thermo}", text, flags=re.M)
                if a.seed is not None:
                    text = re.sub(r"(thermostat\s+PILE_L\s+)\S+", rf"\g<1>{a.seed}", text)
                open(os.path.join(rd, "in.validate"), "w").write(text)
                cmd = [mpirun] + mpi_flags(mpirun, "examples.py") + [
                    "-np", str(nparts), exe, "-in", "in.validate", "-p", f"{nparts}x1",
                    "-log", "log", "-screen", "none"]
                with open(os.path.join(rd, "out"), "w") as f:
                    rc = subprocess.run(cmd, cwd=rd, env=env, stdout=f, stderr=subprocess.STDOUT).returncode
                print(f"  {name} {code}: rc {rc}", flush=True)
            t = read_thermo(os.path.join(rd, "log.0")) if os.path.exists(os.path.join(rd, "log.0")) else {}
            if not t:
                results[code] = None
                continue
            n0 = int(len(t["Step"]) * a.discard)
            results[code] = {k: v[n0:] for k, v in t.items()}
        steps = int(results["aisci"]["Step"][-1]) if results.get("aisci") else a.nsteps
        report.append(f"{name} ({folder}/{infile}, P = {nparts}, {steps} steps, thermo {a.thermo}, "
                      f"first {a.discard:.0%} dropped):")
        if not all(results.get(c) for c in codes) or len(codes) < 2:
            report.append("  incomplete: " + ", ".join(f"{c}: {'ok' if results.get(c) else 'no output'}"
                                                       for c in codes))
            continue
        ra, ru = results["aisci"], results["upstream"]
        keys = [k for k in ra if k != "Step" and k in ru]
        for k in keys:
            m1, s1, r1, ok1 = decorrelated(ra[k], a.nblocks)
            m2, s2, r2, ok2 = decorrelated(ru[k], a.nblocks)
            if s1 == 0 and s2 == 0:
                report.append(f"  {k:10s} ours {m1:14.6g} (constant)  upstream {m2:14.6g} (constant)  "
                              + ("identical" if m1 == m2 else "DIFFER"))
                continue
            z = zscore(m1, s1, m2, s2)
            idx = re.match(r"f_1\[(\d+)\]", k)
            note = DIFFERENT.get(int(idx.group(1))) if idx else None
            wrong = UPSTREAM_WRONG.get(name, {}).get(int(idx.group(1))) if idx else None
            verdict = ("definition differs: " + note) if note else ("agree" if abs(z) < 3 else "DIFFER")
            if wrong:
                verdict = wrong + (" (values agree anyway)" if abs(z) < 3 else "")
            report.append(f"  {k:10s} ours {m1:14.6g} +- {s1:9.3g}  upstream {m2:14.6g} +- {s2:9.3g}"
                          f"  z {z:7.2f}  decorrelated {ok1}/{ok2}  {verdict}")
    text = "\n".join(report) + "\n"
    open(os.path.join(wd, "results.txt"), "w").write(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
