/**
 * @file ringlb.h
 * @brief Ring load balancing of per-atom neural-network work (one-cutoff models).
 *
 * The ranks of a communicator form a ring (rank r's neighbours are r-1 and r+1 mod N).
 * Each rank owns work items, one per owned atom: the atom's environment (its type, its
 * neighbours' keys, types and relative positions) and a cost estimate (1 + edges +
 * triplets, aisci_graph_centre_cost()). aisci_ringlb_evaluate() runs one balanced
 * evaluation of a model on the owned atoms: it plans (after a rebuild of the graph) which
 * items a rank hands to its ring neighbours (possibly passed on over several hops) so that
 * every rank's work is close to the mean, moves their environments, calls the model on
 * the items kept here and on the foreign items received, returns the foreign items'
 * results to their owners and applies them. Its outputs are those of the model on the
 * whole graph of this rank, to rounding: exact for models whose per-atom energy depends
 * only on the atom's own edges (and the triplets made of them).
 *
 * Shape: create once, evaluate every step, destroy. The core never knows the model: the
 * caller passes a callback with the signature of aisci_model_compute() and a context.
 *
 * Guarantee (items are indivisible): when some rank is outside the tolerance band, the
 * plan gives every rank a cost within (c_a + c_b) / 2 <= c_max of the mean, where c_a and
 * c_b are the costs of the two items that straddle the rank's target interval and c_max
 * is the largest item cost on any rank; it moves the least total cost x hops of all
 * exact-mean circulations on the ring, up to the item granularity. When every rank is
 * already within the tolerance nothing moves. See docs/ringlb.md.
 *
 * Collective calls (create, evaluate) agree on errors with one small MPI_Allreduce at each
 * collective step: an argument error or a failing model on one rank, or ranks making
 * different calls, fail every rank and no rank is left waiting. The building blocks
 * (plan, transport, wire format) are exported for the tests only
 * (core/testing/aisci_testing/ringlb.h).
 * @since 0.1.0
 */
#ifndef AISCI_RINGLB_H
#define AISCI_RINGLB_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "aisci/graph.h"
#include "aisci/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Settings of a ring balancer. @since 0.1.0 */
typedef struct aisci_ringlb_config {
  /** Relative tolerance, >= 0 (e.g. 0.05): when every rank's cost is within
   * tolerance x mean of the mean, the plan moves nothing. */
  double tolerance;
  /** Size in bytes of one payload unit of the transport; 0 means sizeof(double).
   * aisci_ringlb_evaluate() needs doubles (0 or 8). */
  size_t unit_bytes;
} aisci_ringlb_config;

/** The defaults: tolerance 0.05, unit_bytes 0 (doubles). @since 0.1.0 */
AISCI_API aisci_ringlb_config aisci_ringlb_config_default(void);

/** Opaque ring balancer. @since 0.1.0 */
typedef struct aisci_ringlb aisci_ringlb;

/** Diagnostics of the current plan (and of the last exchange) on the calling rank, and
 * the evaluation statistics since create. @since 0.1.0 */
typedef struct aisci_ringlb_stats {
  int nranks;             /**< ranks in the ring */
  int balanced;           /**< 1: all ranks were within tolerance, nothing moves */
  int rounds_forward;     /**< hop rounds towards rank+1 (longest forward route) */
  int rounds_backward;    /**< hop rounds towards rank-1 */
  int n_items;            /**< own items */
  int n_kept;             /**< own items computed here */
  int n_sent;             /**< own items computed elsewhere */
  int n_foreign;          /**< other ranks' items computed here */
  int n_forwarded;        /**< items that pass through this rank */
  double mean_cost;       /**< mean cost per rank */
  double max_cost_before; /**< largest rank cost before balancing */
  double cost_before;     /**< this rank's cost before balancing */
  double cost_after;      /**< this rank's cost after balancing (kept + foreign) */
  int64_t bytes_sent;     /**< bytes this rank sent in the last send_work + return_results */
  double max_cost_after;  /**< largest rank cost after balancing (all ranks) */
  int64_t n_sent_all;     /**< items computed on a rank other than their owner (all ranks) */
  int64_t n_forwarded_all; /**< items passed on by a rank on their way (all ranks) */
  int64_t n_plans;         /**< plans made since create */
  int64_t n_evaluations;   /**< successful aisci_ringlb_evaluate() calls since create */
  double model_cpu;  /**< process CPU seconds in evaluate's model calls and the building of
                          their graphs, since create (clock_gettime(CLOCK_PROCESS_CPUTIME_ID)) */
  double model_wall; /**< wall seconds of the same (MPI_Wtime) */
  double exchange_wall; /**< wall seconds in the two ring exchanges of evaluate (sending the
                             work, returning the results), waiting for other ranks included */
} aisci_ringlb_stats;

/**
 * Create a balancer on @p comm (duplicated; the duplicate is freed by destroy).
 * Collective over @p comm. AISCI_ERR_ARG on every rank for NULL @p cfg or @p out, a
 * negative or non-finite tolerance on any rank, or MPI_COMM_NULL (then nothing is
 * communicated). On failure *out is NULL.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_ringlb_create(const aisci_ringlb_config *cfg, MPI_Comm comm,
                                           aisci_ringlb **out);

/** Free the balancer; NULL is allowed. Not collective. @since 0.1.0 */
AISCI_API void aisci_ringlb_destroy(aisci_ringlb *lb);

/**
 * Diagnostics of the current plan on this rank and the statistics since create (all
 * zero but nranks before the first plan). Not collective: the fields summed or maximised
 * over the ranks were reduced when the plan was made. AISCI_ERR_ARG for NULL arguments.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_ringlb_get_stats(const aisci_ringlb *lb, aisci_ringlb_stats *out);

/**
 * A model evaluation on a graph, called back by aisci_ringlb_evaluate(): the arguments and
 * outputs of aisci_model_compute() (aisci/model.h) after the caller's context @p ctx. It
 * must fill @p energy (the sum of the per-atom energies of atoms 0..n_energy_atoms-1),
 * @p per_atom_energy (n_atoms) and @p forces (n_atoms x 3, overwritten), and @p virial (9)
 * and @p per_atom_virial (n_atoms x 9) when they are not NULL. It returns AISCI_OK, or a
 * status with its message set (aisci_set_error()), which evaluate returns unchanged.
 * @since 0.1.0
 */
typedef aisci_status (*aisci_ringlb_model_fn)(void *ctx, int64_t n_atoms, const int64_t *types,
                                              int64_t n_edges, const int64_t *edge_index,
                                              const double *edge_vec, int64_t n_triplets,
                                              const int64_t *triplets, int64_t n_energy_atoms,
                                              double *energy, double *per_atom_energy,
                                              double *forces, double *virial,
                                              double *per_atom_virial);

/**
 * One load-balanced evaluation of a one-cutoff model on this rank's owned atoms.
 * Collective over the balancer's communicator.
 *
 * The items are the first @p n_items graph atoms (the owned atoms: centres first, as
 * aisci_graph_gather() orders them), with the edges and triplets of @p graph (grouped by
 * centre, as aisci_graph_select() gives them; ghosts are neighbours only). When
 * @p build differs from the value of the last plan (e.g. a counter of candidate-graph
 * rebuilds; the same on every rank), the items are planned again with the cost
 * 1 + edges + triplets of aisci_graph_centre_cost(). Then the environments of the items
 * computed elsewhere travel, @p model is called on the graph of the items kept here (all
 * @p n_atoms atoms, edges and triplets of the kept centres only) and on one graph of the
 * foreign items (the neighbours an owner names with the same key share one graph atom),
 * and the results come back and are applied as the model on the whole graph would have.
 * Scratch buffers are the balancer's (grown, reused).
 *
 * @param lb            the balancer.
 * @param graph         this rank's graph, n_atoms atoms (items and their neighbours).
 * @param build         plan identifier: a new value (on every rank) makes a new plan.
 * @param n_atoms       atoms of the graph, >= n_items.
 * @param n_items       owned atoms, the centres 0..n_items-1 of @p graph.
 * @param types         n_atoms model types (as for the model).
 * @param cutoff_3body  triplet cutoff of the model (0: none), the cost's and the foreign
 *                      graph's.
 * @param model         the model callback; @param ctx its context.
 * @param[out] energy          sum of the items' energies (required).
 * @param[out] per_atom_energy n_atoms, or NULL: the items' energies (entries past the
 *                             items: what the model gave for the kept graph, else 0).
 * @param[out] forces          n_atoms x 3, overwritten (required): forces on the items and
 *                             on their neighbours (ghosts included, as the model gives).
 * @param[out] virial          9 (3 x 3 row-major), or NULL: the items' global virial.
 * @param[out] per_atom_virial n_atoms x 9, or NULL: per-atom virials.
 *                             The virial level is 2 with per_atom_virial, else 1 with
 *                             virial, else 0.
 * @return AISCI_OK. AISCI_ERR_ARG for NULL @p lb on the calling rank alone (there is no
 *         communicator to agree on). Every other error fails every rank: AISCI_ERR_ARG
 *         (NULL graph, types, model, energy or forces; n_items < 0 or > n_atoms; n_items
 *         changed without a new @p build; a graph whose edges do not start with the
 *         items' ranges; unit_bytes other than doubles), the callback's status, or
 *         AISCI_ERR_ALLOC, AISCI_ERR_STATE (ranks in different calls, e.g. planning on some
 *         ranks only). The rank where the error arose keeps its status and message (a
 *         failing callback's come back unchanged); the others return the same status with
 *         "ringlb_evaluate: failed on rank R: <its message>". After a failed call the next
 *         one plans again. An MPI failure or an out-of-memory inside the ring transport
 *         is reported on the rank that sees it only. On failure the outputs are
 *         unspecified.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_ringlb_evaluate(aisci_ringlb *lb, const aisci_graph *graph,
                                             int64_t build, int n_atoms, int n_items,
                                             const int64_t *types, double cutoff_3body,
                                             aisci_ringlb_model_fn model, void *ctx,
                                             double *energy, double *per_atom_energy,
                                             double *forces, double *virial,
                                             double *per_atom_virial);

#ifdef __cplusplus
}
#endif
#endif
