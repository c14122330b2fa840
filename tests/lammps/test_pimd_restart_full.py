"""fix pimd/langevin: restart files that could not be written completely, on a full
filesystem (a 64 kB tmpfs filled up; docs/fix_pimd_langevin.md, "Restart files").

- -partition 2x1, partition 1's periodic restart file on the full filesystem: LAMMPS stops
  with "I/O error while writing restart" (no name); log.lammps.1 then names the file, the
  partition and the step, and the empty file is gone; partition 0's file is complete.
- one partition, 4 atoms: the file fits in one stdio buffer, LAMMPS's final flush fails
  without an error, and the fix stops the run on the next step naming the file.
- a write_restart command into the full filesystem: named and removed at exit.
Needs root to mount the tmpfs; exits 77 (skipped) with the reason otherwise."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aisci_testlib as T  # noqa: E402
import pimd_systems as S  # noqa: E402

FIX = "fix pimd all pimd/langevin ensemble nvt temp 30 thermostat PILE_L 11"
full = tempfile.mkdtemp(prefix="aisci_fullfs_")
ok = tempfile.mkdtemp(prefix="aisci_restart_ok_")
p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", full],
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
if p.returncode != 0:
    os.rmdir(full)
    T.skip("cannot mount a 64 kB tmpfs to fill up (needs root): %s"
           % p.stdout.decode(errors="replace").strip())


def message(path, partition, step, size="0 bytes"):
    return ("ERROR: fix pimd/langevin: restart file '%s' of partition %d (step %d) was not "
            "written completely (%s; 0 bytes free there): the filesystem is full or the write "
            "failed; the partial file was removed" % (path, partition, step, size))


try:
    with open(os.path.join(full, "filler"), "wb") as f:
        try:
            f.write(b"\0" * (128 << 10))
        except OSError:
            pass
    T.check(os.statvfs(full).f_bavail == 0, "the tmpfs is full")

    # 1. two partitions, partition 1's restart on the full filesystem
    script = "variable d world %s %s\n" % (ok, full) + S.lj_script(
        FIX, nsteps=10, thermo=5).replace("run 10", "restart 5 ${d}/r.*\nrun 10")
    r = T.run_lammps(script, nprocs=2, partitions="2x1", timeout=60)
    lost = os.path.join(full, "r.5")
    T.check(r.rc != 0 and "I/O error while writing restart" in r.logs[1]
            and message(lost, 1, 5) in r.logs[1],
            "2x1: log.lammps.1 names the restart file (rc %d):\n%s" % (r.rc, r.logs[1][-800:]))
    T.check(not os.path.exists(lost), "2x1: the empty restart file was removed")
    kept = os.path.join(ok, "r.5")
    T.check(os.path.exists(kept) and open(kept, "rb").read()[-16:] == b"LammpS RestartT\0",
            "2x1: partition 0's restart file is complete")

    # 2. a 4-atom system: LAMMPS reports nothing, the fix stops the next step
    script = S.lj_script(FIX, nsteps=10, thermo=5).replace("block 0 3 0 3 0 3", "block 0 1 0 1 0 1")
    r = T.run_lammps(script.replace("run 10", "restart 5 %s/small.*\nrun 10" % full), timeout=60)
    lost = os.path.join(full, "small.5")
    T.check(r.rc != 0 and "I/O error" not in r.output and message(lost, 0, 5) in r.logs[0]
            and not os.path.exists(lost),
            "4 atoms: the run stops naming the file (rc %d):\n%s" % (r.rc, r.output[-800:]))

    # 3. write_restart into the full filesystem
    script = S.lj_script(FIX, nsteps=0).replace(
        "run 0", "run 0\nwrite_restart %s/final.restart" % full)
    r = T.run_lammps(script, timeout=60)
    lost = os.path.join(full, "final.restart")
    T.check(r.rc != 0 and message(lost, 0, 0) in r.output and message(lost, 0, 0) in r.logs[0]
            and not os.path.exists(lost),
            "write_restart: named and removed (rc %d):\n%s" % (r.rc, r.output[-800:]))
finally:
    subprocess.run(["umount", full])
    os.rmdir(full)
T.summary("test_pimd_restart_full")
