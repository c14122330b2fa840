/* Shared helpers of the USER-AISCI LAMMPS adapters: style registration, error
 * reporting with std::string (see shim/fmt/format.h), argument parsing and turning a
 * core aisci_status into a LAMMPS error. */
#ifndef AISCI_LMP_H
#define AISCI_LMP_H

#include "aisci_lmp_compat.h"
#include "pointers.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" {
#include "aisci/status.h"
}

namespace LAMMPS_NS {
class Pair;
class Fix;
class KSpace;
class Command;
class Compute;
class PairAisci;
class FixDplr;
}    // namespace LAMMPS_NS

namespace AISCI {

enum class StyleKind { PAIR, FIX, KSPACE, COMMAND, COMPUTE };

struct StyleEntry {
  StyleKind kind;
  const char *name;    // LAMMPS style name, e.g. "pimd/langevin"
  const char *info;    // one-line description for `lmp-aisci -h` and `aisci_info`
  void *creator;       // LAMMPS creator function of the matching kind
};

/* Add a style to the package registry (called from static initialisers). */
int register_style(StyleKind kind, const char *name, const char *info, void *creator);

/* All styles of the package, in registration order. */
const std::vector<StyleEntry> &registered_styles();

/* True for styles that stand in for another package's style of the same name (pair_style
 * deepmd): they are installed only where that LAMMPS has no style of the name. */
bool yields_to_native(const StyleEntry &style);

/* True when the LAMMPS instance already has a pair style `name` other than ours. */
bool has_native_pair_style(LAMMPS_NS::LAMMPS *lmp, const StyleEntry &style);

/* The second name under which a style is registered, "<name>/aisci", for the styles whose
 * plain name another package also uses: fix pimd/langevin (LAMMPS's REPLICA package),
 * fix dplr and kspace_style pppm/dplr (DeePMD-kit's plugin); "" for the others. The
 * plugin registers the plain name only where the LAMMPS has none of its own
 * (docs/plugin.md); the second name always refers to ours. */
std::string distinct_name(const StyleEntry &style);

/* True when `fix` is this package's fix dplr (whatever name it was created under). */
bool is_aisci_fix_dplr(LAMMPS_NS::Fix *fix);

/* `fix` as this package's fix dplr, or nullptr when it is another fix. */
const LAMMPS_NS::FixDplr *as_aisci_fix_dplr(LAMMPS_NS::Fix *fix);

/* True when the kspace style in use is this package's pppm/dplr (either name). */
bool uses_aisci_pppm_dplr(LAMMPS_NS::LAMMPS *lmp);

/* The pair style of this package that other styles consult (fix dplr, pppm/dplr, compute
 * aisci/cost): pair_style aisci, or its DeePMD-kit-syntax subclass pair_style deepmd,
 * alone or as a hybrid sub-style; nullptr when there is none. */
LAMMPS_NS::PairAisci *find_aisci_pair(LAMMPS_NS::LAMMPS *lmp);

/* Insert every registered style into the LAMMPS instance's creator maps, under its name
 * and its distinct_name() (except the stand-ins of yields_to_native() where a native
 * style exists). Used by lmp-aisci. Idempotent. */
void install_styles(LAMMPS_NS::LAMMPS *lmp);

/* Set by the plugin's lammpsplugin_init: the styles came in through LAMMPS's plugin
 * loader, which decides the names (plugin.cpp), so aisci_info must not install_styles()
 * (that would put the plain names over a LAMMPS's own fix pimd/langevin behind the
 * loader's back). */
void set_loaded_as_plugin();
bool loaded_as_plugin();

/* Human-readable list of the package's styles (for -h and the aisci_info command). */
std::string style_listing();

/* Creator templates with the signatures LAMMPS's maps expect. */
template <typename T> LAMMPS_NS::Pair *pair_creator(LAMMPS_NS::LAMMPS *lmp)
{
  return new T(lmp);
}
template <typename T> LAMMPS_NS::KSpace *kspace_creator(LAMMPS_NS::LAMMPS *lmp)
{
  return new T(lmp);
}
template <typename T> LAMMPS_NS::Command *command_creator(LAMMPS_NS::LAMMPS *lmp)
{
  return new T(lmp);
}
template <typename T>
LAMMPS_NS::Compute *compute_creator(LAMMPS_NS::LAMMPS *lmp, int narg, char **arg)
{
  return new T(lmp, narg, arg);
}
template <typename T> LAMMPS_NS::Fix *fix_creator(LAMMPS_NS::LAMMPS *lmp, int narg, char **arg)
{
  return new T(lmp, narg, arg);
}

/* Argument parsing helpers: each reports "<style>: <keyword> <what>, got '<value>'"
 * through error->all on failure. */
double parse_double(LAMMPS_NS::LAMMPS *lmp, const std::string &style, const std::string &key,
                    const char *value);
long parse_int(LAMMPS_NS::LAMMPS *lmp, const std::string &style, const std::string &key,
               const char *value);
/* Index of value in choices, or an error listing the allowed values. */
int parse_choice(LAMMPS_NS::LAMMPS *lmp, const std::string &style, const std::string &key,
                 const char *value, const std::vector<std::string> &choices);
/* Error unless at least n values follow keyword arg[iarg]. */
void need_values(LAMMPS_NS::LAMMPS *lmp, const std::string &style, int iarg, int narg, char **arg,
                 int n);

/* The `threads` keyword shared by pair_style aisci (and deepmd) and fix dplr: the number of
 * libtorch threads in arg[iarg + 1], from 0 (OMP_NUM_THREADS, else 1) to 4096. Errors
 * (error->all): "<style>: keyword threads needs 1 value", "<style>: threads expects an
 * integer, got 'X'", "<style>: threads must be >= 0 (0: OMP_NUM_THREADS or 1), got X",
 * "<style>: threads must be <= 4096, got X". */
constexpr const char *THREADS_KEYWORD = "threads";
int parse_threads(LAMMPS_NS::LAMMPS *lmp, const std::string &style, int iarg, int narg, char **arg);

/* A 3 x 3 virial w (row-major: w[3 a + b] = W_ab) in LAMMPS's Voigt order xx yy zz xy xz
 * yz, taken from the upper triangle as it is (not symmetrised), times scale: added to v
 * (add_voigt) or written over it (set_voigt). The one packing of the adapters. */
constexpr int VOIGT_FROM_3X3[6] = {0, 4, 8, 1, 2, 5};    // xx yy zz xy xz yz in w
inline void add_voigt(double *v, const double *w, double scale)
{
  for (int k = 0; k < 6; k++) v[k] += scale * w[VOIGT_FROM_3X3[k]];
}
inline void set_voigt(double *v, const double *w, double scale)
{
  for (int k = 0; k < 6; k++) v[k] = scale * w[VOIGT_FROM_3X3[k]];
}

/* FNV-1a 64 of `n` bytes, continuing from `h` (FNV_OFFSET to start): the hash of text and
 * file contents that settings compared across partitions are reduced to. */
constexpr uint64_t FNV_OFFSET = 14695981039346656037ull;    // 0xcbf29ce484222325
uint64_t fnv1a(const void *data, size_t n, uint64_t h = FNV_OFFSET);
/* FNV-1a 64 of the bytes of file `path`; false when it cannot be read. */
bool file_fnv1a(const std::string &path, uint64_t &hash);
/* The same, read by the partition's rank 0 and broadcast over lmp->world (collective); a
 * file that cannot be read stops every rank with "<style>: cannot read model file ...". */
uint64_t world_file_fnv1a(LAMMPS_NS::LAMMPS *lmp, const std::string &style,
                          const std::string &path);

/* The environment variable `name` read strictly as a number in [lo, hi] (a whole number
 * when `integer`); `fallback` when it is unset or empty. Anything else (text, trailing
 * characters, out of range) stops every rank with "environment variable NAME = 'VALUE'
 * is not <what>" (error->all). The one parser of the package's numeric environment
 * variables (docs/environment.md). */
double env_number(LAMMPS_NS::LAMMPS *lmp, const char *name, double fallback, double lo,
                  double hi, bool integer, const std::string &what);

/* Report a failed core call: all ranks (error->all) or only some (error_one below). */
[[noreturn]] void fail_all(LAMMPS_NS::LAMMPS *lmp, const std::string &style, aisci_status st);
[[noreturn]] void fail_one(LAMMPS_NS::LAMMPS *lmp, const std::string &style, aisci_status st);

/* Errors where users look: each partition's own log and screen files.
 * LAMMPS 29Sep2021's Error::all writes its message there (rank 0 of the partition holds
 * them), but Error::universe_all writes only to the universe's log and screen, and
 * Error::one only through the failing rank's own handles, which ranks other than the
 * partition's rank 0 do not hold. The package's error->one and error->universe_all
 * calls go through these two helpers instead (use them with FLERR, like error->one):
 * - error_one(): a rank other than its partition's rank 0 appends "ERROR on proc N:
 *   msg" (N: rank in the partition, as LAMMPS numbers it) to the partition's log and
 *   screen files, when they are files whose paths note_partition_files() recorded, and
 *   writes it to stderr; then error->one (whose own message reaches the partition's
 *   files on rank 0). Appending races with nothing: the run is about to abort.
 * - error_universe_all(): "ERROR: msg" into the partition's log and screen files
 *   (rank 0 of each partition, flushed) where they are not the universe's; then
 *   error->universe_all. */
[[noreturn]] void error_one(LAMMPS_NS::LAMMPS *lmp, const char *file, int line,
                            const std::string &msg);
[[noreturn]] void error_universe_all(LAMMPS_NS::LAMMPS *lmp, const char *file, int line,
                                     const std::string &msg);

/* Record the paths of the partition's log and screen files on every rank of the
 * partition, for error_one() (collective over lmp->world). lmp-aisci calls it after
 * starting LAMMPS, and the package's styles at init(), so that a `log` command in the
 * input is followed. Paths come from /proc/self/fd (Linux); elsewhere, or where the
 * output is not a regular file (a terminal, /dev/null), none is recorded. Rank 0 of the
 * partition switches its handles of these files to O_APPEND, so that a line another
 * rank appended is not overwritten when rank 0 flushes its buffer later. */
void note_partition_files(LAMMPS_NS::LAMMPS *lmp);

/* Append `text` to the partition's log and screen files recorded by
 * note_partition_files() (nothing where none was recorded). Local, no MPI: for a rank
 * that does not hold the files open, or for the time after LAMMPS closed them. */
void append_to_partition_files(LAMMPS_NS::LAMMPS *lmp, const std::string &text);

}    // namespace AISCI

#define AISCI_CONCAT2(a, b) a##b
#define AISCI_CONCAT(a, b) AISCI_CONCAT2(a, b)
/* Register a style from its adapter's .cpp file. */
#define AISCI_REGISTER_FIX(name, Class, info)                            \
  static int AISCI_CONCAT(aisci_reg_, __LINE__) = AISCI::register_style( \
      AISCI::StyleKind::FIX, name, info, (void *) &AISCI::fix_creator<Class>)
#define AISCI_REGISTER_COMPUTE(name, Class, info)                        \
  static int AISCI_CONCAT(aisci_reg_, __LINE__) = AISCI::register_style( \
      AISCI::StyleKind::COMPUTE, name, info, (void *) &AISCI::compute_creator<Class>)
#define AISCI_REGISTER_PAIR(name, Class, info)                           \
  static int AISCI_CONCAT(aisci_reg_, __LINE__) = AISCI::register_style( \
      AISCI::StyleKind::PAIR, name, info, (void *) &AISCI::pair_creator<Class>)
#define AISCI_REGISTER_KSPACE(name, Class, info)                         \
  static int AISCI_CONCAT(aisci_reg_, __LINE__) = AISCI::register_style( \
      AISCI::StyleKind::KSPACE, name, info, (void *) &AISCI::kspace_creator<Class>)
#define AISCI_REGISTER_COMMAND(name, Class, info)                        \
  static int AISCI_CONCAT(aisci_reg_, __LINE__) = AISCI::register_style( \
      AISCI::StyleKind::COMMAND, name, info, (void *) &AISCI::command_creator<Class>)

#endif
