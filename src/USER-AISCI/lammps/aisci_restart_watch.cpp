/* Checks of the restart files LAMMPS writes: see aisci_restart_watch.h. */
#include "aisci_restart_watch.h"

#include "aisci_lmp.h"

#include "error.h"
#include "input.h"
#include "output.h"
#include "universe.h"
#include "update.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mpi.h>

#include <sys/stat.h>
#include <sys/statvfs.h>

using namespace LAMMPS_NS;

namespace AISCI {

namespace {

/* LAMMPS's MAGIC_STRING (lmprestart.h, not shipped by Debian), written with its NUL at
 * the start and at the end of every restart file. */
const char RESTART_MAGIC[] = "LammpS RestartT";

/* The watches alive in this process, for the exit handler. */
std::vector<RestartWatch *> &watches()
{
  static std::vector<RestartWatch *> list;
  return list;
}

/* "" when `path` is a complete restart file or no file; else what is wrong with it. */
std::string incomplete(const std::string &path)
{
  struct stat sb;
  if (path.empty() || stat(path.c_str(), &sb) != 0 || !S_ISREG(sb.st_mode)) return "";
  const long n = (long) sizeof RESTART_MAGIC;
  const std::string size = std::to_string((long long) sb.st_size) + " bytes";
  if ((long) sb.st_size < n) return size;
  char tail[sizeof RESTART_MAGIC];
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) return "";
  const bool read = std::fseek(f, -n, SEEK_END) == 0 && std::fread(tail, 1, n, f) == (size_t) n;
  std::fclose(f);
  if (read && std::memcmp(tail, RESTART_MAGIC, n) == 0) return "";
  return size + ", without the end marker of a complete restart file";
}

/* Free space of the filesystem holding `path`, as text ("" when unknown). */
std::string free_space(const std::string &path)
{
  const size_t slash = path.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  struct statvfs fs;
  if (statvfs(dir.c_str(), &fs) != 0) return "";
  return std::to_string((unsigned long long) fs.f_bavail * fs.f_frsize) + " bytes free there";
}

/* The name LAMMPS gives a restart file of `step` ('*' replaced by the step). */
std::string restart_name(const char *pattern, long long step)
{
  std::string name = pattern ? pattern : "";
  const size_t star = name.find('*');
  if (star != std::string::npos) name.replace(star, 1, std::to_string(step));
  return name;
}

/* The name of the command LAMMPS is running (Input::command is protected: a member
 * pointer taken in a derived class reads it). */
struct InputCommand : public Input {
  static const char *of(const Input *in)
  {
    char *Input::*member = &InputCommand::command;
    return in ? in->*member : nullptr;
  }
};

/* Files checked: not multiproc ('%': one file per rank group) nor MPI-IO ones. */
bool checkable(const std::string &name)
{
  return !name.empty() && name.find('%') == std::string::npos &&
      name.find(".mpiio") == std::string::npos;
}

}    // namespace

void check_restart_files_at_exit()
{
  for (RestartWatch *w : watches()) w->at_exit();
}

RestartWatch::RestartWatch(LAMMPS *lmp_in, const std::string &style_in) :
    lmp(lmp_in), style(style_in)
{
  MPI_Comm_rank(lmp->world, &me);
  partition = lmp->universe->iworld;
  // the list is built before the handler is registered, so that it outlives the handler
  // (static objects are destroyed in the reverse order of their construction and of
  // atexit registrations, interleaved)
  watches().push_back(this);
  static bool registered = false;
  if (!registered) registered = std::atexit(check_restart_files_at_exit) == 0;
}

RestartWatch::~RestartWatch()
{
  auto &list = watches();
  list.erase(std::remove(list.begin(), list.end(), this), list.end());
}

std::string RestartWatch::report(const std::string &path, const std::string &why,
                                 long long at) const
{
  const std::string space = free_space(path);
  std::string msg = style + ": restart file '" + path + "' of partition " +
      std::to_string(partition) + (at >= 0 ? " (step " + std::to_string(at) + ")" : "") +
      " was not written completely (" + why + (space.empty() ? "" : "; " + space) +
      "): the filesystem is full or the write failed";
  const bool removed = std::remove(path.c_str()) == 0;
  msg += removed ? "; the partial file was removed" : "; the partial file could not be removed";
  return msg;
}

/* Check the noted files; collective: error->all on every rank of the partition. */
void RestartWatch::check(bool collective)
{
  std::string msg;
  if (me == 0)
    for (const std::string &path : files) {
      const std::string why = incomplete(path);
      if (!why.empty()) {
        msg = report(path, why, step);
        break;
      }
    }
  files.clear();
  step = -1;
  if (!collective) return;
  int len = (int) msg.size();
  MPI_Bcast(&len, 1, MPI_INT, 0, lmp->world);
  if (len == 0) return;
  msg.resize(len);
  MPI_Bcast(&msg[0], len, MPI_CHAR, 0, lmp->world);
  lmp->error->all(FLERR, msg);
}

void RestartWatch::end_of_step()
{
  if (step >= 0 && step < (long long) lmp->update->ntimestep) check(true);
  Output *out = lmp->output;
  const bigint now = lmp->update->ntimestep;
  if (!out->restart_flag || out->next_restart != now) return;
  files.clear();
  if (out->restart_flag_single && out->next_restart_single == now)
    files.push_back(restart_name(out->restart1, now));
  if (out->restart_flag_double && out->next_restart_double == now)
    files.push_back(restart_name(out->restart_toggle == 0 ? out->restart2a : out->restart2b, now));
  for (size_t k = 0; k < files.size(); k++)
    if (!checkable(files[k])) files.erase(files.begin() + (long) k--);
  step = files.empty() ? -1 : (long long) now;
}

void RestartWatch::post_run()
{
  if (step >= 0) check(true);
}

void RestartWatch::at_exit()
{
  if (me != 0) return;
  // a write_restart command that failed: LAMMPS's error->all ended the process in it
  const char *command = InputCommand::of(lmp->input);
  if (command && std::strcmp(command, "write_restart") == 0 && lmp->input->narg >= 1) {
    const long long now = lmp->update ? (long long) lmp->update->ntimestep : -1;
    const std::string path = restart_name(lmp->input->arg[0], now);
    if (checkable(path) && std::find(files.begin(), files.end(), path) == files.end()) {
      files.push_back(path);
      step = now;
    }
  }
  for (const std::string &path : files) {
    const std::string why = incomplete(path);
    if (why.empty()) continue;
    const std::string text = "ERROR: " + report(path, why, step) + "\n";
    std::fputs(text.c_str(), stderr);
    std::fflush(stderr);
    append_to_partition_files(lmp, text);
  }
  files.clear();
}

}    // namespace AISCI
