/* Style registry and shared helpers of the USER-AISCI LAMMPS adapters. */
#include "aisci_lmp.h"

#include "comm.h"
#include "command.h"
#include "error.h"
#include "fix_dplr.h"
#include "force.h"
#include "input.h"
#include "kspace_pppm_dplr.h"
#include "modify.h"
#include "pair_aisci.h"
#include "universe.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace LAMMPS_NS;

namespace AISCI {

static std::vector<StyleEntry> &registry()
{
  static std::vector<StyleEntry> entries;
  return entries;
}

int register_style(StyleKind kind, const char *name, const char *info, void *creator)
{
  registry().push_back({kind, name, info, creator});
  return (int) registry().size();
}

const std::vector<StyleEntry> &registered_styles()
{
  return registry();
}

bool yields_to_native(const StyleEntry &style)
{
  static const char *const stand_ins[] = {"deepmd"};
  if (style.kind != StyleKind::PAIR) return false;
  for (const char *name : stand_ins)
    if (std::string(style.name) == name) return true;
  return false;
}

bool has_native_pair_style(LAMMPS *lmp, const StyleEntry &style)
{
  auto it = lmp->force->pair_map->find(style.name);
  return it != lmp->force->pair_map->end() && (void *) it->second != style.creator;
}

std::string distinct_name(const StyleEntry &style)
{
  struct Shared {
    StyleKind kind;
    const char *name;
  };
  static const Shared shared[] = {{StyleKind::FIX, "pimd/langevin"},
                                  {StyleKind::FIX, "dplr"},
                                  {StyleKind::KSPACE, "pppm/dplr"}};
  for (const auto &s : shared)
    if (s.kind == style.kind && std::string(style.name) == s.name)
      return std::string(s.name) + "/aisci";
  return "";
}

bool is_aisci_fix_dplr(Fix *fix)
{
  return dynamic_cast<FixDplr *>(fix) != nullptr;
}

const FixDplr *as_aisci_fix_dplr(Fix *fix)
{
  return dynamic_cast<const FixDplr *>(fix);
}

bool uses_aisci_pppm_dplr(LAMMPS *lmp)
{
  return dynamic_cast<PPPMDplr *>(lmp->force->kspace) != nullptr;
}

PairAisci *find_aisci_pair(LAMMPS *lmp)
{
  for (const char *name : {"aisci", "deepmd"}) {
    // dynamic_cast: a LAMMPS with DeePMD-kit's own pair_style deepmd keeps that one
    auto pair = dynamic_cast<PairAisci *>(lmp->force->pair_match(name, 1));
    if (pair) return pair;
  }
  return nullptr;
}

void install_styles(LAMMPS *lmp)
{
  for (const auto &s : registry()) {
    if (yields_to_native(s) && has_native_pair_style(lmp, s)) continue;
    for (const std::string &name : {std::string(s.name), distinct_name(s)}) {
      if (name.empty()) continue;
      switch (s.kind) {
        case StyleKind::PAIR:
          (*lmp->force->pair_map)[name] = (Force::PairCreator) s.creator;
          break;
        case StyleKind::KSPACE:
          (*lmp->force->kspace_map)[name] = (Force::KSpaceCreator) s.creator;
          break;
        case StyleKind::FIX:
          (*lmp->modify->fix_map)[name] = (Modify::FixCreator) s.creator;
          break;
        case StyleKind::COMMAND:
          (*lmp->input->command_map)[name] = (Input::CommandCreator) s.creator;
          break;
        case StyleKind::COMPUTE:
          (*lmp->modify->compute_map)[name] = (Modify::ComputeCreator) s.creator;
          break;
      }
    }
  }
}

namespace {
bool g_loaded_as_plugin = false;
}
void set_loaded_as_plugin() { g_loaded_as_plugin = true; }
bool loaded_as_plugin() { return g_loaded_as_plugin; }

std::string style_listing()
{
  static const char *kinds[] = {"pair_style", "fix", "kspace_style", "command", "compute"};
  std::string out = "USER-AISCI styles:\n";
  for (const auto &s : registry()) {
    std::string kind = kinds[(int) s.kind];
    std::string line = "  " + kind + std::string(14 - kind.size(), ' ') + s.name;
    if (line.size() < 34) line += std::string(34 - line.size(), ' ');
    out += line + " " + s.info + "\n";
  }
  return out;
}

double parse_double(LAMMPS *lmp, const std::string &style, const std::string &key,
                    const char *value)
{
  char *end = nullptr;
  errno = 0;
  double v = strtod(value, &end);
  if (end == value || *end != '\0' || errno == ERANGE || !std::isfinite(v))
    lmp->error->all(FLERR,
                    style + ": " + key + " expects a number, got '" + std::string(value) + "'");
  return v;
}

long parse_int(LAMMPS *lmp, const std::string &style, const std::string &key, const char *value)
{
  char *end = nullptr;
  errno = 0;
  long v = strtol(value, &end, 10);
  if (end == value || *end != '\0' || errno == ERANGE)
    lmp->error->all(FLERR,
                    style + ": " + key + " expects an integer, got '" + std::string(value) + "'");
  return v;
}

int parse_choice(LAMMPS *lmp, const std::string &style, const std::string &key, const char *value,
                 const std::vector<std::string> &choices)
{
  for (size_t i = 0; i < choices.size(); i++)
    if (choices[i] == value) return (int) i;
  std::string allowed;
  for (size_t i = 0; i < choices.size(); i++) allowed += (i ? ", " : "") + choices[i];
  lmp->error->all(FLERR,
                  style + ": unknown " + key + " value '" + std::string(value) +
                      "' (expected one of: " + allowed + ")");
  return -1;
}

void need_values(LAMMPS *lmp, const std::string &style, int iarg, int narg, char **arg, int n)
{
  if (iarg + n >= narg)
    lmp->error->all(FLERR,
                    style + ": keyword " + std::string(arg[iarg]) + " needs " + std::to_string(n) +
                        (n == 1 ? " value" : " values"));
}

int parse_threads(LAMMPS *lmp, const std::string &style, int iarg, int narg, char **arg)
{
  need_values(lmp, style, iarg, narg, arg, 1);
  const char *value = arg[iarg + 1];
  const long n = parse_int(lmp, style, THREADS_KEYWORD, value);
  if (n < 0)
    lmp->error->all(FLERR,
                    style + ": threads must be >= 0 (0: OMP_NUM_THREADS or 1), got " +
                        std::string(value));
  if (n > 4096)
    lmp->error->all(FLERR, style + ": threads must be <= 4096, got " + std::string(value));
  return (int) n;
}

uint64_t fnv1a(const void *data, size_t n, uint64_t h)
{
  const unsigned char *p = static_cast<const unsigned char *>(data);
  for (size_t k = 0; k < n; k++) {
    h ^= p[k];
    h *= 1099511628211ull;
  }
  return h;
}

bool file_fnv1a(const std::string &path, uint64_t &hash)
{
  FILE *f = fopen(path.c_str(), "rb");
  if (!f) return false;
  std::vector<char> buf(1 << 20);
  uint64_t h = FNV_OFFSET;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), f)) > 0) h = fnv1a(buf.data(), n, h);
  const bool ok = !ferror(f);
  fclose(f);
  if (ok) hash = h;
  return ok;
}

uint64_t world_file_fnv1a(LAMMPS *lmp, const std::string &style, const std::string &path)
{
  uint64_t hash = 0;
  int readable = 1;
  if (lmp->comm->me == 0) readable = file_fnv1a(path, hash) ? 1 : 0;
  MPI_Bcast(&hash, 1, MPI_UINT64_T, 0, lmp->world);
  MPI_Bcast(&readable, 1, MPI_INT, 0, lmp->world);
  if (!readable)
    lmp->error->all(FLERR, style + ": cannot read model file '" + path + "' to hash it");
  return hash;
}

double env_number(LAMMPS *lmp, const char *name, double fallback, double lo, double hi,
                  bool integer, const std::string &what)
{
  const char *text = std::getenv(name);
  if (!text || !*text) return fallback;
  char *end = nullptr;
  errno = 0;
  const double v = strtod(text, &end);
  // strtod skips leading blanks and reads "inf", "nan" and hexadecimal: none is a value
  // a person writes for these variables, so only plain decimal text is accepted
  const bool plain = std::string(text).find_first_not_of("0123456789.eE+-") == std::string::npos;
  if (!plain || end == text || *end != '\0' || errno == ERANGE || !std::isfinite(v) || v < lo ||
      v > hi || (integer && v != std::floor(v)))
    lmp->error->all(FLERR,
                    std::string("environment variable ") + name + " = '" + text + "' is not " +
                        what);
  return v;
}

static std::string core_message(const std::string &style, aisci_status st)
{
  std::string msg = style + ": " + aisci_status_string(st);
  const char *detail = aisci_last_error();
  if (detail && *detail) msg += ": " + std::string(detail);
  return msg;
}

void fail_all(LAMMPS *lmp, const std::string &style, aisci_status st)
{
  lmp->error->all(FLERR, core_message(style, st));
}

void fail_one(LAMMPS *lmp, const std::string &style, aisci_status st)
{
  error_one(lmp, FLERR, core_message(style, st));
}

namespace {

/* Paths of each LAMMPS instance's partition log and screen files ("" when none). */
struct PartitionFiles {
  std::string log, screen;
};
std::map<const LAMMPS *, PartitionFiles> &partition_files()
{
  static std::map<const LAMMPS *, PartitionFiles> files;
  return files;
}

/* Path of the regular file behind `f`, or "" (no file, a terminal, a device, not Linux). */
std::string file_path(FILE *f)
{
  if (!f) return "";
  char link[64], path[4096];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fileno(f));
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return "";
  path[n] = '\0';
  struct stat sb;
  if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) return "";
  return path;
}

void append_line(const std::string &path, const std::string &text)
{
  if (path.empty()) return;
  FILE *f = std::fopen(path.c_str(), "a");
  if (!f) return;
  std::fputs(text.c_str(), f);
  std::fclose(f);
}

}    // namespace

void note_partition_files(LAMMPS *lmp)
{
  // Two paths of up to 4095 characters, broadcast from the partition's rank 0.
  std::vector<char> buf(2 * 4096, '\0');
  int me = 0;
  MPI_Comm_rank(lmp->world, &me);
  if (me == 0) {
    const std::string log = file_path(lmp->logfile), screen = file_path(lmp->screen);
    // Writes of this rank go to the end of the files from now on (O_APPEND), so that a
    // later flush of its buffer does not overwrite a line another rank appended.
    for (const auto &fp :
         {std::make_pair(lmp->logfile, &log), std::make_pair(lmp->screen, &screen)})
      if (FILE *f = fp.first; f && !fp.second->empty()) {
        std::fflush(f);
        const int flags = fcntl(fileno(f), F_GETFL);
        if (flags >= 0) fcntl(fileno(f), F_SETFL, flags | O_APPEND);
      }
    std::snprintf(buf.data(), 4096, "%s", log.c_str());
    std::snprintf(buf.data() + 4096, 4096, "%s", screen.c_str());
  }
  MPI_Bcast(buf.data(), (int) buf.size(), MPI_CHAR, 0, lmp->world);
  partition_files()[lmp] = {std::string(buf.data()), std::string(buf.data() + 4096)};
}

void append_to_partition_files(LAMMPS *lmp, const std::string &text)
{
  auto it = partition_files().find(lmp);
  if (it == partition_files().end()) return;
  append_line(it->second.log, text);
  if (it->second.screen != it->second.log) append_line(it->second.screen, text);
}

void error_one(LAMMPS *lmp, const char *file, int line, const std::string &msg)
{
  int me = 0;
  MPI_Comm_rank(lmp->world, &me);
  if (me != 0) {
    const std::string text = "ERROR on proc " + std::to_string(me) + ": " + msg + "\n";
    append_to_partition_files(lmp, text);
    // and to stderr, unless that is one of those files already (2>&1 into the screen file)
    auto it = partition_files().find(lmp);
    const std::string err = file_path(stderr);
    if (err.empty() || it == partition_files().end() ||
        (err != it->second.log && err != it->second.screen)) {
      std::fputs(text.c_str(), stderr);
      std::fflush(stderr);
    }
  }
  lmp->error->one(file, line, msg);
}

void error_universe_all(LAMMPS *lmp, const char *file, int line, const std::string &msg)
{
  const std::string text = "ERROR: " + msg + "\n";
  Universe *u = lmp->universe;
  for (FILE *f : {lmp->logfile, lmp->screen}) {
    if (!f || f == u->ulogfile || f == u->uscreen) continue;
    std::fputs(text.c_str(), f);
    std::fflush(f);
  }
  lmp->error->universe_all(file, line, msg);
}

/* aisci_info: list the package's styles (and, in lmp-aisci, re-install them, a no-op
 * normally; loaded as a plugin, LAMMPS's loader owns the names: list only). */
class CommandAisciInfo : public Command {
 public:
  CommandAisciInfo(LAMMPS *lmp) : Command(lmp) {}
  void command(int narg, char **) override
  {
    if (narg != 0) error->all(FLERR, std::string("aisci_info: takes no arguments"));
    if (!loaded_as_plugin()) install_styles(lmp);
    if (comm->me == 0) utils::logmesg(lmp, style_listing());
  }
};

}    // namespace AISCI

AISCI_REGISTER_COMMAND("aisci_info", AISCI::CommandAisciInfo, "list the styles of this package");
