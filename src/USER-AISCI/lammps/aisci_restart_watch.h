/* Restart files that LAMMPS could not write completely (a full filesystem, a quota).
 *
 * LAMMPS 29Sep2021 writes a restart file (restart command, write_restart) on the
 * partition's rank 0 and checks ferror() before fclose(): a full filesystem gives "I/O
 * error while writing restart" without the file's name or partition and leaves a
 * truncated, often empty, file; a failure of the last flush in fclose() is not reported
 * at all. A complete restart file ends with LAMMPS's magic string ("LammpS RestartT" and
 * its terminating NUL); a file that exists without it is incomplete.
 *
 * A RestartWatch belongs to a fix (fix pimd/langevin) and is driven by it:
 * - end_of_step() (collective over the partition): checks the files noted on an earlier
 *   step, then notes the files LAMMPS will write after this step's end_of_step
 *   (Output::write runs after the fixes' end_of_step);
 * - post_run() (collective): checks the files of the run's last step;
 * - at process exit (LAMMPS's error->all ends the process with exit() or MPI_Abort():
 *   check_restart_files_at_exit() below):
 *   the files noted for the last step and the file of a write_restart command that was
 *   the last input line, on the partition's rank 0, without MPI.
 * An incomplete file is removed (it cannot be read back; of a `restart N a b` pair, the
 * other, complete file is left) and reported with its path, the partition, the step and
 * the free space left on its filesystem: through error->all during a run, and on stderr
 * and in the partition's log and screen files at exit. Files of multiproc (`%`) and
 * MPI-IO restarts are not checked. */
#ifndef AISCI_RESTART_WATCH_H
#define AISCI_RESTART_WATCH_H

#include "pointers.h"

#include <string>
#include <vector>

namespace AISCI {

class RestartWatch {
 public:
  RestartWatch(LAMMPS_NS::LAMMPS *lmp, const std::string &style);
  ~RestartWatch();
  RestartWatch(const RestartWatch &) = delete;
  RestartWatch &operator=(const RestartWatch &) = delete;

  void end_of_step();
  void post_run();
  /* The exit-time check (called by the process's atexit handler). */
  void at_exit();

 private:
  LAMMPS_NS::LAMMPS *lmp;
  std::string style;
  int me = 0;           // rank in the partition
  int partition = 0;    // universe->iworld
  long long step = -1;  // step whose files are noted
  std::vector<std::string> files;    // noted restart files of `step`

  void check(bool collective);
  std::string report(const std::string &path, const std::string &why, long long at) const;
};

/* The exit-time check of every watch of this process. Registered with atexit() (LAMMPS's
 * error->all in a one-partition run ends with exit()); lmp-aisci also calls it from its
 * MPI_Abort() wrapper (main.cpp), since a multi-partition run ends in MPI_Abort(), which
 * runs no exit handlers. Local, no MPI. */
void check_restart_files_at_exit();

}    // namespace AISCI

#endif
