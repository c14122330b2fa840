#!/usr/bin/python3
"""bench/pimd_vs_ipi: fix pimd/langevin against i-PI + Debian LAMMPS (fix ipi) on water.

On the 216-molecule q-TIP4P/F box (examples/water_qtip4pf), PIMD at 298 K with PILE-L
(centroid tau 100 fs, critically damped internal modes), 0.25 fs steps:

  ours       fix pimd/langevin through lmp-aisci, timed at
               P = 4 on 4 partitions (4x1), and with beads_per_world (bpw) at
               P = 4 on 2x1 (bpw 2), P = 8 on 2x1 (bpw 4), P = 32 on 2x1 (bpw 16)
  reference  classical replicas (fix nve + fix langevin), one per partition, on the
             same partition layouts (4x1 and 2x1), in the same invocation
  i-PI       4 beads, <dynamics mode='nvt'> with <thermostat mode='pile_l'>, the same
             steps and time step, forces from 4 LAMMPS clients (fix ipi), one per bead,
             timed for each of its latency settings (--ipi-variants: socket inet or unix,
             the server's <latency>, client matching auto or lock) and each client
             (Debian's lmp, and upstream 4Feb2025's lmp when built, whose fix ipi keeps
             positions continuous so that clients rebuild neighbor lists only when atoms
             moved); i-PI's best counts, and the clients' neighbor-list builds are printed

Our time per step is the slowest partition's "Loop time" / steps. Each ratio is
  (PIMD step time) / ((P / partitions) x (step time of one classical replica per
  partition on the same layout)),
i.e. the cost of one P-bead step relative to P classical steps measured under the same
contention (see bench/pimd_overhead for the one-bead-per-partition version).
i-PI's time per step is taken from two runs of nsteps and nsteps/5 steps:
  (wall(nsteps) - wall(nsteps/5)) / (0.8 nsteps),
which removes start-up and socket set-up; it is compared with our P = 4, 4x1 run (the
same layout: 4 force processes, one per bead), printed as "i-PI / ours".

i-PI is not packaged in Debian. By default the script uses the pip-installed i-PI of
scripts/install-peers.sh ($AISCI_PEERS/ipi, default ~/.cache/aisci-peers/ipi: its bin/i-pi
with its own python); IPI_ROOT=/path/to/i-pi-checkout uses a checkout instead (its bin/i-pi
with PYTHONPATH=$IPI_ROOT and --python, default /usr/bin/python3, which needs numpy).
Without either, the i-PI column prints "skipped: ..." and the rest still runs.

Usage:
  bench/pimd_vs_ipi/pimd_vs_ipi.py /path/to/lmp-aisci [--nsteps 200] [--repeat 1]
      [--debian-lmp /usr/bin/lmp] [--workdir DIR] [--mpiexec mpirun] [--port 31415]
      [--datafile data.equil] [--skip-ipi] [--ipi-variants inet:1e-4:auto unix:1e-3:lock]
      [--ipi-clients debian upstream]
Needs /usr/bin/python3 with numpy (water box generator in potentials/data) unless
--datafile is given.
"""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "scripts"))
from aisci_run import (first_error_in_logs, loop_time, mpi_flags, peers_dir,  # noqa: E402
                       timing_sections, upstream_lmp)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
EXAMPLE = os.path.join(REPO, "examples", "water_qtip4pf")
# (P, partitions, beads per partition) of our runs
LAYOUTS = ((4, 4, 1), (4, 2, 2), (8, 2, 4), (32, 2, 16))
IPI_BEADS = 4








def read_data_atoms(path):
    """Box edges and atoms (id, type, x, y, z) sorted by id, from a LAMMPS data file
    (atom_style full)."""
    lo, hi, atoms, section = [0.0] * 3, [0.0] * 3, [], None
    with open(path) as f:
        for line in f:
            words = line.split("#")[0].split()
            if len(words) >= 4 and words[2:4] in (["xlo", "xhi"], ["ylo", "yhi"], ["zlo", "zhi"]):
                d = "xyz".index(words[2][0])
                lo[d], hi[d] = float(words[0]), float(words[1])
                continue
            if not words:
                continue
            if words[0][0].isalpha():
                section = words[0]
                continue
            if section == "Atoms" and len(words) >= 7:
                atoms.append((int(words[0]), int(words[2]), float(words[4]), float(words[5]),
                              float(words[6])))
    atoms.sort()
    if [a[0] for a in atoms] != list(range(1, len(atoms) + 1)):
        raise ValueError(f"{path}: atom IDs must be 1..N (fix ipi maps i-PI's order to IDs)")
    return lo, hi, atoms


def write_pdb(data_path, pdb_path):
    """i-PI start file: cell from CRYST1, atoms in LAMMPS ID order, names O/H (types 1/2)."""
    lo, hi, atoms = read_data_atoms(data_path)
    with open(pdb_path, "w") as f:
        f.write("CRYST1%9.3f%9.3f%9.3f%7.2f%7.2f%7.2f P 1           1\n"
                % (hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], 90.0, 90.0, 90.0))
        for i, (aid, typ, x, y, z) in enumerate(atoms):
            name = "O" if typ == 1 else "H"
            f.write("ATOM  %5d %-4s HOH  %4d    %8.3f%8.3f%8.3f  1.00  0.00          %2s\n"
                    % (aid % 100000, name, (i // 3 + 1) % 10000, x - lo[0], y - lo[1],
                       z - lo[2], name))
        f.write("END\n")
    return len(atoms)


IPI_XML = """<simulation verbosity='low'>
  <!-- bench/pimd_vs_ipi: 4-bead PIMD of q-TIP4P/F water at 298 K, PILE-L, 0.25 fs -->
  <output prefix='{prefix}'>
    <properties stride='100' filename='out'> [ step, time{{picosecond}}, conserved, potential, kinetic_cv ] </properties>
  </output>
  <total_steps> {nsteps} </total_steps>
  <prng> <seed> 5219 </seed> </prng>
  <ffsocket name='lammps' mode='{socket}' matching='{matching}'>
    <address> {address} </address>
    <port> {port} </port>
    <latency> {latency} </latency>
  </ffsocket>
  <system>
    <initialize nbeads='{nbeads}'>
      <file mode='pdb'> init.pdb </file>
      <velocities mode='thermal' units='kelvin'> 298.0 </velocities>
    </initialize>
    <forces>
      <force forcefield='lammps'> </force>
    </forces>
    <ensemble>
      <temperature units='kelvin'> 298.0 </temperature>
    </ensemble>
    <motion mode='dynamics'>
      <fixcom> True </fixcom>
      <dynamics mode='nvt'>
        <timestep units='femtosecond'> 0.25 </timestep>
        <thermostat mode='pile_l'>
          <tau units='femtosecond'> 100.0 </tau>
        </thermostat>
      </dynamics>
    </motion>
  </system>
</simulation>
"""


def port_free(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("localhost", port))
            return True
        except OSError:
            return False


def got_exit(log_path):
    """True when a fix ipi client's log ends with i-PI's EXIT message (a normal end)."""
    try:
        with open(log_path, errors="replace") as f:
            return "Got EXIT message from i-PI" in f.read()[-2000:]
    except OSError:
        return False


def parse_variant(text):
    """'socket:latency:matching' -> dict (socket inet or unix, latency in s, matching
    auto, any or lock)."""
    parts = text.split(":")
    if len(parts) != 3 or parts[0] not in ("inet", "unix") or parts[2] not in ("auto", "any", "lock"):
        raise argparse.ArgumentTypeError(f"i-PI variant '{text}': expected SOCKET:LATENCY:MATCHING "
                                         "with SOCKET inet or unix, MATCHING auto, any or lock")
    try:
        lat = float(parts[1])
    except ValueError:
        raise argparse.ArgumentTypeError(f"i-PI variant '{text}': latency '{parts[1]}' is not a number")
    return {"socket": parts[0], "latency": lat, "matching": parts[2], "name": text}


def neighbor_builds(path):
    """'Neighbor list builds' of a LAMMPS log; for an i-PI client, which stops on i-PI's
    EXIT message before LAMMPS prints its statistics, the Nbuild column of its last
    thermo line; None when neither is there."""
    n = timing_sections(path).get("nbuild")
    if n is not None or not os.path.exists(path):
        return n
    column = None
    with open(path, errors="replace") as f:
        for line in f:
            words = line.split()
            if words and words[0] == "Step" and "Nbuild" in words:
                column = words.index("Nbuild")
            elif column is not None and len(words) > column and words[0].isdigit():
                n = int(float(words[column]))
    return n


def run_ipi(a, wd, env, nsteps, tag, port, variant, client):
    """One i-PI run with IPI_BEADS LAMMPS clients; returns (wall seconds or error text,
    the clients' mean neighbor-list builds)."""
    address = "localhost" if variant["socket"] == "inet" else f"aisci{port}"
    with open(os.path.join(wd, f"input.{tag}.xml"), "w") as f:
        f.write(IPI_XML.format(prefix=f"ipi.{tag}", nsteps=nsteps, port=port,
                               latency=variant["latency"], nbeads=IPI_BEADS,
                               socket=variant["socket"], matching=variant["matching"],
                               address=address))
    ienv = dict(env)
    if a.ipi_root:
        ienv["PYTHONPATH"] = a.ipi_root + os.pathsep + env.get("PYTHONPATH", "")
    for stale in os.listdir(wd):
        if stale.startswith(f"ipi.{tag}") or stale in ("RESTART", "EXIT"):
            os.remove(os.path.join(wd, stale))
    sock = f"/tmp/ipi_{address}"
    if variant["socket"] == "unix" and os.path.exists(sock):
        os.remove(sock)

    def listening():
        if variant["socket"] == "unix":
            return os.path.exists(sock)
        return not port_free(port)

    t0 = time.time()
    server_log = open(os.path.join(wd, f"out.ipi_server.{tag}"), "w")
    server = subprocess.Popen(a.ipi_cmd + [f"input.{tag}.xml"], cwd=wd, env=ienv,
                              stdout=server_log, stderr=subprocess.STDOUT)
    clients = []
    try:
        # The clients stop with an error when nobody listens yet: wait for the socket.
        deadline = time.time() + 120
        while not listening() and server.poll() is None and time.time() < deadline:
            time.sleep(0.2)
        if server.poll() is not None or not listening():
            return f"i-PI server did not start (see {wd}/out.ipi_server.{tag})", None
        for k in range(IPI_BEADS):
            log = open(os.path.join(wd, f"out.ipi_client.{tag}.{k}"), "w")
            clients.append(subprocess.Popen(
                [client, "-in", os.path.join(HERE, "in.lammps"), "-log",
                 f"log.ipi_client.{tag}.{k}", "-screen", "none", "-var", "mode", "ipi",
                 "-var", "nsteps", "100000000", "-var", "port", str(port),
                 "-var", "host", address, "-var", "socket", variant["socket"],
                 "-var", "ffdir", EXAMPLE, "-var", "irep", str(k + 1)],
                cwd=wd, env=env, stdout=log, stderr=subprocess.STDOUT))
        # Wait for the server; a client that exits with an error first (e.g. a LAMMPS
        # without fix ipi, which is in the MISC package) would leave it waiting forever.
        end = time.time() + a.ipi_timeout
        while server.poll() is None:
            # LAMMPS's fix ipi stops with an error (exit code 1) on i-PI's EXIT message,
            # which i-PI 3 sends at its end, possibly before its own process has exited
            failed = [k for k, c in enumerate(clients)
                      if c.poll() is not None and c.returncode != 0
                      and not got_exit(os.path.join(wd, f"log.ipi_client.{tag}.{k}"))]
            if failed:
                k = failed[0]
                return (f"i-PI client {k} ({client}) exited with {clients[k].returncode}: "
                        f"{first_error_in_logs([os.path.join(wd, f'log.ipi_client.{tag}.{k}')])}"), None
            if time.time() > end:
                raise subprocess.TimeoutExpired(a.ipi_cmd, a.ipi_timeout)
            time.sleep(0.05)
        rc = server.returncode
        wall = time.time() - t0
    except subprocess.TimeoutExpired:
        return f"i-PI did not finish within {a.ipi_timeout} s", None
    finally:
        if server.poll() is None:
            server.kill()
        for c in clients:          # they stop on i-PI's EXIT message; make sure
            try:
                c.wait(timeout=20)
            except subprocess.TimeoutExpired:
                c.kill()
        server_log.close()
    if rc != 0:
        return f"i-PI exited with {rc} (see {wd}/out.ipi_server.{tag})", None
    builds = [neighbor_builds(os.path.join(wd, f"log.ipi_client.{tag}.{k}"))
              for k in range(IPI_BEADS)]
    builds = [b for b in builds if b is not None]
    return wall, (sum(builds) / len(builds) if builds else None)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("lmp_aisci", help="path to build/bin/lmp-aisci")
    p.add_argument("--debian-lmp", default=shutil.which("lmp") or "/usr/bin/lmp",
                   help="Debian's LAMMPS binary, the i-PI client (default: lmp in PATH)")
    p.add_argument("--nsteps", type=int, default=200, help="timed steps per run")
    p.add_argument("--repeat", type=int, default=1,
                   help="runs per configuration, interleaved; the median counts")
    p.add_argument("--nequil", type=int, default=2000,
                   help="classical equilibration steps (0.5 fs) of the starting box")
    p.add_argument("--datafile", help="use this equilibrated data file (216 molecules, "
                   "atom IDs 1..N) instead of making one")
    p.add_argument("--workdir", default=os.path.join(HERE, "out"))
    p.add_argument("--mpiexec", default="mpirun")
    p.add_argument("--port", type=int, default=31415, help="i-PI inet port on localhost")
    p.add_argument("--python", default="/usr/bin/python3", help="interpreter for i-PI")
    p.add_argument("--ipi-variants", nargs="+", type=parse_variant,
                   default=[parse_variant(v) for v in
                            ("inet:1e-4:auto", "unix:1e-4:lock", "unix:1e-3:lock", "unix:1e-5:lock")],
                   help="i-PI settings to time, each SOCKET:LATENCY:MATCHING (socket inet or "
                        "unix, the server's <latency> in s, client matching auto/any/lock); "
                        "the best counts")
    p.add_argument("--ipi-clients", nargs="+", choices=["debian", "upstream"],
                   default=["debian", "upstream"],
                   help="LAMMPS executables serving as i-PI clients (upstream when built)")
    p.add_argument("--ipi-nsteps", type=int, default=0,
                   help="i-PI run length (default: --nsteps; the short run is a fifth)")
    p.add_argument("--ipi-timeout", type=float, default=3600)
    p.add_argument("--skip-ipi", action="store_true")
    p.add_argument("--layouts", nargs="+", default=[f"{nb}:{n}" for nb, n, _ in LAYOUTS],
                   help="our runs as P:PARTITIONS (default all: 4:4 4:2 8:2 32:2)")
    a = p.parse_args(argv)
    port = a.port
    layouts = [(nb, n, bpw) for nb, n, bpw in LAYOUTS if f"{nb}:{n}" in a.layouts]

    lmp_aisci = os.path.abspath(a.lmp_aisci)
    for exe in (lmp_aisci, a.debian_lmp):
        if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
            sys.exit(f"pimd_vs_ipi: {exe} is not an executable")
    if a.nsteps < 100 or a.nsteps % 100:
        sys.exit("pimd_vs_ipi: --nsteps must be a positive multiple of 100")
    os.makedirs(a.workdir, exist_ok=True)
    wd = os.path.abspath(a.workdir)
    env = dict(os.environ, OMPI_MCA_mpi_yield_when_idle="1", OMP_NUM_THREADS="1")
    mpi = [a.mpiexec] + mpi_flags(a.mpiexec, "pimd_vs_ipi")
    started = time.time()

    # i-PI available? (a checkout in IPI_ROOT, else the pip install in $AISCI_PEERS/ipi)
    a.ipi_root = os.environ.get("IPI_ROOT", "")
    pip_ipi = os.path.join(peers_dir(), "ipi")
    ipi_skip = None
    a.ipi_cmd = None
    if a.skip_ipi:
        ipi_skip = "skipped: --skip-ipi given"
    elif a.ipi_root:
        if not os.path.isfile(os.path.join(a.ipi_root, "bin", "i-pi")):
            ipi_skip = f"skipped: no bin/i-pi in IPI_ROOT={a.ipi_root}"
        elif subprocess.run([a.python, "-c", "import numpy"], capture_output=True).returncode:
            ipi_skip = f"skipped: {a.python} cannot import numpy, which i-PI needs"
        a.ipi_cmd = [a.python, os.path.join(a.ipi_root, "bin", "i-pi")]
    elif os.path.isfile(os.path.join(pip_ipi, "bin", "i-pi")):
        a.ipi_cmd = [os.path.join(pip_ipi, "bin", "python"), os.path.join(pip_ipi, "bin", "i-pi")]
    else:
        ipi_skip = (f"skipped: no i-PI (neither IPI_ROOT nor {pip_ipi}/bin/i-pi; run "
                    "scripts/install-peers.sh ipi or set IPI_ROOT to an i-PI checkout)")
    clients = {}
    if "debian" in a.ipi_clients:
        clients["debian"] = a.debian_lmp
    if "upstream" in a.ipi_clients:
        up, why = upstream_lmp()
        if up:
            clients["upstream"] = up
        else:
            print(f"pimd_vs_ipi: upstream LAMMPS client skipped: {why}", flush=True)
    if not clients and not ipi_skip:
        ipi_skip = "skipped: no LAMMPS client"
    if ipi_skip:
        print("pimd_vs_ipi: i-PI " + ipi_skip, flush=True)
    else:
        print("pimd_vs_ipi: i-PI: " + " ".join(a.ipi_cmd), flush=True)

    # ---- The box.
    data = os.path.join(wd, "data.equil")
    if a.datafile:
        shutil.copy(a.datafile, data)
    else:
        genv = dict(env, PYTHONPATH=REPO + os.pathsep + env.get("PYTHONPATH", ""))
        subprocess.run([sys.executable, "-m", "potentials.data.water_box", "data.water",
                        "--molecules", "216", "--density", "0.997", "--seed", "2009"],
                       cwd=wd, env=genv, check=True, stdout=subprocess.DEVNULL)
        print(f"pimd_vs_ipi: equilibrating the 216-molecule box ({a.nequil} steps) in {wd}",
              flush=True)
        with open(os.path.join(wd, "out.equil"), "w") as f:
            rc = subprocess.run(mpi + ["-np", "2", lmp_aisci, "-in",
                                       os.path.join(EXAMPLE, "in.classical"), "-log", "log.equil",
                                       "-screen", "none", "-var", "ffdir", EXAMPLE, "-var",
                                       "nequil", str(a.nequil), "-var", "nsample", "10"],
                                cwd=wd, env=env, stdout=f, stderr=subprocess.STDOUT).returncode
        if rc != 0 or not os.path.exists(data):
            sys.exit(f"pimd_vs_ipi: equilibration failed, see {wd}/log.equil")
    natoms = write_pdb(data, os.path.join(wd, "init.pdb"))

    def timed(mode, nparts, bpw, tag):
        """One lmp-aisci run; returns seconds per step (slowest partition) or error text."""
        cmd = mpi + ["-np", str(nparts), lmp_aisci, "-partition", f"{nparts}x1",
                     "-in", os.path.join(HERE, "in.lammps"), "-plog", f"log.{tag}",
                     "-pscreen", "none", "-log", f"log.{tag}", "-var", "mode", mode,
                     "-var", "nsteps", str(a.nsteps), "-var", "bpw", str(bpw),
                     "-var", "ffdir", EXAMPLE]
        for stale in os.listdir(wd):
            if stale.startswith(f"log.{tag}") or stale == "tmp.lammps.variable":
                os.remove(os.path.join(wd, stale))
        t0 = time.time()
        with open(os.path.join(wd, f"out.{tag}"), "w") as f:
            rc = subprocess.run(cmd, cwd=wd, env=env, stdout=f,
                                stderr=subprocess.STDOUT).returncode
        times = [loop_time(os.path.join(wd, f"log.{tag}.{k}")) for k in range(nparts)]
        if rc == 0 and all(t is not None for t in times):
            res = max(times) / a.nsteps
            msg = f"{1e3 * res:.2f} ms/step"
        else:
            res = first_error_in_logs([os.path.join(wd, f"log.{tag}.{k}") for k in range(nparts)]
                              + [os.path.join(wd, f"out.{tag}")])
            msg = "FAILED: " + res
        print(f"  {tag}: {msg} (wall {time.time() - t0:.1f} s)", flush=True)
        return res

    load_before = os.getloadavg()
    results = {}
    for rep in range(a.repeat):
        for nparts in sorted({n for _, n, _ in layouts}, reverse=True):
            results.setdefault(("classical", nparts), []).append(
                timed("classical", nparts, 1, f"classical.{nparts}x1.r{rep}"))
        for nb, nparts, bpw in layouts:
            results.setdefault(("aisci", nb, nparts), []).append(
                timed("aisci", nparts, bpw, f"aisci.P{nb}.{nparts}x1.r{rep}"))
        if not ipi_skip:
            nlong = a.ipi_nsteps or a.nsteps
            for cname, cexe in clients.items():
                for v in a.ipi_variants:
                    for n, kind in ((nlong, "long"), (nlong // 5, "short")):
                        tag = f"{cname}.{v['name'].replace(':', '_')}.{kind}.r{rep}"
                        res, nb = run_ipi(a, wd, env, n, tag, port, v, cexe)
                        print(f"  i-PI {IPI_BEADS} beads, {n} steps, client {cname}, {v['name']}: "
                              + (f"wall {res:.1f} s" + (f", client neighbor builds {nb:.0f}" if nb is not None else "")
                                 if isinstance(res, float) else "FAILED: " + res), flush=True)
                        results.setdefault(("ipi", cname, v["name"], kind), []).append(res)
                        if kind == "long" and nb is not None:
                            results.setdefault(("ipi_builds", cname, v["name"]), []).append(nb)
                        port += 1      # a fresh port: the previous one may linger in TIME_WAIT
    load_after = os.getloadavg()

    def median(key):
        vals = results.get(key, [])
        ok = [x for x in vals if isinstance(x, float)]
        if vals and len(ok) == len(vals):
            return statistics.median(ok), None
        return None, next((x for x in vals if not isinstance(x, float)), "not run")

    lines = [f"pimd_vs_ipi: 216 q-TIP4P/F water molecules ({natoms} atoms), 298 K, PILE-L, "
             f"{a.nsteps} steps of 0.25 fs, {os.cpu_count()} cores",
             f"load average before/after: {load_before[0]:.2f} / {load_after[0]:.2f}",
             f"{'P':>3s}  {'layout':14s} {'run':28s} {'ms/step':>9s} {'ratio':>7s}"]
    for nparts in sorted({n for _, n, _ in layouts}, reverse=True):
        t, err = median(("classical", nparts))
        lines.append(f"{'-':>3s}  {f'{nparts}x1':14s} {'classical replica/partition':28s} "
                     + (f"{1e3 * t:9.2f} {'':>7s}" if t else f"{'failed':>9s}  ({err})"))
    ours4 = None
    for nb, nparts, bpw in layouts:
        t, err = median(("aisci", nb, nparts))
        ref, _ = median(("classical", nparts))
        layout = f"{nparts}x1" + (f", bpw {bpw}" if bpw > 1 else "")
        if t is None:
            lines.append(f"{nb:3d}  {layout:14s} {'fix pimd/langevin (ours)':28s} "
                         f"{'failed':>9s} {'-':>7s}  ({err})")
            continue
        if nparts == IPI_BEADS and bpw == 1 and nb == IPI_BEADS:
            ours4 = t
        ratio = f"{t / (nb / nparts * ref):7.3f}" if ref else "    n/a"
        lines.append(f"{nb:3d}  {layout:14s} {'fix pimd/langevin (ours)':28s} "
                     f"{1e3 * t:9.2f} {ratio}")
    if ipi_skip:
        lines.append(f"{IPI_BEADS:3d}  {'4 clients':14s} {'i-PI + lmp (fix ipi)':28s} " + ipi_skip)
    else:
        nlong = a.ipi_nsteps or a.nsteps
        ref, _ = median(("classical", IPI_BEADS))
        best = None
        for cname in clients:
            for v in a.ipi_variants:
                tl, errl = median(("ipi", cname, v["name"], "long"))
                ts, errs = median(("ipi", cname, v["name"], "short"))
                label = f"i-PI {v['name']} {cname}"
                if tl is None or ts is None:
                    lines.append(f"{IPI_BEADS:3d}  {'4 clients':14s} {label:28s} "
                                 f"{'failed':>9s}  ({errl or errs})")
                    continue
                t = (tl - ts) / (nlong - nlong // 5)
                nb = results.get(("ipi_builds", cname, v["name"]))
                ratio = f"{t / ref:7.3f}" if ref else "    n/a"
                lines.append(f"{IPI_BEADS:3d}  {'4 clients':14s} {label:28s} {1e3 * t:9.2f} {ratio}"
                             + (f"  (client nlist builds/{nlong} steps: {statistics.median(nb):.0f})"
                                if nb else ""))
                if best is None or t < best[0]:
                    best = (t, label)
        if best and ours4:
            lines.append(f"i-PI (best: {best[1]}) / ours at P = 4 (4 force processes each): "
                         f"{best[0] / ours4:.2f}x (target >= 3)")
    lines.append("ratio = PIMD step time / ((P / partitions) x classical replica step time on "
                 "the same layout)")
    lines.append(f"total wall time {time.time() - started:.0f} s; logs in {wd}")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(wd, "results.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
