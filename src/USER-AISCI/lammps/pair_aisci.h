/* pair_style aisci: neural-network potentials (TorchScript models of contract v1)
 * through the torch C API of include/aisci/model.h. See docs/pair_aisci.md. */
#ifndef AISCI_PAIR_AISCI_H
#define AISCI_PAIR_AISCI_H

#include "pair.h"

#include <string>
#include <vector>

#include "aisci_torch_loader.h"

extern "C" {
#include "aisci/graph.h"
}

namespace LAMMPS_NS {

struct PairAisciRing;

class PairAisci : public Pair {
 public:
  PairAisci(class LAMMPS *);
  ~PairAisci() override;

  void compute(int, int) override;
  void settings(int, char **) override;
  void coeff(int, char **) override;
  void init_style() override;
  double init_one(int, int) override;
  int pack_forward_comm(int, int *, double *, int, int *) override;
  void unpack_forward_comm(int, int, double *) override;
  int pack_reverse_comm(int, int, double *) override;
  void unpack_reverse_comm(int, int *, double *) override;
  double memory_usage() override;

  // Small read-only accessors for the other USER-AISCI styles (fix dplr, compute
  // aisci/cost, kspace pppm/dplr): no friends, no void pointers.
  // Element name per LAMMPS type (index 1..ntypes, "NULL" for skipped types); empty
  // before pair_coeff.
  const std::vector<std::string> &element_names() const { return elements; }
  // Model type index per LAMMPS type (index 0..ntypes, -1 for skipped types); empty
  // before pair_coeff.
  const std::vector<int> &model_type_map() const { return type_map; }
  bool has_model() const { return model != nullptr; }
  double model_cutoff() const { return cutoff; }                // Angstrom
  double model_cutoff_3body() const { return cutoff_3body; }    // Angstrom, 0: no triplets
  // The model's dplr_beta metadata (1/Angstrom, a DPLR short-range model): true and
  // beta when the model has it, false when it has none or no model is loaded; a LAMMPS
  // error when the value is malformed. For kspace_style pppm/dplr.
  bool model_dplr_beta(double &beta) const;
  // FNV-1a 64 of the bytes of the model file loaded last (0 before a model is loaded),
  // computed once per load; fix pimd/langevin compares it across partitions.
  uint64_t model_file_hash() const { return model_hash; }
  // The pair_style keywords and the pair_coeff element names as given (the model file's
  // path is left out: model_file_hash() stands for it).
  const std::string &input_arguments() const { return input_args; }
  // Size of the graph of the last evaluation: atoms + edges + triplets (ghost centres
  // included).
  double graph_size() const;

  // Work of this rank since the last init (pair_aisci_ring.cpp), for compute aisci/cost.
  struct WorkStats {
    bool ring;             // the ring balancer is active
    double cost_before;    // ring: estimated cost of the owned atoms (last plan)
    double cost_after;     // ring: cost computed here (kept + foreign)
    double max_ratio_before, max_ratio_after;    // ring: max/mean over the ranks
    long n_sent, n_sent_all;                     // ring: own items computed elsewhere
    double model_cpu;        // CPU seconds of this process inside the model calls
    double model_wall;       // wall seconds inside the model calls
    double exchange_wall;    // ring: wall seconds in send_work + return_results
    long steps;              // compute() calls
  };
  WorkStats work_stats() const;

 protected:
  void allocate();
  void load_model();
  void check_all(aisci_status st, const std::string &what);

  // settings
  int nthreads;             // libtorch intra-op threads (0: OMP_NUM_THREADS or 1)
  std::string device;       // "cpu", "cuda", "cuda:N"
  std::string precision;    // "auto", "float32", "float64"
  bool ghost_only;          // graph ghost: never use the periodic graph
  bool periodic;            // this run: one rank, graph over owned atoms and images
  enum GhostMode { GHOST_AUTO, GHOST_EXCHANGE, GHOST_WIDEN };
  int ghost_mode;    // keyword ghost: auto, exchange, widen
  bool exchange;     // this run: ghost features exchanged between layers

  // model and type mapping
  const AISCI::TorchApi *api;
  aisci_model *model;
  std::string model_file;
  uint64_t model_hash;                  // FNV-1a 64 of model_file's bytes
  std::string settings_args, coeff_args;    // as given, for input_args
  std::string input_args;                   // settings_args + " | " + coeff_args
  std::string style_label;    // "pair_style aisci" (or the subclass's name) in messages
  bool exclude_warned;        // the neigh_modify exclude warning was given
  void check_exclusions();    // from init_style(): warn once about neigh_modify exclude
  std::vector<std::string> elements;    // element per LAMMPS type (index 1..ntypes), "NULL"
  std::vector<int> type_map;            // LAMMPS type -> model type index, -1 if skipped
  bool reload;                          // settings changed since the model was loaded
  double cutoff, cutoff_3body;          // Angstrom (metal and real share the length unit)
  int num_layers;
  double energy_scale;    // model energy (eV) -> LAMMPS energy unit

  // pair_aisci_graph.cpp
  void build_candidates();
  void select_edges();
  void box_cell(double cell[3][3]) const;

  // Atoms of mapped types among local + ghost atoms, and candidate edges within
  // cutoff + skin: both fixed between LAMMPS neighbor-list rebuilds.
  aisci_graph *graph;    // candidate edges (with their image shifts)
  bool graph_valid;
  int nall_built;                      // nlocal + nghost when the candidates were built
  bigint ncalls_built;                 // neighbor->ncalls (LAMMPS's build count) then
  int n_local;                         // graph atoms 0..n_local-1 are local atoms
  std::vector<int> atom_index;         // LAMMPS index of each graph atom
  std::vector<double> pos;             // n x 3, positions at the last rebuild
  std::vector<int64_t> model_types;    // n
  // Every step: the edges shorter than the cutoff and their triplets (aisci_graph_select:
  // edge index 2 x E, centres then neighbours; edge vectors E x 3, x_j - x_i + S . cell,
  // Angstrom; triplets T x 2).
  aisci_graph *edges;
  std::vector<double> e_atom, f_model, w_atom;    // n, n x 3, n x 9
  std::vector<double> rbuf;                       // nall x 9: forces (3) + virial (6), newton off
  int rstride;                                    // values per atom in the reverse communication

  // ghost exchange (pair_aisci_exchange.cpp): the model's aisci::ghost_exchange calls
  // copy owned-atom features to their ghost images through LAMMPS's forward
  // communication (and sum ghost gradients back through the reverse communication), in
  // chunks of at most EXCHANGE_CHUNK channels; the ghost shell is then one cutoff.
  static constexpr int EXCHANGE_CHUNK = 32;
  std::vector<double> xbuf;       // nall x xwidth: one chunk of features per atom
  int xwidth;                     // channels in the current chunk
  bool comm_features;             // the reverse communication carries xbuf
  long exchange_calls;            // callbacks since init (forward + reverse)
  std::string select_device();    // device cuda: cuda:(job node-local rank % GPUs)
  void exchange_init();           // from init_style(): mode, callbacks, comm sizes
  void exchange_features(int64_t n, int64_t width, double *features, bool forward);
  static int exchange_forward(void *self, int64_t n, int64_t width, double *features);
  static int exchange_reverse(void *self, int64_t n, int64_t width, double *features);

  // balance ring (pair_aisci_ring.cpp, docs/ringlb.md): one-cutoff models hand the
  // environments of some owned atoms to ring neighbours, which evaluate them.
  double ring_tolerance;         // < 0: balance off
  PairAisciRing *ring;           // the core's balancer and the log flag; null when off
  long graph_builds;             // build_candidates() calls: re-plan after each
  double work_cpu, work_wall;    // model time without the ring (since init)
  long work_steps;
  void balance_init();    // from init_style(): checks, create or drop the ring
  void ring_free();
  aisci_status ring_compute(double *energy, double *w);
  // aisci_ringlb_evaluate's model callback: api->model_compute on this pair's model
  static aisci_status ring_model(void *self, int64_t n_atoms, const int64_t *types,
                                 int64_t n_edges, const int64_t *edge_index,
                                 const double *edge_vec, int64_t n_triplets,
                                 const int64_t *triplets, int64_t n_energy_atoms, double *energy,
                                 double *per_atom_energy, double *forces, double *virial,
                                 double *per_atom_virial);
  // DeePMD-kit frozen models (pair_aisci_deepmd.cpp): extended atoms = the graph atoms
  // (owned, then ghosts within the cutoff + skin), one neighbour row per owned atom.
  bool deepmd;                          // the model file is a DeePMD-kit frozen model
  std::vector<int64_t> deepmd_nlist;    // n_local x width, nearest first, -1 padding
  std::vector<double> deepmd_pos;       // n x 3 positions (Angstrom)
  std::vector<double> edge_r2;          // E squared edge lengths (neighbour order)
  std::vector<int64_t> deepmd_sel;      // the model's get_sel(): one value, or one per type
  bool sel_warned;                      // neighbours beyond sel were reported in this run
  bigint sel_checked;                   // neighbor->ncalls of the last check
  void deepmd_log();                    // from load_model(): what was recognised
  void deepmd_check_sel();              // from deepmd_compute(): warn about truncation
  void deepmd_init();                   // from init_style(): ghost shell, border_op exchange
  aisci_status deepmd_compute(double *energy, double *w);
  static double cpu_seconds();
  static double wall_seconds();
};

}    // namespace LAMMPS_NS

#endif
