/* lmp-aisci: Debian's LAMMPS with the USER-AISCI styles registered.
 *
 * It behaves exactly like `lmp`: LAMMPS itself parses every command-line flag
 * (-in, -log, -var, -partition, -screen, ...), reads stdin when no -in is given and
 * runs under MPI. After the LAMMPS instance is built, our styles are inserted into
 * its creator maps; `-h` prints our styles before LAMMPS's own help.
 *
 * MPI is initialised with MPI_THREAD_MULTIPLE: kspace_style pppm/dplr runs its Poisson
 * solve (MPI calls on its own communicator) on a second thread while the main thread
 * computes the pair style, which may make MPI calls of its own. If the library grants
 * less, pppm/dplr finds out (MPI_Query_thread) and runs without overlap.
 *
 * glibc malloc: a network evaluation allocates and frees hundreds of MB of activations
 * every step. With glibc's default dynamic thresholds the freed top of the heap is
 * often given back to the kernel and page-faulted in again on the next step; how often
 * depends on what else lives on the heap, and with fix dplr and a fine PPPM mesh the
 * pair style's time doubled (measured: 1.77 vs 0.98 s/step on 2048 atoms). The launcher
 * therefore fixes the thresholds (no trimming, mmap above 32 MiB) unless the user set
 * them (MALLOC_TRIM_THRESHOLD_, MALLOC_MMAP_THRESHOLD_ or GLIBC_TUNABLES). */
#include "aisci_lmp.h"
#include "aisci_restart_watch.h"

#include "input.h"
#include "lammps.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mpi.h>

#include <dlfcn.h>
#include <malloc.h>

using namespace LAMMPS_NS;

/* The LAMMPS `clear` command deletes Force and Modify and builds new ones, which drops
 * styles inserted into their maps. Input::clear() then calls LAMMPS::post_create()
 * through the dynamic linker (a PLT call), so the launcher defines that symbol: the
 * dynamic linker resolves liblammps's call to this definition, which runs the
 * library's own post_create() and then re-inserts our styles. LAMMPS's constructor
 * calls post_create() directly, which is why main() installs the styles itself. */
void LAMMPS::post_create()
{
  using fn_t = void (*)(LAMMPS *);
  static fn_t real = nullptr;
  if (!real) real = (fn_t) dlsym(RTLD_NEXT, "_ZN9LAMMPS_NS6LAMMPS11post_createEv");
  if (real) real(this);
  AISCI::install_styles(this);
}

/* MPI_Abort, through MPI's profiling interface: LAMMPS ends a multi-partition run that
 * failed (error->all, error->one) with MPI_Abort, which runs no exit handlers; the
 * restart-file checks of aisci_restart_watch.h run here first, then PMPI_Abort. The
 * executable exports this definition (-rdynamic), so liblammps's calls reach it. */
extern "C" int MPI_Abort(MPI_Comm comm, int errorcode)
{
  AISCI::check_restart_files_at_exit();
  return PMPI_Abort(comm, errorcode);
}

int main(int argc, char **argv)
{
  if (!getenv("MALLOC_TRIM_THRESHOLD_") && !getenv("MALLOC_MMAP_THRESHOLD_") &&
      !getenv("GLIBC_TUNABLES")) {
    mallopt(M_TRIM_THRESHOLD, -1);    // -1: never trim (mallopt(3))
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
  }
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm world = MPI_COMM_WORLD;

  int me = 0;
  MPI_Comm_rank(world, &me);
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "-help") == 0) {
      if (me == 0) {
        printf("\nlmp-aisci: LAMMPS with the USER-AISCI package\n\n%s\n",
               AISCI::style_listing().c_str());
        fflush(stdout);
      }
      break;
    }
  }

  LAMMPS *lammps = new LAMMPS(argc, argv, world);
  AISCI::install_styles(lammps);
  AISCI::note_partition_files(lammps);
  lammps->input->file();
  delete lammps;

  MPI_Barrier(world);
  MPI_Finalize();
  return 0;
}
