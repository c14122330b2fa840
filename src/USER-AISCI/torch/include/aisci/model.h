/**
 * @file model.h
 * @brief C API over libtorch: load a TorchScript neural-network potential (model-file
 *        contract v1), query its metadata, and compute energy, forces and virial.
 *
 * The library (libaisci_torch) is C++ inside and C outside: no C++ exception crosses
 * this interface. Every fallible call returns an ::aisci_status and sets the detail of
 * a failure in aisci_last_error() (which file, which key, which argument).
 *
 * Shape: create once (expensive: loads libtorch code, verifies the file), compute every
 * step, destroy. A model handle is not thread-safe; use one handle per thread.
 *
 * Model-file contract v1 (summary; docs/pair_aisci.md has the full text): a TorchScript
 * module saved with an extra file "aisci_metadata" holding `key = value` lines
 * (format_version, architecture, cutoff, cutoff_3body, num_layers, type_names, units,
 * dtype, needs_triplets, checksum); forward(edge_vec [E,3], edge_index [2,E] int64,
 * atom_types [N] int64, triplets [T,2] int64) returns per-atom energies [N].
 * Lengths are Angstrom and energies eV (units = metal); conversion to other unit
 * systems is the caller's business. Vector models (metadata `output = vector`, the DW
 * model of DPLR, docs/dplr.md) return per-atom vectors [N, 3] instead and go through
 * aisci_model_compute_vector() and aisci_model_vector_backward().
 * @since 0.1.0
 */
#ifndef AISCI_MODEL_H
#define AISCI_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "aisci/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** API version of libaisci_torch (semantic versioning, the rules of aisci/version.h): the
 * version of this header. A program that loads the library at run time (lmp-aisci, the
 * LAMMPS plugin) compares it with aisci_torch_api_version() of the library it loaded.
 * @since 0.1.0 */
#define AISCI_TORCH_API_VERSION_MAJOR 0
#define AISCI_TORCH_API_VERSION_MINOR 1 /**< @since 0.1.0 */
#define AISCI_TORCH_API_VERSION_PATCH 0 /**< @since 0.1.0 */
/** The three numbers as a string. @since 0.1.0 */
#define AISCI_TORCH_API_VERSION "0.1.0"

/** Largest model cutoff (metadata key cutoff) accepted, in Angstrom: NN potentials use
 * a few Angstrom; a larger value is a broken file, not a model. @since 0.1.0 */
#define AISCI_MODEL_MAX_CUTOFF 100.0

/** Opaque handle of a loaded model (TorchScript module, metadata, device, precision). */
typedef struct aisci_model aisci_model;

/**
 * Load a model file and verify it.
 *
 * Checks, in order: the file exists and is readable (AISCI_ERR_IO); libtorch loads it
 * as TorchScript (AISCI_ERR_FORMAT with libtorch's reason: a truncated or corrupt
 * archive, an operator this process does not know, ...); it carries "aisci_metadata"
 * with every required key once, each well formed (AISCI_ERR_FORMAT, the message names
 * the key; cutoff must be in (0, AISCI_MODEL_MAX_CUTOFF]); format_version is 1; the
 * FNV-1a checksum of the weights matches the metadata key checksum when the file has
 * one (a mismatch: AISCI_ERR_FORMAT, "is damaged", with the expected and found values;
 * a file without the key loads unverified and aisci_model_metadata(model, "checksum")
 * is then NULL); every weight is finite (AISCI_ERR_FORMAT, "has non-finite weights",
 * checked for DeePMD-kit files too); every floating-point weight has the metadata's
 * dtype (AISCI_ERR_FORMAT). A compute call whose result is not finite checks the
 * weights again before it reports the non-finite value (both since 0.6).
 *
 * @param path      model file (TorchScript .pt).
 * @param device    "cpu", "cuda" or "cuda:N" (AISCI_ERR_ARG if unknown, or if this
 *                  libtorch has no CUDA device N).
 * @param precision "auto" (the model's own dtype from the metadata), "float32" or
 *                  "float64": the dtype the network is evaluated in.
 * @param nthreads  intra-op threads for libtorch on the CPU (process-wide setting);
 *                  > 0 sets that many, 0 takes OMP_NUM_THREADS if set and valid, else 1.
 * @param[out] out  receives the model; NULL on any failure (never a half-built handle).
 * @return AISCI_OK, AISCI_ERR_ARG, AISCI_ERR_IO, AISCI_ERR_FORMAT, AISCI_ERR_ALLOC or
 *         AISCI_ERR_MODEL (libtorch failed while moving the model to the device).
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_model_create(const char *path, const char *device,
                                          const char *precision, int nthreads,
                                          aisci_model **out);

/** Release a model. NULL is accepted and ignored. @since 0.1.0 */
AISCI_API void aisci_model_destroy(aisci_model *model);

/** Edge cutoff r_c in Angstrom (0 for NULL). @since 0.1.0 */
AISCI_API double aisci_model_cutoff(const aisci_model *model);

/** Three-body cutoff in Angstrom; 0 when the model uses no triplets (0 for NULL). @since 0.1.0 */
AISCI_API double aisci_model_cutoff_3body(const aisci_model *model);

/**
 * Number L of message-passing layers. A caller without feature exchange across domains
 * needs every atom within L x cutoff of the atoms whose energies it sums (0 for NULL).
 * @since 0.1.0
 */
AISCI_API int aisci_model_num_layers(const aisci_model *model);

/** 1 if forward() needs the triplet list (needs_triplets = 1), else 0. @since 0.1.0 */
AISCI_API int aisci_model_needs_triplets(const aisci_model *model);

/** Number of atom types (element names) of the model (0 for NULL). @since 0.1.0 */
AISCI_API int aisci_model_num_types(const aisci_model *model);

/** Element name of model type @p index (borrowed), NULL if out of range. @since 0.1.0 */
AISCI_API const char *aisci_model_type_name(const aisci_model *model, int index);

/**
 * Model type index of element @p name.
 * @return AISCI_OK, or AISCI_ERR_ARG if the model does not know @p name (the message
 *         lists the names it knows).
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_model_type_index(const aisci_model *model, const char *name,
                                              int *index);

/**
 * Check that the network can evaluate atoms of model type @p index: one forward() pass
 * on three atoms of that type on a triangle of side half the (3-body) cutoff, with its
 * six edges and, for models that need them, its triplets. Catches a model whose
 * type_names lists more elements than its network has types for (an embedding table
 * with too few rows).
 * @return AISCI_OK; AISCI_ERR_ARG for a NULL model or an index outside [0, num_types);
 *         AISCI_ERR_MODEL naming the element and file, with libtorch's reason, if the
 *         forward pass fails.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_model_check_type(aisci_model *model, int index);

/** Precision the network is evaluated in: "float32" or "float64" (borrowed). @since 0.1.0 */
AISCI_API const char *aisci_model_dtype(const aisci_model *model);

/** Architecture name from the metadata, e.g. "matris" or "dpa3" (borrowed). @since 0.1.0 */
AISCI_API const char *aisci_model_architecture(const aisci_model *model);

/** Unit system declared by the model, "metal" for contract v1 (borrowed). @since 0.1.0 */
AISCI_API const char *aisci_model_units(const aisci_model *model);

/** Device the model runs on, e.g. "cpu" or "cuda:0" (borrowed). @since 0.1.0 */
AISCI_API const char *aisci_model_device(const aisci_model *model);

/** Raw value of any metadata key (borrowed), NULL if the key is absent. @since 0.1.0 */
AISCI_API const char *aisci_model_metadata(const aisci_model *model, const char *key);

/**
 * Evaluate the model on a graph of n_atoms atoms: energy, and optionally per-atom
 * energies, forces, virial and per-atom virial, from one forward and one backward pass
 * (the edge vectors are the autograd leaf).
 *
 * With g_e = dE/d(edge_vec[e]) for edge e = (i, j) and E the sum of the per-atom
 * energies of atoms 0..n_energy_atoms-1: F_i += g_e, F_j -= g_e, and the virial
 * W = -sum_e edge_vec[e] (x) g_e. Forces reach every atom that appears in an edge,
 * ghosts included (the caller sends ghost forces to their owners).
 *
 * @param model          a model from aisci_model_create().
 * @param n_atoms        N >= 0 atoms (e.g. LAMMPS local then ghost atoms).
 * @param types          N model type indices in [0, num_types).
 * @param n_edges        E >= 0.
 * @param edge_index     2 x E row-major: [0, E) centres i, [E, 2E) neighbours j, in [0, N).
 * @param edge_vec       E x 3 row-major, x_j - x_i in Angstrom.
 * @param n_triplets     T >= 0 (ignored, and treated as 0, if the model needs none).
 * @param triplets       T x 2 row-major edge ids (may be NULL if T == 0).
 * @param n_energy_atoms energies are summed over atoms 0..n_energy_atoms-1 (<= N).
 * @param[out] energy          sum of those energies, eV (required).
 * @param[out] per_atom_energy N energies, eV, or NULL if not wanted.
 * @param[out] forces          N x 3 forces, eV/Angstrom, overwritten, or NULL.
 * @param[out] virial          3 x 3 row-major virial W[a][b], eV, or NULL.
 * @param[out] per_atom_virial N x 9 row-major per-atom virial, eV, or NULL: each edge's
 *                             -edge_vec (x) g is split in halves between i and j.
 * @return AISCI_OK; AISCI_ERR_ARG for a NULL model/required array, a negative count, a
 *         type or edge/atom index out of range; AISCI_ERR_MODEL if forward() or the
 *         backward pass fails, returns the wrong shape or type, or gives non-finite
 *         energies or forces. On failure the outputs are unspecified.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_model_compute(aisci_model *model, int64_t n_atoms,
                                           const int64_t *types, int64_t n_edges,
                                           const int64_t *edge_index, const double *edge_vec,
                                           int64_t n_triplets, const int64_t *triplets,
                                           int64_t n_energy_atoms, double *energy,
                                           double *per_atom_energy, double *forces,
                                           double *virial, double *per_atom_virial);

/**
 * Output kind of the model, from the optional metadata key `output`: 0 for per-atom
 * energies (`output = energy`, or the key absent), 1 for per-atom vectors
 * (`output = vector`, e.g. the DW model of DPLR, architecture dw). -1 for NULL.
 * @since 0.1.0
 */
AISCI_API int aisci_model_output_is_vector(const aisci_model *model);

/**
 * Forward pass of a vector model (`output = vector`, e.g. the DPLR DW model): the
 * per-atom displacement d_i (Angstrom) of n_atoms atoms; atoms of types the model does
 * not select get zeros. Inputs as for aisci_model_compute().
 *
 * The autograd graph of this forward pass (edge vectors as the leaf) stays alive inside
 * the handle until the next aisci_model_compute_vector() or aisci_model_compute() call
 * on the same handle, or aisci_model_destroy(), so that aisci_model_vector_backward()
 * can follow, any number of times. A failed call leaves no graph behind.
 *
 * @param[out] vectors n_atoms x 3 row-major displacements, Angstrom (required).
 * @return AISCI_OK; AISCI_ERR_ARG as aisci_model_compute() (NULL model or vectors,
 *         counts, indices); AISCI_ERR_MODEL if the model is an energy model (the message
 *         names the file), if forward() fails, returns a shape other than [n_atoms, 3],
 *         or gives non-finite values.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_model_compute_vector(aisci_model *model, int64_t n_atoms,
                                                  const int64_t *types, int64_t n_edges,
                                                  const int64_t *edge_index,
                                                  const double *edge_vec, int64_t n_triplets,
                                                  const int64_t *triplets, double *vectors);

/**
 * Backward pass through the last aisci_model_compute_vector() on this handle: one
 * vector-Jacobian product. With E = sum_i grad_out_i . d_i(x) (e.g. grad_out_i =
 * dE_elec/d(d_i), the force-free derivative of the electrostatic energy with respect to
 * the Wannier centroid of atom i), G_e = dE/d(edge_vec[e]) for edge e = (i, j) gives
 * F_i += G_e, F_j -= G_e (F = -dE/dx, ghosts included, as in the energy path) and
 * W += -sum_e edge_vec[e] (x) G_e.
 *
 * @param grad_out n_atoms x 3 row-major dE/d(d_i), eV/Angstrom (required; n_atoms of
 *                 the forward pass).
 * @param[in,out] forces  n_atoms x 3, eV/Angstrom, ACCUMULATED (+=), or NULL.
 * @param[in,out] virial9 3 x 3 row-major virial, eV, ACCUMULATED (+=), or NULL.
 * @return AISCI_OK; AISCI_ERR_ARG for a NULL model or grad_out, or if no forward pass
 *         of a vector model is held (call aisci_model_compute_vector() first);
 *         AISCI_ERR_MODEL if the model is an energy model (message names the file), if
 *         the backward pass fails or gives non-finite forces (outputs then unchanged).
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_model_vector_backward(aisci_model *model, const double *grad_out,
                                                   double *forces, double *virial9);

/**
 * Ghost-feature exchange callback, called by the model's aisci::ghost_exchange operator
 * inside aisci_model_compute() (docs/pair_aisci.md, "Ghost-feature exchange").
 *
 * @param user_data the pointer given to aisci_model_set_exchange().
 * @param n_atoms   N graph atoms of the current aisci_model_compute() call.
 * @param width     C feature channels.
 * @param[in,out] features N x C row-major, float64, on the host. Forward callback:
 *                overwrite the rows of ghost atoms with their owners' rows (owned rows
 *                unchanged). Reverse callback (the transpose, in the backward pass):
 *                add every ghost row into its owner's row, then set the ghost rows to 0.
 * @return 0 on success; any other value makes the compute call fail (AISCI_ERR_MODEL).
 *         Both callbacks are collective in a parallel caller: every rank's model makes
 *         the same calls in the same order, also on ranks with no atoms or no edges.
 * @since 0.1.0
 */
typedef int (*aisci_exchange_fn)(void *user_data, int64_t n_atoms, int64_t width,
                                 double *features);

/**
 * 1 if the model calls aisci::ghost_exchange between its message-passing layers
 * (metadata `ghost_exchange = 1`, export with potentials/common/export.py
 * --ghost-exchange), else 0 (also for NULL). Such a model needs only the edges of the
 * owned atoms and ghosts within one cutoff, when exchange callbacks are set; without
 * them the operator is the identity and the model behaves as one without exchange.
 * @since 0.1.0
 */
AISCI_API int aisci_model_ghost_exchange(const aisci_model *model);

/**
 * Register (or, with both NULL, remove) the ghost-feature exchange callbacks of a model.
 * They are called only inside aisci_model_compute() on this handle; the features of the
 * first n_energy_atoms graph atoms are the owned ones.
 *
 * @param forward   forward callback (owners -> ghosts), or NULL.
 * @param reverse   reverse callback (ghost gradients -> owners), or NULL.
 * @param user_data passed unchanged to both callbacks.
 * @return AISCI_OK; AISCI_ERR_ARG for a NULL model or only one of the two callbacks;
 *         AISCI_ERR_MODEL if callbacks are given for a model without
 *         `ghost_exchange = 1` (the message names the file).
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_model_set_exchange(aisci_model *model, aisci_exchange_fn forward,
                                                aisci_exchange_fn reverse, void *user_data);

/**
 * API version of this libaisci_torch. Never fails; it is the first symbol a loader
 * resolves, before any other, so that a wrapper from another release is named as such.
 * @param major, minor, patch outputs (each may be NULL).
 * @return the version as a static string "MAJOR.MINOR.PATCH".
 * @since 0.1.0
 */
AISCI_API const char *aisci_torch_api_version(int *major, int *minor, int *patch);

/**
 * Number of CUDA devices this libtorch sees (0 for a CPU-only libtorch or no GPU).
 * Lets a parallel caller choose "cuda:N" per rank, e.g. N = node-local rank % count.
 * @since 0.1.0
 */
AISCI_API int aisci_torch_cuda_device_count(void);


/**
 * Statistics of the caching CPU allocator (docs/pair_aisci.md, "Memory"). libtorch's CPU
 * tensors of 64 KiB and more come from per-size-class free lists that keep their blocks
 * between calls, so a force evaluation does not page-fault its working set in again
 * every step; a cached block that no request took during the last 8 calls of this API
 * is given back to the system. The choice is made once per process, at the first
 * aisci_model_create(), from the environment variable AISCI_CPU_ALLOCATOR: "caching"
 * (the default) or "default" (libtorch's own allocator); any other value makes
 * aisci_model_create() fail with AISCI_ERR_ARG.
 */
typedef struct aisci_cpu_cache_stats {
  size_t in_use_bytes;      /* in blocks handed out now (rounded to the size class) */
  size_t cached_bytes;      /* in free blocks kept for reuse */
  size_t peak_in_use_bytes; /* largest in_use_bytes so far */
  size_t peak_held_bytes;   /* largest in_use_bytes + cached_bytes so far */
  uint64_t calls;           /* C API calls counted so far */
} aisci_cpu_cache_stats;

/**
 * The CPU allocator in use: "caching", "default", or "" before the first
 * aisci_model_create(). Fills *stats when stats is not NULL (all zero unless caching).
 * @since 0.1.0
 */
AISCI_API const char *aisci_torch_cpu_allocator(aisci_cpu_cache_stats *stats);

/**
 * Give every block the caching allocator holds free back to the system now (blocks in
 * use are not touched); no effect with the default allocator. For a caller that
 * switches to a much smaller system, or measures memory between runs.
 * @since 0.1.0
 */
AISCI_API void aisci_torch_cpu_cache_release(void);


/**
 * File format of a loaded model: "aisci" (our contract v1, with aisci_metadata) or
 * "deepmd-kit" (a DeePMD-kit PyTorch frozen model, `dp --pt freeze`: TorchScript with
 * forward_lower(), get_type_map() and get_rcut() and no aisci_metadata); NULL for NULL.
 *
 * aisci_model_create() recognises a DeePMD-kit file and takes its type names
 * (get_type_map()), cutoff (get_rcut()) and dtype from the model; it refuses (AISCI_ERR_FORMAT)
 * a model with frame or atomic parameters (get_dim_fparam() or get_dim_aparam() > 0), an
 * output other than energy or dipole, and (AISCI_ERR_ARG) a precision other than auto or
 * the model's own. A file that needs a custom operator this library does not provide
 * (e.g. deepmd::tabulate_fusion_se_a of compressed models) fails to load with libtorch's
 * reason in the message. The operator deepmd::border_op of message-passing models (DPA2,
 * DPA3) is provided: it runs the exchange callbacks of aisci_model_set_exchange().
 * For such a model aisci_model_ghost_exchange() is 1 when it passes messages, and
 * aisci_model_output_is_vector() is 1 for a dipole model (then aisci_model_compute_vector()
 * works on edge graphs as for our own vector models: exact for models without message
 * passing, the only dipole models accepted). Energy models go through
 * aisci_model_compute_extended().
 * @since 0.1.0
 */
AISCI_API const char *aisci_model_format(const aisci_model *model);

/**
 * Evaluate a DeePMD-kit energy model on an extended system (owned atoms, then ghosts),
 * the model's forward_lower() convention: energy of the owned atoms, forces on all
 * atoms (ghosts included: the caller adds them to their owners), virial and per-atom
 * virial in DeePMD-kit's convention (extended atom a: the model's extended_virial, whose
 * sum over all atoms is the virial W = sum r (x) F; per-atom values summed over a ghost's
 * owner reproduce DeePMD-kit's atom_virial).
 *
 * A message-passing model (aisci_model_ghost_exchange() = 1) with exchange callbacks set
 * gets a comm_dict and exchanges ghost features through the callbacks (deepmd::border_op);
 * without callbacks it needs @p mapping and uses DeePMD-kit's gather of owner features.
 *
 * @param n_local  owned atoms (energies summed over them), atoms 0..n_local-1.
 * @param n_all    owned + ghost atoms (>= n_local).
 * @param types    n_all model type indices.
 * @param coords   n_all x 3 positions, Angstrom (ghosts at their image positions).
 * @param n_neigh  columns of nlist (any width: the model pads or truncates to its sel,
 *                 nearest first).
 * @param nlist    n_local x n_neigh indices into [0, n_all), -1 for padding; every atom
 *                 within the cutoff of its row's atom, sorted by distance.
 * @param mapping  n_all owner indices in [0, n_local), or NULL.
 * @param[out] energy          eV (required).
 * @param[out] per_atom_energy n_local energies, eV, or NULL.
 * @param[out] forces          n_all x 3, eV/Angstrom, overwritten, or NULL.
 * @param[out] virial          3 x 3 row-major, eV, or NULL.
 * @param[out] per_atom_virial n_all x 9 row-major, eV, or NULL.
 * @return AISCI_OK; AISCI_ERR_ARG (NULL model/energy/arrays, counts, indices out of
 *         range); AISCI_ERR_MODEL (not a DeePMD-kit energy model, forward_lower() failed,
 *         missing or non-finite outputs).
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_model_compute_extended(aisci_model *model, int64_t n_local,
                                                    int64_t n_all, const int64_t *types,
                                                    const double *coords, int64_t n_neigh,
                                                    const int64_t *nlist, const int64_t *mapping,
                                                    double *energy, double *per_atom_energy,
                                                    double *forces, double *virial,
                                                    double *per_atom_virial);

#ifdef __cplusplus
}
#endif
#endif
