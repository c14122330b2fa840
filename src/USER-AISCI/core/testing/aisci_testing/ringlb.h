/**
 * @file aisci_testing/ringlb.h
 * @brief The building blocks of aisci_ringlb_evaluate(), exported for the tests only.
 *
 * Not public API (testing/README.md): no version promise, not installed. The adapter calls
 * aisci_ringlb_evaluate() (aisci/ringlb.h), which composes these: plan the items, pack
 * their environments (aisci_ringlb_env_pack), move them (aisci_ringlb_send_work), build
 * the graph of the foreign items (aisci_ringlb_shared_graph) and their results
 * (aisci_ringlb_shared_results), send the results back (aisci_ringlb_return_results) and
 * apply them at the owner (aisci_ringlb_env_apply). The tests (tests/unit/test_ringlb_*,
 * tests/mpi/test_ringlb.c) and bench/ring_balance call them one by one.
 *
 * Transport shape: plan once per change of the item set (after reneighboring), then
 * send_work / compute / return_results on every step. Collective calls (plan, send_work,
 * return_results) start with the agreement of aisci/ringlb.h: an argument error on one
 * rank, or ranks making different calls, fail every rank with the same status.
 */
#ifndef AISCI_TESTING_RINGLB_H
#define AISCI_TESTING_RINGLB_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "aisci/ringlb.h"
#include "aisci/status.h"

#ifdef __cplusplus
extern "C" {
#endif

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
 * as in aisci/graph.h (ordered pairs of short edges of one centre). Sizes first (arrays
 * NULL), then the arrays (of n_atoms, 2 x n_edges, n_edges x 3 and n_triplets x 2
 * entries; @p triplets may stay NULL).
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
