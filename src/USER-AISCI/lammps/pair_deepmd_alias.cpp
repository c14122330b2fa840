/* pair_style deepmd: DeePMD-kit's input syntax on top of pair_style aisci, so that
 * DeePMD-kit users' scripts run unchanged with PyTorch frozen models (.pth).
 *
 *   pair_style deepmd model.pth [keyword value ...]
 *   pair_coeff * * [E1 ... EN]
 *
 * The model file moves from pair_style to pair_coeff and DeePMD-kit's keywords are
 * checked here; everything else (model loading, type mapping, compute) is PairAisci's.
 * Without element names, LAMMPS type i is the model's type i-1 (its type_map in order)
 * and types beyond the model's are left out, as DeePMD-kit does for virtual atoms (the
 * Wannier centroids of DPLR). DeePMD-kit's keywords that need something this package
 * does not do (several models, frame or atomic parameters) are refused by name. The
 * launcher registers the style; the plugin only where the LAMMPS has no deepmd style of
 * its own (plugin.cpp). See docs/deepmd.md. */
#include "pair_aisci.h"

#include "aisci_lmp.h"

#include "atom.h"
#include "comm.h"
#include "error.h"

#include <fstream>
#include <string>
#include <vector>

using namespace LAMMPS_NS;

namespace {

const std::string STYLE = "pair_style deepmd";

/* DeePMD-kit's keywords with the number of values they take (-1: a list running to the
 * next keyword), and, for those refused here, why. */
struct DeepmdKeyword {
  const char *name;
  int nvalues;
  const char *refused;    // nullptr: accepted
};

const DeepmdKeyword DEEPMD_KEYWORDS[] = {
    // model deviation: DeePMD-kit writes it only with several models; with one model
    // these keywords have no effect there either
    {"out_file", 1, nullptr},
    {"out_freq", 1, nullptr},
    {"atomic", 0, nullptr},
    {"relative", 1, nullptr},
    {"relative_v", 1, nullptr},
    {"fparam", -1, "frame parameters are not passed to the model by pair_style aisci "
                   "(models with dim_fparam > 0 need DeePMD-kit's own pair_style deepmd)"},
    {"aparam", -1, "atomic parameters are not passed to the model by pair_style aisci "
                   "(models with dim_aparam > 0 need DeePMD-kit's own pair_style deepmd)"},
    {"fparam_from_compute", 1, "frame parameters are not passed to the model by "
                               "pair_style aisci"},
    {"fparam_from_fix", -1, "frame parameters are not passed to the model by "
                            "pair_style aisci"},
    {"aparam_from_compute", 1, "atomic parameters are not passed to the model by "
                               "pair_style aisci"},
    {"ttm", 1, "electronic temperatures (fix ttm) as atomic parameters are not supported"},
    {"virtual_type", -1, "virtual types are not supported; map such types to NULL in "
                         "pair_coeff instead"},
};

/* pair_style aisci's own keywords, accepted after DeePMD-kit's (an extension). */
const std::vector<std::string> AISCI_KEYWORDS = {AISCI::THREADS_KEYWORD, "device", "precision",
                                                 "graph", "ghost", "balance"};

const DeepmdKeyword *deepmd_keyword(const std::string &word)
{
  for (const auto &k : DEEPMD_KEYWORDS)
    if (word == k.name) return &k;
  return nullptr;
}

bool is_aisci_keyword(const std::string &word)
{
  for (const auto &k : AISCI_KEYWORDS)
    if (word == k) return true;
  return false;
}

bool is_keyword(const std::string &word)
{
  return deepmd_keyword(word) || is_aisci_keyword(word);
}

bool ends_with(const std::string &s, const std::string &tail)
{
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/* "accepted: ..., and pair_style aisci's ...; refused: ..." from the tables above. */
std::string keyword_listing()
{
  std::string accepted, refused, aisci;
  for (const auto &k : DEEPMD_KEYWORDS) {
    std::string &list = k.refused ? refused : accepted;
    list += (list.empty() ? "" : ", ") + std::string(k.name);
  }
  for (const auto &k : AISCI_KEYWORDS) aisci += (aisci.empty() ? "" : ", ") + k;
  return "accepted: " + accepted + ", and pair_style aisci's " + aisci + "; refused: " + refused;
}

/* A model file: DeePMD-kit's extensions, or any existing file. */
bool looks_like_model(const std::string &word)
{
  for (const char *ext : {".pth", ".pb", ".savedmodel"})
    if (ends_with(word, ext)) return true;
  return std::ifstream(word).good();
}

}    // namespace

namespace LAMMPS_NS {

class PairDeepmdAlias : public PairAisci {
 public:
  PairDeepmdAlias(LAMMPS *lmp) : PairAisci(lmp) { style_label = STYLE; }
  void settings(int narg, char **arg) override;
  void coeff(int narg, char **arg) override;
};

/* pair_style deepmd model [keyword value ...]: DeePMD-kit's models come first, up to the
 * first keyword; pair_style aisci's keywords are passed on unchanged. */
void PairDeepmdAlias::settings(int narg, char **arg)
{
  std::vector<std::string> models;
  int iarg = 0;
  // models up to the first keyword, as DeePMD-kit reads them; a later word that is
  // neither a keyword nor a model file name is reported as an unknown keyword
  while (iarg < narg && !is_keyword(arg[iarg]) && (models.empty() || looks_like_model(arg[iarg])))
    models.emplace_back(arg[iarg++]);
  if (models.empty())
    error->all(FLERR, STYLE + ": expected a model file first (pair_style deepmd model.pth "
                              "[keyword value ...])");
  if (models.size() > 1)
    error->all(FLERR, STYLE + ": " + std::to_string(models.size()) +
                          " models given; model deviation over several models is not "
                          "supported here (one model only; DeePMD-kit's lmp computes it)");
  const std::string &model = models[0];
  if (ends_with(model, ".pb") || ends_with(model, ".savedmodel"))
    error->all(FLERR, STYLE + ": model file '" + model +
                          "' is a TensorFlow or JAX model; only PyTorch frozen models (.pth, "
                          "from dp --pt freeze) are supported");

  std::vector<char *> aisci_args;
  std::string ignored;
  while (iarg < narg) {
    const std::string key = arg[iarg];
    const DeepmdKeyword *k = deepmd_keyword(key);
    if (k && k->refused)
      error->all(FLERR, STYLE + ": keyword " + key + " is not supported: " + k->refused);
    if (k) {
      AISCI::need_values(lmp, STYLE, iarg, narg, arg, k->nvalues);
      if (key == "out_freq") {
        if (AISCI::parse_int(lmp, STYLE, key, arg[iarg + 1]) < 0)
          error->all(FLERR, STYLE + ": out_freq must be >= 0, got " + std::string(arg[iarg + 1]));
      } else if (key == "relative" || key == "relative_v") {
        AISCI::parse_double(lmp, STYLE, key, arg[iarg + 1]);
      }
      ignored += " " + key;
      iarg += 1 + k->nvalues;
    } else if (is_aisci_keyword(key)) {
      // pass the keyword and its values (up to the next keyword) to pair_style aisci,
      // which checks them
      aisci_args.push_back(arg[iarg++]);
      while (iarg < narg && !is_keyword(arg[iarg])) aisci_args.push_back(arg[iarg++]);
    } else {
      error->all(FLERR, STYLE + ": unknown keyword '" + key + "' (" + keyword_listing() + ")");
    }
  }
  PairAisci::settings((int) aisci_args.size(), aisci_args.data());
  // a new model file in a repeated pair_style command is loaded at the next run, with
  // the type mapping of the last pair_coeff
  if (this->model && model != model_file) reload = true;
  model_file = model;
  if (!ignored.empty() && comm->me == 0)
    utils::logmesg(lmp, STYLE + ": keyword(s)" + ignored +
                            " accepted without effect: with one model there is no model "
                            "deviation to write (as in DeePMD-kit)\n");
}

/* pair_coeff * * [E1 ... EN]: with element names as pair_style aisci; without, LAMMPS
 * type i -> the model's type i-1, types beyond the model's -> NULL. */
void PairDeepmdAlias::coeff(int narg, char **arg)
{
  if (narg < 2 || std::string(arg[0]) != "*" || std::string(arg[1]) != "*")
    error->all(FLERR, std::string("pair_coeff deepmd: expected '* *' and optionally one element "
                                  "name per atom type"));
  std::vector<std::string> names;
  for (int i = 2; i < narg; i++) names.emplace_back(arg[i]);
  if (names.empty()) {
    // the model's type_map, in order
    load_model();
    const int nmodel = api->model_num_types(model);
    for (int t = 1; t <= atom->ntypes; t++) {
      const char *name = t - 1 < nmodel ? api->model_type_name(model, t - 1) : nullptr;
      names.emplace_back(name ? name : "NULL");
    }
  }
  std::vector<std::string> words = {"*", "*", model_file};
  words.insert(words.end(), names.begin(), names.end());
  std::vector<char *> args;
  for (auto &w : words) args.push_back(&w[0]);
  PairAisci::coeff((int) args.size(), args.data());
}

}    // namespace LAMMPS_NS

AISCI_REGISTER_PAIR("deepmd", LAMMPS_NS::PairDeepmdAlias,
                    "DeePMD-kit's pair_style deepmd syntax over pair_style aisci (.pth models)");
