"""The restart record of fix pimd/langevin across versions: a file whose global record
has layout 0 (11 values: what releases before layout 1 wrote, for group all) still reads
and continues the run as the continuous one does (to 1e-9, as test_pimd_restart); a
record of a newer layout (2) is refused with an error naming the versions this build
reads. The layout-0 files are made from this build's layout-1 files by rewriting the
record in place (size 104 -> 88 bytes, version 1 -> 0, the method and group count
dropped): the bytes LAMMPS stores for a fix are its ID, its style and then the record as
an int size followed by that many bytes. LJ, P = 2 (-partition 2x1), NVT."""
import os
import struct

import aisci_testlib as T
import pimd_systems as S

P = 2
head, system, dump, second_script = S.restart_scripts()

def rewrite(path, layout):
    """Rewrite the fix's record of a restart file to `layout` (0: the 11-value record; 2:
    the 13-value record with version 2). Returns True if the record was found once."""
    data = open(path, "rb").read()
    style = b"pimd/langevin\0"
    # the global record: the style string followed by the int 104 (the per-atom section
    # that follows later names the style again, with other values after it)
    hits = [i + len(style) for i in range(len(data)) if data.startswith(style, i)
            and data[i + len(style):i + len(style) + 4] == struct.pack("i", 104)]
    if len(hits) != 1:
        return False
    k = hits[0]
    vals = list(struct.unpack("13d", data[k + 4:k + 4 + 104]))
    if vals[6] != 1.0:
        return False
    if layout == 0:
        vals[6] = 0.0
        rec = struct.pack("i", 88) + struct.pack("11d", *vals[:11])
    else:
        vals[6] = float(layout)
        rec = struct.pack("i", 104) + struct.pack("13d", *vals)
    open(path, "wb").write(data[:k] + rec + data[k + 4 + 104:])
    return True


whole = T.run_lammps(head + system + "run 200\n" + dump, nprocs=P, partitions="%dx1" % P)
first = T.run_lammps(head + system + "run 100\nwrite_restart state.${ibead}\n", nprocs=P,
                     partitions="%dx1" % P)
if T.check(whole.rc == 0 and first.rc == 0, "the runs failed:\n" + whole.output[-1500:] +
           first.output[-1500:]):
    files = [os.path.join(first.workdir, "state.%d" % b) for b in range(P)]
    originals = [open(f, "rb").read() for f in files]
    T.check(all(rewrite(f, 0) for f in files), "the layout-1 record found and rewritten")
    old = T.run_lammps(second_script, nprocs=P, partitions="%dx1" % P, workdir=first.workdir)
    if T.check(old.rc == 0, "a layout-0 restart file reads:\n" + old.output[-1500:]):
        for bead in range(P):
            diff = S.final_dump_difference(whole, old, bead)
            ok = diff is not None
            diff = diff if ok else 1
            print("bead %d, from a layout-0 file: max |difference| in x, v = %.3e" % (bead, diff))
            T.check(ok and diff < 1e-9, "bead %d: the run from a layout-0 file differs by %g"
                    % (bead, diff))
    for f, data in zip(files, originals):
        open(f, "wb").write(data)
    T.check(all(rewrite(f, 2) for f in files), "a layout-2 record written")
    new = T.run_lammps(second_script, nprocs=P, partitions="%dx1" % P, workdir=first.workdir)
    T.check(new.rc != 0 and "restart record has layout version 2, this build reads versions "
            "0 and 1 (file written by a newer version of USER-AISCI)" in new.output,
            "a layout-2 record is refused:\n" + new.output[-1500:])
T.summary("test_pimd_restart_layout")
