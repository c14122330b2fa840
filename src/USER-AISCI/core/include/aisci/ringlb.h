/**
 * @file ringlb.h
 * @brief Ring load balancing of per-atom neural-network work.
 *
 * The ranks of a communicator form a ring (rank r's neighbours are r-1 and r+1 mod N).
 * Each rank owns a list of work items, typically one per owned atom: the atom's
 * environment (its type, its neighbours' relative positions and types) packed into a
 * payload of variable size, and a cost estimate (e.g. the number of neighbours).
 * aisci_ringlb_plan() decides, from every rank's total cost, which items each rank hands
 * to a ring neighbour (possibly passed on over several hops) so that the work of every
 * rank is close to the mean; aisci_ringlb_send_work() moves the payloads; the caller
 * evaluates the model on the items it kept and on the foreign items it received;
 * aisci_ringlb_return_results() sends the foreign items' results back to their owners,
 * into the owners' own result layout.
 *
 * Shape: plan once per change of the item set (after reneighboring), then
 * send_work / compute / return_results on every step, then destroy.
 *
 * Guarantee (items are indivisible): when some rank is outside the tolerance band, the
 * plan gives every rank a cost within (c_a + c_b) / 2 <= c_max of the mean, where c_a and
 * c_b are the costs of the two items that straddle the rank's target interval and c_max
 * is the largest item cost on any rank; it moves the least total cost x hops of all
 * exact-mean circulations on the ring, up to the item granularity. When every rank is
 * already within the tolerance nothing moves. See docs/ringlb.md.
 *
 * Collective calls (create, plan, send_work, return_results) start with one small
 * MPI_Allreduce in which the ranks agree on errors and on which call they are making: an
 * argument error on one rank, or ranks making different calls, fail every rank with the
 * same status and no rank is left waiting. The detail message is set on the rank that
 * caused the error; the others say "failed on another rank".
 * @since 0.1
 */
#ifndef AISCI_RINGLB_H
#define AISCI_RINGLB_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "aisci/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Settings of a ring balancer. */
typedef struct aisci_ringlb_config {
  /** Relative tolerance, >= 0 (e.g. 0.05): when every rank's cost is within
   * tolerance x mean of the mean, the plan moves nothing. */
  double tolerance;
  /** Size in bytes of one payload unit; 0 means sizeof(double). Payload offsets count
   * units. Results are always doubles. */
  size_t unit_bytes;
} aisci_ringlb_config;

/** The defaults: tolerance 0.05, unit_bytes 0 (doubles). @since 0.3 */
AISCI_API aisci_ringlb_config aisci_ringlb_config_default(void);

/** Opaque ring balancer. */
typedef struct aisci_ringlb aisci_ringlb;

/** Diagnostics of the current plan (and of the last exchange) on the calling rank. */
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
} aisci_ringlb_stats;

/**
 * Create a balancer on @p comm (duplicated; the duplicate is freed by destroy).
 * Collective over @p comm. AISCI_ERR_ARG on every rank for NULL @p cfg or @p out, a
 * negative or non-finite tolerance on any rank, or MPI_COMM_NULL (then nothing is
 * communicated). On failure *out is NULL.
 */
AISCI_API aisci_status aisci_ringlb_create(const aisci_ringlb_config *cfg, MPI_Comm comm,
                                           aisci_ringlb **out);

/** Free the balancer; NULL is allowed. Not collective. */
AISCI_API void aisci_ringlb_destroy(aisci_ringlb *lb);

/**
 * Plan where this rank's @p n_items items are computed. Collective.
 * @param cost n_items cost estimates, finite and >= 0 (any unit, the same on all ranks).
 * Communication: one Allreduce of 3 ints (agreement), one Allgather of one double per rank
 * (the totals give the mean and the prefix sums), then ring-neighbour messages of 24 bytes
 * per moving item and hop. Errors: AISCI_ERR_ARG on every rank if any rank passes
 * n_items < 0, a NULL @p cost with n_items > 0, or a negative or non-finite cost (the
 * message names the item); AISCI_ERR_MPI. A failed plan leaves no plan.
 */
AISCI_API aisci_status aisci_ringlb_plan(aisci_ringlb *lb, int n_items, const double *cost);

/**
 * Own items that stay on this rank, ascending (borrowed; valid until the next plan).
 * AISCI_ERR_STATE without a plan; AISCI_ERR_ARG for NULL outputs.
 */
AISCI_API aisci_status aisci_ringlb_kept(const aisci_ringlb *lb, int *n_kept, const int **index);

/**
 * Rank that computes own item @p item (this rank if kept). -1 without a plan or for an
 * item out of range.
 */
AISCI_API int aisci_ringlb_destination(const aisci_ringlb *lb, int item);

/**
 * The destination of every item of the current plan (n_items of them, as planned) into
 * @p dest: the status-returning form of aisci_ringlb_destination().
 * @return AISCI_OK; AISCI_ERR_ARG for NULL arguments or an n_items other than the
 *         plan's; AISCI_ERR_STATE before the first plan.
 * @since 0.3
 */
AISCI_API aisci_status aisci_ringlb_get_destinations(const aisci_ringlb *lb, int n_items,
                                                     int *dest);

/**
 * Move the payloads of the planned items along the ring. Collective; valid after plan or
 * after return_results (a plan serves any number of exchanges: the items must be the
 * planned ones, in the same order, but their payload and result sizes may change).
 * @param payload_offset n_items + 1 non-decreasing offsets, in units: item i is units
 *        [payload_offset[i], payload_offset[i+1]) of @p payload.
 * @param payload the packed payloads (may be NULL if they are all empty).
 * @param result_offset n_items + 1 non-decreasing offsets, in doubles: where
 *        return_results writes item i's results in the owner's result array (the length
 *        travels with the item, so the computing rank knows how many doubles to produce).
 * Both offset arrays may be NULL when n_items is 0. Errors (agreed over all ranks):
 * AISCI_ERR_STATE without a plan or between send_work and return_results (then the
 * pending exchange is kept), AISCI_ERR_ARG for NULL or decreasing offsets, AISCI_ERR_MPI.
 */
AISCI_API aisci_status aisci_ringlb_send_work(aisci_ringlb *lb, const int64_t *payload_offset,
                                              const void *payload, const int64_t *result_offset);

/**
 * The foreign items received by the last send_work, in a deterministic order (by arrival
 * round, forward before backward, then by position in the sender's message). All
 * outputs are borrowed, valid until the next plan, send_work or destroy; any may be NULL.
 * @param n_foreign number of foreign items.
 * @param payload_offset n_foreign + 1 offsets in units into @p payload, from 0.
 * @param payload the payloads, contiguous, aligned for double.
 * @param result_offset n_foreign + 1 offsets in doubles, from 0: the layout of the
 *        foreign_results array that return_results expects.
 * AISCI_ERR_STATE unless send_work came last.
 */
AISCI_API aisci_status aisci_ringlb_foreign(const aisci_ringlb *lb, int *n_foreign,
                                            const int64_t **payload_offset, const void **payload,
                                            const int64_t **result_offset);

/**
 * Owner rank and owner's item index of foreign item @p f (borrowed layout of
 * aisci_ringlb_foreign). AISCI_ERR_STATE without a plan, AISCI_ERR_ARG for @p f out of
 * range or NULL outputs.
 */
AISCI_API aisci_status aisci_ringlb_foreign_origin(const aisci_ringlb *lb, int f, int *rank,
                                                   int *index);

/**
 * Send the foreign items' results back to their owners. Collective; valid after send_work.
 * @param foreign_results the results of the foreign items, laid out as the result_offset
 *        of aisci_ringlb_foreign (may be NULL if they are all empty).
 * @param own_results this rank's result array, laid out as the result_offset given to
 *        send_work: the slots of the items computed elsewhere are written, the slots of
 *        kept items are left untouched (the caller fills them). May be NULL if no item was
 *        sent away or all their results are empty.
 * Errors (agreed): AISCI_ERR_STATE unless send_work came last (nothing changes),
 * AISCI_ERR_ARG for a needed NULL array, AISCI_ERR_MPI.
 */
AISCI_API aisci_status aisci_ringlb_return_results(aisci_ringlb *lb, const double *foreign_results,
                                                   double *own_results);

/** Diagnostics of the current plan on this rank. AISCI_ERR_ARG for NULL arguments. */
AISCI_API aisci_status aisci_ringlb_get_stats(const aisci_ringlb *lb, aisci_ringlb_stats *out);

/**
 * The planning step as a pure function, without MPI (aisci_ringlb_plan calls it): where
 * rank @p rank's items go, given every rank's total cost.
 * @param rank_cost nranks totals; rank_cost[rank] must be the sum of @p cost in index order
 *        (as plan computes it), so that all ranks see the same numbers.
 * @param dest output (may be NULL), n_items: rank that computes each item.
 * @param hops output (may be NULL), n_items: signed ring steps, > 0 towards rank+1, 0 kept.
 * @param rounds output (may be NULL), 2: bounds on the longest forward and backward route
 *        of any rank's item, identical on every rank (the number of hop rounds).
 * @param balanced output (may be NULL): 1 when every rank is within tolerance, so nothing
 *        moves.
 * AISCI_ERR_ARG for nranks < 1, rank out of range, n_items < 0, NULL where data is needed,
 * a negative or non-finite cost or tolerance, or a non-finite total.
 */
AISCI_API aisci_status aisci_ringlb_assign(int nranks, const double *rank_cost, double tolerance,
                                           int rank, int n_items, const double *cost, int *dest,
                                           int *hops, int rounds[2], int *balanced);

/* ---- environments with shared neighbour atoms (fewer graph atoms per foreign item) ---- */

/**
 * Shared environments: the standard environment with a key per neighbour,
 * `type_i, n, then n x (key_j, type_j, dx, dy, dz)` (2 + 5 n doubles), key_j a
 * non-negative integer that names neighbour j at the item's owner (e.g. the owner's atom
 * index; the same atom carries the same key in all of the owner's items). Each item also
 * has a group (the owner's rank on the computing side, the destination on the owner's
 * side) and an order (the item's index at its owner): both sides then agree on the
 * layout of the results without further messages.
 *
 * In the graph of aisci_ringlb_shared_graph() all entries of one group with the same key
 * are ONE graph atom (a centre is never merged with a neighbour): for a one-cutoff model
 * the neighbours enter only through their types and edge vectors, so the energies and
 * the gradients are those of the star graph, but a foreign item costs about the atoms of
 * its own (plus its distinct neighbours) instead of 1 + n. Since a shared atom's force
 * sums the gradients of several edges, the results are per atom, not per edge:
 *
 * result of item c (aisci_ringlb_shared_result_length(f_c, virial) doubles, f_c = number
 * of its entries that are the FIRST reference to their neighbour within the group, i.e.
 * of the items of the group with the smallest order, its first such entry):
 * `E_c, F_c (3), [W_c (9) if virial >= 1], then for each first-reference entry in entry
 * order: F_j (3), [V_j (9) if virial == 2]`, where F_c = sum of the gradients of c's
 * edges (the force on the centre), W_c = -sum over c's edges of r (x) g (row-major 3x3),
 * F_j the force on shared neighbour j from all items of the group, V_j its per-atom
 * virial (halves of those edges' -r (x) g). The owner then applies F_i += F_c, F_j += F_j,
 * W += W_c, per-atom virial of i += W_c / 2 and of j += V_j.
 */

/**
 * Mark the first reference of every neighbour: first[e] = 1 for entry e (numbered in
 * environment order, then neighbour order) iff no entry with the same group and key
 * belongs to an item of smaller order, or comes before it in the same item; else 0.
 * AISCI_ERR_ARG for the layout errors of aisci_ringlb_shared_graph() or NULL arrays.
 */
AISCI_API aisci_status aisci_ringlb_shared_assign(int n_env, const int64_t *offset,
                                                  const double *env, const int *group,
                                                  const int64_t *order, int *first);

/**
 * The shared environments as one graph: atoms 0..n_env-1 are the centres (pass
 * n_energy_atoms = n_env), then one atom per distinct (group, key) in (group, key) order;
 * edge e joins centre c to its neighbour's atom with edge_vec[e] = (dx, dy, dz); triplets
 * as in aisci/graph.h (ordered pairs of short edges of one centre). Sizes first (arrays NULL), then the arrays (of n_atoms,
 * 2 x n_edges, n_edges x 3 and n_triplets x 2 entries; @p triplets may stay NULL).
 * AISCI_ERR_ARG (naming the environment) for n_env < 0, NULL arrays where data is needed,
 * decreasing offsets, a length other than 2 + 5 n, a non-integer or negative type, count
 * or key; AISCI_ERR_ALLOC.
 */
AISCI_API aisci_status aisci_ringlb_shared_graph(int n_env, const int64_t *offset,
                                                 const double *env, const int *group,
                                                 double cutoff_3body, int64_t *n_atoms,
                                                 int64_t *n_edges, int64_t *n_triplets,
                                                 int64_t *types, int64_t *edge_index,
                                                 double *edge_vec, int64_t *triplets);

/** Result length of an item with @p n_first first-reference entries: 4 + 9 [virial >= 1]
 *  + n_first x (3 + 9 [virial == 2]). */
AISCI_API int64_t aisci_ringlb_shared_result_length(int64_t n_first, int virial);

/**
 * Per-item results (layout above) from the model's outputs on the graph of
 * aisci_ringlb_shared_graph(): per_atom_energy (>= n_env centres), forces (n_atoms x 3)
 * and, for virial >= 1, per_atom_virial (n_atoms x 9). @p virial = 0 (none), 1 (W_c) or 2
 * (W_c and V_j). AISCI_ERR_ARG for the argument errors of aisci_ringlb_shared_graph(), a
 * bad @p virial, a needed NULL array, or a result length that differs from the layout.
 */
AISCI_API aisci_status aisci_ringlb_shared_results(
    int n_env, const int64_t *offset, const double *env, const int *group, const int64_t *order,
    const double *per_atom_energy, const double *forces, const double *per_atom_virial, int virial,
    const int64_t *result_offset, double *results);

/* ---- the owner's side of the wire format ---- */

/**
 * Pack the environments of this rank's items that are computed elsewhere (dest[k] !=
 * rank), in the shared-environment layout above: for item k, `type_k, m, then m x (key_j,
 * type_j, dx, dy, dz)` over its edges in edge order, key_j = the neighbour's graph index
 * here. Items are the centres 0..n_items-1 of a graph (edge_start from
 * aisci_graph_centre_ranges()); kept items get empty ranges. Also marks the
 * first-reference entries (aisci_ringlb_shared_assign() with groups = destinations,
 * order = item index) and lays out the results each sent item gets back.
 * Call with @p payload NULL to get @p payload_offset only (sizes), then with the arrays.
 * @param types model type per graph atom (items and neighbours).
 * @param edge_index 2 x n_edges (centres, then neighbours); @param edge_vec n_edges x 3.
 * @param virial 0 (no virial results), 1 (the item's virial), 2 (also per-atom virials
 *        of the neighbours): the level aisci_ringlb_env_apply() will use.
 * @param[out] payload_offset n_items + 1 offsets into @p payload (doubles).
 * @param[out] payload payload_offset[n_items] doubles; @param[out] first one flag per
 *        neighbour entry of the sent items (at most payload_offset[n_items] / 5 + 1).
 * @param[out] result_offset n_items + 1 offsets of the results (0 length when kept), the
 *        layout aisci_ringlb_send_work() takes.
 * @return AISCI_OK; AISCI_ERR_ARG for negative counts, a bad @p virial, NULL arrays where
 *         data is needed, or an edge range outside [0, n_edges]; AISCI_ERR_ALLOC.
 * @since 0.3
 */
AISCI_API aisci_status aisci_ringlb_env_pack(int n_items, const int *dest, int rank,
                                             const int64_t *types, const int64_t *edge_start,
                                             int64_t n_edges, const int64_t *edge_index,
                                             const double *edge_vec, int virial,
                                             int64_t *payload_offset, double *payload, int *first,
                                             int64_t *result_offset);

/**
 * Apply the results of the sent items (from aisci_ringlb_return_results(), in the layout
 * of aisci_ringlb_env_pack()) as the model call on the whole graph would have: energy[k] =
 * E_k; forces[k] += F_k and forces[j] += F_j of every first-reference neighbour;
 * virial += W_k (when not NULL); virial_atom[k] += W_k / 2 and virial_atom[j] += V_j
 * (when not NULL). The virial level is 2 with @p virial_atom, else 1 with @p virial, else
 * 0, and must be the one given to aisci_ringlb_env_pack(). Kept items are not touched.
 * @param energy n_items; @param forces graph atoms x 3; @param virial 9 or NULL;
 *        @param virial_atom graph atoms x 9 or NULL.
 * @return AISCI_OK; AISCI_ERR_ARG for the argument errors of aisci_ringlb_env_pack(),
 *         NULL outputs with sent items, or a result length that is not the layout's.
 * @since 0.3
 */
AISCI_API aisci_status aisci_ringlb_env_apply(int n_items, const int *dest, int rank,
                                              const int64_t *edge_start, int64_t n_edges,
                                              const int64_t *edge_index, const int *first,
                                              const int64_t *result_offset, const double *results,
                                              double *energy, double *forces, double *virial,
                                              double *virial_atom);

#ifdef __cplusplus
}
#endif
#endif
